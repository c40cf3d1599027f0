//! The design's workloads W1–W6, each in one criterion group, measured in the same run as:
//!
//! - lazy-xla fused: `execute_into` a reused output, and `execute` (a fresh output per call);
//! - lazy-xla unfused (`fusion: false`), `execute_into` a reused output;
//! - ndarray, eagerly, allocating every intermediate as numpy would (single-threaded, as numpy);
//! - a hand-written fused Rust loop with rayon over rows into a reused output: the in-run bound
//!   (W2 and W3 add a plainer bound: a parallel fill, a parallel contiguous add).
//!
//! Throughput is the bytes the ideal loop must move: every input read once, the output written
//! once. Before timing, every group checks that all its contenders compute the same values.
//!
//! Run with `cargo bench --bench workloads` (about five minutes on two cores).

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, SamplingMode, Throughput};
use lazy_xla::*;
use ndarray::{Array1, Array2, Array4, Axis, ShapeBuilder, Zip};
use rayon::prelude::*;

/// Bytes in an f32.
const F32: usize = std::mem::size_of::<f32>();

// ---------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------

/// `n` deterministic values in `[low, low + span)`, a different sequence per `seed`.
fn values(n: usize, seed: usize, low: f32, span: f32) -> Vec<f32> {
    (0..n).map(|i| low + span * (((i * 7919 + seed * 104_729) % 1009) as f32 / 1009.0)).collect()
}

/// Panics unless `got` holds as many values as `want`, each within `tolerance` (relative to
/// `1 + |want|`).
fn assert_close(label: &str, got: impl IntoIterator<Item = f32>, want: &[f32], tolerance: f32) {
    let mut count = 0;
    for (index, got) in got.into_iter().enumerate() {
        let Some(&expected) = want.get(index) else {
            panic!("{label}: more values than the reference's {}", want.len());
        };
        assert!(
            (got - expected).abs() <= tolerance * (1.0 + expected.abs()),
            "{label}: value {index} is {got}, the reference says {expected}"
        );
        count += 1;
    }
    assert_eq!(count, want.len(), "{label}: {count} values, the reference has {}", want.len());
}

/// Compiles with fusion on (the default) and off.
fn fused_and_unfused(computation: &XlaComputation) -> (Executable, Executable) {
    let fused = computation.compile(&CompileOptions::default()).expect("compiles fused");
    let unfused = computation
        .compile(&CompileOptions { fusion: false, ..Default::default() })
        .expect("compiles unfused");
    (fused, unfused)
}

/// A group for a large workload: few samples of a few iterations each.
fn large_group<'a>(c: &'a mut Criterion, name: &str, bytes: usize) -> BenchmarkGroup<'a, WallTime> {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.warm_up_time(Duration::from_millis(1000));
    group.measurement_time(Duration::from_secs(4));
    group
}

/// The three lazy-xla contenders: fused `execute_into` and `execute`, unfused `execute_into`.
fn bench_lazy(
    group: &mut BenchmarkGroup<'_, WallTime>,
    fused: &Executable,
    unfused: &Executable,
    arguments: &[&Literal],
    out: &mut Literal,
) {
    group.bench_function("lazy_fused_execute_into", |bench| {
        bench.iter(|| fused.execute_into(black_box(arguments), out).expect("runs"))
    });
    group.bench_function("lazy_fused_execute", |bench| {
        bench.iter(|| fused.execute(black_box(arguments)).expect("runs"))
    });
    group.bench_function("lazy_unfused_execute_into", |bench| {
        bench.iter(|| unfused.execute_into(black_box(arguments), out).expect("runs"))
    });
}

/// Checks fused `execute_into`, fused `execute` and unfused `execute_into` against `want`.
fn check_lazy(
    workload: &str,
    fused: &Executable,
    unfused: &Executable,
    arguments: &[&Literal],
    out: &mut Literal,
    want: &[f32],
    tolerance: f32,
) {
    fused.execute_into(arguments, out).expect("runs");
    assert_close(
        &format!("{workload} fused execute_into"),
        out.to_vec::<f32>().expect("f32"),
        want,
        tolerance,
    );
    let fresh = fused.execute(arguments).expect("runs");
    assert_close(&format!("{workload} fused execute"), fresh.to_vec::<f32>().expect("f32"), want, tolerance);
    unfused.execute_into(arguments, out).expect("runs");
    assert_close(
        &format!("{workload} unfused execute_into"),
        out.to_vec::<f32>().expect("f32"),
        want,
        tolerance,
    );
}

