//! Dead-code elimination: drop what the root does not need (parameters stay).

use crate::hlo::ir::HloComputation;
use crate::passes::pass::Pass;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::*;

    #[test]
    fn what_the_root_does_not_read_goes_and_parameters_stay() {
        let b = XlaBuilder::new("dead");
        let x = b.parameter(0, &shape!(f32[3]), "x");
        let unused = b.parameter(1, &shape!(f32[3]), "unused");
        let _dead = exp(add(x, unused, &[]));
        let computation = b.build(neg(x)).unwrap();
        let mut live = (*computation.entry).clone();
        let before = live.instructions.len();
        assert!(DeadCode.run(&mut live));
        let opcodes: Vec<&str> = live.instructions.iter().map(|i| i.opcode.name()).collect();
        assert_eq!(opcodes, ["parameter", "parameter", "negate"], "from {before} instructions");
        assert_eq!(live.instructions[live.root].opcode.name(), "negate");
        assert!(!DeadCode.run(&mut live), "a second run finds nothing to remove");
    }
}
