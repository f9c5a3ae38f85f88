//! The aegis protocols against plaintext, at edge and random values, with their costs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_aegis::{Aegis, Masked};
use veil_mpc::harness::simulate;

mod common;
use common::{aborted, random_values};
use veil_mpc::{Ctx, Result};

/// Runs `f` on the three servers; returns P0's result.
fn run3<T: Send>(seed: u64, f: impl Fn(&mut Ctx) -> Result<T> + Sync) -> Vec<T> {
    simulate(3, seed, f).into_iter().collect::<Result<Vec<_>>>().unwrap()
}

fn signed(v: u64, l: u32) -> i128 {
    let v = i128::from(v);
    if v >= 1 << (l - 1) { v - (1i128 << l) } else { v }
}

/// P0 shares `x`, `op` runs, the result is opened to all.
fn eval(
    l: u32,
    seed: u64,
    x: &[u64],
    op: impl Fn(&mut Aegis, &mut Ctx, &Masked) -> Result<Masked> + Sync,
) -> Vec<u64> {
    let out = run3(seed, |ctx| {
        let mut a = Aegis::new(l)?;
        let xs = a.share_input(ctx, 0, (ctx.party() == 0).then_some(x), x.len())?;
        let y = op(&mut a, ctx, &xs)?;
        a.check(ctx)?;
        a.reveal_all(ctx, &y)
    });
    assert!(out.iter().all(|o| o == &out[0]), "all servers open the same value");
    out[0].clone()
}

fn edges(l: u32) -> Vec<u64> {
    let top = if l == 64 { u64::MAX } else { (1 << l) - 1 };
    let half = 1u64 << (l - 1);
    vec![0, 1, 2, top, top - 1, half, half - 1, half + 1, 5, top - 4]
}

#[test]
fn sign_is_exact_at_edges_and_random_values_in_both_widths() {
    for l in [64, 8] {
        let mut x = edges(l);
        x.extend(random_values(9, 200, l));
        if l == 8 {
            x = (0..256).collect();
        }
        for seed in 0..4 {
            let z = eval(l, seed, &x, |a, ctx, v| a.sign(ctx, v));
            for (xi, zi) in x.iter().zip(&z) {
                assert_eq!(*zi, u64::from(signed(*xi, l) < 0), "l = {l}, x = {xi}, seed {seed}");
            }
        }
    }
}

#[test]
fn relu_and_f_and_max_match_plaintext() {
    let l = 64;
    let mut x = edges(l);
    // Fixed-point values in a realistic range (16 fractional bits).
    x.extend(random_values(3, 100, l).iter().map(|v| (*v as i64 >> 30) as u64));
    let relu = eval(l, 1, &x, |a, ctx, v| a.relu(ctx, v));
    let f = eval(l, 2, &x, |a, ctx, v| a.neg_part(ctx, v));
    for i in 0..x.len() {
        let s = signed(x[i], l);
        assert_eq!(signed(relu[i], l), s.max(0), "ReLU({s})");
        assert_eq!(signed(f[i], l), s.min(0), "f({s})");
    }
    // Rows of 5 (odd: one carried element per level) and 8.
    for k in [5usize, 8] {
        let rows = x.len() / k;
        let xs = &x[..rows * k];
        let xs: Vec<u64> = xs.iter().map(|v| (*v as i64 >> 2) as u64).collect();
        let m = eval(l, 4, &xs, |a, ctx, v| a.max_rows(ctx, v, rows, k));
        for r in 0..rows {
            let want = xs[r * k..(r + 1) * k].iter().map(|v| signed(*v, l)).max().unwrap();
            assert_eq!(signed(m[r], l), want, "row {r} of {k}");
        }
    }
}

#[test]
fn products_and_truncation_match_plaintext() {
    let l = 64;
    let (m, k, n) = (3, 4, 2);
    let a: Vec<u64> = random_values(5, m * k, l);
    let b: Vec<u64> = random_values(6, k * n, l);
    let out = run3(7, |ctx| {
        let mut s = Aegis::new(l)?;
        let me = ctx.party();
        let xa = s.share_input(ctx, 1, (me == 1).then_some(&a[..]), a.len())?;
        let xb = s.share_input(ctx, 2, (me == 2).then_some(&b[..]), b.len())?;
        let prod = s.matmul(ctx, &xa, &xb, m, k, n)?;
        let ab = s.share_input(ctx, 0, (me == 0).then_some(&a[..k]), k)?;
        let elem = s.mul(ctx, &ab, &ab)?;
        let inner = s.inner(ctx, &xa, &xa, m, k)?;
        s.check(ctx)?;
        Ok((s.reveal_all(ctx, &prod)?, s.reveal_all(ctx, &elem)?, s.reveal_to(ctx, &inner, 2)?))
    });
    for i in 0..m {
        for j in 0..n {
            let want = (0..k).fold(0u64, |acc, t| acc.wrapping_add(a[i * k + t].wrapping_mul(b[t * n + j])));
            assert_eq!(out[0].0[i * n + j], want);
        }
        let want = (0..k).fold(0u64, |acc, t| acc.wrapping_add(a[i * k + t].wrapping_mul(a[i * k + t])));
        assert_eq!(out[2].2.as_ref().unwrap()[i], want, "inner product revealed to P2");
    }
    assert!(out[0].2.is_none() && out[1].2.is_none());
    for (t, &v) in a[..k].iter().enumerate() {
        assert_eq!(out[1].1[t], v.wrapping_mul(v));
    }
    // Truncation of fixed-point values: within one unit of the floor.
    let x: Vec<u64> = random_values(8, 300, l).iter().map(|v| (*v as i64 >> 20) as u64).collect();
    let z = eval(l, 9, &x, |s, ctx, v| s.trunc(ctx, v, 16));
    for (xi, zi) in x.iter().zip(&z) {
        let d = signed(*zi, l) - (signed(*xi, l) >> 16);
        assert!((0..=1).contains(&d), "trunc({}) off by {d}", signed(*xi, l));
    }
}

