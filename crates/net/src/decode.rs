//! The decoders of what a peer sends before any protocol reads it, public so that the fuzz
//! targets (`crates/fuzz`) reach them: the frame splitter of a link's decrypted stream and
//! the hello that follows the TLS handshake. Neither may panic or allocate beyond its limits
//! on any input.

use crate::{Frame, NetError, PartyId};

/// Splits a decrypted stream into frames as a link's reader does, fed `chunk` bytes at a time
/// (as reads deliver them): the frames up to the first broken header, and its error. Bytes of
/// an incomplete last frame are left over, as on a link that is still receiving.
pub fn frames(
    peer: PartyId,
    stream: &[u8],
    chunk: usize,
    max_frame: usize,
) -> (Vec<Frame>, Option<NetError>) {
    let mut plain = Vec::new();
    let mut out = Vec::new();
    for piece in stream.chunks(chunk.max(1)) {
        plain.extend_from_slice(piece);
        let (frames, bad) = crate::tcp::split_frames(peer, &mut plain, max_frame);
        out.extend(frames);
        if bad.is_some() {
            return (out, bad);
        }
    }
    (out, None)
}

/// Parses a hello: (claimed party, parties, session id); an error for bytes of another length,
/// magic or version.
pub fn hello(bytes: &[u8]) -> Result<(PartyId, usize, [u8; 16]), String> {
    let h = bytes
        .try_into()
        .map_err(|_| format!("{} bytes are not a hello (it has {})", bytes.len(), crate::tcp::HELLO_BYTES))?;
    crate::tcp::parse_hello(h)
}

/// Reads a party's PEM files as `veil party` does (the CA certificate, the party's chain, its
/// key) and builds the TLS configurations of both sides of a link from them, then checks
/// the certificate names `party`: an error for anything malformed.
pub fn identity(ca_pem: &str, cert_pem: &str, key_pem: &str, party: PartyId) -> Result<(), NetError> {
    let id = crate::certs::Identity::from_pem(ca_pem, cert_pem, key_pem)?;
    let session = [0u8; 16];
    crate::tls::server_config(&id, &session)?;
    crate::tls::client_config(&id, &session)?;
    let cert = id.chain.first().ok_or_else(|| NetError::Certificate("no certificate".into()))?;
    crate::tls::cert_names_party(cert, party).map_err(NetError::Certificate)
}
