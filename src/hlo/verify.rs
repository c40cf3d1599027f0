//! The verifier: what every stage may assume of a computation, checked (XLA's `HloVerifier`).
//!
//! It runs on what the builder makes and after every optimizer pass (in debug builds and tests,
//! and in release builds when `LAZY_XLA_VERIFY=1` is set), so a bad rewrite
//! is an [`Error`] naming the pass and the instruction instead of a panic or a wrong number
//! later. A computation that passes has:
//!
//! - a root inside the arena, and unique instruction names;
//! - operands that precede their users (the arena is in topological order);
//! - on every instruction, the element type and dimensions shape inference gives for its
//!   operands and attributes ([`infer_shape`]), with the IR's stricter rules for element-wise
//!   ops (operands of the result's dimensions and one element type);
//! - parameters numbered 0, 1, … without gaps or repeats;
//! - fusions that hold only what their kind computes: a `kLoop` fusion only
//!   [`loop_part`](HloComputation::loop_part)s over its parameters and reduces that fold in a
//!   loop (row reductions, which the loop compiler checks it reads along its row), a `kInput`
//!   fusion a reduce that [folds in a loop](crate::hlo::ir::Instruction::folds_in_loop) whose
//!   init value is a parameter, over such an expression;
//! - called computations (reducers, fused computations) that pass too.
//!
//! Layouts need no check: every [`Shape`](crate::Shape) is valid by construction, and a layout
//! is an instruction's own choice (the executor reads and writes any).

use std::collections::HashSet;

use crate::error::{Error, Result};
use crate::hlo::infer::infer_shape;
use crate::hlo::ir::{FusionKind, HloComputation, InstructionId, Opcode};
use crate::hlo::output_fusion::fused_product;
use crate::hlo::text::instruction_text;
use crate::shape::Shape;

/// Checks `computation` and everything it calls; `stage` names what made it, for the error.
pub(crate) fn verify(computation: &HloComputation, stage: &str) -> Result<()> {
    Verifier { computation, stage }.run()?;
    for called in computation.called_computations() {
        Verifier { computation: &called, stage }.run()?;
    }
    Ok(())
}

/// Checks one computation.
struct Verifier<'a> {
    computation: &'a HloComputation,
    stage: &'a str,
}

impl Verifier<'_> {
    fn run(&self) -> Result<()> {
        let instructions = &self.computation.instructions;
        if self.computation.root >= instructions.len() {
            return Err(Error::InvalidComputation {
                stage: self.stage.to_string(),
                computation: self.computation.name.clone(),
                instruction: format!("root #{}", self.computation.root),
                message: format!("the root is not one of the {} instructions", instructions.len()),
            });
        }
        let mut names = HashSet::with_capacity(instructions.len());
        for (id, instruction) in instructions.iter().enumerate() {
            if !names.insert(instruction.name.as_str()) {
                return self.fail(id, "another instruction has this name".to_string());
            }
            if let Some(&late) = instruction.operands.iter().find(|&&o| o >= id) {
                return self.fail(id, format!("operand #{late} does not precede its user #{id}"));
            }
            let operands: Vec<&Shape> =
                instruction.operands.iter().map(|&o| &instructions[o].shape).collect();
            let expected = match infer_shape(&instruction.opcode, &operands, &instruction.shape) {
                Ok(expected) => expected,
                Err(error) => return self.fail(id, error.to_string()),
            };
            if !expected.same_dimensions_and_type(&instruction.shape) {
                return self.fail(
                    id,
                    format!(
                        "Expected instruction to have shape equal to {}, actual shape is {}",
                        expected.human_string(),
                        instruction.shape.human_string()
                    ),
                );
            }
            if let Opcode::Fusion { kind, computation } = &instruction.opcode {
                if let Err(message) = fusion_holds_its_kind(*kind, computation) {
                    return self.fail(id, message);
                }
            }
        }
        self.parameters_are_dense()
    }

    /// Parameter numbers are `0..n`, each once.
    fn parameters_are_dense(&self) -> Result<()> {
        for (expected, id) in self.computation.parameter_ids().into_iter().enumerate() {
            let Opcode::Parameter { number } = self.computation.instructions[id].opcode else { continue };
            if number != expected as i64 {
                let message = format!(
                    "parameters must be numbered 0, 1, … without gaps or repeats; expected {expected}"
                );
                return self.fail(id, message);
            }
        }
        Ok(())
    }

    fn fail(&self, id: InstructionId, message: String) -> Result<()> {
        Err(Error::InvalidComputation {
            stage: self.stage.to_string(),
            computation: self.computation.name.clone(),
            instruction: instruction_text(self.computation, id),
            message,
        })
    }
}

