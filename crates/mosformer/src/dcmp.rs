//! Π_DCMP: comparison of a value the dealer knows with a value its evaluator pair knows, by
//! digits — the comparison inside [`crate::drelu`], with a fraction of the per-bit UCMP's
//! material ([`crate::ucmp`], the paper's Algorithm 1).
//!
//! **Setting.** Dealer `P_j` knows `y ∈ [0, 2^n)` (in DReLU, `y = 2^{ℓ-1} - 1 - ((-r) mod
//! 2^{ℓ-1})`, made from its own mask `r`); its evaluators `P_{j+2}` (role 0) and `P_{j+1}`
//! (role 1) learn a public `v ∈ [0, 2^n)` online (`x̂ mod 2^{ℓ-1}`). They get XOR shares of
//! `1{y < v}`. The per-bit UCMP shares the bits of `y` and deals one point function per bit
//! (31 keys over 64 points at `ℓ = 32`); here the dealer's knowledge of `y` is used directly.
//!
//! **Digits.** `n` bits are cut into `D` digits of at most [`MAX_DIGIT_BITS`] bits ([`plan`];
//! `31 = 6 + 5·5`). For digit `i` of `y` the dealer deals a point function at
//! `α = y_i` itself (outputs in the working ring `Z_2^ℓ`); an evaluator's full-domain
//! expansion `V_i` is its share of the one-hot vector `e_{y_i}`. At the public digit `v_i`,
//! `eq_i = V_i[v_i]` shares `1{y_i = v_i}` and `lt_i = Σ_{k < v_i} V_i[k]` shares
//! `1{y_i < v_i}`, with no communication. Then
//!
//! `c_i = (1 - lt_i) + Σ_{j > i} (1 - eq_j)` (linear in the shares)
//!
//! is 0 exactly at the highest differing digit when `y < v`, and positive everywhere else:
//! above that digit `lt = 0`, below it the differing digit adds 1, and if `y ≥ v` no digit has
//! `lt = 1` where all higher digits are equal. So `1{y < v} = Σ_i 1{c_i = 0}` with at most one
//! term 1, and `0 ≤ c_i ≤ D`: the second half of the per-bit UCMP applies unchanged — zero
//! tests by point functions over `2^{d'}` points, `d' = ⌈log2(D + 1)⌉`, at random `α'_i`
//! (`crate::deal`), `δ_i = c_i + α'_i mod 2^{d'}` opened within the pair (one round), and
//! `res = ⊕_i W_i[δ_i] mod 2`.
//!
//! **Cost** at `ℓ = 32` (`n = 31`), per comparison and evaluator: six digit keys (one over 64
//! points, five over 32) and six zero-test keys over 8 points, 1 846 bytes and 272 leaves to
//! expand, against 31 keys over 64 points (5 704 bytes, 1 984 leaves); online 6 × 3 bits
//! against 31 × 6. Six-bit digits: eight-bit ones need 24% fewer bytes but 3.4× the leaves,
//! and expanding and hashing leaves is the time (DReLU at 10^4: 3 216 B and 1.60 s per element
//! and server with eight bits, 4 124 B and 0.93 s with six, 4 570 B and 0.98 s with five). An
//! evaluator keeps each digit's shares mod `2^{d'}` as `d'` bit planes, so a prefix sum is `d'`
//! population counts.
//!
//! **Checks against a malicious dealer** (its evaluators are then honest; see
//! `docs/mosformer-drelu.md`): the VDPF proofs (at most one nonzero entry per digit key), `t_i =
//! Σ_k V_i[k] = 1` (so the entry is 1: `V_i` is exactly `e_{p_i}` for some `p_i < 2^{w_i}`),
//! and a linear relation the caller ties to `y' = Σ_i 2^{o_i}·p_i` (the evaluators' shares of
//! `Σ_k k·V_i[k]`, [`DigitChecks`]): in DReLU, `r + c·2^{ℓ-1} + 2^{ℓ-1} - 1 - y' = 0`, which
//! with `c ∈ {0, 1}` and `y' < 2^{ℓ-1}` (every `p_i` is in range by construction) admits only
//! the honest `c` and `y`. Every check compares values that are equal in an honest run (the
//! proofs) or sums that are 0, so the evaluators exchange one 32-byte digest of all of them
//! ([`finish_checks`]): equal digests mean equal inputs except with a BLAKE3 collision, and a
//! digest tells the partner nothing it does not hold already. The zero-test keys are dealt and
//! checked as the UCMP's (`crate::deal`: proofs, `t = 1`, `s = 0`), their digest folded into
//! the same exchange. Nothing of a dealing's check is sent before [`finish_checks`], so a gate
//! may run its three dealings in any order (each server its own first, see
//! [`crate::drelu`]).
//!
//! **Security of the online step** (as [`crate::ucmp`]): semi-honest within the pair; an
//! additive error on `δ_i` changes `res` only if `c_i` takes one particular value (a
//! selective-failure predicate, now on a digit-level `c_i`, accepted as in the paper); the MAC
//! of the gate that uses the comparison catches the changed result.
//!
//! **Semi-honest mode**: the dealer deals the digit tables themselves (the `d'`-bit planes,
//! role 0's from the generator it shares with the dealer), 24 bytes for a 64-point digit,
//! and nothing is checked.

