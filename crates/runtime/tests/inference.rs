//! Private inference end to end: a small BERT with random weights (fast, every party a thread)
//! against the float reference, the sessions' checks, and the real all-MiniLM-L6-v2.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use std::collections::BTreeMap;
use std::path::Path;

use veil_mosformer::{Mode, Rings, Security};
use veil_mpc::harness::{SimConfig, simulate_with};
use veil_nn::bert::{Activation, BertConfig, Model, Pooling, bert_graph};
use veil_nn::graph::GeluForm;
use veil_nn::weights::{FloatTensor, Weights};
use veil_runtime::Link;
use veil_runtime::families::FamilyChoice;
use veil_runtime::inference::{
    DATA_OWNER, InferenceParty, Material, PARTIES, inference_party, private_inference, report,
};
use veil_runtime::stored::{PreparedServer, material_path, prepare_material};

fn tiny(layers: usize, seed: u64) -> Model {
    let config = BertConfig {
        hidden: 16,
        heads: 2,
        layers,
        ffn: 32,
        activation: Activation::Gelu(GeluForm::Erf),
        eps: 1e-12,
        max_positions: 8,
        vocab: 20,
    };
    let pooling = Pooling { mean: true, normalize: true };
    let graph = bert_graph(&config, pooling);
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 11) as f64 / (1u64 << 53) as f64) as f32 * 2.0 - 1.0
    };
    let mut weights = Weights::new();
    for (name, shape) in &graph.weights {
        let n: usize = shape.iter().product();
        let data = if name.contains("LayerNorm.weight") {
            (0..n).map(|_| 1.0 + 0.1 * next()).collect()
        } else {
            let matrix = shape.len() == 2 && !name.starts_with("embeddings.");
            let scale = if matrix { 1.0 / (shape[0] as f32).sqrt() } else { 0.5 };
            (0..n).map(|_| scale * next()).collect()
        };
        weights.insert(name.clone(), FloatTensor::new(shape.clone(), data).unwrap());
    }
    let max_positions = config.max_positions;
    Model { name: "tiny-bert".into(), max_positions, graph, weights: Some(weights), tokenizer: None, pooling }
}

/// The sessions' settings: the data owner waits for the servers' whole run (the plan's dry
/// run and the offline phase included), which on a loaded 2-core machine, beside the MiniLM
/// test, can pass the harness's default 20 s.
fn session_config() -> SimConfig {
    SimConfig { timeout: std::time::Duration::from_secs(300), ..SimConfig::new(3) }
}

fn run(
    model: &Model,
    others: &Model,
    ids: &[u32],
    security: Security,
) -> veil_mpc::Result<Vec<InferenceParty>> {
    run_with(model, others, ids, security, Material::Ahead)
}

/// The five parties of a session with the servers' material stored in `dir`: their reports, or
/// every party's error (the first to fail makes the others see it leave).
fn run_stored(model: &Model, ids: &[u32], dir: &Path) -> Result<Vec<InferenceParty>, String> {
    run_stored_in(model, ids, dir, Security::Malicious.into())
}

fn run_stored_in(model: &Model, ids: &[u32], dir: &Path, mode: Mode) -> Result<Vec<InferenceParty>, String> {
    let results = simulate_with(PARTIES, session_config(), |ctx| {
        let mine = (ctx.party() == DATA_OWNER).then_some(ids);
        inference_party(ctx, model, mine, mode, Material::Stored(dir.to_path_buf()))
    });
    let errors: Vec<String> =
        results.iter().filter_map(|r| r.as_ref().err()).map(|e| e.to_string()).collect();
    match veil_mpc::harness::root_cause(results) {
        Ok(parties) => Ok(parties),
        Err(cause) => Err(format!("{}\nroot cause: {cause}", errors.join("\n"))),
    }
}

fn prepare(model: &Model, tokens: usize, dir: &Path) -> Vec<PreparedServer> {
    prepare_material(&model.graph, tokens, Security::Malicious, dir, Link::Memory).unwrap()
}

