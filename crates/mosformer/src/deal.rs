//! Dealing verified point-function keys (the offline phase of every FSS gate, paper §4-§8).
//!
//! Dealer `P_j` draws, for each of `count` instances, a point `α < 2^d`, shares it additively
//! over a ring `A`, and makes VDPF keys for `f_{α,1}` with outputs in a ring `O`. Evaluator
//! `P_{j+2}` gets key 0 and share 0, `P_{j+1}` key 1 and share 1, in one message each. The
//! evaluators expand every key over the full domain with its proof and exchange one 32-byte
//! digest ([`OneHotCheck`]) of all their proofs and of their shares of `t = Σ_k V[k]` (in `O`)
//! and `s = α - Σ_k k·V[k]` (in `A`, reducing `V` from `O`; `A` must be at least `d` bits
//! wide so that `s = 0` pins the hot position), role 1's negated and role 0's `t` less one.
//! They abort, blaming the dealer, unless the digests are equal: the proofs match (at most one
//! nonzero position per key), `t = 1` (β = 1) and `s = 0` (the hot position is the shared
//! `α`). Two rounds. The dealer keeps its own shares of every `α` (it needs them to mask
//! openings online).
//!
//! **Semi-honest, small domains** ([`deal_tables`]): where a whole table (`2^d` outputs) is
//! shorter than a key (UCMP's tables of 32 to 128 one-byte entries against keys of 170 to 200
//! bytes), the dealer deals the shares of `e_α` themselves, as a trusted dealer of correlated
//! randomness does: `P_{j+2}`'s share and `α`-share come from the generator it shares with the
//! dealer (nothing is sent to it), `P_{j+1}` gets `e_α` minus them. Each share alone is
//! uniform, so an evaluator learns nothing of `α`, as with the keys; no tree is expanded. A
//! dealer could deal a wrong table unnoticed, which is why the malicious mode keeps the
//! verified keys.

use rayon::prelude::*;
use veil_crypto::{Digest, Hasher, Prg, Seed};
use veil_fss::{DpfKey, eval_full, eval_full_verified_batch, gen_keys_batch, key_bytes};
use veil_mpc::{Ctx, MpcError, PartyId, Result};
use veil_ring::{Ring, Z2k, Z8, decode_slice, encode_slice};

use crate::rss::{next, prev};
use crate::shape::Shape;
use veil_mpc::mode::Security;

/// What one party holds after a dealing: `T` is how an evaluator keeps one expanded table
/// (the whole one-hot share vector, or a packed form of it).
#[derive(Clone, Debug)]
pub enum Dealt<T, A> {
    /// The dealer: `(share 0, share 1)` of every `α`.
    Dealer {
        /// Shares given to the role-0 evaluator.
        alpha0: Vec<A>,
        /// Shares given to the role-1 evaluator.
        alpha1: Vec<A>,
    },
    /// An evaluator's verified material.
    Evaluator(PointKeys<T, A>),
}

/// An evaluator's verified one-hot vectors and `α`-shares.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct PointKeys<T, A> {
    /// 0 or 1.
    pub role: u8,
    /// Domain bits.
    pub d: u32,
    /// Shares of the one-hot vectors `e_α` (`2^d` entries each), one per instance, as the
    /// dealing's `keep` stores them.
    pub tables: Vec<T>,
    /// Shares of `α`, one per instance.
    pub alpha: Vec<A>,
}

impl<T: Clone, A: Ring> PointKeys<T, A> {
    /// Zero material of the real shapes: the layout real material must have (stored
    /// material is checked against it); `zero` is a stored all-zero table.
    pub(crate) fn placeholder(role: u8, d: u32, count: usize, zero: T) -> Self {
        PointKeys { role, d, tables: vec![zero; count], alpha: vec![A::ZERO; count] }
    }
}

impl<T: Shape, A> Shape for PointKeys<T, A> {
    fn shape(&self, out: &mut Vec<usize>) {
        out.extend([usize::from(self.role), self.d as usize, self.alpha.len()]);
        self.tables.shape(out);
    }
}

/// The evaluators of dealer `j`: `(role 0, role 1) = (P_{j+2}, P_{j+1})`.
pub fn evaluators(dealer: PartyId) -> (PartyId, PartyId) {
    (prev(dealer), next(dealer))
}