#[test]
fn measured_costs_equal_the_declared_ones() {
    let l = 64;
    let n = 50usize;
    let x = random_values(1, n, l);
    let costs = run3(2, |ctx| {
        let mut a = Aegis::new(l)?;
        ctx.set_phase("input");
        let xs = a.share_input(ctx, 0, (ctx.party() == 0).then_some(&x[..]), n)?;
        let measure =
            |ctx: &mut Ctx, name: &str, a: &mut Aegis, f: &dyn Fn(&mut Aegis, &mut Ctx) -> Result<()>| {
                ctx.set_phase(name);
                let t0 = ctx.stats().time();
                f(a, ctx)?;
                let s = ctx.stats().get(name);
                Ok::<_, veil_mpc::MpcError>((s.bytes_sent, ctx.stats().time() - t0))
            };
        let mul = measure(ctx, "mul", &mut a, &|a, ctx| a.mul(ctx, &xs, &xs).map(|_| ()))?;
        let sign = measure(ctx, "sign", &mut a, &|a, ctx| a.sign(ctx, &xs).map(|_| ()))?;
        let relu = measure(ctx, "relu", &mut a, &|a, ctx| a.relu(ctx, &xs).map(|_| ()))?;
        let offline = ctx.stats().get("offline").bytes_sent;
        Ok((mul, sign, relu, offline))
    });
    type Costs = ((u64, u64), (u64, u64), (u64, u64), u64);
    let per = |k: usize, pick: fn(&Costs) -> (u64, u64)| pick(&costs[k]);
    // Mult: P1 and P2 send l bits each, 1 round; P0 sends nothing online.
    assert_eq!(per(0, |c| c.0).0, 0);
    assert_eq!(per(1, |c| c.0), (8 * n as u64, 1));
    assert_eq!(per(2, |c| c.0), (8 * n as u64, 1));
    // Z_p elements (p = 127) travel packed at 7 bits, each message padded to whole bytes.
    let packed = |count: usize| (count * 7).div_ceil(8) as u64;
    // Sign: P1, P2 send the two Z_p lists (2l elements each); P0 sends m' (l bits) to both;
    // 2 rounds.
    assert_eq!(per(1, |c| c.1).0, packed(2 * 64 * n));
    assert_eq!(per(0, |c| c.1).0, 2 * 8 * n as u64);
    assert!(per(1, |c| c.1).1 <= 2 + 1, "sign rounds (the clock also counts the offline Γ exchange)");
    // ReLU: plus Γ'' (l bits each for P1, P2) and m'' (l bits to each from P0).
    assert_eq!(per(1, |c| c.2).0, packed(2 * 64 * n) + 8 * n as u64);
    assert_eq!(per(0, |c| c.2).0, 4 * 8 * n as u64);
    // Offline at P0: Γ of mul (l bits), sign's bits (l-1 packed elements), relu's bits and
    // [r_x r_z].
    assert_eq!(costs[0].3, (8 + 8) * n as u64 + 2 * packed(63 * n));
}

#[test]
fn p0_sending_different_masked_inputs_is_caught_before_output() {
    let x = [5u64, 7];
    let results = simulate(3, 3, |ctx| {
        let mut a = Aegis::new(64)?;
        if ctx.party() == 0 {
            // A cheating P0: the protocol's masks, but different m to P1 and P2.
            let r = a.random_pair(ctx, "input", 2)?;
            let m: Vec<u64> = (0..2).map(|i| x[i].wrapping_add(r.one[i]).wrapping_add(r.two[i])).collect();
            let bad: Vec<u64> = m.iter().map(|v| v ^ 1).collect();
            ctx.net().send(1, m.iter().flat_map(|v| v.to_le_bytes()).collect())?;
            ctx.net().send(2, bad.iter().flat_map(|v| v.to_le_bytes()).collect())?;
            return Ok(());
        }
        a.share_input(ctx, 0, None, 2)?;
        a.check(ctx)
    });
    for p in [1, 2] {
        let e = results[p].as_ref().unwrap_err().to_string();
        assert!(e.contains("abort") && e.contains("jointly held"), "{e}");
    }
}

