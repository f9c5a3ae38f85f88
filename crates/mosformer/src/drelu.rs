//! Π_DReLU: `DReLU(x) = 1{x ≥ 0} = 1 - MSB(x)` with MAC'd output (paper Algorithm 2),
//! with the dealer's auxiliary data checked as in `docs/mosformer-drelu.md`.
//!
//! **MSB decomposition.** With `x̂ = x + r mod 2^ℓ`, `ŷ_0 = x̂ mod 2^{ℓ-1}` and
//! `ŷ_1 = (-r) mod 2^{ℓ-1}`: `MSB(x) = MSB(x̂) ⊕ MSB(-r) ⊕ 1{y < ŷ_0}` with
//! `y = 2^{ℓ-1} - 1 - ŷ_1` (an (ℓ-1)-bit value). `c = MSB(-r)` comes from the dealer; the last
//! term compares `y`, which the dealer knows, with `ŷ_0`, which the pair learns
//! ([`crate::dcmp`], by digits: the paper shares the bits of `y` and runs its per-bit UCMP).
//!
//! **Offline** ([`setup`]), each server dealing for its pair, all three at once (each deals its
//! own first and then expands what it received; every check waits until the three dealings
//! are done, so no server idles while another deals): `r` and `c` (shared 2-of-2
//! over the working ring Z_2^ℓ), a random bit `ρ` for B2A (over the MAC ring) and verified
//! point-function keys at the digits of `y` plus the comparison's zero tests
//! ([`crate::dcmp`]). The checks (see `docs/mosformer-drelu.md`): the evaluators check the
//! digit keys (proofs, one-hot sums) and the linear relation
//! `r + c·2^{ℓ-1} + 2^{ℓ-1} - 1 - y' = 0`, `y'` the value the digit keys encode, in one digest
//! exchange; the three servers check the binarity of `c` and `ρ` (verified products `b(1-b)`
//! that must open to 0) on the masked replicated sharings they hold. Digit positions are in
//! range by construction, so with `c` a bit the relation forces `c = MSB(-r)` and the right
//! `y` (a fix of the paper's step, without a two-party MSB protocol).
//!
//! **Online** ([`drelu`]), per dealer `j` and its pair (`P_{j+2}` role 0, `P_{j+1}` role 1):
//! 1. `x̂_j = x + r^j` revealed to the pair (six checked reveals in one round);
//! 2. the digit comparison of `y^j` with `ŷ_0` (both of a party's comparisons in one round);
//! 3. the XOR share `θ_e = [e = 0]·MSB(x̂) ⊕ c_e ⊕ res_e` of `θ = MSB(x)`, then B2A with `ρ`:
//!    each sends `θ_e ⊕ ρ_e` (one bit), `e = θ ⊕ ρ`, `[[θ]] = e + [[ρ]] - 2e[[ρ]]`;
//! 4. weighting as in the LUT: `[[v]]_b = 1_b·(1 - [[θ^{b+1}]]) + 1_{b+1}·(1 - [[θ^{b+2}]])`
//!    (the 1 added by role 0 only) and the same with `α`; reshare; MAC batch.
//!
//! An online deviation by an evaluator (in δ, in its B2A bit, in its terms or its reshare)
//! changes `v` by a multiple of a component of the random `⟨1⟩` that it cannot match in the MAC
//! without knowing `α`: the MAC check aborts. The selective-failure predicate of the
//! comparison's δ opening is accepted as in the paper (see [`crate::dcmp`]).
//!
//! The binarity checks use triples the servers generate on the spot ([`crate::triples`]).

use veil_mpc::wire::{pack_bits, packed_len, unpack_bits};
use veil_mpc::{Ctx, MpcError, PartyId, Result};
use veil_ring::{Ring, Z2k, Z64, decode_slice, encode_slice};

use crate::convert::reduce;
use veil_tensor::Tensor;

use crate::dcmp::{self, DigitChecks, DigitKeys};
use crate::deal::evaluators;
use crate::mac::Macs;
use crate::open::{open_all, reveal_batch};
use crate::rss::{Rss, next, prev};
use crate::shape::{Shape, Word};
use crate::triples::{FreshTriples, Sacrifice};
use veil_mpc::mode::Security;

