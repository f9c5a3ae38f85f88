//! `veil bench gbdt`: GBDT training under `mm` (Table XII's setting: vertically partitioned
//! data, party 0 with the labels) on the breast-cancer data or synthetic rows, then private
//! prediction of held-out rows (one in five), the F1 of the private trees beside the same
//! training in the clear (Table XIV), bytes each way and seconds (Table XII).
//!
//! Both parties run in this process on threads linked in memory, `threads` rayon threads each;
//! setup (Ferret's first iteration both ways, BFV keys) is timed apart.

use crate::dollars::{DollarCost, dollar_cost};
use std::time::Instant;

use serde::Serialize;
use veil_he::ole::Ole;
use veil_mm::gbdt::data::{Cuts, Dataset, PartyData, f1};
use veil_mm::gbdt::{FRAC, Params, clear, predict, train};
use veil_mpc::{Ctx, MpcError, Result};
use veil_twopc::{Engine, TwoParty};

use crate::ops::PaperFigure;
use crate::ot_ops::{peak_rss_mib, two_parties_on_threads};

const MIB: f64 = (1u64 << 20) as f64;

/// The record.
#[derive(Debug, Clone, Serialize)]
pub struct GbdtRecord {
    /// Always `mm`.
    pub family: &'static str,
    /// `breast-cancer` or `synthetic`.
    pub data: String,
    /// Training rows.
    pub train_rows: usize,
    /// Held-out rows.
    pub test_rows: usize,
    /// Features (party 0's, party 1's).
    pub features: [usize; 2],
    /// Trees, depth, bins, learning rate, λ.
    pub params: String,
    /// Folds run (each a fifth of the rows held out in turn).
    pub folds: usize,
    /// `[private, clear]` F1 of each fold.
    pub f1_per_fold: Vec<[f64; 2]>,
    /// Mean F1 of the private trees on the held-out rows.
    pub f1_private: f64,
    /// Mean F1 of the same training in the clear.
    pub f1_clear: f64,
    /// Trees of the first fold whose splits equal the clear training's.
    pub trees_as_clear: usize,
    /// MiB sent P0 → P1 and P1 → P0 while training (the first fold).
    pub train_mib: [f64; 2],
    /// Rounds of the training (the longer chain of the two parties).
    pub train_rounds: u64,
    /// Seconds: setup, training, prediction.
    pub seconds: [f64; 3],
    /// Threads per party.
    pub threads: usize,
    /// Peak resident memory of the process (both parties), MiB.
    pub peak_rss_mib: Option<f64>,
    /// The paper's figures.
    pub paper: Vec<PaperFigure>,
    /// The M&M paper's dollar cost ([`crate::dollars`]) of one training (the first fold's
    /// seconds and bytes), `threads` cores per party.
    pub dollar_cost: DollarCost,
}

fn paper(data: &str, rows: usize) -> Vec<PaperFigure> {
    match (data, rows) {
        ("synthetic", 100_000) => vec![
            PaperFigure {
                source: "M&M Table XII: 10^5 samples, one tree of depth 5, 8 cores, LAN",
                value: 11.0,
                unit: "s",
                convention: "training, both parties; 174 MB (MiB) sent in all",
            },
            PaperFigure {
                source: "M&M Table XII: 10^5 samples, A2I cost",
                value: 1.79,
                unit: "cents (A2I)",
                convention: "8 cores per party",
            },
        ],
        ("synthetic", 1_000_000) => vec![
            PaperFigure {
                source: "M&M Table XII: 10^6 samples, one tree of depth 5, 8 cores, LAN",
                value: 84.4,
                unit: "s",
                convention: "training, both parties; 1248 MB (MiB) sent in all",
            },
            PaperFigure {
                source: "M&M Table XII: 10^6 samples, A2I cost",
                value: 12.89,
                unit: "cents (A2I)",
                convention: "8 cores per party",
            },
        ],
        ("breast-cancer", _) => vec![PaperFigure {
            source: "M&M Table XIV: GBDT (T = 10, D = 5), F1 equal to plaintext's (0.957 on LIBSVM phishing, 5-fold)",
            value: 0.0,
            unit: "F1 points lost against plaintext",
            convention: "here: held-out F1 of the private trees against the same training in the clear",
        }],
        _ => Vec::new(),
    }
}

struct PartyRun {
    trees: Vec<veil_mm::gbdt::Tree>,
    scores: Vec<u64>,
    seconds: [f64; 3],
    sent: u64,
    rounds: u64,
}

fn party(ctx: &mut Ctx, data: &(PartyData, PartyData), params: &Params) -> Result<PartyRun> {
    let began = Instant::now();
    let mut tp = TwoParty::with_other(ctx, Engine::Ferret)?;
    let ole = Ole::setup(ctx, 1 - ctx.party(), veil_mm::family::PRESET)?;
    let setup = began.elapsed().as_secs_f64();
    let before = ctx.stats().current();
    let t = Instant::now();
    let trees = train(&mut tp, &ole, ctx, &data.0, params)?;
    let spent = ctx.stats().current().since(&before);
    let training = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let scores = predict(&mut tp, &ole, ctx, &trees, &data.1)?;
    Ok(PartyRun {
        trees,
        scores,
        seconds: [setup, training, t.elapsed().as_secs_f64()],
        sent: spent.bytes_sent,
        rounds: spent.rounds,
    })
}