// ---------------------------------------------------------------------------------------------
// W1 and W5: max((X + b{1}) * s{0}, 0) + 1
// ---------------------------------------------------------------------------------------------

/// W1's computation over `X: f32[rows, cols]`, `b: f32[cols]`, `s: f32[rows]`.
fn w1_computation(rows: usize, cols: usize) -> XlaComputation {
    let builder = XlaBuilder::new("w1");
    let x = builder.parameter(0, &shape!(f32[rows, cols]), "x");
    let b = builder.parameter(1, &shape!(f32[cols]), "b");
    let s = builder.parameter(2, &shape!(f32[rows]), "s");
    let relu = max(mul(add(x, b, &[1]), s, &[0]), builder.constant_r0(0.0f32), &[]);
    builder.build(relu + builder.constant_r0(1.0f32)).expect("a valid graph")
}

/// W1 for one element.
#[inline(always)]
fn w1_element(x: f32, b: f32, s: f32) -> f32 {
    ((x + b) * s).max(0.0) + 1.0
}

/// W1 as numpy would run it: `np.maximum((x + b) * s[:, None], 0) + 1`, four fresh arrays.
fn w1_ndarray(x: &Array2<f32>, b: &Array1<f32>, s_column: &Array2<f32>) -> Array2<f32> {
    let sum = x + b;
    let product = &sum * s_column;
    let relu = product.mapv(|v| v.max(0.0));
    &relu + 1.0
}

/// W1 by hand, one row per rayon task.
fn w1_hand_parallel(out: &mut [f32], x: &[f32], b: &[f32], s: &[f32]) {
    let cols = b.len();
    out.par_chunks_mut(cols).zip(x.par_chunks(cols)).zip(s.par_iter()).for_each(|((out, x), &s)| {
        for ((o, &x), &b) in out.iter_mut().zip(x).zip(b) {
            *o = w1_element(x, b, s);
        }
    });
}

/// W1 by hand on the calling thread (below ~0.5 MiB a rayon call costs more than the work).
fn w1_hand_serial(out: &mut [f32], x: &[f32], b: &[f32], s: &[f32]) {
    let cols = b.len();
    for ((out, x), &s) in out.chunks_mut(cols).zip(x.chunks(cols)).zip(s) {
        for ((o, &x), &b) in out.iter_mut().zip(x).zip(b) {
            *o = w1_element(x, b, s);
        }
    }
}

/// The data of W1 at one size, in every form the contenders need.
struct W1Data {
    x: Vec<f32>,
    b: Vec<f32>,
    s: Vec<f32>,
    arguments: [Literal; 3],
    x_array: Array2<f32>,
    b_array: Array1<f32>,
    s_column: Array2<f32>,
    reference: Vec<f32>,
}

impl W1Data {
    fn new(rows: usize, cols: usize) -> W1Data {
        let x = values(rows * cols, 1, -5.0, 10.0);
        let b = values(cols, 2, -1.5, 3.0);
        let s = values(rows, 3, -0.75, 2.0);
        let arguments = [
            Literal::from_vec(&shape!(f32[rows, cols]), x.clone()).expect("values fit"),
            Literal::vec1(&b),
            Literal::vec1(&s),
        ];
        let x_array = Array2::from_shape_vec((rows, cols), x.clone()).expect("values fit");
        let b_array = Array1::from_vec(b.clone());
        let s_column = Array1::from_vec(s.clone()).insert_axis(Axis(1));
        let reference = (0..rows * cols).map(|i| w1_element(x[i], b[i % cols], s[i / cols])).collect();
        W1Data { x, b, s, arguments, x_array, b_array, s_column, reference }
    }

