//! Element-wise ops over arrays: XLA's broadcasting of binary ops' operands, scalars in
//! select and clamp, and each element through `semantics.rs` (or `bits.rs` for bitcasts and
//! reduce_precision).

use crate::common::bits;
use crate::common::semantics::{self, BinaryKind, CompareKind, UnaryKind};
use crate::common::values::{Array, Elem};
use lazy_xla::ElementType;

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

/// `op(x)` element by element.
pub fn unary(op: UnaryKind, x: &Array) -> Array {
    let elems = x.elems.iter().map(|&e| semantics::unary(op, x.ty, e)).collect();
    Array { ty: op.result_type(x.ty), dims: x.dims.clone(), elems }
}

/// `op(l, r)` with XLA's broadcasting.
pub fn binary(op: BinaryKind, l: &Array, r: &Array, broadcast_dimensions: &[i64]) -> Array {
    let broadcasting = Broadcasting::new(l, r, broadcast_dimensions);
    Array::from_fn(l.ty, &broadcasting.dims, |i| {
        let (li, ri) = broadcasting.operand_indices(i);
        semantics::binary(op, l.ty, l.at(&li), r.at(&ri))
    })
}

/// The comparison `op(l, r)` with XLA's broadcasting.
pub fn compare(op: CompareKind, l: &Array, r: &Array, broadcast_dimensions: &[i64]) -> Array {
    let broadcasting = Broadcasting::new(l, r, broadcast_dimensions);
    Array::from_fn(ElementType::Pred, &broadcasting.dims, |i| {
        let (li, ri) = broadcasting.operand_indices(i);
        semantics::compare(op, l.ty, l.at(&li), r.at(&ri))
    })
}

/// `select(p, t, f)`, scalars broadcast.
pub fn select(p: &Array, t: &Array, f: &Array) -> Array {
    Array::from_fn(t.ty, &ternary_dims(&[p, t, f]), |i| {
        semantics::select(t.ty, ternary_at(p, i), ternary_at(t, i), ternary_at(f, i))
    })
}

/// `clamp(lo, x, hi)`, scalars broadcast.
pub fn clamp(lo: &Array, x: &Array, hi: &Array) -> Array {
    Array::from_fn(x.ty, &ternary_dims(&[x, lo, hi]), |i| {
        semantics::clamp(x.ty, ternary_at(lo, i), ternary_at(x, i), ternary_at(hi, i))
    })
}

/// `convert_element_type(x, to)`.
pub fn convert(x: &Array, to: ElementType) -> Array {
    let elems = x.elems.iter().map(|&e| semantics::convert(x.ty, to, e)).collect();
    Array { ty: to, dims: x.dims.clone(), elems }
}

/// `bitcast_convert_type(x, to)`.
pub fn bitcast_convert(x: &Array, to: ElementType) -> Array {
    let (dims, elems) = bits::bitcast_convert(x.ty, to, &x.dims, &x.elems);
    Array { ty: to, dims, elems }
}

/// `reduce_precision(x, exponent_bits, mantissa_bits)`.
pub fn reduce_precision(x: &Array, exponent_bits: i32, mantissa_bits: i32) -> Array {
    let elems =
        x.elems.iter().map(|&e| bits::reduce_precision(x.ty, e, exponent_bits, mantissa_bits)).collect();
    Array { ty: x.ty, dims: x.dims.clone(), elems }
}
