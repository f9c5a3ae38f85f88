//! The GPT-2 byte-level BPE tokenizer, read from a Hugging Face `tokenizer.json` (model `BPE`,
//! pre-tokenizer `ByteLevel`) or from `vocab.json` + `merges.txt`.
//!
//! Steps, as *Language Models are Unsupervised Multitask Learners* (GPT-2) and the Hugging
//! Face `tokenizers` library define them:
//! 1. split the text into pre-tokens with GPT-2's pattern
//!    `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
//!    (matched by hand below: the look-ahead leaves a run of whitespace's last character to
//!    the word after it);
//! 2. write each pre-token's UTF-8 bytes as characters by GPT-2's byte map (printable bytes
//!    stand for themselves, the 68 others for `U+0100…`), so every byte string has a spelling;
//! 3. start from single characters and merge, again and again, the adjacent pair ranked first
//!    in the merge list, every occurrence left to right, until no pair has a rank;
//! 4. map the symbols to ids (every byte has one, so nothing is unknown).
//!
//! No text is added around the ids (GPT-2 has no `[CLS]`/`[SEP]`). The test vectors in
//! `tests/data/tiny-gpt2/expected.json` come from the `tokenizers` library itself.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;
use unicode_general_category::{GeneralCategory as G, get_general_category};

use crate::error::{NnError, Result};

/// A byte-level BPE tokenizer.
#[derive(Debug, Clone)]
pub struct ByteLevelBpe {
    vocab: HashMap<String, u32>,
    ranks: HashMap<(String, String), usize>,
    byte_chars: Vec<char>,
}

/// GPT-2's byte map: printable Latin-1 bytes are their own character; the rest, in order, are
/// `U+0100 + n`.
fn byte_chars() -> [char; 256] {
    let mut map = ['\0'; 256];
    let mut n = 0u32;
    for (b, slot) in map.iter_mut().enumerate() {
        let printable =
            (0x21..=0x7e).contains(&b) || (0xa1..=0xac).contains(&b) || (0xae..=0xff).contains(&b);
        *slot = if printable {
            char::from(b as u8)
        } else {
            n += 1;
            char::from_u32(0x100 + n - 1).unwrap_or('\0')
        };
    }
    map
}

fn is_letter(c: char) -> bool {
    matches!(
        get_general_category(c),
        G::UppercaseLetter | G::LowercaseLetter | G::TitlecaseLetter | G::ModifierLetter | G::OtherLetter
    )
}

fn is_number(c: char) -> bool {
    matches!(get_general_category(c), G::DecimalNumber | G::LetterNumber | G::OtherNumber)
}

/// GPT-2's pre-tokens of `text`, as byte ranges.
fn pre_tokens(text: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let end_of = |i: usize| chars.get(i).map_or(text.len(), |&(b, _)| b);
    let run = |mut i: usize, keep: &dyn Fn(char) -> bool| {
        while i < chars.len() && keep(chars[i].1) {
            i += 1;
        }
        i
    };
    let other = |c: char| !c.is_whitespace() && !is_letter(c) && !is_number(c);
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].1;
        let next = chars.get(i + 1).map(|&(_, c)| c);
        let rest = &text[chars[i].0..];
        let contraction =
            ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d"].iter().find(|p| rest.starts_with(**p));
        let j = if let Some(p) = contraction {
            i + p.chars().count()
        } else {
            // An optional leading space, then letters, numbers or other symbols.
            let (start, first) = if c == ' ' { (i + 1, next) } else { (i, Some(c)) };
            match first {
                Some(f) if is_letter(f) => run(start, &is_letter),
                Some(f) if is_number(f) => run(start, &is_number),
                Some(f) if other(f) => run(start, &other),
                _ => {
                    // Whitespace: the run, less its last character when a word follows.
                    let k = run(i, &char::is_whitespace);
                    if k < chars.len() && k - i >= 2 { k - 1 } else { k.max(i + 1) }
                }
            }
        };
        out.push(&text[chars[i].0..end_of(j)]);
        i = j;
    }
    out
}

