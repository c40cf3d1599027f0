//! Output fusion (XLA's `kOutput`): a dot or convolution whose only reader is an element-wise
//! loop runs that loop over each block of its product as the block is computed. These tests
//! pin which graphs become one, and that the values are a naive loop's (and the unfused
//! executor's) for products of one block and of many, with batch dimensions, several free rhs
//! dimensions, residuals in other layouts, convolutions with strides, padding, dilations,
//! feature groups and the features first or last, an embedding lookup read through its ids,
//! and on one thread or several.

use approx::assert_relative_eq;
use lazy_xla::{
    add, conv_general_dilated, dot, dot_general, gather, max, mul, tanh, transpose, CompileOptions,
    ConvolutionDimensionNumbers, DotDimensionNumbers, ElementType, GatherDimensionNumbers, Literal, Result,
    Shape, XlaBuilder, XlaComputation, XlaOp,
};
use proptest::prelude::*;

/// The kinds of ENTRY's fusions and the opcodes of its other computing instructions.
fn entry_ops(computation: &XlaComputation) -> Result<Vec<String>> {
    let hlo = computation.compile(&CompileOptions::default())?.to_hlo_text();
    let entry = hlo.split("ENTRY ").nth(1).unwrap_or_default();
    Ok(entry
        .lines()
        .skip(1)
        .take_while(|line| !line.starts_with('}'))
        .filter_map(|line| {
            let (_, rest) = line.split_once(" = ")?;
            let opcode = rest.split_once(' ')?.1.split('(').next()?.to_string();
            let kind = line.split("kind=").nth(1).map(|k| k.split([',', ' ']).next().unwrap_or(k));
            match (opcode.as_str(), kind) {
                ("parameter", _) => None,
                ("fusion", Some(kind)) => Some(format!("fusion:{kind}")),
                _ => Some(opcode),
            }
        })
        .collect())
}

/// Values in [-1, 1) from `seed`, varied enough that a misplaced row or column shows.
fn values(count: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..count)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

fn f32_literal(dimensions: &[i64], seed: u64) -> Literal {
    let shape = Shape::new(ElementType::F32, dimensions);
    Literal::from_vec(&shape, values(shape.element_count() as usize, seed)).unwrap()
}

/// `relu(x·w + b)` over `x: [m, k]`, `w: [k, n]`, `b: [n]`.
fn dense_relu(m: i64, k: i64, n: i64) -> Result<XlaComputation> {
    let builder = XlaBuilder::new("dense_relu");
    let x = builder.parameter(0, &Shape::new(ElementType::F32, &[m, k]), "x");
    let w = builder.parameter(1, &Shape::new(ElementType::F32, &[k, n]), "w");
    let b = builder.parameter(2, &Shape::new(ElementType::F32, &[n]), "b");
    builder.build(max(add(dot(x, w), b, &[1]), builder.constant_r0(0.0f32), &[]))
}

/// Runs `computation` fused (on `threads`) and unfused; the two agree within 1e-6 relative.
/// Returns the fused result's values.
fn fused_and_unfused(computation: &XlaComputation, args: &[&Literal], threads: usize) -> Result<Vec<f32>> {
    let options = CompileOptions { num_threads: Some(threads), ..Default::default() };
    let fused = computation.compile(&options)?.execute(args)?;
    let unfused = computation.compile(&CompileOptions::unfused())?.execute(args)?;
    assert_relative_eq!(fused, unfused, epsilon = 1e-6, max_relative = 1e-6);
    fused.to_vec::<f32>()
}

#[test]
fn a_dot_with_its_bias_and_activation_is_one_output_fusion() -> Result<()> {
    assert_eq!(entry_ops(&dense_relu(300, 40, 70)?)?, ["fusion:kOutput"]);
    Ok(())
}

