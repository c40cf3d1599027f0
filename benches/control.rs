//! The control issue's targets, each beside the bound it is measured against in the same run:
//!
//! - `sort` of `f32[256, 4096]` along its rows against `sort_unstable_by(f32::total_cmp)` of
//!   the same rows on all threads (rayon); `top_k` with k = 8 of it against one parallel read
//!   of its bytes;
//! - a `while_loop` of 1000 trips whose body adds two `f32[16]` vectors (the time per trip is
//!   the total over 1000);
//! - argmax over the rows of `f32[4096, 1024]` (jax's variadic reduce of values and iota)
//!   against one parallel read of its bytes.
//!
//! Before timing, each result is checked against a plain Rust computation of it.
//!
//! Run with `cargo bench --bench control` (about a minute on two cores).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, SamplingMode};
use lazy_xla::*;
use rayon::prelude::*;

/// Deterministic values in [-1, 1), distinct enough that sorting does real work.
fn values(count: usize) -> Vec<f32> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

/// A parallel read of every element (a sum per row): what a read-bound kernel can reach.
fn parallel_read(xs: &[f32], columns: usize) -> f32 {
    xs.par_chunks(columns).map(|row| row.iter().sum::<f32>()).sum()
}

fn configure(group: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    group.sample_size(20);
    group.sampling_mode(SamplingMode::Flat);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
}

/// `lhs < rhs` of two `f32` scalars: the comparator jax's `sort` writes for one operand.
fn less_than() -> XlaComputation {
    let b = XlaBuilder::new("lt");
    let (l, r) = (b.parameter(0, &shape!(f32[]), "l"), b.parameter(1, &shape!(f32[]), "r"));
    b.build(lt(l, r, &[])).expect("a valid comparator")
}

fn sort_and_top_k(c: &mut Criterion) {
    const ROWS: usize = 256;
    const COLUMNS: usize = 4096;
    let xs = values(ROWS * COLUMNS);
    let x = Literal::from_vec(&shape!(f32[ROWS, COLUMNS]), xs.clone()).expect("values fit");
    let mut sorted_reference = xs.clone();
    sorted_reference.par_chunks_mut(COLUMNS).for_each(|row| row.sort_unstable_by(f32::total_cmp));

    let b = XlaBuilder::new("sort");
    let p = b.parameter(0, x.shape(), "x");
    let sort_executable = b
        .build(sort(&[p], &less_than(), -1, false))
        .and_then(|c| c.compile(&CompileOptions::default()))
        .expect("sort compiles");
    let mut sorted = sort_executable.execute(&[&x]).expect("sort runs");
    assert_eq!(sorted.to_vec::<f32>().expect("f32"), sorted_reference, "sort differs from std");

    let b = XlaBuilder::new("top_k");
    let p = b.parameter(0, x.shape(), "x");
    let top_k_executable = b
        .build(top_k(p, 8, true))
        .and_then(|c| c.compile(&CompileOptions::default()))
        .expect("top_k compiles");
    let mut top = top_k_executable.execute(&[&x]).expect("top_k runs");
    let top_values = top.tuple_element(0).expect("values").to_vec::<f32>().expect("f32");
    for (row, got) in sorted_reference.chunks(COLUMNS).zip(top_values.chunks(8)) {
        let expected: Vec<f32> = row.iter().rev().take(8).copied().collect();
        assert_eq!(got, expected.as_slice(), "top_k differs from the sorted row's end");
    }

    let mut group = c.benchmark_group("sort_256x4096");
    configure(&mut group);
    let mut scratch = xs.clone();
    group.bench_function("std_sort_unstable_total_cmp_parallel", |bench| {
        bench.iter(|| {
            scratch.copy_from_slice(&xs);
            scratch.par_chunks_mut(COLUMNS).for_each(|row| row.sort_unstable_by(f32::total_cmp));
        })
    });
    group.bench_function("sort", |bench| {
        bench.iter(|| sort_executable.execute_into(black_box(&[&x]), &mut sorted).expect("runs"))
    });
    group.bench_function("parallel_read", |bench| bench.iter(|| parallel_read(black_box(&xs), COLUMNS)));
    group.bench_function("top_k_8", |bench| {
        bench.iter(|| top_k_executable.execute_into(black_box(&[&x]), &mut top).expect("runs"))
    });
    group.finish();
}

