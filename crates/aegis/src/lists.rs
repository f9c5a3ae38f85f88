//! The masked, permuted lists of the sign-bit comparison, shared by the sign extraction
//! (paper §3, [`crate::sign`]) and its verification Π_Pos (paper §4.2, [`crate::pos`]), and
//! what a MAC check needs of them.
//!
//! Two parties hold `M` (bits `a_0 … a_{l−2}` of `M̂` big-endian, then `a_{l−1} = 0`) and
//! additive `Z_p` shares of the bits `b_0 … b_{l−2}` of the other side's bound (then
//! `b_{l−1} = 1`); `K` is a party's share of the constant 1 (1 at the first, 0 at the second).
//! Per position `t`:
//!
//! ```text
//! c_t  = a_t ⊕ b_t = (1 − 2a_t)·b_t + a_t·K
//! c'_t = Σ_{s<t} c_s − c_t + K                      (= Σ_{s≤t} c_s − 2c_t + 1)
//! u_t  = w_t·c'_t + β_t·K,    β_t = MSB(M) ⊕ a_t ⊕ Δ
//! u'_t = w'_t·(w_t·c'_t + K)
//! ```
//!
//! and entry `e` of the list sent is `u_{π(e)}` (`e < l`) or `u'_{π(e−l)}`. `Δ`, `w`, `w'`, `π`
//! ([`Masks`]) come from the two parties' common seed.
//!
//! **A combination without the MAC components.** Every entry is an affine function of the
//! bits: `entry_e = Σ_s A_{e,s}·b_s + C_e`, with `A` and `C` known to the two parties only.
//! So for public coefficients `σ_e`, `Σ_e σ_e·entry_e = Σ_s g_s·b_s + h` with
//! `q_t = σ_{π⁻¹(t)}·w_t + σ_{l+π⁻¹(t)}·w'_t·w_t`, `d_s = 1 − 2a_s`,
//! `g_s = d_s·(Σ_{t>s} q_t − q_s)` and `h = Σ_t q_t·k_t + Σ_t (σ_{π⁻¹(t)}·β_t + σ_{l+π⁻¹(t)}·w'_t)`,
//! where `k_t = Σ_{s<t} a_s − a_t + 1` (`k_{l−1} = Σ_{s<l−1} a_s`) is the constant of `c'_t`
//! ([`weights`]). A party's share of the combination's MAC is then `Σ_s g_s·γ(b_s) + h·γ(1)`
//! from its MAC shares of the bits: `O(l)` work per key instead of a MAC component for every
//! entry.

use crate::pos::MAC_KEYS;
use crate::prime::Draws;

/// Most positions of a list (`l ≤ 64`).
pub(crate) const MAX_L: usize = 64;

/// Reduction modulo the list field's prime `p < 128` of operands below `2^16`. The kernels are generic over it: `p = 127` (the field of
/// `Z_2^64`) is a Mersenne prime and reduces with shifts and adds ([`M127`]); the narrower
/// rings' primes (tests) use a Barrett reduction ([`Small`]).
pub(crate) trait Reduce: Copy {
    /// `p`.
    fn p(self) -> u32;
    /// `x mod p` for `x < 2^16`.
    fn red(self, x: u32) -> u32;
    /// The same on a 16-bit word (the kernels' lanes).
    #[inline(always)]
    fn red16(self, x: u16) -> u16 {
        self.red(u32::from(x)) as u16
    }
}

/// Barrett reduction: `m = ⌈2^24/p⌉`, `x mod p = x − p·⌊x·m/2^24⌋`, exact while
/// `x·(m·p − 2^24) < 2^24`, which holds below `2^24/128 = 2^17`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Small {
    p: u32,
    m: u64,
}

impl Small {
    pub(crate) fn new(p: u32) -> Small {
        debug_assert!((2..128).contains(&p));
        Small { p, m: (1u64 << 24).div_ceil(u64::from(p)) }
    }
}

impl Reduce for Small {
    #[inline(always)]
    fn p(self) -> u32 {
        self.p
    }
    #[inline(always)]
    fn red(self, x: u32) -> u32 {
        debug_assert!(x < 1 << 16);
        x - self.p * ((u64::from(x) * self.m) >> 24) as u32
    }
}

/// `p = 2^7 − 1`: `2^7 ≡ 1`, so `x ≡ (x mod 2^7) + ⌊x/2^7⌋`; folded until below 256, then
/// one conditional subtraction.
#[derive(Clone, Copy, Debug)]
pub(crate) struct M127;

