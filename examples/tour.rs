//! A five-minute tour of lazy-xla: shapes, literals, building a small model with eager shape
//! inference and `file:line` errors, its HLO text, compiling and running it (also into a reused
//! output), the optimized HLO with its fusion, fused against unfused timing of a mid-size
//! element-wise workload, and a gradient.
//!
//! Run with `cargo run --release --example tour`.

use std::time::{Duration, Instant};

use lazy_xla::{
    add, div, dot, grad, max, mul, reduce, shape, tanh, CompileOptions, Executable, Literal, Result, Shape,
    XlaBuilder, XlaComputation, XlaOp,
};

/// The default size of the timed workload's `X` (4 MiB of f32).
const SIZE: usize = 1024;
/// Timed runs of each mode; the median is reported.
const RUNS: usize = 7;

#[macro_use]
#[path = "common/text.rs"]
mod text;
use text::heading;

/// Every line of `text`, indented by four spaces (trailing blank lines dropped).
fn indented(text: &str) -> String {
    text.trim_end()
        .lines()
        .map(|line| if line.is_empty() { "\n".into() } else { format!("    {line}\n") })
        .collect()
}

// ---- 1. Shapes ------------------------------------------------------------------------------

fn shapes(out: &mut String) -> Result<()> {
    heading(out, "1. Shapes and the shape! macro");
    say!(out, "A shape is an element type, dimension sizes and a layout (minor_to_major), as in XLA.");
    let rows = 2;
    let row_major = shape!(f32[rows, 3]);
    say!(out, "shape!(f32[rows, 3])     = {row_major}   (default layout: row-major)");
    let column_major = shape!(f32[2, 3]{0, 1});
    say!(out, "shape!(f32[2, 3]{{0, 1}})  = {column_major}   (column-major: dimension 0 is minor)");
    let parsed: Shape = "f32[2,3]{0,1}".parse()?;
    say!(
        out,
        "\"f32[2,3]{{0,1}}\".parse() = {parsed}   (XLA's text form, both ways; equal: {})",
        parsed == column_major
    );
    say!(
        out,
        "element type {}, dimensions {:?}, rank {}, {} elements",
        column_major.element_type(),
        column_major.dimensions(),
        column_major.rank(),
        column_major.element_count()
    );
    for shape in [&row_major, &column_major] {
        say!(out, "{shape}: index [1, 2] is at linear position {} in memory", shape.linear_index(&[1, 2])?);
    }
    Ok(())
}

// ---- 2. Literals ----------------------------------------------------------------------------

fn literals(out: &mut String) -> Result<()> {
    heading(out, "2. Literals");
    say!(out, "A Literal is a host array with a shape; values go in and come out in logical order.");
    let values = vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let m = Literal::from_vec(&shape!(f32[2, 3]{0, 1}), values)?;
    say!(out, "Literal::from_vec(f32[2,3]{{0,1}}, [1..6]) prints as XLA's Literal::ToString:");
    out.push_str(&indented(&m.to_string()));
    say!(out, "its memory (column-major) = {:?}", m.memory::<f32>()?);
    say!(out, "its values (logical)      = {:?}", m.to_vec::<f32>()?);
    let row_major = m.relayout(shape!(f32[2, 3]).layout())?;
    say!(out, "relayout to {{1,0}}: memory = {:?}, equal values: {}", row_major.memory::<f32>()?, {
        row_major.to_vec::<f32>()? == m.to_vec::<f32>()?
    });
    say!(out, "Literal::scalar(7.0f32) = {};  Literal::vec1(&[1, 2, 3]) = {}", Literal::scalar(7.0f32), {
        Literal::vec1(&[1i32, 2, 3])
    });
    Ok(())
}

// ---- 3. Building a model --------------------------------------------------------------------

/// A scalar `(f32, f32) -> f32` sum, the reducer `reduce` calls.
fn sum_computation() -> Result<XlaComputation> {
    let r = XlaBuilder::new("sum");
    let (a, b) = (r.parameter(0, &shape!(f32[]), "a"), r.parameter(1, &shape!(f32[]), "b"));
    r.build(add(a, b, &[]))
}

