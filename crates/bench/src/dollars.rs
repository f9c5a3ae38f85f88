//! The M&M paper's dollar cost of a two-party computation (§II-C), which its tables print beside
//! time and communication: AWS on-demand prices, CPU at $0.05132 per vCPU-hour (c7a.48xlarge:
//! $9.85344 an hour for 192 vCPUs), and traffic at $0.02 per GiB within AWS ("A2A") or $0.09
//! per GiB from AWS to the Internet ("A2I"). With each party on `c` cores for `t` hours and
//! `s + r` GiB sent by the two together:
//!
//! `A2A = 2·t·c·0.05132 + (s + r)·0.02` dollars, `A2I = 2·t·c·0.05132 + (s + r)·0.09` dollars.
//!
//! The paper's "GB" are GiB (its tables give 1024 "MB" to the GB). Veil's records fill the
//! formula with their own seconds, cores per party and bytes, so a record's cost and the
//! paper's figure differ by exactly the machine and the traffic.

use serde::Serialize;

/// Dollars per vCPU-hour.
pub const CPU_PER_CORE_HOUR: f64 = 0.05132;
/// Dollars per GiB sent between two AWS hosts.
pub const A2A_PER_GIB: f64 = 0.02;
/// Dollars per GiB sent from AWS to the Internet.
pub const A2I_PER_GIB: f64 = 0.09;

/// A computation's cost by the paper's formula, in cents, with what it was computed from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DollarCost {
    /// Cents with both parties in AWS.
    pub a2a_cents: f64,
    /// Cents with one party outside AWS.
    pub a2i_cents: f64,
    /// Seconds the formula was given.
    pub seconds: f64,
    /// Cores per party.
    pub cores_per_party: usize,
    /// GiB sent by both parties together.
    pub gib_both: f64,
}

/// The cost of `seconds` on `cores_per_party` cores at each of two parties that together sent
/// `bytes_both` bytes.
pub fn dollar_cost(seconds: f64, cores_per_party: usize, bytes_both: f64) -> DollarCost {
    let gib = bytes_both / f64::from(1u32 << 30);
    let cpu = 2.0 * seconds / 3600.0 * cores_per_party as f64 * CPU_PER_CORE_HOUR;
    DollarCost {
        a2a_cents: 100.0 * (cpu + gib * A2A_PER_GIB),
        a2i_cents: 100.0 * (cpu + gib * A2I_PER_GIB),
        seconds,
        cores_per_party,
        gib_both: gib,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: f64 = (1u64 << 30) as f64;

    /// The formula gives the paper's own figures back from its time, cores and traffic.
    #[test]
    fn the_papers_costs_come_back() {
        // Table XI, ResNet-50: 1.85 GB, 112.4 s, 4 cores, A2I 17.93¢.
        let c = dollar_cost(112.4, 4, 1.85 * GIB);
        assert!((c.a2i_cents - 17.93).abs() < 0.01, "{c:?}");
        // Table XI, BERT-base: 4.45 GB, 128.4 s, 64 cores, A2I 63.47¢.
        let c = dollar_cost(128.4, 64, 4.45 * GIB);
        assert!((c.a2i_cents - 63.47).abs() < 0.015, "{c:?}");
        // Table III, Ferret: 47.5 MB, 10.69 s, one core: 0.448¢ A2I, 0.123¢ A2A.
        let c = dollar_cost(10.69, 1, 47.5 / 1024.0 * GIB);
        assert!((c.a2i_cents - 0.448).abs() < 0.001 && (c.a2a_cents - 0.123).abs() < 0.001, "{c:?}");
    }

    #[test]
    fn nothing_costs_nothing() {
        let c = dollar_cost(0.0, 8, 0.0);
        assert_eq!((c.a2a_cents, c.a2i_cents), (0.0, 0.0));
    }
}
