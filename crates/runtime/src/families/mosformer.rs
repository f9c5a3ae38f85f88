//! `mosformer` in the registry: three servers with the owners outside, both threat models,
//! both ring plans, transformers and CNNs, material made by the servers ahead, on demand or
//! stored.

use veil_mosformer::clear::MosformerReference;
use veil_mosformer::offline::Offline;
use veil_mosformer::{Mode, Mosformer};
use veil_mpc::mode::{Rings, Security};
use veil_mpc::prep::Plan;
use veil_mpc::reference::FixedReference;
use veil_mpc::roles::{Placement, Topology};
use veil_mpc::{Ctx, MpcError};
use veil_nn::graph::Graph;
use veil_nn::secure::{SecureRun, run_secure};

use super::{FamilyChoice, FamilyInfo, GraphJob, ModelKind, PartyCount, PrepOutcome};
use crate::ahead::Material;
use crate::inference::{CHUNK, nn_error};

pub(super) const INFO: FamilyInfo = FamilyInfo {
    name: "mosformer",
    summary: "3 servers, 2-of-3 replicated sharing, verifiable DPF gates, modulus conversion",
    paper: "Mosformer: Maliciously Secure Three-Party Inference Framework for Large Transformers",
    parties: PartyCount::Exactly(3),
    owners: &[Placement::Outside],
    security: &[Security::Malicious, Security::SemiHonest],
    rings: &[Rings::Mixed, Rings::Z64],
    arithmetic: "Z_2^64, comparisons in Z_2^16/Z_2^32 (mixed) or Z_2^64 (z64), MACs in Z_2^128",
    models: &[ModelKind::Transformer, ModelKind::Cnn],
    preprocessing: "made by the three servers in an offline phase (triples checked by sacrifice, verified DPF keys)",
    materials: &["on-demand", "ahead", "stored"],
    checks_per_group: false,
};

pub(super) struct Driver;

impl super::Driver for Driver {
    fn run(
        &self,
        ctx: &mut Ctx,
        choice: &FamilyChoice,
        job: GraphJob<'_>,
    ) -> Result<(SecureRun, PrepOutcome), MpcError> {
        let mode = choice.mode();
        let (mut family, used) =
            session(ctx, &choice.topology, job.graph, job.n, (mode, job.chunk), job.material)?;
        let run = run_secure(&mut family, ctx, job.graph, job.n, choice.topology.roles, job.mine)
            .map_err(nn_error)?;
        Ok((run, PrepOutcome::of(&family, used)))
    }

    fn plan(&self, choice: &FamilyChoice, graph: &Graph, n: usize, group: usize) -> Result<Plan, MpcError> {
        crate::ahead::session_plan(&instance(choice.mode(), CHUNK), graph, n, choice.topology.roles, group)
    }

    fn reference(&self, choice: &FamilyChoice) -> &'static dyn FixedReference {
        match choice.rings.unwrap_or_default() {
            Rings::Mixed => &MosformerReference::MIXED,
            Rings::Z64 => &MosformerReference::Z64,
        }
    }
}

/// A fresh instance in `mode`, its gate calls in chunks of at most `chunk` elements.
fn instance(mode: Mode, chunk: usize) -> Mosformer<Offline> {
    Mosformer::new(mode.security, Offline::for_security(mode.security))
        .with_chunk(chunk)
        .with_rings(mode.rings)
}

/// This party's `mosformer` instance for a session (in `mode`, gate calls in chunks of at most
/// `chunk` elements), with the session's material made ahead when `material` says so and the
/// plan is small enough (servers only); and where the material comes from. Stored material
/// was planned with [`CHUNK`] and takes no other chunk.
pub(crate) fn session(
    ctx: &mut Ctx,
    topology: &Topology,
    graph: &Graph,
    n: usize,
    (mode, chunk): (Mode, usize),
    material: Material,
) -> Result<(Mosformer<Offline>, Material), MpcError> {
    if chunk == 0 {
        return Err(MpcError::Invalid("a gate call needs chunks of at least 1 element".into()));
    }
    if matches!(material, Material::Stored(_)) && chunk != CHUNK {
        return Err(MpcError::Invalid(format!(
            "stored material was made for gate calls of {CHUNK} elements"
        )));
    }
    let mut family = instance(mode, chunk);
    let server = topology.is_computing(ctx.party());
    let used = match material {
        Material::Ahead if server => {
            crate::ahead::prepare_session(&mut family, ctx, graph, n, topology.roles)?
        }
        Material::Stored(dir) if server => {
            crate::stored::load_server(&mut family, ctx, graph, n, &dir)?;
            Material::Stored(dir)
        }
        other => other,
    };
    Ok((family, used))
}
