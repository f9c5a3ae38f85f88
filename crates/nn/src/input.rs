//! The data owner's input: token ids for a transformer, a batch of images for a CNN.

use crate::error::{NnError, Result};
use crate::graph::{Graph, Op};
use crate::weights::FloatTensor;

/// What the data owner runs a model on.
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// Token ids (a graph starting with `Tokens`).
    Tokens(&'a [u32]),
    /// Images `[B, C, H, W]` (a graph starting with `Image`).
    Images(&'a FloatTensor),
}

impl Input<'_> {
    /// The public size of the input: the number of tokens or of images.
    pub fn size(&self) -> usize {
        match self {
            Input::Tokens(ids) => ids.len(),
            Input::Images(t) => t.shape.first().copied().unwrap_or(0),
        }
    }

    /// Checks that the input is the kind and shape the graph takes.
    pub fn check(&self, graph: &Graph) -> Result<()> {
        match (self, graph.nodes.first().map(|n| &n.op)) {
            (Input::Tokens(ids), Some(Op::Tokens)) if !ids.is_empty() => Ok(()),
            (Input::Tokens(_), Some(Op::Tokens)) => Err(NnError::Invalid("no tokens".into())),
            (Input::Images(t), Some(Op::Image { channels, height, width })) => {
                let want = [*channels, *height, *width];
                if t.shape.len() != 4 || t.shape[1..] != want || t.shape[0] == 0 {
                    return Err(NnError::Invalid(format!(
                        "images of shape {:?}; the model takes [batch ≥ 1, {channels}, {height}, {width}]",
                        t.shape
                    )));
                }
                Ok(())
            }
            (_, Some(op)) => Err(NnError::Invalid(format!(
                "the model's input is {}, not {}",
                op.name(),
                match self {
                    Input::Tokens(_) => "token ids",
                    Input::Images(_) => "images",
                }
            ))),
            (_, None) => Err(NnError::Invalid("empty graph".into())),
        }
    }
}
