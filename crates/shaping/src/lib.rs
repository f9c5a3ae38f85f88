//! Network profiles for benchmarks, links between party processes shaped by the kernel, and
//! the projection used where shaping is not available.
//!
//! A benchmark with `--net PROFILE` runs every party as its own process in its own Linux
//! network namespace ([`Mesh`]), one veth pair per pair of parties, each end's egress shaped
//! with `tc` to the profile's bandwidth (`tbf`, or `netem`'s rate) and half its round-trip
//! latency (`netem`). Where the kernel lacks `netem`, the bandwidth is still shaped and the
//! caller emulates the latency in the parties' transport ([`Mesh::latency_shaped`] says which).
//!
//! The projection ([`project`]) is the same formula every record uses when nothing is shaped:
//! measured time + rounds × RTT/2 + bytes / bandwidth, per party, the slowest party's total.

mod mesh;
mod profile;
mod projection;

pub use mesh::{Mesh, ShapingError, available, cleanup_stale};
pub use profile::{PROFILES, Profile, profile};
pub use projection::{Traffic, network_seconds, project};
