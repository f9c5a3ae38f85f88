//! TCP transport with TLS 1.3 and mutual authentication.
//!
//! Topology: one TLS connection per pair of parties. Party `i` listens on `addrs[i]`, dials
//! every lower party `j < i` (as TLS client, expecting `party-j.veil`) and accepts every higher
//! party (as TLS server, requiring a client certificate from the CA). Dialing retries until the
//! connect timeout, so the parties may start in any order.
//!
//! After the TLS handshake (whose ALPN carries the session id, see `tls`), the client sends a
//! hello `VEIL | version | claimed party id | parties | session id`; the server checks that the
//! claimed id is a higher party not yet connected, that the client's certificate is issued to
//! exactly that party, and that the session and party count match, then answers with its own
//! hello or with a refusal and the reason. A refused or failed connection is reported with a
//! clear error; the listener keeps waiting for the legitimate peer until the timeout.
//!
//! Data path, per link: a writer thread owns the socket's write half and drains an unbounded
//! queue (so `send` never waits for the receiver) and sends a heartbeat when idle; a reader
//! thread reads the socket, decrypts and splits frames, refusing any frame over the size limit
//! and holding at most a bounded backlog of frames the protocol has not taken (see `link`). The rustls connection state is
//! shared under a mutex that is never held across a blocking socket call, and only the writer
//! thread writes to the socket, so TLS records go out in the order they were sealed.
//!
//! **Emulated latency** ([`TcpConfig::delay`], benchmarks only). Where the kernel cannot delay
//! packets (no `netem`), a receiver can hold every frame until `delay` after its last byte was
//! read. For a frame that is what a link with one-way latency `delay` would show: its last byte
//! arrives `delay` later than on the undelayed link. Unlike `netem`, TCP acknowledgements are not
//! delayed, so congestion and flow control see a short round trip (the emulation is optimistic
//! where a real window would limit throughput).

mod handshake;
mod link;

use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use crate::certs::Identity;
use crate::frame::HEARTBEAT_LEN;
use crate::transport::check_peer;
use crate::{DEFAULT_MAX_FRAME, Frame, NetError, PartyId, Transport};
pub(crate) use handshake::{HELLO_BYTES, parse_hello};
use link::Link;
pub(crate) use link::split_frames;

/// Everything one party needs to join a session over TCP.
#[derive(Clone, Debug)]
pub struct TcpConfig {
    /// This party's id.
    pub party: PartyId,
    /// Listening address of every party, index = party id.
    pub addrs: Vec<SocketAddr>,
    /// The session id, the same at every party.
    pub session: [u8; 16],
    /// This party's certificate, key and the CA it trusts.
    pub identity: Identity,
    /// How long to keep dialing and accepting before giving up.
    pub connect_timeout: Duration,
    /// Largest frame payload accepted from a peer.
    pub max_frame: usize,
    /// Emulated one-way latency: each received frame is handed over this long after it
    /// arrived (zero in deployments; see the module docs).
    pub delay: Duration,
    /// An idle link sends a heartbeat this often, so that peers can tell this party is alive
    /// while it computes (zero: never, which makes a busy party look frozen; tests only).
    pub heartbeat: Duration,
}

/// Default heartbeat interval: a receive timeout of a few seconds tells a frozen peer from a
/// busy one.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(1);

impl TcpConfig {
    /// A configuration with a 30 s connect timeout and the default frame limit.
    pub fn new(party: PartyId, addrs: Vec<SocketAddr>, session: [u8; 16], identity: Identity) -> Self {
        TcpConfig {
            party,
            addrs,
            session,
            identity,
            connect_timeout: Duration::from_secs(30),
            max_frame: DEFAULT_MAX_FRAME,
            delay: Duration::ZERO,
            heartbeat: DEFAULT_HEARTBEAT,
        }
    }
}

/// One party's end of a TCP + TLS mesh.
pub struct TcpTransport {
    me: PartyId,
    links: Vec<Option<Link>>,
    max_frame: usize,
    delay: Duration,
}

