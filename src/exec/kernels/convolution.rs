//! `convolution` as implicit matrix products. The input is copied once into a row-major
//! `[batch, spatial…, feature]` array in the type products are summed in, with its padding and
//! base dilation written out, so the convolution left is a valid one. Each output row (the
//! innermost output positions, or the batch) is then a sum over window taps of matrix products
//! whose lhs is read in place from that copy through overlapping strides (the innermost tap and
//! the features fold into one contraction of `taps · features` elements), and whose rhs is the
//! kernel packed as a matrix per group: no patch matrix is ever made.

use rayon::prelude::*;

use crate::attributes::{ConvolutionDimensionNumbers, Window};
use crate::element_type::ElementType;
use crate::error::{Error, Result};
use crate::exec::kernels::contraction::{product_into, BlockConsumer, MatMul};
use crate::exec::kernels::disjoint::DisjointWrites;
use crate::exec::kernels::gather::advance;
use crate::exec::kernels::gemm::{self, LhsRows, OutRows, Packed, Rhs, Segment};
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

/// Below this many multiply-adds a convolution runs on the calling thread.
const PARALLEL_WORK: usize = 1 << 18;

/// The most bytes of output blocks a group of tasks sums at once.
const GROUP_BYTES: usize = 1 << 19;

/// Where one task of a convolution reads and writes.
struct Placed {
    g: usize,
    input_base: usize,
    output_base: usize,
    product_rows: usize,
}

/// The most depth (taps times features) the register tile sums before adding to the block:
/// its packed kernel rows stay in the second-level cache beside the input rows of a task.
const TILE_DEPTH: usize = 384;

/// The rows a matrix product aims at, where lines merge: enough that packing its operands
/// costs little beside the products.
const PRODUCT_ROWS: usize = 512;

/// The bytes a convolution of `lhs` by `rhs` into `out` computes in: the padded input, the
/// packed kernel and a block of output rows per thread, in the type products are summed in,
/// and each thread's packed block of the kernel for the register tile.
pub(crate) fn scratch_bytes(lhs: &Shape, rhs: &Shape, out: &Shape, attributes: &Convolution<'_>) -> u64 {
    let geometry = Geometry::new(lhs, rhs, out, attributes);
    let sum_size = with_native_type!(lhs.element_type(), T => std::mem::size_of::<<T as MatMul>::Sum>());
    let rows = geometry.rows.pitch * geometry.rows.lines;
    let threads = rayon::current_num_threads() as u64;
    let blocks = (rows * geometry.group_outputs) as u64 * threads;
    // A group's kernel matrix as `kernel_rows × group_outputs`; every group's rows (a bound).
    let kernel_rows = rhs.element_count() as usize / geometry.group_outputs.max(1);
    [geometry.padded_elements() as u64, rhs.element_count() as u64, blocks]
        .into_iter()
        .fold(0u64, u64::saturating_add)
        .saturating_mul(sum_size as u64)
        .saturating_add(gemm::packed_bytes(kernel_rows, geometry.group_outputs, TILE_DEPTH) * threads)
}

/// XLA's convolution of `lhs` by `rhs` (one element type) into `out` (row-major).
pub(crate) fn convolution(
    lhs: &Literal,
    rhs: &Literal,
    attributes: &Convolution<'_>,
    out: &mut Literal,
    parallel: bool,
) -> Result<()> {
    with_native_type!(lhs.element_type(), T => convolve::<T>(lhs, rhs, attributes, out, parallel))
}

