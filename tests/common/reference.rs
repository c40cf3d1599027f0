//! The reference interpreter: evaluates a [`Recipe`] one element at a time over row-major
//! [`Array`]s, with XLA's shape rules written out plainly (broadcasting, slicing, padding,
//! reduction and dot index maps) and the element semantics of `semantics.rs`. It shares no code
//! with lazy-xla's executor and is meant to be obviously right rather than fast.
//!
//! Reductions and dots carry error bounds that allow any order of summation: a sum of `n`
//! nonzero float terms may be off by `2·n·u·Σ|term|` (`u` the unit roundoff of the type; sums of
//! at most two nonzero terms of a reduce, and dots with at most one nonzero product, are exact),
//! a product by `2·n·u·|product|`; where the order could decide between overflow and a finite
//! result, between 0 and NaN, or the sign of a zero kept by the select-based max, the element
//! is unknown. A sum of nothing but -0 is 0 of either sign: XLA's CPU reduce gives +0 (its
//! partial accumulators start at +0), its dot -0; lazy-xla's dot gives +0 (a bug, pinned by
//! `dot_keeps_the_sign_of_negative_zero` in `fuzz_regressions.rs`). As lazy-xla documents, the
//! init value is applied once per output element and a reduce over no dimensions returns its
//! operand (XLA's CPU backend applies a non-identity init once per partial accumulator instead:
//! `reduce(ones[1000, 3], 10, add, {0})` gives 1330 there).

use crate::common::recipe::{Id, Recipe, Reducer, Step};
use crate::common::semantics::{self, xla_max, xla_min, zero_of_either_sign, BinaryKind};
use crate::common::values::{
    max_finite, min_normal, min_subnormal, round_float, unit_roundoff, wrap, Array, Elem, Value,
};
use lazy_xla::{DotDimensionNumbers, ElementType};

/// The number of elements of `dims`.
pub fn count(dims: &[i64]) -> usize {
    dims.iter().product::<i64>() as usize
}

/// Every multi-index of `dims`, row-major.
pub fn indices(dims: &[i64]) -> Vec<Vec<i64>> {
    let mut all = vec![vec![]];
    for &d in dims {
        all = all.into_iter().flat_map(|p| (0..d).map(move |i| [p.clone(), vec![i]].concat())).collect();
    }
    all
}

/// The row-major position of `index` in `dims`.
fn linear(dims: &[i64], index: &[i64]) -> usize {
    index.iter().zip(dims).fold(0i64, |acc, (&i, &d)| acc * d + i) as usize
}

impl Array {
    /// The element at a multi-index.
    fn at(&self, index: &[i64]) -> Elem {
        self.elems[linear(&self.dims, index)]
    }

    /// An array of `dims` whose element at each index is `f(index)`.
    fn from_fn(ty: ElementType, dims: &[i64], f: impl Fn(&[i64]) -> Elem) -> Array {
        Array { ty, dims: dims.to_vec(), elems: indices(dims).iter().map(|i| f(i)).collect() }
    }
}

/// Evaluates every step of the recipe.
pub fn evaluate(recipe: &Recipe) -> Vec<Array> {
    let mut arrays = Vec::with_capacity(recipe.steps.len());
    for step in &recipe.steps {
        let array = evaluate_step(&arrays, step);
        arrays.push(array);
    }
    arrays
}

/// XLA's broadcasting of a binary op's operands: the result's dimensions, and where each
/// dimension of the lower-rank (or, for equal ranks, the rhs) operand lands.
struct Broadcasting {
    dims: Vec<i64>,
    small: Vec<i64>,
    large: Vec<i64>,
    map: Vec<usize>,
    lhs_larger: bool,
}

impl Broadcasting {
    fn new(l: &Array, r: &Array, bdims: &[i64]) -> Broadcasting {
        let lhs_larger = l.dims.len() >= r.dims.len();
        let (small, large) = if lhs_larger { (&r.dims, &l.dims) } else { (&l.dims, &r.dims) };
        let map: Vec<usize> = if small.len() == large.len() {
            (0..small.len()).collect()
        } else {
            bdims.iter().map(|&d| d as usize).collect()
        };
        let mut dims = large.clone();
        for (i, &d) in map.iter().enumerate() {
            assert!(
                small[i] == large[d] || small[i] == 1 || large[d] == 1,
                "incompatible {small:?} {large:?}"
            );
            if large[d] == 1 {
                dims[d] = small[i];
            }
        }
        Broadcasting { dims, small: small.clone(), large: large.clone(), map, lhs_larger }
    }

