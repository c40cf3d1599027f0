//! Work large enough to take the parallel paths (dot blocks, reduction partitions, split
//! loops) gives the same values as one thread and as a naive reference.

use lazy_xla::*;

#[path = "common/computations.rs"]
mod computations;

fn sum_reducer() -> Result<XlaComputation> {
    Ok(computations::sum(ElementType::S64))
}

/// Runs `computation` on `arguments` with one thread, two threads and rayon's pool, fused
/// and unfused; all six must agree, and the first is returned.
fn run_everywhere(computation: &XlaComputation, arguments: &[&Literal]) -> Result<Literal> {
    let mut results = Vec::new();
    for fusion in [true, false] {
        for num_threads in [Some(1), Some(2), None] {
            let exe = computation.compile(&CompileOptions { fusion, num_threads, ..Default::default() })?;
            results.push(exe.execute(arguments)?);
        }
    }
    for other in &results[1..] {
        assert_eq!(other, &results[0]);
    }
    Ok(results.swap_remove(0))
}

#[test]
fn large_integer_dot_matches_naive_product() -> Result<()> {
    let (batches, m, k, n) = (3usize, 96usize, 80usize, 70usize);
    let b = XlaBuilder::new("dot");
    let x = b.parameter(0, &shape!(s64[batches, m, k]), "x");
    // The rhs is stored column-major in its last two dimensions.
    let y = b.parameter(1, &shape!(s64[batches, k, n]{1, 2, 0}), "y");
    let numbers = DotDimensionNumbers {
        lhs_contracting_dimensions: vec![2],
        rhs_contracting_dimensions: vec![1],
        lhs_batch_dimensions: vec![0],
        rhs_batch_dimensions: vec![0],
    };
    let computation = b.build(dot_general(x, y, &numbers))?;
    let xs: Vec<i64> = (0..batches * m * k).map(|i| (i % 13) as i64 - 6).collect();
    let ys: Vec<i64> = (0..batches * k * n).map(|i| (i % 7) as i64 - 3).collect();
    let xl = Literal::from_vec(&shape!(s64[batches, m, k]), xs.clone())?;
    let yl = Literal::from_vec(&shape!(s64[batches, k, n]{1, 2, 0}), ys.clone())?;
    let out = run_everywhere(&computation, &[&xl, &yl])?.to_vec::<i64>()?;
    for batch in 0..batches {
        for i in 0..m {
            for j in 0..n {
                let expected: i64 =
                    (0..k).map(|l| xs[(batch * m + i) * k + l] * ys[(batch * k + l) * n + j]).sum();
                assert_eq!(out[(batch * m + i) * n + j], expected, "[{batch},{i},{j}]");
            }
        }
    }
    Ok(())
}

#[test]
fn large_f32_matmul_on_two_threads_matches_one() -> Result<()> {
    let b = XlaBuilder::new("matmul");
    let x = b.parameter(0, &shape!(f32[128, 96]), "x");
    let y = b.parameter(1, &shape!(f32[96, 64]{0, 1}), "y");
    let computation = b.build(dot(x, y))?;
    let xl =
        Literal::from_vec(&shape!(f32[128, 96]), (0..128 * 96).map(|i| ((i % 5) as f32) * 0.5).collect())?;
    let yl = Literal::from_vec(
        &shape!(f32[96, 64]{0, 1}),
        (0..96 * 64).map(|i| ((i % 3) as f32) - 1.0).collect(),
    )?;
    let out = run_everywhere(&computation, &[&xl, &yl])?;
    let (xv, yv) = (xl.to_vec::<f32>()?, yl.to_vec::<f32>()?);
    let got = out.to_vec::<f32>()?;
    for i in 0..128 {
        for j in 0..64 {
            let expected: f32 = (0..96).map(|l| xv[i * 96 + l] * yv[l * 64 + j]).sum();
            assert!((got[i * 64 + j] - expected).abs() < 1e-3, "[{i},{j}]");
        }
    }
    Ok(())
}

