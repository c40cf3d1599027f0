//! Every example of the broadcasting seed (seeds/xla-broadcasting.md) runs and computes the
//! document's exact values, fused and unfused.

use lazy_xla::{add, CompileOptions, Literal, Shape, XlaBuilder, XlaOp};

/// Both executors: fused (the default) and unfused.
fn options() -> [CompileOptions; 2] {
    [CompileOptions::default(), CompileOptions { fusion: false, ..Default::default() }]
}

/// A literal of the shape written in XLA's notation, from logical row-major values.
fn lit(shape: &str, values: Vec<f32>) -> Literal {
    Literal::from_vec(&shape.parse::<Shape>().expect("shape text"), values).expect("literal")
}

/// Runs `add(x, y, dims)` on `x` and `y` (as parameters) with both executors; checks the
/// result's dimensions and logical values.
#[track_caller]
fn check_add(x: &Literal, y: &Literal, dims: &[i64], dimensions: &[i64], expected: &[f32]) {
    let b = XlaBuilder::new("seed");
    let px: XlaOp<'_> = b.parameter(0, x.shape(), "x");
    let py = b.parameter(1, y.shape(), "y");
    let computation = b.build(add(px, py, dims)).expect("build");
    for options in options() {
        let exe = computation.compile(&options).expect("compile");
        let out = exe.execute(&[x, y]).expect("execute");
        assert_eq!(out.shape().dimensions(), dimensions, "{options:?}");
        assert_eq!(out.to_vec::<f32>().unwrap(), expected, "{options:?}");
    }
}

