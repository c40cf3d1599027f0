//! `reduce_window` and `select_and_scatter`: walks of a window over an operand. Padding and
//! the holes of a base dilation hold no element: they are never reduced nor selected.

use std::ops::Range;

use rayon::prelude::*;

use crate::attributes::{BinaryOp, ComparisonDirection, Window};
use crate::error::Result;
use crate::exec::element::{with_binary_fn, Element};
use crate::exec::kernels::interpreted::{Apply, Combine};
use crate::exec::kernels::scatter::copy_operand;
use crate::exec::scalar_program::Scalar;
use crate::literal::Literal;
use crate::storage::{with_native_type, NativeType};

/// For each walked dimension and each window position along it, the buffer offsets (index ×
/// stride) of the window's elements that lie inside the operand, in window order.
struct Walk {
    tables: Vec<Vec<Vec<usize>>>,
    /// The number of window positions along each walked dimension.
    positions: Vec<usize>,
}

impl Walk {
    /// The walk of `window` over the first `walked` dimensions of `operand` (whose buffer has
    /// `strides`), for `positions` window positions each (the output's sizes).
    fn new(window: &Window, dimensions: &[i64], strides: &[i64], positions: &[i64], walked: usize) -> Walk {
        let tables = (0..walked)
            .map(|d| {
                let w = &window.dimensions[d];
                // Only window elements that can land inside the dilated base are visited, so a
                // huge window over a small operand costs what the operand holds.
                let last = (dimensions[d] - 1).max(0) * w.base_dilation;
                (0..positions[d])
                    .map(|o| {
                        let origin = o * w.stride - w.padding_low;
                        let first = (-origin).max(0).div_euclid(w.window_dilation)
                            + i64::from((-origin).max(0) % w.window_dilation != 0);
                        let end =
                            (last - origin).div_euclid(w.window_dilation).saturating_add(1).clamp(0, w.size);
                        (first.min(end)..end)
                            .filter_map(|k| {
                                let dilated = o * w.stride + k * w.window_dilation - w.padding_low;
                                let inside = dilated >= 0 && dilated % w.base_dilation == 0;
                                let q = dilated / w.base_dilation;
                                (inside && q < dimensions[d]).then_some((q * strides[d]) as usize)
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect();
        Walk { tables, positions: positions[..walked].iter().map(|&p| p as usize).collect() }
    }

    /// Calls `visit(row, offsets)` for the window positions `rows` (row-major over the walked
    /// dimensions) with the offsets of their elements, in row-major window order.
    fn for_each(
        &self,
        rows: Range<usize>,
        mut visit: impl FnMut(usize, &[usize]) -> Result<()>,
    ) -> Result<()> {
        let mut index = vec![0usize; self.positions.len()];
        let mut rest = rows.start;
        for d in (0..index.len()).rev() {
            index[d] = rest % self.positions[d].max(1);
            rest /= self.positions[d].max(1);
        }
        let (mut offsets, mut next) = (Vec::new(), Vec::new());
        for row in rows {
            offsets.clear();
            offsets.push(0);
            for (d, &o) in index.iter().enumerate() {
                next.clear();
                for &base in &offsets {
                    next.extend(self.tables[d][o].iter().map(|&t| base + t));
                }
                std::mem::swap(&mut offsets, &mut next);
            }
            visit(row, &offsets)?;
            for d in (0..index.len()).rev() {
                index[d] += 1;
                if index[d] < self.positions[d] {
                    break;
                }
                index[d] = 0;
            }
        }
        Ok(())
    }
}

/// XLA's reduce window of `operand` from `init` into `out` (row-major: the plan lays it out).
pub(crate) fn reduce_window(
    operand: &Literal,
    init: &Literal,
    window: &Window,
    combine: Combine<'_>,
    out: &mut Literal,
    parallel: bool,
) -> Result<()> {
    let shape = operand.shape();
    let (dimensions, strides) = (shape.dimensions(), shape.strides());
    let positions = out.shape().dimensions().to_vec();
    let rank = shape.rank();
    match combine {
        Combine::Native(op) => {
            // The innermost dimension is read as a vector when the window does not move along
            // it and it is contiguous in both the operand and the output.
            let trivial = window.dimensions.last().is_some_and(|w| w.is_trivial());
            let vector = rank > 0 && trivial && strides[rank - 1] == 1;
            let (walked, row) = if vector { (rank - 1, dimensions[rank - 1] as usize) } else { (rank, 1) };
            let walk = Walk::new(window, dimensions, &strides, &positions, walked);
            with_native_type!(operand.element_type(), T => {
                let init = init.memory::<T>()?[0];
                let input = operand.memory::<T>()?;
                let output = out.storage_mut()?.as_mut_slice::<T>()?;
                with_binary_fn!(T, op, f => native_reduce_window(&walk, input, init, f, row, output, parallel))
            })
        }
        Combine::Interpreted(apply) => {
            let walk = Walk::new(window, dimensions, &strides, &positions, rank);
            let initial = Scalar::read(init, 0);
            let count = positions.iter().product::<i64>() as usize;
            let (mut arguments, mut results) = (Vec::with_capacity(2), Vec::with_capacity(1));
            walk.for_each(0..count, |row, offsets| {
                let mut accumulator = initial;
                for &offset in offsets {
                    arguments.clear();
                    arguments.extend([accumulator, Scalar::read(operand, offset)]);
                    results.clear();
                    apply(&arguments, &mut results)?;
                    accumulator = results.first().copied().unwrap_or(accumulator);
                }
                accumulator.store(out, row)
            })
        }
    }
}

/// The native reduce window: rows of `row` contiguous elements folded together, window
/// positions split across threads.
fn native_reduce_window<T: NativeType>(
    walk: &Walk,
    input: &[T],
    init: T,
    f: impl Fn(T, T) -> T + Sync,
    row: usize,
    output: &mut [T],
    parallel: bool,
) -> Result<()> {
    let run = |first: usize, chunk: &mut [T]| {
        let rows = first..first + chunk.len() / row.max(1);
        walk.for_each(rows, |r, offsets| {
            let accumulator = &mut chunk[(r - first) * row..(r - first + 1) * row];
            accumulator.fill(init);
            fold_rows(accumulator, input, offsets, &f);
            Ok(())
        })
    };
    if row == 0 {
        return Ok(());
    }
    let rows_per_chunk = (4096 / row).max(1);
    if parallel && output.len() >= 1 << 14 {
        output
            .par_chunks_mut(rows_per_chunk * row)
            .enumerate()
            .try_for_each(|(i, chunk)| run(i * rows_per_chunk, chunk))
    } else {
        run(0, output)
    }
}

/// `accumulator[i] = f(accumulator[i], input[offset + i])` for each offset in turn: a block
/// of the accumulator at a time, kept in registers while every offset folds into it, in the
/// widest vectors the machine has.
fn fold_rows<T: Copy>(accumulator: &mut [T], input: &[T], offsets: &[usize], f: &impl Fn(T, T) -> T) {
    /// The elements of a block: a 512-bit vector of `f32`.
    const BLOCK: usize = 16;
    #[inline(always)]
    fn fold<T: Copy>(accumulator: &mut [T], input: &[T], offsets: &[usize], f: &impl Fn(T, T) -> T) {
        let row = accumulator.len();
        let mut blocks = accumulator.chunks_exact_mut(BLOCK);
        for (b, block) in (&mut blocks).enumerate() {
            let mut sums: [T; BLOCK] = std::array::from_fn(|i| block[i]);
            for &offset in offsets {
                let x = &input[offset + b * BLOCK..offset + (b + 1) * BLOCK];
                sums = std::array::from_fn(|i| f(sums[i], x[i]));
            }
            block.copy_from_slice(&sums);
        }
        let done = row - blocks.into_remainder().len();
        let tail = &mut accumulator[done..];
        for &offset in offsets {
            for (a, &x) in tail.iter_mut().zip(&input[offset + done..offset + row]) {
                *a = f(*a, x);
            }
        }
    }
    /// # Safety
    /// The machine has AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn fold_avx512<T: Copy>(
        accumulator: &mut [T],
        input: &[T],
        offsets: &[usize],
        f: &impl Fn(T, T) -> T,
    ) {
        fold(accumulator, input, offsets, f)
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the machine has AVX-512F, just checked; the fold itself is safe code.
        return unsafe { fold_avx512(accumulator, input, offsets, f) };
    }
    fold(accumulator, input, offsets, f)
}

/// How select and scatter picks an element of each window and lands a source value on it:
/// natively, by a comparison of `(kept, candidate)` and a binary op, or by interpreted scalar
/// functions.
pub(crate) enum SelectScatter<'a> {
    Native(ComparisonDirection, BinaryOp),
    Interpreted { select: Apply<'a>, scatter: Apply<'a> },
}

/// XLA's select and scatter: `out` (the operand's shape) starts as `init`; for each window
/// position, `select(kept, candidate)` walks the window's elements (the first kept unless
/// `select` says no) and `scatter(out, source)` lands on the one kept.
pub(crate) fn select_and_scatter(
    [operand, source, init]: [&Literal; 3],
    window: &Window,
    functions: SelectScatter<'_>,
    out: &mut Literal,
) -> Result<()> {
    // Read the operand in the output's layout, so one offset addresses both.
    let relaid;
    let operand = if operand.shape() == out.shape() {
        operand
    } else {
        let mut copy = Literal::for_overwrite(out.shape())?;
        copy_operand(operand, &mut copy)?;
        relaid = copy;
        &relaid
    };
    let shape = out.shape().clone();
    let (dimensions, strides) = (shape.dimensions(), shape.strides());
    let positions = source.shape().dimensions().to_vec();
    let source_positions: Vec<usize> = source.shape().row_major_offsets().collect();
    let count = source_positions.len();
    let (select, scatter) = match functions {
        SelectScatter::Native(direction, op) => {
            // Rows of the innermost dimension are walked as one where the window does not move
            // along it and it is contiguous: each lane then selects apart.
            let rank = shape.rank();
            let vector = rank > 0
                && strides[rank - 1] == 1
                && window.dimensions.last().is_some_and(|w| w.is_trivial());
            let (walked, row) = if vector { (rank - 1, dimensions[rank - 1] as usize) } else { (rank, 1) };
            let walk = Walk::new(window, dimensions, &strides, &positions, walked);
            return with_native_type!(operand.element_type(), T => {
                let (input, updates) = (operand.memory::<T>()?, source.memory::<T>()?);
                let output = out.storage_mut()?.as_mut_slice::<T>()?;
                output.fill(init.memory::<T>()?[0]);
                with_binary_fn!(T, op, f => walk.for_each(0..count / row.max(1), |r, offsets| {
                    let Some((&first, rest)) = offsets.split_first() else { return Ok(()) };
                    for lane in 0..row {
                        let kept = rest.iter().fold(first + lane, |kept, &candidate| {
                            let candidate = candidate + lane;
                            if direction.holds(input[kept], input[candidate]) { kept } else { candidate }
                        });
                        output[kept] = f(output[kept], updates[source_positions[r * row + lane]]);
                    }
                    Ok(())
                }))
            });
        }
        SelectScatter::Interpreted { select, scatter } => (select, scatter),
    };
    let walk = Walk::new(window, dimensions, &strides, &positions, shape.rank());
    let initial = Scalar::read(init, 0);
    for position in 0..shape.buffer_len() as usize {
        initial.store(out, position)?;
    }
    let (mut arguments, mut results) = (Vec::with_capacity(2), Vec::with_capacity(1));
    walk.for_each(0..count, |row, offsets| {
        let Some((&first, rest)) = offsets.split_first() else { return Ok(()) };
        let mut kept = first;
        for &candidate in rest {
            arguments.clear();
            arguments.extend([Scalar::read(operand, kept), Scalar::read(operand, candidate)]);
            results.clear();
            select(&arguments, &mut results)?;
            if results.first() != Some(&Scalar::Pred(true)) {
                kept = candidate;
            }
        }
        arguments.clear();
        arguments.extend([Scalar::read(out, kept), Scalar::read(source, source_positions[row])]);
        results.clear();
        scatter(&arguments, &mut results)?;
        match results.first() {
            Some(value) => value.store(out, kept),
            None => Ok(()),
        }
    })
}
