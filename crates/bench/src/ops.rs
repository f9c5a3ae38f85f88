//! `veil bench ops`: per-operation cost of a protocol family, measured, with the paper's figure
//! beside ours (fields as in the project's benchmark conventions).
//!
//! Every record comes from a real run of the three parties on threads over the in-memory mesh
//! (`net = "none"`): bytes, messages and latency rounds are what `CommStats` counted, seconds
//! are wall-clock. Offline and online are separate phases: the offline phase is everything the
//! servers make before the input is known (FSS keys and their checks, MAC key, `⟨1⟩`, triples,
//! upcast tuples; truncation pairs cost nothing), the online phase runs the gate and its MAC
//! check. A dry run at a few elements plans the offline phase, and the measured run fails if
//! its online phase needed any material that was not made ahead.

use std::time::Instant;

use serde::Serialize;
use veil_mosformer::convert::{downcast, upcast};
use veil_mosformer::input::share_input;
use veil_mosformer::mac::{MacBatch, Macs};
use veil_mosformer::mul::mul_semi_honest;
use veil_mosformer::offline::{Offline, OfflineRing};
use veil_mpc::prep::CorrelationRequest;

/// Triple and tuple requests, in order ([`Offline::produce`]).
type Plan = Vec<CorrelationRequest>;
use veil_mosformer::ops::MacRing;
use veil_mosformer::rss::Rss;
use veil_mosformer::triples::Sacrifice;
use veil_mosformer::{trunc, ucmp, verified};
use veil_mpc::cost::rounds_across;
use veil_mpc::harness::{SimConfig, all_ok, simulate_with};
use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::{Ring, Z2k, Z8, Z16, Z32, Z64};
use veil_tensor::Tensor;

mod gates;

pub use gates::{ATTENTION_ROW, HIDDEN_ROW};

/// Operations `veil bench ops --family mosformer` knows.
pub const MOSFORMER_OPS: &[&str] = &[
    "mul",
    "matmul",
    "trunc",
    "downcast",
    "upcast",
    "compare",
    "lut",
    "drelu",
    "relu",
    "select",
    "max",
    "gelu",
    "exp",
    "inv",
    "rsqrt",
    "softmax",
    "layernorm",
];

/// Counters of one phase, over the parties.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PhaseCost {
    /// Mean payload bytes sent per computing party.
    pub bytes_per_party: f64,
    /// Largest payload bytes sent by one party.
    pub bytes_max_party: u64,
    /// Latency rounds (longest chain of dependent messages).
    pub rounds: u64,
    /// Mean messages sent per party.
    pub messages_per_party: f64,
}

/// The paper's figure for the same workload.
#[derive(Debug, Clone, Serialize)]
pub struct PaperFigure {
    /// Where it comes from.
    pub source: &'static str,
    /// The figure.
    pub value: f64,
    /// Its unit.
    pub unit: &'static str,
    /// How the paper counts.
    pub convention: &'static str,
}

/// Seconds per phase.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Seconds {
    /// Online phase, wall-clock.
    pub online: f64,
    /// Offline phase, wall-clock.
    pub offline: f64,
}

/// One benchmark record.
#[derive(Debug, Clone, Serialize)]
pub struct OpRecord {
    /// Protocol family.
    pub family: &'static str,
    /// `malicious` or `semi-honest`.
    pub security: &'static str,
    /// Operation name.
    pub op: String,
    /// Ring width of the operation's input.
    pub ring_bits: u32,
    /// Fractional bits.
    pub frac_bits: u32,
    /// Elements.
    pub n: usize,
    /// Computing parties.
    pub parties: usize,
    /// Online counters.
    pub online: PhaseCost,
    /// Offline counters.
    pub offline: PhaseCost,
    /// Who produced the preprocessing.
    pub offline_source: &'static str,
    /// Wall-clock seconds.
    pub seconds: Seconds,
    /// Network profile (`none`: in-memory, no shaping).
    pub net: &'static str,
    /// Online bytes per element per party (mean), for comparison with the paper.
    pub online_bytes_per_element: f64,
    /// The paper's figure, where it reports one.
    pub paper: Option<PaperFigure>,
    /// Pieces the run was cut into (offline then online per piece; rounds add up over pieces).
    pub pieces: usize,
    /// Peak resident memory of the process running all three parties, MiB (Linux only).
    pub peak_rss_mib: Option<f64>,
    /// The family's final verification of this run, where it has a separate one (aegis).
    pub verify: Option<PhaseCost>,
    /// Width of the ring of the family's MACs (`mosformer`: 128; absent where the family has
    /// none). Records without it predate the Z_2^128 MACs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mac_bits: Option<u32>,
}

