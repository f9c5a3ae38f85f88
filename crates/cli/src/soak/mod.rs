//! `veil soak`: the fault-injection soak. Many seeded runs of a deployment, one process per
//! party over TLS on 127.0.0.1, each with one fault: a party killed or frozen at a random
//! moment, a server sending a corrupted or an oversized frame, a stranger holding a connection open, a
//! server's stored material damaged, or a used material file restored and served again. Every
//! run records what each party said and when it stopped, and is judged:
//!
//! - a run without an effective fault (none, a stranger, a fault that came after the party had
//!   finished) must succeed with the right output: the data owner's output against the
//!   plaintext model (cosine ≥ [`MIN_COSINE`]);
//! - an output that is released must be right, and none may be released by a run where a
//!   party stopped on a failed check;
//! - every party must stop within [`RUN_LIMIT`] (else: a hang); the detection time is from
//!   the fault to the last party's exit.
//!
//! Jobs: the main job (`embed`, `mosformer`, malicious, on a small text model: its material
//! made in the session, or stored ahead for the material faults) and a CNN job (`classify`,
//! `aegis`, malicious, the digits CNN). Faults rotate over the runs, their party, moment and
//! frame drawn from the seed.
//!
//! **The corrupted frame.** A party started with [`FAULT_ENV`]` = N` corrupts the `N`-th frame
//! it sends (counting from 0, the seed setup included) and says so on its standard error. It
//! only makes that party misbehave, as a corrupted party may; deployments never set it.

mod corrupt;
mod run;
mod session;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use rand::{Rng, SeedableRng};
use serde::Serialize;
use veil_net::PartyId;

pub use corrupt::{FAULT_ENV, faulty};

/// The longest a run may take before it counts as a hang.
pub const RUN_LIMIT: Duration = Duration::from_secs(120);

/// The least cosine similarity of a released output with the plaintext model's.
pub const MIN_COSINE: f64 = 0.99;

/// Receive timeout of the soak's deployments, seconds: a frozen party is detected after it.
const RECV_TIMEOUT_S: u64 = 5;

/// The text of the main job.
const TEXT: &str = "Hello there";

