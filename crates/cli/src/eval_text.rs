//! `veil eval` on text: private embeddings of every line of a file (parties as threads,
//! in-memory links: accuracy does not depend on the link), each compared with the float
//! reference; one row per sentence, then min / mean / max cosine similarity.
//!
//! With `--resume FILE` the records go to `FILE` (JSON Lines), each appended as soon as its
//! sentence is done, and sentences that already have a record there are skipped: an eval that
//! takes hours can be stopped and started again. Every record says its security and rings, and
//! a file whose records were made in another mode is refused.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use veil_runtime::Link;
use veil_runtime::families::FamilyChoice;
use veil_runtime::inference::{Material, private_inference_of, security_name};

use crate::family::FamilyArgs;

use crate::run::model_dir;

/// One sentence's accuracy.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvalRow {
    text: String,
    tokens: usize,
    security: String,
    rings: String,
    cosine_vs_plaintext: f64,
    max_abs_error: f64,
    offline_mib_per_server: f64,
    online_mib_per_server: f64,
    seconds: f64,
}

/// The records of an earlier eval in `path` (none if it does not exist yet), by sentence;
/// summary lines are skipped.
fn earlier_rows(path: &Path, (security, rings): (&str, &str)) -> anyhow::Result<HashMap<String, EvalRow>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashMap::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut rows = HashMap::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let at = || format!("{} line {}", path.display(), i + 1);
        let value: serde_json::Value =
            serde_json::from_str(line).with_context(|| format!("{}: not JSON", at()))?;
        if value.get("summary").is_some() {
            continue;
        }
        let row: EvalRow =
            serde_json::from_value(value).with_context(|| format!("{}: not an eval record", at()))?;
        if row.security != security || row.rings != rings {
            bail!(
                "{}: a record made with {} security and {} rings; this eval is {security}, {rings}",
                at(),
                row.security,
                row.rings
            );
        }
        rows.insert(row.text.clone(), row);
    }
    Ok(rows)
}

/// Runs the eval; see the module docs.
pub fn eval(
    model: Option<PathBuf>,
    sentences: &Path,
    args: &FamilyArgs,
    limit: Option<usize>,
    resume: Option<&Path>,
    json: bool,
) -> anyhow::Result<()> {
    let choice = crate::run::text_family(args)?;
    let mode = choice.mode();
    let text =
        std::fs::read_to_string(sentences).with_context(|| format!("cannot read {}", sentences.display()))?;
    let mut lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    if lines.is_empty() {
        bail!("{} has no sentences", sentences.display());
    }
    if let Some(n) = limit {
        if n == 0 {
            bail!("--limit 0: nothing to evaluate");
        }
        lines.truncate(n);
    }
    let mut earlier = match resume {
        Some(path) => earlier_rows(path, (security_name(mode.security), rings_label(&choice)))?,
        None => HashMap::new(),
    };
    let loaded = veil_nn::bert::load_hf(&model_dir(model)?, true)?;
    let mut rows = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        // A sentence listed twice is run once: its record is reused for the repeat.
        let row = match earlier.get(*line) {
            Some(row) => row.clone(),
            None => {
                let row = embed(&loaded, line, choice)?;
                if let Some(path) = resume {
                    append(path, &row)?;
                }
                earlier.insert(row.text.clone(), row.clone());
                if i == 0 {
                    let left = lines[1..].iter().filter(|l| !earlier.contains_key(**l)).count();
                    eprintln!("{}", expected_time(row.seconds, left, ("sentence", "sentences")));
                }
                row
            }
        };
        if json {
            println!("{}", serde_json::to_string(&row)?);
        } else {
            println!(
                "{:>3} {:>3} tokens  cosine {:.5}  max|err| {:.4}  {:>6.1} s  {}",
                i + 1,
                row.tokens,
                row.cosine_vs_plaintext,
                row.max_abs_error,
                row.seconds,
                row.text
            );
        }
        rows.push(row);
    }
    summarize(&loaded.name, &choice, &rows, json)
}

