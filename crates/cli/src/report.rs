//! What a party reports after a run, and how the demo prints it.

use serde::{Deserialize, Serialize};
use veil_net::CommStats;

/// Counters of one phase at one party.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PhaseReport {
    /// Phase label (`setup`, `online`).
    pub phase: String,
    /// Payload bytes sent.
    pub bytes_sent: u64,
    /// Payload bytes received.
    pub bytes_received: u64,
    /// Messages sent.
    pub messages_sent: u64,
    /// Latency rounds.
    pub rounds: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// One party's report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartyReport {
    /// The party's id.
    pub party: usize,
    /// The revealed result, at the output party only.
    pub output: Option<Vec<f64>>,
    /// Per-phase counters.
    pub phases: Vec<PhaseReport>,
}

/// Per-phase reports from a party's counters and phase timings.
pub fn phases(stats: &CommStats, seconds: &[(&str, f64)]) -> Vec<PhaseReport> {
    seconds
        .iter()
        .map(|&(name, secs)| {
            let p = stats.get(name);
            PhaseReport {
                phase: name.to_string(),
                bytes_sent: p.bytes_sent,
                bytes_received: p.bytes_received,
                messages_sent: p.messages_sent,
                rounds: p.rounds,
                seconds: secs,
            }
        })
        .collect()
}

/// A plain-text table of every party's phases.
pub fn table(reports: &[PartyReport]) -> String {
    let mut s = format!(
        "{:<6} {:<7} {:>12} {:>12} {:>9} {:>7} {:>9}\n",
        "party", "phase", "bytes sent", "bytes recv", "messages", "rounds", "seconds"
    );
    for r in reports {
        for p in &r.phases {
            s.push_str(&format!(
                "{:<6} {:<7} {:>12} {:>12} {:>9} {:>7} {:>9.4}\n",
                r.party, p.phase, p.bytes_sent, p.bytes_received, p.messages_sent, p.rounds, p.seconds
            ));
        }
    }
    s
}
