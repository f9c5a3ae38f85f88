//! The `mosformer` protocol family: maliciously secure three-party transformer inference,
//! after *Mosformer: Maliciously Secure Three-Party Inference Framework for Large
//! Transformers* (ACM CCS 2025).
//!
//! # Security model
//! Three compute servers P0, P1, P2; at most one is corrupted and may deviate arbitrarily
//! (malicious, honest majority); security with abort: a detected deviation stops the run with
//! an [`veil_mpc::MpcError::Abort`] naming the failed check, and nothing more is revealed.
//!
//! # What is here so far
//! The replicated-sharing layer (paper §3, "Basic sub-protocols"):
//! - [`rss`]: 2-of-3 replicated shares `⟨x⟩` over Z_2^16, Z_2^32, Z_2^64 and their local
//!   operations;
//! - [`prss`]: PRF-derived random sharings (F_rand) and zero-sharings, without communication;
//! - [`reshare`]: 3-of-3 additive → replicated (1 message of ℓ bits per element per party);
//! - [`mul`]: the local cross-term product followed by reshare (the semi-honest multiplication
//!   that the malicious one verifies with triples);
//! - [`open`]: reconstruction to one party and to all, each checked with the redundant copy
//!   that replicated sharing provides (sent as a hash, see the module);
//! - [`input`]: input sharing by a server with a consistency check between its two receivers;
//! - [`owners`]: input owners outside the servers (data owner, model owner): checked sharing,
//!   and output revealed to the data owner only;
//! - [`keys`]: the MAC key and the *random* sharing of 1 the FSS gates weight pairs with;
//! - [`mac`]: the batched, deferrable MAC check, made sound over rings with extra bits;
//! - [`deal`]: verified dealing of point-function keys (the offline phase of the FSS gates);
//! - [`lut`]: Π_LUT, a public table at a secret index, MAC'd;
//! - [`drelu`]: Π_DReLU with the dealer's auxiliary data checked (binarity + linear relation),
//!   and Π_Select;
//! - [`max`]: ReLU and the Max tournament;
//! - [`gelu`]: Π_GELU (ReLU minus a 256-entry table of the difference) at 6 fractional bits;
//! - [`recip`]: Π_Inv and Π_Rsqrt by domain reduction with base 256;
//! - [`exp`]: Π_Exp for non-positive inputs (BOLT's decomposition);
//! - [`softmax`]: Π_Softmax, with the causal-mask variant;
//! - [`layernorm`]: LayerNorm with Rsqrt in the smaller ring;
//! - [`verified`]: malicious multiplication and matrix multiplication, verified with triples
//!   ([`triples`]) before the product is used;
//! - [`trunc`]: truncation by public divisors (powers of two and others) with truncation pairs;
//! - [`convert`]: modulus conversion, local downcast and masked-opening upcast;
//! - [`family`]: [`Mosformer`], the family behind `veil-mpc`'s capability traits, in malicious
//!   or semi-honest mode.
//!
//! Still to come: triples, truncation pairs and upcast tuples produced by the parties themselves
//! (only an insecure test dealer of those exists yet; FSS keys are already dealt and verified by
//! the parties), and the model runtime that assembles these gates into transformer layers.

pub mod convert;
pub mod deal;
pub mod drelu;
pub mod exp;
pub mod family;
pub mod gelu;
pub mod input;
pub mod keys;
pub mod layernorm;
pub mod lut;
pub mod mac;
pub mod max;
pub mod mul;
pub mod open;
pub mod owners;
pub mod prss;
pub mod recip;
pub mod reshare;
pub mod rss;
pub mod softmax;
pub mod triples;
pub mod trunc;
pub mod ucmp;
pub mod verified;

pub use family::{Mosformer, Security};
pub use rss::Rss;
