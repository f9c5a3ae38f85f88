//! The corrupted frame of a party started with [`FAULT_ENV`] (see the module above).

use std::time::{Duration, Instant};

use anyhow::Context;
use veil_net::{Frame, NetError, PartyId, Transport};

/// A party started with this variable set to `N` corrupts the `N`-th frame it sends.
pub const FAULT_ENV: &str = "VEIL_FAULT_CORRUPT_FRAME";
/// `transport`, or a transport that corrupts one frame when [`FAULT_ENV`] asks for it.
pub fn faulty(transport: Box<dyn Transport>) -> anyhow::Result<Box<dyn Transport>> {
    let Ok(value) = std::env::var(FAULT_ENV) else { return Ok(transport) };
    let frame =
        value.parse().with_context(|| format!("{FAULT_ENV} must be a frame number, not {value:?}"))?;
    Ok(Box::new(Corrupting { inner: transport, sent: 0, frame }))
}

struct Corrupting {
    inner: Box<dyn Transport>,
    sent: usize,
    frame: usize,
}

impl Transport for Corrupting {
    fn party(&self) -> PartyId {
        self.inner.party()
    }
    fn parties(&self) -> usize {
        self.inner.parties()
    }
    fn max_frame(&self) -> usize {
        self.inner.max_frame()
    }
    fn send(&mut self, to: PartyId, mut frame: Frame) -> Result<(), NetError> {
        if self.sent == self.frame && !frame.payload.is_empty() {
            let n = frame.payload.len();
            for k in [0, n / 2, n - 1] {
                frame.payload[k] ^= 0x5a;
            }
            eprintln!("fault injected: frame {} to party {to} corrupted", self.sent);
        }
        self.sent += 1;
        self.inner.send(to, frame)
    }
    fn recv(&mut self, from: PartyId, timeout: Duration) -> Result<Frame, NetError> {
        self.inner.recv(from, timeout)
    }
    fn last_heard(&self, from: PartyId) -> Option<Instant> {
        self.inner.last_heard(from)
    }
}