use rayon::prelude::*;
use veil_crypto::{Digest, Hasher, Prg};
use veil_fss::{DpfKey, eval_full_verified_batch, gen_keys_batch, key_bytes};
use veil_mpc::wire::{pack_bits, packed_len, unpack_bits};
use veil_mpc::{Ctx, MpcError, PartyId, Result};
use veil_ring::{Ring, Z2k, Z8, encode_slice};

use crate::deal::{Dealt, deal_unchecked, evaluators, group_seeds, low_bits};
use crate::shape::Shape;
use veil_mpc::mode::Security;

/// Widest digit: a digit of `w` bits is a point function over `2^w` points.
pub const MAX_DIGIT_BITS: u32 = 6;

/// Largest number of bits compared (public values are `u64`).
pub const MAX_BITS: usize = 63;

/// Digit widths (least significant first) for `n`-bit values: `⌈n / 6⌉` digits as equal as
/// possible, the wider ones first.
pub fn plan(n: usize) -> Vec<u32> {
    let w = MAX_DIGIT_BITS as usize;
    let d = n.div_ceil(w).max(1);
    (0..d).map(|i| (n / d + usize::from(i < n % d)) as u32).collect()
}

/// Bits of the zero tests' domain: room for `c ∈ [0, D]`.
fn zero_bits(digits: usize) -> u32 {
    (digits + 1).next_power_of_two().trailing_zeros().max(1)
}

/// 64-bit words of one bit plane of a `w`-bit digit's table.
fn plane_words(w: u32) -> usize {
    ((1usize << w) / 64).max(1)
}

/// The layout of one comparison's digit tables: widths, bit offsets and word offsets.
#[derive(Clone, Debug)]
struct Layout {
    /// Digit widths in bits, least significant digit first.
    widths: Vec<u32>,
    /// Each digit's lowest bit in the compared value.
    offsets: Vec<u32>,
    /// Each digit's first word within a comparison's tables.
    words: Vec<usize>,
    /// Words of one comparison's tables (all digits, `zb` planes each).
    stride: usize,
    /// Bits of the zero tests' domain.
    zb: u32,
}

impl Layout {
    fn new(bits: usize) -> Self {
        let widths = plan(bits);
        let zb = zero_bits(widths.len());
        let (mut offsets, mut words) = (Vec::new(), Vec::new());
        let (mut o, mut w) = (0, 0);
        for &wi in &widths {
            offsets.push(o);
            words.push(w);
            o += wi;
            w += plane_words(wi) * zb as usize;
        }
        Layout { widths, offsets, words, stride: w, zb }
    }

    fn digits(&self) -> usize {
        self.widths.len()
    }

    /// Stores `V mod 2^zb` (entries `k < 2^w`) into `out` as `zb` planes.
    fn store(&self, i: usize, entries: impl Iterator<Item = u8>, out: &mut [u64]) {
        let pw = plane_words(self.widths[i]);
        let at = &mut out[self.words[i]..self.words[i] + pw * self.zb as usize];
        for (k, e) in entries.enumerate() {
            for p in 0..self.zb as usize {
                at[p * pw + k / 64] |= u64::from((e >> p) & 1) << (k % 64);
            }
        }
    }

    /// `(V[v], Σ_{k<v} V[k])` mod `2^zb` from digit `i`'s planes.
    fn read(&self, i: usize, tables: &[u64], v: usize) -> (u8, u8) {
        let pw = plane_words(self.widths[i]);
        let at = &tables[self.words[i]..];
        let (mut eq, mut lt) = (0u32, 0u32);
        for p in 0..self.zb as usize {
            let plane = &at[p * pw..(p + 1) * pw];
            eq |= (((plane[v / 64] >> (v % 64)) & 1) as u32) << p;
            let full: u32 = plane[..v / 64].iter().map(|w| w.count_ones()).sum();
            let part = (plane[v / 64] & ((1u64 << (v % 64)) - 1)).count_ones();
            lt += (full + part) << p;
        }
        let mask = (1u32 << self.zb) - 1;
        (eq as u8, (lt & mask) as u8)
    }
}

