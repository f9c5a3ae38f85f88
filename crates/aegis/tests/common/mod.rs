//! Helpers shared by the aegis integration tests (each test file includes this module).

use veil_mpc::Result;

/// `n` values of `l` bits from a linear congruential generator seeded by `seed` (test data:
/// reproducible, spread over the whole ring).
pub fn random_values(seed: u64, n: usize, l: u32) -> Vec<u64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if l == 64 { s } else { s & ((1 << l) - 1) }
        })
        .collect()
}

/// Whether every server's run ended in the batch verification's abort.
pub fn aborted(results: &[Result<()>]) -> bool {
    results
        .iter()
        .all(|r| r.as_ref().is_err_and(|e| e.to_string().contains("batch multiplication verification")))
}
