//! The conformance suite every protocol family passes, by implementing [`Subject`] and adding
//! one test that calls [`run`].
//!
//! It checks a family through `veil-mpc`'s capability traits against [`Plaintext`], the
//! plaintext reference family behind the same traits, with the family's own clear arithmetic
//! (its [`FixedReference`]):
//! - sharing and opening at the edges of `Z_2^64` (0, ±1, most negative and positive, the
//!   wrap) and linear operations, exactly;
//! - products in the ring, exactly, with the busiest party's measured bytes and messages equal
//!   to the declared [`Multiply::mul_cost`] (no party above it);
//! - fixed-point products, matrix products and public divisions, ReLU (at every edge value its
//!   clear ReLU accepts: the whole ring for families that compare on it) and row maxima of
//!   several widths, within the family's declared tolerance, at random values too;
//! - honest runs over several seeds and every party count the family accepts, which must
//!   never abort;
//! - the preprocessing each party consumed equals what the family declares for the calls the
//!   pipeline makes ([`veil_mpc::prep::Preprocessing::requests`] over the calls traced on
//!   shapes alone, [`veil_mpc::trace::Tracer`]), kind by kind;
//! - for malicious families, a tampering hook ([`tamper`]) that alters one frame of one party
//!   at points spread over the computation: no honest party may output a wrong value, and the
//!   alteration must be detected (an abort, or a malformed message).

pub mod reference;
pub mod tamper;
pub mod values;

use std::time::Duration;

use veil_mpc::harness::{SimConfig, simulate_with};
use veil_mpc::prep::{Plan, Preprocessing};
use veil_mpc::reference::FixedReference;
use veil_mpc::trace::Tracer;
use veil_mpc::traits::{Layout, Multiply, NonLinear, Owners};
use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::Z64;
use veil_tensor::Tensor;

pub use reference::Plaintext;

/// An operation the suite checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Sharing then opening.
    Open,
    /// `x + y`, `x − y`, `x + c`, `x · c`.
    Linear,
    /// `x · y` in the ring.
    Mul,
    /// `x ⊙ y` rescaled.
    MulFixed,
    /// `X · Y` rescaled.
    MatmulFixed,
    /// `x / d` for public `d`.
    DivPublic,
    /// `max(x, 0)`.
    Relu,
    /// Row maxima.
    MaxRows,
}

/// What a family brings to the suite.
pub trait Subject: Sync {
    /// The family's instance at one party.
    type Family: NonLinear<Z64> + Layout<Z64> + Multiply<Z64> + Owners<Z64> + Preprocessing;

    /// The family's name, for messages.
    fn name(&self) -> &'static str;
    /// The party counts to check (every count the family accepts, within reason).
    fn party_counts(&self) -> Vec<usize>;
    /// A fresh instance at the party of `ctx`.
    fn make(&self, ctx: &mut Ctx) -> Result<Self::Family>;
    /// The family's clear arithmetic.
    fn reference(&self) -> &'static dyn FixedReference;
    /// Whether it is secure against malicious parties (then it is tampered with).
    fn malicious(&self) -> bool;
    /// How far from the reference an output of `op` may be, in units of the last place
    /// (0: exact).
    fn tolerance(&self, op: Op) -> i64;
}

/// Every output of one party's pipeline, and what its products cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Outputs {
    /// Per operation, the revealed values.
    pub values: Vec<(Op, Vec<i64>)>,
    /// `mul`'s measured bytes and messages at this party.
    pub mul_spent: (u64, u64),
    /// `mul`'s declared bytes and messages.
    pub mul_declared: (u64, u64),
}

/// The inputs of a pipeline, the same at every party.
struct Inputs {
    edges: Vec<i64>,
    a: Vec<i64>,
    b: Vec<i64>,
    p: Vec<i64>,
    q: Vec<i64>,
    relu: Vec<i64>,
    rows: Vec<(usize, Vec<i64>)>,
}

