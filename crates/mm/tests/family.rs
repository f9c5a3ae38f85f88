//! The `mm` family behind the capability traits: transformer layers against `f64` (softmax
//! with and without a mask, LayerNorm, GeLU), reciprocal and reciprocal square root across
//! their range against the clear computation, matrix products with an operand known to one
//! party (one direction) and with both shared, and the COTs every layer consumes against
//! what the family declares for it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;

use veil_he::BfvPreset;
use veil_mm::clear::MmReference;
use veil_mm::family::{FRAC_BITS, Mm, Planner};
use veil_mm::recip::{Inverse, inverse, inverse_clear};
use veil_mpc::Ctx;
use veil_mpc::harness::{all_ok, simulate};
use veil_mpc::prep::{Call, Plan, Preprocessing};
use veil_mpc::reference::FixedReference;
use veil_mpc::traits::{FixedPoint, Owners, Sharing, TransformerOps};
use veil_ring::Z64;
use veil_tensor::Tensor;
use veil_twopc::Engine;

const F: u32 = FRAC_BITS;

fn enc(v: f64) -> i64 {
    (v * f64::from(1u32 << F)).round() as i64
}

fn dec(v: u64) -> f64 {
    v as i64 as f64 / f64::from(1u32 << F)
}

fn tensor(shape: &[usize], v: &[i64]) -> Tensor<Z64> {
    Tensor::new(shape.to_vec(), v.iter().map(|&x| Z64(x as u64)).collect()).unwrap()
}

fn setup(ctx: &mut Ctx) -> veil_mpc::Result<Mm> {
    Mm::setup(ctx, Engine::FerretInsecureSmall, BfvPreset::N8192P60)
}

/// Runs `job` on a value party 0 shares, returns the opened output and the COTs party 0
/// consumed against what the family declares for `call`.
fn run_op(
    x: &[i64],
    shape: &[usize],
    call: Call,
    job: impl Fn(&mut Mm, &mut Ctx, &<Mm as Sharing<Z64>>::Share) -> veil_mpc::Result<<Mm as Sharing<Z64>>::Share>
    + Sync,
) -> Vec<f64> {
    let out = all_ok(simulate(2, 5, |ctx| {
        let mut mm = setup(ctx)?;
        let t = tensor(shape, x);
        let xs = mm.share_input(ctx, 0, (ctx.party() == 0).then_some(&t), shape)?;
        let before = mm.usage();
        let y = job(&mut mm, ctx, &xs)?;
        let used = mm.usage();
        let opened = mm.reveal_all(ctx, &y)?;
        let planned = Plan::of(&Planner { me: ctx.party() }, std::slice::from_ref(&call)).totals();
        Ok((opened, before, used, planned))
    }))
    .unwrap();
    for (party, (_, before, used, planned)) in out.iter().enumerate() {
        assert_eq!(
            used.get("cots") - before.get("cots"),
            planned.get("cots"),
            "COTs party {party} consumed and the family declares for {call:?}"
        );
    }
    out[0].0.data().iter().map(|v| dec(v.0)).collect()
}

/// The secure layer within `units` of the clear one.
fn near_reference(got: &[f64], clear: &[i64], units: i64, what: &str) {
    for (i, (&g, &c)) in got.iter().zip(clear).enumerate() {
        let d = (enc(g) - c).abs();
        assert!(d <= units, "{what}[{i}]: {g} is {d} units from the clear {}", dec(c as u64));
    }
}

#[test]
fn softmax_with_and_without_a_mask() {
    let (rows, k) = (3, 8);
    let mut next = common::stream(1);
    let mut x: Vec<f64> = (0..rows * k).map(|_| (next() % 2000) as f64 / 100.0 - 10.0).collect();
    x[0] = -30.0; // below the clip
    x[1] = 12.0;
    let xi: Vec<i64> = x.iter().map(|&v| enc(v)).collect();
    let mask: Vec<bool> = (0..rows * k).map(|i| i % k > i / k + 4).collect();
    for masked in [false, true] {
        let m = masked.then_some(mask.as_slice());
        let call = Call::Softmax { rows, k, masked };
        let got = run_op(&xi, &[rows, k], call, |mm, ctx, xs| mm.softmax(ctx, xs, rows, k, m));
        near_reference(&got, &MmReference.softmax(&xi, rows, k, m).unwrap().values, 8, "softmax");
        for r in 0..rows {
            let keep = |j: usize| !m.is_some_and(|m| m[r * k + j]);
            let row = &x[r * k..(r + 1) * k];
            let max = (0..k).filter(|&j| keep(j)).map(|j| row[j]).fold(f64::MIN, f64::max);
            let sum: f64 = (0..k).filter(|&j| keep(j)).map(|j| (row[j] - max).exp()).sum();
            for j in 0..k {
                let want = if keep(j) { (row[j] - max).exp() / sum } else { 0.0 };
                let g = got[r * k + j];
                assert!((g - want).abs() < 2e-4, "softmax[{r}][{j}] (masked {masked}): {g} against {want}");
            }
        }
    }
}

