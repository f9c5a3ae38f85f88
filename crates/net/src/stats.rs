//! Communication accounting: bytes, messages and latency rounds per labelled phase.
//!
//! Rounds are counted with a logical clock (Lamport): each frame carries `depth = clock + 1`
//! where `clock` is the sender's clock at sending time; receiving a frame sets
//! `clock = max(clock, depth)`. A party's *time* is the largest depth it has sent or received,
//! so the time of the last party to finish is the length of the longest chain of dependent
//! messages — the number a network round trip multiplies. A phase's rounds at one party are its
//! time at the end minus its time at the start; a session's rounds for a phase are the maximum
//! over parties. Bytes are payload bytes (what protocols declare); the 8-byte frame header and
//! TLS records are not counted.

use std::collections::BTreeMap;

/// Counters of one phase at one party.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseStats {
    /// Payload bytes sent.
    pub bytes_sent: u64,
    /// Payload bytes received.
    pub bytes_received: u64,
    /// Frames sent.
    pub messages_sent: u64,
    /// Frames received.
    pub messages_received: u64,
    /// Latency rounds spent in this phase (see the module doc).
    pub rounds: u64,
}

impl PhaseStats {
    /// Field-wise `self - earlier`, for measuring one operation between two snapshots.
    pub fn since(&self, earlier: &PhaseStats) -> PhaseStats {
        PhaseStats {
            bytes_sent: self.bytes_sent - earlier.bytes_sent,
            bytes_received: self.bytes_received - earlier.bytes_received,
            messages_sent: self.messages_sent - earlier.messages_sent,
            messages_received: self.messages_received - earlier.messages_received,
            rounds: self.rounds - earlier.rounds,
        }
    }

    /// Field-wise sum.
    pub fn plus(&self, other: &PhaseStats) -> PhaseStats {
        PhaseStats {
            bytes_sent: self.bytes_sent + other.bytes_sent,
            bytes_received: self.bytes_received + other.bytes_received,
            messages_sent: self.messages_sent + other.messages_sent,
            messages_received: self.messages_received + other.messages_received,
            rounds: self.rounds + other.rounds,
        }
    }
}

/// Independent lanes of one party's messages: pieces of a protocol (a batch in chunks) whose
/// messages depend only on what the party held before the lanes began and on what it received
/// in the same lane, and so could travel side by side. Each lane starts at the clock the lanes
/// began at, and the clock after them is the latest any lane reached: a chunked round streamed
/// through in pieces (to bound memory) counts the rounds of one piece, not of the pieces in
/// sequence. The caller vouches for the independence; a message that depends on an earlier
/// lane's receipt must be sent after [`crate::Net::end_lanes`], or in a later lane after
/// [`crate::Net::join_lanes`].
#[derive(Clone, Copy, Debug)]
pub struct Lanes {
    start: u32,
    end: u32,
}

/// One party's counters, per phase, plus its logical clock.
#[derive(Clone, Debug)]
pub struct CommStats {
    phases: BTreeMap<String, PhaseStats>,
    order: Vec<String>,
    current: String,
    clock: u32,
    time: u32,
    phase_start: u32,
}

impl Default for CommStats {
    fn default() -> Self {
        Self::new()
    }
}

impl CommStats {
    /// Starts counting in the phase `"default"`.
    pub fn new() -> Self {
        let mut s = CommStats {
            phases: BTreeMap::new(),
            order: Vec::new(),
            current: String::new(),
            clock: 0,
            time: 0,
            phase_start: 0,
        };
        s.set_phase("default");
        s
    }

    /// Name of the phase being counted.
    pub fn phase(&self) -> &str {
        &self.current
    }

    /// Switches counting to `name` (created on first use; counts add up if revisited).
    pub fn set_phase(&mut self, name: &str) {
        self.close_rounds();
        if !self.phases.contains_key(name) {
            self.phases.insert(name.to_string(), PhaseStats::default());
            self.order.push(name.to_string());
        }
        self.current = name.to_string();
        self.phase_start = self.time;
    }

    /// Counters of one phase (zero if it never ran), rounds up to now.
    pub fn get(&self, name: &str) -> PhaseStats {
        let mut p = self.phases.get(name).copied().unwrap_or_default();
        if name == self.current {
            p.rounds += u64::from(self.time - self.phase_start);
        }
        p
    }

    /// This party's logical time: the largest message depth it has sent or received.
    ///
    /// Per-party round counts are differences of this time, and parties can be out of step
    /// (one that only sent is a round behind one that received). The rounds of an operation
    /// across parties are `max(time after) - max(time before)`, see `veil_mpc::cost`.
    pub fn time(&self) -> u64 {
        u64::from(self.time)
    }

    /// Counters of the current phase, rounds up to now.
    pub fn current(&self) -> PhaseStats {
        self.get(&self.current)
    }

    /// Sum over all phases.
    pub fn total(&self) -> PhaseStats {
        self.order.iter().fold(PhaseStats::default(), |acc, n| acc.plus(&self.get(n)))
    }

