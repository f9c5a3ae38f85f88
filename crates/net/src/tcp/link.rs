//! One established TLS link: a writer thread, a reader thread, and the queues between them
//! and the transport.
//!
//! - **Heartbeats.** A writer with nothing to send for [`Link::start`]'s `heartbeat` interval
//!   sends a heartbeat (a header with the reserved length, no payload); the reader notes when
//!   any bytes last arrived ([`Link::last_heard`]), so a party can tell a peer that is busy
//!   from one that is frozen or gone.
//! - **Bounded backlog.** Frames read but not yet taken by the protocol are at most
//!   `max_frame + BACKLOG_AHEAD` bytes: past that the reader stops reading the socket until the
//!   protocol catches up, and TCP's flow control holds the sender back. A peer cannot make
//!   this party queue without bound by sending ahead of the protocol.
//! - **Large frames wait for the step that takes them.** A frame longer than
//!   [`RESERVE_AHEAD`] is read only once nothing else is queued and the protocol asks for the
//!   next frame with the most bytes its step takes ([`Link::recv`]'s `limit`); a longer one is
//!   [`NetError::Unexpected`] before its bytes are buffered. So a peer can make this party
//!   hold at most the backlog, 16 MiB of a frame's start, and what the protocol expects.
//! - **Patient writes.** A write blocked by the peer's flow control (its protocol has not yet
//!   asked for a large frame) waits as long as the peer is heard from, and gives up after
//!   [`WRITE_SILENCE`] without a byte from it.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, unbounded};
use rustls::Connection;

use super::handshake::Conn;
use crate::frame::{HEADER_BYTES, HEARTBEAT_LEN};
use crate::{Frame, NetError, PartyId};

/// Bytes of received frames a link holds for the protocol beyond one largest frame.
pub(super) const BACKLOG_AHEAD: usize = 64 << 20;

/// Plaintext is sealed and written in chunks of this size, so the TLS state's lock is held
/// briefly and large frames stream out while they are being encrypted.
const CHUNK: usize = 1 << 20;

/// A blocked socket write checks on the peer this often.
const WRITE_POLL: Duration = Duration::from_secs(1);

/// A blocked socket write gives up once the peer has been silent this long (it stopped
/// reading and sends no heartbeats: frozen or gone).
const WRITE_SILENCE: Duration = Duration::from_secs(300);

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
    incoming: Receiver<Result<(Instant, Frame), NetError>>,
    /// Bytes of `incoming`'s frames not yet taken.
    backlog: Arc<Backlog>,
    /// When the reader last read any bytes from the peer.
    heard: Arc<Mutex<Instant>>,
    /// Bytes the reader has taken off the socket (TLS records included).
    #[cfg_attr(not(test), expect(dead_code, reason = "the tests read it"))]
    read: Arc<AtomicU64>,
    /// Set when the link is dropped: a blocked write then gives up at its next poll.
    closing: Arc<AtomicBool>,
    sock: TcpStream,
    writer: Option<JoinHandle<()>>,
    reader: Option<JoinHandle<()>>,
    peer: PartyId,
}

type Shared = Arc<Mutex<Connection>>;

/// Takes a lock even if a thread panicked while holding it.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the TLS lock leaves its state unusable, but the threads that use
    // it only report errors; taking the poisoned guard lets them fail cleanly.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The bytes of received frames waiting for the protocol, bounded by `limit`, and the
/// protocol's bound on the next frame it takes.
struct Backlog {
    state: Mutex<BacklogState>,
    room: Condvar,
    limit: usize,
}

#[derive(Default)]
struct BacklogState {
    /// Bytes of frames read and not yet taken.
    queued: usize,
    /// The link is closing.
    closing: bool,
    /// The most bytes the protocol takes in the next frame, once it has asked for one.
    asked: Option<usize>,
}

impl Backlog {
    fn new(limit: usize) -> Self {
        Backlog { state: Mutex::new(BacklogState::default()), room: Condvar::new(), limit }
    }

