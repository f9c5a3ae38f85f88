//! `veil bench ops --family mm --op convert|trunc-p|mul-nonuniform|exp|gelu`: the `mm`
//! protocols so far, beside the M&M paper's Tables V, VIII, IX and X.
//!
//! Both parties run in this process on threads (`net = "none"`), one thread each by default.
//! `setup` is Ferret's first iteration both ways and, for the ops with products, BFV key
//! generation and exchange; `online` is the op, its COTs made on demand as the paper's
//! implementation does. The paper's figures include Ferret's setup, so the record gives the
//! total too. Bytes are split by direction as in the paper.

use crate::dollars::{DollarCost, dollar_cost};
use std::time::Instant;

use serde::Serialize;
use veil_he::BfvPreset;
use veil_he::ole::Ole;
use veil_mm::oppe::{Piecewise, oppe};
use veil_mm::{convert, exp, mul, trunc};
use veil_mpc::{Ctx, MpcError, Result};
use veil_ot::flavours::Modulus;
use veil_twopc::{Engine, TwoParty};

use crate::ops::PaperFigure;
use crate::ot_ops::{peak_rss_mib, two_parties_on_threads};

/// Ops `veil bench ops --family mm` knows.
pub const MM_OPS: &[&str] = &["convert", "trunc-p", "mul-nonuniform", "exp", "gelu"];

const MIB: f64 = (1u64 << 20) as f64;

/// One record of an `mm` op.
#[derive(Debug, Clone, Serialize)]
pub struct MmRecord {
    /// Always `mm`.
    pub family: &'static str,
    /// Always `semi-honest`.
    pub security: &'static str,
    /// Operation.
    pub op: String,
    /// What the op converts or computes, in words.
    pub shape: String,
    /// Elements.
    pub n: usize,
    /// Threads per party.
    pub threads: usize,
    /// Bytes P0 → P1 and P1 → P0 per phase `[setup, online]`.
    pub bytes_p0_to_p1: [u64; 2],
    /// See [`Self::bytes_p0_to_p1`].
    pub bytes_p1_to_p0: [u64; 2],
    /// MiB each way, everything included (the paper's "MB").
    pub mib_total: [f64; 2],
    /// Seconds `[setup, online]` (the slower party) and everything included.
    pub seconds: [f64; 2],
    /// See [`Self::seconds`].
    pub seconds_total: f64,
    /// Results outside the protocol's stated error against the plaintext reference.
    pub errors: usize,
    /// Network (`none`: in-memory).
    pub net: &'static str,
    /// The paper's figure.
    pub paper: Option<PaperFigure>,
    /// Peak resident memory of the process, MiB.
    pub peak_rss_mib: Option<f64>,
    /// The M&M paper's dollar cost ([`crate::dollars`]) of everything included, `threads`
    /// cores per party.
    pub dollar_cost: DollarCost,
}

fn paper(op: &str) -> Option<PaperFigure> {
    let (value, source) = match op {
        "convert" => (1.499, "M&M Table V, k − ℓ = 32: 10^7 conversions, 1.192 + 38.681 MB, LAN"),
        "trunc-p" => {
            (2.885, "M&M Table VIII \"Ours (p)\": 10^7 truncations, 76.548 + 1.192 MB, LAN (ℓ, f unstated)")
        }
        "mul-nonuniform" => {
            (2.186, "M&M Table IX: 2^16 products of 18 by 20 bits into 38, f = 12, 2.462 + 2.345 MB, LAN")
        }
        "exp" => (3.991, "M&M Table X: 2^20 Exp, ℓ = 64, f = 18, 32.274 + 31.805 MB, LAN"),
        "gelu" => (20.811, "M&M Table X: 2^20 GeLU, ℓ = 32, f = 12, 173.677 + 104.657 MB, LAN"),
        _ => return None,
    };
    Some(PaperFigure {
        source,
        value,
        unit: "seconds, single thread, Ferret setup included",
        convention: "wall-clock of the whole run on one core per party, LAN between two machines",
    })
}

