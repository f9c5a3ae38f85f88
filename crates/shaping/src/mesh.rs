//! Party namespaces linked pairwise by veth pairs, each end's egress shaped with `tc`.
//!
//! Party `i` lives in the namespace `veil-shape-<pid>-m<k>-p<i>` (`pid`: the process that made
//! it, `k`: its mesh number in that process), with the address `10.231.0.<i+1>/32` on its
//! loopback and, for every other party `j`, a veth end `to<j>` with a host route to `j`'s
//! address. Nothing else is routed: the parties can
//! only reach the addresses this mesh created. Each veth end gets a root qdisc:
//! `netem delay RTT/2 rate B` where the kernel has `netem`, else `tbf rate B` (bandwidth only;
//! [`Mesh::latency_shaped`] is then false and the caller adds the latency itself).
//!
//! **Cleanup.** [`Mesh`] removes its namespaces (and kills what still runs in them) when
//! dropped. A process killed before that leaves namespaces whose `pid` no longer exists;
//! [`cleanup_stale`] removes those, and every new [`Mesh`] calls it first. Deleting a namespace
//! deletes its veth ends, their peers and their qdiscs with them.

use std::net::Ipv4Addr;
use std::process::Command;

use crate::Profile;

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum ShapingError {
    /// `--net` names no known profile.
    #[error("unknown network profile {name:?} (known: {known})")]
    UnknownProfile {
        /// The name given.
        name: String,
        /// The known names.
        known: String,
    },
    /// Namespaces or `tc` cannot be used here.
    #[error("network shaping is not available here: {0} (needs root, `ip` and `tc`)")]
    Unavailable(String),
    /// A command failed.
    #[error("`{command}` failed: {stderr}")]
    Command {
        /// The command line.
        command: String,
        /// Its error output.
        stderr: String,
    },
}

const PREFIX: &str = "veil-shape-";

/// First three octets of every party address.
const NET: [u8; 3] = [10, 231, 0];

