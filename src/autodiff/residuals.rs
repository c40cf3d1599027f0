//! A loop body's VJP split in two, as jax's partial evaluation splits a scan's: the forward part
//! computes the body's result and the *residuals*, the primal values its transpose reads; the
//! backward part computes the cotangents from the residuals and the result's cotangents. A
//! reversed while then stacks each trip's residuals on the way forward and reads them back,
//! rather than computing the body's primal a second time (a GRU's gate products, each trip).
//!
//! The split is made on one built VJP of the body: its instructions that no cotangent reaches
//! are the primal side. A primal value the cotangent side reads is a residual unless it is
//! element-wise math or data movement (see `recomputed`): that is replayed in the backward part
//! from the residuals it reads in turn, where it fuses into the backward part's loops, so only
//! the products and reductions (and the carry's arrays, which the reversed loop stacks itself)
//! are written each trip and read back. A tuple value (a sort's, an inner while's) is not
//! stacked either: it is recomputed there from what it reads.

use crate::builder::{XlaBuilder, XlaOp};
use crate::error::{Error, Result};
use crate::hlo::computation::XlaComputation;
use crate::hlo::ir::{HloComputation, InstructionId, Opcode};
use crate::shape::Shape;

/// A body's VJP built once and split. Its parameters are the body's parameter arrays, then the
/// cotangents of the result arrays that have one; its root the tuple of the body's result
/// arrays, then one cotangent per parameter array that has a tangent.
pub(super) struct SplitVjp {
    vjp: XlaComputation,
    /// The body's result arrays in `vjp`.
    outputs: Vec<InstructionId>,
    /// The cotangents of the parameter arrays with tangents, in `vjp`.
    parts: Vec<InstructionId>,
    /// The residuals, in `vjp`.
    residuals: Vec<InstructionId>,
    /// What the forward part computes: the outputs and residuals and what they read.
    forward: Vec<bool>,
    /// What the backward part computes: the parts and what they read, the residuals given.
    backward: Vec<bool>,
    /// Which of the body's parameter arrays the backward part reads.
    reads: Vec<bool>,
}

impl SplitVjp {
    /// Splits `vjp`, whose first `arrays` parameters are the body's parameter arrays and whose
    /// root is the tuple of the body's `outputs` result arrays, then the cotangents.
    pub(super) fn new(vjp: XlaComputation, arrays: usize, outputs: usize) -> SplitVjp {
        let computation = &vjp.entry;
        let instructions = &computation.instructions;
        let root = &instructions[computation.root];
        let (outputs, parts) = root.operands.split_at(outputs.min(root.operands.len()));
        let (outputs, parts) = (outputs.to_vec(), parts.to_vec());
        // Which instructions a cotangent reaches.
        let mut cotangent_side = vec![false; instructions.len()];
        for (id, instruction) in instructions.iter().enumerate() {
            cotangent_side[id] = match instruction.opcode {
                Opcode::Parameter { number } => number as usize >= arrays,
                _ => read_operands(computation, id).into_iter().any(|o| cotangent_side[o]),
            };
        }
        let backward_reads = reach(computation, &parts, &[]);
        let mut residuals = Vec::new();
        let mut followed = vec![false; instructions.len()];
        let mut pending: Vec<InstructionId> = Vec::new();
        for id in 0..instructions.len() {
            if backward_reads[id] && cotangent_side[id] {
                pending.extend(read_operands(computation, id).into_iter().filter(|&o| !cotangent_side[o]));
            }
        }
        while let Some(id) = pending.pop() {
            if std::mem::replace(&mut followed[id], true) {
                continue;
            }
            let instruction = &instructions[id];
            if recomputed(&instruction.opcode) || instruction.shape.is_tuple() {
                pending.extend(read_operands(computation, id));
            } else {
                residuals.push(id);
            }
        }
        residuals.sort_unstable();
        let forward = reach(computation, &[outputs.as_slice(), residuals.as_slice()].concat(), &[]);
        let backward = reach(computation, &parts, &residuals);
        let mut reads = vec![false; arrays];
        for (instruction, _) in instructions.iter().zip(&backward).filter(|(_, &on)| on) {
            if let Opcode::Parameter { number } = instruction.opcode {
                if let Some(read) = reads.get_mut(number as usize) {
                    *read = true;
                }
            }
        }
        SplitVjp { vjp, outputs, parts, residuals, forward, backward, reads }
    }

    /// Which of the body's parameter arrays the backward part reads.
    pub(super) fn reads(&self) -> &[bool] {
        &self.reads
    }

    /// The residuals' shapes.
    pub(super) fn residual_shapes(&self) -> Vec<Shape> {
        self.residuals.iter().map(|&id| self.vjp.entry.instructions[id].shape.clone()).collect()
    }

    /// The forward part in `builder` on the body's parameter arrays `arrays`: the body's result
    /// arrays, and the residuals.
    pub(super) fn forward<'c>(
        &self,
        builder: &'c XlaBuilder,
        arrays: &[XlaOp<'c>],
    ) -> Result<(Vec<XlaOp<'c>>, Vec<XlaOp<'c>>)> {
        let values = replay(builder, &self.vjp.entry, &self.forward, arrays, &[]);
        Ok((picked(&values, &self.outputs)?, picked(&values, &self.residuals)?))
    }

