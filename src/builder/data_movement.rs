//! Ops that move or make data without arithmetic: iota, broadcasts, reshape, transpose,
//! slice, concatenate, pad and reverse.

use crate::attributes::PaddingConfig;
use crate::builder::builder::{XlaBuilder, XlaOp};
use crate::hlo::ir::Opcode;
use crate::shape::Shape;
use crate::shape_inference::broadcast::{broadcast_in_dim_shape, broadcast_shape};
use crate::shape_inference::shape_ops::{
    concatenate_shape, iota_shape, pad_shape, reshape_shape, reverse_shape, slice_shape, transpose_shape,
};
use crate::shape_inference::{higher_precision, make_shape};

/// An array of `shape` whose elements count 0, 1, 2, … along `iota_dimension` (and repeat
/// along the others). The result keeps the given layout.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("f");
/// let i = iota(&b, &shape!(s32[4, 3]), 1);
/// assert_eq!(b.get_shape(i)?, shape!(s32[4, 3]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn iota<'b>(builder: &'b XlaBuilder, shape: &Shape, iota_dimension: i64) -> XlaOp<'b> {
    builder.record("iota", &[], |emit, _| {
        let result = iota_shape(shape, iota_dimension)?;
        Ok(emit.emit(Opcode::Iota { dimension: iota_dimension }, &[], result))
    })
}

/// `operand` repeated over new major dimensions of `sizes`: the result's dimensions are
/// `sizes` followed by the operand's.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("f");
/// let x = b.parameter(0, &shape!(f32[2, 3]), "x");
/// assert_eq!(b.get_shape(broadcast(x, &[4, 5]))?, shape!(f32[4, 5, 2, 3]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn broadcast<'b>(operand: XlaOp<'b>, sizes: &[i64]) -> XlaOp<'b> {
    operand.builder().record("broadcast", &[operand], |emit, operands| {
        let result = broadcast_shape(&operands[0].shape, sizes)?;
        let first = sizes.len() as i64;
        let dimensions = (first..first + operands[0].shape.rank() as i64).collect();
        Ok(emit.emit(Opcode::Broadcast { dimensions }, &[operands[0].id], result))
    })
}

/// `operand` broadcast to `out_dim_size`: operand dimension `i` becomes output dimension
/// `broadcast_dimensions[i]` (strictly increasing); a size-1 operand dimension may broadcast
/// to any size.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("f");
/// let v = b.constant_r1(&[7.0f32, 8.0, 9.0]);
/// assert_eq!(b.get_shape(broadcast_in_dim(v, &[2, 3], &[1]))?, shape!(f32[2, 3]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn broadcast_in_dim<'b>(
    operand: XlaOp<'b>,
    out_dim_size: &[i64],
    broadcast_dimensions: &[i64],
) -> XlaOp<'b> {
    operand.builder().record("broadcast_in_dim", &[operand], |emit, operands| {
        let source = &operands[0];
        let output = broadcast_in_dim_shape(&source.shape, out_dim_size, broadcast_dimensions)?;
        let mut in_dim_sizes = out_dim_size.to_vec();
        for (&d, &size) in broadcast_dimensions.iter().zip(source.shape.dimensions()) {
            in_dim_sizes[d as usize] = size;
        }
        let in_dim = make_shape(source.shape.element_type(), &in_dim_sizes)?;
        let dimensions = broadcast_dimensions.to_vec();
        let is_final = in_dim == output;
        let id = emit.emit(Opcode::Broadcast { dimensions }, &[source.id], in_dim);
        if is_final {
            Ok(id)
        } else {
            emit.broadcast_sequence(&output, id)
        }
    })
}

/// `operand`'s elements, in logical row-major order, in an array of dimensions `new_sizes`
/// (the same element count).
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("f");
/// let x = b.parameter(0, &shape!(f32[2, 3]), "x");
/// assert_eq!(b.get_shape(reshape(x, &[3, 2]))?, shape!(f32[3, 2]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn reshape<'b>(operand: XlaOp<'b>, new_sizes: &[i64]) -> XlaOp<'b> {
    operand.builder().record("reshape", &[operand], |emit, operands| {
        let result = reshape_shape(&operands[0].shape, new_sizes)?;
        Ok(emit.emit(Opcode::Reshape, &[operands[0].id], result))
    })
}

