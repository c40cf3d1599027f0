//! Reductions: `reduce` and `reduce_variadic` over dimensions, and the folds of a reducer over
//! a group of terms in any order that windows, scatters, dots and convolutions share.
//!
//! A sum of `n` nonzero float terms may be off by `2·n·u·Σ|term|` (`u` the unit roundoff of the
//! type; sums of at most two nonzero terms of a reduce are exact), a product by
//! `2·n·u·|product|`; where the order could decide between overflow and a finite result,
//! between 0 and NaN, or the sign of a zero kept by the select-based max, the element is
//! unknown. A sum of nothing but -0 is 0 of either sign: XLA's CPU reduce gives +0 (its partial
//! accumulators start at +0), its dot -0; lazy-xla's dot gives +0 (a bug, pinned by
//! `dot_keeps_the_sign_of_negative_zero` in `fuzz_regressions.rs`). As lazy-xla documents, the
//! init value is applied once per output element and a reduce over no dimensions returns its
//! operand (XLA's CPU backend applies a non-identity init once per partial accumulator instead:
//! `reduce(ones[1000, 3], 10, add, {0})` gives 1330 there).
//!
//! jax's argmax (argmin) is order-independent but for NaNs: the NaN that wins is the one the
//! reducer meets first, so with two NaNs in a group the index is unknown.

use crate::common::recipe::computations::{Reducer, VariadicReducer};
use crate::common::reference::{count, indices, linear};
use crate::common::semantics::{self, xla_max, xla_min, zero_of_either_sign, BinaryKind};
use crate::common::values::{
    max_finite, min_normal, min_subnormal, round_float, unit_roundoff, Array, Elem, Value,
};
use lazy_xla::ElementType;

/// The groups of elements of `x` that reducing `dimensions` folds together, in row-major order,
/// and the result's dimensions.
fn groups(x: &Array, dimensions: &[i64]) -> (Vec<i64>, Vec<Vec<Elem>>) {
    let kept: Vec<usize> = (0..x.dims.len()).filter(|d| !dimensions.contains(&(*d as i64))).collect();
    let dims: Vec<i64> = kept.iter().map(|&d| x.dims[d]).collect();
    let mut groups: Vec<Vec<Elem>> = vec![Vec::new(); count(&dims)];
    for (position, index) in indices(&x.dims).iter().enumerate() {
        let out: Vec<i64> = kept.iter().map(|&d| index[d]).collect();
        groups[linear(&dims, &out)].push(x.elems[position]);
    }
    (dims, groups)
}

/// `reduce(x, init, reducer, dimensions)`.
pub fn reduce(x: &Array, init: Elem, reducer: Reducer, dimensions: &[i64]) -> Array {
    if dimensions.is_empty() {
        return x.clone();
    }
    let (dims, groups) = groups(x, dimensions);
    let elems = groups.iter().map(|terms| fold(reducer, x.ty, init, terms)).collect();
    Array { ty: x.ty, dims, elems }
}

/// `reduce_variadic(xs, inits, reducer, dimensions)`: the tuple's arrays.
pub fn reduce_variadic(
    xs: &[&Array],
    inits: &[&Array],
    reducer: VariadicReducer,
    dimensions: &[i64],
) -> Vec<Array> {
    let (values, positions) = (xs[0], xs[1]);
    if dimensions.is_empty() {
        return vec![values.clone(), positions.clone()];
    }
    let (dims, value_groups) = groups(values, dimensions);
    let (_, position_groups) = groups(positions, dimensions);
    let (init, init_position) = (inits[0].elems[0], inits[1].elems[0]);
    let pairs = value_groups.iter().zip(&position_groups).map(|(v, p)| match reducer {
        VariadicReducer::Sums => {
            (fold(Reducer::Add, values.ty, init, v), fold(Reducer::Add, positions.ty, init_position, p))
        }
        _ => {
            let all_values: Vec<Elem> = std::iter::once(init).chain(v.iter().copied()).collect();
            let all_positions: Vec<Elem> = std::iter::once(init_position).chain(p.iter().copied()).collect();
            arg_extreme(reducer == VariadicReducer::Argmax, values.ty, &all_values, &all_positions)
        }
    });
    let (reduced_values, reduced_positions): (Vec<Elem>, Vec<Elem>) = pairs.unzip();
    vec![
        Array { ty: values.ty, dims: dims.clone(), elems: reduced_values },
        Array { ty: positions.ty, dims, elems: reduced_positions },
    ]
}

