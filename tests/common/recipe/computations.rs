//! The computations a recipe hands to ops by kind: reducers, scatter update functions,
//! select_and_scatter's selections, sort comparators and variadic reducers, each a
//! [`Computation`] for given element types and a label naming it. The reference knows what each
//! kind means (an order-independent reduction, an order of keys) rather than evaluating its
//! expression; the ad-hoc computations of map, call, conditionals and loops are expressions the
//! reference evaluates.

use crate::common::expr::{Computation, Expr};
use crate::common::semantics::{BinaryKind, CompareKind};
use crate::common::values::{int_max, Value};
use lazy_xla::{ElementType, Shape};

/// A computation of scalar parameters of `types`.
fn scalar_computation(name: String, types: &[ElementType], root: Expr) -> Computation {
    Computation { name, parameters: types.iter().map(|&t| Shape::scalar(t)).collect(), root }
}

/// The names of element types, joined for a label.
fn type_names(types: &[ElementType]) -> String {
    types.iter().map(ElementType::to_string).collect::<Vec<_>>().join("_")
}

/// The reduction computations: the recognized single ops, and three that are not a single op
/// of the two parameters (so the interpreted reduce path runs) but still give results that do
/// not depend on the order of the reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reducer {
    Add,
    Mul,
    Max,
    Min,
    And,
    Or,
    /// `select(gt(a, b), a, b)`: max without NaN propagation.
    MaxSelect,
    /// `(a + b) * 1`.
    AddTimesOne,
    /// `max(a, b) + 0`.
    MaxPlusZero,
}

impl Reducer {
    /// Every reducer.
    pub const ALL: [Reducer; 9] = [
        Reducer::Add,
        Reducer::Mul,
        Reducer::Max,
        Reducer::Min,
        Reducer::And,
        Reducer::Or,
        Reducer::MaxSelect,
        Reducer::AddTimesOne,
        Reducer::MaxPlusZero,
    ];

    /// Whether the reducer applies to `ty` (and/or: pred and integers).
    pub fn accepts(self, ty: ElementType) -> bool {
        match self {
            Reducer::And | Reducer::Or => !ty.is_float(),
            _ => true,
        }
    }

    /// The name of the computation (and of its variable in a printed program).
    pub fn label(self, ty: ElementType) -> String {
        let name = match self {
            Reducer::Add => "add",
            Reducer::Mul => "mul",
            Reducer::Max => "max",
            Reducer::Min => "min",
            Reducer::And => "and",
            Reducer::Or => "or",
            Reducer::MaxSelect => "max_select",
            Reducer::AddTimesOne => "add_times_one",
            Reducer::MaxPlusZero => "max_plus_zero",
        };
        format!("{name}_{ty}")
    }

    /// The scalar `(ty, ty) -> ty` computation.
    pub fn computation(self, ty: ElementType) -> Computation {
        let (a, b) = (Expr::p(0), Expr::p(1));
        let constant = |v: i128| Expr::Constant(ty, Value::Int(v).into_type(ty));
        let root = match self {
            Reducer::Add => a.binary(BinaryKind::Add, b),
            Reducer::Mul => a.binary(BinaryKind::Mul, b),
            Reducer::Max => a.binary(BinaryKind::Max, b),
            Reducer::Min => a.binary(BinaryKind::Min, b),
            Reducer::And => a.binary(BinaryKind::And, b),
            Reducer::Or => a.binary(BinaryKind::Or, b),
            Reducer::MaxSelect => a.clone().compare(CompareKind::Gt, b.clone()).select(a, b),
            Reducer::AddTimesOne => a.binary(BinaryKind::Add, b).binary(BinaryKind::Mul, constant(1)),
            Reducer::MaxPlusZero => a.binary(BinaryKind::Max, b).binary(BinaryKind::Add, constant(0)),
        };
        scalar_computation(self.label(ty), &[ty, ty], root)
    }
}

/// A scatter's update computation `(current, update) -> new`: a reducer, or the update itself
/// (`(a, b) -> b`, which makes the result depend on the order of updates to one element).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Updater {
    Reduce(Reducer),
    Overwrite,
}

impl Updater {
    /// The computation's name.
    pub fn label(self, ty: ElementType) -> String {
        match self {
            Updater::Reduce(reducer) => reducer.label(ty),
            Updater::Overwrite => format!("overwrite_{ty}"),
        }
    }

    /// The scalar `(ty, ty) -> ty` computation.
    pub fn computation(self, ty: ElementType) -> Computation {
        match self {
            Updater::Reduce(reducer) => reducer.computation(ty),
            Updater::Overwrite => scalar_computation(self.label(ty), &[ty, ty], Expr::p(1)),
        }
    }
}

/// select_and_scatter's selection `(a, b) -> pred`, "keep a over b": `ge` keeps the first of
/// equal elements, `gt` the last (`le`, `lt` likewise for the smallest).
pub fn selection(direction: CompareKind, ty: ElementType) -> Computation {
    let name = format!("select_{}_{ty}", direction.name());
    scalar_computation(name, &[ty, ty], Expr::p(0).compare(direction, Expr::p(1)))
}