#[test]
fn large_reductions_over_every_dimension_set() -> Result<()> {
    // Short rows (tiles of several per work item) and rows longer than a chunk (several
    // segments per row, in tiles of a few rows); of a fused producer, and of the input itself
    // (taller tiles where the rows are reduced).
    for (rows, columns) in [(600usize, 300usize), (61, 2500)] {
        for producer in [true, false] {
            reductions_over_every_dimension_set(rows, columns, producer)?;
        }
    }
    Ok(())
}

fn reductions_over_every_dimension_set(rows: usize, columns: usize, producer: bool) -> Result<()> {
    let values: Vec<i64> = (0..rows * columns).map(|i| ((i * 7919) % 1000) as i64 - 500).collect();
    for layout in [[1i64, 0], [0, 1]] {
        let shape = Shape::with_layout(ElementType::S64, &[rows as i64, columns as i64], &layout)?;
        let literal = Literal::from_vec(&shape, values.clone())?;
        for dimensions in [vec![0i64], vec![1], vec![0, 1]] {
            let b = XlaBuilder::new("reduce");
            let x = b.parameter(0, &shape, "x");
            // An element-wise producer, fused into the reduction (an input fusion), or none.
            let factor = if producer { 2 } else { 1 };
            let operand = if producer { x * b.constant_r0(factor) } else { x };
            let computation = b.build(reduce(operand, b.constant_r0(5i64), &sum_reducer()?, &dimensions))?;
            let out = run_everywhere(&computation, &[&literal])?.to_vec::<i64>()?;
            let at = |i: usize, j: usize| factor * values[i * columns + j];
            let expected = sums_over(&dimensions, [rows, columns], 5, at);
            assert_eq!(
                out, expected,
                "{rows}×{columns}, layout {layout:?}, dimensions {dimensions:?}, producer {producer}"
            );
        }
    }
    Ok(())
}

/// `init` plus the sum of `at(i, j)` over `dimensions` (`[0]`, `[1]` or both) of a
/// `rows × columns` array, for each element left, adding in row-major order.
fn sums_over<T: Copy + std::ops::Add<Output = T> + std::iter::Sum>(
    dimensions: &[i64],
    [rows, columns]: [usize; 2],
    init: T,
    at: impl Fn(usize, usize) -> T,
) -> Vec<T> {
    let at = &at;
    match dimensions {
        [0] => (0..columns).map(|j| init + (0..rows).map(|i| at(i, j)).sum::<T>()).collect(),
        [1] => (0..rows).map(|i| init + (0..columns).map(|j| at(i, j)).sum::<T>()).collect(),
        _ => vec![init + (0..rows).flat_map(|i| (0..columns).map(move |j| at(i, j))).sum::<T>()],
    }
}

/// `n` values spread over [-2, 2), in a scrambled order (so sums round differently when
/// added in another order).
fn spread(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 7919) % 1000) as f32 / 250.0 - 2.0).collect()
}

/// Panics unless an f32 sum is within 1e-4 (relative, at least 1e-4 absolute) of its f64
/// reference.
fn assert_near(got: f32, want: f64, label: &str) {
    assert!((f64::from(got) - want).abs() <= 1e-4 * want.abs().max(1.0), "{label}: {got} against {want}");
}