fn inputs(reference: &dyn FixedReference, seed: u64) -> Inputs {
    let f = reference.frac_bits();
    let edges = values::ring_edges();
    let mut a = edges.clone();
    a.extend(values::random(seed, 20, i64::MAX));
    let b: Vec<i64> = a.iter().rev().copied().collect();
    // Reals within ±100 for products (their products stay within ±10^4).
    let hundred = 100i64 << f;
    let mut p = vec![0, 1, -1, 1 << f, -(1 << f), hundred - 1, -hundred];
    p.extend(values::random(seed + 1, 17, hundred));
    let mut q = vec![1 << f, -1, 0, 3 << f, -(1 << (f - 1)), -hundred, hundred - 1];
    q.extend(values::random(seed + 2, 17, hundred));
    // Row entries within ±250, so that differences stay inside every family's comparison
    // range (Mosformer's mixed rings read them in Z_2^16 at 6 fractional bits: below 512).
    let rows = [1usize, 2, 3, 5]
        .iter()
        .enumerate()
        .map(|(i, &k)| (k, values::random(seed + 10 + i as u64, 4 * k, 250 << f)))
        .collect();
    Inputs { edges, a, b, p, q, relu: values::relu_inputs(reference, seed + 3, 40), rows }
}

fn tensor(shape: &[usize], v: &[i64]) -> Result<Tensor<Z64>> {
    Ok(Tensor::new(shape.to_vec(), v.iter().map(|&x| Z64(x as u64)).collect())?)
}

/// Runs every checked operation at one party on family `fam`, then the family's deferred
/// checks, then reveals.
fn pipeline<F: NonLinear<Z64> + Layout<Z64> + Multiply<Z64>>(
    fam: &mut F,
    ctx: &mut Ctx,
    inp: &Inputs,
) -> Result<Outputs> {
    let (me, n) = (ctx.party(), ctx.parties());
    let share = |fam: &mut F, ctx: &mut Ctx, owner: usize, v: &[i64], shape: &[usize]| {
        let t = tensor(shape, v)?;
        fam.share_input(ctx, owner, (me == owner).then_some(&t), shape)
    };
    let last = n - 1;
    let edges = share(fam, ctx, 0, &inp.edges, &[inp.edges.len()])?;
    let a = share(fam, ctx, 1 % n, &inp.a, &[inp.a.len()])?;
    let b = share(fam, ctx, last, &inp.b, &[inp.b.len()])?;
    let c = tensor(&[inp.a.len()], &inp.b)?;
    let sum = fam.add(&a, &b)?;
    let diff = fam.sub(&a, &b)?;
    let plus = fam.add_public(ctx, &a, &c)?;
    let times = fam.mul_public(&a, &c)?;
    let before = ctx.stats().current();
    let prod = fam.mul(ctx, &a, &b)?;
    let spent = ctx.stats().current().since(&before);
    let declared = fam.mul_cost(inp.a.len(), n);
    let mul_spent = (spent.bytes_sent, spent.messages_sent);
    let mul_declared = (declared.bytes_sent, declared.messages_sent);
    let p = share(fam, ctx, 0, &inp.p, &[inp.p.len()])?;
    let q = share(fam, ctx, last, &inp.q, &[inp.q.len()])?;
    let pq = fam.mul_fixed(ctx, &p, &q)?;
    let pm = fam.reshape(&p, &[4, 6])?;
    let qm = fam.reshape(&fam.slice(&q, 0, 0..18)?, &[6, 3])?;
    let mm = fam.matmul_fixed(ctx, &pm, &qm)?;
    let div_f = fam.div_public(ctx, &p, 1 << fam.frac_bits())?;
    let div_3 = fam.div_public(ctx, &p, 3)?;
    let r = share(fam, ctx, 0, &inp.relu, &[inp.relu.len()])?;
    let relu = fam.relu(ctx, &r)?;
    let mut maxima = Vec::new();
    for (k, v) in &inp.rows {
        let x = share(fam, ctx, last, v, &[v.len() / k, *k])?;
        maxima.push(fam.max_rows(ctx, &x, v.len() / k, *k)?);
    }
    fam.check(ctx)?;
    let reveal = |fam: &mut F, ctx: &mut Ctx, x: &F::Share| -> Result<Vec<i64>> {
        Ok(fam.reveal_all(ctx, x)?.data().iter().map(|v| v.0 as i64).collect())
    };
    let mut values = vec![(Op::Open, reveal(fam, ctx, &edges)?)];
    for x in [&sum, &diff, &plus, &times] {
        values.push((Op::Linear, reveal(fam, ctx, x)?));
    }
    values.push((Op::Mul, reveal(fam, ctx, &prod)?));
    values.push((Op::MulFixed, reveal(fam, ctx, &pq)?));
    values.push((Op::MatmulFixed, reveal(fam, ctx, &mm)?));
    values.push((Op::DivPublic, reveal(fam, ctx, &div_f)?));
    values.push((Op::DivPublic, reveal(fam, ctx, &div_3)?));
    values.push((Op::Relu, reveal(fam, ctx, &relu)?));
    for m in &maxima {
        values.push((Op::MaxRows, reveal(fam, ctx, m)?));
    }
    Ok(Outputs { values, mul_spent, mul_declared })
}

