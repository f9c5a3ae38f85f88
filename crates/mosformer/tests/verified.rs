//! Malicious multiplication: correctness, cost, and abort on every tampering.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::input::share_input;
use veil_mosformer::mul::cross_terms;
use veil_mosformer::offline::{Offline, OfflineRing};
use veil_mosformer::open::open_all;
use veil_mosformer::reshare::reshare;
use veil_mosformer::rss::Rss;
use veil_mosformer::triples::{Tamper, Triple, TripleSource};
use veil_mosformer::verified::{matmul, matmul_many_tampered, mul, zero_check};
use veil_mpc::cost::rounds_across;
use veil_mpc::harness::{all_ok, simulate};
use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::{Ring, Z16, Z32, Z64};
use veil_tensor::Tensor;

fn values<R: Ring>(seed: u64, n: usize) -> Tensor<R> {
    use rand::{SeedableRng, rngs::StdRng};
    let mut v = vec![R::ZERO, R::ONE, R::from_i64(-1)];
    v.extend(R::random_vec(&mut StdRng::seed_from_u64(seed), n - 3));
    Tensor::new(vec![n], v).unwrap()
}

fn shared<R: Ring>(ctx: &mut Ctx, owner: usize, v: &Tensor<R>) -> Result<Rss<R>> {
    share_input(ctx, owner, (ctx.party() == owner).then_some(v), v.shape())
}

fn check<R: OfflineRing>(seed: u64) {
    let (x, y) = (values::<R>(seed, 40), values::<R>(seed + 1, 40));
    let out = all_ok(simulate(3, seed, |ctx| {
        let (xs, ys) = (shared(ctx, 0, &x)?, shared(ctx, 1, &y)?);
        let mut dealer = Offline::new();
        dealer.produce_mul::<R>(ctx, 40)?;
        let (t0, before) = (ctx.stats().time(), ctx.stats().current());
        let z = mul(ctx, &mut dealer, &xs, &ys)?;
        let cost = ctx.stats().current().since(&before);
        let span = (t0, ctx.stats().time());
        Ok((open_all(ctx, &z)?, cost, span))
    }))
    .unwrap();
    let spans: Vec<_> = out.iter().map(|o| o.2).collect();
    assert_eq!(rounds_across(&spans), 2, "verified mul must take 2 rounds");
    for (z, cost, _) in out {
        assert_eq!(z, x.mul(&y).unwrap());
        // reshare n·B + open ρ,σ 2n·B + 32 + zero check 32.
        assert_eq!(cost.bytes_sent, (3 * 40 * R::BYTES + 64) as u64);
        assert_eq!(cost.messages_sent, 4);
    }
}

#[test]
fn verified_mul_in_every_ring() {
    check::<Z16>(1);
    check::<Z32>(2);
    check::<Z64>(3);
}

#[test]
fn verified_matmul_matches_plaintext() {
    use rand::{SeedableRng, rngs::StdRng};
    let mut g = StdRng::seed_from_u64(5);
    let a = Tensor::new(vec![4, 6], Z64::random_vec(&mut g, 24)).unwrap();
    let b = Tensor::new(vec![6, 3], Z64::random_vec(&mut g, 18)).unwrap();
    let out = all_ok(simulate(3, 5, |ctx| {
        let (xa, xb) = (shared(ctx, 0, &a)?, shared(ctx, 2, &b)?);
        let z = matmul(ctx, &mut Offline::new(), &xa, &xb)?;
        open_all(ctx, &z)
    }))
    .unwrap();
    assert!(out.iter().all(|z| *z == a.matmul(&b).unwrap()));
}

/// Three products of different shapes (as attention heads are) side by side.
fn many_operands() -> Vec<(Tensor<Z64>, Tensor<Z64>)> {
    use rand::{SeedableRng, rngs::StdRng};
    let mut g = StdRng::seed_from_u64(6);
    [[4, 6, 3], [2, 5, 5], [1, 1, 7]]
        .iter()
        .map(|&[m, k, n]| {
            let a = Tensor::new(vec![m, k], Z64::random_vec(&mut g, m * k)).unwrap();
            let b = Tensor::new(vec![k, n], Z64::random_vec(&mut g, k * n)).unwrap();
            (a, b)
        })
        .collect()
}

/// The opened products, the logical-time span of `matmul_many` and its bytes at one party.
type Opened = (Vec<Tensor<Z64>>, (u64, u64), u64);

fn run_many<S: TripleSource<Z64>>(
    ops: &[(Tensor<Z64>, Tensor<Z64>)],
    tamper: Option<Tamper>,
    source: impl Fn(&mut Ctx, &[(Tensor<Z64>, Tensor<Z64>)]) -> Result<S> + Sync,
) -> Vec<Result<Opened>> {
    run_many_seeded(ops, 5, tamper, source)
}

