//! A classifier trained in pure Rust: a two-layer perceptron learns which of three Gaussian
//! blobs a point of the plane came from. The loss (mean softmax cross-entropy) is built op by
//! op; `value_and_grad` derives the computation that returns the loss and its gradients with
//! respect to the weights; an Adam step is another computation; a loop feeds them minibatches.
//! The example checks that the loss falls and that the model then classifies held-out points.
//!
//! Run with `cargo run --release --example train_mlp`.

use lazy_xla::{
    add, div, dot, exp, log, max, mul, pow, reduce, shape, sqrt, sub, tuple, value_and_grad, CompileOptions,
    Error, Executable, Literal, Result, XlaBuilder, XlaComputation, XlaOp,
};

const BATCH: usize = 64;
const FEATURES: usize = 2;
const HIDDEN: usize = 32;
const CLASSES: usize = 3;
const TRAINING_POINTS: usize = 1536;
const EPOCHS: usize = 12;

/// Adam's hyperparameters (Kingma and Ba's defaults, a larger step).
const LEARNING_RATE: f32 = 0.01;
const BETA1: f32 = 0.9;
const BETA2: f32 = 0.999;
const EPSILON: f32 = 1e-8;

#[macro_use]
#[path = "common/text.rs"]
mod text;
use text::heading;

// ---- The data ---------------------------------------------------------------------------------

/// A linear congruential generator (Knuth's MMIX constants): the same numbers on every machine.
struct Lcg(u64);

impl Lcg {
    /// The next number, uniform in [0, 1).
    fn uniform(&mut self) -> f32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    /// A standard normal number (Box and Muller).
    fn normal(&mut self) -> f32 {
        let (u, v) = (self.uniform().max(1e-7), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
    }

    /// `len` numbers with standard deviation `scale`.
    fn normals(&mut self, len: usize, scale: f32) -> Vec<f32> {
        (0..len).map(|_| scale * self.normal()).collect()
    }
}

/// Points of the plane (row-major `[n, 2]`) and their classes, one-hot (`[n, 3]`): class `c`'s
/// points are normal (standard deviation 0.8) around a centre at angle `c · 120°`, radius 1.5,
/// so the classes overlap a little.
struct Points {
    xy: Vec<f32>,
    one_hot: Vec<f32>,
    classes: Vec<usize>,
}

impl Points {
    fn new(n: usize, random: &mut Lcg) -> Points {
        let mut points = Points { xy: Vec::new(), one_hot: Vec::new(), classes: Vec::new() };
        for i in 0..n {
            let class = i % CLASSES;
            let angle = class as f32 * std::f32::consts::TAU / CLASSES as f32;
            points.xy.push(1.5 * angle.cos() + 0.8 * random.normal());
            points.xy.push(1.5 * angle.sin() + 0.8 * random.normal());
            points.one_hot.extend((0..CLASSES).map(|c| if c == class { 1.0 } else { 0.0 }));
            points.classes.push(class);
        }
        points
    }

