//! `convolution` as matrix products (im2col): for each feature or batch group, the input's
//! windows are copied into the rows of a patch matrix (zeros where a window reaches padding or
//! a dilation hole), multiplied by the kernel as a matrix with the dot kernel (`matrixmultiply`
//! for f32 and f64), and the products written to the output in its layout.

use rayon::prelude::*;

use crate::attributes::{ConvolutionDimensionNumbers, DotDimensionNumbers, Window};
use crate::element_type::ElementType;
use crate::error::Result;
use crate::exec::kernels::contraction;
use crate::exec::kernels::gather::advance;
use crate::literal::Literal;
use crate::shape::Shape;
use crate::storage::{with_native_type, NativeType};

/// The attributes of a convolution.
pub(crate) struct Convolution<'a> {
    pub(crate) window: &'a Window,
    pub(crate) numbers: &'a ConvolutionDimensionNumbers,
    pub(crate) feature_group_count: i64,
    pub(crate) batch_group_count: i64,
}

/// The most elements a patch matrix holds at once: rows are made and multiplied in blocks.
const PATCH_ELEMENTS: usize = 1 << 21;

/// The bytes a convolution of `lhs` by `rhs` into `out` computes in: the kernel as a matrix,
/// a block of patches and its product (for half types, their `f32` panels as well).
pub(crate) fn scratch_bytes(lhs: &Shape, rhs: &Shape, out: &Shape, attributes: &Convolution<'_>) -> u64 {
    let Convolution { window, numbers, feature_group_count, batch_group_count } = *attributes;
    let groups = feature_group_count.max(batch_group_count).max(1) as u64;
    let input_features = rhs.dimensions()[numbers.kernel_input_feature_dimension as usize] as u64;
    let output_features = rhs.dimensions()[numbers.kernel_output_feature_dimension as usize] as u64;
    let group_outputs = output_features / groups;
    let window_count = window.dimensions.iter().fold(1u64, |n, d| n.saturating_mul(d.size as u64));
    let k = window_count.saturating_mul(input_features);
    let rows = (out.element_count() as u64) / output_features.max(1);
    let block_rows = (PATCH_ELEMENTS as u64 / k.max(1)).clamp(1, rows.max(1));
    let elements = k
        .saturating_mul(group_outputs)
        .saturating_add(block_rows.saturating_mul(k.saturating_add(group_outputs)));
    let size = lhs.element_type().byte_size() as u64;
    let half = matches!(lhs.element_type(), ElementType::F16 | ElementType::Bf16);
    elements.saturating_mul(if half { size + 4 } else { size })
}

/// XLA's convolution of `lhs` by `rhs` (one element type) into `out` (any layout).
pub(crate) fn convolution(
    lhs: &Literal,
    rhs: &Literal,
    attributes: &Convolution<'_>,
    out: &mut Literal,
    parallel: bool,
) -> Result<()> {
    with_native_type!(lhs.element_type(), T => convolve::<T>(lhs, rhs, attributes, out, parallel))
}

