//! Progress bars on long runs: a bar on standard error (drawn only when it is a terminal) that
//! follows one party's secure run: its phase (setup, offline while the preprocessing is made,
//! online, verify; `veil_mpc::phase`), the model's nodes as they finish (`veil_nn::progress`)
//! and the time left at the current pace. A `veil party` process started by a launcher
//! (`veil demo`) prints its progress as lines instead, which the launcher reads to draw one bar
//! for the whole deployment.

use std::io::BufRead;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use veil_nn::progress::{Step, observe};

/// The environment variable that makes `veil party` print progress lines.
pub const LINES_ENV: &str = "VEIL_PROGRESS_LINES";
/// The prefix of a progress line: `veil-progress DONE NODES SCOPE`.
const LINE_PREFIX: &str = "veil-progress ";
/// The prefix of a phase line: `veil-phase PHASE`.
const PHASE_PREFIX: &str = "veil-phase ";

/// What the bar says while a party is in `phase`.
fn phase_words(phase: &str) -> &'static str {
    match phase {
        "setup" => "setup: keys, input sizes",
        "offline" => "offline: making preprocessing",
        "online" => "online",
        "verify" => "verifying before output",
        _ => "",
    }
}

/// A bar for the secure runs of this process; cleared when dropped (and the observer it set,
/// if any, removed).
pub struct Bar {
    bar: ProgressBar,
    observing: bool,
}

impl Bar {
    /// A bar (hidden when standard error is not a terminal).
    pub fn new(what: &str) -> Bar {
        let bar = ProgressBar::new(1);
        let style = ProgressStyle::with_template(
            "{spinner} {prefix:<30} {msg:<22} [{bar:24}] {pos}/{len} nodes {elapsed} (left ~{eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
        bar.set_style(style);
        bar.set_message(what.to_string());
        bar.enable_steady_tick(Duration::from_millis(200));
        Bar { bar, observing: false }
    }

    /// A bar that follows `party`'s secure runs in this process.
    pub fn follow(party: usize, what: &str) -> Bar {
        let mut me = Bar::new(what);
        me.observing = true;
        let bar = me.bar.clone();
        observe(Some(Box::new(move |s: &Step<'_>| {
            if s.party == party {
                bar.set_length(s.nodes as u64);
                bar.set_position(s.done as u64);
                bar.set_message(s.scope.to_string());
            }
        })));
        let bar = me.bar.clone();
        veil_mpc::phase::observe_phases(Some(Box::new(move |p, phase| {
            if p == party {
                bar.set_prefix(phase_words(phase));
            }
        })));
        me
    }

    /// Reads a launched party's standard error: progress lines move the bar if one is given,
    /// the other lines are returned (for error messages).
    pub fn read_lines(bar: Option<&Bar>, stderr: impl std::io::Read) -> String {
        let mut rest = String::new();
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(phase) = line.strip_prefix(PHASE_PREFIX) {
                if let Some(Bar { bar, .. }) = bar {
                    bar.set_prefix(phase_words(phase));
                }
                continue;
            }
            match (parse_line(&line), bar) {
                (Some(_), None) => {}
                (Some((done, nodes, scope)), Some(Bar { bar, .. })) => {
                    bar.set_length(nodes);
                    bar.set_position(done);
                    bar.set_message(scope.to_string());
                }
                (None, _) => {
                    rest.push_str(&line);
                    rest.push('\n');
                }
            }
        }
        rest
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if self.observing {
            observe(None);
            veil_mpc::phase::observe_phases(None);
        }
        self.bar.finish_and_clear();
    }
}

/// For `veil party`: progress lines on standard error when a launcher asked for them
/// ([`LINES_ENV`]), else a bar.
pub fn for_party(party: usize) -> Option<Bar> {
    if std::env::var_os(LINES_ENV).is_some() {
        observe(Some(Box::new(move |s: &Step<'_>| {
            if s.party == party {
                eprintln!("{LINE_PREFIX}{} {} {}", s.done, s.nodes, s.scope);
            }
        })));
        veil_mpc::phase::observe_phases(Some(Box::new(move |p, phase| {
            if p == party {
                eprintln!("{PHASE_PREFIX}{phase}");
            }
        })));
        None
    } else {
        Some(Bar::follow(party, "secure run"))
    }
}

fn parse_line(line: &str) -> Option<(u64, u64, &str)> {
    let mut parts = line.strip_prefix(LINE_PREFIX)?.splitn(3, ' ');
    let done = parts.next()?.parse().ok()?;
    let nodes = parts.next()?.parse().ok()?;
    Some((done, nodes, parts.next().unwrap_or("")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_are_parsed_and_other_lines_kept() {
        assert_eq!(parse_line("veil-progress 3 40 encoder.layer.0"), Some((3, 40, "encoder.layer.0")));
        assert_eq!(parse_line("veil-progress x 40 a"), None);
        let bar = Bar::new("test");
        let text = "veil-phase offline\nveil-progress 1 2 embeddings\nerror: a peer disconnected\n";
        assert_eq!(Bar::read_lines(Some(&bar), text.as_bytes()), "error: a peer disconnected\n");
        assert_eq!(Bar::read_lines(None, text.as_bytes()), "error: a peer disconnected\n");
    }
}
