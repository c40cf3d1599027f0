//! A graph recipe: a plain list of steps (one value each, operands named by step index) that
//! builds a lazy-xla graph through the public API ([`build`]), is evaluated by the reference
//! interpreter (`reference.rs`) and prints as a Rust program ([`program`]) that can be pasted
//! into a test.

use std::collections::{BTreeMap, BTreeSet};

use crate::common::semantics::{BinaryKind, CompareKind, UnaryKind};
use crate::common::values::{literal, rust_value, rust_vec, with_native, Native, Value};
use lazy_xla::*;

/// The index of a step (and of the value it makes).
pub type Id = usize;

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

    /// The root expression over parameters `a` and `b` of builder `r`, as Rust source.
    fn source(self, ty: ElementType) -> String {
        let one = rust_value(ty, Value::Int(1).into_type(ty));
        let zero = rust_value(ty, Value::Int(0).into_type(ty));
        match self {
            Reducer::Add => "add(a, b, &[])".into(),
            Reducer::Mul => "mul(a, b, &[])".into(),
            Reducer::Max => "max(a, b, &[])".into(),
            Reducer::Min => "min(a, b, &[])".into(),
            Reducer::And => "and(a, b, &[])".into(),
            Reducer::Or => "or(a, b, &[])".into(),
            Reducer::MaxSelect => "select(gt(a, b, &[]), a, b)".into(),
            Reducer::AddTimesOne => format!("mul(add(a, b, &[]), r.constant_r0({one}), &[])"),
            Reducer::MaxPlusZero => format!("add(max(a, b, &[]), r.constant_r0({zero}), &[])"),
        }
    }

    /// The scalar `(ty, ty) -> ty` computation.
    pub fn computation(self, ty: ElementType) -> Result<XlaComputation> {
        let r = XlaBuilder::new(&self.label(ty));
        let s = Shape::scalar(ty);
        let (a, b) = (r.parameter(0, &s, "a"), r.parameter(1, &s, "b"));
        let constant =
            |v: i128| with_native!(ty, T => r.constant_r0(T::from_value(Value::Int(v).into_type(ty))));
        let root = match self {
            Reducer::Add => add(a, b, &[]),
            Reducer::Mul => mul(a, b, &[]),
            Reducer::Max => max(a, b, &[]),
            Reducer::Min => min(a, b, &[]),
            Reducer::And => and(a, b, &[]),
            Reducer::Or => or(a, b, &[]),
            Reducer::MaxSelect => select(gt(a, b, &[]), a, b),
            Reducer::AddTimesOne => mul(add(a, b, &[]), constant(1), &[]),
            Reducer::MaxPlusZero => add(max(a, b, &[]), constant(0), &[]),
        };
        r.build(root)
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
    Reduce {
        x: Id,
        init: Id,
        reducer: Reducer,
        dimensions: Vec<i64>,
    },
    Dot {
        lhs: Id,
        rhs: Id,
    },
    DotGeneral {
        lhs: Id,
        rhs: Id,
        numbers: DotDimensionNumbers,
    },
}

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
            Step::Broadcast { .. } => "broadcast",
            Step::BroadcastInDim { .. } => "broadcast_in_dim",
            Step::Reshape { .. } => "reshape",
            Step::Transpose { .. } => "transpose",
            Step::Slice { .. } => "slice",
            Step::Concat { .. } => "concat_in_dim",
            Step::Pad { .. } => "pad",
            Step::Rev { .. } => "rev",
            Step::Reduce { .. } => "reduce",
            Step::Dot { .. } => "dot",
            Step::DotGeneral { .. } => "dot_general",
        }
    }

    /// The steps this one reads, in order.
    pub fn operands(&self) -> Vec<Id> {
        match self {
            Step::Parameter { .. }
            | Step::ConstantLiteral { .. }
            | Step::ConstantR0 { .. }
            | Step::Iota { .. } => {
                vec![]
            }
            Step::Unary { x, .. }
            | Step::Convert { x, .. }
            | Step::Broadcast { x, .. }
            | Step::BroadcastInDim { x, .. }
            | Step::Reshape { x, .. }
            | Step::Transpose { x, .. }
            | Step::Slice { x, .. }
            | Step::Rev { x, .. } => vec![*x],
            Step::Binary { lhs, rhs, .. }
            | Step::Compare { lhs, rhs, .. }
            | Step::Dot { lhs, rhs }
            | Step::DotGeneral { lhs, rhs, .. } => vec![*lhs, *rhs],
            Step::Select { pred, on_true, on_false } => vec![*pred, *on_true, *on_false],
            Step::Clamp { min, operand, max } => vec![*min, *operand, *max],
            Step::Concat { xs, .. } => xs.clone(),
            Step::Pad { x, value, .. } => vec![*x, *value],
            Step::Reduce { x, init, .. } => vec![*x, *init],
        }
    }

    /// Renames the steps this one reads.
    pub fn rename(&mut self, f: impl Fn(Id) -> Id) {
        let ids: Vec<&mut Id> = match self {
            Step::Parameter { .. }
            | Step::ConstantLiteral { .. }
            | Step::ConstantR0 { .. }
            | Step::Iota { .. } => {
                vec![]
            }
            Step::Unary { x, .. }
            | Step::Convert { x, .. }
            | Step::Broadcast { x, .. }
            | Step::BroadcastInDim { x, .. }
            | Step::Reshape { x, .. }
            | Step::Transpose { x, .. }
            | Step::Slice { x, .. }
            | Step::Rev { x, .. } => vec![x],
            Step::Binary { lhs, rhs, .. }
            | Step::Compare { lhs, rhs, .. }
            | Step::Dot { lhs, rhs }
            | Step::DotGeneral { lhs, rhs, .. } => vec![lhs, rhs],
            Step::Select { pred, on_true, on_false } => vec![pred, on_true, on_false],
            Step::Clamp { min, operand, max } => vec![min, operand, max],
            Step::Concat { xs, .. } => xs.iter_mut().collect(),
            Step::Pad { x, value, .. } => vec![x, value],
            Step::Reduce { x, init, .. } => vec![x, init],
        };
        for id in ids {
            *id = f(*id);
        }
    }
}