    /// The lhs and rhs indices read for the result's `index` (size-1 dimensions read at 0).
    fn operand_indices(&self, index: &[i64]) -> (Vec<i64>, Vec<i64>) {
        let s = self.map.iter().enumerate().map(|(i, &d)| if self.small[i] == 1 { 0 } else { index[d] });
        let g = self.large.iter().enumerate().map(|(d, &n)| if n == 1 { 0 } else { index[d] });
        let (s, g): (Vec<i64>, Vec<i64>) = (s.collect(), g.collect());
        if self.lhs_larger {
            (g, s)
        } else {
            (s, g)
        }
    }
}

/// The dimensions of a select/clamp: those of the non-scalar arguments (scalars broadcast).
fn ternary_dims(arguments: &[&Array]) -> Vec<i64> {
    arguments.iter().find(|a| !a.dims.is_empty()).map(|a| a.dims.clone()).unwrap_or_default()
}

/// An element of `a` for an output index of a select/clamp (a scalar is read at []).
fn ternary_at(a: &Array, index: &[i64]) -> Elem {
    if a.dims.is_empty() {
        a.elems[0]
    } else {
        a.at(index)
    }
}

pub fn evaluate_step(arrays: &[Array], step: &Step) -> Array {
    let a = |id: &Id| &arrays[*id];
    match step {
        Step::Parameter { shape, values, .. } | Step::ConstantLiteral { shape, values } => {
            Array::exact(shape.element_type(), shape.dimensions(), values)
        }
        Step::ConstantR0 { ty, value } => Array::exact(*ty, &[], &[*value]),
        // The index converted to the type, as XLA does: wrapped into an integer type (s8's 128
        // is -128), rounded to a float type (f16's 2049 is 2048).
        Step::Iota { shape, dimension } => Array::from_fn(shape.element_type(), shape.dimensions(), |i| {
            let (ty, index) = (shape.element_type(), i[*dimension as usize] as i128);
            Elem::exact(match ty.is_float() {
                true => Value::Float(round_float(ty, index as f64)),
                false => Value::Int(wrap(ty, index)),
            })
        }),
        Step::Unary { op, x } => {
            let x = a(x);
            let elems = x.elems.iter().map(|&e| semantics::unary(*op, x.ty, e)).collect();
            Array { ty: op.result_type(x.ty), dims: x.dims.clone(), elems }
        }
        Step::Binary { op, lhs, rhs, broadcast_dimensions } => {
            let (l, r) = (a(lhs), a(rhs));
            let broadcasting = Broadcasting::new(l, r, broadcast_dimensions);
            Array::from_fn(l.ty, &broadcasting.dims, |i| {
                let (li, ri) = broadcasting.operand_indices(i);
                semantics::binary(*op, l.ty, l.at(&li), r.at(&ri))
            })
        }
        Step::Compare { op, lhs, rhs, broadcast_dimensions } => {
            let (l, r) = (a(lhs), a(rhs));
            let broadcasting = Broadcasting::new(l, r, broadcast_dimensions);
            Array::from_fn(ElementType::Pred, &broadcasting.dims, |i| {
                let (li, ri) = broadcasting.operand_indices(i);
                semantics::compare(*op, l.ty, l.at(&li), r.at(&ri))
            })
        }
        Step::Select { pred, on_true, on_false } => {
            let (p, t, f) = (a(pred), a(on_true), a(on_false));
            Array::from_fn(t.ty, &ternary_dims(&[p, t, f]), |i| {
                semantics::select(ternary_at(p, i), ternary_at(t, i), ternary_at(f, i))
            })
        }
        Step::Clamp { min, operand, max } => {
            let (lo, x, hi) = (a(min), a(operand), a(max));
            Array::from_fn(x.ty, &ternary_dims(&[x, lo, hi]), |i| {
                semantics::clamp(x.ty, ternary_at(lo, i), ternary_at(x, i), ternary_at(hi, i))
            })
        }
        Step::Convert { x, to } => {
            let x = a(x);
            let elems = x.elems.iter().map(|&e| semantics::convert(x.ty, *to, e)).collect();
            Array { ty: *to, dims: x.dims.clone(), elems }
        }
        Step::Broadcast { x, sizes } => {
            let x = a(x);
            let dims = [sizes.clone(), x.dims.clone()].concat();
            Array::from_fn(x.ty, &dims, |i| x.at(&i[sizes.len()..]))
        }
        Step::BroadcastInDim { x, dims, broadcast_dimensions } => {
            let x = a(x);
            Array::from_fn(x.ty, dims, |i| {
                let source: Vec<i64> = broadcast_dimensions
                    .iter()
                    .enumerate()
                    .map(|(j, &d)| if x.dims[j] == 1 { 0 } else { i[d as usize] })
                    .collect();
                x.at(&source)
            })
        }
        Step::Reshape { x, dims } => Array { dims: dims.clone(), ..a(x).clone() },
        Step::Transpose { x, permutation } => {
            let x = a(x);
            let dims: Vec<i64> = permutation.iter().map(|&p| x.dims[p as usize]).collect();
            Array::from_fn(x.ty, &dims, |i| {
                let mut source = vec![0; dims.len()];
                for (k, &p) in permutation.iter().enumerate() {
                    source[p as usize] = i[k];
                }
                x.at(&source)
            })
        }
        Step::Slice { x, start, limit, strides } => {
            let x = a(x);
            let dims: Vec<i64> =
                (0..x.dims.len()).map(|d| (limit[d] - start[d] + strides[d] - 1) / strides[d]).collect();
            Array::from_fn(x.ty, &dims, |i| {
                let source: Vec<i64> = (0..i.len()).map(|d| start[d] + i[d] * strides[d]).collect();
                x.at(&source)
            })
        }
        Step::Concat { xs, dimension } => {
            let parts: Vec<&Array> = xs.iter().map(a).collect();
            let k = *dimension as usize;
            let mut dims = parts[0].dims.clone();
            dims[k] = parts.iter().map(|p| p.dims[k]).sum();
            Array::from_fn(parts[0].ty, &dims, |i| {
                let mut source = i.to_vec();
                for part in &parts {
                    if source[k] < part.dims[k] {
                        return part.at(&source);
                    }
                    source[k] -= part.dims[k];
                }
                unreachable!("index {i:?} beyond the concatenation")
            })
        }
        Step::Pad { x, value, config } => {
            let (x, value) = (a(x), a(value).elems[0]);
            let dims: Vec<i64> = x
                .dims
                .iter()
                .zip(config)
                .map(|(&n, &[lo, hi, interior])| lo + hi + n + (n - 1).max(0) * interior)
                .collect();
            Array::from_fn(x.ty, &dims, |i| {
                let mut source = Vec::with_capacity(i.len());
                for (d, &[lo, _, interior]) in config.iter().enumerate() {
                    let q = i[d] - lo;
                    if q < 0 || q % (interior + 1) != 0 || q / (interior + 1) >= x.dims[d] {
                        return value;
                    }
                    source.push(q / (interior + 1));
                }
                x.at(&source)
            })
        }
        Step::Rev { x, dimensions } => {
            let x = a(x);
            Array::from_fn(x.ty, &x.dims, |i| {
                let mut source = i.to_vec();
                for &d in dimensions {
                    source[d as usize] = x.dims[d as usize] - 1 - i[d as usize];
                }
                x.at(&source)
            })
        }
        Step::Reduce { x, init, reducer, dimensions } => {
            let (x, init) = (a(x), a(init).elems[0]);
            if dimensions.is_empty() {
                return x.clone();
            }
            let kept: Vec<usize> = (0..x.dims.len()).filter(|d| !dimensions.contains(&(*d as i64))).collect();
            let dims: Vec<i64> = kept.iter().map(|&d| x.dims[d]).collect();
            let mut groups: Vec<Vec<Elem>> = vec![Vec::new(); count(&dims)];
            for (position, index) in indices(&x.dims).iter().enumerate() {
                let out: Vec<i64> = kept.iter().map(|&d| index[d]).collect();
                groups[linear(&dims, &out)].push(x.elems[position]);
            }
            let elems = groups.iter().map(|terms| reduce(*reducer, x.ty, init, terms)).collect();
            Array { ty: x.ty, dims, elems }
        }
        Step::Dot { lhs, rhs } => {
            let (l, r) = (a(lhs), a(rhs));
            let numbers = DotDimensionNumbers {
                lhs_contracting_dimensions: vec![if l.dims.len() == 1 { 0 } else { 1 }],
                rhs_contracting_dimensions: vec![0],
                lhs_batch_dimensions: vec![],
                rhs_batch_dimensions: vec![],
            };
            dot_general(l, r, &numbers)
        }
        Step::DotGeneral { lhs, rhs, numbers } => dot_general(a(lhs), a(rhs), numbers),
    }
}

