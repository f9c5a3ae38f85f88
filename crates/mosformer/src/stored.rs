//! A server's offline material, stored between the session that made it and the session that
//! uses it.
//!
//! [`Mosformer::take_material`] moves everything an instance made ahead out of it: the MAC key
//! `⟨α⟩` and the random `⟨1⟩` ([`crate::keys`]), the FSS material of each planned gate, the
//! triples and the upcast tuples ([`crate::offline`]). [`StoredMaterial::encode`] writes it with
//! `postcard` (a serde format with a stable, documented wire format; chosen over bincode, whose
//! development has ceased); ring words are written as fixed-width little-endian bytes.
//! [`Mosformer::load_material`] puts it into a fresh instance of the same mode, which then runs
//! the online phase exactly as if it had made the material itself in the same process.
//!
//! **What is checked on load.** Every tensor fills its shape and both components of a sharing
//! have one shape; every triple has the shapes of its request; and every gate's material has
//! exactly the lengths of the material its request asks for (compared, through `Shape`, with
//! zero material of the same request's layout), so a damaged or mismatched store
//! is refused with an error, never a panic in the online phase. Whether the material is
//! *correct* is not checked here and need not be: it was verified when it was made, and a
//! server that changes its own material is a corrupted server, which the online phase's
//! checks catch as they would any other deviation.
//!
//! **Security.** Material must be used once: a second online phase on the same masks, keys and
//! triples would leak the difference of two inputs. The caller (the runtime's material files)
//! deletes a store once the servers agree on it, before the online phase starts.

use std::io::Write;

use serde::{Deserialize, Serialize};
use veil_mpc::{MpcError, Result};

use veil_mpc::mode::Security;

use crate::family::Mosformer;
use crate::offline::{Offline, StoredTriples};
use veil_mpc::prep::Gate;

use crate::gates::{GateKeys, MacRing, Rings, placeholder};
use crate::rss::Rss;

use crate::shape::Shape;
pub use crate::shape::Word;

fn shape_of<T: Shape>(x: &T) -> Vec<usize> {
    let mut out = Vec::new();
    x.shape(&mut out);
    out
}

/// Everything one server made ahead for a computation (see the module doc).
#[derive(Debug, Serialize, Deserialize)]
pub struct StoredMaterial {
    security: Security,
    rings: Rings,
    /// `(⟨1⟩, ⟨α⟩)`.
    keys: Option<(Rss<MacRing>, Rss<MacRing>)>,
    gates: Vec<(Gate, GateKeys)>,
    triples: StoredTriples,
}

impl StoredMaterial {
    /// The mode the material was made in.
    pub fn security(&self) -> Security {
        self.security
    }

    /// The gates it serves, in order.
    pub fn gates(&self) -> impl Iterator<Item = &Gate> {
        self.gates.iter().map(|(r, _)| r)
    }

    /// Writes the material to `w`.
    ///
    /// # Errors
    /// A failure of `w`.
    pub fn encode<W: Write>(&self, w: W) -> Result<()> {
        postcard::to_io(self, w).map(|_| ()).map_err(|e| MpcError::Invalid(format!("writing material: {e}")))
    }

    /// Reads material [`StoredMaterial::encode`] wrote; every byte must belong to it.
    ///
    /// # Errors
    /// Bytes that are not such material (truncated, damaged, trailing data), or tensors that
    /// do not fill their shapes.
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        let bad = |what: String| MpcError::Invalid(format!("stored material: {what}"));
        let (m, rest) = postcard::take_from_bytes::<Self>(bytes).map_err(|e| bad(e.to_string()))?;
        if !rest.is_empty() {
            return Err(bad(format!("{} bytes after the end", rest.len())));
        }
        Ok(m)
    }
}

impl Mosformer<Offline> {
    /// Moves the material made ahead ([`Mosformer::prepare_all`]) out of this instance, which
    /// is left with none (its later gates would make theirs on demand).
    pub fn take_material(&mut self) -> StoredMaterial {
        StoredMaterial {
            security: self.security,
            rings: self.gates.rings,
            keys: self.gates.keys.take(),
            gates: self.gates.ready.drain(..).collect(),
            triples: self.triples.take_stored(),
        }
    }