fn m23() -> Literal {
    lit("f32[2,3]", vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
}

#[test]
fn matrix_plus_scalar() {
    check_add(&m23(), &Literal::scalar(7.0f32), &[], &[2, 3], &[8.0, 9.0, 10.0, 11.0, 12.0, 13.0]);
}

#[test]
fn scalar_plus_matrix() {
    check_add(&Literal::scalar(7.0f32), &m23(), &[], &[2, 3], &[8.0, 9.0, 10.0, 11.0, 12.0, 13.0]);
}

#[test]
fn matrix_plus_vector_over_rows() {
    let v = Literal::vec1(&[7.0f32, 8.0, 9.0]);
    check_add(&m23(), &v, &[1], &[2, 3], &[8.0, 10.0, 12.0, 11.0, 13.0, 15.0]);
    // The vector on the left gives the same sums.
    check_add(&v, &m23(), &[1], &[2, 3], &[8.0, 10.0, 12.0, 11.0, 13.0, 15.0]);
}

#[test]
fn square_matrix_plus_vector_both_ways() {
    let m = lit("f32[3,3]", vec![0.0; 9]);
    let v = Literal::vec1(&[7.0f32, 8.0, 9.0]);
    // (1): each vector element is a column, the vector repeated for each row.
    check_add(&m, &v, &[1], &[3, 3], &[7.0, 8.0, 9.0, 7.0, 8.0, 9.0, 7.0, 8.0, 9.0]);
    // (0): each vector element is a row.
    check_add(&m, &v, &[0], &[3, 3], &[7.0, 7.0, 7.0, 8.0, 8.0, 8.0, 9.0, 9.0, 9.0]);
    let n = lit("f32[3,3]", (1..=9).map(|i| i as f32 * 10.0).collect());
    check_add(&n, &v, &[1], &[3, 3], &[17.0, 28.0, 39.0, 47.0, 58.0, 69.0, 77.0, 88.0, 99.0]);
    check_add(&n, &v, &[0], &[3, 3], &[17.0, 27.0, 37.0, 48.0, 58.0, 68.0, 79.0, 89.0, 99.0]);
}

#[test]
fn cuboid_plus_matrix_dims_1_2() {
    let cuboid = lit("f32[2,3,4]", (0..24).map(|i| i as f32 * 100.0).collect());
    let matrix = lit("f32[3,4]", (0..12).map(|i| i as f32).collect());
    let expected: Vec<f32> = (0..24).map(|i| (i * 100 + i % 12) as f32).collect();
    check_add(&cuboid, &matrix, &[1, 2], &[2, 3, 4], &expected);
}

#[test]
fn degenerate_2x1_plus_2x3() {
    let x = lit("f32[2,1]", vec![10.0, 20.0]);
    let y = m23();
    check_add(&x, &y, &[], &[2, 3], &[11.0, 12.0, 13.0, 24.0, 25.0, 26.0]);
    check_add(&y, &x, &[], &[2, 3], &[11.0, 12.0, 13.0, 24.0, 25.0, 26.0]);
}

#[test]
fn degenerate_1x2x5_plus_7x2x5() {
    let x = lit("f32[1,2,5]", (0..10).map(|i| i as f32).collect());
    let y = lit("f32[7,2,5]", (0..70).map(|i| (i / 10) as f32 * 1000.0).collect());
    let expected: Vec<f32> = (0..70).map(|i| ((i / 10) * 1000 + i % 10) as f32).collect();
    check_add(&x, &y, &[], &[7, 2, 5], &expected);
}

#[test]
fn degenerate_7x2x5_plus_7x1x5() {
    let x = lit("f32[7,2,5]", (0..70).map(|i| i as f32 * 100.0).collect());
    let y = lit("f32[7,1,5]", (0..35).map(|i| i as f32).collect());
    // x[a,b,c] = 100·(10a+5b+c); y[a,0,c] = 5a+c.
    let expected: Vec<f32> = (0..70)
        .map(|i| {
            let (a, c) = (i / 10, i % 5);
            (i * 100 + 5 * a + c) as f32
        })
        .collect();
    check_add(&x, &y, &[], &[7, 2, 5], &expected);
}

#[test]
fn outer_2x1_plus_1x3() {
    let x = lit("f32[2,1]", vec![10.0, 20.0]);
    let y = lit("f32[1,3]", vec![1.0, 2.0, 3.0]);
    check_add(&x, &y, &[], &[2, 3], &[11.0, 12.0, 13.0, 21.0, 22.0, 23.0]);
    check_add(&y, &x, &[], &[2, 3], &[11.0, 12.0, 13.0, 21.0, 22.0, 23.0]);
}

#[test]
fn vector_plus_1x2_matrix_dims_0() {
    let v = Literal::vec1(&[1.0f32, 2.0, 3.0, 4.0]);
    let m = lit("f32[1,2]", vec![5.0, 6.0]);
    let expected = [6.0, 7.0, 7.0, 8.0, 8.0, 9.0, 9.0, 10.0];
    check_add(&v, &m, &[0], &[4, 2], &expected);
    check_add(&m, &v, &[0], &[4, 2], &expected);
}

#[test]
fn matrix_1x2_plus_4x3x1_dims_1_2() {
    let m = lit("f32[1,2]", vec![1.0, 2.0]);
    let cube = lit("f32[4,3,1]", (0..12).map(|i| i as f32 * 10.0).collect());
    // out[i,j,k] = cube[i,j,0] + m[0,k]
    let expected: Vec<f32> = (0..24).map(|i| ((i / 2) * 10 + i % 2 + 1) as f32).collect();
    check_add(&m, &cube, &[1, 2], &[4, 3, 2], &expected);
    check_add(&cube, &m, &[1, 2], &[4, 3, 2], &expected);
}

#[test]
fn seed_examples_with_column_major_operands() {
    let x = m23().relayout(&lazy_xla::Layout::new(&[0, 1])).unwrap();
    let v = Literal::vec1(&[7.0f32, 8.0, 9.0]);
    check_add(&x, &v, &[1], &[2, 3], &[8.0, 10.0, 12.0, 11.0, 13.0, 15.0]);
    check_add(&x, &Literal::scalar(7.0f32), &[], &[2, 3], &[8.0, 9.0, 10.0, 11.0, 12.0, 13.0]);
    let cube = lit("f32[4,3,1]", (0..12).map(|i| i as f32 * 10.0).collect())
        .relayout(&lazy_xla::Layout::new(&[0, 2, 1]))
        .unwrap();
    let m = lit("f32[1,2]", vec![1.0, 2.0]).relayout(&lazy_xla::Layout::new(&[0, 1])).unwrap();
    let expected: Vec<f32> = (0..24).map(|i| ((i / 2) * 10 + i % 2 + 1) as f32).collect();
    check_add(&m, &cube, &[1, 2], &[4, 3, 2], &expected);
}
