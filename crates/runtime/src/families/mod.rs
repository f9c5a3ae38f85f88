//! The family registry: the one place that knows every protocol family.
//!
//! A family describes itself ([`FamilyInfo`]): its name, how many parties compute, where the
//! data and model owners may sit, the threat models and rings it offers, the kinds of model it
//! runs and where its preprocessing comes from. The command line and Python list the registry
//! (`veil families`, `veil.families()`) and turn a user's choice of family, security, rings
//! and party count into a [`FamilyChoice`], checked against the family's description before
//! anything runs; sessions then hand the choice to the family's driver, which is the only code
//! that names a family crate. Adding a family is one entry in [`FAMILIES`] and one driver.

mod additive;
mod aegis;
mod mm;
mod mosformer;

use serde::Serialize;
use veil_mpc::mode::{Mode, Rings, Security};
use veil_mpc::prep::{Plan, PrepUsage, Preprocessing};
use veil_mpc::reference::FixedReference;
use veil_mpc::roles::{Placement, Topology};
use veil_mpc::{Ctx, MpcError};
use veil_nn::graph::Graph;
use veil_nn::secure::{Contribution, SecureRun};

use crate::ahead::Material;

/// How many parties compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PartyCount {
    /// Exactly this many.
    Exactly(usize),
    /// This many or more.
    AtLeast(usize),
}

impl PartyCount {
    /// Whether `n` computing parties are accepted.
    pub fn accepts(self, n: usize) -> bool {
        match self {
            PartyCount::Exactly(k) => n == k,
            PartyCount::AtLeast(k) => n >= k,
        }
    }

    /// The count a session has unless told otherwise.
    pub fn default_count(self) -> usize {
        match self {
            PartyCount::Exactly(k) => k,
            PartyCount::AtLeast(k) => k.max(3),
        }
    }

    /// `3`, or `2 or more`.
    pub fn describe(self) -> String {
        match self {
            PartyCount::Exactly(k) => k.to_string(),
            PartyCount::AtLeast(k) => format!("{k} or more"),
        }
    }
}

/// A kind of model a family runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelKind {
    /// Transformers (GELU, softmax, LayerNorm): BERT-family encoders, GPT-2, ViT.
    Transformer,
    /// Convolutional networks (ReLU, max and average pooling).
    Cnn,
}

impl ModelKind {
    /// `transformer` or `cnn`.
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::Transformer => "transformer",
            ModelKind::Cnn => "cnn",
        }
    }
}

/// What a family is, as it describes itself.
#[derive(Debug, Serialize)]
pub struct FamilyInfo {
    /// The name users pass (`--family`).
    pub name: &'static str,
    /// One line on what it is.
    pub summary: &'static str,
    /// The paper it implements, by title.
    pub paper: &'static str,
    /// How many parties compute.
    pub parties: PartyCount,
    /// Where the data and model owners may sit (the default first).
    pub owners: &'static [Placement],
    /// The threat models it offers (the default first).
    pub security: &'static [Security],
    /// The ring plans a user may choose between (the default first); empty when the family
    /// has one plan.
    pub rings: &'static [Rings],
    /// The rings it computes in, in words.
    pub arithmetic: &'static str,
    /// The kinds of model it runs.
    pub models: &'static [ModelKind],
    /// Where its preprocessing comes from.
    pub preprocessing: &'static str,
    /// How its material may be made (`ahead`, `on-demand`, `stored`; the default first).
    pub materials: &'static [&'static str],
    /// Whether its servers can check their work every few images (`--images-per-check`).
    pub checks_per_group: bool,
}

impl FamilyInfo {
    /// Whether it runs transformer layers.
    pub fn runs_transformers(&self) -> bool {
        self.models.contains(&ModelKind::Transformer)
    }

    fn names<T>(items: &[T], name: impl Fn(&T) -> &'static str) -> String {
        items.iter().map(name).collect::<Vec<_>>().join(", ")
    }
}

/// A job for a family's driver: one party's part of a session on a graph.
pub(crate) struct GraphJob<'a> {
    /// The public graph.
    pub graph: &'a Graph,
    /// The input's size (tokens or images), as the data owner announced it.
    pub n: usize,
    /// What this party brings.
    pub mine: Contribution<'a>,
    /// Where the servers' material comes from.
    pub material: Material,
    /// Servers' checks every this many images, when set.
    pub images_per_check: Option<usize>,
    /// Most elements one gate call takes at once, for families that make material per gate
    /// call (`mosformer`; [`crate::inference::CHUNK`] unless a benchmark says otherwise).
    pub chunk: usize,
}

