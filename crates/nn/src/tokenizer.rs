//! The BERT WordPiece tokenizer, read from a Hugging Face `tokenizer.json` (normalizer
//! `BertNormalizer`, pre-tokenizer `BertPreTokenizer`, model `WordPiece`, `[CLS] … [SEP]`).
//!
//! Steps, as the Hugging Face `tokenizers` library defines them for BERT: drop control
//! characters and map whitespace to spaces; put spaces around CJK ideographs; strip accents
//! (NFD, then drop combining marks) and lowercase when configured; split on whitespace and on
//! every punctuation character (ASCII or Unicode `P*`); split each word greedily into the
//! longest vocabulary pieces, continuations prefixed by `##`, the whole word becoming `[UNK]`
//! when it cannot be split or is longer than the configured maximum. Special tokens written
//! literally in the text (`"[SEP]"`) are tokenized as text, not as specials. The test vectors
//! in `tests/data/minilm_reference.json` come from the `tokenizers` library itself.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;
use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use crate::error::{NnError, Result};

/// A BERT WordPiece tokenizer.
#[derive(Debug, Clone)]
pub struct WordPiece {
    vocab: HashMap<String, u32>,
    unk: u32,
    cls: u32,
    sep: u32,
    prefix: String,
    max_chars: usize,
    lowercase: bool,
    strip_accents: bool,
    clean_text: bool,
    chinese_chars: bool,
}

impl WordPiece {
    /// Reads `tokenizer.json`.
    pub fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| NnError::io(path, e))?;
        let json: Value = serde_json::from_str(&text).map_err(|e| NnError::format(path, e.to_string()))?;
        Self::from_json(&json).map_err(|what| NnError::format(path, what))
    }

    fn from_json(json: &Value) -> std::result::Result<Self, String> {
        let model = &json["model"];
        if model["type"] != "WordPiece" {
            return Err(format!("tokenizer model {} is not supported (only WordPiece)", model["type"]));
        }
        let norm = &json["normalizer"];
        if norm["type"] != "BertNormalizer" {
            return Err(format!("normalizer {} is not supported (only BertNormalizer)", norm["type"]));
        }
        if json["pre_tokenizer"]["type"] != "BertPreTokenizer" {
            return Err(format!(
                "pre-tokenizer {} is not supported (only BertPreTokenizer)",
                json["pre_tokenizer"]["type"]
            ));
        }
        let vocab: HashMap<String, u32> = model["vocab"]
            .as_object()
            .ok_or("model.vocab is not an object")?
            .iter()
            .map(|(k, v)| {
                let id = v.as_u64().and_then(|i| u32::try_from(i).ok()).ok_or(format!("bad id for {k:?}"))?;
                Ok((k.clone(), id))
            })
            .collect::<std::result::Result<_, String>>()?;
        let id = |tok: &str| vocab.get(tok).copied().ok_or(format!("the vocabulary has no {tok}"));
        let flag = |v: &Value, default: bool| v.as_bool().unwrap_or(default);
        let lowercase = flag(&norm["lowercase"], true);
        Ok(WordPiece {
            unk: id(model["unk_token"].as_str().unwrap_or("[UNK]"))?,
            cls: id("[CLS]")?,
            sep: id("[SEP]")?,
            prefix: model["continuing_subword_prefix"].as_str().unwrap_or("##").to_string(),
            max_chars: model["max_input_chars_per_word"].as_u64().unwrap_or(100) as usize,
            // `strip_accents: null` follows `lowercase`.
            strip_accents: flag(&norm["strip_accents"], lowercase),
            lowercase,
            clean_text: flag(&norm["clean_text"], true),
            chinese_chars: flag(&norm["handle_chinese_chars"], true),
            vocab,
        })
    }

    /// Vocabulary size (the largest id + 1).
    pub fn vocab_size(&self) -> usize {
        self.vocab.values().max().map_or(0, |&m| m as usize + 1)
    }

    /// Token ids of `text`, with `[CLS]` first and `[SEP]` last.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = vec![self.cls];
        for word in self.words(&self.normalize(text)) {
            self.word_pieces(&word, &mut ids);
        }
        ids.push(self.sep);
        ids
    }

    fn normalize(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            if self.clean_text {
                if c == '\0' || c == '\u{fffd}' || is_other(c) {
                    continue;
                }
                if c.is_whitespace() {
                    out.push(' ');
                    continue;
                }
            }
            if self.chinese_chars && is_cjk(c) {
                out.push(' ');
                out.push(c);
                out.push(' ');
            } else {
                out.push(c);
            }
        }
        if self.strip_accents {
            out = out.nfd().filter(|&c| !is_combining_mark(c)).collect();
        }
        if self.lowercase {
            out = out.to_lowercase();
        }
        out
    }

    fn words(&self, text: &str) -> Vec<String> {
        let mut words = Vec::new();
        let mut cur = String::new();
        for c in text.chars() {
            if c.is_whitespace() {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
            } else if is_punctuation(c) {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
                words.push(c.to_string());
            } else {
                cur.push(c);
            }
        }
        if !cur.is_empty() {
            words.push(cur);
        }
        words
    }

    fn word_pieces(&self, word: &str, ids: &mut Vec<u32>) {
        let chars: Vec<char> = word.chars().collect();
        if chars.len() > self.max_chars {
            ids.push(self.unk);
            return;
        }
        let mut pieces = Vec::new();
        let mut start = 0;
        while start < chars.len() {
            let mut end = chars.len();
            let mut found = None;
            while start < end {
                let mut piece: String = chars[start..end].iter().collect();
                if start > 0 {
                    piece.insert_str(0, &self.prefix);
                }
                if let Some(&id) = self.vocab.get(&piece) {
                    found = Some(id);
                    break;
                }
                end -= 1;
            }
            match found {
                Some(id) => pieces.push(id),
                None => {
                    ids.push(self.unk);
                    return;
                }
            }
            start = end;
        }
        ids.extend(pieces);
    }
}