/// The `f32` convolution of `lhs` and `rhs` on the register tile, each task's block of the
/// output (whole lines of its positions, every feature: a range of the row-major output's
/// elements) handed to `consume` as soon as it is computed, on the thread that computed it (an
/// output fusion's epilogue). Returns false, computing nothing, where the tile cannot run or
/// a task's block is not one range of the output (feature groups, batch groups, rows along
/// the batch, a feature dimension that is not innermost).
pub(crate) fn convolution_by_blocks(
    lhs: &Literal,
    rhs: &Literal,
    attributes: &Convolution<'_>,
    out_shape: &Shape,
    consume: &BlockConsumer<'_>,
    parallel: bool,
) -> Result<bool> {
    let geometry = Geometry::new(lhs.shape(), rhs.shape(), out_shape, attributes);
    let (Ok(input), Ok(_)) = (lhs.memory::<f32>(), rhs.memory::<f32>()) else { return Ok(false) };
    let rows = &geometry.rows;
    let columns = geometry.group_outputs;
    let line_stride =
        geometry.positions.len().checked_sub(2).map_or(0, |d| geometry.output_spatial_strides[d]);
    let one_range = geometry.groups == 1
        && !rows.batch
        && geometry.output_feature_stride == 1
        && rows.output_stride == columns
        && (rows.lines == 1 || line_stride == rows.len * columns);
    if !gemm::available() || !one_range || geometry.depth() == 0 || out_shape.element_count() == 0 {
        return Ok(false);
    }
    let input = padded_input(&geometry, input, parallel);
    let kernel = packed_kernel::<f32>(&geometry, rhs, attributes.numbers)?;
    geometry.compute::<f32>(&input, &kernel, &mut [], parallel, Some(consume))?;
    Ok(true)
}

/// Which output dimension a matrix product's rows run along.
struct RowAxis {
    /// The rows: the innermost output positions, or the output batch.
    len: usize,
    /// The distance between rows in the padded input and in the output.
    input_stride: usize,
    output_stride: usize,
    /// Whether rows run along the batch (else along the innermost spatial dimension).
    batch: bool,
    /// How many lines (consecutive positions of the next spatial dimension out) one product
    /// covers, and the rows from one line's start to the next's: where the input's stride of a
    /// line is a whole number of row strides, a product runs over the lines end to end, the
    /// rows past a line's end (over its padding) computed and dropped.
    lines: usize,
    pitch: usize,
}

/// A convolution's sizes and strides, read once from the shapes.
struct Geometry {
    groups: usize,
    feature_groups: bool,
    batch_groups: bool,
    out_batch: usize,
    /// The input features each group reads, the output features it writes.
    group_inputs: usize,
    group_outputs: usize,
    /// The input's sizes and strides.
    input_batch_stride: usize,
    input_feature_stride: usize,
    input_spatial: Vec<(usize, usize)>,
    /// The padded input: its spatial extents and the strides of batch and spatial dimensions
    /// (features are innermost, of stride 1).
    features: usize,
    padded: Vec<usize>,
    padded_batch_stride: usize,
    padded_strides: Vec<usize>,
    /// The output positions, the output's strides (batch, spatial…, feature).
    positions: Vec<usize>,
    output_batch_stride: usize,
    output_spatial_strides: Vec<usize>,
    output_feature_stride: usize,
    /// The window: sizes, strides, dilations, and the padding and base dilation the padded
    /// input writes out.
    window: Vec<WindowAxis>,
    /// Whether the innermost tap folds into the contraction with the features (unit window
    /// dilation and no feature groups: the taps' features then lie end to end).
    fold_innermost_tap: bool,
    rows: RowAxis,
}

struct WindowAxis {
    size: usize,
    stride: usize,
    dilation: usize,
    padding_low: i64,
    base_dilation: i64,
}

