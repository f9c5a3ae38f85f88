//! Running all parties of a session in one process, for tests, benchmarks and demos (one
//! party's life in a deployment is [`crate::runner`]'s).
//!
//! [`simulate`] links the parties by an in-memory mesh; [`simulate_tcp`] by real TCP with
//! mutual TLS on 127.0.0.1, with a fresh CA and party certificates. Each party runs on its own
//! thread. When a party returns an error or panics, its context (and so its transport) is
//! dropped, so every peer waiting on it gets a disconnect error at once: a test never hangs on
//! a failed party. Receives also time out (`SimConfig::timeout`).

use std::net::TcpListener;
use std::time::Duration;

use veil_crypto::{Seed, SessionId, hash};
use veil_net::Transport;
use veil_net::certs::Deployment;
use veil_net::mesh::mem_mesh;
use veil_net::tcp::{TcpConfig, TcpTransport};

use crate::runner::panicked;
pub use crate::runner::run_party;
use crate::{Ctx, MpcError, PartyId, Result};

/// Settings of a simulated session.
#[derive(Clone, Copy, Debug)]
pub struct SimConfig {
    /// Seed from which every party's randomness and the session id are derived.
    pub seed: u64,
    /// How long a receive waits before failing.
    pub timeout: Duration,
}

impl SimConfig {
    /// A 20 s receive timeout.
    pub fn new(seed: u64) -> Self {
        SimConfig { seed, timeout: Duration::from_secs(20) }
    }
}

/// The session id and the private seed of `party`, derived from a test seed (deterministic runs).
pub fn derived_secrets(seed: u64, party: PartyId) -> (SessionId, Seed) {
    let s = hash("veil/sim/session", &seed.to_le_bytes());
    let mut session = [0u8; 16];
    session.copy_from_slice(&s.0[..16]);
    let mut input = seed.to_le_bytes().to_vec();
    input.extend_from_slice(&(party as u64).to_le_bytes());
    let p = hash("veil/sim/party", &input);
    let mut private = [0u8; 16];
    private.copy_from_slice(&p.0[..16]);
    (SessionId(session), Seed(private))
}

/// Runs `f` for each of `n` parties over an in-memory mesh; results in party order.
pub fn simulate<T, F>(n: usize, seed: u64, f: F) -> Vec<Result<T>>
where
    T: Send,
    F: Fn(&mut Ctx) -> Result<T> + Sync,
{
    simulate_with(n, SimConfig::new(seed), f)
}

/// [`simulate`] with explicit settings.
pub fn simulate_with<T, F>(n: usize, cfg: SimConfig, f: F) -> Vec<Result<T>>
where
    T: Send,
    F: Fn(&mut Ctx) -> Result<T> + Sync,
{
    let transports: Vec<Box<dyn Transport>> =
        mem_mesh(n).into_iter().map(|t| Box::new(t) as Box<dyn Transport>).collect();
    run_parties(transports.into_iter().map(Ok).collect(), cfg, &f)
}

/// Runs `f` for each of `n` parties over TCP + mutual TLS on 127.0.0.1.
pub fn simulate_tcp<T, F>(n: usize, seed: u64, f: F) -> Vec<Result<T>>
where
    T: Send,
    F: Fn(&mut Ctx) -> Result<T> + Sync,
{
    simulate_tcp_with(n, SimConfig::new(seed), f)
}

