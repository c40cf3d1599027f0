//! Output fusion: a dot or convolution whose only reader is a loop fusion (or one element-wise
//! op) that reads it element-wise moves into that fusion, which becomes XLA's `kOutput`: the
//! executor then applies the loop (a bias, an activation) to each block of the product as the
//! block is computed, instead of writing the whole product and reading it back.
//!
//! A dot's lhs that is a row gather (an embedding lookup) read by the dot alone moves in with
//! it, so the product reads the looked-up rows from the table instead of a copy of them.
//!
//! Runs after loop fusion, so the epilogue is already one loop; what an output fusion may
//! hold is `hlo/output_fusion.rs`'s predicate, which the verifier checks too.

use std::sync::Arc;

use crate::hlo::ir::{FusionKind, HloComputation, Instruction, InstructionId, Opcode};
use crate::hlo::loop_part::LoopPart;
use crate::hlo::output_fusion::{fused_product, is_product, lhs_row_gather};
use crate::passes::pass::Pass;
use crate::shape::Shape;

/// Moves each dot and convolution into the loop that alone reads it element-wise.
pub(crate) struct OutputFusion;

impl Pass for OutputFusion {
    fn name(&self) -> &'static str {
        "output-fusion"
    }

    fn run(&self, computation: &mut HloComputation) -> bool {
        let users = computation.users();
        let mut counter = 0;
        let mut changed = false;
        for (id, readers) in users.iter().enumerate() {
            let [consumer] = readers[..] else { continue };
            if id == computation.root || !is_product(&computation.instructions[id].opcode) {
                continue;
            }
            let gather = gathered_lhs(computation, &users, id);
            let Some((fused, operands)) = with_product(computation, consumer, id, gather, &mut counter)
            else {
                continue;
            };
            if fused_product(&fused).is_err() {
                continue;
            }
            let instruction = &mut computation.instructions[consumer];
            let name = match instruction.opcode {
                Opcode::Fusion { .. } => instruction.name.clone(),
                _ => computation.fresh_name("fusion", &mut counter),
            };
            let instruction = &mut computation.instructions[consumer];
            *instruction = Instruction {
                opcode: Opcode::Fusion { kind: FusionKind::Output, computation: Arc::new(fused) },
                operands,
                shape: instruction.shape.clone(),
                name,
            };
            changed = true;
        }
        computation.remove_dead();
        changed
    }
}

/// The lhs of dot `product_id` if it is a row gather that the dot alone reads.
fn gathered_lhs(
    computation: &HloComputation,
    users: &[Vec<InstructionId>],
    product_id: InstructionId,
) -> Option<InstructionId> {
    let lhs = lhs_row_gather(computation, product_id)?;
    (users[lhs] == [product_id] && lhs != computation.root).then_some(lhs)
}

