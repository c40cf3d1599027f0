//! The IR: HLO-like instructions in an arena in topological order, and their text form.
//!
//! The built graph, the optimized graph and the executable's plan share this one instruction
//! type, so the same printer shows a computation before and after the optimizer.

mod opcode;
mod rewrite;
mod text;

pub(crate) use rewrite::Rewrite;
pub(crate) use text::module_text;

use std::sync::Arc;

pub use opcode::{
    BinaryOp, ComparisonDirection, DotDimensionNumbers, PaddingConfig, PaddingConfigDimension, UnaryOp,
};
pub(crate) use opcode::{FusionKind, Opcode};

use crate::Shape;

/// The position of an instruction in its computation's arena.
pub(crate) type InstructionId = usize;

/// One HLO instruction: what it does, what it reads, and the shape it makes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Instruction {
    pub(crate) opcode: Opcode,
    pub(crate) operands: Vec<InstructionId>,
    pub(crate) shape: Shape,
    /// Unique within the computation, as HLO text names it (`add.3`, `x.1`).
    pub(crate) name: String,
}

/// A computation: instructions in topological order (operands before users) and a root.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct HloComputation {
    pub(crate) name: String,
    pub(crate) instructions: Vec<Instruction>,
    pub(crate) root: InstructionId,
}

impl HloComputation {
    /// The computation of one instruction alone: its operands become parameters of
    /// `operand_shapes`, in order, and it is the root.
    pub(crate) fn single(instruction: &Instruction, operand_shapes: &[Shape]) -> HloComputation {
        let mut instructions: Vec<Instruction> = operand_shapes
            .iter()
            .enumerate()
            .map(|(number, shape)| Instruction {
                opcode: Opcode::Parameter { number: number as i64 },
                operands: vec![],
                shape: shape.clone(),
                name: format!("p{number}"),
            })
            .collect();
        let mut single = instruction.clone();
        single.operands = (0..operand_shapes.len()).collect();
        instructions.push(single);
        let root = instructions.len() - 1;
        HloComputation { name: "single".into(), instructions, root }
    }

    /// The parameters, ordered by parameter number.
    pub(crate) fn parameters(&self) -> Vec<&Instruction> {
        let mut parameters: Vec<(i64, &Instruction)> = self
            .instructions
            .iter()
            .filter_map(|instruction| match instruction.opcode {
                Opcode::Parameter { number } => Some((number, instruction)),
                _ => None,
            })
            .collect();
        parameters.sort_by_key(|(number, _)| *number);
        parameters.into_iter().map(|(_, instruction)| instruction).collect()
    }

    /// The shape of the root.
    pub(crate) fn result_shape(&self) -> &Shape {
        &self.instructions[self.root].shape
    }

    /// The binary op this computation is, if it is one element-wise op of its two scalar
    /// parameters in order (`add(p0, p1)`, `max(p0, p1)`, …; either order for commutative
    /// ops): a reducer that runs as a vectorized fold instead of being interpreted.
    pub(crate) fn simple_reducer(&self) -> Option<BinaryOp> {
        let root = &self.instructions[self.root];
        let Opcode::Binary(op) = root.opcode else { return None };
        let parameter = |id: usize| match self.instructions[id].opcode {
            Opcode::Parameter { number } => Some(number),
            _ => None,
        };
        let commutative = matches!(
            op,
            BinaryOp::Add
                | BinaryOp::Mul
                | BinaryOp::Max
                | BinaryOp::Min
                | BinaryOp::And
                | BinaryOp::Or
                | BinaryOp::Xor
        );
        match (parameter(root.operands[0]), parameter(root.operands[1])) {
            (Some(0), Some(1)) => Some(op),
            (Some(1), Some(0)) if commutative => Some(op),
            _ => None,
        }
    }

    /// The computations this one calls (reducers, fused computations), each once, callees
    /// first.
    pub(crate) fn called_computations(&self) -> Vec<Arc<HloComputation>> {
        let mut found: Vec<Arc<HloComputation>> = Vec::new();
        for instruction in &self.instructions {
            let called = match &instruction.opcode {
                Opcode::Reduce { reducer, .. } => reducer,
                Opcode::Fusion { computation, .. } => computation,
                _ => continue,
            };
            {
                for nested in called.called_computations().into_iter().chain([called.clone()]) {
                    if !found.iter().any(|known| Arc::ptr_eq(known, &nested)) {
                        found.push(nested);
                    }
                }
            }
        }
        found
    }
}
