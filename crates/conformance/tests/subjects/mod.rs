//! The subjects of Veil's families, shared by the conformance and message-fuzzing tests.

use veil_additive::{Additive, InsecureDealer};
use veil_aegis::Aegis;
use veil_conformance::{Op, Subject};
use veil_mosformer::clear::MosformerReference;
use veil_mosformer::offline::Offline;
use veil_mosformer::{Mosformer, Rings, Security};
use veil_mpc::reference::FixedReference;
use veil_mpc::{Ctx, Result};
use veil_nn::fixed::ExactCnn;

pub struct AdditiveSubject;

impl Subject for AdditiveSubject {
    type Family = Additive<InsecureDealer>;
    fn name(&self) -> &'static str {
        "additive"
    }
    fn party_counts(&self) -> Vec<usize> {
        vec![2, 3, 5]
    }
    fn make(&self, _: &mut Ctx) -> Result<Self::Family> {
        Ok(Additive::new(InsecureDealer::new()))
    }
    fn reference(&self) -> &'static dyn FixedReference {
        &ExactCnn(16)
    }
    fn malicious(&self) -> bool {
        false
    }
    /// Truncations are `⌊x/d⌋` or one more; maxima and ReLU are exact.
    fn tolerance(&self, op: Op) -> i64 {
        match op {
            Op::MulFixed | Op::MatmulFixed | Op::DivPublic => 1,
            _ => 0,
        }
    }
}

/// The 2-party toolkit behind the capability traits, on Ferret at small (insecure, fast)
/// parameters.
pub struct TwoPcSubject;

impl Subject for TwoPcSubject {
    type Family = veil_twopc::TwoPc;
    fn name(&self) -> &'static str {
        "2-party toolkit"
    }
    fn party_counts(&self) -> Vec<usize> {
        vec![2]
    }
    /// COTs for the whole pipeline made ahead, so that the measured products send what they
    /// declare (a Ferret iteration made inside one would add its own message).
    fn make(&self, ctx: &mut Ctx) -> Result<Self::Family> {
        let mut family = veil_twopc::TwoPc::setup(ctx, veil_twopc::Engine::FerretInsecureSmall)?;
        family.prepare_cots(ctx, 60_000, 60_000)?;
        Ok(family)
    }
    fn reference(&self) -> &'static dyn FixedReference {
        &ExactCnn(16)
    }
    fn malicious(&self) -> bool {
        false
    }
    /// M&M's truncation is `⌊x/d⌋` or one less; ReLU and maxima are exact on the whole ring.
    fn tolerance(&self, op: Op) -> i64 {
        match op {
            Op::MulFixed | Op::MatmulFixed | Op::DivPublic => 1,
            _ => 0,
        }
    }
}

/// `mm`: the toolkit's comparisons and truncations with the Z_p-OLE and coefficient-encoded
/// products, on Ferret at small (insecure, fast) parameters.
pub struct MmSubject;

impl Subject for MmSubject {
    type Family = veil_mm::family::Mm;
    fn name(&self) -> &'static str {
        "mm"
    }
    fn party_counts(&self) -> Vec<usize> {
        vec![2]
    }
    /// COTs made ahead, as for the toolkit: the measured ring products send what they declare.
    fn make(&self, ctx: &mut Ctx) -> Result<Self::Family> {
        let mut family = veil_mm::family::Mm::setup(
            ctx,
            veil_twopc::Engine::FerretInsecureSmall,
            veil_mm::family::PRESET,
        )?;
        family.prepare_cots(ctx, 60_000, 60_000)?;
        Ok(family)
    }
    fn reference(&self) -> &'static dyn FixedReference {
        &veil_mm::clear::MmReference
    }
    fn malicious(&self) -> bool {
        false
    }
    /// Truncations over Z_p (the products' way back) are off by at most a unit either way;
    /// comparisons are exact on the whole ring.
    fn tolerance(&self, op: Op) -> i64 {
        match op {
            Op::MulFixed | Op::MatmulFixed | Op::DivPublic => 1,
            _ => 0,
        }
    }
}

pub struct AegisSubject;

impl Subject for AegisSubject {
    type Family = Aegis;
    fn name(&self) -> &'static str {
        "aegis"
    }
    fn party_counts(&self) -> Vec<usize> {
        vec![3]
    }
    fn make(&self, _: &mut Ctx) -> Result<Self::Family> {
        Aegis::new(64)
    }
    fn reference(&self) -> &'static dyn FixedReference {
        &ExactCnn(16)
    }
    fn malicious(&self) -> bool {
        true
    }
    /// Verified truncation pairs are off by at most a unit; comparisons are exact.
    fn tolerance(&self, op: Op) -> i64 {
        match op {
            Op::MulFixed | Op::MatmulFixed | Op::DivPublic => 2,
            _ => 0,
        }
    }
}

pub struct MosformerSubject(pub Security, pub Rings);

impl Subject for MosformerSubject {
    type Family = Mosformer<Offline>;
    fn name(&self) -> &'static str {
        "mosformer"
    }
    fn party_counts(&self) -> Vec<usize> {
        vec![3]
    }
    fn make(&self, _: &mut Ctx) -> Result<Self::Family> {
        Ok(Mosformer::new(self.0, Offline::for_security(self.0)).with_rings(self.1))
    }
    fn reference(&self) -> &'static dyn FixedReference {
        match self.1 {
            Rings::Mixed => &MosformerReference::MIXED,
            Rings::Z64 => &MosformerReference::Z64,
        }
    }
    fn malicious(&self) -> bool {
        self.0 == Security::Malicious
    }
    /// Truncation pairs land within `[-1, +2]` units; ReLU and maxima read their condition
    /// after a local downcast that may be two units low at 6 fractional bits (2^11 units of
    /// 2^-16) in the mixed rings.
    fn tolerance(&self, op: Op) -> i64 {
        match (op, self.1) {
            (Op::MulFixed | Op::MatmulFixed | Op::DivPublic, _) => 2,
            (Op::Relu | Op::MaxRows, Rings::Mixed) => 1 << 11,
            _ => 0,
        }
    }
}
