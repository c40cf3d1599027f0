//! Indexing, windows and convolution against their in-run bounds, each group in one run:
//!
//! - conv 3×3, stride 1, SAME, NHWC f32[8,56,56,64] → 64 features, against one `dot` of the same
//!   FLOPs (the product f32[25088,576] · f32[576,64] an im2col would make); and a small conv
//!   against a naive direct loop;
//! - gather of 4096 rows of width 512 from an f32[50000,512] table, against a parallel copy of
//!   the gathered bytes;
//! - max-pool 2×2 stride 2 on f32[8,112,112,64], against a parallel read of its input and write
//!   of its output.
//!
//! Every contender is checked against a reference before it is timed. Run with
//! `cargo bench --bench indexing`.

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, SamplingMode, Throughput};
use lazy_xla::*;
use rayon::prelude::*;

/// `n` deterministic values in `[-1, 1)`.
fn values(n: usize, seed: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 7919 + seed * 104_729) % 1009) as f32 / 504.5 - 1.0).collect()
}

fn group<'a>(c: &'a mut Criterion, name: &str, elements: usize) -> BenchmarkGroup<'a, WallTime> {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(elements as u64));
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    group
}

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

/// A compiled same-padded 3×3 NHWC convolution of `[n, side, side, c]` by `[3, 3, c, f]`.
fn conv_executable(n: i64, side: i64, c: i64, f: i64) -> Executable {
    let b = XlaBuilder::new("conv");
    let x = b.parameter(0, &shape!(f32[n, side, side, c]), "x");
    let k = b.parameter(1, &shape!(f32[3, 3, c, f]), "k");
    let y = conv_general_dilated(x, k, &[1, 1], &[(1, 1), (1, 1)], &[], &[], &nhwc(), 1, 1);
    b.build(y).unwrap().compile(&CompileOptions::default()).unwrap()
}

/// The direct convolution, one output at a time (single-threaded), into `out`.
fn naive_conv(x: &[f32], k: &[f32], [n, side, c, f]: [usize; 4], out: &mut [f32]) {
    for (b, y, xx, o) in (0..n).flat_map(|b| {
        (0..side).flat_map(move |y| (0..side).flat_map(move |xx| (0..f).map(move |o| (b, y, xx, o))))
    }) {
        let mut sum = 0.0;
        for dy in 0..3 {
            for dx in 0..3 {
                let (iy, ix) = (y as i64 + dy as i64 - 1, xx as i64 + dx as i64 - 1);
                if iy < 0 || ix < 0 || iy >= side as i64 || ix >= side as i64 {
                    continue;
                }
                let base = ((b * side + iy as usize) * side + ix as usize) * c;
                for i in 0..c {
                    sum += x[base + i] * k[((dy * 3 + dx) * c + i) * f + o];
                }
            }
        }
        out[((b * side + y) * side + xx) * f + o] = sum;
    }
}

fn convolution(c: &mut Criterion) {
    // The target: a large conv against one dot of the same FLOPs.
    let (n, side, channels, features) = (8usize, 56usize, 64usize, 64usize);
    let x = Literal::from_vec(&shape!(f32[n, side, side, channels]), values(n * side * side * channels, 1))
        .unwrap();
    let k = Literal::from_vec(&shape!(f32[3, 3, channels, features]), values(9 * channels * features, 2))
        .unwrap();
    let conv = conv_executable(n as i64, side as i64, channels as i64, features as i64);
    let (m, kk) = (n * side * side, 9 * channels);
    let db = XlaBuilder::new("dot");
    let lhs = db.parameter(0, &shape!(f32[m, kk]), "patches");
    let rhs = db.parameter(1, &shape!(f32[kk, features]), "kernel");
    let dot_exe = db.build(dot(lhs, rhs)).unwrap().compile(&CompileOptions::default()).unwrap();
    let patches = Literal::from_vec(&shape!(f32[m, kk]), values(m * kk, 3)).unwrap();
    let kernel = Literal::from_vec(&shape!(f32[kk, features]), values(kk * features, 4)).unwrap();
    let mut out = conv.execute(&[&x, &k]).unwrap();
    let mut dot_out = dot_exe.execute(&[&patches, &kernel]).unwrap();
    let mut g = group(c, "conv3x3_same_nhwc_8x56x56x64_to_64", 2 * m * kk * features);
    g.bench_function("lazy_conv", |bench| {
        bench.iter(|| conv.execute_into(&[&x, &k], black_box(&mut out)).unwrap())
    });
    g.bench_function("lazy_dot_same_flops", |bench| {
        bench.iter(|| dot_exe.execute_into(&[&patches, &kernel], black_box(&mut dot_out)).unwrap())
    });
    g.finish();

    // The convolution against the direct loop, on a size the loop finishes.
    let (n, side, channels, features) = (1usize, 28usize, 16usize, 16usize);
    let xs = values(n * side * side * channels, 5);
    let ks = values(9 * channels * features, 6);
    let x = Literal::from_vec(&shape!(f32[n, side, side, channels]), xs.clone()).unwrap();
    let k = Literal::from_vec(&shape!(f32[3, 3, channels, features]), ks.clone()).unwrap();
    let conv = conv_executable(n as i64, side as i64, channels as i64, features as i64);
    let mut out = conv.execute(&[&x, &k]).unwrap();
    let mut naive = vec![0.0f32; n * side * side * features];
    naive_conv(&xs, &ks, [n, side, channels, features], &mut naive);
    let got = out.to_vec::<f32>().unwrap();
    assert!(
        got.iter().zip(&naive).all(|(a, b)| (a - b).abs() <= 1e-4 * (1.0 + b.abs())),
        "conv differs from the loop"
    );
    let mut g = group(c, "conv3x3_same_nhwc_1x28x28x16_to_16", 2 * n * side * side * 9 * channels * features);
    g.bench_function("lazy_conv", |bench| {
        bench.iter(|| conv.execute_into(&[&x, &k], black_box(&mut out)).unwrap())
    });
    g.bench_function("naive_direct_loop", |bench| {
        bench.iter(|| naive_conv(&xs, &ks, [n, side, channels, features], black_box(&mut naive)))
    });
    g.finish();
}

