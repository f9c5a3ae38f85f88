//! One party's run: join the deployment over TCP + mutual TLS, run the job
//! ([`veil_runtime::demo_mul`]), report.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use veil_crypto::{Seed, SessionId};
use veil_net::certs::Identity;
use veil_net::tcp::{TcpConfig, TcpTransport};
use veil_runtime::{PartyReport, demo_mul, phases};

use crate::config::{Config, Job};

/// `veil party`: loads the config, reads this party's input if it has one, runs, prints.
pub fn run_party_from_config(
    config: &Path,
    id: usize,
    input: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<()> {
    let cfg = Config::load(config)?;
    let Some(me) = cfg.party.get(id) else {
        bail!("party {id} is not in the config ({} parties)", cfg.party.len());
    };
    let values: Option<Vec<f64>> = match &input {
        Some(p) => {
            let text = std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
            Some(
                serde_json::from_str(&text)
                    .with_context(|| format!("{} must hold a JSON array of numbers", p.display()))?,
            )
        }
        None => None,
    };
    let identity = Identity::from_files(&cfg.ca, &me.cert, &me.key)?;
    let addrs = cfg.party.iter().map(|p| p.address).collect();
    let mut tcp = TcpConfig::new(id, addrs, cfg.session_id()?, identity);
    tcp.connect_timeout = Duration::from_secs(cfg.connect_timeout_s);
    let report = run(&cfg, tcp, values)?;
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", crate::report::table(std::slice::from_ref(&report)));
        if let Some(out) = &report.output {
            println!("result: {out:?}");
        }
    }
    Ok(())
}

fn run(cfg: &Config, tcp: TcpConfig, input: Option<Vec<f64>>) -> anyhow::Result<PartyReport> {
    let id = tcp.party;
    let Job::DemoMul { length, output } = cfg.job.clone();
    let owns_input = id == 0 || id == 1;
    match (&input, owns_input) {
        (None, true) => bail!("party {id} owns an input: pass it with --input FILE"),
        (Some(_), false) => bail!("party {id} has no input in this job; do not pass --input"),
        (Some(v), true) if v.len() != length => {
            bail!("the input has {} values, the job declares {length}", v.len())
        }
        _ => {}
    }
    let t0 = Instant::now();
    let transport =
        TcpTransport::connect(&tcp).with_context(|| format!("party {id} could not join the deployment"))?;
    let private = Seed::from_rng(&mut rand::rngs::OsRng);
    let session = SessionId(tcp.session);
    let timeout = Duration::from_secs(cfg.recv_timeout_s);
    let result = veil_mpc::harness::run_party(Box::new(transport), session, private, timeout, |ctx| {
        let setup_s = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        ctx.set_phase("online");
        let out = demo_mul(ctx, input.as_deref(), length, output)?;
        let online_s = t1.elapsed().as_secs_f64();
        Ok(PartyReport {
            party: id,
            output: out,
            phases: phases(ctx.stats(), &[("setup", setup_s), ("online", online_s)]),
        })
    })?;
    Ok(result)
}
