//! One session of party processes: started, a fault injected (a party killed or frozen, a
//! stranger connecting), every exit awaited up to the run limit.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;

use super::{Fault, FaultKind, PartyEnd, RUN_LIMIT};

/// What one session of processes did.
pub(super) struct Session {
    pub(super) ends: Vec<PartyEnd>,
    pub(super) stdout: Vec<Vec<u8>>,
    pub(super) stderr: Vec<String>,
    pub(super) fault_at: Option<Instant>,
    pub(super) last_exit: Instant,
    pub(super) hang: bool,
}

/// Starts the commands, injects `fault` (kill, freeze, stranger) and waits for every party.
pub(super) fn session(
    commands: Vec<Command>,
    fault: Fault,
    addresses: &[SocketAddr],
) -> anyhow::Result<Session> {
    let start = Instant::now();
    let mut children: Vec<Child> = Vec::new();
    for mut cmd in commands {
        let child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().context("cannot start a party");
        match child {
            Ok(c) => children.push(c),
            Err(e) => {
                stop_all(&mut children);
                return Err(e);
            }
        }
    }
    let stop_stranger = Arc::new(AtomicBool::new(false));
    let stranger = match (fault.kind, fault.party) {
        (FaultKind::Stranger, Some(p)) => {
            let (addr, stop) = (addresses[p], stop_stranger.clone());
            Some(std::thread::spawn(move || trickle(addr, &stop)))
        }
        _ => None,
    };
    let readers: Vec<_> = children
        .iter_mut()
        .map(|c| {
            let (mut out, mut err) = (c.stdout.take(), c.stderr.take());
            std::thread::spawn(move || {
                let mut o = Vec::new();
                let mut e = String::new();
                if let Some(s) = out.as_mut() {
                    let _ = s.read_to_end(&mut o);
                }
                if let Some(s) = err.as_mut() {
                    let _ = s.read_to_string(&mut e);
                }
                (o, e)
            })
        })
        .collect();
    let mut exits: Vec<Option<(String, f64)>> = vec![None; children.len()];
    let mut fault_at = None;
    let mut frozen = None;
    let mut hang = false;
    loop {
        for (id, c) in children.iter_mut().enumerate() {
            if exits[id].is_none()
                && let Ok(Some(status)) = c.try_wait()
            {
                let s = match status.code() {
                    Some(0) => "ok".to_string(),
                    Some(code) => format!("exit {code}"),
                    None => "signal".to_string(),
                };
                exits[id] = Some((s, start.elapsed().as_secs_f64()));
            }
        }
        if let (Some(after), Some(p), None) = (fault.after_s, fault.party, fault_at)
            && start.elapsed().as_secs_f64() >= after
        {
            fault_at = Some(Instant::now());
            if exits[p].is_none() {
                match fault.kind {
                    FaultKind::Kill => {
                        let _ = children[p].kill();
                    }
                    FaultKind::Freeze => {
                        signal(&children[p], "-STOP");
                        frozen = Some(p);
                    }
                    _ => {}
                }
            }
        }
        // A frozen party never exits by itself: the run ends when every other party has.
        let waiting = exits.iter().enumerate().filter(|(id, e)| e.is_none() && Some(*id) != frozen).count();
        if waiting == 0 {
            break;
        }
        if start.elapsed() > RUN_LIMIT {
            hang = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let last_exit = Instant::now();
    if let Some(p) = frozen {
        signal(&children[p], "-CONT");
    }
    stop_all(&mut children);
    stop_stranger.store(true, Ordering::SeqCst);
    if let Some(s) = stranger {
        let _ = s.join();
    }
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    for r in readers {
        let (o, e) = r.join().unwrap_or_default();
        stdout.push(o);
        stderr.push(e);
    }
    let ends = exits
        .into_iter()
        .enumerate()
        .map(|(party, e)| {
            let (status, seconds) = e.unwrap_or_else(|| {
                let s = if frozen == Some(party) { "frozen" } else { "hung" };
                (s.to_string(), start.elapsed().as_secs_f64())
            });
            let said =
                stderr[party].lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
            PartyEnd { party, status, seconds, said }
        })
        .collect();
    Ok(Session { ends, stdout, stderr, fault_at, last_exit, hang })
}

/// Sends a signal with the system's `kill` (the soak runs on Unix hosts).
fn signal(child: &Child, sig: &str) {
    let _ = Command::new("kill").arg(sig).arg(child.id().to_string()).status();
}

fn stop_all(children: &mut [Child]) {
    for c in children.iter_mut() {
        let _ = c.kill();
        let _ = c.wait();
    }
}

/// A stranger: connects to `addr` again and again and sends a byte now and then, without a
/// certificate, until told to stop.
fn trickle(addr: SocketAddr, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        if let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            for _ in 0..20 {
                if stop.load(Ordering::SeqCst) || s.write_all(&[0x16]).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        } else {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