#[test]
fn a_lone_element_wise_reader_of_a_dot_becomes_an_output_fusion() -> Result<()> {
    let builder = XlaBuilder::new("tanh_dot");
    let x = builder.parameter(0, &Shape::new(ElementType::F32, &[64, 32]), "x");
    let w = builder.parameter(1, &Shape::new(ElementType::F32, &[32, 48]), "w");
    let computation = builder.build(tanh(dot(x, w)))?;
    assert_eq!(entry_ops(&computation)?, ["fusion:kOutput"]);
    let (xs, ws) = (f32_literal(&[64, 32], 1), f32_literal(&[32, 48], 2));
    let got = fused_and_unfused(&computation, &[&xs, &ws], 2)?;
    let expected = reference(&xs.to_vec::<f32>()?, &ws.to_vec::<f32>()?, [64, 32, 48]);
    for (g, e) in got.iter().zip(&expected) {
        assert!((f64::from(*g) - e.tanh()).abs() <= 1e-5, "{g} against {}", e.tanh());
    }
    Ok(())
}

#[test]
fn a_dot_read_twice_or_through_a_transpose_stays_a_dot() -> Result<()> {
    let builder = XlaBuilder::new("two_readers");
    let x = builder.parameter(0, &Shape::new(ElementType::F32, &[64, 32]), "x");
    let w = builder.parameter(1, &Shape::new(ElementType::F32, &[32, 64]), "w");
    let product = dot(x, w);
    // The transpose reads the product at another index than its own.
    let computation = builder.build(add(tanh(product), transpose(product, &[1, 0]), &[]))?;
    let ops = entry_ops(&computation)?;
    assert!(ops.contains(&"dot".to_string()) && !ops.contains(&"fusion:kOutput".to_string()), "{ops:?}");
    Ok(())
}

/// `x·w` by a naive loop, in f64.
fn reference(x: &[f32], w: &[f32], [m, k, n]: [usize; 3]) -> Vec<f64> {
    let mut out = vec![0.0f64; m * n];
    for i in 0..m {
        for p in 0..k {
            let a = f64::from(x[i * k + p]);
            for j in 0..n {
                out[i * n + j] += a * f64::from(w[p * n + j]);
            }
        }
    }
    out
}

/// Checks `relu(x·w + b)` of `[m, k]·[k, n]` against the naive loop, on `threads`.
fn check_dense_relu(m: usize, k: usize, n: usize, threads: usize) -> Result<()> {
    let computation = dense_relu(m as i64, k as i64, n as i64)?;
    let (x, w, b) = (
        f32_literal(&[m as i64, k as i64], 3),
        f32_literal(&[k as i64, n as i64], 4),
        f32_literal(&[n as i64], 5),
    );
    let got = fused_and_unfused(&computation, &[&x, &w, &b], threads)?;
    let product = reference(&x.to_vec::<f32>()?, &w.to_vec::<f32>()?, [m, k, n]);
    assert_bias_relu(&got, &product, &b.to_vec::<f32>()?);
    Ok(())
}

/// Asserts that `got` is `relu(product + bias)` (the bias along rows) within 1e-4 relative.
fn assert_bias_relu(got: &[f32], product: &[f64], bias: &[f32]) {
    assert_eq!(got.len(), product.len());
    for (i, (g, p)) in got.iter().zip(product).enumerate() {
        let expected = (p + f64::from(bias[i % bias.len()])).max(0.0);
        assert!(
            (f64::from(*g) - expected).abs() <= 1e-4 * (1.0 + expected.abs()),
            "element {i}: {g} against {expected}"
        );
    }
}

#[test]
fn many_blocks_of_rows_on_two_threads_hold_a_naive_loops_values() -> Result<()> {
    // 1100 rows: blocks of 256 and a short last one; 200 columns: three panels and a part.
    check_dense_relu(1100, 200, 200, 2)
}

#[test]
fn a_deep_product_on_one_thread_holds_a_naive_loops_values() -> Result<()> {
    // A depth of several blocks, a row of one vector and a part.
    check_dense_relu(513, 450, 17, 1)
}

/// `tanh(dot + r) · 2` of a batched dot with two free rhs dimensions (`[b, m, k]·[b, k, n1, n2]`)
/// and a residual `r` of the result's dimensions read transposed.
fn batched(b: i64, m: i64, k: i64, n: [i64; 2]) -> Result<XlaComputation> {
    let builder = XlaBuilder::new("batched");
    let x = builder.parameter(0, &Shape::new(ElementType::F32, &[b, m, k]), "x");
    let w = builder.parameter(1, &Shape::new(ElementType::F32, &[b, k, n[0], n[1]]), "w");
    let r = builder.parameter(2, &Shape::new(ElementType::F32, &[n[1], b, m, n[0]]), "r");
    let numbers = DotDimensionNumbers::new(&[2], &[1], &[0], &[0]);
    let product = dot_general(x, w, &numbers);
    let residual: XlaOp<'_> = transpose(r, &[1, 2, 3, 0]);
    builder.build(mul(tanh(add(product, residual, &[])), builder.constant_r0(2.0f32), &[]))
}