#[test]
fn large_f32_sums_and_maxima_of_a_fused_producer_in_both_layouts() -> Result<()> {
    // Row sums fold chunks in lanes, column sums are shared by column ranges, a full sum is cut
    // into partial sums: every way agrees across threads and fusion, and with f64 sums.
    let (rows, columns) = (700usize, 300usize);
    let values = spread(rows * columns);
    let max_reducer = computations::scalar_computation("max", ElementType::F32, |_, a, b| max(a, b, &[]));
    for layout in [[1i64, 0], [0, 1]] {
        let shape = Shape::with_layout(ElementType::F32, &[rows as i64, columns as i64], &layout)?;
        let literal = Literal::from_vec(&shape, values.clone())?;
        let at = |i: usize, j: usize| f64::from(values[i * columns + j] * values[i * columns + j]);
        for dimensions in [vec![0i64], vec![1], vec![0, 1]] {
            let b = XlaBuilder::new("reduce");
            let x = b.parameter(0, &shape, "x");
            let squares = x * x;
            let sums =
                reduce(squares, b.constant_r0(0.5f32), &computations::sum(ElementType::F32), &dimensions);
            let maxima = reduce(squares, b.constant_r0(f32::NEG_INFINITY), &max_reducer, &dimensions);
            let computation = b.build(tuple(&b, &[sums, maxima]))?;
            let out = run_everywhere(&computation, &[&literal])?;
            let (sums, maxima) =
                (out.tuple_element(0)?.to_vec::<f32>()?, out.tuple_element(1)?.to_vec::<f32>()?);
            let cells = |k: usize| -> Vec<(usize, usize)> {
                match dimensions.as_slice() {
                    [0] => (0..rows).map(|i| (i, k)).collect(),
                    [1] => (0..columns).map(|j| (k, j)).collect(),
                    _ => (0..rows * columns).map(|n| (n / columns, n % columns)).collect(),
                }
            };
            for (k, (&sum, &maximum)) in sums.iter().zip(&maxima).enumerate() {
                let want = 0.5 + cells(k).iter().map(|&(i, j)| at(i, j)).sum::<f64>();
                let want_max = cells(k).iter().map(|&(i, j)| at(i, j)).fold(f64::NEG_INFINITY, f64::max);
                assert!((f64::from(sum) - want).abs() <= 1e-4 * want, "{layout:?} {dimensions:?} sum {k}");
                assert_eq!(f64::from(maximum), want_max, "{layout:?} {dimensions:?} max {k}");
            }
        }
    }
    Ok(())
}

#[test]
fn large_f32_sums_of_a_producer_read_once_agree_fused_and_unfused() -> Result<()> {
    // Unfused, the reduce reads the producer's array (a program of one node, in taller tiles
    // where it sums rows), fused it computes it (two nodes): the sums add in the same order
    // either way, column sums and the full sum in partial sums over the same rows, for row
    // counts that are not multiples of 16 nor of every tile height, and for fewer rows than
    // partial sums (9: each partial sum a range of row segments).
    for (rows, columns) in [(700usize, 300usize), (700, 1024), (1000, 133), (9, 16_000)] {
        let values = spread(rows * columns);
        let shape = Shape::new(ElementType::F32, &[rows as i64, columns as i64]);
        let literal = Literal::from_vec(&shape, values.clone())?;
        for dimensions in [vec![0i64], vec![1], vec![0, 1]] {
            let b = XlaBuilder::new("reduce");
            let x = b.parameter(0, &shape, "x");
            let doubled = x * b.constant_r0(2.0f32);
            let sums =
                reduce(doubled, b.constant_r0(0.5f32), &computations::sum(ElementType::F32), &dimensions);
            let out = run_everywhere(&b.build(sums)?, &[&literal])?.to_vec::<f32>()?;
            let at = |i: usize, j: usize| 2.0 * f64::from(values[i * columns + j]);
            for (k, (&got, want)) in
                out.iter().zip(sums_over(&dimensions, [rows, columns], 0.5, at)).enumerate()
            {
                assert_near(got, want, &format!("{rows}×{columns} {k}"));
            }
        }
    }
    Ok(())
}

#[test]
fn large_f32_sums_across_an_outer_dimension_agree_fused_and_unfused() -> Result<()> {
    // f32[3, 333, 200]: summed over {0, 2}, the walk keeps its middle dimension (the tiles'
    // rows land in different outputs) and its partial sums' bands of rows cross from one
    // index of the outer dimension to the next; over {0, 1}, the two merge into one
    // dimension of rows. Fused, `x·2` is computed in tiles of 4 rows; unfused, the reduce
    // reads it in tiles of 64.
    let dims = [3usize, 333, 200];
    let values = spread(dims.iter().product());
    let shape = Shape::new(ElementType::F32, &dims.map(|d| d as i64));
    let literal = Literal::from_vec(&shape, values.clone())?;
    for (dimensions, kept) in [([0i64, 2], 1usize), ([0, 1], 2)] {
        let b = XlaBuilder::new("reduce");
        let doubled = b.parameter(0, &shape, "x") * b.constant_r0(2.0f32);
        let sums = reduce(doubled, b.constant_r0(0.0f32), &computations::sum(ElementType::F32), &dimensions);
        let out = run_everywhere(&b.build(sums)?, &[&literal])?.to_vec::<f32>()?;
        let mut want = vec![0.0f64; dims[kept]];
        for (i, &v) in values.iter().enumerate() {
            want[unravel(i, &dims)[kept]] += 2.0 * f64::from(v);
        }
        for (k, (&got, want)) in out.iter().zip(want).enumerate() {
            assert_near(got, want, &format!("{dimensions:?} {k}"));
        }
    }
    Ok(())
}