    /// Puts stored material into this instance, which must be of the same mode and hold no
    /// material yet. Checks every piece's shapes (see the module doc).
    ///
    /// # Errors
    /// Another mode, an instance that already holds material, or a piece whose shapes differ
    /// from those its request asks for.
    pub fn load_material(&mut self, m: StoredMaterial) -> Result<()> {
        if m.security != self.security {
            return Err(MpcError::Invalid(format!(
                "the stored material was made in {:?} mode, this session runs {:?}",
                m.security, self.security
            )));
        }
        if m.rings != self.gates.rings {
            return Err(MpcError::Invalid(format!(
                "the stored material was made for the {} rings, this session runs the {} rings",
                m.rings.name(),
                self.gates.rings.name()
            )));
        }
        if self.gates.keys.is_some() || !self.gates.ready.is_empty() {
            return Err(MpcError::Invalid("material loaded into an instance that already holds some".into()));
        }
        if let Some((one, alpha)) = &m.keys
            && (one.shape() != [1] || alpha.shape() != [1])
        {
            return Err(MpcError::Invalid("stored MAC key or ⟨1⟩ of another shape than [1]".into()));
        }
        for (i, (req, keys)) in m.gates.iter().enumerate() {
            if shape_of(keys) != shape_of(&placeholder(req, self.gates.rings)) {
                return Err(MpcError::Invalid(format!(
                    "stored material of gate {i} ({req:?}) does not have the shapes of its request"
                )));
            }
        }
        self.triples.load_stored(m.triples)?;
        self.gates.keys = m.keys;
        self.gates.ready = m.gates.into();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use veil_ring::Z64;

    use super::*;

    /// A server that changes its own stored triples before the online phase (here, one
    /// component of one product's `c`) makes the product's check abort: stored material is
    /// trusted no more than material made in the session.
    #[test]
    fn a_server_that_changes_its_stored_triples_is_caught_online() {
        use veil_mpc::harness::simulate;
        use veil_mpc::traits::{Multiply, Sharing};
        use veil_tensor::Tensor;
        let x = Tensor::new(vec![8], (1..=8).map(Z64).collect()).unwrap();
        let product = |p: &mut Mosformer<Offline>, ctx: &mut veil_mpc::Ctx| {
            let a = p.share_input(ctx, 0, (ctx.party() == 0).then_some(&x), &[8])?;
            let b = p.mul(ctx, &a, &a)?;
            p.reveal_all(ctx, &b)
        };
        let stored: Vec<Vec<u8>> = simulate(3, 41, |ctx| {
            let mut maker = Mosformer::new(Security::Malicious, Offline::new());
            let plan = veil_mpc::prep::Plan::of(&maker, &[veil_mpc::prep::Call::Mul { n: 8 }]);
            maker.prepare_all(ctx, &plan)?;
            let mut bytes = Vec::new();
            maker.take_material().encode(&mut bytes)?;
            Ok(bytes)
        })
        .into_iter()
        .collect::<Result<_>>()
        .unwrap();
        for tamper in [false, true] {
            let out = simulate(3, 42, |ctx| {
                let mut m = StoredMaterial::decode(&stored[ctx.party()])?;
                if tamper && ctx.party() == 1 {
                    m.triples.tamper_first_product();
                }
                let mut p = Mosformer::new(Security::Malicious, Offline::new());
                p.load_material(m)?;
                product(&mut p, ctx)
            });
            if tamper {
                assert!(out.iter().any(|r| matches!(r, Err(MpcError::Abort { .. }))), "{out:?}");
                assert!(out.iter().all(Result::is_err), "a party got an output");
            } else {
                let want: Vec<Z64> = (1..=8u64).map(|v| Z64(v * v)).collect();
                assert!(out.iter().all(|r| r.as_ref().is_ok_and(|t| t.data() == want.as_slice())));
            }
        }
    }

    #[test]
    fn real_material_has_the_shapes_of_the_planner_placeholder_and_other_shapes_are_refused() {
        let req = Gate::Gelu { n: 5 };
        let wrong = Gate::Gelu { n: 4 };
        let stored = |keys: GateKeys| StoredMaterial {
            security: Security::SemiHonest,
            rings: Rings::Mixed,
            keys: None,
            gates: vec![(req.clone(), keys)],
            triples: StoredTriples::default(),
        };
        let fresh = || Mosformer::new(Security::SemiHonest, Offline::semi_honest());
        let mixed = |r: &Gate| placeholder(r, Rings::Mixed);
        assert!(fresh().load_material(stored(mixed(&req))).is_ok());
        let err = fresh().load_material(stored(mixed(&wrong))).unwrap_err();
        assert!(err.to_string().contains("shapes"), "{err}");
        let other_kind = mixed(&Gate::Relu { n: 5 });
        assert!(fresh().load_material(stored(other_kind)).is_err());
        // Material of the Z_2^64 rings has other shapes, and its header another name.
        let wide = placeholder(&req, Rings::Z64);
        assert!(fresh().load_material(stored(wide)).unwrap_err().to_string().contains("shapes"));
        let err = fresh().with_rings(Rings::Z64).load_material(stored(mixed(&req))).unwrap_err();
        assert!(err.to_string().contains("made for the mixed rings"), "{err}");
        // A stored instance round-trips through its encoding.
        let mut bytes = Vec::new();
        stored(mixed(&req)).encode(&mut bytes).unwrap();
        let back = StoredMaterial::decode(&bytes).unwrap();
        assert_eq!(back.gates().collect::<Vec<_>>(), [&req]);
    }
}