#[test]
fn a_batched_dot_with_two_free_rhs_dimensions_and_a_transposed_residual() -> Result<()> {
    let (b, m, k, n) = (3, 300, 20, [5, 24]);
    let computation = batched(b, m, k, n)?;
    assert_eq!(entry_ops(&computation)?, ["fusion:kOutput"]);
    let x = f32_literal(&[b, m, k], 6);
    let w = f32_literal(&[b, k, n[0], n[1]], 7);
    let r = f32_literal(&[n[1], b, m, n[0]], 8);
    let got = fused_and_unfused(&computation, &[&x, &w, &r], 2)?;
    let (xs, ws, rs) = (x.to_vec::<f32>()?, w.to_vec::<f32>()?, r.to_vec::<f32>()?);
    let [b, m, k, n0, n1] = [b, m, k, n[0], n[1]].map(|d| d as usize);
    for batch in 0..b {
        let x_batch = &xs[batch * m * k..(batch + 1) * m * k];
        let w_batch = &ws[batch * k * n0 * n1..(batch + 1) * k * n0 * n1];
        let product = reference(x_batch, w_batch, [m, k, n0 * n1]);
        for i in 0..m {
            for j0 in 0..n0 {
                for j1 in 0..n1 {
                    let residual = f64::from(rs[((j1 * b + batch) * m + i) * n0 + j0]);
                    let expected = (product[i * n0 * n1 + j0 * n1 + j1] + residual).tanh() * 2.0;
                    let g = f64::from(got[((batch * m + i) * n0 + j0) * n1 + j1]);
                    assert!((g - expected).abs() <= 1e-4, "[{batch},{i},{j0},{j1}]: {g} against {expected}");
                }
            }
        }
    }
    Ok(())
}

#[test]
fn a_dot_whose_rhs_has_no_free_dimension_holds_a_naive_loops_values() -> Result<()> {
    // The result's rows then run along the lhs: blocks of the product are not its rows.
    let builder = XlaBuilder::new("matrix_vector");
    let x = builder.parameter(0, &Shape::new(ElementType::F32, &[300, 8]), "x");
    let w = builder.parameter(1, &Shape::new(ElementType::F32, &[8]), "w");
    let product = dot_general(x, w, &DotDimensionNumbers::new(&[1], &[0], &[], &[]));
    let computation = builder.build(tanh(product))?;
    assert_eq!(entry_ops(&computation)?, ["fusion:kOutput"]);
    let (xs, ws) = (f32_literal(&[300, 8], 9), f32_literal(&[8], 10));
    let got = fused_and_unfused(&computation, &[&xs, &ws], 2)?;
    let expected = reference(&xs.to_vec::<f32>()?, &ws.to_vec::<f32>()?, [300, 8, 1]);
    for (g, e) in got.iter().zip(&expected) {
        assert!((f64::from(*g) - e.tanh()).abs() <= 1e-5, "{g} against {}", e.tanh());
    }
    Ok(())
}

/// `relu(table[ids]·w + b)` (an embedding lookup and a dense layer) over `table: [rows, k]`,
/// `ids: s32[m]`, `w: [k, n]`, `b: [n]`.
fn embedding_dense(rows: i64, m: i64, k: i64, n: i64) -> Result<XlaComputation> {
    let builder = XlaBuilder::new("embedding_dense");
    let table = builder.parameter(0, &Shape::new(ElementType::F32, &[rows, k]), "table");
    let ids = builder.parameter(1, &Shape::new(ElementType::S32, &[m]), "ids");
    let w = builder.parameter(2, &Shape::new(ElementType::F32, &[k, n]), "w");
    let b = builder.parameter(3, &Shape::new(ElementType::F32, &[n]), "b");
    let looked_up = look_up(table, ids, k);
    builder.build(max(add(dot(looked_up, w), b, &[1]), builder.constant_r0(0.0f32), &[]))
}