/// `out` gets one line: the op's description and the shape the builder inferred for it.
fn show_shape(out: &mut String, what: &str, op: XlaOp<'_>) -> Result<()> {
    say!(out, "    {what:<34} : {}", op.builder().get_shape(op)?);
    Ok(())
}

/// A dense layer with a row normalization, `y = relu(x . w + b{1})`, `y / sum(y, {1}){0}`, on
/// `x: f32[2,3]`, a column-major `w: f32[3,4]{0,1}` and `b: f32[4]`.
pub fn model(out: &mut String) -> Result<XlaComputation> {
    heading(out, "3. Building a small model, with eager shape inference");
    say!(out, "Ops are recorded, not run; each op's shape is inferred (by XLA's rules) as it is made:");
    let b = XlaBuilder::new("dense");
    let x = b.parameter(0, &shape!(f32[2, 3]), "x");
    let w = b.parameter(1, &shape!(f32[3, 4]{0, 1}), "w");
    let bias = b.parameter(2, &shape!(f32[4]), "b");
    show_shape(out, "x = parameter 0", x)?;
    show_shape(out, "w = parameter 1 (column-major)", w)?;
    show_shape(out, "b = parameter 2", bias)?;
    let xw = dot(x, w);
    show_shape(out, "xw = dot(x, w)", xw)?;
    let z = add(xw, bias, &[1]); // b matched to dimension 1 of xw: repeated for every row
    show_shape(out, "z = add(xw, b, &[1])", z)?;
    let y = max(z, b.constant_r0(0.0f32), &[]); // relu; the scalar broadcasts to every element
    show_shape(out, "y = max(z, 0, &[])", y)?;
    let row_sums = reduce(y, b.constant_r0(0.0f32), &sum_computation()?, &[1]);
    show_shape(out, "row_sums = reduce(y, 0, sum, &[1])", row_sums)?;
    let normalized = div(y, row_sums, &[0]); // row_sums matched to dimension 0 of y
    show_shape(out, "root = div(y, row_sums, &[0])", normalized)?;
    b.build(normalized)
}

// ---- 4. Errors ------------------------------------------------------------------------------

fn errors(out: &mut String) {
    heading(out, "4. An error, with its file:line");
    say!(out, "A bad op does not panic: it records XLA's error (the first one wins) and poisons the");
    say!(out, "builder. The message is XLA's own sentence, then what XLA cannot tell you: the op, its");
    say!(out, "operands and where in your code it was made.");
    let b = XlaBuilder::new("oops");
    let v = b.parameter(0, &shape!(f32[8]), "v");
    let m = b.parameter(1, &shape!(f32[16, 8]), "m");
    let (bad, line) = (add(v, m, &[0]), line!()); // v's 8 matched to m's dimension 0 (16)
    say!(out, "add(v: f32[8], m: f32[16,8], &[0]) on line {line} of {}:", file!());
    match b.get_shape(bad) {
        Ok(shape) => say!(out, "    unexpectedly accepted: {shape}"),
        Err(error) => say!(out, "    {error}"),
    }
    let later = mul(m, m, &[]);
    match b.build(later) {
        Ok(_) => say!(out, "build: unexpectedly succeeded"),
        Err(error) => say!(out, "build(a later, valid op) returns the same first error: {}", {
            b.get_shape(bad).err().is_some_and(|first| first == error)
        }),
    }
}

// ---- 5. Running -----------------------------------------------------------------------------