/// What `veil soak` runs.
pub struct SoakArgs {
    /// Number of runs.
    pub runs: usize,
    /// Seed of the faults' parties, moments and frames.
    pub seed: u64,
    /// The text model of the main job.
    pub text_model: PathBuf,
    /// The `.onnx` CNN of the CNN job, with its `test.safetensors` beside it.
    pub cnn: PathBuf,
    /// One JSON object per run and a summary, instead of a table.
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
enum Work {
    Embed,
    Classify,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
enum FaultKind {
    None,
    Kill,
    Freeze,
    Garbage,
    /// A frame far longer than its protocol step's message (bounded receives refuse it unread).
    Oversized,
    Stranger,
    DamagedMaterial,
    ReplayedMaterial,
}

const KINDS: [FaultKind; 8] = [
    FaultKind::None,
    FaultKind::Kill,
    FaultKind::Freeze,
    FaultKind::Garbage,
    FaultKind::Oversized,
    FaultKind::Stranger,
    FaultKind::DamagedMaterial,
    FaultKind::ReplayedMaterial,
];

/// One run's fault: its kind, its party, and when (seconds after the start) or which frame.
#[derive(Debug, Clone, Copy, Serialize)]
struct Fault {
    kind: FaultKind,
    party: Option<PartyId>,
    after_s: Option<f64>,
    frame: Option<usize>,
}

/// How one party's process ended.
#[derive(Debug, Clone, Serialize)]
struct PartyEnd {
    party: PartyId,
    /// `ok`, `exit N`, or `signal`.
    status: String,
    /// Seconds from the start of the session to its exit.
    seconds: f64,
    /// Its last line on standard error (its error, when it failed).
    said: String,
}

/// One run's record.
#[derive(Debug, Clone, Serialize)]
struct RunRecord {
    run: usize,
    work: Work,
    fault: Fault,
    /// Whether the fault took effect (a party killed before it finished, a frame corrupted, a
    /// file damaged...).
    effective: bool,
    parties: Vec<PartyEnd>,
    /// Seconds from the fault to the last party's exit, for a run that failed.
    detected_after_s: Option<f64>,
    /// The data owner printed an output.
    released: bool,
    /// Cosine similarity of the released output with the plaintext model's.
    cosine: Option<f64>,
    /// Some party outlived the run limit.
    hang: bool,
    /// `pass`, or what went wrong.
    verdict: String,
}

/// The soak's totals.
#[derive(Debug, Clone, Default, Serialize)]
struct Summary {
    runs: usize,
    faults: std::collections::BTreeMap<String, usize>,
    effective_faults: usize,
    honest_runs_failed: usize,
    wrong_outputs: usize,
    released_after_failed_check: usize,
    hangs: usize,
    max_detection_s: f64,
    failed_verdicts: usize,
}

/// Runs the soak and prints its records; an error if any run's verdict is not `pass`.
pub fn soak(args: &SoakArgs) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("cannot find the veil executable")?;
    let root = tempfile::tempdir().context("cannot create a temporary folder")?;
    let fixtures = run::Fixtures::new(args, root.path())?;
    let mut summary = Summary::default();
    for run in 0..args.runs {
        let mut rng =
            rand::rngs::StdRng::seed_from_u64(args.seed ^ (run as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let kind = KINDS[run % KINDS.len()];
        let work = match kind {
            FaultKind::DamagedMaterial | FaultKind::ReplayedMaterial => Work::Embed,
            _ if (run / KINDS.len()).is_multiple_of(2) => Work::Embed,
            _ => Work::Classify,
        };
        let fault = draw(kind, &mut rng);
        let dir = root.path().join(format!("run-{run}"));
        let record = run::one_run(&exe, &fixtures, &dir, run, work, fault)?;
        tally(&mut summary, &record);
        if args.json {
            println!("{}", serde_json::to_string(&record)?);
        } else {
            print_record(&record);
        }
    }
    if args.json {
        println!("{}", serde_json::to_string(&serde_json::json!({ "summary": summary }))?);
    } else {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    }
    if summary.failed_verdicts > 0 {
        bail!("{} of {} runs failed their verdict", summary.failed_verdicts, summary.runs);
    }
    Ok(())
}

fn draw(kind: FaultKind, rng: &mut impl Rng) -> Fault {
    let (party, after_s, frame) = match kind {
        FaultKind::None | FaultKind::ReplayedMaterial => (None, None, None),
        FaultKind::Kill | FaultKind::Freeze => {
            (Some(rng.gen_range(0..5)), Some(rng.gen_range(0.2..2.5)), None)
        }
        FaultKind::Garbage | FaultKind::Oversized => {
            (Some(rng.gen_range(0..3)), None, Some(rng.gen_range(4..120)))
        }
        FaultKind::Stranger => (Some(rng.gen_range(0..5)), None, None),
        FaultKind::DamagedMaterial => (Some(rng.gen_range(0..3)), None, None),
    };
    Fault { kind, party, after_s, frame }
}

fn tally(sum: &mut Summary, r: &RunRecord) {
    sum.runs += 1;
    let kind = serde_json::to_value(r.fault.kind)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    *sum.faults.entry(kind).or_default() += 1;
    sum.effective_faults += usize::from(r.effective);
    if !r.effective && r.verdict != "pass" {
        sum.honest_runs_failed += 1;
    }
    sum.wrong_outputs += usize::from(r.verdict.contains("wrong output"));
    sum.released_after_failed_check += usize::from(r.verdict.contains("check failed"));
    sum.hangs += usize::from(r.hang);
    if let Some(d) = r.detected_after_s {
        sum.max_detection_s = sum.max_detection_s.max(d);
    }
    sum.failed_verdicts += usize::from(r.verdict != "pass");
}

fn print_record(r: &RunRecord) {
    let fault = serde_json::to_value(r.fault.kind)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    let at = r.fault.party.map(|p| format!(" party {p}")).unwrap_or_default();
    println!(
        "run {:>3} {:<8} {:<17}{:<9} effective {:<5} detected {:>6} released {:<5} {}",
        r.run,
        format!("{:?}", r.work).to_lowercase(),
        fault,
        at,
        r.effective,
        r.detected_after_s.map(|d| format!("{d:.2}s")).unwrap_or_else(|| "-".into()),
        r.released,
        r.verdict
    );
    for e in &r.parties {
        if e.status != "ok" {
            println!("        party {} {} after {:.2}s: {}", e.party, e.status, e.seconds, e.said);
        }
    }
}