/// One evaluator's material for `count` comparisons of `bits`-bit values.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct DigitKeys {
    role: u8,
    bits: usize,
    count: usize,
    /// Each comparison's digit shares mod `2^{d'}`, as bit planes (`Layout`).
    tables: Vec<u64>,
    /// The zero tests' one-hot shares, low bits (entry `k` at bit `k`), `D` per comparison.
    zero: Vec<u16>,
    /// Shares of the zero tests' `α'`.
    alpha: Vec<Z8>,
}

impl DigitKeys {
    /// Zero material of the real shapes (stored material is checked against it).
    pub(crate) fn placeholder(role: u8, bits: usize, count: usize) -> Self {
        let l = Layout::new(bits);
        let z = l.digits() * count;
        DigitKeys {
            role,
            bits,
            count,
            tables: vec![0; l.stride * count],
            zero: vec![0; z],
            alpha: vec![Z8::ZERO; z],
        }
    }

    /// Comparisons this material serves.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The material of consecutive comparisons, `sizes[i]` of them in part `i` (the sizes
    /// must add up to [`DigitKeys::count`]): one dealing may serve several gate calls.
    pub fn split(self, sizes: &[usize]) -> Result<Vec<Self>> {
        if sizes.iter().sum::<usize>() != self.count {
            return Err(MpcError::Invalid(format!("{sizes:?} comparisons from material for {}", self.count)));
        }
        let layout = Layout::new(self.bits);
        let (stride, dn) = (layout.stride, layout.digits());
        if self.tables.len() != self.count * stride
            || self.zero.len() != self.count * dn
            || self.alpha.len() != self.count * dn
        {
            return Err(MpcError::Invalid("digit comparison material of inconsistent shape".into()));
        }
        let mut at = 0;
        Ok(sizes
            .iter()
            .map(|&n| {
                let part = DigitKeys {
                    role: self.role,
                    bits: self.bits,
                    count: n,
                    tables: self.tables[at * stride..(at + n) * stride].to_vec(),
                    zero: self.zero[at * dn..(at + n) * dn].to_vec(),
                    alpha: self.alpha[at * dn..(at + n) * dn].to_vec(),
                };
                at += n;
                part
            })
            .collect())
    }
}

impl Shape for DigitKeys {
    fn shape(&self, out: &mut Vec<usize>) {
        out.extend([
            usize::from(self.role),
            self.bits,
            self.count,
            self.tables.len(),
            self.zero.len(),
            self.alpha.len(),
        ]);
    }
}

/// What an evaluator of a malicious dealing still has to check with its partner, in one
/// digest ([`finish_checks`]): the digit keys' proof digest, its shares of `t_i - 1` (role 0) or
/// `-t_i` (role 1), and, per comparison, its share of `y' = Σ_i 2^{o_i}·Σ_k k·V_i[k]`, which the
/// caller turns into a relation that must sum to 0.
#[derive(Debug)]
pub struct DigitChecks<R> {
    dealer: PartyId,
    partner: PartyId,
    role: u8,
    proofs: Digest,
    /// The zero tests' [`crate::deal::OneHotCheck`] digest.
    zero: Digest,
    t: Vec<R>,
    /// This evaluator's share of each comparison's `y'`.
    pub y: Vec<R>,
}

/// Comparisons whose digit keys are generated and checked together (one proof each group).
const GROUP: usize = 32;

fn check_bits(bits: usize) -> Result<Layout> {
    if bits == 0 || bits > MAX_BITS {
        return Err(MpcError::Invalid(format!("digit comparison of 1 to {MAX_BITS} bits, not {bits}")));
    }
    Ok(Layout::new(bits))
}

/// Deals and expands `count` comparisons of `bits`-bit values with dealer `dealer` (all three
/// servers call it; `ys` is the dealer's values, ignored elsewhere). The evaluators get their
/// material and, in the malicious mode, the checks still to finish with [`finish_checks`]; the
/// dealer gets `None`.
pub fn setup<R: Z2k>(
    ctx: &mut Ctx,
    dealer: PartyId,
    bits: usize,
    ys: &[u64],
    count: usize,
    security: Security,
) -> Result<Option<(DigitKeys, Option<DigitChecks<R>>)>> {
    setup_faulty(ctx, dealer, bits, ys, count, security, R::ONE)
}

