//! The random graph generator: turns two lists of numbers (proptest shrinks both towards 0 and
//! towards fewer entries) into a valid [`Recipe`] over the whole element-wise, data-movement,
//! reduce and dot op set, all 13 element types, random layouts and padding.
//!
//! `structure` picks the ops, operands and attributes: each choice is the next number modulo the
//! number of options, 0 once the list runs out, and option 0 is always the plainest (the latest
//! value as operand, a unary op, no padding, the default layout, a full slice, …), so a shrunk
//! list means a simpler graph. `values` fills parameters and constants, element by element,
//! cycling; 0 is the value 1 (or `true`). The generator evaluates each step with the reference as
//! it goes, so it knows every value's shape and only makes ops XLA accepts.

use crate::common::choices::{Choices, Values};
use crate::common::recipe::{Id, Recipe, Reducer, Step};
use crate::common::reference::{count, evaluate_step};
use crate::common::semantics::{BinaryKind, CompareKind, UnaryKind};
use crate::common::values::{int_max, int_min, wrap, Array, Value};
use lazy_xla::{DotDimensionNumbers, ElementType, Layout, PaddingValue, Shape};

/// The most ops after the first value.
const MAX_OPS: usize = 14;

/// The most elements of any value (so graphs run fast), unless the first value is larger.
const MAX_ELEMENTS: usize = 600;

/// The most elements of a large first value ([`Choices::first_size`]) and of any value after
/// it: its larger dimensions are cut (by 8 at a time) until it fits.
const MAX_LARGE_ELEMENTS: usize = 5_000;

/// Element types, the plainest first.
const TYPES: [ElementType; 13] = [
    ElementType::F32,
    ElementType::S32,
    ElementType::Pred,
    ElementType::F16,
    ElementType::Bf16,
    ElementType::F64,
    ElementType::S8,
    ElementType::S16,
    ElementType::S64,
    ElementType::U8,
    ElementType::U16,
    ElementType::U32,
    ElementType::U64,
];

/// The generator's state: the steps so far and their reference values.
struct Generator<'g> {
    choices: Choices<'g>,
    values: Values<'g>,
    steps: Vec<Step>,
    arrays: Vec<Array>,
    /// The most elements of any value of the graph.
    max_elements: usize,
}

