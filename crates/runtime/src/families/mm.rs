//! `mm` in the registry: two computing parties, the client (data owner, party 0) and the
//! server (model owner, party 1) by default, or two servers with the owners outside;
//! semi-honest; transformers and CNNs; COTs by Ferret on demand and BFV keys made at the start
//! of the session.

use veil_mm::clear::MmReference;
use veil_mm::family::{FRAC_BITS, Mm, PRESET, Planner};
use veil_mpc::mode::Security;
use veil_mpc::prep::Plan;
use veil_mpc::reference::FixedReference;
use veil_mpc::roles::Placement;
use veil_mpc::trace::Tracer;
use veil_mpc::{Ctx, MpcError};
use veil_nn::graph::Graph;
use veil_nn::secure::{SecureRun, run_secure, trace_calls};
use veil_twopc::Engine;

use super::{FamilyChoice, FamilyInfo, GraphJob, ModelKind, PartyCount, PrepOutcome};
use crate::ahead::Material;
use crate::inference::nn_error;

pub(super) const INFO: FamilyInfo = FamilyInfo {
    name: "mm",
    summary: "2 parties (client and server), Ferret OT and BFV, modulus conversion, truncation for free",
    paper: "M&M: Secure Two-Party ML through Modulus Conversion and Mixed-Mode Protocols",
    parties: PartyCount::Exactly(2),
    owners: &[Placement::Inside, Placement::Outside],
    security: &[Security::SemiHonest],
    rings: &[],
    arithmetic: "Z_2^64 at 16 fractional bits, products in Z_p (p ≈ 2^60) by BFV",
    models: &[ModelKind::Transformer, ModelKind::Cnn],
    preprocessing: "COTs made by the two parties with Ferret as the calls need them; BFV keys made at the start of the session",
    materials: &["on-demand"],
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
        let mut mm = Mm::setup(ctx, Engine::Ferret, PRESET)?;
        let run =
            run_secure(&mut mm, ctx, job.graph, job.n, choice.topology.roles, job.mine).map_err(nn_error)?;
        Ok((run, PrepOutcome::of(&mm, Material::OnDemand)))
    }

    /// The COTs of the calls, every operand counted as shared (a session whose owners sit
    /// inside consumes fewer: their tensors' lifts are local).
    fn plan(&self, choice: &FamilyChoice, graph: &Graph, n: usize, group: usize) -> Result<Plan, MpcError> {
        let calls = trace_calls(Tracer::new(2, FRAC_BITS, true), graph, n, choice.topology.roles, group)
            .map_err(nn_error)?;
        Ok(Plan::of(&Planner { me: 0 }, &calls))
    }

    fn reference(&self, _: &FamilyChoice) -> &'static dyn FixedReference {
        &MmReference
    }
}