impl Reduce for M127 {
    #[inline(always)]
    fn p(self) -> u32 {
        127
    }
    #[inline(always)]
    fn red(self, x: u32) -> u32 {
        let y = (x & 127) + (x >> 7); // < 128 + 512
        let z = (y & 127) + (y >> 7); // ≤ 127 + 4
        z - 127 * u32::from(z >= 127)
    }
    #[inline(always)]
    fn red16(self, x: u16) -> u16 {
        let y = (x & 127) + (x >> 7);
        let z = (y & 127) + (y >> 7);
        z - 127 * u16::from(z >= 127)
    }
}

/// One element's masks from the two parties' common seed: `Δ`, `w`, `w'` (in `Z_p^*`) and the
/// permutation `π` with its inverse, for lists of `l` positions.
#[derive(Clone, Debug)]
pub(crate) struct Masks {
    pub(crate) delta: u8,
    pub(crate) w: [u8; MAX_L],
    pub(crate) w2: [u8; MAX_L],
    pub(crate) perm: [u8; MAX_L],
    pub(crate) inverse: [u8; MAX_L],
}

impl Masks {
    /// The next element's masks: `Δ`, then `w`, `w'`, then `π` by Fisher–Yates, every draw
    /// exactly uniform (one element alone; [`MaskStream`] draws a run of them the same way).
    #[cfg(test)]
    pub(crate) fn draw(d: &mut Draws, l: usize) -> Masks {
        let delta = d.below_or_equal(1) as u8;
        Masks::draw_lists(d, l, delta)
    }

    /// An element's masks of the lists, `w`, `w'` and `π`, drawn as [`Masks::draw`] draws them,
    /// with a `Δ` drawn elsewhere (the sign extraction draws `Δ` offline and the rest online).
    #[cfg(test)]
    pub(crate) fn draw_lists(d: &mut Draws, l: usize, delta: u8) -> Masks {
        let mut js = [0u8; MAX_L];
        let mut m = Masks::unshuffled(d, None, l, delta, &mut js);
        shuffle(std::slice::from_mut(&mut m), &[js], l);
        m
    }

    /// Masks with `Δ` and every other entry 0, to be drawn into.
    pub(crate) fn blank(delta: u8) -> Masks {
        Masks { delta, w: [0; MAX_L], w2: [0; MAX_L], perm: [0; MAX_L], inverse: [0; MAX_L] }
    }

    /// `w` then `w'`, the next `2l` elements of `Z_p^*` from `d`.
    fn draw_weights(&mut self, d: &mut Draws, l: usize) {
        d.fill_nonzero(&mut self.w[..l]);
        d.fill_nonzero(&mut self.w2[..l]);
    }

    /// `w`, `w'` and the swap targets `js` of an element's Fisher–Yates shuffle, read from the
    /// stream in [`Masks::draw_lists`]'s order (`w`, `w'` from `weights` where the weights
    /// have a stream of their own), with `π` still the identity ([`shuffle`] applies the swaps,
    /// which read nothing from the stream).
    #[cfg(test)]
    fn unshuffled(
        d: &mut Draws,
        weights: Option<&mut Draws>,
        l: usize,
        delta: u8,
        js: &mut [u8; MAX_L],
    ) -> Masks {
        let mut m = Masks::blank(delta);
        m.draw_unshuffled(d, weights, l, js);
        m
    }

    /// [`Masks::unshuffled`] into `self` (its `Δ` kept; `π` and `π⁻¹` are left for [`shuffle`]
    /// to write): no 257-byte value to move per element.
    fn draw_unshuffled(
        &mut self,
        d: &mut Draws,
        weights: Option<&mut Draws>,
        l: usize,
        js: &mut [u8; MAX_L],
    ) {
        self.draw_weights(weights.unwrap_or(d), l);
        // Step `k` (from `l − 1` down) draws `j_k ≤ k` from 16 random bits (two bytes per step,
        // read at once; `Draws::below_or_equal_with` redraws in the rare biased case).
        let mut raw = [0u8; 2 * MAX_L];
        d.bytes(&mut raw[..2 * (l - 1)]);
        for (step, k) in (1..l).rev().enumerate() {
            let r = u32::from(raw[2 * step]) | u32::from(raw[2 * step + 1]) << 8;
            js[k] = d.below_or_equal_with(r, k as u32) as u8;
        }
    }
}