/// XLA's DotGeneral: output dimensions are the batch dimensions, then the lhs's free dimensions,
/// then the rhs's, each in operand order.
fn dot_general(l: &Array, r: &Array, numbers: &DotDimensionNumbers) -> Array {
    let free = |rank: usize, batch: &[i64], contracting: &[i64]| -> Vec<usize> {
        (0..rank).filter(|&d| !batch.contains(&(d as i64)) && !contracting.contains(&(d as i64))).collect()
    };
    let (lb, rb) = (&numbers.lhs_batch_dimensions, &numbers.rhs_batch_dimensions);
    let (lc, rc) = (&numbers.lhs_contracting_dimensions, &numbers.rhs_contracting_dimensions);
    let lf = free(l.dims.len(), lb, lc);
    let rf = free(r.dims.len(), rb, rc);
    let dims: Vec<i64> = lb
        .iter()
        .map(|&d| l.dims[d as usize])
        .chain(lf.iter().map(|&d| l.dims[d]))
        .chain(rf.iter().map(|&d| r.dims[d]))
        .collect();
    let contracted: Vec<i64> = lc.iter().map(|&d| l.dims[d as usize]).collect();
    Array::from_fn(l.ty, &dims, |out| {
        let (batch, rest) = out.split_at(lb.len());
        let (lfree, rfree) = rest.split_at(lf.len());
        let mut li = vec![0i64; l.dims.len()];
        let mut ri = vec![0i64; r.dims.len()];
        for (k, &i) in batch.iter().enumerate() {
            li[lb[k] as usize] = i;
            ri[rb[k] as usize] = i;
        }
        for (k, &i) in lfree.iter().enumerate() {
            li[lf[k]] = i;
        }
        for (k, &i) in rfree.iter().enumerate() {
            ri[rf[k]] = i;
        }
        let pairs: Vec<(Elem, Elem)> = indices(&contracted)
            .iter()
            .map(|c| {
                for (k, &i) in c.iter().enumerate() {
                    li[lc[k] as usize] = i;
                    ri[rc[k] as usize] = i;
                }
                (l.at(&li), r.at(&ri))
            })
            .collect();
        dot_element(l.ty, &pairs)
    })
}

