//! The CKKS canonical embedding (as the BLB paper's Eq. 2 states it; "Homomorphic Encryption for Arithmetic
//! of Approximate Numbers", §3.1): `N/2` complex slots `z_j = m(ζ^{5^j})`, `ζ = e^{iπ/N}`.
//!
//! `σ: R[X]/(X^N + 1) → C^{N/2}` evaluates a real polynomial at the roots `ζ^{5^j}`, `j < N/2`
//! (the other half are their conjugates). Both directions are a "special FFT" of `O(N log N)`
//! over the slots, in the order of the group `⟨5⟩ ⊂ Z_{2N}^*`, so that `X ↦ X^{5^k}` rotates
//! the slots by `k` and `X ↦ X^{−1}` conjugates them:
//!
//! ```text
//! encode_Δ(z) = ⌊Δ·σ^{−1}(z)⌉:  v = special_ifft(z);  m_j = ⌊Δ·Re v_j⌉,  m_{j+N/2} = ⌊Δ·Im v_j⌉
//! decode_Δ(m) = σ(m)/Δ:          v_j = (m_j + i·m_{j+N/2})/Δ;  z = special_fft(v)
//! ```
//!
//! The butterflies pair slot `j` of a block of length `len` with the twiddle
//! `ζ^{(5^j mod 4·len)·(2N/(4·len))}`, the bit-reversal sits before the forward transform and
//! after the inverse one. Arithmetic is in `f64`: for `Δ ≤ 2^50` and `|z| ≤ 2^10` the encoding
//! error is dominated by the rounding to integers (`≤ 1/2` per coefficient).

use num_complex::Complex64;

/// The encoder of one ring degree.
#[derive(Debug, Clone)]
pub struct Encoder {
    n: usize,
    /// `5^j mod 2N`, `j < N/2`.
    rot_group: Vec<usize>,
    /// `ζ^k`, `k ≤ 2N`.
    roots: Vec<Complex64>,
}

fn bit_reverse(v: &mut [Complex64]) {
    let n = v.len();
    let bits = n.trailing_zeros();
    if bits == 0 {
        return;
    }
    for i in 0..n {
        let j = i.reverse_bits() >> (usize::BITS - bits);
        if i < j {
            v.swap(i, j);
        }
    }
}

impl Encoder {
    /// The encoder for degree `n` (a power of two ≥ 4).
    pub fn new(n: usize) -> Self {
        let m = 2 * n;
        let mut rot_group = Vec::with_capacity(n / 2);
        let mut g = 1usize;
        for _ in 0..n / 2 {
            rot_group.push(g);
            g = g * 5 % m;
        }
        let roots = (0..=m)
            .map(|k| Complex64::from_polar(1.0, 2.0 * std::f64::consts::PI * k as f64 / m as f64))
            .collect();
        Encoder { n, rot_group, roots }
    }

    /// Slots (`N/2`).
    pub fn slots(&self) -> usize {
        self.n / 2
    }

    fn special_fft(&self, v: &mut [Complex64]) {
        let (size, m) = (v.len(), 2 * self.n);
        bit_reverse(v);
        let mut len = 2;
        while len <= size {
            let (half, quarter) = (len / 2, 4 * len);
            for block in v.chunks_mut(len) {
                for j in 0..half {
                    let idx = (self.rot_group[j] % quarter) * (m / quarter);
                    let u = block[j];
                    let w = block[j + half] * self.roots[idx];
                    block[j] = u + w;
                    block[j + half] = u - w;
                }
            }
            len *= 2;
        }
    }

    fn special_ifft(&self, v: &mut [Complex64]) {
        let (size, m) = (v.len(), 2 * self.n);
        let mut len = size;
        while len >= 2 {
            let (half, quarter) = (len / 2, 4 * len);
            for block in v.chunks_mut(len) {
                for j in 0..half {
                    let idx = (quarter - self.rot_group[j] % quarter) * (m / quarter);
                    let u = block[j] + block[j + half];
                    let w = (block[j] - block[j + half]) * self.roots[idx];
                    block[j] = u;
                    block[j + half] = w;
                }
            }
            len /= 2;
        }
        bit_reverse(v);
        let scale = 1.0 / size as f64;
        v.iter_mut().for_each(|x| *x *= scale);
    }

    /// The real coefficients of `σ^{−1}(z)·Δ` before rounding (`z` padded with zeros to `N/2`).
    pub fn embed_inverse(&self, z: &[Complex64], scale: f64) -> Vec<f64> {
        let mut v = z.to_vec();
        v.resize(self.slots(), Complex64::new(0.0, 0.0));
        self.special_ifft(&mut v);
        let mut out = vec![0.0; self.n];
        for (j, x) in v.iter().enumerate() {
            out[j] = x.re * scale;
            out[j + self.slots()] = x.im * scale;
        }
        out
    }

    /// The slots `σ(m)/Δ` of real coefficients `m`.
    pub fn embed(&self, coeffs: &[f64], scale: f64) -> Vec<Complex64> {
        let h = self.slots();
        let mut v: Vec<Complex64> =
            (0..h).map(|j| Complex64::new(coeffs[j] / scale, coeffs[j + h] / scale)).collect();
        self.special_fft(&mut v);
        v
    }
}
