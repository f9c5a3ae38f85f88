//! OT as a preprocessing source: a plan's COTs made ahead leave nothing to make on demand;
//! without them the calls make their own; three parties set up pairwise without a deadlock.

mod common;

use common::{split, values};
use veil_mpc::harness::{all_ok, simulate};
use veil_mpc::prep::{Call, CorrelationRequest, Plan, Preprocessing, Supply};
use veil_twopc::prep::OtSource;
use veil_twopc::{Engine, nonlinear};

#[test]
fn a_plan_made_ahead_covers_the_calls_and_on_demand_fills_in_otherwise() {
    let (n, bits) = (300usize, 32u32);
    let x = values(n, bits, 1);
    let xs = split(&x, bits, 2);
    for ahead in [true, false] {
        let out = all_ok(simulate(2, 3, |ctx| {
            let mut src = OtSource::setup(ctx, Engine::FerretInsecureSmall, bits)?;
            assert!(src.supplies().contains(&Supply::Ahead));
            let calls = [Call::Relu { n }, Call::MaxRows { rows: 10, k: 30 }];
            let plan = Plan::of(&src, &calls);
            if ahead {
                // Far more than the small engines keep after setup.
                src.produce(ctx, &plan)?;
            }
            let before = src.made_on_demand();
            let p = ctx.party();
            let tp = src.pair(1 - p)?;
            nonlinear::relu(tp, ctx, &xs[p], bits)?;
            nonlinear::max_rows(tp, ctx, &xs[p], 10, 30, bits)?;
            Ok((plan.totals().get("cots"), src.made_on_demand() - before, src.usage().get("cots")))
        }))
        .expect("honest run");
        for (planned, on_demand, used) in out {
            assert!(planned > 0);
            assert!(used > 0);
            if ahead {
                assert_eq!(on_demand, 0, "the plan covered every call");
            } else {
                assert!(on_demand > 0, "without a plan the calls make their COTs");
            }
        }
    }
}

#[test]
fn three_parties_make_pairwise_cots_from_one_plan() {
    let out = all_ok(simulate(3, 4, |ctx| {
        let mut src = OtSource::setup(ctx, Engine::Iknp, 64)?;
        let plan = Plan {
            requests: vec![
                CorrelationRequest::Cots { sender: 0, receiver: 1, count: 1000 },
                CorrelationRequest::Cots { sender: 2, receiver: 0, count: 500 },
                CorrelationRequest::Cots { sender: 1, receiver: 2, count: 700 },
            ],
        };
        src.produce(ctx, &plan)?;
        let me = ctx.party();
        let mut prepared = Vec::new();
        for peer in (0..3).filter(|&p| p != me) {
            let tp = src.pair(peer)?;
            prepared.push((peer, tp.sender().prepared(), tp.receiver().prepared()));
        }
        Ok(prepared)
    }))
    .expect("honest run");
    // Party 0 sends 1000 to 1 and receives 500 from 2.
    assert!(out[0].iter().any(|&(p, s, _)| p == 1 && s >= 1000));
    assert!(out[0].iter().any(|&(p, _, r)| p == 2 && r >= 500));
    assert!(out[1].iter().any(|&(p, s, _)| p == 2 && s >= 700));
    let bad = all_ok(simulate(2, 5, |ctx| {
        let mut src = OtSource::setup(ctx, Engine::Iknp, 64)?;
        let plan = Plan { requests: vec![CorrelationRequest::TruncPairs { count: 3 }] };
        src.produce(ctx, &plan)
    }));
    assert!(bad.is_err_and(|e| e.to_string().contains("no trunc_pairs material")));
}