    fn wait<'a>(&self, s: MutexGuard<'a, BacklogState>) -> MutexGuard<'a, BacklogState> {
        self.room.wait(s).unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until a frame of `len` bytes fits (an empty backlog takes any frame); false once
    /// the link is closing.
    fn admit(&self, len: usize) -> bool {
        let mut s = lock(&self.state);
        while !s.closing && s.queued > 0 && s.queued.saturating_add(len) > self.limit {
            s = self.wait(s);
        }
        s.queued += len;
        !s.closing
    }

    /// The protocol waits for the next frame, of at most `limit` bytes.
    fn ask(&self, limit: usize) {
        lock(&self.state).asked = Some(limit);
        self.room.notify_all();
    }

    /// The protocol took a frame of `len` bytes (which answers its request).
    fn release(&self, len: usize) {
        let mut s = lock(&self.state);
        s.queued = s.queued.saturating_sub(len);
        s.asked = None;
        self.room.notify_all();
    }

    /// Waits until the protocol asks for a frame while nothing is queued (so the next frame is
    /// the one it asks for) and returns its bound; `None` once the link is closing.
    fn asked(&self) -> Option<usize> {
        let mut s = lock(&self.state);
        loop {
            if s.closing {
                return None;
            }
            if let (0, Some(limit)) = (s.queued, s.asked) {
                return Some(limit);
            }
            s = self.wait(s);
        }
    }

    fn close(&self) {
        lock(&self.state).closing = true;
        self.room.notify_all();
    }
}

