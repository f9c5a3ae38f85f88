//! Data for GBDT training: each party's features cut into quantile bins by the party itself
//! (its cut points never leave it), the labels at the label holder, a deterministic
//! train/test split, and the F1 score.

use veil_mpc::{MpcError, Result};

/// Cut points of one feature: `bin(v) = #{c : v > c}`, so bin `b` holds `cuts[b−1] < v ≤ cuts[b]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Cuts(pub Vec<f64>);

impl Cuts {
    /// At most `bins − 1` cut points at the quantiles of `values` (repeated values merge).
    pub fn quantiles(values: &[f64], bins: usize) -> Self {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        let mut cuts: Vec<f64> = (1..bins).filter_map(|q| v.get(q * v.len() / bins).copied()).collect();
        cuts.dedup();
        if cuts.last().is_some_and(|&c| Some(&c) == v.last()) {
            cuts.pop();
        }
        Cuts(cuts)
    }

    /// The bin of `v`.
    pub fn bin(&self, v: f64) -> u16 {
        self.0.iter().filter(|&&c| v > c).count() as u16
    }
}

/// What one party holds of a dataset, binned: the public sizes and its own part.
#[derive(Clone, Debug)]
pub struct PartyData {
    /// Samples (public).
    pub n: usize,
    /// Features each party holds (public), party 0's first.
    pub feature_counts: [usize; 2],
    /// Bins per feature (public).
    pub bins: usize,
    /// This party's features' bins, `[feature][sample]`.
    pub binned: Vec<Vec<u16>>,
    /// The labels (0 or 1), at the label holder only.
    pub labels: Option<Vec<u8>>,
}

impl PartyData {
    /// This party's data from its raw feature columns (`[feature][sample]`), binned with
    /// `cuts` (its own, one per feature).
    pub fn binned(
        columns: &[Vec<f64>],
        cuts: &[Cuts],
        labels: Option<Vec<u8>>,
        feature_counts: [usize; 2],
        bins: usize,
    ) -> Result<Self> {
        let n = columns.first().map_or(0, Vec::len);
        if columns.len() != cuts.len() || columns.iter().any(|c| c.len() != n) || n == 0 {
            return Err(MpcError::Invalid("feature columns of different lengths, or no samples".into()));
        }
        if labels.as_ref().is_some_and(|l| l.len() != n || l.iter().any(|&y| y > 1)) {
            return Err(MpcError::Invalid("labels must be 0 or 1, one per sample".into()));
        }
        if !(2..=256).contains(&bins) || cuts.iter().any(|c| c.0.len() >= bins) {
            return Err(MpcError::Invalid(format!("{bins} bins per feature (2 to 256)")));
        }
        let binned =
            columns.iter().zip(cuts).map(|(col, c)| col.iter().map(|&v| c.bin(v)).collect()).collect();
        Ok(PartyData { n, feature_counts, bins, binned, labels })
    }
}

/// A dataset in the clear: features `[sample][feature]`, labels.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// Rows.
    pub x: Vec<Vec<f64>>,
    /// 0 or 1 per row.
    pub y: Vec<u8>,
}

impl Dataset {
    /// Reads a CSV of numbers whose last column is the label (0 or 1), with one header line.
    pub fn from_csv(text: &str) -> Result<Self> {
        let mut x = Vec::new();
        let mut y = Vec::new();
        let width = text.lines().next().map(|h| h.split(',').count());
        let mut width = width.filter(|&w| w >= 2);
        for (i, line) in text.lines().enumerate().skip(1).filter(|(_, l)| !l.trim().is_empty()) {
            let values: Vec<f64> = line
                .split(',')
                .map(|v| v.trim().parse::<f64>())
                .collect::<std::result::Result<_, _>>()
                .map_err(|e| MpcError::Invalid(format!("line {}: {e}", i + 1)))?;
            if values.len() < 2 || *width.get_or_insert(values.len()) != values.len() {
                return Err(MpcError::Invalid(format!("line {}: {} columns", i + 1, values.len())));
            }
            let label = values[values.len() - 1];
            if label != 0.0 && label != 1.0 {
                return Err(MpcError::Invalid(format!("line {}: label {label} is not 0 or 1", i + 1)));
            }
            y.push(label as u8);
            x.push(values[..values.len() - 1].to_vec());
        }
        if x.is_empty() {
            return Err(MpcError::Invalid("no rows".into()));
        }
        Ok(Dataset { x, y })
    }

    /// Features per row.
    pub fn features(&self) -> usize {
        self.x.first().map_or(0, Vec::len)
    }

    /// The columns `range`, `[feature][sample]`.
    pub fn columns(&self, range: std::ops::Range<usize>) -> Vec<Vec<f64>> {
        range.map(|j| self.x.iter().map(|r| r[j]).collect()).collect()
    }

    /// Every `k`-th row (from `offset`) and the others: a deterministic split.
    pub fn split(&self, k: usize, offset: usize) -> (Dataset, Dataset) {
        let (mut a, mut b) = (Dataset { x: vec![], y: vec![] }, Dataset { x: vec![], y: vec![] });
        for (i, (r, &l)) in self.x.iter().zip(&self.y).enumerate() {
            let to = if i % k == offset { &mut b } else { &mut a };
            to.x.push(r.clone());
            to.y.push(l);
        }
        (a, b)
    }

    /// `n` synthetic rows of `features` features whose label follows a noisy linear rule.
    pub fn synthetic(n: usize, features: usize, seed: u64) -> Self {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        let w: Vec<f64> = (0..features).map(|j| if j % 3 == 0 { 1.0 } else { -0.5 }).collect();
        let mut x = Vec::with_capacity(n);
        let mut y = Vec::with_capacity(n);
        for _ in 0..n {
            let row: Vec<f64> = (0..features).map(|_| next() * 2.0 - 1.0).collect();
            let t: f64 = row.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() + (next() - 0.5) * 0.5;
            y.push(u8::from(t > 0.0));
            x.push(row);
        }
        Dataset { x, y }
    }
}

/// The F1 score of `predicted` against `truth` (positive class 1).
pub fn f1(predicted: &[u8], truth: &[u8]) -> f64 {
    let tp = predicted.iter().zip(truth).filter(|&(&p, &t)| p == 1 && t == 1).count() as f64;
    let fp = predicted.iter().zip(truth).filter(|&(&p, &t)| p == 1 && t == 0).count() as f64;
    let fn_ = predicted.iter().zip(truth).filter(|&(&p, &t)| p == 0 && t == 1).count() as f64;
    if tp == 0.0 { 0.0 } else { 2.0 * tp / (2.0 * tp + fp + fn_) }
}
