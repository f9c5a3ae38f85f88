//! `veil bench ops --family aegis`: per-operation cost of the aegis protocols, offline (every
//! `prepare_*` call, made before the input exists) and online measured apart, with the paper's
//! figure beside ours. The paper counts total bits over the three parties; ours is the mean
//! bytes sent per party, so a paper figure `b` bits shows as `b / 24`.

use veil_aegis::verify::Terms;
use veil_aegis::{Aegis, Masked};
use veil_mpc::harness::{SimConfig, all_ok, simulate_with};
use veil_mpc::{Ctx, MpcError, Result};

use crate::ops::{Measured, OpRecord, PaperFigure, Seconds, measure, phase_cost};

/// Operations `veil bench ops --family aegis` knows.
pub const AEGIS_OPS: &[&str] = &["mul", "inner", "trunc", "sign", "relu", "maxpool"];

/// Inner-product length of the `inner` benchmark (any length costs the same).
pub const INNER_LEN: usize = 64;

fn paper(op: &str) -> Option<PaperFigure> {
    // Total online bits over the three parties (8-bit Z_p elements where relevant).
    let (bits, source) = match op {
        "mul" | "inner" => (128.0, "Aegis Table 1 / Table 6: 2l online bits, 1 round"),
        "trunc" => (0.0, "Aegis Fig. 21: 0 online bits"),
        "sign" => (2176.0, "Aegis §3 with 8-bit Z_p elements: 4l·8 + 2l bits, 2 rounds"),
        "relu" => (1792.0, "Aegis Table 6 ReLU online 4l·log l + 4l bits (6-bit elements), 2 rounds"),
        "maxpool" => (3.0 * 4.0 * 64.0 * 8.0, "Aegis Table 6 MaxPool (n−1)·4l(log l + 2) bits, n = 4"),
        _ => return None,
    };
    Some(PaperFigure {
        source,
        value: bits / 24.0,
        unit: "bytes per party per element (paper's total bits / 24)",
        convention: "the paper counts total bits sent by all three parties per element",
    })
}

/// Elements per piece for the comparison-based ops and the inner products: larger runs are cut
/// into pieces, each made offline and then consumed online (a party holds one piece's
/// material at a time), with one verification of every piece at the end.
pub const AEGIS_PIECE: usize = 1 << 16;

/// The piece sizes of a run of `op` at `n` elements, for pieces of `unit` ([`AEGIS_PIECE`]).
fn pieces(op: &str, n: usize, unit: usize) -> Vec<usize> {
    let piece = match op {
        "sign" | "relu" | "maxpool" => unit,
        "inner" => (unit / 4).max(1),
        _ => n.max(1),
    };
    (0..n.div_ceil(piece)).map(|i| piece.min(n - i * piece)).collect()
}

/// One op's offline, online and verification phases at one party, over its pieces.
fn run_op(op: &str, n: usize, unit: usize, ctx: &mut Ctx) -> Result<(Measured, Measured, Measured)> {
    let mut a = Aegis::new(64)?;
    let (mut off, mut on) = (Measured::default(), Measured::default());
    for (k, size) in pieces(op, n, unit).into_iter().enumerate() {
        let (o, p) = run_piece(&mut a, op, size, k, ctx)?;
        off.absorb(o);
        on.absorb(p);
    }
    let ((), verify) = measure(ctx, "verify", |ctx| a.check(ctx))?;
    Ok((off, on, verify))
}

/// Piece `k` of `n` elements: input, offline, online (the verification comes after all pieces).
fn run_piece(a: &mut Aegis, op: &str, n: usize, k: usize, ctx: &mut Ctx) -> Result<(Measured, Measured)> {
    // Fixed-point values (16 fractional bits) well inside the ring.
    let len = if op == "inner" {
        n * INNER_LEN
    } else if op == "maxpool" {
        4 * n
    } else {
        n
    };
    let values: Vec<u64> = {
        let mut g = ctx.common_prg(&format!("bench/aegis/input/{k}"));
        (0..len).map(|_| ((g.next_u64() as i64) >> 24) as u64).collect()
    };
    ctx.set_phase("input");
    let x = a.share_input(ctx, 0, (ctx.party() == 0).then_some(&values[..]), len)?;
    let (mat, off) = measure(ctx, "offline", |ctx| -> Result<Material> {
        Ok(match op {
            "mul" => {
                Material::Product(a.prepare_product(ctx, &x.r, &x.r, n, &veil_aegis::mul::elementwise)?)
            }
            "inner" => Material::Product(a.prepare_product(ctx, &x.r, &x.r, n, &inner_op(n))?),
            "trunc" => Material::Trunc(a.prepare_trunc(ctx, &x.r, n, 16)?),
            "sign" => Material::Sign(Box::new(a.prepare_sign(ctx, &x.r, n, false)?)),
            "relu" => Material::Sign(Box::new(a.prepare_sign(ctx, &x.r, n, true)?)),
            _ => Material::Max(a.prepare_max_rows(ctx, &x.r, n, 4)?),
        })
    })?;
    let (_, on) = measure(ctx, "online", |ctx| -> Result<Masked> {
        match mat {
            Material::Product(m) if op == "mul" => {
                a.product_online(ctx, &x, &x, m, Terms::Elementwise, &veil_aegis::mul::elementwise)
            }
            Material::Product(m) => {
                a.product_online(ctx, &x, &x, m, Terms::Inner { len: INNER_LEN }, &inner_op(n))
            }
            Material::Trunc(r) => a.trunc_online(&x, r, 16),
            Material::Sign(m) if op == "sign" => Ok(a.sign_online(ctx, &x, *m)?.0),
            Material::Sign(m) => {
                let w = a.sign_online(ctx, &x, *m)?.1;
                a.sub(&x, &w)
            }
            Material::Max(m) => a.max_rows_online(ctx, &x, n, 4, m),
        }
    })?;
    Ok((off, on))
}

