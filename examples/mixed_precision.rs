//! One MLP's forward pass, `relu(x · w1 + b1) · w2 + b2`, three ways, each against the same
//! computation in f64:
//!
//! 1. in f32;
//! 2. with bf16 activations and weights, products summed in f32 (`dot_with(.., Some(F32))`,
//!    the way models train and serve in mixed precision);
//! 3. quantized to int8 with one scale per tensor, products summed exactly in s32
//!    (`dot_with(.., Some(S32))`), then scaled back to f32.
//!
//! Run with `cargo run --example mixed_precision`.

use lazy_xla::{
    add, clamp, convert_element_type, div, dot_with, max, mul, round, shape, CompileOptions, ElementType,
    Literal, Precision, PrecisionConfig, Result, Shape, XlaBuilder, XlaOp,
};

#[macro_use]
#[path = "common/text.rs"]
mod text;
use text::heading;

const BATCH: usize = 32;
const INPUT: usize = 256;
const HIDDEN: usize = 512;
const OUTPUT: usize = 10;

/// The model: inputs, weights and biases, row-major.
struct Model {
    x: Vec<f32>,
    w1: Vec<f32>,
    b1: Vec<f32>,
    w2: Vec<f32>,
    b2: Vec<f32>,
}

impl Model {
    /// Deterministic values from a linear congruential generator (Knuth's MMIX constants).
    fn new() -> Model {
        let mut state = 0x853c_49e6_748f_ea9bu64;
        let mut values = |count: usize, scale: f32| -> Vec<f32> {
            (0..count)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    scale * (((state >> 40) as f32 / (1u64 << 23) as f32) - 1.0)
                })
                .collect()
        };
        Model {
            x: values(BATCH * INPUT, 1.0),
            w1: values(INPUT * HIDDEN, 1.0 / 16.0),
            b1: values(HIDDEN, 0.1),
            w2: values(HIDDEN * OUTPUT, 1.0 / 22.0),
            b2: values(OUTPUT, 0.1),
        }
    }

    /// The logits computed in f64, and the largest hidden activation (int8's calibration).
    fn reference(&self) -> (Vec<f64>, f64) {
        let matmul = |a: &[f64], b: &[f32], (m, k, n): (usize, usize, usize)| -> Vec<f64> {
            (0..m * n).map(|e| (0..k).map(|p| a[e / n * k + p] * f64::from(b[p * n + e % n])).sum()).collect()
        };
        let x: Vec<f64> = self.x.iter().map(|&v| f64::from(v)).collect();
        let hidden: Vec<f64> = matmul(&x, &self.w1, (BATCH, INPUT, HIDDEN))
            .iter()
            .enumerate()
            .map(|(e, v)| (v + f64::from(self.b1[e % HIDDEN])).max(0.0))
            .collect();
        let logits = matmul(&hidden, &self.w2, (BATCH, HIDDEN, OUTPUT))
            .iter()
            .enumerate()
            .map(|(e, v)| v + f64::from(self.b2[e % OUTPUT]))
            .collect();
        (logits, hidden.iter().fold(0.0, |m: f64, &v| m.max(v)))
    }

    /// The model's five arguments as f32 literals.
    fn arguments(&self) -> Result<Vec<Literal>> {
        let shapes = [
            shape!(f32[BATCH, INPUT]),
            shape!(f32[INPUT, HIDDEN]),
            shape!(f32[HIDDEN]),
            shape!(f32[HIDDEN, OUTPUT]),
            shape!(f32[OUTPUT]),
        ];
        let values = [&self.x, &self.w1, &self.b1, &self.w2, &self.b2];
        shapes.iter().zip(values).map(|(s, v)| Literal::from_vec(s, v.clone())).collect()
    }
}

/// How the two matrix products of the MLP are computed.
#[derive(Clone, Copy)]
enum Arithmetic {
    F32,
    Bf16,
    Int8,
}

/// The largest magnitude of `values`, over 127: the scale that maps them onto int8.
fn int8_scale(values: &[f32]) -> f32 {
    values.iter().fold(0.0f32, |m, v| m.max(v.abs())) / 127.0
}

