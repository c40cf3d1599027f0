//! Broadcasting: XLA's in-dim and degenerate-dimension rules for binary ops, `broadcast`
//! (new major dimensions) and `broadcast_in_dim`.

use crate::element_type::ElementType;
use crate::error::{invalid_argument, Result};
use crate::shape::Shape;
use crate::shape_inference::make_shape;

/// XLA's `InferInDimBroadcastShape`: `smaller` matched onto dimensions `broadcast_dimensions`
/// of `larger`. The result has `larger`'s dimensions except that matched dimensions take
/// `smaller`'s sizes (which may still be 1, for degenerate broadcasting to finish).
pub(crate) fn in_dim_broadcast_shape(
    smaller: &Shape,
    larger: &Shape,
    broadcast_dimensions: &[i64],
) -> Result<Shape> {
    if broadcast_dimensions.is_empty() && !smaller.is_scalar() {
        invalid_argument!(
            "Shapes must be equal rank, but are {} and {}",
            smaller.human_string(),
            larger.human_string()
        );
    }
    if broadcast_dimensions.len() != smaller.rank() {
        invalid_argument!(
            "Size of broadcast_dimensions has to match lower-rank operand's rank;  lower-rank \
             operand's rank is {}, size of broadcast_dimensions is {}.",
            smaller.rank(),
            broadcast_dimensions.len()
        );
    }
    let mut dimensions = larger.dimensions().to_vec();
    for (i, (&d, &small)) in broadcast_dimensions.iter().zip(smaller.dimensions()).enumerate() {
        if d < 0 {
            invalid_argument!("Broadcast dimension number ({d}) cannot be negative.");
        }
        if d >= larger.rank() as i64 {
            invalid_argument!(
                "Broadcast dimension number ({d}) too large; higher-rank operand has rank {}.",
                larger.rank()
            );
        }
        let large = larger.dimensions()[d as usize];
        if small != large && small != 1 && large != 1 {
            invalid_argument!(
                "Broadcast dimension {i} mismatch: {small} != {large}; {} and {}.",
                smaller.human_string(),
                larger.human_string()
            );
        }
        if i > 0 && broadcast_dimensions[i - 1] >= d {
            invalid_argument!(
                "Broadcast dimensions order is wrong: {d} comes after {}.",
                broadcast_dimensions[i - 1]
            );
        }
        dimensions[d as usize] = small;
    }
    make_shape(larger.element_type(), &dimensions)
}

/// XLA's `InferDegenerateDimensionBroadcastShape`: equal ranks, each pair of sizes equal or
/// one of them 1; the result (default layout) takes the larger of each pair.
pub(crate) fn degenerate_broadcast_shape(
    lhs: &Shape,
    rhs: &Shape,
    element_type: ElementType,
) -> Result<Shape> {
    let mut dimensions = Vec::with_capacity(lhs.rank());
    for (&l, &r) in lhs.dimensions().iter().zip(rhs.dimensions()) {
        dimensions.push(match (l, r) {
            _ if l == r => l,
            (1, _) => r,
            (_, 1) => l,
            _ => invalid_argument!(
                "Binary op with incompatible shapes: {} and {}.",
                lhs.human_string(),
                rhs.human_string()
            ),
        });
    }
    make_shape(element_type, &dimensions)
}

/// XLA's `InferBroadcastShape` for `Broadcast`: `sizes` become new major dimensions in front
/// of the operand's; the result has the default layout.
pub(crate) fn broadcast_shape(operand: &Shape, sizes: &[i64]) -> Result<Shape> {
    if let Some(&negative) = sizes.iter().find(|&&s| s < 0) {
        invalid_argument!("Broadcast with negative dimension size {negative}.");
    }
    let dimensions: Vec<i64> = sizes.iter().chain(operand.dimensions()).copied().collect();
    make_shape(operand.element_type(), &dimensions)
}

/// XLA's checks of `BroadcastInDim` (builder, then `InferBroadcastShape`): operand dimension
/// `i` goes to output dimension `broadcast_dimensions[i]`, sizes equal or 1, dimensions
/// strictly increasing. The result has the default layout.
pub(crate) fn broadcast_in_dim_shape(
    operand: &Shape,
    sizes: &[i64],
    broadcast_dimensions: &[i64],
) -> Result<Shape> {
    let output = make_shape(operand.element_type(), sizes)?;
    if operand.rank() != broadcast_dimensions.len() {
        invalid_argument!(
            "Size of broadcast_dimensions has to match operand's rank; operand rank: {}, size of \
             broadcast_dimensions {}.",
            operand.rank(),
            broadcast_dimensions.len()
        );
    }
    // The builder's own check lets `d == rank` through to the later per-dimension check.
    if let Some(&d) = broadcast_dimensions.iter().find(|&&d| d < 0 || d > sizes.len() as i64) {
        invalid_argument!("Broadcast dimension {d} is out of bound");
    }
    if operand.rank() > sizes.len() {
        invalid_argument!(
            "InDim style broadcast must be to an equal or higher ranked shape; operand rank: {}; \
             output rank: {}",
            operand.rank(),
            sizes.len()
        );
    }
    for (i, (&d, &size)) in broadcast_dimensions.iter().zip(operand.dimensions()).enumerate() {
        if d >= sizes.len() as i64 {
            invalid_argument!("Broadcast dimension {d} is out of bound");
        }
        let out = sizes[d as usize];
        if size != out && size != 1 {
            invalid_argument!(
                "Input dimension should be either 1 or equal to the output dimension it is \
                 broadcasting into; the {i}th operand dimension is {size}, the {d}th output \
                 dimension is {out}."
            );
        }
        if i > 0 && broadcast_dimensions[i - 1] >= d {
            invalid_argument!(
                "Broadcast dimensions order is wrong: {d} comes after {}.",
                broadcast_dimensions[i - 1]
            );
        }
    }
    Ok(output)
}

/// An HLO `broadcast` instruction (what `broadcast` and `broadcast_in_dim` lower to): operand
/// dimension `i` is output dimension `dimensions[i]`, of exactly the same size, as XLA's
/// verifier requires; the output's type is the operand's. The output shape is the
/// instruction's own (`output`), returned when consistent.
pub(crate) fn hlo_broadcast_shape(operand: &Shape, output: &Shape, dimensions: &[i64]) -> Result<Shape> {
    if operand.element_type() != output.element_type() {
        invalid_argument!(
            "broadcast changes the element type: {} to {}",
            operand.human_string(),
            output.human_string()
        );
    }
    if dimensions.len() != operand.rank() {
        invalid_argument!(
            "broadcast of {} has {} dimensions, one per operand dimension is required",
            operand.human_string(),
            dimensions.len()
        );
    }
    for (i, (&d, &size)) in dimensions.iter().zip(operand.dimensions()).enumerate() {
        if d < 0 || d >= output.rank() as i64 || output.dimensions()[d as usize] != size {
            invalid_argument!(
                "broadcast operand dimension {i} (size {size}) cannot be output dimension {d} of {}",
                output.human_string()
            );
        }
        if dimensions[..i].contains(&d) {
            invalid_argument!("broadcast maps two operand dimensions to output dimension {d}");
        }
    }
    Ok(output.clone())
}
