//! Π_UCMP: comparison of a secret unsigned value with a public one between an evaluator pair,
//! with VDPF keys dealt by the third party (paper Algorithm 1).
//!
//! DReLU compares a value its dealer knows, and uses [`crate::dcmp`] (by digits, a fifth of the
//! material) instead; this per-bit form stays for bit-shared values and as the paper's baseline
//! (`veil bench ops --family mosformer --op compare`).
//!
//! The evaluators hold 2-of-2 additive shares of the bits `x[i]` of an `n`-bit `x`; `y` is
//! public. With `u[i] = x[i] - y[i]`, `w[i] = x[i] ⊕ y[i]` and
//! `c[i] = u[i] + 1 + Σ_{j>i} w[j]`: if `x ≥ y` every `c[i] > 0`, and if `x < y` exactly one
//! `c[i] = 0` (at the highest differing bit). So `1{x < y} = Σ_i 1{c[i] = 0}`, and since
//! `0 ≤ c[i] ≤ n`, a point function on a domain of `2^d ≥ 2n` points detects the zero.
//!
//! **Ring.** Bits, `c`, `α` and the VDPF outputs live in Z_2^8 (`n ≤ 64`), and the VDPF
//! domain is `2^d` with `d = ⌈log2(2n)⌉`: a power of two, so that the
//! opened `δ` reduces consistently and `res` reduces to an XOR share mod 2.
//!
//! **Offline, by the parties** ([`setup`], 2 rounds): the dealer `P_j` draws `α[i] < 2^d` per
//! bit, shares it, makes VDPF keys for `f_{α[i],1}` and sends each evaluator its keys and
//! `α`-shares (`P_{j+1}` gets key 1, `P_{j+2}` key 0). The evaluators expand every key over the
//! full domain with its proof and exchange one message: a hash of all their proofs, and their
//! shares of `t = Σ V` and `s = α - Σ_k k·V[k]` per key. They abort unless the proofs match
//! (at most one nonzero position per key), `t = 1` (β = 1) and `s = 0` (the hot position is the
//! shared `α`). A malicious dealer is therefore caught before any key is used.
//!
//! **Online** ([`eval`], 1 round): `δ[i] = c[i] + α[i] mod 2^d` is opened within the pair
//! (`d` bits per compared bit, packed), and `res = ⊕_i V_i[δ[i]] mod 2`: the entry is hot
//! exactly when `c[i] = 0`, and at most one is. After the checks an evaluator keeps only the
//! low bit of each table entry (XOR shares of `e_α`, 16 bytes per table instead of `2^d`).
//! Each key is used once; `α` masks `c`.
//!
//! **Security of the online step**: semi-honest within the pair (as in the paper); an additive
//! error on `δ` is caught later by the MAC of the gate that uses UCMP. Whether such an error
//! changes `res` depends on `c[i]` (a selective-failure predicate); this is accepted here as in the paper and listed as a known limitation.

use veil_mpc::wire::{pack_bits, packed_len, unpack_bits};
use veil_mpc::{Ctx, MpcError, PartyId, Result};
use veil_ring::{Ring, Z8};

use crate::deal::{Dealt, deal_with, low_bits};
use crate::shape::Shape;
use veil_mpc::mode::Security;

/// Largest number of bits a UCMP compares: public values are `u64` (and the domain `2n = 128`
/// fits Z_2^8).
pub const MAX_BITS: usize = 64;

/// VDPF domain bits for `n`-bit values: `⌈log2(2n)⌉`.
pub fn domain_bits(n: usize) -> u32 {
    (2 * n).next_power_of_two().trailing_zeros()
}

/// One evaluator's verified material for `count` comparisons of `bits`-bit values.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct UcmpKeys {
    role: u8,
    bits: usize,
    count: usize,
    /// The low bits of the one-hot share vectors (`2^d ≤ 128` entries; entry `k` is bit `k`),
    /// `count · bits` of them: XOR shares of `e_α`, all the online step reads.
    tables: Vec<u128>,
    /// Shares of `α`, one per table.
    alpha: Vec<Z8>,
}

impl UcmpKeys {
    /// 0 or 1: which key of each pair this evaluator holds.
    pub fn role(&self) -> u8 {
        self.role
    }

    /// Comparisons this material serves.
    pub fn count(&self) -> usize {
        self.count
    }
}

impl Shape for UcmpKeys {
    fn shape(&self, out: &mut Vec<usize>) {
        out.extend([usize::from(self.role), self.bits, self.count, self.tables.len(), self.alpha.len()]);
    }
}

fn check_args(bits: usize) -> Result<u32> {
    if bits == 0 || bits > MAX_BITS {
        return Err(MpcError::Invalid(format!("UCMP compares 1 to {MAX_BITS} bits, not {bits}")));
    }
    Ok(domain_bits(bits))
}

