//! `veil demo`: every party as its own process on 127.0.0.1, linked by mutual TLS.
//!
//! It creates a deployment in a work folder (CA, party certificates, config, the two parties'
//! secret inputs), starts `veil party` once per party, waits for all of them (killing them all
//! if one fails or the time limit passes), and prints the output party's result beside the
//! plaintext product with every party's bytes, messages and rounds.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde::Serialize;

use crate::config::{Config, Job, PartyEntry};
use crate::report::table;
use veil_runtime::PartyReport;

const X: [f64; 6] = [1.5, -2.25, 3.0, 0.125, 100.0, -0.5];
const Y: [f64; 6] = [2.0, 4.0, -1.5, 8.0, 0.01, -0.5];
const OUTPUT: usize = 0;
const LIMIT: Duration = Duration::from_secs(120);

#[derive(Serialize)]
struct DemoReport {
    job: &'static str,
    parties: usize,
    transport: &'static str,
    output_party: usize,
    result: Vec<f64>,
    plaintext: Vec<f64>,
    max_abs_error: f64,
    per_party: Vec<PartyReport>,
}

/// Runs the demo with `parties` processes.
pub fn run(parties: usize, json: bool, workdir: Option<PathBuf>) -> anyhow::Result<()> {
    if parties < 2 {
        bail!("the demo needs at least 2 parties");
    }
    let temp = match &workdir {
        Some(_) => None,
        None => Some(tempfile::tempdir().context("cannot create a temporary folder")?),
    };
    let dir: &Path = workdir.as_deref().or(temp.as_ref().map(|t| t.path())).context("no work folder")?;
    let config = prepare(dir, parties)?;
    let reports = launch(dir, &config, parties)?;
    let result =
        reports.iter().find_map(|r| r.output.clone()).context("the output party reported no result")?;
    let plaintext: Vec<f64> = X.iter().zip(Y).map(|(a, b)| a * b).collect();
    let max_abs_error = result.iter().zip(&plaintext).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    let report = DemoReport {
        job: "demo-mul",
        parties,
        transport: "tcp+tls1.3 (mutual auth), separate processes",
        output_party: OUTPUT,
        result,
        plaintext,
        max_abs_error,
        per_party: reports,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "Veil demo: {parties} parties, each a separate process, linked by TLS 1.3 with mutual authentication."
    );
    println!(
        "Party 0 holds x = {X:?}, party 1 holds y = {Y:?}; both are secret-shared in Z_2^64 (16 fractional bits)."
    );
    println!(
        "Product x*y (Beaver multiplication; triples from the INSECURE test dealer) revealed to party {OUTPUT} only:"
    );
    println!("  secure:    {:?}", report.result);
    println!("  plaintext: {:?}", report.plaintext);
    println!("  max |error| = {:.3e}\n", report.max_abs_error);
    print!("{}", table(&report.per_party));
    println!(
        "(bytes are payload bytes; rounds = longest chain of dependent messages; setup = seed coin toss)"
    );
    Ok(())
}

