//! Every family Veil has passes the conformance suite: one `Subject` and one call each.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod subjects;

use subjects::{AdditiveSubject, AegisSubject, MmSubject, MosformerSubject, TwoPcSubject};
use veil_additive::{
    Additive, Correlations, InsecureDealer, MatrixTriple, SignMaterial, TripleSource, Triples, TruncPairs,
};
use veil_conformance::{Op, Subject, run};
use veil_mosformer::{Rings, Security};
use veil_mpc::prep::PrepUsage;
use veil_mpc::reference::FixedReference;
use veil_mpc::{Ctx, Result};
use veil_nn::fixed::ExactCnn;
use veil_ring::{Ring, Z64};

#[test]
fn additive_conforms_among_2_3_and_5_parties() {
    let report = run(&AdditiveSubject, &[1, 2, 3]).unwrap();
    assert_eq!(report, veil_conformance::Report::default(), "a semi-honest family is not tampered with");
}

#[test]
fn the_two_party_toolkit_conforms() {
    let report = run(&TwoPcSubject, &[1, 2, 3]).unwrap();
    assert_eq!(report, veil_conformance::Report::default(), "a semi-honest family is not tampered with");
}

#[test]
fn mm_conforms() {
    let report = run(&MmSubject, &[1, 2, 3]).unwrap();
    assert_eq!(report, veil_conformance::Report::default(), "a semi-honest family is not tampered with");
}

#[test]
fn aegis_conforms_and_catches_tampering() {
    let report = run(&AegisSubject, &[1, 2]).unwrap();
    eprintln!("aegis under tampering: {report:?}");
}

#[test]
fn mosformer_conforms_in_both_modes_and_rings_and_catches_tampering() {
    let report = run(&MosformerSubject(Security::Malicious, Rings::Mixed), &[1, 2]).unwrap();
    eprintln!("mosformer (mixed rings) under tampering: {report:?}");
    let report = run(&MosformerSubject(Security::Malicious, Rings::Z64), &[3]).unwrap();
    eprintln!("mosformer (z64) under tampering: {report:?}");
    run(&MosformerSubject(Security::SemiHonest, Rings::Mixed), &[4]).unwrap();
}

/// The additive family with the suite's expectations made wrong on purpose.
struct Misdeclared {
    exact_truncation: bool,
    claims_malicious: bool,
}

impl Subject for Misdeclared {
    type Family = Additive<InsecureDealer>;
    fn name(&self) -> &'static str {
        "additive (misdeclared)"
    }
    fn party_counts(&self) -> Vec<usize> {
        vec![3]
    }
    fn make(&self, _: &mut Ctx) -> Result<Self::Family> {
        Ok(Additive::new(InsecureDealer::new()))
    }
    fn reference(&self) -> &'static dyn FixedReference {
        &ExactCnn(16)
    }
    fn malicious(&self) -> bool {
        self.claims_malicious
    }
    fn tolerance(&self, op: Op) -> i64 {
        AdditiveSubject.tolerance(op) * i64::from(!self.exact_truncation)
    }
}

#[test]
fn the_suite_fails_a_family_that_does_not_do_what_it_declares() {
    let err = run(&Misdeclared { exact_truncation: true, claims_malicious: false }, &[1]).unwrap_err();
    assert!(err.contains("output") && err.contains("tolerance 0 units"), "{err}");
    // A semi-honest family claiming malicious security: a tampered frame gives a wrong output.
    let err = run(&Misdeclared { exact_truncation: false, claims_malicious: true }, &[1]).unwrap_err();
    assert!(err.contains("output a wrong value") || err.contains("was detected"), "{err}");
}

/// The insecure dealer, but every truncation takes one pair more than it declares: what a
/// source does when its plan and its protocol disagree.
#[derive(Default)]
struct Wasteful(InsecureDealer);

impl<R: Ring> TripleSource<R> for Wasteful {
    fn mul_triples(&mut self, ctx: &mut Ctx, parties: usize, count: usize) -> Result<Triples<R>> {
        self.0.mul_triples(ctx, parties, count)
    }
}

impl Correlations for Wasteful {
    fn name(&self) -> &'static str {
        "InsecureDealer (wasteful)"
    }
    fn triples(&mut self, ctx: &mut Ctx, parties: usize, count: usize) -> Result<Triples<Z64>> {
        self.0.triples(ctx, parties, count)
    }
    fn matrix_triple(
        &mut self,
        ctx: &mut Ctx,
        parties: usize,
        m: usize,
        k: usize,
        n: usize,
    ) -> Result<MatrixTriple> {
        self.0.matrix_triple(ctx, parties, m, k, n)
    }
    fn trunc_pairs(&mut self, ctx: &mut Ctx, parties: usize, count: usize, d: u64) -> Result<TruncPairs> {
        self.0.trunc_pairs(ctx, parties, 1, d)?;
        self.0.trunc_pairs(ctx, parties, count, d)
    }
    fn sign_material(&mut self, ctx: &mut Ctx, parties: usize, count: usize) -> Result<SignMaterial> {
        self.0.sign_material(ctx, parties, count)
    }
    fn usage(&self) -> &PrepUsage {
        Correlations::usage(&self.0)
    }
}

struct WastefulSubject;

impl Subject for WastefulSubject {
    type Family = Additive<Wasteful>;
    fn name(&self) -> &'static str {
        "additive (wasteful source)"
    }
    fn party_counts(&self) -> Vec<usize> {
        vec![3]
    }
    fn make(&self, _: &mut Ctx) -> Result<Self::Family> {
        Ok(Additive::new(Wasteful::default()))
    }
    fn reference(&self) -> &'static dyn FixedReference {
        &ExactCnn(16)
    }
    fn malicious(&self) -> bool {
        false
    }
    fn tolerance(&self, op: Op) -> i64 {
        AdditiveSubject.tolerance(op)
    }
}

#[test]
fn the_suite_fails_a_source_that_consumes_other_material_than_declared() {
    let err = run(&WastefulSubject, &[1]).unwrap_err();
    assert!(err.contains("consumed preprocessing") && err.contains("trunc_pairs"), "{err}");
}