/// A graph: its steps, the root, and the layout `execute_into` writes the result in.
#[derive(Clone, Debug)]
pub struct Recipe {
    pub steps: Vec<Step>,
    pub root: Id,
    pub output_layout: Layout,
}

impl Recipe {
    /// The same graph with only the steps `root` depends on (renumbered, order kept).
    pub fn pruned(&self) -> Recipe {
        let mut live = BTreeSet::from([self.root]);
        for i in (0..=self.root).rev() {
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
        Recipe { steps, root: new_id(self.root), output_layout: self.output_layout.clone() }
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

/// A recipe built with lazy-xla: the computation and the shape `get_shape` gave each step.
pub struct Built {
    pub computation: XlaComputation,
    pub shapes: Vec<Shape>,
}

type Unary = for<'a> fn(XlaOp<'a>) -> XlaOp<'a>;
type Binary = for<'a, 'c> fn(XlaOp<'a>, XlaOp<'a>, &'c [i64]) -> XlaOp<'a>;

fn unary_fn(op: UnaryKind) -> Unary {
    use UnaryKind::*;
    match op {
        Neg => neg,
        Abs => abs,
        Exp => exp,
        Log => log,
        Log1p => log1p,
        Expm1 => expm1,
        Tanh => tanh,
        Logistic => logistic,
        Sqrt => sqrt,
        Rsqrt => rsqrt,
        Sign => sign,
        Floor => floor,
        Ceil => ceil,
        Round => round,
        RoundNearestEven => round_nearest_even,
        Sin => sin,
        Cos => cos,
        Not => not,
        IsFinite => is_finite,
    }
}

fn binary_fn(op: BinaryKind) -> Binary {
    use BinaryKind::*;
    match op {
        Add => add,
        Sub => sub,
        Mul => mul,
        Div => div,
        Rem => rem,
        Max => max,
        Min => min,
        Pow => pow,
        Atan2 => atan2,
        And => and,
        Or => or,
        Xor => xor,
        ShiftLeft => shift_left,
        ShiftRightArithmetic => shift_right_arithmetic,
        ShiftRightLogical => shift_right_logical,
    }
}

fn compare_fn(op: CompareKind) -> Binary {
    match op {
        CompareKind::Eq => eq,
        CompareKind::Ne => ne,
        CompareKind::Ge => ge,
        CompareKind::Gt => gt,
        CompareKind::Le => le,
        CompareKind::Lt => lt,
    }
}

fn padding_config(config: &[[i64; 3]]) -> PaddingConfig {
    PaddingConfig {
        dimensions: config
            .iter()
            .map(|&[edge_padding_low, edge_padding_high, interior_padding]| PaddingConfigDimension {
                edge_padding_low,
                edge_padding_high,
                interior_padding,
            })
            .collect(),
    }
}

/// Builds the recipe with lazy-xla's public API. An `Err` names the step the builder rejected
/// (every step of a generated recipe is valid, so that is a bug on one side or the other).
pub fn build(recipe: &Recipe) -> Result<Built, String> {
    let b = XlaBuilder::new("fuzz");
    let mut ops: Vec<XlaOp<'_>> = Vec::new();
    let mut shapes: Vec<Shape> = Vec::new();
    let mut parameters = 0;
    for (i, step) in recipe.steps.iter().enumerate() {
        let v = |id: Id| ops[id];
        let op = match step {
            Step::Parameter { shape, .. } => {
                parameters += 1;
                b.parameter(parameters - 1, shape, &format!("p{}", parameters - 1))
            }
            Step::ConstantLiteral { shape, values } => b.constant_literal(&literal(shape, values)),
            Step::ConstantR0 { ty, value } => with_native!(*ty, T => b.constant_r0(T::from_value(*value))),
            Step::Iota { shape, dimension } => iota(&b, shape, *dimension),
            Step::Unary { op, x } => unary_fn(*op)(v(*x)),
            Step::Binary { op, lhs, rhs, broadcast_dimensions } => {
                binary_fn(*op)(v(*lhs), v(*rhs), broadcast_dimensions)
            }
            Step::Compare { op, lhs, rhs, broadcast_dimensions } => {
                compare_fn(*op)(v(*lhs), v(*rhs), broadcast_dimensions)
            }
            Step::Select { pred, on_true, on_false } => select(v(*pred), v(*on_true), v(*on_false)),
            Step::Clamp { min, operand, max } => clamp(v(*min), v(*operand), v(*max)),
            Step::Convert { x, to } => convert_element_type(v(*x), *to),
            Step::Broadcast { x, sizes } => broadcast(v(*x), sizes),
            Step::BroadcastInDim { x, dims, broadcast_dimensions } => {
                broadcast_in_dim(v(*x), dims, broadcast_dimensions)
            }
            Step::Reshape { x, dims } => reshape(v(*x), dims),
            Step::Transpose { x, permutation } => transpose(v(*x), permutation),
            Step::Slice { x, start, limit, strides } => slice(v(*x), start, limit, strides),
            Step::Concat { xs, dimension } => {
                concat_in_dim(&b, &xs.iter().map(|&x| v(x)).collect::<Vec<_>>(), *dimension)
            }
            Step::Pad { x, value, config } => pad(v(*x), v(*value), &padding_config(config)),
            Step::Rev { x, dimensions } => rev(v(*x), dimensions),
            Step::Reduce { x, init, reducer, dimensions } => {
                let computation = reducer
                    .computation(shapes[*x].element_type())
                    .map_err(|e| format!("reducer {}: {e}", reducer.label(shapes[*x].element_type())))?;
                reduce(v(*x), v(*init), &computation, dimensions)
            }
            Step::Dot { lhs, rhs } => dot(v(*lhs), v(*rhs)),
            Step::DotGeneral { lhs, rhs, numbers } => dot_general(v(*lhs), v(*rhs), numbers),
        };
        let shape = b.get_shape(op).map_err(|e| format!("the builder rejected v{i}: {e}"))?;
        ops.push(op);
        shapes.push(shape);
    }
    let computation = b.build(ops[recipe.root]).map_err(|e| format!("build: {e}"))?;
    Ok(Built { computation, shapes })
}

/// A layout as Rust source.
pub fn rust_layout(layout: &Layout) -> String {
    let plain = format!("Layout::new(&{:?})", layout.minor_to_major());
    match (layout.padded_dimensions(), layout.padding_value()) {
        (Some(padded), Some(value)) => format!("{plain}.with_padding(&{padded:?}, PaddingValue::{value:?})?"),
        _ => plain,
    }
}

/// A shape as Rust source: its text form, parsed.
fn rust_shape(shape: &Shape) -> String {
    format!("\"{shape}\".parse::<Shape>()?")
}

fn list(v: &[i64]) -> String {
    format!("{v:?}")
}

/// The Rust expression of step `i`.
fn expression(recipe: &Recipe, i: Id, parameter: i64, ty_of: &dyn Fn(Id) -> ElementType) -> String {
    let v = |id: &Id| format!("v{id}");
    match &recipe.steps[i] {
        Step::Parameter { shape, .. } => format!("b.parameter({parameter}, &{}, \"p{parameter}\")", rust_shape(shape)),
        Step::ConstantLiteral { shape, values } => format!(
            "b.constant_literal(&Literal::from_vec(&{}, {})?)",
            rust_shape(shape),
            rust_vec(shape.element_type(), values)
        ),
        Step::ConstantR0 { ty, value } => format!("b.constant_r0({})", rust_value(*ty, *value)),
        Step::Iota { shape, dimension } => format!("iota(&b, &{}, {dimension})", rust_shape(shape)),
        Step::Unary { op, x } => format!("{}({})", op.name(), v(x)),
        Step::Binary { op, lhs, rhs, broadcast_dimensions } => {
            format!("{}({}, {}, &{})", op.name(), v(lhs), v(rhs), list(broadcast_dimensions))
        }
        Step::Compare { op, lhs, rhs, broadcast_dimensions } => {
            format!("{}({}, {}, &{})", op.name(), v(lhs), v(rhs), list(broadcast_dimensions))
        }
        Step::Select { pred, on_true, on_false } => format!("select({}, {}, {})", v(pred), v(on_true), v(on_false)),
        Step::Clamp { min, operand, max } => format!("clamp({}, {}, {})", v(min), v(operand), v(max)),
        Step::Convert { x, to } => format!("convert_element_type({}, ElementType::{to:?})", v(x)),
        Step::Broadcast { x, sizes } => format!("broadcast({}, &{})", v(x), list(sizes)),
        Step::BroadcastInDim { x, dims, broadcast_dimensions } => {
            format!("broadcast_in_dim({}, &{}, &{})", v(x), list(dims), list(broadcast_dimensions))
        }
        Step::Reshape { x, dims } => format!("reshape({}, &{})", v(x), list(dims)),
        Step::Transpose { x, permutation } => format!("transpose({}, &{})", v(x), list(permutation)),
        Step::Slice { x, start, limit, strides } => {
            format!("slice({}, &{}, &{}, &{})", v(x), list(start), list(limit), list(strides))
        }
        Step::Concat { xs, dimension } => {
            let xs: Vec<String> = xs.iter().map(v).collect();
            format!("concat_in_dim(&b, &[{}], {dimension})", xs.join(", "))
        }
        Step::Pad { x, value, config } => {
            let dims: Vec<String> = config
                .iter()
                .map(|[l, h, n]| {
                    format!(
                        "PaddingConfigDimension {{ edge_padding_low: {l}, edge_padding_high: {h}, interior_padding: {n} }}"
                    )
                })
                .collect();
            format!("pad({}, {}, &PaddingConfig {{ dimensions: vec![{}] }})", v(x), v(value), dims.join(", "))
        }
        Step::Rev { x, dimensions } => format!("rev({}, &{})", v(x), list(dimensions)),
        Step::Reduce { x, init, reducer, dimensions } => {
            format!("reduce({}, {}, &{}, &{})", v(x), v(init), reducer.label(ty_of(*x)), list(dimensions))
        }
        Step::Dot { lhs, rhs } => format!("dot({}, {})", v(lhs), v(rhs)),
        Step::DotGeneral { lhs, rhs, numbers } => format!(
            "dot_general({}, {}, &DotDimensionNumbers {{ lhs_contracting_dimensions: vec!{:?}, \
             rhs_contracting_dimensions: vec!{:?}, lhs_batch_dimensions: vec!{:?}, rhs_batch_dimensions: vec!{:?} }})",
            v(lhs),
            v(rhs),
            numbers.lhs_contracting_dimensions,
            numbers.rhs_contracting_dimensions,
            numbers.lhs_batch_dimensions,
            numbers.rhs_batch_dimensions
        ),
    }
}

/// The recipe as a Rust program over `use lazy_xla::*;` (in a function returning
/// `lazy_xla::Result`), ending with the arguments and the computation, ready to compile and run.
pub fn program(recipe: &Recipe, element_types: &[ElementType]) -> String {
    let ty_of = |id: Id| element_types[id];
    let mut out = String::new();
    let mut reducers = BTreeMap::new();
    for step in &recipe.steps {
        if let Step::Reduce { x, reducer, .. } = step {
            reducers.insert(reducer.label(ty_of(*x)), (*reducer, ty_of(*x)));
        }
    }
    for (reducer, ty) in reducers.into_values() {
        out += &format!(
            "let {} = {{\n    let r = XlaBuilder::new(\"{0}\");\n    let s = Shape::scalar(ElementType::{ty:?});\n    \
             let (a, b) = (r.parameter(0, &s, \"a\"), r.parameter(1, &s, \"b\"));\n    r.build({})?\n}};\n",
            reducer.label(ty),
            reducer.source(ty)
        );
    }
    out += "let b = XlaBuilder::new(\"fuzz\");\n";
    let mut parameter = 0;
    let mut arguments = Vec::new();
    for (i, step) in recipe.steps.iter().enumerate() {
        out += &format!("let v{i} = {};\n", expression(recipe, i, parameter, &ty_of));
        if let Step::Parameter { shape, argument_layout, values } = step {
            let argument_shape = shape.relayout(argument_layout).expect("argument layout");
            arguments.push(format!(
                "let a{parameter} = Literal::from_vec(&{}, {})?;\n",
                rust_shape(&argument_shape),
                rust_vec(shape.element_type(), values)
            ));
            parameter += 1;
        }
    }
    out += &format!("let computation = b.build(v{})?;\n", recipe.root);
    for argument in arguments {
        out += &argument;
    }
    let names: Vec<String> = (0..parameter).map(|p| format!("&a{p}")).collect();
    out += &format!("let arguments = [{}];\n", names.join(", "));
    out
}
