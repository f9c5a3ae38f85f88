//! In-memory mesh: every party of a session in one process, linked by unbounded channels.
//!
//! Used by tests and by `simulate`. Sending never blocks; dropping a party's transport drops
//! its channel ends, so a peer waiting on it gets [`NetError::Disconnected`] at once.

use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, unbounded};

use crate::transport::check_peer;
use crate::{DEFAULT_MAX_FRAME, Frame, NetError, PartyId, Transport};

/// One party's end of an in-memory mesh.
pub struct MemTransport {
    me: PartyId,
    to: Vec<Option<Sender<Frame>>>,
    from: Vec<Option<Receiver<Frame>>>,
    max_frame: usize,
}

/// Creates the transports of an `n`-party mesh, index = party id.
pub fn mem_mesh(n: usize) -> Vec<MemTransport> {
    mem_mesh_with_limit(n, DEFAULT_MAX_FRAME)
}

/// Like [`mem_mesh`] with a frame size limit.
pub fn mem_mesh_with_limit(n: usize, max_frame: usize) -> Vec<MemTransport> {
    let mut parties: Vec<MemTransport> = (0..n)
        .map(|me| MemTransport {
            me,
            to: (0..n).map(|_| None).collect(),
            from: (0..n).map(|_| None).collect(),
            max_frame,
        })
        .collect();
    for a in 0..n {
        for b in 0..n {
            if a != b {
                let (tx, rx) = unbounded();
                parties[a].to[b] = Some(tx);
                parties[b].from[a] = Some(rx);
            }
        }
    }
    parties
}

impl Transport for MemTransport {
    fn party(&self) -> PartyId {
        self.me
    }

    fn parties(&self) -> usize {
        self.to.len()
    }

    fn max_frame(&self) -> usize {
        self.max_frame
    }

    fn send(&mut self, to: PartyId, frame: Frame) -> Result<(), NetError> {
        check_peer(self.me, to, self.parties())?;
        if frame.payload.len() > self.max_frame {
            return Err(NetError::FrameTooLarge {
                peer: to,
                len: frame.payload.len() as u64,
                limit: self.max_frame as u64,
            });
        }
        let tx = self.to[to].as_ref().ok_or(NetError::Disconnected { peer: to })?;
        tx.send(frame).map_err(|_| NetError::Disconnected { peer: to })
    }

    fn recv(&mut self, from: PartyId, timeout: Duration) -> Result<Frame, NetError> {
        check_peer(self.me, from, self.parties())?;
        let rx = self.from[from].as_ref().ok_or(NetError::Disconnected { peer: from })?;
        rx.recv_timeout(timeout).map_err(|e| match e {
            RecvTimeoutError::Timeout => NetError::Timeout { peer: from, after: timeout },
            RecvTimeoutError::Disconnected => NetError::Disconnected { peer: from },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Net;

    fn nets(n: usize) -> Vec<Net> {
        mem_mesh(n).into_iter().map(|t| Net::new(Box::new(t), Duration::from_secs(5))).collect()
    }

    #[test]
    fn messages_arrive_in_order_per_peer() {
        let mut v = nets(3);
        for i in 0..100u8 {
            v[0].send(2, vec![i]).unwrap();
            v[1].send(2, vec![100 + i]).unwrap();
        }
        for i in 0..100u8 {
            assert_eq!(v[2].recv(1).unwrap(), vec![100 + i]);
            assert_eq!(v[2].recv(0).unwrap(), vec![i]);
        }
    }

    /// A step that expects fewer bytes than a message holds gets an error naming both sizes;
    /// a stop notice still reads as the peer's reason whatever the step expected.
    #[test]
    fn a_message_longer_than_the_step_expects_is_refused() {
        let mut v = nets(2);
        v[0].send(1, vec![1; 33]).unwrap();
        v[0].send(1, vec![2; 32]).unwrap();
        let e = v[1].recv_at_most(0, 32).unwrap_err();
        assert!(matches!(e, NetError::Unexpected { peer: 0, len: 33, expected: 32 }), "{e}");
        assert_eq!(v[1].recv_at_most(0, 32).unwrap(), vec![2; 32]);
        v[0].notify_stop("a check failed at party 0");
        let e = v[1].recv_at_most(0, 1).unwrap_err();
        assert!(matches!(e, NetError::PeerStopped { peer: 0, .. }), "{e}");
    }

    #[test]
    fn dropped_peer_is_reported_not_waited_for() {
        let mut v = nets(2);
        let gone = v.pop().unwrap();
        drop(gone);
        let t = std::time::Instant::now();
        assert!(matches!(v[0].recv(1), Err(NetError::Disconnected { peer: 1 })));
        assert!(t.elapsed() < Duration::from_secs(1));
        assert!(matches!(v[0].send(1, vec![1]), Err(NetError::Disconnected { peer: 1 })));
    }

    #[test]
    fn a_stop_notice_carries_the_reason() {
        let mut v = nets(3);
        v[1].send(0, vec![9]).unwrap();
        v[1].notify_stop("abort: check 'mac' failed");
        assert_eq!(v[0].recv(1).unwrap(), vec![9]);
        let err = v[0].recv(1).unwrap_err().to_string();
        assert_eq!(err, "party 1 stopped the session: abort: check 'mac' failed");
        assert!(v[2].recv(1).unwrap_err().to_string().contains("stopped the session"));
        assert_eq!(v[0].stats().current().messages_received, 1);
    }

    #[test]
    fn timeout_and_bad_peer() {
        let mut v: Vec<Net> =
            mem_mesh(2).into_iter().map(|t| Net::new(Box::new(t), Duration::from_millis(20))).collect();
        assert!(matches!(v[0].recv(1), Err(NetError::Timeout { peer: 1, .. })));
        assert!(matches!(v[0].send(0, vec![]), Err(NetError::BadPeer { .. })));
        assert!(matches!(v[0].send(5, vec![]), Err(NetError::BadPeer { .. })));
    }

    #[test]
    fn oversized_frame_is_rejected() {
        let mut v: Vec<Net> = mem_mesh_with_limit(2, 16)
            .into_iter()
            .map(|t| Net::new(Box::new(t), Duration::from_secs(1)))
            .collect();
        assert!(matches!(v[0].send(1, vec![0; 17]), Err(NetError::FrameTooLarge { .. })));
        v[0].send(1, vec![0; 16]).unwrap();
        assert_eq!(v[1].recv(0).unwrap().len(), 16);
    }
}