#[test]
fn layernorm_and_gelu_against_f64() {
    let (rows, k) = (4, 16);
    let mut next = common::stream(2);
    let x: Vec<f64> =
        (0..rows * k).map(|i| (next() % 4000) as f64 / 100.0 - 20.0 + (i / k) as f64 * 30.0).collect();
    let gamma: Vec<f64> = (0..k).map(|j| 0.5 + j as f64 / 16.0).collect();
    let beta: Vec<f64> = (0..k).map(|j| j as f64 / 8.0 - 1.0).collect();
    let (xi, gi, bi): (Vec<i64>, Vec<i64>, Vec<i64>) = (
        x.iter().map(|&v| enc(v)).collect(),
        gamma.iter().map(|&v| enc(v)).collect(),
        beta.iter().map(|&v| enc(v)).collect(),
    );
    let call = Call::LayerNorm { rows, k };
    let got = run_op(&xi, &[rows, k], call, |mm, ctx, xs| {
        // γ and β known to party 1 (the server's weights), as the executor shares them.
        let (g, b) = (tensor(&[k], &gi), tensor(&[k], &bi));
        let mine = ctx.party() == 1;
        let g = mm.share_from_owner(ctx, 1, mine.then_some(&g), &[k])?.unwrap();
        let b = mm.share_from_owner(ctx, 1, mine.then_some(&b), &[k])?.unwrap();
        mm.layernorm(ctx, xs, &g, &b, rows, k)
    });
    let clear = MmReference.layernorm(&xi, &gi, &bi, rows, k).unwrap();
    assert_eq!(clear.excess, None);
    near_reference(&got, &clear.values, 16, "LayerNorm");
    for r in 0..rows {
        let row = &x[r * k..(r + 1) * k];
        let mean = row.iter().sum::<f64>() / k as f64;
        let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / k as f64;
        for j in 0..k {
            let want = gamma[j] * (row[j] - mean) / var.sqrt() + beta[j];
            let g = got[r * k + j];
            assert!((g - want).abs() < 1e-3, "LayerNorm[{r}][{j}]: {g} against {want}");
        }
    }
    let xs: Vec<f64> = (0..200).map(|i| -6.0 + i as f64 * 0.06).collect();
    let xi: Vec<i64> = xs.iter().map(|&v| enc(v)).collect();
    let got = run_op(&xi, &[200], Call::Gelu { n: 200 }, |mm, ctx, xs| mm.gelu(ctx, xs));
    near_reference(&got, &MmReference.gelu(&xi).unwrap().values, 4, "GeLU");
    for (x, g) in xs.iter().zip(got) {
        let want =
            0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x.powi(3))).tanh());
        assert!((g - want).abs() < 2e-2, "GeLU({x}): {g} against {want}");
    }
}

