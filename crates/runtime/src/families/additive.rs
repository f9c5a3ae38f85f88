//! `additive` in the registry: any number `n ≥ 2` of computing parties with additive
//! sharing, the owners among them (party 0 the data owner, party 1 the model owner) or
//! outside, CNNs. A test family: its only preprocessing source is the insecure dealer, and
//! the registry, the reports and the command line say so.

use veil_additive::{Additive, InsecureDealer};
use veil_mpc::mode::Security;
use veil_mpc::prep::Plan;
use veil_mpc::reference::FixedReference;
use veil_mpc::roles::Placement;
use veil_mpc::{Ctx, MpcError};
use veil_nn::graph::Graph;
use veil_nn::secure::{SecureRun, run_secure_cnn};

use super::{FamilyChoice, FamilyInfo, GraphJob, ModelKind, PartyCount, PrepOutcome};
use crate::ahead::Material;
use crate::inference::nn_error;

pub(super) const INFO: FamilyInfo = FamilyInfo {
    name: "additive",
    summary: "n parties, additive sharing, Beaver products, sign bits by a prefix-OR (a test family: NOT private)",
    paper: "textbook additive sharing with Beaver's circuit randomization",
    parties: PartyCount::AtLeast(2),
    owners: &[Placement::Inside, Placement::Outside],
    security: &[Security::SemiHonest],
    rings: &[],
    arithmetic: "Z_2^64 at 16 fractional bits",
    models: &[ModelKind::Cnn],
    preprocessing: "InsecureDealer: every party derives every correlation from a seed all parties know (tests only, nothing is private)",
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
        let mut a = Additive::with_servers(InsecureDealer::new(), choice.topology.computing);
        let run = run_secure_cnn(&mut a, ctx, job.graph, job.n, choice.topology.roles, job.mine)
            .map_err(nn_error)?;
        Ok((run, PrepOutcome::of(&a, Material::OnDemand)))
    }

    fn plan(&self, choice: &FamilyChoice, graph: &Graph, n: usize, group: usize) -> Result<Plan, MpcError> {
        let family = Additive::with_servers(InsecureDealer::new(), choice.topology.computing);
        crate::ahead::session_plan(&family, graph, n, choice.topology.roles, group)
    }

    fn reference(&self, _: &FamilyChoice) -> &'static dyn FixedReference {
        &veil_nn::fixed::ExactCnn(16)
    }
}
