//! The reference interpreter: evaluates a [`Recipe`] one element at a time over row-major
//! [`Array`]s, with XLA's shape rules and index maps written out plainly, one file per op family,
//! and the element semantics of `semantics.rs` and `bits.rs`. It shares no code with lazy-xla's
//! executor and is meant to be obviously right rather than fast.
//!
//! Where XLA leaves an order open (the order of a sum, of the updates a scatter applies to one
//! element, of equal keys in an unstable sort) the reference allows every order: float sums
//! carry error bounds (`reduction.rs`), and what no bound covers is unknown (any value passes).
//! Each file says what it pins and what it leaves open.
//!
//! It was checked against XLA itself once (10,000 generated graphs in default layouts, their
//! HLO text run by jaxlib 0.6.0's CPU backend): the two agree but where XLA's constant folding
//! errs (`clz` of negative constants, unsigned constant starts read as signed, integer
//! convolutions of constants saturating, `-0` constants parsed as `+0`), where a reduce's init
//! meets a reduced dimension of one (XLA's simplifier drops the init; lazy-xla applies it once,
//! as it documents), and on subnormal float results, which XLA's CPU runtime flushes to zero.

mod contraction;
mod control;
mod elementwise;
mod indexing;
mod movement;
pub mod random;
mod reduction;
mod sorting;
mod windows;

pub use indexing::scatter_targets;
pub use windows::window_output_dims;

use crate::common::recipe::{Id, Recipe, Step};
use crate::common::values::{Array, Elem};
use lazy_xla::ElementType;

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
    pub(crate) fn at(&self, index: &[i64]) -> Elem {
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

/// The value of one step, its operands among `arrays`.
pub fn evaluate_step(arrays: &[Array], step: &Step) -> Array {
    let a = |id: &Id| &arrays[*id];
    let all = |ids: &[Id]| ids.iter().map(a).collect::<Vec<_>>();
    match step {
        Step::Parameter { shape, values, .. } | Step::ConstantLiteral { shape, values } => {
            Array::exact(shape.element_type(), shape.dimensions(), values)
        }
        Step::ConstantR0 { ty, value } => Array::exact(*ty, &[], &[*value]),
        Step::Iota { shape, dimension } => movement::iota(shape, *dimension),
        Step::Unary { op, x } => elementwise::unary(*op, a(x)),
        Step::Binary { op, lhs, rhs, broadcast_dimensions } => {
            elementwise::binary(*op, a(lhs), a(rhs), broadcast_dimensions)
        }
        Step::Compare { op, lhs, rhs, broadcast_dimensions } => {
            elementwise::compare(*op, a(lhs), a(rhs), broadcast_dimensions)
        }
        Step::Select { pred, on_true, on_false } => elementwise::select(a(pred), a(on_true), a(on_false)),
        Step::Clamp { min, operand, max } => elementwise::clamp(a(min), a(operand), a(max)),
        Step::Convert { x, to } => elementwise::convert(a(x), *to),
        Step::BitcastConvert { x, to } => elementwise::bitcast_convert(a(x), *to),
        Step::ReducePrecision { x, exponent_bits, mantissa_bits } => {
            elementwise::reduce_precision(a(x), *exponent_bits, *mantissa_bits)
        }
        Step::Broadcast { x, sizes } => movement::broadcast(a(x), sizes),
        Step::BroadcastInDim { x, dims, broadcast_dimensions } => {
            movement::broadcast_in_dim(a(x), dims, broadcast_dimensions)
        }
        Step::Reshape { x, dims } => Array { dims: dims.clone(), ..a(x).clone() },
        Step::Transpose { x, permutation } => movement::transpose(a(x), permutation),
        Step::Slice { x, start, limit, strides } => movement::slice(a(x), start, limit, strides),
        Step::Concat { xs, dimension } => movement::concat(&all(xs), *dimension),
        Step::Pad { x, value, config } => movement::pad(a(x), a(value).elems[0], config),
        Step::Rev { x, dimensions } => movement::rev(a(x), dimensions),
        Step::DynamicSlice { x, starts, sizes } => movement::dynamic_slice(a(x), &all(starts), sizes),
        Step::DynamicUpdateSlice { x, update, starts } => {
            movement::dynamic_update_slice(a(x), a(update), &all(starts))
        }
        Step::Gather { operand, indices, numbers, slice_sizes, .. } => {
            indexing::gather(a(operand), a(indices), numbers, slice_sizes)
        }
        Step::Scatter { operand, indices, updates, updater, numbers, .. } => {
            indexing::scatter(a(operand), a(indices), a(updates), *updater, numbers)
        }
        Step::Reduce { x, init, reducer, dimensions } => {
            reduction::reduce(a(x), a(init).elems[0], *reducer, dimensions)
        }
        Step::ReduceVariadic { xs, inits, reducer, dimensions, output } => {
            reduction::reduce_variadic(&all(xs), &all(inits), *reducer, dimensions).swap_remove(*output)
        }
        Step::ReduceWindow { x, init, reducer, window } => {
            windows::reduce_window(a(x), a(init).elems[0], *reducer, window)
        }
        Step::SelectAndScatter { x, select, window, source, init } => {
            windows::select_and_scatter(a(x), *select, window, a(source), a(init).elems[0])
        }
        Step::Dot { lhs, rhs, options } => contraction::dot(a(lhs), a(rhs), options.as_ref()),
        Step::DotGeneral { lhs, rhs, numbers, options } => {
            contraction::dot_general(a(lhs), a(rhs), numbers, options.as_ref())
        }
        Step::Conv { lhs, rhs, conv, options } => contraction::conv(a(lhs), a(rhs), conv, options.as_ref()),
        Step::Sort { xs, comparator, dimension, stable, output } => {
            sorting::sort(&all(xs), *comparator, *dimension, *stable).swap_remove(*output)
        }
        Step::TopK { x, k, largest, output } => sorting::top_k(a(x), *k, *largest).swap_remove(*output),
        Step::RngBitGenerator { algorithm, state, shape, output } => {
            random::rng_bit_generator(*algorithm, a(state), shape).swap_remove(*output)
        }
        Step::While { init, limit, body, output } => {
            control::while_loop(&all(init), *limit, body).swap_remove(*output)
        }
        Step::Conditional { selector, operands, branches, output, .. } => {
            control::conditional(a(selector), &all(operands), branches).swap_remove(*output)
        }
        Step::Call { xs, body, output } => control::call(&all(xs), body).swap_remove(*output),
        Step::Map { xs, function } => control::map(&all(xs), function),
    }
}