/// Rows `ids` (one index each) of `table` (of rows of `k`), as jax's `table[ids]` gathers them.
fn look_up<'b>(table: XlaOp<'b>, ids: XlaOp<'b>, k: i64) -> XlaOp<'b> {
    let numbers = GatherDimensionNumbers {
        offset_dims: vec![1],
        collapsed_slice_dims: vec![0],
        start_index_map: vec![0],
        index_vector_dim: 1,
        ..Default::default()
    };
    gather(table, ids, &numbers, &[1, k], false)
}

/// Ids in `-rows..2·rows` (a third out of range, clamped as XLA clamps), from `seed`.
fn random_ids(count: usize, rows: usize, seed: u64) -> Vec<i32> {
    values(count, seed).iter().map(|v| ((v + 1.0) * 1.5 * rows as f32) as i32 - rows as i32).collect()
}

/// Checks `relu(table[ids]·w + b)` against the naive loop over the clamped rows, on `threads`.
fn check_embedding_dense(rows: usize, m: usize, k: usize, n: usize, threads: usize) -> Result<()> {
    let computation = embedding_dense(rows as i64, m as i64, k as i64, n as i64)?;
    assert_eq!(entry_ops(&computation)?, ["fusion:kOutput"]);
    let table = f32_literal(&[rows as i64, k as i64], 11);
    let lookups = random_ids(m, rows, 12);
    let id_literal = Literal::from_vec(&Shape::new(ElementType::S32, &[m as i64]), lookups.clone())?;
    let (w, b) = (f32_literal(&[k as i64, n as i64], 13), f32_literal(&[n as i64], 14));
    let got = fused_and_unfused(&computation, &[&table, &id_literal, &w, &b], threads)?;
    let table_values = table.to_vec::<f32>()?;
    let gathered: Vec<f32> = lookups
        .iter()
        .flat_map(|&id| {
            let row = id.clamp(0, rows as i32 - 1) as usize;
            table_values[row * k..(row + 1) * k].to_vec()
        })
        .collect();
    let product = reference(&gathered, &w.to_vec::<f32>()?, [m, k, n]);
    assert_bias_relu(&got, &product, &b.to_vec::<f32>()?);
    Ok(())
}

#[test]
fn an_embedding_lookup_joins_its_dense_layer_and_clamps_its_ids() -> Result<()> {
    // 1100 looked-up rows on two threads: blocks of 256 and a short last one.
    check_embedding_dense(500, 1100, 96, 130, 2)
}

#[test]
fn a_lookup_with_another_reader_stays_a_gather() -> Result<()> {
    let builder = XlaBuilder::new("two_readers");
    let table = builder.parameter(0, &Shape::new(ElementType::F32, &[50, 16]), "table");
    let ids = builder.parameter(1, &Shape::new(ElementType::S32, &[40]), "ids");
    let w = builder.parameter(2, &Shape::new(ElementType::F32, &[16, 16]), "w");
    let looked_up = look_up(table, ids, 16);
    let computation = builder.build(add(tanh(dot(looked_up, w)), looked_up, &[]))?;
    let ops = entry_ops(&computation)?;
    assert!(ops.contains(&"gather".to_string()), "{ops:?}");
    let table_literal = f32_literal(&[50, 16], 15);
    let id_literal = Literal::from_vec(&Shape::new(ElementType::S32, &[40]), random_ids(40, 50, 17))?;
    fused_and_unfused(&computation, &[&table_literal, &id_literal, &f32_literal(&[16, 16], 16)], 2)?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Any shape, one thread or two: the fused dot and epilogue hold the naive loop's values.
    #[test]
    fn any_shape_holds_a_naive_loops_values(m in 1usize..700, k in 1usize..260, n in 2usize..150, threads in 1usize..3) {
        check_dense_relu(m, k, n, threads).unwrap();
    }

    /// Any table, lookup and layer, one thread or two: the product read through the clamped
    /// ids holds the naive loop's values over the looked-up rows.
    #[test]
    fn any_lookup_holds_a_naive_loops_values(
        rows in 1usize..300, m in 1usize..700, k in 1usize..200, n in 2usize..100, threads in 1usize..3,
    ) {
        check_embedding_dense(rows, m, k, n, threads).unwrap();
    }
}

