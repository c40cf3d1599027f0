//! Indexing, windows and convolution against XLA itself (jaxlib 0.6.0): values taken from its
//! CPU backend (`tests/data/xla_indexing_goldens.json`), its HLO text, and its sentences.

use lazy_xla::*;
use serde_json::Value as Json;

/// A scalar `(T, T) -> U` computation.
fn scalar_fn(name: &str, f: for<'b> fn(XlaOp<'b>, XlaOp<'b>) -> XlaOp<'b>) -> XlaComputation {
    let b = XlaBuilder::new(name);
    let (x, y) = (b.parameter(0, &shape!(f32[]), "x"), b.parameter(1, &shape!(f32[]), "y"));
    b.build(f(x, y)).unwrap()
}

fn add_fn() -> XlaComputation {
    scalar_fn("add", |x, y| add(x, y, &[]))
}

/// Runs `root` fused and unfused (equal results) and returns the f32 values.
fn run(b: &XlaBuilder, root: XlaOp<'_>, args: &[&Literal]) -> Vec<f32> {
    let computation = b.build(root).unwrap();
    let fused = computation.compile(&CompileOptions::default()).unwrap().execute(args).unwrap();
    let unfused = computation.compile(&CompileOptions::unfused()).unwrap().execute(args).unwrap();
    assert_eq!(fused, unfused);
    fused.to_vec::<f32>().unwrap()
}

fn golden(name: &str) -> Vec<f32> {
    let all: Json = serde_json::from_str(include_str!("data/xla_indexing_goldens.json")).unwrap();
    all[name].as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect()
}

