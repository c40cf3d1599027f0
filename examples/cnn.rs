//! A small convolutional network's forward pass, built op by op as XLA would see it:
//! `softmax(dense(max_pool(relu(conv(x, k) + bias))))` on a deterministic batch of two 8×8 RGB
//! images (NHWC), then an embedding lookup (a `gather` of table rows by token id) with the
//! embeddings of each sequence summed. Everything is checked against plain Rust loops written
//! from the definitions, and fused execution against unfused.
//!
//! Run with `cargo run --example cnn`.

use lazy_xla::{
    add, conv_general_dilated, div, dot, exp, gather, max, reduce, reduce_window, reshape, shape, sub,
    CompileOptions, ConvolutionDimensionNumbers, GatherDimensionNumbers, Literal, Padding, Result,
    XlaBuilder, XlaComputation, XlaOp,
};

const BATCH: usize = 2;
const SIDE: usize = 8;
const CHANNELS: usize = 3;
const FEATURES: usize = 8;
const POOLED: usize = SIDE / 2;
const CLASSES: usize = 5;
const FLAT: usize = POOLED * POOLED * FEATURES;

const VOCABULARY: usize = 10;
const WIDTH: usize = 4;
const TOKENS: usize = 5;

/// How far lazy-xla's values may be from the loops' (sums in another order).
const TOLERANCE: f32 = 1e-5;

#[macro_use]
#[path = "common/text.rs"]
mod text;
use text::heading;

// ---- The data ---------------------------------------------------------------------------------

/// A linear congruential generator (Knuth's MMIX constants): the same numbers on every machine.
struct Lcg(u64);

impl Lcg {
    /// `n` numbers uniform in [-scale, scale).
    fn values(&mut self, n: usize, scale: f32) -> Vec<f32> {
        (0..n)
            .map(|_| {
                self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                scale * (((self.0 >> 40) as f32 / (1u64 << 23) as f32) - 1.0)
            })
            .collect()
    }
}

/// The images and the parameters, row-major.
struct Model {
    images: Vec<f32>,  // [BATCH, SIDE, SIDE, CHANNELS]
    kernel: Vec<f32>,  // [3, 3, CHANNELS, FEATURES] (HWIO)
    bias: Vec<f32>,    // [FEATURES]
    weights: Vec<f32>, // [FLAT, CLASSES]
    dense_bias: Vec<f32>,
}

impl Model {
    fn new(seed: u64) -> Model {
        let mut lcg = Lcg(seed);
        Model {
            images: lcg.values(BATCH * SIDE * SIDE * CHANNELS, 1.0),
            kernel: lcg.values(9 * CHANNELS * FEATURES, 1.0 / (9.0 * CHANNELS as f32).sqrt()),
            bias: lcg.values(FEATURES, 0.1),
            weights: lcg.values(FLAT * CLASSES, 1.0 / (FLAT as f32).sqrt()),
            dense_bias: lcg.values(CLASSES, 0.1),
        }
    }

    /// The arguments of the network, in parameter order.
    fn arguments(&self) -> Result<Vec<Literal>> {
        Ok(vec![
            Literal::from_vec(&shape!(f32[BATCH, SIDE, SIDE, CHANNELS]), self.images.clone())?,
            Literal::from_vec(&shape!(f32[3, 3, CHANNELS, FEATURES]), self.kernel.clone())?,
            Literal::vec1(&self.bias),
            Literal::from_vec(&shape!(f32[FLAT, CLASSES]), self.weights.clone())?,
            Literal::vec1(&self.dense_bias),
        ])
    }
}

// ---- The network ------------------------------------------------------------------------------

/// A scalar `(f32, f32) -> f32` computation for `reduce` and `reduce_window`.
fn reducer(name: &str, op: for<'b> fn(XlaOp<'b>, XlaOp<'b>, &[i64]) -> XlaOp<'b>) -> Result<XlaComputation> {
    let r = XlaBuilder::new(name);
    let (a, b) = (r.parameter(0, &shape!(f32[]), "a"), r.parameter(1, &shape!(f32[]), "b"));
    r.build(op(a, b, &[]))
}

/// Images `[batch, height, width, channels]` and kernels `[height, width, in, out]`
/// (TensorFlow's NHWC and HWIO).
fn nhwc() -> ConvolutionDimensionNumbers {
    ConvolutionDimensionNumbers {
        input_batch_dimension: 0,
        input_feature_dimension: 3,
        input_spatial_dimensions: vec![1, 2],
        kernel_input_feature_dimension: 2,
        kernel_output_feature_dimension: 3,
        kernel_spatial_dimensions: vec![0, 1],
        output_batch_dimension: 0,
        output_feature_dimension: 3,
        output_spatial_dimensions: vec![1, 2],
    }
}

