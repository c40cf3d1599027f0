//! Call inlining: a `call` is replaced by the instructions of the computation it calls, its
//! parameters by the call's operands, so the optimizer sees through it (simplifies, fuses
//! across it). jax wraps `where`, `clip`, `relu`, `softmax`… in calls; XLA inlines them too.

use crate::hlo::ir::{HloComputation, Instruction, InstructionId, Opcode};
use crate::passes::Pass;

/// Inlines every `call` of the computation (calls inside called computations are inlined as
/// the pipeline reaches those).
pub(crate) struct InlineCalls;

impl Pass for InlineCalls {
    fn name(&self) -> &'static str {
        "inline-calls"
    }

    fn run(&self, computation: &mut HloComputation) -> bool {
        if !computation.instructions.iter().any(|i| matches!(i.opcode, Opcode::Call { .. })) {
            return false;
        }
        let mut counter = 0;
        let old = std::mem::take(&mut computation.instructions);
        // Where each old instruction now is.
        let mut moved: Vec<InstructionId> = Vec::with_capacity(old.len());
        let mut arena: Vec<Instruction> = Vec::with_capacity(old.len());
        for instruction in &old {
            let operands: Vec<InstructionId> = instruction.operands.iter().map(|&o| moved[o]).collect();
            let Opcode::Call { computation: called } = &instruction.opcode else {
                arena.push(Instruction { operands, ..instruction.clone() });
                moved.push(arena.len() - 1);
                continue;
            };
            // The callee's instructions, its parameters standing for the call's operands.
            let mut callee_moved: Vec<InstructionId> = Vec::with_capacity(called.instructions.len());
            for inner in &called.instructions {
                if let Opcode::Parameter { number } = inner.opcode {
                    callee_moved.push(operands[number as usize]);
                    continue;
                }
                let name = fresh(computation, &old, &arena, &inner.name, &mut counter);
                let inner_operands = inner.operands.iter().map(|&o| callee_moved[o]).collect();
                arena.push(Instruction { operands: inner_operands, name, ..inner.clone() });
                callee_moved.push(arena.len() - 1);
            }
            moved.push(callee_moved[called.root]);
        }
        computation.root = moved[computation.root];
        computation.instructions = arena;
        true
    }
}

/// `name` if no instruction of the caller has it yet, else a new `base.N`.
fn fresh(
    computation: &HloComputation,
    old: &[Instruction],
    arena: &[Instruction],
    name: &str,
    counter: &mut usize,
) -> String {
    let taken = |n: &str| old.iter().chain(arena).any(|i| i.name == n);
    if !taken(name) {
        return name.to_string();
    }
    let base = crate::hlo::ir::base_name(name);
    loop {
        let candidate = computation.fresh_name(base, counter);
        if !taken(&candidate) {
            return candidate;
        }
    }
}
