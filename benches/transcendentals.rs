//! Transcendental element-wise ops on `f32[4096, 1024]` into a reused output (`execute_into`):
//! `exp`, `log`, `tanh`, `logistic`, GELU's tanh form, `sin` and `pow` (to a constant power),
//! each fused into one loop, beside a parallel copy of the same bytes (rayon over rows, as the
//! hand loops of `benches/workloads.rs`): the bound a memory-bound element-wise op can reach.
//!
//! Before timing, each op's result is checked against std's `f64` functions.
//!
//! Run with `cargo bench --bench transcendentals` (about a minute on two cores).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use lazy_xla::*;
use rayon::prelude::*;

const ROWS: usize = 4096;
const COLUMNS: usize = 1024;

/// `√(2/π)`, GELU's tanh-form constant.
const SQRT_2_OVER_PI: f32 = 0.797_884_6;

/// The ops timed: a name, the graph of one `x`, and its value in `f64` for the check.
type Op = (&'static str, fn(XlaOp<'_>) -> XlaOp<'_>, fn(f64) -> f64);

/// GELU, tanh form: `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
fn gelu(x: XlaOp<'_>) -> XlaOp<'_> {
    let b = x.builder();
    let inner = b.constant_r0(SQRT_2_OVER_PI) * (x + b.constant_r0(0.044_715f32) * x * x * x);
    b.constant_r0(0.5f32) * x * (b.constant_r0(1.0f32) + tanh(inner))
}

fn gelu_f64(x: f64) -> f64 {
    0.5 * x * (1.0 + (f64::from(SQRT_2_OVER_PI) * (x + 0.044715 * x * x * x)).tanh())
}

const OPS: &[Op] = &[
    ("exp", exp, f64::exp),
    ("log", log, f64::ln),
    ("tanh", tanh, f64::tanh),
    ("logistic", logistic, |x| 1.0 / (1.0 + (-x).exp())),
    ("gelu_tanh", gelu, gelu_f64),
    ("sin", sin, f64::sin),
    ("pow", |x| pow(x, x.builder().constant_r0(2.5f32), &[]), |x| x.powf(2.5)),
];

fn transcendentals(c: &mut Criterion) {
    // Positive values (log's domain) spread over [0.01, 8].
    let xs: Vec<f32> =
        (0..ROWS * COLUMNS).map(|i| 0.01 + 8.0 * ((i * 7919 % 10007) as f32 / 10007.0)).collect();
    let x_literal = Literal::from_vec(&shape!(f32[ROWS, COLUMNS]), xs.clone()).expect("values fit");
    let mut group = c.benchmark_group("transcendentals_4096x1024");
    group.throughput(Throughput::Bytes((2 * ROWS * COLUMNS * 4) as u64));
    group.sample_size(20);
    group.sampling_mode(SamplingMode::Flat);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));

    let mut copy = vec![0.0f32; ROWS * COLUMNS];
    group.bench_function("copy_bound", |bench| {
        bench.iter(|| {
            copy.par_chunks_mut(COLUMNS).zip(xs.par_chunks(COLUMNS)).for_each(|(o, x)| o.copy_from_slice(x))
        })
    });

    for &(name, op, reference) in OPS {
        let b = XlaBuilder::new(name);
        let x = b.parameter(0, &shape!(f32[ROWS, COLUMNS]), "x");
        let executable =
            b.build(op(x)).expect("a valid graph").compile(&CompileOptions::default()).expect("compiles");
        let mut out = executable.execute(&[&x_literal]).expect("runs");
        for (i, (got, &x)) in out.to_vec::<f32>().expect("f32").into_iter().zip(&xs).enumerate() {
            let want = reference(f64::from(x));
            assert!(
                (f64::from(got) - want).abs() <= 1e-6 * (1.0 + want.abs()),
                "{name}: value {i} ({x}) is {got}, f64 says {want}"
            );
        }
        group.bench_function(name, |bench| {
            bench.iter(|| executable.execute_into(black_box(&[&x_literal]), &mut out).expect("runs"))
        });
    }
    group.finish();
}

criterion_group!(benches, transcendentals);
criterion_main!(benches);