/// What a prover keeps of an element's masks from the lists (round 2 of Π_Pos) to the MACs of
/// their combinations (round 4), which read `Δ`, `w`, `w'` and `π⁻¹`: `Δ` and `π⁻¹` (65 bytes
/// instead of the masks' 257). The shuffle that made `π` is most of the cost of drawing the
/// masks again; `w` and `w'` come from a stream of their own ([`MaskStream::split`]), so
/// round 4 draws them again in order ([`Kept::masks`]) at the cost of their bytes alone, and
/// the kept masks of a run take a quarter of the memory (LeNet at batch 30: 50 instead of 200
/// MB for the three servers, memory that the kernel would zero on first touch).
#[derive(Clone, Debug)]
pub(crate) struct Kept {
    delta: u8,
    inverse: [u8; MAX_L],
}

impl Kept {
    pub(crate) fn new(m: &Masks) -> Kept {
        Kept { delta: m.delta, inverse: m.inverse }
    }

    /// The element's masks again, `w` and `w'` the next `2l` draws of `weights` (the stream
    /// [`MaskStream::split`] read them from, at the same element); `π` is left out (zeros):
    /// the MACs of the combinations read `π⁻¹` only.
    #[cfg(test)]
    pub(crate) fn masks(&self, weights: &mut Draws, l: usize) -> Masks {
        let mut m = Masks::blank(self.delta);
        self.masks_into(&mut m, weights, l);
        m
    }

    /// [`Kept::masks`] into `m` (whose `π` is left as it was): no 257-byte value to move per
    /// element.
    pub(crate) fn masks_into(&self, m: &mut Masks, weights: &mut Draws, l: usize) {
        m.delta = self.delta;
        m.inverse = self.inverse;
        m.draw_weights(weights, l);
    }
}

/// Elements whose shuffles [`MaskStream`] runs side by side. A shuffle's swaps form one chain of
/// dependent loads and stores, so alone it waits on each; four independent chains keep a
/// core's load and store units busy (two Zen 1 cores: 390 → about 200 ns per element).
const SIDE_BY_SIDE: usize = 4;

/// The Fisher–Yates swaps of each element of `group` (`π` the identity), step `k` from `l − 1`
/// down swapping positions `k` and `j_k` (`js`), the elements side by side. Position `k` is
/// final once step `k` has swapped into it, so its inverse is set there, from the value in hand
/// (a second pass reading `π` back cost as much as the shuffle).
fn shuffle(group: &mut [Masks], js: &[[u8; MAX_L]], l: usize) {
    for m in group.iter_mut() {
        for (t, v) in m.perm[..l].iter_mut().enumerate() {
            *v = t as u8;
        }
    }
    for k in (1..l).rev() {
        for (m, j) in group.iter_mut().zip(js) {
            m.perm.swap(k, usize::from(j[k]));
            m.inverse[usize::from(m.perm[k])] = k as u8;
        }
    }
    for m in group.iter_mut() {
        m.inverse[usize::from(m.perm[0])] = 0;
    }
}

/// The masks of a run of elements from one stream, each exactly as [`Masks::draw`] (or
/// [`Masks::draw_lists`], with given `Δ`s) would draw it one after the other: the stream is
/// read in the same order, a group of [`SIDE_BY_SIDE`] elements ahead, and the group's
/// shuffles run side by side.
pub(crate) struct MaskStream<'a> {
    draws: &'a mut Draws,
    /// The stream of `w` and `w'`, where they have one of their own ([`MaskStream::split`]).
    weights: Option<&'a mut Draws>,
    l: usize,
    /// Each element's `Δ` where it is drawn elsewhere, else `None` (drawn from the stream).
    deltas: Option<&'a [u8]>,
    /// Elements not yet drawn.
    left: usize,
    /// Elements drawn before the current group.
    before: usize,
    group: Vec<Masks>,
    next: usize,
}

impl<'a> MaskStream<'a> {
    /// The masks of `n` elements from `draws`, with `Δ` drawn from it ([`Masks::draw`]).
    pub(crate) fn new(draws: &'a mut Draws, l: usize, n: usize) -> MaskStream<'a> {
        MaskStream {
            draws,
            weights: None,
            l,
            deltas: None,
            left: n,
            before: 0,
            group: Vec::with_capacity(SIDE_BY_SIDE),
            next: 0,
        }
    }

    /// [`MaskStream::new`] with `w` and `w'` drawn from `weights` instead, element by element
    /// (so [`Kept::masks`] draws them again without the shuffles).
    pub(crate) fn split(draws: &'a mut Draws, weights: &'a mut Draws, l: usize, n: usize) -> MaskStream<'a> {
        MaskStream { weights: Some(weights), ..MaskStream::new(draws, l, n) }
    }

