//! The offline phase ahead of the online phase, for a whole session, from its plan.
//!
//! What material a session needs depends on public facts only: the graph (with its weights'
//! shapes), the input size the data owner announced, the family's mode and chunk size. Each
//! computing party derives the plan for itself, with no message and nothing to trust: the
//! secure executor's walk of the graph over shapes ([`veil_nn::secure::trace_calls`]: no
//! party, no value, a few milliseconds) gives the calls the session will make of the family,
//! and the family's [`Preprocessing::requests`] turn them into its [`Plan`]. Then the
//! computing parties make the plan's material in the offline phase, before the data owner
//! shares its input, and the online phase consumes it in order. Memory: the whole session's
//! material is held until used, so this suits models the size of MiniLM; larger plans (past
//! [`AHEAD_LIMIT`]) fall back to [`Material::OnDemand`] (a BERT-base encoder at 128 tokens
//! needs about 12 GB of `mosformer` material per server per layer).

use veil_mpc::phase::in_offline_phase;
use veil_mpc::prep::{Plan, Preprocessing, Supply};
use veil_mpc::roles::Roles;
use veil_mpc::trace::Tracer;
use veil_mpc::{Ctx, MpcError};
use veil_nn::graph::Graph;
use veil_nn::secure::{SecureBackend, trace_calls};

use crate::nn_error;

/// Where a session's offline material comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Material {
    /// Made gate call by gate call, in chunks, right before each call needs it (bounded memory:
    /// the way a BERT-base encoder fits on one machine). Its bytes and rounds still count as
    /// offline, and its seconds are subtracted from the online time.
    OnDemand,
    /// Planned from the graph's shapes ([`session_plan`]) and made before the online phase
    /// starts, held until used.
    Ahead,
    /// Made by an earlier session of the servers and stored in this folder (each server its
    /// own `server-N.material`, [`crate::stored`]); used once, deleted before the online phase.
    Stored(std::path::PathBuf),
}

impl Material {
    /// Parses the command line's `ahead` or `on-demand`.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "ahead" => Ok(Material::Ahead),
            "on-demand" => Ok(Material::OnDemand),
            other => Err(format!("offline material `{other}`: use `ahead` or `on-demand`")),
        }
    }

    /// The name the records and the command line use.
    pub fn name(&self) -> &'static str {
        self.supply().name()
    }

    /// The supply of the interface ([`Supply`]) this is.
    pub fn supply(&self) -> Supply {
        match self {
            Material::OnDemand => Supply::OnDemand,
            Material::Ahead => Supply::Ahead,
            Material::Stored(_) => Supply::Stored,
        }
    }
}

/// The plan of a session of `graph` on an input of size `n` (tokens or images) for `family`
/// (in its mode and chunk size), with the deferred checks every `images_per_check` images:
/// from the calls of the graph's walk over shapes, without running the protocol.
///
/// # Errors
/// A graph the executor refuses.
pub fn session_plan<P: Preprocessing + SecureBackend>(
    family: &P,
    graph: &Graph,
    n: usize,
    roles: Roles,
    images_per_check: usize,
) -> Result<Plan, MpcError> {
    let calls = trace_calls(Tracer::like(family), graph, n, roles, images_per_check).map_err(nn_error)?;
    Ok(Plan::of(family, &calls))
}

/// Most gate elements ([`Plan::gate_elements`]) a session makes ahead. MiniLM at 14 tokens has
/// 1.5·10^5 and holds about 0.9 GB more per server ahead than on demand (measured: 7.7 against
/// 5.0 GB peak for its five parties as threads), so the limit is about 2 GB per server. Larger
/// plans fall back to [`Material::OnDemand`], which every server decides alike from the same
/// plan.
pub const AHEAD_LIMIT: usize = 1 << 18;

