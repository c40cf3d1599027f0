//! Reductions: `reduce` (simple and interpreted reducers, the motifs that broke lazy-xla once),
//! `reduce_variadic` (jax's argmax and argmin, two sums), and the window ops `reduce_window`
//! and `select_and_scatter` with every form of padding, strides and dilations.

use crate::common::generate::Generator;
use crate::common::recipe::computations::{Reducer, VariadicReducer};
use crate::common::recipe::{Id, Step, Window, WindowPadding};
use crate::common::reference::window_output_dims;
use crate::common::semantics::{BinaryKind, CompareKind, UnaryKind};
use crate::common::values::{int_max, int_min, wrap, Value};
use lazy_xla::{ElementType, Padding};

impl Generator<'_> {
    /// The identity of `reducer` on `ty`.
    fn identity(reducer: Reducer, ty: ElementType) -> Value {
        let float = |v: f64| Value::Float(v);
        match (reducer, ty.is_float()) {
            (Reducer::Add | Reducer::AddTimesOne | Reducer::Or, false) => Value::Int(0),
            (Reducer::Add | Reducer::AddTimesOne, true) => float(0.0),
            (Reducer::Mul, false) => Value::Int(1),
            (Reducer::Mul, true) => float(1.0),
            (Reducer::And | Reducer::Or, true) => unreachable!("{reducer:?} on {ty}"),
            (Reducer::And, false) => Value::Int(wrap(ty, -1)),
            (Reducer::Max | Reducer::MaxSelect | Reducer::MaxPlusZero, true) => float(f64::NEG_INFINITY),
            (Reducer::Min, true) => float(f64::INFINITY),
            (Reducer::Max | Reducer::MaxSelect | Reducer::MaxPlusZero, false) => {
                Value::Int(if ty == ElementType::Pred { 0 } else { int_min(ty) })
            }
            (Reducer::Min, false) => Value::Int(if ty == ElementType::Pred { 1 } else { int_max(ty) }),
        }
    }

    /// `reduce` over some dimensions.
    pub(super) fn reduce(&mut self, x: Id) -> Option<Step> {
        let (ty, rank) = (self.ty(x), self.dims(x).len());
        let reducer = self.reducer(ty);
        let k = rank - self.choices.pick(rank + 1);
        let dimensions = self.choices.subset(rank, k);
        let init = self.init(reducer, ty);
        Some(Step::Reduce { x, init, reducer, dimensions })
    }

    /// An init value for `reducer` on `ty`: its identity mostly, else any scalar, new or
    /// existing.
    fn init(&mut self, reducer: Reducer, ty: ElementType) -> Id {
        match self.choices.pick(4) {
            3 => {
                let scalars: Vec<Id> =
                    (0..self.steps.len()).filter(|&i| self.ty(i) == ty && self.dims(i).is_empty()).collect();
                if scalars.is_empty() {
                    self.scalar(ty, None)
                } else {
                    self.choices.one_of(&scalars)
                }
            }
            2 => self.scalar(ty, None),
            _ => self.scalar(ty, Some(Self::identity(reducer, ty))),
        }
    }

    /// A reducer XLA takes on `ty`.
    fn reducer(&mut self, ty: ElementType) -> Reducer {
        let reducers: Vec<Reducer> = Reducer::ALL.into_iter().filter(|r| r.accepts(ty)).collect();
        self.choices.one_of(&reducers)
    }

    /// The patterns that broke lazy-xla once: a scalar constant used both inside a reduce's
    /// operand and as its init (`reduce(max(x, c), c, sum)`), and the masked reduction
    /// `reduce(select(is_finite(x), abs(x), zeros), zero, sum)`.
    pub(super) fn motif(&mut self, x: Id) -> Option<Step> {
        let (ty, dims) = (self.ty(x), self.dims(x));
        let rank = dims.len();
        let k = rank - self.choices.pick(rank + 1);
        let dimensions = self.choices.subset(rank, k);
        if ty.is_float() && self.choices.one_in(2) {
            let zero = self.scalar(ty, Some(Value::Float(0.0)));
            let finite = self.push(Step::Unary { op: UnaryKind::IsFinite, x });
            let magnitude = self.push(Step::Unary { op: UnaryKind::Abs, x });
            let zeros = if self.choices.one_in(2) {
                zero
            } else {
                self.push(Step::Broadcast { x: zero, sizes: dims.clone() })
            };
            let masked = self.push(Step::Select { pred: finite, on_true: magnitude, on_false: zeros });
            let reducer = self.choices.one_of(&[Reducer::Add, Reducer::AddTimesOne, Reducer::Max]);
            return Some(Step::Reduce { x: masked, init: zero, reducer, dimensions });
        }
        let c = self.scalar(ty, None);
        let op = self.choices.one_of(&[BinaryKind::Add, BinaryKind::Max, BinaryKind::Mul, BinaryKind::Min]);
        let y = self.push(Step::Binary { op, lhs: x, rhs: c, broadcast_dimensions: vec![] });
        let reducer = self.choices.one_of(&[Reducer::Add, Reducer::Max, Reducer::MaxPlusZero, Reducer::Min]);
        Some(Step::Reduce { x: y, init: c, reducer, dimensions })
    }

    /// `reduce_variadic`: jax's argmax or argmin of `x` along one dimension (an `s32` iota the
    /// indices), or the sums of `x` and a companion.
    pub(super) fn reduce_variadic(&mut self, x: Id) -> Option<Step> {
        let (ty, dims) = (self.ty(x), self.dims(x));
        let rank = dims.len();
        let reducer =
            self.choices.one_of(&[VariadicReducer::Argmax, VariadicReducer::Argmin, VariadicReducer::Sums]);
        let output = self.choices.pick(2);
        if reducer == VariadicReducer::Sums {
            let other = self.companion(x);
            let k = rank - self.choices.pick(rank + 1);
            let dimensions = self.choices.subset(rank, k);
            let inits = vec![self.init(Reducer::Add, ty), self.init(Reducer::Add, self.ty(other))];
            return Some(Step::ReduceVariadic { xs: vec![x, other], inits, reducer, dimensions, output });
        }
        if rank == 0 {
            return None;
        }
        let axis = self.choices.pick(rank) as i64;
        let shape = self.shape(ElementType::S32, &dims);
        let positions = self.push(Step::Iota { shape, dimension: axis });
        let max = reducer == VariadicReducer::Argmax;
        let extreme = match (ty.is_float(), max) {
            (true, true) => Value::Float(f64::NEG_INFINITY),
            (true, false) => Value::Float(f64::INFINITY),
            (false, _) if ty == ElementType::Pred => Value::Int(i128::from(!max)),
            (false, true) => Value::Int(int_min(ty)),
            (false, false) => Value::Int(int_max(ty)),
        };
        let inits = vec![self.scalar(ty, Some(extreme)), self.scalar(ElementType::S32, Some(Value::Int(0)))];
        Some(Step::ReduceVariadic { xs: vec![x, positions], inits, reducer, dimensions: vec![axis], output })
    }

    /// A window over `dims`: sizes mostly within the operand, strides, and one of the padding
    /// forms (`dilations` allowed or not).
    fn window(&mut self, dims: &[i64], dilations: bool) -> Window {
        let dimensions: Vec<i64> =
            dims.iter().map(|&d| 1 + self.choices.pick(d.clamp(1, 3) as usize + 1) as i64).collect();
        let strides: Vec<i64> = dims.iter().map(|_| 1 + self.choices.pick(3) as i64).collect();
        match self.choices.pick(4) {
            0 => Window { dimensions, strides, padding: WindowPadding::Enum(Padding::Valid) },
            1 => Window { dimensions, strides, padding: WindowPadding::Enum(Padding::Same) },
            _ => {
                let mut factors = |on: bool| -> Vec<i64> {
                    match on && !self.choices.one_in(3) {
                        true => dims.iter().map(|_| 1 + self.choices.pick(3) as i64).collect(),
                        false => vec![],
                    }
                };
                let (base_dilations, window_dilations) = (factors(dilations), factors(dilations));
                let lowest = if dilations { -1 } else { 0 };
                let padding: Vec<(i64, i64)> = match self.choices.one_in(4) {
                    true => vec![],
                    false => (0..dims.len())
                        .map(|d| {
                            let base = match base_dilations.get(d) {
                                Some(&f) if dims[d] > 0 => (dims[d] - 1) * f + 1,
                                _ => dims[d],
                            };
                            let low = (self.choices.pick(4) as i64 - 1).max(lowest);
                            let high = (self.choices.pick(4) as i64 - 1).max(lowest);
                            if base + low + high < 0 {
                                (0, 0)
                            } else {
                                (low, high)
                            }
                        })
                        .collect(),
                };
                let strides = if self.choices.one_in(4) { vec![] } else { strides };
                Window {
                    dimensions,
                    strides,
                    padding: WindowPadding::General { padding, base_dilations, window_dilations },
                }
            }
        }
    }

    /// `reduce_window` (or `_with_general_padding`) of `x`.
    pub(super) fn reduce_window(&mut self, x: Id) -> Option<Step> {
        let (ty, dims) = (self.ty(x), self.dims(x));
        if dims.is_empty() {
            return None; // XLA returns a scalar's window without its init (its simplifier's shortcut)
        }
        let reducer = self.reducer(ty);
        let window = self.window(&dims, true);
        let init = self.init(reducer, ty);
        Some(Step::ReduceWindow { x, init, reducer, window })
    }

    /// `select_and_scatter` (or `_with_general_padding`) of `x` with a source of the window
    /// positions' shape, scattered with `add`.
    pub(super) fn select_and_scatter(&mut self, x: Id) -> Option<Step> {
        let (ty, dims) = (self.ty(x), self.dims(x));
        if ty == ElementType::Pred || dims.is_empty() {
            return None;
        }
        let select =
            self.choices.one_of(&[CompareKind::Ge, CompareKind::Gt, CompareKind::Le, CompareKind::Lt]);
        let window = self.window(&dims, false);
        let source_dims = window_output_dims(&window, &dims);
        let source = self.fresh(ty, &source_dims);
        let init = self.init(Reducer::Add, ty);
        Some(Step::SelectAndScatter { x, select, window, source, init })
    }
}
