//! The family's dealing behind `veil-mpc`'s [`Preprocessing`] interface: what P0 deals for each
//! call of the capability traits ([`Aegis::requests`]), so that a session's material follows
//! from the model's shapes. Aegis deals each operation's material right before the operation
//! (its masks follow from the masks of the operation's inputs), so the only supply is on
//! demand; what was dealt is counted ([`Preprocessing::usage`]) and checked against the plan
//! in the session tests.
//!
//! Per call (`l`-bit ring):
//! - a product with `n` outputs (elementwise, or `m·n` of a matrix product): the dealt cross
//!   terms `[Γ]` of `n` outputs ([`crate::mul`]), counted as `n` multiplication triples;
//! - a rescaled product or a division by a public value: first `n` verified truncation pairs
//!   ([`crate::trunc`]; their own inner products are part of the pair), then the product's terms;
//! - ReLU of `n`: `n` sign extractions ([`crate::sign`]);
//! - maxima of `[rows, k]`: per level of the tree of width `w`, `rows·⌊w/2⌋` sign extractions,
//!   then width `⌈w/2⌉`.

use veil_mpc::prep::{Call, CorrelationRequest, PrepUsage, Preprocessing, max_tree_levels};

use crate::Aegis;

impl Aegis {
    /// The material `call` consumes (see the module doc).
    pub fn requests(&self, call: &Call) -> Vec<CorrelationRequest> {
        let products = |count: usize| CorrelationRequest::MulTriples { ring_bits: self.l(), count };
        let pairs = |count: usize| CorrelationRequest::TruncPairs { count };
        let signs = |count: usize| CorrelationRequest::SignBits { count };
        match call {
            Call::Mul { n } => vec![products(*n)],
            Call::MulFixed { n } | Call::DivPublic { n, .. } => vec![pairs(*n), products(*n)],
            Call::Matmul { dims: [m, _, n], scaled: true } => vec![pairs(m * n), products(m * n)],
            Call::Matmul { dims: [m, _, n], scaled: false } => vec![products(m * n)],
            Call::MatmulMany { dims } => {
                dims.iter().flat_map(|[m, _, n]| [pairs(m * n), products(m * n)]).collect()
            }
            Call::Relu { n } => vec![signs(*n)],
            Call::MaxRows { rows, k } => max_tree_levels(*rows, *k).into_iter().map(signs).collect(),
            Call::Gelu { .. }
            | Call::Softmax { .. }
            | Call::LayerNorm { .. }
            | Call::ShareFromOwner { .. }
            | Call::RevealToOwner { .. }
            | Call::Check => vec![],
        }
    }
}

impl Preprocessing for Aegis {
    fn requests(&self, call: &Call) -> Vec<CorrelationRequest> {
        Aegis::requests(self, call)
    }

    /// Everything: P0 deals each operation's material when the operation runs.
    fn made_on_demand(&self) -> u64 {
        self.usage.kinds().map(|(_, units)| units).sum()
    }

    fn usage(&self) -> PrepUsage {
        self.usage.clone()
    }
}