impl Geometry {
    fn new(lhs: &Shape, rhs: &Shape, out: &Shape, attributes: &Convolution<'_>) -> Geometry {
        let Convolution { window, numbers, feature_group_count, batch_group_count } = *attributes;
        let (ls, os) = (lhs.strides(), out.strides());
        let size = |shape: &Shape, d: i64| shape.dimensions()[d as usize] as usize;
        let groups = feature_group_count.max(batch_group_count).max(1) as usize;
        let features = size(lhs, numbers.input_feature_dimension);
        let group_inputs = size(rhs, numbers.kernel_input_feature_dimension);
        let group_outputs = size(rhs, numbers.kernel_output_feature_dimension) / groups;
        let input_spatial: Vec<(usize, usize)> = numbers
            .input_spatial_dimensions
            .iter()
            .map(|&d| (size(lhs, d), ls[d as usize] as usize))
            .collect();
        let window: Vec<WindowAxis> = window
            .dimensions
            .iter()
            .map(|w| WindowAxis {
                size: w.size as usize,
                stride: w.stride as usize,
                dilation: w.window_dilation as usize,
                padding_low: w.padding_low,
                base_dilation: w.base_dilation,
            })
            .collect();
        let padded: Vec<usize> = window
            .iter()
            .zip(&input_spatial)
            .zip(&attributes.window.dimensions)
            .map(|((w, &(extent, _)), d)| {
                let dilated = if extent == 0 { 0 } else { (extent as i64 - 1) * w.base_dilation + 1 };
                (dilated + d.padding_low + d.padding_high).max(0) as usize
            })
            .collect();
        let mut padded_strides = vec![features; padded.len()];
        for d in (0..padded.len().saturating_sub(1)).rev() {
            padded_strides[d] = padded_strides[d + 1] * padded[d + 1];
        }
        let padded_batch_stride = padded.iter().product::<usize>() * features;
        let positions: Vec<usize> = numbers.output_spatial_dimensions.iter().map(|&d| size(out, d)).collect();
        let output_spatial_strides: Vec<usize> =
            numbers.output_spatial_dimensions.iter().map(|&d| os[d as usize] as usize).collect();
        let out_batch = size(out, numbers.output_batch_dimension);
        let output_batch_stride = os[numbers.output_batch_dimension as usize] as usize;
        let innermost = positions.len().checked_sub(1);
        let rows = match innermost {
            Some(d) if positions[d] >= out_batch => {
                let len = positions[d];
                // Lines merge when the rows between two lines' starts are at most an eighth
                // more than a line holds.
                let pitch = d.checked_sub(1).and_then(|outer| {
                    let line_stride = window[outer].stride * padded[d];
                    let pitch = line_stride / window[d].stride;
                    let close = pitch.checked_sub(len).is_some_and(|extra| extra <= len / 8);
                    (pitch > 0 && line_stride.is_multiple_of(window[d].stride) && close).then_some(pitch)
                });
                // As many lines as make about `PRODUCT_ROWS` rows, in blocks of equal size.
                let lines = match pitch {
                    Some(pitch) => {
                        let outer = positions[d - 1].max(1);
                        outer.div_ceil(outer.div_ceil((PRODUCT_ROWS / pitch).max(1)))
                    }
                    None => 1,
                };
                RowAxis {
                    len,
                    input_stride: window[d].stride * padded_strides[d],
                    output_stride: output_spatial_strides[d],
                    batch: false,
                    lines,
                    pitch: pitch.unwrap_or(len),
                }
            }
            _ => RowAxis {
                len: out_batch,
                input_stride: padded_batch_stride,
                output_stride: output_batch_stride,
                batch: true,
                lines: 1,
                pitch: out_batch,
            },
        };
        Geometry {
            groups,
            feature_groups: feature_group_count > 1,
            batch_groups: batch_group_count > 1,
            out_batch,
            group_inputs,
            group_outputs,
            input_batch_stride: ls[numbers.input_batch_dimension as usize] as usize,
            input_feature_stride: ls[numbers.input_feature_dimension as usize] as usize,
            input_spatial,
            features,
            fold_innermost_tap: innermost.is_some_and(|d| window[d].dilation == 1)
                && feature_group_count <= 1,
            padded_batch_stride,
            padded,
            padded_strides,
            positions,
            output_batch_stride,
            output_spatial_strides,
            output_feature_stride: os[numbers.output_feature_dimension as usize] as usize,
            window,
            rows,
        }
    }

    fn padded_elements(&self) -> usize {
        let batch = self.padded_batch_stride;
        batch.saturating_mul(if self.batch_groups { self.out_batch * self.groups } else { self.out_batch })
    }

    /// The window dimensions each matrix product sums apart (the rest fold into its depth).
    fn separate_taps(&self) -> &[WindowAxis] {
        &self.window[..self.window.len() - usize::from(self.fold_innermost_tap)]
    }