    /// The backward part in `builder`: the cotangents of the parameter arrays with tangents,
    /// from the body's parameter arrays `arrays` (those it does not read may be anything of
    /// their shape), the result arrays' cotangents `cotangents` and the residuals.
    pub(super) fn backward<'c>(
        &self,
        builder: &'c XlaBuilder,
        arrays: &[XlaOp<'c>],
        cotangents: &[XlaOp<'c>],
        residuals: &[XlaOp<'c>],
    ) -> Result<Vec<XlaOp<'c>>> {
        let parameters = [arrays, cotangents].concat();
        let given: Vec<(InstructionId, XlaOp<'c>)> =
            self.residuals.iter().copied().zip(residuals.iter().copied()).collect();
        let values = replay(builder, &self.vjp.entry, &self.backward, &parameters, &given);
        picked(&values, &self.parts)
    }
}

/// Whether an op is recomputed in the backward part rather than saved: element-wise math and
/// data movement, which the loop engine fuses into the backward part's own loops, so that
/// recomputing it costs less than writing its result each trip and reading it back. What is
/// saved is what such math reads there: products, reductions and the like (jax's
/// `dots_saveable` policy, with the reductions also saved).
fn recomputed(opcode: &Opcode) -> bool {
    matches!(
        opcode,
        Opcode::Parameter { .. }
            | Opcode::Constant(_)
            | Opcode::Iota { .. }
            | Opcode::Unary(_)
            | Opcode::Binary(_)
            | Opcode::Compare(_)
            | Opcode::Select
            | Opcode::Clamp
            | Opcode::Convert
            | Opcode::BitcastConvert
            | Opcode::GetTupleElement { .. }
            | Opcode::Tuple
            | Opcode::Broadcast { .. }
            | Opcode::Reshape
            | Opcode::Transpose { .. }
            | Opcode::Slice { .. }
            | Opcode::Concatenate { .. }
            | Opcode::Pad(_)
            | Opcode::Reverse { .. }
    )
}

/// The instructions `targets` depend on (themselves included), through none of `given`.
fn reach(computation: &HloComputation, targets: &[InstructionId], given: &[InstructionId]) -> Vec<bool> {
    let mut reached = vec![false; computation.instructions.len()];
    let mut pending = targets.to_vec();
    while let Some(id) = pending.pop() {
        if std::mem::replace(&mut reached[id], true) || given.contains(&id) {
            continue;
        }
        pending.extend(read_operands(computation, id));
    }
    reached
}

/// The operands instruction `id` reads: an element of a tuple made in `computation` reads
/// that element alone, so a tuple of arrays rebuilt for a walk keeps no unread array alive.
fn read_operands(computation: &HloComputation, id: InstructionId) -> Vec<InstructionId> {
    match tuple_element(computation, id) {
        Some(element) => vec![element],
        None => computation.instructions[id].operands.clone(),
    }
}

/// The instruction a get-tuple-element `id` of a tuple made in `computation` stands for.
fn tuple_element(computation: &HloComputation, id: InstructionId) -> Option<InstructionId> {
    let instruction = &computation.instructions[id];
    let (Opcode::GetTupleElement { index }, &[tuple]) = (&instruction.opcode, &instruction.operands[..])
    else {
        return None;
    };
    let tuple = &computation.instructions[tuple];
    matches!(tuple.opcode, Opcode::Tuple).then(|| tuple.operands.get(*index as usize).copied()).flatten()
}

/// The instructions of `computation` that `keep` marks, recorded in `builder` in order: a
/// parameter is `parameters[number]`, an instruction `given` lists is its value there.
fn replay<'c>(
    builder: &'c XlaBuilder,
    computation: &HloComputation,
    keep: &[bool],
    parameters: &[XlaOp<'c>],
    given: &[(InstructionId, XlaOp<'c>)],
) -> Vec<Option<XlaOp<'c>>> {
    let mut values: Vec<Option<XlaOp<'c>>> = vec![None; computation.instructions.len()];
    for (id, instruction) in computation.instructions.iter().enumerate() {
        if !keep[id] {
            continue;
        }
        values[id] = if let Some(&(_, value)) = given.iter().find(|(g, _)| *g == id) {
            Some(value)
        } else if let Opcode::Parameter { number } = instruction.opcode {
            parameters.get(number as usize).copied()
        } else if let Some(element) = tuple_element(computation, id) {
            values[element]
        } else {
            let operands: Option<Vec<XlaOp<'c>>> = instruction.operands.iter().map(|&o| values[o]).collect();
            operands.map(|operands| builder.record_opcode(&instruction.opcode, &operands, &instruction.shape))
        };
    }
    values
}

/// The replayed values of `ids`; an error where one is missing (a part that does not cover
/// what it reads, or a parameter not given: a defect of the split, never of the input).
fn picked<'c>(values: &[Option<XlaOp<'c>>], ids: &[InstructionId]) -> Result<Vec<XlaOp<'c>>> {
    ids.iter()
        .map(|&id| {
            values[id].ok_or_else(|| {
                Error::invalid(format!("the split VJP of a loop body misses instruction {id}"))
            })
        })
        .collect()
}
