//! Ops that combine many elements into one: `reduce`, `dot` and `dot_general`.

use std::sync::Arc;

use crate::attributes::DotDimensionNumbers;
use crate::builder::XlaOp;
use crate::hlo::computation::XlaComputation;
use crate::hlo::ir::{HloComputation, Opcode};
use crate::shape_inference::dot::dot_shape;
use crate::shape_inference::reduce::reduce_shape;

/// `operand` reduced over `dimensions_to_reduce` with the scalar computation `computation`
/// (`(accumulator, value) -> accumulator`, built by another [`XlaBuilder`](crate::XlaBuilder)),
/// starting from the scalar `init_value`. Reducing over no dimension returns the operand.
///
/// ```
/// use lazy_xla::*;
/// let sum = {
///     let r = XlaBuilder::new("sum");
///     let (a, b) = (r.parameter(0, &shape!(f32[]), "a"), r.parameter(1, &shape!(f32[]), "b"));
///     r.build(add(a, b, &[]))?
/// };
/// let b = XlaBuilder::new("f");
/// let x = b.parameter(0, &shape!(f32[2, 3]), "x");
/// let row_sums = reduce(x, b.constant_r0(0.0f32), &sum, &[1]);
/// assert_eq!(b.get_shape(row_sums)?, shape!(f32[2]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn reduce<'b>(
    operand: XlaOp<'b>,
    init_value: XlaOp<'b>,
    computation: &XlaComputation,
    dimensions_to_reduce: &[i64],
) -> XlaOp<'b> {
    operand.builder().record("reduce", &[operand, init_value], |emit, operands| {
        let reducer = &computation.entry;
        let parameters = reducer.parameters();
        let parameter_shapes: Vec<_> = parameters.iter().map(|p| &p.shape).collect();
        let result = reduce_shape(
            &operands[0].shape,
            &operands[1].shape,
            &parameter_shapes,
            reducer.result_shape(),
            dimensions_to_reduce,
        )?;
        let value = emit.convert_if_needed(operands[0].id, parameter_shapes[1].element_type());
        let init = emit.convert_if_needed(operands[1].id, result.element_type());
        // As XlaBuilder does, the reducer is imported into this builder, renamed with its ids.
        let mut imported: HloComputation = (**reducer).clone();
        imported.name = emit.unique_name(base_name(&reducer.name));
        for instruction in &mut imported.instructions {
            instruction.name = emit.unique_name(base_name(&instruction.name));
        }
        let opcode =
            Opcode::Reduce { dimensions: dimensions_to_reduce.to_vec(), reducer: Arc::new(imported) };
        Ok(emit.emit(opcode, &[value, init], result))
    })
}

/// The matrix product of `lhs` and `rhs` (XLA's `Dot`): contracts dimension 1 of a rank-2 lhs
/// (0 of a vector) with dimension 0 of the rhs.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("f");
/// let x = b.parameter(0, &shape!(f32[2, 3]), "x");
/// let w = b.parameter(1, &shape!(f32[3, 4]), "w");
/// assert_eq!(b.get_shape(dot(x, w))?, shape!(f32[2, 4]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn dot<'b>(lhs: XlaOp<'b>, rhs: XlaOp<'b>) -> XlaOp<'b> {
    let lhs_rank = lhs.builder().get_shape(lhs).map_or(2, |s| s.rank());
    let numbers = DotDimensionNumbers {
        lhs_contracting_dimensions: vec![if lhs_rank == 1 { 0 } else { 1 }],
        rhs_contracting_dimensions: vec![0],
        ..Default::default()
    };
    dot_general(lhs, rhs, &numbers)
}

/// The general tensor contraction (XLA's `DotGeneral`): sums over pairs of contracting
/// dimensions, independently for each index of the batch dimensions. The result's dimensions
/// are the batch dimensions, then lhs's free dimensions, then rhs's.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("f");
/// let x = b.parameter(0, &shape!(f32[8, 2, 3]), "x");
/// let y = b.parameter(1, &shape!(f32[8, 3, 4]), "y");
/// let numbers = DotDimensionNumbers {
///     lhs_contracting_dimensions: vec![2],
///     rhs_contracting_dimensions: vec![1],
///     lhs_batch_dimensions: vec![0],
///     rhs_batch_dimensions: vec![0],
/// };
/// assert_eq!(b.get_shape(dot_general(x, y, &numbers))?, shape!(f32[8, 2, 4]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn dot_general<'b>(lhs: XlaOp<'b>, rhs: XlaOp<'b>, dimension_numbers: &DotDimensionNumbers) -> XlaOp<'b> {
    lhs.builder().record("dot", &[lhs, rhs], |emit, operands| {
        let result = dot_shape(&operands[0].shape, &operands[1].shape, dimension_numbers)?;
        let ids: Vec<_> =
            operands.iter().map(|o| emit.convert_if_needed(o.id, result.element_type())).collect();
        Ok(emit.emit(Opcode::Dot(dimension_numbers.clone()), &ids, result))
    })
}

/// `add.3` → `add`: a name without the builder's id suffix.
fn base_name(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((base, id)) if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => name,
    }
}