/// One share of a dealer's auxiliary data for `n` elements.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(bound = "R: Word, M: Word")]
struct Aux<R, M> {
    #[serde(with = "veil_ring::words")]
    r: Vec<R>,
    #[serde(with = "veil_ring::words")]
    c: Vec<R>,
    #[serde(with = "veil_ring::words")]
    rho: Vec<M>,
}

impl<R: Z2k, M: Z2k> Aux<R, M> {
    fn encode(&self) -> Vec<u8> {
        let mut m = encode_slice(&self.r);
        m.extend(encode_slice(&self.c));
        m.extend(encode_slice(&self.rho));
        m
    }

    /// The sizes of the three parts of `n` elements' data.
    fn sizes(n: usize) -> [usize; 3] {
        [n * R::BYTES, n * R::BYTES, n * M::BYTES]
    }

    /// Bytes of `n` elements' data.
    fn len(n: usize) -> usize {
        Self::sizes(n).iter().sum()
    }

    fn decode(from: PartyId, bytes: &[u8], n: usize) -> Result<Self> {
        let sizes = Self::sizes(n);
        if bytes.len() != Self::len(n) {
            return Err(MpcError::Malformed {
                from,
                what: format!("DReLU auxiliary data: {} bytes", bytes.len()),
            });
        }
        let bad = |e: veil_ring::RingError| MpcError::Malformed { from, what: e.to_string() };
        let (a, rest) = bytes.split_at(sizes[0]);
        let (b, d) = rest.split_at(sizes[1]);
        Ok(Aux {
            r: decode_slice(a).map_err(bad)?,
            c: decode_slice(b).map_err(bad)?,
            rho: decode_slice(d).map_err(bad)?,
        })
    }
}

/// One server's verified material for `n` DReLUs.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(bound = "R: Word, M: Word")]
pub struct DreluKeys<R, M> {
    n: usize,
    /// As dealer: both shares (share 0 went to `P_{b+2}`, share 1 to `P_{b+1}`).
    own: (Aux<R, M>, Aux<R, M>),
    /// As role-0 evaluator of dealer `b + 1`: its share and digit-comparison keys.
    e0: (Aux<R, M>, DigitKeys),
    /// As role-1 evaluator of dealer `b + 2`.
    e1: (Aux<R, M>, DigitKeys),
}

impl<R: Z2k, M: Z2k> Aux<R, M> {
    fn zeros(n: usize) -> Self {
        Aux { r: vec![R::ZERO; n], c: vec![R::ZERO; n], rho: vec![M::ZERO; n] }
    }

    /// Consecutive parts of `sizes[i]` elements (a vector the holder dropped stays empty).
    fn split(&self, sizes: &[usize]) -> Vec<Self> {
        fn part<T: Clone>(v: &[T], at: usize, n: usize) -> Vec<T> {
            if v.is_empty() { Vec::new() } else { v[at..at + n].to_vec() }
        }
        let mut at = 0;
        sizes
            .iter()
            .map(|&n| {
                let p = Aux { r: part(&self.r, at, n), c: part(&self.c, at, n), rho: part(&self.rho, at, n) };
                at += n;
                p
            })
            .collect()
    }
}

impl<R, M> Shape for Aux<R, M> {
    fn shape(&self, out: &mut Vec<usize>) {
        out.extend([self.r.len(), self.c.len(), self.rho.len()]);
    }
}

impl<R, M> Shape for DreluKeys<R, M> {
    fn shape(&self, out: &mut Vec<usize>) {
        out.push(self.n);
        self.own.shape(out);
        self.e0.shape(out);
        self.e1.shape(out);
    }
}

