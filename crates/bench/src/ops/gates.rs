//! `veil bench ops` for the mosformer gates built on DReLU and the reciprocals (Mosformer §6-§9):
//! ReLU, Select, Max, Softmax and LayerNorm, and for the verified matrix product of a linear
//! layer. The gates' comparisons run in the working ring (Z_2^32 at f = 12 by default, or
//! Z_2^64 at f = 16), their values in Z_2^64 and their outputs' MACs in the MAC ring, as in a
//! transformer layer. Max and Softmax work on rows of [`ATTENTION_ROW`] entries (one attention
//! row of BERT-base at 128 tokens), LayerNorm and the product on rows of [`HIDDEN_ROW`] (its
//! width; the product is `[rows, 768] × [768, 768]`, `n` its output entries); their benchmarks
//! take `n` rounded down to whole rows.

use veil_mosformer::convert::{lift, reduce};
use veil_mosformer::offline::{Offline, OfflineRing};

use super::Plan;
use veil_mosformer::ops::MacRing;
use veil_mosformer::rss::Rss;
use veil_mosformer::triples::Sacrifice;
use veil_mosformer::{drelu, layernorm, max, softmax, verified};
use veil_mpc::{Ctx, Result};
use veil_ring::{Z2k, Z64};

use super::{Run, bench_mac_gate, measure, random_input, security, small_input};

/// Entries of a Max or Softmax row: the keys of one attention row at 128 tokens.
pub const ATTENTION_ROW: usize = 128;

/// Entries of a LayerNorm row and of a row of the matrix product: BERT-base's hidden width.
pub const HIDDEN_ROW: usize = 768;

/// The row length an op works on (1 for elementwise ops).
pub(super) fn row_len(op: &str) -> usize {
    match op {
        "max" | "softmax" => ATTENTION_ROW,
        "layernorm" | "matmul" => HIDDEN_ROW,
        _ => 1,
    }
}

/// `n` small values (|x| < 2^(bound-1)) in Z_2^64, as the working ring `R` reads them (a local
/// reduction) and as the MAC ring holds them (a local lift; gate values count mod 2^64).
fn values<R: Z2k>(ctx: &mut Ctx, n: usize, bound: u32) -> Result<(Rss<R>, Rss<MacRing>)> {
    let x = small_input::<Z64>(ctx, n, bound)?;
    Ok((reduce::<Z64, R>(&x)?, lift::<Z64, MacRing>(&x)?))
}

/// Select (paper Algorithm 4), `DReLU(x)·y`; with `relu`, ReLU: `x` selected by its own sign
/// ([`max::relu`] is that Select).
pub(super) fn bench_select<R: Sacrifice>(
    ctx: &mut Ctx,
    n: usize,
    malicious: bool,
    relu: bool,
) -> Result<Run> {
    let (x, x_m) = values::<R>(ctx, n, 20)?;
    let y = if relu { x_m } else { values::<R>(ctx, n, 20)?.1 };
    bench_mac_gate(
        ctx,
        malicious,
        &mut Offline::new(),
        &Vec::new(),
        |c| drelu::setup_with::<R, MacRing>(c, n, security(malicious)),
        |c, keys, _, macs| drelu::select(c, keys, &x, &y, macs),
    )
}

/// Max of each row of [`ATTENTION_ROW`] values (a tree of DReLUs and Selects).
pub(super) fn bench_max<R: Sacrifice>(ctx: &mut Ctx, n: usize, malicious: bool) -> Result<Run> {
    let rows = n / ATTENTION_ROW;
    let x = small_input::<Z64>(ctx, n, 20)?.reshape(&[rows, ATTENTION_ROW])?;
    bench_mac_gate(
        ctx,
        malicious,
        &mut Offline::new(),
        &Vec::new(),
        |c| max::max_setup_with::<R, MacRing>(c, rows, ATTENTION_ROW, security(malicious)),
        |c, keys, _, macs| max::max(c, keys, &x, macs),
    )
}

/// Softmax of each row of [`ATTENTION_ROW`] scores in (-8, 8) at `f` fractional bits, the
/// reciprocal comparing in `R`, Max and Exp in `C` (Max at `f − cmp_shift` bits).
pub(super) fn bench_softmax<R: Sacrifice, C: Sacrifice>(
    ctx: &mut Ctx,
    n: usize,
    (offline, plan): (&mut Offline, &Plan),
    malicious: bool,
    f: u32,
    cmp_shift: u32,
) -> Result<Run> {
    let rows = n / ATTENTION_ROW;
    let x = small_input::<Z64>(ctx, n, f + 4)?;
    bench_mac_gate(
        ctx,
        malicious,
        offline,
        plan,
        |c| softmax::setup_with::<R, C, MacRing>(c, rows, ATTENTION_ROW, f, security(malicious)),
        |c, keys, o, macs| softmax::softmax(c, keys, o, &x, None, f, cmp_shift, macs),
    )
}