/// [`OpRecord::mac_bits`] and its kin: the width of `family`'s MAC ring, if it has MACs.
pub fn mac_bits(family: &str) -> Option<u32> {
    (family == "mosformer").then_some(veil_mosformer::ops::MacRing::BITS)
}

/// One party's counters of a phase, over one or more pieces run one after the other.
#[derive(Default)]
pub(crate) struct Measured {
    phase: veil_net::PhaseStats,
    /// The phase's span of logical time, one per piece.
    spans: Vec<(u64, u64)>,
    pub(crate) seconds: f64,
}

impl Measured {
    pub(crate) fn absorb(&mut self, piece: Measured) {
        self.phase = self.phase.plus(&piece.phase);
        self.spans.extend(piece.spans);
        self.seconds += piece.seconds;
    }
}

pub(crate) fn phase_cost(parts: &[&Measured]) -> PhaseCost {
    let n = parts.len() as f64;
    let pieces = parts.iter().map(|m| m.spans.len()).min().unwrap_or(0);
    PhaseCost {
        bytes_per_party: parts.iter().map(|m| m.phase.bytes_sent as f64).sum::<f64>() / n,
        bytes_max_party: parts.iter().map(|m| m.phase.bytes_sent).max().unwrap_or(0),
        rounds: (0..pieces)
            .map(|i| rounds_across(&parts.iter().map(|m| m.spans[i]).collect::<Vec<_>>()))
            .sum(),
        messages_per_party: parts.iter().map(|m| m.phase.messages_sent as f64).sum::<f64>() / n,
    }
}

/// Waits until every party got here (one byte to each peer, counted in its own phase), so that
/// a phase's seconds do not include waiting for a slower party to finish the previous one.
fn barrier(ctx: &mut Ctx) -> Result<()> {
    ctx.set_phase("sync");
    for p in ctx.peers() {
        ctx.net().send(p, vec![0])?;
    }
    for p in ctx.peers() {
        ctx.net().recv(p)?;
    }
    Ok(())
}

/// Runs `f` at one party and measures it as one phase (after a barrier).
pub(crate) fn measure<T>(
    ctx: &mut Ctx,
    name: &str,
    f: impl FnOnce(&mut Ctx) -> Result<T>,
) -> Result<(T, Measured)> {
    barrier(ctx)?;
    ctx.set_phase(name);
    let (before, t0, start) = (ctx.stats().current(), ctx.stats().time(), Instant::now());
    let out = f(ctx)?;
    let m = Measured {
        phase: ctx.stats().current().since(&before),
        spans: vec![(t0, ctx.stats().time())],
        seconds: start.elapsed().as_secs_f64(),
    };
    Ok((out, m))
}

fn random_input<R: Ring>(ctx: &mut Ctx, n: usize) -> Result<Rss<R>> {
    veil_mosformer::prss::random(ctx, &[n])
}

/// A small secret (|x| < 2^bound) shared by party 0, for the ops with range conditions.
fn small_input<R: Ring>(ctx: &mut Ctx, n: usize, bound: u32) -> Result<Rss<R>> {
    let mut g = ctx.common_prg("bench/input");
    let v: Vec<R> =
        (0..n).map(|_| R::from_i64((g.next_u64() >> (64 - bound)) as i64 - (1 << (bound - 1)))).collect();
    let t = Tensor::new(vec![n], v)?;
    share_input(ctx, 0, (ctx.party() == 0).then_some(&t), &[n])
}

type Run = (Measured, Measured);

fn security(malicious: bool) -> veil_mosformer::Security {
    if malicious { veil_mosformer::Security::Malicious } else { veil_mosformer::Security::SemiHonest }
}

/// Elements of the dry run that plans the offline phase.
const PLAN_N: usize = 16;

