//! The corrupted frame of a party started with [`FAULT_ENV`] (see the module above).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::Context;
use veil_net::Transport;
use veil_net::fault::AlterFrame;

/// A party started with this variable set to `N` corrupts the `N`-th frame it sends; set to
/// `N:grow`, it sends that frame with [`GROWTH`] bytes more than the protocol step sends.
pub const FAULT_ENV: &str = "VEIL_FAULT_CORRUPT_FRAME";

/// Bytes an oversized frame carries beyond its step's message: more than a link reads
/// before the step asks (16 MiB).
pub const GROWTH: usize = 48 << 20;

/// `transport`, or a transport that corrupts one frame when [`FAULT_ENV`] asks for it: three
/// bytes (first, middle, last) flipped, or [`GROWTH`] bytes appended, and a line on standard
/// error saying so.
pub fn faulty(transport: Box<dyn Transport>) -> anyhow::Result<Box<dyn Transport>> {
    let Ok(value) = std::env::var(FAULT_ENV) else { return Ok(transport) };
    let (number, grow) = match value.split_once(':') {
        Some((n, "grow")) => (n, true),
        _ => (value.as_str(), false),
    };
    let frame: usize = number
        .parse()
        .with_context(|| format!("{FAULT_ENV} must be a frame number, maybe with :grow, not {value:?}"))?;
    let corrupt = Arc::new(move |p: &mut Vec<u8>| {
        if grow {
            p.resize(p.len() + GROWTH, 0x5a);
            eprintln!("fault injected: frame {frame} grown by {GROWTH} bytes");
            return;
        }
        let n = p.len();
        for k in [0, n / 2, n.saturating_sub(1)] {
            if let Some(b) = p.get_mut(k) {
                *b ^= 0x5a;
            }
        }
        eprintln!("fault injected: frame {frame} corrupted");
    });
    Ok(Box::new(AlterFrame::new(transport, Some(frame), corrupt, Arc::new(AtomicBool::new(false)))))
}
