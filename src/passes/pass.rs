//! A pass: one rewrite of a computation, the trait every pass of the pipeline implements.

use crate::hlo::ir::HloComputation;

/// One rewrite of a computation.
pub(crate) trait Pass {
    /// The pass's name, as the verifier's errors name it.
    fn name(&self) -> &'static str;
    /// Rewrites `computation`; returns whether anything changed.
    fn run(&self, computation: &mut HloComputation) -> bool;
}
