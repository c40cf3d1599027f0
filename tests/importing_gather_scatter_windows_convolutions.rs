//! The ops added beside the importer print and import back to a computation that prints the
//! same text and computes the same values: gather, scatter, dynamic slices, reduce_window,
//! select_and_scatter, convolutions (groups, dilations, precision, a preferred type), dots with
//! a precision config and a preferred element type, and the element-wise extras.

mod common;

use common::computations::{scalar_computation, sum};
use common::golden::{bits, leaves};
use lazy_xla::*;

/// Imports `computation`'s text and checks that the import prints the same text; runs both
/// fused and unfused on `arguments`, which must give the same bits.
fn round_trip(computation: &XlaComputation, arguments: &[&Literal]) {
    let text = computation.to_hlo_text();
    let imported = XlaComputation::from_hlo_text(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(imported.to_hlo_text(), text);
    for options in [CompileOptions::default(), CompileOptions::unfused()] {
        let run = |c: &XlaComputation| {
            let out =
                c.compile(&options).and_then(|e| e.execute(arguments)).unwrap_or_else(|e| panic!("{e}"));
            leaves(&out).into_iter().map(bits).collect::<Vec<_>>()
        };
        assert_eq!(run(computation), run(&imported), "the import computes other values");
    }
}

#[test]
fn indexing_ops_import_back() -> Result<()> {
    let b = XlaBuilder::new("indexing");
    let x = b.parameter(0, &shape!(f32[4, 5]), "x");
    let rows = b.parameter(1, &shape!(s32[3, 1]), "rows");
    let gathered = gather(
        x,
        rows,
        &GatherDimensionNumbers {
            offset_dims: vec![1],
            collapsed_slice_dims: vec![0],
            start_index_map: vec![0],
            index_vector_dim: 1,
            ..Default::default()
        },
        &[1, 5],
        false,
    );
    let add = sum(ElementType::F32);
    let updates = b.constant_literal(&Literal::from_vec(&shape!(f32[3, 5]), vec![1.0f32; 15])?);
    let scattered = scatter(
        x,
        rows,
        updates,
        &add,
        &ScatterDimensionNumbers {
            update_window_dims: vec![1],
            inserted_window_dims: vec![0],
            scatter_dims_to_operand_dims: vec![0],
            index_vector_dim: 1,
            ..Default::default()
        },
        false,
        true,
    );
    let (i, j) = (b.constant_r0(1i32), b.constant_r0(7i32));
    let window = dynamic_slice(x, &[i, j], &[2, 2]);
    let updated = dynamic_update_slice(
        x,
        b.constant_literal(&Literal::from_vec(&shape!(f32[1, 2]), vec![9.0f32, 8.0])?),
        &[j, i],
    );
    let max = scalar_computation("max", ElementType::F32, |_, l, r| lazy_xla::max(l, r, &[]));
    let pooled = reduce_window(x, b.constant_r0(f32::NEG_INFINITY), &max, &[2, 3], &[2, 1], Padding::Same);
    let dilated = reduce_window_with_general_padding(
        x,
        b.constant_r0(0.0f32),
        &sum(ElementType::F32),
        &[2, 2],
        &[1, 2],
        &[2, 1],
        &[1, 2],
        &[(1, 0), (0, -1)],
    );
    let ge = scalar_computation("ge", ElementType::F32, |_, l, r| lazy_xla::ge(l, r, &[]));
    let source =
        b.constant_literal(&Literal::from_vec(&shape!(f32[2, 3]), vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?);
    let routed =
        select_and_scatter(x, &ge, &[2, 2], &[2, 2], Padding::Same, source, b.constant_r0(0.0f32), &add);
    let root = tuple(&b, &[gathered, scattered, window, updated, pooled, dilated, routed]);
    let computation = b.build(root)?;
    let xs = Literal::from_vec(&shape!(f32[4, 5]), (0..20).map(|v| (v * 7 % 11) as f32).collect())?;
    let rs = Literal::from_vec(&shape!(s32[3, 1]), vec![2, -1, 9])?;
    round_trip(&computation, &[&xs, &rs]);
    Ok(())
}

#[test]
fn convolutions_and_dots_with_precision_and_preferred_types_import_back() -> Result<()> {
    let b = XlaBuilder::new("products");
    let image = b.parameter(0, &shape!(f32[2, 4, 5, 5]), "image");
    let kernel = b.parameter(1, &shape!(f32[6, 2, 3, 2]), "kernel");
    let numbers = ConvolutionDimensionNumbers {
        input_batch_dimension: 0,
        input_feature_dimension: 1,
        input_spatial_dimensions: vec![2, 3],
        kernel_input_feature_dimension: 1,
        kernel_output_feature_dimension: 0,
        kernel_spatial_dimensions: vec![2, 3],
        output_batch_dimension: 0,
        output_feature_dimension: 1,
        output_spatial_dimensions: vec![2, 3],
    };
    let highest = PrecisionConfig { operand_precision: vec![Precision::Highest, Precision::High] };
    let grouped = conv_general_dilated_with(
        image,
        kernel,
        &[2, 1],
        &[(1, 1), (0, -1)],
        &[1, 2],
        &[2, 1],
        &numbers,
        2,
        1,
        Some(&highest),
        None,
    );
    let plain = conv(image, broadcast(b.constant_r0(0.5f32), &[3, 4, 2, 2]), &[2, 1], Padding::Same);
    let narrow = conv_general_dilated_with(
        convert_element_type(image, ElementType::Bf16),
        convert_element_type(kernel, ElementType::Bf16),
        &[],
        &[],
        &[],
        &[],
        &numbers,
        2,
        1,
        None,
        Some(ElementType::F32),
    );
    let m = b.parameter(2, &shape!(s8[3, 4]), "m");
    let n = b.parameter(3, &shape!(u8[4, 2]), "n");
    let int_dot = dot_with(m, n, Some(&highest), Some(ElementType::S32));
    let batched = dot_general_with(
        image,
        image,
        &DotDimensionNumbers::new(&[3], &[3], &[0, 1], &[0, 1]),
        None,
        Some(ElementType::F64),
    );
    let extras = tuple(
        &b,
        &[reduce_precision(image, 5, 2), erf(image), tan(image), cbrt(image), clz(m), population_count(n)],
    );
    let root = tuple(&b, &[grouped, plain, narrow, int_dot, batched, extras]);
    let computation = b.build(root)?;
    let text = computation.to_hlo_text();
    assert!(text.contains("operand_precision={highest,high}"), "{text}");
    assert!(text.contains("s32[3,2]{1,0} dot(m.10, n.11)"), "{text}");
    let value = |i: usize| ((i * 37 % 19) as f32 - 9.0) / 8.0;
    let images = Literal::from_vec(&shape!(f32[2, 4, 5, 5]), (0..200).map(value).collect())?;
    let kernels = Literal::from_vec(&shape!(f32[6, 2, 3, 2]), (0..72).map(|i| value(i + 3)).collect())?;
    let ms = Literal::from_vec(&shape!(s8[3, 4]), (0..12).map(|i| (i * 41 % 256) as i8).collect())?;
    let ns = Literal::from_vec(&shape!(u8[4, 2]), (0..8).map(|i| (i * 97 % 256) as u8).collect())?;
    round_trip(&computation, &[&images, &kernels, &ms, &ns]);
    Ok(())
}