/// [`setup`] with the digit keys' output `beta` (1 for an honest dealer; tests deal others).
pub(crate) fn setup_faulty<R: Z2k>(
    ctx: &mut Ctx,
    dealer: PartyId,
    bits: usize,
    ys: &[u64],
    count: usize,
    security: Security,
    beta: R,
) -> Result<Option<(DigitKeys, Option<DigitChecks<R>>)>> {
    let layout = check_bits(bits)?;
    if R::BITS as usize <= bits {
        return Err(MpcError::Invalid(format!("digit keys over Z_2^{} for {bits}-bit values", R::BITS)));
    }
    let b = ctx.party();
    let (e0, e1) = evaluators(dealer);
    if b == dealer && ys.len() != count {
        return Err(MpcError::Invalid(format!("{} values for {count} comparisons", ys.len())));
    }
    if b == dealer && ys.iter().any(|&y| bits < 64 && y >> bits != 0) {
        return Err(MpcError::Invalid(format!("a compared value does not fit {bits} bits")));
    }
    let digit_part = match security {
        Security::Malicious => deal_keys::<R>(ctx, dealer, &layout, ys, count, beta)?,
        Security::SemiHonest => deal_planes(ctx, dealer, &layout, ys, count)?,
    };
    let zb = layout.zb;
    // At most 11 digits, so a zero test's table has at most 16 entries.
    // The zero tests' one-hot check is finished with the digit keys' (one digest per dealing).
    let (zero, zero_check) =
        deal_unchecked::<Z8, Z8, u16>(ctx, dealer, zb, layout.digits() * count, security, &|v| {
            low_bits(v) as u16
        })?;
    match (digit_part, zero) {
        (None, Dealt::Dealer { .. }) => Ok(None),
        (Some((tables, checks)), Dealt::Evaluator(z)) => {
            let role = if b == e0 { 0 } else { 1 };
            debug_assert!(b == e0 || b == e1);
            let checks = match (checks, zero_check) {
                (Some((proofs, t, y)), Some(zero)) => Some(DigitChecks {
                    dealer,
                    partner: if role == 0 { e1 } else { e0 },
                    role,
                    proofs,
                    zero: zero.digest,
                    t,
                    y,
                }),
                (None, None) => None,
                _ => return Err(MpcError::Invalid("digit comparison: checks of one dealing only".into())),
            };
            Ok(Some((DigitKeys { role, bits, count, tables, zero: z.tables, alpha: z.alpha }, checks)))
        }
        _ => Err(MpcError::Invalid("digit comparison: roles of the two dealings differ".into())),
    }
}

/// The evaluator's part of a malicious dealing: tables, proof digest, `t` shares, `y'` shares.
type Expanded<R> = (Vec<u64>, Option<(Digest, Vec<R>, Vec<R>)>);

