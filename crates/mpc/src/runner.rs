//! One party's life in a session, as a deployment runs it (`veil party`) and as the
//! in-process harness ([`crate::harness`]) runs each of its threads: the seed setup over the
//! party's transport, then its job, with a panic turned into an error and a failure told to
//! the peers still waiting on this party (a stop notice), so that they stop at once with the
//! reason instead of waiting out their timeout. A job that succeeds ends with the closing
//! handshake ([`veil_net::Net::finish`]): a party reports success only once every peer has
//! confirmed its own success, so no output is reported delivered that its receiver lacks.

use std::panic::{AssertUnwindSafe, catch_unwind};
use veil_crypto::{Seed, SessionId};
use veil_net::{Net, Patience, Transport};

use crate::{Ctx, MpcError, PartyId, Result};

/// A panic's payload as an error of `party`.
pub(crate) fn panicked(party: PartyId, payload: Box<dyn std::any::Any + Send>) -> MpcError {
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into());
    MpcError::Panicked { party, message }
}

/// Runs one party's whole life: seed setup, then `f`, then the closing handshake; catches
/// panics. `patience` bounds every wait on a peer (a `Duration` is the receive timeout).
pub fn run_party<T>(
    transport: Box<dyn Transport>,
    session: SessionId,
    private_seed: Seed,
    patience: impl Into<Patience>,
    f: impl FnOnce(&mut Ctx) -> Result<T>,
) -> Result<T> {
    let party = transport.party();
    let patience = patience.into();
    let outcome = catch_unwind(AssertUnwindSafe(move || {
        let mut ctx = Ctx::setup(Net::new(transport, patience), session, private_seed)?;
        let result = f(&mut ctx).and_then(|out| {
            ctx.net().finish()?;
            Ok(out)
        });
        if let Err(e) = &result {
            // Peers still waiting on us learn why, instead of seeing a bare disconnect. A party
            // that only saw another's stop notice does not repeat it.
            if !matches!(e, MpcError::Net(veil_net::NetError::PeerStopped { .. })) {
                ctx.net().notify_stop(&e.to_string());
            }
        }
        result
    }));
    outcome.unwrap_or_else(|p| Err(panicked(party, p)))
}
