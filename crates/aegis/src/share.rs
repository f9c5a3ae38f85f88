//! Masked sharing `⟨x⟩ = ([r_x], m_x)`, its randomness, dealing, input and reconstruction
//! (paper §2), in the convention `m_x = x + r_x`.
//!
//! | party | holds |
//! |---|---|
//! | P0 | `[r_x]_1, [r_x]_2` |
//! | P1 | `m_x, [r_x]_1` |
//! | P2 | `m_x, [r_x]_2` |
//!
//! `[r]_1` comes from the seed of P0 and P1, `[r]_2` from the seed of P0 and P2, so random masks
//! cost nothing; a value P0 knows is dealt as `[v]_1` from the P0–P1 seed and `[v]_2 = v - [v]_1`
//! sent to P2 (`l` bits). Reconstruction sends every component to the party missing it and a
//! hash of it from its other holder (one round): one corrupted server cannot change an opened
//! value without an abort.

use veil_crypto::Hasher;
use veil_mpc::{Ctx, MpcError, PartyId, Result};

pub use crate::masked::{Masked, Pair};

/// One instance of the family at one server: the ring width and the running digest of the
/// values P1 and P2 hold jointly.
#[derive(Debug)]
pub struct Aegis {
    l: u32,
    joint: Hasher,
    /// Products to verify at the next [`Aegis::check`].
    pub(crate) recorded: Vec<crate::claims::Recorded>,
    /// Sign extractions to verify at the next [`Aegis::check`].
    pub(crate) signs: Vec<crate::claims::SignPair>,
    /// A deviation the next sign extraction at this party makes (negative tests only).
    pub(crate) sign_tamper: Option<crate::claims::SignTamper>,
    /// Sign extractions to run honestly before `sign_tamper` applies (negative tests only).
    pub(crate) sign_tamper_after: usize,
    /// Sign extractions this party has run as P1 or P2.
    pub(crate) signs_run: usize,
    /// At P0, once [`Aegis::track_bit_deals`] asked for it: the index, among the messages it
    /// has sent, of each of its deals of a bound's bits (for the negative tests,
    /// [`Aegis::bit_deal_frames`]).
    pub(crate) bit_deal_frames: Option<Vec<usize>>,
    /// The most halvings `R` a verification claim gets (`None`: down to
    /// [`crate::verify::FINAL_DIMENSION`] terms).
    pub(crate) max_reductions: Option<usize>,
    /// The claim length below which the verification's reductions run on materialized
    /// vectors ([`crate::claims::MATERIALIZE_AT`]).
    pub(crate) materialize_at: usize,
    /// Which of the verification's halvings go two per pair of rounds ([`crate::verify`],
    /// "Pipelined halvings").
    pub(crate) pairing: crate::reduction::Pairing,
    /// Sends the other prover a reduction share that differs from the committed one (negative
    /// tests only).
    pub(crate) rushing: bool,
    /// A malicious P0's attempt to cancel its own error at the final check (negative tests
    /// only).
    pub(crate) cancel_attempt: Option<crate::verify::CancelAttempt>,
    /// Hands P1's `m_α` of the final check to a test (negative tests only: shows that knowing
    /// `α` is what a cancellation needs).
    pub(crate) leak_alpha: Option<fn(&veil_ring::Gr)>,
    /// The material dealt so far, by kind ([`crate::plan`]).
    pub(crate) usage: veil_mpc::prep::PrepUsage,
}

/// [`Aegis::share_input_each_start`] between its rounds: the three inputs' masks and the masked
/// inputs received so far.
pub(crate) struct InputsPending {
    rs: [Pair; 3],
    ms: [Vec<u64>; 3],
    n: usize,
}

pub(crate) fn wrap(l: u32) -> u64 {
    if l == 64 { u64::MAX } else { (1u64 << l) - 1 }
}

pub(crate) use crate::masked::{recv_u64s, to_bytes};

fn digest(v: &[u64]) -> Vec<u8> {
    let mut h = Hasher::new("veil/aegis/component");
    h.update_u64s(v);
    h.finalize().as_bytes().to_vec()
}

