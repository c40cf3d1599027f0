//! The random graph generator: turns two lists of numbers (proptest shrinks both towards 0 and
//! towards fewer entries) into a valid [`Recipe`] over every op of API.md, all 13 element
//! types, random layouts and padding, one file per op family.
//!
//! `structure` picks the ops, operands and attributes: each choice is the next number modulo the
//! number of options, 0 once the list runs out, and option 0 is always the plainest (the latest
//! value as operand, a unary op, no padding, the default layout, a full slice, …), so a shrunk
//! list means a simpler graph. `values` fills parameters and constants, element by element,
//! cycling; 0 is the value 1 (or `true`). The generator evaluates each step with the reference as
//! it goes, so it knows every value's shape (and the values attributes depend on: a loop's trip
//! count, which indices are unique) and only makes ops XLA accepts.

mod contraction;
mod control;
mod elementwise;
mod indexing;
mod movement;
mod random;
mod reduction;
mod sorting;

use crate::common::choices::{Choices, Values};
use crate::common::recipe::{Id, Recipe, Step};
use crate::common::reference::{count, evaluate_step};
use crate::common::values::{Array, Value};
use lazy_xla::{ElementType, Layout, PaddingValue, Shape};

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

/// Integer types (of indices, starts), the plainest first.
const INTEGER_TYPES: [ElementType; 8] = [
    ElementType::S32,
    ElementType::S64,
    ElementType::U32,
    ElementType::S8,
    ElementType::U8,
    ElementType::S16,
    ElementType::U16,
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

    /// A parameter or a literal constant of `ty` and `dims` holding `values`.
    fn holding(&mut self, ty: ElementType, dims: &[i64], values: Vec<Value>) -> Id {
        let shape = self.shape(ty, dims);
        if self.choices.one_in(3) {
            return self.push(Step::ConstantLiteral { shape, values });
        }
        let argument_layout = if self.choices.one_in(3) { self.layout(dims) } else { shape.layout().clone() };
        self.push(Step::Parameter { shape, argument_layout, values })
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
                matches!(&self.steps[i], Step::ConstantR0 { ty: t, value: v } if *t == ty && value.is_none_or(|w| w.identical(*v)))
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

    /// A value of `dims` of the same type as `x` or (now and then) another: `x` itself, an
    /// existing value, or a fresh one.
    fn companion(&mut self, x: Id) -> Id {
        let dims = self.dims(x);
        let ty = if self.choices.one_in(3) { self.choices.one_of(&TYPES) } else { self.ty(x) };
        match self.choices.pick(3) {
            0 if ty == self.ty(x) => x,
            1 => self.existing(ty, &dims).unwrap_or_else(|| self.fresh(ty, &dims)),
            _ => self.fresh(ty, &dims),
        }
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

    /// One op on the value `x`; `None` if the chosen op does not apply to it.
    fn op(&mut self, x: Id) -> Option<Step> {
        match self.choices.pick(41) {
            0 | 40 => self.unary(x),
            1 | 2 => self.binary(x),
            3 => self.compare(x),
            4 => self.select(x),
            5 => self.clamp(x),
            6 => Some(Step::Convert { x, to: self.choices.one_of(&TYPES) }),
            7 => self.broadcast(x),
            8 => self.reshape(x),
            9 => Some(Step::Transpose { x, permutation: self.choices.permutation(self.dims(x).len()) }),
            10 => self.slice(x),
            11 => self.concat(x),
            12 => self.pad(x),
            13 => self.rev(x),
            14 | 15 => self.reduce(x),
            16 | 17 => self.dot(x),
            18 => self.motif(x),
            19 => self.bitcast(x),
            20 => self.reduce_precision(x),
            21 => self.dynamic_slice(x),
            22 => self.dynamic_update_slice(x),
            23 | 24 => self.gather(x),
            25 | 26 => self.scatter(x),
            27 | 28 => self.reduce_window(x),
            29 => self.select_and_scatter(x),
            30 | 31 => self.conv(x),
            32 => self.sort(x),
            33 => self.top_k(x),
            34 => self.reduce_variadic(x),
            35 => self.rng_bit_generator(x),
            36 => self.while_loop(x),
            37 => self.conditional(x),
            38 => self.call(x),
            _ => self.map(x),
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
                let dims: Vec<i64> = (a(x).dims.iter().zip(config))
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
    let (results, tuple) = match g.choices.one_in(8) {
        true => {
            let others = 1 + g.choices.pick(2);
            let mut results = vec![root];
            results.extend((0..others).map(|_| g.choices.pick(root + 1)));
            (results, true)
        }
        false => (vec![root], false),
    };
    let mut output_layouts = Vec::new();
    for &r in &results {
        let dims = g.dims(r);
        output_layouts.push(g.layout(&dims));
    }
    Recipe { steps: g.steps, results, tuple, output_layouts }
}
