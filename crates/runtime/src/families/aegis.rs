//! `aegis` in the registry: three servers with the owners outside, malicious only (the paper
//! has no semi-honest mode), CNNs, material dealt by P0 right before each operation and
//! verified at the end.

use veil_aegis::Aegis;
use veil_mpc::mode::Security;
use veil_mpc::prep::Plan;
use veil_mpc::reference::FixedReference;
use veil_mpc::roles::Placement;
use veil_mpc::{Ctx, MpcError};
use veil_nn::graph::Graph;
use veil_nn::secure::{SecureRun, run_secure_cnn_in_groups};

use super::{FamilyChoice, FamilyInfo, GraphJob, ModelKind, PartyCount, PrepOutcome};
use crate::ahead::Material;
use crate::inference::nn_error;

pub(super) const INFO: FamilyInfo = FamilyInfo {
    name: "aegis",
    summary: "3 servers, masked sharing, 2-round sign-bit extraction, batch verification over a Galois ring",
    paper: "Aegis: A Lightning Fast Privacy-preserving Machine Learning Platform against Malicious Adversaries",
    parties: PartyCount::Exactly(3),
    owners: &[Placement::Outside],
    security: &[Security::Malicious],
    rings: &[],
    arithmetic: "Z_2^64 (bit shares in Z_127, verification in GR(2^64, 64))",
    models: &[ModelKind::Cnn],
    preprocessing: "dealt by P0 right before each operation and verified with the products at the end",
    materials: &["on-demand"],
    checks_per_group: true,
};

pub(super) struct Driver;

impl super::Driver for Driver {
    fn run(
        &self,
        ctx: &mut Ctx,
        choice: &FamilyChoice,
        job: GraphJob<'_>,
    ) -> Result<(SecureRun, PrepOutcome), MpcError> {
        let mut a = Aegis::new(64)?;
        // The model owner does not know the batch (its `n` may be 0): one group unless set.
        let group = job.images_per_check.unwrap_or(job.n.max(1));
        let run =
            run_secure_cnn_in_groups(&mut a, ctx, job.graph, job.n, choice.topology.roles, job.mine, group)
                .map_err(nn_error)?;
        Ok((run, PrepOutcome::of(&a, Material::OnDemand)))
    }

    fn plan(&self, choice: &FamilyChoice, graph: &Graph, n: usize, group: usize) -> Result<Plan, MpcError> {
        crate::ahead::session_plan(&Aegis::new(64)?, graph, n, choice.topology.roles, group)
    }

    fn reference(&self, _: &FamilyChoice) -> &'static dyn FixedReference {
        &veil_nn::fixed::ExactCnn(16)
    }
}