/// Makes a session's material ahead (computing parties only), under the offline phase: plans
/// it ([`session_plan`]), then [`Preprocessing::produce`]. Returns where the material comes
/// from: [`Material::OnDemand`] when the plan exceeds [`AHEAD_LIMIT`] (nothing is made then).
///
/// # Errors
/// As [`session_plan`], or a failure of the offline phase.
pub fn prepare_session<P: Preprocessing + SecureBackend>(
    family: &mut P,
    ctx: &mut Ctx,
    graph: &Graph,
    n: usize,
    roles: Roles,
) -> Result<Material, MpcError> {
    prepare_within(family, ctx, graph, n, roles, AHEAD_LIMIT)
}

/// [`prepare_session`] with a limit of `limit` gate elements.
fn prepare_within<P: Preprocessing + SecureBackend>(
    family: &mut P,
    ctx: &mut Ctx,
    graph: &Graph,
    n: usize,
    roles: Roles,
    limit: usize,
) -> Result<Material, MpcError> {
    in_offline_phase(ctx, |ctx| {
        let plan = session_plan(family, graph, n, roles, n.max(1))?;
        if plan.gate_elements() > limit {
            return Ok(Material::OnDemand);
        }
        family.produce(ctx, &plan)?;
        Ok(Material::Ahead)
    })
}

#[cfg(test)]
mod tests {
    use veil_mosformer::offline::Offline;
    use veil_mosformer::{Mosformer, Security};
    use veil_mpc::prep::CorrelationRequest;

    use super::*;
    use crate::families::THREE_SERVERS;

    /// The tiny GPT-2 test checkpoint's public graph: width 32, 4 heads, 2 blocks, GELU on 128.
    fn graph() -> Graph {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../nn/tests/data/tiny-gpt2");
        veil_nn::bert::load_hf(&dir, false).unwrap().graph
    }

    fn plan(security: Security, n: usize) -> Plan {
        let family =
            Mosformer::new(security, Offline::for_security(security)).with_chunk(crate::inference::CHUNK);
        session_plan(&family, &graph(), n, THREE_SERVERS.roles, n).unwrap()
    }

    #[test]
    fn a_plan_counts_every_gate_without_running_the_protocol() {
        let start = std::time::Instant::now();
        let p = plan(Security::Malicious, 5);
        // Per block: GELU on 5 × 128, softmax on 4 heads × 5 × 5, two LayerNorms of 5 rows;
        // plus the final LayerNorm.
        assert_eq!(p.gate_elements(), 2 * (5 * 128 + 4 * 5 * 5 + 2 * 5) + 5);
        assert!(p.totals().get("mul_triples") > 0 && p.totals().get("matmul_triple") == 0);
        assert!(start.elapsed().as_secs() < 5, "planning took {:?}", start.elapsed());
        // Another size or mode is another plan; semi-honest runs need no triples.
        let other = plan(Security::SemiHonest, 4);
        assert!(other.gate_elements() < p.gate_elements());
        let triples = |r: &CorrelationRequest| {
            matches!(r, CorrelationRequest::MulTriples { .. } | CorrelationRequest::MatmulTriple { .. })
        };
        assert!(!other.requests.iter().any(triples) && p.requests.iter().any(triples));
    }

    #[test]
    fn a_plan_past_the_limit_is_made_on_demand_and_nothing_is_made_ahead() {
        let mut family =
            Mosformer::new(Security::Malicious, Offline::new()).with_chunk(crate::inference::CHUNK);
        // A context with no peers: producing anything would fail.
        let mut ctx = Ctx::detached(0, 5);
        let got = prepare_within(&mut family, &mut ctx, &graph(), 5, THREE_SERVERS.roles, 100).unwrap();
        assert_eq!(got, Material::OnDemand);
        assert_eq!(ctx.stats().total().bytes_sent, 0);
        assert!(prepare_within(&mut family, &mut ctx, &graph(), 5, THREE_SERVERS.roles, 1 << 20).is_err());
    }
}