/// Material made by one session of the servers and stored serves one later session: its online
/// phase makes nothing, its output matches the float reference, and the files are gone after
/// it (a second session finds none). Files of another size, of two different offline phases,
/// or damaged ones are refused, each with an error that says so.
#[test]
fn stored_material_serves_one_later_session_and_is_then_gone() {
    let model = tiny(2, 7);
    let ids = [1u32, 5, 19, 0, 7];
    let dir = tempfile::tempdir().unwrap();
    let made = prepare(&model, ids.len(), dir.path());
    assert_eq!(made.len(), 3);
    assert!(made.iter().all(|s| s.id == made[0].id && s.gates > 0 && s.offline.bytes_sent > 0));
    for s in &made {
        assert_eq!(s.path, material_path(dir.path(), s.party));
        assert!(s.file_bytes > s.offline.bytes_sent / 4, "{} bytes stored", s.file_bytes);
    }
    let backup = tempfile::tempdir().unwrap();
    for p in 0..3 {
        std::fs::copy(material_path(dir.path(), p), material_path(backup.path(), p)).unwrap();
    }
    let parties = run_stored(&model, &ids, dir.path()).unwrap();
    for p in parties.iter().filter(|p| p.party < 3) {
        assert_eq!(p.material.as_deref(), Some("stored"));
        // The online session's offline phase is the id check: 2 × 64 hex bytes.
        assert_eq!(p.phases[0].bytes_sent, 128, "server {}", p.party);
    }
    let r = report(&model, "", &ids, Security::Malicious, "memory", parties).unwrap();
    assert!(r.cosine_vs_plaintext > 0.995, "cosine {}", r.cosine_vs_plaintext);
    assert!((0..3).all(|p| !material_path(dir.path(), p).exists()), "used material was kept");
    let err = run_stored(&model, &ids, dir.path()).unwrap_err();
    assert!(err.contains("no material file at") && err.contains("serves one session"), "{err}");
    // A restored copy of the used files is refused: every server's ledger holds their id.
    let err = run_stored(&model, &ids, backup.path()).unwrap_err();
    assert!(err.contains("was already used by server"), "{err}");
    assert!(material_path(backup.path(), 0).exists(), "a refused copy is not consumed");

    // Material of the Z_2^64 rings serves a session in those rings, and no other.
    let z64 = Mode { security: Security::Malicious, rings: Rings::Z64 };
    prepare_material(&model.graph, ids.len(), z64, dir.path(), Link::Memory).unwrap();
    let err = run_stored(&model, &ids, dir.path()).unwrap_err();
    assert!(err.contains("made for the rings z64 (this session: mixed)"), "{err}");
    let parties = run_stored_in(&model, &ids, dir.path(), z64).unwrap();
    let r = report(&model, "", &ids, z64, "memory", parties).unwrap();
    assert!(r.cosine_vs_plaintext > 0.9995, "cosine {}", r.cosine_vs_plaintext);

    // Another input size.
    prepare(&model, 4, dir.path());
    let err = run_stored(&model, &ids, dir.path()).unwrap_err();
    assert!(err.contains("made for an input of 4 tokens or images (this session: 5)"), "{err}");
    assert!(material_path(dir.path(), 0).exists(), "material that served nothing is kept");
    // Two differences at once: both are named.
    prepare_material(&model.graph, 4, z64, dir.path(), Link::Memory).unwrap();
    let err = run_stored(&model, &ids, dir.path()).unwrap_err();
    assert!(
        err.contains("4 tokens or images (this session: 5)")
            && err.contains("rings z64 (this session: mixed)"),
        "{err}"
    );

    // Server 1's file from another offline phase.
    let other = tempfile::tempdir().unwrap();
    prepare(&model, ids.len(), dir.path());
    prepare(&model, ids.len(), other.path());
    std::fs::copy(material_path(other.path(), 1), material_path(dir.path(), 1)).unwrap();
    let err = run_stored(&model, &ids, dir.path()).unwrap_err();
    assert!(err.contains("material of another offline phase"), "{err}");

    // A damaged file: one flipped byte in its material.
    let path = material_path(other.path(), 2);
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let err = run_stored(&model, &ids, other.path()).unwrap_err();
    assert!(err.contains("is damaged or truncated"), "{err}");
    // The session's error is server 2's own, not a knock-on "party 2 disconnected" elsewhere.
    let cause = err.lines().last().unwrap();
    assert!(cause.starts_with("root cause: party 2: ") && cause.contains("is damaged or truncated"), "{err}");
    std::fs::write(&path, &bytes[..at]).unwrap();
    let err = run_stored(&model, &ids, other.path()).unwrap_err();
    assert!(err.contains("is damaged or truncated"), "{err}");
}