impl Aegis {
    /// An instance over `Z_2^l`, `2 ≤ l ≤ 64`.
    pub fn new(l: u32) -> Result<Self> {
        if !(2..=64).contains(&l) {
            return Err(MpcError::Invalid(format!("aegis rings are Z_2^l with 2 ≤ l ≤ 64, not l = {l}")));
        }
        Ok(Aegis {
            l,
            joint: Hasher::new("veil/aegis/joint-values"),
            recorded: Vec::new(),
            signs: Vec::new(),
            sign_tamper: None,
            sign_tamper_after: 0,
            signs_run: 0,
            bit_deal_frames: None,
            max_reductions: None,
            materialize_at: crate::claims::MATERIALIZE_AT,
            pairing: crate::reduction::Pairing::WhereCheap,
            rushing: false,
            cancel_attempt: None,
            leak_alpha: None,
            usage: veil_mpc::prep::PrepUsage::default(),
        })
    }

    /// Caps the verification's halvings at `r` per claim (the paper's `R`): fewer rounds, a
    /// larger final check (`N/2^R + 2` GR elements dealt by P0, as many each way between P1 and
    /// P2). Every party must use the same `r`.
    pub fn with_reductions(mut self, r: usize) -> Self {
        self.max_reductions = Some(r);
        self
    }

    /// Which halvings of the verification go in pairs, two rounds a pair, the second step's
    /// sums sent as polynomials in the first step's challenge ([`crate::verify`], "Pipelined
    /// halvings"; [`Pairing`](crate::Pairing)). The default pairs only where that costs about
    /// nothing; [`Pairing::Always`](crate::Pairing::Always) gives the fewest rounds for more
    /// computation, [`Pairing::Never`](crate::Pairing::Never) two rounds a halving. Every party
    /// must use the same setting.
    pub fn with_pairing(mut self, pairing: crate::Pairing) -> Self {
        self.pairing = pairing;
        self
    }

    /// Materializes the verification's claim only below `n` entries (every reduction above is
    /// computed from the recorded shares): for tests of the lazy reductions on small batches.
    #[doc(hidden)]
    pub fn with_materialize_at(mut self, n: usize) -> Self {
        self.materialize_at = n;
        self
    }

    /// Makes this prover send, in the verification's first reduction, a share of its inner
    /// products other than the one it committed to: what a rushing server that waited for the
    /// challenge would do (negative tests only).
    #[doc(hidden)]
    pub fn tamper_after_commit(&mut self) {
        self.rushing = true;
    }

    /// Makes this party, as P0, try to cancel an error of its own at the verification's final
    /// check ([`crate::verify::CancelAttempt`]; negative tests only).
    #[doc(hidden)]
    pub fn attempt_cancel(&mut self, attempt: crate::verify::CancelAttempt) {
        self.cancel_attempt = Some(attempt);
    }

    /// Makes this party, as P1, hand its `m_α` of the final check to `f` (negative tests only).
    #[doc(hidden)]
    pub fn leak_alpha(&mut self, f: fn(&veil_ring::Gr)) {
        self.leak_alpha = Some(f);
    }

    /// The ring width.
    pub fn l(&self) -> u32 {
        self.l
    }

    /// `x mod 2^l`.
    pub fn reduce(&self, x: u64) -> u64 {
        x & wrap(self.l)
    }

    pub(crate) fn check_server(ctx: &Ctx) -> Result<PartyId> {
        let me = ctx.party();
        if me > 2 || ctx.parties() < 3 {
            return Err(MpcError::Invalid(format!("party {me} is not one of the three aegis servers")));
        }
        Ok(me)
    }

    /// Adds values P1 and P2 both hold to the joint digest (checked by [`Aegis::check`]).
    pub(crate) fn record_joint(&mut self, v: &[u64]) {
        self.joint.update_u64s(v);
    }

    /// `n` values from the seed of this party and `peer`.
    pub(crate) fn pair_random(&self, ctx: &mut Ctx, peer: PartyId, what: &str, n: usize) -> Result<Vec<u64>> {
        let mut g = ctx.pair_prg(peer, what)?;
        Ok((0..n).map(|_| self.reduce(g.next_u64())).collect())
    }