/// `a · b` in the chosen arithmetic, an f32 result; `scales` are the int8 scales of a and b.
fn product<'b>(a: XlaOp<'b>, b: XlaOp<'b>, arithmetic: Arithmetic, scales: (f32, f32)) -> XlaOp<'b> {
    let builder = a.builder();
    let highest = PrecisionConfig { operand_precision: vec![Precision::Highest, Precision::Highest] };
    match arithmetic {
        Arithmetic::F32 => dot_with(a, b, Some(&highest), None),
        Arithmetic::Bf16 => {
            let (a, b) =
                (convert_element_type(a, ElementType::Bf16), convert_element_type(b, ElementType::Bf16));
            dot_with(a, b, None, Some(ElementType::F32))
        }
        Arithmetic::Int8 => {
            let quantize = |v: XlaOp<'b>, scale: f32| {
                let (low, high) = (builder.constant_r0(-127.0f32), builder.constant_r0(127.0f32));
                let q = clamp(low, round(div(v, builder.constant_r0(scale), &[])), high);
                convert_element_type(q, ElementType::S8)
            };
            let sums = dot_with(quantize(a, scales.0), quantize(b, scales.1), None, Some(ElementType::S32));
            mul(convert_element_type(sums, ElementType::F32), builder.constant_r0(scales.0 * scales.1), &[])
        }
    }
}

/// The MLP's logits in `arithmetic`, and their largest error against f64 relative to the
/// largest logit.
fn run(model: &Model, arithmetic: Arithmetic, (reference, hidden_max): (&[f64], f64)) -> Result<f64> {
    let b = XlaBuilder::new("mlp");
    let names = ["x", "w1", "b1", "w2", "b2"];
    let arguments = model.arguments()?;
    let p: Vec<XlaOp<'_>> = arguments
        .iter()
        .zip(names)
        .enumerate()
        .map(|(i, (a, n))| b.parameter(i as i64, a.shape(), n))
        .collect();
    let hidden_scale = hidden_max as f32 / 127.0;
    let first = product(p[0], p[1], arithmetic, (int8_scale(&model.x), int8_scale(&model.w1)));
    let hidden = max(add(first, p[2], &[1]), b.constant_r0(0.0f32), &[]);
    let logits = add(product(hidden, p[3], arithmetic, (hidden_scale, int8_scale(&model.w2))), p[4], &[1]);
    let computation = b.build(logits)?;
    let argument_refs: Vec<&Literal> = arguments.iter().collect();
    let got = computation.compile(&CompileOptions::default())?.execute(&argument_refs)?.to_vec::<f32>()?;
    let unfused =
        computation.compile(&CompileOptions::unfused())?.execute(&argument_refs)?.to_vec::<f32>()?;
    assert_eq!(got, unfused, "fused and unfused differ");
    let largest = reference.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    Ok(got.iter().zip(reference).fold(0.0f64, |m, (&g, r)| m.max((f64::from(g) - r).abs())) / largest)
}

/// The tutorial's report.
pub fn tutorial() -> Result<String> {
    let mut out = String::new();
    say!(out, "Mixed precision in lazy-xla: one MLP, three arithmetics");
    let model = Model::new();
    let (reference, hidden_max) = model.reference();
    let hidden_shape: Shape = shape!(f32[BATCH, HIDDEN]);
    say!(out, "x f32[{BATCH},{INPUT}] -> relu -> {} -> logits f32[{BATCH},{OUTPUT}]", hidden_shape);
    heading(&mut out, "Largest error of the logits against f64 (relative to the largest logit)");
    let mut errors = Vec::new();
    for (name, arithmetic) in [
        ("f32", Arithmetic::F32),
        ("bf16 operands, f32 accumulation", Arithmetic::Bf16),
        ("int8 operands, s32 accumulation", Arithmetic::Int8),
    ] {
        let error = run(&model, arithmetic, (&reference, hidden_max))?;
        say!(out, "{name:<34} {error:.1e}");
        errors.push(error);
    }
    let within = errors[0] < 1e-5 && errors[1] < 3e-2 && errors[2] < 3e-2 && errors[0] < errors[1];
    say!(out);
    say!(
        out,
        "{}",
        if within { "each error is within its arithmetic's bound" } else { "AN ERROR IS OUT OF BOUNDS" }
    );
    Ok(out)
}

#[allow(dead_code)]
fn main() -> Result<()> {
    print!("{}", tutorial()?);
    Ok(())
}
