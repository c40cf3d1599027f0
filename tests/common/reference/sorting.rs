//! `sort` and `top_k`, slice by slice along the sorted dimension.
//!
//! A comparator of `recipe::computations::Comparator` orders items by their first `keys`
//! operands, lexicographically: numbers by value (+0 tied with -0), and in jax's total order
//! NaNs tied above +∞. Plain `lt`/`gt` on a float NaN is no strict weak order, and the
//! reference cannot tell the order of keys inexact values may swap, so such a slice is unknown.
//! A stable sort keeps tied items in their order; an unstable one may permute them, so an
//! element of a tied group is known only where every item of the group holds the same value
//! (or a zero, of a sign the reference cannot tell, where they hold both zeros).
//!
//! `top_k` orders a row in XLA's total order (-0 below +0), largest (or smallest) first, ties
//! to the lower index. A NaN's place there depends on its sign, which the reference does not
//! track, so a row with a NaN (or an inexact value) is unknown.

use std::cmp::Ordering;

use crate::common::recipe::computations::Comparator;
use crate::common::reference::{indices, linear};
use crate::common::semantics::either;
use crate::common::values::{Array, Elem, Value};
use lazy_xla::ElementType;

/// A key as a comparator orders it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Key {
    Int(i128),
    /// A float that is not NaN, +0 for either zero.
    Float(f64),
    /// Any NaN (jax's total order ties them above every number).
    NaN,
}

impl Key {
    fn order(&self, other: &Key) -> Ordering {
        match (self, other) {
            (Key::Int(a), Key::Int(b)) => a.cmp(b),
            (Key::Float(a), Key::Float(b)) => a.partial_cmp(b).expect("no NaN"),
            (Key::NaN, Key::NaN) => Ordering::Equal,
            (Key::NaN, _) => Ordering::Greater,
            (_, Key::NaN) => Ordering::Less,
            (a, b) => panic!("keys of different types: {a:?}, {b:?}"),
        }
    }
}

/// The key of an element of `ty` under a comparator (`total_order` for floats), if the
/// reference knows where it sorts.
fn key(ty: ElementType, e: Elem, total_order: bool) -> Option<Key> {
    if !e.is_exact() {
        return None;
    }
    match e.value {
        Value::Int(v) => Some(Key::Int(v)),
        Value::Float(v) if v.is_nan() => total_order.then_some(Key::NaN),
        Value::Float(v) => Some(Key::Float(if v == 0.0 && ty.is_float() { 0.0 } else { v })),
    }
}

/// The slices along `dimension` of `dims`: for each, the positions of its items in row-major
/// order.
fn slices(dims: &[i64], dimension: usize) -> Vec<Vec<usize>> {
    (indices(dims).into_iter())
        .filter(|i| i.get(dimension) == Some(&0))
        .map(|start| {
            (0..dims[dimension])
                .map(|k| {
                    let mut at = start.clone();
                    at[dimension] = k;
                    linear(dims, &at)
                })
                .collect()
        })
        .collect()
}

/// `sort(xs, comparator, dimension, stable)`: every operand sorted.
pub fn sort(xs: &[&Array], comparator: Comparator, dimension: i64, stable: bool) -> Vec<Array> {
    let dims = &xs[0].dims;
    let dimension = if dimension < 0 { dims.len() - 1 } else { dimension as usize };
    let mut outputs: Vec<Array> = xs.iter().map(|&x| x.clone()).collect();
    for slice in slices(dims, dimension) {
        let keys: Option<Vec<Vec<Key>>> = (slice.iter())
            .map(|&p| {
                (0..comparator.keys).map(|k| key(xs[k].ty, xs[k].elems[p], comparator.total_order)).collect()
            })
            .collect();
        let Some(keys) = keys else {
            for (output, x) in outputs.iter_mut().zip(xs) {
                slice.iter().for_each(|&p| output.elems[p] = Elem::unknown_of(x.ty));
            }
            continue;
        };
        let compare = |a: usize, b: usize| {
            let ordering = (keys[a].iter().zip(&keys[b]))
                .map(|(x, y)| x.order(y))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal);
            if comparator.descending {
                ordering.reverse()
            } else {
                ordering
            }
        };
        let mut order: Vec<usize> = (0..slice.len()).collect();
        order.sort_by(|&a, &b| compare(a, b));
        for (output, x) in outputs.iter_mut().zip(xs) {
            let mut start = 0;
            while start < order.len() {
                let end = (start..order.len())
                    .find(|&e| compare(order[start], order[e]).is_ne())
                    .unwrap_or(order.len());
                let group: Vec<Elem> = order[start..end].iter().map(|&item| x.elems[slice[item]]).collect();
                let tied = either(x.ty, &group);
                for (offset, &item) in order[start..end].iter().enumerate() {
                    output.elems[slice[start + offset]] = if stable { x.elems[slice[item]] } else { tied };
                }
                start = end;
            }
        }
    }
    outputs
}

/// `top_k(x, k, largest)`: the values and their `s32` indices.
pub fn top_k(x: &Array, k: i64, largest: bool) -> Vec<Array> {
    let rank = x.dims.len();
    let mut dims = x.dims.clone();
    dims[rank - 1] = k;
    let mut values = Array { ty: x.ty, dims: dims.clone(), elems: Vec::new() };
    let mut positions = Array { ty: ElementType::S32, dims, elems: Vec::new() };
    for row in slices(&x.dims, rank - 1) {
        let row: Vec<Elem> = row.iter().map(|&p| x.elems[p]).collect();
        let known = row.iter().all(|e| e.is_exact() && !matches!(e.value, Value::Float(v) if v.is_nan()));
        if !known {
            values.elems.extend(std::iter::repeat_n(Elem::unknown_of(x.ty), k as usize));
            positions.elems.extend(std::iter::repeat_n(Elem::unknown_of(ElementType::S32), k as usize));
            continue;
        }
        let order = |a: &Elem, b: &Elem| match (a.value, b.value) {
            (Value::Float(a), Value::Float(b)) => a.total_cmp(&b),
            (a, b) => a.int().cmp(&b.int()),
        };
        let mut ranked: Vec<usize> = (0..row.len()).collect();
        ranked.sort_by(|&a, &b| {
            let by_value = order(&row[a], &row[b]);
            (if largest { by_value.reverse() } else { by_value }).then(a.cmp(&b))
        });
        for &i in &ranked[..k as usize] {
            values.elems.push(row[i]);
            positions.elems.push(Elem::int(i as i128));
        }
    }
    vec![values, positions]
}
