//! A two-layer perceptron's forward pass, built op by op as XLA would see it:
//! `softmax(relu(x · w1 + b1) · w2 + b2)` on a batch of 4 inputs of 8 features, 16 hidden units
//! and 3 classes. The weights come from a tiny deterministic generator; the result is checked
//! against the same computation written with plain ndarray, and fused execution against unfused.
//!
//! Run with `cargo run --example mlp`.

use lazy_xla::{
    add, div, dot, exp, max, reduce, shape, sub, CompileOptions, Literal, Result, XlaBuilder, XlaComputation,
    XlaOp,
};
use ndarray::{Array1, Array2, ArrayD, Axis};

const BATCH: usize = 4;
const INPUT: usize = 8;
const HIDDEN: usize = 16;
const OUTPUT: usize = 3;

/// How far lazy-xla's probabilities may be from ndarray's, and a row's sum from 1.
const TOLERANCE: f32 = 1e-5;

#[macro_use]
#[path = "common/text.rs"]
mod text;
use text::heading;

// ---- The data ---------------------------------------------------------------------------------

/// A linear congruential generator (Knuth's MMIX constants): the same numbers on every machine.
struct Lcg(u64);

impl Lcg {
    /// The next number, uniform in [-1, 1).
    fn next(&mut self) -> f32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        // The top 24 bits are the best ones, and exactly what an f32 mantissa holds.
        ((self.0 >> 40) as f32 / (1u64 << 23) as f32) - 1.0
    }

    /// A `rows x columns` matrix of numbers in [-scale, scale).
    fn matrix(&mut self, rows: usize, columns: usize, scale: f32) -> Array2<f32> {
        Array2::from_shape_simple_fn((rows, columns), || scale * self.next())
    }

    /// A vector of numbers in [-scale, scale).
    fn vector(&mut self, len: usize, scale: f32) -> Array1<f32> {
        Array1::from_shape_simple_fn(len, || scale * self.next())
    }
}

/// The model's inputs and parameters.
struct Model {
    x: Array2<f32>,
    w1: Array2<f32>,
    b1: Array1<f32>,
    w2: Array2<f32>,
    b2: Array1<f32>,
}

impl Model {
    /// Deterministic pseudo-random data; weights scaled by 1/sqrt(fan-in), as usual.
    fn new(seed: u64) -> Model {
        let mut lcg = Lcg(seed);
        let x = lcg.matrix(BATCH, INPUT, 1.0);
        let w1 = lcg.matrix(INPUT, HIDDEN, 1.0 / (INPUT as f32).sqrt());
        let b1 = lcg.vector(HIDDEN, 0.1);
        let w2 = lcg.matrix(HIDDEN, OUTPUT, 1.0 / (HIDDEN as f32).sqrt());
        let b2 = lcg.vector(OUTPUT, 0.1);
        Model { x, w1, b1, w2, b2 }
    }

    /// The arguments of the computation, in parameter order.
    fn arguments(&self) -> Vec<Literal> {
        vec![
            Literal::from(self.x.clone()),
            Literal::from(self.w1.clone()),
            Literal::from(self.b1.clone()),
            Literal::from(self.w2.clone()),
            Literal::from(self.b2.clone()),
        ]
    }
}

// ---- The computation --------------------------------------------------------------------------

/// A scalar `(f32, f32) -> f32` computation for `reduce`, such as `add` or `max`.
fn reducer(name: &str, op: for<'b> fn(XlaOp<'b>, XlaOp<'b>, &[i64]) -> XlaOp<'b>) -> Result<XlaComputation> {
    let r = XlaBuilder::new(name);
    let (a, b) = (r.parameter(0, &shape!(f32[]), "a"), r.parameter(1, &shape!(f32[]), "b"));
    r.build(op(a, b, &[]))
}

/// `max(x, 0)`, element-wise: the scalar 0 broadcasts without broadcast dimensions.
fn relu<'b>(x: XlaOp<'b>) -> XlaOp<'b> {
    max(x, x.builder().constant_r0(0.0f32), &[])
}

/// `x · w + b`: the bias, a vector over the output features, is matched to dimension 1 of the
/// `[batch, features]` product and so repeated for every row of the batch.
fn affine<'b>(x: XlaOp<'b>, w: XlaOp<'b>, b: XlaOp<'b>) -> XlaOp<'b> {
    add(dot(x, w), b, &[1])
}

/// Softmax over dimension 1 of `[batch, classes]` logits, in the numerically stable form
/// `exp(z - max(z)) / sum(exp(z - max(z)))`. Each reduction over dimension 1 leaves a `[batch]`
/// vector, which broadcast dimensions (0) match back to the rows.
fn softmax<'b>(logits: XlaOp<'b>) -> Result<XlaOp<'b>> {
    let b = logits.builder();
    let row_max = reduce(logits, b.constant_r0(f32::NEG_INFINITY), &reducer("max", max)?, &[1]);
    let e = exp(sub(logits, row_max, &[0]));
    let row_sum = reduce(e, b.constant_r0(0.0f32), &reducer("sum", add)?, &[1]);
    Ok(div(e, row_sum, &[0]))
}

