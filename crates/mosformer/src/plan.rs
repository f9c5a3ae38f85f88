//! The family's preprocessing behind `veil-mpc`'s [`Preprocessing`] interface: what each call
//! of the capability traits consumes ([`Mosformer::requests`]), read off the protocols, so that
//! a session's whole plan follows from the model's shapes before anything runs.
//!
//! Per call, in the order the protocols consume it (`c` is the instance's chunk; `T(n)`: `n`
//! truncation pairs, made from pairwise seeds with nothing to produce ahead, [`crate::trunc`];
//! `M(n)`: `n` triples over Z_2^64, none in the semi-honest mode, whose products are not
//! verified; `e = r·k` for `r` rows of `k`):
//! - product of `n`: `M(n)`, then `T(n)` if rescaled; matrix product: `T(m·n)` if rescaled
//!   (its check needs no material, [`crate::matcheck`]); several side by side: one `T(Σ m·n)`;
//!   division by a public value: `T(n)`;
//! - ReLU of `n`: a ReLU gate per chunk of at most `c` elements (the DReLU's binarity check
//!   makes its own triples on the spot, [`crate::drelu`]); maxima of `[rows, k]`: per level
//!   of the tree of width `w`, a ReLU of `rows·⌊w/2⌋` (then width `⌈w/2⌉`);
//! - GELU of `n`: with modulus conversion `T(n)` to 6 fractional bits, then a GELU gate per
//!   chunk; in Z_2^64, a gate and `T(c)` per chunk (its table index);
//! - softmax of `[rows, k]`: with modulus conversion `T(rows·k)` to 12 bits; then per chunk of
//!   `r = max(1, ⌊c/k⌋)` rows a softmax gate, the exponential's `T(e)`, `M(e)` (`p²`), `T(e)`,
//!   `T(e)`, `M(e)` (`p²·q`), `T(e)`, `M(e)` (`e^p·2^-z`), `T(e)`, the reciprocal's `M(r)`,
//!   `T(r)`, `M(r)`, `T(r)` ([`crate::recip`]) and the normalisation's `M(e)`, `T(e)`;
//! - LayerNorm of `[rows, k]` (`e = rows·k`): a gate, the mean's `T(rows)`, the variance's
//!   `M(e)`, `T(e)`, `T(rows)`, the reciprocal square root's `M(rows)`, `T(rows)`, `M(rows)`,
//!   `T(rows)`, and the normalisation's and the scale's `M(e)`, `T(e)` each.
//!
//! The session tests compare this with what a run asked for ([`Mosformer::recorded_plan`]),
//! kind by kind and in order.

use veil_mpc::prep::{
    Call, CorrelationRequest, Gate, Plan, PrepUsage, Preprocessing, Supply, max_tree_levels,
};
use veil_mpc::{Ctx, Result};

use veil_mpc::mode::{Rings, Security};

use crate::family::Mosformer;
use crate::gates::{FRAC_BITS, softmax_bits};
use crate::offline::Offline;

fn triples(count: usize) -> CorrelationRequest {
    CorrelationRequest::MulTriples { ring_bits: 64, count }
}

/// `(start, length)` of consecutive chunks of at most `size` covering `0..n`.
pub(crate) fn chunks(n: usize, size: usize) -> Vec<(usize, usize)> {
    (0..n.div_ceil(size.max(1))).map(|i| (i * size, size.min(n - i * size))).collect()
}

