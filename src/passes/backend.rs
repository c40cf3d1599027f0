//! What the passes ask of the executor, which they never import: a computation evaluated
//! (constant folding) and whether one loop computes a fused computation (fusion).

use crate::error::Result;
use crate::hlo::ir::HloComputation;
use crate::literal::Literal;
use crate::shape::Shape;

/// Evaluates a computation on arguments, unoptimized (the executor's, handed in by
/// `compile`): how constant folding computes a folded value.
pub(crate) type Evaluator<'a> = &'a (dyn Fn(&HloComputation, &[&Literal]) -> Result<Literal> + Sync);

/// Whether the loop compiler computes a fused computation, over inputs of the given shapes, as
/// one loop (the executor's, handed in by `compile`), and, rooted at a reduce, folds its
/// values as the reduce of its operand materialized would: how fusion decides that a reduce
/// joins a loop as a row reduction, or keeps its producers.
pub(crate) type LoopCompiles<'a> = &'a (dyn Fn(&HloComputation, &[Shape]) -> bool + Sync);

/// What the passes ask of the executor, which they never import.
#[derive(Clone, Copy)]
pub(crate) struct Backend<'a> {
    pub(crate) evaluate: Evaluator<'a>,
    pub(crate) loop_compiles: LoopCompiles<'a>,
}
