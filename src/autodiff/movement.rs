//! Movement ops (broadcast, reshape, transpose, slice, pad, concatenate, reverse, dynamic slice
//! and update, gather, scatter with an add or, of unique indices, an overwrite): linear in their array operands, so the tangent is the op itself applied to the
//! tangents (indices, which are integers, stay primal), and the transpose moves the cotangent
//! back (jax's `lax.py` and `slicing.py` transpose rules).

use crate::attributes::{
    BinaryOp, GatherDimensionNumbers, PaddingConfig, PaddingConfigDimension, ScatterDimensionNumbers,
};
use crate::autodiff::tape::{adder, sum_over, zeros, Linear, Tan, Tape};
use crate::builder::{
    broadcast, broadcast_in_dim, clamp, convert_element_type, dynamic_slice, dynamic_update_slice, eq,
    gather, gt, lt, or, pad, reshape, rev, scatter, select, slice, transpose, XlaBuilder, XlaOp,
};
use crate::error::Result;
use crate::hlo::ir::{HloComputation, Opcode};
use crate::shape::Shape;

/// An operand of a moved tangent.
#[derive(Clone, Copy)]
enum Operand<'b> {
    /// The next tangent input.
    Tangent,
    /// A float operand whose tangent is zero.
    Zero,
    /// An operand that is no tangent (an index).
    Primal(XlaOp<'b>),
}

/// The movement op `opcode` on tangents: its operands' kinds and shapes, its result's shape.
struct Moved<'b> {
    opcode: Opcode,
    operands: Vec<Operand<'b>>,
    shapes: Vec<Shape>,
    shape: Shape,
}