/// The malicious dealing: verified point-function keys at every digit of every `y`.
fn deal_keys<R: Z2k>(
    ctx: &mut Ctx,
    dealer: PartyId,
    layout: &Layout,
    ys: &[u64],
    count: usize,
    beta: R,
) -> Result<Option<Expanded<R>>> {
    let b = ctx.party();
    let (e0, e1) = evaluators(dealer);
    let per: usize = layout.widths.iter().map(|&w| key_bytes::<R>(w)).sum();
    if b == dealer {
        let seeds = group_seeds(ctx, count.div_ceil(GROUP));
        let made: Vec<(Vec<u8>, Vec<u8>)> = seeds
            .par_iter()
            .zip(ys.par_chunks(GROUP))
            .map(|(seed, group)| {
                let mut g = Prg::new(seed);
                let (mut m0, mut m1) =
                    (Vec::with_capacity(group.len() * per), Vec::with_capacity(group.len() * per));
                // Digit by digit across the group (one batch of keys per digit), then written
                // element by element, digit after digit.
                let digits: Vec<Vec<_>> = layout
                    .widths
                    .iter()
                    .zip(&layout.offsets)
                    .map(|(&w, &o)| {
                        let alphas: Vec<u64> = group.iter().map(|&y| (y >> o) & ((1u64 << w) - 1)).collect();
                        gen_keys_batch(&alphas, beta, w, &mut g)
                            .map_err(|e| MpcError::Invalid(format!("VDPF key generation: {e}")))
                    })
                    .collect::<Result<_>>()?;
                for e in 0..group.len() {
                    for keys in &digits {
                        keys[e].0.write_to(&mut m0);
                        keys[e].1.write_to(&mut m1);
                    }
                }
                Ok((m0, m1))
            })
            .collect::<Result<_>>()?;
        let (mut m0, mut m1) = (Vec::with_capacity(count * per), Vec::with_capacity(count * per));
        for (a, c) in made {
            m0.extend_from_slice(&a);
            m1.extend_from_slice(&c);
        }
        ctx.net().send(e0, m0)?;
        ctx.net().send(e1, m1)?;
        return Ok(None);
    }
    let role = if b == e0 { 0u8 } else { 1u8 };
    let msg = ctx.recv_at_most(dealer, count * per)?;
    if msg.len() != count * per {
        return Err(MpcError::Malformed {
            from: dealer,
            what: format!("digit keys: {} bytes, expected {}", msg.len(), count * per),
        });
    }
    type Group<R> = (Vec<u64>, veil_fss::Proof, Vec<R>, Vec<R>);
    let groups: Vec<Group<R>> = msg
        .par_chunks(per * GROUP)
        .map(|chunk| {
            let bad = |e: veil_fss::FssError| {
                MpcError::abort(format!("DReLU setup: malformed digit key ({e})"), Some(dealer))
            };
            let mut keys = Vec::with_capacity(chunk.len() / per * layout.digits());
            for one in chunk.chunks(per) {
                let mut at = 0;
                for &w in &layout.widths {
                    let len = key_bytes::<R>(w);
                    keys.push(DpfKey::<R>::from_bytes(&one[at..at + len], w).map_err(bad)?);
                    at += len;
                }
            }
            let (tables, proof) = eval_full_verified_batch(role, &keys).map_err(bad)?;
            let n = chunk.len() / per;
            let mut planes = vec![0u64; n * layout.stride];
            let (mut ts, mut ys) = (Vec::with_capacity(keys.len()), Vec::with_capacity(n));
            // A comparison's tables, digit after digit, one comparison after another.
            let entries: usize = layout.widths.iter().map(|&w| 1usize << w).sum();
            for (one, out) in tables.chunks_exact(entries).zip(planes.chunks_mut(layout.stride)) {
                let mut y = R::ZERO;
                let mut at = 0;
                for (i, &w) in layout.widths.iter().enumerate() {
                    let v = &one[at..at + (1usize << w)];
                    at += 1usize << w;
                    let t: R = v.iter().copied().sum();
                    ts.push(if role == 0 { t - R::ONE } else { R::ZERO - t });
                    let pos: R = v.iter().enumerate().map(|(k, &e)| e * R::from_u64(k as u64)).sum();
                    y += pos * R::from_u128(1u128 << layout.offsets[i]);
                    layout.store(i, v.iter().map(|e| e.to_u128() as u8), out);
                }
                ys.push(y);
            }
            Ok((planes, proof, ts, ys))
        })
        .collect::<Result<_>>()?;
    let mut proofs = Hasher::new("mosformer/dcmp/proofs");
    let (mut tables, mut ts, mut ys) = (Vec::new(), Vec::new(), Vec::new());
    for (p, proof, t, y) in groups {
        proofs.update(proof.as_bytes());
        tables.extend(p);
        ts.extend(t);
        ys.extend(y);
    }
    Ok(Some((tables, Some((proofs.finalize(), ts, ys)))))
}

/// The semi-honest dealing: the digit tables' planes themselves (`P_{j+2}`'s from the
/// generator it shares with the dealer, `P_{j+1}`'s sent).
fn deal_planes<R>(
    ctx: &mut Ctx,
    dealer: PartyId,
    layout: &Layout,
    ys: &[u64],
    count: usize,
) -> Result<Option<Expanded<R>>> {
    const PURPOSE: &str = "mosformer/dcmp/planes";
    let b = ctx.party();
    let (e0, e1) = evaluators(dealer);
    let zmask = (1u8 << layout.zb) - 1;
    // Role 0's entries, digit by digit, from the shared generator.
    let role0 =
        |g: &mut Prg, w: u32| -> Vec<u8> { (0..1usize << w).map(|_| (g.next_u32() as u8) & zmask).collect() };
    if b == dealer {
        let mut g = ctx.pair_prg(e0, PURPOSE)?;
        let mut out = vec![0u64; count * layout.stride];
        for (y, tables) in ys.iter().zip(out.chunks_mut(layout.stride)) {
            for (i, (&w, &o)) in layout.widths.iter().zip(&layout.offsets).enumerate() {
                let digit = ((y >> o) & ((1u64 << w) - 1)) as usize;
                let mine: Vec<u8> = role0(&mut g, w)
                    .into_iter()
                    .enumerate()
                    .map(|(k, e)| (u8::from(k == digit).wrapping_sub(e)) & zmask)
                    .collect();
                layout.store(i, mine.into_iter(), tables);
            }
        }
        ctx.net().send(e1, encode_slice(&out.iter().map(|&w| veil_ring::Z64(w)).collect::<Vec<_>>()))?;
        return Ok(None);
    }
    let mut tables = vec![0u64; count * layout.stride];
    if b == e0 {
        let mut g = ctx.pair_prg(dealer, PURPOSE)?;
        for t in tables.chunks_mut(layout.stride) {
            for (i, &w) in layout.widths.iter().enumerate() {
                layout.store(i, role0(&mut g, w).into_iter(), t);
            }
        }
        return Ok(Some((tables, None)));
    }
    let want = count * layout.stride * 8;
    let msg = ctx.recv_at_most(dealer, want)?;
    if msg.len() != want {
        return Err(MpcError::Malformed {
            from: dealer,
            what: format!("digit tables: {} bytes, expected {want}", msg.len()),
        });
    }
    for (t, w) in tables.iter_mut().zip(msg.chunks_exact(8)) {
        let mut a = [0u8; 8];
        a.copy_from_slice(w);
        *t = u64::from_le_bytes(a);
    }
    Ok(Some((tables, None)))
}

