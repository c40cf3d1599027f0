//! Ops that move data without computing: reshape, transpose, slice, concatenate, pad,
//! reverse, and iota.

use crate::attributes::PaddingConfig;
use crate::element_type::ElementType;
use crate::error::{invalid_argument, Result};
use crate::shape::layout::join;
use crate::shape::Shape;
use crate::shape_inference::{higher_precision, is_permutation, make_shape, same_type_ignoring_fp_precision};

/// XLA's `InferReshapeShape`: same element count; default layout.
pub(crate) fn reshape_shape(operand: &Shape, sizes: &[i64]) -> Result<Shape> {
    let result = make_shape(operand.element_type(), sizes)?;
    if result.element_count() != operand.element_count() {
        invalid_argument!(
            "Reshape operation has mismatched element counts: from={} ({}) to={} ({}).",
            operand.element_count(),
            operand.human_string(),
            result.element_count(),
            result.human_string()
        );
    }
    Ok(result)
}

/// XLA's `InferTransposeShape`: output dimension `i` is operand dimension `permutation[i]`,
/// and the layout is permuted along (`ShapeUtil::PermuteDimensions`), so a transpose is a
/// bitcast.
pub(crate) fn transpose_shape(operand: &Shape, permutation: &[i64]) -> Result<Shape> {
    if permutation.len() != operand.rank() || !is_permutation(permutation) {
        invalid_argument!(
            "Transpose dimensions [{}] are not a permutation of the operand dimensions (operand shape is {}).",
            join(permutation),
            operand.human_string()
        );
    }
    let dimensions: Vec<i64> = permutation.iter().map(|&p| operand.dimensions()[p as usize]).collect();
    let mut inverse = vec![0i64; permutation.len()];
    for (i, &p) in permutation.iter().enumerate() {
        inverse[p as usize] = i as i64;
    }
    let minor_to_major: Vec<i64> =
        operand.layout().minor_to_major().iter().map(|&m| inverse[m as usize]).collect();
    Shape::with_layout(operand.element_type(), &dimensions, &minor_to_major)
}

/// XLA's `InferSliceShape`: `ceil((limit - start) / stride)` elements per dimension; default
/// layout.
pub(crate) fn slice_shape(operand: &Shape, starts: &[i64], limits: &[i64], strides: &[i64]) -> Result<Shape> {
    let context = || {
        format!(
            " in slice operation; argument shape: {}; starts: {{{}}}; limits: {{{}}}; strides: {{{}}}.",
            operand.human_string(),
            join(starts),
            join(limits),
            join(strides)
        )
    };
    if starts.len() != limits.len() {
        invalid_argument!(
            "slice start and limit sizes differ: {} vs {}{}",
            starts.len(),
            limits.len(),
            context()
        );
    }
    if starts.len() != strides.len() {
        invalid_argument!(
            "slice start and strides sizes differ: {} vs {}{}",
            starts.len(),
            strides.len(),
            context()
        );
    }
    if starts.len() != operand.rank() {
        invalid_argument!(
            "Slice index count does not match argument rank: {} vs {}.",
            starts.len(),
            operand.rank()
        );
    }
    let mut sizes = Vec::with_capacity(starts.len());
    for (d, ((&start, &limit), &stride)) in starts.iter().zip(limits).zip(strides).enumerate() {
        let size = operand.dimensions()[d];
        if start < 0 {
            invalid_argument!("Negative start index to slice: {start}.");
        }
        if limit > size {
            invalid_argument!(
                "limit index ({limit}) must be less than or equal to dimension size ({size}){}",
                context()
            );
        }
        if start > limit {
            invalid_argument!(
                "limit index ({limit}) must be greater or equal to start index ({start}) in slice with \
                 positive stride{}",
                context()
            );
        }
        if stride <= 0 {
            invalid_argument!("Stride ({stride}) must be positive.");
        }
        // Written so that no intermediate overflows, whatever the stride.
        sizes.push(if limit == start { 0 } else { (limit - start - 1) / stride + 1 });
    }
    make_shape(operand.element_type(), &sizes)
}

