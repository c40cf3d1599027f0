//! What a register chain is (see `chains.rs`, which finds them): its links, its side runs,
//! the row sum it folds, and each node's role in the program's chains.

use crate::element_type::ElementType;

/// The type chains are computed for. Other types are either computed through `f32`, where
/// their conversions cost more than the passes, or rare in long element-wise chains.
pub(super) const CHAINED_TYPE: ElementType = ElementType::F32;

/// One link of a chain: an op on the running value and, for a binary op, the node of its
/// other operand and the side the running value is on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Link {
    Neg,
    Abs,
    Function(ChainFunction),
    Binary { op: ChainOp, other: usize, running_left: bool },
}

/// The binary ops a chain computes in registers: those that are one or a few vector
/// instructions. Any other binary op ends a chain.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum ChainOp {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
}

/// The elementary functions a chain computes, each as its own pass does (the same function,
/// the same fused multiply-adds, so to the bit): `exp`, `tanh` and `logistic` in the block's
/// registers (`registers/functions.rs`), `log` over the block's lanes through memory
/// (the block stored, mapped by a vectorized loop and reloaded). Even through memory a
/// function in the chain costs instructions but saves time: node by node, the cheap passes
/// around it wait on memory, where inside the chain the output's stores overlap its arithmetic.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum ChainFunction {
    Exp,
    Log,
    Tanh,
    Logistic,
}

/// A chain ending at a node: the node its running value starts from, then its links in order,
/// one per node of the chain, and the side runs its links read.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Chain {
    pub(super) start: usize,
    pub(super) links: Vec<Link>,
    pub(super) sides: Vec<Side>,
    /// The sum along the row of the chain's values that it folds as it computes them.
    pub(super) fold: Option<Fold>,
}

/// A row sum of a chain's values (an `f32` add reduce), which the chain sums block by block as
/// it computes them, in the order a pass over them adds (`chunk_ops::fold_in_chunks`), so to
/// the bit its value: a pass over the chain's values fewer. Softmax's `Σ exp(x − m)` is one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Fold {
    /// The reduce's node.
    pub(super) node: usize,
    /// Its place among the program's folds (each item keeps its rows' piece sums for each).
    pub(super) index: usize,
}

/// A short run of nodes (up to [`MAX_SIDE_LINKS`]) whose last node (`node`) only a link of a
/// chain reads: the chain computes it block by block beside its running value, from `start`
/// through `links`, so that it is never a pass or a chain of its own. GELU's `0.5·x` is one:
/// as a pass it was the first to read `x` from memory, in a loop that waited on it.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Side {
    pub(super) node: usize,
    pub(super) start: usize,
    pub(super) links: Vec<Link>,
}

/// The most side runs a chain computes (each costs a block of lanes on the stack).
pub(super) const MAX_SIDES: usize = 2;

/// The most links of a side run: a longer run read by one link is a chain of its own.
pub(super) const MAX_SIDE_LINKS: usize = 3;

/// What a node is in the program's chains.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Role {
    /// Evaluated on its own.
    Alone,
    /// Inside the chain ending at the given node: computed only in registers, by that node.
    Inside(usize),
    /// The last node of a chain, which computes the whole chain.
    End(Chain),
    /// A row sum of the values of the chain ending at the given node ([`Fold`]): folded by the
    /// chain when it runs in registers over rows of whole blocks, evaluated on its own
    /// otherwise.
    Folded(usize),
}