fn config(seed: u64) -> SimConfig {
    SimConfig { seed, timeout: Duration::from_secs(120) }
}

/// The reference's outputs for `parties` parties and `seed`.
fn expected(reference: &'static dyn FixedReference, parties: usize, seed: u64) -> Result<Outputs> {
    let inp = inputs(reference, seed);
    let mut outs =
        simulate_with(parties, config(seed), |ctx| pipeline(&mut Plaintext::new(reference), ctx, &inp));
    outs.swap_remove(0)
}

/// Compares a family's outputs with the reference's, op by op, within its tolerances.
fn compare<S: Subject>(
    s: &S,
    got: &Outputs,
    want: &Outputs,
    context: &str,
) -> std::result::Result<(), String> {
    if got.mul_spent.0 > got.mul_declared.0 || got.mul_spent.1 > got.mul_declared.1 {
        return Err(format!(
            "{context}: mul sent {:?} (bytes, messages), more than its declared {:?}",
            got.mul_spent, got.mul_declared
        ));
    }
    if got.values.len() != want.values.len() {
        return Err(format!(
            "{context}: {} outputs, the reference has {}",
            got.values.len(),
            want.values.len()
        ));
    }
    for ((op, g), (_, w)) in got.values.iter().zip(&want.values) {
        let tol = s.tolerance(*op);
        if let Some(k) = (0..w.len()).find(|&k| (i128::from(g[k]) - i128::from(w[k])).abs() > i128::from(tol))
        {
            return Err(format!(
                "{context}: {op:?} output {k} is {}, the reference {} (tolerance {tol} units)",
                g[k], w[k]
            ));
        }
    }
    Ok(())
}

/// What a passing run found worth knowing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Alterations by the cheating party that some party detected.
    pub detected: usize,
    /// Alterations no party noticed, with every honest output still right (a bit the
    /// protocol's result did not depend on): `(party, frame)`.
    pub harmless: Vec<(usize, usize)>,
}

/// Every check of the suite; `Err` names the first that failed.
///
/// # Errors
/// A description of the failed check.
pub fn run<S: Subject>(s: &S, seeds: &[u64]) -> std::result::Result<Report, String> {
    for &parties in &s.party_counts() {
        for &seed in seeds {
            let context = format!("{} with {parties} parties, seed {seed}", s.name());
            let want =
                expected(s.reference(), parties, seed).map_err(|e| format!("{context}: reference: {e}"))?;
            let inp = inputs(s.reference(), seed);
            let outs = simulate_with(parties, config(seed), |ctx| {
                let mut fam = s.make(ctx)?;
                // The same pipeline over shapes alone: the material the family declares for it.
                let mut tracer = Tracer::like::<Z64, _>(&fam);
                pipeline(&mut tracer, &mut Ctx::detached(ctx.party(), ctx.parties()), &inp)?;
                let planned = Plan::of(&fam, tracer.calls()).totals();
                let out = pipeline(&mut fam, ctx, &inp)?;
                Ok((out, planned, fam.usage()))
            });
            let mut busiest = (0, 0);
            let mut declared = (0, 0);
            for (i, out) in outs.into_iter().enumerate() {
                let (got, planned, used) =
                    out.map_err(|e| format!("{context}: an honest run failed at party {i}: {e}"))?;
                if planned != used {
                    return Err(format!(
                        "{context}, party {i}: consumed preprocessing {used:?}, the family declares {planned:?}"
                    ));
                }
                compare(s, &got, &want, &format!("{context}, party {i}"))?;
                busiest = (busiest.0.max(got.mul_spent.0), busiest.1.max(got.mul_spent.1));
                declared = got.mul_declared;
            }
            if busiest != declared {
                return Err(format!(
                    "{context}: the busiest party's mul sent {busiest:?} (bytes, messages), the declared cost is {declared:?}"
                ));
            }
        }
    }
    if s.malicious() { tampering(s) } else { Ok(Report::default()) }
}

