//! Call inlining: a `call` is replaced by the instructions of the computation it calls, its
//! parameters by the call's operands, so the optimizer sees through it (simplifies, fuses
//! across it). jax wraps `where`, `clip`, `relu`, `softmax`… in calls; XLA inlines them too.

use crate::hlo::ir::{HloComputation, Instruction, InstructionId, Opcode};
use crate::passes::pass::Pass;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::plan::evaluate;
    use crate::*;

    /// `g(a, b) = a + exp(b)`, called twice: `call(g, x, y) * call(g, y, x)`.
    fn twice_called() -> XlaComputation {
        let g = XlaBuilder::new("g");
        let a = g.parameter(0, &shape!(f32[3]), "a");
        let b = g.parameter(1, &shape!(f32[3]), "b");
        let g = g.build(add(a, exp(b), &[])).unwrap();
        let f = XlaBuilder::new("f");
        let x = f.parameter(0, &shape!(f32[3]), "x");
        let y = f.parameter(1, &shape!(f32[3]), "y");
        f.build(mul(call(&f, &g, &[x, y]), call(&f, &g, &[y, x]), &[])).unwrap()
    }

    #[test]
    fn calls_become_their_instructions_with_fresh_names_and_the_same_values() {
        let computation = twice_called();
        let mut inlined = (*computation.entry).clone();
        assert!(InlineCalls.run(&mut inlined));
        let opcodes: Vec<&str> = inlined.instructions.iter().map(|i| i.opcode.name()).collect();
        assert!(!opcodes.contains(&"call"), "{opcodes:?}");
        // Each call brought its own add and exp; the callee's parameters became the operands.
        assert_eq!(opcodes.iter().filter(|&&o| o == "exponential").count(), 2, "{opcodes:?}");
        assert_eq!(opcodes.iter().filter(|&&o| o == "parameter").count(), 2, "{opcodes:?}");
        let mut names: Vec<&str> = inlined.instructions.iter().map(|i| i.name.as_str()).collect();
        names.sort_unstable();
        assert!(names.windows(2).all(|w| w[0] != w[1]), "names repeat: {names:?}");
        let x = Literal::vec1(&[0.5f32, -1.0, 2.0]);
        let y = Literal::vec1(&[1.0f32, 0.0, -3.0]);
        let got = evaluate(&inlined, &[&x, &y]).unwrap().to_vec::<f32>().unwrap();
        let want: Vec<f32> = [(0.5f32, 1.0f32), (-1.0, 0.0), (2.0, -3.0)]
            .iter()
            .map(|&(x, y)| (x + y.exp()) * (y + x.exp()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_computation_without_calls_is_left_alone() {
        let b = XlaBuilder::new("plain");
        let x = b.parameter(0, &shape!(f32[3]), "x");
        let computation = b.build(exp(x)).unwrap();
        let mut same = (*computation.entry).clone();
        assert!(!InlineCalls.run(&mut same));
        assert_eq!(same, *computation.entry);
    }
}
