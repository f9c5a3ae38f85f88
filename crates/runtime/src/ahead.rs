//! The offline phase ahead of the online phase, for a whole `mosformer` session.
//!
//! What material a session needs depends on public facts only: the graph (with its weights'
//! shapes), the input size the data owner announced, the security mode and the chunk size of
//! gate calls. Each server derives the plan for itself, with no message and nothing to trust:
//! a dry run of the session with all five parties simulated in this process, zero token ids or
//! pixels at the data owner, zero weights at the model owner, and the planner family
//! ([`Mosformer::planner`]: zero material, no checks, so its values mean nothing). Then the
//! three servers make the plan's material in the offline phase, before the data owner shares
//! its input, and the online phase consumes it in order. Memory: the whole session's material
//! is held until used, so this mode suits models the size of MiniLM; a BERT-base encoder at 128
//! tokens needs [`Material::OnDemand`] (about 12 GB of material per server per layer).
//!
//! Plans are cached per process (the parties of `veil run` are threads of one process and
//! share one dry run).

use std::sync::{Arc, Mutex};

use veil_mosformer::ops::PLAN_LIMIT_EXCEEDED;
use veil_mosformer::{MaterialPlan, Mosformer, Security};
use veil_mpc::harness::{SimConfig, simulate_with};
use veil_mpc::{Ctx, MpcError};
use veil_nn::Input;
use veil_nn::graph::{Graph, Op};
use veil_nn::secure::{Contribution, run_secure};
use veil_nn::weights::{FloatTensor, Weights};

use crate::families::THREE_SERVERS;
use crate::inference::{CHUNK, DATA_OWNER, MODEL_OWNER, PARTIES, graph_digest, nn_error};

/// Where a session's offline material comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Material {
    /// Made gate call by gate call, in chunks, right before each call needs it (bounded memory:
    /// the way a BERT-base encoder fits on one machine). Its bytes and rounds still count as
    /// offline, and its seconds are subtracted from the online time.
    OnDemand,
    /// Planned by a dry run and made before the online phase starts, held until used.
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
        match self {
            Material::OnDemand => "on-demand",
            Material::Ahead => "ahead",
            Material::Stored(_) => "stored",
        }
    }
}

type Key = (veil_crypto::Digest, usize, Security);

/// Plans found in this process (`None`: larger than [`AHEAD_LIMIT`]).
static PLANS: Mutex<Vec<(Key, Option<Arc<MaterialPlan>>)>> = Mutex::new(Vec::new());

/// The material plan of a session of `graph` on an input of size `n` (tokens or images) in
/// mode `security`, or `None` if it has more than [`AHEAD_LIMIT`] gate elements: from this
/// process's cache, or by a dry run (which stops as soon as the plan passes the limit).
///
/// # Errors
/// A graph the executor refuses, or a failure of the simulated session.
pub fn session_plan(
    graph: &Graph,
    n: usize,
    security: Security,
) -> Result<Option<Arc<MaterialPlan>>, MpcError> {
    let key = (graph_digest(graph)?, n, security);
    // Held during the dry run, so the servers of one process wait for one run.
    let mut plans = PLANS.lock().map_err(|_| MpcError::Invalid("the plan cache is poisoned".into()))?;
    if let Some((_, plan)) = plans.iter().find(|(k, _)| *k == key) {
        return Ok(plan.clone());
    }
    let plan = dry_run(graph, n, security, AHEAD_LIMIT)?.map(Arc::new);
    plans.push((key, plan.clone()));
    Ok(plan)
}

