//! Throughput and latency of the TCP + mutual TLS transport on 127.0.0.1 (and of the
//! in-memory mesh, for reference).
//!
//! `cargo run --release -p veil-net --example transport_bench`
//!
//! Throughput: party 0 sends `count` messages of a given size, party 1 receives them all and
//! answers with one byte; MB/s = payload bytes / elapsed (MB = 10^6 bytes). Latency: the mean
//! round trip of a ping-pong of that size.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "benchmark program")]

use std::net::TcpListener;
use std::time::{Duration, Instant};

use veil_net::certs::Deployment;
use veil_net::mesh::mem_mesh;
use veil_net::tcp::{TcpConfig, TcpTransport};
use veil_net::{Net, Transport};

fn tls_pair() -> (Net, Net) {
    let d = Deployment::generate("bench", 2).unwrap();
    let ls: Vec<TcpListener> = (0..2).map(|_| TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    let addrs: Vec<_> = ls.iter().map(|l| l.local_addr().unwrap()).collect();
    let mut nets: Vec<Net> = std::thread::scope(|s| {
        let hs: Vec<_> = ls
            .into_iter()
            .enumerate()
            .map(|(i, l)| {
                let cfg = TcpConfig::new(i, addrs.clone(), [7; 16], d.identity(i).unwrap());
                s.spawn(move || TcpTransport::connect_with_listener(&cfg, l).unwrap())
            })
            .collect();
        hs.into_iter().map(|h| Net::new(Box::new(h.join().unwrap()), Duration::from_secs(60))).collect()
    });
    let b = nets.pop().unwrap();
    (nets.pop().unwrap(), b)
}

fn mem_pair() -> (Net, Net) {
    let mut v: Vec<Net> = mem_mesh(2)
        .into_iter()
        .map(|t| Net::new(Box::new(t) as Box<dyn Transport>, Duration::from_secs(60)))
        .collect();
    let b = v.pop().unwrap();
    (v.pop().unwrap(), b)
}

fn throughput(a: &mut Net, b: &mut Net, size: usize, count: usize) -> f64 {
    let msg = vec![0xA5u8; size];
    let t = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..count {
                b.recv(0).unwrap();
            }
            b.send(0, vec![1]).unwrap();
        });
        for _ in 0..count {
            a.send(1, msg.clone()).unwrap();
        }
        a.recv(1).unwrap();
    });
    (size * count) as f64 / t.elapsed().as_secs_f64() / 1e6
}

fn latency(a: &mut Net, b: &mut Net, size: usize, reps: usize) -> f64 {
    let msg = vec![0x5Au8; size];
    let t = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..reps {
                let m = b.recv(0).unwrap();
                b.send(0, m).unwrap();
            }
        });
        for _ in 0..reps {
            a.send(1, msg.clone()).unwrap();
            a.recv(1).unwrap();
        }
    });
    t.elapsed().as_secs_f64() / reps as f64 * 1e6
}

fn main() {
    println!("{:<10} {:>10} {:>14} {:>18}", "link", "message", "MB/s", "round trip (us)");
    for (name, make) in [("tls", tls_pair as fn() -> (Net, Net)), ("memory", mem_pair)] {
        let (mut a, mut b) = make();
        for (label, size, count, reps) in
            [("1 KB", 1 << 10, 20_000, 2_000), ("64 KB", 64 << 10, 4_000, 500), ("16 MB", 16 << 20, 24, 8)]
        {
            // Warm up, then measure.
            throughput(&mut a, &mut b, size, count / 10 + 1);
            let mbs = throughput(&mut a, &mut b, size, count);
            let rtt = latency(&mut a, &mut b, size, reps);
            println!("{name:<10} {label:>10} {mbs:>14.1} {rtt:>18.1}");
        }
    }
}