#[test]
fn owners_outside_the_servers_share_inputs_and_alone_get_the_output() {
    // Parties 0-2 are servers, 3 the data owner, 4 the model owner.
    let x = [3u64 << 16, (-2i64 << 16) as u64, 7 << 16];
    let w = [(-1i64 << 16) as u64, 5 << 16, 1 << 16];
    let results = simulate(5, 11, |ctx| {
        let mut a = Aegis::new(64)?;
        let me = ctx.party();
        let xs = a.share_from_owner(ctx, 3, (me == 3).then_some(&x[..]), 3)?;
        let ws = a.share_from_owner(ctx, 4, (me == 4).then_some(&w[..]), 3)?;
        let out = match (xs, ws) {
            (Some(xs), Some(ws)) => {
                let p = a.mul(ctx, &xs, &ws)?;
                let p = a.trunc(ctx, &p, 16)?;
                let r = a.relu(ctx, &p)?;
                a.check(ctx)?;
                Some(r)
            }
            _ => None,
        };
        a.reveal_to_owner(ctx, out.as_ref(), 3, 3)
    });
    let outs: Vec<Option<Vec<u64>>> = results.into_iter().collect::<Result<_>>().unwrap();
    for (p, o) in outs.iter().enumerate() {
        assert_eq!(o.is_some(), p == 3, "only the data owner gets the output");
    }
    let got: Vec<i128> = outs[3].as_ref().unwrap().iter().map(|v| signed(*v, 64)).collect();
    // ReLU of 3·(-1), -2·5, 7·1 in fixed point (16 fractional bits), within a unit.
    let want = [0i128, 0, 7 << 16];
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1, "{got:?}");
    }
}

/// P0 shares `x`; `op` runs; `tamper` runs at P1 and P2 (consistently); then `check`.
fn check_after(
    x: &[u64],
    op: impl Fn(&mut Aegis, &mut Ctx, &Masked) -> Result<()> + Sync,
    tamper: impl Fn(&mut Aegis) + Sync,
) -> Vec<Result<()>> {
    simulate(3, 21, |ctx| {
        let mut a = Aegis::new(64)?;
        let xs = a.share_input(ctx, 0, (ctx.party() == 0).then_some(x), x.len())?;
        op(&mut a, ctx, &xs)?;
        if ctx.party() != 0 {
            tamper(&mut a);
        }
        a.check(ctx)
    })
}

#[test]
fn honest_products_verify_over_many_seeds() {
    let x: Vec<u64> = random_values(4, 70, 64).iter().map(|v| (*v as i64 >> 24) as u64).collect();
    for seed in 0..6 {
        let r = simulate(3, seed, |ctx| {
            let mut a = Aegis::new(64)?;
            let xs = a.share_input(ctx, 0, (ctx.party() == 0).then_some(&x[..]), x.len())?;
            let p = a.mul(ctx, &xs, &xs)?;
            let q = a.inner(ctx, &xs, &p, 7, 10)?;
            let _ = a.matmul(ctx, &xs, &xs, 7, 10, 7)?;
            let _ = a.relu(ctx, &q)?;
            a.check(ctx)
        });
        assert!(r.iter().all(Result::is_ok), "seed {seed}: {r:?}");
    }
}

#[test]
fn wrong_products_make_the_verification_abort() {
    let x: Vec<u64> = random_values(5, 40, 64).iter().map(|v| (*v as i64 >> 24) as u64).collect();
    let mul = |a: &mut Aegis, ctx: &mut Ctx, v: &Masked| a.mul(ctx, v, v).map(|_| ());
    // An error of 2^63 (the zero-divisor case the Galois ring is for), +1 and -1 in one product.
    for delta in [1u64 << 63, 1, u64::MAX] {
        let r =
            check_after(&x, mul, |a| a.tamper_recorded(0, |_, _, z| z.m[17] = z.m[17].wrapping_add(delta)));
        assert!(aborted(&r), "delta {delta:#x}: {r:?}");
    }
    // A wrong Γ from P0 shifts m_z the same way for both P1 and P2: same as above. A wrong inner
    // product in a matrix product:
    let mm = |a: &mut Aegis, ctx: &mut Ctx, v: &Masked| a.matmul(ctx, v, v, 4, 10, 4).map(|_| ());
    let r = check_after(&x, mm, |a| a.tamper_recorded(0, |_, _, z| z.m[5] ^= 1 << 40));
    assert!(aborted(&r), "{r:?}");
    // A sign bit z = 2 (fails z·z = z) and a wrong x·z in ReLU.
    let relu = |a: &mut Aegis, ctx: &mut Ctx, v: &Masked| a.relu(ctx, v).map(|_| ());
    // (ReLU records z·z = z with x·z = w as its twin.)
    let r = check_after(&x, relu, |a| {
        a.tamper_recorded(0, |p, q, z| {
            for v in [p, q, z] {
                v.m[3] = v.m[3].wrapping_add(2);
            }
        })
    });
    assert!(aborted(&r), "z = 2: {r:?}");
    let r = check_after(&x, relu, |a| a.tamper_twin(0, |_, w| w.m[9] = w.m[9].wrapping_add(1 << 20)));
    assert!(aborted(&r), "x·z: {r:?}");
    let r = check_after(&x, relu, |a| a.tamper_twin(0, |_, w| w.m[9] = w.m[9].wrapping_add(1 << 63)));
    assert!(aborted(&r), "x·z off by 2^63: {r:?}");
}