impl Generator<'_> {
    fn ty(&self, id: Id) -> ElementType {
        self.arrays[id].ty
    }

    fn dims(&self, id: Id) -> Vec<i64> {
        self.arrays[id].dims.clone()
    }

    /// Appends a step (evaluating it) and returns its id.
    fn push(&mut self, step: Step) -> Id {
        let array = evaluate_step(&self.arrays, &step);
        self.steps.push(step);
        self.arrays.push(array);
        self.steps.len() - 1
    }

    fn value(&mut self, ty: ElementType) -> Value {
        self.values.next(ty)
    }

    fn values_for(&mut self, ty: ElementType, dims: &[i64]) -> Vec<Value> {
        (0..count(dims)).map(|_| self.values.next(ty)).collect()
    }

    /// A layout for `dims`: the default, a permutation of it, sometimes padded.
    fn layout(&mut self, dims: &[i64]) -> Layout {
        let descending: Vec<i64> = (0..dims.len() as i64).rev().collect();
        let permutation = self.choices.permutation(dims.len());
        let layout = Layout::new(&permutation.iter().map(|&p| descending[p as usize]).collect::<Vec<_>>());
        if !self.choices.one_in(4) {
            return layout;
        }
        let padded: Vec<i64> = dims.iter().map(|&d| d + self.choices.pick(3) as i64).collect();
        let value = self.choices.one_of(&[
            PaddingValue::Zero,
            PaddingValue::One,
            PaddingValue::Lowest,
            PaddingValue::Highest,
        ]);
        layout.with_padding(&padded, value).expect("padding at least the dimensions")
    }

    fn shape(&mut self, ty: ElementType, dims: &[i64]) -> Shape {
        let layout = self.layout(dims);
        Shape::new(ty, dims).relayout(&layout).expect("a layout of the rank")
    }

    fn parameter(&mut self, ty: ElementType, dims: &[i64]) -> Id {
        let shape = self.shape(ty, dims);
        let argument_layout = if self.choices.one_in(3) { self.layout(dims) } else { shape.layout().clone() };
        let values = self.values_for(ty, dims);
        self.push(Step::Parameter { shape, argument_layout, values })
    }

    /// A scalar constant of `ty`: `value` if given, else a random one; now and then an
    /// existing constant of that type (shared constants are what CSE and fusion must handle).
    fn scalar(&mut self, ty: ElementType, value: Option<Value>) -> Id {
        if self.choices.one_in(2) {
            let existing = (0..self.steps.len()).rev().find(|&i| {
                matches!(&self.steps[i], Step::ConstantR0 { ty: t, value: v } if *t == ty && value.is_none_or(|w| w.same(*v)))
            });
            if let Some(id) = existing {
                return id;
            }
        }
        let value = value.unwrap_or_else(|| self.value(ty));
        self.push(Step::ConstantR0 { ty, value })
    }

    /// A value of `ty` and `dims` from scratch: a parameter, a literal constant or an iota.
    fn fresh(&mut self, ty: ElementType, dims: &[i64]) -> Id {
        match self.choices.pick(6) {
            4 => {
                let shape = self.shape(ty, dims);
                let values = self.values_for(ty, dims);
                self.push(Step::ConstantLiteral { shape, values })
            }
            5 if ty != ElementType::Pred && !dims.is_empty() => {
                let shape = self.shape(ty, dims);
                let dimension = self.choices.pick(dims.len()) as i64;
                self.push(Step::Iota { shape, dimension })
            }
            _ => self.parameter(ty, dims),
        }
    }

    /// An existing value of `ty` and `dims`, if any (one of them at random).
    fn existing(&mut self, ty: ElementType, dims: &[i64]) -> Option<Id> {
        let same: Vec<Id> =
            (0..self.steps.len()).filter(|&i| self.ty(i) == ty && self.dims(i) == dims).collect();
        (!same.is_empty()).then(|| same[self.choices.pick(same.len())])
    }

    /// An operand: the latest value, or now and then an earlier one.
    fn operand(&mut self) -> Id {
        let last = self.steps.len() - 1;
        if self.choices.one_in(3) {
            self.choices.pick(self.steps.len())
        } else {
            last
        }
    }

    /// A second operand for a binary op with `x`, the broadcast dimensions, and whether `x`
    /// goes first: same dimensions, a scalar, a lower-rank value broadcast in, same-rank
    /// degenerate (size-1) broadcasting, an existing value, or `x` as the lower-rank side.
    fn partner(&mut self, x: Id) -> (Id, Vec<i64>, bool) {
        let (ty, dims) = (self.ty(x), self.dims(x));
        let rank = dims.len();
        let x_first = !self.choices.one_in(2);
        let (other, broadcast_dimensions) = match self.choices.pick(6) {
            0 => (self.fresh(ty, &dims), vec![]),
            1 => (self.scalar(ty, None), vec![]),
            2 => {
                let k = self.choices.pick(rank + 1);
                let kept = self.choices.subset(rank, k);
                let small: Vec<i64> =
                    kept.iter().map(|&d| if self.choices.one_in(3) { 1 } else { dims[d as usize] }).collect();
                let identity_or_empty = if k == rank && self.choices.one_in(2) { vec![] } else { kept };
                (self.fresh(ty, &small), identity_or_empty)
            }
            3 => {
                let degenerate: Vec<i64> = dims
                    .iter()
                    .map(|&d| match (d, self.choices.pick(3)) {
                        (1, 2) => self.choices.size(),
                        (_, 1) => 1,
                        _ => d,
                    })
                    .collect();
                (self.fresh(ty, &degenerate), vec![])
            }
            4 => (self.existing(ty, &dims).unwrap_or(x), vec![]),
            _ => {
                // x is the lower-rank operand, mapped into a value of higher rank.
                let extra = self.choices.pick(4 - rank.min(4) + 1);
                let out_rank = rank + extra;
                let positions = self.choices.subset(out_rank, rank);
                let mut large: Vec<i64> = (0..out_rank).map(|_| self.choices.size()).collect();
                for (k, &p) in positions.iter().enumerate() {
                    if dims[k] != 1 || self.choices.one_in(2) {
                        large[p as usize] = dims[k];
                    }
                }
                if extra == 0 {
                    (self.fresh(ty, &large), vec![])
                } else {
                    (self.fresh(ty, &large), positions)
                }
            }
        };
        (other, broadcast_dimensions, x_first)
    }

    fn binary(&mut self, x: Id) -> Option<Step> {
        let ty = self.ty(x);
        let ops: Vec<BinaryKind> = BinaryKind::ALL.into_iter().filter(|op| op.accepts(ty)).collect();
        let op = self.choices.one_of(&ops);
        let (other, broadcast_dimensions, x_first) = self.partner(x);
        let (lhs, rhs) = if x_first { (x, other) } else { (other, x) };
        Some(Step::Binary { op, lhs, rhs, broadcast_dimensions })
    }

    fn compare(&mut self, x: Id) -> Option<Step> {
        let op = self.choices.one_of(&CompareKind::ALL);
        let (other, broadcast_dimensions, x_first) = self.partner(x);
        let (lhs, rhs) = if x_first { (x, other) } else { (other, x) };
        let compare = Step::Compare { op, lhs, rhs, broadcast_dimensions };
        if !self.choices.one_in(2) {
            return Some(compare);
        }
        // Select between x and another value where the comparison holds.
        let pred = self.push(compare);
        if self.dims(pred) != self.dims(x) {
            return None;
        }
        let alternative = self.branch(self.ty(x), &self.dims(x));
        Some(Step::Select { pred, on_true: x, on_false: alternative })
    }

    /// A branch or bound of `ty` for a select or clamp with `dims`: a scalar constant or a value
    /// of those dimensions.
    fn branch(&mut self, ty: ElementType, dims: &[i64]) -> Id {
        match self.choices.pick(3) {
            0 => self.scalar(ty, None),
            1 => self.existing(ty, dims).unwrap_or_else(|| self.fresh(ty, dims)),
            _ => self.fresh(ty, dims),
        }
    }

    fn select(&mut self, x: Id) -> Option<Step> {
        let (ty, dims) = (self.ty(x), self.dims(x));
        if ty == ElementType::Pred && self.choices.one_in(2) {
            let branch_type = self.choices.one_of(&TYPES);
            let on_true = self.branch(branch_type, &dims);
            let on_false = self.branch(branch_type, &dims);
            return Some(Step::Select { pred: x, on_true, on_false });
        }
        let pred = match self.choices.pick(3) {
            0 => self.fresh(ElementType::Pred, &dims),
            1 => self.scalar(ElementType::Pred, None),
            _ => {
                let test = self.choices.one_of(&[UnaryKind::IsFinite, UnaryKind::Not]);
                match ty {
                    t if t.is_float() && test == UnaryKind::IsFinite => {
                        self.push(Step::Unary { op: test, x })
                    }
                    ElementType::Pred => self.push(Step::Unary { op: UnaryKind::Not, x }),
                    _ => self.fresh(ElementType::Pred, &dims),
                }
            }
        };
        let other = self.branch(ty, &dims);
        let (on_true, on_false) = if self.choices.one_in(2) { (other, x) } else { (x, other) };
        Some(Step::Select { pred, on_true, on_false })
    }

    fn clamp(&mut self, x: Id) -> Option<Step> {
        let (ty, dims) = (self.ty(x), self.dims(x));
        if ty == ElementType::Pred {
            return None; // XLA builds a pred clamp but cannot compile it
        }
        if self.choices.one_in(5) {
            // A scalar operand clamped by a bound of x's dimensions.
            let operand = self.scalar(ty, None);
            let max = self.branch(ty, &dims);
            return Some(Step::Clamp { min: x, operand, max });
        }
        let min = self.branch(ty, &dims);
        let max = self.branch(ty, &dims);
        Some(Step::Clamp { min, operand: x, max })
    }

    fn broadcast(&mut self, x: Id) -> Option<Step> {
        let dims = self.dims(x);
        let rank = dims.len();
        if rank < 4 && self.choices.one_in(3) {
            let sizes: Vec<i64> = (0..1 + self.choices.pick(4 - rank)).map(|_| self.choices.size()).collect();
            return Some(Step::Broadcast { x, sizes });
        }
        let out_rank = rank + self.choices.pick(4 - rank + 1);
        let positions = self.choices.subset(out_rank, rank);
        let mut out: Vec<i64> = (0..out_rank).map(|_| self.choices.size()).collect();
        for (k, &p) in positions.iter().enumerate() {
            if dims[k] != 1 || !self.choices.one_in(2) {
                out[p as usize] = dims[k];
            }
        }
        Some(Step::BroadcastInDim { x, dims: out, broadcast_dimensions: positions })
    }

    fn reshape(&mut self, x: Id) -> Option<Step> {
        let dims = self.dims(x);
        let n = count(&dims) as i64;
        let new: Vec<i64> = match self.choices.pick(4) {
            0 => vec![n],
            1 => dims.iter().copied().filter(|&d| d != 1).collect(),
            2 if dims.len() < 4 => {
                let mut grown = dims.clone();
                grown.insert(self.choices.pick(dims.len() + 1), 1);
                grown
            }
            _ if n == 0 => {
                let rank = 1 + self.choices.pick(4);
                let mut new: Vec<i64> = (0..rank).map(|_| self.choices.size()).collect();
                new[self.choices.pick(rank)] = 0;
                new
            }
            _ => {
                // Spread n's prime factors over up to 4 dimensions.
                let rank = 1 + self.choices.pick(4);
                let mut new = vec![1i64; rank];
                let (mut rest, mut p) = (n, 2);
                while rest > 1 {
                    while rest % p == 0 {
                        new[self.choices.pick(rank)] *= p;
                        rest /= p;
                    }
                    p += 1;
                }
                new
            }
        };
        Some(Step::Reshape { x, dims: new })
    }

    fn slice(&mut self, x: Id) -> Option<Step> {
        let dims = self.dims(x);
        let (mut start, mut limit, mut strides) = (vec![], vec![], vec![]);
        for &d in &dims {
            let s = self.choices.pick(d as usize + 1) as i64;
            start.push(s);
            limit.push(d - self.choices.pick((d - s) as usize + 1) as i64);
            strides.push(1 + self.choices.pick(3) as i64);
        }
        Some(Step::Slice { x, start, limit, strides })
    }

    fn concat(&mut self, x: Id) -> Option<Step> {
        let (ty, dims) = (self.ty(x), self.dims(x));
        if dims.is_empty() {
            return None;
        }
        let k = self.choices.pick(dims.len());
        let mut xs = vec![x];
        for _ in 0..1 + self.choices.pick(2) {
            let part = match self.choices.pick(3) {
                0 => {
                    let mut other = dims.clone();
                    other[k] = self.choices.size();
                    self.fresh(ty, &other)
                }
                1 => x,
                _ => self.existing(ty, &dims).unwrap_or(x),
            };
            let at = self.choices.pick(xs.len() + 1);
            xs.insert(at, part);
        }
        Some(Step::Concat { xs, dimension: k as i64 })
    }

    fn pad(&mut self, x: Id) -> Option<Step> {
        let (ty, dims) = (self.ty(x), self.dims(x));
        let scalars: Vec<Id> =
            (0..self.steps.len()).filter(|&i| self.ty(i) == ty && self.dims(i).is_empty()).collect();
        let value = match self.choices.pick(3) {
            2 if !scalars.is_empty() => self.choices.one_of(&scalars),
            _ => self.scalar(ty, None),
        };
        let mut config = Vec::new();
        for &n in &dims {
            let low = self.choices.one_of(&[0, 1, 2, -1, -2]);
            let high = self.choices.one_of(&[0, 1, 2, -1, -2]);
            let interior = self.choices.one_of(&[0, 1, 2]);
            let size = low + high + n + (n - 1).max(0) * interior;
            config.push(if size < 0 { [0, 0, interior] } else { [low, high, interior] });
        }
        Some(Step::Pad { x, value, config })
    }

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

    fn reduce(&mut self, x: Id) -> Option<Step> {
        let (ty, rank) = (self.ty(x), self.dims(x).len());
        let reducers: Vec<Reducer> = Reducer::ALL.into_iter().filter(|r| r.accepts(ty)).collect();
        let reducer = self.choices.one_of(&reducers);
        let k = rank - self.choices.pick(rank + 1);
        let dimensions = self.choices.subset(rank, k);
        let init = match self.choices.pick(4) {
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
        };
        Some(Step::Reduce { x, init, reducer, dimensions })
    }

    fn dot(&mut self, x: Id) -> Option<Step> {
        let (ty, dims) = (self.ty(x), self.dims(x));
        let rank = dims.len();
        if (rank == 1 || rank == 2) && !self.choices.one_in(2) {
            let free: Vec<i64> = (0..self.choices.pick(2)).map(|_| self.choices.size()).collect();
            return Some(if self.choices.one_in(2) {
                let other: Vec<i64> = free.into_iter().chain([dims[0]]).collect();
                Step::Dot { lhs: self.fresh(ty, &other), rhs: x }
            } else {
                let other: Vec<i64> = [dims[rank - 1]].into_iter().chain(free).collect();
                Step::Dot { lhs: x, rhs: self.fresh(ty, &other) }
            });
        }
        // dot_general: roles of x's dimensions (0 free, 1 batch, 2 contracting), then the other
        // operand's dimensions in a random order.
        let roles: Vec<usize> = (0..rank).map(|_| self.choices.pick(3)).collect();
        let x_batch: Vec<i64> = (0..rank as i64).filter(|&d| roles[d as usize] == 1).collect();
        let x_contracting: Vec<i64> = (0..rank as i64).filter(|&d| roles[d as usize] == 2).collect();
        // The other operand's free dimensions: both operands and the result stay within rank 4.
        let x_free = rank - x_batch.len() - x_contracting.len();
        let max_free = (4 - x_batch.len() - x_free.max(x_contracting.len())).min(2);
        let free = self.choices.pick(max_free + 1);
        let other_rank = x_batch.len() + x_contracting.len() + free;
        let placement = self.choices.permutation(other_rank);
        let mut other_dims = vec![0i64; other_rank];
        let sources = x_batch.iter().chain(&x_contracting);
        for (k, &d) in sources.enumerate() {
            other_dims[placement[k] as usize] = dims[d as usize];
        }
        for k in x_batch.len() + x_contracting.len()..other_rank {
            other_dims[placement[k] as usize] = self.choices.size();
        }
        let other_batch = placement[..x_batch.len()].to_vec();
        let other_contracting = placement[x_batch.len()..x_batch.len() + x_contracting.len()].to_vec();
        let other = self.fresh(ty, &other_dims);
        Some(if self.choices.one_in(2) {
            let numbers = DotDimensionNumbers {
                lhs_contracting_dimensions: other_contracting,
                rhs_contracting_dimensions: x_contracting,
                lhs_batch_dimensions: other_batch,
                rhs_batch_dimensions: x_batch,
            };
            Step::DotGeneral { lhs: other, rhs: x, numbers }
        } else {
            let numbers = DotDimensionNumbers {
                lhs_contracting_dimensions: x_contracting,
                rhs_contracting_dimensions: other_contracting,
                lhs_batch_dimensions: x_batch,
                rhs_batch_dimensions: other_batch,
            };
            Step::DotGeneral { lhs: x, rhs: other, numbers }
        })
    }

    /// The patterns that broke lazy-xla once: a scalar constant used both inside a reduce's
    /// operand and as its init (`reduce(max(x, c), c, sum)`), and the masked reduction
    /// `reduce(select(is_finite(x), abs(x), zeros), zero, sum)`.
    fn motif(&mut self, x: Id) -> Option<Step> {
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

    /// One op on the value `x`; `None` if the chosen op does not apply to it.
    fn op(&mut self, x: Id) -> Option<Step> {
        let (ty, rank) = (self.ty(x), self.dims(x).len());
        match self.choices.pick(19) {
            0 => {
                let ops: Vec<UnaryKind> = UnaryKind::ALL.into_iter().filter(|op| op.accepts(ty)).collect();
                Some(Step::Unary { op: self.choices.one_of(&ops), x })
            }
            1 | 2 => self.binary(x),
            3 => self.compare(x),
            4 => self.select(x),
            5 => self.clamp(x),
            6 => Some(Step::Convert { x, to: self.choices.one_of(&TYPES) }),
            7 => self.broadcast(x),
            8 => self.reshape(x),
            9 => Some(Step::Transpose { x, permutation: self.choices.permutation(rank) }),
            10 => self.slice(x),
            11 => self.concat(x),
            12 => self.pad(x),
            13 => {
                let k = self.choices.pick(rank + 1);
                Some(Step::Rev { x, dimensions: self.choices.subset(rank, k) })
            }
            14 | 15 => self.reduce(x),
            16 | 17 => self.dot(x),
            _ => self.motif(x),
        }
    }

    /// Whether the value of a step would be small enough to keep.
    fn small_enough(&self, step: &Step) -> bool {
        let a = |id: &Id| &self.arrays[*id];
        let elements = match step {
            Step::Broadcast { x, sizes } => count(sizes) * count(&a(x).dims),
            Step::BroadcastInDim { dims, .. } => count(dims),
            Step::Concat { xs, .. } => xs.iter().map(|x| count(&a(x).dims)).sum(),
            Step::Pad { x, config, .. } => {
                let dims: Vec<i64> = a(x)
                    .dims
                    .iter()
                    .zip(config)
                    .map(|(&n, [lo, hi, interior])| lo + hi + n + (n - 1).max(0) * interior)
                    .collect();
                count(&dims)
            }
            // Bounded by the product of the operands' sizes; checked after evaluation.
            _ => 0,
        };
        elements <= self.max_elements
    }
}

