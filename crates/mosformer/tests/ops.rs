//! A small transformer block through the capability traits (`FixedPoint`, `NonLinear`), against
//! a plaintext f64 reference; and the same block with all its material made ahead.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::offline::{OFFLINE_PHASE, Offline};
use veil_mosformer::stored::StoredMaterial;
use veil_mosformer::{Mosformer, Security};
use veil_mpc::harness::{all_ok, simulate};
use veil_mpc::prep::{Plan, Preprocessing};
use veil_mpc::trace::Tracer;
use veil_mpc::traits::{Layout, TransformerOps};
use veil_mpc::{Ctx, Result};
use veil_ring::{Ring, Z2k, Z64};
use veil_tensor::Tensor;

const L: usize = 4; // tokens
const D: usize = 8; // width
const F: f64 = 65536.0;

fn encode(v: &[f64], shape: &[usize]) -> Tensor<Z64> {
    Tensor::new(shape.to_vec(), v.iter().map(|x| Z64::from_i64((x * F).round() as i64)).collect()).unwrap()
}

fn decode(t: &Tensor<Z64>) -> Vec<f64> {
    t.data().iter().map(|v| v.to_signed() as f64 / F).collect()
}

fn values(seed: u64, n: usize, scale: f64) -> Vec<f64> {
    use rand::{Rng, SeedableRng, rngs::StdRng};
    let mut g = StdRng::seed_from_u64(seed);
    (0..n).map(|_| g.gen_range(-scale..scale)).collect()
}

fn matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    (0..m * n).map(|ij| (0..k).map(|p| a[ij / n * k + p] * b[p * n + ij % n]).sum()).collect()
}

fn transpose(a: &[f64], m: usize, n: usize) -> Vec<f64> {
    (0..m * n).map(|ji| a[(ji % m) * n + ji / m]).collect()
}

fn gelu(x: f64) -> f64 {
    0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x.powi(3))).tanh())
}

struct Inputs {
    x: Vec<f64>,
    wq: Vec<f64>,
    wk: Vec<f64>,
    wv: Vec<f64>,
    w1: Vec<f64>,
    gamma: Vec<f64>,
    beta: Vec<f64>,
}

fn inputs() -> Inputs {
    Inputs {
        x: values(1, L * D, 1.0),
        wq: values(2, D * D, 0.5),
        wk: values(3, D * D, 0.5),
        wv: values(4, D * D, 0.5),
        w1: values(5, D * D, 0.5),
        gamma: values(6, D, 1.0).iter().map(|g| 1.0 + g / 4.0).collect(),
        beta: values(7, D, 0.2),
    }
}

fn causal() -> Vec<bool> {
    (0..L * L).map(|ij| ij % L > ij / L).collect()
}

/// relu(gelu(LayerNorm(softmax(QKᵀ/2, causal)·V + X)·W1)) in f64.
fn reference(i: &Inputs) -> Vec<f64> {
    let q = matmul(&i.x, &i.wq, L, D, D);
    let k = matmul(&i.x, &i.wk, L, D, D);
    let v = matmul(&i.x, &i.wv, L, D, D);
    let s: Vec<f64> = matmul(&q, &transpose(&k, L, D), L, D, L).iter().map(|x| x / 2.0).collect();
    let mask = causal();
    let mut p = vec![0.0; L * L];
    for r in 0..L {
        let row: Vec<f64> =
            (0..L).map(|c| if mask[r * L + c] { f64::NEG_INFINITY } else { s[r * L + c] }).collect();
        let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = row.iter().map(|x| (x - m).exp()).collect();
        let sum: f64 = e.iter().sum();
        for c in 0..L {
            p[r * L + c] = e[c] / sum;
        }
    }
    let o: Vec<f64> = matmul(&p, &v, L, L, D).iter().zip(&i.x).map(|(a, b)| a + b).collect();
    let mut h = vec![0.0; L * D];
    for r in 0..L {
        let row = &o[r * D..(r + 1) * D];
        let mean = row.iter().sum::<f64>() / D as f64;
        let var = row.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / D as f64;
        for c in 0..D {
            h[r * D + c] = (row[c] - mean) / var.sqrt() * i.gamma[c] + i.beta[c];
        }
    }
    matmul(&h, &i.w1, L, D, D).into_iter().map(|x| gelu(x).max(0.0)).collect()
}