    /// A random `[r]` from the seeds (no communication): P0 gets both shares.
    pub fn random_pair(&self, ctx: &mut Ctx, what: &str, n: usize) -> Result<Pair> {
        let me = Self::check_server(ctx)?;
        let one = if me != 2 {
            self.pair_random(ctx, if me == 0 { 1 } else { 0 }, &format!("{what}/1"), n)?
        } else {
            vec![]
        };
        let two = if me != 1 {
            self.pair_random(ctx, if me == 0 { 2 } else { 0 }, &format!("{what}/2"), n)?
        } else {
            vec![]
        };
        Ok(Pair { one, two })
    }

    /// P0 deals `[v]` of values it knows (`Some(v)` at P0): `l` bits to P2.
    pub fn deal(&self, ctx: &mut Ctx, what: &str, v: Option<&[u64]>, n: usize) -> Result<Pair> {
        let me = Self::check_server(ctx)?;
        match me {
            0 => {
                let v = v.ok_or_else(|| MpcError::Invalid("P0 deals the values it knows".into()))?;
                let one = self.pair_random(ctx, 1, &format!("{what}/1"), n)?;
                let two: Vec<u64> =
                    v.iter().zip(&one).map(|(&a, &b)| self.reduce(a.wrapping_sub(b))).collect();
                ctx.net().send(2, to_bytes(&two))?;
                Ok(Pair { one, two })
            }
            1 => Ok(Pair { one: self.pair_random(ctx, 0, &format!("{what}/1"), n)?, two: vec![] }),
            _ => Ok(Pair { one: vec![], two: recv_u64s(ctx, 0, n)? }),
        }
    }

    /// A fresh random `⟨r⟩` nobody knows (masks from seeds, `m` from the seed of P1 and P2).
    pub fn random_masked(&self, ctx: &mut Ctx, what: &str, n: usize) -> Result<Masked> {
        let me = Self::check_server(ctx)?;
        let r = self.random_pair(ctx, &format!("{what}/mask"), n)?;
        let m = if me == 0 { vec![] } else { self.pair_random(ctx, 3 - me, &format!("{what}/m"), n)? };
        Ok(Masked { m, r, n })
    }

    /// Every server shares its own `n` values (`mine`) at once: [`Aegis::share_input`] for
    /// owners P0, P1 and P2 with their messages merged into 2 rounds instead of 5, in three
    /// calls so a caller can interleave other messages (start, send, finish; the sharings come
    /// back in owner order). Round 1: P0 gives P1 and P2 the mask share each lacks of its own
    /// input and sends its masked input; P1 and P2 send each other a hash of the share P0 sends
    /// the other (P1's and P2's `mine` are used only in round 2).
    pub(crate) fn share_input_each_start(&mut self, ctx: &mut Ctx, mine: &[u64]) -> Result<InputsPending> {
        let me = Self::check_server(ctx)?;
        let n = mine.len();
        let rs = [
            self.random_pair(ctx, "input", n)?,
            self.random_pair(ctx, "input", n)?,
            self.random_pair(ctx, "input", n)?,
        ];
        if me == 0 {
            ctx.net().send(1, to_bytes(&rs[1].two))?;
            ctx.net().send(2, to_bytes(&rs[2].one))?;
            let mask: Vec<u64> = rs[0].one.iter().zip(&rs[0].two).map(|(a, b)| a.wrapping_add(*b)).collect();
            self.send_masked_input(ctx, mine, &mask)?;
        } else {
            let other = 3 - me;
            let held = if me == 1 { &rs[other].one } else { &rs[other].two };
            ctx.net().send(other, digest(held))?;
        }
        Ok(InputsPending { rs, ms: Default::default(), n })
    }

    /// Round 2: P1 and P2 receive P0's masked input, check the mask share of their own input
    /// and send their masked input to each other.
    pub(crate) fn share_input_each_send(
        &mut self,
        ctx: &mut Ctx,
        pending: &mut InputsPending,
        mine: &[u64],
    ) -> Result<()> {
        let me = Self::check_server(ctx)?;
        let n = pending.n;
        if mine.len() != n {
            return Err(MpcError::Invalid(format!("{} input values, declared {n}", mine.len())));
        }
        if me == 0 {
            return Ok(());
        }
        let other = 3 - me;
        let got = recv_u64s(ctx, 0, n)?;
        pending.ms[0] = recv_u64s(ctx, 0, n)?;
        if ctx.recv_at_most(other, 32)? != digest(&got) {
            return Err(MpcError::abort("aegis input: mask share from P0", Some(0)));
        }
        let own = if me == 1 { &pending.rs[me].one } else { &pending.rs[me].two };
        let mask: Vec<u64> = own.iter().zip(&got).map(|(a, b)| a.wrapping_add(*b)).collect();
        pending.ms[me] = self.send_masked_input(ctx, mine, &mask)?;
        Ok(())
    }

