//! Certificates of a deployment: one CA, and one certificate per party bound to its party id.
//!
//! A party's identity is the DNS name `party-<id>.veil` in its certificate's subject
//! alternative names, signed by the deployment's CA (ECDSA P-256, via `rcgen`, a well-kept
//! certificate generator that works with the same `ring` backend as rustls). The CA's private
//! key is used once, to sign the party certificates, and then dropped: it is never written to
//! disk, so nobody can mint a new party certificate later (run `veil certs` again to re-key
//! the whole deployment).
//!
//! Files written by [`Deployment::write`]: `ca.pem`, and `party-<id>.pem` / `party-<id>.key`
//! for each party (keys are written with mode 0600).

use std::path::Path;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
    KeyPair, KeyUsagePurpose, PKCS_ECDSA_P256_SHA256,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::{NetError, PartyId};

/// The DNS name that binds a certificate to party `id`.
pub fn party_name(id: PartyId) -> String {
    format!("party-{id}.veil")
}

/// PEM text of one party's certificate and private key.
#[derive(Clone)]
pub struct PartyCredentials {
    /// The party's certificate, signed by the CA.
    pub cert_pem: String,
    /// The party's PKCS#8 private key.
    pub key_pem: String,
}

impl std::fmt::Debug for PartyCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartyCredentials").finish_non_exhaustive()
    }
}

/// A CA certificate and the credentials of every party of a deployment.
#[derive(Clone, Debug)]
pub struct Deployment {
    /// The CA certificate every party trusts.
    pub ca_cert_pem: String,
    /// Credentials, index = party id.
    pub parties: Vec<PartyCredentials>,
}

fn cert_err(what: &str, e: impl std::fmt::Display) -> NetError {
    NetError::Certificate(format!("{what}: {e}"))
}

impl Deployment {
    /// Creates a fresh CA named `name` and certificates for parties `0..parties`.
    pub fn generate(name: &str, parties: usize) -> Result<Self, NetError> {
        let ca_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)
            .map_err(|e| cert_err("generating the CA key", e))?;
        let mut ca_params =
            CertificateParams::new(Vec::<String>::new()).map_err(|e| cert_err("CA parameters", e))?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, format!("Veil deployment CA: {name}"));
        ca_params.distinguished_name = dn;
        let ca_cert = ca_params.self_signed(&ca_key).map_err(|e| cert_err("signing the CA", e))?;
        let issuer = Issuer::new(ca_params, ca_key);
        let mut out = Vec::with_capacity(parties);
        for id in 0..parties {
            let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)
                .map_err(|e| cert_err("generating a party key", e))?;
            let mut params =
                CertificateParams::new(vec![party_name(id)]).map_err(|e| cert_err("party parameters", e))?;
            let mut dn = DistinguishedName::new();
            dn.push(DnType::CommonName, party_name(id));
            params.distinguished_name = dn;
            params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
            params.extended_key_usages =
                vec![ExtendedKeyUsagePurpose::ServerAuth, ExtendedKeyUsagePurpose::ClientAuth];
            let cert =
                params.signed_by(&key, &issuer).map_err(|e| cert_err("signing a party certificate", e))?;
            out.push(PartyCredentials { cert_pem: cert.pem(), key_pem: key.serialize_pem() });
        }
        Ok(Deployment { ca_cert_pem: ca_cert.pem(), parties: out })
    }

    /// The [`Identity`] of party `id`.
    pub fn identity(&self, id: PartyId) -> Result<Identity, NetError> {
        let p = self.parties.get(id).ok_or_else(|| {
            NetError::Certificate(format!("no party {id} in a deployment of {}", self.parties.len()))
        })?;
        Identity::from_pem(&self.ca_cert_pem, &p.cert_pem, &p.key_pem)
    }

    /// Writes `ca.pem` and `party-<id>.pem|.key` into `dir` (created if missing).
    pub fn write(&self, dir: &Path) -> Result<(), NetError> {
        let io = |what: &Path, e: std::io::Error| cert_err(&format!("writing {}", what.display()), e);
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let ca = dir.join("ca.pem");
        std::fs::write(&ca, &self.ca_cert_pem).map_err(|e| io(&ca, e))?;
        for (id, p) in self.parties.iter().enumerate() {
            let cert = dir.join(format!("party-{id}.pem"));
            std::fs::write(&cert, &p.cert_pem).map_err(|e| io(&cert, e))?;
            let key = dir.join(format!("party-{id}.key"));
            write_private(&key, &p.key_pem).map_err(|e| io(&key, e))?;
        }
        Ok(())
    }
}

#[cfg(unix)]
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(path)?;
    f.write_all(text.as_bytes())
}

#[cfg(not(unix))]
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::write(path, text)
}

/// What one party needs for mutual TLS: the CA it trusts, its certificate and its key.
pub struct Identity {
    pub(crate) ca: CertificateDer<'static>,
    pub(crate) chain: Vec<CertificateDer<'static>>,
    pub(crate) key: PrivateKeyDer<'static>,
}

impl Clone for Identity {
    fn clone(&self) -> Self {
        Identity { ca: self.ca.clone(), chain: self.chain.clone(), key: self.key.clone_key() }
    }
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity").finish_non_exhaustive()
    }
}

impl Identity {
    /// Parses PEM text of the CA certificate, the party certificate and the party key.
    pub fn from_pem(ca_pem: &str, cert_pem: &str, key_pem: &str) -> Result<Self, NetError> {
        let ca = CertificateDer::from_pem_slice(ca_pem.as_bytes())
            .map_err(|e| cert_err("reading the CA certificate", e))?;
        let chain = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| cert_err("reading the party certificate", e))?;
        if chain.is_empty() {
            return Err(NetError::Certificate("the party certificate file holds no certificate".into()));
        }
        let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
            .map_err(|e| cert_err("reading the party key", e))?;
        Ok(Identity { ca, chain, key })
    }

    /// Reads the three PEM files.
    pub fn from_files(ca: &Path, cert: &Path, key: &Path) -> Result<Self, NetError> {
        let read = |p: &Path| {
            std::fs::read_to_string(p).map_err(|e| cert_err(&format!("reading {}", p.display()), e))
        };
        Self::from_pem(&read(ca)?, &read(cert)?, &read(key)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generate_write_and_load() {
        let d = Deployment::generate("test", 3).unwrap();
        assert_eq!(d.parties.len(), 3);
        let dir = tempfile::tempdir().unwrap();
        d.write(dir.path()).unwrap();
        let id = Identity::from_files(
            &dir.path().join("ca.pem"),
            &dir.path().join("party-2.pem"),
            &dir.path().join("party-2.key"),
        )
        .unwrap();
        assert_eq!(id.chain.len(), 1);
        assert!(d.identity(3).is_err());
    }

    #[test]
    fn garbage_pem_is_a_clear_error() {
        let err = Identity::from_pem("not a pem", "x", "y").unwrap_err();
        assert!(err.to_string().contains("CA certificate"), "{err}");
    }
}