fn block<B: TransformerOps<Z64> + Layout<Z64>>(p: &mut B, ctx: &mut Ctx, i: &Inputs) -> Result<Tensor<Z64>> {
    let me = ctx.party();
    let own = |owner: usize, v: &[f64], shape: &[usize]| (me == owner).then(|| encode(v, shape));
    let x = p.share_input(ctx, 0, own(0, &i.x, &[L, D]).as_ref(), &[L, D])?;
    let mut w = Vec::new();
    for v in [&i.wq, &i.wk, &i.wv, &i.w1] {
        w.push(p.share_input(ctx, 1, own(1, v, &[D, D]).as_ref(), &[D, D])?);
    }
    let gamma = p.share_input(ctx, 1, own(1, &i.gamma, &[D]).as_ref(), &[D])?;
    let beta = p.share_input(ctx, 1, own(1, &i.beta, &[D]).as_ref(), &[D])?;
    let q = p.matmul_fixed(ctx, &x, &w[0])?;
    let k = p.matmul_fixed(ctx, &x, &w[1])?;
    let v = p.matmul_fixed(ctx, &x, &w[2])?;
    let kt = p.transpose(&k)?;
    let s = p.matmul_fixed(ctx, &q, &kt)?;
    let s = p.div_public(ctx, &s, 2)?;
    let mask = causal();
    let probs = p.softmax(ctx, &s, L, L, Some(&mask))?;
    let o = p.matmul_fixed(ctx, &probs, &v)?;
    let o = p.add(&o, &x)?;
    let h = p.layernorm(ctx, &o, &gamma, &beta, L, D)?;
    let f = p.matmul_fixed(ctx, &h, &w[3])?;
    let g = p.gelu(ctx, &f)?;
    let y = p.relu(ctx, &g)?;
    p.check(ctx)?;
    p.reveal_all(ctx, &y)
}

/// The block's plan for `family`, from its calls over shapes: no party, no message.
fn traced_plan(family: &Mosformer<Offline>, i: &Inputs) -> Plan {
    let mut tracer = Tracer::like::<Z64, _>(family);
    block(&mut tracer, &mut Ctx::detached(0, 3), i).unwrap();
    Plan::of(family, tracer.calls())
}

fn run(security: Security, chunk: usize) -> Vec<f64> {
    let i = inputs();
    let out = all_ok(simulate(3, 21, |ctx| {
        let mut p = Mosformer::new(security, Offline::for_security(security)).with_chunk(chunk);
        block(&mut p, ctx, &i)
    }))
    .unwrap();
    decode(&out[0])
}

#[test]
fn a_transformer_block_through_the_traits_matches_plaintext() {
    let want = reference(&inputs());
    for (security, chunk) in
        [(Security::Malicious, usize::MAX), (Security::SemiHonest, usize::MAX), (Security::Malicious, 5)]
    {
        let got = run(security, chunk);
        let worst = got.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
        eprintln!("{security:?}, chunks of {chunk}: max |error| = {worst}");
        // GELU's 6-bit output precision (1/64) and table, plus the upstream truncations.
        assert!(worst < 0.06, "{security:?}: {got:?} vs {want:?}");
    }
}

#[test]
fn a_planned_run_needs_nothing_made_online() {
    let i = inputs();
    let out = all_ok(simulate(3, 22, |ctx| {
        let mut first = Mosformer::new(Security::Malicious, Offline::new());
        block(&mut first, ctx, &i)?;
        let gates = first.gate_plan().to_vec();
        let triples = first.source_mut().plan().to_vec();
        let mut second = Mosformer::new(Security::Malicious, Offline::new());
        second.prepare(ctx, &gates)?;
        second.source_mut().produce(ctx, &triples)?;
        let before = ctx.stats().get(OFFLINE_PHASE);
        let y = block(&mut second, ctx, &i)?;
        let made_online = ctx.stats().get(OFFLINE_PHASE).bytes_sent - before.bytes_sent;
        Ok((y, made_online, second.source_mut().made_on_demand(), gates.len()))
    }))
    .unwrap();
    for (_, made_online, on_demand, gates) in out {
        assert_eq!(made_online, 0, "offline traffic during the online phase");
        assert_eq!(on_demand, 0);
        assert_eq!(gates, 4);
    }
}

