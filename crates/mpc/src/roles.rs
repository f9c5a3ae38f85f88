//! Who is who in a session: which parties compute and where the two input owners sit.
//!
//! A session's parties are `0 .. parties()`. The computing parties are `0 .. computing`; the
//! data owner (shares the input, alone receives the output) and the model owner (shares the
//! weights) are either parties of their own after them (3-party deployments with outside
//! owners: servers 0, 1, 2, data owner 3, model owner 4) or computing parties themselves
//! (2-party client/server: the client, data owner, is party 0 and the server, model owner,
//! party 1).

use serde::{Deserialize, Serialize};

use crate::{MpcError, PartyId, Result};

/// The two input owners' party ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Roles {
    /// Shares the input, alone receives the output.
    pub data_owner: PartyId,
    /// Shares the weights.
    pub model_owner: PartyId,
}

/// Where the input owners sit relative to the computing parties.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Parties of their own, after the computing parties.
    Outside,
    /// Computing parties themselves: the data owner is party 0, the model owner party 1 (or
    /// party 0 too when only one party computes, which no family allows).
    Inside,
}

impl Placement {
    /// The name used in reports and on the command line (`outside`, `inside`).
    pub fn name(self) -> &'static str {
        match self {
            Placement::Outside => "outside",
            Placement::Inside => "inside",
        }
    }

    /// The placement of a name [`Placement::name`] gives; `None` for any other.
    pub fn parse(name: &str) -> Option<Self> {
        [Placement::Outside, Placement::Inside].into_iter().find(|p| p.name() == name)
    }
}

/// The parties of a session: how many compute, and the owners' ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topology {
    /// Computing parties `0 .. computing`.
    pub computing: usize,
    /// The owners' ids.
    pub roles: Roles,
}

impl Topology {
    /// `computing` parties with the owners placed as `placement` says.
    pub fn new(computing: usize, placement: Placement) -> Result<Self> {
        if computing == 0 {
            return Err(MpcError::Invalid("a session needs at least one computing party".into()));
        }
        let roles = match placement {
            Placement::Outside => Roles { data_owner: computing, model_owner: computing + 1 },
            Placement::Inside => Roles { data_owner: 0, model_owner: 1.min(computing - 1) },
        };
        Ok(Topology { computing, roles })
    }

    /// Where the owners sit.
    pub fn placement(&self) -> Placement {
        if self.roles.data_owner < self.computing { Placement::Inside } else { Placement::Outside }
    }

    /// Parties in the session.
    pub fn parties(&self) -> usize {
        self.computing.max(self.roles.data_owner + 1).max(self.roles.model_owner + 1)
    }

    /// Whether `party` computes.
    pub fn is_computing(&self, party: PartyId) -> bool {
        party < self.computing
    }

    /// What `party` does, for reports: `server`, `data owner`, `model owner`, or a computing
    /// party that is also an owner (`server, data owner`); `none` outside the session.
    pub fn role(&self, party: PartyId) -> String {
        let mut parts = Vec::new();
        if self.is_computing(party) {
            parts.push("server");
        }
        if party == self.roles.data_owner {
            parts.push("data owner");
        }
        if party == self.roles.model_owner {
            parts.push("model owner");
        }
        if parts.is_empty() { "none".into() } else { parts.join(", ") }
    }

    /// One line naming every party's role, for reports (`servers 0, 1, 2; data owner 3; model
    /// owner 4`).
    pub fn describe(&self) -> String {
        let servers: Vec<String> = (0..self.computing).map(|p| p.to_string()).collect();
        let word = if self.computing == 1 { "server" } else { "servers" };
        let mut out = format!("{word} {}", servers.join(", "));
        let (d, m) = (self.roles.data_owner, self.roles.model_owner);
        let inside = |p: PartyId| if self.is_computing(p) { " (a server)" } else { "" };
        out.push_str(&format!("; data owner {d}{}; model owner {m}{}", inside(d), inside(m)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_and_inside_owners() {
        let t = Topology::new(3, Placement::Outside).unwrap();
        assert_eq!((t.parties(), t.roles.data_owner, t.roles.model_owner), (5, 3, 4));
        assert_eq!(t.role(1), "server");
        assert_eq!(t.role(4), "model owner");
        assert_eq!(t.describe(), "servers 0, 1, 2; data owner 3; model owner 4");
        assert_eq!(t.placement(), Placement::Outside);
        let t = Topology::new(2, Placement::Inside).unwrap();
        assert_eq!((t.parties(), t.roles.data_owner, t.roles.model_owner), (2, 0, 1));
        assert_eq!(t.role(0), "server, data owner");
        assert_eq!(t.role(5), "none");
        assert_eq!(t.placement(), Placement::Inside);
        assert!(Topology::new(0, Placement::Inside).is_err());
    }
}