/// The tampering check: party 1 alters one frame at points spread over the computation (after
/// the seed setup). Every honest party must fail or output the honest value: a wrong output is
/// a failure. An alteration is detected when some party stops on a check (an abort, or a
/// malformed message; the others may then see it leave); one that changes no output may go
/// unnoticed and is reported. At least one alteration must be detected.
fn tampering<S: Subject>(s: &S) -> std::result::Result<Report, String> {
    let parties = s.party_counts().first().copied().unwrap_or(3);
    let seed = 101;
    let inp = inputs(s.reference(), seed);
    let job = |ctx: &mut Ctx| run_counted(s, ctx, &inp);
    let (honest, _) = tamper::simulate_tampered(parties, config(seed), None, job);
    let honest: Vec<(Outputs, usize, usize)> = honest
        .into_iter()
        .collect::<Result<_>>()
        .map_err(|e| format!("{}: the honest run failed: {e}", s.name()))?;
    let cheater = 1;
    let (_, setup, total) = honest[cheater];
    let points = 12.min(total.saturating_sub(setup));
    let mut report = Report::default();
    for j in 0..points {
        let frame = setup + j * (total - setup) / points.max(1);
        let t = tamper::Tamper { party: cheater, frame };
        let (outs, altered) = tamper::simulate_tampered(parties, config(seed), Some(t), job);
        if !altered {
            continue;
        }
        let (mut detected, mut failed) = (false, false);
        for (i, out) in outs.into_iter().enumerate() {
            failed |= out.is_err() && i != cheater;
            match out {
                Ok((o, ..)) if i != cheater && o.values != honest[i].0.values => {
                    return Err(format!(
                        "{}: party {cheater} altered its frame {frame} and party {i} output a wrong value",
                        s.name()
                    ));
                }
                Ok(_) => {}
                Err(MpcError::Abort { .. } | MpcError::Malformed { .. }) => detected = true,
                // A party that left after its check failed disconnects the others.
                Err(_) => {}
            }
        }
        match (detected, failed) {
            (true, _) => report.detected += 1,
            (false, false) => report.harmless.push((cheater, frame)),
            (false, true) => {
                return Err(format!(
                    "{}: party {cheater} altered its frame {frame}; honest parties stopped, but on no check",
                    s.name()
                ));
            }
        }
    }
    if report.detected == 0 {
        return Err(format!("{}: none of party {cheater}'s {points} alterations was detected", s.name()));
    }
    Ok(report)
}

/// What a run with one fuzzed frame led to (see [`MessageFuzz::case`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FuzzOutcome {
    /// The edit left the frame as it was.
    Unchanged,
    /// Some party stopped on a check (an abort, or a malformed message).
    Detected,
    /// No party noticed and every honest output is the honest run's.
    Harmless,
    /// Honest parties stopped with an error that is not a check (allowed: nothing was
    /// released).
    Stopped,
    /// An honest party output another value (allowed for semi-honest families only: they do
    /// not protect integrity).
    WrongOutput,
}

/// A family under fuzzed protocol messages: one party's frame is replaced by an edited copy
/// (truncated, extended, overwritten: what a fuzzer draws), and every other party must stop
/// with an error or output what the honest run did (malicious families), and never panic or
/// hang (every family). The decoders of every message a family receives are reached this way,
/// in the protocol state where they run.
pub struct MessageFuzz<'s, S: Subject> {
    subject: &'s S,
    parties: usize,
    inputs: Inputs,
    honest: Vec<Outputs>,
    /// Per party, the index of its first frame after the seed setup and its frame count.
    frames: Vec<(usize, usize)>,
}