    /// `(phase, counters)` in the order the phases were first entered; empty phases are skipped.
    pub fn phases(&self) -> Vec<(String, PhaseStats)> {
        self.order
            .iter()
            .map(|n| (n.clone(), self.get(n)))
            .filter(|(_, p)| *p != PhaseStats::default())
            .collect()
    }

    /// Depth to stamp on the next frame sent, recording the send.
    pub(crate) fn on_send(&mut self, bytes: usize) -> u32 {
        let depth = self.clock.saturating_add(1);
        self.time = self.time.max(depth);
        let p = self.entry();
        p.bytes_sent += bytes as u64;
        p.messages_sent += 1;
        depth
    }

    /// Starts independent lanes ([`Lanes`]) at the current clock.
    pub(crate) fn begin_lanes(&self) -> Lanes {
        Lanes { start: self.clock, end: self.clock }
    }

    /// Ends the current lane of `lanes` and starts the next one at their start clock.
    pub(crate) fn next_lane(&mut self, lanes: &mut Lanes) {
        lanes.end = lanes.end.max(self.clock);
        self.clock = lanes.start;
    }

    /// Within the current lane, makes later messages depend on every earlier lane too.
    pub(crate) fn join_lanes(&mut self, lanes: &Lanes) {
        self.clock = self.clock.max(lanes.end);
    }

    /// Ends every lane: the clock is the latest any lane reached.
    pub(crate) fn end_lanes(&mut self, lanes: Lanes) {
        self.clock = self.clock.max(lanes.end);
    }

    /// Records a received frame of the given depth.
    pub(crate) fn on_recv(&mut self, bytes: usize, depth: u32) {
        self.clock = self.clock.max(depth);
        self.time = self.time.max(depth);
        let p = self.entry();
        p.bytes_received += bytes as u64;
        p.messages_received += 1;
    }

    fn entry(&mut self) -> &mut PhaseStats {
        self.phases.entry(self.current.clone()).or_default()
    }

    fn close_rounds(&mut self) {
        let spent = u64::from(self.time - self.phase_start);
        if let Some(p) = self.phases.get_mut(&self.current) {
            p.rounds += spent;
        }
        self.phase_start = self.time;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ping_pong_counts_two_rounds() {
        let (mut a, mut b) = (CommStats::new(), CommStats::new());
        let d = a.on_send(10);
        b.on_recv(10, d);
        let d = b.on_send(3);
        a.on_recv(3, d);
        assert_eq!(a.current().rounds, 2);
        assert_eq!(b.current().rounds, 2);
        assert_eq!(a.current().bytes_sent, 10);
        assert_eq!(a.current().bytes_received, 3);
    }

    #[test]
    fn independent_sends_are_one_round() {
        let (mut a, mut b) = (CommStats::new(), CommStats::new());
        let d1 = a.on_send(1);
        let d2 = b.on_send(1);
        a.on_recv(1, d2);
        b.on_recv(1, d1);
        let d3 = a.on_send(1);
        assert_eq!(d3, 2);
        assert_eq!(a.current().rounds, 2);
        assert_eq!(b.current().rounds, 1);
    }

    #[test]
    fn lanes_count_the_rounds_of_one_lane() {
        // Two lanes, each a ping-pong: two rounds, not four.
        let (mut a, mut b) = (CommStats::new(), CommStats::new());
        let (mut la, mut lb) = (a.begin_lanes(), b.begin_lanes());
        for _ in 0..2 {
            a.next_lane(&mut la);
            b.next_lane(&mut lb);
            let d = a.on_send(1);
            b.on_recv(1, d);
            let d = b.on_send(1);
            a.on_recv(1, d);
        }
        a.end_lanes(la);
        b.end_lanes(lb);
        assert_eq!(a.current().rounds, 2);
        assert_eq!(b.current().rounds, 2);
        // After the lanes, a message that depends on them comes next.
        assert_eq!(a.on_send(1), 3);
    }

    #[test]
    fn a_joined_lane_waits_for_the_earlier_lanes() {
        // The first lane takes three rounds; the second, after one round of its own, joins
        // them: its next message comes after the first lane's last.
        let mut a = CommStats::new();
        let mut lanes = a.begin_lanes();
        a.next_lane(&mut lanes);
        for depth in 1..=3 {
            a.on_recv(1, depth);
        }
        a.next_lane(&mut lanes);
        a.on_recv(1, 1);
        assert_eq!(a.on_send(1), 2, "before the join, the second lane is at its own clock");
        a.join_lanes(&lanes);
        assert_eq!(a.on_send(1), 4, "after the join, past the first lane's end");
        a.end_lanes(lanes);
        assert_eq!(a.on_send(1), 4);
    }

    #[test]
    fn phases_are_separate() {
        let mut a = CommStats::new();
        a.set_phase("offline");
        a.on_recv(5, 1);
        a.on_recv(5, 2);
        a.set_phase("online");
        a.on_recv(7, 3);
        assert_eq!(a.get("offline").rounds, 2);
        assert_eq!(a.get("offline").bytes_received, 10);
        assert_eq!(a.get("online").rounds, 1);
        assert_eq!(a.total().rounds, 3);
        let names: Vec<_> = a.phases().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["offline", "online"]);
    }
}
