//! Gradient-boosted decision trees trained by two parties on vertically partitioned data
//! (Squirrel's protocol with M&M's two changes: the sigmoid by OPPE and the
//! Hessian's `p ⊙ p` by the Z_p-OLE), then private prediction.
//!
//! Party 0 holds the labels and some features, party 1 the other features, of the same `n`
//! samples; each cuts its own features into `B` quantile bins ([`data::Cuts`]). Public: `n`,
//! how many features each party has, `B`, the trees' depth, the hyperparameters. Per tree:
//!
//! ```text
//! 1  p = σ(s) (OPPE), g = p − y (y at party 0), h = p − p⊙p (OLE)          s: shared scores
//! 2  per level, per node with indicator z (shared 0/1):  g_z = z⊙g, h_z = z⊙h  (OLE)
//! 3  histograms: (G_L, H_L)[c] = Σ_i [bin_j(i) ≤ b]·(g_z, h_z)[i] for every candidate c = (j, b):
//!    a matrix the feature's owner knows times shared vectors — a coefficient-encoded
//!    product, plaintext to the owner, one way
//! 4  gain[c] = G_L²/(H_L + λ) + G_R²/(H_R + λ), G_R = G − G_L  (reciprocals, products; G, H
//!    scaled by 2^{−a} first, a = ⌈log2 n⌉ − 6, which leaves the argmax and the leaves alone)
//! 5  the first candidate of the largest gain, by a tournament carrying its index; opened
//! 6  children: z_L = z ⊙ m with m_i = [bin_j(i) ≤ b] known to the feature's owner, z_R = z − z_L
//! 7  leaves: w = −η·G/(H + λ);  s += Σ_leaves w ⊙ z_leaf
//! ```
//!
//! **What is revealed**: the trees' structure (each split's feature and bin, step 5) to both
//! parties, as the tree-structure-public variants of vertical GBDT do (SecureBoost; Squirrel
//! keeps it too, so that prediction needs no comparison); the bins' cut points stay with
//! their owner, and the gradients, histograms, gains, node memberships and leaf weights stay
//! shared. The leaf weights are opened only to an owner on request ([`reveal_leaves`]).
//!
//! **Ranges**: `λ ≥ n/2^14` (the scaled `λ` stays in the reciprocal's range; smaller values are
//! raised to it, in the clear training too); gradients `|g| ≤ 1`, Hessians `h ≤ 1/4`.
//! Semi-honest, two parties.

pub mod clear;
pub mod data;

use veil_he::ole::Ole;
use veil_mpc::{Ctx, MpcError, Result};
use veil_ot::flavours::Modulus;
use veil_twopc::TwoParty;
use veil_twopc::compare::drelu;
use veil_twopc::convert::mux;
use veil_twopc::share::open;

use crate::oppe::{Piecewise, oppe_in};
use crate::products::{
    BITS, COMPARE_BITS, Operand, lift_transposed, matmul_known_by_lifted, mul_holders, mul_known, mul_shift,
};
use crate::recip::{HIGH, Inverse, LOW, Range, inverse_in};
use data::PartyData;

/// Fractional bits of the gradients, gains and weights.
pub const FRAC: u32 = 16;
/// Extra fractional bits of the gains' reciprocals.
const INV_EXTRA: u32 = 4;
/// Entries of the nodes' `(g, h)` matrix per histogram product (larger slices fill the
/// polynomials better).
const HIST_CHUNK: usize = 1 << 21;

/// Training's hyperparameters (public).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Trees.
    pub trees: usize,
    /// Depth (1 to 5).
    pub depth: usize,
    /// Bins per feature.
    pub bins: usize,
    /// Learning rate η.
    pub learning_rate: f64,
    /// L2 regularisation λ of the leaves.
    pub lambda: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params { trees: 10, depth: 5, bins: 16, learning_rate: 0.3, lambda: 1.0 }
    }
}

