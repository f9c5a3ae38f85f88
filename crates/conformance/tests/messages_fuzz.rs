//! Every family under fuzzed protocol messages: one party's frame, drawn anywhere after the
//! seed setup, is replaced by an edited copy (the edits of `veil-fuzz`: flipped bits,
//! overwritten words, inserted, removed or repeated bytes, truncation). No party may panic or
//! hang, and no honest party of a malicious family may output a wrong value. CI runs a few
//! cases per family with a fixed seed; `VEIL_FUZZ_CASES=N` runs N (with a fresh seed).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod subjects;

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use subjects::{AdditiveSubject, AegisSubject, MmSubject, MosformerSubject, TwoPcSubject};
use veil_conformance::{FuzzOutcome, MessageFuzz, Subject};
use veil_mosformer::{Rings, Security};

/// Cases per family in CI.
const CI_CASES: u32 = 24;

fn fuzz<S: Subject>(subject: &S) {
    let fuzz = MessageFuzz::new(subject).unwrap();
    let (cases, seed) = match std::env::var("VEIL_FUZZ_CASES").ok().and_then(|v| v.parse().ok()) {
        Some(n) => (n, RngSeed::Random),
        None => (CI_CASES, RngSeed::Fixed(0x6d73_6773)),
    };
    let mut runner =
        TestRunner::new(Config { cases, rng_seed: seed, failure_persistence: None, ..Config::default() });
    let outcomes = std::sync::Mutex::new(BTreeMap::<String, usize>::new());
    let strategy = (0..fuzz.parties(), any::<usize>(), prop::collection::vec(veil_fuzz::edit(), 1..4));
    let result = runner.run(&strategy, |(party, frame, edits)| {
        let edits = Arc::new(edits);
        let alter = {
            let edits = edits.clone();
            Arc::new(move |payload: &mut Vec<u8>| *payload = veil_fuzz::apply(payload, &edits))
        };
        let outcome = fuzz.case(party, frame, alter).map_err(TestCaseError::fail)?;
        *outcomes.lock().unwrap().entry(format!("{outcome:?}")).or_default() += 1;
        if outcome == FuzzOutcome::WrongOutput && subject.malicious() {
            return Err(TestCaseError::fail("a wrong output"));
        }
        Ok(())
    });
    eprintln!("{}: {:?}", subject.name(), outcomes.lock().unwrap());
    if let Err(e) = result {
        panic!("{}: {e}", subject.name());
    }
}

#[test]
fn additive_messages() {
    fuzz(&AdditiveSubject);
}

#[test]
fn two_party_toolkit_messages() {
    fuzz(&TwoPcSubject);
}

#[test]
fn mm_messages() {
    fuzz(&MmSubject);
}

#[test]
fn aegis_messages() {
    fuzz(&AegisSubject);
}

#[test]
fn mosformer_messages() {
    fuzz(&MosformerSubject(Security::Malicious, Rings::Mixed));
}