/// jax's argmax (`max`) or argmin of a group of `(value, index)` pairs, the init's among them:
/// the extreme value (NaN if any), and the lowest index among the values equal to it (the
/// NaN's index if there is one NaN). With inexact values the index is known only where one
/// term beats every other over their intervals.
fn arg_extreme(max: bool, ty: ElementType, values: &[Elem], positions: &[Elem]) -> (Elem, Elem) {
    let unknown_index = Elem::unknown(Value::Int(0));
    if values.iter().chain(positions).any(Elem::is_unknown) {
        return (Elem::unknown(values[0].value), unknown_index);
    }
    let lowest = |candidates: Vec<usize>| {
        candidates.into_iter().min_by_key(|&k| positions[k].value.int()).expect("a group holds the init")
    };
    if !ty.is_float() {
        let ints: Vec<i128> = values.iter().map(|e| e.value.int()).collect();
        let extreme = if max { ints.iter().max() } else { ints.iter().min() }.copied().expect("the init");
        let best = lowest((0..ints.len()).filter(|&k| ints[k] == extreme).collect());
        return (values[best], positions[best]);
    }
    let floats: Vec<f64> = values.iter().map(|e| e.value.float()).collect();
    let nans: Vec<usize> = (0..floats.len()).filter(|&k| floats[k].is_nan()).collect();
    match nans[..] {
        [] => {}
        [one] => return (Elem::float(f64::NAN), positions[one]),
        _ => return (Elem::float(f64::NAN), unknown_index),
    }
    if values.iter().all(Elem::is_exact) {
        let extreme =
            floats[1..].iter().fold(floats[0], |a, &b| if max { xla_max(a, b) } else { xla_min(a, b) });
        let tied: Vec<usize> = (0..floats.len()).filter(|&k| floats[k] == extreme).collect();
        // Which of tied zeros of both signs the selects keep depends on the order.
        let value = match extreme == 0.0 {
            true => zero_of_either_sign(ty, &tied.iter().map(|&k| floats[k]).collect::<Vec<_>>()),
            false => Elem::float(extreme),
        };
        return (value, positions[lowest(tied)]);
    }
    let value = float_extreme(if max { Reducer::Max } else { Reducer::Min }, ty, values);
    let beats = |k: usize, j: usize| {
        let (gap, slack) = (floats[k] - floats[j], values[k].err + values[j].err);
        if max {
            gap > slack
        } else {
            -gap > slack
        }
    };
    let winner = (0..floats.len()).find(|&k| (0..floats.len()).all(|j| j == k || beats(k, j)));
    (value, winner.map_or(unknown_index, |k| positions[k]))
}

/// One element of a reduce: `init` and the reduced `terms` (row-major), combined in any order
/// (every reducer is associative and commutative up to rounding, NaNs and the sign of zero).
pub fn fold(reducer: Reducer, ty: ElementType, init: Elem, terms: &[Elem]) -> Elem {
    if terms.is_empty() {
        return init;
    }
    let all: Vec<Elem> = std::iter::once(init).chain(terms.iter().copied()).collect();
    if !ty.is_float() {
        let op = match reducer {
            Reducer::Add | Reducer::AddTimesOne => BinaryKind::Add,
            Reducer::Mul => BinaryKind::Mul,
            Reducer::Max | Reducer::MaxSelect | Reducer::MaxPlusZero => BinaryKind::Max,
            Reducer::Min => BinaryKind::Min,
            Reducer::And => BinaryKind::And,
            Reducer::Or => BinaryKind::Or,
        };
        return terms.iter().fold(init, |acc, &t| semantics::binary(op, ty, acc, t));
    }
    match reducer {
        Reducer::Add | Reducer::AddTimesOne => float_sum(ty, &all, 2),
        Reducer::Mul => float_product(ty, &all),
        Reducer::Max | Reducer::Min | Reducer::MaxSelect | Reducer::MaxPlusZero => {
            float_extreme(reducer, ty, &all)
        }
        Reducer::And | Reducer::Or => panic!("{reducer:?} on {ty}"),
    }
}

/// A float sum in any order: exact when at most `exact_up_to` terms are nonzero (and exact).
pub fn float_sum(ty: ElementType, terms: &[Elem], exact_up_to: usize) -> Elem {
    let nan = Elem::float(f64::NAN);
    if terms.iter().any(Elem::is_unknown) {
        return Elem::unknown(Value::Float(f64::NAN));
    }
    let values: Vec<f64> = terms.iter().map(|t| t.value.float()).collect();
    if values.iter().any(|v| v.is_nan())
        || (values.contains(&f64::INFINITY) && values.contains(&f64::NEG_INFINITY))
    {
        return nan;
    }
    let magnitude: f64 =
        terms.iter().filter(|t| t.value.float().is_finite()).map(|t| t.value.float().abs() + t.err).sum();
    let nonzero = terms.iter().filter(|t| t.value.float() != 0.0 || !t.is_exact()).count();
    let safe = magnitude * (1.0 + 2.0 * nonzero as f64 * unit_roundoff(ty)) < max_finite(ty);
    if let Some(&infinite) = values.iter().find(|v| v.is_infinite()) {
        return if safe { Elem::float(infinite) } else { Elem::unknown(Value::Float(infinite)) };
    }
    if !safe {
        return Elem::unknown(Value::Float(f64::NAN));
    }
    if nonzero == 0 {
        // A sum of zeros is +0 if any is +0; of -0s alone, -0 or +0 (see the module docs).
        let positive = values.iter().any(|v| v.is_sign_positive());
        return if positive {
            Elem::float(0.0)
        } else {
            Elem { value: Value::Float(0.0), err: min_subnormal(ty) }
        };
    }
    let v = round_float(ty, values.iter().sum());
    if nonzero <= exact_up_to && terms.iter().all(Elem::is_exact) {
        return Elem::float(v);
    }
    let n = nonzero as f64;
    let propagated: f64 = terms.iter().map(|t| t.err).sum();
    let err = 2.0 * n * unit_roundoff(ty) * magnitude + propagated + n * min_subnormal(ty);
    Elem { value: Value::Float(v), err }
}

