//! How the demo prints the parties' reports.

use veil_runtime::PartyReport;
use veil_runtime::inference::InferenceParty;

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

/// The preprocessing the first computing party consumed, by kind, and what of it was made on
/// demand: `None` where no party reports it.
pub fn preprocessing_used(parties: &[InferenceParty]) -> Option<String> {
    let p = parties.iter().find(|p| p.preprocessing_used.is_some())?;
    let used = p.preprocessing_used.as_ref()?;
    let kinds: Vec<String> = used.iter().map(|(kind, units)| format!("{units} {kind}")).collect();
    let on_demand = p.made_on_demand.map(|n| format!("; {n} made on demand")).unwrap_or_default();
    Some(format!("  preprocessing consumed by party {}: {}{on_demand}", p.party, kinds.join(", ")))
}