    fn arguments(&self) -> [&Literal; 3] {
        [&self.arguments[0], &self.arguments[1], &self.arguments[2]]
    }
}

fn w1(c: &mut Criterion) {
    const ROWS: usize = 2048;
    const COLS: usize = 4096;
    let data = W1Data::new(ROWS, COLS);
    let arguments = data.arguments();
    let (fused, unfused) = fused_and_unfused(&w1_computation(ROWS, COLS));
    let mut out = Literal::zeros(&shape!(f32[ROWS, COLS])).expect("a shape");
    let mut hand = vec![0.0f32; ROWS * COLS];

    check_lazy("W1", &fused, &unfused, &arguments, &mut out, &data.reference, 0.0);
    assert_close(
        "W1 ndarray",
        w1_ndarray(&data.x_array, &data.b_array, &data.s_column),
        &data.reference,
        0.0,
    );
    w1_hand_parallel(&mut hand, &data.x, &data.b, &data.s);
    assert_close("W1 hand loop", hand.iter().copied(), &data.reference, 0.0);

    let bytes = (2 * ROWS * COLS + ROWS + COLS) * F32;
    let mut group = large_group(c, "W1_2048x4096", bytes);
    bench_lazy(&mut group, &fused, &unfused, &arguments, &mut out);
    group.bench_function("ndarray_eager", |bench| {
        bench.iter(|| w1_ndarray(black_box(&data.x_array), &data.b_array, &data.s_column))
    });
    group.bench_function("hand_loop_bound", |bench| {
        bench.iter(|| w1_hand_parallel(&mut hand, black_box(&data.x), &data.b, &data.s))
    });
    group.finish();
}

fn w5(c: &mut Criterion) {
    const ROWS: usize = 32;
    const COLS: usize = 64;
    let data = W1Data::new(ROWS, COLS);
    let arguments = data.arguments();
    let (fused, unfused) = fused_and_unfused(&w1_computation(ROWS, COLS));
    let mut out = Literal::zeros(&shape!(f32[ROWS, COLS])).expect("a shape");
    let mut hand = vec![0.0f32; ROWS * COLS];

    check_lazy("W5", &fused, &unfused, &arguments, &mut out, &data.reference, 0.0);
    assert_close(
        "W5 ndarray",
        w1_ndarray(&data.x_array, &data.b_array, &data.s_column),
        &data.reference,
        0.0,
    );
    w1_hand_serial(&mut hand, &data.x, &data.b, &data.s);
    assert_close("W5 hand loop", hand.iter().copied(), &data.reference, 0.0);

    let mut group = c.benchmark_group("W5_32x64");
    group.throughput(Throughput::Bytes(((2 * ROWS * COLS + ROWS + COLS) * F32) as u64));
    group.sample_size(20);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    bench_lazy(&mut group, &fused, &unfused, &arguments, &mut out);
    group.bench_function("ndarray_eager", |bench| {
        bench.iter(|| w1_ndarray(black_box(&data.x_array), &data.b_array, &data.s_column))
    });
    group.bench_function("hand_loop_serial_bound", |bench| {
        bench.iter(|| w1_hand_serial(&mut hand, black_box(&data.x), &data.b, &data.s))
    });
    group.finish();
}

// ---------------------------------------------------------------------------------------------
// W2: the outer op (u[4096,1] + v[1,4096]) * 2
// ---------------------------------------------------------------------------------------------

