//! The walk over a computation: each instruction is copied into the new builder (its primal
//! value) and its JVP rule records its tangent on the tape. Calls and fusions are walked
//! through, so their callees' instructions are differentiated where they are inlined; what the
//! root does not depend on is skipped.

use crate::autodiff::contraction::dot;
use crate::autodiff::control::{conditional, while_loop};
use crate::autodiff::convolution::convolution;
use crate::autodiff::elementwise::{binary, clamp, convert, select_rule, unary};
use crate::autodiff::movement::{is_movement, moved};
use crate::autodiff::reduction::reduce;
use crate::autodiff::sorting::{sorted, top_k};
use crate::autodiff::tape::{Tan, Tape};
use crate::autodiff::windows::reduce_window;
use crate::builder::XlaOp;
use crate::error::Result;
use crate::hlo::ir::{HloComputation, Instruction, Opcode};
use crate::shape::Shape;

/// Whether any array `shape` holds is floating point (else every tangent through it is zero).
pub(super) fn has_float(shape: &Shape) -> bool {
    if shape.is_tuple() {
        shape.tuple_shapes().iter().any(has_float)
    } else {
        shape.element_type().is_float()
    }
}

/// The primal value and tangent of `computation`'s root, from its parameters' (by number).
pub(super) fn walk<'b>(
    tape: &mut Tape<'b>,
    computation: &HloComputation,
    parameters: &[(XlaOp<'b>, Tan)],
) -> Result<(XlaOp<'b>, Tan)> {
    // Only what the root depends on: dead code (a builder keeps every op recorded) is neither
    // copied nor differentiated.
    let live = computation.live();
    let mut values: Vec<Option<(XlaOp<'b>, Tan)>> = Vec::with_capacity(computation.instructions.len());
    for (instruction, &live) in computation.instructions.iter().zip(&live) {
        let value = match instruction.opcode {
            Opcode::Parameter { number } => Some(parameters[number as usize].clone()),
            _ if !live => None,
            _ => {
                let operands: Option<Vec<(XlaOp<'b>, Tan)>> =
                    instruction.operands.iter().map(|&o| values[o].clone()).collect();
                let Some(operands) = operands else { return Err(tape.not_implemented("a dead operand", "")) };
                let shapes: Vec<&Shape> =
                    instruction.operands.iter().map(|&o| &computation.instructions[o].shape).collect();
                Some(step(tape, computation, instruction, &operands, &shapes)?)
            }
        };
        values.push(value);
    }
    values[computation.root].clone().ok_or_else(|| tape.not_implemented("a dead root", ""))
}

/// One instruction of `computation`: its primal value and tangent.
fn step<'b>(
    tape: &mut Tape<'b>,
    computation: &HloComputation,
    instruction: &Instruction,
    operands: &[(XlaOp<'b>, Tan)],
    shapes: &[&Shape],
) -> Result<(XlaOp<'b>, Tan)> {
    if let Opcode::Call { computation } | Opcode::Fusion { computation, .. } = &instruction.opcode {
        return walk(tape, computation, operands);
    }
    let x: Vec<XlaOp<'b>> = operands.iter().map(|(x, _)| *x).collect();
    let t: Vec<&Tan> = operands.iter().map(|(_, t)| t).collect();
    let zero = t.iter().all(|t| matches!(t, Tan::Zero)) || !has_float(&instruction.shape);
    if !zero && matches!(instruction.opcode, Opcode::Sort { .. }) {
        return sorted(tape, instruction, &x, &t, shapes);
    }
    if !zero && matches!(instruction.opcode, Opcode::While { .. }) {
        return while_loop(walk, tape, computation, instruction, x[0], t[0]);
    }
    if !zero && matches!(instruction.opcode, Opcode::Conditional { .. }) {
        return conditional(walk, tape, instruction, &x, &t, shapes);
    }
    let y = tape.builder.record_opcode(&instruction.opcode, &x, &instruction.shape);
    if zero {
        return Ok((y, Tan::Zero));
    }
    let shape = &instruction.shape;
    let name = instruction.opcode.name();
    let tangent = match &instruction.opcode {
        Opcode::Unary(op) => match unary(tape, *op, x[0], y, t[0].array(), shape) {
            Some(tangent) => tangent,
            None => return Err(tape.not_implemented(name, "")),
        },
        Opcode::Binary(op) => match binary(tape, *op, [x[0], x[1]], y, [t[0], t[1]], shape) {
            Some(tangent) => tangent,
            None => return Err(tape.not_implemented(name, "")),
        },
        Opcode::Select => select_rule(tape, x[0], [t[1], t[2]], shape)?,
        Opcode::Clamp => clamp(tape, [x[0], x[1], x[2]], [t[0], t[1], t[2]], shape),
        Opcode::Convert => convert(tape, shapes[0].element_type(), t[0].array(), shape),
        opcode if is_movement(opcode) => {
            let owned: Vec<Shape> = shapes.iter().map(|s| (*s).clone()).collect();
            let tangents: Vec<Tan> = t.iter().map(|t| (*t).clone()).collect();
            moved(tape, opcode, &x, &owned, &tangents, shape)?
        }
        Opcode::Reduce { dimensions, reducer } if operands.len() == 2 => reduce(
            tape,
            reducer.simple_reducer(),
            dimensions,
            [x[0], x[1]],
            y,
            [t[0], t[1]],
            shapes[0],
            shape,
        )?,
        Opcode::Reduce { .. } => {
            return Err(tape.not_implemented(name, " for a variadic reduce with a floating-point result"))
        }
        Opcode::ReduceWindow { window, reducer } => reduce_window(
            tape,
            reducer.simple_reducer(),
            window,
            [x[0], x[1]],
            y,
            [t[0], t[1]],
            shapes[0],
            shape,
        )?,
        Opcode::Dot { numbers, precision } => {
            dot(tape, numbers, precision, [x[0], x[1]], [shapes[0], shapes[1]], [t[0], t[1]], shape)
        }
        Opcode::Convolution { .. } => {
            convolution(tape, &instruction.opcode, [x[0], x[1]], [shapes[0], shapes[1]], [t[0], t[1]], shape)?
        }
        Opcode::TopK { .. } => top_k(tape, y, t[0], shapes[0], shape)?,
        Opcode::Tuple => Tan::Tuple(t.iter().map(|t| (*t).clone()).collect()),
        Opcode::GetTupleElement { index } => t[0].element(*index as usize),
        _ => return Err(tape.not_implemented(name, "")),
    };
    Ok((y, tangent))
}