/// The paper's default size of each op.
pub fn default_n(op: &str) -> usize {
    match op {
        "convert" | "trunc-p" => 10_000_000,
        "mul-nonuniform" => 1 << 16,
        _ => 1 << 20,
    }
}

fn shape(op: &str) -> &'static str {
    match op {
        "convert" => "Z_2^32 → Z_2^64",
        "trunc-p" => "Z_p → Z_p by 2^16, p a 60-bit prime",
        "mul-nonuniform" => "Z_2^18 × Z_2^20 → Z_2^38, f = 12, BFV n8192-p60",
        "exp" => "e^x on Z_2^64, f = 18, x ∈ (−13.8, 0) (T = 20 after log2 e), BFV n8192-p60",
        _ => "GeLU on Z_2^32, f = 12, BFV n8192-p60",
    }
}

/// The prime of the `trunc-p` op: 2^60 − 93.
const P60: u64 = (1 << 60) - 93;

fn stream(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

/// The secrets of an op (signed, in its input ring or field) and P1's shares.
fn secrets(op: &str, n: usize) -> (Vec<i64>, Vec<i64>) {
    let mut next = stream(0x33);
    let mut draw = |bits: u32| -> i64 { (next() % (1 << bits)) as i64 - (1i64 << (bits - 1)) };
    match op {
        "convert" => ((0..n).map(|_| draw(30)).collect(), Vec::new()),
        "trunc-p" => ((0..n).map(|_| draw(57)).collect(), Vec::new()),
        "mul-nonuniform" => ((0..n).map(|_| draw(16)).collect(), (0..n).map(|_| draw(18)).collect()),
        // e^x on (−13.8, 0): T = 20 after log2(e) is folded in.
        "exp" => ((0..n).map(|_| -((next() % (13 << 18)) as i64) - 1).collect(), Vec::new()),
        _ => ((0..n).map(|_| draw(12 + 4)).collect(), Vec::new()),
    }
}

fn split(v: &[i64], m: u128, party: usize, seed: u64) -> Vec<u64> {
    let mut next = stream(seed);
    v.iter()
        .map(|&x| {
            let r = u128::from(next()) % m;
            if party == 1 {
                r as u64
            } else {
                ((i128::from(x).rem_euclid(m as i128) as u128 + m - r) % m) as u64
            }
        })
        .collect()
}

struct PartyRun {
    sent: [u64; 2],
    seconds: [f64; 2],
    out: Vec<u128>,
}

fn run_party(ctx: &mut Ctx, op: &str, n: usize) -> Result<PartyRun> {
    let me = ctx.party();
    let (mut sent, mut seconds) = ([0u64; 2], [0f64; 2]);
    ctx.set_phase("setup");
    let start = Instant::now();
    let mut tp = TwoParty::with_other(ctx, Engine::Ferret)?;
    let ole = if op == "convert" || op == "trunc-p" {
        None
    } else {
        Some(Ole::setup(ctx, 1 - me, BfvPreset::N8192P60)?)
    };
    sent[0] = ctx.stats().get("setup").bytes_sent;
    seconds[0] = start.elapsed().as_secs_f64();
    let (a, b) = secrets(op, n);
    ctx.set_phase("online");
    let start = Instant::now();
    let ole_ref = || ole.as_ref().ok_or_else(|| MpcError::Invalid("no OLE".into()));
    let out = match op {
        "convert" => convert::extend(&mut tp, ctx, &split(&a, 1 << 32, me, 1), 32, 64)?,
        "trunc-p" => trunc::truncate(
            &mut tp,
            ctx,
            &split(&a, u128::from(P60), me, 2),
            u128::from(P60),
            16,
            Modulus::Integer(P60),
        )?,
        "mul-nonuniform" => {
            let (x, y) = (split(&a, 1 << 18, me, 3), split(&b, 1 << 20, me, 4));
            mul::mul_mixed(&mut tp, ole_ref()?, ctx, (&x, 18), (&y, 20), 12, 38)?
        }
        "exp" => exp::exp(&mut tp, ole_ref()?, ctx, &split(&a, 1 << 64, me, 5), 64, 18, 20)?,
        _ => oppe(&mut tp, ole_ref()?, ctx, &Piecewise::gelu(), &split(&a, 1 << 32, me, 6), 32, 12)?,
    };
    sent[1] = ctx.stats().get("online").bytes_sent;
    seconds[1] = start.elapsed().as_secs_f64();
    Ok(PartyRun { sent, seconds, out })
}

fn signed(v: u128, bits: u32) -> i128 {
    let v = if bits >= 128 { v } else { v & ((1u128 << bits) - 1) };
    if bits < 128 && v >> (bits - 1) == 1 { v as i128 - (1i128 << bits) } else { v as i128 }
}

/// Results outside each op's stated error.
fn errors(op: &str, n: usize, outs: &[Vec<u128>]) -> usize {
    let (a, b) = secrets(op, n);
    (0..n)
        .filter(|&i| {
            let sum = outs[0][i].wrapping_add(outs[1][i]);
            match op {
                "convert" => signed(sum, 64) != i128::from(a[i]),
                "trunc-p" => {
                    let z = i128::from(((sum % u128::from(P60)) as u64) as i64);
                    let z = if z >= i128::from(P60 / 2) { z - i128::from(P60) } else { z };
                    (i128::from(a[i]).div_euclid(1 << 16) - z).abs() > 1
                }
                "mul-nonuniform" => {
                    ((i128::from(a[i]) * i128::from(b[i])).div_euclid(1 << 12) - signed(sum, 38)).abs() > 1
                }
                "exp" => {
                    let got = signed(sum, 64) as f64 / f64::from(1u32 << 18);
                    let want = (a[i] as f64 / f64::from(1u32 << 18)).exp();
                    (got - want).abs() > (2.0 + 22.0 * want) / f64::from(1u32 << 18)
                }
                _ => {
                    let x = a[i] as f64 / 4096.0;
                    let got = signed(sum, 32) as f64 / 4096.0;
                    (got - Piecewise::gelu().eval(x)).abs() > 0.02
                }
            }
        })
        .count()
}

/// Runs one `mm` op on `n` elements (default: the paper's size) with `threads` threads per
/// party.
pub fn mm_op(op: &str, n: Option<usize>, threads: usize) -> Result<MmRecord> {
    if !MM_OPS.contains(&op) {
        return Err(MpcError::Invalid(format!("no mm op '{op}' (available: {})", MM_OPS.join(", "))));
    }
    let n = n.unwrap_or_else(|| default_n(op));
    let threads = threads.max(1);
    let runs = two_parties_on_threads(0x3d, threads, |ctx| run_party(ctx, op, n))?;
    let seconds: [f64; 2] = std::array::from_fn(|i| runs.iter().map(|r| r.seconds[i]).fold(0.0, f64::max));
    let outs: Vec<Vec<u128>> = runs.iter().map(|r| r.out.clone()).collect();
    Ok(MmRecord {
        family: "mm",
        security: "semi-honest",
        op: op.to_string(),
        shape: shape(op).to_string(),
        n,
        threads,
        bytes_p0_to_p1: runs[0].sent,
        bytes_p1_to_p0: runs[1].sent,
        mib_total: [
            runs[0].sent.iter().sum::<u64>() as f64 / MIB,
            runs[1].sent.iter().sum::<u64>() as f64 / MIB,
        ],
        seconds,
        seconds_total: seconds.iter().sum(),
        errors: errors(op, n, &outs),
        net: "none",
        paper: paper(op),
        peak_rss_mib: peak_rss_mib(),
        dollar_cost: dollar_cost(
            seconds.iter().sum(),
            threads,
            runs.iter().flat_map(|r| r.sent).sum::<u64>() as f64,
        ),
    })
}