impl Link {
    /// Starts the link's threads; an idle writer sends a heartbeat every `heartbeat` (never if
    /// zero).
    pub(super) fn start(
        peer: PartyId,
        (sock, mut conn): Conn,
        max_frame: usize,
        heartbeat: Duration,
    ) -> Result<Link, NetError> {
        let io = |e: std::io::Error| NetError::Io { peer, source: e };
        conn.set_buffer_limit(None);
        sock.set_write_timeout(Some(WRITE_POLL)).map_err(io)?;
        let conn: Shared = Arc::new(Mutex::new(conn));
        let (out_tx, out_rx) = unbounded();
        let (in_tx, in_rx) = unbounded();
        let backlog = Arc::new(Backlog::new(max_frame + BACKLOG_AHEAD));
        let heard = Arc::new(Mutex::new(Instant::now()));
        let closing = Arc::new(AtomicBool::new(false));
        let watch = Watch { heard: heard.clone(), closing: closing.clone() };
        let read = Arc::new(AtomicU64::new(0));
        let w_sock = sock.try_clone().map_err(io)?;
        let r_sock = sock.try_clone().map_err(io)?;
        let w_conn = conn.clone();
        let writer = std::thread::Builder::new()
            .name(format!("veil-tx-{peer}"))
            .spawn(move || write_loop(w_sock, w_conn, out_rx, heartbeat, watch))
            .map_err(io)?;
        let reader = Reader {
            peer,
            conn,
            frames: in_tx,
            flush: out_tx.clone(),
            max_frame,
            backlog: backlog.clone(),
            heard: heard.clone(),
            read: read.clone(),
        };
        let reader = std::thread::Builder::new()
            .name(format!("veil-rx-{peer}"))
            .spawn(move || reader.run(r_sock))
            .map_err(io)?;
        Ok(Link {
            out: Some(out_tx),
            incoming: in_rx,
            backlog,
            heard,
            read,
            closing,
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

    /// The next received frame, of at most `limit` bytes (a larger frame is read only this
    /// far: see the module docs), and when its last byte arrived, waiting up to `timeout`.
    pub(super) fn recv(&self, timeout: Duration, limit: usize) -> Result<(Instant, Frame), NetError> {
        let peer = self.peer;
        self.backlog.ask(limit);
        match self.incoming.recv_timeout(timeout) {
            Ok(Ok((arrived, frame))) => {
                self.backlog.release(frame.payload.len());
                Ok((arrived, frame))
            }
            Ok(Err(e)) => Err(e),
            Err(RecvTimeoutError::Timeout) => Err(NetError::Timeout { peer, after: timeout }),
            Err(RecvTimeoutError::Disconnected) => Err(NetError::Disconnected { peer }),
        }
    }

    /// Bytes of received frames not yet taken.
    #[cfg(test)]
    pub(super) fn backlog_bytes(&self) -> usize {
        lock(&self.backlog.state).queued
    }

    /// Bytes read off the socket so far (tests only).
    #[cfg(test)]
    pub(super) fn bytes_read(&self) -> u64 {
        self.read.load(Ordering::Relaxed)
    }

    /// When any bytes (a frame or a heartbeat) last arrived from the peer.
    pub(super) fn last_heard(&self) -> Instant {
        *lock(&self.heard)
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        // The writer flushes what is queued, sends close_notify and shuts down the write
        // half; the peer's reader then sees a clean end of stream. A write the peer does not
        // take (it stopped reading) is abandoned at the next poll instead of held.
        self.closing.store(true, Ordering::Relaxed);
        if let Some(out) = self.out.take() {
            let _ = out.send(Out::Close);
        }
        if let Some(w) = self.writer.take() {
            let _ = w.join();
        }
        self.backlog.close();
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

/// The header of a heartbeat.
fn heartbeat_header() -> [u8; HEADER_BYTES] {
    let mut header = [0u8; HEADER_BYTES];
    header[..4].copy_from_slice(&HEARTBEAT_LEN.to_le_bytes());
    header
}

/// What a blocked write looks at to decide whether to keep waiting.
struct Watch {
    /// When the peer last sent anything.
    heard: Arc<Mutex<Instant>>,
    /// The link is being dropped.
    closing: Arc<AtomicBool>,
}

/// Writes all of `wire`, waiting through the peer's flow control as long as the peer is
/// heard from (its reader may be holding a large frame until its protocol asks for it) and
/// the link is not being dropped.
fn write_patiently(sock: &mut TcpStream, mut wire: &[u8], watch: &Watch) -> std::io::Result<()> {
    while !wire.is_empty() {
        match sock.write(wire) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => wire = &wire[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                if watch.closing.load(Ordering::Relaxed) || lock(&watch.heard).elapsed() >= WRITE_SILENCE {
                    return Err(e);
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn write_loop(mut sock: TcpStream, conn: Shared, queue: Receiver<Out>, heartbeat: Duration, watch: Watch) {
    let mut send = |plain: &[u8]| -> std::io::Result<()> {
        let wire = seal(&conn, plain)?;
        write_patiently(&mut sock, &wire, &watch)
    };
    loop {
        let msg = if heartbeat.is_zero() {
            queue.recv().map_err(|_| RecvTimeoutError::Disconnected)
        } else {
            queue.recv_timeout(heartbeat)
        };
        let ok = match msg {
            Err(RecvTimeoutError::Disconnected) | Ok(Out::Close) => break,
            Err(RecvTimeoutError::Timeout) => send(&heartbeat_header()),
            Ok(Out::Flush) => send(&[]),
            Ok(Out::Frame(f)) => {
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

/// The reader thread's state: it reads the socket, decrypts, splits frames and hands them on.
struct Reader {
    peer: PartyId,
    conn: Shared,
    frames: Sender<Result<(Instant, Frame), NetError>>,
    flush: Sender<Out>,
    max_frame: usize,
    backlog: Arc<Backlog>,
    heard: Arc<Mutex<Instant>>,
    read: Arc<AtomicU64>,
}

impl Reader {
    fn run(self, mut sock: TcpStream) {
        let peer = self.peer;
        let mut buf = vec![0u8; 64 * 1024];
        let mut plain: Vec<u8> = Vec::new();
        // The protocol has asked for the large frame whose header starts `plain`.
        let mut granted = false;
        let fail = |e: NetError| {
            let _ = self.frames.send(Err(e));
        };
        loop {
            let n = match sock.read(&mut buf) {
                Ok(0) => return, // end of stream: dropping `frames` reports a disconnect
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    // A reset or our own shutdown: a disconnect unless frames are pending.
                    if !matches!(
                        e.kind(),
                        std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
                    ) {
                        fail(NetError::Io { peer, source: e });
                    }
                    return;
                }
            };
            *lock(&self.heard) = Instant::now();
            self.read.fetch_add(n as u64, Ordering::Relaxed);
            let (closed, wants_write) = match decrypt(&self.conn, &buf[..n], &mut plain) {
                Ok(x) => x,
                Err(reason) => return fail(NetError::Malformed { peer, reason }),
            };
            if wants_write {
                let _ = self.flush.send(Out::Flush);
            }
            let (frames, bad) = split_frames(peer, &mut plain, self.max_frame);
            let now = Instant::now();
            granted &= frames.is_empty();
            for frame in frames {
                // Waits while the protocol has not taken enough of what came before.
                if !self.backlog.admit(frame.payload.len()) || self.frames.send(Ok((now, frame))).is_err() {
                    return; // the transport is gone
                }
            }
            if let Some(e) = bad {
                return fail(e);
            }
            if closed {
                return;
            }
            if let (false, Some(len)) = (granted, pending_large(&plain)) {
                match self.backlog.asked() {
                    None => return, // the transport is gone
                    Some(limit) if len > limit => {
                        let (len, expected) = (len as u64, limit as u64);
                        return fail(NetError::Unexpected { peer, len, expected });
                    }
                    Some(_) => granted = true,
                }
            }
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

/// Room kept free for the next reads while a frame arrives (a read brings at most 64 KiB), so
/// the buffer grows only by the exact reservations below, never by doubling past the frame.
const SPARE: usize = 1 << 20;

/// The length of the incomplete frame starting `plain` where it is longer than what is read
/// unasked ([`RESERVE_AHEAD`]).
fn pending_large(plain: &[u8]) -> Option<usize> {
    let h = plain.get(..HEADER_BYTES)?;
    let announced = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
    let len = announced as usize;
    (announced != HEARTBEAT_LEN && len > RESERVE_AHEAD && plain.len() < HEADER_BYTES + len).then_some(len)
}

/// Takes every complete frame off the front of `plain` (heartbeats are dropped), up to the
/// first header that breaks the rules, which is returned as the error after them.
pub(crate) fn split_frames(
    peer: PartyId,
    plain: &mut Vec<u8>,
    max_frame: usize,
) -> (Vec<Frame>, Option<NetError>) {
    let mut frames = Vec::new();
    let mut bad = None;
    let mut start = 0;
    while plain.len() - start >= HEADER_BYTES {
        let h = &plain[start..start + HEADER_BYTES];
        let announced = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
        let depth = u32::from_le_bytes([h[4], h[5], h[6], h[7]]);
        if announced == HEARTBEAT_LEN {
            start += HEADER_BYTES;
            continue;
        }
        let len = announced as usize;
        if len > max_frame {
            bad = Some(NetError::FrameTooLarge { peer, len: len as u64, limit: max_frame as u64 });
            break;
        }
        if plain.len() - start < HEADER_BYTES + len {
            // Room for what is announced, but never more ahead of the bytes than what has
            // arrived (or RESERVE_AHEAD): a header alone must not make the receiver reserve a
            // whole frame's limit. Exact reservations end at the frame's size, without the
            // overshoot of a doubling buffer.
            let have = plain.len() - start;
            let missing = HEADER_BYTES + len - have;
            if plain.capacity() - plain.len() < missing.min(SPARE) {
                plain.reserve_exact(missing.min(have.max(RESERVE_AHEAD)));
            }
            break;
        }
        if start == 0 && plain.len() == HEADER_BYTES + len && len >= SPARE {
            // A large frame that fills the buffer: hand the buffer over instead of a copy.
            let mut payload = std::mem::take(plain);
            payload.drain(..HEADER_BYTES);
            frames.push(Frame { depth, payload });
            break;
        }
        let payload = plain[start + HEADER_BYTES..start + HEADER_BYTES + len].to_vec();
        start += HEADER_BYTES + len;
        frames.push(Frame { depth, payload });
    }
    if start > 0 {
        plain.drain(..start);
        if plain.capacity() > RESERVE_AHEAD && plain.len() < plain.capacity() / 4 {
            // The room of a large frame is not kept once it has been taken.
            plain.shrink_to(plain.len().max(SPARE));
        }
    }
    (frames, bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header announcing a frame at the limit reserves at most RESERVE_AHEAD before its
    /// bytes arrive; the frame is still delivered whole once they do.
    #[test]
    fn an_announced_frame_reserves_memory_only_as_its_bytes_arrive() {
        let limit = 1 << 30;
        let mut plain = Vec::new();
        plain.extend_from_slice(&(limit as u32).to_le_bytes());
        plain.extend_from_slice(&0u32.to_le_bytes());
        let (frames, bad) = split_frames(1, &mut plain, limit);
        assert!(frames.is_empty() && bad.is_none());
        assert!(plain.capacity() <= HEADER_BYTES + RESERVE_AHEAD, "reserved {}", plain.capacity());
        let mut small = heartbeat_header().to_vec();
        small.extend_from_slice(&3u32.to_le_bytes());
        small.extend_from_slice(&7u32.to_le_bytes());
        small.extend_from_slice(&[1, 2, 3]);
        small.extend_from_slice(&heartbeat_header());
        let (frames, bad) = split_frames(1, &mut small, limit);
        assert_eq!(frames, vec![Frame { depth: 7, payload: vec![1, 2, 3] }]);
        assert!(small.is_empty() && bad.is_none());
    }

    /// A large frame arriving in reads of 64 KiB ends in a buffer of its own size: the buffer
    /// grows by exact steps, not by doubling past the frame.
    #[test]
    fn a_large_frame_grows_its_buffer_to_its_size_only() {
        let len = 40 << 20;
        let mut stream = (len as u32).to_le_bytes().to_vec();
        stream.extend_from_slice(&5u32.to_le_bytes());
        stream.resize(HEADER_BYTES + len, 7);
        let mut plain = Vec::new();
        let mut got = Vec::new();
        for piece in stream.chunks(64 << 10) {
            assert!(
                plain.len() + piece.len() <= plain.capacity() || plain.is_empty(),
                "a read would reallocate"
            );
            plain.extend_from_slice(piece);
            let (frames, bad) = split_frames(1, &mut plain, 1 << 30);
            assert!(bad.is_none());
            if frames.is_empty() {
                assert!(plain.capacity() <= HEADER_BYTES + len + SPARE, "capacity {}", plain.capacity());
            }
            got.extend(frames);
        }
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].payload.len(), len);
    }

    /// The backlog takes frames up to its limit, then holds the reader until the protocol
    /// takes some; a frame larger than the limit still passes when the backlog is empty.
    #[test]
    fn the_backlog_holds_the_reader_back_until_the_protocol_catches_up() {
        let backlog = Arc::new(Backlog::new(10));
        assert!(backlog.admit(6));
        let b = backlog.clone();
        let held = std::thread::spawn(move || {
            let t = Instant::now();
            assert!(b.admit(6));
            t.elapsed()
        });
        std::thread::sleep(Duration::from_millis(200));
        backlog.release(6);
        assert!(held.join().unwrap() >= Duration::from_millis(150));
        backlog.release(6);
        assert!(backlog.admit(100));
        let b = backlog.clone();
        let closing = std::thread::spawn(move || b.admit(1));
        std::thread::sleep(Duration::from_millis(50));
        backlog.close();
        assert!(!closing.join().unwrap(), "a closing link releases its reader");
    }
}