impl Params {
    /// `a`: the histograms' scale `2^{−a}` keeps `|G| ≤ 2^6`.
    fn scale(n: usize) -> u32 {
        (usize::BITS - n.saturating_sub(1).leading_zeros()).saturating_sub(6)
    }

    /// The range of the scaled `H + λ`: `[λ/2^a, 2^4 + λ/2^a]`.
    fn inverse_range(&self, n: usize) -> Range {
        let l = self.effective_lambda(n) / f64::from(Self::scale(n)).exp2();
        let low = (l.log2().floor() as i32).clamp(LOW, HIGH - 1);
        let high = (((l + 16.0).log2().ceil() as i32) + 1).clamp(low + 1, HIGH);
        Range(low, high)
    }

    /// `λ`, raised to `n/2^14` where smaller (see the module docs).
    pub fn effective_lambda(&self, n: usize) -> f64 {
        self.lambda.max(f64::from(Self::scale(n)).exp2() / 256.0)
    }

    fn check(&self) -> Result<()> {
        if self.trees == 0 || !(1..=5).contains(&self.depth) || !(2..=256).contains(&self.bins) {
            return Err(MpcError::Invalid(format!(
                "{} trees of depth {} on {} bins (depth 1 to 5, 2 to 256 bins)",
                self.trees, self.depth, self.bins
            )));
        }
        if !(self.learning_rate > 0.0 && self.learning_rate <= 1.0 && self.lambda >= 0.0) {
            return Err(MpcError::Invalid("a learning rate in (0, 1] and λ ≥ 0".into()));
        }
        Ok(())
    }
}

/// The candidates `(global feature, bin)` in their public order: every feature (party 0's
/// first), every bin but the last.
pub fn candidates(features: usize, bins: usize) -> impl Iterator<Item = (usize, u16)> {
    (0..features).flat_map(move |j| (0..bins - 1).map(move |b| (j, b as u16)))
}

/// A split: go left when the sample's bin of `feature` (global index) is at most `bin`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    /// Global feature index (party 0's features first).
    pub feature: usize,
    /// The bin.
    pub bin: u16,
}

/// One party's view of a tree: the public splits (level order) and its shares of the leaves.
#[derive(Clone, Debug, PartialEq)]
pub struct Tree {
    /// `2^depth − 1` splits.
    pub splits: Vec<Split>,
    /// Shares of the `2^depth` leaf weights, [`FRAC`] fractional bits.
    pub leaves: Vec<u64>,
}

fn fixed(v: f64, f: u32) -> u64 {
    (v * f64::from(1u32 << f)).round() as i64 as u64
}

/// Who holds global feature `j`, and its index there.
fn owner_of(j: usize, counts: [usize; 2]) -> (usize, usize) {
    if j < counts[0] { (0, j) } else { (1, j - counts[0]) }
}

/// `[bin_j(i) ≤ b]` for this party's feature `j`, as integers (1 or 0).
fn left_mask(data: &PartyData, j: usize, b: u16) -> Vec<u64> {
    data.binned[j].iter().map(|&v| u64::from(v <= b)).collect()
}