pub use crate::deal::{dealer_message, evaluators};

/// Runs the offline phase for dealer `dealer`: all three parties call it; the evaluators get
/// verified material, the dealer `None`. (The dealing itself is `crate::deal::deal_with`.)
pub fn setup(ctx: &mut Ctx, dealer: PartyId, bits: usize, count: usize) -> Result<Option<UcmpKeys>> {
    setup_with(ctx, dealer, bits, count, Security::Malicious)
}

/// [`setup`] in a given mode (semi-honest: keys not verified).
pub fn setup_with(
    ctx: &mut Ctx,
    dealer: PartyId,
    bits: usize,
    count: usize,
    security: Security,
) -> Result<Option<UcmpKeys>> {
    let d = check_args(bits)?;
    match deal_with::<Z8, Z8, u128>(ctx, dealer, d, bits * count, security, &low_bits)? {
        Dealt::Dealer { .. } => Ok(None),
        Dealt::Evaluator(k) => {
            Ok(Some(UcmpKeys { role: k.role, bits, count, tables: k.tables, alpha: k.alpha }))
        }
    }
}

/// Online comparison: this evaluator's shares of the bits of each `x` (LSB first, `bits` per
/// value, `count` values) and the public `y`s; returns this evaluator's XOR share of `1{x < y}`
/// (a bit, as a Z_2^8 element).
pub fn eval(ctx: &mut Ctx, keys: &UcmpKeys, partner: PartyId, x_bits: &[Z8], y: &[u64]) -> Result<Vec<Z8>> {
    let pending = eval_send(ctx, keys, partner, x_bits, y)?;
    eval_recv(ctx, keys, pending)
}

/// A comparison whose δ is sent and whose partner's δ is not yet received.
#[derive(Debug)]
pub struct PendingCompare {
    partner: PartyId,
    mine: Vec<u8>,
}

/// First half of [`eval`]: compute and send δ (so that several comparisons share a round).
pub fn eval_send(
    ctx: &mut Ctx,
    keys: &UcmpKeys,
    partner: PartyId,
    x_bits: &[Z8],
    y: &[u64],
) -> Result<PendingCompare> {
    let (n, count) = (keys.bits, keys.count);
    if x_bits.len() != n * count || y.len() != count {
        return Err(MpcError::Invalid(format!(
            "UCMP of {count} values of {n} bits: got {} bit shares and {} public values",
            x_bits.len(),
            y.len()
        )));
    }
    let lead = keys.role == 0; // adds the public constants
    let one = if lead { Z8::ONE } else { Z8::ZERO };
    let mut delta = Vec::with_capacity(n * count);
    for (v, &yv) in y.iter().enumerate() {
        let xs = &x_bits[v * n..(v + 1) * n];
        let mut suffix = Z8::ZERO; // Σ_{j>i} [[w[j]]]
        let mut c = vec![Z8::ZERO; n];
        for i in (0..n).rev() {
            let yi = Z8::from_u64((yv >> i) & 1);
            let u = xs[i] - if lead { yi } else { Z8::ZERO };
            c[i] = u + one + suffix;
            let w = if yi == Z8::ZERO { xs[i] } else { one - xs[i] };
            suffix += w;
        }
        for (i, ci) in c.into_iter().enumerate() {
            delta.push(ci + keys.alpha[v * n + i]);
        }
    }
    // δ is only needed mod 2^d: send d bits per value (the paper's n·log2(2n) bits; its
    // released code sends a byte).
    let d = domain_bits(n);
    let low = ((1u16 << d) - 1) as u8;
    let mine: Vec<u8> = delta.iter().map(|v| v.0 & low).collect();
    ctx.net().send(partner, pack_bits(&mine, d))?;
    Ok(PendingCompare { partner, mine })
}

/// Second half of [`eval`]: receive the partner's δ and read the one-hot tables.
pub fn eval_recv(ctx: &mut Ctx, keys: &UcmpKeys, pending: PendingCompare) -> Result<Vec<Z8>> {
    let (n, count) = (keys.bits, keys.count);
    let d = domain_bits(n);
    let mine = pending.mine;
    let bytes = ctx.recv_at_most(pending.partner, packed_len(d, mine.len()))?;
    let theirs = unpack_bits(pending.partner, &bytes, d, mine.len())?;
    let mask = (1usize << d) - 1;
    Ok((0..count)
        .map(|v| {
            (0..n).fold(0u8, |acc, i| {
                let k = v * n + i;
                let at = mine[k].wrapping_add(theirs[k]) as usize & mask;
                acc ^ ((keys.tables[k] >> at) & 1) as u8
            })
        })
        .map(Z8)
        .collect())
}