/// What a computing party's preprocessing did in a session ([`veil_mpc::prep`]).
#[derive(Debug, Clone)]
pub(crate) struct PrepOutcome {
    /// Where the material came from.
    pub material: Material,
    /// What the session consumed, by kind.
    pub usage: PrepUsage,
    /// Units made on demand because no material made ahead covered them.
    pub made_on_demand: u64,
}

impl PrepOutcome {
    /// The outcome of a session of `source`, whose material came from `material`.
    pub fn of(source: &impl Preprocessing, material: Material) -> Self {
        PrepOutcome { material, usage: source.usage(), made_on_demand: source.made_on_demand() }
    }
}

/// How the runtime drives a family: the only code that names a family crate.
pub(crate) trait Driver: Sync {
    /// Runs this party's part of `job`; returns its result and what its preprocessing did.
    fn run(
        &self,
        ctx: &mut Ctx,
        choice: &FamilyChoice,
        job: GraphJob<'_>,
    ) -> Result<(SecureRun, PrepOutcome), MpcError>;

    /// The family's arithmetic in the clear, for the fixed-point executor.
    fn reference(&self, choice: &FamilyChoice) -> &'static dyn FixedReference;

    /// The preprocessing plan of a session of `graph` on `n` tokens or images, checked every
    /// `images_per_check` images ([`crate::ahead::session_plan`]).
    fn plan(
        &self,
        choice: &FamilyChoice,
        graph: &Graph,
        n: usize,
        images_per_check: usize,
    ) -> Result<Plan, MpcError>;
}

/// A registered family: its description and its driver.
pub struct Family {
    /// What it is.
    pub info: FamilyInfo,
    driver: &'static dyn Driver,
}

impl std::fmt::Debug for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.info.fmt(f)
    }
}

/// Every family Veil runs.
pub static FAMILIES: [Family; 4] = [
    Family { info: mosformer::INFO, driver: &mosformer::Driver },
    Family { info: aegis::INFO, driver: &aegis::Driver },
    Family { info: mm::INFO, driver: &mm::Driver },
    Family { info: additive::INFO, driver: &additive::Driver },
];

/// Every family's description, in the registry's order.
pub fn families() -> Vec<&'static FamilyInfo> {
    FAMILIES.iter().map(|f| &f.info).collect()
}

/// The family of a name, or an error listing the names that exist.
pub fn family(name: &str) -> Result<&'static Family, MpcError> {
    FAMILIES.iter().find(|f| f.info.name == name).ok_or_else(|| {
        MpcError::Invalid(format!(
            "there is no family `{name}`; the families are {}",
            FamilyInfo::names(&FAMILIES, |f| f.info.name)
        ))
    })
}

/// What a user asked for, before it is checked: every field optional (the family's defaults).
#[derive(Debug, Clone, Default)]
pub struct Request<'a> {
    /// The family's name.
    pub family: Option<&'a str>,
    /// The threat model.
    pub security: Option<Security>,
    /// The ring plan.
    pub rings: Option<Rings>,
    /// Computing parties.
    pub parties: Option<usize>,
    /// Where the owners sit.
    pub owners: Option<Placement>,
}

/// A family with the session's settings, checked against what the family offers.
#[derive(Debug, Clone, Copy)]
pub struct FamilyChoice {
    /// The family.
    pub family: &'static Family,
    /// Its threat model in this session.
    pub security: Security,
    /// Its ring plan, for families that offer a choice.
    pub rings: Option<Rings>,
    /// Who computes and where the owners sit.
    pub topology: Topology,
}

impl PartialEq for FamilyChoice {
    fn eq(&self, other: &Self) -> bool {
        self.family.info.name == other.family.info.name
            && self.security == other.security
            && self.rings == other.rings
            && self.topology == other.topology
    }
}

