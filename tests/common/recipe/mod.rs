//! A graph recipe: a plain list of steps (one array each, operands named by step index) that
//! builds a lazy-xla graph through the public API ([`build`]), is evaluated by the reference
//! interpreter (`reference/`) and prints as a Rust program ([`program`]) that can be pasted into
//! a test. An op that returns a tuple is a step that takes one of its elements; the recipe's
//! result is one step or a tuple of several.

mod build;
pub mod computations;
mod program;

pub use build::build;
pub use program::{program, rust_layout};

use std::collections::BTreeSet;

use crate::common::expr::{Computation, Expr};
use crate::common::semantics::{BinaryKind, CompareKind, UnaryKind};
use crate::common::values::{literal, Value};
use computations::{selection, Comparator, Reducer, Updater, VariadicReducer};
use lazy_xla::{
    ConvolutionDimensionNumbers, DotDimensionNumbers, ElementType, GatherDimensionNumbers, Layout, Literal,
    Padding, PrecisionConfig, RandomAlgorithm, ScatterDimensionNumbers, Shape,
};

/// The index of a step (and of the value it makes).
pub type Id = usize;

/// The optional arguments of `dot_with`, `dot_general_with` and `conv_general_dilated_with`.
#[derive(Clone, Debug)]
pub struct DotOptions {
    pub precision: Option<PrecisionConfig>,
    pub preferred: Option<ElementType>,
}

/// The window of a `reduce_window` or `select_and_scatter`.
#[derive(Clone, Debug)]
pub struct Window {
    pub dimensions: Vec<i64>,
    /// The strides (with general padding, an empty list means 1 everywhere).
    pub strides: Vec<i64>,
    pub padding: WindowPadding,
}

/// How a window pads (and dilates) its operand.
#[derive(Clone, Debug)]
pub enum WindowPadding {
    /// XLA's `Padding` enum (the functions without dilations).
    Enum(Padding),
    /// `(low, high)` per dimension and the dilations of the base and of the window (empty
    /// lists: no padding, dilations of 1; select_and_scatter takes no dilations, so both are
    /// empty there).
    General { padding: Vec<(i64, i64)>, base_dilations: Vec<i64>, window_dilations: Vec<i64> },
}

/// How a convolution pads its input.
#[derive(Clone, Debug)]
pub enum ConvPadding {
    /// `(low, high)` per spatial dimension (an empty list: none), as `conv_general_dilated`
    /// takes it.
    Explicit(Vec<(i64, i64)>),
    /// XLA's `Padding` enum: the plain `conv` (default dimension numbers, no dilations nor
    /// groups).
    Enum(Padding),
}

/// The attributes of a `conv_general_dilated` (empty strides or dilations: 1s).
#[derive(Clone, Debug)]
pub struct Convolution {
    pub strides: Vec<i64>,
    pub padding: ConvPadding,
    pub lhs_dilation: Vec<i64>,
    pub rhs_dilation: Vec<i64>,
    pub numbers: ConvolutionDimensionNumbers,
    pub feature_group_count: i64,
    pub batch_group_count: i64,
}

impl Convolution {
    /// The explicit padding of a `conv_general_dilated` (panics for the plain `conv`'s enum).
    pub fn explicit_padding(&self) -> &[(i64, i64)] {
        match &self.padding {
            ConvPadding::Explicit(padding) => padding,
            ConvPadding::Enum(padding) => panic!("conv_general_dilated with Padding::{padding:?}"),
        }
    }
}

