//! The family through `veil-mpc`'s capability traits, in both modes, with declared costs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::offline::Offline;
use veil_mosformer::{Mosformer, Security};
use veil_mpc::cost::rounds_across;
use veil_mpc::harness::{all_ok, simulate};
use veil_mpc::traits::{Linear, Multiply, Sharing};
use veil_ring::{Ring, Z32};
use veil_tensor::Tensor;

/// Generic code written against the traits only, as the model runtime will be.
fn square_plus_one<P: Sharing<Z32> + Linear<Z32> + Multiply<Z32>>(
    p: &mut P,
    ctx: &mut veil_mpc::Ctx,
    x: &Tensor<Z32>,
) -> veil_mpc::Result<(Tensor<Z32>, bool, (u64, u64))> {
    let me = ctx.party();
    let s = p.share_input(ctx, 2, (me == 2).then_some(x), x.shape())?;
    let (before, t0) = (ctx.stats().current(), ctx.stats().time());
    let sq = p.mul(ctx, &s, &s)?;
    let spent = ctx.stats().current().since(&before);
    let span = (t0, ctx.stats().time());
    let declared = p.mul_cost(x.len(), 3);
    let ok = declared.bytes_sent == spent.bytes_sent && declared.messages_sent == spent.messages_sent;
    let ones = Tensor::new(x.shape().to_vec(), vec![Z32::ONE; x.len()])?;
    let y = p.add_public(ctx, &sq, &ones)?;
    Ok((p.reveal_all(ctx, &y)?, ok, span))
}

#[test]
fn both_modes_through_the_traits() {
    let x = Tensor::new(vec![5], vec![Z32(0), Z32(3), Z32(u32::MAX), Z32(1 << 31), Z32(12345)]).unwrap();
    let want: Vec<Z32> = x.data().iter().map(|&v| v * v + Z32::ONE).collect();
    for (security, rounds) in [(Security::Malicious, 2), (Security::SemiHonest, 1)] {
        let out = all_ok(simulate(3, 1, |ctx| {
            let mut p = Mosformer::new(security, Offline::new());
            if security == Security::Malicious {
                p.source_mut().produce_mul::<Z32>(ctx, x.len())?;
            }
            square_plus_one(&mut p, ctx, &x)
        }))
        .unwrap();
        let spans: Vec<_> = out.iter().map(|o| o.2).collect();
        assert_eq!(rounds_across(&spans), rounds, "{security:?}");
        for (y, cost_ok, _) in out {
            assert_eq!(y.data(), want.as_slice());
            assert!(cost_ok, "{security:?}: measured cost differs from the declared cost");
        }
    }
}