/// One element of a dot: the sum of the products.
fn dot_element(ty: ElementType, pairs: &[(Elem, Elem)]) -> Elem {
    if !ty.is_float() {
        let (add, mul) = (BinaryKind::Add, BinaryKind::Mul);
        let zero = Elem::int(0);
        return pairs
            .iter()
            .fold(zero, |acc, &(a, b)| semantics::binary(add, ty, acc, semantics::binary(mul, ty, a, b)));
    }
    let products: Vec<Elem> = pairs
        .iter()
        .map(|&(a, b)| {
            let (x, y) = (a.value.float(), b.value.float());
            // An f64 product of finite factors that overflows is infinite only if it is rounded
            // on its own: a fused multiply-add keeps it finite.
            let overflow = x.is_finite() && y.is_finite() && !(x * y).is_finite();
            let err = match (a.is_exact() && b.is_exact(), a.is_unknown() || b.is_unknown() || overflow) {
                (_, true) => f64::INFINITY,
                (true, _) => 0.0,
                _ => x.abs() * b.err + y.abs() * a.err + a.err * b.err,
            };
            Elem { value: Value::Float(x * y), err }
        })
        .collect();
    float_sum(ty, &products, 1)
}

/// One element of a reduce: `init` and the reduced `terms` (row-major).
fn reduce(reducer: Reducer, ty: ElementType, init: Elem, terms: &[Elem]) -> Elem {
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
        return all[1..].iter().fold(init, |acc, &t| semantics::binary(op, ty, acc, t));
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
fn float_sum(ty: ElementType, terms: &[Elem], exact_up_to: usize) -> Elem {
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
