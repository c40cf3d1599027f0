//! Mixed-precision matrix products of `[1024, 1024]²` beside the f32 one (`sgemm`, as W7):
//! bf16 · bf16 → f32 (the operands widened to f32, then `sgemm`) and s8 · s8 → s32 (exact:
//! 8-bit products summed in f64 through `dgemm`, wrapped into s32), each into a reused output.
//!
//! Before timing, the s8 product is checked exactly against integer arithmetic (on a sample of
//! its entries) and the bf16 one against the f32 product of the same values.
//!
//! Run with `cargo bench --bench precision`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use lazy_xla::half::bf16;
use lazy_xla::*;

const N: usize = 1024;

fn executable(lhs: &Shape, rhs: &Shape, preferred: Option<ElementType>) -> Executable {
    let b = XlaBuilder::new("matmul");
    let (x, w) = (b.parameter(0, lhs, "x"), b.parameter(1, rhs, "w"));
    b.build(dot_with(x, w, None, preferred))
        .and_then(|c| c.compile(&CompileOptions::default()))
        .expect("the dot compiles")
}

fn mixed_precision(c: &mut Criterion) {
    let small = |i: usize| ((i * 7919 + 13) % 255) as i32 - 127;
    let (a8, b8): (Vec<i8>, Vec<i8>) =
        ((0..N * N).map(|i| small(i) as i8).collect(), (0..N * N).map(|i| small(i * 31 + 5) as i8).collect());
    let (a32, b32): (Vec<f32>, Vec<f32>) = (
        a8.iter().map(|&v| f32::from(v) / 128.0).collect(),
        b8.iter().map(|&v| f32::from(v) / 128.0).collect(),
    );
    let to_bf16 = |v: &[f32]| v.iter().map(|&x| bf16::from_f32(x)).collect::<Vec<_>>();
    let literal = |s: Shape, l: lazy_xla::Result<Literal>| l.unwrap_or_else(|e| panic!("{s}: {e}"));
    let (x32, w32) = (
        literal(shape!(f32[N, N]), Literal::from_vec(&shape!(f32[N, N]), a32.clone())),
        literal(shape!(f32[N, N]), Literal::from_vec(&shape!(f32[N, N]), b32.clone())),
    );
    let (x16, w16) = (
        literal(shape!(bf16[N, N]), Literal::from_vec(&shape!(bf16[N, N]), to_bf16(&a32))),
        literal(shape!(bf16[N, N]), Literal::from_vec(&shape!(bf16[N, N]), to_bf16(&b32))),
    );
    let (x8, w8) = (
        literal(shape!(s8[N, N]), Literal::from_vec(&shape!(s8[N, N]), a8.clone())),
        literal(shape!(s8[N, N]), Literal::from_vec(&shape!(s8[N, N]), b8.clone())),
    );
    let f32_exe = executable(x32.shape(), w32.shape(), None);
    let bf16_exe = executable(x16.shape(), w16.shape(), Some(ElementType::F32));
    let s8_exe = executable(x8.shape(), w8.shape(), Some(ElementType::S32));
    let mut f32_out = f32_exe.execute(&[&x32, &w32]).expect("runs");
    let mut bf16_out = bf16_exe.execute(&[&x16, &w16]).expect("runs");
    let mut s8_out = s8_exe.execute(&[&x8, &w8]).expect("runs");

    let sums = s8_out.to_vec::<i32>().expect("s32");
    for e in (0..N * N).step_by(4099) {
        let (i, j) = (e / N, e % N);
        let exact: i32 = (0..N).map(|k| i32::from(a8[i * N + k]) * i32::from(b8[k * N + j])).sum();
        assert_eq!(sums[e], exact, "s8 product entry ({i}, {j})");
    }
    // The values are multiples of 2⁻⁷ with 8 significant bits: exact in bf16, so both products
    // sum the same f32 values.
    let (p32, p16) = (f32_out.to_vec::<f32>().expect("f32"), bf16_out.to_vec::<f32>().expect("f32"));
    assert!(
        p32.iter().zip(&p16).all(|(a, b)| (a - b).abs() <= 1e-3 * (1.0 + a.abs())),
        "bf16 differs from f32"
    );

    let mut group = c.benchmark_group("matmul_1024x1024x1024");
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(4));
    group.bench_function("f32_sgemm", |bench| {
        bench.iter(|| f32_exe.execute_into(black_box(&[&x32, &w32]), &mut f32_out).expect("runs"))
    });
    group.bench_function("bf16_to_f32", |bench| {
        bench.iter(|| bf16_exe.execute_into(black_box(&[&x16, &w16]), &mut bf16_out).expect("runs"))
    });
    group.bench_function("s8_to_s32_exact", |bench| {
        bench.iter(|| s8_exe.execute_into(black_box(&[&x8, &w8]), &mut s8_out).expect("runs"))
    });
    group.finish();
}

criterion_group!(benches, mixed_precision);
criterion_main!(benches);