/// What the first item's time says of the `left` items still to run (named in the singular
/// and the plural), for standard error.
pub fn expected_time(first_s: f64, left: usize, (one, many): (&str, &str)) -> String {
    let total = first_s * left as f64;
    let human = if total < 120.0 {
        format!("{total:.0} s")
    } else if total < 7200.0 {
        format!("{:.0} minutes", total / 60.0)
    } else {
        format!("{:.1} hours", total / 3600.0)
    };
    let what = if left == 1 { one } else { many };
    format!(
        "the first took {first_s:.1} s: about {human} more for the {left} {what} left (--limit N runs fewer)"
    )
}

/// The ring plan a record names: the family's choice, or `none` for a family without one.
fn rings_label(choice: &FamilyChoice) -> &'static str {
    choice.rings_name().unwrap_or("none")
}

/// One sentence, privately, against the float reference.
fn embed(loaded: &veil_nn::bert::Model, line: &str, choice: FamilyChoice) -> anyhow::Result<EvalRow> {
    let start = std::time::Instant::now();
    let mode = choice.mode();
    let bar = crate::progress::Bar::follow(0, "secure run");
    let r = private_inference_of(loaded, line, choice, Material::OnDemand, Link::Memory)?;
    drop(bar);
    let mib = |k: usize| r.per_party[0].phases[k].bytes_sent as f64 / f64::from(1u32 << 20);
    Ok(EvalRow {
        text: line.to_string(),
        tokens: r.tokens,
        security: security_name(mode.security).into(),
        rings: rings_label(&choice).into(),
        cosine_vs_plaintext: r.cosine_vs_plaintext,
        max_abs_error: r.max_abs_error,
        offline_mib_per_server: mib(0),
        online_mib_per_server: mib(1),
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Appends one record to the resume file and flushes it.
fn append(path: &Path, row: &EvalRow) -> anyhow::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    writeln!(f, "{}", serde_json::to_string(row)?)
        .with_context(|| format!("cannot write {}", path.display()))?;
    f.flush().with_context(|| format!("cannot write {}", path.display()))
}

/// Prints min / mean / max cosine similarity.
fn summarize(model: &str, choice: &FamilyChoice, rows: &[EvalRow], json: bool) -> anyhow::Result<()> {
    let mode = choice.mode();
    let cos: Vec<f64> = rows.iter().map(|r| r.cosine_vs_plaintext).collect();
    let (min, max) = cos.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &c| (a.min(c), b.max(c)));
    let mean = cos.iter().sum::<f64>() / cos.len() as f64;
    let security = security_name(mode.security);
    if json {
        let summary = serde_json::json!({
            "summary": true, "model": model, "family": choice.name(), "security": security,
            "rings": rings_label(choice),
            "sentences": cos.len(), "cosine_min": min, "cosine_mean": mean, "cosine_max": max,
        });
        println!("{summary}");
    } else {
        println!(
            "{} sentences, {security}, {} rings: cosine vs plaintext min {min:.5} mean {mean:.5} max {max:.5}",
            cos.len(),
            rings_label(choice)
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;
    use veil_runtime::{Mode, Rings, Security};

    fn row(text: &str, rings: &str) -> String {
        format!(
            r#"{{"text":"{text}","tokens":5,"security":"malicious","rings":"{rings}","cosine_vs_plaintext":0.999,"max_abs_error":0.001,"offline_mib_per_server":1.0,"online_mib_per_server":1.0,"seconds":1.0}}"#
        )
    }

    #[test]
    fn resume_reads_records_skips_summaries_and_refuses_other_modes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("eval.jsonl");
        let z64 = Mode { security: Security::Malicious, rings: Rings::Z64 };
        let label = |m: Mode| (security_name(m.security), m.rings.name());
        assert!(earlier_rows(&path, label(z64)).unwrap().is_empty(), "no file yet: nothing done");
        std::fs::write(&path, format!("{}\n\n{}\n{{\"summary\":true}}\n", row("a", "z64"), row("b", "z64")))
            .unwrap();
        let rows = earlier_rows(&path, label(z64)).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows["b"].tokens, 5);
        let mixed = Mode { security: Security::Malicious, rings: Rings::Mixed };
        let err = earlier_rows(&path, label(mixed)).unwrap_err().to_string();
        assert!(err.contains("line 1") && err.contains("z64 rings"), "{err}");
        std::fs::write(&path, "{\"text\":\"a\"}\n").unwrap();
        let err = format!("{:#}", earlier_rows(&path, label(z64)).unwrap_err());
        assert!(err.contains("not an eval record"), "{err}");
    }
}
