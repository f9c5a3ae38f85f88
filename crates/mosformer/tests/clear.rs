//! The gates in the clear (`veil_mosformer::clear`) against the secure gates: exactly equal
//! where the secure gate is exact (Max's comparisons and selections on a given input), within
//! a few units where it truncates (GELU's polynomial), and within the truncations' units
//! through the traits' precision plan.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::clear::{MosformerReference, max_rows};
use veil_mosformer::gelu;
use veil_mosformer::input::share_input;
use veil_mosformer::keys::{mac_key, random_one};
use veil_mosformer::mac::{MacBatch, Macs};
use veil_mosformer::max::{max, max_setup};
use veil_mosformer::offline::Offline;
use veil_mosformer::open::open_all;
use veil_mosformer::ops::Rings;
use veil_mosformer::triples::Sacrifice;
use veil_mosformer::{Mosformer, Security};
use veil_mpc::harness::{all_ok, simulate};
use veil_mpc::reference::FixedReference;
use veil_mpc::traits::{NonLinear, Sharing, TransformerOps};
use veil_ring::{Ring, Z2k, Z16, Z32, Z64, Z128};
use veil_tensor::Tensor;

fn random(seed: u64, n: usize, bound: i64) -> Vec<i64> {
    use rand::{Rng, SeedableRng, rngs::StdRng};
    let mut g = StdRng::seed_from_u64(seed);
    (0..n).map(|_| g.gen_range(-bound..bound)).collect()
}

fn ring(v: &[i64], shape: &[usize]) -> Tensor<Z64> {
    Tensor::new(shape.to_vec(), v.iter().map(|&x| Z64::from_i64(x)).collect()).unwrap()
}

fn signed(t: &Tensor<Z64>) -> Vec<i64> {
    t.data().iter().map(|v| v.to_signed() as i64).collect()
}

#[test]
fn gelu_and_max_gates_equal_their_clear_arithmetic() {
    let mut raw: Vec<i64> = (-300..=300).collect();
    raw.extend([255, 256, 257, -256, -257, 4000, -4000, 16383, -16384]);
    let scores = random(3, 7 * 5, 1 << 20);
    let (g, m) = gelu_and_max::<Z16, Z32>(&raw, &scores, (7, 5), 2);
    // Input at 6 bits, output at 16: the polynomial's seven truncations to 16 bits (each
    // [-1, +2] units from the exact floor) move the result by a few units.
    assert!(ulps(&g, &veil_mosformer::clear::gelu::<Z16>(&raw, 6, 16)) <= GELU_UNITS);
    assert_eq!(m, max_rows::<Z32>(&scores, 7, 5));
}

/// The same in the Z_2^64 rings: GELU's comparisons and Max's tournament read Z_2^64.
#[test]
fn z64_gelu_and_max_gates_equal_their_clear_arithmetic() {
    let mut raw: Vec<i64> = (-300..=300).step_by(3).collect();
    raw.extend([255, 256, 257, -256, -257, 1 << 40, -(1 << 40), 40_000, -40_000]);
    let scores = random(8, 5 * 6, 1 << 45);
    let (g, m) = gelu_and_max::<Z64, Z64>(&raw, &scores, (5, 6), 9);
    assert!(ulps(&g, &veil_mosformer::clear::gelu::<Z64>(&raw, 6, 16)) <= GELU_UNITS);
    assert_eq!(m, max_rows::<Z64>(&scores, 5, 6));
}

/// Units of 2^-16 the secure GELU may differ from its exact-truncation arithmetic.
const GELU_UNITS: i64 = 16;

/// The secure GELU (comparisons in `G`, input at 6 bits, output at 16) of `raw` and the row maxima
/// (comparisons in `X`) of `scores` as `[rows, k]`, opened, with MACs in Z_2^128.
fn gelu_and_max<G: Sacrifice, X: Sacrifice>(
    raw: &[i64],
    scores: &[i64],
    (rows, k): (usize, usize),
    seed: u64,
) -> (Vec<i64>, Vec<i64>) {
    let out = all_ok(simulate(3, seed, |ctx| {
        let n = raw.len();
        let x = share_input(ctx, 0, (ctx.party() == 0).then(|| ring(raw, &[n])).as_ref(), &[n])?;
        let s =
            share_input(ctx, 1, (ctx.party() == 1).then(|| ring(scores, &[rows, k])).as_ref(), &[rows, k])?;
        let one = random_one::<Z128>(ctx)?;
        let alpha = mac_key::<Z128>(ctx)?;
        let mut batch = MacBatch::new();
        let keys = gelu::setup::<G, Z128>(ctx, n)?;
        let macs = &mut Macs { one: &one, alpha: &alpha, batch: &mut batch };
        let g = gelu::gelu(ctx, keys, &mut Offline::new(), &x, 6, 16, macs)?;
        let keys = max_setup::<X, Z128>(ctx, rows, k)?;
        let m = max(ctx, keys, &s, macs)?;
        batch.check(ctx, &alpha, 64, "clear")?;
        Ok((open_all(ctx, &g)?, open_all(ctx, &m)?))
    }))
    .unwrap();
    (signed(&out[0].0), signed(&out[0].1))
}

