//! The fuzz targets: one parser entry point each, fed raw bytes. A target returns whether the
//! parser accepted the input (every seed must be accepted); an error from the parser is the
//! expected outcome for most mutated inputs, a panic is a failure.

use std::path::Path;

use veil_mosformer::stored::StoredMaterial;
use veil_ring::{Z64, Z128};

/// A parser under the fuzzer.
pub struct Target {
    /// Its name, and the folder of its seeds under `corpus/`.
    pub name: &'static str,
    /// Feeds the parser one input; true if it was accepted.
    pub run: fn(&[u8]) -> bool,
}

/// Every target of this crate (the deployment config is fuzzed in `veil-cli`'s tests, the
/// protocol messages of each family in `veil-conformance`'s).
pub const TARGETS: &[Target] = &[
    Target { name: "safetensors", run: safetensors },
    Target { name: "image_set", run: image_set },
    Target { name: "model_config", run: model_config },
    Target { name: "tokenizer_json", run: tokenizer_json },
    Target { name: "bpe_files", run: bpe_files },
    Target { name: "onnx", run: onnx },
    Target { name: "public_model", run: public_model },
    Target { name: "material", run: material },
    Target { name: "material_file", run: material_file },
    Target { name: "frames", run: frames },
    Target { name: "hello", run: hello },
    Target { name: "ring_message", run: ring_message },
    Target { name: "dpf_key", run: dpf_key },
    Target { name: "certificates", run: certificates },
];

/// Separates the parts of a seed that stands for several files.
pub const PART_SEPARATOR: &[u8] = b"\n--8<--\n";

/// The parts of a multi-file input (a mutation may merge or add parts).
fn parts(bytes: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while let Some(i) = rest.windows(PART_SEPARATOR.len()).position(|w| w == PART_SEPARATOR) {
        out.push(&rest[..i]);
        rest = &rest[i + PART_SEPARATOR.len()..];
    }
    out.push(rest);
    out
}

/// A fresh folder holding `files`.
fn folder(files: &[(&str, &[u8])]) -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir().ok()?;
    for (name, bytes) in files {
        std::fs::write(dir.path().join(name), bytes).ok()?;
    }
    Some(dir)
}

fn with_file(name: &str, bytes: &[u8], f: impl FnOnce(&Path) -> bool) -> bool {
    folder(&[(name, bytes)]).is_some_and(|dir| f(&dir.path().join(name)))
}

fn safetensors(bytes: &[u8]) -> bool {
    with_file("model.safetensors", bytes, |p| veil_nn::weights::read_safetensors(p).is_ok())
}

fn image_set(bytes: &[u8]) -> bool {
    with_file("images.safetensors", bytes, |p| veil_runtime::classify::load_image_set(p).is_ok())
}

/// A Hugging Face folder with only `config.json`, read as a text model (BERT or GPT-2 by its
/// `model_type`) and as a ViT, as the servers read it (no weights).
fn model_config(bytes: &[u8]) -> bool {
    folder(&[("config.json", bytes)]).is_some_and(|dir| {
        let text = veil_nn::bert::load_hf(dir.path(), false).is_ok();
        let image = veil_nn::vit::load_hf(dir.path(), false).is_ok();
        text || image
    })
}

const TEXTS: &[&str] = &["Hello, world!", "unaffable naïve café 東京 \u{0}\t", ""];

/// `tokenizer.json`, read as WordPiece and as byte-level BPE; a tokenizer that loads encodes
/// and decodes a few texts.
fn tokenizer_json(bytes: &[u8]) -> bool {
    with_file("tokenizer.json", bytes, |p| {
        let mut accepted = false;
        if let Ok(t) = veil_nn::tokenizer::WordPiece::from_file(p) {
            accepted = true;
            for text in TEXTS {
                let _ = t.encode(text);
            }
        }
        if let Ok(t) = veil_nn::bpe::ByteLevelBpe::from_tokenizer_json(p) {
            accepted = true;
            for text in TEXTS {
                let ids = t.encode(text);
                let _ = t.decode(&ids);
            }
        }
        accepted
    })
}

