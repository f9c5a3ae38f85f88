//! Connection setup: TCP connect/accept, the TLS handshake, and Veil's hello exchange.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use rustls::{ClientConnection, Connection, ServerConnection};

use super::TcpConfig;
use crate::{NetError, PartyId, tls};

const MAGIC: &[u8; 4] = b"VEIL";
const VERSION: u16 = 1;
pub(crate) const HELLO_BYTES: usize = 4 + 2 + 2 + 2 + 16;
const MAX_REASON: usize = 512;

/// A socket with its finished TLS session.
pub(super) type Conn = (TcpStream, Connection);

fn remaining(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1))
}

fn hs(peer: PartyId, reason: impl Into<String>) -> NetError {
    NetError::Handshake { peer, reason: reason.into() }
}

/// Words for an I/O error that may wrap a TLS error.
fn explain_io(e: &std::io::Error) -> String {
    match e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
        Some(tls_err) => tls::explain(tls_err),
        None if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            "the peer closed the connection during the handshake".into()
        }
        None if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
            "the peer did not finish the handshake in time".into()
        }
        None => e.to_string(),
    }
}

fn finish_tls(sock: &mut TcpStream, conn: &mut Connection) -> Result<(), String> {
    while conn.is_handshaking() {
        conn.complete_io(sock).map_err(|e| explain_io(&e))?;
    }
    Ok(())
}

/// Writes `bytes` through the TLS session and flushes the records to the socket.
fn tls_write(conn: &mut Connection, sock: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    conn.writer().write_all(bytes)?;
    while conn.wants_write() {
        conn.write_tls(sock)?;
    }
    sock.flush()
}