    /// The end of round 2: P1 and P2 receive the other's masked input.
    pub(crate) fn share_input_each_finish(
        &mut self,
        ctx: &mut Ctx,
        pending: InputsPending,
    ) -> Result<[Masked; 3]> {
        let me = Self::check_server(ctx)?;
        let InputsPending { rs, mut ms, n } = pending;
        if me != 0 {
            let other = 3 - me;
            ms[other] = recv_u64s(ctx, other, n)?;
            for m in &ms {
                self.record_joint(m);
            }
        }
        let [r0, r1, r2] = rs;
        let [m0, m1, m2] = ms;
        Ok([Masked { m: m0, r: r0, n }, Masked { m: m1, r: r1, n }, Masked { m: m2, r: r2, n }])
    }

    /// Sends `x + mask` to the online parties other than this one; returns it.
    fn send_masked_input(&self, ctx: &mut Ctx, x: &[u64], mask: &[u64]) -> Result<Vec<u64>> {
        let me = ctx.party();
        let m: Vec<u64> = x.iter().zip(mask).map(|(x, r)| self.reduce(x.wrapping_add(*r))).collect();
        for peer in [1, 2].into_iter().filter(|&p| p != me) {
            ctx.net().send(peer, to_bytes(&m))?;
        }
        Ok(m)
    }

    /// Shares server `owner`'s values (`Some(x)` at the owner). The owner learns the mask
    /// shares it lacks from P0, checked against a hash from their other holder, and sends
    /// `m = x + r` to the online parties that are not itself; P1 and P2 compare what they
    /// received in [`Aegis::check`]. Cost: owner P0: `2l` bits; owner P1 or P2: `l` bits from P0,
    /// a hash, and `l` bits to the other online party.
    pub fn share_input(
        &mut self,
        ctx: &mut Ctx,
        owner: PartyId,
        x: Option<&[u64]>,
        n: usize,
    ) -> Result<Masked> {
        let me = Self::check_server(ctx)?;
        if owner > 2 {
            return Err(MpcError::Invalid(format!("party {owner} is not a server")));
        }
        let r = self.random_pair(ctx, "input", n)?;
        // The owner's view of the whole mask.
        let mask = match (me, owner) {
            (0, 0) => Some(r.one.iter().zip(&r.two).map(|(a, b)| a.wrapping_add(*b)).collect::<Vec<_>>()),
            (0, k) => {
                // P0 gives the owner the share it lacks; the other holder sends a hash of it.
                let other = if k == 1 { &r.two } else { &r.one };
                ctx.net().send(k, to_bytes(other))?;
                None
            }
            (j, k) if j == k => {
                let got = recv_u64s(ctx, 0, n)?;
                let hash = ctx.recv_at_most(3 - j, 32)?;
                if hash != digest(&got) {
                    return Err(MpcError::abort("aegis input: mask share from P0", Some(0)));
                }
                let mine = if j == 1 { &r.one } else { &r.two };
                Some(mine.iter().zip(&got).map(|(a, b)| a.wrapping_add(*b)).collect())
            }
            (j, _) => {
                if owner != 0 {
                    let mine = if j == 1 { &r.one } else { &r.two };
                    ctx.net().send(owner, digest(mine))?;
                }
                None
            }
        };
        let m = if let Some(mask) = mask {
            let x = x.ok_or_else(|| MpcError::Invalid("the input owner must pass its values".into()))?;
            if x.len() != n {
                return Err(MpcError::Invalid(format!("{} input values, declared {n}", x.len())));
            }
            let m = self.send_masked_input(ctx, x, &mask)?;
            if me == 0 { vec![] } else { m }
        } else if me == 0 {
            vec![]
        } else {
            recv_u64s(ctx, owner, n)?
        };
        if me != 0 {
            self.record_joint(&m);
        }
        Ok(Masked { m, r, n })
    }

