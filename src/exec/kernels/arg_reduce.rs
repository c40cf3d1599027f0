//! Argmax and argmin: the variadic reduce of values and their indices that jax's `argmax` and
//! `argmin` (and the usual hand-written reducer) make, computed row by row in two vectorizable
//! passes instead of applying the reducer element by element.
//!
//! Folding such a reducer over a row from its init values gives, when no value (init included)
//! is NaN: the extreme value `M` and the *lowest index value* among the elements equal to `M`
//! (the value's sign, for ±0, as each reducer's select picks it). When a NaN is present, jax's
//! reducer keeps the first NaN and its index; the hand-written one without a NaN clause is
//! computed by the exact sequential fold instead. Either way the result is the fold's, bit for
//! bit.

use rayon::prelude::*;

use crate::error::{invalid_argument, Result};
use crate::exec::element::Element;
use crate::literal::Literal;
use crate::storage::{with_native_type, NativeType};

/// Which reduction of (value, index) pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ArgExtreme {
    /// Argmax (else argmin).
    pub(crate) max: bool,
    /// A NaN wins (jax's reducer); else the reducer has no NaN clause.
    pub(crate) nan_wins: bool,
}

/// Below this many elements the rows run on the calling thread.
const PARALLEL_ELEMENTS: usize = 1 << 16;

/// Reduces `values` and `indices` (one set of dimensions) over `dimension`, from `inits`,
/// into `outs` (values, indices; the kept dimensions).
pub(crate) fn arg_reduce(
    kind: ArgExtreme,
    [values, indices]: [&Literal; 2],
    [init_value, init_index]: [&Literal; 2],
    dimension: usize,
    parallel: bool,
    [out_values, out_indices]: [&mut Literal; 2],
) -> Result<()> {
    with_native_type!(values.element_type(), T => {
        with_native_type!(indices.element_type(), I => {
            let init = (init_value.memory::<T>()?[0], init_index.memory::<I>()?[0]);
            rows::<T, I>(kind, values, indices, init, dimension, parallel, out_values, out_indices)
        })
    })
}

/// The reduction of every row along `dimension`, typed.
#[allow(clippy::too_many_arguments)]
fn rows<T: NativeType + Element, I: NativeType + Element>(
    kind: ArgExtreme,
    values: &Literal,
    indices: &Literal,
    init: (T, I),
    dimension: usize,
    parallel: bool,
    out_values: &mut Literal,
    out_indices: &mut Literal,
) -> Result<()> {
    let shape = values.shape();
    if indices.shape().dimensions() != shape.dimensions() || dimension >= shape.rank() {
        invalid_argument!("argmax of {} and {} over dimension {dimension}", shape, indices.shape());
    }
    let length = shape.dimensions()[dimension] as usize;
    let count = shape.element_count() as usize;
    let rows = count.checked_div(length).unwrap_or_else(|| out_values.shape().element_count() as usize);
    let (value_strides, index_strides) = (shape.strides(), indices.shape().strides());
    let kept: Vec<usize> = (0..shape.rank()).filter(|&d| d != dimension).collect();
    // The buffer positions of row `r` (row-major over the kept dimensions).
    let base = |strides: &[i64], r: usize| -> usize {
        let mut rest = r;
        let mut offset = 0;
        for &d in kept.iter().rev() {
            let size = shape.dimensions()[d] as usize;
            offset += (rest % size) as i64 * strides[d];
            rest /= size;
        }
        offset as usize
    };
    let (value_memory, index_memory) = (values.memory::<T>()?, indices.memory::<I>()?);
    let (value_step, index_step) = (value_strides[dimension] as usize, index_strides[dimension] as usize);
    let reduce_row = |r: usize| -> (T, I) {
        let (vb, ib) = (base(&value_strides, r), base(&index_strides, r));
        let row: Vec<T> = (0..length).map(|j| value_memory[vb + j * value_step]).collect();
        let row_indices: Vec<I> = (0..length).map(|j| index_memory[ib + j * index_step]).collect();
        reduce_one(kind, init, &row, &row_indices)
    };
    let results: Vec<(T, I)> = match parallel && count >= PARALLEL_ELEMENTS {
        true => (0..rows).into_par_iter().map(reduce_row).collect(),
        false => (0..rows).map(reduce_row).collect(),
    };
    let (v, i): (Vec<T>, Vec<I>) = results.into_iter().unzip();
    out_values.fill_from_vec(v)?;
    out_indices.fill_from_vec(i)
}

/// Whether `x` is NaN (the only value not equal to itself).
#[inline(always)]
#[allow(clippy::eq_op)]
fn is_nan<T: PartialEq>(x: T) -> bool {
    x != x
}

/// One row folded from `init`.
fn reduce_one<T: NativeType + Element, I: NativeType + Element>(
    kind: ArgExtreme,
    init: (T, I),
    row: &[T],
    indices: &[I],
) -> (T, I) {
    // A NaN anywhere: the first one wins for jax's reducer; the exact fold otherwise.
    let first_nan = if is_nan(init.0) { Some(None) } else { row.iter().position(|&x| is_nan(x)).map(Some) };
    match (first_nan, kind.nan_wins) {
        (Some(None), true) => return init,
        (Some(Some(j)), true) => return (row[j], indices[j]),
        (Some(_), false) => return sequential(kind, init, row, indices),
        (None, _) => {}
    }
    // Pass 1: the extreme value (a lane fold, which vectorizes).
    let better = |a: T, b: T| if kind.max { a > b } else { a < b };
    let extreme = row.iter().fold(init.0, |m, &x| if better(x, m) { x } else { m });
    // Pass 2: the lowest index value among the elements equal to it. jax's reducer takes the
    // value of the last of them (its value select does not look at the index); the other
    // takes the value of the element whose index it keeps.
    let mut best = (init.0 == extreme).then_some((init.0, init.1));
    for (&x, &index) in row.iter().zip(indices) {
        if x == extreme {
            best = Some(match best {
                Some((kept_value, kept)) if kept < index => {
                    (if kind.nan_wins { x } else { kept_value }, kept)
                }
                _ => (x, index),
            });
        }
    }
    best.unwrap_or(init)
}

/// The reducer without a NaN clause, folded in order: `a` wins if better, or equal with a
/// lower index.
fn sequential<T: NativeType + Element, I: NativeType + Element>(
    kind: ArgExtreme,
    init: (T, I),
    row: &[T],
    indices: &[I],
) -> (T, I) {
    row.iter().zip(indices).fold(init, |(av, ai), (&bv, &bi)| {
        let better = if kind.max { av > bv } else { av < bv };
        let a_wins = better || (av == bv && ai < bi);
        if a_wins {
            (av, ai)
        } else {
            (bv, bi)
        }
    })
}