/// `veil demo` (the main job): a private sentence embedding with all-MiniLM-L6-v2 (or
/// `--model`), every party a separate `veil party` process on 127.0.0.1 over mutual TLS —
/// under `mosformer`, servers 0, 1, 2, the data owner 3 (holds the text, alone gets the
/// embedding) and the model owner 4 (holds the weights); under `mm`, the client 0 (the text)
/// and the server 1 (the weights), who compute together. The launcher then computes the float reference on the same
/// text (it holds both inputs, being the demo) and prints the cosine similarity and the report.
pub fn run_embed(
    model: Option<PathBuf>,
    text: &str,
    (family, security, offline): (&str, Option<&str>, Option<&str>),
    json: bool,
    workdir: Option<PathBuf>,
) -> anyhow::Result<()> {
    use veil_runtime::families::{FamilyChoice, Request};
    use veil_runtime::inference::report;
    let request = Request {
        family: Some(family),
        security: security.map(crate::bench::parse_security).transpose()?,
        ..Request::default()
    };
    let choice = FamilyChoice::new(&request, "mosformer")?;
    if !choice.family.info.runs_transformers() {
        anyhow::bail!("{family} does not run transformers; the demo embeds a sentence");
    }
    let offline = offline.map_or_else(|| choice.default_material().name().to_string(), str::to_string);
    let material = crate::run::parse_offline(&offline)?;
    let (parties, data_owner) = (choice.topology.parties(), choice.topology.roles.data_owner);
    let dir_model = crate::run::model_dir(model)?;
    let loaded = veil_nn::bert::load_hf(&dir_model, true)?;
    let ids = veil_nn::bert::tokenize(&loaded, text)?;
    let peaks = crate::memory::text_job_peaks(&choice, &loaded.graph, Some(ids.len()), &material)?;
    crate::memory::warn_if_short(peaks.iter().sum());
    let temp = match &workdir {
        Some(_) => None,
        None => Some(tempfile::tempdir().context("cannot create a temporary folder")?),
    };
    let dir: &Path = workdir.as_deref().or(temp.as_ref().map(|t| t.path())).context("no work folder")?;
    let job = Job::Embed {
        family: choice.name().into(),
        security: Some(choice.security.name().into()),
        offline: Some(offline),
        rings: choice.rings_name().map(str::to_string),
        owners: None,
    };
    let config = prepare_config(dir, parties, job, veil_runtime::inference::OWNER_WAIT_S)?;
    let exe = std::env::current_exe().context("cannot find the veil executable")?;
    let commands = (0..parties)
        .map(|id| {
            let mut cmd = Command::new(&exe);
            cmd.arg("party").arg("--config").arg(&config).arg("--id").arg(id.to_string()).arg("--json");
            cmd.arg("--model").arg(&dir_model);
            if id == data_owner {
                cmd.arg("--text").arg(text);
            }
            cmd
        })
        .collect();
    let per_party = launch_parties(commands, EMBED_LIMIT)?;
    let mut r =
        report(&loaded, text, &ids, choice, "tcp+tls1.3 (mutual auth), one process per party", per_party)?;
    r.peak_rss_mib = None;
    crate::run::print_report(&r, json)
}

const EMBED_LIMIT: Duration = Duration::from_secs(1800);

/// Writes certificates, the config and the inputs into `dir`; returns the config path.
fn prepare(dir: &Path, parties: usize) -> anyhow::Result<PathBuf> {
    let path = prepare_config(dir, parties, Job::DemoMul { length: X.len(), output: OUTPUT }, 60)?;
    std::fs::write(dir.join("input-0.json"), serde_json::to_string(&X)?)?;
    std::fs::write(dir.join("input-1.json"), serde_json::to_string(&Y)?)?;
    Ok(path)
}

/// Writes the CA, the party certificates and a config for `job` into `dir`, the parties on
/// free ports of 127.0.0.1.
/// Peers are given up on after 60 s of silence, or `stall_timeout_s` without a message.
fn prepare_config(dir: &Path, parties: usize, job: Job, stall_timeout_s: u64) -> anyhow::Result<PathBuf> {
    // Free ports: bind port 0, note the port, release it for the party to bind.
    let listeners = (0..parties)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<std::io::Result<Vec<_>>>()
        .context("cannot bind on 127.0.0.1")?;
    let addresses = listeners.iter().map(TcpListener::local_addr).collect::<std::io::Result<Vec<_>>>()?;
    drop(listeners);
    prepare_config_at(dir, addresses, job, stall_timeout_s)
}

/// [`prepare_config`] with the parties at the given addresses.
pub(crate) fn prepare_config_at(
    dir: &Path,
    addresses: Vec<SocketAddr>,
    job: Job,
    stall_timeout_s: u64,
) -> anyhow::Result<PathBuf> {
    let certs = dir.join("certs");
    veil_net::certs::Deployment::generate("demo", addresses.len())?.write(&certs)?;
    let party = addresses
        .into_iter()
        .enumerate()
        .map(|(i, address)| PartyEntry {
            address,
            cert: PathBuf::from(format!("certs/party-{i}.pem")),
            key: PathBuf::from(format!("certs/party-{i}.key")),
        })
        .collect();
    let session: [u8; 16] = rand::random();
    let cfg = Config {
        session: hex::encode(session),
        ca: PathBuf::from("certs/ca.pem"),
        connect_timeout_s: 30,
        recv_timeout_s: 60,
        stall_timeout_s,
        link_delay_us: 0,
        party,
        job,
    };
    let path = dir.join("deployment.toml");
    std::fs::write(&path, toml::to_string(&cfg)?).context("cannot write the config")?;
    Ok(path)
}

