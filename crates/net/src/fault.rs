//! Fault injection, for tamper tests and the fault-injection soak: a transport that alters one
//! frame it sends. It only makes its own party misbehave, as a corrupted party may.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::{Frame, NetError, PartyId, Transport};

/// Changes a frame's payload in place.
pub type Alter = Arc<dyn Fn(&mut Vec<u8>) + Send + Sync>;

/// Wraps a transport; the `target`-th frame it sends (counting every frame from 0, the seed
/// setup included), if not empty, goes out changed by `alter`.
pub struct AlterFrame {
    inner: Box<dyn Transport>,
    sent: usize,
    target: Option<usize>,
    alter: Alter,
    altered: Arc<AtomicBool>,
}

impl AlterFrame {
    /// `inner` altering its `target`-th frame; `altered` is set once a frame was changed.
    pub fn new(
        inner: Box<dyn Transport>,
        target: Option<usize>,
        alter: Alter,
        altered: Arc<AtomicBool>,
    ) -> Self {
        AlterFrame { inner, sent: 0, target, alter, altered }
    }
}

impl Transport for AlterFrame {
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
        if self.target == Some(self.sent) && !frame.payload.is_empty() {
            let before = frame.payload.clone();
            (self.alter)(&mut frame.payload);
            if frame.payload != before {
                self.altered.store(true, Ordering::SeqCst);
            }
        }
        self.sent += 1;
        self.inner.send(to, frame)
    }

    fn recv(&mut self, from: PartyId, timeout: Duration) -> Result<Frame, NetError> {
        self.inner.recv(from, timeout)
    }

    fn recv_at_most(&mut self, from: PartyId, timeout: Duration, limit: usize) -> Result<Frame, NetError> {
        self.inner.recv_at_most(from, timeout, limit)
    }

    fn last_heard(&self, from: PartyId) -> Option<Instant> {
        self.inner.last_heard(from)
    }
}