    /// The depth of each matrix product: the features of a group, times the innermost taps
    /// where they fold in.
    fn depth(&self) -> usize {
        let folded = if self.fold_innermost_tap { self.window.last().map_or(1, |w| w.size) } else { 1 };
        folded * self.group_inputs
    }

    /// The input coordinate padded position `p` of spatial dimension `d` reads, if any.
    fn source(&self, d: usize, p: usize) -> Option<usize> {
        let w = &self.window[d];
        let dilated = p as i64 - w.padding_low;
        let q = dilated.checked_div(w.base_dilation)?;
        (dilated >= 0 && dilated % w.base_dilation == 0 && (q as usize) < self.input_spatial[d].0)
            .then(|| q as usize * self.input_spatial[d].1)
    }
}

fn convolve<T: MatMul>(
    lhs: &Literal,
    rhs: &Literal,
    attributes: &Convolution<'_>,
    out: &mut Literal,
    parallel: bool,
) -> Result<()> {
    let geometry = Geometry::new(lhs.shape(), rhs.shape(), out.shape(), attributes);
    let output = out.storage_mut()?.as_mut_slice::<T>()?;
    if output.is_empty() {
        return Ok(());
    }
    if geometry.depth() == 0 {
        output.fill(T::ZERO);
        return Ok(());
    }
    let input = padded_input(&geometry, lhs.memory::<T>()?, parallel);
    let kernel = packed_kernel::<T>(&geometry, rhs, attributes.numbers)?;
    geometry.compute(&input, &kernel, output, parallel, None)
}

/// The input as the padded row-major `[batch, spatial…, feature]` array, in the sum type.
fn padded_input<T: MatMul>(geometry: &Geometry, input: &[T], parallel: bool) -> Vec<T::Sum> {
    let features = geometry.features;
    let innermost = geometry.padded.last().copied().unwrap_or(1);
    let row_len = innermost * features;
    let mut padded = vec![<T::Sum as NativeType>::ZERO; geometry.padded_elements()];
    let outer = geometry.padded.len().saturating_sub(1);
    let fill = |(r, row): (usize, &mut [T::Sum])| {
        // The row's batch and outer padded coordinates, and where they read the input.
        let mut rest = r;
        let mut base = 0usize;
        for d in (0..outer).rev() {
            let p = rest % geometry.padded[d];
            rest /= geometry.padded[d];
            match geometry.source(d, p) {
                Some(offset) => base += offset,
                None => return,
            }
        }
        base += rest * geometry.input_batch_stride;
        for (p, cells) in row.chunks_mut(features.max(1)).enumerate() {
            let offset = if geometry.padded.is_empty() { Some(0) } else { geometry.source(outer, p) };
            let Some(offset) = offset else { continue };
            let start = base + offset;
            if geometry.input_feature_stride == 1 {
                let values = &input[start..start + features];
                cells.iter_mut().zip(values).for_each(|(cell, &v)| *cell = v.to_sum());
            } else {
                for (i, cell) in cells.iter_mut().enumerate() {
                    *cell = input[start + i * geometry.input_feature_stride].to_sum();
                }
            }
        }
    };
    if row_len == 0 {
        return padded;
    }
    if parallel && padded.len() >= 1 << 15 {
        padded.par_chunks_mut(row_len).enumerate().for_each(fill);
    } else {
        padded.chunks_mut(row_len).enumerate().for_each(fill);
    }
    padded
}

/// The kernel as one `[taps…, input feature, output feature]` row-major matrix per group, in
/// the sum type.
fn packed_kernel<T: MatMul>(
    geometry: &Geometry,
    rhs: &Literal,
    numbers: &ConvolutionDimensionNumbers,
) -> Result<Vec<T::Sum>> {
    let kernel = rhs.memory::<T>()?;
    let strides = rhs.shape().strides();
    let stride = |d: i64| strides[d as usize] as usize;
    let (input_stride, output_stride) =
        (stride(numbers.kernel_input_feature_dimension), stride(numbers.kernel_output_feature_dimension));
    let sizes: Vec<i64> = geometry.window.iter().map(|w| w.size as i64).collect();
    let taps: usize = geometry.window.iter().map(|w| w.size).product();
    let (inputs, outputs) = (geometry.group_inputs, geometry.group_outputs);
    let mut packed = Vec::with_capacity(geometry.groups * taps * inputs * outputs);
    for g in 0..geometry.groups {
        let mut tap = vec![0i64; sizes.len()];
        for _ in 0..taps {
            let spatial: usize = numbers
                .kernel_spatial_dimensions
                .iter()
                .zip(&tap)
                .map(|(&d, &t)| t as usize * stride(d))
                .sum();
            for i in 0..inputs {
                let base = spatial + i * input_stride + g * outputs * output_stride;
                packed.extend((0..outputs).map(|o| kernel[base + o * output_stride].to_sum()));
            }
            advance(&mut tap, &sizes);
        }
    }
    Ok(packed)
}

