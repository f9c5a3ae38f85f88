//! rustls configuration for Veil's links: TLS 1.3 only, mutual authentication against the
//! deployment's CA, and the session id bound into the handshake through ALPN.
//!
//! rustls was chosen because it is memory-safe, well maintained, TLS 1.3 capable and needs no
//! system OpenSSL; its `ring` backend builds from crates.io alone.
//!
//! Binding: both sides offer exactly one ALPN protocol, `veil1:<hex session id>`. A peer of
//! another session offers another string, so the TLS handshake itself fails
//! (`no_application_protocol`) before any application byte is exchanged.

use std::sync::Arc;

use rustls::pki_types::{CertificateDer, ServerName};
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConfig, RootCertStore, ServerConfig};

use crate::certs::{Identity, party_name};
use crate::{NetError, PartyId};

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The ALPN protocol id that carries the session id.
pub(crate) fn alpn(session: &[u8; 16]) -> Vec<u8> {
    let mut s = b"veil1:".to_vec();
    for b in session {
        s.extend_from_slice(format!("{b:02x}").as_bytes());
    }
    s
}

fn roots(identity: &Identity) -> Result<Arc<RootCertStore>, NetError> {
    let mut roots = RootCertStore::empty();
    roots
        .add(identity.ca.clone())
        .map_err(|e| NetError::Certificate(format!("the CA certificate is unusable: {e}")))?;
    Ok(Arc::new(roots))
}

fn tls_err(e: impl std::fmt::Display) -> NetError {
    NetError::Certificate(format!("TLS configuration: {e}"))
}

/// Server side: requires a client certificate signed by the CA.
pub(crate) fn server_config(identity: &Identity, session: &[u8; 16]) -> Result<Arc<ServerConfig>, NetError> {
    let verifier =
        WebPkiClientVerifier::builder_with_provider(roots(identity)?, provider()).build().map_err(tls_err)?;
    let mut cfg = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(tls_err)?
        .with_client_cert_verifier(verifier)
        .with_single_cert(identity.chain.clone(), identity.key.clone_key())
        .map_err(tls_err)?;
    cfg.alpn_protocols = vec![alpn(session)];
    Ok(Arc::new(cfg))
}

/// Client side: presents our certificate, accepts only the CA's.
pub(crate) fn client_config(identity: &Identity, session: &[u8; 16]) -> Result<Arc<ClientConfig>, NetError> {
    let mut cfg = ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(tls_err)?
        .with_root_certificates(roots(identity)?)
        .with_client_auth_cert(identity.chain.clone(), identity.key.clone_key())
        .map_err(tls_err)?;
    cfg.alpn_protocols = vec![alpn(session)];
    Ok(Arc::new(cfg))
}

/// The TLS server name under which party `id` must present its certificate.
pub(crate) fn server_name(id: PartyId) -> Result<ServerName<'static>, NetError> {
    ServerName::try_from(party_name(id)).map_err(|e| NetError::Config(format!("party name for {id}: {e}")))
}

/// Checks that a (CA-verified) end-entity certificate names party `id`.
pub(crate) fn cert_names_party(cert: &CertificateDer<'_>, id: PartyId) -> Result<(), String> {
    let ee = webpki::EndEntityCert::try_from(cert).map_err(|e| format!("unreadable certificate: {e}"))?;
    let name = server_name(id).map_err(|e| e.to_string())?;
    ee.verify_is_valid_for_subject_name(&name)
        .map_err(|_| format!("its certificate is not issued to {} (wrong party certificate)", party_name(id)))
}

/// Words for a rustls error seen during the handshake.
pub(crate) fn explain(e: &rustls::Error) -> String {
    use rustls::{AlertDescription as A, CertificateError as C, Error as E};
    match e {
        E::NoApplicationProtocol | E::AlertReceived(A::NoApplicationProtocol) => {
            "session id mismatch: the peer belongs to another session".into()
        }
        E::InvalidCertificate(C::UnknownIssuer | C::BadSignature) => {
            "the peer's certificate is not signed by this deployment's CA".into()
        }
        E::InvalidCertificate(C::NotValidForName | C::NotValidForNameContext { .. }) => {
            "the peer's certificate is issued to another party".into()
        }
        E::AlertReceived(A::UnknownCA | A::BadCertificate | A::CertificateUnknown | A::DecryptError) => {
            format!("the peer refused our certificate ({e}); is it signed by the deployment's CA?")
        }
        E::NoCertificatesPresented => "the peer presented no certificate".into(),
        other => format!("TLS error: {other}"),
    }
}