/// One fold's outcome.
struct Fold {
    f1: (f64, f64),
    trees_as_clear: usize,
    train_rows: usize,
    test_rows: usize,
    runs: Vec<PartyRun>,
}

/// Trains on every row but those `≡ fold (mod 5)`, predicts those.
fn run_fold(all: &Dataset, fold: usize, params: &Params, threads: usize) -> Result<Fold> {
    let (train_set, test_set) = all.split(5, fold);
    let f = all.features();
    let counts = [f / 2, f - f / 2];
    let ranges = [0..counts[0], counts[0]..f];
    let mut parts = Vec::new();
    for (p, range) in ranges.iter().enumerate() {
        let cols = train_set.columns(range.clone());
        let cuts: Vec<Cuts> = cols.iter().map(|c| Cuts::quantiles(c, params.bins)).collect();
        let labels = |d: &Dataset| (p == 0).then(|| d.y.clone());
        let test_cols = test_set.columns(range.clone());
        parts.push((
            PartyData::binned(&cols, &cuts, labels(&train_set), counts, params.bins)?,
            PartyData::binned(&test_cols, &cuts, labels(&test_set), counts, params.bins)?,
        ));
    }
    let runs = two_parties_on_threads(0x6b, threads, |ctx| party(ctx, &parts[ctx.party()], params))?;
    let global = |which: fn(&(PartyData, PartyData)) -> &PartyData| -> Vec<Vec<u16>> {
        parts.iter().flat_map(|p| which(p).binned.iter().cloned()).collect()
    };
    let reference = clear::train(&global(|p| &p.0), &train_set.y, params);
    let clear_scores = clear::scores(&reference, &global(|p| &p.1), params.depth);
    let secure: Vec<f64> = runs[0]
        .scores
        .iter()
        .zip(&runs[1].scores)
        .map(|(&a, &b)| a.wrapping_add(b) as i64 as f64 / f64::from(1u32 << FRAC))
        .collect();
    let label = |s: &[f64]| -> Vec<u8> { s.iter().map(|&v| u8::from(v > 0.0)).collect() };
    let trees_as_clear = runs[0]
        .trees
        .iter()
        .zip(&reference)
        .filter(|(a, b)| a.splits.iter().map(|s| (s.feature, s.bin)).collect::<Vec<_>>() == b.splits)
        .count();
    Ok(Fold {
        f1: (f1(&label(&secure), &test_set.y), f1(&label(&clear_scores), &test_set.y)),
        trees_as_clear,
        train_rows: train_set.y.len(),
        test_rows: test_set.y.len(),
        runs,
    })
}

/// Trains on `data` (`breast-cancer` from the CSV at `csv`, or `synthetic` rows), each of
/// `folds` folds of five held out in turn (1: the third fold only), and reports the mean F1
/// and the first fold's costs.
pub fn bench_gbdt(
    data: &str,
    csv: &std::path::Path,
    rows: usize,
    params: Params,
    (threads, folds): (usize, usize),
) -> Result<GbdtRecord> {
    let all = match data {
        "breast-cancer" => {
            let text = std::fs::read_to_string(csv)
                .map_err(|e| MpcError::Invalid(format!("cannot read {}: {e}", csv.display())))?;
            Dataset::from_csv(&text)?
        }
        "synthetic" => Dataset::synthetic(rows + rows / 4, 16, 7),
        other => return Err(MpcError::Invalid(format!("no dataset '{other}' (breast-cancer, synthetic)"))),
    };
    if !(1..=5).contains(&folds) {
        return Err(MpcError::Invalid(format!("{folds} folds (1 to 5)")));
    }
    let order: Vec<usize> = if folds == 1 { vec![2] } else { (0..folds).collect() };
    let results = order.iter().map(|&k| run_fold(&all, k, &params, threads)).collect::<Result<Vec<_>>>()?;
    let first = &results[0];
    let runs = &first.runs;
    let mean = |g: fn(&Fold) -> f64| results.iter().map(g).sum::<f64>() / results.len() as f64;
    let max = |i: usize| runs.iter().map(|r| r.seconds[i]).fold(0.0, f64::max);
    Ok(GbdtRecord {
        family: "mm",
        data: data.into(),
        train_rows: first.train_rows,
        test_rows: first.test_rows,
        features: [all.features() / 2, all.features() - all.features() / 2],
        params: format!(
            "T = {}, D = {}, {} bins, η = {}, λ = {}",
            params.trees,
            params.depth,
            params.bins,
            params.learning_rate,
            params.effective_lambda(first.train_rows)
        ),
        folds: results.len(),
        f1_per_fold: results.iter().map(|r| [r.f1.0, r.f1.1]).collect(),
        f1_private: mean(|r| r.f1.0),
        f1_clear: mean(|r| r.f1.1),
        trees_as_clear: first.trees_as_clear,
        train_mib: [runs[0].sent as f64 / MIB, runs[1].sent as f64 / MIB],
        train_rounds: runs.iter().map(|r| r.rounds).max().unwrap_or(0),
        seconds: [max(0), max(1), max(2)],
        threads,
        peak_rss_mib: peak_rss_mib(),
        paper: paper(data, rows),
        dollar_cost: dollar_cost(max(1), threads, runs.iter().map(|r| r.sent as f64).sum()),
    })
}