/// `n` values `(7·i mod m) − offset`, the inputs the goldens were computed from.
fn values(shape: &Shape, m: i64, offset: i64) -> Literal {
    let n = shape.element_count();
    Literal::from_vec(shape, (0..n).map(|i| ((i * 7) % m - offset) as f32).collect()).unwrap()
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

fn nchw() -> ConvolutionDimensionNumbers {
    ConvolutionDimensionNumbers {
        input_batch_dimension: 0,
        input_feature_dimension: 1,
        input_spatial_dimensions: vec![2, 3],
        kernel_input_feature_dimension: 1,
        kernel_output_feature_dimension: 0,
        kernel_spatial_dimensions: vec![2, 3],
        output_batch_dimension: 0,
        output_feature_dimension: 1,
        output_spatial_dimensions: vec![2, 3],
    }
}

#[test]
fn convolution_with_feature_groups_dilations_and_negative_padding_is_xlas() {
    let x = values(&shape!(f32[2, 5, 5, 4]), 11, 5);
    let k = Literal::from_vec(&shape!(f32[3, 3, 2, 6]), (0..108).map(|i| ((i * 5) % 7 - 3) as f32).collect())
        .unwrap();
    // In any layout of the operands.
    for (xl, kl) in [([3, 2, 1, 0], [3, 2, 1, 0]), ([0, 1, 2, 3], [1, 3, 0, 2])] {
        let b = XlaBuilder::new("conv");
        let lhs = b.parameter(0, &Shape::with_layout(ElementType::F32, &[2, 5, 5, 4], &xl).unwrap(), "x");
        let rhs = b.parameter(1, &Shape::with_layout(ElementType::F32, &[3, 3, 2, 6], &kl).unwrap(), "k");
        let y = conv_general_dilated(lhs, rhs, &[2, 1], &[(1, 1), (0, -1)], &[1, 2], &[2, 1], &nhwc(), 2, 1);
        assert_eq!(b.get_shape(y).unwrap(), shape!(f32[2, 2, 6, 6]));
        let args = [&x.relayout(&Layout::new(&xl)).unwrap(), &k.relayout(&Layout::new(&kl)).unwrap()];
        assert_eq!(run(&b, y, &args), golden("conv_groups"));
    }
}

#[test]
fn convolution_with_batch_groups_is_xlas() {
    let b = XlaBuilder::new("conv");
    let lhs = b.parameter(0, &shape!(f32[4, 2, 4, 4]), "x");
    let rhs = b.parameter(1, &shape!(f32[4, 2, 2, 2]), "k");
    let y = conv_general_dilated(lhs, rhs, &[1, 1], &[], &[], &[], &nchw(), 1, 2);
    assert_eq!(b.get_shape(y).unwrap(), shape!(f32[2, 4, 3, 3]));
    let x = values(&shape!(f32[4, 2, 4, 4]), 13, 6);
    let k = Literal::from_vec(&shape!(f32[4, 2, 2, 2]), (0..32).map(|i| ((i * 3) % 5 - 2) as f32).collect())
        .unwrap();
    assert_eq!(run(&b, y, &[&x, &k]), golden("conv_batch_groups"));
}

#[test]
fn select_and_scatter_never_selects_padding_ge_first_gt_last() {
    for (name, select) in
        [("ge", scalar_fn("ge", |x, y| ge(x, y, &[]))), ("gt", scalar_fn("gt", |x, y| gt(x, y, &[])))]
    {
        let b = XlaBuilder::new("select_and_scatter");
        let x = b.parameter(0, &shape!(f32[8]), "x");
        let source = b.parameter(1, &shape!(f32[4]), "source");
        let y = select_and_scatter_with_general_padding(
            x,
            &select,
            &[3],
            &[2],
            &[(1, 0)],
            source,
            b.constant_r0(0.0f32),
            &add_fn(),
        );
        let xs = Literal::vec1(&[1.0f32, 3.0, 3.0, 1.0, 2.0, 2.0, 0.0, 2.0]);
        let sources = Literal::vec1(&[1.0f32, 10.0, 100.0, 1000.0]);
        assert_eq!(run(&b, y, &[&xs, &sources]), golden(&format!("select_and_scatter_{name}")), "{name}");
    }
}

#[test]
fn gather_clamps_unsigned_indices_as_unsigned() {
    let rows = GatherDimensionNumbers {
        offset_dims: vec![1],
        collapsed_slice_dims: vec![0],
        start_index_map: vec![0],
        index_vector_dim: 1,
        ..Default::default()
    };
    let b = XlaBuilder::new("gather");
    let x = b.parameter(0, &shape!(f32[5, 2]), "x");
    let i = b.parameter(1, &shape!(u32[3]), "i");
    let y = gather(x, i, &rows, &[1, 2], false);
    let indices = Literal::vec1(&[u32::MAX, 3, 1 << 31]);
    assert_eq!(run(&b, y, &[&values(&shape!(f32[5, 2]), 9, 0), &indices]), golden("gather_u32"));
}

#[test]
fn gather_of_windows_clamps_each_start() {
    let windows = GatherDimensionNumbers {
        offset_dims: vec![1, 2],
        start_index_map: vec![0, 1],
        index_vector_dim: 1,
        ..Default::default()
    };
    let b = XlaBuilder::new("gather");
    let x = b.parameter(0, &shape!(f32[5, 4]{0, 1}), "x");
    let i = b.parameter(1, &shape!(s32[3, 2]), "i");
    let y = gather(x, i, &windows, &[2, 3], false);
    assert_eq!(b.get_shape(y).unwrap(), shape!(f32[3, 2, 3]));
    let xs = values(&shape!(f32[5, 4]), 17, 3).relayout(&Layout::new(&[0, 1])).unwrap();
    let indices = Literal::from_vec(&shape!(s32[3, 2]), vec![-1, 3, 4, 0, 2, 1]).unwrap();
    assert_eq!(run(&b, y, &[&xs, &indices]), golden("gather_2d"));
}

#[test]
fn scatter_skips_windows_out_of_bounds_whole() {
    let numbers = ScatterDimensionNumbers {
        update_window_dims: vec![1],
        inserted_window_dims: vec![0],
        scatter_dims_to_operand_dims: vec![0, 1],
        index_vector_dim: 1,
        ..Default::default()
    };
    let b = XlaBuilder::new("scatter");
    let x = b.parameter(0, &shape!(f32[3, 4]), "x");
    let i = b.parameter(1, &shape!(s32[5, 2]), "i");
    let u = b.parameter(2, &shape!(f32[5, 2]), "u");
    let y = scatter(x, i, u, &add_fn(), &numbers, false, false);
    let indices = Literal::from_vec(&shape!(s32[5, 2]), vec![0, 0, 1, 3, 2, 2, 1, -1, 0, 1]).unwrap();
    let updates = Literal::from_vec(&shape!(f32[5, 2]), (1..=10).map(|v| v as f32).collect()).unwrap();
    let zeros = Literal::zeros(&shape!(f32[3, 4])).unwrap();
    assert_eq!(run(&b, y, &[&zeros, &indices, &updates]), golden("scatter_oob"));
}

#[test]
fn reduce_window_with_padding_strides_and_both_dilations_is_xlas() {
    let x = Literal::from_vec(&shape!(f32[4, 5]), (0..20).map(|i| (i % 3 + 1) as f32).collect()).unwrap();
    let mul = scalar_fn("mul", |x, y| mul(x, y, &[]));
    // A native reducer (add) and an interpreted one (mul has an identity, but is not vectorized).
    for (name, reducer, init) in [("mul", mul, 1.0f32), ("add", add_fn(), 0.0)] {
        let b = XlaBuilder::new("reduce_window");
        let p = b.parameter(0, &shape!(f32[4, 5]{0, 1}), "x");
        let y = reduce_window_with_general_padding(
            p,
            b.constant_r0(init),
            &reducer,
            &[2, 3],
            &[2, 1],
            &[2, 1],
            &[1, 2],
            &[(1, 2), (2, -1)],
        );
        assert_eq!(b.get_shape(y).unwrap(), shape!(f32[5, 2]));
        assert_eq!(
            run(&b, y, &[&x.relayout(&Layout::new(&[0, 1])).unwrap()]),
            golden(&format!("reduce_window_{name}")),
            "{name}"
        );
    }
}

#[test]
fn result_layouts_are_xlas() {
    let b = XlaBuilder::new("layouts");
    let x = b.parameter(0, &shape!(f32[3, 3]{0, 1}), "x");
    let i = b.parameter(1, &shape!(s32[]), "i");
    let rows = b.parameter(2, &shape!(s32[2]), "rows");
    let numbers = GatherDimensionNumbers {
        offset_dims: vec![1],
        collapsed_slice_dims: vec![0],
        start_index_map: vec![0],
        index_vector_dim: 1,
        ..Default::default()
    };
    let max = scalar_fn("max", |x, y| max(x, y, &[]));
    assert_eq!(b.get_shape(gather(x, rows, &numbers, &[1, 3], false)).unwrap(), shape!(f32[2, 3]));
    assert_eq!(b.get_shape(dynamic_slice(x, &[i, i], &[2, 2])).unwrap(), shape!(f32[2, 2]));
    let pooled = reduce_window(x, b.constant_r0(0.0f32), &max, &[2, 2], &[1, 1], Padding::Valid);
    assert_eq!(b.get_shape(pooled).unwrap(), shape!(f32[2, 2]));
    let update = b.constant_literal(&Literal::zeros(&shape!(f32[1, 1])).unwrap());
    assert_eq!(b.get_shape(dynamic_update_slice(x, update, &[i, i])).unwrap(), shape!(f32[3, 3]{0, 1}));
    let ge = scalar_fn("ge", |x, y| ge(x, y, &[]));
    let source = b.constant_literal(&Literal::zeros(&shape!(f32[2, 2])).unwrap());
    let grad = select_and_scatter(
        x,
        &ge,
        &[2, 2],
        &[1, 1],
        Padding::Valid,
        source,
        b.constant_r0(0.0f32),
        &add_fn(),
    );
    assert_eq!(b.get_shape(grad).unwrap(), shape!(f32[3, 3]{0, 1}));
}

#[test]
fn hlo_text_is_jaxlibs() {
    let b = XlaBuilder::new("g");
    let x = b.parameter(0, &shape!(f32[3, 3]), "parameter");
    let i = b.parameter(1, &shape!(s32[2]), "parameter");
    let numbers = GatherDimensionNumbers {
        offset_dims: vec![1],
        collapsed_slice_dims: vec![0],
        start_index_map: vec![0],
        index_vector_dim: 1,
        ..Default::default()
    };
    let g = gather(x, i, &numbers, &[1, 3], true);
    let u = b.parameter(2, &shape!(f32[2, 3]), "parameter");
    let scatter_numbers = ScatterDimensionNumbers {
        update_window_dims: vec![1],
        inserted_window_dims: vec![0],
        scatter_dims_to_operand_dims: vec![0],
        index_vector_dim: 1,
        ..Default::default()
    };
    let s = scatter(x, i, u, &add_fn(), &scatter_numbers, true, true);
    let i0 = b.parameter(3, &shape!(s32[]), "parameter");
    let d = dynamic_slice(x, &[i0, i0], &[2, 2]);
    let dus = dynamic_update_slice(x, d, &[i0, i0]);
    let rw = reduce_window_with_general_padding(
        x,
        b.constant_r0(0.0f32),
        &add_fn(),
        &[2, 2],
        &[2, 1],
        &[1, 1],
        &[1, 2],
        &[(1, 1), (0, 1)],
    );
    let ge = scalar_fn("ge", |x, y| ge(x, y, &[]));
    let ones = broadcast(b.constant_r0(1.0f32), &[2, 2]);
    let sas = select_and_scatter_with_general_padding(
        x,
        &ge,
        &[2, 2],
        &[1, 1],
        &[(0, 0), (0, 0)],
        ones,
        b.constant_r0(0.0f32),
        &add_fn(),
    );
    let image = reshape(x, &[1, 1, 3, 3]);
    let k = broadcast(b.constant_r0(1.0f32), &[1, 1, 2, 2]);
    let cv = conv(image, k, &[1, 1], Padding::Same);
    let x2 = b.parameter(4, &shape!(f32[2, 5, 5, 4]), "parameter");
    let k2 = b.parameter(5, &shape!(f32[3, 3, 2, 6]), "parameter");
    let cv2 = conv_general_dilated(x2, k2, &[2, 1], &[(1, 1), (0, -1)], &[1, 2], &[2, 1], &nhwc(), 2, 1);
    let text = b.build(tuple(&b, &[g, s, d, dus, rw, sas, cv, cv2])).unwrap().to_hlo_text();
    let body = |line: &str| line.split_once(" = ").map(|(_, rest)| rest.to_string());
    // jaxlib 0.6.0's lines for the same ops (operand names aside).
    let want = [
        "f32[2,3]{1,0} gather(#, #), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}, indices_are_sorted=true",
        "f32[3,3]{1,0} scatter(#, #, #), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, indices_are_sorted=true, unique_indices=true, to_apply=#",
        "f32[2,2]{1,0} dynamic-slice(#, #, #), dynamic_slice_sizes={2,2}",
        "f32[3,3]{1,0} dynamic-update-slice(#, #, #, #)",
        "f32[2,2]{1,0} reduce-window(#, #), window={size=2x2 stride=2x1 pad=1_1x0_1 rhs_dilate=1x2}, to_apply=#",
        "f32[3,3]{1,0} select-and-scatter(#, #, #), window={size=2x2}, select=#, scatter=#",
        "f32[1,1,3,3]{3,2,1,0} convolution(#, #), window={size=2x2 pad=0_1x0_1}, dim_labels=bf01_oi01->bf01",
        "f32[2,2,6,6]{3,2,1,0} convolution(#, #), window={size=3x3 stride=2x1 pad=1_1x0_-1 lhs_dilate=1x2 rhs_dilate=2x1}, dim_labels=b01f_01io->b01f, feature_group_count=2",
    ];
    let names = without_names();
    for line in want {
        let found = text.lines().filter_map(body).map(&names).any(|l| l == line);
        assert!(found, "missing {line:?} in\n{text}");
    }
}

/// Replaces every `name.N` operand or computation reference with `#`.
fn without_names() -> impl Fn(String) -> String {
    |line: String| {
        let mut out = String::new();
        let mut word = String::new();
        let flush = |word: &mut String, out: &mut String| {
            let is_ref = word.rsplit_once('.').is_some_and(|(base, id)| {
                !base.is_empty() && !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())
            });
            out.push_str(if is_ref { "#" } else { word });
            word.clear();
        };
        for c in line.chars() {
            if c.is_alphanumeric() || c == '.' || c == '_' || c == '-' {
                word.push(c);
            } else {
                flush(&mut word, &mut out);
                out.push(c);
            }
        }
        flush(&mut word, &mut out);
        out
    }
}

