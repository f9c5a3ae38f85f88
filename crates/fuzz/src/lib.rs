//! Mutation fuzzing of every parser that reads outside data, on stable Rust.
//!
//! Each [`Target`] is a parser entry point (a model file, a tokenizer, an ONNX graph, stored
//! material, a frame stream, a protocol message, ...) with a committed seed corpus in
//! `corpus/<target>/`: valid inputs the parser accepts. [`fuzz`] runs every seed as it is,
//! then cases made of a seed and a few byte-level [`Edit`]s (bit flips, interesting integers,
//! inserted, removed, repeated or truncated bytes, numbers rewritten in text) drawn by
//! `proptest`, which shrinks a failing case to its fewest edits. A target fails when its
//! parser panics; the test binaries install [`AllocationGuard`], which turns any single
//! allocation over [`ALLOCATION_LIMIT`] into an abort, so a size read from the input that is
//! not checked before allocating is caught even when the machine could afford it.
//!
//! `proptest` was chosen over coverage-guided fuzzers because it runs on stable Rust inside
//! `cargo test` with no extra toolchain, shrinks failures, and is already a dependency; the
//! seeds stand in for coverage guidance by starting every case from a valid input, deep in
//! the parser. CI runs [`DEFAULT_CASES`] cases per target with a fixed seed; a long run sets
//! `VEIL_FUZZ_CASES` (and draws a fresh seed each time), e.g.
//! `VEIL_FUZZ_CASES=20000 cargo test --release -p veil-fuzz`. A failure writes its input to
//! `crates/fuzz/crashes/`; once fixed, it joins the target's corpus.

pub mod targets;

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestError, TestRunner};

pub use targets::{TARGETS, Target};

/// Cases per target in a default run (CI's brief run).
pub const DEFAULT_CASES: u32 = 64;

/// Largest single allocation a parser may make under the fuzzer: 256 MiB, far above what any
/// seed needs; a larger one means a size from the input was trusted.
pub const ALLOCATION_LIMIT: usize = 256 << 20;

/// The system allocator, refusing any single allocation over [`ALLOCATION_LIMIT`] (the
/// process then aborts, naming the size). Install it in a fuzzing binary with
/// `#[global_allocator]`.
pub struct AllocationGuard;