    /// The masks of the elements of `deltas`, whose `Δ` are given ([`Masks::draw_lists`]).
    pub(crate) fn with_deltas(draws: &'a mut Draws, l: usize, deltas: &'a [u8]) -> MaskStream<'a> {
        MaskStream { deltas: Some(deltas), ..MaskStream::new(draws, l, deltas.len()) }
    }

    /// The next element's masks (`None` past the last).
    pub(crate) fn next_masks(&mut self) -> Option<&Masks> {
        if self.next == self.group.len() {
            self.refill();
        }
        let m = self.group.get(self.next)?;
        self.next += 1;
        Some(m)
    }

    fn refill(&mut self) {
        self.before += self.group.len();
        self.next = 0;
        let count = self.left.min(SIDE_BY_SIDE);
        self.left -= count;
        // The group's masks are drawn in place, over the last group's (every byte an element
        // reads is drawn again: `Δ`, `w`, `w'` here, `π` and `π⁻¹` by the shuffle).
        self.group.resize_with(count, || Masks::blank(0));
        let mut js = [[0u8; MAX_L]; SIDE_BY_SIDE];
        for (e, (j, m)) in js.iter_mut().zip(&mut self.group).enumerate() {
            m.delta = match self.deltas {
                Some(d) => d[self.before + e],
                None => self.draws.below_or_equal(1) as u8,
            };
            m.draw_unshuffled(self.draws, self.weights.as_deref_mut(), self.l, j);
        }
        shuffle(&mut self.group, &js[..count], self.l);
    }
}

/// Test inputs `M`: the edges 0, `2^63`, `2^63 − 1`, `2^64 − 1` in turn, else random.
#[cfg(test)]
pub(crate) fn edge_or_random(trial: usize, g: &mut veil_crypto::Prg) -> u64 {
    match trial % 5 {
        0 => 0,
        1 => u64::MAX,
        2 => 1 << 63,
        3 => (1 << 63) - 1,
        _ => g.next_u64(),
    }
}

/// The bits `a_t` of `M̂` (big-endian, `l − 1` of them, then 0) and `MSB(M)`, for `M < 2^l`
/// (`2 ≤ l ≤ 64`): `M̂` shifted to the top and bit-reversed puts `a_t` at bit `t` (zeros past
/// `l − 2`), and each byte of that word becomes eight bytes by a table ([`SPREAD`]), in place
/// of a shift and mask per bit.
#[inline(always)]
pub(crate) fn bits_of(m: u64, l: usize) -> ([u8; MAX_L], u8) {
    let q = (m << (65 - l)).reverse_bits();
    let mut a = [0u8; MAX_L];
    for (j, out) in a.chunks_exact_mut(8).enumerate() {
        out.copy_from_slice(&SPREAD[((q >> (8 * j)) & 0xff) as usize].to_le_bytes());
    }
    (a, ((m >> (l - 1)) & 1) as u8)
}

/// For each byte `b`, the word whose byte `i` is bit `i` of `b`.
static SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut i = 0;
        while i < 8 {
            t[b] |= ((b as u64 >> i) & 1) << (8 * i);
            i += 1;
        }
        b += 1;
    }
    t
};