    /// Shares the tensor of an input owner outside the servers (party `owner ≥ 3`: a data or
    /// model owner; it passes `Some(x)`, the servers `None`). The owner must learn the whole
    /// mask: P0 sends it `[r]_1` and `[r]_2`, and P1 and P2 each send a hash of their share, so
    /// a wrong share from P0 is caught by the owner; the owner sends `m = x + r` to P1 and P2,
    /// who compare it in [`Aegis::check`]. Cost: P0 `2l` bits, the owner `2l` bits, two hashes.
    pub fn share_from_owner(
        &mut self,
        ctx: &mut Ctx,
        owner: PartyId,
        x: Option<&[u64]>,
        n: usize,
    ) -> Result<Option<Masked>> {
        let me = ctx.party();
        if owner < 3 || owner >= ctx.parties() {
            return Err(MpcError::Invalid(format!("party {owner} is not an input owner")));
        }
        if me == owner {
            let x = x.ok_or_else(|| MpcError::Invalid("the input owner must pass its values".into()))?;
            if x.len() != n {
                return Err(MpcError::Invalid(format!("{} input values, declared {n}", x.len())));
            }
            let both = recv_u64s(ctx, 0, 2 * n)?;
            let (r1, r2) = both.split_at(n);
            if ctx.recv_at_most(1, 32)? != digest(r1) || ctx.recv_at_most(2, 32)? != digest(r2) {
                return Err(MpcError::abort("aegis owner input: mask shares from P0", Some(0)));
            }
            let m: Vec<u64> =
                (0..n).map(|i| self.reduce(x[i].wrapping_add(r1[i]).wrapping_add(r2[i]))).collect();
            ctx.net().send(1, to_bytes(&m))?;
            ctx.net().send(2, to_bytes(&m))?;
            return Ok(None);
        }
        if me > 2 {
            return Ok(None);
        }
        let r = self.random_pair(ctx, "owner-input", n)?;
        let m = match me {
            0 => {
                let mut both = to_bytes(&r.one);
                both.extend(to_bytes(&r.two));
                ctx.net().send(owner, both)?;
                vec![]
            }
            j => {
                ctx.net().send(owner, digest(if j == 1 { &r.one } else { &r.two }))?;
                let m = recv_u64s(ctx, owner, n)?;
                self.record_joint(&m);
                m
            }
        };
        Ok(Some(Masked { m, r, n }))
    }

    /// Reveals `⟨x⟩` to an input owner (`owner ≥ 3`) only: P1 sends `m` and `[r]_1`, P2 sends
    /// `[r]_2` and a hash of `m`, P0 hashes of both mask shares; the owner checks every
    /// component against its other holder. Servers pass their share and get `None`; the owner
    /// passes `None` and gets the values. Callers run [`Aegis::check`] first.
    pub fn reveal_to_owner(
        &mut self,
        ctx: &mut Ctx,
        x: Option<&Masked>,
        owner: PartyId,
        n: usize,
    ) -> Result<Option<Vec<u64>>> {
        let me = ctx.party();
        if owner < 3 || owner >= ctx.parties() {
            return Err(MpcError::Invalid(format!("party {owner} is not an input owner")));
        }
        if me == owner {
            let from1 = recv_u64s(ctx, 1, 2 * n)?;
            let from2 = recv_u64s(ctx, 2, n)?;
            let (m_hash, r2) = (ctx.recv_at_most(2, 32)?, from2);
            let (h1, h2) = (ctx.recv_at_most(0, 32)?, ctx.recv_at_most(0, 32)?);
            let (m, r1) = from1.split_at(n);
            if m_hash != digest(m) || h1 != digest(r1) || h2 != digest(&r2) {
                return Err(MpcError::abort("aegis output: the servers' components disagree", None));
            }
            return Ok(Some(
                (0..n).map(|i| self.reduce(m[i].wrapping_sub(r1[i]).wrapping_sub(r2[i]))).collect(),
            ));
        }
        if me > 2 {
            return Ok(None);
        }
        let x = x.ok_or_else(|| MpcError::Invalid("a server must pass its share".into()))?;
        if x.n != n {
            return Err(MpcError::Invalid(format!("output of {} elements, declared {n}", x.n)));
        }
        match me {
            0 => {
                ctx.net().send(owner, digest(&x.r.one))?;
                ctx.net().send(owner, digest(&x.r.two))?;
            }
            1 => {
                let mut msg = to_bytes(&x.m);
                msg.extend(to_bytes(&x.r.one));
                ctx.net().send(owner, msg)?;
            }
            _ => {
                ctx.net().send(owner, to_bytes(&x.r.two))?;
                ctx.net().send(owner, digest(&x.m))?;
            }
        }
        Ok(None)
    }