fn convolve<T: NativeType>(
    lhs: &Literal,
    rhs: &Literal,
    attributes: &Convolution<'_>,
    out: &mut Literal,
    parallel: bool,
) -> Result<()> {
    let Convolution { window, numbers, feature_group_count, batch_group_count } = *attributes;
    let (lhs_shape, rhs_shape, out_shape) = (lhs.shape(), rhs.shape(), out.shape().clone());
    let (ls, rs, os) = (lhs_shape.strides(), rhs_shape.strides(), out_shape.strides());
    let lhs_dim = |d: i64| lhs_shape.dimensions()[d as usize];
    let groups = feature_group_count.max(batch_group_count) as usize;
    let input_features = rhs_shape.dimensions()[numbers.kernel_input_feature_dimension as usize] as usize;
    let output_features = rhs_shape.dimensions()[numbers.kernel_output_feature_dimension as usize] as usize;
    let group_outputs = output_features / groups.max(1);
    let out_batch = out_shape.dimensions()[numbers.output_batch_dimension as usize] as usize;
    let spatial_out: Vec<i64> =
        numbers.output_spatial_dimensions.iter().map(|&d| out_shape.dimensions()[d as usize]).collect();
    let window_sizes: Vec<i64> = window.dimensions.iter().map(|d| d.size).collect();
    let window_count: usize = window_sizes.iter().product::<i64>() as usize;
    let positions: usize = spatial_out.iter().product::<i64>() as usize;
    let k = window_count * input_features;
    let rows = out_batch * positions;
    if rows == 0 || group_outputs == 0 {
        return Ok(());
    }
    // For each spatial dimension, output coordinate and window element: the lhs offset along
    // it, or `None` where the window reaches padding or a hole of the lhs dilation.
    let taps: Vec<Vec<Vec<Option<usize>>>> = window
        .dimensions
        .iter()
        .zip(&numbers.input_spatial_dimensions)
        .zip(&spatial_out)
        .map(|((w, &d), &count)| {
            (0..count)
                .map(|o| {
                    (0..w.size)
                        .map(|t| {
                            let dilated = o * w.stride + t * w.window_dilation - w.padding_low;
                            let q = dilated / w.base_dilation;
                            let inside = dilated >= 0 && dilated % w.base_dilation == 0 && q < lhs_dim(d);
                            inside.then_some((q * ls[d as usize]) as usize)
                        })
                        .collect()
                })
                .collect()
        })
        .collect();
    let input = lhs.memory::<T>()?;
    let kernel = rhs.memory::<T>()?;
    let output = out.storage_mut()?.as_mut_slice::<T>()?;
    let batch_per_group = lhs_dim(numbers.input_batch_dimension) as usize / batch_group_count as usize;
    let feature_stride = ls[numbers.input_feature_dimension as usize] as usize;
    let block_rows = (PATCH_ELEMENTS / k.max(1)).clamp(1, rows);
    for g in 0..groups {
        // The kernel of this group as a [k, group_outputs] matrix, rows (window…, feature).
        let mut matrix = Vec::with_capacity(k * group_outputs);
        let mut window_index = vec![0i64; window_sizes.len()];
        for _ in 0..window_count {
            let spatial: i64 = numbers
                .kernel_spatial_dimensions
                .iter()
                .zip(&window_index)
                .map(|(&d, &i)| i * rs[d as usize])
                .sum();
            for i in 0..input_features as i64 {
                let base = spatial + i * rs[numbers.kernel_input_feature_dimension as usize];
                for o in 0..group_outputs as i64 {
                    let feature = (g * group_outputs) as i64 + o;
                    matrix.push(
                        kernel[(base + feature * rs[numbers.kernel_output_feature_dimension as usize])
                            as usize],
                    );
                }
            }
            advance(&mut window_index, &window_sizes);
        }
        let matrix =
            Literal::from_vec(&Shape::try_new(T::ELEMENT_TYPE, &[k as i64, group_outputs as i64])?, matrix)?;
        let feature_base = if feature_group_count > 1 { g * input_features } else { 0 };
        let batch_base = if batch_group_count > 1 { g * batch_per_group } else { 0 };
        // One patch matrix and one product for every block (the last block uses a prefix),
        // so no block pays for fresh pages.
        let matrix_shape =
            |rows: usize, columns: usize| Shape::try_new(T::ELEMENT_TYPE, &[rows as i64, columns as i64]);
        let mut patches = Literal::for_overwrite(&matrix_shape(block_rows, k)?)?;
        let mut product = Literal::for_overwrite(&matrix_shape(block_rows, group_outputs)?)?;
        for first in (0..rows).step_by(block_rows) {
            let count = block_rows.min(rows - first);
            if count < block_rows {
                patches = Literal::for_overwrite(&matrix_shape(count, k)?)?;
                product = Literal::for_overwrite(&matrix_shape(count, group_outputs)?)?;
            }
            let fill = |(r, row): (usize, &mut [T])| {
                let m = first + r;
                let (n, mut s) = (m / positions, m % positions);
                let mut coordinates = vec![0usize; spatial_out.len()];
                for d in (0..spatial_out.len()).rev() {
                    coordinates[d] = s % spatial_out[d] as usize;
                    s /= spatial_out[d] as usize;
                }
                let batch = (batch_base + n) as i64 * ls[numbers.input_batch_dimension as usize];
                let base = batch as usize + feature_base * feature_stride;
                let mut window_index = vec![0i64; window_sizes.len()];
                for cells in row.chunks_mut(input_features.max(1)).take(window_count) {
                    let offset: Option<usize> = window_index
                        .iter()
                        .enumerate()
                        .map(|(d, &t)| taps[d][coordinates[d]][t as usize])
                        .sum();
                    match offset {
                        Some(offset) if feature_stride == 1 => {
                            cells.copy_from_slice(&input[base + offset..base + offset + input_features]);
                        }
                        Some(offset) => {
                            for (i, cell) in cells.iter_mut().enumerate() {
                                *cell = input[base + offset + i * feature_stride];
                            }
                        }
                        // Padding and dilation holes contribute nothing.
                        None => cells.fill(T::ZERO),
                    }
                    advance(&mut window_index, &window_sizes);
                }
            };
            let rows_of_patches = patches.storage_mut()?.as_mut_slice::<T>()?;
            if parallel && count * k >= 1 << 15 {
                rows_of_patches.par_chunks_mut(k.max(1)).enumerate().for_each(fill);
            } else {
                rows_of_patches.chunks_mut(k.max(1)).enumerate().for_each(fill);
            }
            let numbers_2d = DotDimensionNumbers::new(&[1], &[0], &[], &[]);
            contraction::dot([&patches, &matrix], &numbers_2d, &mut product, parallel)?;
            let product = product.memory::<T>()?;
            for r in 0..count {
                let m = first + r;
                let (n, mut s) = (m / positions, m % positions);
                let mut target = n as i64 * os[numbers.output_batch_dimension as usize];
                for d in (0..spatial_out.len()).rev() {
                    target += (s as i64 % spatial_out[d]) * os[numbers.output_spatial_dimensions[d] as usize];
                    s /= spatial_out[d] as usize;
                }
                for o in 0..group_outputs {
                    let feature = (g * group_outputs + o) as i64;
                    output[(target + feature * os[numbers.output_feature_dimension as usize]) as usize] =
                        product[r * group_outputs + o];
                }
            }
        }
    }
    Ok(())
}