/// The first sentence of the error that building `f`'s root gives.
fn error_of(f: impl for<'b> FnOnce(&'b XlaBuilder) -> XlaOp<'b>) -> String {
    let b = XlaBuilder::new("bad");
    let root = f(&b);
    b.build(root).expect_err("rejected").to_string()
}

#[test]
fn rejections_carry_xlas_sentences() {
    fn f32s<'b>(b: &'b XlaBuilder, n: i64, dims: &[i64]) -> XlaOp<'b> {
        b.parameter(n, &Shape::new(ElementType::F32, dims), "p")
    }
    fn s32s<'b>(b: &'b XlaBuilder, n: i64, dims: &[i64]) -> XlaOp<'b> {
        b.parameter(n, &Shape::new(ElementType::S32, dims), "i")
    }
    let cases: Vec<(String, &str)> = vec![
        (
            error_of(|b| {
                let numbers = GatherDimensionNumbers {
                    offset_dims: vec![2],
                    collapsed_slice_dims: vec![1],
                    start_index_map: vec![1],
                    index_vector_dim: 2,
                    ..Default::default()
                };
                gather(f32s(b, 0, &[4, 3, 5]), s32s(b, 1, &[4, 2]), &numbers, &[1, 1, 5], false)
            }),
            "All components of the offset index in a gather op must either be a offset dimension or explicitly collapsed or explicitly batched; got len(slice_sizes)=3, output_slice_sizes=2, collapsed_slice_dims=1, operand_batching_dims=.",
        ),
        (
            error_of(|b| {
                let numbers = GatherDimensionNumbers { offset_dims: vec![1], collapsed_slice_dims: vec![0], start_index_map: vec![0], index_vector_dim: 3, ..Default::default() };
                gather(f32s(b, 0, &[3, 3]), s32s(b, 1, &[2]), &numbers, &[1, 3], false)
            }),
            "Gather index leaf dimension must be within [0, rank(start_indices) + 1). rank(start_indices) is 1 and gather index leaf dimension is 3.",
        ),
        (
            error_of(|b| {
                let numbers = GatherDimensionNumbers { offset_dims: vec![1], collapsed_slice_dims: vec![0], start_index_map: vec![0], index_vector_dim: 1, ..Default::default() };
                gather(f32s(b, 0, &[3, 3]), f32s(b, 1, &[2]), &numbers, &[1, 3], false)
            }),
            "Gather indices parameter must be an integral tensor; got f32[2].",
        ),
        (
            error_of(|b| {
                let numbers = ScatterDimensionNumbers { update_window_dims: vec![2], inserted_window_dims: vec![1], scatter_dims_to_operand_dims: vec![1], index_vector_dim: 2, ..Default::default() };
                scatter(f32s(b, 0, &[4, 3, 5]), s32s(b, 1, &[4, 2]), f32s(b, 2, &[4, 2, 5]), &add_fn(), &numbers, false, false)
            }),
            "Scatter op has window of size 2; doesn't match operand of rank 3.",
        ),
        (
            error_of(|b| {
                let numbers = ScatterDimensionNumbers { update_window_dims: vec![1], inserted_window_dims: vec![0], scatter_dims_to_operand_dims: vec![0], index_vector_dim: 1, ..Default::default() };
                scatter(f32s(b, 0, &[3, 3]), s32s(b, 1, &[2]), f32s(b, 2, &[2, 3, 1]), &add_fn(), &numbers, false, false)
            }),
            "Updates tensor must be of rank 2; got 3.",
        ),
        (error_of(|b| dynamic_slice(f32s(b, 0, &[3, 3]), &[s32s(b, 1, &[])], &[2, 2])), "Dynamic slice start number of dimensions 1 must match rank 2 of slice input (f32[3,3])."),
        (error_of(|b| { let i = s32s(b, 1, &[]); dynamic_slice(f32s(b, 0, &[3, 3]), &[i, i], &[2, 4]) }), "Slice dim size 4 greater than dynamic slice dimension: 3."),
        (
            error_of(|b| {
                let (i, j) = (s32s(b, 1, &[]), b.parameter(2, &shape!(s64[]), "j"));
                dynamic_slice(f32s(b, 0, &[3, 3]), &[i, j], &[2, 2])
            }),
            "Dynamic slice start indices must all have the same shape, got mismatching indices with shapes s32[] and s64[].",
        ),
        (
            error_of(|b| dynamic_update_slice(f32s(b, 0, &[3]), s32s(b, 1, &[2]), &[s32s(b, 2, &[])])),
            "Dynamic update slice update element type does not match argument. operand.element_type: F32 vs update.element_type: S32.",
        ),
        (error_of(|b| dynamic_update_slice(f32s(b, 0, &[3]), f32s(b, 1, &[4]), &[s32s(b, 2, &[])])), "Update dim size 4 greater than dynamic slice dimension: 3."),
        (
            error_of(|b| reduce_window_with_general_padding(f32s(b, 0, &[3]), b.constant_r0(0.0f32), &add_fn(), &[2], &[0], &[], &[], &[(0, 0)])),
            "Window dimensions {\n  size: 2\n  window_dilation: 1\n  base_dilation: 1\n}\n has a non-positive stride.",
        ),
        (
            error_of(|b| reduce_window_with_general_padding(f32s(b, 0, &[3]), b.constant_r0(0.0f32), &add_fn(), &[2], &[1, 1], &[], &[], &[(0, 0)])),
            "Window has different number of window dimensions than of window strides\nNumber of window dimensions: 1\nNumber of window strides: 2\n",
        ),
        (
            error_of(|b| reduce_window_with_general_padding(f32s(b, 0, &[3]), b.constant_r0(0.0f32), &add_fn(), &[2, 2], &[], &[], &[], &[])),
            "Window has dimension 2 but base shape has dimension 1.",
        ),
        (
            error_of(|b| reduce_window(f32s(b, 0, &[3, 3]), b.constant_r0(0.0f32), &add_fn(), &[2, 2], &[1], Padding::Same)),
            "Want input dimensions size 2 = window dimensions size 2 = window strides size 1",
        ),
        (
            error_of(|b| {
                let ge = scalar_fn("ge", |x, y| ge(x, y, &[]));
                select_and_scatter(f32s(b, 0, &[3]), &ge, &[2], &[], Padding::Valid, f32s(b, 1, &[2]), b.constant_r0(0.0f32), &add_fn())
            }),
            "Want input dimensions size 1 = window dimensions size 1 = window strides size 0",
        ),
        (
            error_of(|b| {
                let ge = scalar_fn("ge", |x, y| ge(x, y, &[]));
                select_and_scatter_with_general_padding(f32s(b, 0, &[4]), &ge, &[2], &[1], &[(0, 0)], f32s(b, 1, &[2]), b.constant_r0(0.0f32), &add_fn())
            }),
            "Source shape does not match the shape of window-reduced operand: source(f32[2]), window-reduced operand(f32[3]).",
        ),
        (
            error_of(|b| conv_general_dilated(f32s(b, 0, &[1, 3, 5, 5]), f32s(b, 1, &[2, 2, 3, 3]), &[1, 1], &[], &[], &[], &nchw(), 1, 1)),
            "Expected LHS feature dimension (value 3) to be a multiple of feature_group_count (value 1), and LHS feature dimension / feature_group_count = RHS feature dimension (value 2); got <conv>(f32[1,3,5,5], f32[2,2,3,3])\nDimension numbers: {kernel_input_feature_dimension: 1\nkernel_spatial_dimensions: 2\nkernel_spatial_dimensions: 3\ninput_feature_dimension: 1\noutput_feature_dimension: 1\ninput_spatial_dimensions: 2\ninput_spatial_dimensions: 3\noutput_spatial_dimensions: 2\noutput_spatial_dimensions: 3\n}.",
        ),
        (
            error_of(|b| conv_general_dilated(f32s(b, 0, &[1, 3, 5, 5]), f32s(b, 1, &[2, 3, 3, 3]), &[1, 1, 1], &[], &[], &[], &nchw(), 1, 1)),
            "Window has different number of window dimensions than of window strides\nNumber of window dimensions: 2\nNumber of window strides: 3\n",
        ),
        (
            error_of(|b| conv_general_dilated(f32s(b, 0, &[1, 3, 5]), f32s(b, 1, &[2, 3, 3, 3]), &[1, 1], &[], &[], &[], &nchw(), 1, 1)),
            "Convolution arguments must have same number of dimensions. Got: f32[1,3,5] and f32[2,3,3,3]",
        ),
        (
            error_of(|b| conv_general_dilated(f32s(b, 0, &[2, 4, 5, 5]), f32s(b, 1, &[2, 2, 3, 3]), &[1, 1], &[], &[], &[], &nchw(), 2, 2)),
            "both batch_group_count 2 and feature_group_count 2 cannot be greater than 1",
        ),
        // Where XLA's builder aborts the process, lazy-xla returns an error.
        (
            error_of(|b| reduce_window_with_general_padding(f32s(b, 0, &[3]), b.constant_r0(0.0f32), &add_fn(), &[2], &[1], &[], &[], &[(-3, -3)])),
            "Window dimensions {\n  size: 2\n  stride: 1\n  padding_low: -3\n  padding_high: -3\n  window_dilation: 1\n  base_dilation: 1\n}\n pads the base dimension of size 3 to a negative size -3.",
        ),
        (
            error_of(|b| reduce_window(f32s(b, 0, &[3]), b.constant_r0(0.0f32), &add_fn(), &[2], &[0], Padding::Same)),
            "Window dimensions {\n  size: 2\n  window_dilation: 1\n  base_dilation: 1\n}\n has a non-positive stride.",
        ),
    ];
    for (error, sentence) in cases {
        assert!(error.starts_with(sentence), "{error:?}\n  does not start with\n{sentence:?}");
    }
}