#[test]
fn a_wrong_sign_bit_with_consistent_products_is_caught_by_the_positivity_check() {
    // Every x is positive, so sign = 0 and x·sign = 0. The tamper flips element 3's sign bit to
    // 1 and makes every product claim consistent with it (z·z = z, x·z = x): only Π_Pos (dual
    // execution and the equality test) can notice.
    let value = 5u64 << 16;
    let x = vec![value; 8];
    let relu = |a: &mut Aegis, ctx: &mut Ctx, v: &Masked| a.relu(ctx, v).map(|_| ());
    let honest = check_after(&x, relu, |_| {});
    assert!(honest.iter().all(Result::is_ok), "{honest:?}");
    let r = check_after(&x, relu, |a| {
        a.tamper_signs(|z| z.m[3] = z.m[3].wrapping_add(1));
        // z·z = z (its `y` is also the `z` of the twin x·z = w), then w = x.
        a.tamper_recorded(0, |p, q, z| {
            for v in [p, q, z] {
                v.m[3] = v.m[3].wrapping_add(1);
            }
        });
        a.tamper_twin(0, |_, w| w.m[3] = w.m[3].wrapping_add(value));
    });
    assert!(aborted(&r), "{r:?}");
}

#[test]
fn a_malicious_list_or_delta_in_the_sign_extraction_is_caught() {
    // P1 deviates online in one ReLU: shifted Z_p shares in 16 elements' lists (P0 reads a
    // wrong comparison bit for those whose masked bit is 0: about half; the others are still
    // right), or the other δ for one element (P1's and P2's shares disagree).
    let x: Vec<u64> = random_values(31, 24, 64).iter().map(|v| (*v as i64 >> 30) as u64).collect();
    for (name, t) in [
        ("shifted lists", veil_aegis::sign::SignTamper::ShiftLists { elements: 16 }),
        ("flipped delta", veil_aegis::sign::SignTamper::FlipDelta { element: 7 }),
    ] {
        let r = simulate(3, 41, |ctx| {
            let mut a = Aegis::new(64)?;
            let xs = a.share_input(ctx, 0, (ctx.party() == 0).then_some(&x[..]), x.len())?;
            if ctx.party() == 1 {
                a.tamper_next_sign(t);
            }
            a.relu(ctx, &xs)?;
            a.check(ctx)
        });
        // The other δ makes P1's and P2's `m_z` differ: their comparison of jointly held
        // values, which runs beside the sign checks and before the final check, sees it first.
        let joint = |r: &Result<()>| r.as_ref().is_err_and(|e| e.to_string().contains("jointly held values"));
        let caught = aborted(&r) || (name == "flipped delta" && r.iter().all(joint));
        assert!(caught, "{name}: {r:?}");
    }
}

#[test]
fn lazy_reductions_from_the_shares_still_catch_one_wrong_entry() {
    // 40 000 elementwise products: more than `COLUMN_BUDGET` columns of one slot, so several
    // products share each column; with the claim materialized only below 1 000 entries, the
    // first reduction is computed from the recorded shares.
    let n = 40_000;
    assert!(n > veil_aegis::columns::COLUMN_BUDGET);
    let x: Vec<u64> = random_values(8, n, 64).iter().map(|v| (*v as i64 >> 30) as u64).collect();
    let run = |tamper: Option<(usize, u64)>| {
        simulate(3, 21, |ctx| {
            let mut a = Aegis::new(64)?.with_materialize_at(1000);
            let xs = a.share_input(ctx, 0, (ctx.party() == 0).then_some(&x[..]), x.len())?;
            a.mul(ctx, &xs, &xs)?;
            if let (Some((at, delta)), true) = (tamper, ctx.party() != 0) {
                a.tamper_recorded(0, |_, _, z| z.m[at] = z.m[at].wrapping_add(delta));
            }
            a.check(ctx)
        })
    };
    assert!(run(None).iter().all(Result::is_ok));
    for (at, delta) in [(n - 1, 1u64 << 63), (0, 1), (12_345, u64::MAX)] {
        let r = run(Some((at, delta)));
        assert!(aborted(&r), "{delta:#x} at {at}: {r:?}");
    }
}

