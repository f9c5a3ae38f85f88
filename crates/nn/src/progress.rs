//! Progress of secure runs, for user interfaces (the command line's progress bar): the secure
//! executor reports each node it finishes to a process-wide observer, if one is set. The
//! observer sees only public facts (the party, the node's index, op and scope: the graph is
//! public), never values.

use std::sync::RwLock;

/// One finished node of a party's secure run.
#[derive(Debug, Clone)]
pub struct Step<'a> {
    /// The reporting party.
    pub party: usize,
    /// Nodes finished so far.
    pub done: usize,
    /// Nodes in the run.
    pub nodes: usize,
    /// The finished node's op.
    pub op: &'static str,
    /// The finished node's scope (`encoder.layer.3`, `conv1`, ...).
    pub scope: &'a str,
}

type Observer = Box<dyn Fn(&Step<'_>) + Send + Sync>;

static OBSERVER: RwLock<Option<Observer>> = RwLock::new(None);

/// Sets (or, with `None`, clears) the observer of every secure run in this process.
pub fn observe(observer: Option<Observer>) {
    if let Ok(mut slot) = OBSERVER.write() {
        *slot = observer;
    }
}

/// Tells the observer, if any.
pub(crate) fn report(step: &Step<'_>) {
    if let Ok(slot) = OBSERVER.read()
        && let Some(f) = slot.as_ref()
    {
        f(step);
    }
}
