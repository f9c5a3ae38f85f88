//! Veil's model layer: the model IR ([`graph`]), loaders (Hugging Face BERT-family folders,
//! [`bert`]; the tokenizer, [`tokenizer`]; weights, [`weights`]), the float reference
//! executor ([`float`]) and the secure executor over any family that has the needed
//! capabilities ([`secure`]).

pub mod bert;
pub mod error;
pub mod float;
pub mod graph;
pub mod secure;
pub mod tokenizer;
pub mod weights;

pub use error::{NnError, Result};