impl<D> Mosformer<D> {
    /// The material `call` consumes (see the module doc).
    pub fn requests(&self, call: &Call) -> Vec<CorrelationRequest> {
        let verified = self.security == Security::Malicious;
        let (chunk, rings) = (self.gates.chunk, self.gates.rings);
        let mut out = Plan::default();
        let (mul, trunc) = (|n: usize| Step::Mul(n), |n: usize| Step::Trunc(n));
        let steps = |out: &mut Plan, steps: &[Step]| {
            for step in steps {
                match *step {
                    Step::Mul(n) if verified => out.requests.push(triples(n)),
                    Step::Mul(_) => {}
                    Step::Trunc(n) => out.requests.push(CorrelationRequest::TruncPairs { count: n }),
                }
            }
        };
        let gate = |out: &mut Plan, g: Gate| out.requests.push(CorrelationRequest::Gate(g));
        let relu = |out: &mut Plan, n: usize| {
            for (_, n) in chunks(n, chunk) {
                gate(out, Gate::Relu { n });
            }
        };
        match call {
            Call::Mul { n } => steps(&mut out, &[mul(*n)]),
            Call::MulFixed { n } => steps(&mut out, &[mul(*n), trunc(*n)]),
            // Matrix products are checked online, with no material ([`crate::matcheck`]).
            Call::Matmul { dims, scaled } => {
                if *scaled {
                    steps(&mut out, &[trunc(dims[0] * dims[2])]);
                }
            }
            Call::MatmulMany { dims } => {
                steps(&mut out, &[trunc(dims.iter().map(|d| d[0] * d[2]).sum())]);
            }
            Call::DivPublic { n, .. } => steps(&mut out, &[trunc(*n)]),
            Call::Relu { n } => relu(&mut out, *n),
            Call::MaxRows { rows, k } => {
                for level in max_tree_levels(*rows, *k) {
                    relu(&mut out, level);
                }
            }
            Call::Gelu { n } => {
                if rings == Rings::Mixed {
                    steps(&mut out, &[trunc(*n)]);
                }
                let f = if rings == Rings::Mixed { crate::gelu::F_IN } else { FRAC_BITS };
                for (_, c) in chunks(*n, chunk) {
                    gate(&mut out, Gate::Gelu { n: c });
                    let gelu_steps: Vec<Step> = crate::gelu::material_steps(c, f)
                        .into_iter()
                        .map(|(product, k)| if product { mul(k) } else { trunc(k) })
                        .collect();
                    steps(&mut out, &gelu_steps);
                }
            }
            Call::Softmax { rows, k, .. } => {
                if softmax_bits(rings) < FRAC_BITS {
                    steps(&mut out, &[trunc(rows * k)]);
                }
                for (_, r) in chunks(*rows, (chunk / (*k).max(1)).max(1)) {
                    gate(&mut out, Gate::Softmax { rows: r, k: *k });
                    let e = r * k;
                    let exp = [trunc(e), mul(e), trunc(e), trunc(e), mul(e), trunc(e), mul(e), trunc(e)];
                    let recip = [mul(r), trunc(r), mul(r), trunc(r)];
                    steps(&mut out, &exp);
                    steps(&mut out, &recip);
                    steps(&mut out, &[mul(e), trunc(e)]);
                }
            }
            Call::LayerNorm { rows, k } => {
                gate(&mut out, Gate::LayerNorm { rows: *rows, k: *k });
                let (e, r) = (rows * k, *rows);
                let rsqrt = [mul(r), trunc(r), mul(r), trunc(r)];
                steps(&mut out, &[trunc(r), mul(e), trunc(e), trunc(r)]);
                steps(&mut out, &rsqrt);
                steps(&mut out, &[mul(e), trunc(e), mul(e), trunc(e)]);
            }
            Call::ShareFromOwner { .. } | Call::RevealToOwner { .. } | Call::Check => {}
        }
        out.requests
    }
}

/// One step of a protocol that consumes material: a product of `n` or a truncation of `n`.
#[derive(Clone, Copy)]
enum Step {
    Mul(usize),
    Trunc(usize),
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

    /// Triples and truncation pairs as the store counted them, and the gates'
    /// elements.
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
        // 100 / 30 = 3 rows per chunk: 3, 3, 1; each with six products and eight truncations,
        // after one truncation to 12 fractional bits.
        let sm = m.requests(&Call::Softmax { rows: 7, k: 30, masked: false });
        assert_eq!(gates(sm.clone()), [90, 90, 30]);
        assert_eq!(sm.len(), 1 + 3 * 15);
        let pairs = |n| CorrelationRequest::TruncPairs { count: n };
        let mm = m.requests(&Call::Matmul { dims: [2, 3, 4], scaled: true });
        assert_eq!(mm, [pairs(8)]);
        let semi = Mosformer::new(Security::SemiHonest, Offline::semi_honest()).with_chunk(100);
        assert_eq!(semi.requests(&Call::Matmul { dims: [2, 3, 4], scaled: true }), [pairs(8)]);
        assert_eq!(semi.requests(&Call::LayerNorm { rows: 4, k: 8 }).len(), 1 + 7);
        assert_eq!(m.requests(&Call::DivPublic { n: 9, d: 3 }), [pairs(9)]);
        // GELU per chunk: its gate, then three products and four truncations (the polynomial
        // and its input); in Z_2^64 two truncations more (the clip's 6-bit input, `t/2`).
        let z64 = Mosformer::new(Security::Malicious, Offline::new()).with_chunk(100).with_rings(Rings::Z64);
        assert_eq!(z64.requests(&Call::Gelu { n: 150 }).len(), 2 * 9);
        assert_eq!(m.requests(&Call::Gelu { n: 150 }).len(), 1 + 2 * 7);
    }
}