/// Reads exactly `buf.len()` plaintext bytes from the TLS session.
fn tls_read_exact(conn: &mut Connection, sock: &mut TcpStream, buf: &mut [u8]) -> std::io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        match conn.reader().read(&mut buf[filled..]) {
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(k) => filled += k,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if conn.read_tls(sock)? == 0 {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
                let state = conn.process_new_packets();
                // Whatever the outcome, send pending alerts so the peer learns why.
                while conn.wants_write() {
                    if conn.write_tls(sock).is_err() {
                        break;
                    }
                }
                state.map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn hello(party: PartyId, parties: usize, session: &[u8; 16]) -> [u8; HELLO_BYTES] {
    let mut h = [0u8; HELLO_BYTES];
    h[..4].copy_from_slice(MAGIC);
    h[4..6].copy_from_slice(&VERSION.to_le_bytes());
    h[6..8].copy_from_slice(&(party as u16).to_le_bytes());
    h[8..10].copy_from_slice(&(parties as u16).to_le_bytes());
    h[10..].copy_from_slice(session);
    h
}

/// Parsed hello: (claimed party, parties, session); errors on wrong magic or version.
pub(crate) fn parse_hello(h: &[u8; HELLO_BYTES]) -> Result<(PartyId, usize, [u8; 16]), String> {
    if &h[..4] != MAGIC {
        return Err("the peer does not speak the Veil protocol".into());
    }
    let version = u16::from_le_bytes([h[4], h[5]]);
    if version != VERSION {
        return Err(format!("protocol version {version}, expected {VERSION}"));
    }
    let mut session = [0u8; 16];
    session.copy_from_slice(&h[10..]);
    Ok((u16::from_le_bytes([h[6], h[7]]) as usize, u16::from_le_bytes([h[8], h[9]]) as usize, session))
}

/// Dials every party `j < me`; each must present `party-j.veil` and accept our hello.
pub(super) fn dial_lower(cfg: &TcpConfig, deadline: Instant) -> Result<Vec<(PartyId, Conn)>, NetError> {
    let client_cfg = tls::client_config(&cfg.identity, &cfg.session)?;
    (0..cfg.party).map(|j| Ok((j, dial(cfg, j, &client_cfg, deadline)?))).collect()
}

fn dial(
    cfg: &TcpConfig,
    peer: PartyId,
    client_cfg: &Arc<rustls::ClientConfig>,
    deadline: Instant,
) -> Result<Conn, NetError> {
    let addr = cfg.addrs[peer];
    let mut sock = loop {
        match TcpStream::connect_timeout(&addr, remaining(deadline)) {
            Ok(s) => break s,
            Err(e) if Instant::now() >= deadline => {
                return Err(hs(peer, format!("cannot reach {addr} before the timeout: {e}")));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(25)),
        }
    };
    let io = |e: std::io::Error| NetError::Io { peer, source: e };
    sock.set_nodelay(true).map_err(io)?;
    sock.set_read_timeout(Some(remaining(deadline))).map_err(io)?;
    let handle = sock.try_clone().map_err(io)?;
    let conn = within(handle, deadline, peer, || greet(cfg, peer, &mut sock, client_cfg))?;
    sock.set_read_timeout(None).map_err(io)?;
    Ok((sock, conn))
}

/// The client side of a connection to `peer`: TLS, our hello, its answer.
fn greet(
    cfg: &TcpConfig,
    peer: PartyId,
    sock: &mut TcpStream,
    client_cfg: &Arc<rustls::ClientConfig>,
) -> Result<Connection, NetError> {
    let addr = cfg.addrs[peer];
    let client = ClientConnection::new(client_cfg.clone(), tls::server_name(peer)?)
        .map_err(|e| hs(peer, tls::explain(&e)))?;
    let mut conn = Connection::Client(client);
    finish_tls(sock, &mut conn).map_err(|r| hs(peer, r))?;
    tls_write(&mut conn, sock, &hello(cfg.party, cfg.addrs.len(), &cfg.session))
        .map_err(|e| hs(peer, explain_io(&e)))?;
    let mut head = [0u8; HELLO_BYTES + 1 + 2];
    tls_read_exact(&mut conn, sock, &mut head).map_err(|e| hs(peer, explain_io(&e)))?;
    let mut h = [0u8; HELLO_BYTES];
    h.copy_from_slice(&head[..HELLO_BYTES]);
    let (their_id, _, _) = parse_hello(&h).map_err(|r| hs(peer, r))?;
    let status = head[HELLO_BYTES];
    if status != 0 {
        let len =
            (u16::from_le_bytes([head[HELLO_BYTES + 1], head[HELLO_BYTES + 2]]) as usize).min(MAX_REASON);
        let mut reason = vec![0u8; len];
        let _ = tls_read_exact(&mut conn, sock, &mut reason);
        return Err(hs(peer, format!("refused by party {peer}: {}", String::from_utf8_lossy(&reason))));
    }
    if their_id != peer {
        return Err(hs(peer, format!("the peer at {addr} answered as party {their_id}")));
    }
    Ok(conn)
}

/// Runs the handshake `f` and closes the socket behind `handle` if `f` is still running at
/// `until`, so a peer that trickles bytes cannot stretch a handshake past it (a read timeout
/// alone restarts with every byte). A handshake the watchdog closed is reported as timed out
/// (whatever error the closed socket gave), naming `peer`.
fn within<T>(
    handle: TcpStream,
    until: Instant,
    peer: PartyId,
    f: impl FnOnce() -> Result<T, NetError>,
) -> Result<T, NetError> {
    // (finished, closed by the watchdog)
    let state = Mutex::new((false, false));
    std::thread::scope(|s| {
        s.spawn(|| {
            loop {
                let Ok(mut st) = state.lock() else { return };
                if st.0 {
                    return;
                }
                if Instant::now() >= until {
                    st.1 = true;
                    let _ = handle.shutdown(Shutdown::Both);
                    return;
                }
                drop(st);
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        let out = f();
        let mut st = state.lock().map_err(|_| NetError::Config("a handshake watchdog failed".into()))?;
        st.0 = true;
        if st.1 {
            return Err(hs(peer, "the peer did not finish the handshake before the connect timeout"));
        }
        out
    })
}

/// Longest one incoming connection may take from accept to a finished hello (a TLS handshake
/// and the hello: a few round trips). A connection still in its handshake then is closed, so a
/// stranger that trickles bytes holds nothing for longer.
pub(super) const HANDSHAKE_LIMIT: Duration = Duration::from_secs(10);

/// Most incoming handshakes in flight at once; a connection beyond them closes the oldest (the
/// honest parties that dial a party are at most `n − 1`, and each finishes in a few round
/// trips, so a flood of stalling strangers is what gets closed).
pub(super) const MAX_PENDING: usize = 32;

/// A finished handshake of an incoming connection, from the thread that ran it.
type Served = (SocketAddr, Result<(PartyId, Conn), String>);

/// Accepts every party `j > me`, refusing anyone else, until all came or the deadline passed.
/// Each connection's handshake runs on its own thread, within [`HANDSHAKE_LIMIT`] and the
/// deadline, at most [`MAX_PENDING`] at once (the oldest closed first): a stranger that
/// connects and stalls delays no one, and a flood of strangers holds neither threads nor time
/// without bound.
pub(super) fn accept_higher(
    cfg: &TcpConfig,
    listener: &TcpListener,
    deadline: Instant,
) -> Result<Vec<(PartyId, Conn)>, NetError> {
    let n = cfg.addrs.len();
    let expected = n - cfg.party - 1;
    let server_cfg = tls::server_config(&cfg.identity, &cfg.session)?;
    let claimed: Mutex<BTreeSet<PartyId>> = Mutex::new(BTreeSet::new());
    listener.set_nonblocking(true).map_err(|e| NetError::Config(format!("listener: {e}")))?;
    let (tx, rx) = mpsc::channel::<Served>();
    let mut done: BTreeMap<PartyId, Conn> = BTreeMap::new();
    let mut refused: Vec<String> = Vec::new();
    std::thread::scope(|s| {
        // Handshakes in flight: a handle on each socket (to close it), its deadline, its peer.
        let mut pending: Vec<(TcpStream, Instant, SocketAddr)> = Vec::new();
        let outcome = loop {
            while let Ok((from, served)) = rx.try_recv() {
                pending.retain(|(_, _, addr)| *addr != from);
                match served {
                    Ok((id, conn)) => {
                        done.insert(id, conn);
                    }
                    Err(reason) => refused.push(format!("{from}: {reason}")),
                }
            }
            if done.len() >= expected {
                break Ok(());
            }
            let now = Instant::now();
            if now >= deadline {
                break Err(missing(cfg, &done, &refused, pending.len()));
            }
            for (sock, until, _) in &pending {
                if now >= *until {
                    let _ = sock.shutdown(Shutdown::Both);
                }
            }
            match listener.accept() {
                Ok((sock, from)) => match sock.try_clone() {
                    Ok(handle) => {
                        if pending.len() >= MAX_PENDING {
                            // The oldest handshake makes room: an honest party finishes its
                            // own in milliseconds, a stalling stranger is the one that waits.
                            let (old, _, addr) = pending.remove(0);
                            let _ = old.shutdown(Shutdown::Both);
                            refused.push(format!("{addr}: closed for a newer connection"));
                        }
                        let until = (now + HANDSHAKE_LIMIT).min(deadline);
                        pending.push((handle, until, from));
                        let (tx, server_cfg, claimed) = (tx.clone(), &server_cfg, &claimed);
                        s.spawn(move || {
                            let served = serve(cfg, sock, server_cfg, claimed, until);
                            let _ = tx.send((from, served));
                        });
                    }
                    Err(e) => refused.push(format!("{from}: {e}")),
                },
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => refused.push(format!("accept failed: {e}")),
            }
        };
        // Whatever is still in its handshake now is not needed (or too late): close it, so
        // the threads end at once.
        for (sock, _, _) in &pending {
            let _ = sock.shutdown(Shutdown::Both);
        }
        outcome
    })?;
    Ok(done.into_iter().collect())
}

/// The error of an accept loop that reached its deadline: who did not connect, and who was
/// refused and why.
fn missing(
    cfg: &TcpConfig,
    done: &BTreeMap<PartyId, Conn>,
    refused: &[String],
    in_flight: usize,
) -> NetError {
    let n = cfg.addrs.len();
    let absent: Vec<String> =
        (cfg.party + 1..n).filter(|j| !done.contains_key(j)).map(|j| j.to_string()).collect();
    let who = if absent.len() == 1 { "party" } else { "parties" };
    let mut reason = format!("{who} {} did not connect in time", absent.join(", "));
    if !refused.is_empty() {
        reason.push_str(&format!("; refused connections: {}", refused.join("; ")));
    }
    if in_flight > 0 {
        reason.push_str(&format!("; {in_flight} connections were still in their handshake"));
    }
    let first = (cfg.party + 1..n).find(|j| !done.contains_key(j)).unwrap_or(cfg.party);
    hs(first, reason)
}

/// Server side of one connection: TLS, then check the hello against the certificate.
///
/// The caller closes the socket at `until` if the handshake is still running then (reads
/// also time out at `until`), and `claimed` holds the parties already accepted: a second
/// connection claiming one of them is refused.
fn serve(
    cfg: &TcpConfig,
    mut sock: TcpStream,
    server_cfg: &Arc<rustls::ServerConfig>,
    claimed: &Mutex<BTreeSet<PartyId>>,
    until: Instant,
) -> Result<(PartyId, Conn), String> {
    let n = cfg.addrs.len();
    sock.set_nonblocking(false).map_err(|e| e.to_string())?;
    sock.set_nodelay(true).map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(remaining(until))).map_err(|e| e.to_string())?;
    let server = ServerConnection::new(server_cfg.clone()).map_err(|e| tls::explain(&e))?;
    let mut conn = Connection::Server(server);
    finish_tls(&mut sock, &mut conn)?;
    let mut h = [0u8; HELLO_BYTES];
    tls_read_exact(&mut conn, &mut sock, &mut h).map_err(|e| explain_io(&e))?;
    let verdict = parse_hello(&h).and_then(|(id, parties, session)| {
        if parties != n {
            return Err(format!("the peer expects {parties} parties, this session has {n}"));
        }
        if session != cfg.session {
            return Err("session id mismatch: the peer belongs to another session".into());
        }
        if id <= cfg.party || id >= n {
            return Err(format!("party {id} must not dial party {}", cfg.party));
        }
        let cert =
            conn.peer_certificates().and_then(|c| c.first()).ok_or("the peer presented no certificate")?;
        tls::cert_names_party(cert, id).map_err(|r| format!("the peer claims to be party {id} but {r}"))?;
        let mut taken = claimed.lock().map_err(|_| "the accept loop failed".to_string())?;
        if !taken.insert(id) {
            return Err(format!("party {id} is already connected"));
        }
        Ok(id)
    });
    let mut reply = hello(cfg.party, n, &cfg.session).to_vec();
    match &verdict {
        Ok(_) => reply.extend_from_slice(&[0, 0, 0]),
        Err(reason) => {
            let r = &reason.as_bytes()[..reason.len().min(MAX_REASON)];
            reply.push(1);
            reply.extend_from_slice(&(r.len() as u16).to_le_bytes());
            reply.extend_from_slice(r);
        }
    }
    let sent = tls_write(&mut conn, &mut sock, &reply);
    let id = verdict?;
    let ready = sent
        .map_err(|e| explain_io(&e))
        .and_then(|()| sock.set_read_timeout(None).map_err(|e| e.to_string()));
    if let Err(e) = ready {
        // The party may connect again.
        if let Ok(mut taken) = claimed.lock() {
            taken.remove(&id);
        }
        return Err(e);
    }
    Ok((id, (sock, conn)))
}