/// Runs an op twice: a dry run at [`PLAN_N`] elements, with material made on demand, gives the
/// plan (elementwise gates request counts proportional to `n`); the measured run at `n` then
/// produces the scaled plan in its offline phase and must need nothing more online.
fn planned(
    ctx: &mut Ctx,
    n: usize,
    malicious: bool,
    op: impl Fn(&mut Ctx, usize, &mut Offline, &Plan) -> Result<Run>,
) -> Result<Run> {
    planned_by(ctx, n, PLAN_N, malicious, op)
}

/// [`planned`] with a dry run at `unit` elements (one row of a row-wise gate, whose requests
/// are proportional to its rows).
fn planned_by(
    ctx: &mut Ctx,
    n: usize,
    unit: usize,
    malicious: bool,
    op: impl Fn(&mut Ctx, usize, &mut Offline, &Plan) -> Result<Run>,
) -> Result<Run> {
    let store = || Offline::for_security(security(malicious));
    let mut dry = store();
    op(ctx, unit, &mut dry, &Vec::new())?;
    let scale = n.div_ceil(unit);
    let plan: Plan = dry
        .plan()
        .iter()
        .map(|r| match r.clone() {
            CorrelationRequest::MulTriples { ring_bits, count } => {
                Ok(CorrelationRequest::MulTriples { ring_bits, count: count * scale })
            }
            CorrelationRequest::UpcastTuples { from_bits, to_bits, count } => {
                Ok(CorrelationRequest::UpcastTuples { from_bits, to_bits, count: count * scale })
            }
            CorrelationRequest::TruncPairs { count } => {
                Ok(CorrelationRequest::TruncPairs { count: count * scale })
            }
            other => Err(MpcError::Invalid(format!("{} in an elementwise op", other.kind()))),
        })
        .collect::<Result<_>>()?;
    let mut offline = store();
    let run = op(ctx, n, &mut offline, &plan)?;
    if offline.made_on_demand() > 0 {
        return Err(MpcError::Invalid(format!(
            "the plan missed {} elements of preprocessing",
            offline.made_on_demand()
        )));
    }
    Ok(run)
}

