//! `sort` and `top_k`: the permutation carries the tangents (jax's `_sort_jvp`). A sort is
//! redone with an iota along its dimension as one more operand, which the comparator ignores,
//! so it returns the permutation beside the sorted arrays; each tangent is its operand's
//! tangent gathered by it (`take_along_axis`), which transposes to a scatter-add.

use crate::attributes::GatherDimensionNumbers;
use crate::autodiff::movement::moved;
use crate::autodiff::tape::{Tan, Tape};
use crate::builder::{concat_in_dim, get_tuple_element, iota, reshape, sort, tuple, XlaOp};
use crate::element_type::ElementType;
use crate::error::Result;
use crate::hlo::computation::XlaComputation;
use crate::hlo::ir::{HloComputation, Instruction, Opcode};
use crate::shape::Shape;

/// `tangent` (of `operand`'s shape) read at `positions` along `dimension` (an integer array of
/// the result's dimensions): jax's `take_along_axis`, as a gather.
fn take_along<'b>(
    tape: &mut Tape<'b>,
    tangent: &Tan,
    operand: &Shape,
    positions: XlaOp<'b>,
    position_shape: &Shape,
    dimension: usize,
) -> Result<Tan> {
    let Some(tangent) = tangent.array() else { return Ok(Tan::Zero) };
    let builder = tape.builder;
    let rank = operand.rank();
    let mut column_dims = position_shape.dimensions().to_vec();
    column_dims.push(1);
    let columns: Vec<XlaOp<'b>> = (0..rank)
        .map(|d| {
            let index = if d == dimension { positions } else { iota(builder, position_shape, d as i64) };
            reshape(index, &column_dims)
        })
        .collect();
    let indices = concat_in_dim(builder, &columns, rank as i64);
    let mut index_dims = position_shape.dimensions().to_vec();
    index_dims.push(rank as i64);
    let index_shape = Shape::new(position_shape.element_type(), &index_dims);
    let all: Vec<i64> = (0..rank as i64).collect();
    let numbers = GatherDimensionNumbers {
        offset_dims: vec![],
        collapsed_slice_dims: all.clone(),
        start_index_map: all,
        index_vector_dim: rank as i64,
        ..Default::default()
    };
    let opcode = Opcode::Gather { numbers, slice_sizes: vec![1; rank], indices_are_sorted: false };
    let result = Shape::new(operand.element_type(), position_shape.dimensions());
    moved(
        tape,
        &opcode,
        &[positions, indices],
        &[operand.clone(), index_shape],
        &[Tan::Array(tangent), Tan::Zero],
        &result,
    )
}

/// The primal value and tangent of a sort.
pub(super) fn sorted<'b>(
    tape: &mut Tape<'b>,
    instruction: &Instruction,
    x: &[XlaOp<'b>],
    t: &[&Tan],
    shapes: &[&Shape],
) -> Result<(XlaOp<'b>, Tan)> {
    let Opcode::Sort { dimension, is_stable, comparator } = &instruction.opcode else {
        return Err(tape.not_implemented(instruction.opcode.name(), ""));
    };
    let builder = tape.builder;
    let position_shape = Shape::new(ElementType::S32, shapes[0].dimensions());
    // The comparator with two more parameters (the positions), unused.
    let mut extended: HloComputation = (**comparator).clone();
    let count = 2 * x.len() as i64;
    for (number, name) in [(count, "position_lhs"), (count + 1, "position_rhs")] {
        extended.instructions.push(Instruction {
            opcode: Opcode::Parameter { number },
            operands: vec![],
            shape: Shape::scalar(ElementType::S32),
            name: name.to_string(),
        });
    }
    let operands: Vec<XlaOp<'b>> =
        x.iter().copied().chain([iota(builder, &position_shape, *dimension)]).collect();
    let all = sort(&operands, &XlaComputation::new(extended), *dimension, *is_stable);
    let positions = get_tuple_element(all, x.len() as i64);
    let values: Vec<XlaOp<'b>> = (0..x.len() as i64).map(|i| get_tuple_element(all, i)).collect();
    let mut tangents = Vec::new();
    for (tangent, shape) in t.iter().zip(shapes) {
        tangents.push(take_along(tape, tangent, shape, positions, &position_shape, *dimension as usize)?);
    }
    Ok(if x.len() == 1 {
        (values[0], tangents.remove(0))
    } else {
        (tuple(builder, &values), Tan::Tuple(tangents))
    })
}

/// The tangent of `top_k`'s values: the operand's tangent at the indices it returns.
pub(super) fn top_k<'b>(
    tape: &mut Tape<'b>,
    y: XlaOp<'b>,
    t: &Tan,
    operand: &Shape,
    shape: &Shape,
) -> Result<Tan> {
    let indices_shape = &shape.tuple_shapes()[1];
    let indices = get_tuple_element(y, 1);
    let values = take_along(tape, t, operand, indices, indices_shape, operand.rank() - 1)?;
    Ok(Tan::Tuple(vec![values, Tan::Zero]))
}
