//! The bilinear ways to a lazy reduction's two sums ([`super`]'s "Sums without entries"):
//! from the recorded words' products, scaled into GR once each, without forming the entries.

use veil_ring::Gr;

use super::{Columns, HeldWords, Shape, held};

impl Columns {
    /// Column `l`'s two sums without `b_l`, by bilinearity (for `2·2^t ≤ m'`): with `w_s` the
    /// weights of the `2^t` slots an entry sums, output `g`'s entry `e` is
    /// `X_e = a_g·Σ_s w_s·(x_{e,s} + γ·x'_{e,s})` and `Y_e = Σ_s w_s·y_{e,s}`, and a party's
    /// local part of a masked product is a bilinear form `B` of the components it holds
    /// ([`crate::claims::cross_term`]), so
    /// `Σ_e B(X_{2e}, Y_{2e}) = Σ_{s,s'} w_s·w_{s'}·Σ_g a_g·Σ_e B(x_{2e,s}, y_{2e,s'})` plus the
    /// same with `γ·a_g` and `x'`, and the differences `X_{2e+1} − X_{2e}` likewise. The inner
    /// sums are over `Z_2^64` (the embedding is a ring homomorphism): no term is lifted, only
    /// `4^t` sums per output are scaled into GR.
    ///
    /// With few outputs per column (fewer than `2·4^t`, a truncation pair's two per column),
    /// each output's coefficient carries the column's factor, `b_l·a_g` (and `b_l·γ·a_g`),
    /// and its sums go to the accumulators `shared` of every such column (combined once by
    /// [`Columns::local_halves`]): two GR products per output instead of `4·4^t` per column.
    /// The sums returned are then 0; otherwise they are the column's, without `b_l`.
    /// [`Columns::bilinear_halves`] for a column of a truncation pair's bit products at P0
    /// (`m = 32` or `64` bits per output), accumulated by output slot `g` into `by_output`
    /// (`4·4^t` per `g`, [`Columns::bit_output_sums`] finishes them): no GR product per output, and
    /// the words from the bits directly. P0's local part of a bit product is
    /// `B([r_x]_1, [r_y]_2) = (−w_t·b1_t)·(−b2_{t'}) = w_t·b1_t·b2_{t'}`, so with the output's
    /// bits as words `B1`, `B2`, the word of weight pair `(s, s')` over the even entries is
    /// `Σ_t w_t` over the set bits of `B1 ∧ E_s ∧ (B2 shifted by s − s')`, `E_s` the positions
    /// `e·2^t + s` of even entries `e`; a difference `(X_{2e+1} − X_{2e})·(Y_{2e+1} − Y_{2e})`
    /// is four such sums (odd and even entries, each `y` shifted by a whole entry).
    pub(super) fn bit_bilinear(&self, l: usize, b: &Gr, by_output: &mut [Gr]) {
        let Shape { rec, first, m, outputs, .. } = self.shape(l);
        let Some(bits) = &rec.bits else { return };
        let step = self.w.len();
        let pairs = step * step;
        let ws = [&bits.w, &bits.w2];
        // Positions of the even entries' slot 0 (a bit every 2·2^t from 0, within the output's
        // `m` bits; a word's bits past `m` are 0).
        let even0 = (0..m).step_by(2 * step).fold(0u64, |acc, t| acc | 1 << t);
        let weigh = |w: &[u64], mut sel: u64| -> u64 {
            let mut sum = 0u64;
            while sel != 0 {
                sum = sum.wrapping_add(w[sel.trailing_zeros() as usize]);
                sel &= sel - 1;
            }
            sum
        };
        // `B2` read at `t + δ` for every position `t`.
        let at = |b2: u64, delta: isize| if delta >= 0 { b2 >> delta } else { b2 << -delta };
        let mut d = vec![0u64; 4 * pairs];
        for g in 0..outputs {
            let (b1, b2) = (bits.b1.run(first + g, m), bits.b2.run(first + g, m));
            d.iter_mut().for_each(|v| *v = 0);
            for s in 0..step {
                let (e0, e1) = (b1 & even0 << s, b1 & even0 << (s + step));
                for s2 in 0..step {
                    let shift = s2 as isize - s as isize;
                    let (same, up, down) =
                        (at(b2, shift), at(b2, shift + step as isize), at(b2, shift - step as isize));
                    for (input, w) in ws.iter().enumerate() {
                        let row = 2 * input * pairs + s * step + s2;
                        let even = weigh(w, e0 & same);
                        d[row] = even;
                        // (W1 − W0)(V1 − V0) = W1V1 − W1V0 − W0V1 + W0V0.
                        d[row + pairs] = weigh(w, e1 & same)
                            .wrapping_sub(weigh(w, e1 & down))
                            .wrapping_sub(weigh(w, e0 & up))
                            .wrapping_add(even);
                    }
                }
            }
            Gr::add_scaled_each(&mut by_output[g * 4 * pairs..(g + 1) * 4 * pairs], b, &d);
        }
    }

