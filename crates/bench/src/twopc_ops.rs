//! `veil bench ops --family ot --op cmp|lt|relu|trunc|trunc-exact`: the 2-party toolkit on
//! Ferret, beside the M&M paper's Tables VI and VIII and SPU's CHEETAH.
//!
//! `cmp` is the millionaires' protocol on private inputs (the paper's F_CMP); `lt` is `x < y`
//! on shares of Z_2^ℓ (the MSB of `x − y`), the workload `gt` of the SPU anchor.
//!
//! Both parties run in this process on threads (`net = "none"`), each on its own pool of
//! `--threads` threads. Three phases are measured apart: `setup` (base OTs, KOS and Ferret's
//! first iteration, in both directions), `offline` (the COTs the op will use, made ahead;
//! empty with `--cots on-demand`, where the op makes them as it runs out, as the paper's
//! implementation does) and `online` (the op). The paper's single-thread figures include
//! Ferret's setup, so the record gives the total too. Bytes are split by direction as in the
//! paper: P0 → P1 and P1 → P0.

use std::time::Instant;

use serde::Serialize;
use veil_mpc::{Ctx, MpcError, Result};
use veil_twopc::ring::mask;
use veil_twopc::{Engine, TwoParty, millionaire, nonlinear, trunc};

use crate::ops::PaperFigure;
use crate::ot_ops::{peak_rss_mib, two_parties_on_threads};

/// Toolkit ops `veil bench ops --family ot` knows.
pub const TWOPC_OPS: &[&str] = &["cmp", "lt", "relu", "trunc", "trunc-exact"];

const MIB: f64 = (1u64 << 20) as f64;

/// When the COTs of an op are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cots {
    /// All of them in an offline phase before the op (the stock then holds them all).
    Ahead,
    /// Inside the op, a Ferret iteration whenever the stock runs out (no offline phase; the
    /// engines' messages add rounds to the op).
    OnDemand,
}

impl Cots {
    /// The name in records and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Cots::Ahead => "ahead",
            Cots::OnDemand => "on-demand",
        }
    }
}

/// Fractional bits of the truncation benchmarks.
pub const TRUNC_SHIFT: u32 = 16;

/// One record of a toolkit op.
#[derive(Debug, Clone, Serialize)]
pub struct TwoPcRecord {
    /// Always `ot`.
    pub family: &'static str,
    /// Always `semi-honest`.
    pub security: &'static str,
    /// Operation.
    pub op: String,
    /// Ring width.
    pub ring_bits: u32,
    /// Shift of the truncations (0 otherwise).
    pub frac_bits: u32,
    /// Elements.
    pub n: usize,
    /// Threads per party.
    pub threads: usize,
    /// When the COTs were made: `ahead` (offline phase) or `on-demand` (inside the op).
    pub cots: &'static str,
    /// Parties.
    pub parties: usize,
    /// Bytes P0 → P1 and P1 → P0 in each phase: `[setup, offline, online]`.
    pub bytes_p0_to_p1: [u64; 3],
    /// See [`Self::bytes_p0_to_p1`].
    pub bytes_p1_to_p0: [u64; 3],
    /// Latency rounds of the online phase.
    pub online_rounds: u64,
    /// Wall-clock seconds `[setup, offline, online]` (the slower party).
    pub seconds: [f64; 3],
    /// Seconds with everything included.
    pub seconds_total: f64,
    /// MiB (2^20 bytes) sent each way, everything included. The M&M paper's tables write
    /// "MB" for this unit: its truncation sends 1.192 "MB" for 10^7 bits, and its
    /// comparisons 42.02 for 2^20 · 336 bits.
    pub mib_total: [f64; 2],
    /// Wrong results among the `n` (checked against the plaintext reference).
    pub errors: usize,
    /// Network (`none`: in-memory).
    pub net: &'static str,
    /// The paper's figure for the same workload.
    pub paper: Option<PaperFigure>,
    /// Peak resident memory of the process (both parties), MiB.
    pub peak_rss_mib: Option<f64>,
}