/// One step of a recipe. Parameters are numbered in the order they appear.
#[derive(Clone, Debug)]
pub enum Step {
    /// `b.parameter(n, &shape, ..)`, called with `values` in `argument_layout` (which may differ
    /// from the shape's own layout).
    Parameter {
        shape: Shape,
        argument_layout: Layout,
        values: Vec<Value>,
    },
    /// `b.constant_literal(&literal)`, the literal in `shape`'s layout.
    ConstantLiteral {
        shape: Shape,
        values: Vec<Value>,
    },
    /// `b.constant_r0(value)`.
    ConstantR0 {
        ty: ElementType,
        value: Value,
    },
    /// `iota(&b, &shape, dimension)`.
    Iota {
        shape: Shape,
        dimension: i64,
    },
    Unary {
        op: UnaryKind,
        x: Id,
    },
    Binary {
        op: BinaryKind,
        lhs: Id,
        rhs: Id,
        broadcast_dimensions: Vec<i64>,
    },
    Compare {
        op: CompareKind,
        lhs: Id,
        rhs: Id,
        broadcast_dimensions: Vec<i64>,
    },
    Select {
        pred: Id,
        on_true: Id,
        on_false: Id,
    },
    Clamp {
        min: Id,
        operand: Id,
        max: Id,
    },
    Convert {
        x: Id,
        to: ElementType,
    },
    /// `bitcast_convert_type(x, to)`.
    BitcastConvert {
        x: Id,
        to: ElementType,
    },
    /// `reduce_precision(x, exponent_bits, mantissa_bits)`.
    ReducePrecision {
        x: Id,
        exponent_bits: i32,
        mantissa_bits: i32,
    },
    Broadcast {
        x: Id,
        sizes: Vec<i64>,
    },
    BroadcastInDim {
        x: Id,
        dims: Vec<i64>,
        broadcast_dimensions: Vec<i64>,
    },
    Reshape {
        x: Id,
        dims: Vec<i64>,
    },
    Transpose {
        x: Id,
        permutation: Vec<i64>,
    },
    Slice {
        x: Id,
        start: Vec<i64>,
        limit: Vec<i64>,
        strides: Vec<i64>,
    },
    Concat {
        xs: Vec<Id>,
        dimension: i64,
    },
    /// `pad(x, value, config)`, each dimension `[low, high, interior]`.
    Pad {
        x: Id,
        value: Id,
        config: Vec<[i64; 3]>,
    },
    Rev {
        x: Id,
        dimensions: Vec<i64>,
    },
    /// `dynamic_slice(x, &starts, &sizes)`: one scalar start per dimension.
    DynamicSlice {
        x: Id,
        starts: Vec<Id>,
        sizes: Vec<i64>,
    },
    /// `dynamic_update_slice(x, update, &starts)`.
    DynamicUpdateSlice {
        x: Id,
        update: Id,
        starts: Vec<Id>,
    },
    /// `gather(operand, indices, &numbers, &slice_sizes, sorted)`.
    Gather {
        operand: Id,
        indices: Id,
        numbers: GatherDimensionNumbers,
        slice_sizes: Vec<i64>,
        sorted: bool,
    },
    /// `scatter(operand, indices, updates, &updater, &numbers, sorted, unique)`.
    Scatter {
        operand: Id,
        indices: Id,
        updates: Id,
        updater: Updater,
        numbers: ScatterDimensionNumbers,
        sorted: bool,
        unique: bool,
    },
    Reduce {
        x: Id,
        init: Id,
        reducer: Reducer,
        dimensions: Vec<i64>,
    },
    /// `reduce_variadic(&b, &xs, &inits, &reducer, &dimensions)`, element `output` of its tuple.
    ReduceVariadic {
        xs: Vec<Id>,
        inits: Vec<Id>,
        reducer: VariadicReducer,
        dimensions: Vec<i64>,
        output: usize,
    },
    /// `reduce_window` or `reduce_window_with_general_padding`.
    ReduceWindow {
        x: Id,
        init: Id,
        reducer: Reducer,
        window: Window,
    },
    /// `select_and_scatter` (or `_with_general_padding`) selecting with `select` and
    /// scattering with `add`.
    SelectAndScatter {
        x: Id,
        select: CompareKind,
        window: Window,
        source: Id,
        init: Id,
    },
    /// `dot` (or `dot_with`).
    Dot {
        lhs: Id,
        rhs: Id,
        options: Option<DotOptions>,
    },
    /// `dot_general` (or `dot_general_with`).
    DotGeneral {
        lhs: Id,
        rhs: Id,
        numbers: DotDimensionNumbers,
        options: Option<DotOptions>,
    },
    /// `conv_general_dilated` (or `conv_general_dilated_with`).
    Conv {
        lhs: Id,
        rhs: Id,
        conv: Convolution,
        options: Option<DotOptions>,
    },
    /// `sort(&xs, &comparator, dimension, stable)`; element `output` of the tuple when there
    /// are several operands.
    Sort {
        xs: Vec<Id>,
        comparator: Comparator,
        dimension: i64,
        stable: bool,
        output: usize,
    },
    /// `top_k(x, k, largest)`, element `output` of `(values, indices)`.
    TopK {
        x: Id,
        k: i64,
        largest: bool,
        output: usize,
    },
    /// `rng_bit_generator(algorithm, state, &shape)`, element `output` of `(state, bits)`.
    RngBitGenerator {
        algorithm: RandomAlgorithm,
        state: Id,
        shape: Shape,
        output: usize,
    },
    /// `while_loop` over the tuple `(init[0], init[1], …)`, `init[0]` an `s32[]` counter: the
    /// condition is `counter < limit`, the body `(counter + 1, body[0], body[1], …)`, each
    /// expression over the state (parameter 0). Element `output` of the final state.
    While {
        init: Vec<Id>,
        limit: i32,
        body: Vec<Expr>,
        output: usize,
    },
    /// `conditional` (a `pred` selector, two branches) or, `indexed`, `conditional_indexed`
    /// (an `s32` one), branch `k` an expression of its operand (parameter 0) or, with several
    /// expressions, a tuple of them of which the step takes element `output`.
    Conditional {
        indexed: bool,
        selector: Id,
        operands: Vec<Id>,
        branches: Vec<Vec<Expr>>,
        output: usize,
    },
    /// `call(&b, &computation, &xs)`, the computation's result an expression of its
    /// parameters or a tuple of several, of which the step takes element `output`.
    Call {
        xs: Vec<Id>,
        body: Vec<Expr>,
        output: usize,
    },
    /// `map(&b, &xs, &computation, &[0, 1, …])`, the computation a scalar expression.
    Map {
        xs: Vec<Id>,
        function: Expr,
    },
}