impl FamilyChoice {
    /// Checks `request` against the family it names (or `default`): the security, rings,
    /// party count and owners' placement must be among those the family offers; what the
    /// request leaves out takes the family's default.
    pub fn new(request: &Request<'_>, default: &str) -> Result<Self, MpcError> {
        let family = family(request.family.unwrap_or(default))?;
        let info = &family.info;
        let name = info.name;
        let security = match request.security {
            Some(s) if info.security.contains(&s) => s,
            Some(s) => {
                return Err(MpcError::Invalid(format!(
                    "{name} runs only with --security {} (not {})",
                    FamilyInfo::names(info.security, |s| s.name()),
                    s.name()
                )));
            }
            None => info.security[0],
        };
        let rings = match request.rings {
            Some(r) if info.rings.contains(&r) => Some(r),
            Some(r) if info.rings.is_empty() => {
                return Err(MpcError::Invalid(format!(
                    "--rings {} is a mosformer option ({name} computes in {})",
                    r.name(),
                    info.arithmetic
                )));
            }
            Some(r) => {
                return Err(MpcError::Invalid(format!(
                    "{name} offers --rings {}, not {}",
                    FamilyInfo::names(info.rings, |r| r.name()),
                    r.name()
                )));
            }
            None => info.rings.first().copied(),
        };
        let parties = request.parties.unwrap_or(info.parties.default_count());
        if !info.parties.accepts(parties) {
            return Err(MpcError::Invalid(format!(
                "{name} runs among {} computing parties, not {parties}",
                info.parties.describe()
            )));
        }
        let placement = match request.owners {
            Some(p) if info.owners.contains(&p) => p,
            Some(p) => {
                return Err(MpcError::Invalid(format!(
                    "{name} cannot place the data and model owners {} the computing parties (it offers: {})",
                    p.name(),
                    FamilyInfo::names(info.owners, |p| p.name())
                )));
            }
            None => info.owners[0],
        };
        let topology = Topology::new(parties, placement)?;
        Ok(FamilyChoice { family, security, rings, topology })
    }

    /// `mosformer` in `mode`: three servers, owners outside.
    pub fn mosformer(mode: Mode) -> Self {
        let request =
            Request { security: Some(mode.security), rings: Some(mode.rings), ..Request::default() };
        // Both of mosformer's modes and ring plans are registered, so this cannot fail.
        FamilyChoice::new(&request, "mosformer").unwrap_or(FamilyChoice {
            family: &FAMILIES[0],
            security: mode.security,
            rings: Some(mode.rings),
            topology: THREE_SERVERS,
        })
    }

    /// For an image model: the named family, or `mosformer` when the graph has transformer
    /// layers (a ViT) and `aegis` otherwise.
    pub fn for_graph(graph: &Graph, request: &Request<'_>) -> Result<Self, MpcError> {
        let transformer = graph.nodes.iter().any(|n| n.op.needs_transformer_layers());
        Self::new(request, if transformer { "mosformer" } else { "aegis" })
    }

    /// The family's name.
    pub fn name(&self) -> &'static str {
        self.family.info.name
    }

    /// The mode (rings default to `mixed` for families without a choice).
    pub fn mode(&self) -> Mode {
        Mode { security: self.security, rings: self.rings.unwrap_or_default() }
    }

    /// The ring plan's name, for families that offer a choice.
    pub fn rings_name(&self) -> Option<&'static str> {
        self.rings.map(Rings::name)
    }

    /// The family's arithmetic in the clear, for the fixed-point executor.
    pub fn reference(&self) -> &'static dyn FixedReference {
        self.family.driver.reference(self)
    }

    /// Refuses a graph the family cannot run, naming the first node it lacks an operation
    /// for, before anything is shared.
    pub fn check_graph(&self, graph: &Graph) -> Result<(), MpcError> {
        if self.family.info.runs_transformers() {
            return Ok(());
        }
        match graph.nodes.iter().enumerate().find(|(_, n)| n.op.needs_transformer_layers()) {
            Some((i, node)) => Err(MpcError::Invalid(format!(
                "{} does not run transformers: node {i} ({}) needs transformer layers (GELU, softmax, LayerNorm) and {} has no such layer; families that run them: {}",
                self.name(),
                node.op.name(),
                self.name(),
                FamilyInfo::names(
                    &FAMILIES.iter().filter(|f| f.info.runs_transformers()).collect::<Vec<_>>(),
                    |f| f.info.name
                )
            ))),
            None => Ok(()),
        }
    }

    /// Checks the session's material and grouping options against the family.
    pub fn check_options(
        &self,
        material: &Material,
        images_per_check: Option<usize>,
    ) -> Result<(), MpcError> {
        let info = &self.family.info;
        if images_per_check.is_some() && !info.checks_per_group {
            return Err(MpcError::Invalid(format!(
                "checks per group of images are an aegis option; {} has none",
                info.name
            )));
        }
        if !info.materials.contains(&material.name()) {
            return Err(MpcError::Invalid(format!(
                "{}'s material is {}: {} material is not an option",
                info.name,
                info.preprocessing,
                material.name()
            )));
        }
        Ok(())
    }

    /// The material a session of the family makes unless told otherwise.
    pub fn default_material(&self) -> Material {
        Material::parse(self.family.info.materials[0]).unwrap_or(Material::OnDemand)
    }

    /// Runs this party's part of a session on `job` with the family's driver.
    pub(crate) fn run(&self, ctx: &mut Ctx, job: GraphJob<'_>) -> Result<(SecureRun, PrepOutcome), MpcError> {
        self.family.driver.run(ctx, self, job)
    }

    /// The preprocessing a session of `graph` on an input of size `n` needs at each computing
    /// party, as plain data, from the graph's shapes alone (nothing runs); the servers' checks
    /// every `images_per_check` images when set.
    ///
    /// # Errors
    /// A graph the executor refuses.
    pub fn plan(&self, graph: &Graph, n: usize, images_per_check: Option<usize>) -> Result<Plan, MpcError> {
        self.family.driver.plan(self, graph, n, images_per_check.unwrap_or(n).max(1))
    }
}

