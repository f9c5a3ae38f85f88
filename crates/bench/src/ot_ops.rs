//! `veil bench ops --family ot`: the OT engines below the 2-party families, measured.
//!
//! Both parties run in this process on threads over the in-memory mesh (`net = "none"`); each
//! party runs its parallel work on its own pool of `--threads` threads, so "one thread" means
//! one core per party. Setup (128 base OTs, KOS for Ferret's first iteration, Ferret's setup
//! iteration) is measured apart from extension, and both are reported together too. COTs are
//! drawn in batches of [`BATCH`] and dropped, so 10^8 COTs fit in memory.

use std::time::Instant;

use serde::Serialize;
use veil_mpc::harness::{SimConfig, all_ok, simulate_with};
use veil_mpc::{Ctx, MpcError, Result};
use veil_ot::{
    Check, CotReceiver, CotSender, ExtensionReceiver, ExtensionSender, FerretParams, FerretReceiver,
    FerretSender,
};

use crate::ops::{PaperFigure, PhaseCost};

/// Operations `veil bench ops --family ot` knows.
pub const OT_OPS: &[&str] = &["cot-iknp", "cot-kos", "cot-ferret"];

/// COTs per request while streaming.
pub const BATCH: usize = 1 << 16;

/// One record of an OT engine.
#[derive(Debug, Clone, Serialize)]
pub struct OtRecord {
    /// Always `ot`.
    pub family: &'static str,
    /// `semi-honest`, or `malicious-receiver` for KOS.
    pub security: &'static str,
    /// Engine.
    pub op: String,
    /// COTs produced after setup.
    pub n: usize,
    /// Threads per party.
    pub threads: usize,
    /// Parties.
    pub parties: usize,
    /// Setup: base OTs (and, for Ferret, KOS and the setup iteration).
    pub setup: PhaseCost,
    /// Extension of the `n` COTs.
    pub extend: PhaseCost,
    /// Wall-clock seconds of each phase (the slower party).
    pub seconds: OtSeconds,
    /// COTs per second of extension.
    pub cots_per_second: f64,
    /// COTs per second with setup included.
    pub cots_per_second_with_setup: f64,
    /// Bits sent by both parties per COT during extension.
    pub bits_per_cot: f64,
    /// Bits sent by both parties per COT, setup included.
    pub bits_per_cot_with_setup: f64,
    /// Network (`none`: in-memory).
    pub net: &'static str,
    /// The published figure for the same engine.
    pub paper: Option<PaperFigure>,
    /// Peak resident memory of the process (both parties), MiB.
    pub peak_rss_mib: Option<f64>,
}

/// Seconds per phase.
#[derive(Debug, Clone, Default, Serialize)]
pub struct OtSeconds {
    /// Setup.
    pub setup: f64,
    /// Extension.
    pub extend: f64,
}

fn paper(op: &str) -> Option<PaperFigure> {
    let (value, source) = match op {
        "cot-iknp" | "cot-kos" => {
            (128.0, "M&M Table II: IKNP Δ-OT costs ℓ + λ bits, λ = 128 (random COT: λ)")
        }
        "cot-ferret" => (
            1.0,
            "M&M Table II: Ferret Δ-OT costs ℓ + o(1) bits; the issue's target: at most 1 bit per COT and 10^7 COT/s per core",
        ),
        _ => return None,
    };
    Some(PaperFigure {
        source,
        value,
        unit: "bits sent per COT (both parties, amortised)",
        convention: "amortised communication per OT, both directions, setup excluded",
    })
}

enum Engine {
    Sender(Box<dyn CotSender>),
    Receiver(Box<dyn CotReceiver>),
}

fn setup(ctx: &mut Ctx, op: &str) -> Result<Engine> {
    let me = ctx.party();
    let peer = 1 - me;
    Ok(match (op, me) {
        ("cot-iknp", 0) => Engine::Sender(Box::new(ExtensionSender::setup(ctx, peer, Check::None)?)),
        ("cot-iknp", _) => Engine::Receiver(Box::new(ExtensionReceiver::setup(ctx, peer, Check::None)?)),
        ("cot-kos", 0) => Engine::Sender(Box::new(ExtensionSender::setup(ctx, peer, Check::Kos)?)),
        ("cot-kos", _) => Engine::Receiver(Box::new(ExtensionReceiver::setup(ctx, peer, Check::Kos)?)),
        ("cot-ferret", 0) => Engine::Sender(Box::new(FerretSender::setup(ctx, peer, FerretParams::SECURE)?)),
        ("cot-ferret", _) => {
            Engine::Receiver(Box::new(FerretReceiver::setup(ctx, peer, FerretParams::SECURE)?))
        }
        _ => return Err(MpcError::Invalid(format!("no OT op '{op}' (available: {})", OT_OPS.join(", ")))),
    })
}

