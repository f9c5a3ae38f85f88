//! Evaluation `Eval(b, k_b, x)` at one point and level-by-level full-domain evaluation.
//!
//! Party `b` walks the tree from `(s_b^(0), t_b^(0) = b)`; at level `i` it expands
//! `G(s) = s^L ‖ t^L ‖ s^R ‖ t^R`, and if `t = 1` corrects both children:
//! `s^{L,R} ⊕= s_CW`, `t^L ⊕= t_CW^L`, `t^R ⊕= t_CW^R`, then follows bit `x_i`. The output share is
//!
//! `y_b = (−1)^b · (Convert(s^(d)) + t^(d)·OCW)`,
//!
//! so off the `α` path (equal `(s, t)` on both sides) `y_0 + y_1 = 0`, and at `α`
//! (`t_0 ⊕ t_1 = 1`) the correction `OCW` makes `y_0 + y_1 = β`.
//!
//! Full-domain evaluation expands the tree breadth first: level `i` is one pass of `MMO` over
//! `2^i` blocks (pipelined, [`crate::mmo`]), and the leaves are converted in one more pass; the
//! cost is `2^{d+1}` AES calls for the tree plus `2^d` for `Convert`. A node is kept as one
//! `u128`, its seed with the control bit in the seed's (always zero) low bit, so correcting a
//! child is one masked XOR: `child ⊕= t·(s_CW | t_CW)`.

use veil_ring::Ring;

use crate::key::DpfKey;
use crate::prg::{FixedAes, SEED_MASK};
use crate::{FssError, MAX_FULL_DOMAIN_BITS};

/// Party `b`'s share `y_b` of `f_{α,β}(x)`: `eval(k_0, x) + eval(k_1, x) = β·[x = α]`.
///
/// # Errors
/// [`FssError::InputOutOfRange`] if `x >= 2^d`.
pub fn eval<R: Ring>(key: &DpfKey<R>, x: u64) -> Result<R, FssError> {
    let d = key.domain_bits;
    if x >> d != 0 {
        return Err(FssError::InputOutOfRange { x, domain_bits: d });
    }
    let aes = FixedAes::get();
    let (mut s, mut t) = (key.root, key.party == 1);
    for (i, cw) in key.cws.iter().enumerate() {
        let (mut sl, mut tl, mut sr, mut tr) = aes.expand(s);
        if t {
            sl ^= cw.seed;
            sr ^= cw.seed;
            tl ^= cw.t_left;
            tr ^= cw.t_right;
        }
        let bit = (x >> (d as usize - 1 - i)) & 1 == 1;
        (s, t) = if bit { (sr, tr) } else { (sl, tl) };
    }
    Ok(output(key, aes.convert::<R>(s), t))
}

/// Party `b`'s shares of the whole truth table: entry `x` equals [`eval(key, x)`](eval).
///
/// # Errors
/// [`FssError::DomainTooLargeForFullEval`] if `d > MAX_FULL_DOMAIN_BITS`.
pub fn eval_full<R: Ring>(key: &DpfKey<R>) -> Result<Vec<R>, FssError> {
    let aes = FixedAes::get();
    let mut leaves = Leaves::default();
    leaves.expand(key, aes)?;
    let mut table = vec![R::ZERO; 1usize << key.domain_bits];
    leaves.outputs_into(&[key], aes, &mut table, &[0]);
    Ok(table)
}

/// `(−1)^b·(c + t·OCW)`.
#[inline]
fn output<R: Ring>(key: &DpfKey<R>, c: R, t: bool) -> R {
    let y = if t { c + key.ocw } else { c };
    if key.party == 1 { -y } else { y }
}

/// The leaf nodes `s^(d)[x] | t^(d)[x]` of the full-domain expansions of a batch of keys over
/// one domain, side by side (key `k`'s leaves at `k·2^d .. (k+1)·2^d`), with the buffers they
/// need; reused from batch to batch, so a run of expansions allocates once. The keys' levels
/// are expanded together: a level of many small trees is one long pass of `MMO`, where a tree
/// of 8 leaves alone would leave the pipeline mostly empty.
#[derive(Default)]
pub(crate) struct Leaves {
    /// Leaf nodes, key by key, `x` ascending: the seed, with the control bit in bit 0.
    pub(crate) nodes: Vec<u128>,
    next: Vec<u128>,
    scratch: Vec<u128>,
}

impl Leaves {
    /// Expands `key` level by level.
    ///
    /// # Errors
    /// [`FssError::DomainTooLargeForFullEval`] if `d > MAX_FULL_DOMAIN_BITS`.
    pub(crate) fn expand<R: Ring>(&mut self, key: &DpfKey<R>, aes: &FixedAes) -> Result<(), FssError> {
        self.expand_batch(&[key], aes)
    }

