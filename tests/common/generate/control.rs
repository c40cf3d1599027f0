//! Ops that run computations the generator writes: `while_loop` (a counter and one or two
//! arrays, a bounded trip count), `conditional` and `conditional_indexed` (selectors in and out
//! of range), `call` and `map`, their bodies random element-wise expressions ([`Expr`]).

use crate::common::expr::Expr;
use crate::common::generate::{Generator, TYPES};
use crate::common::recipe::{Id, Step};
use crate::common::semantics::{BinaryKind, CompareKind, UnaryKind};
use crate::common::values::{int_max, int_min, Value};
use lazy_xla::ElementType;

/// How deep the generator nests a computation's ops.
const DEPTH: usize = 2;

/// The most trips of a generated loop.
const MAX_TRIPS: usize = 3;

/// An expression a generated computation may read, and its element type.
#[derive(Clone)]
struct Leaf {
    expr: Expr,
    ty: ElementType,
}

impl Generator<'_> {
    /// A constant of `ty`, or a leaf (converted to `ty` where it has another type).
    fn term(&mut self, ty: ElementType, leaves: &[Leaf]) -> Expr {
        if leaves.is_empty() || self.choices.one_in(3) {
            return Expr::Constant(ty, self.value(ty));
        }
        let leaf = leaves[self.choices.pick(leaves.len())].clone();
        if leaf.ty == ty {
            leaf.expr
        } else {
            leaf.expr.convert(ty)
        }
    }

    /// A random element-wise expression of type `ty` built on `base` (of `ty`; an array where
    /// the result must be one), reading `leaves` and constants, at most `depth` ops deep.
    fn expression(&mut self, base: Expr, ty: ElementType, leaves: &[Leaf], depth: usize) -> Expr {
        if depth == 0 {
            return base;
        }
        let inner = |g: &mut Self, base: Expr| g.expression(base, ty, leaves, depth - 1);
        match self.choices.pick(6) {
            0 => base,
            1 => {
                let ops: Vec<UnaryKind> = UnaryKind::ALL
                    .into_iter()
                    .filter(|op| op.accepts(ty) && op.result_type(ty) == ty)
                    .collect();
                let op = self.choices.one_of(&ops);
                inner(self, base).unary(op)
            }
            2 | 3 => {
                let ops: Vec<BinaryKind> = BinaryKind::ALL.into_iter().filter(|op| op.accepts(ty)).collect();
                let op = self.choices.one_of(&ops);
                let (a, b) = (inner(self, base), self.term(ty, leaves));
                if self.choices.one_in(2) {
                    b.binary(op, a)
                } else {
                    a.binary(op, b)
                }
            }
            4 => {
                let op = self.choices.one_of(&CompareKind::ALL);
                let a = inner(self, base);
                let (b, c) = (self.term(ty, leaves), self.term(ty, leaves));
                a.clone().compare(op, b).select(a, c)
            }
            _ => {
                let through = self.choices.one_of(&TYPES);
                inner(self, base).convert(through).convert(ty)
            }
        }
    }

    /// `while_loop` carrying `x` (and now and then a companion) with a counter from a known
    /// start to a limit at most [`MAX_TRIPS`] above it.
    pub(super) fn while_loop(&mut self, x: Id) -> Option<Step> {
        let mut carried = vec![x];
        if self.choices.one_in(2) {
            carried.push(self.companion(x));
        }
        let start = self.value(ElementType::S32);
        let limit = (start.int() + self.choices.pick(MAX_TRIPS + 1) as i128).min(i128::from(i32::MAX)) as i32;
        let counter = match self.choices.one_in(2) {
            true => self.holding(ElementType::S32, &[], vec![start]),
            false => self.scalar(ElementType::S32, Some(start)),
        };
        let state = |k: usize| Expr::p(0).element(k);
        let mut leaves = vec![Leaf { expr: state(0), ty: ElementType::S32 }];
        leaves.extend(carried.iter().enumerate().map(|(k, &c)| Leaf { expr: state(k + 1), ty: self.ty(c) }));
        let body: Vec<Expr> = (0..carried.len())
            .map(|k| self.expression(state(k + 1), leaves[k + 1].ty, &leaves, DEPTH))
            .collect();
        let output = if self.choices.one_in(5) { 0 } else { 1 + self.choices.pick(carried.len()) };
        let init = std::iter::once(counter).chain(carried).collect();
        Some(Step::While { init, limit, body, output })
    }

    /// `conditional` (a `pred` selector) or `conditional_indexed` (an `s32` one, in range or
    /// not) over `x` and companions, each branch a function of its operand returning one or
    /// two arrays.
    pub(super) fn conditional(&mut self, x: Id) -> Option<Step> {
        let indexed = self.choices.one_in(2);
        let branches = if indexed { 1 + self.choices.pick(3) } else { 2 };
        let selector = match indexed {
            true => {
                let count = branches as i128;
                let k = self.choices.one_of(&[
                    0,
                    1,
                    2,
                    count,
                    -1,
                    int_min(ElementType::S32),
                    int_max(ElementType::S32),
                ]);
                self.holding(ElementType::S32, &[], vec![Value::Int(k)])
            }
            false => match self.existing(ElementType::Pred, &[]) {
                Some(pred) if self.choices.one_in(2) => pred,
                _ => {
                    let value = self.value(ElementType::Pred);
                    self.holding(ElementType::Pred, &[], vec![value])
                }
            },
        };
        let operands: Vec<Id> = (0..branches).map(|k| if k == 0 { x } else { self.companion(x) }).collect();
        let results: Vec<ElementType> = (0..1 + self.choices.pick(2))
            .map(|j| if j == 0 && !self.choices.one_in(3) { self.ty(x) } else { self.choices.one_of(&TYPES) })
            .collect();
        let bodies = (operands.iter())
            .map(|&operand| {
                let leaf = Leaf { expr: Expr::p(0), ty: self.ty(operand) };
                (results.iter())
                    .map(|&ty| {
                        let base =
                            if leaf.ty == ty { leaf.expr.clone() } else { leaf.expr.clone().convert(ty) };
                        self.expression(base, ty, std::slice::from_ref(&leaf), DEPTH)
                    })
                    .collect()
            })
            .collect();
        let output = self.choices.pick(results.len());
        Some(Step::Conditional { indexed, selector, operands, branches: bodies, output })
    }

    /// `call` of a computation of `x`, companions and now and then a scalar, returning one or
    /// two arrays.
    pub(super) fn call(&mut self, x: Id) -> Option<Step> {
        let mut xs = vec![x];
        for _ in 0..self.choices.pick(2) {
            xs.push(self.companion(x));
        }
        if self.choices.one_in(3) {
            let ty = self.choices.one_of(&TYPES);
            xs.push(self.scalar(ty, None));
        }
        let leaves: Vec<Leaf> =
            xs.iter().enumerate().map(|(k, &v)| Leaf { expr: Expr::p(k), ty: self.ty(v) }).collect();
        let body: Vec<Expr> = (0..1 + self.choices.pick(2))
            .map(|_| {
                let base = leaves[self.choices.pick(xs.len().min(2))].clone();
                let ty = if self.choices.one_in(3) { self.choices.one_of(&TYPES) } else { base.ty };
                let base = if base.ty == ty { base.expr } else { base.expr.convert(ty) };
                self.expression(base, ty, &leaves, DEPTH)
            })
            .collect();
        let output = self.choices.pick(body.len());
        Some(Step::Call { xs, body, output })
    }

    /// `map` of a scalar function over `x` and operands of its type (arrays of its dimensions
    /// or scalars), returning its type or another.
    pub(super) fn map(&mut self, x: Id) -> Option<Step> {
        let (ty, dims) = (self.ty(x), self.dims(x));
        let mut xs = vec![x];
        for _ in 0..self.choices.pick(3) {
            let other = match self.choices.pick(4) {
                3 => self.scalar(ty, None),
                2 => self.existing(ty, &dims).unwrap_or(x),
                _ => self.fresh(ty, &dims),
            };
            xs.push(other);
        }
        let leaves: Vec<Leaf> = (0..xs.len()).map(|k| Leaf { expr: Expr::p(k), ty }).collect();
        let function = self.expression(Expr::p(0), ty, &leaves, DEPTH);
        let function = match self.choices.one_in(3) {
            true => function.convert(self.choices.one_of(&TYPES)),
            false => function,
        };
        Some(Step::Map { xs, function })
    }
}
