//! Fully connected and convolution layers on shares (coefficient encoding) against Z_t
//! arithmetic: blocks of inputs and outputs, channel groups, row tiles of large images.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use veil_he::linear::{ConvPlan, FcPlan, Layer, evaluate, hold};
use veil_he::matmul::MatPlan;
use veil_he::ole::Ole;
use veil_he::{Bfv, BfvPreset};
use veil_mpc::harness::{all_ok, simulate};

fn shares(rng: &mut ChaCha20Rng, x: &[u64], t: u64) -> (Vec<u64>, Vec<u64>) {
    let x0: Vec<u64> = x.iter().map(|_| rng.random_range(0..t)).collect();
    let x1 = x.iter().zip(&x0).map(|(&v, &r)| (v + t - r) % t).collect();
    (x0, x1)
}

fn run(layer: &(dyn Layer + Sync), w: &[u64], x: &[u64], preset: BfvPreset, seed: u64) {
    let t = Bfv::new(preset).unwrap().plaintext_modulus();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let (x0, x1) = shares(&mut rng, x, t);
    let out = all_ok(simulate(2, seed, |ctx| {
        let me = ctx.party();
        let ole = Ole::setup(ctx, 1 - me, preset)?;
        if me == 0 { evaluate(&ole, ctx, layer, w, &x0) } else { hold(&ole, ctx, layer, &x1) }
    }))
    .unwrap();
    let got: Vec<u64> = out[0].iter().zip(&out[1]).map(|(a, b)| (a + b) % t).collect();
    assert!(got == layer.apply(w, x, t), "shares of the layer's output");
}

#[test]
fn fully_connected_layers_in_blocks() {
    let preset = BfvPreset::N4096P16;
    let t = Bfv::new(preset).unwrap().plaintext_modulus();
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    // 300 inputs, 100 outputs: 13 outputs per polynomial, 8 answers.
    let plan = FcPlan::new(100, 300, 4096).unwrap();
    assert_eq!((plan.in_block, plan.out_block, plan.input_polys(), plan.output_polys()), (300, 13, 1, 8));
    let w: Vec<u64> = (0..100 * 300).map(|_| rng.random_range(0..t)).collect();
    let x: Vec<u64> = (0..300).map(|_| rng.random_range(0..t)).collect();
    run(&plan, &w, &x, preset, 11);
    // 5000 inputs: two input blocks summed in every answer.
    let plan = FcPlan::new(3, 5000, 4096).unwrap();
    assert_eq!((plan.input_polys(), plan.output_polys(), plan.terms()), (2, 3, 2));
    let w: Vec<u64> = (0..3 * 5000).map(|_| rng.random_range(0..t)).collect();
    let x: Vec<u64> = (0..5000).map(|_| rng.random_range(0..t)).collect();
    run(&plan, &w, &x, preset, 12);
}

#[test]
fn convolutions_in_channel_groups_and_row_tiles() {
    let preset = BfvPreset::N4096P16;
    let t = Bfv::new(preset).unwrap().plaintext_modulus();
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    // 20 channels of 16×16 in groups of 16, 3×3 kernels.
    let plan = ConvPlan::new(20, 16, 16, 4, 3, 4096).unwrap();
    assert_eq!((plan.group, plan.tiles.len(), plan.input_polys(), plan.output_polys()), (16, 1, 2, 4));
    let k: Vec<u64> = (0..4 * 20 * 9).map(|_| rng.random_range(0..t)).collect();
    let x: Vec<u64> = (0..20 * 256).map(|_| rng.random_range(0..t)).collect();
    run(&plan, &k, &x, preset, 21);
    // An 80×80 image: one channel per polynomial, tiles of 51 rows overlapping by 2.
    let plan = ConvPlan::new(2, 80, 80, 2, 3, 4096).unwrap();
    assert_eq!((plan.group, plan.tile_rows, plan.tiles.clone()), (1, 51, vec![0, 49]));
    let k: Vec<u64> = (0..2 * 2 * 9).map(|_| rng.random_range(0..t)).collect();
    let x: Vec<u64> = (0..2 * 6400).map(|_| rng.random_range(0..t)).collect();
    run(&plan, &k, &x, preset, 22);
}

#[test]
fn bad_shapes_are_refused() {
    assert!(FcPlan::new(0, 3, 4096).is_err());
    assert!(ConvPlan::new(1, 4, 4, 1, 5, 4096).unwrap_err().to_string().contains("5×5 convolution"));
    assert!(ConvPlan::new(1, 4, 5000, 1, 3, 4096).unwrap_err().to_string().contains("exceed the degree"));
    let plan = FcPlan::new(2, 3, 4096).unwrap();
    assert!(plan.encode_input(&[1, 2]).unwrap_err().to_string().contains("2 inputs for a layer of 3"));
    assert!(plan.encode_weights(&[1; 5]).unwrap_err().to_string().contains("5 weights"));
}