fn run_op(op: &str, malicious: bool, n: usize, ring_bits: u32, ctx: &mut Ctx) -> Result<Run> {
    match (op, ring_bits) {
        ("mul", 32) => planned(ctx, n, malicious, |c, n, o, p| bench_mul::<Z32>(c, o, p, malicious, n)),
        ("mul", 64) => planned(ctx, n, malicious, |c, n, o, p| bench_mul::<Z64>(c, o, p, malicious, n)),
        ("mul", 16) => planned(ctx, n, malicious, |c, n, o, p| bench_mul::<Z16>(c, o, p, malicious, n)),
        ("trunc", 64) => planned(ctx, n, malicious, |c, n, o, p| bench_trunc::<Z64>(c, o, p, n, 40, 16)),
        ("trunc", 32) => planned(ctx, n, malicious, |c, n, o, p| bench_trunc::<Z32>(c, o, p, n, 20, 12)),
        ("downcast", 64) => {
            let x = random_input::<Z64>(ctx, n)?;
            let (_, off) = measure(ctx, "offline", |_| Ok(()))?;
            let (_, on) = measure(ctx, "online", |_| downcast::<Z64, Z32>(&x, 4))?;
            Ok((off, on))
        }
        ("upcast", 32) => planned(ctx, n, malicious, |c, n, o, p| {
            let x = small_input::<Z32>(c, n, 28)?;
            let (_, off) = measure(c, "offline", |c| o.produce(c, p))?;
            let (_, on) = measure(c, "online", |c| upcast::<Z32, Z64>(c, o, &x, 4))?;
            Ok((off, on))
        }),
        ("compare", 32) => {
            let sec = security(malicious);
            let (keys, off) = measure(ctx, "offline", |c| ucmp::setup_with(c, 0, 31, n, sec))?;
            let (e0, e1) = ucmp::evaluators(0);
            let mut g = ctx.common_prg("bench/ucmp");
            let shares: Vec<Z8> = (0..31 * n).map(|_| Z8::random(&mut g)).collect();
            let ys: Vec<u64> = (0..n).map(|_| g.next_u64() >> 33).collect();
            let (_, on) = measure(ctx, "online", |c| match &keys {
                Some(k) => ucmp::eval(c, k, if c.party() == e0 { e1 } else { e0 }, &shares, &ys).map(|_| ()),
                None => Ok(()),
            })?;
            Ok((off, on))
        }
        ("lut", 32) => bench_lut(ctx, n, malicious),
        ("drelu", 32) => bench_drelu::<Z32>(ctx, n, malicious),
        ("drelu", 16) => bench_drelu::<Z16>(ctx, n, malicious),
        ("drelu", 64) => bench_drelu::<Z64>(ctx, n, malicious),
        ("gelu", 16) => planned(ctx, n, malicious, |c, n, o, p| bench_gelu::<Z16>(c, n, o, p, malicious, 6)),
        ("gelu", 64) => planned(ctx, n, malicious, |c, n, o, p| bench_gelu::<Z64>(c, n, o, p, malicious, 16)),
        ("exp", 32) => planned(ctx, n, malicious, |c, n, o, p| bench_exp::<Z32>(c, n, o, p, malicious, 12)),
        ("exp", 64) => planned(ctx, n, malicious, |c, n, o, p| bench_exp::<Z64>(c, n, o, p, malicious, 16)),
        ("matmul", 64) => gates::bench_matmul::<Z64>(ctx, n, malicious),
        ("matmul", 32) => gates::bench_matmul::<Z32>(ctx, n, malicious),
        ("relu" | "select", 32) => gates::bench_select::<Z32>(ctx, n, malicious, op == "relu"),
        ("relu" | "select", 64) => gates::bench_select::<Z64>(ctx, n, malicious, op == "relu"),
        ("max", 32) => gates::bench_max::<Z32>(ctx, n, malicious),
        ("max", 64) => gates::bench_max::<Z64>(ctx, n, malicious),
        ("softmax", 32) => planned_by(ctx, n, ATTENTION_ROW, malicious, |c, n, o, p| {
            gates::bench_softmax::<Z32, Z16>(c, n, (o, p), malicious, 12, 6)
        }),
        ("softmax", 64) => planned_by(ctx, n, ATTENTION_ROW, malicious, |c, n, o, p| {
            gates::bench_softmax::<Z64, Z64>(c, n, (o, p), malicious, 16, 0)
        }),
        ("layernorm", 32) => planned_by(ctx, n, HIDDEN_ROW, malicious, |c, n, o, p| {
            gates::bench_layernorm::<Z32>(c, n, (o, p), malicious, 12)
        }),
        ("layernorm", 64) => planned_by(ctx, n, HIDDEN_ROW, malicious, |c, n, o, p| {
            gates::bench_layernorm::<Z64>(c, n, (o, p), malicious, 16)
        }),
        ("inv" | "rsqrt", 32 | 64) => planned(ctx, n, malicious, |c, n, o, p| {
            let kind = if op == "inv" {
                veil_mosformer::recip::Kind::Inv
            } else {
                veil_mosformer::recip::Kind::Rsqrt
            };
            if ring_bits == 32 {
                bench_recip::<Z32>(c, o, p, kind, n, malicious, 12)
            } else {
                bench_recip::<Z64>(c, o, p, kind, n, malicious, 16)
            }
        }),
        _ => Err(MpcError::Invalid(format!("mosformer has no benchmark for op '{op}' in Z_2^{ring_bits}"))),
    }
}

fn bench_trunc<R: Z2k>(
    ctx: &mut Ctx,
    offline: &mut Offline,
    plan: &Plan,
    n: usize,
    bound: u32,
    f: u32,
) -> Result<Run> {
    let x = small_input::<R>(ctx, n, bound)?;
    let (_, off) = measure(ctx, "offline", |c| offline.produce(c, plan))?;
    let (_, on) = measure(ctx, "online", |c| trunc::trunc(c, offline, &x, 1 << f))?;
    Ok((off, on))
}