/// This party's shares of one element's two lists, entry by entry as sent: `u` into `u_out`
/// and `u'` into `up_out` (`l` entries each). `shares` are its `l − 1` shares of the bits,
/// `first` says whether it holds the constant 1.
#[allow(clippy::too_many_arguments, reason = "one element's inputs, named as in the module docs")]
#[inline(always)]
pub(crate) fn value_lists<R: Reduce>(
    f: R,
    l: usize,
    m: u64,
    first: bool,
    shares: &[u8],
    masks: &Masks,
    u_out: &mut [u8],
    up_out: &mut [u8],
) {
    let p = f.p() as u16;
    let k = u16::from(first);
    let (a, s_m) = bits_of(m, l);
    // Position by position over arrays of `MAX_L` (the compiler vectorizes the elementwise
    // steps); only the prefix sum runs serially. Every value stays below 2^16: `c ≤ p + 1`,
    // prefixes `≤ l·(p + 1) < 2^13`, products of two reduced elements `< p² < 2^14`.
    let mut b = [0u16; MAX_L];
    for (v, &x) in b.iter_mut().zip(&shares[..l - 1]) {
        *v = u16::from(x);
    }
    b[l - 1] = k;
    let mut c = [0u16; MAX_L];
    for t in 0..MAX_L {
        let at = u16::from(a[t]);
        c[t] = (1 - at) * b[t] + at * (k + p - b[t]);
    }
    let mut before = [0u16; MAX_L];
    let mut run = 0u16;
    for t in 0..l {
        before[t] = run;
        run += c[t];
    }
    let (mut u, mut up) = ([0u8; MAX_L], [0u8; MAX_L]);
    for t in 0..MAX_L {
        let c2 = red16(f, before[t] + 2 * p - c[t] + k);
        let wc = red16(f, u16::from(masks.w[t]) * c2);
        let beta = u16::from(s_m ^ a[t] ^ masks.delta);
        u[t] = red16(f, wc + beta * k) as u8;
        up[t] = red16(f, u16::from(masks.w2[t]) * (wc + k)) as u8;
    }
    for e in 0..l {
        let t = usize::from(masks.perm[e]);
        u_out[e] = u[t];
        up_out[e] = up[t];
    }
}

/// `u_out` and `up_out` as the 64-entry lists the `l = 64` vector kernels write
/// ([`crate::lists_simd`], [`crate::lists_simd_avx2`]), if they and `shares` (63 bits) have
/// those lengths.
#[cfg(target_arch = "x86_64")]
pub(crate) fn lists_of_64<'a>(
    shares: &[u8],
    u_out: &'a mut [u8],
    up_out: &'a mut [u8],
) -> Option<(&'a mut [u8; MAX_L], &'a mut [u8; MAX_L])> {
    let (u, up) = (<&mut [u8; MAX_L]>::try_from(u_out).ok()?, <&mut [u8; MAX_L]>::try_from(up_out).ok()?);
    (shares.len() == MAX_L - 1).then_some((u, up))
}