/// The element type and dimensions of a step's value, as the builder or the reference knows
/// them.
pub type Describe<'a> = &'a dyn Fn(Id) -> (ElementType, Vec<i64>);

impl Step {
    /// The op's name, as the lazy-xla function that makes it.
    pub fn name(&self) -> &'static str {
        match self {
            Step::Parameter { .. } => "parameter",
            Step::ConstantLiteral { .. } => "constant_literal",
            Step::ConstantR0 { .. } => "constant_r0",
            Step::Iota { .. } => "iota",
            Step::Unary { op, .. } => op.name(),
            Step::Binary { op, .. } => op.name(),
            Step::Compare { op, .. } => op.name(),
            Step::Select { .. } => "select",
            Step::Clamp { .. } => "clamp",
            Step::Convert { .. } => "convert_element_type",
            Step::BitcastConvert { .. } => "bitcast_convert_type",
            Step::ReducePrecision { .. } => "reduce_precision",
            Step::Broadcast { .. } => "broadcast",
            Step::BroadcastInDim { .. } => "broadcast_in_dim",
            Step::Reshape { .. } => "reshape",
            Step::Transpose { .. } => "transpose",
            Step::Slice { .. } => "slice",
            Step::Concat { .. } => "concat_in_dim",
            Step::Pad { .. } => "pad",
            Step::Rev { .. } => "rev",
            Step::DynamicSlice { .. } => "dynamic_slice",
            Step::DynamicUpdateSlice { .. } => "dynamic_update_slice",
            Step::Gather { .. } => "gather",
            Step::Scatter { .. } => "scatter",
            Step::Reduce { .. } => "reduce",
            Step::ReduceVariadic { .. } => "reduce_variadic",
            Step::ReduceWindow { window, .. } => match window.padding {
                WindowPadding::Enum(_) => "reduce_window",
                WindowPadding::General { .. } => "reduce_window_with_general_padding",
            },
            Step::SelectAndScatter { window, .. } => match window.padding {
                WindowPadding::Enum(_) => "select_and_scatter",
                WindowPadding::General { .. } => "select_and_scatter_with_general_padding",
            },
            Step::Dot { options: None, .. } => "dot",
            Step::Dot { .. } => "dot_with",
            Step::DotGeneral { options: None, .. } => "dot_general",
            Step::DotGeneral { .. } => "dot_general_with",
            Step::Conv { conv: Convolution { padding: ConvPadding::Enum(_), .. }, .. } => "conv",
            Step::Conv { options: None, .. } => "conv_general_dilated",
            Step::Conv { .. } => "conv_general_dilated_with",
            Step::Sort { .. } => "sort",
            Step::TopK { .. } => "top_k",
            Step::RngBitGenerator { .. } => "rng_bit_generator",
            Step::While { .. } => "while_loop",
            Step::Conditional { indexed: false, .. } => "conditional",
            Step::Conditional { .. } => "conditional_indexed",
            Step::Call { .. } => "call",
            Step::Map { .. } => "map",
        }
    }

    /// The steps this one reads, in order.
    pub fn operands(&self) -> Vec<Id> {
        self.clone().operands_mut().into_iter().map(|id| *id).collect()
    }

    /// Renames the steps this one reads.
    pub fn rename(&mut self, f: impl Fn(Id) -> Id) {
        for id in self.operands_mut() {
            *id = f(*id);
        }
    }

    /// The steps this one reads, in order, to rename.
    fn operands_mut(&mut self) -> Vec<&mut Id> {
        match self {
            Step::Parameter { .. }
            | Step::ConstantLiteral { .. }
            | Step::ConstantR0 { .. }
            | Step::Iota { .. } => {
                vec![]
            }
            Step::Unary { x, .. }
            | Step::Convert { x, .. }
            | Step::BitcastConvert { x, .. }
            | Step::ReducePrecision { x, .. }
            | Step::Broadcast { x, .. }
            | Step::BroadcastInDim { x, .. }
            | Step::Reshape { x, .. }
            | Step::Transpose { x, .. }
            | Step::Slice { x, .. }
            | Step::Rev { x, .. }
            | Step::TopK { x, .. }
            | Step::RngBitGenerator { state: x, .. } => vec![x],
            Step::Binary { lhs, rhs, .. }
            | Step::Compare { lhs, rhs, .. }
            | Step::Dot { lhs, rhs, .. }
            | Step::DotGeneral { lhs, rhs, .. }
            | Step::Conv { lhs, rhs, .. } => vec![lhs, rhs],
            Step::Select { pred: a, on_true: b, on_false: c }
            | Step::Clamp { min: a, operand: b, max: c } => {
                vec![a, b, c]
            }
            Step::Gather { operand, indices, .. } => vec![operand, indices],
            Step::Scatter { operand, indices, updates, .. } => vec![operand, indices, updates],
            Step::Pad { x, value: y, .. }
            | Step::Reduce { x, init: y, .. }
            | Step::ReduceWindow { x, init: y, .. } => vec![x, y],
            Step::SelectAndScatter { x, source, init, .. } => vec![x, source, init],
            Step::DynamicSlice { x, starts, .. } => std::iter::once(x).chain(starts.iter_mut()).collect(),
            Step::DynamicUpdateSlice { x, update, starts } => {
                [x, update].into_iter().chain(starts.iter_mut()).collect()
            }
            Step::ReduceVariadic { xs, inits, .. } => xs.iter_mut().chain(inits.iter_mut()).collect(),
            Step::Concat { xs, .. }
            | Step::Sort { xs, .. }
            | Step::Call { xs, .. }
            | Step::Map { xs, .. } => xs.iter_mut().collect(),
            Step::While { init, .. } => init.iter_mut().collect(),
            Step::Conditional { selector, operands, .. } => {
                std::iter::once(selector).chain(operands.iter_mut()).collect()
            }
        }
    }

    /// The element of the op's tuple the step takes, if the op returns a tuple.
    pub fn tuple_output(&self) -> Option<usize> {
        match self {
            Step::Sort { xs, output, .. } if xs.len() > 1 => Some(*output),
            Step::Conditional { branches, output, .. } if branches[0].len() > 1 => Some(*output),
            Step::Call { body, output, .. } if body.len() > 1 => Some(*output),
            Step::ReduceVariadic { output, .. }
            | Step::TopK { output, .. }
            | Step::RngBitGenerator { output, .. }
            | Step::While { output, .. } => Some(*output),
            _ => None,
        }
    }

    /// The computations the step hands to its op, in the order its function takes them (step
    /// `id`; `describe` gives its operands' types and dimensions, the computations' parameters
    /// in the default layout).
    pub fn computations(&self, id: Id, describe: Describe<'_>) -> Vec<Computation> {
        let ty = |x: &Id| describe(*x).0;
        let shape = |x: &Id| {
            let (ty, dims) = describe(*x);
            Shape::new(ty, &dims)
        };
        let types = |xs: &[Id]| xs.iter().map(ty).collect::<Vec<_>>();
        let root = |exprs: &[Expr]| match exprs {
            [one] => one.clone(),
            many => Expr::Tuple(many.to_vec()),
        };
        match self {
            Step::Reduce { x, reducer, .. } | Step::ReduceWindow { x, reducer, .. } => {
                vec![reducer.computation(ty(x))]
            }
            Step::SelectAndScatter { x, select, source, .. } => {
                vec![selection(*select, ty(x)), Reducer::Add.computation(ty(source))]
            }
            Step::Scatter { operand, updater, .. } => vec![updater.computation(ty(operand))],
            Step::ReduceVariadic { xs, reducer, .. } => vec![reducer.computation(&types(xs))],
            Step::Sort { xs, comparator, .. } => vec![comparator.computation(&types(xs))],
            Step::While { init, limit, body, .. } => {
                let state = Shape::tuple(&init.iter().map(shape).collect::<Vec<_>>());
                vec![
                    Computation {
                        name: format!("condition_v{id}"),
                        parameters: vec![state.clone()],
                        root: loop_condition(*limit),
                    },
                    Computation {
                        name: format!("body_v{id}"),
                        parameters: vec![state],
                        root: Expr::Tuple(loop_body(body)),
                    },
                ]
            }
            Step::Conditional { operands, branches, .. } => (operands.iter().zip(branches))
                .enumerate()
                .map(|(k, (operand, branch))| Computation {
                    name: format!("branch{k}_v{id}"),
                    parameters: vec![shape(operand)],
                    root: root(branch),
                })
                .collect(),
            Step::Call { xs, body, .. } => {
                vec![Computation {
                    name: format!("call_v{id}"),
                    parameters: xs.iter().map(shape).collect(),
                    root: root(body),
                }]
            }
            Step::Map { xs, function } => vec![Computation {
                name: format!("map_v{id}"),
                parameters: xs.iter().map(|x| Shape::scalar(ty(x))).collect(),
                root: function.clone(),
            }],
            _ => vec![],
        }
    }

    /// What the step covers beyond its op's name (for the generator's statistics): the
    /// attributes and forms that matter, as `op/feature` tags.
    pub fn features(&self, describe: Describe<'_>) -> Vec<String> {
        let rank = |x: Id| describe(x).1.len();
        let mut tags: Vec<&str> = Vec::new();
        let mut tag = |on: bool, what: &'static str| {
            if on {
                tags.push(what);
            }
        };
        match self {
            Step::Gather { indices, numbers, sorted, .. } => {
                tag(!numbers.operand_batching_dims.is_empty(), "batching dims");
                tag(!numbers.collapsed_slice_dims.is_empty(), "collapsed dims");
                tag(numbers.index_vector_dim == rank(*indices) as i64, "index_vector_dim = rank");
                tag(*sorted, "indices_are_sorted");
            }
            Step::Scatter { indices, numbers, updater, sorted, unique, .. } => {
                tag(!numbers.input_batching_dims.is_empty(), "batching dims");
                tag(!numbers.inserted_window_dims.is_empty(), "inserted window dims");
                tag(numbers.index_vector_dim == rank(*indices) as i64, "index_vector_dim = rank");
                tag(*updater == Updater::Overwrite, "overwrite");
                tag(
                    matches!(updater, Updater::Reduce(r) if !matches!(r, Reducer::Add | Reducer::Max | Reducer::Min | Reducer::Mul)),
                    "other updater",
                );
                tag(*sorted, "indices_are_sorted");
                tag(*unique, "unique_indices");
            }
            Step::ReduceWindow { window, .. } | Step::SelectAndScatter { window, .. } => {
                let dilated = |d: &[i64]| d.iter().any(|&d| d > 1);
                tag(window.strides.iter().any(|&s| s > 1), "strides");
                match &window.padding {
                    WindowPadding::Enum(Padding::Same) => tag(true, "Padding::Same"),
                    WindowPadding::Enum(Padding::Valid) => tag(true, "Padding::Valid"),
                    WindowPadding::General { padding, base_dilations, window_dilations } => {
                        tag(padding.iter().any(|&(l, h)| l != 0 || h != 0), "padding");
                        tag(padding.iter().any(|&(l, h)| l < 0 || h < 0), "negative padding");
                        tag(dilated(base_dilations), "base dilation");
                        tag(dilated(window_dilations), "window dilation");
                    }
                }
            }
            Step::Conv { conv, options, lhs, .. } => {
                tag(rank(*lhs) == 3, "1 spatial dim");
                tag(rank(*lhs) == 4, "2 spatial dims");
                tag(rank(*lhs) == 5, "3 spatial dims");
                tag(conv.feature_group_count > 1, "feature groups");
                tag(conv.batch_group_count > 1, "batch groups");
                tag(conv.lhs_dilation.iter().any(|&d| d > 1), "lhs dilation");
                tag(conv.rhs_dilation.iter().any(|&d| d > 1), "rhs dilation");
                tag(conv.strides.iter().any(|&d| d > 1), "strides");
                match &conv.padding {
                    ConvPadding::Explicit(padding) => {
                        tag(padding.iter().any(|&(l, h)| l < 0 || h < 0), "negative padding")
                    }
                    ConvPadding::Enum(padding) => tag(*padding == Padding::Same, "Padding::Same"),
                }
                tag(options.as_ref().is_some_and(|o| o.preferred.is_some()), "preferred type");
            }
            Step::Dot { options, .. } | Step::DotGeneral { options, .. } => {
                tag(options.as_ref().is_some_and(|o| o.preferred.is_some()), "preferred type");
                tag(options.as_ref().is_some_and(|o| o.precision.is_some()), "precision config");
            }
            Step::Sort { xs, comparator, stable, .. } => {
                tag(xs.len() > 1, "several operands");
                tag(comparator.keys > 1, "several keys");
                tag(comparator.total_order, "total order");
                tag(comparator.descending, "descending");
                tag(*stable, "stable");
            }
            Step::TopK { largest, .. } => tag(!largest, "smallest"),
            Step::ReduceVariadic { reducer, .. } => {
                tag(*reducer == VariadicReducer::Argmax, "argmax");
                tag(*reducer == VariadicReducer::Argmin, "argmin");
                tag(*reducer == VariadicReducer::Sums, "sums");
            }
            Step::RngBitGenerator { algorithm, .. } => {
                tag(*algorithm == RandomAlgorithm::ThreeFry, "ThreeFry");
                tag(*algorithm == RandomAlgorithm::Philox, "Philox");
                tag(*algorithm == RandomAlgorithm::Default, "Default");
            }
            Step::While { init, .. } => tag(init.len() > 2, "several arrays"),
            Step::Conditional { operands, branches, .. } => {
                tag(branches[0].len() > 1, "tuple result");
                tag(operands.len() > 2, "3 branches");
            }
            Step::Call { body, .. } => tag(body.len() > 1, "tuple result"),
            Step::BitcastConvert { x, to } => {
                let (from, to) = (describe(*x).0.byte_size(), to.byte_size());
                tag(from > to, "narrower");
                tag(from < to, "wider");
            }
            _ => {}
        }
        tags.into_iter().map(|t| format!("{}/{t}", self.name())).collect()
    }
}

