//! `convolution`, linear in each operand: the transposes are convolutions again (jax's
//! `_conv_general_dilated_transpose_lhs` and `_rhs`): the input's cotangent convolves the
//! result's with the kernel reversed in space (strides become input dilations), the kernel's
//! convolves the input with the result's cotangent (features and batch exchanged). Feature
//! groups are carried; batch groups are refused.

use crate::attributes::{ConvolutionDimensionNumbers, PrecisionConfig, Window};
use crate::autodiff::elementwise::sum;
use crate::autodiff::tape::{Linear, Tan, Tape};
use crate::builder::{conv_general_dilated_with, convert_element_type, reshape, rev, transpose, XlaOp};
use crate::error::Result;
use crate::hlo::ir::Opcode;
use crate::shape::Shape;

/// A convolution of the tangent (on the lhs or on the rhs) with the other operand.
struct Convolved<'b> {
    opcode: Opcode,
    window: Window,
    numbers: ConvolutionDimensionNumbers,
    feature_group_count: i64,
    precision: PrecisionConfig,
    other: XlaOp<'b>,
    other_shape: Shape,
    tangent_is_lhs: bool,
    shape: Shape,
}

/// jax's `_dilate_shape` of one size.
fn dilated(size: i64, dilation: i64) -> i64 {
    if size == 0 {
        0
    } else {
        1 + dilation * (size - 1)
    }
}

impl<'b> Linear<'b> for Convolved<'b> {
    fn apply(&self, inputs: &[XlaOp<'b>]) -> XlaOp<'b> {
        let operands = if self.tangent_is_lhs { [inputs[0], self.other] } else { [self.other, inputs[0]] };
        inputs[0].builder().record_opcode(&self.opcode, &operands, &self.shape)
    }

    fn transpose(&self, cotangent: XlaOp<'b>, inputs: &[Shape]) -> Vec<Option<XlaOp<'b>>> {
        let n = &self.numbers;
        let w = &self.window.dimensions;
        let (lhs_shape, rhs_shape) = if self.tangent_is_lhs {
            (&inputs[0], &self.other_shape)
        } else {
            (&self.other_shape, &inputs[0])
        };
        let at = |shape: &Shape, dims: &[i64]| -> Vec<i64> {
            dims.iter().map(|&d| shape.dimensions()[d as usize]).collect()
        };
        let (in_sizes, kernel_sizes, out_sizes) = (
            at(lhs_shape, &n.input_spatial_dimensions),
            at(rhs_shape, &n.kernel_spatial_dimensions),
            at(&self.shape, &n.output_spatial_dimensions),
        );
        let strides: Vec<i64> = w.iter().map(|d| d.stride).collect();
        let base: Vec<i64> = w.iter().map(|d| d.base_dilation).collect();
        let window_dilation: Vec<i64> = w.iter().map(|d| d.window_dilation).collect();
        let other_type = self.other_shape.element_type();
        let cotangent = if self.shape.element_type() == other_type {
            cotangent
        } else {
            convert_element_type(cotangent, other_type)
        };
        let mine = inputs[0].element_type();
        let product = if self.tangent_is_lhs {
            let pads: Vec<(i64, i64)> = (0..w.len())
                .map(|i| {
                    let before = dilated(kernel_sizes[i], window_dilation[i]) - w[i].padding_low - 1;
                    let after = dilated(in_sizes[i], base[i]) + dilated(kernel_sizes[i], window_dilation[i])
                        - 1
                        - dilated(out_sizes[i], strides[i])
                        - before;
                    (before, after)
                })
                .collect();
            let mut kernel = self.other;
            if self.feature_group_count > 1 {
                kernel = groups_into_input_features(kernel, rhs_shape, n, self.feature_group_count);
            }
            let reversed = rev(kernel, &n.kernel_spatial_dimensions);
            let numbers = ConvolutionDimensionNumbers {
                input_batch_dimension: n.output_batch_dimension,
                input_feature_dimension: n.output_feature_dimension,
                input_spatial_dimensions: n.output_spatial_dimensions.clone(),
                kernel_input_feature_dimension: n.kernel_output_feature_dimension,
                kernel_output_feature_dimension: n.kernel_input_feature_dimension,
                kernel_spatial_dimensions: n.kernel_spatial_dimensions.clone(),
                output_batch_dimension: n.input_batch_dimension,
                output_feature_dimension: n.input_feature_dimension,
                output_spatial_dimensions: n.input_spatial_dimensions.clone(),
            };
            conv_general_dilated_with(
                cotangent,
                reversed,
                &base,
                &pads,
                &strides,
                &window_dilation,
                &numbers,
                self.feature_group_count,
                1,
                Some(&self.precision),
                None,
            )
        } else {
            let pads: Vec<(i64, i64)> = (0..w.len())
                .map(|i| {
                    let low = w[i].padding_low;
                    let from_lhs = dilated(out_sizes[i], strides[i]) - dilated(in_sizes[i], base[i]);
                    let from_rhs = dilated(kernel_sizes[i], window_dilation[i]) - low - 1;
                    (low, from_lhs + from_rhs)
                })
                .collect();
            let numbers = ConvolutionDimensionNumbers {
                input_batch_dimension: n.input_feature_dimension,
                input_feature_dimension: n.input_batch_dimension,
                input_spatial_dimensions: n.input_spatial_dimensions.clone(),
                kernel_input_feature_dimension: n.output_batch_dimension,
                kernel_output_feature_dimension: n.output_feature_dimension,
                kernel_spatial_dimensions: n.output_spatial_dimensions.clone(),
                output_batch_dimension: n.kernel_input_feature_dimension,
                output_feature_dimension: n.kernel_output_feature_dimension,
                output_spatial_dimensions: n.kernel_spatial_dimensions.clone(),
            };
            conv_general_dilated_with(
                self.other,
                cotangent,
                &window_dilation,
                &pads,
                &base,
                &strides,
                &numbers,
                1,
                self.feature_group_count,
                Some(&self.precision),
                None,
            )
        };
        vec![Some(if other_type == mine { product } else { convert_element_type(product, mine) })]
    }
}

/// jax's `_reshape_axis_out_of(O, groups)` then `_reshape_axis_into(O, I)` on a kernel: its
/// output features split into (groups, rest), the groups moved into the input features, major.
fn groups_into_input_features<'b>(
    kernel: XlaOp<'b>,
    shape: &Shape,
    n: &ConvolutionDimensionNumbers,
    groups: i64,
) -> XlaOp<'b> {
    let (o, i) = (n.kernel_output_feature_dimension as usize, n.kernel_input_feature_dimension as usize);
    let dims = shape.dimensions();
    // Split O into (groups, O / groups) at O.
    let mut split: Vec<i64> = dims.to_vec();
    split[o] = dims[o] / groups;
    split.insert(o, groups);
    let kernel = reshape(kernel, &split);
    // Move the groups axis (at o) right before I (I's position once the axis is removed).
    let rest: Vec<i64> = (0..split.len() as i64).filter(|&d| d != o as i64).collect();
    let mut permutation = rest.clone();
    permutation.insert(i, o as i64);
    let moved = transpose(kernel, &permutation);
    let mut merged: Vec<i64> = rest.iter().map(|&d| split[d as usize]).collect();
    merged[i] *= groups;
    reshape(moved, &merged)
}