/// Largest difference in units of `2^-16`.
fn ulps(a: &[i64], b: &[i64]) -> i64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).max().unwrap_or(0)
}

#[test]
fn the_traits_layers_agree_with_the_reference_up_to_truncation_units() {
    // Mixed rings: the bounds are in units of 2^-16 at each gate's own precision.
    layers_agree(Rings::Mixed, [1 << 11, 4 << 10, 64 << 4, 1 << 11], 4..10);
}

/// Without modulus conversion every gate keeps 16 fractional bits, and the secure run stays
/// within a few units of 2^-16 of the reference (one step of a table index at most, GELU's
/// polynomial a few units).
#[test]
fn the_traits_layers_agree_with_the_reference_in_z64() {
    layers_agree(Rings::Z64, [4, 64, 1 << 9, 1 << 9], 4..7);
}

fn layers_agree(rings: Rings, bounds: [i64; 4], seeds: std::ops::Range<u64>) {
    let (rows, k) = (6, 8);
    let x = random(5, rows * k, 3 << 16);
    let gamma: Vec<i64> = random(6, k, 1 << 14).iter().map(|g| (1 << 16) + g).collect();
    let beta = random(7, k, 1 << 15);
    let mask: Vec<bool> = (0..rows * k).map(|e| e % k > (e / k) % k + 1).collect();
    for seed in seeds.clone() {
        let out = all_ok(simulate(3, seed, |ctx| {
            let mut p = Mosformer::new(Security::SemiHonest, Offline::for_security(Security::SemiHonest))
                .with_rings(rings);
            let me = ctx.party();
            let mine = |v: &[i64], shape: &[usize]| (me == 0).then(|| ring(v, shape));
            let xs = p.share_input(ctx, 0, mine(&x, &[rows, k]).as_ref(), &[rows, k])?;
            let g = p.share_input(ctx, 0, mine(&gamma, &[k]).as_ref(), &[k])?;
            let b = p.share_input(ctx, 0, mine(&beta, &[k]).as_ref(), &[k])?;
            let relu = p.relu(ctx, &xs)?;
            let gelu = p.gelu(ctx, &xs)?;
            let soft = p.softmax(ctx, &xs, rows, k, Some(&mask))?;
            let norm = p.layernorm(ctx, &xs, &g, &b, rows, k)?;
            p.check(ctx)?;
            [relu, gelu, soft, norm]
                .iter()
                .map(|v| p.reveal_all(ctx, v))
                .collect::<veil_mpc::Result<Vec<_>>>()
        }))
        .unwrap();
        let got: Vec<Vec<i64>> = out[0].iter().map(signed).collect();
        let r = MosformerReference { rings };
        let relu = r.relu(&x);
        let gelu = r.gelu(&x).unwrap();
        let soft = r.softmax(&x, rows, k, Some(&mask)).unwrap();
        let norm = r.layernorm(&x, &gamma, &beta, rows, k).unwrap();
        for c in [&relu, &gelu, &soft, &norm] {
            assert_eq!(c.excess, None, "inputs are in range");
        }
        let d = [
            ulps(&got[0], &relu.values),
            ulps(&got[1], &gelu.values),
            ulps(&got[2], &soft.values),
            ulps(&got[3], &norm.values),
        ];
        eprintln!("{rings:?}: ReLU, GELU, softmax, LayerNorm: secure − clear ≤ {d:?} units of 2^-16");
        // Mixed rings:
        // - ReLU: exact away from 0 (the 16-bit condition may read values within 2^-5 of 0 wrong);
        // - GELU: the input truncation to 2^-6 may be two units low (slope ≤ 1.13);
        // - softmax: units at 2^-12 through exp and the reciprocal's table;
        // - LayerNorm: units at 2^-12 in the variance, one step of the Rsqrt table (2^-8 relative).
        // Z_2^64: ReLU exact, GELU a few units (its polynomial's truncations), softmax and LayerNorm
        // units at 2^-16 and a step of the 2^16-entry tables.
        for (what, (got, bound)) in ["ReLU", "GELU", "softmax", "LayerNorm"].iter().zip(d.iter().zip(bounds))
        {
            assert!(*got <= bound, "{what}: {d:?}");
        }
        for (e, &m) in mask.iter().enumerate() {
            if m {
                assert_eq!(soft.values[e], 0);
            }
        }
    }
}

#[test]
fn the_reference_reports_inputs_out_of_range() {
    let r = MosformerReference::MIXED;
    let big = vec![600 << 16, 1 << 16];
    assert_eq!(r.gelu(&big).unwrap().excess.unwrap().what, "GELU input");
    // 512 less the two units at 2^-6 the local downcast may lose (found by the conformance
    // suite: an input just above -512 wrapped to a positive 16-bit value).
    assert_eq!(r.relu(&big).excess.unwrap().limit, 512.0 - 2.0 / 64.0);
    assert!(r.relu(&[-(512 << 16) + 1]).excess.is_some());
    let flat = vec![3 << 16; 8];
    let e = r.layernorm(&flat, &[1 << 16; 8], &[0; 8], 1, 8).unwrap().excess.unwrap();
    assert!(e.what.contains("below"), "{e:?}");
    assert!(r.softmax(&[0; 6], 2, 4, None).is_none(), "a wrong shape is refused");
}