/// Material made in one session, stored as bytes and loaded in another (other seeds, other
/// coin tosses) serves that session's whole online phase: nothing is made then, and the output
/// matches plaintext. Bytes that are not such material, and material of the other mode, are
/// refused.
#[test]
fn material_stored_by_one_session_serves_the_online_phase_of_another() {
    let i = inputs();
    let want = reference(&i);
    for security in [Security::Malicious, Security::SemiHonest] {
        let stored = all_ok(simulate(3, 31, |ctx| {
            let mut maker = Mosformer::new(security, Offline::for_security(security)).with_chunk(7);
            maker.prepare_all(ctx, &traced_plan(&maker, &i))?;
            let mut bytes = Vec::new();
            maker.take_material().encode(&mut bytes)?;
            Ok(bytes)
        }))
        .unwrap();
        let out = all_ok(simulate(3, 32, |ctx| {
            let mut p = Mosformer::new(security, Offline::for_security(security)).with_chunk(7);
            p.load_material(StoredMaterial::decode(&stored[ctx.party()])?)?;
            let y = block(&mut p, ctx, &i)?;
            Ok((y, ctx.stats().get(OFFLINE_PHASE).bytes_sent, p.made_on_demand()))
        }))
        .unwrap();
        for (y, offline_bytes, on_demand) in out {
            assert_eq!((offline_bytes, on_demand), (0, 0), "{security:?}: material was made online");
            let worst = decode(&y).iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
            assert!(worst < 0.06, "{security:?}: {worst}");
        }
        let bytes = &stored[0];
        assert!(StoredMaterial::decode(&bytes[..bytes.len() - 1]).is_err(), "a truncated store");
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(StoredMaterial::decode(&longer).is_err(), "trailing bytes");
        let other = match security {
            Security::Malicious => Security::SemiHonest,
            Security::SemiHonest => Security::Malicious,
        };
        let mut wrong_mode = Mosformer::new(other, Offline::for_security(other));
        let err = wrong_mode.load_material(StoredMaterial::decode(bytes).unwrap()).unwrap_err();
        assert!(err.to_string().contains("mode"), "{err}");
    }
}

/// The plan traced from the block's shapes (no party, no message, no material) is the plan a
/// real run records, request by request; a run prepared from it makes nothing online and
/// matches plaintext.
#[test]
fn the_traced_plan_is_the_plan_of_a_real_run() {
    let i = inputs();
    let want = reference(&i);
    for security in [Security::Malicious, Security::SemiHonest] {
        let out = all_ok(simulate(3, 23, |ctx| {
            let fresh = || Mosformer::new(security, Offline::for_security(security)).with_chunk(7);
            let planned = traced_plan(&fresh(), &i);
            let mut first = fresh();
            block(&mut first, ctx, &i)?;
            let recorded = first.recorded_plan();
            let mut second = fresh();
            second.prepare_all(ctx, &planned)?;
            let before = ctx.stats().get(OFFLINE_PHASE).bytes_sent;
            let y = block(&mut second, ctx, &i)?;
            let made_online = ctx.stats().get(OFFLINE_PHASE).bytes_sent - before;
            let usage = Preprocessing::usage(&second);
            Ok((
                y,
                planned.clone(),
                recorded,
                made_online,
                second.made_on_demand(),
                usage == planned.totals(),
            ))
        }))
        .unwrap();
        for (y, planned, recorded, made_online, on_demand, usage_as_planned) in out {
            assert_eq!(
                planned.by_kind(),
                recorded.by_kind(),
                "{security:?}: the traced plan differs from a run's"
            );
            assert!(planned.gate_elements() > 0);
            assert_eq!((made_online, on_demand), (0, 0), "{security:?}");
            assert!(usage_as_planned, "{security:?}: the run used other material than planned");
            let got = decode(&y);
            let worst = got.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
            assert!(worst < 0.06, "{security:?}: {worst}");
        }
    }
}