impl TcpTransport {
    /// Binds `addrs[party]` and connects to every other party.
    pub fn connect(cfg: &TcpConfig) -> Result<Self, NetError> {
        let addr = *cfg.addrs.get(cfg.party).ok_or_else(|| {
            NetError::Config(format!("no address for party {} among {}", cfg.party, cfg.addrs.len()))
        })?;
        let listener = TcpListener::bind(addr)
            .map_err(|e| NetError::Config(format!("party {} cannot listen on {addr}: {e}", cfg.party)))?;
        Self::connect_with_listener(cfg, listener)
    }

    /// Like [`TcpTransport::connect`] with a listener bound beforehand (tests bind port 0).
    pub fn connect_with_listener(cfg: &TcpConfig, listener: TcpListener) -> Result<Self, NetError> {
        let n = cfg.addrs.len();
        if n < 2 || cfg.party >= n {
            return Err(NetError::Config(format!("party {} in a session of {n} parties", cfg.party)));
        }
        // The length field is 32 bits and its largest value marks a heartbeat.
        let max_frame = cfg.max_frame.min(HEARTBEAT_LEN as usize - 1);
        let deadline = Instant::now().checked_add(cfg.connect_timeout).ok_or_else(|| {
            NetError::Config(format!("a connect timeout of {:?} is beyond any clock", cfg.connect_timeout))
        })?;
        let streams = std::thread::scope(|s| {
            let acceptor = s.spawn(|| handshake::accept_higher(cfg, &listener, deadline));
            let dialed = handshake::dial_lower(cfg, deadline);
            let accepted = acceptor
                .join()
                .unwrap_or_else(|_| Err(NetError::Config("the accepting thread panicked".into())));
            (dialed, accepted)
        });
        let (dialed, accepted) = streams;
        let mut links: Vec<Option<Link>> = (0..n).map(|_| None).collect();
        for (peer, conn) in dialed?.into_iter().chain(accepted?) {
            links[peer] = Some(Link::start(peer, conn, max_frame, cfg.heartbeat)?);
        }
        Ok(TcpTransport { me: cfg.party, links, max_frame, delay: cfg.delay })
    }
}

impl Transport for TcpTransport {
    fn party(&self) -> PartyId {
        self.me
    }

    fn parties(&self) -> usize {
        self.links.len()
    }

    fn max_frame(&self) -> usize {
        self.max_frame
    }

    fn send(&mut self, to: PartyId, frame: Frame) -> Result<(), NetError> {
        check_peer(self.me, to, self.parties())?;
        let link = self.links[to].as_ref().ok_or(NetError::Disconnected { peer: to })?;
        link.send(frame)
    }

    fn recv(&mut self, from: PartyId, timeout: Duration) -> Result<Frame, NetError> {
        let limit = self.max_frame;
        self.recv_at_most(from, timeout, limit)
    }

    fn recv_at_most(&mut self, from: PartyId, timeout: Duration, limit: usize) -> Result<Frame, NetError> {
        check_peer(self.me, from, self.parties())?;
        let link = self.links[from].as_ref().ok_or(NetError::Disconnected { peer: from })?;
        let (arrived, frame) = link.recv(timeout, limit)?;
        let ready = arrived + self.delay;
        if let Some(wait) = ready.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        Ok(frame)
    }

    fn last_heard(&self, from: PartyId) -> Option<Instant> {
        Some(self.links.get(from)?.as_ref()?.last_heard())
    }
}

#[cfg(test)]
impl TcpTransport {
    /// Bytes received from `peer` and not yet taken (tests only).
    fn backlog(&self, peer: PartyId) -> usize {
        self.links[peer].as_ref().map_or(0, |l| l.backlog_bytes())
    }

    /// Bytes read off the socket from `peer` (tests only).
    fn bytes_read(&self, peer: PartyId) -> u64 {
        self.links[peer].as_ref().map_or(0, |l| l.bytes_read())
    }
}

#[cfg(test)]
mod tests;
