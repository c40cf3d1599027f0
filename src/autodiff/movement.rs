//! Movement ops (broadcast, reshape, transpose, slice, pad, concatenate, reverse, dynamic slice
//! and update): linear in their array operands, so the tangent is the op itself applied to the
//! tangents (indices, which are integers, stay primal), and the transpose moves the cotangent
//! back (jax's `lax.py` and `slicing.py` transpose rules).

use crate::attributes::{PaddingConfig, PaddingConfigDimension};
use crate::autodiff::tape::{sum_over, zeros, Linear, Tan, Tape};
use crate::builder::{dynamic_slice, dynamic_update_slice, pad, reshape, rev, slice, transpose, XlaOp};
use crate::error::Result;
use crate::hlo::ir::Opcode;
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
            _ => vec![None; self.operands.len()],
        }
    }
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
    )
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