/// The first largest entry of each row of `[rows, k]` and its index (shares), by a
/// tournament: `max(a, b) = b + [a ≥ b]·(a − b)`, the index alongside.
fn argmax_rows(tp: &mut TwoParty, ctx: &mut Ctx, x: &[u64], rows: usize, k: usize) -> Result<Vec<u64>> {
    let first = tp.is_first();
    let mut val = x.to_vec();
    let mut idx: Vec<u64> = (0..rows * k).map(|i| if first { (i % k) as u64 } else { 0 }).collect();
    let mut width = k;
    let low = (1u64 << COMPARE_BITS) - 1;
    let ring = Modulus::PowerOfTwo(BITS);
    while width > 1 {
        let pairs = width / 2;
        let (mut d, mut di, mut base, mut base_i) = (vec![], vec![], vec![], vec![]);
        for r in 0..rows {
            for q in 0..pairs {
                let (a, b) = (r * width + 2 * q, r * width + 2 * q + 1);
                d.push(val[a].wrapping_sub(val[b]));
                di.push(idx[a].wrapping_sub(idx[b]));
                base.push(val[b]);
                base_i.push(idx[b]);
            }
        }
        let narrow: Vec<u64> = d.iter().map(|&v| v & low).collect();
        let s = drelu(tp, ctx, &narrow, COMPARE_BITS)?;
        let both: Vec<bool> = s.iter().chain(&s).copied().collect();
        let picked = mux(tp, ctx, &both, &[d, di].concat(), ring)?;
        let (pv, pi) = picked.split_at(base.len());
        let next = width.div_ceil(2);
        let (mut nv, mut ni) = (Vec::with_capacity(rows * next), Vec::with_capacity(rows * next));
        for r in 0..rows {
            for q in 0..pairs {
                let t = r * pairs + q;
                nv.push(base[t].wrapping_add(pv[t]));
                ni.push(base_i[t].wrapping_add(pi[t]));
            }
            if width % 2 == 1 {
                nv.push(val[r * width + width - 1]);
                ni.push(idx[r * width + width - 1]);
            }
        }
        val = nv;
        idx = ni;
        width = next;
    }
    Ok(idx)
}