/// [`simulate_tcp`] with a chosen configuration.
pub fn simulate_tcp_with<T, F>(n: usize, cfg: SimConfig, f: F) -> Vec<Result<T>>
where
    T: Send,
    F: Fn(&mut Ctx) -> Result<T> + Sync,
{
    let setup = || -> Result<(Deployment, Vec<TcpListener>)> {
        let d = Deployment::generate("simulation", n)?;
        let ls = (0..n)
            .map(|_| TcpListener::bind("127.0.0.1:0"))
            .collect::<std::io::Result<Vec<_>>>()
            .map_err(|e| MpcError::Invalid(format!("cannot listen on 127.0.0.1: {e}")))?;
        Ok((d, ls))
    };
    let (deployment, listeners) = match setup() {
        Ok(x) => x,
        Err(e) => {
            let msg = e.to_string();
            return (0..n).map(|_| Err(MpcError::Invalid(msg.clone()))).collect();
        }
    };
    let addrs: Vec<_> = listeners.iter().filter_map(|l| l.local_addr().ok()).collect();
    let (session, _) = derived_secrets(cfg.seed, 0);
    let transports: Vec<Result<Box<dyn Transport>>> = std::thread::scope(|s| {
        let handles: Vec<_> = listeners
            .into_iter()
            .enumerate()
            .map(|(i, l)| {
                let (addrs, deployment) = (addrs.clone(), &deployment);
                s.spawn(move || -> Result<Box<dyn Transport>> {
                    let mut tcfg = TcpConfig::new(i, addrs, session.0, deployment.identity(i)?);
                    tcfg.connect_timeout = Duration::from_secs(10);
                    Ok(Box::new(TcpTransport::connect_with_listener(&tcfg, l)?))
                })
            })
            .collect();
        handles
            .into_iter()
            .enumerate()
            .map(|(i, h)| h.join().unwrap_or_else(|p| Err(panicked(i, p))))
            .collect()
    });
    run_parties(transports, cfg, &f)
}

fn run_parties<T, F>(transports: Vec<Result<Box<dyn Transport>>>, cfg: SimConfig, f: &F) -> Vec<Result<T>>
where
    T: Send,
    F: Fn(&mut Ctx) -> Result<T> + Sync,
{
    std::thread::scope(|s| {
        let handles: Vec<_> = transports
            .into_iter()
            .enumerate()
            .map(|(i, t)| {
                s.spawn(move || {
                    let (session, private) = derived_secrets(cfg.seed, i);
                    run_party(t?, session, private, cfg.timeout, f)
                })
            })
            .collect();
        handles
            .into_iter()
            .enumerate()
            .map(|(i, h)| h.join().unwrap_or_else(|p| Err(panicked(i, p))))
            .collect()
    })
}

/// Every party's output of one session, or the error that explains its failure, naming the
/// party it came from ([`MpcError::AtParty`]): the first error that is not a knock-on effect
/// of another party's failure ([`MpcError::is_knock_on`]: "party 1 disconnected" says less
/// than party 1's own "server-1.material is damaged"); failing that, a peer's stated reason
/// for stopping; failing that, the first error.
///
/// # Errors
/// The root cause, as above.
pub fn root_cause<T>(results: Vec<Result<T>>) -> Result<Vec<T>> {
    let failed = |e: &MpcError| !e.is_knock_on();
    let stated = |e: &MpcError| matches!(e, MpcError::Net(veil_net::NetError::PeerStopped { .. }));
    let pick = results
        .iter()
        .position(|r| r.as_ref().err().is_some_and(failed))
        .or_else(|| results.iter().position(|r| r.as_ref().err().is_some_and(stated)))
        .or_else(|| results.iter().position(Result::is_err));
    match pick {
        None => results.into_iter().collect(),
        Some(party) => match results.into_iter().nth(party) {
            Some(Err(e)) => Err(MpcError::AtParty { party, source: Box::new(e) }),
            _ => Err(MpcError::Invalid("a failed session lost its error".into())),
        },
    }
}

/// All results, or the first error (in party order).
pub fn all_ok<T>(results: Vec<Result<T>>) -> Result<Vec<T>> {
    results.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_cause_is_the_first_own_error_and_names_its_party() {
        use veil_net::NetError;
        let gone = |peer| Err(MpcError::Net(NetError::Disconnected { peer }));
        let results: Vec<Result<u8>> =
            vec![gone(1), Err(MpcError::Invalid("server-1.material is damaged".into())), gone(1)];
        let err = root_cause(results).unwrap_err();
        assert!(matches!(&err, MpcError::AtParty { party: 1, .. }), "{err}");
        assert_eq!(err.to_string(), "party 1: invalid use: server-1.material is damaged");
        let stopped = Err(MpcError::Net(NetError::PeerStopped { peer: 2, reason: "abort".into() }));
        let err = root_cause(vec![gone(2), stopped, Ok(1u8)]).unwrap_err();
        assert!(err.to_string().starts_with("party 1: party 2 stopped the session: abort"), "{err}");
        assert_eq!(root_cause(vec![Ok(1u8), Ok(2)]).unwrap(), vec![1, 2]);
    }
}