/// A sort comparator over the first `keys` operands' pairs `(lhs0, rhs0, lhs1, rhs1, …)`:
/// lexicographic, each key compared with `lt` (`gt` when `descending`) and tied with `eq`, as
/// jax's `_sort_lt_comparator` writes it. With `total_order`, float keys are compared in jax's
/// NaN-aware total order: zeros made +0 and NaNs the canonical NaN by selects, then, the
/// builder having no `TOTALORDER` comparison, the bits read as a signed integer whose
/// negative values (negative floats) are flipped, as `_float_to_int_for_sort` lowers
/// `jnp.sort` (bf16 through f32): `-∞ < … < 0 < … < ∞ < NaN`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Comparator {
    pub keys: usize,
    pub descending: bool,
    pub total_order: bool,
}

/// jax's total-order key of the float `x` of type `ty`.
fn total_order_key(x: Expr, ty: ElementType) -> Expr {
    let zero = |t: ElementType| Expr::Constant(t, Value::Int(0).into_type(t));
    let canonical = x.clone().compare(CompareKind::Eq, zero(ty)).select(zero(ty), x.clone());
    let nan = Expr::Constant(ty, Value::Float(f64::NAN));
    let canonical = x.clone().compare(CompareKind::Ne, x).select(nan, canonical);
    let (canonical, width) = match ty {
        ElementType::Bf16 => (canonical.convert(ElementType::F32), ElementType::F32),
        other => (canonical, other),
    };
    let (signed, unsigned) = match width {
        ElementType::F16 => (ElementType::S16, ElementType::U16),
        ElementType::F32 => (ElementType::S32, ElementType::U32),
        _ => (ElementType::S64, ElementType::U64),
    };
    let bits = canonical.clone().bitcast(signed);
    let largest = Expr::Constant(unsigned, Value::Int(int_max(signed)));
    let flipped = largest.binary(BinaryKind::Sub, canonical.bitcast(unsigned)).bitcast(signed);
    bits.clone().compare(CompareKind::Lt, zero(signed)).select(flipped, bits)
}

impl Comparator {
    /// The computation's name for operands of `types`.
    pub fn label(self, types: &[ElementType]) -> String {
        let direction = if self.descending { "gt" } else { "lt" };
        let order = if self.total_order { "_total" } else { "" };
        format!("sort_{direction}{order}_{}keys_{}", self.keys, type_names(types))
    }

    /// The comparator of operands of `types` (two scalar parameters per operand).
    pub fn computation(self, types: &[ElementType]) -> Computation {
        let key = |k: usize, side: usize| {
            let x = Expr::p(2 * k + side);
            match self.total_order && types[k].is_float() {
                true => total_order_key(x, types[k]),
                false => x,
            }
        };
        let direction = if self.descending { CompareKind::Gt } else { CompareKind::Lt };
        let mut root: Option<Expr> = None;
        for k in (0..self.keys).rev() {
            let before = key(k, 0).compare(direction, key(k, 1));
            root = Some(match root {
                None => before,
                Some(rest) => {
                    let tied = key(k, 0).compare(CompareKind::Eq, key(k, 1)).binary(BinaryKind::And, rest);
                    before.binary(BinaryKind::Or, tied)
                }
            });
        }
        let doubled: Vec<ElementType> = types.iter().flat_map(|&t| [t, t]).collect();
        scalar_computation(self.label(types), &doubled, root.expect("at least one key"))
    }
}

/// A variadic reduce's computation over `(accumulators…, values…)`: jax's argmax or argmin
/// of `(value, index)` pairs (a value wins if it is greater — smaller — or NaN, equal values
/// keep the lower index), or the two sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VariadicReducer {
    Argmax,
    Argmin,
    Sums,
}

impl VariadicReducer {
    /// The computation's name for operands of `types`.
    pub fn label(self, types: &[ElementType]) -> String {
        let name = match self {
            VariadicReducer::Argmax => "argmax",
            VariadicReducer::Argmin => "argmin",
            VariadicReducer::Sums => "sums",
        };
        format!("{name}_{}", type_names(types))
    }

    /// The `(T0, T1, T0, T1) -> (T0, T1)` computation, written as jax's `_compute_argminmax`
    /// writes its reducer.
    pub fn computation(self, types: &[ElementType]) -> Computation {
        let (x, x_index, y, y_index) = (Expr::p(0), Expr::p(1), Expr::p(2), Expr::p(3));
        let root = match self {
            VariadicReducer::Sums => {
                Expr::Tuple(vec![x.binary(BinaryKind::Add, y), x_index.binary(BinaryKind::Add, y_index)])
            }
            VariadicReducer::Argmax | VariadicReducer::Argmin => {
                let wins = if self == VariadicReducer::Argmax { CompareKind::Gt } else { CompareKind::Lt };
                let is_nan = x.clone().compare(CompareKind::Ne, x.clone());
                let pick_value = x.clone().compare(wins, y.clone()).binary(BinaryKind::Or, is_nan);
                let tie = x.clone().compare(CompareKind::Eq, y.clone());
                let lower = x_index.clone().compare(CompareKind::Lt, y_index.clone());
                let pick_index =
                    pick_value.clone().binary(BinaryKind::Or, tie.binary(BinaryKind::And, lower));
                Expr::Tuple(vec![pick_value.select(x, y), pick_index.select(x_index, y_index)])
            }
        };
        scalar_computation(self.label(types), &[types[0], types[1], types[0], types[1]], root)
    }
}