#[test]
fn a_huge_window_over_a_small_operand_costs_what_the_operand_holds() {
    let b = XlaBuilder::new("huge");
    let x = b.constant_r1(&[1.0f32, 2.0, 3.0]);
    let huge = 1i64 << 40;
    let y = reduce_window_with_general_padding(
        x,
        b.constant_r0(0.0f32),
        &add_fn(),
        &[huge],
        &[huge],
        &[],
        &[],
        &[(huge, huge)],
    );
    assert_eq!(b.get_shape(y).unwrap(), shape!(f32[2]));
    assert_eq!(run(&b, y, &[]), vec![0.0, 6.0]);
}

#[test]
fn integer_and_half_convolutions_compute_the_same_sums() {
    let x = values(&shape!(f32[2, 5, 5, 4]), 11, 5);
    let k = Literal::from_vec(&shape!(f32[3, 3, 2, 6]), (0..108).map(|i| ((i * 5) % 7 - 3) as f32).collect())
        .unwrap();
    for element_type in [ElementType::S32, ElementType::S64, ElementType::F64, ElementType::Bf16] {
        let b = XlaBuilder::new("conv");
        let lhs = convert_element_type(b.parameter(0, &shape!(f32[2, 5, 5, 4]), "x"), element_type);
        let rhs = convert_element_type(b.parameter(1, &shape!(f32[3, 3, 2, 6]), "k"), element_type);
        let y = conv_general_dilated(lhs, rhs, &[2, 1], &[(1, 1), (0, -1)], &[1, 2], &[2, 1], &nhwc(), 2, 1);
        let back = convert_element_type(y, ElementType::F32);
        // Every sum is a small integer: exact in every type (bf16 holds integers below 256).
        let want = golden("conv_groups");
        let got = run(&b, back, &[&x, &k]);
        match element_type {
            ElementType::Bf16 => {
                assert!(got.iter().zip(&want).all(|(g, w)| w.abs() > 256.0 || g == w), "{element_type}")
            }
            _ => assert_eq!(got, want, "{element_type}"),
        }
    }
}