/// The tangent of a convolution: `conv(t_lhs, rhs) + conv(lhs, t_rhs)`.
#[allow(clippy::too_many_arguments)]
pub(super) fn convolution<'b>(
    tape: &mut Tape<'b>,
    opcode: &Opcode,
    x: [XlaOp<'b>; 2],
    shapes: [&Shape; 2],
    t: [&Tan; 2],
    shape: &Shape,
) -> Result<Tan> {
    let Opcode::Convolution { window, numbers, feature_group_count, batch_group_count, precision } = opcode
    else {
        return Err(tape.not_implemented(opcode.name(), ""));
    };
    if *batch_group_count != 1 {
        return Err(tape.not_implemented("convolution", " for a batch_group_count above 1"));
    }
    let mut parts = [Tan::Zero, Tan::Zero];
    for side in 0..2 {
        if let Some(tangent) = t[side].array() {
            let convolved = Convolved {
                opcode: opcode.clone(),
                window: window.clone(),
                numbers: numbers.clone(),
                feature_group_count: *feature_group_count,
                precision: precision.clone(),
                other: x[1 - side],
                other_shape: shapes[1 - side].clone(),
                tangent_is_lhs: side == 0,
                shape: shape.clone(),
            };
            parts[side] = tape.push(convolved, &[tangent], shape);
        }
    }
    Ok(sum(tape, &parts[0], &parts[1], false, shape))
}
