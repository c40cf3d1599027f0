//! `gather` and `dynamic_slice`: windows of the operand copied to the output, each starting
//! where its index vector says, clamped so that it fits (as XLA clamps).

use crate::attributes::GatherDimensionNumbers;
use crate::error::Result;
use crate::exec::kernels::indexing::{box_runs, clamp_start, copy_windows, index_value, Windows};
use crate::literal::Literal;

/// XLA's gather of `operand` at `indices` into `out` (of the gather's dimensions, any layout).
pub(crate) fn gather(
    operand: &Literal,
    indices: &Literal,
    numbers: &GatherDimensionNumbers,
    slice_sizes: &[i64],
    out: &mut Literal,
    parallel: bool,
) -> Result<()> {
    let (operand_shape, out_shape) = (operand.shape(), out.shape().clone());
    let (operand_strides, out_strides) = (operand_shape.strides(), out_shape.strides());
    let index_strides = indices.shape().strides();
    let ivd = numbers.index_vector_dim as usize;
    // The index dimensions that are batch dimensions, in order: they are the output's
    // dimensions that are not offset dimensions, in order.
    let batch_dims: Vec<usize> = (0..indices.shape().rank()).filter(|&d| d != ivd).collect();
    let out_batch_dims: Vec<usize> =
        (0..out_shape.rank()).filter(|d| numbers.offset_dims.binary_search(&(*d as i64)).is_err()).collect();
    let batch_sizes: Vec<i64> = batch_dims.iter().map(|&d| indices.shape().dimensions()[d]).collect();
    let vector_stride = index_strides.get(ivd).copied().unwrap_or(0);

    let mut sources = Vec::new();
    let mut targets = Vec::new();
    let mut index = vec![0i64; batch_dims.len()];
    let count: i64 = batch_sizes.iter().product();
    for _ in 0..count {
        let index_base: i64 = batch_dims.iter().zip(&index).map(|(&d, &i)| i * index_strides[d]).sum();
        let mut start = vec![0i64; operand_shape.rank()];
        for (k, &d) in numbers.start_index_map.iter().enumerate() {
            let value = index_value(indices, (index_base + k as i64 * vector_stride) as usize)?;
            let d = d as usize;
            start[d] = clamp_start(value, operand_shape.dimensions()[d], slice_sizes[d]);
        }
        for (&o, &i) in numbers.operand_batching_dims.iter().zip(&numbers.start_indices_batching_dims) {
            let position = batch_dims.iter().position(|&d| d as i64 == i).unwrap_or(0);
            start[o as usize] = index[position];
        }
        sources.push(start.iter().zip(&operand_strides).map(|(s, t)| s * t).sum::<i64>() as usize);
        targets
            .push(out_batch_dims.iter().zip(&index).map(|(&d, &i)| i * out_strides[d]).sum::<i64>() as usize);
        advance(&mut index, &batch_sizes);
    }
    // The slice: the operand dimensions neither collapsed nor batching, at the offset dims.
    let kept: Vec<usize> = (0..operand_shape.rank() as i64)
        .filter(|d| !numbers.collapsed_slice_dims.contains(d) && !numbers.operand_batching_dims.contains(d))
        .map(|d| d as usize)
        .collect();
    let kept_sizes: Vec<i64> = kept.iter().map(|&d| slice_sizes[d]).collect();
    let from_strides: Vec<i64> = kept.iter().map(|&d| operand_strides[d]).collect();
    let to_strides: Vec<i64> = numbers.offset_dims.iter().map(|&d| out_strides[d as usize]).collect();
    let runs = box_runs(&kept_sizes, &from_strides, &to_strides);
    let windows = Windows { sources: &sources, targets: &targets, runs: &runs };
    copy_windows(operand, out, &windows, parallel)
}

/// XLA's dynamic slice: the `out`-sized window of `operand` at `starts` (scalars, clamped).
pub(crate) fn dynamic_slice(
    operand: &Literal,
    starts: &[&Literal],
    out: &mut Literal,
    parallel: bool,
) -> Result<()> {
    let sizes = out.shape().dimensions().to_vec();
    let operand_strides = operand.shape().strides();
    let mut source = 0i64;
    for (d, start) in starts.iter().enumerate() {
        let start = clamp_start(index_value(start, 0)?, operand.shape().dimensions()[d], sizes[d]);
        source += start * operand_strides[d];
    }
    let runs = box_runs(&sizes, &operand_strides, &out.shape().strides());
    let windows = Windows { sources: &[source as usize], targets: &[0], runs: &runs };
    copy_windows(operand, out, &windows, parallel)
}

/// The next row-major index of a box of `sizes` (wrapping to zeros after the last).
pub(crate) fn advance(index: &mut [i64], sizes: &[i64]) {
    for d in (0..index.len()).rev() {
        index[d] += 1;
        if index[d] < sizes[d] {
            return;
        }
        index[d] = 0;
    }
}