/// A 2-d convolution `relu(conv(x, k) + b)` of a `[batch, h, w, features]` input by a
/// `[kh, kw, features / groups, outputs]` kernel: the output NHWC, or NCHW (features first).
#[derive(Clone, Debug)]
struct Conv2d {
    batch: usize,
    input: [usize; 2],
    features: usize,
    outputs: usize,
    kernel: [usize; 2],
    strides: [usize; 2],
    padding: [(i64, i64); 2],
    dilation: [usize; 2],
    groups: usize,
    features_first: bool,
}

impl Conv2d {
    fn numbers(&self) -> ConvolutionDimensionNumbers {
        let (feature, spatial) = if self.features_first { (1, vec![2, 3]) } else { (3, vec![1, 2]) };
        ConvolutionDimensionNumbers {
            input_batch_dimension: 0,
            input_feature_dimension: 3,
            input_spatial_dimensions: vec![1, 2],
            kernel_input_feature_dimension: 2,
            kernel_output_feature_dimension: 3,
            kernel_spatial_dimensions: vec![0, 1],
            output_batch_dimension: 0,
            output_feature_dimension: feature,
            output_spatial_dimensions: spatial,
        }
    }

    /// The output's positions along each spatial dimension.
    fn positions(&self) -> [usize; 2] {
        std::array::from_fn(|d| {
            let padded = self.input[d] as i64 + self.padding[d].0 + self.padding[d].1;
            let extent = ((self.kernel[d] - 1) * self.dilation[d] + 1) as i64;
            match padded >= extent {
                true => ((padded - extent) / self.strides[d] as i64 + 1) as usize,
                false => 0,
            }
        })
    }

    fn computation(&self) -> Result<XlaComputation> {
        let builder = XlaBuilder::new("conv_relu");
        let [h, w] = self.input.map(|d| d as i64);
        let x_shape = Shape::new(ElementType::F32, &[self.batch as i64, h, w, self.features as i64]);
        let [kh, kw] = self.kernel.map(|d| d as i64);
        let k_shape = Shape::new(
            ElementType::F32,
            &[kh, kw, (self.features / self.groups) as i64, self.outputs as i64],
        );
        let x = builder.parameter(0, &x_shape, "x");
        let k = builder.parameter(1, &k_shape, "k");
        let b = builder.parameter(2, &Shape::new(ElementType::F32, &[self.outputs as i64]), "b");
        let strides = self.strides.map(|s| s as i64);
        let dilation = self.dilation.map(|d| d as i64);
        let y = conv_general_dilated(
            x,
            k,
            &strides,
            &self.padding,
            &[],
            &dilation,
            &self.numbers(),
            self.groups as i64,
            1,
        );
        let feature = self.numbers().output_feature_dimension;
        builder.build(max(add(y, b, &[feature]), builder.constant_r0(0.0f32), &[]))
    }

    /// The result by a naive loop, in f64, in the output's row-major order.
    fn reference(&self, x: &[f32], k: &[f32], b: &[f32]) -> Vec<f64> {
        let [oh, ow] = self.positions();
        let (per_group_in, per_group_out) = (self.features / self.groups, self.outputs / self.groups);
        let mut out = Vec::new();
        let mut push = |n: usize, i: usize, j: usize, o: usize| {
            let g = o / per_group_out;
            let mut sum = f64::from(b[o]);
            for (p, q) in (0..self.kernel[0]).flat_map(|p| (0..self.kernel[1]).map(move |q| (p, q))) {
                let y = (i * self.strides[0] + p * self.dilation[0]) as i64 - self.padding[0].0;
                let z = (j * self.strides[1] + q * self.dilation[1]) as i64 - self.padding[1].0;
                if y < 0 || z < 0 || y >= self.input[0] as i64 || z >= self.input[1] as i64 {
                    continue;
                }
                for c in 0..per_group_in {
                    let input = x[((n * self.input[0] + y as usize) * self.input[1] + z as usize)
                        * self.features
                        + g * per_group_in
                        + c];
                    let weight = k[((p * self.kernel[1] + q) * per_group_in + c) * self.outputs + o];
                    sum += f64::from(input) * f64::from(weight);
                }
            }
            out.push(sum.max(0.0));
        };
        for n in 0..self.batch {
            if self.features_first {
                for o in 0..self.outputs {
                    for i in 0..oh {
                        for j in 0..ow {
                            push(n, i, j, o);
                        }
                    }
                }
            } else {
                for i in 0..oh {
                    for j in 0..ow {
                        for o in 0..self.outputs {
                            push(n, i, j, o);
                        }
                    }
                }
            }
        }
        out
    }

