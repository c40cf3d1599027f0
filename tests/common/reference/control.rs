//! Ops that run computations of the recipe's own: `while_loop`, `conditional` (predicated or
//! indexed: an index out of range runs the last branch, as XLA does), `call` and `map`. Their
//! computations are expressions (`expr.rs`) over arrays of one set of dimensions and scalars,
//! evaluated element by element; a selector the reference does not know gives what all
//! branches agree on, and nothing else.

use crate::common::expr::{Expr, Kind, Val};
use crate::common::recipe::{loop_body, loop_condition};
use crate::common::reference::count;
use crate::common::reference::movement::unknown_array;
use crate::common::semantics::either;
use crate::common::values::{Array, Elem};
use lazy_xla::ElementType;

/// The most trips the reference runs a loop (the generator bounds its loops well below).
const MAX_TRIPS: usize = 64;

/// A computation's parameter: an array, or (a loop's state) a tuple of arrays.
enum Parameter<'a> {
    Array(&'a Array),
    Tuple(Vec<&'a Array>),
}

impl Parameter<'_> {
    fn kind(&self) -> Kind {
        let of = |a: &Array| Kind::Array { ty: a.ty, scalar: a.dims.is_empty() };
        match self {
            Parameter::Array(a) => of(a),
            Parameter::Tuple(arrays) => Kind::Tuple(arrays.iter().map(|a| of(a)).collect()),
        }
    }

    /// The value for the `i`-th of `n` elements: a scalar's one element, an array's `i`-th
    /// (unknown where there is none: then only scalar results are kept, which read none).
    fn value(&self, i: usize, n: usize) -> Val {
        let of = |a: &Array| {
            let e = match (a.dims.is_empty(), i < n) {
                (true, _) => a.elems[0],
                (false, true) => a.elems[i],
                (false, false) => Elem::unknown_of(a.ty),
            };
            Val::Leaf(a.ty, e)
        };
        match self {
            Parameter::Array(a) => of(a),
            Parameter::Tuple(arrays) => Val::Tuple(arrays.iter().map(|a| of(a)).collect()),
        }
    }

    /// The dimensions of its arrays that are not scalars (the computations of a recipe meet
    /// one set), if any.
    fn dims(&self) -> Option<Vec<i64>> {
        let arrays = match self {
            Parameter::Array(a) => vec![*a],
            Parameter::Tuple(arrays) => arrays.clone(),
        };
        arrays.iter().find(|a| !a.dims.is_empty()).map(|a| a.dims.clone())
    }
}

/// The arrays that the expressions `roots` (a computation's result, or the elements of its
/// tuple) make from `parameters`, element by element.
fn apply(roots: &[Expr], parameters: &[Parameter<'_>]) -> Vec<Array> {
    let dims = parameters.iter().find_map(Parameter::dims).unwrap_or_default();
    let kinds: Vec<Kind> = parameters.iter().map(Parameter::kind).collect();
    let n = count(&dims);
    let mut outputs: Vec<Array> = (roots.iter())
        .map(|root| {
            let kind = root.kind(&kinds);
            let dims = if kind.is_scalar() { vec![] } else { dims.clone() };
            Array { ty: kind.ty(), dims, elems: Vec::new() }
        })
        .collect();
    for i in 0..n.max(1) {
        let values: Vec<Val> = parameters.iter().map(|p| p.value(i, n)).collect();
        for (root, output) in roots.iter().zip(&mut outputs) {
            if (output.dims.is_empty() && i == 0) || (!output.dims.is_empty() && i < n) {
                output.elems.push(root.evaluate(&values).leaf().1);
            }
        }
    }
    outputs
}

/// `while_loop` over the state `init` (an `s32[]` counter first): the final state's arrays.
pub fn while_loop(init: &[&Array], limit: i32, body: &[Expr]) -> Vec<Array> {
    let (condition, body) = (loop_condition(limit), loop_body(body));
    let mut state: Vec<Array> = init.iter().map(|&a| a.clone()).collect();
    for _ in 0..MAX_TRIPS {
        let holds = apply(std::slice::from_ref(&condition), &[Parameter::Tuple(state.iter().collect())]);
        let holds = holds[0].elems[0];
        if holds.is_unknown() {
            return state.iter().map(|a| unknown_array(a.ty, &a.dims)).collect();
        }
        if holds.value.int() == 0 {
            return state;
        }
        state = apply(&body, &[Parameter::Tuple(state.iter().collect())]);
    }
    panic!("a loop of the recipe runs more than {MAX_TRIPS} trips")
}

/// `conditional` / `conditional_indexed`: branch `k` applied to operand `k`, `k` from the
/// selector (a `pred`: true runs branch 0; an `s32` out of range: the last branch).
pub fn conditional(selector: &Array, operands: &[&Array], branches: &[Vec<Expr>]) -> Vec<Array> {
    let run = |k: usize| apply(&branches[k], &[Parameter::Array(operands[k])]);
    let e = selector.elems[0];
    if !e.is_unknown() {
        let v = e.value.int();
        let k = match selector.ty {
            ElementType::Pred => usize::from(v == 0),
            _ if (0..branches.len() as i128).contains(&v) => v as usize,
            _ => branches.len() - 1,
        };
        return run(k);
    }
    let results: Vec<Vec<Array>> = (0..branches.len()).map(run).collect();
    let mut agreed = results[0].clone();
    for (position, array) in agreed.iter_mut().enumerate() {
        for (i, e) in array.elems.iter_mut().enumerate() {
            let candidates: Vec<Elem> = results.iter().map(|r| r[position].elems[i]).collect();
            *e = either(array.ty, &candidates);
        }
    }
    agreed
}

/// `call(xs, body)`: the computation's result arrays.
pub fn call(xs: &[&Array], body: &[Expr]) -> Vec<Array> {
    apply(body, &xs.iter().map(|&x| Parameter::Array(x)).collect::<Vec<_>>())
}

/// `map(xs, function)`: the scalar function applied to the operands' elements (a scalar
/// operand broadcast).
pub fn map(xs: &[&Array], function: &Expr) -> Array {
    let dims = xs.iter().find(|x| !x.dims.is_empty()).map_or(vec![], |x| x.dims.clone());
    let kinds: Vec<Kind> = xs.iter().map(|x| Kind::Array { ty: x.ty, scalar: true }).collect();
    let ty = function.kind(&kinds).ty();
    let elems = (0..count(&dims))
        .map(|i| {
            let values: Vec<Val> = (xs.iter())
                .map(|x| Val::Leaf(x.ty, if x.dims.is_empty() { x.elems[0] } else { x.elems[i] }))
                .collect();
            function.evaluate(&values).leaf().1
        })
        .collect();
    Array { ty, dims, elems }
}
