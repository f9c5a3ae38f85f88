//! The one walk over a graph that every executor shares: the float reference
//! ([`crate::float`]), the plaintext fixed-point executor ([`crate::fixed`]) and the secure
//! executor ([`crate::secure`]), and the secure executor's walk over shapes that plans a
//! session's preprocessing. An executor supplies the value of each node from the values of its
//! inputs ([`Executor::node`]); the walk does the rest alike for all of them:
//! - before anything runs, it refuses a graph with an operation the executor lacks, naming the
//!   node and the operation ([`Executor::lacks`]), so no capability hole shows at run time;
//! - it computes the nodes in order, up to the output, with the shapes of every value known
//!   from the graph ([`Graph::shapes`]);
//! - it drops each value after its last use (the output excepted), so an executor holds one
//!   layer's values at a time.

use crate::error::{NnError, Result};
use crate::graph::{Graph, Node};

/// Where the walk stands: the node being computed, in its graph, with every value's shape.
pub(crate) struct At<'a> {
    /// The node's index (its value's id).
    pub index: usize,
    /// The node.
    pub node: &'a Node,
    /// The graph.
    pub graph: &'a Graph,
    /// Every value's shape for this input size.
    pub shapes: &'a [Vec<usize>],
    /// The last node that reads each value (`usize::MAX` for the output).
    pub last_use: &'a [usize],
}

impl At<'_> {
    /// The shape of the node's input `k`.
    pub fn input_shape(&self, k: usize) -> &[usize] {
        &self.shapes[self.node.inputs[k]]
    }

    /// The node's input `k` as an image `[B, H, W, C]`.
    pub fn input_image(&self, k: usize) -> Result<[usize; 4]> {
        <[usize; 4]>::try_from(self.input_shape(k)).map_err(|_| {
            NnError::Invalid(format!(
                "node {}: input of shape {:?} is not an image",
                self.index,
                self.input_shape(k)
            ))
        })
    }

    /// The node's input `k` as a matrix `[rows, cols]`.
    pub fn input_matrix(&self, k: usize) -> Result<[usize; 2]> {
        <[usize; 2]>::try_from(self.input_shape(k)).map_err(|_| {
            NnError::Invalid(format!(
                "node {}: input of shape {:?} is not a matrix",
                self.index,
                self.input_shape(k)
            ))
        })
    }
}

/// What an executor supplies to the walk.
pub(crate) trait Executor {
    /// A value between nodes.
    type Value;

    /// Why this executor cannot compute the operation of `node`, if it cannot (checked for
    /// every node before anything runs).
    fn lacks(&self, node: &Node) -> Option<String> {
        let _ = node;
        None
    }

    /// The value of the node at `at`, from its inputs' values (in the node's input order).
    fn node(&mut self, at: &At<'_>, inputs: &[&Self::Value]) -> Result<Self::Value>;
}

/// Refuses `graph` if `exec` lacks one of its operations, naming the first such node.
pub(crate) fn refuse_lacking<E: Executor>(exec: &E, graph: &Graph) -> Result<()> {
    for (i, node) in graph.nodes.iter().enumerate() {
        if let Some(why) = exec.lacks(node) {
            return Err(NnError::Unsupported(format!("node {i} ({}): {why}", node.op.name())));
        }
    }
    Ok(())
}

/// Runs the nodes of `graph` up to `out` on an input of size `n` (tokens or images) with
/// `exec`; returns the value of node `out`.
pub(crate) fn walk<E: Executor>(exec: &mut E, graph: &Graph, n: usize, out: usize) -> Result<E::Value> {
    graph.validate()?;
    refuse_lacking(exec, graph)?;
    if out >= graph.nodes.len() {
        return Err(NnError::Invalid(format!("no node {out} in a graph of {}", graph.nodes.len())));
    }
    let shapes = graph.shapes(n)?;
    let mut last_use = vec![0usize; graph.nodes.len()];
    for (i, nd) in graph.nodes.iter().enumerate() {
        for &v in &nd.inputs {
            last_use[v] = i;
        }
    }
    last_use[out] = usize::MAX;
    let mut values: Vec<Option<E::Value>> = (0..graph.nodes.len()).map(|_| None).collect();
    for (index, node) in graph.nodes.iter().enumerate().take(out + 1) {
        let at = At { index, node, graph, shapes: &shapes, last_use: &last_use };
        let inputs = node
            .inputs
            .iter()
            .map(|&v| values[v].as_ref().ok_or_else(|| NnError::Invalid(format!("value {v} not available"))))
            .collect::<Result<Vec<_>>>()?;
        let value = exec.node(&at, &inputs)?;
        values[index] = Some(value);
        for &v in &node.inputs {
            if last_use[v] == index {
                values[v] = None;
            }
        }
    }
    values[out].take().ok_or_else(|| NnError::Invalid("the output was not computed".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Op;

    use std::cell::Cell;
    use std::rc::Rc;

    /// Counts how many values are held at once, and lacks GELU.
    #[derive(Default)]
    struct Counting {
        held: Rc<Cell<usize>>,
        most: usize,
    }

    impl Executor for Counting {
        type Value = Held;

        fn lacks(&self, node: &Node) -> Option<String> {
            matches!(node.op, Op::Gelu(_)).then(|| "no GELU here".to_string())
        }

        fn node(&mut self, at: &At<'_>, inputs: &[&Held]) -> Result<Held> {
            assert_eq!(inputs.len(), at.node.inputs.len());
            self.held.set(self.held.get() + 1);
            self.most = self.most.max(self.held.get());
            Ok(Held(Rc::clone(&self.held)))
        }
    }

    /// A value that tells its executor when it is dropped.
    #[derive(Debug)]
    struct Held(Rc<Cell<usize>>);

    impl Drop for Held {
        fn drop(&mut self) {
            self.0.set(self.0.get() - 1);
        }
    }

    fn chain(len: usize, op: Op) -> Graph {
        let mut g = Graph::default();
        g.nodes.push(Node { op: Op::Tokens, inputs: vec![], scope: "input".into() });
        for i in 1..len {
            g.nodes.push(Node { op: op.clone(), inputs: vec![i - 1], scope: format!("layer.{i}") });
        }
        g
    }

    #[test]
    fn values_are_dropped_after_their_last_use_and_lacking_ops_are_refused_up_front() {
        let mut exec = Counting::default();
        let out = walk(&mut exec, &chain(6, Op::Relu), 3, 5).unwrap();
        // A chain holds at most a node's input and its value.
        assert_eq!(exec.most, 2);
        assert_eq!(exec.held.get(), 1);
        drop(out);
        assert_eq!(exec.held.get(), 0);
        let mut exec = Counting::default();
        let err = walk(&mut exec, &chain(4, Op::Gelu(crate::graph::GeluForm::Tanh)), 3, 3).unwrap_err();
        assert!(err.to_string().contains("node 1 (gelu): no GELU here"), "{err}");
        assert_eq!(exec.most, 0, "a node ran before the refusal");
    }
}
