//! Veil's model layer: the model IR ([`graph`], with the CNN layers' index maps in [`cnn`]),
//! loaders (Hugging Face BERT-family folders, [`bert`], and GPT-2, [`gpt2`]; their tokenizers,
//! [`tokenizer`] and [`bpe`]; image models, [`image`]: ONNX CNNs, [`onnx`], and Vision
//! Transformers, [`vit`]; weights, [`weights`]), the float reference
//! executor ([`float`]), the plaintext fixed-point executor ([`fixed`]) and the secure
//! executor over any family that has the needed capabilities ([`secure`]).

pub mod bert;
pub mod bpe;
pub mod cnn;
pub mod error;
pub mod fixed;
pub mod float;
pub mod gpt2;
pub mod graph;
pub mod image;
pub mod input;
pub mod onnx;
pub mod onnx_proto;
pub mod progress;
pub mod secure;
pub mod tokenizer;
pub mod vit;
mod walk;
pub mod weights;
pub mod zoo;

pub use error::{NnError, Result};
pub use input::Input;