#[test]
fn inverses_across_their_range_match_the_clear_computation() {
    // From 2^-8 to just below 2^30, every leading-bit bucket, and bucket edges.
    let mut xs: Vec<i64> =
        (8..46).flat_map(|j| [1i64 << j, (1i64 << j) + (1 << (j - 3)) * 5, (1i64 << (j + 1)) - 1]).collect();
    xs.push(enc(1.0));
    let r: Vec<u64> = (0..xs.len() as u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    let x0: Vec<u64> = xs.iter().zip(&r).map(|(&x, &r)| (x as u64).wrapping_sub(r)).collect();
    for (kind, extra) in [(Inverse::Reciprocal, 0), (Inverse::Rsqrt, 0), (Inverse::Reciprocal, 12)] {
        let out = all_ok(simulate(2, 7, |ctx| {
            let me = ctx.party();
            let mut tp = veil_twopc::TwoParty::with_other(ctx, Engine::FerretInsecureSmall)?;
            let ole = veil_he::ole::Ole::setup(ctx, 1 - me, BfvPreset::N8192P60)?;
            inverse(&mut tp, &ole, ctx, if me == 0 { &x0 } else { &r }, F, kind, extra)
        }))
        .unwrap();
        for (i, &x) in xs.iter().enumerate() {
            let got = out[0][i].wrapping_add(out[1][i]) as i64;
            let clear = inverse_clear(x, F, kind, extra);
            let real = x as f64 / f64::from(1u32 << F);
            let want = match kind {
                Inverse::Reciprocal => 1.0 / real,
                Inverse::Rsqrt => 1.0 / real.sqrt(),
            };
            // The protocol's truncations move the result by a few units of the clear one.
            let units = (got - clear).abs();
            assert!(
                units <= 4 + clear.abs() / (1 << 14),
                "{kind:?}({real}): {got} against the clear {clear}"
            );
            let g = got as f64 / f64::from(1u32 << (F + extra));
            let rel = (g - want).abs() / want;
            assert!(
                rel < 1e-3 || (g - want).abs() < 4.0 / f64::from(1u32 << (F + extra)),
                "{kind:?}({real}) = {g} against {want}"
            );
        }
    }
}

#[test]
fn matrix_products_with_known_and_shared_operands() {
    let (m, k, n) = (5, 12, 7);
    let mut next = common::stream(3);
    let mut val = || (next() % 2000) as i64 - 1000;
    let x: Vec<i64> = (0..m * k).map(|_| val() << 8).collect();
    let w: Vec<i64> = (0..k * n).map(|_| val() << 8).collect();
    let want: Vec<i64> = (0..m * n)
        .map(|e| {
            let (i, j) = (e / n, e % n);
            ((0..k).map(|l| i128::from(x[i * k + l]) * i128::from(w[l * n + j])).sum::<i128>() >> F) as i64
        })
        .collect();
    // (x's owner, w's owner): None is a random sharing.
    for owners in [(None, Some(1)), (Some(0), Some(1)), (Some(1), None), (None, None), (Some(1), Some(1))] {
        let out = all_ok(simulate(2, 9, |ctx| {
            let mut mm = setup(ctx)?;
            let me = ctx.party();
            let share = |mm: &mut Mm, ctx: &mut Ctx, owner: Option<usize>, v: &[i64], shape: &[usize]| {
                let t = tensor(shape, v);
                match owner {
                    Some(o) => Ok(mm.share_from_owner(ctx, o, (me == o).then_some(&t), shape)?.unwrap()),
                    None => mm.share_input(ctx, 0, (me == 0).then_some(&t), shape),
                }
            };
            let xs = share(&mut mm, ctx, owners.0, &x, &[m, k])?;
            let ws = share(&mut mm, ctx, owners.1, &w, &[k, n])?;
            let z = mm.matmul_fixed(ctx, &xs, &ws)?;
            mm.reveal_all(ctx, &z)
        }))
        .unwrap();
        for (e, v) in out[0].data().iter().enumerate() {
            let d = (v.0 as i64 - want[e]).abs();
            assert!(d <= 1, "owners {owners:?}: entry {e} is {} against {}", v.0 as i64, want[e]);
        }
    }
}

#[test]
fn the_reference_reports_inputs_outside_the_protocols_ranges() {
    let r = MmReference;
    assert!(r.gelu(&[enc(2f64.powi(21))]).unwrap().excess.is_some());
    assert!(r.gelu(&[enc(100.0)]).unwrap().excess.is_none());
    assert!(r.relu(&[enc(2f64.powi(24))]).excess.is_some());
    let flat = vec![enc(1.0); 8];
    let ln = r.layernorm(&flat, &[enc(1.0); 8], &[0; 8], 1, 8).unwrap();
    assert!(ln.excess.unwrap().what.contains("low"), "a row of equal values has no variance to normalise");
    assert!(r.softmax(&[enc(2f64.powi(20)), 0], 1, 2, None).unwrap().excess.is_some());
    assert!(r.softmax(&[enc(30.0), 0], 1, 2, None).unwrap().excess.is_none());
}