fn w2(c: &mut Criterion) {
    const N: usize = 4096;
    let u = values(N, 4, -2.0, 4.0);
    let v = values(N, 5, -3.0, 6.0);
    let computation = {
        let builder = XlaBuilder::new("w2");
        let u = builder.parameter(0, &shape!(f32[N, 1]), "u");
        let v = builder.parameter(1, &shape!(f32[1, N]), "v");
        builder.build((u + v) * builder.constant_r0(2.0f32)).expect("a valid graph")
    };
    let (fused, unfused) = fused_and_unfused(&computation);
    let u_literal = Literal::from_vec(&shape!(f32[N, 1]), u.clone()).expect("values fit");
    let v_literal = Literal::from_vec(&shape!(f32[1, N]), v.clone()).expect("values fit");
    let arguments = [&u_literal, &v_literal];
    let u_array = Array2::from_shape_vec((N, 1), u.clone()).expect("values fit");
    let v_array = Array2::from_shape_vec((1, N), v.clone()).expect("values fit");
    let ndarray_eager = |u: &Array2<f32>, v: &Array2<f32>| &(u + v) * 2.0;
    let hand_loop = |out: &mut [f32], u: &[f32], v: &[f32]| {
        out.par_chunks_mut(N).zip(u.par_iter()).for_each(|(out, &u)| {
            for (o, &v) in out.iter_mut().zip(v) {
                *o = (u + v) * 2.0;
            }
        })
    };
    let fill = |out: &mut [f32]| out.par_chunks_mut(N).for_each(|row| row.fill(1.0));
    let mut out = Literal::zeros(&shape!(f32[N, N])).expect("a shape");
    let mut hand = vec![0.0f32; N * N];
    let mut bound = vec![0.0f32; N * N];

    let reference: Vec<f32> = (0..N * N).map(|i| (u[i / N] + v[i % N]) * 2.0).collect();
    check_lazy("W2", &fused, &unfused, &arguments, &mut out, &reference, 0.0);
    assert_close("W2 ndarray", ndarray_eager(&u_array, &v_array), &reference, 0.0);
    hand_loop(&mut hand, &u, &v);
    assert_close("W2 hand loop", hand.iter().copied(), &reference, 0.0);
    drop(reference);

    let mut group = large_group(c, "W2_outer_4096x4096", (N * N + 2 * N) * F32);
    bench_lazy(&mut group, &fused, &unfused, &arguments, &mut out);
    group
        .bench_function("ndarray_eager", |bench| bench.iter(|| ndarray_eager(black_box(&u_array), &v_array)));
    group.bench_function("hand_loop", |bench| bench.iter(|| hand_loop(&mut hand, black_box(&u), &v)));
    group.bench_function("fill_bound", |bench| bench.iter(|| fill(black_box(&mut bound))));
    group.finish();
}

// ---------------------------------------------------------------------------------------------
// W3: A{0,1,2,3} + C{3,2,1,0}, f32[64,64,64,64]
// ---------------------------------------------------------------------------------------------

/// The size of every dimension of W3.
const W3_D: usize = 64;
/// The side of W3's hand-loop tiles.
const W3_TILE: usize = 16;

/// `out = A + C` in row-major order, with `a` A's column-major memory: A[i,j,k,l] is at
/// `i + D (j + D (k + D l))`, out and C's [i,j,k,l] at `l + D (k + D (j + D i))`. The (i, l)
/// plane is a transpose; it is walked in 16×16 tiles, blocks of 16 `i` per rayon task.
fn w3_hand_tiled(out: &mut [f32], a: &[f32], c: &[f32]) {
    const D: usize = W3_D;
    const T: usize = W3_TILE;
    let i_stride = D * D * D;
    out.par_chunks_mut(T * i_stride).zip(c.par_chunks(T * i_stride)).enumerate().for_each(
        |(block, (out, c))| {
            let i0 = block * T;
            for j in 0..D {
                for k in 0..D {
                    let out_base = j * D * D + k * D;
                    let a_base = k * D * D + j * D + i0;
                    for l0 in (0..D).step_by(T) {
                        for ii in 0..T {
                            let row = ii * i_stride + out_base + l0;
                            let out_row = &mut out[row..row + T];
                            let c_row = &c[row..row + T];
                            for (ll, (o, &c)) in out_row.iter_mut().zip(c_row).enumerate() {
                                *o = a[(l0 + ll) * i_stride + a_base + ii] + c;
                            }
                        }
                    }
                }
            }
        },
    );
}