/// Starts one `veil party` process per party and collects their JSON reports.
fn launch(dir: &Path, config: &Path, parties: usize) -> anyhow::Result<Vec<PartyReport>> {
    let exe = std::env::current_exe().context("cannot find the veil executable")?;
    let commands = (0..parties)
        .map(|id| {
            let mut cmd = Command::new(&exe);
            cmd.arg("party").arg("--config").arg(config).arg("--id").arg(id.to_string()).arg("--json");
            if id < 2 {
                cmd.arg("--input").arg(dir.join(format!("input-{id}.json")));
            }
            cmd
        })
        .collect();
    launch_parties(commands, LIMIT)
}

/// [`launch_commands`] for `veil party --json` processes: their JSON reports.
pub(crate) fn launch_parties<T: serde::de::DeserializeOwned>(
    commands: Vec<Command>,
    limit: Duration,
) -> anyhow::Result<Vec<T>> {
    launch_commands(commands, limit)?
        .iter()
        .enumerate()
        .map(|(id, out)| {
            serde_json::from_slice(out).with_context(|| format!("party {id} printed no valid report"))
        })
        .collect()
}

/// Starts the party processes, waits for all (killing all if one fails or `limit` passes) and
/// returns their standard outputs (parties print one report at the end). Party 0's progress
/// lines draw a bar here; the parties' other standard-error lines make the error message.
fn launch_commands(commands: Vec<Command>, limit: Duration) -> anyhow::Result<Vec<Vec<u8>>> {
    let mut children: Vec<Child> = Vec::new();
    for mut cmd in commands {
        cmd.env(crate::progress::LINES_ENV, "1");
        let child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
        match child {
            Ok(c) => children.push(c),
            Err(e) => {
                kill_all(&mut children);
                return Err(e).context("cannot start a party process");
            }
        }
    }
    let bar = crate::progress::Bar::new("parties");
    std::thread::scope(|scope| {
        let readers: Vec<_> = children
            .iter_mut()
            .enumerate()
            .map(|(id, c)| {
                let (stderr, bar) = (c.stderr.take(), &bar);
                scope.spawn(move || {
                    stderr.map(|s| crate::progress::Bar::read_lines((id == 0).then_some(bar), s))
                })
            })
            .collect();
        let waited = wait_all(&mut children, limit);
        let errors: Vec<String> =
            readers.into_iter().map(|r| r.join().ok().flatten().unwrap_or_default()).collect();
        let said = |id: usize| errors.get(id).map_or("", |e| e.trim()).to_string();
        match waited {
            Ok(()) => Ok(()),
            Err(Stopped::Failed(id, status)) => bail!("party {id} failed ({status}): {}", said(id)),
            Err(Stopped::Lost(id, e)) => bail!("party {id} cannot be waited for: {e}"),
            Err(Stopped::OutOfTime) => bail!("the parties did not finish within {limit:?}"),
        }
    })?;
    drop(bar);
    children.into_iter().map(|c| Ok(c.wait_with_output()?.stdout)).collect()
}

/// Why [`wait_all`] stopped the parties.
enum Stopped {
    /// A party exited with a failure.
    Failed(usize, std::process::ExitStatus),
    /// A party's status could not be read.
    Lost(usize, std::io::Error),
    /// The time limit passed.
    OutOfTime,
}

/// Waits for every child; on a failure or past `limit`, kills all and says why.
fn wait_all(children: &mut [Child], limit: Duration) -> Result<(), Stopped> {
    let start = Instant::now();
    loop {
        let mut all_done = true;
        for id in 0..children.len() {
            match children[id].try_wait() {
                Ok(Some(status)) if !status.success() => {
                    kill_all(children);
                    return Err(Stopped::Failed(id, status));
                }
                Ok(Some(_)) => {}
                Ok(None) => all_done = false,
                Err(e) => {
                    kill_all(children);
                    return Err(Stopped::Lost(id, e));
                }
            }
        }
        if all_done {
            return Ok(());
        }
        if start.elapsed() > limit {
            kill_all(children);
            return Err(Stopped::OutOfTime);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kill_all(children: &mut [Child]) {
    for c in children.iter_mut() {
        let _ = c.kill();
        let _ = c.wait();
    }
}
