//! The family options every model command shares (`--family`, `--security`, `--rings`,
//! `--parties`, `--owners`), turned into a request the registry checks, and `veil families`.

use anyhow::bail;
use veil_runtime::families::{FamilyInfo, Request, families};
use veil_runtime::{Placement, Rings, Security};

/// `--security`'s value.
pub fn parse_security(s: &str) -> anyhow::Result<Security> {
    match Security::parse(s) {
        Some(sec) => Ok(sec),
        None => bail!("--security must be 'malicious' or 'semi-honest', not '{s}'"),
    }
}

/// `--rings`' value.
pub fn parse_rings(s: &str) -> anyhow::Result<Rings> {
    match Rings::parse(s) {
        Some(r) => Ok(r),
        None => bail!("--rings must be 'mixed' or 'z64', not '{s}'"),
    }
}

/// `--owners`' value.
pub fn parse_owners(s: &str) -> anyhow::Result<Placement> {
    match Placement::parse(s) {
        Some(p) => Ok(p),
        None => bail!("--owners must be 'outside' or 'inside', not '{s}'"),
    }
}

/// The options as given (each may be left out: the family's default).
#[derive(Debug, Clone, Default)]
pub struct FamilyArgs {
    /// `--family`.
    pub family: Option<String>,
    /// `--security`.
    pub security: Option<String>,
    /// `--rings`.
    pub rings: Option<String>,
    /// `--parties`: computing parties.
    pub parties: Option<usize>,
    /// `--owners`: `outside` or `inside` the computing parties.
    pub owners: Option<String>,
}

impl FamilyArgs {
    /// The request the registry checks (names parsed, nothing defaulted yet).
    pub fn request(&self) -> anyhow::Result<Request<'_>> {
        Ok(Request {
            family: self.family.as_deref(),
            security: self.security.as_deref().map(parse_security).transpose()?,
            rings: self.rings.as_deref().map(parse_rings).transpose()?,
            parties: self.parties,
            owners: self.owners.as_deref().map(parse_owners).transpose()?,
        })
    }
}

/// `veil families`: every family with its facts (one JSON object per line with `--json`).
pub fn list(json: bool) -> anyhow::Result<()> {
    for f in families() {
        if json {
            println!("{}", serde_json::to_string(f)?);
        } else {
            print_one(f);
        }
    }
    Ok(())
}

fn print_one(f: &FamilyInfo) {
    let join = |v: Vec<&str>| v.join(", ");
    println!("{}: {}", f.name, f.summary);
    println!("  paper:         {}", f.paper);
    println!("  parties:       {} computing", f.parties.describe());
    println!("  owners:        {} the computing parties", join(f.owners.iter().map(|p| p.name()).collect()));
    println!("  security:      {}", join(f.security.iter().map(|s| s.name()).collect()));
    if !f.rings.is_empty() {
        println!("  --rings:       {}", join(f.rings.iter().map(|r| r.name()).collect()));
    }
    println!("  arithmetic:    {}", f.arithmetic);
    println!("  models:        {}", join(f.models.iter().map(|m| m.name()).collect()));
    println!("  preprocessing: {}", f.preprocessing);
    println!("  material:      {}", f.materials.join(", "));
    println!("  (the first of each list is the default)\n");
}
