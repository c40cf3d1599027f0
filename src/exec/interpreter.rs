//! Runs a computation instruction by instruction, each materializing its output buffer (the
//! unfused executor).

use std::borrow::Cow;

use crate::exec::kernels::contraction::{self, simple_reducer, Reducer};
use crate::exec::kernels::data_movement::{self, movement_view, Movement};
use crate::exec::kernels::elementwise;
use crate::hlo::{HloComputation, Opcode};
use crate::{Literal, Result};

/// Evaluates `computation` on `arguments` (already checked against its parameters) and
/// returns the root's value.
pub(crate) fn evaluate<'a>(
    computation: &HloComputation,
    arguments: &[&'a Literal],
    parallel: bool,
) -> Result<Cow<'a, Literal>> {
    let count = computation.instructions.len();
    let mut last_use = vec![0usize; count];
    for (id, instruction) in computation.instructions.iter().enumerate() {
        for &operand in &instruction.operands {
            last_use[operand] = id;
        }
    }
    let mut values: Vec<Option<Cow<'a, Literal>>> = vec![None; count];
    for (id, instruction) in computation.instructions.iter().enumerate() {
        let value = match &instruction.opcode {
            Opcode::Parameter { number } => Cow::Borrowed(arguments[*number as usize]),
            Opcode::Constant(literal) => Cow::Owned((**literal).clone()),
            _ => {
                let inputs: Vec<&Literal> = instruction
                    .operands
                    .iter()
                    .map(|&o| values[o].as_deref().expect("operands are evaluated first"))
                    .collect();
                let mut out = Literal::zeros(&instruction.shape)?;
                run(&instruction.opcode, &inputs, &mut out, parallel)?;
                Cow::Owned(out)
            }
        };
        values[id] = Some(value);
        for &operand in &instruction.operands {
            if last_use[operand] == id && operand != computation.root {
                values[operand] = None;
            }
        }
    }
    Ok(values[computation.root].take().expect("the root is evaluated"))
}

/// Runs one instruction's kernel.
fn run(opcode: &Opcode, inputs: &[&Literal], out: &mut Literal, parallel: bool) -> Result<()> {
    let rank = out.shape().rank();
    let moved = |movement: Movement<'_>, out: &mut Literal| {
        let view = movement_view(inputs[0].shape(), rank, &movement);
        data_movement::copy_through_view(inputs[0], view, out, parallel)
    };
    match opcode {
        Opcode::Parameter { .. } | Opcode::Constant(_) => unreachable!("handled by evaluate"),
        Opcode::Iota { dimension } => data_movement::iota(*dimension, out, parallel),
        Opcode::Unary(op) => elementwise::unary(*op, inputs[0], out, parallel),
        Opcode::Binary(op) => elementwise::binary(*op, [inputs[0], inputs[1]], out, parallel),
        Opcode::Compare(direction) => elementwise::compare(*direction, [inputs[0], inputs[1]], out, parallel),
        Opcode::Select => elementwise::select([inputs[0], inputs[1], inputs[2]], out, parallel),
        Opcode::Clamp => elementwise::clamp([inputs[0], inputs[1], inputs[2]], out, parallel),
        Opcode::Convert => elementwise::convert_kernel(inputs[0], out, parallel),
        Opcode::Broadcast { dimensions } => moved(Movement::Broadcast(dimensions), out),
        Opcode::Transpose { permutation } => moved(Movement::Transpose(permutation), out),
        Opcode::Reverse { dimensions } => moved(Movement::Reverse(dimensions), out),
        Opcode::Slice { starts, strides, .. } => moved(Movement::Slice { starts, strides }, out),
        Opcode::Reshape => data_movement::reshape(inputs[0], out),
        Opcode::Concatenate { dimension } => data_movement::concatenate(inputs, *dimension, out),
        Opcode::Pad(config) => data_movement::pad([inputs[0], inputs[1]], config, out),
        Opcode::Reduce { dimensions, reducer } => {
            let interpret = |accumulator: &Literal, value: &Literal| -> Result<Literal> {
                Ok(evaluate(reducer, &[accumulator, value], false)?.into_owned())
            };
            let how = match simple_reducer(reducer) {
                Some(op) => Reducer::Simple(op),
                None => Reducer::Interpreted(&interpret),
            };
            contraction::reduce([inputs[0], inputs[1]], dimensions, how, out, parallel)
        }
        Opcode::Dot(numbers) => contraction::dot([inputs[0], inputs[1]], numbers, out),
    }
}