/// XLA's `InferConcatOpShape`: equal ranks, types equal up to float precision, sizes equal
/// but in `dimension`, where they add up; default layout.
pub(crate) fn concatenate_shape(operands: &[&Shape], dimension: i64) -> Result<Shape> {
    let Some((first, rest)) = operands.split_first() else {
        invalid_argument!("Concatenate expects at least one argument.");
    };
    if dimension < 0 || dimension >= first.rank() as i64 {
        invalid_argument!("Concatenate dimension out of bounds: {dimension}.");
    }
    let mut element_type = first.element_type();
    let mut dimensions = first.dimensions().to_vec();
    for shape in rest {
        if shape.rank() != first.rank() {
            invalid_argument!(
                "Cannot concatenate arrays with different ranks: {} ({}) vs {} ({}).",
                first.rank(),
                first.human_string(),
                shape.rank(),
                shape.human_string()
            );
        }
        if !same_type_ignoring_fp_precision(first.element_type(), shape.element_type()) {
            invalid_argument!(
                "Cannot concatenate arrays with different element types: {} vs {}.",
                first.element_type().primitive_type_name(),
                shape.element_type().primitive_type_name()
            );
        }
        for (d, (&a, &b)) in first.dimensions().iter().zip(shape.dimensions()).enumerate() {
            if a != b && d as i64 != dimension {
                invalid_argument!(
                    "Cannot concatenate arrays that differ in dimensions other than the one being \
                     concatenated. Dimension {d} in both shapes must be equal (or compatible): {} vs {}.",
                    first.human_string(),
                    shape.human_string()
                );
            }
        }
        element_type = higher_precision(element_type, shape.element_type());
        dimensions[dimension as usize] = dimensions[dimension as usize]
            .checked_add(shape.dimensions()[dimension as usize])
            .ok_or_else(|| crate::error::Error::invalid("concatenated size overflows int64"))?;
    }
    make_shape(element_type, &dimensions)
}

/// XLA's `InferPadShape`: each dimension grows by its edge padding (negative removes) and by
/// interior padding between elements; default layout.
pub(crate) fn pad_shape(operand: &Shape, padding_value: &Shape, config: &PaddingConfig) -> Result<Shape> {
    if !padding_value.is_scalar() {
        invalid_argument!("Pad operation does not support non-scalar padding values.");
    }
    if operand.rank() != config.dimensions.len() {
        invalid_argument!(
            "The rank of the operand and the padding configuration do not match: {} vs {}.",
            operand.human_string(),
            short_debug_string(config)
        );
    }
    if !same_type_ignoring_fp_precision(operand.element_type(), padding_value.element_type()) {
        invalid_argument!("The element types of the operands to Pad do not match.");
    }
    if config.dimensions.iter().any(|d| d.interior_padding < 0) {
        invalid_argument!("Interior padding cannot be negative: {}", short_debug_string(config));
    }
    let mut dimensions = Vec::with_capacity(operand.rank());
    for (i, (&size, p)) in operand.dimensions().iter().zip(&config.dimensions).enumerate() {
        let padded = (size.max(1) - 1)
            .checked_mul(p.interior_padding)
            .and_then(|interior| interior.checked_add(size))
            .and_then(|s| s.checked_add(p.edge_padding_low))
            .and_then(|s| s.checked_add(p.edge_padding_high))
            .ok_or_else(|| {
                crate::error::Error::invalid(format!("Padded size of dimension {i} overflows int64"))
            })?;
        if padded < 0 {
            invalid_argument!("Padding result in negative size for dimension {i}");
        }
        dimensions.push(padded);
    }
    make_shape(higher_precision(operand.element_type(), padding_value.element_type()), &dimensions)
}

/// A `PaddingConfig` as protobuf's `ShortDebugString` prints it (zero fields left out).
fn short_debug_string(config: &PaddingConfig) -> String {
    let parts: Vec<String> = config
        .dimensions
        .iter()
        .map(|d| {
            let fields: Vec<String> = [
                ("edge_padding_low", d.edge_padding_low),
                ("edge_padding_high", d.edge_padding_high),
                ("interior_padding", d.interior_padding),
            ]
            .iter()
            .filter(|(_, v)| *v != 0)
            .map(|(name, v)| format!("{name}: {v}"))
            .collect();
            if fields.is_empty() {
                "dimensions { }".to_string()
            } else {
                format!("dimensions {{ {} }}", fields.join(" "))
            }
        })
        .collect();
    parts.join(" ")
}

/// XLA's `InferReverseShape`: dimensions unique and in range; the operand's shape and layout.
pub(crate) fn reverse_shape(operand: &Shape, dimensions: &[i64]) -> Result<Shape> {
    let mut sorted = dimensions.to_vec();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        invalid_argument!("a dimension number is duplicated in reverse");
    }
    if let Some(&d) = dimensions.iter().find(|&&d| d < 0 || d >= operand.rank() as i64) {
        invalid_argument!(
            "One of the reverse dimensions ({d}) is out-of-bounds in shape {}.",
            operand.human_string()
        );
    }
    Ok(operand.clone())
}

/// `iota`: the given shape, layout included. XLA's builder accepts anything and its verifier
/// rejects later; lazy-xla rejects at once, with the verifier's sentences.
pub(crate) fn iota_shape(shape: &Shape, dimension: i64) -> Result<Shape> {
    if shape.is_scalar() {
        invalid_argument!("Iota does not support scalars.");
    }
    if dimension < 0 || dimension >= shape.rank() as i64 {
        invalid_argument!(
            "The iota dimension cannot go beyond the operation rank or be negative; got {dimension} for rank {}.",
            shape.rank()
        );
    }
    if shape.element_type() == ElementType::Pred {
        invalid_argument!(
            "Only support iota of integral, floating point or complex primitive types, got PRED"
        );
    }
    Ok(shape.clone())
}
