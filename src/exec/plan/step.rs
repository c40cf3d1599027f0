//! Building a step from an instruction, once, at compile time: a value step (with the plans
//! of the computations it calls), a loop program, or a kernel step with its attributes; and
//! what buffer assignment needs to know of each step.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::exec::arg_extreme::arg_extreme;
use crate::exec::buffer_assignment::{self, Holds};
use crate::exec::comparator::key_order;
use crate::exec::dot_step::{DotStep, TypedProduct};
use crate::exec::fused_product::FusedProduct;
use crate::exec::loop_program::LoopProgram;
use crate::exec::plan::{ArrayStep, Function, Plan, Step, ValueStep};
use crate::hlo::ir::{FusionKind, HloComputation, Instruction, InstructionId, Opcode};
use crate::hlo::text::instruction_text;
use crate::shape::Shape;

impl Step {
    /// The step that computes instruction `id` of `computation`.
    pub(super) fn new(computation: &HloComputation, id: InstructionId) -> Result<Step> {
        let plan = |called: &Arc<HloComputation>| Plan::new(called.clone());
        let value = match &computation.instructions[id].opcode {
            Opcode::Parameter { number } => ValueStep::Parameter(*number as usize),
            Opcode::Constant(literal) => ValueStep::Constant(literal.clone()),
            Opcode::Tuple => ValueStep::Tuple,
            Opcode::GetTupleElement { index } => ValueStep::GetTupleElement(*index as usize),
            Opcode::While { condition, body } => {
                ValueStep::While { condition: Box::new(plan(condition)?), body: Box::new(plan(body)?) }
            }
            Opcode::Conditional { branches } => {
                ValueStep::Conditional(branches.iter().map(plan).collect::<Result<_>>()?)
            }
            Opcode::Call { computation: called } => ValueStep::Call(Box::new(plan(called)?)),
            _ => return ArrayStep::new(computation, id).map(Step::Array),
        };
        Ok(Step::Value(value))
    }

    /// What buffer assignment needs to know of the step of instruction `id`: the arrays it
    /// computes into buffers of its own, which buffers its value may hold, and its scratch.
    pub(super) fn buffers(
        &self,
        computation: &HloComputation,
        id: InstructionId,
    ) -> buffer_assignment::Instruction {
        let instruction = &computation.instructions[id];
        let operand_shapes: Vec<&Shape> =
            instruction.operands.iter().map(|&o| &computation.instructions[o].shape).collect();
        let arrays = |shape: &Shape| match shape.is_tuple() {
            true => shape.tuple_shapes().iter().map(Shape::byte_size).collect(),
            false => vec![shape.byte_size()],
        };
        // What a sub-plan adds to the memory live when it runs: all but its arguments, which
        // are this plan's values.
        let own =
            |plan: &Plan| plan.buffers.stats.peak_bytes.saturating_sub(plan.buffers.stats.argument_bytes);
        let (defines, holds, scratch) = match self {
            Step::Value(ValueStep::Parameter(_) | ValueStep::Constant(_)) => (vec![], Holds::Nothing, 0),
            Step::Value(ValueStep::Tuple) => (vec![], Holds::Tuple, 0),
            Step::Value(ValueStep::GetTupleElement(index)) => (vec![], Holds::Element(*index), 0),
            Step::Value(ValueStep::While { condition, body }) => {
                (vec![], Holds::AnyOperand, own(condition).max(own(body)))
            }
            Step::Value(ValueStep::Conditional(branches)) => {
                (vec![], Holds::AnyOperand, branches.iter().map(own).max().unwrap_or(0))
            }
            Step::Value(ValueStep::Call(plan)) => (vec![], Holds::AnyOperand, own(plan)),
            Step::Array(step) => {
                let scratch = step.scratch_bytes(&operand_shapes, &instruction.shape);
                (arrays(&instruction.shape), Holds::Defined, scratch)
            }
        };
        // A dynamic update slice or scatter writes its updates over its operand's buffer
        // when it may take it: same shape, dense (so the kernel computes into it directly).
        let reuses = match self {
            Step::Array(step)
                if step.may_update_its_operand()
                    && operand_shapes.first() == Some(&&instruction.shape)
                    && !instruction.shape.is_padded() =>
            {
                Some(0)
            }
            _ => None,
        };
        let operands = instruction.operands.clone();
        buffer_assignment::Instruction { defines, operands, holds, scratch, reuses }
    }
}