#[test]
fn matrix_products_are_checked_in_freivalds_form() {
    // [20, 30] × [30, 30]: 18 000 product terms verified as one claim of 30 terms. Errors of
    // 2^63 (a zero divisor of Z_2^64) and of 1 in one output, in an input as recorded, and in
    // a truncated product must all abort.
    let a: Vec<u64> = random_values(9, 900, 64).iter().map(|v| (*v as i64 >> 30) as u64).collect();
    let left = veil_aegis::sign::gather;
    let mm = move |s: &mut Aegis, ctx: &mut Ctx, v: &Masked| {
        s.matmul(ctx, &left(v, &(0..600).collect::<Vec<_>>()), v, 20, 30, 30).map(|_| ())
    };
    assert!(check_after(&a, mm, |_| {}).iter().all(Result::is_ok));
    for (name, tamper) in [
        (
            "2^63 in z",
            Box::new(|z: &mut Masked| z.m[599] = z.m[599].wrapping_add(1 << 63))
                as Box<dyn Fn(&mut Masked) + Sync>,
        ),
        ("1 in z", Box::new(|z: &mut Masked| z.m[0] = z.m[0].wrapping_add(1))),
    ] {
        let r = check_after(&a, mm, |s| s.tamper_recorded(0, |_, _, z| tamper(z)));
        assert!(aborted(&r), "{name}: {r:?}");
    }
    let r = check_after(&a, mm, |s| s.tamper_recorded(0, |x, _, _| x.m[3] = x.m[3].wrapping_add(1 << 63)));
    assert!(aborted(&r), "x: {r:?}");
    let r = check_after(&a, mm, |s| s.tamper_recorded(0, |_, y, _| y.m[899] = y.m[899].wrapping_add(5)));
    assert!(aborted(&r), "y: {r:?}");
    // A truncated matrix product (the pair's products are verified per term, the product in
    // Freivalds form).
    let scaled: Vec<u64> = a.iter().map(|v| (*v as i64 >> 10) as u64).collect();
    let mmt = move |s: &mut Aegis, ctx: &mut Ctx, v: &Masked| {
        use veil_mpc::traits::FixedPoint;
        let x = veil_aegis::Shaped { shape: vec![20, 30], x: left(v, &(0..600).collect::<Vec<_>>()) };
        let y = veil_aegis::Shaped { shape: vec![30, 30], x: v.clone() };
        s.matmul_fixed(ctx, &x, &y).map(|_| ())
    };
    assert!(check_after(&scaled, mmt, |_| {}).iter().all(Result::is_ok));
    for back in [0, 1] {
        let r = check_after(&scaled, mmt, |s| {
            s.tamper_recorded(back, |_, _, z| z.m[42] = z.m[42].wrapping_add(1 << 63))
        });
        assert!(aborted(&r), "truncated product, record {back}: {r:?}");
    }
}

#[test]
fn convolutions_recorded_by_their_input_match_the_patches_product_and_are_checked() {
    // [2, 5, 5, 3] input, 3x3 kernel, stride 2, padding 1: patches [18, 27] × [27, 4]; and
    // stride 1, patches [50, 27] × [27, 4], whose Freivalds vector is structured
    // (`freivalds::Separable`). The product is recorded by its input (75 entries per image, not
    // 243 or 675 of patches) and verified through the geometry; errors in the input, the kernel
    // and the output must abort, rescaled or not, and the result must be the patches' product.
    for (stride, out) in [(2, 3), (1, 5)] {
        conv_checked(
            veil_mpc::conv::Conv2d::new([2, 5, 5, 3], [3, 3], [stride, stride], [1, 1], [out, out]).unwrap(),
        );
    }
}

fn conv_checked(conv: veil_mpc::conv::Conv2d) {
    use veil_aegis::Shaped;
    use veil_mpc::traits::{FixedPoint, Layout};
    let (xn, wn) = (conv.input_len(), conv.cols() * 4);
    let vals: Vec<u64> = random_values(31, xn + wn, 64).iter().map(|v| (*v as i64 >> 44) as u64).collect();
    let run = |scaled: bool, by_patches: bool, tamper: u8| {
        simulate(3, 37, |ctx| {
            let mut a = Aegis::new(64)?;
            let all = a.share_input(ctx, 0, (ctx.party() == 0).then_some(&vals[..]), vals.len())?;
            let part = |r: std::ops::Range<usize>| veil_aegis::sign::gather(&all, &r.collect::<Vec<_>>());
            let x = Shaped { shape: conv.input.to_vec(), x: part(0..xn) };
            let w = Shaped { shape: vec![conv.cols(), 4], x: part(xn..xn + wn) };
            let y = if by_patches {
                let p = a.gather(&x, &conv.index_map(), &[conv.rows(), conv.cols()])?;
                if scaled { a.matmul_fixed(ctx, &p, &w)? } else { a.matmul_unscaled(ctx, &p, &w)? }
            } else {
                a.conv2d(ctx, &x, &conv, &w, scaled)?
            };
            if ctx.party() != 0 {
                // The convolution's record is the latest (a truncation pair's is made before it).
                let back = 0;
                match tamper {
                    1 => a.tamper_recorded(back, |x, _, _| x.m[74] = x.m[74].wrapping_add(1 << 63)),
                    2 => a.tamper_recorded(back, |_, w, _| w.m[3] = w.m[3].wrapping_add(1)),
                    3 => a.tamper_recorded(back, |_, _, z| z.m[71] = z.m[71].wrapping_add(1 << 20)),
                    _ => {}
                }
            }
            a.check(ctx)?;
            a.reveal_all(ctx, &y.x)
        })
    };
    for scaled in [false, true] {
        let want = run(scaled, true, 0)[0].as_ref().unwrap().clone();
        assert_eq!(run(scaled, false, 0)[0].as_ref().unwrap(), &want, "scaled {scaled}");
        for tamper in 1..=3 {
            let r: Vec<Result<()>> = run(scaled, false, tamper).into_iter().map(|r| r.map(|_| ())).collect();
            assert!(aborted(&r), "{conv:?}, scaled {scaled}, tamper {tamper}: {r:?}");
        }
    }
}