impl<'b> Linear<'b> for Moved<'b> {
    fn apply(&self, inputs: &[XlaOp<'b>]) -> XlaOp<'b> {
        let builder = inputs[0].builder();
        let mut given = inputs.iter();
        let operands: Vec<XlaOp<'b>> = self
            .operands
            .iter()
            .zip(&self.shapes)
            .map(|(operand, shape)| match operand {
                Operand::Tangent => *given.next().expect("an input"),
                Operand::Zero => zeros(builder, shape),
                Operand::Primal(x) => *x,
            })
            .collect();
        builder.record_opcode(&self.opcode, &operands, &self.shape)
    }

    fn transpose(&self, cotangent: XlaOp<'b>, _: &[Shape]) -> Vec<Option<XlaOp<'b>>> {
        let all = self.transpose_all(cotangent);
        self.operands.iter().zip(all).filter(|(o, _)| matches!(o, Operand::Tangent)).map(|(_, c)| c).collect()
    }
}

impl<'b> Moved<'b> {
    /// The cotangent of every operand position (`None` for indices).
    fn transpose_all(&self, ct: XlaOp<'b>) -> Vec<Option<XlaOp<'b>>> {
        let operand = &self.shapes[0];
        let indices = || -> Vec<XlaOp<'b>> {
            self.operands
                .iter()
                .filter_map(|o| match o {
                    Operand::Primal(x) => Some(*x),
                    _ => None,
                })
                .collect()
        };
        match &self.opcode {
            Opcode::Broadcast { dimensions } => {
                let summed: Vec<i64> =
                    (0..self.shape.rank() as i64).filter(|d| !dimensions.contains(d)).collect();
                let mut reduced = sum_over(ct, operand.element_type(), &summed);
                let mut sorted = dimensions.clone();
                sorted.sort_unstable();
                if sorted != *dimensions {
                    let order: Vec<i64> = dimensions
                        .iter()
                        .map(|d| sorted.iter().position(|s| s == d).unwrap_or(0) as i64)
                        .collect();
                    reduced = transpose(reduced, &order);
                }
                vec![Some(reduced)]
            }
            Opcode::Reshape => vec![Some(reshape(ct, operand.dimensions()))],
            Opcode::Transpose { permutation } => {
                let mut inverse = vec![0i64; permutation.len()];
                for (i, &p) in permutation.iter().enumerate() {
                    inverse[p as usize] = i as i64;
                }
                vec![Some(transpose(ct, &inverse))]
            }
            Opcode::Reverse { dimensions } => vec![Some(rev(ct, dimensions))],
            Opcode::Slice { starts, limits: _, strides } => {
                let dimensions = (0..operand.rank())
                    .map(|d| {
                        let (start, stride, size) = (starts[d], strides[d], self.shape.dimensions()[d]);
                        let covered = if size == 0 { 0 } else { (size - 1) * stride + 1 };
                        PaddingConfigDimension {
                            edge_padding_low: start,
                            edge_padding_high: operand.dimensions()[d] - start - covered,
                            interior_padding: stride - 1,
                        }
                    })
                    .collect();
                let zero = zeros(ct.builder(), &Shape::scalar(operand.element_type()));
                vec![Some(pad(ct, zero, &PaddingConfig { dimensions }))]
            }
            Opcode::Pad(config) => {
                // Removed edges (negative padding) come back as zeros, then the operand's
                // elements are every (interior + 1)-th from the low edge.
                let zero = zeros(ct.builder(), &Shape::scalar(operand.element_type()));
                let restore = config
                    .dimensions
                    .iter()
                    .map(|d| PaddingConfigDimension {
                        edge_padding_low: (-d.edge_padding_low).max(0),
                        edge_padding_high: (-d.edge_padding_high).max(0),
                        interior_padding: 0,
                    })
                    .collect();
                let full = pad(ct, zero, &PaddingConfig { dimensions: restore });
                let (mut starts, mut limits, mut strides) = (Vec::new(), Vec::new(), Vec::new());
                for (d, &size) in config.dimensions.iter().zip(operand.dimensions()) {
                    let start = d.edge_padding_low.max(0);
                    let stride = d.interior_padding + 1;
                    starts.push(start);
                    limits.push(if size == 0 { start } else { start + (size - 1) * stride + 1 });
                    strides.push(stride);
                }
                let of_operand = slice(full, &starts, &limits, &strides);
                let all: Vec<i64> = (0..self.shape.rank() as i64).collect();
                let element_type = operand.element_type();
                let of_value = sum_over(ct, element_type, &all) - sum_over(of_operand, element_type, &all);
                vec![Some(of_operand), Some(of_value)]
            }
            Opcode::Concatenate { dimension } => {
                let mut start = 0;
                self.shapes
                    .iter()
                    .map(|shape| {
                        let size = shape.dimensions()[*dimension as usize];
                        let mut starts = vec![0; shape.rank()];
                        starts[*dimension as usize] = start;
                        let mut limits = self.shape.dimensions().to_vec();
                        limits[*dimension as usize] = start + size;
                        start += size;
                        Some(slice(ct, &starts, &limits, &vec![1; shape.rank()]))
                    })
                    .collect()
            }
            Opcode::DynamicSlice { .. } => {
                let spread = dynamic_update_slice(zeros(ct.builder(), operand), ct, &indices());
                let mut parts = vec![Some(spread)];
                parts.resize(self.operands.len(), None);
                parts
            }
            Opcode::DynamicUpdateSlice => {
                let update = &self.shapes[1];
                let of_operand = dynamic_update_slice(ct, zeros(ct.builder(), update), &indices());
                let of_update = dynamic_slice(ct, &indices(), update.dimensions());
                let mut parts = vec![Some(of_operand), Some(of_update)];
                parts.resize(self.operands.len(), None);
                parts
            }
            Opcode::Gather { numbers, slice_sizes, indices_are_sorted } => {
                let n = numbers;
                let scatter_numbers = ScatterDimensionNumbers {
                    update_window_dims: n.offset_dims.clone(),
                    inserted_window_dims: n.collapsed_slice_dims.clone(),
                    scatter_dims_to_operand_dims: n.start_index_map.clone(),
                    index_vector_dim: n.index_vector_dim,
                    input_batching_dims: n.operand_batching_dims.clone(),
                    scatter_indices_batching_dims: n.start_indices_batching_dims.clone(),
                };
                // Gather clamps its windows into the operand; scatter would drop those, so the
                // indices are clamped first.
                let bounds: Vec<i64> = n
                    .start_index_map
                    .iter()
                    .map(|&d| operand.dimensions()[d as usize] - slice_sizes[d as usize])
                    .collect();
                let indices = clamped(indices()[0], &self.shapes[1], n.index_vector_dim, &bounds);
                let adder = adder(operand.element_type());
                let spread = scatter(
                    zeros(ct.builder(), operand),
                    indices,
                    ct,
                    &adder,
                    &scatter_numbers,
                    *indices_are_sorted,
                    false,
                );
                vec![Some(spread), None]
            }
            Opcode::Scatter { numbers, indices_are_sorted, update, .. } => {
                let n = numbers;
                let updates = &self.shapes[2];
                let gather_numbers = GatherDimensionNumbers {
                    offset_dims: n.update_window_dims.clone(),
                    collapsed_slice_dims: n.inserted_window_dims.clone(),
                    start_index_map: n.scatter_dims_to_operand_dims.clone(),
                    index_vector_dim: n.index_vector_dim,
                    operand_batching_dims: n.input_batching_dims.clone(),
                    start_indices_batching_dims: n.scatter_indices_batching_dims.clone(),
                };
                let mut window = n.update_window_dims.iter();
                let slice_sizes: Vec<i64> = (0..operand.rank() as i64)
                    .map(|d| {
                        if n.inserted_window_dims.contains(&d) || n.input_batching_dims.contains(&d) {
                            1
                        } else {
                            window.next().map_or(1, |&w| updates.dimensions()[w as usize])
                        }
                    })
                    .collect();
                let indices = indices()[0];
                let gathered = gather(ct, indices, &gather_numbers, &slice_sizes, *indices_are_sorted);
                // Scatter drops a window that does not fit in the operand, which gather would
                // clamp: those updates get nothing (jax's gather in FILL_OR_DROP mode).
                let bounds: Vec<i64> = n
                    .scatter_dims_to_operand_dims
                    .iter()
                    .map(|&d| operand.dimensions()[d as usize] - slice_sizes[d as usize])
                    .collect();
                let inside = fitting(indices, &self.shapes[1], n.index_vector_dim, &bounds, operand);
                let scatter_dims: Vec<i64> =
                    (0..updates.rank() as i64).filter(|d| !n.update_window_dims.contains(d)).collect();
                let kept = broadcast_in_dim(inside, updates.dimensions(), &scatter_dims);
                let of_updates = select(kept, gathered, zeros(ct.builder(), updates));
                let of_operand = if update.simple_reducer() == Some(BinaryOp::Add) {
                    ct
                } else {
                    // Overwritten elements get nothing (unique indices: each is written once).
                    let cleared = zeros(ct.builder(), updates);
                    ct.builder().record_opcode(&self.opcode, &[ct, indices, cleared], &self.shape)
                };
                vec![Some(of_operand), None, Some(of_updates)]
            }
            _ => vec![None; self.operands.len()],
        }
    }
}

/// `bounds[c]` at each component `c` of an array of index vectors (of `shape`, along
/// `vector_dimension`).
fn index_bounds<'b>(
    builder: &'b XlaBuilder,
    shape: &Shape,
    vector_dimension: i64,
    bounds: &[i64],
) -> XlaOp<'b> {
    let element_type = shape.element_type();
    if vector_dimension as usize == shape.rank() {
        let bound =
            convert_element_type(builder.constant_r0(bounds.first().copied().unwrap_or(0)), element_type);
        broadcast(bound, shape.dimensions())
    } else {
        let vector = convert_element_type(builder.constant_r1(bounds), element_type);
        broadcast_in_dim(vector, shape.dimensions(), &[vector_dimension])
    }
}

