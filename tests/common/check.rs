//! Runs a recipe through lazy-xla and the reference and compares.
//!
//! For each recipe: build it through the public API (every step's `get_shape` must give the
//! reference's dimensions and element type, and the layout API.md's rules give; the layout of a
//! conditional's or a call's result, which follows the rules inside its computation, is not
//! checked), compile it fused (`CompileOptions::default()`) and unfused (`fusion: false`), run
//! each with the arguments in their own (possibly different, possibly padded) layouts with
//! `execute`, then again with `execute_into` into an output (a tuple of them for a tuple root)
//! in random layouts, whose padding must be left as it was. Every result must be acceptable to
//! the reference element by element ([`Elem::accepts`]: exact values for integers, `pred` and
//! exact float ops, the documented bounds for reassociated sums and transcendental functions),
//! and fused and unfused must agree exactly (NaN equal to NaN), a float reduce's result too
//! (both fold its values in the same order), unless a float dot or convolution feeds the
//! result: its order of summation is unspecified and may differ between the two (an f16 product
//! that underflows to subnormals can end one unit apart). Panics inside lazy-xla are caught.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

use crate::common::golden::leaves;
use crate::common::recipe::{build, program, rust_layout, Id, Recipe, Step};
use crate::common::reference::{evaluate, indices};
use crate::common::values::{memory_of, padding_offsets, values_of, Array, Value};
use lazy_xla::{CompileOptions, Layout, Literal, Shape, XlaComputation};

/// A way a recipe failed.
#[derive(Clone, Debug)]
pub enum Failure {
    /// lazy-xla panicked.
    Panic { stage: String, message: String },
    /// lazy-xla returned an error for a valid graph.
    Error { stage: String, message: String },
    /// A step's shape differs from what the reference and XLA's rules expect.
    Shape { step: Id, op: &'static str, message: String },
    /// A result differs from the reference, or fused from unfused.
    Mismatch { run: String, message: String },
}

impl Failure {
    /// What kind of failure this is, for telling failures apart while minimizing: the stage
    /// and the first line of a panic or error (without locations), the run of a mismatch.
    pub fn class(&self) -> String {
        let first_line =
            |m: &str| m.lines().next().unwrap_or("").split(" at ").next().unwrap_or("").to_string();
        match self {
            Failure::Panic { stage, message } => format!("panic in {stage}: {}", first_line(message)),
            Failure::Error { stage, message } => format!("error in {stage}: {}", first_line(message)),
            Failure::Shape { op, .. } => format!("shape of {op}"),
            Failure::Mismatch { run, .. } => format!("mismatch: {run}"),
        }
    }

    /// The whole message.
    pub fn message(&self) -> String {
        match self {
            Failure::Panic { stage, message } => format!("panic in {stage}: {message}"),
            Failure::Error { stage, message } => format!("error in {stage}: {message}"),
            Failure::Shape { step, op, message } => format!("shape of v{step} ({op}): {message}"),
            Failure::Mismatch { run, message } => format!("{run}:\n{message}"),
        }
    }
}

thread_local! {
    /// Whether a panic on this thread is expected and caught (and so not printed).
    static CATCHING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, turning a panic into its message. The panic is not printed (other threads'
/// panics still are).
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static QUIET_HOOK: Once = Once::new();
    QUIET_HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !CATCHING.with(Cell::get) {
                default(info);
            }
        }));
    });
    let before = CATCHING.with(|c| c.replace(true));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(before));
    result.map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string())
    })
}

