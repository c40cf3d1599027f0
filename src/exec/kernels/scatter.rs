//! `scatter` and `dynamic_update_slice`: the operand copied to the output (unless the output
//! is the operand's own buffer, taken over in place), then windows of the update written into
//! it — a scatter's combined by its update computation and skipped whole where they do not
//! fit, a dynamic update slice's clamped so that it fits.

use crate::attributes::ScatterDimensionNumbers;
use crate::error::Result;
use crate::exec::element::{with_binary_fn, Element};
use crate::exec::kernels::gather::advance;
use crate::exec::kernels::indexing::{
    box_offsets, box_runs, clamp_start, copy_windows, index_value, Windows,
};
use crate::exec::kernels::interpreted::Combine;
use crate::exec::scalar_program::Scalar;
use crate::literal::Literal;
use crate::storage::with_native_type;

/// `out` (of `operand`'s dimensions and element type, any layout) set to `operand`'s values.
pub(crate) fn copy_operand(operand: &Literal, out: &mut Literal) -> Result<()> {
    if operand.shape() == out.shape() {
        with_native_type!(operand.element_type(), T => {
            out.storage_mut()?.as_mut_slice::<T>()?.copy_from_slice(operand.memory::<T>()?)
        });
        return Ok(());
    }
    let sizes = operand.shape().dimensions().to_vec();
    let runs = box_runs(&sizes, &operand.shape().strides(), &out.shape().strides());
    let windows = Windows { sources: &[0], targets: &[0], runs: &runs };
    copy_windows(operand, out, &windows, false)
}

/// XLA's scatter: `out` starts as `operand` (`None`: it holds the operand already); each window
/// of `updates` whose start (from `indices`) lets it fit is combined element by element with
/// `combine(current, update)`, in the updates' row-major order.
pub(crate) fn scatter(
    operand: Option<&Literal>,
    [indices, updates]: [&Literal; 2],
    numbers: &ScatterDimensionNumbers,
    combine: Combine<'_>,
    out: &mut Literal,
) -> Result<()> {
    if let Some(operand) = operand {
        copy_operand(operand, out)?;
    }
    let out_shape = out.shape().clone();
    let (out_strides, update_strides, index_strides) =
        (out_shape.strides(), updates.shape().strides(), indices.shape().strides());
    let ivd = numbers.index_vector_dim as usize;
    let vector_stride = index_strides.get(ivd).copied().unwrap_or(0);
    let batch_dims: Vec<usize> = (0..indices.shape().rank()).filter(|&d| d != ivd).collect();
    let update_scatter_dims: Vec<usize> = (0..updates.shape().rank())
        .filter(|d| numbers.update_window_dims.binary_search(&(*d as i64)).is_err())
        .collect();
    let batch_sizes: Vec<i64> = batch_dims.iter().map(|&d| indices.shape().dimensions()[d]).collect();
    // The window: the operand dimensions neither inserted nor batching, sized by the updates.
    let window_dims: Vec<usize> = (0..out_shape.rank() as i64)
        .filter(|d| !numbers.inserted_window_dims.contains(d) && !numbers.input_batching_dims.contains(d))
        .map(|d| d as usize)
        .collect();
    let window_sizes: Vec<i64> =
        numbers.update_window_dims.iter().map(|&d| updates.shape().dimensions()[d as usize]).collect();
    let mut extent = vec![1i64; out_shape.rank()];
    for (&d, &size) in window_dims.iter().zip(&window_sizes) {
        extent[d] = size;
    }
    let to_offsets =
        box_offsets(&window_sizes, &window_dims.iter().map(|&d| out_strides[d]).collect::<Vec<_>>());
    let window_strides: Vec<i64> =
        numbers.update_window_dims.iter().map(|&d| update_strides[d as usize]).collect();
    let from_offsets = box_offsets(&window_sizes, &window_strides);

    // The windows that fit: (first element in `out`, first element in `updates`).
    let mut windows = Vec::new();
    let mut index = vec![0i64; batch_dims.len()];
    let count: i64 = batch_sizes.iter().product();
    for _ in 0..count {
        let index_base: i64 = batch_dims.iter().zip(&index).map(|(&d, &i)| i * index_strides[d]).sum();
        let mut start = vec![0i64; out_shape.rank()];
        for (k, &d) in numbers.scatter_dims_to_operand_dims.iter().enumerate() {
            start[d as usize] = index_value(indices, (index_base + k as i64 * vector_stride) as usize)?;
        }
        for (&o, &i) in numbers.input_batching_dims.iter().zip(&numbers.scatter_indices_batching_dims) {
            start[o as usize] = index[batch_dims.iter().position(|&d| d as i64 == i).unwrap_or(0)];
        }
        let fits = (0..out_shape.rank())
            .all(|d| start[d] >= 0 && start[d].saturating_add(extent[d]) <= out_shape.dimensions()[d]);
        if fits {
            let target = start.iter().zip(&out_strides).map(|(s, t)| s * t).sum::<i64>() as usize;
            let source =
                update_scatter_dims.iter().zip(&index).map(|(&d, &i)| i * update_strides[d]).sum::<i64>();
            windows.push((target, source as usize));
        }
        advance(&mut index, &batch_sizes);
    }
    match combine {
        Combine::Native(op) => with_native_type!(out.element_type(), T => {
            let values = updates.memory::<T>()?;
            let memory = out.storage_mut()?.as_mut_slice::<T>()?;
            with_binary_fn!(T, op, f => {
                for &(target, source) in &windows {
                    for (&from, &to) in from_offsets.iter().zip(&to_offsets) {
                        memory[target + to] = f(memory[target + to], values[source + from]);
                    }
                }
            })
        }),
        Combine::Interpreted(apply) => {
            let (mut arguments, mut results) = (Vec::with_capacity(2), Vec::with_capacity(1));
            for &(target, source) in &windows {
                for (&from, &to) in from_offsets.iter().zip(&to_offsets) {
                    arguments.clear();
                    arguments.push(Scalar::read(out, target + to));
                    arguments.push(Scalar::read(updates, source + from));
                    results.clear();
                    apply(&arguments, &mut results)?;
                    if let Some(value) = results.first() {
                        value.store(out, target + to)?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// XLA's dynamic update slice: `out` is `operand` (`None`: it holds the operand already) with
/// `update` written at `starts` (scalars, each clamped so that the update fits).
pub(crate) fn dynamic_update_slice(
    operand: Option<&Literal>,
    update: &Literal,
    starts: &[&Literal],
    out: &mut Literal,
    parallel: bool,
) -> Result<()> {
    if let Some(operand) = operand {
        copy_operand(operand, out)?;
    }
    let sizes = update.shape().dimensions().to_vec();
    let out_strides = out.shape().strides();
    let mut target = 0i64;
    for (d, start) in starts.iter().enumerate() {
        let start = clamp_start(index_value(start, 0)?, out.shape().dimensions()[d], sizes[d]);
        target += start * out_strides[d];
    }
    let runs = box_runs(&sizes, &update.shape().strides(), &out_strides);
    let windows = Windows { sources: &[0], targets: &[target as usize], runs: &runs };
    copy_windows(update, out, &windows, parallel)
}