/// Benchmarks a gate whose outputs are MAC'd in the MAC ring (Z_2^128): the offline phase
/// makes `⟨1⟩`, `⟨α⟩`, the gate's keys (`setup`) and the planned triples and tuples; the online
/// phase runs the gate (`run`) and the batch's MAC check, which is part of the online time and
/// bytes.
fn bench_mac_gate<K, T>(
    ctx: &mut Ctx,
    malicious: bool,
    offline: &mut Offline,
    plan: &Plan,
    setup: impl FnOnce(&mut Ctx) -> Result<K>,
    run: impl FnOnce(&mut Ctx, K, &mut Offline, &mut Macs<'_, MacRing>) -> Result<T>,
) -> Result<Run> {
    let ((keys, one, alpha), off) = measure(ctx, "offline", |c| {
        let one = veil_mosformer::keys::random_one::<MacRing>(c)?;
        let alpha = veil_mosformer::keys::mac_key::<MacRing>(c)?;
        let keys = setup(c)?;
        offline.produce(c, plan)?;
        Ok((keys, one, alpha))
    })?;
    let (_, on) = measure(ctx, "online", |c| {
        let mut batch = MacBatch::for_security(security(malicious));
        run(c, keys, offline, &mut Macs { one: &one, alpha: &alpha, batch: &mut batch })?;
        batch.check(c, &alpha, 64, "bench")
    })?;
    Ok((off, on))
}

/// A lookup into a 256-entry table (the size of the paper's GELU table) from Z_2^32, output and
/// MAC in the MAC ring.
fn bench_lut(ctx: &mut Ctx, n: usize, malicious: bool) -> Result<Run> {
    let x = small_input::<Z32>(ctx, n, 8)?;
    let x = x.add_public(ctx.party(), &Tensor::full(&[n], Z32(128)))?;
    let table: Vec<MacRing> = (0..256).map(|i| MacRing::from_u64(i * 3 + 1)).collect();
    bench_mac_gate(
        ctx,
        malicious,
        &mut Offline::new(),
        &Vec::new(),
        |c| veil_mosformer::lut::setup_with::<Z32, MacRing>(c, 8, n, security(malicious)),
        |c, keys, _, macs| veil_mosformer::lut::lookup(c, keys, &x, &table, macs),
    )
}

/// DReLU with output and MAC in the MAC ring.
fn bench_drelu<R: Sacrifice>(ctx: &mut Ctx, n: usize, malicious: bool) -> Result<Run> {
    let x = random_input::<R>(ctx, n)?;
    bench_mac_gate(
        ctx,
        malicious,
        &mut Offline::new(),
        &Vec::new(),
        |c| veil_mosformer::drelu::setup_with::<R, MacRing>(c, n, security(malicious)),
        |c, keys, _, macs| veil_mosformer::drelu::drelu(c, keys, &x, macs),
    )
}

/// GELU (Algorithm 8 with the table replaced by a polynomial; comparisons in `R`, input at `f`
/// fractional bits: Z_2^16 at 6 with modulus conversion, Z_2^64 at 16 without; the result at
/// 16, as the precision plan reads it) on inputs in [-8, 8) given in Z_2^64.
fn bench_gelu<R: Sacrifice>(
    ctx: &mut Ctx,
    n: usize,
    offline: &mut Offline,
    plan: &Plan,
    malicious: bool,
    f: u32,
) -> Result<Run> {
    let x = small_input::<Z64>(ctx, n, 4 + f)?;
    bench_mac_gate(
        ctx,
        malicious,
        offline,
        plan,
        |c| veil_mosformer::gelu::setup_with::<R, MacRing>(c, n, security(malicious)),
        |c, keys, o, macs| veil_mosformer::gelu::gelu(c, keys, o, &x, f, 16, macs),
    )
}

/// Exp (comparisons in `R` at `f` fractional bits: Z_2^32 at 12, or Z_2^64 at 16) on inputs in
/// (-16, 0] given in Z_2^64.
fn bench_exp<R: Sacrifice>(
    ctx: &mut Ctx,
    n: usize,
    offline: &mut Offline,
    plan: &Plan,
    malicious: bool,
    f: u32,
) -> Result<Run> {
    // Values in [-2^(f+3), 2^(f+3)) shifted down by 2^(f+3): (-16, 0] in real terms.
    let x = small_input::<Z64>(ctx, n, f + 4)?;
    let x = x.add_public(ctx.party(), &Tensor::full(&[n], Z64((1u64 << (f + 3)).wrapping_neg())))?;
    bench_mac_gate(
        ctx,
        malicious,
        offline,
        plan,
        |c| veil_mosformer::exp::setup_with::<R, MacRing>(c, n, f, security(malicious)),
        |c, keys, o, macs| veil_mosformer::exp::exp(c, keys, o, &x, f, macs),
    )
}

/// Inv or Rsqrt (comparisons in `R` at `f` fractional bits) on inputs in [1, 4096) given in
/// Z_2^64.
#[allow(clippy::too_many_arguments, reason = "the benchmark's parameters")]
fn bench_recip<R: Sacrifice>(
    ctx: &mut Ctx,
    offline: &mut Offline,
    plan: &Plan,
    kind: veil_mosformer::recip::Kind,
    n: usize,
    malicious: bool,
    f: u32,
) -> Result<Run> {
    let x = small_input::<Z64>(ctx, n, 11 + f)?;
    let x = x.add_public(ctx.party(), &Tensor::full(&[n], Z64(1 << (11 + f))))?;
    bench_mac_gate(
        ctx,
        malicious,
        offline,
        plan,
        |c| veil_mosformer::recip::setup_with::<R, MacRing>(c, kind, n, f, security(malicious)),
        |c, keys, o, macs| veil_mosformer::recip::evaluate(c, keys, o, &x, f, macs),
    )
}

fn bench_mul<R: OfflineRing>(
    ctx: &mut Ctx,
    offline: &mut Offline,
    plan: &Plan,
    malicious: bool,
    n: usize,
) -> Result<Run> {
    let x = random_input::<R>(ctx, n)?;
    let y = random_input::<R>(ctx, n)?;
    let (_, off) = measure(ctx, "offline", |c| if malicious { offline.produce(c, plan) } else { Ok(()) })?;
    let (_, on) = measure(ctx, "online", |c| {
        if malicious { verified::mul(c, offline, &x, &y) } else { mul_semi_honest(c, &x, &y) }
    })?;
    Ok((off, on))
}

/// The default ring of an op, its fractional bits, and the paper's online figure.
fn op_facts(op: &str, malicious: bool, ring_bits: u32) -> (u32, Option<PaperFigure>) {
    let bytes = |value: f64, source, convention| {
        Some(PaperFigure { source, value, unit: "bytes per element per party", convention })
    };
    let l = f64::from(ring_bits) / 8.0;
    // The paper gives per-gate figures for its malicious protocols only.
    let fss = matches!(op, "drelu" | "inv" | "rsqrt" | "lut" | "compare" | "gelu");
    if fss && !malicious {
        return (if ring_bits == 16 { 6 } else { 12 }, None);
    }
    match op {
        "mul" if malicious => (
            16,
            bytes(
                6.0 * l,
                "Mosformer's released code: reshare ℓ + open ρ,σ 4ℓ + zero check ℓ",
                "sent per party; sends counted as rounds",
            ),
        ),
        "mul" => (16, bytes(l, "mosformer §3 Mul: reshare ℓ bits", "sent per party")),
        "trunc" => (
            if ring_bits == 64 { 16 } else { 12 },
            bytes(2.0 * l, "mosformer §3 F_trunc: 2ℓ bits", "sent per party"),
        ),
        "downcast" => (16, bytes(0.0, "mosformer §6 downcast: local", "sent per party")),
        "upcast" => (12, bytes(2.0 * l, "mosformer §6 upcast online: 2ℓ bits", "sent per party; 2 sends")),
        "drelu" => (
            if ring_bits == 16 { 6 } else { 12 },
            bytes(
                if ring_bits == 16 { 60.0 } else { 120.0 },
                "Mosformer's released code: DReLU, MAC check included (30ℓ bits)",
                "sent per party; its 18 rounds count sends",
            ),
        ),
        "inv" => (
            12,
            bytes(
                536.0,
                "mosformer Table 4: Inverse, 5.112 MB per 10^4 (3 DReLUs, MAC included)",
                "sent per party",
            ),
        ),
        "rsqrt" => (12, bytes(592.0, "mosformer Table 4: Rsqrt, 5.646 MB per 10^4", "sent per party")),
        "lut" => (
            12,
            bytes(
                56.0,
                "mosformer Table 5 / released code: 56 B per lookup (14ℓ bits, MAC check included)",
                "sent per party",
            ),
        ),
        "compare" => (
            0,
            bytes(
                31.0 * 6.0 / 8.0,
                "mosformer Algorithm 1 cost n·log2(2n) bits, n = 31 (its released code sends 31 B)",
                "sent per evaluator",
            ),
        ),
        "gelu" => (
            if ring_bits == 16 { 6 } else { 12 },
            bytes(
                356.0,
                "mosformer Table 12: GELU, 3.395 MB per 10^4 in Z_2^32 (ours runs in Z_2^16 by default)",
                "sent per party; its 38 rounds count sends",
            ),
        ),
        // The paper reports Exp only inside Softmax, and the other gates only inside models.
        "exp" | "relu" | "select" | "max" | "softmax" | "layernorm" | "matmul" => {
            (if ring_bits == 64 { 16 } else { 12 }, None)
        }
        _ => (0, None),
    }
}

/// Elements per piece for the gates with FSS material: larger runs are cut into pieces, each
/// made offline and then consumed online, so that a party holds one piece's material at a time.
pub const FSS_PIECE: usize = 10_000;

/// Whether an op uses FSS material (and so runs in pieces of [`FSS_PIECE`]).
fn uses_fss(op: &str) -> bool {
    !matches!(op, "mul" | "matmul" | "trunc" | "downcast" | "upcast")
}

/// Runs one op at `n` elements; `ring_bits` None picks the op's default ring. Row-wise ops
/// (Max, Softmax: rows of [`ATTENTION_ROW`]; LayerNorm and the matrix product: rows of
/// [`HIDDEN_ROW`]) run `n` rounded down to whole rows (at least one), and the record gives the
/// elements run.
pub fn mosformer_op(op: &str, malicious: bool, n: usize, ring_bits: Option<u32>) -> Result<OpRecord> {
    let ring_bits = ring_bits.unwrap_or(match op {
        "trunc" | "downcast" | "matmul" => 64,
        "gelu" => 16,
        _ => 32,
    });
    let row = gates::row_len(op);
    let n = (n / row).max(1) * row;
    let piece = if uses_fss(op) { (FSS_PIECE / row).max(1) * row } else { n.max(1) };
    let sizes: Vec<usize> = (0..n.div_ceil(piece)).map(|i| piece.min(n - i * piece)).collect();
    veil_runtime::memory::reset_peak();
    // A party can wait minutes while another makes a large piece's keys on shared cores.
    let cfg = SimConfig { seed: 7, timeout: std::time::Duration::from_secs(600) };
    let runs = all_ok(simulate_with(3, cfg, |ctx| {
        let (mut off, mut on) = (Measured::default(), Measured::default());
        for &size in &sizes {
            let (o, p) = run_op(op, malicious, size, ring_bits, ctx)?;
            off.absorb(o);
            on.absorb(p);
        }
        Ok((off, on))
    }))?;
    let peak_rss_mib = veil_runtime::memory::peak_rss_bytes().map(|b| b as f64 / f64::from(1u32 << 20));
    let off: Vec<&Measured> = runs.iter().map(|r| &r.0).collect();
    let on: Vec<&Measured> = runs.iter().map(|r| &r.1).collect();
    let online = phase_cost(&on);
    let (frac_bits, paper) = op_facts(op, malicious, ring_bits);
    let online_bytes_per_element = if op == "compare" {
        online.bytes_max_party as f64 / n as f64
    } else {
        online.bytes_per_party / n as f64
    };
    Ok(OpRecord {
        family: "mosformer",
        security: if malicious { "malicious" } else { "semi-honest" },
        op: op.to_string(),
        ring_bits,
        frac_bits,
        n,
        parties: 3,
        offline: phase_cost(&off),
        online,
        offline_source: "parties",
        seconds: Seconds {
            online: on.iter().map(|m| m.seconds).fold(0.0, f64::max),
            offline: off.iter().map(|m| m.seconds).fold(0.0, f64::max),
        },
        net: "none",
        online_bytes_per_element,
        paper,
        pieces: sizes.len(),
        peak_rss_mib,
        verify: None,
        mac_bits: mac_bits("mosformer"),
    })
}