    /// Checks the fused result (on `threads`) against the unfused one and the naive loop.
    fn check(&self, threads: usize) -> Result<()> {
        let computation = self.computation()?;
        let [h, w] = self.input.map(|d| d as i64);
        let [kh, kw] = self.kernel.map(|d| d as i64);
        let x = f32_literal(&[self.batch as i64, h, w, self.features as i64], 6);
        let k = f32_literal(&[kh, kw, (self.features / self.groups) as i64, self.outputs as i64], 7);
        let b = f32_literal(&[self.outputs as i64], 8);
        let got = fused_and_unfused(&computation, &[&x, &k, &b], threads)?;
        let expected = self.reference(&x.to_vec::<f32>()?, &k.to_vec::<f32>()?, &b.to_vec::<f32>()?);
        assert_eq!(got.len(), expected.len(), "{self:?}");
        for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
            assert!(
                (f64::from(*g) - e).abs() <= 1e-4 * (1.0 + e.abs()),
                "{self:?} element {i}: {g} against {e}"
            );
        }
        Ok(())
    }
}

/// A 3×3 NHWC convolution of `features → outputs` with padding 1, as a CNN's layer.
fn same_conv(batch: usize, size: usize, features: usize, outputs: usize) -> Conv2d {
    Conv2d {
        batch,
        input: [size, size],
        features,
        outputs,
        kernel: [3, 3],
        strides: [1, 1],
        padding: [(1, 1), (1, 1)],
        dilation: [1, 1],
        groups: 1,
        features_first: false,
    }
}

#[test]
fn a_convolution_with_its_bias_and_activation_is_one_output_fusion() -> Result<()> {
    assert_eq!(entry_ops(&same_conv(2, 8, 3, 16).computation()?)?, ["fusion:kOutput"]);
    Ok(())
}

#[test]
fn a_cnn_layer_in_blocks_of_lines_on_two_threads_holds_a_naive_loops_values() -> Result<()> {
    // 30 lines of 30 positions: blocks of several lines over a padded input, a last block short.
    same_conv(3, 30, 8, 32).check(2)?;
    same_conv(2, 17, 3, 40).check(2)?;
    same_conv(1, 5, 4, 16).check(1)
}

#[test]
fn strided_dilated_grouped_and_features_first_convolutions_hold_a_naive_loops_values() -> Result<()> {
    let base = same_conv(2, 19, 8, 24);
    Conv2d { strides: [2, 3], padding: [(0, 2), (1, 0)], ..base.clone() }.check(2)?;
    Conv2d { dilation: [2, 1], kernel: [3, 2], ..base.clone() }.check(2)?;
    Conv2d { groups: 2, ..base.clone() }.check(2)?;
    Conv2d { features_first: true, ..base.clone() }.check(2)?;
    Conv2d { input: [1, 40], kernel: [1, 5], padding: [(0, 0), (2, 2)], ..base }.check(2)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Any small NHWC or NCHW convolution, one thread or two.
    #[test]
    fn any_convolution_holds_a_naive_loops_values(
        batch in 1usize..4,
        input in [1usize..24, 1usize..24],
        features in 1usize..9,
        outputs in 1usize..40,
        kernel in [1usize..4, 1usize..4],
        strides in [1usize..3, 1usize..3],
        padding in [(0i64..3, 0i64..3), (0i64..3, 0i64..3)],
        features_first in any::<bool>(),
        threads in 1usize..3,
    ) {
        let conv = Conv2d {
            batch, input, features, outputs, kernel, strides,
            padding, dilation: [1, 1], groups: 1, features_first,
        };
        prop_assume!(conv.positions().iter().all(|&p| p > 0));
        conv.check(threads).unwrap();
    }
}
