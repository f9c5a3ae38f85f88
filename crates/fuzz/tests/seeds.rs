//! Writes the committed seed corpus (`corpus/<target>/`): valid inputs of every target, from
//! the project's test models and from the encoders of what Veil itself writes and sends.
//! Run it again when a format changes:
//! `cargo test -p veil-fuzz --test seeds -- --ignored`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use std::path::{Path, PathBuf};

use veil_mosformer::offline::Offline;
use veil_mosformer::{Mosformer, Security};
use veil_mpc::harness::{all_ok, simulate};
use veil_mpc::prep::Plan;
use veil_mpc::trace::Tracer;
use veil_mpc::traits::{Multiply, NonLinear};
use veil_mpc::{Ctx, Result};
use veil_ring::{Ring, Z64};
use veil_tensor::Tensor;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn write(target: &str, name: &str, bytes: &[u8]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus").join(target);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), bytes).unwrap();
}

fn copy(target: &str, from: &str, name: &str) {
    write(target, name, &std::fs::read(root().join(from)).unwrap());
}

fn joined(parts: &[&[u8]]) -> Vec<u8> {
    parts.join(veil_fuzz::targets::PART_SEPARATOR)
}

/// A ReLU and a fixed-point product on four values: enough gates for every kind of stored
/// material at a small size.
fn block<F: NonLinear<Z64> + Multiply<Z64>>(f: &mut F, ctx: &mut Ctx) -> Result<()> {
    let t = Tensor::new(vec![4], vec![Z64(3), Z64(u64::MAX), Z64(0), Z64(1 << 20)])?;
    let value = (ctx.party() == 0).then_some(&t);
    let x = f.share_input(ctx, 0, value, &[4])?;
    let y = f.relu(ctx, &x)?;
    f.mul_fixed(ctx, &y, &x)?;
    Ok(())
}