fn run_with(
    model: &Model,
    others: &Model,
    ids: &[u32],
    security: Security,
    material: Material,
) -> veil_mpc::Result<Vec<InferenceParty>> {
    simulate_with(PARTIES, session_config(), |ctx| {
        let mine = (ctx.party() == DATA_OWNER).then_some(ids);
        let m = if ctx.party() == 4 { model } else { others };
        inference_party(ctx, m, mine, security, material.clone())
    })
    .into_iter()
    .collect()
}

#[test]
fn a_small_bert_matches_the_float_reference_in_both_modes() {
    let model = tiny(2, 7);
    let ids = [1u32, 5, 19, 0, 7];
    let modes = [
        (Security::Malicious, Material::Ahead),
        (Security::SemiHonest, Material::Ahead),
        (Security::Malicious, Material::OnDemand),
    ];
    for (security, material) in modes {
        let parties = run_with(&model, &model, &ids, security, material.clone()).unwrap();
        // The plan from the graph's shapes is what each server's run consumed; made ahead, it
        // left nothing to make on demand.
        let plan = FamilyChoice::from(security).plan(&model.graph, ids.len(), None).unwrap();
        let planned: BTreeMap<String, u64> = plan.totals().kinds().map(|(k, v)| (k.to_string(), v)).collect();
        for p in &parties {
            assert_eq!(p.output.is_some(), p.party == DATA_OWNER, "only the data owner gets the output");
            let want = (p.party < 3).then(|| material.name().to_string());
            assert_eq!(p.material, want, "party {}", p.party);
            if p.party < 3 {
                let used = p.preprocessing_used.clone().unwrap();
                assert!(used.get("trunc_pairs").is_some_and(|&n| n > 0));
                assert_eq!(
                    used, planned,
                    "{security:?}: server {} used other material than planned",
                    p.party
                );
                let on_demand = p.made_on_demand.unwrap();
                match material {
                    Material::Ahead => assert_eq!(on_demand, 0, "{security:?}: the plan missed material"),
                    _ => assert!(on_demand > 0),
                }
            } else {
                assert_eq!((p.preprocessing_used.as_ref(), p.made_on_demand), (None, None));
            }
        }
        let r = report(&model, "", &ids, security, "memory", parties).unwrap();
        assert_eq!(r.output.len(), 16);
        assert!(r.cosine_vs_plaintext > 0.995, "{security:?}: cosine {}", r.cosine_vs_plaintext);
        assert!(r.max_abs_error < 0.05, "{security:?}: {}", r.max_abs_error);
        // The fixed-point executor follows the family's arithmetic: closer than the float.
        eprintln!(
            "{security:?}: |private − float| ≤ {}, |private − fixed| ≤ {}",
            r.max_abs_error, r.max_abs_vs_fixed_point
        );
        assert!(r.overflows.is_empty(), "{:?}", r.overflows);
        let server = &r.per_party[0];
        let offline = &server.phases[0];
        assert_eq!(offline.phase, "offline");
        assert!(offline.bytes_sent > 0 && server.phases[1].bytes_sent > 0);
        assert!(server.per_op.iter().any(|o| o.op == "attention" && o.count == 2));
    }
}

/// Without modulus conversion (every gate in Z_2^64 at 16 fractional bits), malicious: closer
/// to the float model than the mixed rings, and within truncation units of the fixed-point
/// executor run in the same rings.
#[test]
fn a_small_bert_without_modulus_conversion_matches_the_float_reference() {
    let model = tiny(2, 7);
    let ids = [1u32, 5, 19, 0, 7];
    let mode = Mode { security: Security::Malicious, rings: Rings::Z64 };
    let parties: Vec<InferenceParty> = simulate_with(PARTIES, session_config(), |ctx| {
        let mine = (ctx.party() == DATA_OWNER).then_some(ids.as_slice());
        inference_party(ctx, &model, mine, mode, Material::OnDemand)
    })
    .into_iter()
    .collect::<veil_mpc::Result<_>>()
    .unwrap();
    let r = report(&model, "", &ids, mode, "memory", parties).unwrap();
    eprintln!(
        "z64: cosine {}, |private − float| ≤ {}, |private − fixed| ≤ {}",
        r.cosine_vs_plaintext, r.max_abs_error, r.max_abs_vs_fixed_point
    );
    assert_eq!((r.rings.as_str(), r.security.as_str()), ("z64", "malicious"));
    assert!(r.cosine_vs_plaintext > 0.9995, "cosine {}", r.cosine_vs_plaintext);
    assert!(r.max_abs_vs_fixed_point < 0.005, "{}", r.max_abs_vs_fixed_point);
    assert!(r.overflows.is_empty(), "{:?}", r.overflows);
}