    /// Opens `⟨x⟩` to every server, checking each received component against its other
    /// holder's hash (1 round; `3l` bits plus hashes).
    pub fn reveal_all(&mut self, ctx: &mut Ctx, x: &Masked) -> Result<Vec<u64>> {
        let me = Self::check_server(ctx)?;
        let n = x.n;
        let (m, r1, r2) = match me {
            0 => {
                ctx.net().send(2, to_bytes(&x.r.one))?;
                ctx.net().send(1, to_bytes(&x.r.two))?;
                let m = recv_u64s(ctx, 1, n)?;
                if ctx.recv_at_most(2, 32)? != digest(&m) {
                    return Err(MpcError::abort("aegis reveal: m_x from P1 and P2 differ", None));
                }
                (m, x.r.one.clone(), x.r.two.clone())
            }
            1 => {
                ctx.net().send(0, to_bytes(&x.m))?;
                ctx.net().send(2, digest(&x.r.one))?;
                let r2 = recv_u64s(ctx, 0, n)?;
                if ctx.recv_at_most(2, 32)? != digest(&r2) {
                    return Err(MpcError::abort("aegis reveal: [r]_2 from P0 and P2 differ", None));
                }
                (x.m.clone(), x.r.one.clone(), r2)
            }
            _ => {
                ctx.net().send(0, digest(&x.m))?;
                ctx.net().send(1, digest(&x.r.two))?;
                let r1 = recv_u64s(ctx, 0, n)?;
                if ctx.recv_at_most(1, 32)? != digest(&r1) {
                    return Err(MpcError::abort("aegis reveal: [r]_1 from P0 and P1 differ", None));
                }
                (x.m.clone(), r1, x.r.two.clone())
            }
        };
        Ok((0..n).map(|i| self.reduce(m[i].wrapping_sub(r1[i]).wrapping_sub(r2[i]))).collect())
    }

    /// Opens `⟨x⟩` to server `to` only (the others get `None`): the two components it lacks come
    /// from one holder in full and from the other as a hash.
    pub fn reveal_to(&mut self, ctx: &mut Ctx, x: &Masked, to: PartyId) -> Result<Option<Vec<u64>>> {
        let me = Self::check_server(ctx)?;
        if to > 2 {
            return Err(MpcError::Invalid(format!("party {to} is not a server")));
        }
        let n = x.n;
        let open = |m: &[u64], a: &[u64], b: &[u64]| -> Vec<u64> {
            (0..n).map(|i| self.reduce(m[i].wrapping_sub(a[i]).wrapping_sub(b[i]))).collect()
        };
        match (me, to) {
            (0, 0) => {
                let m = recv_u64s(ctx, 1, n)?;
                if ctx.recv_at_most(2, 32)? != digest(&m) {
                    return Err(MpcError::abort("aegis reveal: m_x from P1 and P2 differ", None));
                }
                Ok(Some(open(&m, &x.r.one, &x.r.two)))
            }
            (1, 0) => ctx.net().send(0, to_bytes(&x.m)).map(|_| None).map_err(Into::into),
            (2, 0) => ctx.net().send(0, digest(&x.m)).map(|_| None).map_err(Into::into),
            (0, k) => {
                let lacking = if k == 1 { &x.r.two } else { &x.r.one };
                ctx.net().send(k, to_bytes(lacking))?;
                Ok(None)
            }
            (j, k) if j == k => {
                let got = recv_u64s(ctx, 0, n)?;
                if ctx.recv_at_most(3 - j, 32)? != digest(&got) {
                    return Err(MpcError::abort("aegis reveal: mask share from P0", Some(0)));
                }
                let mine = if j == 1 { &x.r.one } else { &x.r.two };
                Ok(Some(open(&x.m, mine, &got)))
            }
            (j, _) => {
                let mine = if j == 1 { &x.r.one } else { &x.r.two };
                ctx.net().send(to, digest(mine))?;
                Ok(None)
            }
        }
    }

