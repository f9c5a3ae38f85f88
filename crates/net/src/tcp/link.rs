//! One established TLS link: a writer thread, a reader thread, and the queues between them
//! and the transport.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, unbounded};
use rustls::Connection;

use super::handshake::Conn;
use crate::frame::HEADER_BYTES;
use crate::{Frame, NetError, PartyId};

/// Plaintext is sealed and written in chunks of this size, so the TLS state's lock is held
/// briefly and large frames stream out while they are being encrypted.
const CHUNK: usize = 1 << 20;

/// A blocked socket write gives up after this long (the peer stopped reading).
const WRITE_TIMEOUT: Duration = Duration::from_secs(300);

enum Out {
    Frame(Frame),
    /// The reader saw TLS output pending (e.g. a key update answer): write it out.
    Flush,
    /// The transport is being dropped: flush, send close_notify, shut down the write half.
    /// (An explicit message, because the reader thread holds a sender for `Flush`.)
    Close,
}

pub(super) struct Link {
    out: Option<Sender<Out>>,
    /// Received frames, each with the moment its last byte was read.
    pub(super) incoming: Receiver<Result<(Instant, Frame), NetError>>,
    sock: TcpStream,
    writer: Option<JoinHandle<()>>,
    reader: Option<JoinHandle<()>>,
    peer: PartyId,
}

type Shared = Arc<Mutex<Connection>>;

fn lock(conn: &Shared) -> MutexGuard<'_, Connection> {
    // A panic while holding the lock leaves the TLS state unusable, but the threads that use it
    // only report errors; taking the poisoned guard lets them fail cleanly.
    conn.lock().unwrap_or_else(|p| p.into_inner())
}

impl Link {
    pub(super) fn start(peer: PartyId, (sock, mut conn): Conn, max_frame: usize) -> Result<Link, NetError> {
        let io = |e: std::io::Error| NetError::Io { peer, source: e };
        conn.set_buffer_limit(None);
        sock.set_write_timeout(Some(WRITE_TIMEOUT)).map_err(io)?;
        let conn: Shared = Arc::new(Mutex::new(conn));
        let (out_tx, out_rx) = unbounded();
        let (in_tx, in_rx) = unbounded();
        let w_sock = sock.try_clone().map_err(io)?;
        let r_sock = sock.try_clone().map_err(io)?;
        let w_conn = conn.clone();
        let writer = std::thread::Builder::new()
            .name(format!("veil-tx-{peer}"))
            .spawn(move || write_loop(w_sock, w_conn, out_rx))
            .map_err(io)?;
        let flush_tx = out_tx.clone();
        let reader = std::thread::Builder::new()
            .name(format!("veil-rx-{peer}"))
            .spawn(move || read_loop(peer, r_sock, conn, in_tx, flush_tx, max_frame))
            .map_err(io)?;
        Ok(Link {
            out: Some(out_tx),
            incoming: in_rx,
            sock,
            writer: Some(writer),
            reader: Some(reader),
            peer,
        })
    }

    pub(super) fn send(&self, frame: Frame) -> Result<(), NetError> {
        let peer = self.peer;
        let out = self.out.as_ref().ok_or(NetError::Disconnected { peer })?;
        out.send(Out::Frame(frame)).map_err(|_| NetError::Disconnected { peer })
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        // The writer flushes what is queued, sends close_notify and shuts down the write
        // half; the peer's reader then sees a clean end of stream.
        if let Some(out) = self.out.take() {
            let _ = out.send(Out::Close);
        }
        if let Some(w) = self.writer.take() {
            let _ = w.join();
        }
        let _ = self.sock.shutdown(Shutdown::Read);
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
    }
}

/// Seals `plain` and returns the TLS records to put on the wire.
fn seal(conn: &Shared, plain: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut c = lock(conn);
    if !plain.is_empty() {
        c.writer().write_all(plain)?;
    }
    let mut wire = Vec::with_capacity(plain.len() + 64);
    while c.wants_write() {
        c.write_tls(&mut wire)?;
    }
    Ok(wire)
}

fn write_loop(mut sock: TcpStream, conn: Shared, queue: Receiver<Out>) {
    let mut send = |plain: &[u8]| -> std::io::Result<()> {
        let wire = seal(&conn, plain)?;
        sock.write_all(&wire)
    };
    while let Ok(msg) = queue.recv() {
        let ok = match msg {
            Out::Close => break,
            Out::Flush => send(&[]),
            Out::Frame(f) => {
                let mut header = [0u8; HEADER_BYTES];
                header[..4].copy_from_slice(&(f.payload.len() as u32).to_le_bytes());
                header[4..].copy_from_slice(&f.depth.to_le_bytes());
                let first = f.payload.len().min(CHUNK - HEADER_BYTES);
                let mut head = Vec::with_capacity(HEADER_BYTES + first);
                head.extend_from_slice(&header);
                head.extend_from_slice(&f.payload[..first]);
                send(&head).and_then(|_| f.payload[first..].chunks(CHUNK).try_for_each(&mut send))
            }
        };
        if ok.is_err() {
            return; // the peer is gone; the reader reports it, later sends fail
        }
    }
    lock(&conn).send_close_notify();
    let _ = send(&[]);
    let _ = sock.shutdown(Shutdown::Write);
}

