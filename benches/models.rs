//! The work models spend their time in, on `f32[4096, 1024]` into a reused output
//! (`execute_into`): `exp`, `tanh`, GELU's tanh form, row softmax, layer norm, row sums,
//! column sums and the full sum. Each group times, in one run:
//!
//! - lazy-xla fused and unfused (`fusion: false`), `execute_into` a reused output;
//! - ndarray, eagerly, every intermediate a fresh array (single-threaded, as numpy);
//! - a hand-written fused loop, rayon over rows (column sums: over column ranges; the full
//!   sum's is its read bound's loop);
//! - the memory bound: a parallel copy of the same bytes (element-wise ops, softmax, layer
//!   norm) or a parallel read of the input (sums).
//!
//! The README's performance table is each contender's time over the group's bound. Before
//! timing, every contender's values are checked against an `f64` reference.
//!
//! The same workloads run again on `f32[131072, 1024]`, lazy-xla fused against the bound
//! only: 512 MiB in (and as much out), more than the last-level cache of the machines this
//! runs on (the development machine's is 260 MiB), where f32[4096,1024]'s 32 MiB of input
//! and output stay in it and the bound is the cache's, not memory's.
//!
//! Run with `cargo bench --bench models` (about ten minutes on two cores); criterion writes
//! its HTML report, with plots, under `target/criterion/report/index.html`.

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, SamplingMode, Throughput};
use lazy_xla::*;
use ndarray::{Array2, Axis};
use rayon::prelude::*;

const ROWS: usize = 4096;
/// The rows of the run beyond the cache.
const ROWS_BEYOND_CACHE: usize = 131_072;
const COLUMNS: usize = 1024;
/// Bytes in an f32.
const F32: usize = std::mem::size_of::<f32>();
/// `√(2/π)`, GELU's tanh-form constant.
const SQRT_2_OVER_PI: f32 = 0.797_884_6;
/// Layer norm's variance epsilon.
const EPSILON: f32 = 1e-5;

/// The input of `rows` rows: values spread over [-4, 4).
fn input(rows: usize) -> Vec<f32> {
    (0..rows * COLUMNS).map(|i| -4.0 + 8.0 * ((i * 7919 % 10007) as f32 / 10007.0)).collect()
}

/// What a workload computes, for the checks: its output length and one value from the whole
/// input in f64.
type Reference = Box<dyn Fn(&[f32]) -> Vec<f64>>;

/// One workload: its lazy-xla graph, ndarray's eager version, a hand-written loop into `out`,
/// and the bound it is measured against.
struct Workload {
    name: &'static str,
    graph: fn(&XlaBuilder, XlaOp<'_>) -> Result<XlaComputation>,
    ndarray: fn(&Array2<f32>) -> Vec<f32>,
    hand: fn(&mut [f32], &[f32]),
    reference: Reference,
    /// Output elements.
    out_len: usize,
    /// A reduction (bounded by a read of the input) rather than a map (bounded by a copy).
    reduces: bool,
    /// Relative tolerance of the checks.
    tolerance: f64,
}

fn sum_reducer() -> XlaComputation {
    let r = XlaBuilder::new("sum");
    let (a, b) = (r.parameter(0, &shape!(f32[]), "a"), r.parameter(1, &shape!(f32[]), "b"));
    r.build(a + b).expect("a valid reducer")
}

fn max_reducer() -> XlaComputation {
    let r = XlaBuilder::new("max");
    let (a, b) = (r.parameter(0, &shape!(f32[]), "a"), r.parameter(1, &shape!(f32[]), "b"));
    r.build(max(a, b, &[])).expect("a valid reducer")
}

/// GELU, tanh form: `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
fn gelu_graph<'b>(b: &'b XlaBuilder, x: XlaOp<'b>) -> XlaOp<'b> {
    let inner = b.constant_r0(SQRT_2_OVER_PI) * (x + b.constant_r0(0.044_715f32) * x * x * x);
    b.constant_r0(0.5f32) * x * (b.constant_r0(1.0f32) + tanh(inner))
}

#[inline(always)]
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + (SQRT_2_OVER_PI * (x + 0.044_715 * x * x * x)).tanh())
}

fn gelu_f64(x: f64) -> f64 {
    0.5 * x * (1.0 + (f64::from(SQRT_2_OVER_PI) * (x + 0.044715 * x * x * x)).tanh())
}

/// Row softmax: `exp(x - max) / Σ exp(x - max)` along each row.
fn softmax_graph<'b>(b: &'b XlaBuilder, x: XlaOp<'b>) -> XlaOp<'b> {
    let m = reduce(x, b.constant_r0(f32::NEG_INFINITY), &max_reducer(), &[1]);
    let e = exp(sub(x, m, &[0]));
    div(e, reduce(e, b.constant_r0(0.0f32), &sum_reducer(), &[1]), &[0])
}

