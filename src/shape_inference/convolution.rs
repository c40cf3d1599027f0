//! Convolution: the builder's `VerifyConvolution` and XLA's `InferConvolveShape`.

use crate::attributes::{ConvolutionDimensionNumbers, Window};
use crate::error::{invalid_argument, Result};
use crate::shape::Shape;
use crate::shape_inference::window::window_output_shape;
use crate::shape_inference::{higher_precision, make_shape};

/// XlaBuilder's `VerifyConvolution`: operands of one rank (at least 2, XLA's sentence says 3),
/// and one in-range spatial dimension number per spatial dimension in each list.
pub(crate) fn verify_convolution(
    lhs: &Shape,
    rhs: &Shape,
    numbers: &ConvolutionDimensionNumbers,
) -> Result<()> {
    if lhs.rank() != rhs.rank() {
        invalid_argument!(
            "Convolution arguments must have same number of dimensions. Got: {} and {}",
            lhs.human_string(),
            rhs.human_string()
        );
    }
    let rank = lhs.rank() as i64;
    if rank < 2 {
        invalid_argument!(
            "Convolution expects argument arrays with >= 3 dimensions. Got: {} and {}",
            lhs.human_string(),
            rhs.human_string()
        );
    }
    let spatial = rank - 2;
    for (name, numbers) in [
        ("input_spatial_dimensions", &numbers.input_spatial_dimensions),
        ("kernel_spatial_dimensions", &numbers.kernel_spatial_dimensions),
        ("output_spatial_dimensions", &numbers.output_spatial_dimensions),
    ] {
        if numbers.len() as i64 != spatial {
            invalid_argument!("Expected {spatial} elements for {name}, but got {}.", numbers.len());
        }
        if let Some((i, d)) = numbers.iter().enumerate().find(|(_, &d)| d < 0 || d >= rank) {
            invalid_argument!("Convolution {name}[{i}] is out of bounds: {d}");
        }
    }
    Ok(())
}

/// The kernel's spatial sizes: the window's dimensions (after [`verify_convolution`]).
pub(crate) fn kernel_window_sizes(rhs: &Shape, numbers: &ConvolutionDimensionNumbers) -> Vec<i64> {
    numbers.kernel_spatial_dimensions.iter().map(|&d| rhs.dimensions()[d as usize]).collect()
}