impl<R: Z2k, M: Z2k> DreluKeys<R, M> {
    /// Elements this material serves.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether it serves no element.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The material of consecutive elements, `sizes[i]` of them in part `i` (adding up to
    /// [`DreluKeys::len`]).
    pub fn split(self, sizes: &[usize]) -> Result<Vec<Self>> {
        if sizes.iter().sum::<usize>() != self.n {
            return Err(MpcError::Invalid(format!("{sizes:?} DReLUs from material for {}", self.n)));
        }
        let fits = |a: &Aux<R, M>| [a.r.len(), a.c.len(), a.rho.len()].iter().all(|&l| l == 0 || l == self.n);
        if ![&self.own.0, &self.own.1, &self.e0.0, &self.e1.0].into_iter().all(fits) {
            return Err(MpcError::Invalid("DReLU material of inconsistent shape".into()));
        }
        let (own0, own1) = (self.own.0.split(sizes), self.own.1.split(sizes));
        let (a0, a1) = (self.e0.0.split(sizes), self.e1.0.split(sizes));
        let (u0, u1) = (self.e0.1.split(sizes)?, self.e1.1.split(sizes)?);
        Ok(sizes
            .iter()
            .zip(own0.into_iter().zip(own1))
            .zip(a0.into_iter().zip(u0).zip(a1.into_iter().zip(u1)))
            .map(|((&n, own), (e0, e1))| DreluKeys { n, own, e0, e1 })
            .collect())
    }

    /// Zero material of the real shapes: the layout real material must have (stored
    /// material is checked against it); its outputs mean nothing.
    pub(crate) fn placeholder(n: usize) -> Self {
        let bits = R::BITS as usize - 1;
        DreluKeys {
            n,
            own: dealer_keeps((Aux::zeros(n), Aux::zeros(n))),
            e0: (Aux::zeros(n), DigitKeys::placeholder(0, bits, n)),
            e1: (Aux::zeros(n), DigitKeys::placeholder(1, bits, n)),
        }
    }
}

/// The dealer's data for `n` elements, split into two shares, and the `y` of each element.
fn deal_aux<R: Z2k, M: Z2k>(ctx: &mut Ctx, n: usize) -> (Aux<R, M>, Aux<R, M>, Vec<u64>) {
    let l = R::BITS;
    let half = 1u128 << (l - 1);
    let (mut s0, mut s1) =
        (Aux { r: vec![], c: vec![], rho: vec![] }, Aux { r: vec![], c: vec![], rho: vec![] });
    let mut ys = Vec::with_capacity(n);
    let split = |v: R, a: &mut Vec<R>, b: &mut Vec<R>, ctx: &mut Ctx| {
        let s = R::random(ctx.rng());
        a.push(s);
        b.push(v - s);
    };
    for _ in 0..n {
        let r = R::random(ctx.rng());
        let neg = (R::ZERO - r).to_u128();
        let c = R::from_u128(neg >> (l - 1));
        let y = half - 1 - (neg % half);
        split(r, &mut s0.r, &mut s1.r, ctx);
        split(c, &mut s0.c, &mut s1.c, ctx);
        ys.push(y as u64);
        let rho = M::from_u64(ctx.rng().next_u64() & 1);
        let s = M::random(ctx.rng());
        s0.rho.push(s);
        s1.rho.push(rho - s);
    }
    (s0, s1, ys)
}

/// The masked replicated sharing of a dealer's value among the three servers: components
/// `(share 0, share 1, 0)` at indices `(j, j+1, j+2)`.
fn masked<T: Ring>(b: PartyId, dealer: PartyId, s0: &[T], s1: &[T]) -> Result<Rss<T>> {
    let t = |v: &[T]| Tensor::new(vec![v.len()], v.to_vec());
    let zero = |len: usize| Tensor::new(vec![len], vec![T::ZERO; len]);
    if b == dealer {
        Rss::new(t(s0)?, t(s1)?)
    } else if b == next(dealer) {
        Rss::new(t(s1)?, zero(s1.len())?)
    } else {
        Rss::new(zero(s0.len())?, t(s0)?)
    }
}