/// A while step's condition over its state (parameter 0): `counter < limit`.
pub fn loop_condition(limit: i32) -> Expr {
    let limit = Expr::Constant(ElementType::S32, Value::Int(i128::from(limit)));
    Expr::p(0).element(0).compare(CompareKind::Lt, limit)
}

/// A while step's body over its state (parameter 0), element by element of the tuple it
/// returns: `(counter + 1, body[0], body[1], …)`.
pub fn loop_body(body: &[Expr]) -> Vec<Expr> {
    let one = Expr::Constant(ElementType::S32, Value::Int(1));
    std::iter::once(Expr::p(0).element(0).binary(BinaryKind::Add, one)).chain(body.iter().cloned()).collect()
}

/// A graph: its steps, its results and the layouts `execute_into` writes them in.
#[derive(Clone, Debug)]
pub struct Recipe {
    pub steps: Vec<Step>,
    /// The steps the computation returns: the root alone, or (with `tuple`) a tuple of them.
    pub results: Vec<Id>,
    pub tuple: bool,
    /// The layout `execute_into` writes each result in.
    pub output_layouts: Vec<Layout>,
}

impl Recipe {
    /// The same graph with only the steps the results depend on (renumbered, order kept).
    pub fn pruned(&self) -> Recipe {
        let mut live: BTreeSet<Id> = self.results.iter().copied().collect();
        for i in (0..self.steps.len()).rev() {
            if live.contains(&i) {
                live.extend(self.steps[i].operands());
            }
        }
        let new_id = |old: Id| live.iter().position(|&l| l == old).expect("a live step");
        let steps = live
            .iter()
            .map(|&i| {
                let mut step = self.steps[i].clone();
                step.rename(new_id);
                step
            })
            .collect();
        let results = self.results.iter().map(|&r| new_id(r)).collect();
        Recipe { steps, results, tuple: self.tuple, output_layouts: self.output_layouts.clone() }
    }

    /// The arguments, one literal per parameter in its argument layout.
    pub fn arguments(&self) -> Vec<Literal> {
        self.steps
            .iter()
            .filter_map(|step| match step {
                Step::Parameter { shape, argument_layout, values } => {
                    Some(literal(&shape.relayout(argument_layout).expect("argument layout"), values))
                }
                _ => None,
            })
            .collect()
    }
}