fn run_many_seeded<S: TripleSource<Z64>>(
    ops: &[(Tensor<Z64>, Tensor<Z64>)],
    seed: u64,
    tamper: Option<Tamper>,
    source: impl Fn(&mut Ctx, &[(Tensor<Z64>, Tensor<Z64>)]) -> Result<S> + Sync,
) -> Vec<Result<Opened>> {
    simulate(3, seed, |ctx| {
        let mut shares = Vec::new();
        for (a, b) in ops {
            shares.push((shared(ctx, 0, a)?, shared(ctx, 2, b)?));
        }
        let pairs: Vec<(&Rss<Z64>, &Rss<Z64>)> = shares.iter().map(|(x, y)| (x, y)).collect();
        let mut src = source(ctx, ops)?;
        let (t0, before) = (ctx.stats().time(), ctx.stats().current());
        let z = matmul_many_tampered(ctx, &mut src, &pairs, tamper)?;
        let bytes = ctx.stats().current().since(&before).bytes_sent;
        let span = (t0, ctx.stats().time());
        Ok((z.iter().map(|z| open_all(ctx, z)).collect::<Result<_>>()?, span, bytes))
    })
}

/// The cost of one verified `matmul_many` at each party: the reshare of the products and the
/// check's `c` (64 elements), the challenge (2 elements + digest), the opening of `2K` Galois
/// ring elements of 64 coefficients (+ digest) and the 32-byte zero check.
fn declared_bytes(ops: &[(Tensor<Z64>, Tensor<Z64>)]) -> u64 {
    let mn: usize = ops.iter().map(|(a, b)| a.shape()[0] * b.shape()[1]).sum();
    let k: usize = ops.iter().map(|(a, _)| a.shape()[1]).sum();
    ((mn + 64) * 8 + (16 + 32) + (2 * k * 64 * 8 + 32) + 32) as u64
}

#[test]
fn side_by_side_matmuls_match_plaintext_in_the_rounds_of_one() {
    let ops = many_operands();
    for security in [veil_mosformer::Security::Malicious, veil_mosformer::Security::SemiHonest] {
        let out = all_ok(run_many(&ops, None, |_, _| Ok(Offline::for_security(security)))).unwrap();
        for (z, _, _) in &out {
            for ((a, b), zi) in ops.iter().zip(z) {
                assert_eq!(*zi, a.matmul(b).unwrap(), "{security:?}");
            }
        }
        // Malicious: the reshare, the challenge, the opening, the zero check; semi-honest: the
        // reshare.
        let want = if security == veil_mosformer::Security::Malicious { 4 } else { 1 };
        assert_eq!(rounds_across(&out.iter().map(|o| o.1).collect::<Vec<_>>()), want, "{security:?}");
        if security == veil_mosformer::Security::Malicious {
            assert!(
                out.iter().all(|o| o.2 == declared_bytes(&ops)),
                "{:?}",
                out.iter().map(|o| o.2).collect::<Vec<_>>()
            );
        }
    }
}

/// Every error a server can put into the products or the check's `c` (its only way to change
/// them) aborts, whoever sends it, whichever product it hits, including the errors that are
/// zero divisors of Z_2^64 (`2^63`, which a check over Z_2^64 alone would miss for half of
/// the challenges), over many challenges (seeds).
#[test]
fn a_wrong_product_among_side_by_side_matmuls_aborts() {
    let ops = many_operands();
    let products: usize = ops.iter().map(|(a, b)| a.shape()[0] * b.shape()[1]).sum();
    let mut cases = vec![];
    for seed in 0..6u64 {
        let party = (seed % 3) as usize;
        // The first product's first entry, the last product's last, and `c`'s coefficients.
        for (index, delta) in
            [(0, 1u128), (products - 1, 1 << 63), (products, 1), (products + 63, 1 << 63), (13, 1 << 40)]
        {
            cases.push((seed, Tamper { party, index, delta }));
        }
    }
    for (seed, tamper) in cases {
        let res = run_many_seeded(&ops, seed, Some(tamper), |_, _| Ok(Offline::new()));
        assert!(aborted(&res), "{tamper:?}, seed {seed}: {res:?}");
        assert!(
            res.iter()
                .any(|r| matches!(r, Err(MpcError::Abort { check, .. }) if check.contains("zero check"))),
            "{res:?}"
        );
    }
}

/// A product whose inputs are themselves wrong-shaped is refused before anything is sent.
#[test]
fn mismatched_shapes_are_refused() {
    let res = simulate(3, 3, |ctx| {
        let x = veil_mosformer::prss::random::<Z64>(ctx, &[2, 3])?;
        matmul(ctx, &mut Offline::new(), &x, &x)
    });
    assert!(res.iter().all(|r| matches!(r, Err(MpcError::Invalid(_)))), "{res:?}");
}

/// An honest party detects the deviation (abort) and no party ends with a result: a party
/// that did not detect it itself fails because the detecting party left the session.
fn aborted<T: std::fmt::Debug>(res: &[Result<T>]) -> bool {
    res.iter().any(|r| matches!(r, Err(MpcError::Abort { .. }))) && res.iter().all(|r| r.is_err())
}

