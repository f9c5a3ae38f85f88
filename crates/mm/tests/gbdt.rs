//! GBDT training between two parties on vertically partitioned data: the breast-cancer data
//! (party 0: the labels and the first 15 features, party 1: the other 15), the trees'
//! F1 on held-out rows within a point of the same trees trained in the clear; private
//! prediction equal to the model's scores; the leaves opened to one party only.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_he::BfvPreset;
use veil_he::ole::Ole;
use veil_mm::gbdt::data::{Cuts, Dataset, PartyData, f1};
use veil_mm::gbdt::{FRAC, Params, clear, predict, reveal_leaves, train};
use veil_mpc::harness::{all_ok, simulate};
use veil_twopc::{Engine, TwoParty};

fn dataset() -> Dataset {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/breast-cancer.csv");
    Dataset::from_csv(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Each party's data: its columns binned with its own cuts (made on the training rows).
fn parties(train: &Dataset, test: &Dataset, bins: usize) -> [(PartyData, PartyData); 2] {
    let f = train.features();
    let split = [0..f / 2, f / 2..f];
    let counts = [f / 2, f - f / 2];
    [0, 1].map(|p| {
        let cols = train.columns(split[p].clone());
        let cuts: Vec<Cuts> = cols.iter().map(|c| Cuts::quantiles(c, bins)).collect();
        let labels = |d: &Dataset| (p == 0).then(|| d.y.clone());
        (
            PartyData::binned(&cols, &cuts, labels(train), counts, bins).unwrap(),
            PartyData::binned(&test.columns(split[p].clone()), &cuts, labels(test), counts, bins).unwrap(),
        )
    })
}

#[test]
fn breast_cancer_trees_match_the_clear_training_within_a_point_of_f1() {
    let (train_set, test_set) = dataset().split(5, 2);
    let params = Params { trees: 4, depth: 3, bins: 16, learning_rate: 0.3, lambda: 1.0 };
    let data = parties(&train_set, &test_set, params.bins);
    let out = all_ok(simulate(2, 3, |ctx| {
        let me = ctx.party();
        let mut tp = TwoParty::with_other(ctx, Engine::FerretInsecureSmall)?;
        let ole = Ole::setup(ctx, 1 - me, BfvPreset::N8192P60)?;
        let (train_data, test_data) = &data[me];
        let trees = train(&mut tp, &ole, ctx, train_data, &params)?;
        let scores = predict(&mut tp, &ole, ctx, &trees, test_data)?;
        let leaves = reveal_leaves(&tp, ctx, &trees, 0)?;
        Ok((trees, scores, leaves))
    }))
    .unwrap();
    let (t0, s0, leaves0) = &out[0];
    let (t1, s1, leaves1) = &out[1];
    assert!(leaves1.is_none(), "the leaves are opened to party 0 only");
    let leaves = leaves0.as_ref().unwrap();
    for (a, b) in t0.iter().zip(t1) {
        assert_eq!(a.splits, b.splits, "both parties see the same structure");
    }
    // The private scores are the model's: the leaves of each sample's path, summed.
    let global: Vec<Vec<u16>> = data[0].1.binned.iter().chain(&data[1].1.binned).cloned().collect();
    let trees_clear: Vec<clear::ClearTree> = t0
        .iter()
        .zip(leaves)
        .map(|(t, l)| clear::ClearTree {
            splits: t.splits.iter().map(|s| (s.feature, s.bin)).collect(),
            leaves: l.clone(),
        })
        .collect();
    let expected = clear::scores(&trees_clear, &global, params.depth);
    let secure: Vec<f64> =
        s0.iter().zip(s1).map(|(&a, &b)| a.wrapping_add(b) as i64 as f64 / f64::from(1u32 << FRAC)).collect();
    for (e, s) in expected.iter().zip(&secure) {
        assert!((e - s).abs() < 1e-3, "a private score {s} against the model's {e}");
    }
    // F1 against the clear training of the same trees.
    let train_global: Vec<Vec<u16>> = data[0].0.binned.iter().chain(&data[1].0.binned).cloned().collect();
    let reference = clear::train(&train_global, &train_set.y, &params);
    let clear_scores = clear::scores(&reference, &global, params.depth);
    let label = |s: &[f64]| -> Vec<u8> { s.iter().map(|&v| u8::from(v > 0.0)).collect() };
    let (f_secure, f_clear) = (f1(&label(&secure), &test_set.y), f1(&label(&clear_scores), &test_set.y));
    eprintln!("F1 on {} held-out rows: secure {f_secure:.4}, clear {f_clear:.4}", test_set.y.len());
    assert!(f_clear > 0.9, "the clear trees learn the data (F1 {f_clear})");
    assert!((f_secure - f_clear).abs() <= 0.01, "F1 {f_secure} against the clear {f_clear}");
    let same = t0
        .iter()
        .zip(&reference)
        .filter(|(a, b)| a.splits.iter().map(|s| (s.feature, s.bin)).collect::<Vec<_>>() == b.splits)
        .count();
    eprintln!("{same} of {} trees split exactly as in the clear", reference.len());
}

#[test]
fn bad_parameters_and_data_are_refused() {
    let d = Dataset::from_csv("a,b,label\n1,2,0\n3,4,1\n").unwrap();
    assert_eq!(d.features(), 2);
    assert!(Dataset::from_csv("a,label\n1,2\n").is_err(), "a label of 2");
    assert!(Dataset::from_csv("a,label\n1,x\n").is_err(), "not a number");
    assert!(Dataset::from_csv("a,b,label\n1,0\n").is_err(), "a short row");
    let cuts = Cuts::quantiles(&[1.0, 2.0, 3.0, 4.0], 4);
    assert_eq!((cuts.bin(0.0), cuts.bin(2.5), cuts.bin(9.0)), (0, 1, 2));
    assert!(PartyData::binned(&[vec![1.0]], std::slice::from_ref(&cuts), Some(vec![2]), [1, 0], 4).is_err());
    assert!(PartyData::binned(&[vec![1.0]], &[cuts], None, [1, 0], 1).is_err());
}