    /// The two sums of [`Columns::bit_bilinear`]'s accumulators: output slot `g`'s, combined
    /// with the weight pairs, times `a_g` (`γ·a_g` for the twin's input).
    pub(super) fn bit_output_sums(&self, by_output: &[Gr], ww: &[Gr]) -> [Gr; 2] {
        let per = 4 * ww.len();
        let mut sums = [Gr::ZERO; 2];
        for (g, acc) in by_output.chunks_exact(per).enumerate() {
            if acc.iter().all(|v| *v == Gr::ZERO) {
                continue;
            }
            let [x0, x1] = combine(&acc[..per / 2], ww, 1);
            let [y0, y1] = combine(&acc[per / 2..], ww, 1);
            sums[0].add_assign(&self.a[g].mul(&x0).add(&self.ga[g].mul(&y0)));
            sums[1].add_assign(&self.a[g].mul(&x1).add(&self.ga[g].mul(&y1)));
        }
        sums
    }

    pub(super) fn bilinear_halves(
        &self,
        l: usize,
        b: &Gr,
        wws: &[Vec<Gr>],
        shared: &mut [Gr],
    ) -> Vec<[Gr; 2]> {
        let me = self.me;
        let held = held(me);
        let Shape { rec, first, m, m_pad, outputs } = self.shape(l);
        let words = HeldWords::new(rec, held);
        let step = self.w.len();
        let twin = rec.twin.is_some();
        let pairs = step * step;
        // Per sum (even entries, differences) and input (x, the twin's x'): Σ_g a_g·D_g[s][s'].
        let into_shared = outputs < 2 * pairs;
        let mut own = if into_shared { vec![] } else { vec![Gr::ZERO; 4 * pairs] };
        let acc = if into_shared { shared } else { &mut own[..] };
        let mut d = vec![0u64; 4 * pairs];
        for (g, (a_g, ga_g)) in self.a.iter().zip(&self.ga).enumerate().take(outputs) {
            d.iter_mut().for_each(|v| *v = 0);
            let base = (first + g) * m;
            // The components of input `input` at term `t` of this output (0 past `m`).
            let load = |input: usize, t: usize| if t < m { words.at(input, base + t) } else { [0; 3] };
            for e in (0..m_pad / step).step_by(2) {
                if e * step >= m {
                    break;
                }
                let (mut y0, mut dy) = ([[0u64; 3]; BILINEAR_STEP], [[0u64; 3]; BILINEAR_STEP]);
                for s in 0..step {
                    y0[s] = load(2, e * step + s);
                    dy[s] = sub3(&load(2, (e + 1) * step + s), &y0[s]);
                }
                for input in 0..if twin { 2 } else { 1 } {
                    for s in 0..step {
                        let x0 = load(input, e * step + s);
                        let dx = sub3(&load(input, (e + 1) * step + s), &x0);
                        let row = (2 * input) * pairs + s * step;
                        for s2 in 0..step {
                            d[row + s2] = d[row + s2].wrapping_add(bilinear(me, &x0, &y0[s2]));
                            d[row + pairs + s2] =
                                d[row + pairs + s2].wrapping_add(bilinear(me, &dx, &dy[s2]));
                        }
                    }
                }
            }
            let (a_g, ga_g) = if into_shared {
                (b.mul(a_g), if twin { b.mul(ga_g) } else { Gr::ZERO })
            } else {
                (*a_g, *ga_g)
            };
            let (acc_x, acc_x2) = acc.split_at_mut(2 * pairs);
            Gr::add_scaled_each(acc_x, &a_g, &d[..2 * pairs]);
            Gr::add_scaled_each(acc_x2, &ga_g, &d[2 * pairs..]);
        }
        let inputs = if twin { 2 } else { 1 };
        wws.iter().map(|ww| if into_shared { [Gr::ZERO; 2] } else { combine(acc, ww, inputs) }).collect()
    }