fn extend(ctx: &mut Ctx, engine: &mut Engine, n: usize) -> Result<()> {
    let mut left = n;
    while left > 0 {
        let take = left.min(BATCH);
        let got = match engine {
            Engine::Sender(s) => s.send_random(ctx, take)?.len(),
            Engine::Receiver(r) => r.receive_random(ctx, take)?.len(),
        };
        left -= got;
    }
    Ok(())
}

struct PartyRun {
    setup: veil_net::PhaseStats,
    extend: veil_net::PhaseStats,
    spans: [(u64, u64); 2],
    seconds: [f64; 2],
}

fn run_party(ctx: &mut Ctx, op: &str, n: usize) -> Result<PartyRun> {
    let (t0, start) = (ctx.stats().time(), Instant::now());
    ctx.set_phase("ot-setup");
    let mut engine = setup(ctx, op)?;
    let setup_seconds = start.elapsed().as_secs_f64();
    let t1 = ctx.stats().time();
    ctx.set_phase("ot-extend");
    let start = Instant::now();
    extend(ctx, &mut engine, n)?;
    Ok(PartyRun {
        setup: ctx.stats().get("ot-setup"),
        extend: ctx.stats().get("ot-extend"),
        spans: [(t0, t1), (t1, ctx.stats().time())],
        seconds: [setup_seconds, start.elapsed().as_secs_f64()],
    })
}

fn cost(runs: &[PartyRun], phase: usize) -> PhaseCost {
    let stats: Vec<&veil_net::PhaseStats> =
        runs.iter().map(|r| if phase == 0 { &r.setup } else { &r.extend }).collect();
    PhaseCost {
        bytes_per_party: stats.iter().map(|s| s.bytes_sent as f64).sum::<f64>() / stats.len() as f64,
        bytes_max_party: stats.iter().map(|s| s.bytes_sent).max().unwrap_or(0),
        rounds: veil_mpc::cost::rounds_across(&runs.iter().map(|r| r.spans[phase]).collect::<Vec<_>>()),
        messages_per_party: stats.iter().map(|s| s.messages_sent as f64).sum::<f64>() / stats.len() as f64,
    }
}

/// Runs `job` at both parties of a 2-party session on the in-memory mesh, each party on its
/// own pool of `threads` threads (a long receive timeout: benchmarks run for minutes).
pub(crate) fn two_parties_on_threads<T: Send>(
    seed: u64,
    threads: usize,
    job: impl Fn(&mut Ctx) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let mut cfg = SimConfig::new(seed);
    cfg.timeout = std::time::Duration::from_secs(600);
    all_ok(simulate_with(2, cfg, |ctx| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .build()
            .map_err(|e| MpcError::Invalid(format!("thread pool: {e}")))?;
        pool.install(|| job(ctx))
    }))
}

/// Peak resident memory of this process, MiB (Linux only).
pub(crate) fn peak_rss_mib() -> Option<f64> {
    veil_runtime::memory::peak_rss_bytes().map(|b| b as f64 / f64::from(1u32 << 20))
}

/// Runs one engine for `n` COTs with `threads` threads per party.
pub fn ot_op(op: &str, n: usize, threads: usize) -> Result<OtRecord> {
    if !OT_OPS.contains(&op) {
        return Err(MpcError::Invalid(format!("no OT op '{op}' (available: {})", OT_OPS.join(", "))));
    }
    let threads = threads.max(1);
    let runs = two_parties_on_threads(0x07, threads, |ctx| run_party(ctx, op, n))?;
    let seconds = OtSeconds {
        setup: runs.iter().map(|r| r.seconds[0]).fold(0.0, f64::max),
        extend: runs.iter().map(|r| r.seconds[1]).fold(0.0, f64::max),
    };
    let (setup, extend) = (cost(&runs, 0), cost(&runs, 1));
    let sent = |c: &PhaseCost| c.bytes_per_party * runs.len() as f64 * 8.0;
    let n_f = n.max(1) as f64;
    Ok(OtRecord {
        family: "ot",
        security: if op == "cot-kos" { "malicious-receiver" } else { "semi-honest" },
        op: op.to_string(),
        n,
        threads,
        parties: 2,
        cots_per_second: n_f / seconds.extend.max(1e-9),
        cots_per_second_with_setup: n_f / (seconds.extend + seconds.setup).max(1e-9),
        bits_per_cot: sent(&extend) / n_f,
        bits_per_cot_with_setup: (sent(&extend) + sent(&setup)) / n_f,
        setup,
        extend,
        seconds,
        net: "none",
        paper: paper(op),
        peak_rss_mib: peak_rss_mib(),
    })
}