fn running(out: &mut String, computation: &XlaComputation) -> Result<()> {
    heading(out, "5. The HLO text of the built computation");
    say!(out, "Implicit broadcasts are explicit instructions, as in XLA (the text is XLA's own syntax):");
    say!(out);
    out.push_str(&indented(&computation.to_hlo_text()));

    heading(out, "6. Compile and execute");
    let exe = computation.compile(&CompileOptions::default())?;
    let x = Literal::from_vec(&shape!(f32[2, 3]), vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    let w_rows = vec![1.0f32, 0.0, -1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0];
    let w = Literal::from_vec(&shape!(f32[3, 4]{0, 1}), w_rows)?; // given row by row, stored by column
    let bias = Literal::vec1(&[0.0f32, -1.0, 1.0, -4.0]);
    say!(out, "x = {x}");
    say!(out, "w = {w}");
    say!(out, "b = {bias}");
    let result = exe.execute(&[&x, &w, &bias])?;
    say!(out, "exe.execute(&[&x, &w, &b]) =");
    out.push_str(&indented(&result.to_string()));
    let stats = exe.memory_stats();
    say!(out, "Its memory, planned when it was compiled: exe.memory_stats() =");
    say!(out, "  {stats:?}");

    heading(out, "7. execute_into: a reused output, in the output's own layout");
    let mut column_major = Literal::zeros(&shape!(f32[2, 4]{0, 1}))?;
    exe.execute_into(&[&x, &w, &bias], &mut column_major)?;
    say!(
        out,
        "into f32[2,4]{{0,1}}: same values: {}",
        column_major.to_vec::<f32>()? == result.to_vec::<f32>()?
    );
    say!(out, "memory, column by column: {:?}", column_major.memory::<f32>()?);

    heading(out, "8. The optimized HLO: exe.to_hlo_text()");
    say!(out, "The optimizer fused the broadcasts and element-wise ops into loop fusions, each one");
    say!(out, "strided loop over its output (broadcast operands are read with stride 0, never copied):");
    say!(out);
    out.push_str(&indented(&exe.to_hlo_text()));
    Ok(())
}

// ---- 6. Fused against unfused ---------------------------------------------------------------

/// W1 of the design, `max((X + b{1}) * s{0}, 0) + 1`, with `X: f32[size, size]`.
pub fn w1(size: usize) -> Result<XlaComputation> {
    let builder = XlaBuilder::new("w1");
    let x = builder.parameter(0, &shape!(f32[size, size]), "x");
    let b = builder.parameter(1, &shape!(f32[size]), "b");
    let s = builder.parameter(2, &shape!(f32[size]), "s");
    let relu = max(mul(add(x, b, &[1]), s, &[0]), builder.constant_r0(0.0f32), &[]);
    builder.build(relu + builder.constant_r0(1.0f32))
}

/// Deterministic arguments for [`w1`]: values of both signs, so the `max` matters.
fn w1_arguments(size: usize) -> Result<[Literal; 3]> {
    let x: Vec<f32> = (0..size * size).map(|i| ((i * 7919) % 1009) as f32 / 100.0 - 5.0).collect();
    let b: Vec<f32> = (0..size).map(|j| (j % 13) as f32 * 0.25 - 1.5).collect();
    let s: Vec<f32> = (0..size).map(|i| (i % 5) as f32 * 0.5 - 0.75).collect();
    Ok([Literal::from_vec(&shape!(f32[size, size]), x)?, Literal::vec1(&b), Literal::vec1(&s)])
}

/// The median of `runs` timed `execute_into` calls, after one untimed warm-up call.
fn median_time(exe: &Executable, arguments: &[&Literal], out: &mut Literal, runs: usize) -> Result<Duration> {
    exe.execute_into(arguments, out)?;
    let mut times: Vec<Duration> = (0..runs.max(1))
        .map(|_| {
            let start = Instant::now();
            exe.execute_into(arguments, out).map(|()| start.elapsed())
        })
        .collect::<Result<_>>()?;
    times.sort();
    Ok(times[times.len() / 2])
}

fn timing(out: &mut String, size: usize, runs: usize) -> Result<()> {
    heading(out, "9. Fused against unfused");
    say!(
        out,
        "W1 = max((X + b{{1}}) * s{{0}}, 0) + 1 with X: f32[{size},{size}], median of {runs} run(s) each"
    );
    let computation = w1(size)?;
    let fused = computation.compile(&CompileOptions::default())?;
    let unfused = computation.compile(&CompileOptions { fusion: false, ..Default::default() })?;
    let arguments = w1_arguments(size)?;
    let arguments: Vec<&Literal> = arguments.iter().collect();
    let (fused_values, unfused_values) =
        (fused.execute(&arguments)?.to_vec::<f32>()?, unfused.execute(&arguments)?.to_vec::<f32>()?);
    let largest_difference =
        fused_values.iter().zip(&unfused_values).map(|(f, u)| (f - u).abs()).fold(0.0f32, f32::max);
    let agree = fused_values.len() == unfused_values.len() && largest_difference <= 1e-6;
    say!(out, "fused and unfused agree on all {} values: {agree}", fused_values.len());
    let mut output = Literal::zeros(&shape!(f32[size, size]))?;
    let fused_time = median_time(&fused, &arguments, &mut output, runs)?;
    let unfused_time = median_time(&unfused, &arguments, &mut output, runs)?;
    for (mode, time) in [("fused", fused_time), ("unfused", unfused_time)] {
        say!(out, "{mode:<8} {:>9.3} ms", time.as_secs_f64() * 1e3);
    }
    say!(out, "unfused / fused = {:.2}x", unfused_time.as_secs_f64() / fused_time.as_secs_f64().max(1e-12));
    say!(out, "(The unfused plan writes and rereads a full f32[{size},{size}] array per op; the fused");
    say!(out, "one reads X once and writes the output once.)");
    Ok(())
}

// ---- 10. Derivatives -------------------------------------------------------------------------

/// `grad` of `f(x, w) = Σ tanh(x)·w` with respect to `x`, run and checked against the
/// derivative by hand, `(1 - tanh(x)²)·w`.
fn derivatives(out: &mut String) -> Result<()> {
    heading(out, "10. Derivatives: grad (value_and_grad, vjp and jvp alike)");
    let b = XlaBuilder::new("f");
    let x = b.parameter(0, &shape!(f32[3]), "x");
    let w = b.parameter(1, &shape!(f32[3]), "w");
    let f = b.build(reduce(mul(tanh(x), w, &[]), b.constant_r0(0.0f32), &sum_computation()?, &[0]))?;
    let df_dx = grad(&f, &[0])?; // a computation like any other: (x, w) -> (df/dx,)
    say!(out, "f(x, w) = sum(tanh(x) * w)      : {}", f.program_shape());
    say!(out, "grad(&f, &[0])                  : {}", df_dx.program_shape());
    let (xs, ws) = ([0.5f32, -1.0, 2.0], [1.0f32, 2.0, -3.0]);
    let arguments = [Literal::vec1(&xs), Literal::vec1(&ws)];
    let got = df_dx.compile(&CompileOptions::default())?.execute(&[&arguments[0], &arguments[1]])?;
    let got = got.decompose_tuple()?[0].to_vec::<f32>()?;
    let by_hand: Vec<f32> = xs.iter().zip(ws).map(|(x, w)| (1.0 - x.tanh().powi(2)) * w).collect();
    let agree = got.iter().zip(&by_hand).all(|(g, h)| (g - h).abs() <= 1e-6);
    say!(out, "at x = {xs:?}, w = {ws:?}: df/dx = {got:.4?}");
    say!(out, "equal to (1 - tanh(x)^2) * w within 1e-6: {agree}");
    Ok(())
}

// ---- The tour -------------------------------------------------------------------------------

/// The whole tour, as the text `main` prints, timing W1 at `size`×`size` over `runs` runs.
pub fn tour(size: usize, runs: usize) -> Result<String> {
    let mut out = String::new();
    say!(out, "A tour of lazy-xla: XLA's builder, shapes and semantics in pure Rust");
    shapes(&mut out)?;
    literals(&mut out)?;
    let computation = model(&mut out)?;
    errors(&mut out);
    running(&mut out, &computation)?;
    timing(&mut out, size, runs)?;
    derivatives(&mut out)?;
    say!(out);
    say!(
        out,
        "Next: cargo run --release --example broadcasting | layouts | mlp | train_mlp | fused_vs_unfused"
    );
    Ok(out)
}

fn main() -> Result<()> {
    print!("{}", tour(SIZE, RUNS)?);
    Ok(())
}