/// XLA's `InferConvolveShape`: the output's batch (input batch / batch groups), feature
/// (kernel output features) and spatial (window positions) dimensions where the numbers put
/// them, in the higher-precision element type of the two, default layout.
pub(crate) fn convolve_shape(
    lhs: &Shape,
    rhs: &Shape,
    feature_group_count: i64,
    batch_group_count: i64,
    window: &Window,
    numbers: &ConvolutionDimensionNumbers,
) -> Result<Shape> {
    if feature_group_count <= 0 {
        invalid_argument!("feature_group_count must be a positive number, got {feature_group_count}");
    }
    if batch_group_count <= 0 {
        invalid_argument!("batch_group_count must be a positive number, got {batch_group_count}");
    }
    if batch_group_count > 1 && feature_group_count > 1 {
        invalid_argument!(
            "both batch_group_count {batch_group_count} and feature_group_count {feature_group_count} cannot be \
             greater than 1"
        );
    }
    let text = numbers.debug_string();
    if numbers.input_spatial_dimensions.len() != numbers.kernel_spatial_dimensions.len() {
        invalid_argument!(
            "Both arguments to convolution must have same number of dimensions.\nNumbers: {text}"
        );
    }
    if numbers.input_spatial_dimensions.len() != numbers.output_spatial_dimensions.len() {
        invalid_argument!(
            "Both input and output of convolution must have same number of dimensions.\nNumbers: {text}"
        );
    }
    let spatial = numbers.input_spatial_dimensions.len();
    if window.dimensions.len() != spatial {
        invalid_argument!(
            "Window must have same number of dimensions as dimension numbers.\nWindow: {}\nDimension numbers: {text}.",
            window.debug_string()
        );
    }
    let rank = spatial + 2;
    if lhs.rank() != rank {
        invalid_argument!(
            "The LHS argument to a convolution should have rank {rank}; lhs: {}.",
            lhs.human_string()
        );
    }
    if rhs.rank() != rank {
        invalid_argument!(
            "The RHS argument to a convolution should have rank {rank}; rhs: {}.",
            rhs.human_string()
        );
    }
    let sorted = |first: i64, second: i64, rest: &[i64]| {
        let mut all = vec![first, second];
        all.extend_from_slice(rest);
        all.sort_unstable();
        all
    };
    let input = sorted(
        numbers.input_batch_dimension,
        numbers.input_feature_dimension,
        &numbers.input_spatial_dimensions,
    );
    let kernel = sorted(
        numbers.kernel_input_feature_dimension,
        numbers.kernel_output_feature_dimension,
        &numbers.kernel_spatial_dimensions,
    );
    let output = sorted(
        numbers.output_batch_dimension,
        numbers.output_feature_dimension,
        &numbers.output_spatial_dimensions,
    );
    let in_range = |list: &[i64]| list.iter().all(|&d| (0..rank as i64).contains(&d));
    if !in_range(&input) || !in_range(&kernel) || !in_range(&output) {
        invalid_argument!("A dimension number is out of range in convolution: {text}.");
    }
    let expected: Vec<i64> = (0..rank as i64).collect();
    for (list, name) in [(&input, "Input"), (&kernel, "Window"), (&output, "Output")] {
        if *list != expected {
            invalid_argument!(
                "{name} dimensions of convolution must contain each dimension exactly once: {text}."
            );
        }
    }
    let lhs_dim = |d: i64| lhs.dimensions()[d as usize];
    let rhs_dim = |d: i64| rhs.dimensions()[d as usize];
    let input_features = lhs_dim(numbers.input_feature_dimension);
    let input_batch = lhs_dim(numbers.input_batch_dimension);
    let kernel_input_features = rhs_dim(numbers.kernel_input_feature_dimension);
    let kernel_output_features = rhs_dim(numbers.kernel_output_feature_dimension);
    let operands =
        format!("<conv>({}, {})\nDimension numbers: {{{text}}}.", lhs.human_string(), rhs.human_string());
    if kernel_output_features % batch_group_count != 0 {
        invalid_argument!(
            "Expected output feature dimension size (value {kernel_output_features}) to be a multiple of batch group \
             count {batch_group_count}; got {operands}"
        );
    }
    if input_features % feature_group_count != 0
        || input_features / feature_group_count != kernel_input_features
    {
        invalid_argument!(
            "Expected LHS feature dimension (value {input_features}) to be a multiple of feature_group_count (value \
             {feature_group_count}), and LHS feature dimension / feature_group_count = RHS feature dimension (value \
             {kernel_input_features}); got {operands}"
        );
    }
    if kernel_output_features % feature_group_count > 0 {
        invalid_argument!(
            "Expected output feature dimension (value {kernel_output_features}) to be divisible by \
             feature_group_count (value {feature_group_count}); got {operands}"
        );
    }
    if input_batch % batch_group_count != 0 {
        invalid_argument!(
            "Expected input batch dimension (value {input_batch}) to be divisible by batch_group_count (value \
             {batch_group_count}); got {operands}"
        );
    }
    let window_sizes: Vec<i64> = window.dimensions.iter().map(|d| d.size).collect();
    if kernel_window_sizes(rhs, numbers) != window_sizes {
        invalid_argument!(
            "Window dimensions do not match RHS shape:\n\tRHS shape: {}\n\tWindow: {{{}}}\n\tDimension numbers: {{{}}}.",
            rhs.human_string(),
            window.short_debug_string(),
            numbers.short_debug_string()
        );
    }
    let spatial_sizes: Vec<i64> = numbers.input_spatial_dimensions.iter().map(|&d| lhs_dim(d)).collect();
    let base = make_shape(lhs.element_type(), &spatial_sizes)?;
    let positions = window_output_shape(&base, window, lhs.element_type())?;
    let mut dimensions = vec![0; rank];
    dimensions[numbers.output_batch_dimension as usize] = input_batch / batch_group_count;
    dimensions[numbers.output_feature_dimension as usize] = kernel_output_features;
    for (&d, &size) in numbers.output_spatial_dimensions.iter().zip(positions.dimensions()) {
        dimensions[d as usize] = size;
    }
    make_shape(higher_precision(lhs.element_type(), rhs.element_type()), &dimensions)
}
