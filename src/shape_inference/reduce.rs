//! Reductions: XLA's `InferReduceShape` and `VerifyReducerShape`, for one operand or several
//! (XLA's variadic reduce: N operands and N init values, a reducer of 2N scalar parameters
//! returning N scalars).

use crate::error::{invalid_argument, Result};
use crate::shape::program_shape::ProgramShape;
use crate::shape::Shape;
use crate::shape_inference::{compatible_ignoring_fp_precision, make_shape};

/// The result of reducing `operands` (starting from `inits`, one per operand) over
/// `dimensions` with `reducer`: each operand's dimensions without the reduced ones, in the
/// reducer's element types, default layout; a tuple when the reducer returns one. Checks in
/// XLA's order: argument counts, dimensions, the reducer's signature, duplicate dimensions.
pub(crate) fn reduce_shape(
    operands: &[&Shape],
    inits: &[&Shape],
    reducer: &ProgramShape,
    dimensions: &[i64],
) -> Result<Shape> {
    let arguments = operands.len() + inits.len();
    if arguments == 0 {
        invalid_argument!("Reduce must have at least 2 arguments, has 0");
    }
    if !arguments.is_multiple_of(2) || operands.len() != inits.len() {
        invalid_argument!("Reduce must have an even number of arguments, has {arguments}");
    }
    let first = operands[0];
    for (i, operand) in operands.iter().enumerate().skip(1) {
        if operand.dimensions() != first.dimensions() {
            invalid_argument!(
                "All reduced tensors must have compatible dimension. Tensor at index 0 has shape {}, and \
                 tensor at index {i} has shape {}.",
                first.human_string(),
                operand.human_string()
            );
        }
    }
    if let Some(&d) = dimensions.iter().find(|&&d| d < 0 || d >= first.rank() as i64) {
        invalid_argument!("Reducing out-of-bounds dimension {d} in shape {}.", first.human_string());
    }
    let accumulators = verify_reducer(reducer, inits, operands)?;
    let mut reduced = vec![false; first.rank()];
    for &d in dimensions {
        if std::mem::replace(&mut reduced[d as usize], true) {
            invalid_argument!("Duplicate reduction dimension: {d}");
        }
    }
    let kept: Vec<i64> =
        first.dimensions().iter().zip(&reduced).filter(|(_, &r)| !r).map(|(&size, _)| size).collect();
    let results: Vec<Shape> =
        accumulators.iter().map(|a| make_shape(a.element_type(), &kept)).collect::<Result<_>>()?;
    match reducer.result.is_tuple() {
        true => Ok(Shape::tuple(&results)),
        false => Ok(results.into_iter().next().expect("one accumulator, checked")),
    }
}

/// XLA's `VerifyReducerShape`: `2N` parameters (N accumulators, then N values), a result of N
/// scalars (one, or a tuple of N), accumulators that match the result, the init values and
/// the operands' element types. Returns the accumulator shapes.
pub(crate) fn verify_reducer<'r>(
    reducer: &'r ProgramShape,
    inits: &[&Shape],
    operands: &[&Shape],
) -> Result<Vec<&'r Shape>> {
    let n = operands.len();
    let parameters: Vec<&Shape> = reducer.parameters.iter().map(|(_, shape)| shape).collect();
    if parameters.len() != 2 * n {
        invalid_argument!(
            "Reduction function must take {} parameters, but takes {} parameter(s).",
            2 * n,
            parameters.len()
        );
    }
    let result = &reducer.result;
    let accumulators: Vec<&Shape> = match result.is_tuple() {
        false if n != 1 => {
            invalid_argument!(
                "Reduction function must produce a tuple with {n} elements, but produces a scalar"
            )
        }
        false => vec![result],
        true if result.tuple_shapes().len() != n => invalid_argument!(
            "Reduction function must produce a tuple with {n} elements, but has {} elements",
            result.tuple_shapes().len()
        ),
        true => result.tuple_shapes().iter().collect(),
    };
    if accumulators.iter().any(|a| !a.is_scalar()) {
        invalid_argument!(
            "Reduction function must return a scalar or tuple of scalars but returns shape: {}",
            result.human_string()
        );
    }
    for (i, &accumulator) in accumulators.iter().enumerate() {
        if !parameters[i].same_dimensions_and_type(accumulator) {
            invalid_argument!(
                "Reduction function's {i}-th parameter shape differs from the result shape: {} vs {}",
                parameters[i].human_string(),
                accumulator.human_string()
            );
        }
        if !compatible_ignoring_fp_precision(accumulator, inits[i]) {
            invalid_argument!(
                "Reduction function's accumulator shape at index {i} differs from the init_value shape: {} vs {}",
                accumulator.human_string(),
                inits[i].human_string()
            );
        }
        let value = parameters[n + i];
        let element = Shape::scalar(operands[i].element_type());
        if !compatible_ignoring_fp_precision(&element, value) {
            invalid_argument!(
                "Reduction function's {}-th parameter shape differs from the input type element type: {} vs {}",
                n + i,
                value.human_string(),
                element.human_string()
            );
        }
        if !compatible_ignoring_fp_precision(accumulator, value) {
            invalid_argument!(
                "Reduction function's {}-th parameter shape must match the result shape, but got {} vs {}.",
                n + i,
                value.human_string(),
                accumulator.human_string()
            );
        }
    }
    Ok(accumulators)
}