/// The layout API.md's rules give step `i` (operand layouts from `layouts`), or `None` where
/// they do not pin it (the result of a computation of the recipe's: a conditional's or a
/// call's). Only its `minor_to_major` is checked: padding is lazy-xla's extension, and which ops
/// keep it is its own policy.
fn expected_layout(recipe: &Recipe, arrays: &[Array], layouts: &[Layout], i: Id) -> Option<Layout> {
    let default = Layout::default_for_rank(arrays[i].dims.len());
    let dims = |id: Id| &arrays[id].dims;
    let of = |id: &Id| Some(layouts[*id].clone());
    match &recipe.steps[i] {
        Step::Parameter { shape, .. } | Step::ConstantLiteral { shape, .. } | Step::Iota { shape, .. } => {
            Some(shape.layout().clone())
        }
        Step::Unary { x, .. }
        | Step::Convert { x, .. }
        | Step::Rev { x, .. }
        | Step::ReducePrecision { x, .. } => of(x),
        Step::Binary { lhs, rhs, .. } | Step::Compare { lhs, rhs, .. } if dims(*lhs) == dims(*rhs) => of(lhs),
        // The first argument that is not a scalar (asked jaxlib: a scalar pred gives on_true's
        // layout, a scalar operand of clamp min's).
        Step::Select { pred: a, on_true: b, on_false: c } | Step::Clamp { operand: a, min: b, max: c } => {
            Some(
                [*a, *b, *c]
                    .into_iter()
                    .find(|&id| !dims(id).is_empty())
                    .map_or(default, |id| layouts[id].clone()),
            )
        }
        Step::Transpose { x, permutation } => {
            let position = |d: i64| permutation.iter().position(|&p| p == d).expect("a permutation") as i64;
            Some(Layout::new(&layouts[*x].minor_to_major().iter().map(|&d| position(d)).collect::<Vec<_>>()))
        }
        // A narrower type's new dimension is the most minor; a wider one drops the last.
        Step::BitcastConvert { x, to } => {
            let (rank, from) = (dims(*x).len() as i64, arrays[*x].ty.byte_size());
            let operand = layouts[*x].minor_to_major();
            Some(Layout::new(&match from.cmp(&to.byte_size()) {
                std::cmp::Ordering::Equal => operand.to_vec(),
                std::cmp::Ordering::Greater => std::iter::once(rank).chain(operand.iter().copied()).collect(),
                std::cmp::Ordering::Less => operand.iter().copied().filter(|&d| d != rank - 1).collect(),
            }))
        }
        // Ops whose result is their operand's shape.
        Step::DynamicUpdateSlice { x, .. }
        | Step::Scatter { operand: x, .. }
        | Step::SelectAndScatter { x, .. } => of(x),
        Step::Sort { xs, output, .. } => of(&xs[*output]),
        Step::While { init, output, .. } => of(&init[*output]),
        Step::RngBitGenerator { state, output: 0, .. } => of(state),
        Step::RngBitGenerator { shape, .. } => Some(shape.layout().clone()),
        Step::Conditional { .. } | Step::Call { .. } => None,
        _ => Some(default),
    }
}

/// Whether a float dot or convolution (whose summation order is unspecified) feeds a result.
fn summed_by_a_dot(recipe: &Recipe, arrays: &[Array]) -> bool {
    let mut feeds = vec![false; recipe.steps.len()];
    for &r in &recipe.results {
        feeds[r] = true;
    }
    for i in (0..recipe.steps.len()).rev() {
        if !feeds[i] {
            continue;
        }
        let step = &recipe.steps[i];
        let dot = matches!(step, Step::Dot { .. } | Step::DotGeneral { .. } | Step::Conv { .. });
        if dot && step.operands().iter().any(|&o| arrays[o].ty.is_float()) {
            return true;
        }
        for o in step.operands() {
            feeds[o] = true;
        }
    }
    false
}

/// Elements where `got` is not acceptable to `expected`, described (at most 8).
fn value_mismatches(expected: &Array, got: &[Value]) -> Option<String> {
    let index = indices(&expected.dims);
    let bad: Vec<String> = expected
        .elems
        .iter()
        .zip(got)
        .enumerate()
        .filter(|(_, (e, &g))| !e.accepts(g))
        .take(8)
        .map(|(k, (e, g))| format!("  at {:?}: expected {:?} (± {:e}), got {g:?}", index[k], e.value, e.err))
        .collect();
    (!bad.is_empty()).then(|| bad.join("\n"))
}