/// Inputs and timeout of the fuzzed runs (a run that waits this long is a hang).
const FUZZ_SEED: u64 = 202;
const FUZZ_TIMEOUT: Duration = Duration::from_secs(30);

impl<'s, S: Subject> MessageFuzz<'s, S> {
    /// Runs the honest pipeline once among the family's first party count.
    ///
    /// # Errors
    /// The honest run failed.
    pub fn new(subject: &'s S) -> std::result::Result<Self, String> {
        let parties = subject.party_counts().first().copied().unwrap_or(3);
        let inputs = inputs(subject.reference(), FUZZ_SEED);
        let (honest, _) =
            tamper::simulate_tampered(parties, fuzz_config(), None, |ctx| run_counted(subject, ctx, &inputs));
        let honest: Vec<(Outputs, usize, usize)> = honest
            .into_iter()
            .collect::<Result<_>>()
            .map_err(|e| format!("{}: the honest run failed: {e}", subject.name()))?;
        let frames = honest.iter().map(|(_, setup, total)| (*setup, total - setup)).collect();
        let honest = honest.into_iter().map(|(o, ..)| o).collect();
        Ok(MessageFuzz { subject, parties, inputs, honest, frames })
    }

    /// The number of parties of the runs.
    pub fn parties(&self) -> usize {
        self.parties
    }

    /// Runs with `alter` applied to frame `frame` (modulo the frames `party` sends after the
    /// seed setup) of party `party` (modulo the parties).
    ///
    /// # Errors
    /// A party panicked or hung, or (malicious families) an honest party output a wrong value.
    pub fn case(
        &self,
        party: usize,
        frame: usize,
        alter: tamper::Alter,
    ) -> std::result::Result<FuzzOutcome, String> {
        let cheater = party % self.parties;
        let (setup, count) = self.frames[cheater];
        let frame = setup + frame % count.max(1);
        let t = tamper::Tamper { party: cheater, frame };
        let (outs, altered) = tamper::simulate_altered(self.parties, fuzz_config(), Some(t), alter, |ctx| {
            run_counted(self.subject, ctx, &self.inputs)
        });
        if !altered {
            return Ok(FuzzOutcome::Unchanged);
        }
        let name = self.subject.name();
        let (mut detected, mut stopped, mut wrong) = (false, false, false);
        for (i, out) in outs.into_iter().enumerate() {
            match out {
                Err(MpcError::Panicked { message, .. }) => {
                    return Err(format!(
                        "{name}: party {cheater}'s frame {frame} altered: party {i} panicked: {message}"
                    ));
                }
                Err(
                    e
                    @ MpcError::Net(veil_net::NetError::Timeout { .. } | veil_net::NetError::Stalled { .. }),
                ) => {
                    return Err(format!(
                        "{name}: party {cheater}'s frame {frame} altered: party {i} hung: {e}"
                    ));
                }
                Err(MpcError::Abort { .. } | MpcError::Malformed { .. }) => detected = true,
                Err(_) => stopped |= i != cheater,
                Ok((o, ..)) => wrong |= i != cheater && o.values != self.honest[i].values,
            }
        }
        if wrong && self.subject.malicious() {
            return Err(format!(
                "{name}: party {cheater} altered its frame {frame} and an honest party output a wrong value"
            ));
        }
        Ok(if detected {
            FuzzOutcome::Detected
        } else if wrong {
            FuzzOutcome::WrongOutput
        } else if stopped {
            FuzzOutcome::Stopped
        } else {
            FuzzOutcome::Harmless
        })
    }
}

fn fuzz_config() -> SimConfig {
    SimConfig { seed: FUZZ_SEED, timeout: FUZZ_TIMEOUT }
}

/// The pipeline at one party, with the frames it sent in the seed setup and in all.
fn run_counted<S: Subject>(s: &S, ctx: &mut Ctx, inputs: &Inputs) -> Result<(Outputs, usize, usize)> {
    let mut fam = s.make(ctx)?;
    let out = pipeline(&mut fam, ctx, inputs)?;
    let setup = ctx.stats().get("setup").messages_sent as usize;
    let total = ctx.stats().total().messages_sent as usize;
    Ok((out, setup, total))
}
