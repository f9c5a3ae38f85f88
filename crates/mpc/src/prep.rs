//! Preprocessing requests as plain data, and usage counting.
//!
//! Online code asks a preprocessing source for correlated randomness by [`CorrelationRequest`];
//! because a request is data, a dry run can count what a computation needs before running it,
//! a report can give its volume, and a source can produce it ahead of the online phase.

use std::collections::BTreeMap;

/// A kind and amount of correlated randomness.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CorrelationRequest {
    /// `count` multiplication triples (a, b, c = a·b) over Z_2^ring_bits.
    MulTriples {
        /// Ring width.
        ring_bits: u32,
        /// Number of triples.
        count: usize,
    },
    /// `count` truncation pairs `(r, ⌊r/d⌋)`.
    TruncPairs {
        /// Number of pairs.
        count: usize,
    },
    /// `count` upcast tuples `(r mod 2^ℓ, r in the larger ring, MSB(r))`.
    UpcastTuples {
        /// Number of tuples.
        count: usize,
    },
    /// `count` sign-bit correlations (a mask shared additively and bit by bit, AND triples
    /// for a prefix-OR, a daBit).
    SignBits {
        /// Number of elements.
        count: usize,
    },
    /// One matrix triple (A: m×k, B: k×n, C = A·B) over Z_2^ring_bits.
    MatmulTriple {
        /// Ring width.
        ring_bits: u32,
        /// Rows of A.
        m: usize,
        /// Columns of A.
        k: usize,
        /// Columns of B.
        n: usize,
    },
}

impl CorrelationRequest {
    /// Short name of the kind, for reports.
    pub fn kind(&self) -> &'static str {
        match self {
            CorrelationRequest::MulTriples { .. } => "mul_triples",
            CorrelationRequest::MatmulTriple { .. } => "matmul_triple",
            CorrelationRequest::TruncPairs { .. } => "trunc_pairs",
            CorrelationRequest::UpcastTuples { .. } => "upcast_tuples",
            CorrelationRequest::SignBits { .. } => "sign_bits",
        }
    }

    /// Number of ring elements one party holds for this request (its share of a, b and c).
    pub fn elements_per_party(&self) -> usize {
        match *self {
            CorrelationRequest::MulTriples { count, .. } => 3 * count,
            CorrelationRequest::MatmulTriple { m, k, n, .. } => m * k + k * n + m * n,
            CorrelationRequest::TruncPairs { count } => 2 * count,
            CorrelationRequest::UpcastTuples { count } => 3 * count,
            // r, its low bits, its top bit, 6 AND triples of 3 words, and a daBit of 2.
            CorrelationRequest::SignBits { count } => 23 * count,
        }
    }
}

/// How much of each kind a party consumed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PrepUsage {
    counts: BTreeMap<&'static str, u64>,
}

impl PrepUsage {
    /// Records one request.
    pub fn record(&mut self, req: &CorrelationRequest) {
        let units = match *req {
            CorrelationRequest::MulTriples { count, .. } => count as u64,
            CorrelationRequest::MatmulTriple { .. } => 1,
            CorrelationRequest::TruncPairs { count }
            | CorrelationRequest::UpcastTuples { count }
            | CorrelationRequest::SignBits { count } => count as u64,
        };
        *self.counts.entry(req.kind()).or_insert(0) += units;
    }

    /// Units consumed of a kind (`"mul_triples"`: triples; `"matmul_triple"`: matrices).
    pub fn get(&self, kind: &str) -> u64 {
        self.counts.get(kind).copied().unwrap_or(0)
    }
}