/// This party's view of dealer `j`'s shares (the missing one replaced by the one it has).
fn views<'a, R, M>(
    keys_own: &'a (Aux<R, M>, Aux<R, M>),
    e0: &'a Aux<R, M>,
    e1: &'a Aux<R, M>,
    b: PartyId,
    j: PartyId,
) -> (&'a Aux<R, M>, &'a Aux<R, M>) {
    if j == b {
        (&keys_own.0, &keys_own.1)
    } else if j == next(b) {
        (e0, e0) // role 0 of dealer b+1: holds share 0
    } else {
        (e1, e1) // role 1 of dealer b+2: holds share 1
    }
}

/// Aborts blaming `dealer` unless every opened value is zero.
fn all_zero<T: Ring>(t: &Tensor<T>, dealer: PartyId, what: &str) -> Result<()> {
    if t.data().iter().any(|v| *v != T::ZERO) {
        return Err(MpcError::abort(format!("DReLU setup: auxiliary data ({what})"), Some(dealer)));
    }
    Ok(())
}

/// `b ⊙ (1 - b)` for a masked sharing, with a verified product.
fn non_binarity<T: Sacrifice>(ctx: &mut Ctx, z: &Rss<T>) -> Result<Tensor<T>> {
    let ones = Tensor::new(z.shape().to_vec(), vec![T::ONE; z.len()])?;
    let one_minus = z.neg().add_public(ctx.party(), &ones)?;
    let p = crate::verified::mul(ctx, &mut FreshTriples, z, &one_minus)?;
    open_all(ctx, &p)
}

/// Deals, verifies and checks the material of `n` DReLUs over Z_2^ℓ (`R`) with MACs in `M`.
pub fn setup<R: Sacrifice, M: Z2k>(ctx: &mut Ctx, n: usize) -> Result<DreluKeys<R, M>> {
    setup_dealing(ctx, n, Security::Malicious, &|_, _, _| {})
}

/// Material for several gate calls of `sizes[i]` elements from one dealing (one set of
/// rounds and checks for all of them), in a given mode.
pub fn setup_parts<R: Sacrifice, M: Z2k>(
    ctx: &mut Ctx,
    sizes: &[usize],
    security: Security,
) -> Result<Vec<DreluKeys<R, M>>> {
    if sizes.is_empty() {
        return Ok(Vec::new());
    }
    setup_with::<R, M>(ctx, sizes.iter().sum(), security)?.split(sizes)
}

/// [`setup`] in a given mode (semi-honest: no checks of keys or auxiliary data).
pub fn setup_with<R: Sacrifice, M: Z2k>(
    ctx: &mut Ctx,
    n: usize,
    security: Security,
) -> Result<DreluKeys<R, M>> {
    setup_dealing(ctx, n, security, &|_, _, _| {})
}

/// Changes a dealer may make to its data before sending it (tests model a cheating dealer):
/// the two shares of its auxiliary data and the `y` its digit keys are dealt for.
type Corruption<'a, R, M> = &'a dyn Fn(&mut Aux<R, M>, &mut Aux<R, M>, &mut Vec<u64>);

