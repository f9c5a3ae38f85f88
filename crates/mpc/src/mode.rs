//! The vocabulary every family and front end shares about how a session runs: the threat
//! model ([`Security`]) and the rings a family's gates work in ([`Rings`]), together a
//! [`Mode`]. A family instance carries its mode once, at construction; gates read it from
//! there, never from a parameter.

use serde::{Deserialize, Serialize};

/// The threat model a session runs under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Security {
    /// Malicious, with abort: every product and opening is verified, a deviation stops the run
    /// before anything is revealed.
    Malicious,
    /// Semi-honest (honest but curious): parties follow the protocol; no verification beyond
    /// what a family's sharing gives for free.
    SemiHonest,
}

impl Security {
    /// Both modes, the stronger first.
    pub const ALL: [Security; 2] = [Security::Malicious, Security::SemiHonest];

    /// The name used in reports and on the command line (`malicious`, `semi-honest`).
    pub fn name(self) -> &'static str {
        match self {
            Security::Malicious => "malicious",
            Security::SemiHonest => "semi-honest",
        }
    }

    /// The mode of a name [`Security::name`] gives; `None` for any other.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// The working rings of a family's comparisons and table lookups, for families that choose
/// (`mosformer`); linear layers always work in `Z_2^64`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rings {
    /// With modulus conversion (Mosformer's precision plan): ReLU and GELU in `Z_2^16` at 6
    /// fractional bits, softmax and Rsqrt in `Z_2^32` at 12.
    #[default]
    Mixed,
    /// Without modulus conversion: everything in `Z_2^64` at 16 fractional bits.
    Z64,
}

impl Rings {
    /// Both plans, the default first.
    pub const ALL: [Rings; 2] = [Rings::Mixed, Rings::Z64];

    /// The name used in reports and on the command line (`mixed`, `z64`).
    pub fn name(self) -> &'static str {
        match self {
            Rings::Mixed => "mixed",
            Rings::Z64 => "z64",
        }
    }

    /// The rings of a name [`Rings::name`] gives; `None` for any other.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.name() == name)
    }
}

/// The security mode and the gates' working rings: what a session of a family is run in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Mode {
    /// Malicious or semi-honest.
    pub security: Security,
    /// With modulus conversion (mixed rings) or all in `Z_2^64`.
    pub rings: Rings,
}

impl From<Security> for Mode {
    /// The mode with the default rings (modulus conversion).
    fn from(security: Security) -> Self {
        Mode { security, rings: Rings::Mixed }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_strangers_are_refused() {
        for s in Security::ALL {
            assert_eq!(Security::parse(s.name()), Some(s));
        }
        for r in Rings::ALL {
            assert_eq!(Rings::parse(r.name()), Some(r));
        }
        assert_eq!(Security::parse("Malicious"), None);
        assert_eq!(Rings::parse("z32"), None);
        assert_eq!(Mode::from(Security::SemiHonest).rings, Rings::Mixed);
    }
}