/// Softmax over dimension 1 of `[batch, classes]` logits, numerically stable.
fn softmax<'b>(logits: XlaOp<'b>) -> Result<XlaOp<'b>> {
    let b = logits.builder();
    let row_max = reduce(logits, b.constant_r0(f32::NEG_INFINITY), &reducer("max", max)?, &[1]);
    let e = exp(sub(logits, row_max, &[0]));
    let row_sum = reduce(e, b.constant_r0(0.0f32), &reducer("sum", add)?, &[1]);
    Ok(div(e, row_sum, &[0]))
}

/// The forward pass as a computation.
pub fn forward_pass() -> Result<XlaComputation> {
    let b = XlaBuilder::new("cnn");
    let images = b.parameter(0, &shape!(f32[BATCH, SIDE, SIDE, CHANNELS]), "images");
    let kernel = b.parameter(1, &shape!(f32[3, 3, CHANNELS, FEATURES]), "kernel");
    let bias = b.parameter(2, &shape!(f32[FEATURES]), "bias");
    let weights = b.parameter(3, &shape!(f32[FLAT, CLASSES]), "weights");
    let dense_bias = b.parameter(4, &shape!(f32[CLASSES]), "dense_bias");
    // A 3x3 convolution, stride 1, SAME padding (one pixel of zeros around each image).
    let features = conv_general_dilated(images, kernel, &[1, 1], &[(1, 1), (1, 1)], &[], &[], &nhwc(), 1, 1);
    // The bias is per feature: dimension 3 of [batch, height, width, features].
    let activated = max(add(features, bias, &[3]), b.constant_r0(0.0f32), &[]);
    // 2x2 max pooling with stride 2 over height and width.
    let pooled = reduce_window(
        activated,
        b.constant_r0(f32::NEG_INFINITY),
        &reducer("max", max)?,
        &[1, 2, 2, 1],
        &[1, 2, 2, 1],
        Padding::Valid,
    );
    let flat = reshape(pooled, &[BATCH as i64, FLAT as i64]);
    let logits = add(dot(flat, weights), dense_bias, &[1]);
    b.build(softmax(logits)?)
}

/// The same with loops, straight from the definitions.
fn reference(model: &Model) -> Vec<f32> {
    let image = |n: usize, y: i64, x: i64, c: usize| -> f32 {
        let inside = (0..SIDE as i64).contains(&y) && (0..SIDE as i64).contains(&x);
        if inside {
            model.images[((n * SIDE + y as usize) * SIDE + x as usize) * CHANNELS + c]
        } else {
            0.0
        }
    };
    let mut activated = vec![0.0f32; BATCH * SIDE * SIDE * FEATURES];
    for n in 0..BATCH {
        for y in 0..SIDE {
            for x in 0..SIDE {
                for f in 0..FEATURES {
                    let mut sum = model.bias[f];
                    for (dy, dx, c) in (0..3)
                        .flat_map(|dy| (0..3).flat_map(move |dx| (0..CHANNELS).map(move |c| (dy, dx, c))))
                    {
                        let w = model.kernel[((dy * 3 + dx) * CHANNELS + c) * FEATURES + f];
                        sum += w * image(n, y as i64 + dy as i64 - 1, x as i64 + dx as i64 - 1, c);
                    }
                    activated[((n * SIDE + y) * SIDE + x) * FEATURES + f] = sum.max(0.0);
                }
            }
        }
    }
    let mut probabilities = Vec::new();
    for n in 0..BATCH {
        let mut flat = Vec::with_capacity(FLAT);
        for (y, x, f) in
            (0..POOLED).flat_map(|y| (0..POOLED).flat_map(move |x| (0..FEATURES).map(move |f| (y, x, f))))
        {
            let at = |dy: usize, dx: usize| {
                activated[((n * SIDE + 2 * y + dy) * SIDE + 2 * x + dx) * FEATURES + f]
            };
            flat.push(at(0, 0).max(at(0, 1)).max(at(1, 0)).max(at(1, 1)));
        }
        let logits: Vec<f32> = (0..CLASSES)
            .map(|k| {
                model.dense_bias[k] + (0..FLAT).map(|i| flat[i] * model.weights[i * CLASSES + k]).sum::<f32>()
            })
            .collect();
        let top = logits.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
        let e: Vec<f32> = logits.iter().map(|v| (v - top).exp()).collect();
        let total: f32 = e.iter().sum();
        probabilities.extend(e.iter().map(|v| v / total));
    }
    probabilities
}

// ---- The embedding lookup ---------------------------------------------------------------------