/// A float product in any order.
fn float_product(ty: ElementType, terms: &[Elem]) -> Elem {
    let unknown = Elem::unknown(Value::Float(f64::NAN));
    if terms.iter().any(Elem::is_unknown) {
        return unknown;
    }
    let values: Vec<f64> = terms.iter().map(|t| t.value.float()).collect();
    if values.iter().any(|v| v.is_nan()) {
        return Elem::float(f64::NAN);
    }
    if terms.iter().any(|t| !t.is_exact() && t.value.float().abs() <= 2.0 * t.err) {
        return unknown; // an interval near 0
    }
    let negative = values.iter().filter(|v| v.is_sign_negative()).count() % 2 == 1;
    let signed = |m: f64| if negative { -m } else { m };
    let has_zero = values.contains(&0.0);
    let has_inf = values.iter().any(|v| v.is_infinite());
    // How far partial products of the finite nonzero terms can grow or shrink, in log2.
    let finite: Vec<f64> =
        values.iter().filter(|v| v.is_finite() && **v != 0.0).map(|v| v.abs().log2()).collect();
    let may_overflow = finite.iter().map(|l| l.max(0.0)).sum::<f64>() >= max_finite(ty).log2() - 1.0;
    let may_underflow = finite.iter().map(|l| l.min(0.0)).sum::<f64>() <= min_normal(ty).log2() + 1.0;
    match (has_zero, has_inf) {
        (true, true) => Elem::float(f64::NAN),
        (true, false) if !may_overflow => Elem::float(signed(0.0)),
        (false, true) if !may_underflow => Elem::float(signed(f64::INFINITY)),
        (false, false) if !may_overflow && !may_underflow => {
            let v = round_float(ty, values.iter().product());
            let not_one = values.iter().filter(|v| v.abs() != 1.0).count();
            if not_one <= 2 && terms.iter().all(Elem::is_exact) {
                return Elem::float(v);
            }
            let relative: f64 = terms.iter().map(|t| t.err / t.value.float().abs()).sum();
            if relative > 0.01 {
                return unknown;
            }
            let n = terms.len() as f64;
            let err =
                v.abs() * (2.0 * n * unit_roundoff(ty) + (1.1 * relative).exp_m1()) + n * min_subnormal(ty);
            Elem { value: Value::Float(v), err }
        }
        _ => unknown,
    }
}

/// A float max or min in any order (`MaxSelect` does not propagate NaN: unknown with NaN, and
/// which zero it keeps depends on the order; `MaxPlusZero` turns a zero result into +0).
fn float_extreme(reducer: Reducer, ty: ElementType, terms: &[Elem]) -> Elem {
    if terms.iter().any(Elem::is_unknown) {
        return Elem::unknown(Value::Float(f64::NAN));
    }
    let values: Vec<f64> = terms.iter().map(|t| t.value.float()).collect();
    if values.iter().any(|v| v.is_nan()) {
        return if reducer == Reducer::MaxSelect {
            Elem::unknown(Value::Float(f64::NAN))
        } else {
            Elem::float(f64::NAN)
        };
    }
    let extreme = if reducer == Reducer::Min { xla_min } else { xla_max };
    let v = values[1..].iter().fold(values[0], |acc, &b| extreme(acc, b));
    let err = terms.iter().map(|t| t.err).fold(0.0, f64::max);
    if v == 0.0 && reducer == Reducer::MaxPlusZero {
        return Elem { value: Value::Float(0.0), err };
    }
    if v == 0.0 && err == 0.0 && reducer == Reducer::MaxSelect {
        // The select-based max keeps whichever zero the order brings first.
        return zero_of_either_sign(ty, &values);
    }
    if err == 0.0 {
        Elem::float(v)
    } else if v.abs() + err >= max_finite(ty) {
        Elem::unknown(Value::Float(v))
    } else {
        Elem { value: Value::Float(v), err }
    }
}
