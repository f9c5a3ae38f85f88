//! Veil's benchmarks, apart from the runtime they measure: every record prints bytes, rounds
//! and seconds per party beside the paper's figure, with each side's counting convention.
//!
//! - [`ops`]: `veil bench ops --family mosformer`, one protocol or gate at a time;
//! - [`aegis_ops`]: `veil bench ops --family aegis`;
//! - [`ot_ops`]: `veil bench ops --family ot`, the OT engines (IKNP, KOS, Ferret);
//! - [`twopc_ops`]: `veil bench ops --family ot --op cmp|relu|trunc|trunc-exact`, the 2-party toolkit;
//! - [`model`]: `veil bench model`, whole CNNs and MiniLM through the runtime's sessions;
//! - [`encoder`]: `veil bench layer`, BERT-base, BERT-large and GPT-2 layers among the three
//!   `mosformer` servers with the cost split by block kind;
//! - [`mm_gbdt`]: `veil bench gbdt`, GBDT training and prediction under `mm`, F1 beside the
//!   clear training;
//! - [`mm_layer`]: `veil bench layer --family mm`, BERT layers between the client and the
//!   server through the runtime's inference session.

pub mod aegis_ops;
pub mod dollars;
pub mod encoder;
pub mod he_ops;
pub mod machine;
pub mod mm_gbdt;
pub mod mm_layer;
pub mod mm_ops;
pub mod model;
pub mod ops;
pub mod ot_ops;
pub mod seal;
pub mod twopc_ops;
