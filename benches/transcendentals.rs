//! Transcendental element-wise ops on `f32[4096, 1024]` into a reused output (`execute_into`):
//! `exp`, `log`, `tanh`, `logistic`, GELU's tanh form, `sin` and `pow` (to a constant power),
//! each fused into one loop, beside a parallel copy of the same bytes (rayon over rows, as the
//! hand loops of `benches/workloads.rs`): the bound a memory-bound element-wise op can reach.
//!
//! A second group times every math function of the chunk loops, in `f64[4096, 512]` (the
//! same bytes), beside its own copy: a function that leaves the vector code shows there as
//! tens of copies (`f64` `erf` took 161–186 ms, 200 of them, before `inlined!` in
//! `exec/loop_program/chunk_ops.rs`).
//!
//! Before timing, each op's result is checked against std's `f64` functions (`erf`, which
//! std lacks, only against its bounds).
//!
//! Run with `cargo bench --bench transcendentals` (about two minutes on two cores).

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

/// The columns of the `f64` group: its input has the `f32` group's bytes.
const F64_COLUMNS: usize = COLUMNS / 2;

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

/// Every math function of the chunk loops, in `f64` (`erf`'s reference is a bound check:
/// std has no `erf`).
const F64_OPS: &[Op] = &[
    ("exp", exp, f64::exp),
    ("log", log, f64::ln),
    ("log1p", log1p, f64::ln_1p),
    ("expm1", expm1, f64::exp_m1),
    ("tanh", tanh, f64::tanh),
    ("logistic", logistic, |x| 1.0 / (1.0 + (-x).exp())),
    ("sin", sin, f64::sin),
    ("cos", cos, f64::cos),
    ("tan", tan, f64::tan),
    ("erf", erf, |_| f64::NAN),
    ("cbrt", cbrt, f64::cbrt),
    ("rsqrt", rsqrt, |x| 1.0 / x.sqrt()),
    ("pow", |x| pow(x, x.builder().constant_r0(2.5f64), &[]), |x| x.powf(2.5)),
    ("atan2", |x| atan2(x, x.builder().constant_r0(2.5f64), &[]), |x| x.atan2(2.5)),
];

/// Times `ops` over `xs` (of shape `[ROWS, columns]`) in group `name`, after a parallel copy
/// of the same bytes, each op's result first checked against its reference within
/// `tolerance` (relative to 1 + |value|; a NaN reference: only that the value lies in
/// [-1, 1]).
fn time_ops<T: NativeType + Into<f64>>(
    c: &mut Criterion,
    name: &str,
    xs: &[T],
    columns: usize,
    ops: &[Op],
    tolerance: f64,
) {
    let shape = Shape::new(T::ELEMENT_TYPE, &[ROWS as i64, columns as i64]);
    let x_literal = Literal::from_vec(&shape, xs.to_vec()).expect("values fit");
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Bytes(2 * std::mem::size_of_val(xs) as u64));
    group.sample_size(20);
    group.sampling_mode(SamplingMode::Flat);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));

    let mut copy = xs.to_vec();
    group.bench_function("copy_bound", |bench| {
        bench.iter(|| {
            copy.par_chunks_mut(columns).zip(xs.par_chunks(columns)).for_each(|(o, x)| o.copy_from_slice(x))
        })
    });

    for &(op_name, op, reference) in ops {
        let b = XlaBuilder::new(op_name);
        let x = b.parameter(0, &shape, "x");
        let executable =
            b.build(op(x)).expect("a valid graph").compile(&CompileOptions::default()).expect("compiles");
        let mut out = executable.execute(&[&x_literal]).expect("runs");
        for (i, (got, &x)) in out.to_vec::<T>().expect("the type").into_iter().zip(xs).enumerate() {
            let (got, x): (f64, f64) = (got.into(), x.into());
            let want = reference(x);
            let close = match want.is_nan() {
                true => got.abs() <= 1.0,
                false => (got - want).abs() <= tolerance * (1.0 + want.abs()),
            };
            assert!(close, "{op_name}: value {i} ({x}) is {got}, f64 says {want}");
        }
        group.bench_function(op_name, |bench| {
            bench.iter(|| executable.execute_into(black_box(&[&x_literal]), &mut out).expect("runs"))
        });
    }
    group.finish();
}

fn transcendentals(c: &mut Criterion) {
    // Positive values (log's domain) spread over [0.01, 8].
    let x = |i: usize| 0.01 + 8.0 * ((i * 7919 % 10007) as f64 / 10007.0);
    let xs: Vec<f32> = (0..ROWS * COLUMNS).map(|i| x(i) as f32).collect();
    time_ops(c, "transcendentals_4096x1024", &xs, COLUMNS, OPS, 1e-6);
    let xs: Vec<f64> = (0..ROWS * F64_COLUMNS).map(x).collect();
    time_ops(c, "math_functions_f64_4096x512", &xs, F64_COLUMNS, F64_OPS, 1e-13);
}

criterion_group!(benches, transcendentals);
criterion_main!(benches);