#[test]
fn the_optimizer_keeps_the_new_ops_out_of_loop_fusions() {
    let b = XlaBuilder::new("fusion");
    let x = b.parameter(0, &shape!(f32[3, 3]), "x");
    let i = b.parameter(1, &shape!(s32[2]), "i");
    let numbers = GatherDimensionNumbers {
        offset_dims: vec![1],
        collapsed_slice_dims: vec![0],
        start_index_map: vec![0],
        index_vector_dim: 1,
        ..Default::default()
    };
    let doubled = exp(x) * b.constant_r0(2.0f32);
    let rows = gather(doubled, i, &numbers, &[1, 3], false);
    let pooled = reduce_window(
        rows + b.constant_r0(1.0f32),
        b.constant_r0(0.0f32),
        &add_fn(),
        &[1, 2],
        &[1, 1],
        Padding::Valid,
    );
    let computation = b.build(pooled).unwrap();
    let exe = computation.compile(&CompileOptions::default()).unwrap();
    let text = exe.to_hlo_text();
    let entry = text.split("ENTRY").nth(1).unwrap();
    assert!(entry.contains(" gather(fusion"), "the gather reads the fused producer:\n{text}");
    assert!(entry.contains(" reduce-window(fusion"), "the reduce window reads the fused consumer:\n{text}");
    let args = [&values(&shape!(f32[3, 3]), 5, 2), &Literal::vec1(&[2i32, 0])];
    let fused = exe.execute(&args).unwrap();
    let unfused = computation.compile(&CompileOptions::unfused()).unwrap().execute(&args).unwrap();
    assert_eq!(fused, unfused);
}

