//! Dead-code elimination: drop what the root does not need (parameters stay).

use crate::hlo::ir::HloComputation;
use crate::passes::Pass;

/// Removes instructions the root does not depend on.
pub(crate) struct DeadCode;

impl Pass for DeadCode {
    fn name(&self) -> &'static str {
        "dce"
    }

    fn run(&self, computation: &mut HloComputation) -> bool {
        computation.remove_dead()
    }
}