impl Geometry {
    /// The output (row-major `T`) from the padded input and the packed kernel: one task per
    /// group and block of output rows, each summing its taps' matrix products into the block;
    /// with `consume`, each task's block handed to it instead (see [`convolution_by_blocks`]).
    fn compute<T: MatMul>(
        &self,
        input: &[T::Sum],
        kernel: &[T::Sum],
        output: &mut [T],
        parallel: bool,
        consume: Option<&BlockConsumer<'_>>,
    ) -> Result<()> {
        // The tasks: every group, and every output coordinate but the rows' axis, the lines'
        // dimension (the last one left) counted in blocks of `lines`.
        let rows = &self.rows;
        let mut task_sizes = vec![self.groups];
        if !rows.batch {
            task_sizes.push(self.out_batch);
        }
        let spatial_tasks = self.positions.len() - usize::from(!rows.batch);
        task_sizes.extend(&self.positions[..spatial_tasks]);
        if let Some(lines) = task_sizes.last_mut().filter(|_| spatial_tasks > 0) {
            *lines = lines.div_ceil(rows.lines);
        }
        let tasks: usize = task_sizes.iter().product();
        let depth = self.depth();
        let columns = self.group_outputs;
        let taps: Vec<i64> = self.separate_taps().iter().map(|w| w.size as i64).collect();
        let tap_count: usize = taps.iter().map(|&t| t as usize).product();
        let shared = DisjointWrites::new(output);
        let work = self.positions.iter().product::<usize>() * self.out_batch * self.groups;
        let work = work.saturating_mul(columns).saturating_mul(depth * tap_count);
        let parallel = parallel && work >= PARALLEL_WORK && tasks > 1;
        // Groups of tasks whose blocks fit `GROUP_BYTES`, at least one per thread.
        let threads = if parallel { rayon::current_num_threads() } else { 1 };
        let block_bytes = (rows.lines * rows.pitch * columns * std::mem::size_of::<T::Sum>()).max(1);
        let groups = tasks.div_ceil((GROUP_BYTES / block_bytes).max(1)).max(threads).min(tasks);
        let group_tasks = tasks.div_ceil(groups.max(1));
        let groups = tasks.div_ceil(group_tasks.max(1));
        // Where task `task` reads and writes: its group, input and output bases, lines, rows.
        let place = |task: usize| -> Placed {
            // The task's coordinates, outermost first: group, batch (unless rows), positions.
            let mut coordinates = vec![0usize; task_sizes.len()];
            let mut rest = task;
            for d in (0..task_sizes.len()).rev() {
                coordinates[d] = rest % task_sizes[d];
                rest /= task_sizes[d];
            }
            let g = coordinates[0];
            let (batch, positions) = match rows.batch {
                true => (0, &mut coordinates[1..]),
                false => (coordinates[1], &mut coordinates[2..]),
            };
            let mut lines = 1;
            if let Some(first) = positions.last_mut() {
                *first *= rows.lines;
                lines = rows.lines.min(self.positions[spatial_tasks - 1] - *first);
            }
            let input_batch = if self.batch_groups { g * self.out_batch } else { 0 } + batch;
            let input_base = input_batch * self.padded_batch_stride
                + if self.feature_groups { g * self.group_inputs } else { 0 }
                + positions
                    .iter()
                    .enumerate()
                    .map(|(d, &o)| o * self.window[d].stride * self.padded_strides[d])
                    .sum::<usize>();
            let output_base = batch * self.output_batch_stride
                + g * columns * self.output_feature_stride
                + positions.iter().zip(&self.output_spatial_strides).map(|(&o, &s)| o * s).sum::<usize>();
            Placed { g, input_base, output_base, product_rows: (lines - 1) * rows.pitch + rows.len }
        };
        let line_stride = spatial_tasks.checked_sub(1).map_or(0, |d| self.output_spatial_strides[d]);
        let write = |placed: &Placed, block: &[T::Sum]| {
            for (r, sums) in block.chunks(columns).enumerate() {
                let (line, row) = (r / rows.pitch, r % rows.pitch);
                if row >= rows.len {
                    continue;
                }
                let start = placed.output_base + line * line_stride + row * rows.output_stride;
                // SAFETY (both): each output element belongs to one task (its group, batch and
                // positions) and one line, row and column of it, so no two writes meet; where
                // the columns are contiguous, the row's part holds only them.
                if self.output_feature_stride == 1 {
                    let Some(part) = (unsafe { shared.part(start, columns) }) else { continue };
                    part.iter_mut().zip(sums).for_each(|(cell, &sum)| *cell = T::narrow_sum(sum));
                } else {
                    for (c, &sum) in sums.iter().enumerate() {
                        unsafe { shared.write(start + c * self.output_feature_stride, T::narrow_sum(sum)) };
                    }
                }
            }
        };
        // Where each tap (of those summed apart) reads the padded input, from a row's start.
        let mut tap = vec![0i64; taps.len()];
        let tap_offsets: Vec<usize> = (0..tap_count)
            .map(|_| {
                let offset = tap
                    .iter()
                    .enumerate()
                    .map(|(d, &t)| t as usize * self.window[d].dilation * self.padded_strides[d])
                    .sum();
                advance(&mut tap, &taps);
                offset
            })
            .collect();
        // On the register tile, each task's taps sum in registers: a segment per tap (its
        // depth in blocks), consecutive segments sharing a block up to `TILE_DEPTH`.
        let mut segments: Vec<Vec<Segment>> = Vec::new();
        for (j, &offset) in tap_offsets.iter().enumerate() {
            for first in (0..depth).step_by(TILE_DEPTH) {
                let segment = Segment {
                    a_offset: offset + first,
                    k_start: j * depth + first,
                    len: TILE_DEPTH.min(depth - first),
                };
                match segments.last_mut() {
                    Some(block) if block.iter().map(|s| s.len).sum::<usize>() + segment.len <= TILE_DEPTH => {
                        block.push(segment)
                    }
                    _ => segments.push(vec![segment]),
                }
            }
        }
        // The tile's operands for a task: the padded input's rows and the group's kernel.
        let tile_operands = |placed: &Placed| -> Option<(LhsRows<'_>, Rhs<'_>)> {
            let (input, kernel) = (T::Sum::as_f32(input)?, T::Sum::as_f32(kernel)?);
            let lhs = LhsRows::strided(input, placed.input_base, rows.input_stride, placed.product_rows);
            let kernel_base = placed.g * tap_count * depth * columns;
            Some((lhs, Rhs::new(kernel, kernel_base, [columns, 1], tap_count * depth, columns)?))
        };
        // The tile writes an f32 output in place where its features are contiguous.
        let rows_out =
            OutRows { row_stride: rows.output_stride, pitch: rows.pitch, len: rows.len, line_stride };
        let in_place = T::IS_F32 && self.output_feature_stride == 1;
        let tile_in_place = |placed: &Placed, buffer: &mut Packed| -> bool {
            let Some((lhs, rhs)) = tile_operands(placed).filter(|_| in_place) else { return false };
            // SAFETY: the span holds every kept row's columns of the task's output, which no
            // other task writes (see `write`); `T` is `f32`, so the pointer's type is its own.
            let extent = rows_out.extent(placed.product_rows, columns);
            let Some(at) = (unsafe { shared.span(placed.output_base, extent) }) else { return false };
            unsafe { gemm::product(lhs, &segments, rhs, 0..rhs.panels(), at.cast(), rows_out, false, buffer) }
        };
        let tile_into = |placed: &Placed, block: &mut [T::Sum], buffer: &mut Packed| -> bool {
            let (Some((lhs, rhs)), Some(block)) = (tile_operands(placed), T::Sum::as_f32_mut(block)) else {
                return false;
            };
            // SAFETY: `block` holds the task's `product_rows × columns` row-major sums.
            unsafe {
                gemm::product(
                    lhs,
                    &segments,
                    rhs,
                    0..rhs.panels(),
                    block.as_mut_ptr(),
                    OutRows::matrix(columns),
                    false,
                    buffer,
                )
            }
        };
        // Else into a block per task, a group of tasks summing tap by tap, every task of the
        // group per tap, so a tap's kernel rows are read from cache by all of them.
        // For an epilogue, into a block laid out as the task's range of the output.
        let tile_for = |consume: &BlockConsumer<'_>,
                        placed: &Placed,
                        block: &mut Option<Literal>,
                        buffer: &mut Packed| {
            let refused = || Error::invalid("the register tile refused a convolution's block");
            let (lhs, rhs) = tile_operands(placed).ok_or_else(refused)?;
            let extent = rows_out.extent(placed.product_rows, columns);
            if block.as_ref().is_none_or(|b| (b.shape().element_count() as usize) < extent) {
                *block = Some(Literal::for_overwrite(&Shape::new(ElementType::F32, &[extent as i64]))?);
            }
            let block = block.as_mut().ok_or_else(refused)?;
            let memory = block.storage_mut()?.as_mut_slice::<f32>()?;
            // SAFETY: `memory` holds the `extent` elements the task's kept rows reach.
            let computed = unsafe {
                gemm::product(
                    lhs,
                    &segments,
                    rhs,
                    0..rhs.panels(),
                    memory.as_mut_ptr(),
                    rows_out,
                    false,
                    buffer,
                )
            };
            if !computed {
                return Err(refused());
            }
            consume(placed.output_base..placed.output_base + extent, block)
        };
        let run = |(blocks, buffer, block): &mut (Vec<T::Sum>, Packed, Option<Literal>),
                   group: usize|
         -> Result<()> {
            let mut placed: Vec<Placed> =
                (group * group_tasks..tasks.min((group + 1) * group_tasks)).map(place).collect();
            if let Some(consume) = consume {
                return placed.iter().try_for_each(|p| tile_for(consume, p, block, buffer));
            }
            placed.retain(|p| !tile_in_place(p, buffer));
            let starts: Vec<usize> = placed
                .iter()
                .scan(0, |start, p| {
                    let here = *start;
                    *start += p.product_rows * columns;
                    Some(here)
                })
                .collect();
            blocks
                .resize(placed.iter().map(|p| p.product_rows * columns).sum(), <T::Sum as NativeType>::ZERO);
            let on_tiles = placed.iter().zip(&starts).all(|(p, &start)| {
                tile_into(p, &mut blocks[start..start + p.product_rows * columns], buffer)
            });
            for (j, &offset) in tap_offsets.iter().enumerate().filter(|_| !on_tiles) {
                for (p, &start) in placed.iter().zip(&starts) {
                    let a = (input, (p.input_base + offset) as isize, [rows.input_stride as isize, 1]);
                    let b_base = (p.g * tap_count + j) * depth * columns;
                    let b = (kernel, b_base as isize, [columns as isize, 1]);
                    let block = &mut blocks[start..start + p.product_rows * columns];
                    product_into(a, b, block, [p.product_rows, depth, columns], j > 0);
                }
            }
            for (p, &start) in placed.iter().zip(&starts) {
                write(p, &blocks[start..start + p.product_rows * columns]);
            }
            Ok(())
        };
        if parallel {
            (0..groups).into_par_iter().try_for_each_init(|| (Vec::new(), Packed::default(), None), run)
        } else {
            let mut scratch = (Vec::new(), Packed::default(), None);
            (0..groups).try_for_each(|group| run(&mut scratch, group))
        }
    }
}