#[test]
fn scatter_runs_any_update_computation_in_the_updates_order() {
    let numbers = ScatterDimensionNumbers {
        update_window_dims: vec![],
        inserted_window_dims: vec![0],
        scatter_dims_to_operand_dims: vec![0],
        index_vector_dim: 1,
        ..Default::default()
    };
    let scatter_with = |computation: &XlaComputation| {
        let b = XlaBuilder::new("scatter");
        let x = b.constant_r1(&[1.0f32, 2.0, 3.0, 4.0]);
        let i = b.constant_r1(&[1i32, 3, 1, -1]);
        let u = b.constant_r1(&[5.0f32, 6.0, 7.0, 8.0]);
        run(&b, scatter(x, i, u, computation, &numbers, false, false), &[])
    };
    // Overwrite (interpreted): the last update of an element wins; -1 is out of bounds.
    assert_eq!(scatter_with(&scalar_fn("second", |_, y| y)), vec![1.0, 7.0, 3.0, 6.0]);
    // max natively and as a select (interpreted) agree.
    let native = scatter_with(&scalar_fn("max", |x, y| max(x, y, &[])));
    assert_eq!(native, vec![1.0, 7.0, 3.0, 6.0]);
    assert_eq!(scatter_with(&scalar_fn("max_select", |x, y| select(gt(x, y, &[]), x, y))), native);
    // A non-commutative combination, folded in order: ((2 - 5) - 7).
    assert_eq!(scatter_with(&scalar_fn("sub", |x, y| sub(x, y, &[]))), vec![1.0, -10.0, 3.0, -2.0]);
}

