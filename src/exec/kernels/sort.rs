//! `sort` and `top_k`. Sort runs a stable merge sort on every slice along its dimension, in
//! parallel across slices, with the comparator compiled to a native comparison where it is one
//! (`lt`/`gt` of the first operand) and applied as a scalar function otherwise; a merge sort
//! never misbehaves with a comparator that is not a strict weak order (plain `lt` with NaNs).
//! `top_k` is a selection by XLA's total order, ties to the lower index.

use std::cmp::Ordering;

use rayon::prelude::*;

use crate::attributes::ComparisonDirection;
use crate::error::{invalid_argument, Result};
use crate::exec::element::Element;
use crate::exec::scalar_program::Scalar;
use crate::literal::Literal;
use crate::storage::{with_native_type, NativeType};

/// How a sort compares two elements.
pub(crate) enum Comparator<'f> {
    /// `compare(operand0[a], operand0[b]), direction`: a native comparison of the keys.
    Keys(ComparisonDirection),
    /// Any comparator, applied to scalars.
    Scalars(Less<'f>),
}

/// A comparator applied to scalars: `less(lhs0, rhs0, lhs1, rhs1, …)`, given a scratch vector.
pub(crate) type Less<'f> = &'f (dyn Fn(&[Scalar], &mut Vec<Scalar>) -> Result<bool> + Sync);

/// Below this many elements a sort runs on the calling thread.
const PARALLEL_ELEMENTS: usize = 1 << 14;

/// Sorts `operands` (of one set of dimensions) along `dimension` together, by `comparator`,
/// into `outs` (one per operand, any layouts).
pub(crate) fn sort(
    operands: &[&Literal],
    dimension: usize,
    comparator: &Comparator<'_>,
    parallel: bool,
    outs: &mut [&mut Literal],
) -> Result<()> {
    let Some(first) = operands.first() else { return Ok(()) };
    if let (Comparator::Keys(direction), [out]) = (comparator, &mut *outs) {
        if operands.len() == 1 && sort_values(first, dimension, *direction, parallel, out)? {
            return Ok(());
        }
    }
    let dimensions = first.shape().dimensions().to_vec();
    let length = dimensions.get(dimension).copied().unwrap_or(1) as usize;
    let count = first.shape().element_count() as usize;
    if count == 0 {
        return Ok(());
    }
    let slices = count / length;
    // The slices' starting indices, row-major over the other dimensions.
    let slice_index = |s: usize| -> Vec<i64> {
        let mut index = vec![0i64; dimensions.len()];
        let mut rest = s;
        for d in (0..dimensions.len()).rev().filter(|&d| d != dimension) {
            index[d] = (rest % dimensions[d] as usize) as i64;
            rest /= dimensions[d] as usize;
        }
        index
    };
    // Every slice's permutation: the order its elements go in.
    let permutation_of = |s: usize| -> Result<Vec<u32>> {
        let index = slice_index(s);
        let positions = |literal: &Literal| -> Vec<usize> {
            let strides = literal.shape().strides();
            let base: i64 = index.iter().zip(&strides).map(|(i, s)| i * s).sum();
            (0..length)
                .map(|i| (base + i as i64 * strides.get(dimension).copied().unwrap_or(0)) as usize)
                .collect()
        };
        match comparator {
            Comparator::Keys(direction) => with_native_type!(first.element_type(), T => {
                let memory = first.memory::<T>()?;
                let keys: Vec<T> = positions(first).into_iter().map(|p| memory[p]).collect();
                Ok(sort_keys(&keys, *direction))
            }),
            Comparator::Scalars(less) => {
                let columns: Vec<Vec<Scalar>> = operands
                    .iter()
                    .map(|o| positions(o).into_iter().map(|p| Scalar::read(o, p)).collect())
                    .collect();
                let (mut arguments, mut registers) = (Vec::with_capacity(2 * columns.len()), Vec::new());
                let mut failure = None;
                let permutation = merge_sort_permutation(length, |a, b| {
                    arguments.clear();
                    for column in &columns {
                        arguments.push(column[a]);
                        arguments.push(column[b]);
                    }
                    less(&arguments, &mut registers).unwrap_or_else(|e| {
                        failure.get_or_insert(e);
                        false
                    })
                });
                failure.map_or(Ok(permutation), Err)
            }
        }
    };
    let permutations: Vec<Vec<u32>> = match parallel && count >= PARALLEL_ELEMENTS && slices > 1 {
        true => (0..slices).into_par_iter().map(permutation_of).collect::<Result<_>>()?,
        false => (0..slices).map(permutation_of).collect::<Result<_>>()?,
    };
    for (operand, out) in operands.iter().zip(outs.iter_mut()) {
        if operand.shape().dimensions() != out.shape().dimensions() {
            invalid_argument!("sort output {} for operand {}", out.shape(), operand.shape());
        }
        with_native_type!(operand.element_type(), T => {
            let (from_strides, to_strides) = (operand.shape().strides(), out.shape().strides());
            let source = operand.memory::<T>()?;
            let target = out.storage_mut()?.as_mut_slice::<T>()?;
            for (s, permutation) in permutations.iter().enumerate() {
                let index = slice_index(s);
                let base = |strides: &[i64]| index.iter().zip(strides).map(|(i, s)| i * s).sum::<i64>();
                let (from, to) = (base(&from_strides), base(&to_strides));
                let (from_step, to_step) = (from_strides[dimension], to_strides[dimension]);
                for (i, &p) in permutation.iter().enumerate() {
                    target[(to + i as i64 * to_step) as usize] = source[(from + i64::from(p) * from_step) as usize];
                }
            }
        });
    }
    Ok(())
}