/// `operand` with its dimensions permuted: output dimension `i` is operand dimension
/// `permutation[i]`. The layout is permuted along, so no data moves.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("f");
/// let x = b.parameter(0, &shape!(f32[2, 3]), "x");
/// assert_eq!(b.get_shape(transpose(x, &[1, 0]))?.to_string(), "f32[3,2]{0,1}");
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn transpose<'b>(operand: XlaOp<'b>, permutation: &[i64]) -> XlaOp<'b> {
    operand.builder().record("transpose", &[operand], |emit, operands| {
        let result = transpose_shape(&operands[0].shape, permutation)?;
        let permutation = permutation.to_vec();
        Ok(emit.emit(Opcode::Transpose { permutation }, &[operands[0].id], result))
    })
}

/// The elements of `operand` from `start_indices` (inclusive) to `limit_indices` (exclusive),
/// every `strides`-th, per dimension.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("f");
/// let x = b.parameter(0, &shape!(f32[4, 6]), "x");
/// assert_eq!(b.get_shape(slice(x, &[0, 1], &[4, 6], &[2, 2]))?, shape!(f32[2, 3]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn slice<'b>(
    operand: XlaOp<'b>,
    start_indices: &[i64],
    limit_indices: &[i64],
    strides: &[i64],
) -> XlaOp<'b> {
    operand.builder().record("slice", &[operand], |emit, operands| {
        let result = slice_shape(&operands[0].shape, start_indices, limit_indices, strides)?;
        let opcode = Opcode::Slice {
            starts: start_indices.to_vec(),
            limits: limit_indices.to_vec(),
            strides: strides.to_vec(),
        };
        Ok(emit.emit(opcode, &[operands[0].id], result))
    })
}

/// `operands` joined along `dimension` (all other sizes equal).
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("f");
/// let x = b.parameter(0, &shape!(f32[2, 3]), "x");
/// let y = b.parameter(1, &shape!(f32[4, 3]), "y");
/// assert_eq!(b.get_shape(concat_in_dim(&b, &[x, y], 0))?, shape!(f32[6, 3]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn concat_in_dim<'b>(builder: &'b XlaBuilder, operands: &[XlaOp<'b>], dimension: i64) -> XlaOp<'b> {
    builder.record("concatenate", operands, |emit, operands| {
        let shapes: Vec<&Shape> = operands.iter().map(|o| &o.shape).collect();
        let result = concatenate_shape(&shapes, dimension)?;
        let ids: Vec<_> =
            operands.iter().map(|o| emit.convert_if_needed(o.id, result.element_type())).collect();
        Ok(emit.emit(Opcode::Concatenate { dimension }, &ids, result))
    })
}

/// `operand` padded with the scalar `padding_value`: per dimension, `edge_padding_low`
/// elements before, `edge_padding_high` after (negative values cut elements off) and
/// `interior_padding` between neighbours.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("f");
/// let x = b.parameter(0, &shape!(f32[3]), "x");
/// let config = PaddingConfig {
///     dimensions: vec![PaddingConfigDimension { edge_padding_low: 1, edge_padding_high: 2, interior_padding: 1 }],
/// };
/// assert_eq!(b.get_shape(pad(x, b.constant_r0(0.0f32), &config))?, shape!(f32[8]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn pad<'b>(operand: XlaOp<'b>, padding_value: XlaOp<'b>, padding_config: &PaddingConfig) -> XlaOp<'b> {
    operand.builder().record("pad", &[operand, padding_value], |emit, operands| {
        let result = pad_shape(&operands[0].shape, &operands[1].shape, padding_config)?;
        let common = higher_precision(operands[0].shape.element_type(), operands[1].shape.element_type());
        let ids: Vec<_> = operands.iter().map(|o| emit.convert_if_needed(o.id, common)).collect();
        Ok(emit.emit(Opcode::Pad(padding_config.clone()), &ids, result))
    })
}

/// `operand` with the order of elements reversed along each of `dimensions`.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("f");
/// let x = b.parameter(0, &shape!(f32[2, 3]{0, 1}), "x");
/// assert_eq!(b.get_shape(rev(x, &[0]))?, shape!(f32[2, 3]{0, 1}));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn rev<'b>(operand: XlaOp<'b>, dimensions: &[i64]) -> XlaOp<'b> {
    operand.builder().record("reverse", &[operand], |emit, operands| {
        let result = reverse_shape(&operands[0].shape, dimensions)?;
        let dimensions = dimensions.to_vec();
        Ok(emit.emit(Opcode::Reverse { dimensions }, &[operands[0].id], result))
    })
}