/// Sums of `x + transpose(y)`, whose fused walk keeps apart dimensions that the contiguous
/// array of its values merges (f32[1000,133] summed whole: rows of 133 against one row; over
/// two dimensions of a rank-3 array, against their product), agree fused and unfused bit for
/// bit: such a reduce reads its producers' result, as unfused, instead of folding other rows
/// in other pieces and bands. Sums whose walk is the same either way stay fused.
#[test]
fn large_f32_sums_of_a_transposed_producer_agree_fused_and_unfused() -> Result<()> {
    // x's dimensions, the permutation of them that y's are, and the sets summed over.
    type Case = (&'static [usize], &'static [i64], &'static [&'static [i64]]);
    let cases: [Case; 4] = [
        (&[1000, 133], &[1, 0], &[&[0, 1], &[0], &[1]]),
        (&[1000, 20, 30], &[0, 2, 1], &[&[0], &[1, 2], &[0, 1, 2]]),
        (&[1000, 20, 30], &[1, 0, 2], &[&[0], &[1, 2]]),
        (&[37, 100, 133], &[2, 1, 0], &[&[0], &[1, 2], &[0, 1], &[0, 2], &[0, 1, 2], &[2]]),
    ];
    for (dims, permutation, dimension_sets) in cases {
        // y's dimension i is x's dimension permutation[i]; transposing y back lines them up.
        let y_dims: Vec<usize> = permutation.iter().map(|&p| dims[p as usize]).collect();
        let mut back = vec![0i64; dims.len()];
        permutation.iter().enumerate().for_each(|(i, &p)| back[p as usize] = i as i64);
        let count = dims.iter().product::<usize>();
        let xs = spread(count);
        let ys: Vec<f32> = (0..count).map(|i| ((i * 104_729) % 997) as f32 / 300.0 - 1.5).collect();
        let shape = |dims: &[usize]| {
            Shape::new(ElementType::F32, &dims.iter().map(|&d| d as i64).collect::<Vec<_>>())
        };
        let x = Literal::from_vec(&shape(dims), xs.clone())?;
        let y = Literal::from_vec(&shape(&y_dims), ys.clone())?;
        for &dimensions in dimension_sets {
            let b = XlaBuilder::new("reduce");
            let sum =
                add(b.parameter(0, x.shape(), "x"), transpose(b.parameter(1, y.shape(), "y"), &back), &[]);
            let sums = reduce(sum, b.constant_r0(0.0f32), &computations::sum(ElementType::F32), dimensions);
            let out = run_everywhere(&b.build(sums)?, &[&x, &y])?.to_vec::<f32>()?;
            let kept: Vec<usize> = (0..dims.len()).filter(|d| !dimensions.contains(&(*d as i64))).collect();
            let out_dims: Vec<usize> = kept.iter().map(|&d| dims[d]).collect();
            let mut want = vec![0.0f64; out.len()];
            for (i, &xv) in xs.iter().enumerate() {
                let index = unravel(i, dims);
                let y_index: Vec<usize> = permutation.iter().map(|&p| index[p as usize]).collect();
                let out_index: Vec<usize> = kept.iter().map(|&d| index[d]).collect();
                want[ravel(&out_index, &out_dims)] += f64::from(xv) + f64::from(ys[ravel(&y_index, &y_dims)]);
            }
            for (k, (&got, want)) in out.iter().zip(want).enumerate() {
                assert_near(got, want, &format!("{dims:?} {permutation:?} {dimensions:?} {k}"));
            }
        }
    }
    Ok(())
}