/// One operand sorted by `lt` or `gt` of itself: each slice's values sorted directly (an
/// unstable sort, as fast as the standard library's), where equal keys are identical, so any
/// order of them is the stable one: no NaN (which `lt` does not order) and not both zeros.
/// Returns false, having written nothing, where that does not hold.
fn sort_values(
    operand: &Literal,
    dimension: usize,
    direction: ComparisonDirection,
    parallel: bool,
    out: &mut Literal,
) -> Result<bool> {
    let ascending = match direction {
        ComparisonDirection::Lt => true,
        ComparisonDirection::Gt => false,
        _ => return Ok(false),
    };
    let shape = operand.shape();
    if shape.dimensions() != out.shape().dimensions() || dimension >= shape.rank() {
        return Ok(false);
    }
    let length = shape.dimensions()[dimension] as usize;
    let count = shape.element_count() as usize;
    if length == 0 || count == 0 {
        return Ok(true);
    }
    let kept: Vec<usize> = (0..shape.rank()).filter(|&d| d != dimension).collect();
    let (from, to) = (shape.strides(), out.shape().strides());
    // The first buffer position of slice `s` (row-major over the kept dimensions).
    let base = |strides: &[i64], s: usize| -> i64 {
        let mut rest = s;
        kept.iter().rev().fold(0, |offset, &d| {
            let size = shape.dimensions()[d] as usize;
            let i = rest % size;
            rest /= size;
            offset + i as i64 * strides[d]
        })
    };
    with_native_type!(operand.element_type(), T => {
        let source = operand.memory::<T>()?;
        let zero = <T as NativeType>::ZERO;
        let (mut positive_zero, mut negative_zero) = (false, false);
        #[allow(clippy::eq_op)] // x == x is false exactly for NaN
        let no_nan = source.iter().all(|&v| {
            if v == zero {
                let negative = TotalOrder::total_cmp(&v, &zero) == Ordering::Less;
                negative_zero |= negative;
                positive_zero |= !negative;
            }
            v == v
        });
        if !no_nan || (positive_zero && negative_zero) {
            return Ok(false);
        }
        let slices = count / length;
        let sorted_slice = |s: usize| -> Vec<T> {
            let (b, step) = (base(&from, s), from[dimension]);
            let mut values: Vec<T> = (0..length).map(|i| source[(b + i as i64 * step) as usize]).collect();
            values.sort_unstable_by(|a, b| {
                let order = a.partial_cmp(b).unwrap_or(Ordering::Equal);
                if ascending { order } else { order.reverse() }
            });
            values
        };
        let sorted: Vec<Vec<T>> = if parallel && count >= PARALLEL_ELEMENTS && slices > 1 {
            (0..slices).into_par_iter().map(sorted_slice).collect()
        } else {
            (0..slices).map(sorted_slice).collect()
        };
        let target = out.storage_mut()?.as_mut_slice::<T>()?;
        for (s, values) in sorted.iter().enumerate() {
            let (b, step) = (base(&to, s), to[dimension]);
            for (i, &v) in values.iter().enumerate() {
                target[(b + i as i64 * step) as usize] = v;
            }
        }
    });
    Ok(true)
}