fn w3(c: &mut Criterion) {
    const D: usize = W3_D;
    const N: usize = D * D * D * D;
    let a_shape = shape!(f32[D, D, D, D]{0, 1, 2, 3});
    let c_shape = shape!(f32[D, D, D, D]);
    let computation = {
        let builder = XlaBuilder::new("w3");
        let a = builder.parameter(0, &a_shape, "a");
        let c = builder.parameter(1, &c_shape, "c");
        builder.build(a + c).expect("a valid graph")
    };
    let (fused, unfused) = fused_and_unfused(&computation);
    let (a_literal, c_values, reference) = {
        let a_values = values(N, 6, -1.0, 2.0);
        let c_values = values(N, 7, 0.0, 3.0);
        let reference: Vec<f32> = a_values.iter().zip(&c_values).map(|(a, c)| a + c).collect();
        (Literal::from_vec(&a_shape, a_values).expect("values fit"), c_values, reference)
    };
    let c_literal = Literal::from_vec(&c_shape, c_values.clone()).expect("values fit");
    let a_memory = a_literal.memory::<f32>().expect("f32");
    assert_eq!(a_memory[1], reference[D * D * D] - c_values[D * D * D], "A is column-major in memory");
    let arguments = [&a_literal, &c_literal];
    let a_array = Array4::from_shape_vec((D, D, D, D).f(), a_memory.to_vec()).expect("values fit");
    let c_array = Array4::from_shape_vec((D, D, D, D), c_values.clone()).expect("values fit");
    let ndarray_eager = |a: &Array4<f32>, c: &Array4<f32>| a + c;
    let add_bound = |out: &mut [f32], a: &[f32], c: &[f32]| {
        const CHUNK: usize = 1 << 16;
        out.par_chunks_mut(CHUNK).zip(a.par_chunks(CHUNK)).zip(c.par_chunks(CHUNK)).for_each(
            |((out, a), c)| {
                for ((o, &a), &c) in out.iter_mut().zip(a).zip(c) {
                    *o = a + c;
                }
            },
        )
    };
    let mut out = Literal::zeros(&c_shape).expect("a shape");
    let mut hand = vec![0.0f32; N];
    let mut bound = vec![0.0f32; N];

    check_lazy("W3", &fused, &unfused, &arguments, &mut out, &reference, 0.0);
    assert_close("W3 ndarray", ndarray_eager(&a_array, &c_array), &reference, 0.0);
    w3_hand_tiled(&mut hand, a_memory, &c_values);
    assert_close("W3 hand loop", hand.iter().copied(), &reference, 0.0);
    drop(reference);

    let mut group = large_group(c, "W3_mixed_layout_64x64x64x64", 3 * N * F32);
    bench_lazy(&mut group, &fused, &unfused, &arguments, &mut out);
    group
        .bench_function("ndarray_eager", |bench| bench.iter(|| ndarray_eager(black_box(&a_array), &c_array)));
    group.bench_function("hand_loop_tiled", |bench| {
        bench.iter(|| w3_hand_tiled(&mut hand, black_box(a_memory), &c_values))
    });
    group.bench_function("contiguous_add_bound", |bench| {
        bench.iter(|| add_bound(&mut bound, black_box(a_memory), &c_values))
    });
    group.finish();
}

// ---------------------------------------------------------------------------------------------
// W4: a 16-op element-wise chain on X[4096,1024] with a broadcast vector v[1024]
// ---------------------------------------------------------------------------------------------

/// One op of W4's chain: with the vector `v` (broadcast along dimension 1), with a scalar, or
/// unary.
#[derive(Clone, Copy, Debug)]
enum Step {
    AddV,
    SubV,
    MulV,
    MaxV,
    MinV,
    AddS(f32),
    SubS(f32),
    MulS(f32),
    MaxS(f32),
    MinS(f32),
    Abs,
    Neg,
}

/// W4: sixteen cheap element-wise ops, five of them with the broadcast vector.
const W4_CHAIN: [Step; 16] = [
    Step::AddV,
    Step::MulS(0.5),
    Step::MaxV,
    Step::SubS(1.0),
    Step::MulV,
    Step::MinS(4.0),
    Step::AddS(0.25),
    Step::Abs,
    Step::MulS(1.5),
    Step::SubV,
    Step::MaxS(-2.0),
    Step::MulS(0.75),
    Step::MinV,
    Step::AddS(2.0),
    Step::Neg,
    Step::MulV,
];