/// [`setup`], with the dealing passed through `corrupt` (the identity for honest dealers).
fn setup_dealing<R: Sacrifice, M: Z2k>(
    ctx: &mut Ctx,
    n: usize,
    security: Security,
    corrupt: Corruption<'_, R, M>,
) -> Result<DreluKeys<R, M>> {
    crate::prss::check_server(ctx)?;
    if M::BITS <= R::BITS || M::BITS < 64 {
        return Err(MpcError::Invalid(
            "the MAC ring must be larger than the working ring and hold the 64-bit values".into(),
        ));
    }
    let b = ctx.party();
    let bits = R::BITS as usize - 1;
    let mut own = None;
    let mut own_ys = Vec::new();
    let (mut a0, mut a1) = (None, None);
    for dealer in 0..3 {
        let (e0, e1) = evaluators(dealer);
        if b == dealer {
            let (mut s0, mut s1, mut ys) = deal_aux::<R, M>(ctx, n);
            corrupt(&mut s0, &mut s1, &mut ys);
            ctx.net().send(e0, s0.encode())?;
            ctx.net().send(e1, s1.encode())?;
            own = Some((s0, s1));
            own_ys = ys;
        } else {
            let aux = Aux::<R, M>::decode(dealer, &ctx.recv_at_most(dealer, Aux::<R, M>::len(n))?, n)?;
            if b == e0 { a0 = Some(aux) } else { a1 = Some(aux) }
        }
    }
    let (Some(own), Some(a0), Some(a1)) = (own, a0, a1) else {
        return Err(MpcError::Invalid("DReLU setup did not give every role".into()));
    };
    // The comparisons' digit keys, one dealing per dealer, each server's own first: nothing
    // of a dealing's check is sent before `finish_checks`, so the three servers generate keys
    // at the same time and then expand what they received, instead of two of them waiting
    // while one deals.
    let (mut u0, mut u1) = (None, None);
    for dealer in [b, next(b), prev(b)] {
        let ys = if b == dealer { &own_ys[..] } else { &[] };
        if let Some(k) = dcmp::setup::<R>(ctx, dealer, bits, ys, n, security)? {
            if dealer == next(b) { u0 = Some(k) } else { u1 = Some(k) }
        }
    }
    let (Some((u0, c0)), Some((u1, c1))) = (u0, u1) else {
        return Err(MpcError::Invalid("digit comparison setup did not give both evaluator roles".into()));
    };
    let (Some(c0), Some(c1)) = (c0, c1) else {
        return Ok(DreluKeys { n, own: dealer_keeps(own), e0: (a0, u0), e1: (a1, u1) });
    };
    // Each pair: r + c·2^{ℓ-1} + (2^{ℓ-1} - 1) - y' = 0, with y' from the digit keys' hot
    // positions, checked with the keys' proofs and one-hot sums in one digest exchange.
    let half = R::from_u128(1u128 << bits);
    let relation = |aux: &Aux<R, M>, checks: &DigitChecks<R>, lead: bool| -> Vec<R> {
        let constant = if lead { half - R::ONE } else { R::ZERO };
        (0..n).map(|k| aux.r[k] + aux.c[k] * half + constant - checks.y[k]).collect()
    };
    let (l0, l1) = (relation(&a0, &c0, true), relation(&a1, &c1, false));
    dcmp::finish_checks(ctx, &[(&c0, &l0[..]), (&c1, &l1[..])])?;
    // Binarity of c and of ρ, on masked sharings of each dealer's data, all three in one batch.
    let (mut cs, mut rhos) = (Vec::new(), Vec::new());
    for dealer in 0..3 {
        let (s0, s1) = views(&own, &a0, &a1, b, dealer);
        cs.push(masked(b, dealer, &s0.c, &s1.c)?);
        // ρ only matters mod 2^64 (gate values are used mod 2^64, see crate::mac), and there
        // ρ(1 - ρ) = 0 forces ρ ∈ {0, 1}: one of ρ, 1 - ρ is odd, so the other is 0.
        rhos.push(reduce::<M, Z64>(&masked(b, dealer, &s0.rho, &s1.rho)?)?);
    }
    let c = non_binarity(ctx, &Rss::concat(&cs.iter().collect::<Vec<_>>())?)?;
    let rho = non_binarity(ctx, &Rss::concat(&rhos.iter().collect::<Vec<_>>())?)?;
    for dealer in 0..3 {
        all_zero(&segment(&c, dealer, n)?, dealer, "c not binary")?;
        all_zero(&segment(&rho, dealer, n)?, dealer, "B2A bit not binary")?;
    }
    Ok(DreluKeys { n, own: dealer_keeps(own), e0: (a0, u0), e1: (a1, u1) })
}

/// What a dealer needs of its own data online: the masks `r` (its part of the masked sharings
/// of `x + r`); the rest was only for the checks.
fn dealer_keeps<R, M>((s0, s1): (Aux<R, M>, Aux<R, M>)) -> (Aux<R, M>, Aux<R, M>) {
    let keep = |a: Aux<R, M>| Aux { r: a.r, c: Vec::new(), rho: Vec::new() };
    (keep(s0), keep(s1))
}

