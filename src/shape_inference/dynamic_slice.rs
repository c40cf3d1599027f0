//! Dynamic slices: XLA's `InferDynamicSliceShape` and `InferDynamicUpdateSliceShape` for
//! scalar start indices (one per operand dimension), as the builder calls them.

use crate::error::{invalid_argument, Result};
use crate::shape::Shape;
use crate::shape_inference::{make_shape, same_type_ignoring_fp_precision};

/// The scalar start indices of a dynamic slice (`op` is `slice` or `update slice`): one per
/// operand dimension, integral scalars of one shape.
fn check_start_indices(operand: &Shape, starts: &[&Shape], op: &str) -> Result<()> {
    if operand.rank() != starts.len() {
        invalid_argument!(
            "Dynamic {op} start number of dimensions {} must match rank {} of slice input ({}).",
            starts.len(),
            operand.rank(),
            operand.human_string()
        );
    }
    if let Some(first) = starts.first() {
        if !first.is_scalar() {
            invalid_argument!("Dynamic {op} indices must be scalar, not {}.", first.human_string());
        }
        if !first.element_type().is_integral() {
            invalid_argument!("Dynamic {op} start indices must be of integral type.");
        }
        if let Some(other) = starts.iter().find(|s| !s.same_dimensions_and_type(first)) {
            invalid_argument!(
                "Dynamic {op} start indices must all have the same shape, got mismatching indices with shapes {} \
                 and {}.",
                first.human_string(),
                other.human_string()
            );
        }
    }
    Ok(())
}

/// XLA's `InferDynamicSliceShape`: `slice_sizes` (one per dimension, each within the
/// operand's) in the operand's element type, default layout.
pub(crate) fn dynamic_slice_shape(operand: &Shape, starts: &[&Shape], slice_sizes: &[i64]) -> Result<Shape> {
    check_start_indices(operand, starts, "slice")?;
    if slice_sizes.len() != operand.rank() {
        invalid_argument!(
            "Dynamic slice index count does not match argument rank: {} vs {}.",
            slice_sizes.len(),
            operand.rank()
        );
    }
    for (&size, &bound) in slice_sizes.iter().zip(operand.dimensions()) {
        if size < 0 {
            invalid_argument!("Negative size index to dynamic slice: {size}.");
        }
        if size > bound {
            invalid_argument!("Slice dim size {size} greater than dynamic slice dimension: {bound}.");
        }
    }
    make_shape(operand.element_type(), slice_sizes)
}

/// XLA's `InferDynamicUpdateSliceShape`: the operand's shape (layout included), for an update
/// of its rank and element type that fits inside it.
pub(crate) fn dynamic_update_slice_shape(
    operand: &Shape,
    update: &Shape,
    starts: &[&Shape],
) -> Result<Shape> {
    check_start_indices(operand, starts, "update slice")?;
    if update.rank() != operand.rank() {
        invalid_argument!(
            "Dynamic update slice update rank does not match argument rank: {} vs {}.",
            update.rank(),
            operand.rank()
        );
    }
    if !same_type_ignoring_fp_precision(operand.element_type(), update.element_type()) {
        invalid_argument!(
            "Dynamic update slice update element type does not match argument. operand.element_type: {} vs \
             update.element_type: {}.",
            operand.element_type().primitive_type_name(),
            update.element_type().primitive_type_name()
        );
    }
    for (&size, &bound) in update.dimensions().iter().zip(operand.dimensions()) {
        if size > bound {
            invalid_argument!("Update dim size {size} greater than dynamic slice dimension: {bound}.");
        }
    }
    Ok(operand.clone())
}