impl ByteLevelBpe {
    /// Reads `tokenizer.json` (model `BPE`, pre-tokenizer `ByteLevel` without a prefix space).
    pub fn from_tokenizer_json(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| NnError::io(path, e))?;
        let json: Value = serde_json::from_str(&text).map_err(|e| NnError::format(path, e.to_string()))?;
        Self::from_json(&json).map_err(|what| NnError::format(path, what))
    }

    /// Reads `vocab.json` and `merges.txt` (GPT-2's original files).
    pub fn from_vocab_and_merges(vocab: &Path, merges: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(vocab).map_err(|e| NnError::io(vocab, e))?;
        let json: Value = serde_json::from_str(&text).map_err(|e| NnError::format(vocab, e.to_string()))?;
        let v = read_vocab(&json).map_err(|what| NnError::format(vocab, what))?;
        let text = std::fs::read_to_string(merges).map_err(|e| NnError::io(merges, e))?;
        let lines: Vec<Value> = text
            .lines()
            .filter(|l| !l.starts_with("#version") && !l.trim().is_empty())
            .map(|l| Value::String(l.to_string()))
            .collect();
        Self::build(v, &lines).map_err(|what| NnError::format(merges, what))
    }

    fn from_json(json: &Value) -> std::result::Result<Self, String> {
        let model = &json["model"];
        if model["type"] != "BPE" {
            return Err(format!("tokenizer model {} is not supported here (only BPE)", model["type"]));
        }
        let pre = &json["pre_tokenizer"];
        let byte_level = pre["type"] == "ByteLevel"
            || pre["pretokenizers"].as_array().is_some_and(|l| l.iter().any(|p| p["type"] == "ByteLevel"));
        if !byte_level {
            return Err(format!("pre-tokenizer {} is not supported (only ByteLevel)", pre["type"]));
        }
        if pre["add_prefix_space"].as_bool() == Some(true) {
            return Err("a ByteLevel pre-tokenizer adding a prefix space is not supported".into());
        }
        if !json["normalizer"].is_null() {
            return Err(format!(
                "normalizer {} is not supported (GPT-2 has none)",
                json["normalizer"]["type"]
            ));
        }
        let vocab = read_vocab(&model["vocab"])?;
        let merges = model["merges"].as_array().ok_or("model.merges is not a list")?;
        Self::build(vocab, merges)
    }

    fn build(vocab: HashMap<String, u32>, merges: &[Value]) -> std::result::Result<Self, String> {
        let mut ranks = HashMap::with_capacity(merges.len());
        for (rank, m) in merges.iter().enumerate() {
            let pair = match m {
                Value::String(s) => s.split_once(' ').map(|(a, b)| (a.to_string(), b.to_string())),
                Value::Array(p) => {
                    match (p.first().and_then(Value::as_str), p.get(1).and_then(Value::as_str)) {
                        (Some(a), Some(b)) if p.len() == 2 => Some((a.to_string(), b.to_string())),
                        _ => None,
                    }
                }
                _ => None,
            }
            .ok_or(format!("merge {rank} is not a pair: {m}"))?;
            ranks.entry(pair).or_insert(rank);
        }
        let byte_chars = byte_chars();
        if let Some(c) = byte_chars.iter().find(|c| !vocab.contains_key(&c.to_string())) {
            return Err(format!("the vocabulary lacks the byte symbol {c:?}: not a byte-level vocabulary"));
        }
        Ok(ByteLevelBpe { vocab, ranks, byte_chars: byte_chars.to_vec() })
    }

    /// Vocabulary size (largest id + 1).
    pub fn vocab_size(&self) -> usize {
        self.vocab.values().max().map_or(0, |&m| m as usize + 1)
    }

    /// The text of `ids` (bytes that are not valid UTF-8 are replaced by U+FFFD); unknown ids
    /// are skipped.
    pub fn decode(&self, ids: &[u32]) -> String {
        let by_id: HashMap<u32, &str> = self.vocab.iter().map(|(s, &i)| (i, s.as_str())).collect();
        let byte_of: HashMap<char, u8> =
            self.byte_chars.iter().enumerate().map(|(b, &c)| (c, b as u8)).collect();
        let bytes: Vec<u8> = ids
            .iter()
            .filter_map(|i| by_id.get(i))
            .flat_map(|s| s.chars().filter_map(|c| byte_of.get(&c).copied()))
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// The ids of `text`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        for piece in pre_tokens(text) {
            let mut symbols: Vec<String> =
                piece.bytes().map(|b| self.byte_chars[b as usize].to_string()).collect();
            loop {
                // Each adjacent pair's rank, once per pass; merge every pair of the best rank.
                let ranks: Vec<Option<usize>> = symbols
                    .windows(2)
                    .map(|p| self.ranks.get(&(p[0].clone(), p[1].clone())).copied())
                    .collect();
                let Some(best) = ranks.iter().flatten().min().copied() else { break };
                let mut merged = Vec::with_capacity(symbols.len());
                let mut i = 0;
                while i < symbols.len() {
                    if ranks.get(i) == Some(&Some(best)) {
                        merged.push(format!("{}{}", symbols[i], symbols[i + 1]));
                        i += 2;
                    } else {
                        merged.push(std::mem::take(&mut symbols[i]));
                        i += 1;
                    }
                }
                symbols = merged;
            }
            // Every byte symbol is in the vocabulary (checked at load), and every merge result
            // of a well-formed file too; a missing one falls back to its bytes.
            for s in symbols {
                match self.vocab.get(&s) {
                    Some(&id) => ids.push(id),
                    None => ids.extend(s.chars().filter_map(|c| self.vocab.get(&c.to_string()).copied())),
                }
            }
        }
        ids
    }
}

fn read_vocab(v: &Value) -> std::result::Result<HashMap<String, u32>, String> {
    v.as_object()
        .ok_or("the vocabulary is not an object")?
        .iter()
        .map(|(k, v)| {
            let id = v.as_u64().and_then(|i| u32::try_from(i).ok()).ok_or(format!("bad id for {k:?}"))?;
            Ok((k.clone(), id))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpt2_pre_tokens() {
        let t = |s: &str| pre_tokens(s).into_iter().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(t("Hello world"), ["Hello", " world"]);
        assert_eq!(t("I'm here, it's 2024!"), ["I", "'m", " here", ",", " it", "'s", " 2024", "!"]);
        assert_eq!(t("a  b"), ["a", " ", " b"]);
        assert_eq!(t("a\n\nb  "), ["a", "\n", "\n", "b", "  "]);
        assert_eq!(t(" ...  x9"), [" ...", " ", " x", "9"]);
        assert_eq!(t("héllo 東京"), ["héllo", " 東京"]);
    }

    #[test]
    fn the_byte_map_is_gpt2s() {
        let m = byte_chars();
        assert_eq!(m[b'A' as usize], 'A');
        assert_eq!(m[b' ' as usize], 'Ġ');
        assert_eq!(m[b'\n' as usize], 'Ċ');
        assert_eq!(m[0], 'Ā');
        let distinct: std::collections::HashSet<char> = m.iter().copied().collect();
        assert_eq!(distinct.len(), 256);
    }
}