/// Whether a fused computation holds only what a fusion of `kind` computes; if not, why.
fn fusion_holds_its_kind(kind: FusionKind, fused: &HloComputation) -> std::result::Result<(), String> {
    if kind == FusionKind::Output {
        return fused_product(fused).map(|_| ());
    }
    let mut loop_body: Vec<InstructionId> = (0..fused.instructions.len()).collect();
    if kind == FusionKind::Input {
        let root = &fused.instructions[fused.root];
        if !root.folds_in_loop() {
            return Err(format!("the root of a kInput fusion, {}, is not a reduce a loop folds", root.name));
        }
        let init = &fused.instructions[root.operands[1]];
        if !matches!(init.opcode, Opcode::Parameter { .. }) {
            return Err(format!(
                "the init value of a kInput fusion's reduce, {}, is not a parameter",
                init.name
            ));
        }
        loop_body.retain(|&id| id != fused.root);
    }
    for id in loop_body {
        let instruction = &fused.instructions[id];
        let is_parameter = matches!(instruction.opcode, Opcode::Parameter { .. });
        // A kLoop fusion may reduce along its row (the loop compiler checks the row).
        let row_reduction = kind == FusionKind::Loop && instruction.folds_in_loop();
        if !is_parameter && !row_reduction && fused.loop_part(id).is_none() {
            return Err(format!(
                "a {kind} fusion holds {} ({}), which a loop cannot compute",
                instruction.name,
                instruction.opcode.name()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::attributes::{BinaryOp, DotDimensionNumbers};
    use crate::hlo::ir::Instruction;
    use crate::literal::Literal;

    fn instruction(name: &str, opcode: Opcode, operands: &[InstructionId], shape: &str) -> Instruction {
        Instruction { opcode, operands: operands.to_vec(), shape: shape.parse().unwrap(), name: name.into() }
    }

    fn parameter(number: i64, shape: &str) -> Instruction {
        instruction(&format!("p{number}"), Opcode::Parameter { number }, &[], shape)
    }

    fn computation(instructions: Vec<Instruction>) -> HloComputation {
        let root = instructions.len() - 1;
        HloComputation { name: "c".into(), instructions, root }
    }

    fn error(computation: &HloComputation) -> String {
        verify(computation, "test").unwrap_err().to_string()
    }

    fn add(operands: &[InstructionId], shape: &str) -> Instruction {
        instruction("add", Opcode::Binary(BinaryOp::Add), operands, shape)
    }

    /// `sum(p0, p1) = p0 + p1` over f32 scalars.
    fn sum() -> Arc<HloComputation> {
        Arc::new(computation(vec![parameter(0, "f32[]"), parameter(1, "f32[]"), add(&[0, 1], "f32[]")]))
    }

    #[test]
    fn a_well_formed_computation_passes() {
        let c = computation(vec![parameter(0, "f32[2]"), parameter(1, "f32[2]{0}"), add(&[0, 1], "f32[2]")]);
        verify(&c, "test").unwrap();
    }

    #[test]
    fn a_wrong_shape_is_named_with_xlas_sentence() {
        let c = computation(vec![parameter(0, "f32[2]"), parameter(1, "f32[2]"), add(&[0, 1], "f32[3]")]);
        assert_eq!(
            error(&c),
            "Expected instruction to have shape equal to f32[2], actual shape is f32[3]: \
             `ROOT add = f32[3]{0} add(p0, p1)` in computation c (verified after test)"
        );
    }

    #[test]
    fn elementwise_operands_need_the_results_dimensions_and_one_type() {
        let c = computation(vec![parameter(0, "f32[1]"), parameter(1, "f32[2]"), add(&[0, 1], "f32[2]")]);
        assert!(
            error(&c).starts_with("add operands must have equal dimensions: f32[1] and f32[2]"),
            "{}",
            error(&c)
        );
        let c = computation(vec![parameter(0, "f32[2]"), parameter(1, "bf16[2]"), add(&[0, 1], "f32[2]")]);
        assert!(error(&c).starts_with("add operands must have one element type"), "{}", error(&c));
    }

    #[test]
    fn operands_precede_their_users() {
        let mut c = computation(vec![parameter(0, "f32[2]"), add(&[0, 2], "f32[2]"), parameter(1, "f32[2]")]);
        c.root = 1;
        assert!(error(&c).starts_with("operand #2 does not precede its user #1"), "{}", error(&c));
    }

    #[test]
    fn parameters_are_numbered_without_gaps_and_names_are_unique() {
        let c = computation(vec![parameter(0, "f32[2]"), parameter(2, "f32[2]"), add(&[0, 1], "f32[2]")]);
        assert!(error(&c).starts_with("parameters must be numbered 0, 1, … without gaps"), "{}", error(&c));
        let c = computation(vec![parameter(0, "f32[2]"), parameter(0, "f32[2]"), add(&[0, 1], "f32[2]")]);
        assert!(error(&c).starts_with("another instruction has this name"), "{}", error(&c));
    }

    #[test]
    fn a_loop_fusion_holds_only_what_a_loop_computes() {
        let dot = Opcode::Dot {
            numbers: DotDimensionNumbers::new(&[1], &[0], &[], &[]),
            precision: Default::default(),
        };
        let fused = computation(vec![
            parameter(0, "f32[2,2]"),
            parameter(1, "f32[2,2]"),
            instruction("dot", dot, &[0, 1], "f32[2,2]"),
        ]);
        let opcode = Opcode::Fusion { kind: FusionKind::Loop, computation: Arc::new(fused) };
        let c = computation(vec![
            parameter(0, "f32[2,2]"),
            parameter(1, "f32[2,2]"),
            instruction("fusion", opcode, &[0, 1], "f32[2,2]"),
        ]);
        assert!(
            error(&c).starts_with("a kLoop fusion holds dot (dot), which a loop cannot compute"),
            "{}",
            error(&c)
        );
    }

    #[test]
    fn a_loop_fusion_may_hold_a_row_reduction_but_not_an_interpreted_reduce() {
        let fusion_of = |reducer: Arc<HloComputation>| {
            let reduce = Opcode::Reduce { dimensions: vec![1], reducer };
            let fused = computation(vec![
                parameter(0, "f32[2,3]"),
                parameter(1, "f32[]"),
                instruction("reduce", reduce, &[0, 1], "f32[2]"),
                instruction("broadcast", Opcode::Broadcast { dimensions: vec![0] }, &[2], "f32[2,3]"),
                add(&[0, 3], "f32[2,3]"),
            ]);
            let opcode = Opcode::Fusion { kind: FusionKind::Loop, computation: Arc::new(fused) };
            computation(vec![
                parameter(0, "f32[2,3]"),
                parameter(1, "f32[]"),
                instruction("fusion", opcode, &[0, 1], "f32[2,3]"),
            ])
        };
        verify(&fusion_of(sum()), "test").unwrap();
        // a + b + a: not one element-wise op of the two parameters, so no loop folds it.
        let twice = Arc::new(computation(vec![
            parameter(0, "f32[]"),
            parameter(1, "f32[]"),
            add(&[0, 1], "f32[]"),
            add(&[2, 0], "f32[]"),
        ]));
        let error = error(&fusion_of(twice));
        assert!(
            error.starts_with("a kLoop fusion holds reduce (reduce), which a loop cannot compute"),
            "{error}"
        );
    }

    #[test]
    fn an_input_fusion_starts_from_a_parameter() {
        // The shape of the bug issue 9 reported: the init value computed inside the fusion.
        let zero = Opcode::Constant(Arc::new(Literal::scalar(0.0f32)));
        let reduce = Opcode::Reduce { dimensions: vec![0], reducer: sum() };
        let fused = computation(vec![
            parameter(0, "f32[6]"),
            instruction("zero", zero, &[], "f32[]"),
            instruction("reduce", reduce, &[0, 1], "f32[]"),
        ]);
        let opcode = Opcode::Fusion { kind: FusionKind::Input, computation: Arc::new(fused) };
        let c = computation(vec![parameter(0, "f32[6]"), instruction("fusion", opcode, &[0], "f32[]")]);
        assert!(
            error(&c).starts_with("the init value of a kInput fusion's reduce, zero, is not a parameter"),
            "{}",
            error(&c)
        );
    }

    #[test]
    fn called_computations_are_verified_too() {
        let bad_sum =
            Arc::new(computation(vec![parameter(0, "f32[]"), parameter(1, "f32[]"), add(&[0, 1], "f32[2]")]));
        let reduce = Opcode::Reduce { dimensions: vec![0], reducer: bad_sum };
        let c = computation(vec![
            parameter(0, "f32[6]"),
            parameter(1, "f32[]"),
            instruction("reduce", reduce, &[0, 1], "f32[2]"),
        ]);
        assert!(error(&c).starts_with("Reduction function must return a scalar"), "{}", error(&c));
    }
}
