//! The registry's promise: any family runs a real model job for any party count it accepts,
//! with the owners where it allows them. The `additive` family classifies the digits CNN among
//! 2, 3 and 5 parties, the owners inside and outside, in memory and over mutual TLS, and
//! agrees with the float model; what a family cannot run is refused before anything runs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use std::path::{Path, PathBuf};

use veil_runtime::Link;
use veil_runtime::classify::{image_range, load_image_set, private_classification};
use veil_runtime::families::{FamilyChoice, Request};
use veil_runtime::inference::Material;
use veil_runtime::{Placement, Security};

fn digits() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/digits-cnn")
}

fn additive(parties: usize, owners: Placement) -> FamilyChoice {
    let r = Request {
        family: Some("additive"),
        parties: Some(parties),
        owners: Some(owners),
        ..Request::default()
    };
    FamilyChoice::new(&r, "aegis").unwrap()
}

#[test]
fn additive_classifies_the_digits_among_2_3_and_5_parties() {
    let model = veil_nn::image::ImageModel::load(&digits().join("model.onnx")).unwrap();
    let (all, labels) = load_image_set(&digits().join("test.safetensors")).unwrap();
    let x = image_range(&all, 0, 3).unwrap();
    let runs = [
        (2, Placement::Inside, Link::Memory),
        (3, Placement::Inside, Link::Tls),
        (5, Placement::Inside, Link::Memory),
        (3, Placement::Outside, Link::Memory),
        (2, Placement::Outside, Link::Tls),
    ];
    for (parties, owners, link) in runs {
        let choice = additive(parties, owners);
        let r =
            private_classification(&model, &x, Some(&labels[..3]), &choice, Material::OnDemand, link, None)
                .unwrap();
        let total = choice.topology.parties();
        assert_eq!(r.per_party.len(), total, "{parties} computing parties, owners {owners:?}");
        assert_eq!(r.family, "additive");
        assert_eq!(r.security, "semi-honest");
        assert!(r.preprocessing.contains("InsecureDealer"), "{}", r.preprocessing);
        assert_eq!(r.predictions, r.plaintext_predictions, "{parties} parties, owners {owners:?}");
        assert!(r.max_abs_error < 0.02, "{}", r.max_abs_error);
        // Only the data owner gets the logits; every computing party sent something online.
        let data_owner = choice.topology.roles.data_owner;
        for p in &r.per_party {
            assert_eq!(p.output.is_some(), p.party == data_owner, "party {} ({})", p.party, p.role);
            let online = p.phases.iter().find(|ph| ph.phase == "online").unwrap();
            if choice.topology.is_computing(p.party) {
                assert!(online.bytes_sent > 0 && online.rounds > 0, "party {}", p.party);
            }
        }
        // Each computing party drew what the plan from the graph's shapes lists.
        let plan = choice.plan(&model.graph, 3, None).unwrap().totals();
        let planned: Vec<(String, u64)> = plan.kinds().map(|(k, v)| (k.to_string(), v)).collect();
        assert!(plan.get("sign_bits") > 0 && plan.get("matmul_triple") > 0);
        for p in r.per_party.iter().filter(|p| choice.topology.is_computing(p.party)) {
            let used: Vec<(String, u64)> = p.preprocessing_used.clone().unwrap().into_iter().collect();
            assert_eq!(used, planned, "party {}", p.party);
        }
        let role = |i: usize| r.per_party[i].role.clone();
        match owners {
            Placement::Inside => {
                assert_eq!(role(0), "server, data owner");
                assert_eq!(role(1), "server, model owner");
            }
            Placement::Outside => {
                assert_eq!(role(parties), "data owner");
                assert_eq!(role(parties + 1), "model owner");
            }
        }
    }
}

/// `aegis` on the digits CNN with a check per image: P0 deals what the plan from the graph's
/// shapes lists, product by product, truncation pair by pair, sign by sign.
#[test]
fn aegis_deals_the_material_its_plan_lists() {
    let model = veil_nn::image::ImageModel::load(&digits().join("model.onnx")).unwrap();
    let (all, labels) = load_image_set(&digits().join("test.safetensors")).unwrap();
    let x = image_range(&all, 0, 2).unwrap();
    let choice = FamilyChoice::new(&Request::default(), "aegis").unwrap();
    let r = private_classification(
        &model,
        &x,
        Some(&labels[..2]),
        &choice,
        Material::OnDemand,
        Link::Memory,
        Some(1),
    )
    .unwrap();
    assert_eq!(r.predictions, r.plaintext_predictions);
    let plan = choice.plan(&model.graph, 2, Some(1)).unwrap().totals();
    assert!(plan.get("sign_bits") > 0 && plan.get("trunc_pairs") > 0 && plan.get("mul_triples") > 0);
    let planned: Vec<(String, u64)> = plan.kinds().map(|(k, v)| (k.to_string(), v)).collect();
    for p in r.per_party.iter().filter(|p| p.party < 3) {
        let used: Vec<(String, u64)> = p.preprocessing_used.clone().unwrap().into_iter().collect();
        assert_eq!(used, planned, "server {}", p.party);
    }
}

#[test]
fn what_a_family_cannot_do_is_refused_before_it_runs() {
    let model = veil_nn::image::ImageModel::load(&digits().join("model.onnx")).unwrap();
    let (all, _) = load_image_set(&digits().join("test.safetensors")).unwrap();
    let x = image_range(&all, 0, 1).unwrap();
    let choice = additive(2, Placement::Inside);
    let err =
        private_classification(&model, &x, None, &choice, Material::Ahead, Link::Memory, None).unwrap_err();
    assert!(err.to_string().contains("ahead material is not an option"), "{err}");
    let err = private_classification(&model, &x, None, &choice, Material::OnDemand, Link::Memory, Some(1))
        .unwrap_err();
    assert!(err.to_string().contains("checks per group of images are an aegis option"), "{err}");
    let text = Path::new(env!("CARGO_MANIFEST_DIR")).join("../nn/tests/data/tiny-gpt2");
    let gpt2 = veil_nn::bert::load_hf(&text, true).unwrap();
    let err =
        veil_runtime::inference::private_inference_of(&gpt2, "Hi", choice, Material::OnDemand, Link::Memory)
            .unwrap_err()
            .to_string();
    assert!(err.contains("additive does not run transformers") && err.contains("node"), "{err}");
    let bad = Request {
        family: Some("mosformer"),
        security: Some(Security::Malicious),
        parties: Some(2),
        ..Request::default()
    };
    let err = FamilyChoice::new(&bad, "aegis").unwrap_err().to_string();
    assert!(err.contains("mosformer runs among 3 computing parties, not 2"), "{err}");
}