    /// The deferred checks, which must pass before any output is released (in `Z_2^64`; the
    /// narrower rings are for functional tests only): the sign-bit verification of every sign
    /// extraction since the last check (`crate::pos`) and P1 and P2's comparison of their
    /// digests of every jointly held value, in one lane; the reduction of every recorded
    /// product ([`crate::verify`], over the Galois ring) in another, side by side; then the
    /// final check of the reduced claim and of the sign checks' equality claims.
    ///
    /// The lanes (`veil_net::Lanes`) are independent: the reduction's messages depend on the
    /// recorded products and the parties' seeds only, the sign checks' on the sign pairs,
    /// and the equality claims they make are tested in the final check with coefficients
    /// drawn there, after both lanes. So the verification takes the rounds of the longer lane
    /// plus the final check's, not their sum.
    pub fn check(&mut self, ctx: &mut Ctx) -> Result<()> {
        Self::check_server(ctx)?;
        let signs = std::mem::take(&mut self.signs);
        let recorded = std::mem::take(&mut self.recorded);
        let full = self.l == 64;
        let mut lanes = ctx.net().begin_lanes();
        ctx.net().next_lane(&mut lanes);
        let late = if full { self.verify_signs(ctx, signs)? } else { Default::default() };
        // After the sign checks' inputs, the last values P1 and P2 hold jointly.
        self.compare_joint(ctx)?;
        ctx.net().next_lane(&mut lanes);
        let reduced = if full { self.reduce_products(ctx, recorded, &late, &lanes)? } else { None };
        ctx.net().end_lanes(lanes);
        match reduced {
            Some(r) => self.final_check(ctx, r, &late),
            None => Ok(()),
        }
    }

    /// P1 and P2 compare their digests of every value they hold jointly.
    fn compare_joint(&mut self, ctx: &mut Ctx) -> Result<()> {
        let me = ctx.party();
        if me == 0 {
            return Ok(());
        }
        let mine = self.joint.finalize().as_bytes().to_vec();
        ctx.net().send(3 - me, mine.clone())?;
        if ctx.recv_at_most(3 - me, mine.len())? != mine {
            return Err(MpcError::abort("aegis: P1 and P2 hold different jointly held values", None));
        }
        Ok(())
    }

    /// `⟨x⟩ + ⟨y⟩`, local.
    pub fn add(&self, x: &Masked, y: &Masked) -> Result<Masked> {
        self.combine(x, y, |a, b| a.wrapping_add(b))
    }

    /// `⟨x⟩ - ⟨y⟩`, local.
    pub fn sub(&self, x: &Masked, y: &Masked) -> Result<Masked> {
        self.combine(x, y, |a, b| a.wrapping_sub(b))
    }

    fn combine(&self, x: &Masked, y: &Masked, f: impl Fn(u64, u64) -> u64) -> Result<Masked> {
        if x.n != y.n {
            return Err(MpcError::Invalid(format!("{} and {} elements", x.n, y.n)));
        }
        let zip = |a: &[u64], b: &[u64]| a.iter().zip(b).map(|(&p, &q)| self.reduce(f(p, q))).collect();
        Ok(Masked {
            m: zip(&x.m, &y.m),
            r: Pair { one: zip(&x.r.one, &y.r.one), two: zip(&x.r.two, &y.r.two) },
            n: x.n,
        })
    }

    /// `c·⟨x⟩` for a public `c`, local.
    pub fn scale(&self, x: &Masked, c: u64) -> Masked {
        let s = |v: &[u64]| v.iter().map(|&a| self.reduce(a.wrapping_mul(c))).collect();
        Masked { m: s(&x.m), r: Pair { one: s(&x.r.one), two: s(&x.r.two) }, n: x.n }
    }

    /// `⟨x⟩ + c` for public `c` (P1 and P2 add it to `m`), local.
    pub fn add_public(&self, x: &Masked, c: &[u64]) -> Result<Masked> {
        if !x.m.is_empty() && c.len() != x.n {
            return Err(MpcError::Invalid(format!("{} constants for {} elements", c.len(), x.n)));
        }
        let m = x.m.iter().zip(c).map(|(&a, &b)| self.reduce(a.wrapping_add(b))).collect();
        Ok(Masked { m, r: x.r.clone(), n: x.n })
    }
}