/// Runs a command, failing with its error output.
fn run(args: &[&str]) -> Result<String, ShapingError> {
    let (program, rest) =
        args.split_first().ok_or_else(|| ShapingError::Unavailable("empty command".into()))?;
    let out = Command::new(program).args(rest).output().map_err(|e| ShapingError::Command {
        command: args.join(" "),
        stderr: format!("cannot start {program}: {e}"),
    })?;
    if !out.status.success() {
        return Err(ShapingError::Command {
            command: args.join(" "),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Namespaces whose names start with `prefix`.
fn namespaces(prefix: &str) -> Result<Vec<String>, ShapingError> {
    Ok(run(&["ip", "netns", "list"])?
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(prefix))
        .map(str::to_string)
        .collect())
}

/// Kills every process in `ns` and deletes it.
fn remove(ns: &str) -> Result<(), ShapingError> {
    if let Ok(pids) = run(&["ip", "netns", "pids", ns]) {
        for pid in pids.split_whitespace() {
            let _ = run(&["kill", "-9", pid]);
        }
    }
    run(&["ip", "netns", "del", ns]).map(|_| ())
}

/// Removes the namespaces left by meshes whose process no longer runs; returns their names.
///
/// # Errors
/// If listing or deleting fails.
pub fn cleanup_stale() -> Result<Vec<String>, ShapingError> {
    let mut removed = Vec::new();
    for ns in namespaces(PREFIX)? {
        let owner =
            ns.strip_prefix(PREFIX).and_then(|r| r.split('-').next()).and_then(|p| p.parse::<u32>().ok());
        let alive = owner.is_some_and(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists());
        if !alive {
            remove(&ns)?;
            removed.push(ns);
        }
    }
    Ok(removed)
}

/// Whether meshes can be made here: root, `ip` and `tc` present, namespaces allowed.
///
/// # Errors
/// [`ShapingError::Unavailable`] with the reason.
pub fn available() -> Result<(), ShapingError> {
    static PROBES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let probe = format!("{PREFIX}{}-probe{k}", std::process::id());
    run(&["ip", "netns", "add", &probe]).map_err(|e| ShapingError::Unavailable(e.to_string()))?;
    let tc =
        run(&["tc", "-n", &probe, "qdisc", "show"]).map_err(|e| ShapingError::Unavailable(e.to_string()));
    remove(&probe)?;
    tc.map(|_| ())
}

/// The namespaces and links of one run; removed on drop.
#[derive(Debug)]
pub struct Mesh {
    names: Vec<String>,
    latency_shaped: bool,
}

impl Mesh {
    /// Makes `parties` namespaces, linked pairwise, shaped to `profile` (`None`: unshaped
    /// links, for the measurement a projection starts from).
    ///
    /// # Errors
    /// [`ShapingError`] if a command fails; what was made is removed again.
    pub fn create(parties: usize, profile: Option<Profile>) -> Result<Mesh, ShapingError> {
        if parties > 250 {
            return Err(ShapingError::Unavailable(format!("{parties} parties: at most 250")));
        }
        cleanup_stale()?;
        static MESHES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let pid = std::process::id();
        let k = MESHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut mesh = Mesh { names: Vec::new(), latency_shaped: false };
        for i in 0..parties {
            let ns = format!("{PREFIX}{pid}-m{k}-p{i}");
            run(&["ip", "netns", "add", &ns])?;
            mesh.names.push(ns.clone());
            run(&["ip", "-n", &ns, "link", "set", "lo", "up"])?;
            run(&["ip", "-n", &ns, "addr", "add", &format!("{}/32", Self::address(i)), "dev", "lo"])?;
        }
        let mut netem = true;
        for i in 0..parties {
            for j in i + 1..parties {
                let (a, b) = (&mesh.names[i], &mesh.names[j]);
                let (to_j, to_i) = (format!("to{j}"), format!("to{i}"));
                run(&[
                    "ip", "link", "add", &to_j, "netns", a, "type", "veth", "peer", "name", &to_i, "netns", b,
                ])?;
                for (ns, dev, me, peer) in [(a, &to_j, i, j), (b, &to_i, j, i)] {
                    run(&["ip", "-n", ns, "link", "set", dev, "up"])?;
                    let (dst, src) = (Self::address(peer).to_string(), Self::address(me).to_string());
                    run(&["ip", "-n", ns, "route", "add", &format!("{dst}/32"), "dev", dev, "src", &src])?;
                    if let Some(p) = &profile {
                        netem = netem && shape_netem(ns, dev, p).is_ok();
                        if !netem {
                            shape_tbf(ns, dev, p)?;
                        }
                    }
                }
            }
        }
        mesh.latency_shaped = profile.is_some() && netem;
        Ok(mesh)
    }

    /// Party `i`'s address.
    pub fn address(i: usize) -> Ipv4Addr {
        Ipv4Addr::new(NET[0], NET[1], NET[2], (i + 1) as u8)
    }

    /// All namespaces, in party order.
    pub fn namespaces(&self) -> &[String] {
        &self.names
    }

    /// Whether the latency is shaped too (`netem`), not only the bandwidth.
    pub fn latency_shaped(&self) -> bool {
        self.latency_shaped
    }

    /// `program args…` to run inside party `i`'s namespace.
    pub fn command(&self, i: usize, program: &std::path::Path) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", self.names.get(i).map_or("", String::as_str)]).arg(program);
        c
    }

    /// Removes the namespaces now, reporting the first failure.
    ///
    /// # Errors
    /// If a namespace cannot be deleted.
    pub fn remove(mut self) -> Result<(), ShapingError> {
        let names = std::mem::take(&mut self.names);
        names.iter().map(|n| remove(n)).collect::<Result<Vec<_>, _>>().map(|_| ())
    }
}

impl Drop for Mesh {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = remove(n);
        }
    }
}

/// `netem`: half the round trip each way, and the rate.
fn shape_netem(ns: &str, dev: &str, p: &Profile) -> Result<(), ShapingError> {
    let delay = format!("{}us", (p.rtt_ms * 500.0).round() as u64);
    let rate = format!("{}bit", p.bandwidth_bps);
    run(&[
        "tc", "-n", ns, "qdisc", "replace", "dev", dev, "root", "netem", "delay", &delay, "rate", &rate,
        "limit", "100000",
    ])
    .map(|_| ())
}

/// `tbf`: the rate only, with a burst of 10 ms of traffic (at least 256 KiB, above a veth's
/// 64 KiB segments) and a queue of 200 ms (at least 4 MiB).
fn shape_tbf(ns: &str, dev: &str, p: &Profile) -> Result<(), ShapingError> {
    let per_second = p.bandwidth_bps / 8;
    let burst = (per_second / 100).max(256 << 10).to_string();
    let limit = (per_second / 5).max(4 << 20).to_string();
    let rate = format!("{}bit", p.bandwidth_bps);
    run(&[
        "tc", "-n", ns, "qdisc", "replace", "dev", dev, "root", "tbf", "rate", &rate, "burst", &burst,
        "limit", &limit,
    ])
    .map(|_| ())
}
