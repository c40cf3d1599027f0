//! Sorting: `Sort` (XLA's builder checks, then the checks XLA's verifier makes, which lazy-xla
//! makes when the op is made) and `TopK`.

use crate::element_type::ElementType;
use crate::error::{invalid_argument, Result};
use crate::shape::program_shape::ProgramShape;
use crate::shape::Shape;
use crate::shape_inference::{compatible_ignoring_fp_precision, make_shape};

/// The result of sorting `operands` along `dimension` with `comparator`, and the dimension
/// resolved (`-1` is the last, as XLA's builder resolves it): one operand's shape, or a tuple
/// of the operands' shapes (layouts kept).
pub(crate) fn sort_shape(
    operands: &[&Shape],
    comparator: &ProgramShape,
    dimension: i64,
) -> Result<(Shape, i64)> {
    let Some(&keys) = operands.first() else {
        invalid_argument!("Sort expects at least one operand (XLA's builder crashes on none)");
    };
    for (i, operand) in operands.iter().enumerate().skip(1) {
        if operand.dimensions() != keys.dimensions() {
            invalid_argument!(
                "Sort keys and values dimensions must match. Keys shape is: {}\n, Values shape (operand index {i}) is: {}",
                keys.human_string(),
                operand.human_string()
            );
        }
    }
    let rank = keys.rank() as i64;
    let dimension = if dimension == -1 { rank - 1 } else { dimension };
    if dimension < 0 || dimension >= rank {
        invalid_argument!(
            "Expected the sort_dimension {dimension} of sort to be smaller than the rank {rank} of the operand(s)."
        );
    }
    if !comparator.result.same_dimensions_and_type(&Shape::scalar(ElementType::Pred)) {
        invalid_argument!(
            "The Sort compare computation shape does not lead to a scalar predicate shape: {}",
            comparator.result.human_string()
        );
    }
    if comparator.parameters.len() != 2 * operands.len() {
        invalid_argument!(
            "Expected the compare computation of sort to have {} parameters, has {}",
            2 * operands.len(),
            comparator.parameters.len()
        );
    }
    for (i, (_, parameter)) in comparator.parameters.iter().enumerate() {
        let expected = Shape::scalar(operands[i / 2].element_type());
        if !compatible_ignoring_fp_precision(&expected, parameter) {
            invalid_argument!(
                "Expected the {i}-th parameter of the compare computation of sort to have shape {}, but got {}",
                expected.human_string(),
                parameter.human_string()
            );
        }
    }
    let result = match operands {
        [single] => (*single).clone(),
        _ => Shape::tuple(&operands.iter().map(|&s| s.clone()).collect::<Vec<_>>()),
    };
    Ok((result, dimension))
}

/// The result of `top_k`: the `k` largest (or smallest) elements of each row along the last
/// dimension and their `s32` indices, default layouts.
pub(crate) fn top_k_shape(operand: &Shape, k: i64) -> Result<Shape> {
    if operand.is_tuple() {
        invalid_argument!(
            "Expected array argument for operand of top-k operation, but got {}.",
            operand.human_string()
        );
    }
    let Some(&last) = operand.dimensions().last() else {
        invalid_argument!("operand's rank must be at least 1 for top-k; got {}", operand.human_string());
    };
    if k < 0 {
        invalid_argument!("k must not be negative for top-k; got k={k}");
    }
    if last < k {
        invalid_argument!("k={k} is larger than the last dimension of size={last}");
    }
    let mut dimensions = operand.dimensions().to_vec();
    *dimensions.last_mut().expect("rank at least 1") = k;
    Ok(Shape::tuple(&[
        make_shape(operand.element_type(), &dimensions)?,
        make_shape(ElementType::S32, &dimensions)?,
    ]))
}
