//! Reductions: XLA's `InferReduceShape` and `VerifyReducerShape`, for one operand.

use crate::error::{invalid_argument, Result};
use crate::shape::Shape;
use crate::shape_inference::{compatible_ignoring_fp_precision, make_shape};

/// The result of reducing `operand` (starting from `init`) with a reducer taking
/// `reducer_parameters` and returning `reducer_result` over `dimensions`: the operand's
/// dimensions without the reduced ones, in the reducer's element type, default layout.
pub(crate) fn reduce_shape(
    operand: &Shape,
    init: &Shape,
    reducer_parameters: &[&Shape],
    reducer_result: &Shape,
    dimensions: &[i64],
) -> Result<Shape> {
    if reducer_parameters.len() != 2 {
        invalid_argument!(
            "Reduction function must take 2 parameters, but takes {} parameter(s).",
            reducer_parameters.len()
        );
    }
    if !reducer_result.is_scalar() {
        invalid_argument!(
            "Reduction function must return a scalar or tuple of scalars but returns shape: {}",
            reducer_result.human_string()
        );
    }
    let (accumulator, value) = (reducer_parameters[0], reducer_parameters[1]);
    if !reducer_result.same_dimensions_and_type(accumulator) {
        invalid_argument!(
            "Reduction function's 0-th parameter shape differs from the result shape: {} vs {}",
            accumulator.human_string(),
            reducer_result.human_string()
        );
    }
    if !compatible_ignoring_fp_precision(reducer_result, init) {
        invalid_argument!(
            "Reduction function's accumulator shape at index 0 differs from the init_value shape: {} vs {}",
            reducer_result.human_string(),
            init.human_string()
        );
    }
    let input_element = Shape::scalar(operand.element_type());
    if !compatible_ignoring_fp_precision(&input_element, value) {
        invalid_argument!(
            "Reduction function's 1-th parameter shape differs from the input type element type: {} vs {}",
            value.human_string(),
            input_element.human_string()
        );
    }
    if !compatible_ignoring_fp_precision(reducer_result, value) {
        invalid_argument!(
            "Reduction function's 1-th parameter shape must match the result shape, but got {} vs {}.",
            value.human_string(),
            reducer_result.human_string()
        );
    }
    if let Some(&d) = dimensions.iter().find(|&&d| d < 0 || d >= operand.rank() as i64) {
        invalid_argument!("Reducing out-of-bounds dimension {d} in shape {}.", operand.human_string());
    }
    let mut reduced = vec![false; operand.rank()];
    for &d in dimensions {
        if std::mem::replace(&mut reduced[d as usize], true) {
            invalid_argument!("Duplicate reduction dimension: {d}");
        }
    }
    let kept: Vec<i64> =
        operand.dimensions().iter().zip(&reduced).filter(|(_, &r)| !r).map(|(&size, _)| size).collect();
    make_shape(reducer_result.element_type(), &kept)
}