/// Layer norm over each row: `(x - mean)·rsqrt(var + ε)`, `var = mean(x²) - mean²`, scaled by
/// 1.5 and shifted by 0.25.
fn layer_norm_graph<'b>(b: &'b XlaBuilder, x: XlaOp<'b>) -> XlaOp<'b> {
    let n = b.constant_r0(COLUMNS as f32);
    let mean = reduce(x, b.constant_r0(0.0f32), &sum_reducer(), &[1]) / n;
    let mean_of_squares = reduce(x * x, b.constant_r0(0.0f32), &sum_reducer(), &[1]) / n;
    let variance = mean_of_squares - mean * mean;
    let scale = rsqrt(variance + b.constant_r0(EPSILON));
    mul(sub(x, mean, &[0]), scale, &[0]) * b.constant_r0(1.5f32) + b.constant_r0(0.25f32)
}

/// Each row's values in f64, for the references of the row-wise workloads.
fn rows_f64(x: &[f32]) -> impl Iterator<Item = Vec<f64>> + '_ {
    x.chunks(COLUMNS).map(|row| row.iter().map(|&v| f64::from(v)).collect())
}

fn softmax_f64(x: &[f32]) -> Vec<f64> {
    rows_f64(x)
        .flat_map(|row| {
            let m = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let sum: f64 = row.iter().map(|v| (v - m).exp()).sum();
            row.into_iter().map(move |v| (v - m).exp() / sum)
        })
        .collect()
}

fn layer_norm_f64(x: &[f32]) -> Vec<f64> {
    rows_f64(x)
        .flat_map(|row| {
            let n = row.len() as f64;
            let mean = row.iter().sum::<f64>() / n;
            let variance = row.iter().map(|v| v * v).sum::<f64>() / n - mean * mean;
            let scale = 1.0 / (variance + f64::from(EPSILON)).sqrt();
            row.into_iter().map(move |v| (v - mean) * scale * 1.5 + 0.25)
        })
        .collect()
}

/// The hand-written loops: rayon over rows, each row in one pass per reduction it needs.
fn hand_map(out: &mut [f32], x: &[f32], f: impl Fn(f32) -> f32 + Sync) {
    out.par_chunks_mut(COLUMNS).zip(x.par_chunks(COLUMNS)).for_each(|(o, x)| {
        o.iter_mut().zip(x).for_each(|(o, &x)| *o = f(x));
    });
}

fn hand_softmax(out: &mut [f32], x: &[f32]) {
    out.par_chunks_mut(COLUMNS).zip(x.par_chunks(COLUMNS)).for_each(|(o, x)| {
        let m = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut sum = 0.0;
        for (o, &x) in o.iter_mut().zip(x) {
            *o = (x - m).exp();
            sum += *o;
        }
        let r = 1.0 / sum;
        o.iter_mut().for_each(|o| *o *= r);
    });
}

fn hand_layer_norm(out: &mut [f32], x: &[f32]) {
    out.par_chunks_mut(COLUMNS).zip(x.par_chunks(COLUMNS)).for_each(|(o, x)| {
        let n = COLUMNS as f32;
        let (sum, squares) = x.iter().fold((0.0f32, 0.0f32), |(s, q), &v| (s + v, q + v * v));
        let mean = sum / n;
        let scale = 1.0 / (squares / n - mean * mean + EPSILON).sqrt();
        for (o, &x) in o.iter_mut().zip(x) {
            *o = (x - mean) * scale * 1.5 + 0.25;
        }
    });
}

/// A sum of a slice in 16 lanes (so it vectorizes, as a hand-written loop would).
fn lane_sum(x: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 16];
    let mut chunks = x.chunks_exact(16);
    for chunk in &mut chunks {
        lanes.iter_mut().zip(chunk).for_each(|(l, &v)| *l += v);
    }
    lanes.iter().sum::<f32>() + chunks.remainder().iter().sum::<f32>()
}

fn hand_row_sum(out: &mut [f32], x: &[f32]) {
    out.par_iter_mut().zip(x.par_chunks(COLUMNS)).for_each(|(o, row)| *o = lane_sum(row));
}

/// Column sums: each rayon task owns a range of columns and adds every row's part into it.
fn hand_column_sum(out: &mut [f32], x: &[f32]) {
    const RANGE: usize = 256;
    out.par_chunks_mut(RANGE).enumerate().for_each(|(k, o)| {
        o.fill(0.0);
        for row in x.chunks(COLUMNS) {
            o.iter_mut().zip(&row[k * RANGE..]).for_each(|(o, &v)| *o += v);
        }
    });
}