fn embedding_gather(c: &mut Criterion) {
    let (rows, width, lookups) = (50_000usize, 512usize, 4096usize);
    let table = values(rows * width, 7);
    let ids: Vec<i32> = (0..lookups).map(|i| ((i * 7919) % rows) as i32).collect();
    let b = XlaBuilder::new("embed");
    let t = b.parameter(0, &shape!(f32[rows, width]), "table");
    let i = b.parameter(1, &shape!(s32[lookups]), "ids");
    let numbers = GatherDimensionNumbers {
        offset_dims: vec![1],
        collapsed_slice_dims: vec![0],
        start_index_map: vec![0],
        index_vector_dim: 1,
        ..Default::default()
    };
    let exe = b
        .build(gather(t, i, &numbers, &[1, width as i64], false))
        .unwrap()
        .compile(&CompileOptions::default())
        .unwrap();
    let table_literal = Literal::from_vec(&shape!(f32[rows, width]), table.clone()).unwrap();
    let ids_literal = Literal::vec1(&ids);
    let mut out = exe.execute(&[&table_literal, &ids_literal]).unwrap();
    let want: Vec<f32> =
        ids.iter().flat_map(|&r| table[r as usize * width..(r as usize + 1) * width].to_vec()).collect();
    assert_eq!(out.to_vec::<f32>().unwrap(), want, "the gathered rows");
    let source = want.clone();
    let mut copy = vec![0.0f32; lookups * width];
    let mut g = group(c, "gather_4096_rows_of_512_from_50000", lookups * width);
    g.throughput(Throughput::Bytes((lookups * width * 4) as u64));
    g.bench_function("lazy_gather", |bench| {
        bench.iter(|| exe.execute_into(&[&table_literal, &ids_literal], black_box(&mut out)).unwrap())
    });
    g.bench_function("parallel_copy_of_the_bytes", |bench| {
        bench.iter(|| {
            copy.par_chunks_mut(width).zip(source.par_chunks(width)).for_each(|(d, s)| d.copy_from_slice(s));
            black_box(&copy);
        })
    });
    g.finish();
}

fn max_pool(c: &mut Criterion) {
    let (n, side, channels) = (8usize, 112usize, 64usize);
    let xs = values(n * side * side * channels, 8);
    let x = Literal::from_vec(&shape!(f32[n, side, side, channels]), xs.clone()).unwrap();
    let m = XlaBuilder::new("max");
    let (p, q) = (m.parameter(0, &shape!(f32[]), "p"), m.parameter(1, &shape!(f32[]), "q"));
    let maximum = m.build(max(p, q, &[])).unwrap();
    let b = XlaBuilder::new("pool");
    let input = b.parameter(0, &shape!(f32[n, side, side, channels]), "x");
    let pooled = reduce_window(
        input,
        b.constant_r0(f32::NEG_INFINITY),
        &maximum,
        &[1, 2, 2, 1],
        &[1, 2, 2, 1],
        Padding::Valid,
    );
    let exe = b.build(pooled).unwrap().compile(&CompileOptions::default()).unwrap();
    let mut out = exe.execute(&[&x]).unwrap();
    let half = side / 2;
    let at = |b: usize, y: usize, xx: usize, c: usize| xs[((b * side + y) * side + xx) * channels + c];
    let want: Vec<f32> =
        (0..n * half * half * channels)
            .map(|i| {
                let (c, xx, y, b) = (
                    i % channels,
                    (i / channels) % half,
                    (i / channels / half) % half,
                    i / channels / half / half,
                );
                at(b, 2 * y, 2 * xx, c)
                    .max(at(b, 2 * y, 2 * xx + 1, c))
                    .max(at(b, 2 * y + 1, 2 * xx, c))
                    .max(at(b, 2 * y + 1, 2 * xx + 1, c))
            })
            .collect();
    assert_eq!(out.to_vec::<f32>().unwrap(), want, "the pooled values");
    let mut bound = vec![0.0f32; want.len()];
    let mut g = group(c, "max_pool_2x2_stride_2_8x112x112x64", xs.len());
    g.throughput(Throughput::Bytes(((xs.len() + want.len()) * 4) as u64));
    g.bench_function("lazy_reduce_window", |bench| {
        bench.iter(|| exe.execute_into(&[&x], black_box(&mut out)).unwrap())
    });
    g.bench_function("parallel_read_write_of_the_bytes", |bench| {
        bench.iter(|| {
            // Every input element read once (summed in fours), every output element written once.
            bound.par_chunks_mut(channels).zip(xs.par_chunks(4 * channels)).for_each(|(d, s)| {
                for (j, v) in d.iter_mut().enumerate() {
                    *v = s[j] + s[channels + j] + s[2 * channels + j] + s[3 * channels + j];
                }
            });
            black_box(&bound);
        })
    });
    g.finish();
}

criterion_group!(benches, convolution, embedding_gather, max_pool);
criterion_main!(benches);
