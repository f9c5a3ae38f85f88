//! Parameters of primal LPN with regular noise, one set per Ferret iteration size.
//!
//! An iteration turns `k + t·h` COTs into `n = t·2^h` COTs: `k` of them are the LPN secret,
//! `t·h` run the `t` GGM trees of depth `h` that make the `t`-regular noise (one nonzero
//! position in each block of `2^h`). The sets below are the regular-noise parameters of the
//! Ferret paper (Yang, Weng, Lan, Zhang, Wang, "Ferret: Fast Extension for Correlated OT with
//! Small Communication", CCS 2020, Table 2), chosen there for 128-bit computational security
//! against the known attacks on LPN (Gaussian elimination, information-set decoding, and the
//! low-weight parity-check attacks), with `d = 10` nonzeros per row of the local linear code.

/// One LPN parameter set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LpnParams {
    /// Output length (COTs per iteration): `t · 2^h`.
    pub n: usize,
    /// Length of the LPN secret.
    pub k: usize,
    /// Noise weight: the number of GGM trees.
    pub t: usize,
    /// Depth of each GGM tree: `h = log2(n / t)`.
    pub h: u32,
}

/// Nonzero entries per row of the LPN matrix (Ferret's local linear code).
pub const LPN_D: usize = 10;

impl LpnParams {
    /// The main iteration: 10,805,248 COTs from 606,907 (Ferret, Table 2).
    pub const MAIN: LpnParams = LpnParams { n: 10_805_248, k: 589_760, t: 1_319, h: 13 };
    /// The setup iteration that bootstraps [`Self::MAIN`]: 642,048 COTs from 39,934
    /// (Ferret, Table 2).
    pub const SETUP: LpnParams = LpnParams { n: 642_048, k: 19_870, t: 2_508, h: 8 };

    /// COTs one iteration consumes: the secret and one per tree level.
    pub fn consumed(&self) -> usize {
        self.k + self.t * self.h as usize
    }

    /// Whether the set is well formed: `n = t·2^h`, `1 ≤ h ≤ 24`, `k ≥ 1`.
    pub fn is_valid(&self) -> bool {
        (1..=24).contains(&self.h) && self.k >= 1 && self.t >= 1 && self.t.checked_shl(self.h) == Some(self.n)
    }
}

/// The two parameter sets of a Ferret engine: the setup iteration (fed by OT extension) and
/// the main iteration (fed by the previous iteration's output).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FerretParams {
    /// The bootstrapping iteration.
    pub setup: LpnParams,
    /// Every following iteration.
    pub main: LpnParams,
}

impl FerretParams {
    /// 128-bit security, Ferret's Table 2.
    pub const SECURE: FerretParams = FerretParams { setup: LpnParams::SETUP, main: LpnParams::MAIN };

    /// A small set with the same structure, **insecure**, for tests that check the
    /// correlation across many iterations quickly.
    pub const INSECURE_SMALL: FerretParams = FerretParams {
        setup: LpnParams { n: 2_048, k: 300, t: 64, h: 5 },
        main: LpnParams { n: 8_192, k: 900, t: 128, h: 6 },
    };

    /// Whether both sets are well formed and the setup iteration feeds the main one, which
    /// feeds itself with something left over.
    pub fn is_valid(&self) -> bool {
        self.setup.is_valid()
            && self.main.is_valid()
            && self.setup.n >= self.main.consumed()
            && self.main.n > self.main.consumed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parameter_sets_are_well_formed_and_chain() {
        assert!(FerretParams::SECURE.is_valid());
        assert!(FerretParams::INSECURE_SMALL.is_valid());
        assert_eq!(LpnParams::MAIN.consumed(), 606_907);
        assert_eq!(LpnParams::SETUP.consumed(), 39_934);
        assert!(!LpnParams { n: 100, k: 1, t: 3, h: 5 }.is_valid());
    }
}
