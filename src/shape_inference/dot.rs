//! Dot products: XLA's `InferDotOpShape` and `ValidateDotDimensionNumbers`.

use crate::attributes::DotDimensionNumbers;
use crate::element_type::ElementType;
use crate::error::{invalid_argument, Result};
use crate::shape::Shape;
use crate::shape_inference::{higher_precision, make_shape};

/// The result of `dot_general`: batch dimensions, then the lhs's free dimensions, then the
/// rhs's, in the preferred element type if there is one (XLA's builder takes any, narrower
/// ones included), else the higher-precision element type of the two; default layout.
pub(crate) fn dot_shape(
    lhs: &Shape,
    rhs: &Shape,
    numbers: &DotDimensionNumbers,
    preferred_element_type: Option<ElementType>,
) -> Result<Shape> {
    let in_range = |rank: usize, lists: [&Vec<i64>; 2]| {
        lists.iter().all(|list| list.iter().all(|&d| (0..rank as i64).contains(&d)))
    };
    if !in_range(lhs.rank(), [&numbers.lhs_contracting_dimensions, &numbers.lhs_batch_dimensions])
        || !in_range(rhs.rank(), [&numbers.rhs_contracting_dimensions, &numbers.rhs_batch_dimensions])
    {
        invalid_argument!(
            "A dimension number is out of range in Dot: {}. {} {}",
            debug_string(numbers),
            lhs.human_string(),
            rhs.human_string()
        );
    }
    let unique = |a: &[i64], b: &[i64]| {
        let mut all: Vec<i64> = a.iter().chain(b).copied().collect();
        all.sort_unstable();
        all.windows(2).all(|w| w[0] != w[1])
    };
    if !unique(&numbers.lhs_contracting_dimensions, &numbers.lhs_batch_dimensions)
        || !unique(&numbers.rhs_contracting_dimensions, &numbers.rhs_batch_dimensions)
    {
        invalid_argument!("A dimension number is not unique in Dot: {}.", debug_string(numbers));
    }
    let fail = |addendum: &str| {
        crate::error::Error::invalid(format!(
            "Cannot infer shape for dot operation: {} <dot> {}. {addendum}",
            lhs.human_string(),
            rhs.human_string()
        ))
    };
    if numbers.lhs_contracting_dimensions.len() != numbers.rhs_contracting_dimensions.len() {
        return Err(fail("Must specify the same number of contracting dimensions for lhs and rhs."));
    }
    let size = |shape: &Shape, d: i64| shape.dimensions()[d as usize];
    for (&l, &r) in numbers.lhs_contracting_dimensions.iter().zip(&numbers.rhs_contracting_dimensions) {
        if size(lhs, l) != size(rhs, r) {
            return Err(fail("Contracting dimension sizes are not compatible."));
        }
    }
    if numbers.lhs_batch_dimensions.len() != numbers.rhs_batch_dimensions.len() {
        return Err(fail("Must the same number of batch dimensions for lhs and rhs."));
    }
    for (&l, &r) in numbers.lhs_batch_dimensions.iter().zip(&numbers.rhs_batch_dimensions) {
        if size(lhs, l) != size(rhs, r) {
            return Err(fail("Batch dimension sizes are not compatible."));
        }
    }
    let mut dimensions: Vec<i64> = numbers.lhs_batch_dimensions.iter().map(|&d| size(lhs, d)).collect();
    for (shape, contracting, batch) in [
        (lhs, &numbers.lhs_contracting_dimensions, &numbers.lhs_batch_dimensions),
        (rhs, &numbers.rhs_contracting_dimensions, &numbers.rhs_batch_dimensions),
    ] {
        for d in 0..shape.rank() as i64 {
            if !contracting.contains(&d) && !batch.contains(&d) {
                dimensions.push(size(shape, d));
            }
        }
    }
    let element_type =
        preferred_element_type.unwrap_or_else(|| higher_precision(lhs.element_type(), rhs.element_type()));
    make_shape(element_type, &dimensions)
}

/// The dimension numbers as protobuf's `DebugString` prints them: one `field: value` line per
/// element.
fn debug_string(numbers: &DotDimensionNumbers) -> String {
    let mut text = String::new();
    for (field, values) in [
        ("lhs_contracting_dimensions", &numbers.lhs_contracting_dimensions),
        ("rhs_contracting_dimensions", &numbers.rhs_contracting_dimensions),
        ("lhs_batch_dimensions", &numbers.lhs_batch_dimensions),
        ("rhs_batch_dimensions", &numbers.rhs_batch_dimensions),
    ] {
        for value in values {
            text.push_str(&format!("{field}: {value}\n"));
        }
    }
    text
}
