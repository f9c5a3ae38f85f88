//! Real TCP + TLS on 127.0.0.1 with hard timeouts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use super::*;
use crate::Net;
use crate::certs::Deployment;

const SESSION: [u8; 16] = *b"test-session-id!";

struct Setup {
    listeners: Vec<TcpListener>,
    addrs: Vec<SocketAddr>,
}

fn listeners(n: usize) -> Setup {
    let listeners: Vec<TcpListener> = (0..n).map(|_| TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    let addrs = listeners.iter().map(|l| l.local_addr().unwrap()).collect();
    Setup { listeners, addrs }
}

fn config(d: &Deployment, party: PartyId, addrs: &[SocketAddr]) -> TcpConfig {
    let mut cfg = TcpConfig::new(party, addrs.to_vec(), SESSION, d.identity(party).unwrap());
    cfg.connect_timeout = Duration::from_secs(3);
    cfg
}

/// Connects every party with its config on its own thread; returns each party's result.
fn connect_all(cfgs: Vec<TcpConfig>, setup: Setup) -> Vec<Result<TcpTransport, NetError>> {
    std::thread::scope(|s| {
        let hs: Vec<_> = cfgs
            .into_iter()
            .zip(setup.listeners)
            .map(|(cfg, l)| s.spawn(move || TcpTransport::connect_with_listener(&cfg, l)))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn honest(n: usize) -> Vec<Net> {
    let d = Deployment::generate("t", n).unwrap();
    let setup = listeners(n);
    let cfgs = (0..n).map(|i| config(&d, i, &setup.addrs)).collect();
    connect_all(cfgs, setup)
        .into_iter()
        .map(|t| Net::new(Box::new(t.unwrap()), Duration::from_secs(10)))
        .collect()
}

#[test]
fn three_parties_exchange_in_order_including_large_frames() {
    let mut nets = honest(3);
    let big: Vec<u8> = (0..(16 << 20)).map(|i| (i % 251) as u8).collect();
    std::thread::scope(|s| {
        for (me, net) in nets.iter_mut().enumerate() {
            let big = &big;
            s.spawn(move || {
                for p in net.peers().collect::<Vec<_>>() {
                    for k in 0..50u8 {
                        net.send(p, vec![me as u8, k]).unwrap();
                    }
                    net.send(p, big.clone()).unwrap();
                }
                for p in net.peers().collect::<Vec<_>>() {
                    for k in 0..50u8 {
                        assert_eq!(net.recv(p).unwrap(), vec![p as u8, k]);
                    }
                    assert_eq!(&net.recv(p).unwrap(), big);
                }
            });
        }
    });
    let st = nets[0].stats().current();
    assert_eq!(st.messages_sent, 102);
    assert_eq!(st.bytes_sent, 2 * (100 + (16 << 20)));
    assert_eq!(st.rounds, 1);
}

#[test]
fn certificate_from_another_ca_is_refused() {
    let good = Deployment::generate("good", 2).unwrap();
    let evil = Deployment::generate("evil", 2).unwrap();
    let setup = listeners(2);
    let cfgs = vec![config(&good, 0, &setup.addrs), config(&evil, 1, &setup.addrs)];
    let t = Instant::now();
    let res = connect_all(cfgs, setup);
    assert!(t.elapsed() < Duration::from_secs(10));
    let e0 = res[0].as_ref().err().expect("party 0 must refuse").to_string();
    let e1 = res[1].as_ref().err().expect("party 1 must fail").to_string();
    // Each side distrusts the other's CA; whichever check fires first, both errors say why.
    assert!(e0.contains("deployment's CA"), "{e0}");
    assert!(e1.contains("deployment's CA"), "{e1}");
}

#[test]
fn certificate_of_party_1_presented_as_party_2_is_refused() {
    let d = Deployment::generate("t", 3).unwrap();
    let setup = listeners(3);
    let mut cfgs: Vec<TcpConfig> = (0..3).map(|i| config(&d, i, &setup.addrs)).collect();
    cfgs[2].identity = d.identity(1).unwrap();
    let res = connect_all(cfgs, setup);
    let e2 = res[2].as_ref().err().expect("party 2 must be refused").to_string();
    assert!(e2.contains("claims to be party 2") && e2.contains("party-2.veil"), "{e2}");
    assert!(res[0].is_err() && res[1].is_err());
}

#[test]
fn other_session_is_refused_in_the_handshake() {
    let d = Deployment::generate("t", 2).unwrap();
    let setup = listeners(2);
    let mut cfgs: Vec<TcpConfig> = (0..2).map(|i| config(&d, i, &setup.addrs)).collect();
    cfgs[1].session = *b"another-session!";
    let res = connect_all(cfgs, setup);
    let e1 = res[1].as_ref().err().expect("must fail").to_string();
    assert!(e1.contains("session id mismatch"), "{e1}");
}

#[test]
fn oversized_frame_is_rejected_by_the_receiver() {
    let d = Deployment::generate("t", 2).unwrap();
    let setup = listeners(2);
    let mut cfgs: Vec<TcpConfig> = (0..2).map(|i| config(&d, i, &setup.addrs)).collect();
    cfgs[1].max_frame = 1024;
    let mut ts: Vec<Net> = connect_all(cfgs, setup)
        .into_iter()
        .map(|t| Net::new(Box::new(t.unwrap()), Duration::from_secs(5)))
        .collect();
    ts[0].send(1, vec![7; 1024]).unwrap();
    ts[0].send(1, vec![7; 4096]).unwrap();
    assert_eq!(ts[1].recv(0).unwrap().len(), 1024);
    let err = ts[1].recv(0).unwrap_err();
    assert!(matches!(err, NetError::FrameTooLarge { peer: 0, len: 4096, limit: 1024 }), "{err}");
}

#[test]
fn peer_disconnecting_mid_run_is_an_error_not_a_hang() {
    let mut nets = honest(3);
    nets[2].send(0, b"last words".to_vec()).unwrap();
    let gone = nets.pop().unwrap();
    drop(gone);
    let t = Instant::now();
    assert_eq!(nets[0].recv(2).unwrap(), b"last words");
    assert!(matches!(nets[0].recv(2), Err(NetError::Disconnected { peer: 2 })));
    assert!(matches!(nets[1].recv(2), Err(NetError::Disconnected { peer: 2 })));
    assert!(t.elapsed() < Duration::from_secs(5));
    // The remaining link still works.
    nets[0].send(1, vec![1]).unwrap();
    assert_eq!(nets[1].recv(0).unwrap(), vec![1]);
}

#[test]
fn missing_peer_times_out_with_a_clear_error() {
    let d = Deployment::generate("t", 2).unwrap();
    let setup = listeners(2);
    let mut cfg = config(&d, 0, &setup.addrs);
    cfg.connect_timeout = Duration::from_millis(300);
    let l = setup.listeners.into_iter().next().unwrap();
    let err = TcpTransport::connect_with_listener(&cfg, l).err().unwrap().to_string();
    assert!(err.contains("party 1 did not connect in time"), "{err}");
}

#[test]
fn emulated_delay_holds_every_frame_for_the_one_way_latency() {
    let delay = Duration::from_millis(30);
    let d = Deployment::generate("t", 2).unwrap();
    let setup = listeners(2);
    let cfgs = (0..2)
        .map(|i| {
            let mut c = config(&d, i, &setup.addrs);
            c.delay = delay;
            c
        })
        .collect();
    let mut nets: Vec<Net> = connect_all(cfgs, setup)
        .into_iter()
        .map(|t| Net::new(Box::new(t.unwrap()), Duration::from_secs(10)))
        .collect();
    // Four ping-pongs: eight dependent one-way trips, each held for `delay` at its receiver.
    let start = Instant::now();
    std::thread::scope(|s| {
        let (a, b) = nets.split_at_mut(1);
        let (a, b) = (&mut a[0], &mut b[0]);
        s.spawn(move || {
            for k in 0..4u8 {
                a.send(1, vec![k]).unwrap();
                assert_eq!(a.recv(1).unwrap(), vec![k, k]);
            }
        });
        s.spawn(move || {
            for k in 0..4u8 {
                assert_eq!(b.recv(0).unwrap(), vec![k]);
                b.send(0, vec![k, k]).unwrap();
            }
        });
    });
    assert!(start.elapsed() >= 8 * delay, "took {:?}", start.elapsed());
}

/// The bytes a stalling peer trickles: a TLS handshake record header announcing 16 KiB, then
/// its body a byte at a time (a TLS stack waits for the whole record before it can judge it).
fn record_byte(i: usize) -> u8 {
    const HEADER: [u8; 5] = [0x16, 0x03, 0x01, 0x40, 0x00];
    HEADER.get(i).copied().unwrap_or(0)
}

/// Connects to `addr` without a certificate and sends one byte every 200 ms until `stop`
/// (a stranger stalling a party's accept loop).
fn trickle(addr: SocketAddr, stop: &std::sync::atomic::AtomicBool) {
    use std::io::Write;
    use std::sync::atomic::Ordering;
    if let Ok(mut s) = std::net::TcpStream::connect(addr) {
        for i in 0.. {
            if stop.load(Ordering::Relaxed) || s.write_all(&[record_byte(i)]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// A stranger that connects first and trickles bytes delays no one: the handshakes run side
/// by side, so the mesh forms at once (it used to wait as long as the bytes kept coming).
#[test]
fn a_stranger_trickling_bytes_does_not_hold_up_the_mesh() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let d = Deployment::generate("t", 3).unwrap();
    let setup = listeners(3);
    let addrs = setup.addrs.clone();
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let results = std::thread::scope(|s| {
        s.spawn(|| trickle(addrs[0], &stop));
        s.spawn(|| trickle(addrs[1], &stop));
        std::thread::sleep(Duration::from_millis(100));
        let cfgs = (0..3).map(|i| config(&d, i, &addrs)).collect();
        let r = connect_all(cfgs, setup);
        stop.store(true, Ordering::Relaxed);
        r
    });
    assert!(
        results.iter().all(Result::is_ok),
        "{:?}",
        results.iter().map(|r| r.as_ref().err()).collect::<Vec<_>>()
    );
    assert!(start.elapsed() < Duration::from_secs(2), "the mesh took {:?}", start.elapsed());
}

/// A flood of strangers that connect and say nothing, more than the handshakes held in
/// flight: the oldest make room, and the parties still connect at once.
#[test]
fn a_flood_of_silent_strangers_is_bounded() {
    let d = Deployment::generate("t", 2).unwrap();
    let setup = listeners(2);
    let addrs = setup.addrs.clone();
    let strangers: Vec<std::net::TcpStream> =
        (0..2 * handshake::MAX_PENDING).filter_map(|_| std::net::TcpStream::connect(addrs[0]).ok()).collect();
    assert!(strangers.len() > handshake::MAX_PENDING);
    let start = Instant::now();
    let cfgs = (0..2).map(|i| config(&d, i, &addrs)).collect();
    let results = connect_all(cfgs, setup);
    assert!(
        results.iter().all(Result::is_ok),
        "{:?}",
        results.iter().map(|r| r.as_ref().err()).collect::<Vec<_>>()
    );
    assert!(start.elapsed() < Duration::from_secs(2), "the mesh took {:?}", start.elapsed());
    drop(strangers);
}

/// Something at a party's address that accepts and trickles bytes but never completes TLS:
/// the dialing party gives up at its connect timeout, not later.
#[test]
fn a_trickling_fake_peer_cannot_stretch_the_connect_timeout() {
    use std::io::Write;
    let d = Deployment::generate("t", 2).unwrap();
    let fake = TcpListener::bind("127.0.0.1:0").unwrap();
    let mine = TcpListener::bind("127.0.0.1:0").unwrap();
    let addrs = vec![fake.local_addr().unwrap(), mine.local_addr().unwrap()];
    let mut cfg = config(&d, 1, &addrs);
    cfg.connect_timeout = Duration::from_secs(1);
    let start = Instant::now();
    let result = std::thread::scope(|s| {
        s.spawn(|| {
            if let Ok((mut sock, _)) = fake.accept() {
                for i in 0..40 {
                    if sock.write_all(&[record_byte(i)]).is_err() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        });
        TcpTransport::connect_with_listener(&cfg, mine)
    });
    let err = result.err().expect("a fake peer was accepted");
    assert!(start.elapsed() < Duration::from_millis(1800), "gave up after {:?}", start.elapsed());
    assert!(err.to_string().contains("party 0"), "{err}");
}

/// Two connected transports whose configs `tune` adjusts (party 0's, then party 1's).
fn pair(tune: impl Fn(PartyId, &mut TcpConfig)) -> (TcpTransport, TcpTransport) {
    let d = Deployment::generate("t", 2).unwrap();
    let setup = listeners(2);
    let cfgs = (0..2)
        .map(|i| {
            let mut c = config(&d, i, &setup.addrs);
            tune(i, &mut c);
            c
        })
        .collect();
    let mut v = connect_all(cfgs, setup).into_iter().map(Result::unwrap);
    (v.next().unwrap(), v.next().unwrap())
}

/// Liveness is not progress: a peer that computes for three receive timeouts before its
/// next message is waited for (its heartbeats arrive), while a peer silent for one receive
/// timeout (no heartbeats: frozen) is given up on after that timeout, not later.
#[test]
fn a_busy_peer_is_waited_for_and_a_frozen_one_is_not() {
    let timeout = Duration::from_millis(600);
    for frozen in [false, true] {
        let (a, b) = pair(|i, c| {
            c.heartbeat = if i == 1 && frozen { Duration::ZERO } else { Duration::from_millis(100) };
        });
        let mut a = Net::new(Box::new(a), timeout);
        let mut b = Net::new(Box::new(b), timeout);
        let busy = std::thread::spawn(move || {
            std::thread::sleep(3 * timeout);
            let _ = b.send(0, vec![42]);
            b
        });
        let t = Instant::now();
        let got = a.recv(1);
        if frozen {
            assert!(matches!(got, Err(NetError::Timeout { peer: 1, .. })), "{got:?}");
            assert!(t.elapsed() < 2 * timeout, "{:?}", t.elapsed());
        } else {
            assert_eq!(got.unwrap(), vec![42]);
            assert!(t.elapsed() >= 3 * timeout);
        }
        drop(busy.join().unwrap());
    }
}

/// A peer that is alive but never sends what the protocol waits for is given up on at the
/// stall limit, with an error that says so.
#[test]
fn a_live_peer_that_sends_nothing_hits_the_stall_limit() {
    let (a, b) = pair(|_, c| c.heartbeat = Duration::from_millis(100));
    let patience =
        crate::Patience { silence: Duration::from_millis(500), stall: Duration::from_millis(1500) };
    let mut a = Net::new(Box::new(a), patience);
    let t = Instant::now();
    let e = a.recv(1).unwrap_err();
    assert!(matches!(e, NetError::Stalled { peer: 1, .. }), "{e}");
    assert!(e.to_string().contains("alive but sent no message"), "{e}");
    assert!(t.elapsed() >= Duration::from_millis(1500) && t.elapsed() < Duration::from_secs(3));
    drop(b);
}

/// A peer sending far ahead of the protocol fills this party's backlog only up to its
/// bound (one largest frame plus the allowance); the rest waits in the network and the
/// sender, and everything arrives, in order, once the protocol reads.
#[test]
fn a_peer_sending_ahead_is_held_back_at_the_backlog_bound() {
    let max = 1 << 20;
    let (a, mut b) = pair(|_, c| c.max_frame = max);
    let frames = (link::BACKLOG_AHEAD + 40 * max) / max;
    for i in 0..frames {
        b.send(0, Frame { depth: 1, payload: vec![(i % 251) as u8; max] }).unwrap();
    }
    std::thread::sleep(Duration::from_secs(2));
    let held = a.backlog(1);
    assert!(held > 0 && held <= max + link::BACKLOG_AHEAD, "backlog of {held} bytes");
    let mut a = Net::new(Box::new(a), Duration::from_secs(10));
    for i in 0..frames {
        let got = a.recv(1).unwrap();
        assert!(got.len() == max && got[0] == (i % 251) as u8, "frame {i}");
    }
    drop(b);
}

/// A frame larger than the protocol step expects is refused before its bytes are read: a
/// peer's 200 MiB frame costs the receiver at most 16 MiB (plus a read's worth) until a step
/// asks for it, and a step expecting 1 MiB gets a clear error instead of the frame. A step
/// that expects that much gets it whole, and the frames after it.
#[test]
fn a_frame_larger_than_the_step_expects_is_refused_before_it_is_read() {
    let big = 200 << 20;
    for expected in [1 << 20, big] {
        let (a, mut b) = pair(|_, c| c.heartbeat = Duration::from_millis(100));
        b.send(0, Frame { depth: 1, payload: vec![7; big] }).unwrap();
        b.send(0, Frame { depth: 2, payload: vec![8; 10] }).unwrap();
        std::thread::sleep(Duration::from_secs(1));
        let unasked = a.bytes_read(1);
        assert!(unasked <= (18 << 20) as u64, "read {unasked} bytes before any step asked");
        let mut a = Net::new(Box::new(a), Duration::from_secs(10));
        let got = a.recv_at_most(1, expected);
        if expected < big {
            let e = got.unwrap_err();
            assert!(
                matches!(e, NetError::Unexpected { peer: 1, len, expected: 1048576 } if len == big as u64),
                "{e}"
            );
            assert!(e.to_string().contains("expects at most 1048576"), "{e}");
        } else {
            assert_eq!(got.unwrap().len(), big);
            assert_eq!(a.recv_at_most(1, 10).unwrap(), vec![8; 10]);
        }
        drop(b);
    }
}
