//! Namespaces, links, shaping and cleanup, on the real kernel. Skipped (with a message) where
//! namespaces cannot be made (not root, no `ip`/`tc`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use veil_shaping::{Mesh, available, cleanup_stale, profile};

fn listed() -> String {
    String::from_utf8(Command::new("ip").args(["netns", "list"]).output().unwrap().stdout).unwrap()
}

fn skip() -> bool {
    if let Err(e) = available() {
        eprintln!("skipped: {e}");
        return true;
    }
    false
}

/// The test binary itself, re-run inside a namespace as one of the ignored helpers below.
fn helper(mesh: &Mesh, party: usize, name: &str, env: (&str, String)) -> Command {
    let mut c = mesh.command(party, &std::env::current_exe().unwrap());
    c.args(["--ignored", "--exact", name, "--nocapture"]).env(env.0, env.1);
    c
}

#[test]
fn a_shaped_mesh_limits_bandwidth_and_is_removed() {
    if skip() {
        return;
    }
    let wan100 = profile("wan100").unwrap();
    let mesh = Mesh::create(3, Some(wan100)).unwrap();
    let names = mesh.namespaces().to_vec();
    let list = listed();
    assert!(names.iter().all(|n| list.contains(n.as_str())), "{list}");
    let qdisc = |ns: &str, dev: &str| {
        String::from_utf8(
            Command::new("tc").args(["-n", ns, "qdisc", "show", "dev", dev]).output().unwrap().stdout,
        )
        .unwrap()
    };
    let q = qdisc(&names[0], "to1");
    assert!(q.contains("netem") || q.contains("tbf"), "{q}");
    // 5 MB from party 0 to party 2 at 100 Mbps takes at least 0.4 s less the burst the token
    // bucket lets through at once (256 KiB), plus the latency where netem shapes it; an
    // unshaped veth moves it in a few milliseconds.
    let bytes = 5_000_000usize;
    let mut server = helper(&mesh, 2, "probe_receiver", ("VEIL_PROBE", format!("{}:7100", Mesh::address(2))))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    let mut out = BufReader::new(server.stdout.take().unwrap());
    while !ready.contains("LISTENING") {
        ready.clear();
        assert!(out.read_line(&mut ready).unwrap() > 0, "the receiver did not start");
    }
    let start = Instant::now();
    let status =
        helper(&mesh, 0, "probe_sender", ("VEIL_PROBE", format!("{}:7100:{bytes}", Mesh::address(2))))
            .stdout(Stdio::null())
            .status()
            .unwrap();
    assert!(status.success());
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    assert!(server.wait().unwrap().success());
    let elapsed = start.elapsed().as_secs_f64();
    let floor = 8.0 * (bytes - (256 << 10)) as f64 / wan100.bandwidth_bps as f64;
    eprintln!("5 MB over a wan100 link: {elapsed:.3} s (at least {floor:.3} s)");
    assert!(elapsed >= floor, "5 MB in {elapsed:.3} s: not shaped to 100 Mbps");
    assert!(rest.contains(&format!("RECEIVED {bytes}")), "{rest}");
    mesh.remove().unwrap();
    let list = listed();
    assert!(names.iter().all(|n| !list.contains(n.as_str())), "{list}");
}

#[test]
fn namespaces_of_a_killed_run_are_cleaned_up() {
    if skip() {
        return;
    }
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "mesh_then_wait", "--nocapture"])
        .env("VEIL_MESH_CHILD", "1")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut names = Vec::new();
    let mut line = String::new();
    while names.len() < 2 {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "the child made no mesh");
        if let Some(n) = line.trim().strip_prefix("NS ") {
            names.push(n.to_string());
        }
    }
    assert!(names.iter().all(|n| listed().contains(n.as_str())));
    child.kill().unwrap(); // SIGKILL: no destructor runs
    child.wait().unwrap();
    assert!(names.iter().all(|n| listed().contains(n.as_str())), "left behind by the killed run");
    cleanup_stale().unwrap();
    let list = listed();
    assert!(names.iter().all(|n| !list.contains(n.as_str())), "{list}");
}

#[test]
#[ignore = "helper: run by namespaces_of_a_killed_run_are_cleaned_up"]
fn mesh_then_wait() {
    if std::env::var("VEIL_MESH_CHILD").is_err() {
        return;
    }
    let mesh = Mesh::create(2, Some(profile("lan").unwrap())).unwrap();
    for n in mesh.namespaces() {
        println!("NS {n}");
    }
    std::io::stdout().flush().unwrap();
    std::thread::sleep(Duration::from_secs(120));
}

#[test]
#[ignore = "helper: runs inside a namespace"]
fn probe_receiver() {
    let Ok(addr) = std::env::var("VEIL_PROBE") else { return };
    let listener = TcpListener::bind(addr).unwrap();
    println!("LISTENING");
    std::io::stdout().flush().unwrap();
    let (mut s, _) = listener.accept().unwrap();
    let mut total = 0usize;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = s.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        total += n;
    }
    println!("RECEIVED {total}");
}

#[test]
#[ignore = "helper: runs inside a namespace"]
fn probe_sender() {
    let Ok(spec) = std::env::var("VEIL_PROBE") else { return };
    let (addr, bytes) = spec.rsplit_once(':').unwrap();
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(&vec![7u8; bytes.parse().unwrap()]).unwrap();
}