    /// Minibatch `b` (points `b·BATCH..(b+1)·BATCH`) as literals: the points and their classes.
    fn batch(&self, b: usize) -> Result<[Literal; 2]> {
        let (xy, one_hot) = (b * BATCH * FEATURES, b * BATCH * CLASSES);
        Ok([
            Literal::from_vec(&shape!(f32[BATCH, FEATURES]), self.xy[xy..xy + BATCH * FEATURES].to_vec())?,
            Literal::from_vec(
                &shape!(f32[BATCH, CLASSES]),
                self.one_hot[one_hot..one_hot + BATCH * CLASSES].to_vec(),
            )?,
        ])
    }
}

// ---- The computations -------------------------------------------------------------------------

/// The shapes of the weights, in parameter order: w1, b1, w2, b2.
fn weight_shapes() -> [lazy_xla::Shape; 4] {
    [shape!(f32[FEATURES, HIDDEN]), shape!(f32[HIDDEN]), shape!(f32[HIDDEN, CLASSES]), shape!(f32[CLASSES])]
}

/// `f32[] (a, b) -> a ∘ b`, a reducer.
fn reducer(
    name: &str,
    combine: for<'b> fn(XlaOp<'b>, XlaOp<'b>, &[i64]) -> XlaOp<'b>,
) -> Result<XlaComputation> {
    let b = XlaBuilder::new(name);
    let (x, y) = (b.parameter(0, &shape!(f32[]), "x"), b.parameter(1, &shape!(f32[]), "y"));
    b.build(combine(x, y, &[]))
}

/// The logits `relu(x · w1 + b1) · w2 + b2` of a `[batch, 2]` x.
fn logits<'b>(x: XlaOp<'b>, [w1, b1, w2, b2]: [XlaOp<'b>; 4]) -> XlaOp<'b> {
    let hidden = max(add(dot(x, w1), b1, &[1]), x.builder().constant_r0(0.0f32), &[]);
    add(dot(hidden, w2), b2, &[1])
}

/// `loss(w1, b1, w2, b2, x, one_hot)`: the batch's mean of `-log softmax(logits)[class]`,
/// in the stable form `log Σ exp(z - max z) - (z - max z)[class]`.
pub fn loss() -> Result<XlaComputation> {
    let b = XlaBuilder::new("loss");
    let shapes = weight_shapes();
    let weights = [0, 1, 2, 3].map(|i| b.parameter(i as i64, &shapes[i], &format!("weight{i}")));
    let x = b.parameter(4, &shape!(f32[BATCH, FEATURES]), "x");
    let one_hot = b.parameter(5, &shape!(f32[BATCH, CLASSES]), "one_hot");
    let (sum, greatest) = (reducer("sum", add)?, reducer("max", max)?);
    let z = logits(x, weights);
    let shifted = sub(z, reduce(z, b.constant_r0(f32::NEG_INFINITY), &greatest, &[1]), &[0]);
    let log_sum_exp = log(reduce(exp(shifted), b.constant_r0(0.0f32), &sum, &[1]));
    let picked = reduce(mul(shifted, one_hot, &[]), b.constant_r0(0.0f32), &sum, &[1]);
    let total = reduce(sub(log_sum_exp, picked, &[]), b.constant_r0(0.0f32), &sum, &[0]);
    b.build(div(total, b.constant_r0(BATCH as f32), &[]))
}

/// One Adam step for every weight: parameters `(weight, gradient, m, v)` per weight, then the
/// step number `t` (from 1); returns the tuple of (weight, m, v) per weight.
pub fn adam() -> Result<XlaComputation> {
    let b = XlaBuilder::new("adam");
    let shapes = weight_shapes();
    let t = b.parameter(16, &shape!(f32[]), "t");
    let scalar = |v: f32| b.constant_r0(v);
    // The bias corrections 1 - β^t, computed once.
    let correction1 = sub(scalar(1.0), pow(scalar(BETA1), t, &[]), &[]);
    let correction2 = sub(scalar(1.0), pow(scalar(BETA2), t, &[]), &[]);
    let mut results = Vec::new();
    for (i, shape) in shapes.iter().enumerate() {
        let at = |k: usize, name: &str| b.parameter((4 * i + k) as i64, shape, &format!("{name}{i}"));
        let (weight, gradient, m, v) = (at(0, "weight"), at(1, "gradient"), at(2, "m"), at(3, "v"));
        let m = add(mul(m, scalar(BETA1), &[]), mul(gradient, scalar(1.0 - BETA1), &[]), &[]);
        let squared = mul(gradient, gradient, &[]);
        let v = add(mul(v, scalar(BETA2), &[]), mul(squared, scalar(1.0 - BETA2), &[]), &[]);
        let m_hat = div(m, correction1, &[]);
        let v_hat = div(v, correction2, &[]);
        let step = div(mul(m_hat, scalar(LEARNING_RATE), &[]), add(sqrt(v_hat), scalar(EPSILON), &[]), &[]);
        results.extend([sub(weight, step, &[]), m, v]);
    }
    b.build(tuple(&b, &results))
}

// ---- Training ---------------------------------------------------------------------------------

/// The model's weights and Adam's moments, as literals.
struct State {
    weights: Vec<Literal>,
    m: Vec<Literal>,
    v: Vec<Literal>,
}

impl State {
    /// He-initialized weights (normal, variance 2 / fan-in), zero biases and moments.
    fn new(random: &mut Lcg) -> Result<State> {
        let shapes = weight_shapes();
        let fan_in = [FEATURES, 0, HIDDEN, 0];
        let mut weights = Vec::new();
        for (shape, fan_in) in shapes.iter().zip(fan_in) {
            let len = shape.element_count() as usize;
            let scale = if fan_in == 0 { 0.0 } else { (2.0 / fan_in as f32).sqrt() };
            weights.push(Literal::from_vec(shape, random.normals(len, scale))?);
        }
        let zeros = || -> Result<Vec<Literal>> {
            shapes.iter().map(|s| Literal::from_vec(s, vec![0.0f32; s.element_count() as usize])).collect()
        };
        Ok(State { weights, m: zeros()?, v: zeros()? })
    }
}

/// The fraction of `points` whose largest logit is their class.
fn accuracy(forward: &Executable, state: &State, points: &Points) -> Result<f32> {
    let mut right = 0;
    for b in 0..points.classes.len() / BATCH {
        let [x, _] = points.batch(b)?;
        let arguments: Vec<&Literal> = state.weights.iter().chain([&x]).collect();
        let logits = forward.execute(&arguments)?.to_vec::<f32>()?;
        for (row, &class) in logits.chunks(CLASSES).zip(&points.classes[b * BATCH..]) {
            let best = (0..CLASSES).fold(0, |best, c| if row[c] > row[best] { c } else { best });
            right += usize::from(best == class);
        }
    }
    Ok(right as f32 / (points.classes.len() / BATCH * BATCH) as f32)
}

/// The forward pass alone (the weights, then x), for measuring accuracy.
pub fn forward() -> Result<XlaComputation> {
    let b = XlaBuilder::new("forward");
    let shapes = weight_shapes();
    let weights = [0, 1, 2, 3].map(|i| b.parameter(i as i64, &shapes[i], &format!("weight{i}")));
    let x = b.parameter(4, &shape!(f32[BATCH, FEATURES]), "x");
    b.build(logits(x, weights))
}

/// The whole example, as the text `main` prints.
pub fn tutorial() -> Result<String> {
    let mut out = String::new();
    say!(out, "A classifier of three Gaussian blobs, trained with value_and_grad and Adam");
    say!(out, "MLP {FEATURES} -> {HIDDEN} (relu) -> {CLASSES}, batches of {BATCH}, {TRAINING_POINTS} training points");

    heading(&mut out, "The derived computation");
    let loss = loss()?;
    let step = value_and_grad(&loss, &[0, 1, 2, 3])?;
    say!(out, "value_and_grad(loss, [0, 1, 2, 3]) : {}", step.program_shape());
    let options = CompileOptions::default();
    let (step, adam, forward) =
        (step.compile(&options)?, adam()?.compile(&options)?, forward()?.compile(&options)?);

    heading(&mut out, "Training");
    let mut random = Lcg(2026);
    let (training, held_out) =
        (Points::new(TRAINING_POINTS, &mut random), Points::new(8 * BATCH, &mut random));
    let mut state = State::new(&mut random)?;
    let mut losses = Vec::new();
    let mut first_batch = None;
    let mut t = 0;
    for epoch in 1..=EPOCHS {
        let mut total = 0.0;
        let batches = TRAINING_POINTS / BATCH;
        for b in 0..batches {
            let batch = training.batch(b)?;
            let arguments: Vec<&Literal> = state.weights.iter().chain(&batch).collect();
            let mut parts = step.execute(&arguments)?.decompose_tuple()?.into_iter();
            let value =
                parts.next().map(|value| value.to_vec::<f32>()).transpose()?.map_or(f32::NAN, |v| v[0]);
            first_batch.get_or_insert(value);
            total += value;
            let gradients: Vec<Literal> = parts.collect();
            t += 1;
            let t_literal = Literal::scalar(t as f32);
            let per_weight =
                (0..4).flat_map(|i| [&state.weights[i], &gradients[i], &state.m[i], &state.v[i]]);
            let arguments: Vec<&Literal> = per_weight.chain([&t_literal]).collect();
            let mut updated = adam.execute(&arguments)?.decompose_tuple()?.into_iter();
            for i in 0..4 {
                let mut next = || {
                    updated
                        .next()
                        .ok_or_else(|| Error::InvalidArgument("adam returned too few results".into()))
                };
                (state.weights[i], state.m[i], state.v[i]) = (next()?, next()?, next()?);
            }
        }
        let mean = total / batches as f32;
        losses.push(mean);
        say!(out, "epoch {epoch:2}: mean loss {mean:.4}");
    }

    heading(&mut out, "Checks");
    let (first, last) = (first_batch.unwrap_or(f32::NAN), losses[losses.len() - 1]);
    let falls = last < 0.5 * first && losses.windows(2).all(|pair| pair[1] < pair[0] * 1.05);
    say!(
        out,
        "the loss falls to below half the first batch's, epoch by epoch: {} ({first:.4} -> {last:.4})",
        ok(falls)
    );
    let held_out_accuracy = accuracy(&forward, &state, &held_out)?;
    let classifies = held_out_accuracy > 0.9;
    say!(out, "held-out accuracy above 90%: {} ({:.1}%)", ok(classifies), 100.0 * held_out_accuracy);
    if !(falls && classifies) {
        return Err(Error::InvalidArgument(format!("training failed:\n{out}")));
    }
    Ok(out)
}

fn ok(holds: bool) -> &'static str {
    if holds {
        "ok"
    } else {
        "FAILED"
    }
}

fn main() -> Result<()> {
    print!("{}", tutorial()?);
    Ok(())
}
