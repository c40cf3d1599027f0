//! Tuples: putting values together (`tuple`) and taking one apart (`get_tuple_element`).

use crate::builder::builder::{XlaBuilder, XlaOp};
use crate::hlo::ir::Opcode;
use crate::shape::Shape;
use crate::shape_inference::tuple::get_tuple_element_shape;

/// A tuple of `elements` (XLA's `Tuple`): one value whose shape is the tuple of theirs, layouts
/// included. Any values may be elements, tuples too; `tuple(&b, &[])` is the empty tuple.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("pair");
/// let x = b.parameter(0, &shape!(f32[2]), "x");
/// let n = b.constant_r0(7i32);
/// let pair = tuple(&b, &[x, n]);
/// assert_eq!(b.get_shape(pair)?.to_string(), "(f32[2]{0}, s32[])");
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn tuple<'b>(builder: &'b XlaBuilder, elements: &[XlaOp<'b>]) -> XlaOp<'b> {
    builder.record("tuple", elements, |emit, operands| {
        let shapes: Vec<Shape> = operands.iter().map(|o| o.shape.clone()).collect();
        let ids: Vec<_> = operands.iter().map(|o| o.id).collect();
        Ok(emit.emit(Opcode::Tuple, &ids, Shape::tuple(&shapes)))
    })
}

/// Element `index` of the tuple `tuple_data` (XLA's `GetTupleElement`); its shape is the
/// element's, layout included.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("second");
/// let state = b.parameter(0, &Shape::tuple(&[shape!(f32[2]), shape!(s32[])]), "state");
/// assert_eq!(b.get_shape(get_tuple_element(state, 1))?, shape!(s32[]));
/// let bad = get_tuple_element(state, 2);
/// assert!(b.build(bad).unwrap_err().to_string().starts_with(
///     "GetTupleElement() index (2) out of range for tuple shape (f32[2], s32[])"
/// ));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn get_tuple_element(tuple_data: XlaOp<'_>, index: i64) -> XlaOp<'_> {
    tuple_data.builder().record("get-tuple-element", &[tuple_data], |emit, operands| {
        let result = get_tuple_element_shape(&operands[0].shape, index)?;
        Ok(emit.emit(Opcode::GetTupleElement { index }, &[operands[0].id], result))
    })
}