#[test]
fn batching_dimensions_pair_operand_rows_with_index_rows() {
    // x[b, i[b]] for each row b (take_along_axis), and the scatter that adds back there.
    let x = Literal::from_vec(&shape!(f32[2, 3]), vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    let columns = Literal::vec1(&[2i32, 0]);
    let b = XlaBuilder::new("take_along_axis");
    let p = b.parameter(0, &shape!(f32[2, 3]{0, 1}), "x");
    let i = b.parameter(1, &shape!(s32[2]), "i");
    let numbers = GatherDimensionNumbers {
        offset_dims: vec![],
        collapsed_slice_dims: vec![1],
        start_index_map: vec![1],
        index_vector_dim: 1,
        operand_batching_dims: vec![0],
        start_indices_batching_dims: vec![0],
    };
    let taken = gather(p, i, &numbers, &[1, 1], false);
    assert_eq!(b.get_shape(taken).unwrap(), shape!(f32[2]));
    let relaid = x.relayout(&Layout::new(&[0, 1])).unwrap();
    assert_eq!(run(&b, taken, &[&relaid, &columns]), vec![2.0, 3.0]);

    let b = XlaBuilder::new("put_along_axis");
    let p = b.parameter(0, &shape!(f32[2, 3]{0, 1}), "x");
    let i = b.parameter(1, &shape!(s32[2]), "i");
    let numbers = ScatterDimensionNumbers {
        update_window_dims: vec![],
        inserted_window_dims: vec![1],
        scatter_dims_to_operand_dims: vec![1],
        index_vector_dim: 1,
        input_batching_dims: vec![0],
        scatter_indices_batching_dims: vec![0],
    };
    let y = scatter(p, i, b.constant_r1(&[10.0f32, 20.0]), &add_fn(), &numbers, false, false);
    assert_eq!(run(&b, y, &[&relaid, &columns]), vec![0.0, 1.0, 12.0, 23.0, 4.0, 5.0]);
    let text = b.build(y).unwrap().to_hlo_text();
    assert!(
        text.contains("input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=1"),
        "{text}"
    );
}