#[test]
fn products_truncated_with_verified_pairs_match_plaintext_and_are_checked() {
    let x: Vec<u64> = random_values(12, 50, 64).iter().map(|v| (*v as i64 >> 36) as u64).collect();
    // 0: honest; 1: the pair's r_x inner product carries an additive error (as if P0 had dealt
    // a wrong Γ for it); 2: its r_z inner product does (verified as r_x's twin).
    // With the claim materialized below 64 entries, the pairs' 1 600 bit products (32 slots
    // per column, 50 columns) go through reductions computed from the bits (down to the
    // final dimension).
    // With one halving, the bit products' claim is materialized from the bits at the final
    // check, 1 600 entries.
    let run_with = |tamper: u8, materialize_at: usize, reductions: Option<usize>| {
        simulate(3, 13, |ctx| {
            let mut a = Aegis::new(64)?.with_materialize_at(materialize_at);
            if let Some(r) = reductions {
                a = a.with_reductions(r);
            }
            let xs = a.share_input(ctx, 0, (ctx.party() == 0).then_some(&x[..]), x.len())?;
            let pair = a.prepare_trunc_pair(ctx, x.len(), 16)?;
            if ctx.party() != 0 {
                match tamper {
                    1 => a.tamper_recorded(0, |_, _, z| z.m[7] = z.m[7].wrapping_add(1 << 30)),
                    2 => a.tamper_twin(0, |_, z2| z2.m[3] = z2.m[3].wrapping_add(1)),
                    _ => {}
                }
            }
            let z = a.mul_trunc(ctx, &xs, &xs, pair)?;
            a.check(ctx)?;
            a.reveal_all(ctx, &z)
        })
    };
    let run = |tamper: u8, materialize_at: usize| run_with(tamper, materialize_at, None);
    let default = veil_aegis::columns::MATERIALIZE_AT;
    let out = run(0, default);
    assert_eq!(run(0, 64)[0].as_ref().unwrap(), out[0].as_ref().unwrap());
    let z = out[0].as_ref().unwrap();
    for (xi, zi) in x.iter().zip(z) {
        // A pair with a low part (`veil_aegis::trunc::TruncPair`): ⌊(x − 2^15)/2^16⌋ + {0, 1, 2}.
        let low = (signed(*xi, 64) * signed(*xi, 64) - (1 << 15)) >> 16;
        let d = signed(*zi, 64) - low;
        assert!((0..=2).contains(&d), "({})^2 / 2^16: off by {d}", signed(*xi, 64));
    }
    assert_eq!(run_with(0, 64, Some(1))[0].as_ref().unwrap(), out[0].as_ref().unwrap());
    for (tamper, materialize_at, reductions) in [
        (1, default, None),
        (2, default, None),
        (1, 64, None),
        (2, 64, None),
        (1, 64, Some(1)),
        (2, 64, Some(1)),
    ] {
        let bad = run_with(tamper, materialize_at, reductions);
        assert!(
            bad.iter().all(|r| r.as_ref().is_err_and(|e| e.to_string().contains("batch multiplication"))),
            "tampering {tamper}, materialized at {materialize_at}, R {reductions:?}: {bad:?}"
        );
    }
}

/// Truncation with verified pairs against the plaintext reference, for both kinds of pair: a
/// shift by 16 (32 checked bits and a low part from seeds: `⌊(x − 2^15)/2^16⌋ + {0, 1, 2}`,
/// unbiased) and by 40 (all 64 bits checked, no low part: `⌊x/2^40⌋ + {0, 1}`), at edge and
/// random values; the mean error over 4 000 values is within 0.1 unit of 0 (a carry left
/// uncompensated would make it 0.5).
#[test]
fn truncation_pairs_round_without_bias_at_edge_and_random_values() {
    let mut x: Vec<i128> =
        vec![0, 1, -1, (1 << 15) - 1, 1 << 15, -(1 << 15), (1 << 16) - 1, 1 << 16, -(1 << 16)];
    x.extend([(1 << 40) - 1, 1 << 40, -(1 << 40) - 1, (1 << 44) + 12_345, -(1 << 44)]);
    // Magnitudes below 2^40: a mask wraps around with them with probability below 2^−24.
    x.extend(random_values(21, 4000, 64).iter().map(|v| i128::from(*v as i64 >> 24)));
    let enc: Vec<u64> = x.iter().map(|v| *v as u64).collect();
    for t in [16u32, 40] {
        let out = simulate(3, 23, |ctx| {
            let mut a = Aegis::new(64)?;
            let xs = a.share_input(ctx, 0, (ctx.party() == 0).then_some(&enc[..]), enc.len())?;
            let one =
                a.share_input(ctx, 0, (ctx.party() == 0).then_some(&vec![1u64; enc.len()][..]), enc.len())?;
            let pair = a.prepare_trunc_pair(ctx, enc.len(), t)?;
            let z = a.mul_trunc(ctx, &xs, &one, pair)?;
            a.check(ctx)?;
            a.reveal_all(ctx, &z)
        });
        let z = out[0].as_ref().unwrap();
        let offset = if t == 16 { 1i128 << 15 } else { 0 };
        let mut error = 0.0;
        for (xi, zi) in x.iter().zip(z) {
            let d = signed(*zi, 64) - ((xi - offset) >> t);
            let most = if t == 16 { 2 } else { 1 };
            assert!((0..=most).contains(&d), "{xi} / 2^{t}: {} ({d} above the floor)", signed(*zi, 64));
            error += (signed(*zi, 64) as f64) - (*xi as f64) / f64::from(t).exp2();
        }
        let mean = error / x.len() as f64;
        assert!(mean.abs() < 0.1, "shift by {t}: mean error {mean} units");
    }
}