/// The full sum: each rayon task sums its rows in lanes, and the tasks' sums are added.
fn hand_full_sum(out: &mut [f32], x: &[f32]) {
    out[0] = x.par_chunks(COLUMNS).map(lane_sum).sum();
}

/// The workloads on an input of `rows` rows.
fn workloads(rows: usize) -> Vec<Workload> {
    let map =
        |f: fn(f64) -> f64| -> Reference { Box::new(move |x| x.iter().map(|&v| f(f64::from(v))).collect()) };
    vec![
        Workload {
            name: "exp",
            graph: |b, x| b.build(exp(x)),
            ndarray: |x| x.mapv(f32::exp).into_raw_vec_and_offset().0,
            hand: |o, x| hand_map(o, x, f32::exp),
            reference: map(f64::exp),
            out_len: rows * COLUMNS,
            reduces: false,
            tolerance: 1e-6,
        },
        Workload {
            name: "tanh",
            graph: |b, x| b.build(tanh(x)),
            ndarray: |x| x.mapv(f32::tanh).into_raw_vec_and_offset().0,
            hand: |o, x| hand_map(o, x, f32::tanh),
            reference: map(f64::tanh),
            out_len: rows * COLUMNS,
            reduces: false,
            tolerance: 1e-6,
        },
        Workload {
            name: "gelu_tanh",
            graph: |b, x| b.build(gelu_graph(b, x)),
            ndarray: |x| {
                let inner = (x + &(x * x * x * 0.044_715f32)) * SQRT_2_OVER_PI;
                let t = inner.mapv(f32::tanh) + 1.0;
                (x * 0.5f32 * t).into_raw_vec_and_offset().0
            },
            hand: |o, x| hand_map(o, x, gelu),
            reference: map(gelu_f64),
            out_len: rows * COLUMNS,
            reduces: false,
            tolerance: 1e-5,
        },
        Workload {
            name: "softmax_rows",
            graph: |b, x| b.build(softmax_graph(b, x)),
            ndarray: |x| {
                let m = x.fold_axis(Axis(1), f32::NEG_INFINITY, |&a, &b| a.max(b)).insert_axis(Axis(1));
                let e = (x - &m).mapv(f32::exp);
                let s = e.sum_axis(Axis(1)).insert_axis(Axis(1));
                (e / s).into_raw_vec_and_offset().0
            },
            hand: hand_softmax,
            reference: Box::new(softmax_f64),
            out_len: rows * COLUMNS,
            reduces: false,
            tolerance: 1e-5,
        },
        Workload {
            name: "layer_norm",
            graph: |b, x| b.build(layer_norm_graph(b, x)),
            ndarray: |x| {
                let n = COLUMNS as f32;
                let mean = x.sum_axis(Axis(1)) / n;
                let variance = (x * x).sum_axis(Axis(1)) / n - &mean * &mean;
                let scale = (variance + EPSILON).mapv(|v| 1.0 / v.sqrt()).insert_axis(Axis(1));
                let centered = x - &mean.insert_axis(Axis(1));
                (centered * scale * 1.5f32 + 0.25f32).into_raw_vec_and_offset().0
            },
            hand: hand_layer_norm,
            reference: Box::new(layer_norm_f64),
            out_len: rows * COLUMNS,
            reduces: false,
            tolerance: 1e-4,
        },
        Workload {
            name: "row_sum",
            graph: |b, x| b.build(reduce(x, b.constant_r0(0.0f32), &sum_reducer(), &[1])),
            ndarray: |x| x.sum_axis(Axis(1)).into_raw_vec_and_offset().0,
            hand: hand_row_sum,
            reference: Box::new(|x| rows_f64(x).map(|row| row.iter().sum()).collect()),
            out_len: rows,
            reduces: true,
            tolerance: 1e-5,
        },
        Workload {
            name: "column_sum",
            graph: |b, x| b.build(reduce(x, b.constant_r0(0.0f32), &sum_reducer(), &[0])),
            ndarray: |x| x.sum_axis(Axis(0)).into_raw_vec_and_offset().0,
            hand: hand_column_sum,
            reference: Box::new(|x| {
                let mut sums = vec![0.0f64; COLUMNS];
                for row in rows_f64(x) {
                    sums.iter_mut().zip(row).for_each(|(s, v)| *s += v);
                }
                sums
            }),
            out_len: COLUMNS,
            reduces: true,
            tolerance: 1e-4,
        },
        Workload {
            name: "full_sum",
            graph: |b, x| b.build(reduce(x, b.constant_r0(0.0f32), &sum_reducer(), &[0, 1])),
            ndarray: |x| vec![x.sum()],
            hand: hand_full_sum,
            reference: Box::new(|x| vec![x.iter().map(|&v| f64::from(v)).sum()]),
            out_len: 1,
            reduces: true,
            // The total (-1674) cancels terms up to 4 in magnitude: ndarray's f32 sum is 0.23
            // from it, lazy-xla's 0.02.
            tolerance: 1e-3,
        },
    ]
}

