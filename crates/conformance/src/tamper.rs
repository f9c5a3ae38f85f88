//! A tampering hook: one party's transport alters one frame it sends (a bit flipped in its
//! middle, or any edit a fuzzer draws), so a test can check that a malicious-secure family
//! notices (an abort or a malformed-message error at some honest party) and never hands out a
//! wrong value, and that no family panics or hangs on what a peer sends.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use veil_mpc::harness::{SimConfig, derived_secrets};
use veil_mpc::runner::run_party;
use veil_mpc::{Ctx, PartyId, Result};
use veil_net::Transport;
use veil_net::fault::AlterFrame;
use veil_net::mesh::mem_mesh;

/// Which frame to alter: the `frame`-th (from 0) that `party` sends, counting every frame of
/// the session (the seed coin toss included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tamper {
    /// The cheating party.
    pub party: PartyId,
    /// The index of the frame it alters.
    pub frame: usize,
}

pub use veil_net::fault::Alter;

/// Flips the lowest bit of the middle byte.
pub fn flip_middle(payload: &mut [u8]) {
    let middle = payload.len() / 2;
    if let Some(b) = payload.get_mut(middle) {
        *b ^= 1;
    }
}

/// Runs `f` for `n` parties over an in-memory mesh, with `tamper` applied (a bit flipped in
/// the middle of the frame); returns the results in party order and whether a frame was
/// actually altered (a frame index past the party's last frame, or an empty frame, alters
/// nothing).
pub fn simulate_tampered<T, F>(
    n: usize,
    cfg: SimConfig,
    tamper: Option<Tamper>,
    f: F,
) -> (Vec<Result<T>>, bool)
where
    T: Send,
    F: Fn(&mut Ctx) -> Result<T> + Sync,
{
    simulate_altered(n, cfg, tamper, Arc::new(|p: &mut Vec<u8>| flip_middle(p)), f)
}

/// [`simulate_tampered`] with the frame changed by `alter`.
pub fn simulate_altered<T, F>(
    n: usize,
    cfg: SimConfig,
    tamper: Option<Tamper>,
    alter: Alter,
    f: F,
) -> (Vec<Result<T>>, bool)
where
    T: Send,
    F: Fn(&mut Ctx) -> Result<T> + Sync,
{
    let altered = Arc::new(AtomicBool::new(false));
    let transports: Vec<Box<dyn Transport>> = mem_mesh(n)
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            let target = tamper.filter(|t| t.party == i).map(|t| t.frame);
            Box::new(AlterFrame::new(Box::new(t), target, alter.clone(), altered.clone()))
                as Box<dyn Transport>
        })
        .collect();
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = transports
            .into_iter()
            .enumerate()
            .map(|(i, t)| {
                let f = &f;
                s.spawn(move || {
                    let (session, private) = derived_secrets(cfg.seed, i);
                    run_party(t, session, private, cfg.timeout, f)
                })
            })
            .collect();
        handles
            .into_iter()
            .enumerate()
            .map(|(i, h)| {
                h.join().unwrap_or_else(|_| {
                    Err(veil_mpc::MpcError::Panicked { party: i, message: "a party panicked".into() })
                })
            })
            .collect()
    });
    (results, altered.load(Ordering::SeqCst))
}

/// What [`sweep`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sweep {
    /// Alterations some party stopped on with a check (an abort or a malformed message).
    pub detected: usize,
    /// Alterations no party stopped on with a check, every honest output still right:
    /// `(party, frame, what each party's run ended with)`.
    pub unnoticed: Vec<(PartyId, usize, String)>,
}

/// Alters, one run at a time, frames of every party between the points `job` reports: `job`
/// returns its output and the number of frames its party had sent when the part under test
/// started and when it ended; up to `per_party` frames of that span are swept per party. Each
/// altered frame gets an additive error on the wire (`+2^b` on one byte: the first, middle or
/// last, rotating), i.e. on one element of the message. An error the protocol cannot see
/// because it changes nothing (bits above what a value is read modulo, such as the top bits of
/// a MAC'd `Z_2^128` word whose value is read mod `2^64`) is tried again as `+1` on the first
/// byte; a frame counts as unnoticed only if that goes unnoticed too.
///
/// # Errors
/// A party panicked, or an honest party output another value than in the honest run.
pub fn sweep<T, F>(n: usize, cfg: SimConfig, per_party: usize, job: F) -> std::result::Result<Sweep, String>
where
    T: Send + PartialEq + std::fmt::Debug,
    F: Fn(&mut Ctx) -> Result<(T, usize, usize)> + Sync,
{
    let (honest, _) = simulate_tampered(n, cfg, None, &job);
    let honest: Vec<(T, usize, usize)> =
        honest.into_iter().collect::<Result<_>>().map_err(|e| format!("the honest run failed: {e}"))?;
    let mut found = Sweep::default();
    for (cheater, (_, start, end)) in honest.iter().enumerate() {
        let step = (end - start).div_ceil(per_party.max(1)).max(1);
        for (k, frame) in (*start..*end).step_by(step).enumerate() {
            let t = Tamper { party: cheater, frame };
            let mut verdict = None;
            for (at, bit) in [(k % 3, k % 8), (0, 0)] {
                let alter: Alter = Arc::new(move |p: &mut Vec<u8>| {
                    let i = match at {
                        0 => 0,
                        1 => p.len() / 2,
                        _ => p.len().saturating_sub(1),
                    };
                    if let Some(b) = p.get_mut(i) {
                        *b = b.wrapping_add(1 << bit);
                    }
                });
                let (outs, altered) = simulate_altered(n, cfg, Some(t), alter, &job);
                if !altered {
                    break;
                }
                let unnoticed = judge(cheater, frame, outs, &honest)?;
                let detected = unnoticed.is_none();
                verdict = Some(unnoticed);
                if detected {
                    break;
                }
            }
            match verdict {
                Some(None) => found.detected += 1,
                Some(Some(ends)) => found.unnoticed.push((cheater, frame, ends)),
                None => {}
            }
        }
    }
    Ok(found)
}

/// `None` if some party stopped on a check; else how each party's run ended.
fn judge<T: PartialEq>(
    cheater: PartyId,
    frame: usize,
    outs: Vec<Result<(T, usize, usize)>>,
    honest: &[(T, usize, usize)],
) -> std::result::Result<Option<String>, String> {
    let mut caught = false;
    let mut ends = Vec::new();
    for (i, out) in outs.into_iter().enumerate() {
        ends.push(match &out {
            Ok(_) => format!("party {i}: ok"),
            Err(e) => format!("party {i}: {e}"),
        });
        match out {
            Ok((o, ..)) if i != cheater && o != honest[i].0 => {
                return Err(format!(
                    "party {cheater} altered its frame {frame}; party {i} output a wrong value"
                ));
            }
            Err(veil_mpc::MpcError::Panicked { message, .. }) => {
                return Err(format!(
                    "party {cheater} altered its frame {frame}; party {i} panicked: {message}"
                ));
            }
            Err(veil_mpc::MpcError::Abort { .. } | veil_mpc::MpcError::Malformed { .. }) => caught = true,
            _ => {}
        }
    }
    Ok((!caught).then(|| ends.join("; ")))
}