fn paper(op: &str, bits: u32) -> Option<PaperFigure> {
    let (value, source) = match (op, bits) {
        ("cmp", 32) => (7.145, "M&M Table VI: 2^20 comparisons, ℓ = 32, 6.504 + 35.520 MiB, LAN"),
        ("cmp", 64) => (15.226, "M&M Table VI: 2^20 comparisons, ℓ = 64, 13.633 + 71.410 MiB, LAN"),
        ("lt", 64) => (
            22.3,
            "SPU 0.9.5 CHEETAH `gt_2^20` on this machine, 2026-11-27: 22.3 s, 84.8 MiB over both parties, setup excluded",
        ),
        ("relu", 64) => (
            25.5,
            "SPU 0.9.5 CHEETAH `relu_2^20` on this machine, 2026-11-27: 25.5 s, 102.0 MiB over both parties, setup excluded",
        ),
        ("trunc", _) => (2.621, "M&M Table VIII: 10^7 truncations over 2^ℓ, 28.864 + 1.192 MiB, LAN"),
        _ => return None,
    };
    Some(PaperFigure {
        source,
        value,
        unit: "seconds, single thread, Ferret setup included",
        convention: "wall-clock of the whole run on one core per party, LAN between two machines",
    })
}

struct PartyRun {
    sent: [u64; 3],
    spans: [(u64, u64); 3],
    seconds: [f64; 3],
    out: Vec<u64>,
}

/// COTs `(P0 sending, P1 sending)` that `op` on `n` elements uses (made ahead offline).
fn cots_used(op: &str, n: usize, bits: u32) -> (usize, usize) {
    let add = |a: (usize, usize), b: (usize, usize)| (a.0 + b.0, a.1 + b.1);
    match op {
        "cmp" => millionaire::cots_needed(n, bits),
        // MSB of the difference.
        "lt" => millionaire::cots_needed(n, bits - 1),
        // DReLU, then the multiplexer: one Δ-OT each way.
        "relu" => add(millionaire::cots_needed(n, bits - 1), (n, n)),
        // One Δ-OT from P0.
        "trunc" => (n, 0),
        // Two comparisons, two B2A from P0.
        _ => {
            add(add(millionaire::cots_needed(n, bits), millionaire::cots_needed(n, TRUNC_SHIFT)), (2 * n, 0))
        }
    }
}

/// This party's input: for `cmp` its private value; otherwise its share of a secret (P1's
/// share random, P0's the secret minus it). For `trunc` the secrets satisfy `|x| < 2^{ℓ−2}`,
/// the precondition of M&M's truncation.
fn inputs(n: usize, bits: u32, party: usize, op: &str) -> Vec<u64> {
    let stream = |tag: u8| {
        let mut g = veil_crypto::Prg::new(&veil_crypto::Seed([tag; 16]));
        (0..n).map(move |_| g.next_u64())
    };
    let m = mask(bits);
    if op == "cmp" {
        return stream(party as u8 + 1).map(|v| v & m).collect();
    }
    if op == "lt" {
        // Shares of x − y for x, y within ±2^{ℓ−2}.
        let secret = stream(5)
            .zip(stream(6))
            .map(|(a, b)| (((a as i64 >> 2) - (b as i64 >> 2)) >> (64 - bits)) as u64 & m);
        let others = stream(8).map(|v| v & m);
        return if party == 1 {
            others.collect()
        } else {
            secret.zip(others).map(|(s, r)| s.wrapping_sub(r) & m).collect()
        };
    }
    let secrets =
        stream(7).map(|v| if op == "trunc" { ((v as i64) >> (66 - bits)) as u64 & m } else { v & m });
    let others = stream(8).map(|v| v & m);
    if party == 1 {
        others.collect()
    } else {
        secrets.zip(others).map(|(s, r)| s.wrapping_sub(r) & m).collect()
    }
}

