//! The expression a loop program evaluates: a list of nodes, operands before users, the last
//! the result. Movement ops are already folded into the strides of loads and indices.

use crate::attributes::{BinaryOp, ComparisonDirection, UnaryOp};
use crate::element_type::ElementType;
use crate::literal::Literal;

/// One node of the expression.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub(super) kind: NodeKind,
    pub(super) element_type: ElementType,
    pub(super) operands: Vec<usize>,
}

/// What a node computes. `Load` and `Index` carry strides over the walk's dimensions.
#[derive(Clone, Debug)]
pub(super) enum NodeKind {
    /// Input `input` read at `offset + Σ index·strides`.
    Load {
        input: usize,
        offset: isize,
        strides: Vec<isize>,
    },
    /// The value `offset + Σ index·strides` (an iota seen through the movement ops above it).
    Index {
        offset: isize,
        strides: Vec<isize>,
    },
    /// A scalar constant.
    Constant(Literal),
    /// A row reduction: operand 0's values over the row folded with the op, starting from
    /// operand 1 (a scalar); one value for each row of the chunk.
    Reduce(BinaryOp),
    Unary(UnaryOp),
    Binary(BinaryOp),
    Compare(ComparisonDirection),
    Select,
    Clamp,
    Convert,
}

/// A node of `kind` (for the loop engine's unit tests).
#[cfg(test)]
pub(super) fn node(kind: NodeKind, element_type: ElementType, operands: &[usize]) -> Node {
    Node { kind, element_type, operands: operands.to_vec() }
}

/// A load of input 0 along the row (for the loop engine's unit tests).
#[cfg(test)]
pub(super) fn load(element_type: ElementType) -> Node {
    node(NodeKind::Load { input: 0, offset: 0, strides: vec![1] }, element_type, &[])
}