/// One step on one element.
fn w4_step(step: Step, y: f32, v: f32) -> f32 {
    match step {
        Step::AddV => y + v,
        Step::SubV => y - v,
        Step::MulV => y * v,
        Step::MaxV => y.max(v),
        Step::MinV => y.min(v),
        Step::AddS(s) => y + s,
        Step::SubS(s) => y - s,
        Step::MulS(s) => y * s,
        Step::MaxS(s) => y.max(s),
        Step::MinS(s) => y.min(s),
        Step::Abs => y.abs(),
        Step::Neg => -y,
    }
}

/// The whole chain on one element, written out (a loop over [`W4_CHAIN`] with a `match` is
/// not reliably unrolled, and then does not vectorize). The checks before timing compare it
/// with [`w4_chain_element`], so the two cannot drift apart.
#[inline(always)]
fn w4_element(x: f32, v: f32) -> f32 {
    let y = (x + v) * 0.5;
    let y = (y.max(v) - 1.0) * v;
    let y = (y.min(4.0) + 0.25).abs() * 1.5;
    let y = ((y - v).max(-2.0) * 0.75).min(v) + 2.0;
    -y * v
}

/// The chain on one element, step by step from [`W4_CHAIN`].
fn w4_chain_element(x: f32, v: f32) -> f32 {
    W4_CHAIN.iter().fold(x, |y, &step| w4_step(step, y, v))
}

fn w4_computation(rows: usize, cols: usize) -> XlaComputation {
    let builder = XlaBuilder::new("w4");
    let x = builder.parameter(0, &shape!(f32[rows, cols]), "x");
    let v = builder.parameter(1, &shape!(f32[cols]), "v");
    let scalar = |s: f32| builder.constant_r0(s);
    let mut y = x;
    for step in W4_CHAIN {
        y = match step {
            Step::AddV => add(y, v, &[1]),
            Step::SubV => sub(y, v, &[1]),
            Step::MulV => mul(y, v, &[1]),
            Step::MaxV => max(y, v, &[1]),
            Step::MinV => min(y, v, &[1]),
            Step::AddS(s) => add(y, scalar(s), &[]),
            Step::SubS(s) => sub(y, scalar(s), &[]),
            Step::MulS(s) => mul(y, scalar(s), &[]),
            Step::MaxS(s) => max(y, scalar(s), &[]),
            Step::MinS(s) => min(y, scalar(s), &[]),
            Step::Abs => abs(y),
            Step::Neg => neg(y),
        };
    }
    builder.build(y).expect("a valid graph")
}

/// W4 as numpy would run it: one fresh array per op.
fn w4_ndarray(x: &Array2<f32>, v: &Array1<f32>) -> Array2<f32> {
    let with_v = |y: &Array2<f32>, f: fn(f32, f32) -> f32| {
        Zip::from(y).and_broadcast(v.view()).map_collect(|&y, &v| f(y, v))
    };
    let mut y = x.to_owned();
    for step in W4_CHAIN {
        y = match step {
            Step::AddV => &y + v,
            Step::SubV => &y - v,
            Step::MulV => &y * v,
            Step::MaxV => with_v(&y, f32::max),
            Step::MinV => with_v(&y, f32::min),
            Step::AddS(s) => &y + s,
            Step::SubS(s) => &y - s,
            Step::MulS(s) => &y * s,
            Step::MaxS(s) => y.mapv(|y| y.max(s)),
            Step::MinS(s) => y.mapv(|y| y.min(s)),
            Step::Abs => y.mapv(f32::abs),
            Step::Neg => -&y,
        };
    }
    y
}

/// W4 by hand: the whole chain per element, one row per rayon task.
fn w4_hand(out: &mut [f32], x: &[f32], v: &[f32]) {
    let cols = v.len();
    out.par_chunks_mut(cols).zip(x.par_chunks(cols)).for_each(|(out, x)| {
        for ((o, &x), &v) in out.iter_mut().zip(x).zip(v) {
            *o = w4_element(x, v);
        }
    });
}