#[test]
fn polynomials_match_plaintext_and_fewer_halvings_still_catch_errors() {
    use veil_aegis::{FRAC_BITS, Shaped};
    let reals: Vec<f64> = (0..40).map(|i| (i as f64 - 20.0) / 8.0).collect();
    let enc: Vec<u64> = reals.iter().map(|v| (v * 65536.0).round() as i64 as u64).collect();
    // p(x) = 0.5 + 0.197x − 0.004x³ (a sigmoid approximation of the kind CNNs use).
    let coeffs = [0.5, 0.197, 0.0, -0.004];
    let run = |reductions: Option<usize>, tamper: bool| {
        simulate(3, 17, |ctx| {
            let mut a = Aegis::new(64)?;
            if let Some(r) = reductions {
                a = a.with_reductions(r);
            }
            let x = a.share_input(ctx, 0, (ctx.party() == 0).then_some(&enc[..]), enc.len())?;
            let x = Shaped { shape: vec![enc.len()], x };
            let y = a.poly(ctx, &x, &coeffs)?;
            if tamper && ctx.party() != 0 {
                a.tamper_recorded(0, |_, _, z| z.m[4] = z.m[4].wrapping_add(1 << 16));
            }
            let before = ctx.stats().total().rounds;
            a.check(ctx)?;
            let rounds = ctx.stats().total().rounds - before;
            Ok((a.reveal_all(ctx, &y.x)?, rounds))
        })
    };
    let honest = run(None, false);
    let (out, full_rounds) = honest[0].as_ref().unwrap().clone();
    for (v, o) in reals.iter().zip(&out) {
        let want = coeffs.iter().rev().fold(0.0, |acc, c| acc * v + c);
        let got = *o as i64 as f64 / f64::from(1u32 << FRAC_BITS);
        assert!((got - want).abs() < 1e-3, "p({v}) = {got}, want {want}");
    }
    // Halvings go in pairs, two rounds a pair, and the last pair's challenge carries the final
    // check's first half: this claim's one pair takes as many rounds as no halving at all,
    // where the first half takes a challenge of its own (2 + 2 + 2 across the servers).
    let capped = run(Some(0), false);
    let (_, capped_rounds) = capped[0].as_ref().unwrap().clone();
    assert_eq!(capped_rounds, full_rounds, "R = 0 against the uncapped verification");
    for r in [0, 1] {
        let bad: Vec<Result<()>> = run(Some(r), true).into_iter().map(|r| r.map(|_| ())).collect();
        assert!(aborted(&bad), "R = {r}: {bad:?}");
    }
}

/// `m_α` of the last final check P1 ran with [`Aegis::leak_alpha`] (one test uses it).
static LEAKED_M_ALPHA: std::sync::Mutex<Option<veil_ring::Gr>> = std::sync::Mutex::new(None);