/// The session with every party simulated here, zero inputs and the planner family; `None`
/// once the plan passes `limit` gate elements.
fn dry_run(
    graph: &Graph,
    n: usize,
    security: Security,
    limit: usize,
) -> Result<Option<MaterialPlan>, MpcError> {
    let tokens = vec![0u32; n];
    let images = match graph.nodes.first().map(|node| &node.op) {
        Some(Op::Image { channels, height, width }) => {
            let shape = vec![n, *channels, *height, *width];
            Some(FloatTensor::new(shape.clone(), vec![0.0; shape.iter().product()]).map_err(nn_error)?)
        }
        _ => None,
    };
    let input = match &images {
        Some(t) => Input::Images(t),
        None => Input::Tokens(&tokens),
    };
    let mut weights = Weights::new();
    for (name, shape) in &graph.weights {
        let zeros = FloatTensor::new(shape.clone(), vec![0.0; shape.iter().product()]).map_err(nn_error)?;
        weights.insert(name.clone(), zeros);
    }
    let cfg = SimConfig { seed: 0, timeout: std::time::Duration::from_secs(3600) };
    let runs = simulate_with(PARTIES, cfg, |ctx: &mut Ctx| {
        let mine = match ctx.party() {
            DATA_OWNER => Contribution::Data(input),
            MODEL_OWNER => Contribution::Model(&weights),
            _ => Contribution::Server,
        };
        let mut planner = Mosformer::planner_within(security, limit).with_chunk(CHUNK);
        run_secure(&mut planner, ctx, graph, n, THREE_SERVERS.roles, mine).map_err(nn_error)?;
        Ok(planner.material_plan())
    });
    // The servers stop together at the same gate when the plan passes the limit (the owners
    // then see them leave).
    let over = |r: &Result<MaterialPlan, MpcError>| {
        r.as_ref().is_err_and(|e| e.to_string().contains(PLAN_LIMIT_EXCEEDED))
    };
    if runs.iter().take(3).any(over) {
        return Ok(None);
    }
    let mut plans = runs.into_iter().collect::<Result<Vec<_>, _>>()?;
    plans.truncate(3);
    match plans.as_slice() {
        [a, b, c] if a == b && b == c => Ok(Some(plans.swap_remove(0))),
        _ => Err(MpcError::Invalid("the dry run's servers found different plans".into())),
    }
}

/// Most gate elements ([`MaterialPlan::gate_elements`]) a session makes ahead. MiniLM at 14
/// tokens has 1.5·10^5 and holds about 0.9 GB more per server ahead than on demand (measured:
/// 7.7 against 5.0 GB peak for its five parties as threads), so the limit is about 2 GB per
/// server. Larger plans fall back to [`Material::OnDemand`], which every server decides alike
/// from the same plan.
pub const AHEAD_LIMIT: usize = 1 << 18;

/// Makes a session's material ahead (servers only), under the offline phase: plans it, then
/// [`Mosformer::prepare_all`]. Its seconds (the dry run's included) count as offline. Returns
/// where the material comes from: [`Material::OnDemand`] when the plan exceeds
/// [`AHEAD_LIMIT`] (nothing is made then).
///
/// # Errors
/// As [`session_plan`], or a failure of the offline phase.
pub fn prepare_session(
    family: &mut Mosformer<veil_mosformer::offline::Offline>,
    ctx: &mut Ctx,
    graph: &Graph,
    n: usize,
) -> Result<Material, MpcError> {
    let security = family.security();
    veil_mpc::phase::in_offline_phase(ctx, |ctx| match session_plan(graph, n, security)? {
        Some(plan) => {
            family.prepare_all(ctx, &plan)?;
            Ok(Material::Ahead)
        }
        None => Ok(Material::OnDemand),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tiny GPT-2 test checkpoint's public graph: width 32, 4 heads, 2 blocks, GELU on 128.
    fn graph() -> Graph {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../nn/tests/data/tiny-gpt2");
        veil_nn::bert::load_hf(&dir, false).unwrap().graph
    }

    #[test]
    fn a_plan_counts_every_gate_and_is_found_once_per_process() {
        let g = graph();
        let plan = session_plan(&g, 5, Security::Malicious).unwrap().unwrap();
        // Per block: GELU on 5 × 128, softmax on 4 heads × 5 × 5, two LayerNorms of 5 rows;
        // plus the final LayerNorm.
        assert_eq!(plan.gate_elements(), 2 * (5 * 128 + 4 * 5 * 5 + 2 * 5) + 5);
        assert!(!plan.triples.is_empty());
        assert!(Arc::ptr_eq(&plan, &session_plan(&g, 5, Security::Malicious).unwrap().unwrap()));
        // Another size or mode is another plan; semi-honest runs need no triples.
        let other = session_plan(&g, 4, Security::SemiHonest).unwrap().unwrap();
        assert!(other.gate_elements() < plan.gate_elements());
        assert!(other.triples.iter().all(|r| matches!(r, veil_mosformer::offline::Request::Upcast { .. })));
    }

    #[test]
    fn a_plan_past_the_limit_stops_the_dry_run() {
        let g = graph();
        let start = std::time::Instant::now();
        // The first GELU (5 × 128 elements) already passes a limit of 100.
        assert!(dry_run(&g, 5, Security::Malicious, 100).unwrap().is_none());
        assert!(start.elapsed().as_secs() < 60, "the parties did not stop together");
        assert!(dry_run(&g, 5, Security::Malicious, 2000).unwrap().is_some());
    }
}
