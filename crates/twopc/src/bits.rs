//! Boolean shares (`x = x_0 ⊕ x_1`) and AND gates with triples made from random OT.
//!
//! **Triples from two random OTs** (M&M App. B, extending Asharov et al., "More Efficient
//! Oblivious Transfer and Extensions for Faster Secure Computation", Alg. 1). With ROT #1
//! (P0 sends `(u_0, u_1)`, P1 chooses `c_1`) and ROT #2 (P1 sends `(v_0, v_1)`, P0 chooses
//! `c_0`), each of `w` bits:
//!
//! ```text
//! P0: x_0 = c_0,  y_0 = u_0 ⊕ u_1,  z_0 = x_0·y_0 ⊕ u_0 ⊕ v_{c_0}
//! P1: x_1 = c_1,  y_1 = v_0 ⊕ v_1,  z_1 = x_1·y_1 ⊕ v_0 ⊕ u_{c_1}
//! ```
//!
//! gives `z = x·y` on each of the `w` bits of `y` (`u_0 ⊕ u_{c_1} = c_1·(u_0 ⊕ u_1)`). With
//! `w = 1` it is a plain AND triple; with `w = 2` a *correlated* triple `(x, y, y', z, z')`,
//! two ANDs that share their left input, as the millionaires' tree needs. Random OT from COT
//! sends nothing, so triples cost only the COTs (under a bit each with Ferret).
//!
//! **Evaluation** (Beaver): open `d = x ⊕ a` and `e = y ⊕ b` (and `e' = y' ⊕ b'`), then
//! `z = c ⊕ d·b ⊕ e·a ⊕ [P0] d·e`: 2 bits per party per AND, 3 per correlated pair, 1 round.

use veil_mpc::{Ctx, Result};
use veil_ot::block::pack_bits;
use veil_ot::flavours::{random_ot_receive, random_ot_send};

use crate::TwoParty;
use crate::wire::recv_bits;

/// One party's share of `w`-bit-wide AND triples: `x` one bit, `y` and `z` of `w` bits each.
#[derive(Clone, Debug, Default)]
pub struct Triples {
    /// Left inputs.
    pub x: Vec<bool>,
    /// Right inputs, `w` bits each (bit `j` of `y[i]`).
    pub y: Vec<u8>,
    /// Products, `w` bits each.
    pub z: Vec<u8>,
}

/// Triples made per batch of random OTs (a batch's blocks stay a few MiB).
const BATCH: usize = 1 << 16;

/// `n` AND triples of width `w` (1 or 2) from two random OTs each.
pub fn triples(tp: &mut TwoParty, ctx: &mut Ctx, n: usize, w: u32) -> Result<Triples> {
    let mask = (1u8 << w) - 1;
    let lo = |m: u128| (m as u8) & mask;
    let mut t = Triples { x: Vec::with_capacity(n), y: Vec::with_capacity(n), z: Vec::with_capacity(n) };
    for start in (0..n).step_by(BATCH) {
        let size = BATCH.min(n - start);
        // ROT #1: P0 sends; ROT #2: P1 sends. Random OT sends nothing, so the order only has
        // to match between the parties.
        let (sent, (choices, chosen)) = if tp.is_first() {
            let s = random_ot_send(ctx, tp.sender(), size)?;
            (s, random_ot_receive(ctx, tp.receiver(), size)?)
        } else {
            let r = random_ot_receive(ctx, tp.receiver(), size)?;
            (random_ot_send(ctx, tp.sender(), size)?, r)
        };
        for i in 0..size {
            let (m0, m1) = (lo(sent[i].0), lo(sent[i].1));
            let y = m0 ^ m1;
            let z = (if choices[i] { y } else { 0 }) ^ m0 ^ lo(chosen[i]);
            t.x.push(choices[i]);
            t.y.push(y);
            t.z.push(z);
        }
    }
    Ok(t)
}

/// Plain ANDs: left inputs, right inputs, and plain triples (width 1).
pub type PlainAnds<'a> = (&'a [bool], &'a [bool], &'a Triples);
/// Correlated pairs: shared left inputs, the two right inputs, and correlated triples (width 2).
pub type CorrelatedAnds<'a> = (&'a [bool], &'a [bool], &'a [bool], &'a Triples);

/// What [`and_gates`] returns: the plain ANDs, and the two outputs of the correlated pairs.
pub type AndOutputs = (Vec<bool>, (Vec<bool>, Vec<bool>));

/// Plain ANDs and correlated pairs together, in one round: one message each way carrying
/// every opening. Returns `(x ∧ y, (x' ∧ y', x' ∧ y2'))`.
pub fn and_gates(
    tp: &TwoParty,
    ctx: &mut Ctx,
    plain: PlainAnds<'_>,
    corr: CorrelatedAnds<'_>,
) -> Result<AndOutputs> {
    let (px, py, pt) = plain;
    let (cx, cy, cy2, ct) = corr;
    let (n, m) = (px.len(), cx.len());
    let mut open = Vec::with_capacity(2 * n + 3 * m);
    for i in 0..n {
        open.push(px[i] ^ pt.x[i]);
        open.push(py[i] ^ (pt.y[i] & 1 == 1));
    }
    for i in 0..m {
        open.push(cx[i] ^ ct.x[i]);
        open.push(cy[i] ^ (ct.y[i] & 1 == 1));
        open.push(cy2[i] ^ (ct.y[i] >> 1 == 1));
    }
    ctx.net().send(tp.peer(), pack_bits(&open))?;
    let theirs = recv_bits(ctx, tp.peer(), open.len(), "AND gates: openings")?;
    let d: Vec<bool> = open.iter().zip(&theirs).map(|(a, b)| a ^ b).collect();
    let first = tp.is_first();
    let z = (0..n)
        .map(|i| {
            let (dx, dy) = (d[2 * i], d[2 * i + 1]);
            let (a, b, c) = (pt.x[i], pt.y[i] & 1 == 1, pt.z[i] & 1 == 1);
            c ^ (dx & b) ^ (dy & a) ^ (first & dx & dy)
        })
        .collect();
    let (mut z1, mut z2) = (Vec::with_capacity(m), Vec::with_capacity(m));
    for i in 0..m {
        let o = 2 * n + 3 * i;
        let (dx, dy, dy2) = (d[o], d[o + 1], d[o + 2]);
        let (a, b, b2) = (ct.x[i], ct.y[i] & 1 == 1, ct.y[i] >> 1 == 1);
        let (c, c2) = (ct.z[i] & 1 == 1, ct.z[i] >> 1 == 1);
        z1.push(c ^ (dx & b) ^ (dy & a) ^ (first & dx & dy));
        z2.push(c2 ^ (dx & b2) ^ (dy2 & a) ^ (first & dx & dy2));
    }
    Ok((z, (z1, z2)))
}

/// `x ∧ y` elementwise, with plain triples `t` (at least `x.len()` of them).
pub fn and(tp: &TwoParty, ctx: &mut Ctx, x: &[bool], y: &[bool], t: &Triples) -> Result<Vec<bool>> {
    let none = Triples::default();
    Ok(and_gates(tp, ctx, (x, y, t), (&[], &[], &[], &none))?.0)
}