enum Material {
    Product(veil_aegis::mul::ProductMaterial),
    Trunc(veil_aegis::Pair),
    Sign(Box<veil_aegis::sign::SignMaterial>),
    Max(Vec<veil_aegis::sign::SignMaterial>),
}

fn inner_op(rows: usize) -> impl Fn(&[u64], &[u64]) -> Vec<u64> {
    move |p: &[u64], q: &[u64]| {
        (0..rows)
            .map(|i| {
                let r = i * INNER_LEN..(i + 1) * INNER_LEN;
                p[r.clone()].iter().zip(&q[r]).fold(0u64, |s, (u, v)| s.wrapping_add(u.wrapping_mul(*v)))
            })
            .collect()
    }
}

/// Runs one aegis op at `n` elements (outputs) among three servers on threads.
pub fn aegis_op(op: &str, n: usize) -> Result<OpRecord> {
    aegis_op_in_pieces(op, n, AEGIS_PIECE)
}

fn aegis_op_in_pieces(op: &str, n: usize, unit: usize) -> Result<OpRecord> {
    if !AEGIS_OPS.contains(&op) {
        return Err(MpcError::Invalid(format!(
            "aegis has no op '{op}' (available: {})",
            AEGIS_OPS.join(", ")
        )));
    }
    veil_runtime::memory::reset_peak();
    let cfg = SimConfig { seed: 5, timeout: std::time::Duration::from_secs(1800) };
    let runs = all_ok(simulate_with(3, cfg, |ctx| run_op(op, n, unit, ctx)))?;
    let off: Vec<&Measured> = runs.iter().map(|r| &r.0).collect();
    let on: Vec<&Measured> = runs.iter().map(|r| &r.1).collect();
    let ver: Vec<&Measured> = runs.iter().map(|r| &r.2).collect();
    let online = phase_cost(&on);
    let online_bytes_per_element = online.bytes_per_party / n as f64;
    Ok(OpRecord {
        family: "aegis",
        security: "malicious",
        op: op.to_string(),
        ring_bits: 64,
        frac_bits: 16,
        n,
        parties: 3,
        offline: phase_cost(&off),
        online,
        offline_source: "parties (P0 deals)",
        seconds: Seconds {
            online: on.iter().map(|m| m.seconds).fold(0.0, f64::max),
            offline: off.iter().map(|m| m.seconds).fold(0.0, f64::max),
        },
        net: "none",
        online_bytes_per_element,
        paper: paper(op),
        pieces: pieces(op, n, unit).len(),
        peak_rss_mib: veil_runtime::memory::peak_rss_bytes().map(|b| b as f64 / f64::from(1u32 << 20)),
        verify: Some(phase_cost(&ver)),
        mac_bits: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn online_costs_and_rounds_are_the_declared_ones() {
        let n = 100;
        let per = |op: &str| aegis_op(op, n).unwrap();
        let mul = per("mul");
        assert_eq!(mul.online.rounds, 1);
        assert!((mul.online_bytes_per_element - 16.0 / 3.0).abs() < 1e-9, "{}", mul.online_bytes_per_element);
        let inner = per("inner");
        assert_eq!((inner.online.rounds, inner.online.bytes_max_party), (1, 8 * n as u64));
        let trunc = per("trunc");
        assert_eq!((trunc.online.rounds, trunc.online.bytes_max_party), (0, 0));
        let sign = per("sign");
        assert_eq!(sign.online.rounds, 2);
        // P1, P2: 2l Z_p elements packed at 7 bits; P0: m' (8 bytes) to both.
        assert!((sign.online_bytes_per_element - (112.0 + 112.0 + 16.0) / 3.0).abs() < 1e-9);
        let relu = per("relu");
        assert_eq!(relu.online.rounds, 2);
        assert!((relu.online_bytes_per_element - (120.0 + 120.0 + 32.0) / 3.0).abs() < 1e-9);
        let pool = per("maxpool");
        assert_eq!(pool.online.rounds, 4, "two levels of two rounds for 4 inputs");
    }

    #[test]
    fn large_runs_go_in_pieces_with_one_verification() {
        assert_eq!(
            pieces("sign", 3 * AEGIS_PIECE + 5, AEGIS_PIECE),
            [AEGIS_PIECE, AEGIS_PIECE, AEGIS_PIECE, 5]
        );
        assert_eq!(pieces("mul", 3 * AEGIS_PIECE, AEGIS_PIECE), [3 * AEGIS_PIECE]);
        assert_eq!(pieces("inner", AEGIS_PIECE / 4 + 1, AEGIS_PIECE).len(), 2);
        // Two pieces of a ReLU cost what one piece does per element, in twice the rounds.
        let two = aegis_op_in_pieces("relu", 40, 32).unwrap();
        assert_eq!((two.pieces, two.online.rounds), (2, 4));
        assert!((two.online_bytes_per_element - (120.0 + 120.0 + 32.0) / 3.0).abs() < 1e-9);
        assert!(two.verify.is_some_and(|v| v.bytes_per_party > 0.0));
    }
}
