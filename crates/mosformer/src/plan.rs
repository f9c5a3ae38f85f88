//! The family's preprocessing behind `veil-mpc`'s [`Preprocessing`] interface: what each call
//! of the capability traits consumes ([`Mosformer::requests`]), read off the protocols, so that
//! a session's whole plan follows from the model's shapes before anything runs.
//!
//! Per call, in the order the protocols consume it (`c` is the instance's chunk, triples over
//! Z_2^64, none in the semi-honest mode, whose products are not verified):
//! - elementwise product of `n` (rescaled or not): `n` triples; matrix product: one matrix
//!   triple of its dimensions (several side by side: one each); truncations and divisions by a
//!   public value: nothing (their pairs come from pairwise seeds, [`crate::trunc`]);
//! - ReLU of `n`: a ReLU gate per chunk of at most `c` elements (the DReLU's binarity check
//!   makes its own triples on the spot, [`crate::drelu`]);
//! - maxima of `[rows, k]`: a tree of `⌈log2 k⌉` levels, level by level a ReLU of `rows · ⌊w/2⌋`
//!   for the current width `w` (odd widths carry one column up);
//! - GELU of `n`: a GELU gate per chunk (its products are with public values);
//! - softmax of `[rows, k]`: per chunk of `r = max(1, ⌊c / k⌋)` rows, a softmax gate, then the
//!   exponential's three products of `r·k` (`p²`, `p²·q`, `e^p·2^-z`), the reciprocal's two of
//!   `r` ([`crate::recip`]: `x·t`, `t·w`) and the normalisation's one of `r·k`;
//! - LayerNorm of `[rows, k]`: a LayerNorm gate, then the variance's product of `rows·k`, the
//!   reciprocal square root's two of `rows`, and the normalisation's and the scale's of
//!   `rows·k` each.
//!
//! The session tests compare this with what a run asked for ([`Mosformer::recorded_plan`]),
//! call by call.

use veil_mpc::prep::{Call, CorrelationRequest, Gate, Plan, PrepUsage, Preprocessing, Supply};
use veil_mpc::{Ctx, Result};

use veil_mpc::mode::Security;

use crate::family::Mosformer;
use crate::offline::Offline;

fn triples(count: usize) -> CorrelationRequest {
    CorrelationRequest::MulTriples { ring_bits: 64, count }
}

fn matrix([m, k, n]: [usize; 3]) -> CorrelationRequest {
    CorrelationRequest::MatmulTriple { ring_bits: 64, m, k, n }
}

/// `(start, length)` of consecutive chunks of at most `size` covering `0..n`.
pub(crate) fn chunks(n: usize, size: usize) -> Vec<(usize, usize)> {
    (0..n.div_ceil(size.max(1))).map(|i| (i * size, size.min(n - i * size))).collect()
}

impl<D> Mosformer<D> {
    /// The material `call` consumes (see the module doc).
    pub fn requests(&self, call: &Call) -> Vec<CorrelationRequest> {
        let verified = self.security == Security::Malicious;
        let chunk = self.gates.chunk;
        let mut out = Vec::new();
        let products = |out: &mut Vec<CorrelationRequest>, sizes: &[usize]| {
            if verified {
                out.extend(sizes.iter().map(|&n| triples(n)));
            }
        };
        let relu = |out: &mut Vec<CorrelationRequest>, n: usize| {
            out.extend(chunks(n, chunk).into_iter().map(|(_, n)| CorrelationRequest::Gate(Gate::Relu { n })));
        };
        match call {
            Call::Mul { n } | Call::MulFixed { n } => products(&mut out, &[*n]),
            Call::Matmul { dims, .. } if verified => out.push(matrix(*dims)),
            Call::MatmulMany { dims } if verified => out.extend(dims.iter().map(|d| matrix(*d))),
            Call::Relu { n } => relu(&mut out, *n),
            Call::MaxRows { rows, k } => {
                let mut width = *k;
                while width > 1 {
                    relu(&mut out, rows * (width / 2));
                    width = width / 2 + width % 2;
                }
            }
            Call::Gelu { n } => {
                out.extend(
                    chunks(*n, chunk).into_iter().map(|(_, n)| CorrelationRequest::Gate(Gate::Gelu { n })),
                );
            }
            Call::Softmax { rows, k, .. } => {
                for (_, r) in chunks(*rows, (chunk / (*k).max(1)).max(1)) {
                    out.push(CorrelationRequest::Gate(Gate::Softmax { rows: r, k: *k }));
                    let e = r * k;
                    products(&mut out, &[e, e, e, r, r, e]);
                }
            }
            Call::LayerNorm { rows, k } => {
                out.push(CorrelationRequest::Gate(Gate::LayerNorm { rows: *rows, k: *k }));
                let e = rows * k;
                products(&mut out, &[e, *rows, *rows, e, e]);
            }
            Call::Matmul { .. }
            | Call::MatmulMany { .. }
            | Call::DivPublic { .. }
            | Call::ShareFromOwner { .. }
            | Call::RevealToOwner { .. }
            | Call::Check => {}
        }
        out
    }
}