/// Full sums of `x·w`, `w` a row vector broadcast down `x`: the fused walk keeps rows where the
/// contiguous sum reads one long row. Rows of 1024 are whole pieces of the fold, and with 256
/// or 2048 of them the partial sums start where the contiguous sum's do: the reduce keeps its
/// producers. Rows of 1000 are not whole pieces, and 300 rows cut other partial sums: it reads
/// their result. All agree with the unfused sum bit for bit, on any number of threads.
#[test]
fn large_f32_full_sums_over_a_broadcast_row_agree_fused_and_unfused() -> Result<()> {
    for (rows, columns) in [(256usize, 1024usize), (100, 1000), (300, 1000), (300, 1024), (2048, 1024)] {
        let xs = spread(rows * columns);
        let x = Literal::from_vec(&Shape::new(ElementType::F32, &[rows as i64, columns as i64]), xs.clone())?;
        let ws: Vec<f32> = (0..columns).map(|j| (j % 7) as f32 * 0.25 - 0.5).collect();
        let w = Literal::vec1(&ws);
        let b = XlaBuilder::new("reduce");
        let weighted = mul(b.parameter(0, x.shape(), "x"), b.parameter(1, w.shape(), "w"), &[1]);
        let total = reduce(weighted, b.constant_r0(0.0f32), &computations::sum(ElementType::F32), &[0, 1]);
        let out = run_everywhere(&b.build(total)?, &[&x, &w])?.to_vec::<f32>()?;
        let want: f64 = xs.iter().enumerate().map(|(i, &v)| f64::from(v) * f64::from(ws[i % columns])).sum();
        assert_near(out[0], want, &format!("{rows}x{columns}"));
    }
    Ok(())
}

/// The row-major index of element `i` of an array of `dims`.
fn unravel(mut i: usize, dims: &[usize]) -> Vec<usize> {
    let mut index = vec![0; dims.len()];
    for (slot, &d) in index.iter_mut().zip(dims).rev() {
        *slot = i % d;
        i /= d;
    }
    index
}

/// The row-major position of `index` in an array of `dims`.
fn ravel(index: &[usize], dims: &[usize]) -> usize {
    index.iter().zip(dims).fold(0, |at, (&i, &d)| at * d + i)
}

#[test]
fn large_fused_chain_with_broadcasts_and_transpose() -> Result<()> {
    let (rows, columns) = (512i64, 384i64);
    let b = XlaBuilder::new("chain");
    let x = b.parameter(0, &shape!(s32[rows, columns]), "x");
    let t = b.parameter(1, &shape!(s32[columns, rows]), "t");
    let v = b.parameter(2, &shape!(s32[columns]), "v");
    let y = max(add(x, transpose(t, &[1, 0]), &[]), v, &[1]) * b.constant_r0(3i32);
    let computation = b.build(y)?;
    let (r, c) = (rows as usize, columns as usize);
    let xs: Vec<i32> = (0..r * c).map(|i| (i % 101) as i32).collect();
    let ts: Vec<i32> = (0..r * c).map(|i| (i % 37) as i32).collect();
    let vs: Vec<i32> = (0..c).map(|j| (j % 50) as i32 + 40).collect();
    let out = run_everywhere(
        &computation,
        &[
            &Literal::from_vec(&shape!(s32[rows, columns]), xs.clone())?,
            &Literal::from_vec(&shape!(s32[columns, rows]), ts.clone())?,
            &Literal::vec1(&vs),
        ],
    )?
    .to_vec::<i32>()?;
    for i in 0..r {
        for j in 0..c {
            let expected = (xs[i * c + j] + ts[j * r + i]).max(vs[j]) * 3;
            assert_eq!(out[i * c + j], expected, "[{i},{j}]");
        }
    }
    Ok(())
}

#[test]
fn a_chain_ten_thousand_ops_deep_compiles_into_one_loop_and_runs() -> Result<()> {
    let b = XlaBuilder::new("deep");
    let x = b.parameter(0, &shape!(s32[4]), "x");
    let mut y = x;
    for step in 0..10_000 {
        y = if step % 2 == 0 { y + b.constant_r0(3i32) } else { y - b.constant_r0(2i32) };
    }
    let computation = b.build(y)?;
    for fusion in [true, false] {
        let exe = computation.compile(&CompileOptions { fusion, ..Default::default() })?;
        let out = exe.execute(&[&Literal::vec1(&[0i32, 1, 2, 3])])?;
        assert_eq!(out.to_vec::<i32>()?, vec![5000, 5001, 5002, 5003]);
    }
    Ok(())
}