/// The stable order of `keys` by `compare(a, b), direction`. `lt` and `gt` over keys without
/// NaN are strict weak orders: the standard library's stable sort of (key, position) pairs
/// gives exactly the merge sort's order, faster. Anything else goes through the merge sort.
fn sort_keys<T: PartialOrd + Copy>(keys: &[T], direction: ComparisonDirection) -> Vec<u32> {
    #[allow(clippy::eq_op)] // x == x is false exactly for NaN
    let comparable = keys.iter().all(|k| k == k);
    let ascending = match direction {
        ComparisonDirection::Lt => true,
        ComparisonDirection::Gt => false,
        _ => return merge_sort_permutation(keys.len(), |a, b| compare(direction, keys[a], keys[b])),
    };
    if !comparable {
        return merge_sort_permutation(keys.len(), |a, b| compare(direction, keys[a], keys[b]));
    }
    let mut pairs: Vec<(T, u32)> = keys.iter().copied().zip(0..keys.len() as u32).collect();
    pairs.sort_by(|a, b| {
        let order = a.0.partial_cmp(&b.0).unwrap_or(Ordering::Equal);
        if ascending {
            order
        } else {
            order.reverse()
        }
    });
    pairs.into_iter().map(|(_, position)| position).collect()
}

/// `a < b` (for `Lt`), `a > b` (for `Gt`), …: what `compare(a, b), direction` gives.
fn compare<T: PartialOrd>(direction: ComparisonDirection, a: T, b: T) -> bool {
    use ComparisonDirection::*;
    match direction {
        Lt => a < b,
        Gt => a > b,
        Le => a <= b,
        Ge => a >= b,
        Eq => a == b,
        Ne => a != b,
    }
}

/// The stable order of `0..n` by `less`: runs of 16 by insertion sort, then merges, between two
/// buffers. Any `less` is fine: a merge only ever asks it about two elements.
fn merge_sort_permutation(n: usize, mut less: impl FnMut(usize, usize) -> bool) -> Vec<u32> {
    const RUN: usize = 16;
    let mut order: Vec<u32> = (0..n as u32).collect();
    for run in order.chunks_mut(RUN) {
        for i in 1..run.len() {
            let mut j = i;
            while j > 0 && less(run[j] as usize, run[j - 1] as usize) {
                run.swap(j, j - 1);
                j -= 1;
            }
        }
    }
    let mut buffer = vec![0u32; n];
    let mut width = RUN;
    while width < n {
        for (start, out) in (0..n).step_by(2 * width).zip(buffer.chunks_mut(2 * width)) {
            let middle = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (left, right) = (&order[start..middle], &order[middle..end]);
            let (mut i, mut j) = (0, 0);
            for slot in out.iter_mut() {
                // Take from the right only when it is strictly less: equal elements keep their
                // order.
                let take_right =
                    j < right.len() && (i == left.len() || less(right[j] as usize, left[i] as usize));
                if take_right {
                    *slot = right[j];
                    j += 1;
                } else {
                    *slot = left[i];
                    i += 1;
                }
            }
        }
        std::mem::swap(&mut order, &mut buffer);
        width *= 2;
    }
    order
}

