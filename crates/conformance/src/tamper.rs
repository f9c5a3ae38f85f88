//! A tampering hook: one party's transport flips a bit in one frame it sends, so a test can
//! check that a malicious-secure family notices (an abort or a malformed-message error at some
//! honest party) and never hands out a wrong value.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use veil_mpc::harness::{SimConfig, derived_secrets};
use veil_mpc::runner::run_party;
use veil_mpc::{Ctx, PartyId, Result};
use veil_net::mesh::mem_mesh;
use veil_net::{Frame, NetError, Transport};

/// Which frame to alter: the `frame`-th (from 0) that `party` sends, counting every frame of
/// the session (the seed coin toss included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tamper {
    /// The cheating party.
    pub party: PartyId,
    /// The index of the frame it alters.
    pub frame: usize,
}

struct Tampering {
    inner: Box<dyn Transport>,
    sent: usize,
    target: Option<usize>,
    altered: Arc<AtomicBool>,
}

impl Transport for Tampering {
    fn party(&self) -> PartyId {
        self.inner.party()
    }

    fn parties(&self) -> usize {
        self.inner.parties()
    }

    fn max_frame(&self) -> usize {
        self.inner.max_frame()
    }

    fn send(&mut self, to: PartyId, mut frame: Frame) -> std::result::Result<(), NetError> {
        if self.target == Some(self.sent) && !frame.payload.is_empty() {
            let middle = frame.payload.len() / 2;
            frame.payload[middle] ^= 1;
            self.altered.store(true, Ordering::SeqCst);
        }
        self.sent += 1;
        self.inner.send(to, frame)
    }

    fn recv(&mut self, from: PartyId, timeout: Duration) -> std::result::Result<Frame, NetError> {
        self.inner.recv(from, timeout)
    }
}

/// Runs `f` for `n` parties over an in-memory mesh, with `tamper` applied; returns the
/// results in party order and whether a frame was actually altered (a frame index past the
/// party's last frame, or an empty frame, alters nothing).
pub fn simulate_tampered<T, F>(
    n: usize,
    cfg: SimConfig,
    tamper: Option<Tamper>,
    f: F,
) -> (Vec<Result<T>>, bool)
where
    T: Send,
    F: Fn(&mut Ctx) -> Result<T> + Sync,
{
    let altered = Arc::new(AtomicBool::new(false));
    let transports: Vec<Box<dyn Transport>> = mem_mesh(n)
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            let target = tamper.filter(|t| t.party == i).map(|t| t.frame);
            Box::new(Tampering { inner: Box::new(t), sent: 0, target, altered: altered.clone() })
                as Box<dyn Transport>
        })
        .collect();
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = transports
            .into_iter()
            .enumerate()
            .map(|(i, t)| {
                let f = &f;
                s.spawn(move || {
                    let (session, private) = derived_secrets(cfg.seed, i);
                    run_party(t, session, private, cfg.timeout, f)
                })
            })
            .collect();
        handles
            .into_iter()
            .enumerate()
            .map(|(i, h)| {
                h.join().unwrap_or_else(|_| {
                    Err(veil_mpc::MpcError::Panicked { party: i, message: "a party panicked".into() })
                })
            })
            .collect()
    });
    (results, altered.load(Ordering::SeqCst))
}