/// Dealer `j`'s part of a batch of `3·len` opened values.
fn segment<T: Ring>(t: &Tensor<T>, j: PartyId, len: usize) -> Result<Tensor<T>> {
    Ok(Tensor::new(vec![len], t.data()[j * len..(j + 1) * len].to_vec())?)
}

/// `⟨DReLU(x)⟩` in the MAC ring, its MAC queued in `macs.batch`; consumes the keys.
pub fn drelu<R: Z2k, M: Z2k>(
    ctx: &mut Ctx,
    keys: DreluKeys<R, M>,
    x: &Rss<R>,
    macs: &mut Macs<'_, M>,
) -> Result<Rss<M>> {
    let (res, mac) = drelu_terms(ctx, &keys, x, macs.one, macs.alpha)?;
    crate::lut::lookup_finish(ctx, res, mac, macs.batch)
}

/// Steps 1-3 at this party: its 2-of-2 shares over `M` of `DReLU(x) = 1 - θ` in its two pairs,
/// `(as role 0 of dealer b+1, as role 1 of dealer b+2)`.
pub fn pair_shares<R: Z2k, M: Z2k>(
    ctx: &mut Ctx,
    keys: &DreluKeys<R, M>,
    x: &Rss<R>,
) -> Result<(Vec<M>, Vec<M>)> {
    let n = keys.n;
    if x.len() != n {
        return Err(MpcError::Invalid(format!("DReLU of {} values with keys for {n}", x.len())));
    }
    let b = ctx.party();
    let l = R::BITS;
    let x = x.reshape(&[n])?;
    // 1. x̂_j = x + r^j, revealed to dealer j's pair.
    let mut hats = Vec::with_capacity(3);
    for dealer in 0..3 {
        let (s0, s1) = views(&keys.own, &keys.e0.0, &keys.e1.0, b, dealer);
        hats.push(x.add(&masked(b, dealer, &s0.r, &s1.r)?)?);
    }
    let items: Vec<(&Rss<R>, usize)> =
        (0..3).flat_map(|j| [(&hats[j], next(j)), (&hats[j], prev(j))]).collect();
    let (mut hat0, mut hat1) = (None, None);
    for (idx, v) in reveal_batch(ctx, &items)?.into_iter().enumerate() {
        match v {
            Some(v) if idx / 2 == next(b) => hat0 = Some(v),
            Some(v) => hat1 = Some(v),
            None => {}
        }
    }
    let (Some(hat0), Some(hat1)) = (hat0, hat1) else {
        return Err(MpcError::Invalid("DReLU: a masked value was not revealed to this party".into()));
    };
    // 2. Both comparisons (as role 0 of dealer b+1 with partner b+2, as role 1 of dealer b+2
    //    with partner b+1) in one round.
    let low = (1u128 << (l - 1)) - 1;
    let pub_y = |h: &Tensor<R>| -> Vec<u64> { h.data().iter().map(|v| (v.to_u128() & low) as u64).collect() };
    let p0 = dcmp::eval_send(ctx, &keys.e0.1, prev(b), &pub_y(&hat0))?;
    let p1 = dcmp::eval_send(ctx, &keys.e1.1, next(b), &pub_y(&hat1))?;
    let res0 = dcmp::eval_recv(ctx, &keys.e0.1, p0)?;
    let res1 = dcmp::eval_recv(ctx, &keys.e1.1, p1)?;
    // 3. XOR shares of θ = MSB(x), then B2A with ρ (one packed bit per element to each partner).
    let theta = |role: u8, hat: &Tensor<R>, aux: &Aux<R, M>, res: &[u8]| -> Vec<u8> {
        (0..n)
            .map(|k| {
                let m = if role == 0 { u8::from(hat.data()[k].msb()) } else { 0 };
                m ^ (aux.c[k].to_u128() & 1) as u8 ^ (res[k] & 1)
            })
            .collect()
    };
    let t0 = theta(0, &hat0, &keys.e0.0, &res0);
    let t1 = theta(1, &hat1, &keys.e1.0, &res1);
    let masked_bits = |t: &[u8], aux: &Aux<R, M>| -> Vec<u8> {
        t.iter().zip(&aux.rho).map(|(&t, r)| t ^ (r.to_u128() & 1) as u8).collect()
    };
    let (m0, m1) = (masked_bits(&t0, &keys.e0.0), masked_bits(&t1, &keys.e1.0));
    ctx.net().send(prev(b), pack_bits(&m0, 1))?;
    ctx.net().send(next(b), pack_bits(&m1, 1))?;
    let o0 = unpack_bits(prev(b), &ctx.recv_at_most(prev(b), packed_len(1, n))?, 1, n)?;
    let o1 = unpack_bits(next(b), &ctx.recv_at_most(next(b), packed_len(1, n))?, 1, n)?;
    let arith = |role: u8, mine: &[u8], theirs: &[u8], aux: &Aux<R, M>| -> Vec<M> {
        (0..n)
            .map(|k| {
                let e = M::from_u64(u64::from(mine[k] ^ theirs[k]));
                let rho = aux.rho[k];
                let base = if role == 0 { e } else { M::ZERO };
                base + rho - e * rho - e * rho
            })
            .collect()
    };
    let th0 = arith(0, &m0, &o0, &keys.e0.0);
    let th1 = arith(1, &m1, &o1, &keys.e1.0);
    // Role 0 holds 1 - θ as (1 - θ_0), role 1 as (-θ_1).
    let d0: Vec<M> = th0.iter().map(|&t| M::ONE - t).collect();
    let d1: Vec<M> = th1.iter().map(|&t| M::ZERO - t).collect();
    Ok((d0, d1))
}

