//! How the builder turns implicit broadcasting and mixed float precisions into explicit
//! instructions, as `XlaBuilder::BinaryOp`, `TernaryOp` and `AddBroadcastSequence` do.

use crate::builder::builder::{Emitter, Operand};
use crate::element_type::ElementType;
use crate::error::{invalid_argument, Result};
use crate::hlo::ir::{InstructionId, Opcode};
use crate::shape::Shape;
use crate::shape_inference::make_shape;

impl Emitter<'_> {
    /// The operands of a binary op brought to the result's dimensions: the lower-rank operand
    /// broadcast in-dim along `broadcast_dimensions`, then any operand whose dimensions still
    /// differ through [`Emitter::broadcast_sequence`] (XLA's `BinaryOp` lowering).
    pub(crate) fn broadcast_binary_operands(
        &mut self,
        result: &Shape,
        lhs: &Operand,
        rhs: &Operand,
        broadcast_dimensions: &[i64],
    ) -> Result<[InstructionId; 2]> {
        let mut ids = [lhs.id, rhs.id];
        if !broadcast_dimensions.is_empty() && lhs.shape.rank() != rhs.shape.rank() {
            let side = usize::from(lhs.shape.rank() >= rhs.shape.rank());
            let from = [lhs, rhs][side];
            let mut sizes = result.dimensions().to_vec();
            for (&d, &size) in broadcast_dimensions.iter().zip(from.shape.dimensions()) {
                sizes[d as usize] = size;
            }
            let to = make_shape(from.shape.element_type(), &sizes)?;
            let dimensions = broadcast_dimensions.to_vec();
            ids[side] = self.emit(Opcode::Broadcast { dimensions }, &[from.id], to);
        }
        for id in &mut ids {
            if self.shape(*id).dimensions() != result.dimensions() {
                *id = self.broadcast_sequence(&result.with_default_layout(), *id)?;
            }
        }
        Ok(ids)
    }

    /// XLA's `AddBroadcastSequence`: `operand` (a scalar, or of `output`'s rank with size-1
    /// dimensions where `output` is larger) broadcast to `output`'s dimensions and layout,
    /// keeping its own element type. Size-1 dimensions are first dropped with a `reshape`.
    pub(crate) fn broadcast_sequence(
        &mut self,
        output: &Shape,
        operand: InstructionId,
    ) -> Result<InstructionId> {
        let operand_shape = self.shape(operand).clone();
        let target = output.with_element_type(operand_shape.element_type());
        if operand_shape.is_scalar() {
            return Ok(self.emit(Opcode::Broadcast { dimensions: vec![] }, &[operand], target));
        }
        let kept: Vec<i64> = (0..operand_shape.rank() as i64)
            .filter(|&d| operand_shape.dimensions()[d as usize] == output.dimensions()[d as usize])
            .collect();
        let kept_sizes: Vec<i64> = kept.iter().map(|&d| operand_shape.dimensions()[d as usize]).collect();
        let reshaped = make_shape(operand_shape.element_type(), &kept_sizes)?;
        let reshape = self.emit(Opcode::Reshape, &[operand], reshaped);
        Ok(self.emit(Opcode::Broadcast { dimensions: kept }, &[reshape], target))
    }

    /// XLA's `TernaryOp` step for select and clamp: scalar operands are broadcast to the first
    /// non-scalar operand's shape (layout included); any other difference is rejected.
    pub(crate) fn broadcast_ternary_scalars(&mut self, operands: &[Operand]) -> Result<Vec<InstructionId>> {
        let Some(target) = operands.iter().map(|o| &o.shape).find(|s| !s.is_scalar()).cloned() else {
            return Ok(operands.iter().map(|o| o.id).collect());
        };
        operands
            .iter()
            .map(|o| {
                if o.shape.is_scalar() {
                    self.broadcast_sequence(&target, o.id)
                } else if o.shape.dimensions() != target.dimensions() {
                    invalid_argument!(
                        "Unimplemented implicit broadcast. (select and clamp broadcast only scalars; \
                         {} does not match {})",
                        o.shape.human_string(),
                        target.human_string()
                    )
                } else {
                    Ok(o.id)
                }
            })
            .collect()
    }

    /// `operand` converted to `element_type`, if it is not of it already. XLA's builder leaves
    /// mixed float precisions (f32 with bf16) in one instruction and fails at compile time;
    /// lazy-xla makes the promotion an explicit `convert`, so every instruction computes in
    /// one type.
    pub(crate) fn convert_if_needed(
        &mut self,
        operand: InstructionId,
        element_type: ElementType,
    ) -> InstructionId {
        let shape = self.shape(operand);
        if shape.element_type() == element_type {
            return operand;
        }
        let converted = shape.with_element_type(element_type);
        self.emit(Opcode::Convert, &[operand], converted)
    }
}