/// XLA's total order of an element type: integers by value; floats by the signed magnitude of
/// their bits (-NaN < -inf < … < -0 < +0 < … < +inf < +NaN).
trait TotalOrder: Copy {
    fn total_cmp(&self, other: &Self) -> Ordering;
}

macro_rules! total_order_by_ord {
    ($($t:ty),*) => {$(
        impl TotalOrder for $t {
            fn total_cmp(&self, other: &Self) -> Ordering { self.cmp(other) }
        }
    )*};
}
total_order_by_ord!(bool, i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! total_order_of_floats {
    ($($t:ty),*) => {$(
        impl TotalOrder for $t {
            fn total_cmp(&self, other: &Self) -> Ordering { <$t>::total_cmp(self, other) }
        }
    )*};
}
total_order_of_floats!(f32, f64, half::f16, half::bf16);

/// `top_k`: along the last dimension of `operand`, the `k` largest (`largest`) or smallest
/// elements in XLA's total order, ties to the lower index, into `values` and `indices`
/// (default layouts).
pub(crate) fn top_k(
    operand: &Literal,
    k: usize,
    largest: bool,
    values: &mut Literal,
    indices: &mut Literal,
) -> Result<()> {
    with_native_type!(operand.element_type(), T => top_k_typed::<T>(operand, k, largest, values, indices))
}

fn top_k_typed<T: NativeType + Element + TotalOrder>(
    operand: &Literal,
    k: usize,
    largest: bool,
    values: &mut Literal,
    indices: &mut Literal,
) -> Result<()> {
    let row = operand.shape().dimensions().last().copied().unwrap_or(1) as usize;
    let data = operand.to_vec::<T>()?;
    // Whether `a` (at index `i`) goes before `b` (at `j`): by value in the total order
    // (reversed for the largest), then by index.
    let before = |(a, i): (T, u32), (b, j): (T, u32)| {
        let by_value = a.total_cmp(&b);
        let by_value = if largest { by_value.reverse() } else { by_value };
        by_value.then(i.cmp(&j)) == Ordering::Less
    };
    let top_of = |chunk: &[T]| -> Vec<(T, u32)> {
        let k = k.min(chunk.len());
        if k <= SMALL_K {
            // One pass keeping the best k in order: most elements lose to the k-th at once.
            let mut best: Vec<(T, u32)> = Vec::with_capacity(k + 1);
            for (i, &v) in chunk.iter().enumerate() {
                let candidate = (v, i as u32);
                if best.len() == k && !best.last().is_some_and(|&worst| before(candidate, worst)) {
                    continue;
                }
                let at = best.partition_point(|&held| before(held, candidate));
                best.insert(at, candidate);
                best.truncate(k);
            }
            return best;
        }
        let mut best: Vec<(T, u32)> = chunk.iter().copied().zip(0..chunk.len() as u32).collect();
        let order =
            |a: &(T, u32), b: &(T, u32)| if before(*a, *b) { Ordering::Less } else { Ordering::Greater };
        if k < best.len() {
            best.select_nth_unstable_by(k - 1, order);
        }
        best.truncate(k);
        best.sort_unstable_by(order);
        best
    };
    let rows: Vec<Vec<(T, u32)>> = if data.len() >= PARALLEL_ELEMENTS {
        data.par_chunks(row.max(1)).map(top_of).collect()
    } else {
        data.chunks(row.max(1)).map(top_of).collect()
    };
    let top = rows.iter().flatten().map(|&(v, _)| v).collect();
    let where_ = rows.iter().flatten().map(|&(_, i)| i as i32).collect();
    *values = Literal::from_vec(values.shape(), top)?;
    *indices = Literal::from_vec(indices.shape(), where_)?;
    Ok(())
}

/// Up to this `k`, `top_k` keeps a sorted list of the best while it reads each row once.
const SMALL_K: usize = 64;
