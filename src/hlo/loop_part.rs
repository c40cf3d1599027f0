//! What a strided loop computes: the one predicate that fusion, the simplifier, the verifier
//! and the loop compiler all read, so they cannot disagree.
//!
//! A loop walks its output's index space. Each instruction inside it is either made from the
//! index alone (a [`LoopPart::Leaf`]), computed element-wise from its operands at the same
//! index ([`LoopPart::Elementwise`]), or its operand read at a transformed index
//! ([`LoopPart::View`]); everything else (a dot, a concatenate, an array constant, …) must be
//! computed before the loop and read by it as an input.

use crate::hlo::ir::{HloComputation, Instruction, InstructionId, Opcode};
use crate::shape::reshape::splitting_reshape;

/// How an instruction takes part in a loop over the output's index space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LoopPart {
    /// Made from the index alone, at no cost: an iota, a scalar constant.
    Leaf,
    /// A function of its operands at the same index: unary, binary, compare, select, clamp,
    /// convert.
    Elementwise,
    /// Its operand read at an affinely transformed index, moving no data: broadcast,
    /// transpose, reverse, slice, and a reshape that only splits dimensions or inserts or
    /// removes size-1 ones.
    View,
}

impl Instruction {
    /// How this instruction takes part in a loop, or `None` if a loop cannot compute it (a
    /// loop reads it as an input instead: a parameter, a dot, a reduce, an array constant, a
    /// reshape that reorders elements, …). `arena` holds its operands (at their ids).
    pub(crate) fn loop_part(&self, arena: &[Instruction]) -> Option<LoopPart> {
        match &self.opcode {
            Opcode::Iota { .. } => Some(LoopPart::Leaf),
            Opcode::Constant(literal) if literal.shape().is_scalar() => Some(LoopPart::Leaf),
            Opcode::Unary(_)
            | Opcode::Binary(_)
            | Opcode::Compare(_)
            | Opcode::Select
            | Opcode::Clamp
            | Opcode::Convert => Some(LoopPart::Elementwise),
            Opcode::Broadcast { .. }
            | Opcode::Transpose { .. }
            | Opcode::Reverse { .. }
            | Opcode::Slice { .. } => Some(LoopPart::View),
            Opcode::Reshape => {
                let from = &arena.get(*self.operands.first()?)?.shape;
                splitting_reshape(from, &self.shape).map(|_| LoopPart::View)
            }
            _ => None,
        }
    }

    /// Whether this instruction costs nothing inside a loop, so that computing it in every
    /// loop that reads it beats computing it once into a buffer: a leaf, or a broadcast (a
    /// read with stride 0). Fusion duplicates these, and constant folding leaves them alone
    /// (as XLA's does: a folded broadcast is a buffer to read).
    pub(crate) fn free_in_loop(&self, arena: &[Instruction]) -> bool {
        match self.loop_part(arena) {
            Some(LoopPart::Leaf) => true,
            Some(LoopPart::View) => matches!(self.opcode, Opcode::Broadcast { .. }),
            _ => false,
        }
    }

    /// Whether this instruction is a reduce a loop computes as a fold (XLA's `kInput`
    /// fusion): its reducer is a single element-wise op of its two parameters, so the
    /// reduced operand's expression is evaluated a chunk at a time and folded, never
    /// materialized. The init value is always an input of such a loop.
    pub(crate) fn folds_in_loop(&self) -> bool {
        match &self.opcode {
            Opcode::Reduce { reducer, .. } => reducer.simple_reducer().is_some(),
            _ => false,
        }
    }
}

impl HloComputation {
    /// How instruction `id` takes part in a loop ([`Instruction::loop_part`]).
    pub(crate) fn loop_part(&self, id: InstructionId) -> Option<LoopPart> {
        self.instructions[id].loop_part(&self.instructions)
    }
}
