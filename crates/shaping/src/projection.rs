//! Time on a network from time measured without one: `measured + rounds × RTT/2 + bytes / B`.
//!
//! A round is one hop of the longest chain of dependent messages (`veil_net`'s logical clock),
//! and one message waits for the one-way latency, half the round trip: a ping-pong is two
//! rounds and one RTT. Shaped runs agree (`docs/network.md`): charging a whole RTT per round
//! doubled the latency term.
//!
//! Per party, `bytes` is what it sent and `rounds` the longest chain of dependent messages it
//! took part in; the run's projected time is the measured time plus the largest party's
//! network time. Sending to two peers at once goes over two links in a deployment, so
//! dividing a party's total by one link's bandwidth overestimates when a party feeds both
//! peers at the same moment and is exact when it sends to one peer at a time, which is what
//! the three-party protocols do in most rounds.

use crate::Profile;

/// What one party sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Bytes sent (payload).
    pub bytes_sent: u64,
    /// Latency rounds.
    pub rounds: u64,
}

/// `rounds × RTT/2 + 8·bytes / bandwidth` for one party, in seconds.
pub fn network_seconds(t: &Traffic, p: &Profile) -> f64 {
    t.rounds as f64 * p.rtt_ms / 2000.0 + 8.0 * t.bytes_sent as f64 / p.bandwidth_bps as f64
}

/// `measured_s` plus the slowest party's [`network_seconds`].
pub fn project(measured_s: f64, parties: &[Traffic], p: &Profile) -> f64 {
    measured_s + parties.iter().map(|t| network_seconds(t, p)).fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile;

    #[test]
    fn projection_adds_the_slowest_party() {
        let wan = profile("wan").unwrap_or_else(|e| panic!("{e}"));
        // 50 MB at 400 Mbps = 1 s, plus 500 rounds × 2 ms (half of the 4 ms round trip) = 1 s.
        let a = Traffic { bytes_sent: 50_000_000, rounds: 500 };
        let b = Traffic { bytes_sent: 1, rounds: 1 };
        assert!((network_seconds(&a, &wan) - 2.0).abs() < 1e-9);
        let no_rounds = Traffic { rounds: 0, ..a };
        assert!((network_seconds(&no_rounds, &wan) - 1.0).abs() < 1e-9);
        assert!((project(3.0, &[b, a], &wan) - 5.0).abs() < 1e-9);
        assert_eq!(project(3.0, &[], &wan), 3.0);
    }
}
