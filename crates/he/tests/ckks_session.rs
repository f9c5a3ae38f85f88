//! CKKS between two parties over the in-memory mesh: the key holder's keys in one checked
//! setup message (its bytes counted in their own phase), a matrix product on the evaluator's
//! side, the result back; and keys or ciphertexts that are not what they claim.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use veil_he::ckks::linalg::{MatmulPlan, matmul_streaming, pack, unpack};
use veil_he::ckks::session::{Evaluator, KeyHolder};
use veil_he::ckks::{Ckks, CkksPreset, wire};
use veil_mpc::MpcError;
use veil_mpc::harness::{all_ok, simulate};

#[test]
fn a_matrix_product_between_key_holder_and_evaluator() {
    let preset = CkksPreset::N8192;
    let slots = Ckks::new(preset).unwrap().slots();
    let (rows, inner, cols) = (64, 80, 40);
    let plan = MatmulPlan::new(rows, inner, cols, slots).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let x: Vec<f64> = (0..rows * inner).map(|_| rng.random_range(-1.0..1.0)).collect();
    let w: Vec<f64> = (0..inner * cols).map(|_| rng.random_range(-0.1..0.1)).collect();
    let out = all_ok(simulate(2, 3, |ctx| {
        ctx.set_phase("he keys");
        if ctx.party() == 0 {
            let kh = KeyHolder::setup(ctx, 1, preset, &plan.rotations(), false)?;
            let keys = ctx.stats().get("he keys").bytes_sent;
            ctx.set_phase("online");
            let scale = kh.ckks().default_scale();
            kh.encrypt_and_send(ctx, &pack(&plan, &x)?, scale, kh.ckks().top_level())?;
            let back = kh.receive_and_decrypt(ctx, plan.outputs())?;
            let slots: Vec<Vec<f64>> = back.iter().map(|v| v.iter().map(|z| z.re).collect()).collect();
            Ok((unpack(&plan, &slots)?, keys))
        } else {
            let ev = Evaluator::setup(ctx, 0, preset)?;
            ctx.set_phase("online");
            let ckks = ev.ckks();
            let cts = ev.receive(ctx, plan.inputs())?;
            let scale = ckks.ring().modulus(ckks.top_level()) as f64;
            let prod = matmul_streaming(ckks, &plan, &cts, &w, scale, &ev.gk)?;
            let out = prod.iter().map(|c| ckks.rescale(c)).collect::<veil_mpc::Result<Vec<_>>>()?;
            ev.send(ctx, &out)?;
            Ok((Vec::new(), 0))
        }
    }))
    .unwrap();
    let (got, keys) = &out[0];
    let ckks = Ckks::new(preset).unwrap();
    let (_, pk, ksk) = ckks.sizes();
    // Three length prefixes, the public key, the relinearisation key, the Galois keys (a
    // count, then an element and a digit count per key).
    let galois = plan.rotations().len();
    assert_eq!(*keys as usize, 24 + pk + (1 + ksk) + 2 + galois * (4 + 1 + ksk));
    for l in 0..rows {
        for j in 0..cols {
            let want: f64 = (0..inner).map(|d| x[l * inner + d] * w[d * cols + j]).sum();
            assert!((got[l * cols + j] - want).abs() < 1e-5, "({l}, {j})");
        }
    }
}

#[test]
fn keys_and_ciphertexts_that_are_not_what_they_claim_are_refused() {
    let preset = CkksPreset::N8192;
    let results = simulate(2, 4, |ctx| -> veil_mpc::Result<()> {
        if ctx.party() == 0 {
            // A section length past the message.
            let mut msg = (1u64 << 40).to_le_bytes().to_vec();
            msg.extend_from_slice(&[0; 16]);
            ctx.net().send(1, msg)?;
            Ok(())
        } else {
            Evaluator::setup(ctx, 0, preset).map(|_| ())
        }
    });
    match &results[1] {
        Err(MpcError::Malformed { from: 0, what }) => {
            assert!(what.contains("public key: a section longer"), "{what}")
        }
        other => panic!("expected a malformed-message error, got {other:?}"),
    }
    let ckks = Ckks::new(preset).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let (_, pk) = ckks.keygen(&mut rng).unwrap();
    let ct = ckks.encrypt(&pk, &ckks.encode(&[1.0], ckks.default_scale(), 1).unwrap(), &mut rng).unwrap();
    let two = [wire::encode_ciphertext(&ckks, &ct), wire::encode_ciphertext(&ckks, &ct)].concat();
    assert_eq!(wire::decode_ciphertexts(&ckks, 0, &two, 2).unwrap().len(), 2);
    assert!(
        wire::decode_ciphertexts(&ckks, 0, &two, 3)
            .unwrap_err()
            .to_string()
            .contains("ciphertext 2 of 3 is missing")
    );
    assert!(
        wire::decode_ciphertexts(&ckks, 0, &two, 1)
            .unwrap_err()
            .to_string()
            .contains("bytes after 1 ciphertexts")
    );
    assert!(
        wire::decode_ciphertexts(&ckks, 0, &two[..two.len() - 3], 2)
            .unwrap_err()
            .to_string()
            .contains("cut short")
    );
    let pt = ckks.encode(&[0.5, -0.25], ckks.default_scale(), 0).unwrap();
    let bytes = wire::encode_plaintext(&ckks, &pt);
    assert!(wire::decode_plaintext(&ckks, 0, &bytes).unwrap() == pt);
    assert!(
        wire::decode_plaintext(&ckks, 0, &bytes[..bytes.len() - 1])
            .unwrap_err()
            .to_string()
            .contains("bytes, got")
    );
}