/// Each sequence's token embeddings (rows of the table, a `gather`) summed.
pub fn embedding_bag() -> Result<XlaComputation> {
    let b = XlaBuilder::new("embedding_bag");
    let table = b.parameter(0, &shape!(f32[VOCABULARY, WIDTH]), "table");
    let tokens = b.parameter(1, &shape!(s32[BATCH, TOKENS]), "tokens");
    // Each token id (a scalar: index_vector_dim = 2, the ids' rank) starts a [1, WIDTH] slice
    // of the table; dimension 0 of the slice is collapsed, dimension 1 becomes output dimension 2.
    let rows = GatherDimensionNumbers {
        offset_dims: vec![2],
        collapsed_slice_dims: vec![0],
        start_index_map: vec![0],
        index_vector_dim: 2,
        ..Default::default()
    };
    let embedded = gather(table, tokens, &rows, &[1, WIDTH as i64], false);
    b.build(reduce(embedded, b.constant_r0(0.0f32), &reducer("sum", add)?, &[1]))
}

/// Runs `computation` on `arguments` with fusion on or off.
fn run(computation: &XlaComputation, arguments: &[Literal], fusion: bool) -> Result<Vec<f32>> {
    let executable = computation.compile(&CompileOptions { fusion, ..Default::default() })?;
    let arguments: Vec<&Literal> = arguments.iter().collect();
    executable.execute(&arguments)?.to_vec::<f32>()
}

fn max_abs_difference(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).fold(0.0, |m, (x, y)| m.max((x - y).abs()))
}

// ---- The tutorial -----------------------------------------------------------------------------

/// The whole example, as the text `main` prints.
pub fn tutorial() -> Result<String> {
    let mut out = String::new();
    say!(out, "A small CNN with lazy-xla: softmax(dense(max_pool(relu(conv(x, k) + bias))))");
    say!(out, "batch {BATCH} of {SIDE}x{SIDE}x{CHANNELS} images, {FEATURES} 3x3 filters, {CLASSES} classes");

    heading(&mut out, "The windowed ops, as HLO text prints them");
    let network = forward_pass()?;
    let text = network.to_hlo_text();
    for line in text.lines().filter(|l| l.contains("convolution(") || l.contains("reduce-window(")) {
        say!(out, "{}", line.trim());
    }
    say!(out);
    say!(out, "dim_labels=b01f_01io->b01f reads: the input is batch, spatial 0, spatial 1, feature");
    say!(out, "(NHWC); the kernel spatial 0, spatial 1, input, output (HWIO); the output like the input.");

    heading(&mut out, "Class probabilities (one row per image)");
    let model = Model::new(7);
    let arguments = model.arguments()?;
    let fused = run(&network, &arguments, true)?;
    for row in fused.chunks(CLASSES) {
        let cells: Vec<String> = row.iter().map(|p| format!("{p:.6}")).collect();
        say!(out, "    |{}|", cells.join(" "));
    }

    heading(&mut out, "An embedding lookup: gather rows, sum each sequence");
    let table: Vec<f32> =
        (0..VOCABULARY * WIDTH).map(|i| (i / WIDTH) as f32 + (i % WIDTH) as f32 / 10.0).collect();
    let tokens: Vec<i32> = vec![1, 3, 3, 7, 0, 9, 2, 4, 4, 12]; // 12 is past the table: clamped to 9
    let bag_arguments = vec![
        Literal::from_vec(&shape!(f32[VOCABULARY, WIDTH]), table.clone())?,
        Literal::from_vec(&shape!(s32[BATCH, TOKENS]), tokens.clone())?,
    ];
    let bag = embedding_bag()?;
    let bags = run(&bag, &bag_arguments, true)?;
    for row in bags.chunks(WIDTH) {
        let cells: Vec<String> = row.iter().map(|v| format!("{v:.1}")).collect();
        say!(out, "    |{}|", cells.join(" "));
    }

    heading(&mut out, "Checks");
    let expected = reference(&model);
    let difference = max_abs_difference(&fused, &expected);
    assert!(difference < TOLERANCE, "lazy-xla and the loops differ by {difference}");
    say!(out, "loop reference: max |difference| < {TOLERANCE:e}: ok ({difference:.1e})");
    let unfused = run(&network, &arguments, false)?;
    let disagreement = max_abs_difference(&fused, &unfused);
    assert!(disagreement < TOLERANCE, "fused and unfused differ by {disagreement}");
    say!(out, "fused == unfused within {TOLERANCE:e}: ok ({disagreement:.1e})");
    let expected_bags: Vec<f32> = tokens
        .chunks(TOKENS)
        .flat_map(|sequence| {
            let table = &table;
            (0..WIDTH).map(move |w| {
                sequence
                    .iter()
                    .map(|&t| table[(t.clamp(0, VOCABULARY as i32 - 1) as usize) * WIDTH + w])
                    .sum::<f32>()
            })
        })
        .collect();
    assert_eq!(bags, expected_bags, "the embedding bags");
    assert_eq!(run(&bag, &bag_arguments, false)?, bags, "fused and unfused embedding bags");
    say!(out, "embedding bags equal the loops' (token 12 clamped to row 9): ok");
    Ok(out)
}

fn main() -> Result<()> {
    print!("{}", tutorial()?);
    Ok(())
}
