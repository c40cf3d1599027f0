//! `sort` and `top_k`. Sort orders every slice along its dimension, in parallel across
//! slices: by native words when the comparator is an order of keys (`exec/comparator.rs`),
//! each element's keys turned into unsigned integers that order as the comparator does and
//! sorted with the element's position as the last key (so the order is the stable one); by a
//! stable merge sort calling the comparator (a compiled scalar program) otherwise, which never
//! misbehaves with a comparator that is not a strict weak order (plain `lt` with NaNs).
//! `top_k` is a selection by XLA's total order, ties to the lower index.

use std::borrow::Cow;

use rayon::prelude::*;

use crate::error::{invalid_argument, Result};
use crate::exec::comparator::{Key, KeyMap};
use crate::exec::scalar_program::Scalar;
use crate::literal::Literal;
use crate::storage::{with_native_type, NativeType};

/// A comparator applied to scalars: `less(lhs0, rhs0, lhs1, rhs1, …)`, given a scratch vector.
pub(crate) type Less<'f> = &'f (dyn Fn(&[Scalar], &mut Vec<Scalar>) -> Result<bool> + Sync);

/// Below this many elements a sort runs on the calling thread.
const PARALLEL_ELEMENTS: usize = 1 << 14;

/// Sorts `operands` (of one set of dimensions) along `dimension` together into `outs` (one per
/// operand, any layouts): by `keys` where the comparator is an order of them, else (and for a
/// slice whose plain float keys hold a NaN, which `compare` leaves unordered) by `less`.
pub(crate) fn sort(
    operands: &[&Literal],
    dimension: usize,
    keys: Option<&[Key]>,
    less: Less<'_>,
    parallel: bool,
    outs: &mut [&mut Literal],
) -> Result<()> {
    let Some(first) = operands.first() else { return Ok(()) };
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
        if let Some(permutation) = keys.and_then(|keys| keyed_permutation(operands, keys, &positions)) {
            return Ok(permutation);
        }
        let columns: Vec<Vec<Scalar>> =
            operands.iter().map(|o| positions(o).into_iter().map(|p| Scalar::read(o, p)).collect()).collect();
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

/// The stable order of one slice (its elements at `positions(operand)` of each operand) by
/// `keys`, as native words; `None` if a plain float key holds a NaN.
fn keyed_permutation(
    operands: &[&Literal],
    keys: &[Key],
    positions: &dyn Fn(&Literal) -> Vec<usize>,
) -> Option<Vec<u32>> {
    let words: Vec<(Vec<u64>, u32)> = keys
        .iter()
        .map(|key| {
            let operand = operands.get(key.operand)?;
            with_native_type!(operand.element_type(), T => {
                let memory = operand.memory::<T>().ok()?;
                let flip = if key.descending { u64::MAX >> (64 - T::WORD_BITS) } else { 0 };
                let words = positions(operand)
                    .into_iter()
                    .map(|p| memory[p].word(key.map).map(|w| w ^ flip))
                    .collect::<Option<Vec<u64>>>()?;
                Some((words, T::WORD_BITS))
            })
        })
        .collect::<Option<_>>()?;
    let length = words.first().map_or(0, |(w, _)| w.len());
    Some(match &words[..] {
        // One key of at most 32 bits: the word and the position packed in one u64.
        [(word, bits)] if *bits <= 32 => {
            let mut packed: Vec<u64> = word.iter().enumerate().map(|(i, &w)| (w << 32) | i as u64).collect();
            packed.sort_unstable();
            packed.into_iter().map(|p| p as u32).collect()
        }
        [(word, _)] => {
            let mut pairs: Vec<(u64, u32)> = word.iter().copied().zip(0..length as u32).collect();
            pairs.sort_unstable();
            pairs.into_iter().map(|(_, position)| position).collect()
        }
        _ => {
            let mut order: Vec<u32> = (0..length as u32).collect();
            order.sort_unstable_by(|&a, &b| {
                words
                    .iter()
                    .map(|(w, _)| w[a as usize].cmp(&w[b as usize]))
                    .find(|o| o.is_ne())
                    .unwrap_or_else(|| a.cmp(&b))
            });
            order
        }
    })
}

/// A value as a sort word: an unsigned integer of [`SortWord::WORD_BITS`] bits that orders as
/// a key map orders the values.
trait SortWord: Copy {
    /// The bits of a word.
    const WORD_BITS: u32;
    /// The word of the value under `map`; `None` for a value `map` leaves unordered (a NaN
    /// compared plainly).
    fn word(self, map: KeyMap) -> Option<u64>;
}

macro_rules! sort_word_of_integers {
    ($($t:ty: $bits:expr, $unsigned:ty),*) => {$(
        impl SortWord for $t {
            const WORD_BITS: u32 = $bits;
            // Integers order alike in every map: the sign bit flipped makes them unsigned.
            fn word(self, _map: KeyMap) -> Option<u64> {
                #[allow(clippy::unnecessary_cast)]
                let sign = <$t>::MIN as $unsigned;
                Some(((self as $unsigned) ^ sign) as u64)
            }
        }
    )*};
}
sort_word_of_integers!(i8: 8, u8, i16: 16, u16, i32: 32, u32, i64: 64, u64, u8: 8, u8, u16: 16, u16, u32: 32, u32, u64: 64, u64);

impl SortWord for bool {
    const WORD_BITS: u32 = 1;
    fn word(self, _map: KeyMap) -> Option<u64> {
        Some(u64::from(self))
    }
}

macro_rules! sort_word_of_floats {
    ($($t:ty: $bits:expr, $nan:expr),*) => {$(
        impl SortWord for $t {
            const WORD_BITS: u32 = $bits;
            fn word(self, map: KeyMap) -> Option<u64> {
                let zero = <$t as NativeType>::ZERO;
                #[allow(clippy::eq_op)] // x != x exactly for NaN
                let value = match map {
                    KeyMap::Plain if self != self => return None,
                    // -0 and +0 are equal under `compare`, and jax's canonicalization.
                    KeyMap::Plain | KeyMap::Canonical if self == zero => zero,
                    KeyMap::Canonical if self != self => $nan,
                    _ => self,
                };
                // The total order's word: the sign bit set for positive values, every bit
                // flipped for negative ones.
                let bits = u64::from(value.to_bits());
                let sign = 1u64 << ($bits - 1);
                Some(if bits & sign != 0 { !bits & (u64::MAX >> (64 - $bits)) } else { bits | sign })
            }
        }
    )*};
}
sort_word_of_floats!(
    f32: 32, f32::NAN,
    half::f16: 16, half::f16::NAN,
    half::bf16: 16, half::bf16::NAN
);

impl SortWord for f64 {
    const WORD_BITS: u32 = 64;
    fn word(self, map: KeyMap) -> Option<u64> {
        #[allow(clippy::eq_op)] // x != x exactly for NaN
        let value = match map {
            KeyMap::Plain if self != self => return None,
            KeyMap::Plain | KeyMap::Canonical if self == 0.0 => 0.0,
            KeyMap::Canonical if self != self => f64::NAN,
            _ => self,
        };
        let bits = value.to_bits();
        Some(if bits >> 63 == 1 { !bits } else { bits | 1 << 63 })
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

fn top_k_typed<T: NativeType + SortWord>(
    operand: &Literal,
    k: usize,
    largest: bool,
    values: &mut Literal,
    indices: &mut Literal,
) -> Result<()> {
    let row = operand.shape().dimensions().last().copied().unwrap_or(1).max(1) as usize;
    // The rows in row-major order: the operand's own memory when that is its layout.
    let data: Cow<'_, [T]> = match operand.slice::<T>() {
        Some(memory) if operand.shape().layout().is_default() => Cow::Borrowed(memory),
        _ => Cow::Owned(operand.to_vec::<T>()?),
    };
    // Each element as its word in the total order, reversed for the largest: the best have
    // the smallest (word, index) pairs, ties going to the lower index.
    let flip = if largest { u64::MAX } else { 0 };
    let word = |v: T| v.word(KeyMap::TotalOrder).unwrap_or(0) ^ flip;
    let top_of = |chunk: &[T]| -> Vec<(u64, u32)> {
        let k = k.min(chunk.len());
        if k == 0 {
            return vec![];
        }
        if k <= SMALL_K {
            // One pass keeping the best k in order. Blocks of words are tested against the
            // k-th best at once (a vectorized test): most blocks lose whole, and a later
            // element equal to a kept one loses too.
            let mut best: Vec<(u64, u32)> = Vec::with_capacity(k + 1);
            for (b, block) in chunk.chunks(TOP_K_BLOCK).enumerate() {
                let mut words = [0u64; TOP_K_BLOCK];
                words.iter_mut().zip(block).for_each(|(w, &v)| *w = word(v));
                let words = &words[..block.len()];
                if best.len() == k {
                    let worst = best[k - 1].0;
                    if !words.iter().fold(false, |any, &w| any | (w < worst)) {
                        continue;
                    }
                }
                for (j, &w) in words.iter().enumerate() {
                    if best.len() == k && w >= best[k - 1].0 {
                        continue;
                    }
                    let at = best.partition_point(|&(held, _)| held <= w);
                    best.insert(at, (w, (b * TOP_K_BLOCK + j) as u32));
                    best.truncate(k);
                }
            }
            return best;
        }
        let mut best: Vec<(u64, u32)> = chunk.iter().zip(0..).map(|(&v, i)| (word(v), i)).collect();
        if k < best.len() {
            best.select_nth_unstable(k - 1);
        }
        best.truncate(k);
        best.sort_unstable();
        best
    };
    let rows: Vec<Vec<(u64, u32)>> = if data.len() >= PARALLEL_ELEMENTS {
        data.par_chunks(row).map(top_of).collect()
    } else {
        data.chunks(row).map(top_of).collect()
    };
    let picked = || {
        rows.iter()
            .zip(data.chunks(row))
            .flat_map(|(best, chunk)| best.iter().map(move |&(_, i)| (chunk[i as usize], i)))
    };
    values.fill_from_vec(picked().map(|(v, _)| v).collect())?;
    indices.fill_from_vec(picked().map(|(_, i)| i as i32).collect())
}

/// How many elements of a row `top_k` tests against its k-th best at once.
const TOP_K_BLOCK: usize = 16;

/// Up to this `k`, `top_k` keeps a sorted list of the best while it reads each row once.
const SMALL_K: usize = 64;
