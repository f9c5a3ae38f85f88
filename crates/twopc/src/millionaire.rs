//! The millionaires' protocol of CrypTFlow2 (Rathee et al., "CrypTFlow2: Practical 2-Party
//! Secure Inference", §3) with the correlated AND triples of M&M (App. B): P0 holds `x`, P1
//! holds `y`, both `ℓ`-bit; they get Boolean shares of `1{x < y}`.
//!
//! 1. Split into `D = ⌈ℓ/4⌉` digits of `m = 4` bits (the top digit zero-padded, which keeps
//!    the order).
//! 2. **Leaves**: one 1-out-of-16 OT per digit (1-out-of-2^r for a top digit of `r < 4`
//!    bits). P0 draws `(s_lt, s_eq)` and offers, for each `j`, `(s_lt ⊕ 1{x_i < j},
//!    s_eq ⊕ 1{x_i = j})`; P1 picks `j = y_i`. The least significant digit's `eq` is never
//!    used (see 3), so its messages are the `lt` bit alone.
//! 3. **Tree**, bottom-up, pairing digits `(2i, 2i+1)` (`2i+1` more significant):
//!    `lt = lt_hi ⊕ (eq_hi ∧ lt_lo)`, `eq = eq_hi ∧ eq_lo`. The two ANDs share `eq_hi`, so
//!    they take one correlated triple; the least significant node of a level needs no `eq`,
//!    so it takes a plain AND. An odd node out moves up unchanged.
//!
//! Cost per comparison: `ℓ` bits from P1 and `Σ_i 2^{r_i}·w_i` from P0 for the leaves
//! (`32·D − 16` when 4 divides ℓ), then per
//! AND 2 bits and per correlated pair 3 bits from each party; latency rounds as `CommStats`
//! counts them: `1 + ⌈log2 D⌉` (P0's first openings go out with its leaf messages). Triples
//! come from random OT and send nothing beyond the COT engine's own traffic. (The M&M paper
//! counts `36·D` bits for the leaves, every digit with both bits.)

use veil_mpc::cost::Cost;
use veil_mpc::{Ctx, MpcError, Result};
use veil_ot::Block;
use veil_ot::flavours::{Shape, one_of_n_receive_rows, one_of_n_send_rows};

use crate::TwoParty;
use crate::bits::{Triples, and_gates, triples};

/// Bits per digit.
pub const DIGIT_BITS: u32 = 4;

/// The digits of an `ℓ`-bit comparison.
pub fn digits(bits: u32) -> usize {
    bits.div_ceil(DIGIT_BITS).max(1) as usize
}

/// The leaf OT of digit `i` (0 the least significant) of `d`: 1-of-2^r for a digit of `r`
/// bits (the top one may be short), messages `(lt, eq)`, or `lt` alone for digit 0 (its `eq`
/// is never used).
fn leaf_shape(bits: u32, d: usize, i: usize) -> Shape {
    let log_n = if i + 1 == d { bits - DIGIT_BITS * (d as u32 - 1) } else { DIGIT_BITS };
    Shape { log_n, bits: if i == 0 { 1 } else { 2 } }
}

/// Bits P1 and P0 send for one comparison's leaves: its digits' bits, and the rows.
fn leaf_bits(bits: u32) -> (usize, usize) {
    let d = digits(bits);
    (0..d)
        .map(|i| leaf_shape(bits, d, i))
        .fold((0, 0), |(c, r), s| (c + s.log_n as usize, r + ((s.bits as usize) << s.log_n)))
}

/// Nodes per level of the tree over `d` leaves, from the leaves up (the last level has 1).
fn levels(d: usize) -> Vec<usize> {
    let mut out = vec![d];
    while *out.last().unwrap_or(&1) > 1 {
        let n = *out.last().unwrap_or(&1);
        out.push(n.div_ceil(2));
    }
    out
}

/// (plain ANDs, correlated pairs) of one comparison over `d` leaves.
pub fn gates(d: usize) -> (usize, usize) {
    let (mut plain, mut corr) = (0, 0);
    for &n in &levels(d)[..levels(d).len() - 1] {
        let pairs = n / 2;
        if pairs > 0 {
            plain += 1;
            corr += pairs - 1;
        }
    }
    (plain, corr)
}

/// Declared online cost at one party of `n` comparisons of `bits`-bit values, after the COTs
/// were made ahead (`first`: whether the party is P0).
pub fn cost(n: usize, bits: u32, first: bool) -> Cost {
    let d = digits(bits);
    let (choices, rows) = leaf_bits(bits);
    let leaf_bits = n * if first { rows } else { choices };
    let tree = levels(d).len() - 1;
    let mut bytes = leaf_bits.div_ceil(8) as u64;
    // The leaves' 1-of-16 OTs go a piece at a time: one message per piece each way.
    let mut messages = (n * d).div_ceil(veil_ot::flavours::PIECE) as u64;
    for w in levels(d).windows(2) {
        let pairs = w[0] / 2;
        if pairs == 0 {
            continue;
        }
        let open = n * (2 + 3 * (pairs - 1));
        bytes += open.div_ceil(8) as u64;
        messages += 1;
    }
    Cost { bytes_sent: bytes, messages_sent: messages, rounds: 1 + tree as u64 }
}

/// COTs that `n` comparisons use: `(P0 sending, P1 sending)`, for making them ahead.
pub fn cots_needed(n: usize, bits: u32) -> (usize, usize) {
    let (plain, corr) = gates(digits(bits));
    // Leaves: one COT per input bit from P0; triples: one random OT each way per gate.
    (n * (leaf_bits(bits).0 + plain + corr), n * (plain + corr))
}