/// Finishes malicious dealings' checks: for each dealing, `relation[k]` is this evaluator's
/// share of a value that must be 0 for comparison `k` (built from [`DigitChecks::y`]). Both
/// evaluators of a dealing hash the proof digest, their `t` terms and their relation shares
/// (role 1 negated) and exchange the digest; they abort, blaming the dealer, unless the digests
/// agree. Every digest is sent before any is received, so a party's two dealings (one per
/// role) share one round.
pub fn finish_checks<R: Z2k>(ctx: &mut Ctx, dealings: &[(&DigitChecks<R>, &[R])]) -> Result<()> {
    let mut sent = Vec::with_capacity(dealings.len());
    for (checks, relation) in dealings {
        if relation.len() != checks.y.len() {
            return Err(MpcError::Invalid("digit checks: one relation share per comparison".into()));
        }
        let mut h = Hasher::new("mosformer/dcmp/checks");
        h.update(&checks.proofs.0);
        h.update(&checks.zero.0);
        h.update(&encode_slice(&checks.t));
        let rel: Vec<R> = if checks.role == 0 {
            relation.to_vec()
        } else {
            relation.iter().map(|&v| R::ZERO - v).collect()
        };
        h.update(&encode_slice(&rel));
        let mine = h.finalize();
        ctx.net().send(checks.partner, mine.0.to_vec())?;
        sent.push(mine);
    }
    for ((checks, _), mine) in dealings.iter().zip(sent) {
        let theirs = ctx.recv_at_most(checks.partner, 32)?;
        let mut d = [0u8; 32];
        if theirs.len() != 32 {
            return Err(MpcError::Malformed { from: checks.partner, what: "digit check digest".into() });
        }
        d.copy_from_slice(&theirs);
        if !mine.ct_eq(&Digest(d)) {
            return Err(MpcError::abort(
                "DReLU setup: digit keys or auxiliary data (VDPF proof, one-hot vector or linear relation)",
                Some(checks.dealer),
            ));
        }
    }
    Ok(())
}

/// A comparison whose `δ` is sent and whose partner's `δ` is not yet received.
#[derive(Debug)]
pub struct PendingCompare {
    partner: PartyId,
    mine: Vec<u8>,
}

/// First half of the online comparison: this evaluator's `δ_i = c_i + α'_i` for every digit
/// of every comparison against the public `v`s, sent to `partner`.
pub fn eval_send(ctx: &mut Ctx, keys: &DigitKeys, partner: PartyId, v: &[u64]) -> Result<PendingCompare> {
    if v.len() != keys.count {
        return Err(MpcError::Invalid(format!("{} public values for {} comparisons", v.len(), keys.count)));
    }
    let layout = Layout::new(keys.bits);
    let dn = layout.digits();
    let zmask = (1u8 << layout.zb) - 1;
    let mut mine = Vec::with_capacity(dn * keys.count);
    let mut reads = vec![(0u8, 0u8); dn];
    let mut cs = vec![0u8; dn];
    for (k, &vk) in v.iter().enumerate() {
        let tables = &keys.tables[k * layout.stride..(k + 1) * layout.stride];
        for (i, read) in reads.iter_mut().enumerate() {
            let vi = ((vk >> layout.offsets[i]) & ((1u64 << layout.widths[i]) - 1)) as usize;
            *read = layout.read(i, tables, vi);
        }
        // c_i = (D - i)·[role 0] - lt_i - Σ_{j>i} eq_j, from the top digit down.
        let mut eqs = 0u8;
        for i in (0..dn).rev() {
            let constant = if keys.role == 0 { (dn - i) as u8 } else { 0 };
            cs[i] = constant.wrapping_sub(reads[i].1).wrapping_sub(eqs);
            eqs = eqs.wrapping_add(reads[i].0);
        }
        for (i, c) in cs.iter().enumerate() {
            mine.push(c.wrapping_add(keys.alpha[k * dn + i].0) & zmask);
        }
    }
    ctx.net().send(partner, pack_bits(&mine, layout.zb))?;
    Ok(PendingCompare { partner, mine })
}