/// The dealer's message to one evaluator: `α`-shares, then the serialized keys. Sized up front:
/// a dealing's message runs to hundreds of MiB, and growing it by doubling copied and
/// page-faulted it several times over.
pub fn dealer_message<O: Ring, A: Ring>(alpha: &[A], keys: &[DpfKey<O>]) -> Vec<u8> {
    let key_len = keys.first().map_or(0, |k| key_bytes::<O>(k.domain_bits()));
    let mut m = Vec::with_capacity(alpha.len() * A::BYTES + keys.len() * key_len);
    m.extend_from_slice(&encode_slice(alpha));
    for k in keys {
        k.write_to(&mut m);
    }
    m
}

fn reduce<O: Z2k, A: Z2k>(v: O) -> A {
    A::from_u128(v.to_u128())
}

/// Keys expanded and proved together (one proof per group).
const KEY_GROUP: usize = 64;

/// One seed per group of keys a dealer makes in parallel, each group from its own generator
/// (a generator per key would spend more AES blocks on filling its buffer than the key takes).
pub(crate) fn group_seeds(ctx: &mut Ctx, groups: usize) -> Vec<Seed> {
    (0..groups)
        .map(|_| {
            let mut s = [0u8; 16];
            ctx.rng().fill_bytes(&mut s);
            Seed(s)
        })
        .collect()
}

/// The low bits of a one-hot share vector of at most 128 entries, entry `k` at bit `k`. The
/// shares sum to `e_α` over Z_2^8 (checked when the keys were dealt), so their low bits XOR to
/// `e_α` as well: an online step that reads a table mod 2 needs nothing more.
pub(crate) fn low_bits(v: &[Z8]) -> u128 {
    v.iter().enumerate().fold(0u128, |acc, (k, e)| acc | (u128::from(e.0 & 1) << k))
}

/// A group of expanded keys: kept tables, the group's proof, and each key's `t` and `s` shares.
type CheckedGroup<T, O, A> = (Vec<T>, veil_fss::Proof, Vec<O>, Vec<A>);

/// What an evaluator of a malicious dealing still has to compare with its partner: one
/// digest of the proofs' digest and of its one-hot terms, `(t - 1, s)` for role 0 and
/// `(-t, -s)` for role 1, so that the two digests are equal exactly when the proofs agree,
/// `t_0 + t_1 = 1` and `s_0 + s_1 = 0` for every instance (except with a BLAKE3 collision).
/// The partner learns nothing it does not hold already: in an honest run the digest is a
/// function of its own terms.
#[derive(Debug)]
pub struct OneHotCheck {
    /// The dealing's dealer (blamed if the digests differ).
    pub dealer: PartyId,
    /// The other evaluator.
    pub partner: PartyId,
    /// This evaluator's digest.
    pub digest: Digest,
}

/// Exchanges the digests of several dealings' checks (every digest is sent before any is
/// received, so a party's checks as role 0 and role 1 share one round) and aborts, blaming
/// the dealer, at the first pair of digests that differ; `what` names the gate in the error.
pub fn finish_one_hot_checks(ctx: &mut Ctx, checks: &[OneHotCheck], what: &str) -> Result<()> {
    for c in checks {
        ctx.net().send(c.partner, c.digest.0.to_vec())?;
    }
    for c in checks {
        let theirs = ctx.recv_at_most(c.partner, 32)?;
        let mut d = [0u8; 32];
        if theirs.len() != 32 {
            return Err(MpcError::Malformed { from: c.partner, what: format!("{what}: check digest") });
        }
        d.copy_from_slice(&theirs);
        if !c.digest.ct_eq(&Digest(d)) {
            return Err(MpcError::abort(
                format!("{what}: VDPF verification or one-hot check (t = 1, s = 0)"),
                Some(c.dealer),
            ));
        }
    }
    Ok(())
}

/// Runs one dealing with dealer `dealer` (all three servers call it), verified in the
/// malicious mode; semi-honest evaluators expand the keys without proofs and skip the
/// exchange of proofs and one-hot checks (one message and round less). Each expanded (and, if
/// malicious, checked) table is passed through `keep` as soon as it is made, so a gate that
/// needs less than the whole vector (UCMP: its low bits) never holds more.
pub fn deal_with<O: Z2k, A: Z2k, T: Send>(
    ctx: &mut Ctx,
    dealer: PartyId,
    d: u32,
    count: usize,
    security: Security,
    keep: &(dyn Fn(&[O]) -> T + Sync),
) -> Result<Dealt<T, A>> {
    let (dealt, check) = deal_unchecked::<O, A, T>(ctx, dealer, d, count, security, keep)?;
    if let Some(check) = check {
        finish_one_hot_checks(ctx, &[check], "FSS setup")?;
    }
    Ok(dealt)
}