/// The forward pass, `softmax(relu(x · w1 + b1) · w2 + b2)`, as a computation.
pub fn forward_pass() -> Result<XlaComputation> {
    let b = XlaBuilder::new("mlp");
    let x = b.parameter(0, &shape!(f32[BATCH, INPUT]), "x");
    let w1 = b.parameter(1, &shape!(f32[INPUT, HIDDEN]), "w1");
    let b1 = b.parameter(2, &shape!(f32[HIDDEN]), "b1");
    let w2 = b.parameter(3, &shape!(f32[HIDDEN, OUTPUT]), "w2");
    let b2 = b.parameter(4, &shape!(f32[OUTPUT]), "b2");
    let hidden = relu(affine(x, w1, b1));
    let probabilities = softmax(affine(hidden, w2, b2))?;
    b.build(probabilities)
}

/// Compiles `computation` with fusion on or off and runs it on the model.
fn run(computation: &XlaComputation, model: &Model, fusion: bool) -> Result<ArrayD<f32>> {
    let executable = computation.compile(&CompileOptions { fusion, ..Default::default() })?;
    let arguments = model.arguments();
    let arguments: Vec<&Literal> = arguments.iter().collect();
    executable.execute(&arguments)?.to_ndarray::<f32>()
}

// ---- The same with plain ndarray --------------------------------------------------------------

/// The forward pass with ndarray's own operations (broadcasting the numpy way).
fn reference(model: &Model) -> Array2<f32> {
    let hidden = (model.x.dot(&model.w1) + &model.b1).mapv(|v| v.max(0.0));
    let logits = hidden.dot(&model.w2) + &model.b2;
    let mut probabilities = logits;
    for mut row in probabilities.rows_mut() {
        let row_max = row.fold(f32::NEG_INFINITY, |m, &v| m.max(v));
        row.mapv_inplace(|v| (v - row_max).exp());
        let sum = row.sum();
        row /= sum;
    }
    probabilities
}

/// The largest `|a - b|` over two arrays of the same dimensions.
fn max_abs_difference(a: &ArrayD<f32>, b: &ArrayD<f32>) -> f32 {
    a.iter().zip(b).fold(0.0, |m, (x, y)| m.max((x - y).abs()))
}

// ---- The tutorial -----------------------------------------------------------------------------

/// The whole example, as the text `main` prints.
pub fn tutorial() -> Result<String> {
    let mut out = String::new();
    say!(out, "A two-layer perceptron with lazy-xla: softmax(relu(x . w1 + b1) . w2 + b2)");
    say!(out, "batch {BATCH}, input {INPUT}, hidden {HIDDEN}, output {OUTPUT}");

    heading(&mut out, "The computation, as the builder recorded it");
    let computation = forward_pass()?;
    say!(out, "{}", computation.to_hlo_text().trim_end());
    say!(out);
    say!(out, "Every broadcast is explicit in HLO. add(.., b1, &[1]) became broadcast(b1),");
    say!(out, "dimensions={{1}}; max(x, 0) broadcast the scalar with dimensions={{}}; each reduce over");
    say!(out, "dimension 1 left an f32[4], which sub(.., &[0]) and div(.., &[0]) broadcast back with");
    say!(out, "dimensions={{0}}.");

    heading(&mut out, "Class probabilities (one row per input)");
    let model = Model::new(2024);
    let fused = run(&computation, &model, true)?;
    for row in fused.rows() {
        let cells: Vec<String> = row.iter().map(|p| format!("{p:.6}")).collect();
        say!(out, "    |{}|", cells.join(" "));
    }

    heading(&mut out, "Checks");
    let expected = reference(&model).into_dyn();
    let difference = max_abs_difference(&fused, &expected);
    assert!(difference < TOLERANCE, "lazy-xla and ndarray differ by {difference}");
    say!(out, "ndarray reference: max |difference| < {TOLERANCE:e}: ok ({difference:.1e})");
    let worst_sum = fused.sum_axis(Axis(1)).fold(0.0f32, |m, s| m.max((s - 1.0).abs()));
    assert!(worst_sum < TOLERANCE, "a row sums to 1 ± {worst_sum}");
    say!(out, "every row sums to 1 within {TOLERANCE:e}: ok ({worst_sum:.1e})");
    let unfused = run(&computation, &model, false)?;
    let disagreement = max_abs_difference(&fused, &unfused);
    assert!(disagreement < TOLERANCE, "fused and unfused differ by {disagreement}");
    say!(out, "fused == unfused within {TOLERANCE:e}: ok ({disagreement:.1e})");
    Ok(out)
}

fn main() -> Result<()> {
    print!("{}", tutorial()?);
    Ok(())
}