fn run_party(ctx: &mut Ctx, op: &str, n: usize, bits: u32, cots: Cots) -> Result<PartyRun> {
    let mut sent = [0u64; 3];
    let mut spans = [(0, 0); 3];
    let mut seconds = [0f64; 3];
    let mut phase = |ctx: &mut Ctx, i: usize, name: &str, start: Instant, t0: u64| {
        sent[i] = ctx.stats().get(name).bytes_sent;
        spans[i] = (t0, ctx.stats().time());
        seconds[i] = start.elapsed().as_secs_f64();
    };
    ctx.set_phase("setup");
    let (t0, start) = (ctx.stats().time(), Instant::now());
    let mut tp = TwoParty::with_other(ctx, Engine::Ferret)?;
    phase(ctx, 0, "setup", start, t0);
    ctx.set_phase("offline");
    let (t0, start) = (ctx.stats().time(), Instant::now());
    let (p0, p1) = cots_used(op, n, bits);
    if cots == Cots::Ahead {
        tp.prepare(ctx, p0, p1)?;
    }
    phase(ctx, 1, "offline", start, t0);
    let x = inputs(n, bits, ctx.party(), op);
    ctx.set_phase("online");
    let (t0, start) = (ctx.stats().time(), Instant::now());
    let out: Vec<u64> = match op {
        "cmp" => millionaire::less_than(&mut tp, ctx, &x, bits)?.into_iter().map(u64::from).collect(),
        "lt" => veil_twopc::compare::msb(&mut tp, ctx, &x, bits)?.into_iter().map(u64::from).collect(),
        "relu" => nonlinear::relu(&mut tp, ctx, &x, bits)?,
        "trunc" => trunc::trunc(&mut tp, ctx, &x, bits, TRUNC_SHIFT)?,
        _ => trunc::trunc_exact(&mut tp, ctx, &x, bits, TRUNC_SHIFT)?,
    };
    phase(ctx, 2, "online", start, t0);
    Ok(PartyRun { sent, spans, seconds, out })
}

/// Wrong outputs against the plaintext reference.
fn errors(op: &str, n: usize, bits: u32, outs: &[Vec<u64>]) -> usize {
    let (x0, x1) = (inputs(n, bits, 0, op), inputs(n, bits, 1, op));
    let m = mask(bits);
    let signed = |v: u64| veil_twopc::ring::signed(v & m, bits);
    (0..n)
        .filter(|&i| {
            let got = outs[0][i].wrapping_add(outs[1][i]) & m;
            let x = x0[i].wrapping_add(x1[i]) & m;
            match op {
                "cmp" => (outs[0][i] ^ outs[1][i] == 1) != (x0[i] < x1[i]),
                "lt" => (outs[0][i] ^ outs[1][i] == 1) != (signed(x) < 0),
                "relu" => signed(got) != signed(x).max(0),
                "trunc" => {
                    let want = signed(x) >> TRUNC_SHIFT;
                    signed(got) != want && signed(got) != want - 1
                }
                _ => signed(got) != signed(x) >> TRUNC_SHIFT,
            }
        })
        .count()
}

/// Runs one toolkit op on `n` elements of Z_2^bits with `threads` threads per party.
pub fn twopc_op(op: &str, n: usize, bits: u32, threads: usize, cots: Cots) -> Result<TwoPcRecord> {
    if !TWOPC_OPS.contains(&op) {
        return Err(MpcError::Invalid(format!("no toolkit op '{op}' (available: {})", TWOPC_OPS.join(", "))));
    }
    let threads = threads.max(1);
    let runs = two_parties_on_threads(0x2b, threads, |ctx| run_party(ctx, op, n, bits, cots))?;
    let seconds: [f64; 3] = std::array::from_fn(|i| runs.iter().map(|r| r.seconds[i]).fold(0.0, f64::max));
    let outs: Vec<Vec<u64>> = runs.iter().map(|r| r.out.clone()).collect();
    Ok(TwoPcRecord {
        family: "ot",
        security: "semi-honest",
        op: op.to_string(),
        ring_bits: bits,
        frac_bits: if op.starts_with("trunc") { TRUNC_SHIFT } else { 0 },
        n,
        threads,
        cots: cots.name(),
        parties: 2,
        bytes_p0_to_p1: runs[0].sent,
        bytes_p1_to_p0: runs[1].sent,
        online_rounds: veil_mpc::cost::rounds_across(&[runs[0].spans[2], runs[1].spans[2]]),
        seconds_total: seconds.iter().sum(),
        seconds,
        mib_total: [
            runs[0].sent.iter().sum::<u64>() as f64 / MIB,
            runs[1].sent.iter().sum::<u64>() as f64 / MIB,
        ],
        errors: errors(op, n, bits, &outs),
        net: "none",
        paper: paper(op, bits),
        peak_rss_mib: peak_rss_mib(),
    })
}