/// The computation of `consumer` (a loop fusion, or an element-wise op as a fusion of one)
/// with `product_id` (a dot or convolution), its operand, computed inside it from two
/// parameters in its place (or, where `gather` is the product's lhs, from the gather's two
/// operands and the rhs, the gather computed inside too), and the operands of the fusion that
/// computation makes; `None` if `consumer` is neither.
fn with_product(
    computation: &HloComputation,
    consumer: InstructionId,
    product_id: InstructionId,
    gather: Option<InstructionId>,
    counter: &mut usize,
) -> Option<(HloComputation, Vec<InstructionId>)> {
    let instruction = &computation.instructions[consumer];
    let shape_of = |id: InstructionId| computation.instructions[id].shape.clone();
    let fused = match &instruction.opcode {
        Opcode::Fusion { kind: FusionKind::Loop, computation: fused } => (**fused).clone(),
        _ if computation.loop_part(consumer) == Some(LoopPart::Elementwise) => {
            let shapes: Vec<Shape> = instruction.operands.iter().map(|&o| shape_of(o)).collect();
            let mut single = HloComputation::single(instruction, &shapes);
            single.name = computation.fresh_name("fused_computation", counter);
            single
        }
        _ => return None,
    };
    // Fusion operands are distinct, so the product is one parameter.
    let replaced = instruction.operands.iter().position(|&o| o == product_id)? as i64;
    let mut operands: Vec<InstructionId> =
        instruction.operands.iter().copied().filter(|&o| o != product_id).collect();
    let product = &computation.instructions[product_id];
    // What the fusion reads for the product: its operands, or the gather's and the rhs.
    let reads: Vec<InstructionId> = match gather {
        Some(g) => {
            computation.instructions[g].operands.iter().chain(&product.operands[1..]).copied().collect()
        }
        None => product.operands.clone(),
    };
    // Those as parameters the fusion has already, or new ones after the others.
    let mut new_parameters = Vec::new();
    let numbers: Vec<i64> = reads
        .iter()
        .map(|&operand| match operands.iter().position(|&o| o == operand) {
            Some(existing) => existing as i64,
            None => {
                operands.push(operand);
                new_parameters.push((operands.len() - 1, operand));
                (operands.len() - 1) as i64
            }
        })
        .collect();
    let mut names = 0;
    let mut instructions: Vec<Instruction> = new_parameters
        .iter()
        .map(|&(number, operand)| Instruction {
            opcode: Opcode::Parameter { number: number as i64 },
            operands: vec![],
            shape: shape_of(operand),
            name: fused.fresh_name("param", &mut names),
        })
        .collect();
    // Parameters first, then the product (after the gather it reads, if any) in the replaced
    // parameter's place, then the rest in their order: the product may read a parameter that
    // came after the one it replaces.
    let is_parameter = |id: InstructionId| matches!(fused.instructions[id].opcode, Opcode::Parameter { .. });
    let replaced_id = (0..fused.instructions.len())
        .find(|&id| fused.instructions[id].opcode == Opcode::Parameter { number: replaced })?;
    let order: Vec<InstructionId> = (0..fused.instructions.len())
        .filter(|&id| is_parameter(id) && id != replaced_id)
        .chain([replaced_id])
        .chain((0..fused.instructions.len()).filter(|&id| !is_parameter(id)))
        .collect();
    let replaced_position = order.iter().position(|&id| id == replaced_id)?;
    let before_product = usize::from(gather.is_some());
    let mut new_id = vec![0; fused.instructions.len()];
    for (position, &id) in order.iter().enumerate() {
        let shift = if position >= replaced_position { before_product } else { 0 };
        new_id[id] = position + instructions.len() + shift;
    }
    let mut parameter_of_number = vec![usize::MAX; operands.len()];
    for (i, &(number, _)) in new_parameters.iter().enumerate() {
        parameter_of_number[number] = i;
    }
    for (id, original) in fused.instructions.iter().enumerate() {
        if let Opcode::Parameter { number } = original.opcode {
            if number != replaced {
                let number = if number > replaced { number - 1 } else { number };
                parameter_of_number[number as usize] = new_id[id];
            }
        }
    }
    for &id in &order {
        let original = &fused.instructions[id];
        let mut instruction = Instruction {
            operands: original.operands.iter().map(|&o| new_id[o]).collect(),
            ..original.clone()
        };
        match original.opcode {
            Opcode::Parameter { number } if number == replaced => {
                let mut parameters = numbers.iter().map(|&n| parameter_of_number[n as usize]);
                instruction = product.clone();
                instruction.operands = match gather {
                    Some(g) => {
                        let mut lookup = computation.instructions[g].clone();
                        lookup.operands = parameters.by_ref().take(2).collect();
                        instructions.push(lookup);
                        std::iter::once(instructions.len() - 1).chain(parameters).collect()
                    }
                    None => parameters.collect(),
                };
            }
            Opcode::Parameter { number } if number > replaced => {
                instruction.opcode = Opcode::Parameter { number: number - 1 };
            }
            _ => {}
        }
        instructions.push(instruction);
    }
    let root = new_id[fused.root];
    Some((HloComputation { name: fused.name, instructions, root }, operands))
}
