//! Declared communication costs, so tests can check measured counters against them.

use veil_net::PhaseStats;

/// What one operation sends, at one party.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    /// Payload bytes sent by the party.
    pub bytes_sent: u64,
    /// Messages sent by the party.
    pub messages_sent: u64,
    /// Latency rounds.
    pub rounds: u64,
}

impl Cost {
    /// Whether the measured counters equal this declaration exactly.
    pub fn matches(&self, measured: &PhaseStats) -> bool {
        self.bytes_sent == measured.bytes_sent
            && self.messages_sent == measured.messages_sent
            && self.rounds == measured.rounds
    }
}

/// Latency rounds of an operation across parties, from each party's logical time before and
/// after it ([`veil_net::CommStats::time`]): the longest chain of dependent messages that the
/// operation added, `max(after) - max(before)`.
pub fn rounds_across(spans: &[(u64, u64)]) -> u64 {
    let before = spans.iter().map(|s| s.0).max().unwrap_or(0);
    let after = spans.iter().map(|s| s.1).max().unwrap_or(0);
    after.saturating_sub(before)
}