/// LayerNorm of each row of [`HIDDEN_ROW`] values in (-2, 2) at 16 fractional bits, secret
/// `γ, β`, Rsqrt at `f` fractional bits.
pub(super) fn bench_layernorm<R: Sacrifice>(
    ctx: &mut Ctx,
    n: usize,
    (offline, plan): (&mut Offline, &Plan),
    malicious: bool,
    f: u32,
) -> Result<Run> {
    let rows = n / HIDDEN_ROW;
    let x = small_input::<Z64>(ctx, n, 18)?;
    let gamma = small_input::<Z64>(ctx, HIDDEN_ROW, 17)?;
    let beta = small_input::<Z64>(ctx, HIDDEN_ROW, 15)?;
    bench_mac_gate(
        ctx,
        malicious,
        offline,
        plan,
        |c| layernorm::setup_with::<R, MacRing>(c, rows, HIDDEN_ROW, f, security(malicious)),
        |c, keys, o, macs| layernorm::layernorm(c, keys, o, &x, (&gamma, &beta), f, macs),
    )
}

/// The product `X · W` of secret `X: [rows, 768]` and secret `W: [768, 768]` in `R` (a linear
/// layer of BERT-base, before its truncation): malicious, a local product, a reshare and the
/// product's check by a random projection over a Galois ring (`veil_mosformer::matcheck`),
/// with nothing offline; semi-honest, the product and the reshare.
pub(super) fn bench_matmul<R: OfflineRing>(ctx: &mut Ctx, n: usize, malicious: bool) -> Result<Run> {
    let rows = n / HIDDEN_ROW;
    let x = random_input::<R>(ctx, n)?.reshape(&[rows, HIDDEN_ROW])?;
    let w = random_input::<R>(ctx, HIDDEN_ROW * HIDDEN_ROW)?.reshape(&[HIDDEN_ROW, HIDDEN_ROW])?;
    let mut offline = Offline::for_security(security(malicious));
    let (_, off) = measure(ctx, "offline", |c| offline.produce(c, &[]))?;
    let (_, on) = measure(ctx, "online", |c| verified::matmul(c, &mut offline, &x, &w))?;
    if offline.made_on_demand() > 0 {
        return Err(veil_mpc::MpcError::Invalid("the product asked for offline material".into()));
    }
    Ok((off, on))
}

#[cfg(test)]
mod tests {
    use super::super::mosformer_op;

    #[test]
    fn the_gates_run_on_whole_rows_with_their_material_made_ahead() {
        // A planned run fails if its online phase needed material the plan missed.
        // 300 elements: two whole rows of Max or Softmax, and at least one row of LayerNorm.
        for (op, n) in [
            ("relu", 300),
            ("select", 300),
            ("max", 256),
            ("softmax", 256),
            ("layernorm", 768),
            ("matmul", 768),
        ] {
            let r = mosformer_op(op, true, 300, None).unwrap();
            let (bits, f) = if op == "matmul" { (64, 16) } else { (32, 12) };
            assert_eq!((r.n, r.ring_bits, r.frac_bits), (n, bits, f), "{op}");
            // Malicious matrix products are checked online, with nothing offline.
            let offline = if op == "matmul" {
                r.offline.bytes_per_party == 0.0
            } else {
                r.offline.bytes_per_party > 0.0
            };
            assert!(r.online.bytes_per_party > 0.0 && offline, "{op}");
        }
        let full = mosformer_op("matmul", true, 768, None).unwrap();
        assert_eq!(full.online.rounds, 4, "reshare, challenge, opening, zero check");
        let semi = mosformer_op("matmul", false, 768, None).unwrap();
        assert_eq!(
            (semi.offline.bytes_per_party, semi.online.rounds),
            (0.0, 1),
            "a reshare, nothing offline"
        );
        let semi = mosformer_op("softmax", false, 128, Some(64)).unwrap();
        let full = mosformer_op("softmax", true, 128, Some(64)).unwrap();
        assert_eq!((semi.n, semi.frac_bits), (128, 16));
        assert!(semi.offline.bytes_per_party < full.offline.bytes_per_party);
        assert!(mosformer_op("max", true, 1000, Some(16)).is_err(), "no Z_2^16 Max benchmark");
    }
}