impl Mosformer<Offline> {
    /// What this instance's calls asked for so far: its gates, then its triples and tuples
    /// (each list in order). A plan of the same computation lists the same.
    pub fn recorded_plan(&self) -> Plan {
        let gates = self.gate_plan().iter().cloned().map(CorrelationRequest::Gate);
        Plan { requests: gates.chain(self.triples.plan().iter().cloned()).collect() }
    }
}

impl Preprocessing for Mosformer<Offline> {
    fn requests(&self, call: &Call) -> Vec<CorrelationRequest> {
        Mosformer::requests(self, call)
    }

    fn supplies(&self) -> &'static [Supply] {
        &[Supply::Ahead, Supply::OnDemand, Supply::Stored]
    }

    /// The MAC key and `⟨1⟩`, every gate's material, then the triples ([`Offline::produce`]).
    fn produce(&mut self, ctx: &mut Ctx, plan: &Plan) -> Result<()> {
        let gates: Vec<Gate> = plan.gates().cloned().collect();
        self.prepare(ctx, &gates)?;
        self.triples.produce(ctx, &plan.requests)
    }

    fn made_on_demand(&self) -> u64 {
        self.gates.made_on_demand + self.triples.made_on_demand()
    }

    /// Triples, matrix triples and truncation pairs (from seeds) as the store counted them,
    /// and the gates' elements.
    fn usage(&self) -> PrepUsage {
        let mut usage = self.triples.usage().clone();
        for g in self.gate_plan() {
            usage.record(&CorrelationRequest::Gate(g.clone()));
        }
        usage
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_follow_the_chunks_and_the_mode() {
        let m = Mosformer::new(Security::Malicious, Offline::new()).with_chunk(100);
        let gates = |reqs: Vec<CorrelationRequest>| -> Vec<usize> {
            reqs.iter()
                .filter_map(|r| match r {
                    CorrelationRequest::Gate(g) => Some(g.elements()),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(gates(m.requests(&Call::Relu { n: 250 })), [100, 100, 50]);
        // Widths 5 → 3 → 2 → 1: ReLUs of 2·2, 2·1 and 2·1.
        assert_eq!(gates(m.requests(&Call::MaxRows { rows: 2, k: 5 })), [4, 2, 2]);
        // 100 / 30 = 3 rows per chunk: 3, 3, 1; each with six products.
        let sm = m.requests(&Call::Softmax { rows: 7, k: 30, masked: false });
        assert_eq!(gates(sm.clone()), [90, 90, 30]);
        assert_eq!(sm.len(), 3 * 7);
        assert_eq!(m.requests(&Call::Matmul { dims: [2, 3, 4], scaled: true }), [matrix([2, 3, 4])]);
        let semi = Mosformer::new(Security::SemiHonest, Offline::semi_honest()).with_chunk(100);
        assert!(semi.requests(&Call::Matmul { dims: [2, 3, 4], scaled: true }).is_empty());
        assert_eq!(semi.requests(&Call::LayerNorm { rows: 4, k: 8 }).len(), 1);
        assert!(m.requests(&Call::DivPublic { n: 9, d: 3 }).is_empty());
    }
}
