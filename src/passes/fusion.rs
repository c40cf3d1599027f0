//! (being written)

use crate::hlo::HloComputation;
use crate::passes::Pass;

/// (being written)
pub(crate) struct LoopFusion;

impl Pass for LoopFusion {
    fn name(&self) -> &'static str {
        "fusion"
    }

    fn run(&self, _computation: &mut HloComputation) -> bool {
        false
    }
}