/// A party that adds `err` to its reshare message: the verification must abort.
fn reshare_error_aborts<R: OfflineRing>(cheater: usize, err: R) {
    let (x, y) = (values::<R>(7, 8), values::<R>(8, 8));
    let res = simulate(3, 7, |ctx| {
        let (xs, ys) = (shared(ctx, 0, &x)?, shared(ctx, 1, &y)?);
        let mut dealer = CheatingReshare { inner: Offline::new(), cheater, err };
        let z = mul(ctx, &mut dealer, &xs, &ys)?;
        open_all(ctx, &z)
    });
    assert!(aborted(&res), "{res:?}");
    assert!(
        res.iter().any(|r| matches!(r, Err(MpcError::Abort { check, .. }) if check.contains("zero check"))),
        "{res:?}"
    );
}

/// A triple source that makes its party corrupt the product before verification, by
/// perturbing `c`: equivalent to an error `e` in that party's reshare message.
struct CheatingReshare<R> {
    inner: Offline,
    cheater: usize,
    err: R,
}

impl<R: OfflineRing> TripleSource<R> for CheatingReshare<R> {
    fn mul_triple(&mut self, ctx: &mut Ctx, shape: &[usize]) -> Result<Triple<R>> {
        let mut t = self.inner.mul_triple(ctx, shape)?;
        if ctx.party() == self.cheater {
            // The cheater's first component a_b is what it sends in the zero check and what
            // it shares with P_{b-1}; changing it is an inconsistent (malicious) share.
            let mut d = t.c.first.data().to_vec();
            d[3] += self.err;
            t.c.first = Tensor::new(shape.to_vec(), d)?;
        }
        Ok(t)
    }
}

#[test]
fn wrong_triple_or_inconsistent_share_aborts() {
    for cheater in 0..3 {
        reshare_error_aborts::<Z64>(cheater, Z64(1));
        reshare_error_aborts::<Z64>(cheater, Z64(1 << 63));
        reshare_error_aborts::<Z32>(cheater, Z32(u32::MAX));
    }
}

/// The corrupted party adds `e` to the masked term it sends in the reshare.
#[test]
fn additive_error_in_the_reshare_aborts() {
    for (cheater, e) in [(0, Z64(1)), (1, Z64(1 << 63)), (2, Z64(12345))] {
        let (x, y) = (values::<Z64>(9, 6), values::<Z64>(10, 6));
        let res = simulate(3, 9, |ctx| {
            let (xs, ys) = (shared(ctx, 0, &x)?, shared(ctx, 1, &y)?);
            let mut dealer = Offline::new();
            let t = dealer.mul_triple(ctx, xs.shape())?;
            let mut z_b = cross_terms(&xs, &ys)?;
            if ctx.party() == cheater {
                let mut d = z_b.data().to_vec();
                d[0] += e;
                z_b = Tensor::new(vec![6], d)?;
            }
            // The verification steps of `mul`, spelled out so the cheater's error enters the
            // reshare.
            let z = reshare(ctx, z_b)?;
            let rho = open_all(ctx, &t.a.sub(&xs)?)?;
            let sigma = open_all(ctx, &t.b.sub(&ys)?)?;
            let zeta = z.sub(&t.c)?.add(&t.a.mul_public(&sigma)?)?.add(&t.b.mul_public(&rho)?)?;
            let zeta = zeta.add_public(ctx.party(), &rho.mul(&sigma)?.neg())?;
            zero_check(ctx, &zeta, "mul")?;
            Ok(z)
        });
        assert!(aborted(&res), "cheater {cheater}: {res:?}");
    }
}

#[test]
fn honest_runs_never_abort_over_many_seeds() {
    for seed in 0..25 {
        let (x, y) = (values::<Z32>(seed, 5), values::<Z32>(seed + 50, 5));
        let out = all_ok(simulate(3, 1000 + seed, |ctx| {
            let (xs, ys) =
                (shared(ctx, (seed % 3) as usize, &x)?, shared(ctx, ((seed + 1) % 3) as usize, &y)?);
            let z = mul(ctx, &mut Offline::new(), &xs, &ys)?;
            open_all(ctx, &z)
        }))
        .unwrap();
        assert!(out.iter().all(|z| *z == x.mul(&y).unwrap()));
    }
}

/// Empty products (no rows, no columns, an empty inner dimension) are checked like any other:
/// the result is the empty (or zero) matrix and an honest run passes.
#[test]
fn empty_products_are_checked() {
    for [m, k, n] in [[0, 3, 2], [2, 3, 0], [2, 0, 3], [0, 0, 0]] {
        let a = Tensor::new(vec![m, k], vec![Z64(5); m * k]).unwrap();
        let b = Tensor::new(vec![k, n], vec![Z64(7); k * n]).unwrap();
        let out = all_ok(run_many(&[(a.clone(), b.clone())], None, |_, _| Ok(Offline::new()))).unwrap();
        for (z, _, _) in &out {
            assert_eq!(z[0], a.matmul(&b).unwrap(), "{m}×{k}×{n}");
        }
    }
    // No products at all: nothing to reshare or check.
    let out = all_ok(run_many(&[], None, |_, _| Ok(Offline::new()))).unwrap();
    assert!(out.iter().all(|(z, _, bytes)| z.is_empty() && *bytes == 0));
}