/// A malicious P0 that shifts the `h(0)` it deals at every reduction knows the error `E` this
/// leaves in the final claim (the challenges are public), and it knows `r_α`. Had it dealt
/// cross terms that P1 and P2 multiply by the public `m_α = α + r_α` (the paper's degree-3
/// Π_InnerVerify: `Σ r_X·r_Y` and `Σ r_α·r_X·r_Y`), shifting them by `E` and `r_α·E` would
/// have cancelled its error `α·E`. In this final check no dealt value meets `m_α`: every shift
/// built from `E` and `r_α` aborts, and only one that knows `α` itself (handed over from P1 by
/// the test) passes, which shows the tracked `E` is the real error.
#[test]
fn a_malicious_dealer_cannot_cancel_its_own_error_at_the_final_check() {
    use veil_aegis::verify::{CancelAttempt, FinalDeal};
    use veil_ring::Gr;
    type Cancel = fn(&Gr, &Gr, FinalDeal<'_>);
    let x: Vec<u64> = random_values(31, 4096, 64).iter().map(|v| (*v as i64 >> 24) as u64).collect();
    let run = |cancel: Cancel, leak: bool| {
        simulate(3, 37, |ctx| {
            let mut a = Aegis::new(64)?;
            let xs = a.share_input(ctx, 0, (ctx.party() == 0).then_some(&x[..]), x.len())?;
            a.mul(ctx, &xs, &xs)?;
            if ctx.party() == 0 {
                a.attempt_cancel(CancelAttempt { shift: 1 << 40, cancel });
            }
            if leak && ctx.party() == 1 {
                a.leak_alpha(|m| *LEAKED_M_ALPHA.lock().unwrap() = Some(*m));
            }
            a.check(ctx)
        })
    };
    let attempts: [(&str, Cancel); 8] = [
        ("no cancellation", |_, _, _| {}),
        ("Δ's deal + E", |e, _, d| {
            if let FinalDeal::Delta(g) = d {
                *g = g.add(e);
            }
        }),
        ("Δ's deal − E", |e, _, d| {
            if let FinalDeal::Delta(g) = d {
                *g = g.sub(e);
            }
        }),
        ("Δ's deal + r_α·E", |e, ra, d| {
            if let FinalDeal::Delta(g) = d {
                *g = g.add(&ra.mul(e));
            }
        }),
        ("Δ's deal − r_α·E", |e, ra, d| {
            if let FinalDeal::Delta(g) = d {
                *g = g.sub(&ra.mul(e));
            }
        }),
        ("T's deal − E", |e, _, d| {
            if let FinalDeal::Products(p) = d
                && let Some(t) = p.last_mut()
            {
                *t = t.sub(e);
            }
        }),
        ("Γ_0 + E and Δ's deal + r_α·E", |e, ra, d| match d {
            FinalDeal::Products(p) => p[0] = p[0].add(e),
            FinalDeal::Delta(g) => *g = g.add(&ra.mul(e)),
        }),
        ("Γ_0 − r_α·E", |e, ra, d| {
            if let FinalDeal::Products(p) = d {
                p[0] = p[0].sub(&ra.mul(e));
            }
        }),
    ];
    for (name, cancel) in attempts {
        let bad = run(cancel, false);
        assert!(
            bad.iter().all(|r| r.as_ref().is_err_and(|e| e.to_string().contains("batch multiplication"))),
            "{name}: {bad:?}"
        );
    }
    // Knowing `α = m_α − r_α`, the dealer could add `α·E` to Δ's deal (Δ carries `−α·E`).
    *LEAKED_M_ALPHA.lock().unwrap() = None;
    let knowing_alpha: Cancel = |e, ra, d| {
        if let FinalDeal::Delta(g) = d {
            let m = loop {
                if let Some(m) = *LEAKED_M_ALPHA.lock().unwrap() {
                    break m;
                }
                std::thread::yield_now();
            };
            *g = g.add(&m.sub(ra).mul(e));
        }
    };
    let forged = run(knowing_alpha, true);
    assert!(forged.iter().all(Result::is_ok), "with α known the forgery passes: {forged:?}");
}

/// An error P0 adds to its deal of `α·X_i` shifts `Δ` by the error times `Y'_i = Y_i + γ·D_i`,
/// with secret random dummies `D_i`: it aborts even where the data make `Y_i = 0` (here every
/// input is 0), so whether it aborts tells P0 nothing about the data.
#[test]
fn an_error_in_the_final_deal_aborts_even_where_the_data_are_zero() {
    use veil_aegis::verify::{CancelAttempt, FinalDeal};
    let zeros = [0u64; 16];
    let out = simulate(3, 41, |ctx| {
        let mut a = Aegis::new(64)?;
        let xs = a.share_input(ctx, 0, (ctx.party() == 0).then_some(&zeros[..]), zeros.len())?;
        a.mul(ctx, &xs, &xs)?;
        if ctx.party() == 0 {
            a.attempt_cancel(CancelAttempt {
                shift: 0,
                cancel: |_, _, d| {
                    if let FinalDeal::Products(p) = d {
                        p[3] = p[3].add(&veil_ring::Gr::embed(1));
                    }
                },
            });
        }
        a.check(ctx)
    });
    assert!(
        out.iter().all(|r| r.as_ref().is_err_and(|e| e.to_string().contains("batch multiplication"))),
        "{out:?}"
    );
}

#[test]
fn pairs_of_lazy_halvings_in_one_pass_match_plaintext_and_catch_errors() {
    // 1 000 inner products of 64 terms and as many truncation pairs (32 bit products each):
    // 64 slots per column, so with the claim materialized only below 100 entries and every
    // pair of halvings taken (`Pairing::Always`), the steps at 8 and 16 slots per entry are
    // lazy and go as one pass (`Columns::local_pair`, P0's bit blocks from the tables among
    // them). Errors in an inner product's output, in its input as recorded and in a
    // truncation pair's twin must all abort.
    let (rows, len) = (1000, 64);
    let x: Vec<u64> = random_values(31, rows * len, 64).iter().map(|v| (*v as i64 >> 40) as u64).collect();
    let run = |tamper: u8| {
        simulate(3, 17, |ctx| {
            let mut a = Aegis::new(64)?.with_materialize_at(100).with_pairing(veil_aegis::Pairing::Always);
            let xs = a.share_input(ctx, 0, (ctx.party() == 0).then_some(&x[..]), x.len())?;
            // Made and checked, not used: its bit products join the verified claim.
            a.prepare_trunc_pair(ctx, rows, 16)?;
            if ctx.party() != 0 && tamper == 3 {
                a.tamper_twin(0, |_, z2| z2.m[999] = z2.m[999].wrapping_add(1 << 63));
            }
            let z = a.inner(ctx, &xs, &xs, rows, len)?;
            match (tamper, ctx.party() != 0) {
                (1, true) => a.tamper_recorded(0, |_, _, z| z.m[500] = z.m[500].wrapping_add(1)),
                (2, true) => a.tamper_recorded(0, |x, _, _| x.m[12_345] = x.m[12_345].wrapping_add(1 << 63)),
                _ => {}
            }
            a.check(ctx)?;
            a.reveal_all(ctx, &z)
        })
    };
    let out = run(0);
    let z = out[0].as_ref().unwrap();
    for (r, zr) in z.iter().enumerate() {
        let want = x[r * len..(r + 1) * len].iter().fold(0u64, |s, v| s.wrapping_add(v.wrapping_mul(*v)));
        assert_eq!(*zr, want, "row {r}");
    }
    for tamper in 1..=3 {
        let r: Vec<Result<()>> = run(tamper).into_iter().map(|r| r.map(|_| ())).collect();
        assert!(aborted(&r), "tamper {tamper}: {r:?}");
    }
}