/// Step 4: `[[v]]_b = w_b ⊙ d_0 + w_{b+1} ⊙ d_1`, where `w_b, w_{b+1}` are this party's two
/// components of a weight sharing (the component index `j + 2` that dealer `j`'s pair knows).
fn weigh<M: Z2k>(d: &(Vec<M>, Vec<M>), w: &Rss<M>) -> Result<Tensor<M>> {
    let n = d.0.len();
    let (w0, w1) = (w.first.data(), w.second.data());
    let at = |v: &[M], k: usize| if v.len() == 1 { v[0] } else { v[k] };
    if w.len() != 1 && w.len() != n {
        return Err(MpcError::Invalid(format!("weights of {} elements for {n} values", w.len())));
    }
    Ok(Tensor::new(vec![n], (0..n).map(|k| d.0[k] * at(w0, k) + d.1[k] * at(w1, k)).collect())?)
}

/// Steps 1-4 at this party: its additive terms of `DReLU(x)` and of its MAC.
pub fn drelu_terms<R: Z2k, M: Z2k>(
    ctx: &mut Ctx,
    keys: &DreluKeys<R, M>,
    x: &Rss<R>,
    one: &Rss<M>,
    alpha: &Rss<M>,
) -> Result<(Tensor<M>, Tensor<M>)> {
    if one.len() != 1 || alpha.len() != 1 {
        return Err(MpcError::Invalid("⟨1⟩ and ⟨α⟩ must be single elements".into()));
    }
    let d = pair_shares(ctx, keys, x)?;
    Ok((weigh(&d, one)?, weigh(&d, alpha)?))
}

/// Π_Select (paper Algorithm 4): `⟨DReLU(x) · y⟩` in the MAC ring, its MAC queued in `macs.batch`.
/// The pair shares are weighted by the components of `⟨y⟩` and `⟨α·y⟩` instead of `⟨1⟩` and
/// `⟨α⟩`; `⟨α·y⟩` comes from a semi-honest product, whose errors the MAC check catches.
pub fn select<R: Z2k, M: Z2k>(
    ctx: &mut Ctx,
    keys: DreluKeys<R, M>,
    x: &Rss<R>,
    y: &Rss<M>,
    macs: &mut Macs<'_, M>,
) -> Result<Rss<M>> {
    let (n, alpha) = (x.len(), macs.alpha);
    if y.len() != n || alpha.len() != 1 {
        return Err(MpcError::Invalid(format!("select of {n} conditions and {} values", y.len())));
    }
    let y = y.reshape(&[n])?;
    let d = pair_shares(ctx, &keys, x)?;
    if !macs.batch.wants_macs() {
        let res = weigh(&d, &y)?;
        return crate::lut::lookup_finish(ctx, res.clone(), res, macs.batch);
    }
    let spread = |v: M| Tensor::new(vec![n], vec![v; n]);
    let alphas = Rss::new(spread(alpha.first.data()[0])?, spread(alpha.second.data()[0])?)?;
    let my = crate::mul::mul_semi_honest(ctx, &y, &alphas)?;
    crate::lut::lookup_finish(ctx, weigh(&d, &y)?, weigh(&d, &my)?, macs.batch)
}