#[test]
fn parties_with_different_models_stop_at_the_handshake() {
    let (model, other) = (tiny(2, 7), tiny(1, 7));
    let err = run(&model, &other, &[1, 2], Security::SemiHonest).unwrap_err().to_string();
    assert!(err.contains("holds a different model"), "{err}");
}

#[test]
fn bad_token_ids_and_lengths_are_refused() {
    let model = tiny(1, 7);
    let err = run(&model, &model, &[1, 20], Security::SemiHonest).unwrap_err().to_string();
    assert!(err.contains("outside the vocabulary"), "{err}");
    let err = run(&model, &model, &[1; 9], Security::SemiHonest).unwrap_err().to_string();
    assert!(err.contains("tokens"), "{err}");
}

#[test]
fn minilm_sentence_embedding_is_close_to_plaintext() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = veil_nn::bert::find_minilm(root).expect("all-MiniLM-L6-v2 not found: run scripts/setup.sh");
    let r =
        private_inference(&dir, "Private inference.", Security::Malicious, Material::OnDemand, Link::Memory)
            .unwrap();
    assert_eq!(r.tokens, 5);
    assert!(r.cosine_vs_plaintext > 0.99, "cosine {}", r.cosine_vs_plaintext);
}

#[test]
fn a_tiny_gpt2_runs_privately_with_causal_attention_and_the_tied_head() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../nn/tests/data/tiny-gpt2");
    let model = veil_nn::bert::load_hf(&dir, true).unwrap();
    let ids = veil_nn::bert::tokenize(&model, "I'm sure it's fine").unwrap();
    let parties = run(&model, &model, &ids, Security::Malicious).unwrap();
    let r = report(&model, "", &ids, Security::Malicious, "memory", parties).unwrap();
    assert_eq!(r.output.len(), 400, "next-token logits of the last position");
    let argmax = |v: &[f64]| (0..v.len()).fold(0, |b, j| if v[j] > v[b] { j } else { b });
    assert_eq!(argmax(&r.output), argmax(&r.plaintext), "the same next token");
    eprintln!(
        "tiny GPT-2: |private − float| ≤ {}, |private − fixed| ≤ {}",
        r.max_abs_error, r.max_abs_vs_fixed_point
    );
    assert!(r.max_abs_error < 0.3, "{}", r.max_abs_error);
    assert!(r.per_party[0].per_op.iter().any(|o| o.op == "tied-logits" && o.count == 1));
}

#[test]
fn a_tiny_vit_classifies_an_image_privately() {
    use veil_runtime::classify::{image_range, load_image_set, private_classification};
    use veil_runtime::families::{FamilyChoice, Request};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../nn/tests/data/tiny-vit");
    let model = veil_nn::image::ImageModel::load(&dir).unwrap();
    let family = FamilyChoice::for_graph(&model.graph, &Request::default()).unwrap();
    assert_eq!(
        family,
        FamilyChoice::mosformer(veil_mosformer::Mode {
            security: Security::Malicious,
            rings: veil_mosformer::Rings::Mixed
        }),
        "a ViT runs under mosformer by default"
    );
    let (all, labels) = load_image_set(&dir.join("test.safetensors")).unwrap();
    for i in 0..2 {
        let x = image_range(&all, i, 1).unwrap();
        let r = private_classification(
            &model,
            &x,
            Some(&labels[i..=i]),
            &family,
            Material::Ahead,
            Link::Memory,
            None,
        )
        .unwrap();
        eprintln!(
            "tiny ViT image {i}: |private − float| ≤ {}, |private − fixed| ≤ {} units of 2^-16",
            r.max_abs_error, r.fixed_point_ulps
        );
        assert_eq!(r.predictions, r.plaintext_predictions);
        assert!(r.max_abs_error < 0.1, "{}", r.max_abs_error);
        assert!(r.overflows.is_empty(), "{:?}", r.overflows);
    }
    // aegis has no transformer layers: a clear refusal, not a wrong run.
    let x = image_range(&all, 0, 1).unwrap();
    let err = private_classification(
        &model,
        &x,
        None,
        &FamilyChoice::new(&Request { family: Some("aegis"), ..Request::default() }, "aegis").unwrap(),
        Material::Ahead,
        Link::Memory,
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("layernorm") || err.contains("transformer"), "{err}");
}