/// Padding offsets of `got` (an output literal `execute_into` wrote) that no longer hold the
/// layout's padding value, described (at most 8). The padding is the caller's: a writer that
/// touches it corrupts memory the user owns.
fn padding_mismatches(got: &Literal) -> Option<String> {
    let fresh = memory_of(&Literal::zeros(got.shape()).expect("an output literal"));
    let memory = memory_of(got);
    let bad: Vec<String> = padding_offsets(got.shape())
        .into_iter()
        .filter(|&o| !memory[o].identical(fresh[o]))
        .take(8)
        .map(|o| format!("  padding at buffer offset {o}: expected {:?}, got {:?}", fresh[o], memory[o]))
        .collect();
    (!bad.is_empty()).then(|| bad.join("\n"))
}

/// Checks one result: its shape, then its values (each element of a tuple).
fn check_result(
    expected: &[&Array],
    expected_shape: &Shape,
    got: &Literal,
    run: &str,
) -> Result<Vec<Value>, Failure> {
    let mismatch = |message: String| Failure::Mismatch { run: run.to_string(), message };
    if got.shape() != expected_shape {
        return Err(mismatch(format!("result shape {} instead of {expected_shape}", got.shape())));
    }
    let leaves = if got.is_tuple() {
        (0..expected.len()).map(|k| got.tuple_element(k).expect("an element of the tuple")).collect()
    } else {
        vec![got]
    };
    let mut all = Vec::new();
    for (k, (leaf, expected)) in leaves.into_iter().zip(expected).enumerate() {
        let values = catch(|| values_of(leaf)).map_err(|m| mismatch(format!("reading the result: {m}")))?;
        if let Some(bad) = value_mismatches(expected, &values) {
            let which = if got.is_tuple() { format!("element {k} of the tuple:\n") } else { String::new() };
            return Err(mismatch(format!("{which}{bad}")));
        }
        all.extend(values);
    }
    Ok(all)
}

/// The shape of the recipe's result, each array in the layout `layout` gives it.
fn result_shape(recipe: &Recipe, shapes: &[Shape], layout: impl Fn(usize) -> Layout) -> Shape {
    let arrays: Vec<Shape> = (recipe.results.iter().enumerate())
        .map(|(k, &r)| shapes[r].relayout(&layout(k)).expect("a layout of the result's rank"))
        .collect();
    match recipe.tuple {
        true => Shape::tuple(&arrays),
        false => arrays[0].clone(),
    }
}