// SAFETY: every call is forwarded to `System` unchanged, or answered with null, which the
// `GlobalAlloc` contract allows for any request.
#[allow(unsafe_code, reason = "a global allocator is an unsafe trait; it only forwards to System")]
unsafe impl GlobalAlloc for AllocationGuard {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > ALLOCATION_LIMIT {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract for `alloc` is passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > ALLOCATION_LIMIT {
            return std::ptr::null_mut();
        }
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` through this allocator.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > ALLOCATION_LIMIT {
            return std::ptr::null_mut();
        }
        // SAFETY: `ptr` came from `System` through this allocator; the contract is passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// One change to an input. Positions are taken modulo the input's length (plus one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// Flip one bit.
    Flip {
        /// Where.
        at: usize,
        /// Which bit.
        bit: u8,
    },
    /// Overwrite `width` bytes (1, 2, 4 or 8) with an interesting value, little-endian.
    Word {
        /// Where.
        at: usize,
        /// The value.
        value: u64,
        /// How many bytes.
        width: u8,
    },
    /// Insert bytes.
    Insert {
        /// Where.
        at: usize,
        /// What.
        bytes: Vec<u8>,
    },
    /// Remove up to `len` bytes.
    Remove {
        /// Where.
        at: usize,
        /// How many.
        len: usize,
    },
    /// Cut the input short.
    Truncate {
        /// The new length.
        at: usize,
    },
    /// Repeat a slice of the input `times` times in place.
    Repeat {
        /// Where the slice starts.
        at: usize,
        /// Its length.
        len: usize,
        /// Extra copies.
        times: u8,
    },
    /// Replace the run of ASCII digits at or after `at` with `value` in decimal (numbers in
    /// JSON and TOML).
    Number {
        /// Where to look.
        at: usize,
        /// The new number.
        value: u64,
    },
}

/// Values that break parsers: zeros, ones, signed and unsigned limits, powers of two.
fn interesting() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => prop::sample::select(vec![
            0u64,
            1,
            2,
            0x7f,
            0x80,
            0xff,
            0x7fff,
            0xffff,
            0x7fff_ffff,
            0x8000_0000,
            0xffff_ffff,
            1 << 32,
            1 << 40,
            i64::MAX as u64,
            1 << 63,
            u64::MAX,
        ]),
        1 => any::<u64>(),
    ]
}

/// One edit.
pub fn edit() -> impl Strategy<Value = Edit> {
    let at = any::<usize>();
    prop_oneof![
        4 => (at, 0u8..8).prop_map(|(at, bit)| Edit::Flip { at, bit }),
        3 => (at, interesting(), prop::sample::select(vec![1u8, 2, 4, 8]))
            .prop_map(|(at, value, width)| Edit::Word { at, value, width }),
        2 => (at, prop::collection::vec(any::<u8>(), 1..16)).prop_map(|(at, bytes)| Edit::Insert { at, bytes }),
        2 => (at, 1usize..64).prop_map(|(at, len)| Edit::Remove { at, len }),
        1 => at.prop_map(|at| Edit::Truncate { at }),
        1 => (at, 1usize..32, 1u8..8).prop_map(|(at, len, times)| Edit::Repeat { at, len, times }),
        2 => (at, interesting()).prop_map(|(at, value)| Edit::Number { at, value }),
    ]
}

/// Applies `edits` to `seed`, in order.
pub fn apply(seed: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for e in edits {
        let pos = |at: usize, v: &Vec<u8>| at % (v.len() + 1);
        match e {
            Edit::Flip { at, bit } => {
                if !v.is_empty() {
                    let i = at % v.len();
                    v[i] ^= 1 << (bit % 8);
                }
            }
            Edit::Word { at, value, width } => {
                let i = pos(*at, &v);
                let bytes = value.to_le_bytes();
                for (k, b) in bytes.iter().take(usize::from(*width)).enumerate() {
                    match v.get_mut(i + k) {
                        Some(x) => *x = *b,
                        None => v.push(*b),
                    }
                }
            }
            Edit::Insert { at, bytes } => {
                let i = pos(*at, &v);
                v.splice(i..i, bytes.iter().copied());
            }
            Edit::Remove { at, len } => {
                let i = pos(*at, &v);
                let end = (i + len).min(v.len());
                v.drain(i..end);
            }
            Edit::Truncate { at } => {
                let i = pos(*at, &v);
                v.truncate(i);
            }
            Edit::Repeat { at, len, times } => {
                let i = pos(*at, &v);
                let end = (i + len).min(v.len());
                let piece = v[i..end].to_vec();
                for _ in 0..*times {
                    v.splice(end..end, piece.iter().copied());
                }
            }
            Edit::Number { at, value } => {
                let i = pos(*at, &v);
                if let Some(start) = v[i..].iter().position(u8::is_ascii_digit).map(|k| i + k) {
                    let end =
                        v[start..].iter().position(|b| !b.is_ascii_digit()).map_or(v.len(), |k| start + k);
                    v.splice(start..end, value.to_string().into_bytes());
                }
            }
        }
    }
    v
}

/// The crate's folder.
fn here() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The seeds of `target`, in file-name order.
///
/// # Errors
/// A missing or empty corpus folder.
pub fn corpus(target: &str) -> Result<Vec<(String, Vec<u8>)>, String> {
    let dir = here().join("corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("no corpus for {target} at {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    let seeds = files
        .into_iter()
        .map(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            std::fs::read(&p).map(|b| (name, b)).map_err(|e| format!("cannot read {}: {e}", p.display()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if seeds.is_empty() {
        return Err(format!("the corpus of {target} at {} is empty", dir.display()));
    }
    Ok(seeds)
}

/// Cases per target: `VEIL_FUZZ_CASES`, else [`DEFAULT_CASES`].
fn cases() -> (u32, bool) {
    match std::env::var("VEIL_FUZZ_CASES").ok().and_then(|v| v.parse().ok()) {
        Some(n) => (n, true),
        None => (DEFAULT_CASES, false),
    }
}

/// What a fuzzing run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// Mutated inputs tried.
    pub cases: u32,
    /// How many of them the parser accepted.
    pub accepted: u32,
}

/// Fuzzes `target`: each seed as it is (each must be accepted: a refused seed starts no case
/// deep in the parser), then mutated cases.
///
/// # Errors
/// A refused seed, or the first input that made the parser panic (shrunk), with the path it
/// was saved to.
pub fn fuzz(target: &Target) -> Result<Run, String> {
    let seeds = corpus(target.name)?;
    for (name, bytes) in &seeds {
        let accepted = std::panic::catch_unwind(|| (target.run)(bytes))
            .map_err(|_| format!("{}: the seed {name} makes the parser panic", target.name))?;
        if !accepted {
            return Err(format!("{}: the parser refuses the seed {name}", target.name));
        }
    }
    let (cases, long) = cases();
    let mut config = Config { cases, failure_persistence: None, ..Config::default() };
    if !long {
        // CI: the same cases every run.
        config.rng_seed = RngSeed::Fixed(0x7665_696c);
    }
    let mut runner = TestRunner::new(config);
    let strategy = (0..seeds.len(), prop::collection::vec(edit(), 1..6));
    let accepted = std::sync::atomic::AtomicU32::new(0);
    let result = runner.run(&strategy, |(i, edits)| {
        let input = apply(&seeds[i].1, &edits);
        let ok = std::panic::catch_unwind(|| (target.run)(&input)).map_err(|_| {
            TestCaseError::fail(format!("panicked on seed {} with edits {edits:?}", seeds[i].0))
        })?;
        accepted.fetch_add(u32::from(ok), std::sync::atomic::Ordering::Relaxed);
        Ok(())
    });
    match result {
        Ok(()) => Ok(Run { cases, accepted: accepted.into_inner() }),
        Err(TestError::Fail(why, (i, edits))) => {
            let input = apply(&seeds[i].1, &edits);
            let dir = here().join("crashes");
            let path = dir.join(format!(
                "{}-{}",
                target.name,
                hex8(veil_crypto::Hasher::new("veil/fuzz").update(&input).finalize().as_bytes())
            ));
            let saved = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, &input));
            let at = match saved {
                Ok(()) => path.display().to_string(),
                Err(e) => format!("(not saved: {e})"),
            };
            Err(format!("{}: {why}; the input is at {at}", target.name))
        }
        Err(TestError::Abort(why)) => Err(format!("{}: {why}", target.name)),
    }
}

/// The first 8 bytes of `d` in hex, a crash file's name.
fn hex8(d: &[u8]) -> String {
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
}