/// Unicode "other" categories (control, format, unassigned, private use), except `\t\n\r`.
fn is_other(c: char) -> bool {
    if matches!(c, '\t' | '\n' | '\r') {
        return false;
    }
    matches!(
        get_general_category(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::Unassigned
            | GeneralCategory::PrivateUse
    )
}

fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(
            get_general_category(c),
            GeneralCategory::ConnectorPunctuation
                | GeneralCategory::DashPunctuation
                | GeneralCategory::ClosePunctuation
                | GeneralCategory::FinalPunctuation
                | GeneralCategory::InitialPunctuation
                | GeneralCategory::OtherPunctuation
                | GeneralCategory::OpenPunctuation
        )
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

/// A text model's tokenizer.
#[derive(Debug, Clone)]
pub enum Tokenizer {
    /// BERT's WordPiece.
    WordPiece(WordPiece),
    /// GPT-2's byte-level BPE.
    ByteLevelBpe(crate::bpe::ByteLevelBpe),
}

impl Tokenizer {
    /// The ids of `text`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        match self {
            Tokenizer::WordPiece(t) => t.encode(text),
            Tokenizer::ByteLevelBpe(t) => t.encode(text),
        }
    }

    /// The text of a generated token (byte-level BPE only: a WordPiece model generates none).
    pub fn decode(&self, ids: &[u32]) -> Option<String> {
        match self {
            Tokenizer::WordPiece(_) => None,
            Tokenizer::ByteLevelBpe(t) => Some(t.decode(ids)),
        }
    }

    /// Vocabulary size (largest id + 1).
    pub fn vocab_size(&self) -> usize {
        match self {
            Tokenizer::WordPiece(t) => t.vocab_size(),
            Tokenizer::ByteLevelBpe(t) => t.vocab_size(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> WordPiece {
        let json = serde_json::json!({
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                      "max_input_chars_per_word": 10,
                      "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "un": 4, "##aff": 5,
                                "##able": 6, "cafe": 7, ",": 8, "中": 9, "!": 10}},
            "normalizer": {"type": "BertNormalizer", "lowercase": true, "strip_accents": null},
            "pre_tokenizer": {"type": "BertPreTokenizer"}
        });
        WordPiece::from_json(&json).unwrap()
    }

    #[test]
    fn splits_words_into_longest_pieces() {
        let t = tiny();
        assert_eq!(t.encode("Unaffable"), vec![2, 4, 5, 6, 3]);
        assert_eq!(t.encode("CAFÉ,中!"), vec![2, 7, 8, 9, 10, 3]);
        assert_eq!(t.encode("unknown"), vec![2, 1, 3], "an unsplittable word is one [UNK]");
        assert_eq!(t.encode("unaffableun"), vec![2, 1, 3], "longer than the maximum");
        assert_eq!(t.encode(" \t\u{0007}"), vec![2, 3]);
        assert_eq!(t.vocab_size(), 11);
    }

    #[test]
    fn refuses_other_tokenizers() {
        let json = serde_json::json!({"model": {"type": "BPE"}});
        assert!(WordPiece::from_json(&json).unwrap_err().contains("BPE"));
    }
}