    /// Expands every key of `keys` (all over the same domain) level by level, each level of
    /// all keys in one pass.
    ///
    /// # Errors
    /// [`FssError::DomainTooLargeForFullEval`] if `d > MAX_FULL_DOMAIN_BITS`,
    /// [`FssError::DomainMismatch`] if the keys' domains differ.
    pub(crate) fn expand_batch<R: Ring>(
        &mut self,
        keys: &[&DpfKey<R>],
        aes: &FixedAes,
    ) -> Result<(), FssError> {
        let d = keys.first().map_or(0, |k| k.domain_bits);
        if d > MAX_FULL_DOMAIN_BITS {
            return Err(FssError::DomainTooLargeForFullEval { bits: d, max: MAX_FULL_DOMAIN_BITS });
        }
        if let Some(k) = keys.iter().find(|k| k.domain_bits != d) {
            return Err(FssError::DomainMismatch { expected: d, found: k.domain_bits });
        }
        let Self { nodes, next, .. } = self;
        nodes.clear();
        nodes.extend(keys.iter().map(|k| (k.root & SEED_MASK) | u128::from(k.party == 1)));
        for level in 0..d as usize {
            let width = nodes.len() / keys.len().max(1);
            next.resize(2 * nodes.len(), 0);
            for (pair, &p) in next.chunks_exact_mut(2).zip(nodes.iter()) {
                pair[0] = p & SEED_MASK;
                pair[1] = p | 1;
            }
            aes.tree_in_place(next);
            for (key, (children, parents)) in
                keys.iter().zip(next.chunks_exact_mut(2 * width).zip(nodes.chunks_exact(width)))
            {
                let cw = &key.cws[level];
                let seed = cw.seed & SEED_MASK;
                let (left, right) = (seed | u128::from(cw.t_left), seed | u128::from(cw.t_right));
                for (pair, &p) in children.chunks_exact_mut(2).zip(parents) {
                    let mask = (p & 1).wrapping_neg();
                    pair[0] ^= mask & left;
                    pair[1] ^= mask & right;
                }
            }
            core::mem::swap(nodes, next);
        }
        Ok(())
    }

    /// Appends the words of `H(x ‖ s^(d)[x]) ⊕ t^(d)[x]·cs` of every leaf of the last
    /// [`Self::expand_batch`] to `out`, key by key (four words per leaf): the `π̃_x` of the
    /// verifiable DPF.
    pub(crate) fn pi_tildes<R: Ring>(&mut self, aes: &FixedAes, keys: &[&DpfKey<R>], out: &mut Vec<u128>) {
        if keys.is_empty() {
            return;
        }
        let start = out.len();
        let width = (self.nodes.len() / keys.len()).max(1);
        for leaves in self.nodes.chunks(width) {
            aes.leaf_hash_inputs(0, leaves, out);
        }
        aes.leaf_hash_in_place(&mut out[start..]);
        for (key, (words, leaves)) in
            keys.iter().zip(out[start..].chunks_exact_mut(4 * width).zip(self.nodes.chunks_exact(width)))
        {
            let cs = cs_words(key);
            for (words, &node) in words.chunks_exact_mut(4).zip(leaves) {
                let mask = (node & 1).wrapping_neg();
                for (w, c) in words.iter_mut().zip(&cs) {
                    *w ^= mask & c;
                }
            }
        }
    }

    /// Output shares of every leaf of the last [`Self::expand_batch`], with `Convert` in one
    /// pass: key `k`'s `2^d` leaves are written to `out[starts[k]..]`, so a batch's tables can
    /// go straight into one buffer.
    pub(crate) fn outputs_into<R: Ring>(
        &mut self,
        keys: &[&DpfKey<R>],
        aes: &FixedAes,
        out: &mut [R],
        starts: &[usize],
    ) {
        let Self { nodes, scratch, .. } = self;
        scratch.clear();
        scratch.extend(nodes.iter().map(|&n| n & SEED_MASK));
        aes.convert_in_place(scratch);
        let width = nodes.len() / keys.len().max(1);
        for (k, (key, (leaves, firsts))) in keys
            .iter()
            .zip(nodes.chunks_exact(width.max(1)).zip(scratch.chunks_exact(width.max(1))))
            .enumerate()
        {
            for (slot, (&n, &first)) in
                out[starts[k]..starts[k] + leaves.len()].iter_mut().zip(leaves.iter().zip(firsts))
            {
                *slot = output(key, aes.convert_with_first(n & SEED_MASK, first), n & 1 == 1);
            }
        }
    }
}

/// The check string `cs` as four little-endian words.
pub(crate) fn cs_words<R: Ring>(key: &DpfKey<R>) -> [u128; 4] {
    let mut w = [0u128; 4];
    for (word, chunk) in w.iter_mut().zip(key.cs.chunks_exact(16)) {
        let mut b = [0u8; 16];
        b.copy_from_slice(chunk);
        *word = u128::from_le_bytes(b);
    }
    w
}