    /// Column `l`'s two sums without `b_l`, by bilinearity when every entry holds whole
    /// outputs (`m' ≤ 2^t`, elementwise products from the first reduction on): slot `σ`
    /// carries the coefficient `c_σ = a_{⌊σ/m'⌋}` (`γ·c_σ` for a twin's `x'`), so for a pair
    /// of entries starting at slots `σ_0` and `σ_1`, with `Δy = y_{σ_1+s'} − y_{σ_0+s'}`,
    /// `B(X_{2e}, Y_{2e}) = Σ_{s,s'} w_s·w_{s'}·c_{σ_0+s}·B(x_{σ_0+s}, y_{σ_0+s'})` and
    /// `B(ΔX, ΔY) = Σ_{s,s'} w_s·w_{s'}·(c_{σ_1+s}·B(x_{σ_1+s}, Δy_{s'}) −
    /// c_{σ_0+s}·B(x_{σ_0+s}, Δy_{s'}))`. Each word `B(·,·)` is scaled into GR once (64 word
    /// products): `3·4^t` scalings per pair of entries, where the entries cost two GR
    /// products per pair and sum (about 4 000 word products each once `t ≥ 1`).
    pub(super) fn spanning_halves(&self, l: usize, wws: &[Vec<Gr>]) -> Vec<[Gr; 2]> {
        let me = self.me;
        let held = held(me);
        let Shape { rec, first, m, m_pad, outputs } = self.shape(l);
        let words = HeldWords::new(rec, held);
        let used = outputs * m_pad;
        let step = self.w.len();
        let twin = rec.twin.is_some();
        let pairs = step * step;
        let mut acc = vec![Gr::ZERO; 4 * pairs];
        // The components of input `input` at column slot `slot` (0 in padding).
        let load = |input: usize, slot: usize| {
            let (g, t) = (slot / m_pad, slot % m_pad);
            if slot < used && t < m { words.at(input, (first + g) * m + t) } else { [0; 3] }
        };
        for first in (0..used).step_by(2 * step) {
            let second = first + step;
            let (mut y0, mut dy) = ([[0u64; 3]; BILINEAR_STEP], [[0u64; 3]; BILINEAR_STEP]);
            for s in 0..step {
                y0[s] = load(2, first + s);
                dy[s] = sub3(&load(2, second + s), &y0[s]);
            }
            for input in 0..if twin { 2 } else { 1 } {
                let coeff = if input == 0 { &self.a } else { &self.ga };
                for s in 0..step {
                    let (x0, x1) = (load(input, first + s), load(input, second + s));
                    let (c0, c1) = (&coeff[(first + s) / m_pad], &coeff[(second + s) / m_pad]);
                    let row = 2 * input * pairs + s * step;
                    let (mut even, mut d1, mut d0) =
                        ([0u64; BILINEAR_STEP], [0u64; BILINEAR_STEP], [0u64; BILINEAR_STEP]);
                    for s2 in 0..step {
                        even[s2] = bilinear(me, &x0, &y0[s2]);
                        d1[s2] = bilinear(me, &x1, &dy[s2]);
                        d0[s2] = bilinear(me, &x0, &dy[s2]).wrapping_neg();
                    }
                    Gr::add_scaled_each(&mut acc[row..row + step], c0, &even[..step]);
                    Gr::add_scaled_each(&mut acc[row + pairs..row + pairs + step], c1, &d1[..step]);
                    Gr::add_scaled_each(&mut acc[row + pairs..row + pairs + step], c0, &d0[..step]);
                }
            }
        }
        wws.iter().map(|ww| combine(&acc, ww, if twin { 2 } else { 1 })).collect()
    }
}

/// Most slots per entry for which [`Columns::bilinear_halves`] is considered (`2^t ≤ 8`: 64
/// weight pairs).
pub(super) const BILINEAR_STEP: usize = 8;

/// The two sums `Σ_{s,s'} w_s·w_{s'}·acc[s][s']` from the accumulators of the bilinear ways
/// (laid out per input and sum: `acc[(2·input + sum)·4^t + s·2^t + s']`), over the first
/// `inputs` inputs (`x`, and the twin's `x'`).
pub(super) fn combine(acc: &[Gr], ww: &[Gr], inputs: usize) -> [Gr; 2] {
    let pairs = ww.len();
    std::array::from_fn(|half| {
        (0..inputs).fold(Gr::ZERO, |sum, input| {
            let start = (2 * input + half) * pairs;
            sum.add(&Gr::inner_product(ww, &acc[start..start + pairs]))
        })
    })
}

/// [`crate::claims::cross_term`] on words: a party's local part of the masked product of `a` and `b` (P0
/// `(a_1 + a_2)(b_1 + b_2)`, P1 `−(a_0 b_1 + a_1 b_0)`, P2 `−(a_0 b_2 + a_2 b_0) + a_0 b_0`).
fn bilinear(me: usize, a: &[u64; 3], b: &[u64; 3]) -> u64 {
    match me {
        0 => a[1].wrapping_add(a[2]).wrapping_mul(b[1].wrapping_add(b[2])),
        _ => {
            let j = if me == 1 { 1 } else { 2 };
            let s = a[0].wrapping_mul(b[j]).wrapping_add(a[j].wrapping_mul(b[0])).wrapping_neg();
            if me == 2 { s.wrapping_add(a[0].wrapping_mul(b[0])) } else { s }
        }
    }
}

fn sub3(a: &[u64; 3], b: &[u64; 3]) -> [u64; 3] {
    [a[0].wrapping_sub(b[0]), a[1].wrapping_sub(b[1]), a[2].wrapping_sub(b[2])]
}
