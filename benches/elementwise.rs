//! Element-wise workloads, unfused: W1's first step, `add(X[2048,4096], b[4096], &[1])`, timed
//! with `execute` (fresh output) and `execute_into` (reused output), beside a hand-written
//! parallel loop over the same data (the in-run bound).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lazy_xla::*;
use rayon::prelude::*;

const ROWS: usize = 2048;
const COLUMNS: usize = 4096;

fn bias_add(c: &mut Criterion) {
    let b = XlaBuilder::new("bias_add");
    let x = b.parameter(0, &shape!(f32[ROWS, COLUMNS]), "x");
    let v = b.parameter(1, &shape!(f32[COLUMNS]), "v");
    let computation = b.build(add(x, v, &[1])).expect("a valid graph");
    let unfused =
        computation.compile(&CompileOptions { fusion: false, ..Default::default() }).expect("compiles");
    let xs: Vec<f32> = (0..ROWS * COLUMNS).map(|i| (i % 97) as f32).collect();
    let vs: Vec<f32> = (0..COLUMNS).map(|i| i as f32).collect();
    let x_literal = Literal::from_vec(&shape!(f32[ROWS, COLUMNS]), xs.clone()).expect("values fit");
    let v_literal = Literal::vec1(&vs);
    let mut out = unfused.execute(&[&x_literal, &v_literal]).expect("runs");

    let mut group = c.benchmark_group("W1_bias_add_2048x4096");
    // Bytes moved: read X, write the output (the vector stays in cache).
    group.throughput(Throughput::Bytes((2 * ROWS * COLUMNS * 4) as u64));
    group.sample_size(20);
    group.bench_function("unfused_execute", |bench| {
        bench.iter(|| unfused.execute(&[&x_literal, &v_literal]).expect("runs"))
    });
    group.bench_function("unfused_execute_into", |bench| {
        bench.iter(|| unfused.execute_into(&[&x_literal, &v_literal], &mut out).expect("runs"))
    });
    let mut hand = vec![0.0f32; ROWS * COLUMNS];
    group.bench_function("hand_loop_bound", |bench| {
        bench.iter(|| {
            hand.par_chunks_mut(COLUMNS).zip(xs.par_chunks(COLUMNS)).for_each(|(o, x)| {
                for ((o, x), v) in o.iter_mut().zip(x).zip(&vs) {
                    *o = x + v;
                }
            })
        })
    });
    group.finish();
}

criterion_group!(benches, bias_add);
criterion_main!(benches);