/// `vocab.json` and `merges.txt` (two parts).
fn bpe_files(bytes: &[u8]) -> bool {
    let p = parts(bytes);
    let (vocab, merges) = (p[0], p.get(1).copied().unwrap_or_default());
    folder(&[("vocab.json", vocab), ("merges.txt", merges)]).is_some_and(|dir| {
        let d = dir.path();
        let Ok(t) =
            veil_nn::bpe::ByteLevelBpe::from_vocab_and_merges(&d.join("vocab.json"), &d.join("merges.txt"))
        else {
            return false;
        };
        for text in TEXTS {
            let ids = t.encode(text);
            let _ = t.decode(&ids);
        }
        true
    })
}

fn onnx(bytes: &[u8]) -> bool {
    veil_nn::onnx::import(bytes, "fuzz").is_ok()
}

/// The public model file `veil graph` writes (JSON: graph, shapes, preprocessing).
fn public_model(bytes: &[u8]) -> bool {
    with_file("model.json", bytes, |p| veil_nn::image::ImageModel::load(p).is_ok())
}

/// The material section of a stored material file (past its digest check).
fn material(bytes: &[u8]) -> bool {
    StoredMaterial::decode(bytes).is_ok()
}

/// A whole material file, its digest recomputed over the mutated body so that the header and
/// material parsers are reached.
fn material_file(bytes: &[u8]) -> bool {
    let digest = veil_crypto::Hasher::new(veil_runtime::stored::DIGEST_PURPOSE).update(bytes).finalize();
    let mut file = bytes.to_vec();
    file.extend_from_slice(digest.as_bytes());
    with_file("server-0.material", &file, |p| veil_runtime::stored::read_material(p).is_ok())
}

/// A link's decrypted stream, split into frames as its reader does; the first byte picks the
/// read size and the frame limit is small, so limits and partial frames are exercised.
fn frames(bytes: &[u8]) -> bool {
    let Some((&k, stream)) = bytes.split_first() else { return false };
    let chunk = 1 + usize::from(k) * 7;
    let (frames, bad) = veil_net::decode::frames(1, stream, chunk, 1 << 12);
    bad.is_none() && !frames.is_empty()
}

fn hello(bytes: &[u8]) -> bool {
    veil_net::decode::hello(bytes).is_ok()
}

/// A protocol message of ring elements: the first two bytes are the count the receiver
/// expects; the rest is decoded in `Z_2^64`, `Z_2^128` and as packed bits and words.
fn ring_message(bytes: &[u8]) -> bool {
    let Some((head, body)) = bytes.split_first_chunk::<2>() else { return false };
    let expected = usize::from(u16::from_le_bytes(*head));
    let mut accepted = veil_mpc::wire::decode::<Z64>(1, body, expected).is_ok();
    accepted |= veil_mpc::wire::decode::<Z128>(1, body, expected).is_ok();
    for bits in [1, 3, 8, 13, 64] {
        accepted |= veil_mpc::wire::unpack_words(1, body, bits, expected).is_ok();
    }
    accepted | veil_mpc::wire::unpack_bits(1, body, 1, expected).is_ok()
}

/// A DPF key as dealt to a server: the first byte is the domain size in bits.
fn dpf_key(bytes: &[u8]) -> bool {
    let Some((&bits, key)) = bytes.split_first() else { return false };
    let bits = u32::from(bits % 70);
    let wide = veil_fss::DpfKey::<Z64>::from_bytes(key, bits).is_ok();
    wide | veil_fss::DpfKey::<veil_ring::Z16>::from_bytes(key, bits).is_ok()
}

/// A party's certificate files (three parts: CA, certificate, key), as `veil party` reads them.
fn certificates(bytes: &[u8]) -> bool {
    let p = parts(bytes);
    let text = |i: usize| String::from_utf8_lossy(p.get(i).copied().unwrap_or_default()).into_owned();
    veil_net::decode::identity(&text(0), &text(1), &text(2), 1).is_ok()
}