fn while_loop_trips(c: &mut Criterion) {
    const TRIPS: i32 = 1000;
    let state = Shape::tuple(&[shape!(s32[]), shape!(f32[16]), shape!(f32[16])]);
    let cond = XlaBuilder::new("cond");
    let s = cond.parameter(0, &state, "s");
    let condition = cond.build(lt(get_tuple_element(s, 0), cond.constant_r0(TRIPS), &[])).expect("condition");
    let body_builder = XlaBuilder::new("body");
    let s = body_builder.parameter(0, &state, "s");
    let (i, acc, step) = (get_tuple_element(s, 0), get_tuple_element(s, 1), get_tuple_element(s, 2));
    let body = body_builder
        .build(tuple(&body_builder, &[i + body_builder.constant_r0(1i32), acc + step, step]))
        .expect("body");
    let b = XlaBuilder::new("loop");
    let (acc, step) = (b.parameter(0, &shape!(f32[16]), "acc"), b.parameter(1, &shape!(f32[16]), "step"));
    let init = tuple(&b, &[b.constant_r0(0i32), acc, step]);
    let executable = b
        .build(get_tuple_element(while_loop(&condition, &body, init), 1))
        .and_then(|c| c.compile(&CompileOptions::default()))
        .expect("the loop compiles");
    let (zeros, ones) = (Literal::vec1(&[0.0f32; 16]), Literal::vec1(&[1.0f32; 16]));
    let mut out = executable.execute(&[&zeros, &ones]).expect("runs");
    assert_eq!(out.to_vec::<f32>().expect("f32"), vec![TRIPS as f32; 16]);

    let mut group = c.benchmark_group("while_loop_1000_trips_add_f32x16");
    configure(&mut group);
    group.bench_function("while_loop", |bench| {
        bench.iter(|| executable.execute_into(black_box(&[&zeros, &ones]), &mut out).expect("runs"))
    });
    group.finish();
}

/// jax's argmax reducer: `(value, index)` pairs; a NaN wins, equal values keep the lower index.
fn argmax_reducer() -> XlaComputation {
    let r = XlaBuilder::new("argmax");
    let (av, ai) = (r.parameter(0, &shape!(f32[]), "av"), r.parameter(1, &shape!(s32[]), "ai"));
    let (bv, bi) = (r.parameter(2, &shape!(f32[]), "bv"), r.parameter(3, &shape!(s32[]), "bi"));
    let pick_a = or(gt(av, bv, &[]), ne(av, av, &[]), &[]);
    let tie = and(eq(av, bv, &[]), lt(ai, bi, &[]), &[]);
    r.build(tuple(&r, &[select(pick_a, av, bv), select(or(pick_a, tie, &[]), ai, bi)])).expect("reducer")
}

fn argmax_rows(c: &mut Criterion) {
    const ROWS: usize = 4096;
    const COLUMNS: usize = 1024;
    let xs = values(ROWS * COLUMNS);
    let x = Literal::from_vec(&shape!(f32[ROWS, COLUMNS]), xs.clone()).expect("values fit");
    let b = XlaBuilder::new("argmax_rows");
    let p = b.parameter(0, x.shape(), "x");
    let indices = iota(&b, &shape!(s32[ROWS, COLUMNS]), 1);
    let inits = [b.constant_r0(f32::NEG_INFINITY), b.constant_r0(0i32)];
    let root = get_tuple_element(reduce_variadic(&b, &[p, indices], &inits, &argmax_reducer(), &[1]), 1);
    let executable = b.build(root).and_then(|c| c.compile(&CompileOptions::default())).expect("compiles");
    let mut out = executable.execute(&[&x]).expect("runs");
    let expected: Vec<i32> = xs
        .chunks(COLUMNS)
        .map(|row| {
            row.iter().enumerate().fold(0, |best, (i, &v)| if v > row[best] { i } else { best }) as i32
        })
        .collect();
    assert_eq!(out.to_vec::<i32>().expect("s32"), expected, "argmax differs from a plain fold");

    let mut group = c.benchmark_group("argmax_rows_4096x1024");
    configure(&mut group);
    group.bench_function("parallel_read", |bench| bench.iter(|| parallel_read(black_box(&xs), COLUMNS)));
    group.bench_function("argmax", |bench| {
        bench.iter(|| executable.execute_into(black_box(&[&x]), &mut out).expect("runs"))
    });
    group.finish();
}

criterion_group!(benches, sort_and_top_k, while_loop_trips, argmax_rows);
criterion_main!(benches);