/// Boolean shares of `1{x < y}`: P0 passes its `x` values, P1 its `y` values (each below
/// `2^bits`, `1 ≤ bits ≤ 64`).
pub fn less_than(tp: &mut TwoParty, ctx: &mut Ctx, mine: &[u64], bits: u32) -> Result<Vec<bool>> {
    if !(1..=64).contains(&bits) {
        return Err(MpcError::Invalid(format!("comparison of {bits}-bit values")));
    }
    if bits < 64 && mine.iter().any(|&v| v >> bits != 0) {
        return Err(MpcError::Invalid(format!("a comparison input does not fit {bits} bits")));
    }
    let n = mine.len();
    let d = digits(bits);
    let digit = |v: u64, i: usize| ((v >> (DIGIT_BITS as usize * i)) & 15) as usize;
    // Leaves: digit-major layout, leaf (c, i) at c·d + i.
    let (mut lt, mut eq) = (vec![false; n * d], vec![false; n * d]);
    let shape = |k: usize| leaf_shape(bits, d, k % d);
    if tp.is_first() {
        let mut coins = vec![0u8; (n * d).div_ceil(4)];
        ctx.rng().fill_bytes(&mut coins);
        for k in 0..n * d {
            lt[k] = coins[k / 4] >> (2 * (k % 4)) & 1 == 1;
            eq[k] = k % d != 0 && coins[k / 4] >> (2 * (k % 4) + 1) & 1 == 1;
        }
        let rows = LeafRows::new();
        let (lt, eq) = (&lt, &eq);
        one_of_n_send_rows(ctx, tp.sender(), n * d, shape, |k, row| {
            let x = digit(mine[k / d], k % d);
            row[0] = if k.is_multiple_of(d) { rows.lt_only(x, lt[k]) } else { rows.lt_eq(x, lt[k], eq[k]) };
        })?;
    } else {
        let index: Vec<usize> = (0..n * d).map(|k| digit(mine[k / d], k % d)).collect();
        let got = one_of_n_receive_rows(ctx, tp.receiver(), shape, &index)?;
        for (k, m) in got.into_iter().enumerate() {
            lt[k] = m & 1 == 1;
            eq[k] = m >> 1 & 1 == 1;
        }
    }
    // Triples for the whole tree, made before it runs.
    let (plain, corr) = gates(d);
    let mut t_plain = triples(tp, ctx, n * plain, 1)?;
    let mut t_corr = triples(tp, ctx, n * corr, 2)?;
    let mut width = d;
    while width > 1 {
        let pairs = width / 2;
        let next = width.div_ceil(2);
        // Plain AND for pair 0 of every comparison; correlated for pairs 1.. .
        let (mut px, mut py) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut cx, mut cy, mut cy2) = (Vec::new(), Vec::new(), Vec::new());
        for c in 0..n {
            let base = c * width;
            px.push(eq[base + 1]);
            py.push(lt[base]);
            for p in 1..pairs {
                cx.push(eq[base + 2 * p + 1]);
                cy.push(lt[base + 2 * p]);
                cy2.push(eq[base + 2 * p]);
            }
        }
        let tp_plain = take(&mut t_plain, n);
        let tp_corr = take(&mut t_corr, n * (pairs - 1));
        // One round: both openings go out before either is read.
        let (z0, (z1, z2)) = and_gates(tp, ctx, (&px, &py, &tp_plain), (&cx, &cy, &cy2, &tp_corr))?;
        let (mut nlt, mut neq) = (vec![false; n * next], vec![false; n * next]);
        for (c, &z) in z0.iter().enumerate() {
            let (base, nbase) = (c * width, c * next);
            nlt[nbase] = lt[base + 1] ^ z;
            for p in 1..pairs {
                let k = c * (pairs - 1) + p - 1;
                nlt[nbase + p] = lt[base + 2 * p + 1] ^ z1[k];
                neq[nbase + p] = z2[k];
            }
            if width % 2 == 1 {
                nlt[nbase + pairs] = lt[base + width - 1];
                neq[nbase + pairs] = eq[base + width - 1];
            }
        }
        lt = nlt;
        eq = neq;
        width = next;
    }
    Ok(lt)
}

/// The leaves' 16 messages for each digit value `x`, packed as a row (message `j` at bit
/// `j·w`): `1{x < j}` (w = 1), or `1{x < j}` and `1{x = j}` (w = 2, `lt` the low bit).
struct LeafRows {
    lt: [Block; 16],
    lt_eq: [Block; 16],
}

impl LeafRows {
    fn new() -> Self {
        let row = |x: usize, w: usize, eq: bool| {
            (0..16usize).fold(0u128, |acc, j| {
                acc | u128::from(x < j) << (w * j) | u128::from(eq && x == j) << (w * j + 1)
            })
        };
        LeafRows {
            lt: std::array::from_fn(|x| row(x, 1, false)),
            lt_eq: std::array::from_fn(|x| row(x, 2, true)),
        }
    }

    /// Row of a digit with `lt` only, masked by P0's coin.
    fn lt_only(&self, x: usize, coin: bool) -> Block {
        self.lt[x] ^ if coin { 0xFFFF } else { 0 }
    }

    /// Row of a digit with `(lt, eq)`, masked by P0's coins.
    fn lt_eq(&self, x: usize, coin_lt: bool, coin_eq: bool) -> Block {
        self.lt_eq[x] ^ if coin_lt { 0x5555_5555 } else { 0 } ^ if coin_eq { 0xAAAA_AAAA } else { 0 }
    }
}

/// Takes the first `n` triples off `t`.
fn take(t: &mut Triples, n: usize) -> Triples {
    let rest = Triples { x: t.x.split_off(n), y: t.y.split_off(n), z: t.z.split_off(n) };
    std::mem::replace(t, rest)
}