/// `indices` (of `shape`, its index vectors along `vector_dimension`) clamped to `[0, bounds]`,
/// component by component.
fn clamped<'b>(indices: XlaOp<'b>, shape: &Shape, vector_dimension: i64, bounds: &[i64]) -> XlaOp<'b> {
    let builder = indices.builder();
    let bounds: Vec<i64> = bounds.iter().map(|&b| b.max(0)).collect();
    clamp(zeros(builder, shape), indices, index_bounds(builder, shape, vector_dimension, &bounds))
}

/// Whether each index vector of `indices` (of `shape`, along `vector_dimension`) lies in
/// `[0, bounds]`: a `pred` array of the other dimensions (counted in `operand`'s float type).
fn fitting<'b>(
    indices: XlaOp<'b>,
    shape: &Shape,
    vector_dimension: i64,
    bounds: &[i64],
    operand: &Shape,
) -> XlaOp<'b> {
    let builder = indices.builder();
    let limits = index_bounds(builder, shape, vector_dimension, bounds);
    let outside = or(lt(indices, zeros(builder, shape), &[]), gt(indices, limits, &[]), &[]);
    if vector_dimension as usize == shape.rank() {
        return eq(outside, builder.constant_r0(false), &[]);
    }
    let element_type = operand.element_type();
    let count = sum_over(convert_element_type(outside, element_type), element_type, &[vector_dimension]);
    eq(count, zeros(builder, &Shape::scalar(element_type)), &[])
}

/// Whether a scatter's update computation is one this file differentiates: an add, or an
/// overwrite with unique indices.
fn differentiable_scatter(update: &HloComputation, unique_indices: bool) -> bool {
    let overwrite = matches!(update.instructions[update.root].opcode, Opcode::Parameter { number: 1 });
    update.simple_reducer() == Some(BinaryOp::Add) || (overwrite && unique_indices)
}

/// Whether `opcode` is a movement op this file differentiates.
pub(super) fn is_movement(opcode: &Opcode) -> bool {
    matches!(
        opcode,
        Opcode::Broadcast { .. }
            | Opcode::Reshape
            | Opcode::Transpose { .. }
            | Opcode::Reverse { .. }
            | Opcode::Slice { .. }
            | Opcode::Pad(_)
            | Opcode::Concatenate { .. }
            | Opcode::DynamicSlice { .. }
            | Opcode::DynamicUpdateSlice
            | Opcode::Gather { .. }
    ) || matches!(opcode, Opcode::Scatter { update, unique_indices, .. } if differentiable_scatter(update, *unique_indices))
}

/// The tangent of a movement op: the op on its operands' tangents.
pub(super) fn moved<'b>(
    tape: &mut Tape<'b>,
    opcode: &Opcode,
    x: &[XlaOp<'b>],
    shapes: &[Shape],
    t: &[Tan],
    shape: &Shape,
) -> Result<Tan> {
    let mut inputs = Vec::new();
    let operands = x
        .iter()
        .zip(shapes)
        .zip(t)
        .map(|((&x, s), t)| match t.array() {
            Some(id) => {
                inputs.push(id);
                Operand::Tangent
            }
            None if s.element_type().is_float() => Operand::Zero,
            None => Operand::Primal(x),
        })
        .collect();
    if inputs.is_empty() {
        return Ok(Tan::Zero);
    }
    let moved = Moved { opcode: opcode.clone(), operands, shapes: shapes.to_vec(), shape: shape.clone() };
    Ok(tape.push(moved, &inputs, shape))
}