#[test]
fn matrix_products_batch_rows_in_blocks() {
    let preset = BfvPreset::N4096P16;
    let t = Bfv::new(preset).unwrap().plaintext_modulus();
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    // Shapes whose blocks cut every dimension unevenly, one row, and a long inner axis.
    for (rows, inner, cols) in [(7, 30, 5), (20, 100, 70), (1, 9, 3), (3, 5000, 2), (65, 64, 65)] {
        let plan = MatPlan::new(rows, inner, cols, 4096).unwrap();
        let (nb, kb, mb) = plan.blocks;
        assert!(nb * kb * mb <= 4096, "{:?}", plan.blocks);
        let w: Vec<u64> = (0..inner * cols).map(|_| rng.random_range(0..t)).collect();
        let x: Vec<u64> = (0..rows * inner).map(|_| rng.random_range(0..t)).collect();
        run(&plan, &w, &x, preset, rows as u64);
    }
    assert!(MatPlan::new(0, 3, 3, 4096).is_err());
}

/// A transformer-shaped product at the `mm` preset: the plan packs its answers (the read
/// coefficients share a residue mod `k_b`), the shares still add up to `X·W`, and the evaluator
/// sends exactly one dense answer per `s` answers; the unpacked plan of the same product sends
/// its sparse answers, several times the bytes.
#[test]
fn packed_answers_of_a_transformer_product() {
    use veil_he::flood::{plan, plan_packed};
    use veil_he::wire::{self, Form};
    let preset = BfvPreset::N8192P60;
    let bfv = Bfv::new(preset).unwrap();
    let t = bfv.plaintext_modulus();
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    let plan_ = MatPlan::for_scheme(32, 256, 64, &bfv).unwrap();
    let (_, kb, _) = plan_.blocks;
    assert!(kb >= 8, "the plan fills its queries: {:?}", plan_.blocks);
    let w: Vec<u64> = (0..256 * 64).map(|_| rng.random_range(0..t)).collect();
    let x: Vec<u64> = (0..32 * 256).map(|_| rng.random_range(0..t)).collect();
    let (x0, x1) = shares(&mut rng, &x, t);
    let used = plan_.used_coefficients(bfv.slots());
    let out = all_ok(simulate(2, 5, |ctx| {
        let me = ctx.party();
        let ole = Ole::setup(ctx, 1 - me, preset)?;
        let packing = ole.packing(&used, plan_.terms(), plan_.output_polys());
        let before = ctx.stats().total();
        let share =
            if me == 0 { evaluate(&ole, ctx, &plan_, &w, &x0)? } else { hold(&ole, ctx, &plan_, &x1)? };
        Ok((share, packing, ctx.stats().total().since(&before).bytes_sent))
    }))
    .unwrap();
    let got: Vec<u64> = out[0].0.iter().zip(&out[1].0).map(|(a, b)| (a + b) % t).collect();
    assert!(got == plan_.apply(&w, &x, t), "shares of X·W");
    let packing = out[0].1.expect("the answers are packed");
    assert_eq!(out[1].1, Some(packing), "both ends pack alike");
    assert_eq!(packing.offset, (kb - 1) % packing.stride);
    let groups = plan_.output_polys().div_ceil(packing.stride);
    let packed = plan_packed(&bfv, plan_.terms(), packing.stride).unwrap();
    let (k0, k1) = packed.dropped_bits.unwrap();
    let answer = wire::ciphertext_bytes(&bfv, packed.response_level, Form::Compressed(k0, k1)).unwrap();
    assert_eq!(out[0].2 as usize, groups * answer, "one dense answer per group");
    let sparse = plan(&bfv, plan_.terms()).unwrap();
    let (k0, k1) = sparse.dropped_bits.unwrap();
    let one = wire::ciphertext_bytes(&bfv, sparse.response_level, Form::Sparse(k0, k1, &used)).unwrap();
    assert!(plan_.output_polys() * one > 4 * groups * answer, "packing saves most answer bytes");
}

/// A GBDT histogram's shape (a long inner axis): the planner passes over blocks whose answers
/// would sum too many terms to flood, and its plan floods.
#[test]
fn plans_for_long_inner_axes_stay_floodable() {
    let bfv = Bfv::new(BfvPreset::N8192P60).unwrap();
    let plan = MatPlan::for_scheme(2, 100_000, 32, &bfv).unwrap();
    assert!(veil_he::flood::plan(&bfv, plan.terms()).is_ok(), "{:?}", plan.blocks);
}
