//! The same GBDT training in the clear (`f64`, the exact logistic function): the trees the
//! secure training is compared with. Same bins, candidates, gain, tie rule (the first of
//! equal gains) and leaf weights.

use super::{Params, candidates};

/// A tree in the clear: splits in level order as `(global feature, bin)` (left when the
/// sample's bin is at most `bin`), and `2^depth` leaf weights.
#[derive(Clone, Debug, PartialEq)]
pub struct ClearTree {
    /// The splits.
    pub splits: Vec<(usize, u16)>,
    /// The leaves.
    pub leaves: Vec<f64>,
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Trains on `binned` (`[global feature][sample]`, party 0's features first) and `labels`.
pub fn train(binned: &[Vec<u16>], labels: &[u8], p: &Params) -> Vec<ClearTree> {
    let n = labels.len();
    let lambda = p.effective_lambda(n);
    let mut score = vec![0.0f64; n];
    let mut trees = Vec::with_capacity(p.trees);
    for _ in 0..p.trees {
        let prob: Vec<f64> = score.iter().map(|&s| sigmoid(s)).collect();
        let g: Vec<f64> = prob.iter().zip(labels).map(|(&q, &y)| q - f64::from(y)).collect();
        let h: Vec<f64> = prob.iter().map(|&q| q * (1.0 - q)).collect();
        let mut nodes: Vec<Vec<bool>> = vec![vec![true; n]];
        let mut splits = Vec::new();
        for _ in 0..p.depth {
            let mut next = Vec::with_capacity(2 * nodes.len());
            for member in &nodes {
                let total = |v: &[f64]| -> f64 { (0..n).filter(|&i| member[i]).map(|i| v[i]).sum() };
                let (gt, ht) = (total(&g), total(&h));
                let mut best = (f64::NEG_INFINITY, 0usize, 0u16);
                for (j, b) in candidates(binned.len(), p.bins) {
                    let (mut gl, mut hl) = (0.0, 0.0);
                    for i in (0..n).filter(|&i| member[i] && binned[j][i] <= b) {
                        gl += g[i];
                        hl += h[i];
                    }
                    let (gr, hr) = (gt - gl, ht - hl);
                    let gain = gl * gl / (hl + lambda) + gr * gr / (hr + lambda);
                    if gain > best.0 {
                        best = (gain, j, b);
                    }
                }
                let (_, j, b) = best;
                splits.push((j, b));
                next.push((0..n).map(|i| member[i] && binned[j][i] <= b).collect());
                next.push((0..n).map(|i| member[i] && binned[j][i] > b).collect());
            }
            nodes = next;
        }
        let leaves: Vec<f64> = nodes
            .iter()
            .map(|member| {
                let (gt, ht) =
                    (0..n).filter(|&i| member[i]).fold((0.0, 0.0), |(a, b), i| (a + g[i], b + h[i]));
                -p.learning_rate * gt / (ht + lambda)
            })
            .collect();
        for (member, &w) in nodes.iter().zip(&leaves) {
            for i in (0..n).filter(|&i| member[i]) {
                score[i] += w;
            }
        }
        trees.push(ClearTree { splits, leaves });
    }
    trees
}

/// The raw score of every sample.
pub fn scores(trees: &[ClearTree], binned: &[Vec<u16>], depth: usize) -> Vec<f64> {
    let n = binned.first().map_or(0, Vec::len);
    (0..n)
        .map(|i| {
            trees
                .iter()
                .map(|t| {
                    let mut node = 0;
                    for _ in 0..depth {
                        let (j, b) = t.splits[node];
                        node = 2 * node + 1 + usize::from(binned[j][i] > b);
                    }
                    t.leaves[node - t.splits.len()]
                })
                .sum()
        })
        .collect()
}