/// Trains `params.trees` trees; both parties call it with their own data. Returns this
/// party's view of the model.
pub fn train(
    tp: &mut TwoParty,
    ole: &Ole,
    ctx: &mut Ctx,
    data: &PartyData,
    params: &Params,
) -> Result<Vec<Tree>> {
    params.check()?;
    let (n, counts, first) = (data.n, data.feature_counts, tp.is_first());
    let me = usize::from(!first);
    if data.bins != params.bins || data.binned.len() != counts[me] || data.labels.is_some() != first {
        return Err(MpcError::Invalid(
            "the data's bins and features must match the parameters, and party 0 holds the labels".into(),
        ));
    }
    let f = FRAC;
    let a = Params::scale(n);
    let lambda = fixed(params.effective_lambda(n) / f64::from(a).exp2(), f);
    let range = params.inverse_range(n);
    let own = |v: u64| if first { v } else { 0 };
    let mut score = vec![0u64; n];
    let mut trees = Vec::with_capacity(params.trees);
    let thresholds = params.bins - 1;
    for _ in 0..params.trees {
        // 1. Gradients and Hessians.
        let p: Vec<u64> = oppe_in(tp, ole, ctx, &Piecewise::sigmoid(), &score, (BITS, COMPARE_BITS), f)?
            .into_iter()
            .map(|v| v as u64)
            .collect();
        let labels = data.labels.as_deref().unwrap_or(&[]);
        let g: Vec<u64> = p
            .iter()
            .enumerate()
            .map(|(i, &v)| v.wrapping_sub(own(u64::from(labels.get(i) == Some(&1)) << f)))
            .collect();
        let p2 = mul_shift(tp, ole, ctx, &p, &p, f)?;
        let h: Vec<u64> = p.iter().zip(&p2).map(|(&a, &b)| a.wrapping_sub(b)).collect();
        // Each node's indicator and its samples' g and h (the root's: every sample, public).
        let mut z: Vec<Vec<u64>> = vec![vec![own(1); n]];
        let (mut gz, mut hz) = (vec![g.clone()], vec![h.clone()]);
        let mut splits = Vec::new();
        let mut leaf_sums = Vec::new();
        for level in 0..params.depth {
            let k = z.len();
            // 3. Histograms: each owner's masks against the nodes' (g, h), one product each way.
            // Sums over the samples, a slice of them at a time; each slice's (g, h) is lifted
            // into Z_p once for both owners' products.
            let samples = (HIST_CHUNK / (2 * k)).max(1);
            let mut sums: Vec<Vec<u64>> =
                counts.iter().map(|&count| vec![0u64; count * thresholds * 2 * k]).collect();
            for start in (0..n).step_by(samples) {
                let len = samples.min(n - start);
                let mut w = vec![0u64; len * 2 * k];
                for i in 0..len {
                    for node in 0..k {
                        w[i * 2 * k + 2 * node] = gz[node][start + i];
                        w[i * 2 * k + 2 * node + 1] = hz[node][start + i];
                    }
                }
                let wt = lift_transposed(tp, ole, ctx, &w, [len, 2 * k])?;
                for (owner, &count) in counts.iter().enumerate() {
                    let rows = count * thresholds;
                    if rows == 0 {
                        continue;
                    }
                    let masks: Vec<u64> = if owner == me {
                        (0..count)
                            .flat_map(|j| {
                                (0..thresholds).flat_map(move |b| {
                                    data.binned[j][start..start + len]
                                        .iter()
                                        .map(move |&v| u64::from(v <= b as u16))
                                })
                            })
                            .collect()
                    } else {
                        vec![0; rows * len]
                    };
                    let x = Operand { words: &masks, dims: [rows, len], holder: Some(owner) };
                    let product = matmul_known_by_lifted(tp, ole, ctx, x, &wt, 2 * k, 0)?;
                    for (acc, v) in sums[owner].iter_mut().zip(product) {
                        *acc = acc.wrapping_add(v);
                    }
                }
            }
            let hist: Vec<u64> = sums.concat();
            let c = (counts[0] + counts[1]) * thresholds;
            let totals: Vec<u64> = (0..k)
                .flat_map(|node| {
                    [&gz[node], &hz[node]].map(|v| v.iter().fold(0u64, |s, &x| s.wrapping_add(x)))
                })
                .collect();
            // 4. Gains, on values scaled by 2^{−a}.
            let scaled = |v: Vec<u64>, tp: &mut TwoParty, ctx: &mut Ctx| -> Result<Vec<u64>> {
                if a == 0 { Ok(v) } else { veil_twopc::trunc::trunc(tp, ctx, &v, BITS, a) }
            };
            let hist = scaled(hist, tp, ctx)?;
            let totals = scaled(totals, tp, ctx)?;
            let (mut gl, mut hl, mut gr, mut hr) = (vec![], vec![], vec![], vec![]);
            for node in 0..k {
                for cand in 0..c {
                    let (gv, hv) = (hist[cand * 2 * k + 2 * node], hist[cand * 2 * k + 2 * node + 1]);
                    gl.push(gv);
                    hl.push(hv.wrapping_add(own(lambda)));
                    gr.push(totals[2 * node].wrapping_sub(gv));
                    hr.push(totals[2 * node + 1].wrapping_sub(hv).wrapping_add(own(lambda)));
                }
            }
            let inv =
                inverse_in(tp, ole, ctx, &[hl, hr].concat(), (f, INV_EXTRA), Inverse::Reciprocal, range)?;
            let gs = [gl, gr].concat();
            let t = mul_shift(tp, ole, ctx, &gs, &inv, f + INV_EXTRA)?;
            let sq = mul_shift(tp, ole, ctx, &t, &gs, f)?;
            let (left, right) = sq.split_at(k * c);
            let gain: Vec<u64> = left.iter().zip(right).map(|(&x, &y)| x.wrapping_add(y)).collect();
            // 5. The best candidate of each node, opened.
            let best = argmax_rows(tp, ctx, &gain, k, c)?;
            let best = open(tp, ctx, &best, BITS)?;
            // 6. Children: each node's (z, g_z, h_z) times its split's mask, which the
            // feature's owner knows (one product one way); the right child is the rest. At the
            // last level only the indicators are needed, and the leaves' sums are the
            // histograms at the chosen candidates.
            let (mut masks, mut holders) = (Vec::with_capacity(k), Vec::with_capacity(k));
            let last = level + 1 == params.depth;
            for (q, &idx) in best.iter().enumerate() {
                let idx =
                    usize::try_from(idx).ok().filter(|&i| i < c).ok_or_else(|| MpcError::Malformed {
                        from: tp.peer(),
                        what: format!("a split index {idx} of {c} candidates"),
                    })?;
                let (j, b) = (idx / thresholds, (idx % thresholds) as u16);
                let (owner, local) = owner_of(j, counts);
                splits.push(Split { feature: j, bin: b });
                masks.push(if owner == me { left_mask(data, local, b) } else { vec![0; n] });
                holders.push(owner);
                if last {
                    let (gl, hl) = (hist[idx * 2 * k + 2 * q], hist[idx * 2 * k + 2 * q + 1]);
                    let (gt, ht) = (totals[2 * q], totals[2 * q + 1]);
                    leaf_sums.push([(gl, hl), (gt.wrapping_sub(gl), ht.wrapping_sub(hl))]);
                }
            }
            let parts: usize = if last { 1 } else { 3 };
            let mut lefts: Vec<Vec<Vec<u64>>> = vec![Vec::new(); k];
            for owner in 0..2 {
                let nodes: Vec<usize> = (0..k).filter(|&q| holders[q] == owner).collect();
                if nodes.is_empty() {
                    continue;
                }
                let mut shared = Vec::with_capacity(parts * nodes.len() * n);
                let mut known = Vec::with_capacity(parts * nodes.len() * n);
                for &q in &nodes {
                    for v in [&z[q], &gz[q], &hz[q]].into_iter().take(parts) {
                        shared.extend_from_slice(v);
                        known.extend_from_slice(&masks[q]);
                    }
                }
                let prod = if level == 0 {
                    None
                } else {
                    Some(mul_known(tp, ole, ctx, &shared, &known, (owner, 0))?)
                };
                for (t, &q) in nodes.iter().enumerate() {
                    lefts[q] = (0..parts)
                        .map(|part| match (&prod, part) {
                            // The root's indicator is public: its left child is the owner's mask.
                            (None, 0) => masks[q].iter().map(|&m| if me == owner { m } else { 0 }).collect(),
                            (None, _) => Vec::new(),
                            (Some(prod), _) => {
                                prod[(t * parts + part) * n..(t * parts + part + 1) * n].to_vec()
                            }
                        })
                        .collect();
                }
            }
            if level == 0 && !last {
                // The root's g_z, h_z: g and h times the owner's mask.
                let owner = holders[0];
                let known: Vec<u64> = [masks[0].as_slice(), masks[0].as_slice()].concat();
                let prod = mul_known(tp, ole, ctx, &[g.clone(), h.clone()].concat(), &known, (owner, 0))?;
                lefts[0].truncate(1);
                lefts[0].push(prod[..n].to_vec());
                lefts[0].push(prod[n..].to_vec());
            }
            let (mut nz, mut ng, mut nh) = (vec![], vec![], vec![]);
            let rest = |parent: &[u64], left: &[u64]| -> Vec<u64> {
                parent.iter().zip(left).map(|(&a, &b)| a.wrapping_sub(b)).collect()
            };
            for (q, l) in lefts.iter().enumerate() {
                nz.extend([l[0].clone(), rest(&z[q], &l[0])]);
                if !last {
                    ng.extend([l[1].clone(), rest(&gz[q], &l[1])]);
                    nh.extend([l[2].clone(), rest(&hz[q], &l[2])]);
                }
            }
            z = nz;
            gz = ng;
            hz = nh;
        }
        // 7. Leaves (their sums scaled by 2^{−a} already), and the scores.
        let k = z.len();
        let zs = z.concat();
        let scaled_g: Vec<u64> = leaf_sums.iter().flat_map(|s| [s[0].0, s[1].0]).collect();
        let scaled_h: Vec<u64> = leaf_sums.iter().flat_map(|s| [s[0].1, s[1].1]).collect();
        let hl: Vec<u64> = scaled_h.iter().map(|&v| v.wrapping_add(own(lambda))).collect();
        let inv = inverse_in(tp, ole, ctx, &hl, (f, INV_EXTRA), Inverse::Reciprocal, range)?;
        let ratio = mul_shift(tp, ole, ctx, &scaled_g, &inv, f + INV_EXTRA)?;
        let eta = fixed(params.learning_rate, f);
        let step: Vec<u64> = ratio.iter().map(|&v| v.wrapping_mul(eta).wrapping_neg()).collect();
        let leaves = veil_twopc::trunc::trunc(tp, ctx, &step, BITS, f)?;
        let ws: Vec<u64> = leaves.iter().flat_map(|&w| std::iter::repeat_n(w, n)).collect();
        let add = mul_shift(tp, ole, ctx, &zs, &ws, 0)?;
        for t in 0..k {
            for (s, &v) in score.iter_mut().zip(&add[t * n..(t + 1) * n]) {
                *s = s.wrapping_add(v);
            }
        }
        trees.push(Tree { splits, leaves });
    }
    Ok(trees)
}