/// Panics unless every value of `got` is within `tolerance` of `want` (relative to the larger
/// of 1 and the largest reference value in magnitude, as sums of cancelling terms need).
fn check(label: &str, got: &[f32], want: &[f64], tolerance: f64) {
    assert_eq!(got.len(), want.len(), "{label}: length");
    let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!((f64::from(g) - w).abs() <= tolerance * scale, "{label}: value {i} is {g}, f64 says {w}");
    }
}

fn group<'a>(c: &'a mut Criterion, rows: usize, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut group = c.benchmark_group(format!("models_{rows}x{COLUMNS}/{name}"));
    group.throughput(Throughput::Bytes((rows * COLUMNS * F32) as u64));
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    group
}

/// Every contender on f32[4096,1024].
fn models(c: &mut Criterion) {
    run(c, ROWS, true);
}

/// lazy-xla fused against the bound on f32[131072,1024], beyond the cache.
fn models_beyond_cache(c: &mut Criterion) {
    run(c, ROWS_BEYOND_CACHE, false);
}

/// Checks and times each workload on `rows` rows: lazy-xla fused and the bound, and with
/// `every_contender` lazy-xla unfused, ndarray and the hand-written loop too (beyond the
/// cache they would only add minutes).
fn run(c: &mut Criterion, rows: usize, every_contender: bool) {
    let xs = input(rows);
    let x_shape = shape!(f32[rows, COLUMNS]);
    let x_literal = Literal::from_vec(&x_shape, xs.clone()).expect("values fit");
    let x_array =
        every_contender.then(|| Array2::from_shape_vec((rows, COLUMNS), xs.clone()).expect("values fit"));
    let mut copy = vec![0.0f32; rows * COLUMNS];
    for workload in workloads(rows) {
        let want = (workload.reference)(&xs);
        let builder = XlaBuilder::new(workload.name);
        let x = builder.parameter(0, &x_shape, "x");
        let computation = (workload.graph)(&builder, x).expect("a valid graph");
        let fused = computation.compile(&CompileOptions::default()).expect("compiles");
        let mut out = fused.execute(&[&x_literal]).expect("runs");
        let name = workload.name;
        check(&format!("{name} fused"), &out.to_vec::<f32>().expect("f32"), &want, workload.tolerance);
        // The other contenders: lazy-xla unfused, and the hand loop's output.
        let mut others = x_array.as_ref().map(|x_array| {
            let unfused = computation.compile(&CompileOptions::unfused()).expect("compiles");
            (x_array, unfused, vec![0.0f32; workload.out_len])
        });
        if let Some((x_array, unfused, hand)) = &mut others {
            let unfused_out = unfused.execute(&[&x_literal]).expect("runs");
            check(
                &format!("{name} unfused"),
                &unfused_out.to_vec::<f32>().expect("f32"),
                &want,
                workload.tolerance,
            );
            check(&format!("{name} ndarray"), &(workload.ndarray)(x_array), &want, workload.tolerance);
            (workload.hand)(hand, &xs);
            check(&format!("{name} hand loop"), hand, &want, workload.tolerance);
        }
        drop(want);

        let mut group = group(c, rows, name);
        if workload.reduces {
            group.bench_function("read_bound", |bench| {
                bench.iter(|| xs.par_chunks(COLUMNS).map(lane_sum).sum::<f32>())
            });
        } else {
            group.bench_function("copy_bound", |bench| {
                bench.iter(|| {
                    copy.par_chunks_mut(COLUMNS)
                        .zip(xs.par_chunks(COLUMNS))
                        .for_each(|(o, x)| o.copy_from_slice(x))
                })
            });
        }
        group.bench_function("lazy_fused", |bench| {
            bench.iter(|| fused.execute_into(black_box(&[&x_literal]), &mut out).expect("runs"))
        });
        if let Some((x_array, unfused, hand)) = &mut others {
            group.bench_function("lazy_unfused", |bench| {
                bench.iter(|| unfused.execute_into(black_box(&[&x_literal]), &mut out).expect("runs"))
            });
            group.bench_function("ndarray_eager", |bench| {
                bench.iter(|| (workload.ndarray)(black_box(x_array)))
            });
            group.bench_function("hand_loop", |bench| bench.iter(|| (workload.hand)(hand, black_box(&xs))));
        }
        group.finish();
    }
}

criterion_group!(benches, models, models_beyond_cache);
criterion_main!(benches);
