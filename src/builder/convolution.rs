//! Convolution: `conv_general_dilated` (XLA's `ConvGeneralDilated`) and `conv` (XLA's `Conv`:
//! default dimension numbers and a `Padding` enum).

use crate::attributes::{ConvolutionDimensionNumbers, Padding, PrecisionConfig};
use crate::builder::builder::XlaOp;
use crate::element_type::ElementType;
use crate::hlo::ir::Opcode;
use crate::shape_inference::convolution::{convolve_shape, kernel_window_sizes, verify_convolution};
use crate::shape_inference::window::{padding_for, window_from_dimensions};

/// XLA's `ConvGeneralDilated`: `lhs` (the input) convolved with `rhs` (the kernel) — for each
/// output position, the sum over the window and the input features of input × kernel — with
/// `window_strides`, `(low, high)` `padding` per spatial dimension (negative crops), the input
/// dilated by `lhs_dilation` (a transposed convolution) and the kernel by `rhs_dilation`;
/// `feature_group_count` splits the features into groups (depthwise at one feature per group),
/// `batch_group_count` splits the batch. Empty lists mean strides and dilations of 1 and no
/// padding. The result has the higher-precision type of the two and the default layout.
///
/// ```
/// use lazy_xla::*;
/// let nwc = ConvolutionDimensionNumbers {
///     input_batch_dimension: 0, input_feature_dimension: 2, input_spatial_dimensions: vec![1],
///     kernel_input_feature_dimension: 1, kernel_output_feature_dimension: 2, kernel_spatial_dimensions: vec![0],
///     output_batch_dimension: 0, output_feature_dimension: 2, output_spatial_dimensions: vec![1],
/// };
/// let b = XlaBuilder::new("moving_sum");
/// let x = b.constant_literal(&Literal::from_vec(&shape!(f32[1, 4, 1]), vec![1.0f32, 2.0, 3.0, 4.0])?);
/// let k = b.constant_literal(&Literal::from_vec(&shape!(f32[2, 1, 1]), vec![1.0f32, 10.0])?);
/// let y = conv_general_dilated(x, k, &[1], &[(0, 0)], &[], &[], &nwc, 1, 1);
/// let exe = b.build(y)?.compile(&CompileOptions::default())?;
/// assert_eq!(exe.execute(&[])?.to_vec::<f32>()?, vec![21.0, 32.0, 43.0]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
#[allow(clippy::too_many_arguments)] // XLA's signature
pub fn conv_general_dilated<'b>(
    lhs: XlaOp<'b>,
    rhs: XlaOp<'b>,
    window_strides: &[i64],
    padding: &[(i64, i64)],
    lhs_dilation: &[i64],
    rhs_dilation: &[i64],
    dimension_numbers: &ConvolutionDimensionNumbers,
    feature_group_count: i64,
    batch_group_count: i64,
) -> XlaOp<'b> {
    conv_general_dilated_with(
        lhs,
        rhs,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        dimension_numbers,
        feature_group_count,
        batch_group_count,
        None,
        None,
    )
}