impl ArrayStep {
    /// The array step that computes instruction `id` of `computation` (whose opcode makes no
    /// value step).
    fn new(computation: &HloComputation, id: InstructionId) -> Result<ArrayStep> {
        let instruction = &computation.instructions[id];
        let operand_shapes: Vec<Shape> =
            instruction.operands.iter().map(|&o| computation.instructions[o].shape.clone()).collect();
        let dense_operands: Vec<Shape> = operand_shapes.iter().map(Shape::without_padding).collect();
        let not_a_loop = || Error::InvalidComputation {
            stage: "plan".into(),
            computation: computation.name.clone(),
            instruction: instruction_text(computation, id),
            message: "the loop compiler cannot compute this instruction".into(),
        };
        let program =
            || loop_program(computation, id, &instruction.shape).map(Box::new).ok_or_else(not_a_loop);
        Ok(match &instruction.opcode {
            Opcode::Fusion { kind: FusionKind::Output, computation: fused } => ArrayStep::FusedProduct(
                Box::new(FusedProduct::new(fused, &dense_operands, &instruction.shape.without_padding())?),
            ),
            Opcode::Fusion { .. } => ArrayStep::Loop(program()?),
            Opcode::Reduce { dimensions, .. } if dimensions.is_empty() && !instruction.shape.is_tuple() => {
                ArrayStep::Loop(program()?)
            }
            Opcode::Reduce { dimensions, reducer }
                if dimensions.len() == 1 && arg_extreme(reducer).is_some() =>
            {
                let kind = arg_extreme(reducer).ok_or_else(not_a_loop)?;
                ArrayStep::ArgReduce { kind, dimension: dimensions[0] as usize }
            }
            Opcode::Reduce { dimensions, reducer } if !instruction.folds_in_loop() => {
                ArrayStep::InterpretedReduce {
                    dimensions: dimensions.clone(),
                    reducer: Function::new(reducer)?,
                }
            }
            Opcode::Map { computation: applied, .. } => ArrayStep::Map(Function::new(applied)?),
            Opcode::Sort { dimension, comparator, .. } => ArrayStep::Sort {
                dimension: *dimension as usize,
                keys: key_order(comparator),
                comparator: Function::new(comparator)?,
            },
            Opcode::TopK { k, largest } => ArrayStep::TopK { k: *k as usize, largest: *largest },
            Opcode::RngBitGenerator { algorithm } => ArrayStep::RngBitGenerator(*algorithm),
            Opcode::BitcastConvert => ArrayStep::BitcastConvert,
            Opcode::Reduce { .. } => ArrayStep::Loop(program()?),
            // Kernels compute over dense buffers (`Plan::compute`): their conversions and
            // relayouts are compiled for the shapes without padding.
            Opcode::Dot { numbers, .. } => {
                let dense = Instruction { shape: instruction.shape.without_padding(), ..instruction.clone() };
                ArrayStep::Dot(Box::new(DotStep::new(&dense, numbers, &dense_operands)?))
            }
            Opcode::Gather { numbers, slice_sizes, .. } => {
                ArrayStep::Gather { numbers: numbers.clone(), slice_sizes: slice_sizes.clone() }
            }
            Opcode::Scatter { numbers, update, .. } => {
                // Native when the update computation is one op on the operand's own type.
                let own_type = update
                    .parameters()
                    .iter()
                    .all(|p| p.shape.element_type() == instruction.shape.element_type());
                let native = update.simple_reducer().filter(|_| own_type);
                ArrayStep::Scatter { numbers: numbers.clone(), native, update: Function::new(update)? }
            }
            Opcode::DynamicSlice { .. } => ArrayStep::DynamicSlice,
            Opcode::DynamicUpdateSlice => ArrayStep::DynamicUpdateSlice,
            Opcode::ReduceWindow { window, reducer } => {
                let (row_major, dense) =
                    (instruction.shape.with_default_layout(), instruction.shape.without_padding());
                let relayout = (row_major != dense).then(|| Box::new(LoopProgram::copy(&row_major, &dense)));
                let native = reducer
                    .simple_reducer()
                    .filter(|_| operand_shapes[0].element_type() == instruction.shape.element_type());
                ArrayStep::ReduceWindow {
                    window: window.clone(),
                    native,
                    reducer: Function::new(reducer)?,
                    relayout,
                }
            }
            Opcode::SelectAndScatter { window, select, scatter } => {
                let element_type = instruction.shape.element_type();
                let own_type = scatter.parameters().iter().all(|p| p.shape.element_type() == element_type);
                let native =
                    select.simple_comparison(element_type).zip(scatter.simple_reducer().filter(|_| own_type));
                ArrayStep::SelectAndScatter {
                    window: window.clone(),
                    native,
                    select: Function::new(select)?,
                    scatter: Function::new(scatter)?,
                }
            }
            Opcode::Convolution { window, numbers, feature_group_count, batch_group_count, .. } => {
                ArrayStep::Convolution {
                    window: window.clone(),
                    numbers: numbers.clone(),
                    feature_group_count: *feature_group_count,
                    batch_group_count: *batch_group_count,
                    types: Box::new(TypedProduct::new(
                        &instruction.shape.without_padding(),
                        [&dense_operands[0], &dense_operands[1]],
                        None,
                    )?),
                }
            }
            Opcode::Concatenate { dimension } => ArrayStep::Concatenate { dimension: *dimension },
            Opcode::Pad(config) => ArrayStep::Pad(config.clone()),
            Opcode::Reshape if computation.loop_part(id).is_none() => ArrayStep::Reshape,
            _ => ArrayStep::Loop(program()?),
        })
    }
}

