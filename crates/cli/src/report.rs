//! How the demo prints the parties' reports.

use veil_runtime::PartyReport;

/// A plain-text table of every party's phases.
pub fn table(reports: &[PartyReport]) -> String {
    let mut s = format!(
        "{:<6} {:<7} {:>12} {:>12} {:>9} {:>7} {:>9}\n",
        "party", "phase", "bytes sent", "bytes recv", "messages", "rounds", "seconds"
    );
    for r in reports {
        for p in &r.phases {
            s.push_str(&format!(
                "{:<6} {:<7} {:>12} {:>12} {:>9} {:>7} {:>9.4}\n",
                r.party, p.phase, p.bytes_sent, p.bytes_received, p.messages_sent, p.rounds, p.seconds
            ));
        }
    }
    s
}