/// Second half: receives the partner's `δ` and reads the zero tests; this evaluator's XOR
/// share of `1{y < v}` per comparison (a bit).
pub fn eval_recv(ctx: &mut Ctx, keys: &DigitKeys, pending: PendingCompare) -> Result<Vec<u8>> {
    let layout = Layout::new(keys.bits);
    let (dn, zb) = (layout.digits(), layout.zb);
    let mine = pending.mine;
    let bytes = ctx.recv_at_most(pending.partner, packed_len(zb, mine.len()))?;
    let theirs = unpack_bits(pending.partner, &bytes, zb, mine.len())?;
    let mask = (1usize << zb) - 1;
    Ok((0..keys.count)
        .map(|k| {
            (0..dn).fold(0u8, |acc, i| {
                let at = k * dn + i;
                let idx = mine[at].wrapping_add(theirs[at]) as usize & mask;
                acc ^ ((keys.zero[at] >> idx) & 1) as u8
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]
    use super::*;
    use veil_crypto::Seed;
    use veil_mpc::harness::{all_ok, simulate};
    use veil_ring::{Z32, Z64};

    #[test]
    fn plans_cut_values_into_digits_of_at_most_six_bits() {
        assert_eq!(plan(31), vec![6, 5, 5, 5, 5, 5]);
        assert_eq!(plan(15), vec![5, 5, 5]);
        assert_eq!(plan(63), vec![6, 6, 6, 6, 6, 6, 6, 6, 5, 5, 5]);
        assert_eq!(plan(3), vec![3]);
        for n in 1..=MAX_BITS {
            let p = plan(n);
            assert_eq!(p.iter().sum::<u32>() as usize, n);
            assert!(p.iter().all(|&w| (1..=MAX_DIGIT_BITS).contains(&w)));
        }
        assert_eq!(zero_bits(6), 3);
        assert_eq!(zero_bits(1), 1);
        assert_eq!(zero_bits(8), 4);
        assert_eq!(zero_bits(11), 4);
    }

    #[test]
    fn planes_give_entries_and_prefix_sums() {
        // 53 bits: eight 6-bit digits and a 5-bit one, zb = 4; [6, 6]: zb = 2; a 7-bit digit
        // spans two words.
        for (bits, digit, size) in [(53usize, 1usize, 64u32), (12, 0, 64), (53, 8, 32)] {
            let l = Layout::new(bits);
            let modulus = 1u32 << l.zb;
            let mut out = vec![0u64; l.stride];
            let entries: Vec<u8> = (0..size).map(|k| ((k * 7 + 3) % modulus) as u8).collect();
            l.store(digit, entries.iter().copied(), &mut out);
            for v in 0..size as usize {
                let lt: u32 = entries[..v].iter().map(|&e| u32::from(e)).sum();
                assert_eq!(
                    l.read(digit, &out, v),
                    (entries[v], (lt % modulus) as u8),
                    "{bits} bits, v = {v}"
                );
            }
        }
        let wide = Layout { widths: vec![7], offsets: vec![0], words: vec![0], stride: 2 * 3, zb: 3 };
        let mut out = vec![0u64; wide.stride];
        let entries: Vec<u8> = (0..128u32).map(|k| ((k * 5 + 1) % 8) as u8).collect();
        wide.store(0, entries.iter().copied(), &mut out);
        for v in 0..128 {
            let lt: u32 = entries[..v].iter().map(|&e| u32::from(e)).sum();
            assert_eq!(wide.read(0, &out, v), (entries[v], (lt % 8) as u8), "v = {v}");
        }
    }

    /// This evaluator's share of `y' - y` (role 0 subtracts the dealer's `y`): 0 when the digit
    /// keys encode `y`.
    fn y_relation<R: Z2k>(c: &DigitChecks<R>, ys: &[u64]) -> Vec<R> {
        c.y.iter().zip(ys).map(|(&s, &y)| if c.role == 0 { s - R::from_u64(y) } else { s }).collect()
    }

    /// Compares every `y` against every `v` in the list for the given widths, in both modes.
    fn compare(bits: usize, security: Security, pairs: &[(u64, u64)]) {
        let ys: Vec<u64> = pairs.iter().map(|p| p.0).collect();
        let vs: Vec<u64> = pairs.iter().map(|p| p.1).collect();
        for dealer in 0..3 {
            let out = all_ok(simulate(3, 7, |ctx| {
                let mine = if ctx.party() == dealer { ys.clone() } else { vec![] };
                let Some((keys, checks)) = setup::<Z64>(ctx, dealer, bits, &mine, ys.len(), security)? else {
                    return Ok(None);
                };
                if let Some(c) = checks {
                    finish_checks(ctx, &[(&c, &y_relation(&c, &ys)[..])])?;
                }
                let (e0, e1) = evaluators(dealer);
                let partner = if ctx.party() == e0 { e1 } else { e0 };
                let p = eval_send(ctx, &keys, partner, &vs)?;
                Ok(Some(eval_recv(ctx, &keys, p)?))
            }))
            .unwrap();
            let (e0, e1) = evaluators(dealer);
            let (a, b) = (out[e0].as_ref().unwrap(), out[e1].as_ref().unwrap());
            for (k, &(y, v)) in pairs.iter().enumerate() {
                assert_eq!(a[k] ^ b[k], u8::from(y < v), "{bits} bits, y = {y}, v = {v}, {security:?}");
            }
        }
    }

    fn edge_pairs(bits: usize) -> Vec<(u64, u64)> {
        let top = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let mut g = Prg::new(&Seed([bits as u8; 16]));
        let mut pairs =
            vec![(0, 0), (0, 1), (1, 0), (top, top), (top - 1, top), (top, top - 1), (0, top), (top, 0)];
        for w in plan(bits).iter().scan(0, |o, &w| {
            *o += w;
            Some(*o)
        }) {
            if (w as usize) < bits {
                let b = 1u64 << w;
                pairs.extend([(b, b - 1), (b - 1, b), (b, b), (b + 1, b), (b, b + 1)]);
            }
        }
        for _ in 0..40 {
            let y = g.next_u64() & top;
            let flip = 1u64 << (g.next_u32() as usize % bits);
            pairs.extend([(y, g.next_u64() & top), (y, y ^ flip), (y ^ flip, y)]);
        }
        pairs
    }

    #[test]
    fn compares_at_edges_and_random_values_in_both_modes() {
        for bits in [1usize, 5, 15, 31] {
            let pairs = edge_pairs(bits);
            compare(bits, Security::Malicious, &pairs);
            compare(bits, Security::SemiHonest, &pairs);
        }
    }

    #[test]
    fn sixty_three_bit_values_compare() {
        compare(63, Security::Malicious, &edge_pairs(63));
    }

    /// A dealer whose digit keys carry 2 instead of 1, or whose digits are not those of `y`,
    /// is caught by its two evaluators.
    #[test]
    fn a_dealer_with_wrong_digit_keys_is_caught() {
        let ys = [5u64, 77, 1 << 20];
        for (beta, shift) in [(Z32(2), 0u64), (Z32(1), 1)] {
            let res = simulate(3, 9, |ctx| {
                let mine: Vec<u64> = ys.iter().map(|y| y + shift).collect();
                let r = setup_faulty::<Z32>(ctx, 0, 31, &mine, ys.len(), Security::Malicious, beta)?;
                if let Some((_, Some(c))) = r {
                    finish_checks(ctx, &[(&c, &y_relation(&c, &ys)[..])])?;
                }
                Ok(())
            });
            for p in [1, 2] {
                let e = res[p].as_ref().unwrap_err().to_string();
                assert!(e.contains("digit keys") && e.contains("party 0"), "{e}");
            }
        }
    }

    /// Splitting checks the sizes and the material's own shape (material read from a file
    /// could be inconsistent) instead of slicing past its end.
    #[test]
    fn split_refuses_wrong_sizes_and_inconsistent_material() {
        let keys = DigitKeys::placeholder(0, 15, 4);
        assert!(keys.clone().split(&[1, 2]).is_err());
        let parts = keys.clone().split(&[1, 0, 3]).unwrap();
        assert_eq!(parts.iter().map(DigitKeys::count).collect::<Vec<_>>(), [1, 0, 3]);
        assert_eq!(parts[2].tables.len(), 3 * Layout::new(15).stride);
        let mut bad = keys;
        bad.tables.pop();
        assert!(bad.split(&[4]).is_err());
    }

    #[test]
    fn too_wide_values_are_refused() {
        let res = simulate(3, 10, |ctx| setup::<Z32>(ctx, 0, 32, &[0], 1, Security::Malicious).map(|_| ()));
        assert!(res.iter().all(|r| r.is_err()));
        // A value past the compared width is refused at the dealer (the others then stop).
        let res = simulate(3, 10, |ctx| setup::<Z32>(ctx, 0, 5, &[32], 1, Security::Malicious).map(|_| ()));
        assert!(
            res[0].as_ref().is_err_and(|e| e.to_string().contains("does not fit 5 bits")),
            "{:?}",
            res[0]
        );
    }
}