impl From<Mode> for FamilyChoice {
    fn from(mode: Mode) -> Self {
        FamilyChoice::mosformer(mode)
    }
}

impl From<Security> for FamilyChoice {
    fn from(security: Security) -> Self {
        FamilyChoice::mosformer(security.into())
    }
}

/// The 3-party families' deployments: servers 0, 1, 2, data owner 3, model owner 4.
pub const THREE_SERVERS: Topology =
    Topology { computing: 3, roles: veil_mpc::roles::Roles { data_owner: 3, model_owner: 4 } };

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_is_listed_and_unknown_names_list_them() {
        let names: Vec<_> = families().iter().map(|f| f.name).collect();
        assert_eq!(names, ["mosformer", "aegis", "mm", "additive"]);
        let err = family("spdz").unwrap_err().to_string();
        assert!(err.contains("no family `spdz`") && err.contains("mosformer, aegis, mm, additive"), "{err}");
    }

    #[test]
    fn choices_are_checked_against_the_family() {
        let c = FamilyChoice::new(&Request::default(), "mosformer").unwrap();
        assert_eq!(
            (c.security, c.rings, c.topology),
            (Security::Malicious, Some(Rings::Mixed), THREE_SERVERS)
        );
        let bad = |r: Request<'_>| FamilyChoice::new(&r, "mosformer").unwrap_err().to_string();
        let e = bad(Request {
            family: Some("aegis"),
            security: Some(Security::SemiHonest),
            ..Request::default()
        });
        assert!(e.contains("aegis runs only with --security malicious"), "{e}");
        let e = bad(Request { parties: Some(4), ..Request::default() });
        assert!(e.contains("mosformer runs among 3 computing parties, not 4"), "{e}");
        let e = bad(Request { owners: Some(Placement::Inside), ..Request::default() });
        assert!(e.contains("cannot place the data and model owners inside"), "{e}");
        let e = bad(Request { family: Some("additive"), rings: Some(Rings::Z64), ..Request::default() });
        assert!(e.contains("a mosformer option"), "{e}");
        let e = bad(Request { family: Some("additive"), parties: Some(1), ..Request::default() });
        assert!(e.contains("2 or more computing parties, not 1"), "{e}");
        let a = FamilyChoice::new(
            &Request { family: Some("additive"), parties: Some(5), ..Request::default() },
            "x",
        )
        .unwrap();
        assert_eq!((a.topology.parties(), a.topology.roles.data_owner), (5, 0));
        assert_eq!(a.security, Security::SemiHonest);
    }

    #[test]
    fn a_family_without_transformer_layers_refuses_a_transformer_when_loaded() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../nn/tests/data/tiny-gpt2");
        let graph = veil_nn::bert::load_hf(&dir, false).unwrap().graph;
        for name in ["aegis", "additive"] {
            let c = FamilyChoice::new(&Request { family: Some(name), ..Request::default() }, "x").unwrap();
            let e = c.check_graph(&graph).unwrap_err().to_string();
            assert!(
                e.contains("needs transformer layers") && e.contains("families that run them: mosformer"),
                "{e}"
            );
        }
        assert!(FamilyChoice::mosformer(Security::Malicious.into()).check_graph(&graph).is_ok());
    }
}