fn material_seeds() {
    for security in [Security::Malicious, Security::SemiHonest] {
        let stored = all_ok(simulate(3, 5, |ctx| {
            let mut maker = Mosformer::new(security, Offline::for_security(security)).with_chunk(4);
            let mut tracer = Tracer::like::<Z64, _>(&maker);
            block(&mut tracer, &mut Ctx::detached(ctx.party(), 3))?;
            let plan = Plan::of(&maker, tracer.calls());
            maker.prepare_all(ctx, &plan)?;
            let mut bytes = Vec::new();
            maker.take_material().encode(&mut bytes)?;
            Ok(bytes)
        }))
        .unwrap();
        let name = match security {
            Security::Malicious => "malicious",
            Security::SemiHonest => "semi-honest",
        };
        write("material", &format!("{name}-server-0"), &stored[0]);
        let material = veil_mosformer::stored::StoredMaterial::decode(&stored[1]).unwrap();
        let header = veil_runtime::stored::MaterialHeader {
            format: veil_runtime::stored::FORMAT,
            family: "mosformer".into(),
            security: name.into(),
            rings: "mixed".into(),
            party: 1,
            graph: "00".repeat(32),
            size: 4,
            chunk: 4,
            id: "11".repeat(32),
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server-1.material");
        veil_runtime::stored::write_material(&path, &header, &material).unwrap();
        let file = std::fs::read(&path).unwrap();
        // The fuzz target appends the digest to what it is given.
        write("material_file", &format!("{name}-server-1"), &file[..file.len() - 32]);
    }
}

fn frame(depth: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = (payload.len() as u32).to_le_bytes().to_vec();
    f.extend_from_slice(&depth.to_le_bytes());
    f.extend_from_slice(payload);
    f
}

#[test]
#[ignore = "writes the committed corpus; run by hand when a format changes"]
fn write_corpus() {
    let nn = "crates/nn/tests/data";
    copy("safetensors", &format!("{nn}/tiny-vit/test.safetensors"), "tiny-vit-test");
    copy("model_config", &format!("{nn}/tiny-gpt2/config.json"), "gpt2.json");
    copy("model_config", &format!("{nn}/tiny-vit/config.json"), "vit.json");
    write(
        "model_config",
        "bert.json",
        br#"{"model_type": "bert", "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
"intermediate_size": 16, "vocab_size": 30, "max_position_embeddings": 16, "type_vocab_size": 2,
"layer_norm_eps": 1e-12, "hidden_act": "gelu"}"#,
    );
    copy("tokenizer_json", &format!("{nn}/tiny-gpt2/tokenizer.json"), "bpe.json");
    write(
        "tokenizer_json",
        "wordpiece.json",
        br###"{"model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
"max_input_chars_per_word": 100, "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "hello": 4,
"world": 5, "##s": 6, ",": 7, "!": 8, "un": 9, "##aff": 10, "##able": 11}},
"normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
"strip_accents": null, "lowercase": true},
"pre_tokenizer": {"type": "BertPreTokenizer"},
"post_processor": {"type": "TemplateProcessing"}}"###,
    );
    let vocab = std::fs::read(root().join(format!("{nn}/tiny-gpt2/vocab.json"))).unwrap();
    let merges = std::fs::read(root().join(format!("{nn}/tiny-gpt2/merges.txt"))).unwrap();
    write("bpe_files", "tiny-gpt2", &joined(&[&vocab, &merges]));
    copy("onnx", "models/digits-cnn/model.onnx", "digits-cnn.onnx");
    let model = veil_nn::onnx::load_onnx(&root().join("models/digits-cnn/model.onnx")).unwrap();
    write("public_model", "digits-cnn.json", model.public_json().unwrap().as_bytes());

    // A small labelled image set, as `scripts/train_digits_cnn.py` writes them.
    let images: Vec<u8> = (0..2 * 16).flat_map(|i| (i as f32 / 32.0).to_le_bytes()).collect();
    let labels: Vec<u8> = [3.0f32, 7.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    let tensors = [
        (
            "images",
            safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![2, 1, 4, 4], &images).unwrap(),
        ),
        ("labels", safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![2], &labels).unwrap()),
    ];
    let set = safetensors::tensor::serialize(tensors, None).unwrap();
    write("image_set", "two-images", &set);
    write("safetensors", "two-images", &set);

    material_seeds();

    // The read size selector, a heartbeat (the reserved length, no payload), three frames.
    let mut stream = vec![3u8];
    stream.extend(u32::MAX.to_le_bytes());
    stream.extend(0u32.to_le_bytes());
    stream.extend(frame(1, b"first"));
    stream.extend(frame(7, &[0xab; 300]));
    stream.extend(frame(0, b"a stop notice"));
    write("frames", "three-frames", &stream);
    let mut hello = b"VEIL".to_vec();
    hello.extend_from_slice(&1u16.to_le_bytes());
    hello.extend_from_slice(&2u16.to_le_bytes());
    hello.extend_from_slice(&3u16.to_le_bytes());
    hello.extend_from_slice(b"test-session-id!");
    write("hello", "party-2-of-3", &hello);

    let xs: Vec<Z64> = (0..5u64).map(|i| Z64(i.wrapping_mul(0x9e37_79b9_7f4a_7c15))).collect();
    let mut msg = 5u16.to_le_bytes().to_vec();
    msg.extend(veil_mpc::wire::encode(&xs));
    write("ring_message", "five-z64", &msg);
    let mut bits = 16u16.to_le_bytes().to_vec();
    bits.extend(veil_mpc::wire::pack_bits(&[1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 0, 1, 1], 1));
    write("ring_message", "sixteen-bits", &bits);

    let mut rng = rand::rngs::OsRng;
    for bits in [4u32, 16] {
        let (k0, _) = veil_fss::gen_keys::<Z64, _>(5, Z64::ONE, bits, &mut rng).unwrap();
        let mut seed = vec![bits as u8];
        seed.extend(k0.to_bytes());
        write("dpf_key", &format!("domain-{bits}"), &seed);
    }

    write(
        "deployment",
        "embed.toml",
        br#"session = "00112233445566778899aabbccddeeff"
ca = "certs/ca.pem"
connect_timeout_s = 30
recv_timeout_s = 60
stall_timeout_s = 3600

[[party]]
address = "127.0.0.1:7000"
cert = "certs/party-0.pem"
key = "certs/party-0.key"

[[party]]
address = "127.0.0.1:7001"
cert = "certs/party-1.pem"
key = "certs/party-1.key"

[[party]]
address = "127.0.0.1:7002"
cert = "certs/party-2.pem"
key = "certs/party-2.key"

[[party]]
address = "[::1]:7003"
cert = "certs/party-3.pem"
key = "certs/party-3.key"

[[party]]
address = "127.0.0.1:7004"
cert = "certs/party-4.pem"
key = "certs/party-4.key"

[job]
kind = "embed"
family = "mosformer"
security = "malicious"
offline = "ahead"
rings = "mixed"
"#,
    );
    write(
        "deployment",
        "demo-mul.toml",
        br#"session = "ffeeddccbbaa99887766554433221100"
ca = "ca.pem"
link_delay_us = 1500

[[party]]
address = "10.0.0.1:9000"
cert = "a.pem"
key = "a.key"

[[party]]
address = "10.0.0.2:9000"
cert = "b.pem"
key = "b.key"

[job]
kind = "demo-mul"
length = 4
output = 1
"#,
    );
    write(
        "deployment",
        "classify.toml",
        br#"session = "0123456789abcdef0123456789abcdef"
ca = "/etc/veil/ca.pem"

[[party]]
address = "127.0.0.1:7100"
cert = "p0.pem"
key = "p0.key"

[[party]]
address = "127.0.0.1:7101"
cert = "p1.pem"
key = "p1.key"

[[party]]
address = "127.0.0.1:7102"
cert = "p2.pem"
key = "p2.key"

[job]
kind = "classify"
family = "additive"
owners = "inside"
"#,
    );
    let d = veil_net::certs::Deployment::generate("fuzz", 2).unwrap();
    let p = &d.parties[1];
    write(
        "certificates",
        "party-1",
        &joined(&[d.ca_cert_pem.as_bytes(), p.cert_pem.as_bytes(), p.key_pem.as_bytes()]),
    );
}