/// Builds, compiles and runs the recipe every way; `Ok` if every result is right.
pub fn check(recipe: &Recipe) -> Result<(), Failure> {
    let arrays = evaluate(recipe);
    let built = catch(|| build(recipe))
        .map_err(|message| Failure::Panic { stage: "build".into(), message })?
        .map_err(|message| Failure::Error { stage: "build".into(), message })?;
    let mut layouts = Vec::new();
    for (i, (array, shape)) in arrays.iter().zip(&built.shapes).enumerate() {
        let layout = expected_layout(recipe, &arrays, &layouts, i).unwrap_or_else(|| shape.layout().clone());
        let same_layout = shape.layout().minor_to_major() == layout.minor_to_major();
        if shape.element_type() != array.ty || shape.dimensions() != array.dims || !same_layout {
            let expected =
                format!("{}{:?} with minor_to_major {:?}", array.ty, array.dims, layout.minor_to_major());
            let message = format!("expected {expected}, lazy-xla says {shape}");
            return Err(Failure::Shape { step: i, op: recipe.steps[i].name(), message });
        }
        layouts.push(layout);
    }
    let expected: Vec<&Array> = recipe.results.iter().map(|&r| &arrays[r]).collect();
    let root_shape =
        result_shape(recipe, &built.shapes, |k| built.shapes[recipe.results[k]].layout().clone());
    let output_shape = result_shape(recipe, &built.shapes, |k| recipe.output_layouts[k].clone());
    let arguments = recipe.arguments();
    let arguments: Vec<&Literal> = arguments.iter().collect();
    let mut results = Vec::new();
    for (mode, options) in [
        ("fused", CompileOptions::default()),
        ("unfused", CompileOptions { fusion: false, ..Default::default() }),
    ] {
        let stage = |what: &str| format!("{what} ({mode})");
        let executable = catch(|| built.computation.compile(&options))
            .map_err(|message| Failure::Panic { stage: stage("compile"), message })?
            .map_err(|e| Failure::Error { stage: stage("compile"), message: e.to_string() })?;
        let out = catch(|| executable.execute(&arguments))
            .map_err(|message| Failure::Panic { stage: stage("execute"), message })?
            .map_err(|e| Failure::Error { stage: stage("execute"), message: e.to_string() })?;
        results.push(check_result(&expected, &root_shape, &out, &stage("execute"))?);
        let mut into = Literal::zeros(&output_shape).expect("an output literal");
        catch(|| executable.execute_into(&arguments, &mut into))
            .map_err(|message| Failure::Panic { stage: stage("execute_into"), message })?
            .map_err(|e| Failure::Error { stage: stage("execute_into"), message: e.to_string() })?;
        check_result(&expected, &output_shape, &into, &stage("execute_into"))?;
        if let Some(bad) = leaves(&into).into_iter().find_map(padding_mismatches) {
            return Err(Failure::Mismatch { run: stage("execute_into's padding"), message: bad });
        }
    }
    if summed_by_a_dot(recipe, &arrays) {
        return Ok(());
    }
    let disagreements: Vec<String> = results[0]
        .iter()
        .zip(&results[1])
        .enumerate()
        .filter(|(_, (f, u))| !f.same(**u))
        .take(8)
        .map(|(k, (f, u))| format!("  at position {k}: fused {f:?}, unfused {u:?}"))
        .collect();
    if !disagreements.is_empty() {
        return Err(Failure::Mismatch { run: "fused vs unfused".into(), message: disagreements.join("\n") });
    }
    Ok(())
}

/// Runs `computation` on `arguments` compiled fused and unfused (for the regression tests); a
/// panic or an error is an `Err` naming the mode.
pub fn run_fused_and_unfused(
    computation: &XlaComputation,
    arguments: &[&Literal],
) -> Result<[Literal; 2], String> {
    let run = |fusion: bool| {
        let options = CompileOptions { fusion, ..Default::default() };
        let mode = if fusion { "fused" } else { "unfused" };
        catch(|| computation.compile(&options).and_then(|e| e.execute(arguments)))
            .map_err(|panic| format!("{mode}: panic: {panic}"))?
            .map_err(|error| format!("{mode}: {error}"))
    };
    Ok([run(true)?, run(false)?])
}

/// A failure report: the failure, the graph as a Rust program, the expected results.
pub fn report(recipe: &Recipe, failure: &Failure) -> String {
    let arrays = evaluate(recipe);
    let describe = |id: Id| (arrays[id].ty, arrays[id].dims.clone());
    let expected: Vec<String> = recipe
        .results
        .iter()
        .map(|&r| {
            let shown: Vec<String> = (arrays[r].elems.iter().take(64))
                .map(|e| match (e.value, e.is_exact(), e.is_unknown()) {
                    (_, _, true) => "?".to_string(),
                    (v, true, _) => format!("{v:?}"),
                    (v, false, _) => format!("{v:?}±{:e}", e.err),
                })
                .collect();
            format!("--- expected v{r}: {}{:?}: [{}]", arrays[r].ty, arrays[r].dims, shown.join(", "))
        })
        .collect();
    let layouts: Vec<String> = recipe.output_layouts.iter().map(rust_layout).collect();
    format!(
        "{}\n\n--- the graph ---\n{}--- execute_into's output layouts: {}\n{}",
        failure.message(),
        program(recipe, &describe),
        layouts.join(", "),
        expected.join("\n")
    )
}
