//! The network profiles of the project's benchmark conventions (as the papers use them).

use crate::ShapingError;

/// A network: bandwidth of every link and round-trip latency between any two parties.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Profile {
    /// Name on the command line.
    pub name: &'static str,
    /// Bits per second, each direction of each link.
    pub bandwidth_bps: u64,
    /// Round-trip time in milliseconds.
    pub rtt_ms: f64,
    /// Which paper uses it.
    pub used_by: &'static str,
}

/// `lan`, `lan10`, `wan`, `wan40`, `wan100`.
pub const PROFILES: [Profile; 5] = [
    Profile { name: "lan", bandwidth_bps: 1_000_000_000, rtt_ms: 0.5, used_by: "Mosformer LAN" },
    Profile { name: "lan10", bandwidth_bps: 10_000_000_000, rtt_ms: 0.1, used_by: "common LAN baseline" },
    Profile { name: "wan", bandwidth_bps: 400_000_000, rtt_ms: 4.0, used_by: "Mosformer WAN" },
    Profile {
        name: "wan40",
        bandwidth_bps: 400_000_000,
        rtt_ms: 40.0,
        used_by: "Ditto / Mosformer 3PC comparison",
    },
    Profile { name: "wan100", bandwidth_bps: 100_000_000, rtt_ms: 80.0, used_by: "BLB WAN3" },
];

/// The profile called `name`.
///
/// # Errors
/// [`ShapingError::UnknownProfile`] naming the known ones.
pub fn profile(name: &str) -> Result<Profile, ShapingError> {
    PROFILES.iter().find(|p| p.name == name).copied().ok_or_else(|| ShapingError::UnknownProfile {
        name: name.to_string(),
        known: PROFILES.iter().map(|p| p.name).collect::<Vec<_>>().join(", "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_by_name() {
        let wan = profile("wan").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((wan.bandwidth_bps, wan.rtt_ms), (400_000_000, 4.0));
        let err = profile("moon").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("moon") && err.contains("wan100"), "{err}");
    }
}
