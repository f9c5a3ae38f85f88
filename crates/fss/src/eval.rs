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
//! Full-domain evaluation expands the tree breadth first: level `i` is one `encrypt_blocks` call
//! over `2^i` blocks (AES-NI pipelined), and the leaves are converted in one more batch; the
//! cost is `2^{d+1}` AES calls for the tree plus `2^d` for `Convert`.

use veil_ring::Ring;

use crate::key::DpfKey;
use crate::prg::{Block, FixedAes, child};
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
    let aes = FixedAes::new();
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
    let aes = FixedAes::new();
    let mut leaves = Leaves::default();
    leaves.expand(key, &aes)?;
    Ok(leaves.outputs(key, &aes))
}

/// `(−1)^b·(c + t·OCW)`.
#[inline]
fn output<R: Ring>(key: &DpfKey<R>, c: R, t: bool) -> R {
    let y = if t { c + key.ocw } else { c };
    if key.party == 1 { -y } else { y }
}

/// The leaf seeds and control bits `(s^(d)[x], t^(d)[x])` of one key's full-domain expansion,
/// with the buffers it needs; reused from key to key, so a batch of expansions allocates once.
#[derive(Default)]
pub(crate) struct Leaves {
    /// Leaf seeds, `x` ascending.
    pub(crate) seeds: Vec<u128>,
    /// Leaf control bits.
    pub(crate) ts: Vec<bool>,
    next_seeds: Vec<u128>,
    next_ts: Vec<bool>,
    blocks: Vec<Block>,
    words: Vec<u128>,
}

impl Leaves {
    /// Expands `key` level by level.
    ///
    /// # Errors
    /// [`FssError::DomainTooLargeForFullEval`] if `d > MAX_FULL_DOMAIN_BITS`.
    pub(crate) fn expand<R: Ring>(&mut self, key: &DpfKey<R>, aes: &FixedAes) -> Result<(), FssError> {
        let d = key.domain_bits;
        if d > MAX_FULL_DOMAIN_BITS {
            return Err(FssError::DomainTooLargeForFullEval { bits: d, max: MAX_FULL_DOMAIN_BITS });
        }
        let n = 1usize << d;
        let Self { seeds, ts, next_seeds, next_ts, blocks, .. } = self;
        seeds.clear();
        ts.clear();
        seeds.push(key.root);
        ts.push(key.party == 1);
        blocks.resize(n, Block::default());
        for cw in &key.cws {
            let m = seeds.len();
            let level = &mut blocks[..2 * m];
            aes.expand_level(seeds, level);
            next_seeds.clear();
            next_ts.clear();
            for ((pair, &s), &t) in level.chunks_exact(2).zip(seeds.iter()).zip(ts.iter()) {
                let (sl, tl) = child(&pair[0], s);
                let (sr, tr) = child(&pair[1], s ^ 1);
                let mask = u128::from(t).wrapping_neg();
                next_seeds.push(sl ^ (mask & cw.seed));
                next_seeds.push(sr ^ (mask & cw.seed));
                next_ts.push(tl ^ (t & cw.t_left));
                next_ts.push(tr ^ (t & cw.t_right));
            }
            core::mem::swap(seeds, next_seeds);
            core::mem::swap(ts, next_ts);
        }
        Ok(())
    }

    /// Appends `H(x ‖ s^(d)[x])` of every leaf to `out` (64 bytes each).
    pub(crate) fn hashes(&mut self, aes: &FixedAes, out: &mut Vec<u8>) {
        aes.leaf_hashes(0, &self.seeds, &mut self.blocks, out);
    }

    /// Output shares of all leaves, with `Convert` batched.
    pub(crate) fn outputs<R: Ring>(&mut self, key: &DpfKey<R>, aes: &FixedAes) -> Vec<R> {
        aes.convert_blocks_into(&self.seeds, &mut self.blocks, &mut self.words);
        self.seeds
            .iter()
            .zip(&self.words)
            .zip(&self.ts)
            .map(|((&s, &f), &t)| output(key, aes.convert_with_first(s, f), t))
            .collect()
    }
}