/// [`deal_with`] without the evaluators' exchange: a malicious evaluator gets its
/// [`OneHotCheck`] to finish with [`finish_one_hot_checks`] before the material is used.
/// Deferring the exchange lets a gate run its three dealings in any order: each server deals
/// first and then expands what it received, so the servers generate and expand at the same
/// time instead of waiting for one dealer after another.
pub fn deal_unchecked<O: Z2k, A: Z2k, T: Send>(
    ctx: &mut Ctx,
    dealer: PartyId,
    d: u32,
    count: usize,
    security: Security,
    keep: &(dyn Fn(&[O]) -> T + Sync),
) -> Result<(Dealt<T, A>, Option<OneHotCheck>)> {
    if d == 0 || d > 24 || d > A::BITS {
        return Err(MpcError::Invalid(format!(
            "point keys over 2^{d} points with α-shares in Z_2^{}",
            A::BITS
        )));
    }
    if security == Security::SemiHonest && (1usize << d) * O::BYTES < key_bytes::<O>(d) {
        return Ok((deal_tables(ctx, dealer, d, count, keep)?, None));
    }
    let b = ctx.party();
    let (e0, e1) = evaluators(dealer);
    let kb = key_bytes::<O>(d);
    if b == dealer {
        // One seed per group of instances from the party's generator, then the groups in
        // parallel (`group_seeds`), each writing its part of both messages.
        let seeds = group_seeds(ctx, count.div_ceil(KEY_GROUP));
        type Made<A> = (Vec<A>, Vec<A>, Vec<u8>, Vec<u8>);
        let made: Vec<Made<A>> = seeds
            .par_iter()
            .enumerate()
            .map(|(group, seed)| {
                let mut g = Prg::new(seed);
                let len = KEY_GROUP.min(count - group * KEY_GROUP);
                let alphas: Vec<u64> = (0..len).map(|_| g.next_u64() & ((1 << d) - 1)).collect();
                let shares0: Vec<A> = (0..len).map(|_| A::random(&mut g)).collect();
                let keys = gen_keys_batch(&alphas, O::ONE, d, &mut g)
                    .map_err(|e| MpcError::Invalid(format!("VDPF key generation: {e}")))?;
                let shares1: Vec<A> =
                    alphas.iter().zip(&shares0).map(|(&a, &s0)| A::from_u64(a) - s0).collect();
                let (mut k0, mut k1) = (Vec::with_capacity(len * kb), Vec::with_capacity(len * kb));
                for (key0, key1) in &keys {
                    key0.write_to(&mut k0);
                    key1.write_to(&mut k1);
                }
                Ok((shares0, shares1, k0, k1))
            })
            .collect::<Result<_>>()?;
        let (mut a0, mut a1) = (Vec::with_capacity(count), Vec::with_capacity(count));
        for (s0, s1, _, _) in &made {
            a0.extend_from_slice(s0);
            a1.extend_from_slice(s1);
        }
        // Each evaluator's message: its `α`-shares, then its keys group after group.
        let message = |alpha: &[A], keys: &dyn Fn(&Made<A>) -> &[u8]| {
            let mut m = Vec::with_capacity(count * (A::BYTES + kb));
            m.extend_from_slice(&encode_slice(alpha));
            made.iter().for_each(|group| m.extend_from_slice(keys(group)));
            m
        };
        ctx.net().send(e0, message(&a0, &|g| &g.2))?;
        ctx.net().send(e1, message(&a1, &|g| &g.3))?;
        return Ok((Dealt::Dealer { alpha0: a0, alpha1: a1 }, None));
    }
    let (role, partner) = if b == e0 { (0u8, e1) } else { (1u8, e0) };
    let head = count * A::BYTES;
    let msg = ctx.recv_at_most(dealer, head + count * kb)?;
    if msg.len() != head + count * kb {
        return Err(MpcError::Malformed {
            from: dealer,
            what: format!("point keys: {} bytes, expected {}", msg.len(), head + count * kb),
        });
    }
    let alpha: Vec<A> =
        decode_slice(&msg[..head]).map_err(|e| MpcError::Malformed { from: dealer, what: e.to_string() })?;
    if security == Security::SemiHonest {
        let tables: Vec<T> = msg[head..]
            .par_chunks(kb)
            .map(|chunk| {
                let bad = |e: veil_fss::FssError| MpcError::Malformed {
                    from: dealer,
                    what: format!("point key ({e})"),
                };
                Ok(keep(&eval_full(&DpfKey::<O>::from_bytes(chunk, d).map_err(bad)?).map_err(bad)?))
            })
            .collect::<Result<_>>()?;
        return Ok((Dealt::Evaluator(PointKeys { role, d, tables, alpha }), None));
    }
    // Expand and check the keys in parallel, in groups with one proof each (hashing a group's
    // leaves in one call lets BLAKE3 use SIMD); fold the group proofs in order.
    let alpha_groups: Vec<&[A]> = alpha.chunks(KEY_GROUP).collect();
    let checked: Vec<CheckedGroup<T, O, A>> = msg[head..]
        .par_chunks(kb * KEY_GROUP)
        .zip(alpha_groups.par_iter())
        .map(|(chunk, alphas)| {
            let bad = |e: veil_fss::FssError| {
                MpcError::abort(format!("FSS setup: malformed key ({e})"), Some(dealer))
            };
            let keys: Vec<DpfKey<O>> = chunk
                .chunks(kb)
                .map(|c| DpfKey::<O>::from_bytes(c, d).map_err(bad))
                .collect::<Result<_>>()?;
            let (tables, proof) = eval_full_verified_batch(role, &keys).map_err(bad)?;
            let mut ts = Vec::with_capacity(keys.len());
            let mut ss = Vec::with_capacity(keys.len());
            for (v, &alpha_i) in tables.chunks_exact(1 << d).zip(alphas.iter()) {
                // `t = Σ_k V[k]` in `O`, `s = α − Σ_k k·V[k]` in `A` (as `one_hot_checks` on
                // the reduced shares, without a copy of them), as role 0's `t - 1` or role 1's
                // `-t` and `-s` (see `OneHotCheck`).
                let t: O = v.iter().copied().sum();
                let weighted: A = (0u64..).zip(v).map(|(k, &x)| A::from_u64(k) * reduce::<O, A>(x)).sum();
                let s = alpha_i - weighted;
                if role == 0 {
                    ts.push(t - O::ONE);
                    ss.push(s);
                } else {
                    ts.push(O::ZERO - t);
                    ss.push(A::ZERO - s);
                }
            }
            Ok((tables.chunks_exact(1 << d).map(keep).collect(), proof, ts, ss))
        })
        .collect::<Result<_>>()?;
    let mut tables = Vec::with_capacity(count);
    let mut proofs = Hasher::new("mosformer/deal/proofs");
    let mut terms = Hasher::new("mosformer/deal/one-hot");
    for (v, proof, t, s) in checked {
        proofs.update(proof.as_bytes());
        terms.update(&encode_slice(&t));
        terms.update(&encode_slice(&s));
        tables.extend(v);
    }
    terms.update(&proofs.finalize().0);
    let check = OneHotCheck { dealer, partner, digest: terms.finalize() };
    Ok((Dealt::Evaluator(PointKeys { role, d, tables, alpha }), Some(check)))
}