/// Shares of the raw scores of `data`'s samples (binned with the owners' training cuts) under
/// `trees`: each party evaluates its own splits on every path, the two indicators meet in one
/// product per (sample, leaf), and the leaves' shares are summed.
pub fn predict(
    tp: &mut TwoParty,
    ole: &Ole,
    ctx: &mut Ctx,
    trees: &[Tree],
    data: &PartyData,
) -> Result<Vec<u64>> {
    let (n, counts, me) = (data.n, data.feature_counts, usize::from(!tp.is_first()));
    let mut mine = Vec::new();
    let mut ws = Vec::new();
    for t in trees {
        let depth = t.leaves.len().trailing_zeros() as usize;
        if t.leaves.len() != 1 << depth || t.splits.len() + 1 != t.leaves.len() {
            return Err(MpcError::Invalid("a tree whose splits and leaves do not match".into()));
        }
        for leaf in 0..t.leaves.len() {
            // The path from the root: at depth d the bit (leaf >> (depth − 1 − d)) says right.
            let mut on_path = vec![1u64; n];
            let mut node = 0;
            for d in 0..depth {
                let right = (leaf >> (depth - 1 - d)) & 1 == 1;
                let Split { feature, bin } = t.splits[node];
                let (owner, local) = owner_of(feature, counts);
                if owner == me {
                    let col = data
                        .binned
                        .get(local)
                        .ok_or_else(|| MpcError::Invalid("a split on a missing feature".into()))?;
                    for (o, &v) in on_path.iter_mut().zip(col) {
                        *o &= u64::from((v > bin) == right);
                    }
                }
                node = 2 * node + 1 + usize::from(right);
            }
            mine.extend(on_path);
            ws.extend(std::iter::repeat_n(t.leaves[leaf], n));
        }
    }
    // Indicator = party 0's path bits ⊙ party 1's (each operand known to its party).
    let ind = mul_holders(tp, ole, ctx, (&mine, Some(0)), (&mine, Some(1)), 0)?;
    let terms = mul_shift(tp, ole, ctx, &ind, &ws, 0)?;
    let mut score = vec![0u64; n];
    for chunk in terms.chunks(n) {
        for (s, &v) in score.iter_mut().zip(chunk) {
            *s = s.wrapping_add(v);
        }
    }
    Ok(score)
}

/// Opens the leaf weights to party `to` (the other gets `None`): the trained model in the
/// clear at its owner.
pub fn reveal_leaves(
    tp: &TwoParty,
    ctx: &mut Ctx,
    trees: &[Tree],
    to: usize,
) -> Result<Option<Vec<Vec<f64>>>> {
    let shares: Vec<u64> = trees.iter().flat_map(|t| t.leaves.iter().copied()).collect();
    let me = usize::from(!tp.is_first());
    if me != to {
        ctx.send_ring(tp.peer(), &shares.iter().map(|&v| veil_ring::Z64(v)).collect::<Vec<_>>())?;
        return Ok(None);
    }
    let theirs: Vec<veil_ring::Z64> = ctx.recv_ring(tp.peer(), shares.len())?;
    let mut values =
        shares.iter().zip(theirs).map(|(&a, b)| a.wrapping_add(b.0) as i64 as f64 / f64::from(1u32 << FRAC));
    Ok(Some(trees.iter().map(|t| values.by_ref().take(t.leaves.len()).collect()).collect()))
}