/// The loop computing instruction `id` of `computation` into `out_shape` (its element type and
/// dimensions, in its own layout or another): of a fusion, of a reduce over no dimension (a
/// copy: XLA returns the operand unchanged, the init value not applied), or of any other
/// instruction as a fusion of one. `None` if the loop compiler cannot compute it.
pub(super) fn loop_program(
    computation: &HloComputation,
    id: InstructionId,
    out_shape: &Shape,
) -> Option<LoopProgram> {
    let instruction = &computation.instructions[id];
    let operand_shapes: Vec<Shape> =
        instruction.operands.iter().map(|&o| computation.instructions[o].shape.clone()).collect();
    match &instruction.opcode {
        Opcode::Fusion { computation: fused, .. } => fused_program(fused, &operand_shapes, out_shape),
        Opcode::Reduce { dimensions, .. } if dimensions.is_empty() && !instruction.shape.is_tuple() => {
            Some(LoopProgram::copy(operand_shapes.first()?, out_shape))
        }
        _ => fused_program(&HloComputation::single(instruction, &operand_shapes), &operand_shapes, out_shape),
    }
}

/// The loop of a fusion (or of a single instruction as one) into `out_shape` (its result's
/// element type and dimensions, any layout): a plain loop, or, when rooted at a reduce that
/// folds in a loop, a reduction of its producer. `None` if the loop compiler cannot compute
/// it.
pub(crate) fn fused_program(
    fused: &HloComputation,
    input_shapes: &[Shape],
    out_shape: &Shape,
) -> Option<LoopProgram> {
    let root = &fused.instructions[fused.root];
    match &root.opcode {
        Opcode::Reduce { dimensions, reducer } => {
            let Opcode::Parameter { number: init } = fused.instructions[*root.operands.get(1)?].opcode else {
                return None;
            };
            let reduction = (reducer.simple_reducer()?, init as usize);
            LoopProgram::compile_reduction(
                fused,
                root.operands[0],
                input_shapes,
                dimensions,
                reduction,
                out_shape,
            )
        }
        _ => LoopProgram::compile(fused, input_shapes, out_shape),
    }
}