fn read_loop(
    peer: PartyId,
    mut sock: TcpStream,
    conn: Shared,
    frames: Sender<Result<(Instant, Frame), NetError>>,
    flush: Sender<Out>,
    max_frame: usize,
) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut plain: Vec<u8> = Vec::new();
    let fail = |e: NetError| {
        let _ = frames.send(Err(e));
    };
    loop {
        let n = match sock.read(&mut buf) {
            Ok(0) => return, // end of stream: dropping `frames` reports a disconnect
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                // A reset or our own shutdown: treat as a disconnect unless frames are pending.
                if !matches!(e.kind(), std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe) {
                    fail(NetError::Io { peer, source: e });
                }
                return;
            }
        };
        let (closed, wants_write) = match decrypt(&conn, &buf[..n], &mut plain) {
            Ok(x) => x,
            Err(reason) => return fail(NetError::Malformed { peer, reason }),
        };
        if wants_write {
            let _ = flush.send(Out::Flush);
        }
        if let Err(e) = split_frames(peer, &mut plain, max_frame, &frames) {
            return fail(e);
        }
        if closed {
            return;
        }
    }
}

/// Feeds ciphertext to rustls and appends the plaintext; returns (peer closed, TLS output pending).
fn decrypt(conn: &Shared, mut data: &[u8], plain: &mut Vec<u8>) -> Result<(bool, bool), String> {
    let mut c = lock(conn);
    let mut closed = false;
    while !data.is_empty() {
        c.read_tls(&mut data).map_err(|e| format!("TLS read: {e}"))?;
        c.process_new_packets().map_err(|e| format!("TLS: {e}"))?;
        let mut tmp = [0u8; 16 * 1024];
        loop {
            match c.reader().read(&mut tmp) {
                Ok(0) => {
                    closed = true;
                    break;
                }
                Ok(k) => plain.extend_from_slice(&tmp[..k]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(format!("TLS stream: {e}")),
            }
        }
    }
    Ok((closed, c.wants_write()))
}

/// Most bytes reserved for a frame ahead of its arrival (larger frames grow as they come).
const RESERVE_AHEAD: usize = 16 << 20;

/// Moves every complete frame at the front of `plain` to `frames`.
fn split_frames(
    peer: PartyId,
    plain: &mut Vec<u8>,
    max_frame: usize,
    frames: &Sender<Result<(Instant, Frame), NetError>>,
) -> Result<(), NetError> {
    let now = Instant::now();
    let mut start = 0;
    while plain.len() - start >= HEADER_BYTES {
        let h = &plain[start..start + HEADER_BYTES];
        let len = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize;
        let depth = u32::from_le_bytes([h[4], h[5], h[6], h[7]]);
        if len > max_frame {
            return Err(NetError::FrameTooLarge { peer, len: len as u64, limit: max_frame as u64 });
        }
        if plain.len() - start < HEADER_BYTES + len {
            // Room for what is announced, but never more than RESERVE_AHEAD before the bytes
            // arrive: a header alone must not make the receiver reserve a whole frame's limit.
            let missing = HEADER_BYTES + len - (plain.len() - start);
            plain.reserve(missing.min(RESERVE_AHEAD));
            break;
        }
        let payload = plain[start + HEADER_BYTES..start + HEADER_BYTES + len].to_vec();
        start += HEADER_BYTES + len;
        if frames.send(Ok((now, Frame { depth, payload }))).is_err() {
            break; // the transport is gone
        }
    }
    if start > 0 {
        plain.drain(..start);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header announcing a frame at the limit reserves at most RESERVE_AHEAD before its
    /// bytes arrive; the frame is still delivered whole once they do.
    #[test]
    fn an_announced_frame_reserves_memory_only_as_its_bytes_arrive() {
        let (tx, rx) = unbounded();
        let limit = 1 << 30;
        let mut plain = Vec::new();
        plain.extend_from_slice(&(limit as u32).to_le_bytes());
        plain.extend_from_slice(&0u32.to_le_bytes());
        split_frames(1, &mut plain, limit, &tx).unwrap();
        assert!(plain.capacity() <= HEADER_BYTES + RESERVE_AHEAD, "reserved {}", plain.capacity());
        assert!(rx.try_recv().is_err());
        let mut small = Vec::new();
        small.extend_from_slice(&3u32.to_le_bytes());
        small.extend_from_slice(&0u32.to_le_bytes());
        small.extend_from_slice(&[1, 2, 3]);
        split_frames(1, &mut small, limit, &tx).unwrap();
        let (_, frame) = rx.try_recv().unwrap().unwrap();
        assert_eq!(frame.payload, vec![1, 2, 3]);
        assert!(small.is_empty());
    }
}