/// A random valid recipe from two lists of numbers (see the module docs).
pub fn generate(structure: &[u32], values: &[u32]) -> Recipe {
    let mut g = Generator {
        choices: Choices::new(structure),
        values: Values::new(values),
        steps: Vec::new(),
        arrays: Vec::new(),
        max_elements: MAX_ELEMENTS,
    };
    let ty = g.choices.one_of(&TYPES);
    let mut dims: Vec<i64> = (0..g.choices.pick(5)).map(|_| g.choices.first_size()).collect();
    while count(&dims) > MAX_LARGE_ELEMENTS {
        let largest = (0..dims.len()).max_by_key(|&k| dims[k]).expect("a value this large has dimensions");
        dims[largest] /= 8;
    }
    g.max_elements = MAX_ELEMENTS.max(count(&dims));
    g.fresh(ty, &dims);
    let ops = 1 + g.choices.pick(MAX_OPS);
    for _ in 0..ops {
        let x = g.operand();
        let checkpoint = g.steps.len();
        let step = g.op(x).filter(|step| g.small_enough(step));
        let Some(step) = step else {
            // Keep what the op made (constants, parameters), add a plain conversion instead.
            let to = g.choices.one_of(&TYPES);
            g.push(Step::Convert { x, to });
            continue;
        };
        let id = g.push(step);
        if count(&g.dims(id)) > g.max_elements {
            g.steps.truncate(checkpoint);
            g.arrays.truncate(checkpoint);
            let to = g.choices.one_of(&TYPES);
            g.push(Step::Convert { x, to });
        }
    }
    let root = g.steps.len() - 1;
    let root_dims = g.dims(root);
    let output_layout = g.layout(&root_dims);
    Recipe { steps: g.steps, root, output_layout }
}
