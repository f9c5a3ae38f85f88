//! The allocator's thresholds for a `veil` process (glibc on Linux).
//!
//! HE ciphertexts and share vectors are blocks of hundreds of KiB that a protocol allocates and
//! frees over and over. By default glibc maps such a block on its own and unmaps it when freed,
//! or trims the heap top as soon as 2× the (adaptive) mapping threshold is free, so the next
//! block of the same size faults its pages in again (a fault and a zeroed page per 4 KiB). Here
//! blocks below 4 MiB come from the heap and up to 64 MiB of free heap top stays mapped: CKKS
//! ct×ct with relinearisation at N = 32768 runs in 28 ms instead of 41, while the main job's
//! peak memory stays the same within 2% (measured side by side; see `docs/he.md`). Larger
//! blocks are still mapped and returned at once.
//!
//! glibc also gives threads up to 8 arenas per core, and each arena keeps what its threads
//! freed. When rayon's workers allocate and free large buffers (aegis's sign checks unpack
//! every received chunk on them), that memory stays spread over many arenas: VGG-16 at batch 30
//! under aegis peaked at 13.0–13.3 GiB for the three servers, against 12.1 GiB with one arena
//! per core. So the arenas are capped at one per core (at least two): LeNet at batch 30 under
//! aegis verified in the same time or less with it (16 alternated runs: 0.991 against
//! 1.037 s), its peak 322 → 266 MiB. A `GLIBC_TUNABLES` setting of the allocator wins over
//! all of these.
#![allow(unsafe_code)]

/// Blocks from this size up are mapped on their own.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: i32 = 4 << 20;
/// Free memory at the heap top above this size is returned to the system.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD: i32 = 64 << 20;

/// Sets the thresholds, first thing in `main` (before any other thread starts).
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        if std::env::var("GLIBC_TUNABLES").is_ok_and(|t| t.contains("glibc.malloc.")) {
            return;
        }
        let arenas = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 1024) as i32;
        // SAFETY: `mallopt` only sets three of the allocator's parameters (it takes its own
        // lock); every value is in the range glibc accepts. A refusal (return 0) leaves the
        // default.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
            libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
            libc::mallopt(libc::M_ARENA_MAX, arenas);
        }
    }
}