/// [`conv_general_dilated`] with XLA's two optional arguments, as [`crate::dot_with`] has
/// them: a precision per operand and the preferred element type (the accumulator and the
/// result's type, `bf16 · bf16 → f32`, `s8 · s8 → s32`); with one, the convolution keeps its
/// operands' types, as XLA's does.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("int8_conv");
/// let image = b.parameter(0, &shape!(s8[1, 1, 4, 4]), "image");
/// let kernel = b.parameter(1, &shape!(s8[1, 1, 3, 3]), "kernel");
/// let numbers = ConvolutionDimensionNumbers {
///     input_batch_dimension: 0, input_feature_dimension: 1, input_spatial_dimensions: vec![2, 3],
///     kernel_input_feature_dimension: 1, kernel_output_feature_dimension: 0, kernel_spatial_dimensions: vec![2, 3],
///     output_batch_dimension: 0, output_feature_dimension: 1, output_spatial_dimensions: vec![2, 3],
/// };
/// let y = conv_general_dilated_with(image, kernel, &[1, 1], &[(0, 0), (0, 0)], &[], &[], &numbers, 1, 1,
///     None, Some(ElementType::S32));
/// assert_eq!(b.get_shape(y)?, shape!(s32[1, 1, 2, 2]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
#[allow(clippy::too_many_arguments)] // XLA's signature
pub fn conv_general_dilated_with<'b>(
    lhs: XlaOp<'b>,
    rhs: XlaOp<'b>,
    window_strides: &[i64],
    padding: &[(i64, i64)],
    lhs_dilation: &[i64],
    rhs_dilation: &[i64],
    dimension_numbers: &ConvolutionDimensionNumbers,
    feature_group_count: i64,
    batch_group_count: i64,
    precision_config: Option<&PrecisionConfig>,
    preferred_element_type: Option<ElementType>,
) -> XlaOp<'b> {
    lhs.builder().record("convolution", &[lhs, rhs], |emit, operands| {
        let (lhs_shape, rhs_shape) = (&operands[0].shape, &operands[1].shape);
        verify_convolution(lhs_shape, rhs_shape, dimension_numbers)?;
        let sizes = kernel_window_sizes(rhs_shape, dimension_numbers);
        let window = window_from_dimensions(&sizes, window_strides, padding, lhs_dilation, rhs_dilation)?;
        let result = convolve_shape(
            lhs_shape,
            rhs_shape,
            feature_group_count,
            batch_group_count,
            &window,
            dimension_numbers,
        )?;
        let result = match preferred_element_type {
            Some(preferred) => result.with_element_type(preferred),
            None => result,
        };
        let ids: Vec<_> = match preferred_element_type {
            Some(_) => operands.iter().map(|o| o.id).collect(),
            None => operands.iter().map(|o| emit.convert_if_needed(o.id, result.element_type())).collect(),
        };
        let opcode = Opcode::Convolution {
            window,
            numbers: dimension_numbers.clone(),
            feature_group_count,
            batch_group_count,
            precision: precision_config.cloned().unwrap_or_default(),
        };
        Ok(emit.emit(opcode, &ids, result))
    })
}

/// XLA's `Conv`: [`conv_general_dilated`] with the default dimension numbers (input and output
/// `[batch, feature, spatial…]`, kernel `[output feature, input feature, spatial…]`), padding
/// from the `Padding` enum, no dilation and no groups.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("blur");
/// let image = b.parameter(0, &shape!(f32[1, 1, 5, 5]), "image");
/// let kernel = broadcast(b.constant_r0(1.0f32 / 9.0), &[1, 1, 3, 3]);
/// assert_eq!(b.get_shape(conv(image, kernel, &[1, 1], Padding::Same))?, shape!(f32[1, 1, 5, 5]));
/// assert_eq!(b.get_shape(conv(image, kernel, &[2, 2], Padding::Valid))?, shape!(f32[1, 1, 2, 2]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn conv<'b>(lhs: XlaOp<'b>, rhs: XlaOp<'b>, window_strides: &[i64], padding: Padding) -> XlaOp<'b> {
    let numbers = ConvolutionDimensionNumbers::default_for(window_strides.len());
    let builder = lhs.builder();
    let (lhs_shape, rhs_shape) = (builder.get_shape(lhs), builder.get_shape(rhs));
    let pads = match (lhs_shape, rhs_shape) {
        (Ok(lhs_shape), Ok(rhs_shape)) if verify_convolution(&lhs_shape, &rhs_shape, &numbers).is_ok() => {
            let base: Vec<i64> = numbers
                .input_spatial_dimensions
                .iter()
                .map(|&d| lhs_shape.dimensions()[d as usize])
                .collect();
            let window = kernel_window_sizes(&rhs_shape, &numbers);
            padding_for(&base, &window, window_strides, padding).unwrap_or_default()
        }
        // conv_general_dilated reports what is wrong.
        _ => Vec::new(),
    };
    conv_general_dilated(lhs, rhs, window_strides, &pads, &[], &[], &numbers, 1, 1)
}