/// [`value_lists`] with the fastest kernel for `p` and `l`: for `p = 127`, `l = 64`, AVX-512 BW
/// where the processor has it ([`crate::lists_simd`]), else AVX2 ([`crate::lists_simd_avx2`]);
/// else [`M127`] for 127, else [`Small`].
#[allow(clippy::too_many_arguments, reason = "one element's inputs, named as in the module docs")]
pub(crate) fn lists_mod(
    p: u32,
    l: usize,
    m: u64,
    first: bool,
    shares: &[u8],
    masks: &Masks,
    u_out: &mut [u8],
    up_out: &mut [u8],
) {
    #[cfg(target_arch = "x86_64")]
    if p == 127 && l == MAX_L && crate::lists_simd::lists(m, first, shares, masks, u_out, up_out) {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if p == 127 && l == MAX_L && crate::lists_simd_avx2::lists(m, first, shares, masks, u_out, up_out) {
        return;
    }
    if p == 127 {
        value_lists(M127, l, m, first, shares, masks, u_out, up_out);
    } else {
        value_lists(Small::new(p), l, m, first, shares, masks, u_out, up_out);
    }
}

/// A prover's shares of the MACs of the [`LANES`] combinations of one element's lists
/// (`crate::pos`, round 4): `x_j = h_j·κ_j + Σ_s g_s[j]·γ_{j,s}` with [`weights`]'s `g`, `h`,
/// the shares `κ` of the keys and `mac` (`l − 1` shares `γ` of `α_j·b_s` per key, key by key),
/// reduced mod `p`. The provers take the vector kernels at `l = 64` where the processor has
/// them (`crate::pos::chunk::element_combos`); this is the portable path and their reference.
pub(crate) fn combos_mod(
    p: u32,
    l: usize,
    m: u64,
    masks: &Masks,
    mac: &[u8],
    kappa: &[u8; MAC_KEYS],
    sigma: &[[u8; LANES]],
) -> [u32; MAC_KEYS] {
    if p == 127 {
        combos(M127, l, m, masks, mac, kappa, sigma)
    } else {
        combos(Small::new(p), l, m, masks, mac, kappa, sigma)
    }
}

/// [`combos_mod`] for the reduction `f`. The weights are turned key-major first, so each key's
/// sum is a dot product of two byte rows (vectorized), not a stride of [`LANES`].
#[inline(always)]
pub(crate) fn combos<R: Reduce>(
    f: R,
    l: usize,
    m: u64,
    masks: &Masks,
    mac: &[u8],
    kappa: &[u8; MAC_KEYS],
    sigma: &[[u8; LANES]],
) -> [u32; MAC_KEYS] {
    let mut g = [[0u8; LANES]; MAX_L];
    let mut h = [0u16; LANES];
    weights(f, l, m, masks, sigma, &mut g[..l - 1], &mut h);
    let mut by_key = [[0u8; MAX_L]; MAC_KEYS];
    for (s, gs) in g[..l - 1].iter().enumerate() {
        for (q, row) in by_key.iter_mut().enumerate() {
            row[s] = gs[q];
        }
    }
    let mut x: [u32; MAC_KEYS] = std::array::from_fn(|q| u32::from(h[q]) * u32::from(kappa[q]));
    for ((xq, row), ms) in x.iter_mut().zip(&by_key).zip(mac.chunks_exact(l - 1)) {
        // Each product < p² < 2^14, 63 of them < 2^20.
        *xq += row[..l - 1].iter().zip(ms).map(|(&a, &b)| u32::from(a) * u32::from(b)).sum::<u32>();
    }
    x.map(|v| v % f.p())
}

#[inline(always)]
fn red16<R: Reduce>(f: R, x: u16) -> u16 {
    f.red16(x)
}

/// Lanes of the weight computation: the MAC keys, padded to a vector's width (the padding's
/// coefficients are 0 and its results unused).
pub(crate) const LANES: usize = 8;

/// For each of the [`LANES`] combinations with coefficients `sigma[e][j]` over the `2l`
/// entries as sent (the `u` list, then `u'`), the weights `g_s[j]` of the bits and `h[j]` of
/// the constant with `Σ_e sigma[e][j]·entry_e = Σ_s g_s[j]·b_s + h[j]` (module docs), reduced
/// mod `p`. Lane-parallel over 16-bit words: `q < 2p² < 2^15`, reduced before the suffix sums
/// (`< l·p < 2^13`).
#[inline(always)]
pub(crate) fn weights<R: Reduce>(
    f: R,
    l: usize,
    m: u64,
    masks: &Masks,
    sigma: &[[u8; LANES]],
    g: &mut [[u8; LANES]],
    h: &mut [u16; LANES],
) {
    let p = f.p() as u16;
    let (a, s_m) = bits_of(m, l);
    let mut q = [[0u16; LANES]; MAX_L];
    // The constant `Σ_t q_t·k_t + Σ_t (σ_{π⁻¹(t)}·β_t + σ_{l+π⁻¹(t)}·w'_t)` with
    // `k_t = Σ_{s<t} a_s + (1 − a_t)` (no `1 − a_t` at `t = l − 1`): the first sum is
    // `Σ_s a_s·S_{s+1} + Σ_{t<l−1} (1 − a_t)·q_t`, gathered with the suffix sums below.
    let mut constant = [0u16; LANES];
    for t in 0..l {
        let e = usize::from(masks.inverse[t]);
        let (w, w2) = (u16::from(masks.w[t]), u16::from(masks.w2[t]));
        let ww = red16(f, w * w2);
        let beta = u16::from(s_m ^ a[t] ^ masks.delta);
        let (s1, s2) = (&sigma[e], &sigma[l + e]);
        let mut qt = [0u16; LANES];
        for j in 0..LANES {
            let (x, y) = (u16::from(s1[j]), u16::from(s2[j]));
            qt[j] = red16(f, x * w + y * ww);
            constant[j] = red16(f, constant[j] + beta * x + red16(f, y * w2));
        }
        q[t] = qt;
    }
    let mut suffix = q[l - 1];
    for s in (0..l - 1).rev() {
        let minus = u16::from(a[s]);
        for j in 0..LANES {
            // S_{s+1} − q_s, negated where a_s = 1.
            let d = red16(f, suffix[j] + p - q[s][j]);
            let v = (1 - minus) * d + minus * (p - d);
            g[s][j] = (v - p * u16::from(v == p)) as u8;
            let tail = minus * suffix[j] + (1 - minus) * q[s][j];
            constant[j] = red16(f, constant[j] + red16(f, tail));
            suffix[j] += q[s][j];
        }
    }
    *h = constant;
}

#[cfg(test)]
mod tests;