fn w4(c: &mut Criterion) {
    const ROWS: usize = 4096;
    const COLS: usize = 1024;
    let x = values(ROWS * COLS, 8, -5.0, 10.0);
    let v = values(COLS, 9, -1.0, 2.0);
    let (fused, unfused) = fused_and_unfused(&w4_computation(ROWS, COLS));
    let x_literal = Literal::from_vec(&shape!(f32[ROWS, COLS]), x.clone()).expect("values fit");
    let v_literal = Literal::vec1(&v);
    let arguments = [&x_literal, &v_literal];
    let x_array = Array2::from_shape_vec((ROWS, COLS), x.clone()).expect("values fit");
    let v_array = Array1::from_vec(v.clone());
    let mut out = Literal::zeros(&shape!(f32[ROWS, COLS])).expect("a shape");
    let mut hand = vec![0.0f32; ROWS * COLS];

    let reference: Vec<f32> = (0..ROWS * COLS).map(|i| w4_chain_element(x[i], v[i % COLS])).collect();
    check_lazy("W4", &fused, &unfused, &arguments, &mut out, &reference, 1e-6);
    assert_close("W4 ndarray", w4_ndarray(&x_array, &v_array), &reference, 1e-6);
    w4_hand(&mut hand, &x, &v);
    assert_close("W4 hand loop", hand.iter().copied(), &reference, 1e-6);
    drop(reference);

    let mut group = large_group(c, "W4_chain16_4096x1024", (2 * ROWS * COLS + COLS) * F32);
    bench_lazy(&mut group, &fused, &unfused, &arguments, &mut out);
    group.bench_function("ndarray_eager", |bench| bench.iter(|| w4_ndarray(black_box(&x_array), &v_array)));
    group.bench_function("hand_loop_bound", |bench| bench.iter(|| w4_hand(&mut hand, black_box(&x), &v)));
    group.finish();
}

// ---------------------------------------------------------------------------------------------
// W6: compile time of long element-wise graphs
// ---------------------------------------------------------------------------------------------

/// A chain of `ops` element-wise ops over small parameters; every fourth op takes a vector
/// (one recorded `broadcast` each), the others a same-shaped parameter or nothing.
fn w6_computation(ops: usize) -> XlaComputation {
    let builder = XlaBuilder::new("w6");
    let x = builder.parameter(0, &shape!(f32[8, 16]), "x");
    let w = builder.parameter(1, &shape!(f32[8, 16]), "w");
    let v = builder.parameter(2, &shape!(f32[16]), "v");
    let u = builder.parameter(3, &shape!(f32[8]), "u");
    let mut y = x;
    for op in 0..ops {
        y = match op % 8 {
            0 => add(y, v, &[1]),
            1 => mul(y, w, &[]),
            2 => max(y, x, &[]),
            3 => sub(y, w, &[]),
            4 => mul(y, u, &[0]),
            5 => min(y, x, &[]),
            6 => neg(y),
            _ => add(y, w, &[]),
        };
    }
    builder.build(y).expect("a valid graph")
}

/// The instructions of a computation's HLO text.
fn instruction_count(hlo: &str) -> usize {
    hlo.lines().filter(|line| line.contains(" = ")).count()
}

fn w6(c: &mut Criterion) {
    let mut group = c.benchmark_group("W6_compile");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(1000));
    group.measurement_time(Duration::from_secs(4));
    for ops in [2_500, 10_000] {
        let computation = w6_computation(ops);
        let recorded = instruction_count(&computation.to_hlo_text());
        let optimized = computation.compile(&CompileOptions::default()).expect("compiles").to_hlo_text();
        eprintln!(
            "W6: {ops} element-wise ops = {recorded} recorded instructions; after optimization {} \
             instructions, {} fusion(s)",
            instruction_count(&optimized),
            optimized.matches(" fusion(").count()
        );
        group.throughput(Throughput::Elements(ops as u64));
        group.bench_function(format!("compile_{ops}_ops"), |bench| {
            bench.iter(|| {
                black_box(black_box(&computation).compile(&CompileOptions::default()).expect("compiles"))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, w1, w2, w3, w4, w5, w6);
criterion_main!(benches);