#[cfg(test)]
mod tests {
    //! A cheating dealer (party 0) sends auxiliary data that breaks one of the relations and
    //! uses the same data as its own components; its two evaluators must abort blaming it.
    use super::*;
    use veil_mpc::harness::simulate;
    use veil_ring::{Z16, Z64};

    type Hook = dyn Fn(&mut Aux<Z16, Z64>, &mut Aux<Z16, Z64>, &mut Vec<u64>) + Sync;

    fn cheat(corrupt: &Hook) -> Vec<String> {
        let res = simulate(3, 40, |ctx| {
            let hook = |a: &mut Aux<Z16, Z64>, b: &mut Aux<Z16, Z64>, y: &mut Vec<u64>| corrupt(a, b, y);
            if ctx.party() == 0 {
                setup_dealing::<Z16, Z64>(ctx, 4, Security::Malicious, &hook).map(|_| ())
            } else {
                setup::<Z16, Z64>(ctx, 4).map(|_| ())
            }
        });
        res.into_iter()
            .map(|r| match r {
                Err(e) => e.to_string(),
                Ok(()) => "no error".into(),
            })
            .collect()
    }

    fn blamed(errs: &[String], what: &str) -> bool {
        errs.iter().all(|e| e.contains("DReLU setup") && e.contains(what) && e.contains("party 0"))
    }

    /// No party finishes, and an evaluator of dealer 0 aborts blaming it (the first evaluator
    /// to see the digests differ leaves, so the other may see that instead).
    fn evaluators_blame(errs: &[String], what: &str) -> bool {
        errs.iter().all(|e| e != "no error")
            && errs[1..]
                .iter()
                .any(|e| e.contains("DReLU setup") && e.contains(what) && e.contains("party 0"))
    }

    #[test]
    fn wrong_c_is_caught() {
        // c + 1 is either 2 (not a bit) or the wrong bit (the linear relation fails); the
        // digest check comes first.
        let errs = cheat(&|_, s1, _| s1.c[2] += Z16(1));
        assert!(evaluators_blame(&errs, "linear relation"), "{errs:?}");
    }

    #[test]
    fn a_non_binary_c_with_the_right_relation_is_caught() {
        // c = 3 with r adjusted by −2·2^{ℓ−1} = 0 mod 2^16 leaves the relation intact except
        // for 2^{ℓ−1}·2 = 2^16 ≡ 0: only the binarity check sees it.
        let errs = cheat(&|_, s1, _| s1.c[1] += Z16(2));
        assert!(blamed(&errs, "c not binary"), "{errs:?}");
    }

    #[test]
    fn digit_keys_for_another_y_are_caught() {
        let errs = cheat(&|_, _, y| y[3] ^= 1 << 9);
        assert!(evaluators_blame(&errs, "digit keys"), "{errs:?}");
    }

    #[test]
    fn a_mask_inconsistent_with_c_and_y_is_caught() {
        let errs = cheat(&|s0, _, _| s0.r[1] += Z16(4));
        assert!(evaluators_blame(&errs, "linear relation"), "{errs:?}");
    }

    #[test]
    fn a_b2a_bit_that_is_not_a_bit_is_caught() {
        let errs = cheat(&|_, s1, _| s1.rho[3] += Z64(2));
        assert!(blamed(&errs, "B2A bit not binary"), "{errs:?}");
    }
}