/// The semi-honest dealing of whole tables (see the module docs): `count` shares of `e_α` over
/// `O` with `2^d` entries, and of `α` over `A`. One message, from the dealer to `P_{j+1}`.
fn deal_tables<O: Z2k, A: Z2k, T: Send>(
    ctx: &mut Ctx,
    dealer: PartyId,
    d: u32,
    count: usize,
    keep: &(dyn Fn(&[O]) -> T + Sync),
) -> Result<Dealt<T, A>> {
    const PURPOSE: &str = "mosformer/deal/tables";
    let b = ctx.party();
    let (e0, e1) = evaluators(dealer);
    let size = 1usize << d;
    // `P_{j+2}`'s shares, from the generator it shares with the dealer: `α`-shares, then tables.
    let role0 = |g: &mut Prg| -> (Vec<A>, Vec<O>) {
        let alpha: Vec<A> = (0..count).map(|_| A::random(g)).collect();
        let tables: Vec<O> = (0..count * size).map(|_| O::random(g)).collect();
        (alpha, tables)
    };
    let tables_of = |flat: Vec<O>| -> Vec<T> { flat.chunks_exact(size).map(keep).collect() };
    if b == dealer {
        let (alpha0, mut tables) = role0(&mut ctx.pair_prg(e0, PURPOSE)?);
        let mask = (1u64 << d) - 1;
        let mut alpha1 = Vec::with_capacity(count);
        for (i, a0) in alpha0.iter().enumerate() {
            let alpha = ctx.rng().next_u64() & mask;
            alpha1.push(A::from_u64(alpha) - *a0);
            // Share 1 = e_α − share 0.
            let table = &mut tables[i * size..(i + 1) * size];
            table.iter_mut().for_each(|v| *v = O::ZERO - *v);
            table[alpha as usize] += O::ONE;
        }
        let mut message = encode_slice(&alpha1);
        message.extend_from_slice(&encode_slice(&tables));
        ctx.net().send(e1, message)?;
        return Ok(Dealt::Dealer { alpha0, alpha1 });
    }
    if b == e0 {
        let (alpha, flat) = role0(&mut ctx.pair_prg(dealer, PURPOSE)?);
        return Ok(Dealt::Evaluator(PointKeys { role: 0, d, tables: tables_of(flat), alpha }));
    }
    let want = count * (A::BYTES + size * O::BYTES);
    let msg = ctx.recv_at_most(dealer, want)?;
    if msg.len() != want {
        return Err(MpcError::Malformed {
            from: dealer,
            what: format!("point tables: {} bytes, expected {want}", msg.len()),
        });
    }
    let malformed = |e: veil_ring::RingError| MpcError::Malformed { from: dealer, what: e.to_string() };
    let alpha: Vec<A> = decode_slice(&msg[..count * A::BYTES]).map_err(malformed)?;
    let flat: Vec<O> = decode_slice(&msg[count * A::BYTES..]).map_err(malformed)?;
    Ok(Dealt::Evaluator(PointKeys { role: 1, d, tables: tables_of(flat), alpha }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]
    use veil_mpc::harness::{all_ok, simulate};
    use veil_ring::Z8;

    use super::*;

    /// Semi-honest small-domain dealings are whole tables: the evaluators' shares add up to
    /// `e_α` at the `α` their shares add up to (and the dealer's shares are theirs), `P_{j+2}`
    /// receives nothing and `P_{j+1}` one table and one `α`-share per instance.
    #[test]
    fn semi_honest_tables_are_shares_of_e_alpha_at_the_shared_alpha() {
        let (d, count) = (5u32, 40usize);
        for dealer in 0..3 {
            let out = all_ok(simulate(3, 11, |ctx| {
                let before = ctx.stats().current();
                let dealt = deal_with::<Z8, Z8, Vec<Z8>>(
                    ctx,
                    dealer,
                    d,
                    count,
                    Security::SemiHonest,
                    &<[Z8]>::to_vec,
                )?;
                Ok((dealt, ctx.stats().current().since(&before).bytes_received))
            }))
            .unwrap();
            let (e0, e1) = evaluators(dealer);
            let (Dealt::Evaluator(k0), Dealt::Evaluator(k1)) = (&out[e0].0, &out[e1].0) else {
                panic!("the evaluators hold tables");
            };
            let Dealt::Dealer { alpha0, alpha1 } = &out[dealer].0 else {
                panic!("the dealer holds α-shares")
            };
            assert_eq!((k0.role, k1.role), (0, 1));
            assert_eq!((&k0.alpha, &k1.alpha), (alpha0, alpha1));
            for i in 0..count {
                let alpha = (k0.alpha[i] + k1.alpha[i]).0 as usize & ((1 << d) - 1);
                for (x, (a, b)) in k0.tables[i].iter().zip(&k1.tables[i]).enumerate() {
                    assert_eq!(*a + *b, if x == alpha { Z8::ONE } else { Z8::ZERO }, "instance {i}, x = {x}");
                }
            }
            assert_eq!(out[e0].1, 0, "P_(j+2) derives its shares");
            assert_eq!(out[e1].1, (count * (1 + (1 << d))) as u64);
            // Two dealings draw fresh shares.
            assert_ne!(k0.tables[0], k0.tables[1]);
        }
    }
}
