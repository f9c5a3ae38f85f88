//! The offline phase inside an online run: families that make their material right before a
//! gate needs it (bounded memory) count that communication under [`OFFLINE_PHASE`] and its
//! time apart, so reports show offline and online cost separately.

use std::sync::RwLock;

use crate::{Ctx, PartyId, Result};

/// Told each time a party's phase label changes: the party and its new phase (a public fact).
pub type PhaseObserver = Box<dyn Fn(PartyId, &str) + Send + Sync>;

static OBSERVER: RwLock<Option<PhaseObserver>> = RwLock::new(None);

/// Sets (or, with `None`, clears) the observer of every party's phase changes in this process
/// (the command line's progress bar).
pub fn observe_phases(observer: Option<PhaseObserver>) {
    if let Ok(mut slot) = OBSERVER.write() {
        *slot = observer;
    }
}

/// Tells the observer, if any, that `party` entered `phase`.
pub(crate) fn phase_changed(party: PartyId, phase: &str) {
    if let Ok(slot) = OBSERVER.read()
        && let Some(f) = slot.as_ref()
    {
        f(party, phase);
    }
}

/// The communication phase offline production is counted under.
pub const OFFLINE_PHASE: &str = "offline";

thread_local! {
    /// Seconds this thread (one party) spent in [`in_offline_phase`] from inside another phase.
    static NESTED_OFFLINE_SECONDS: std::cell::Cell<f64> = const { std::cell::Cell::new(0.0) };
}

/// Seconds this party (its thread) spent making material on demand inside another phase: what
/// to subtract from that phase's wall-clock time to get its own.
pub fn nested_offline_seconds() -> f64 {
    NESTED_OFFLINE_SECONDS.with(std::cell::Cell::get)
}

/// Runs `f` with communication counted under [`OFFLINE_PHASE`] (and its time recorded when it
/// interrupts another phase).
pub fn in_offline_phase<T>(ctx: &mut Ctx, f: impl FnOnce(&mut Ctx) -> Result<T>) -> Result<T> {
    let previous = ctx.stats().phase().to_string();
    ctx.set_phase(OFFLINE_PHASE);
    let start = std::time::Instant::now();
    let out = f(ctx);
    if previous != OFFLINE_PHASE {
        let spent = start.elapsed().as_secs_f64();
        NESTED_OFFLINE_SECONDS.with(|c| c.set(c.get() + spent));
    }
    ctx.set_phase(&previous);
    out
}
