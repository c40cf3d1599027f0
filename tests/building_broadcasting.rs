//! XLA's broadcasting semantics in the builder: every example of the broadcasting document
//! (seeds/xla-broadcasting.md) as a shape test, the golden `BinOpBroadcast*` cases of
//! `shape_inference_test.cc` (reference/xla-semantics.md §1.2) with XLA's exact sentences, the
//! error context lazy-xla adds (op, operand shapes with layouts, caller location), and the
//! explicit HLO that jaxlib 0.6.0 emits for the composition examples.

use lazy_xla::{add, and, eq, mul, shape, sub, ElementType, Shape, XlaBuilder, XlaOp};

/// An `f32` parameter of dimensions `dims` (default layout).
fn param<'b>(b: &'b XlaBuilder, number: i64, dims: &[i64]) -> XlaOp<'b> {
    b.parameter(number, &Shape::new(ElementType::F32, dims), "p")
}

/// The shape of `lhs + rhs` with `broadcast_dimensions`, or the error's text.
fn add_shape(lhs: &[i64], rhs: &[i64], broadcast_dimensions: &[i64]) -> Result<Shape, String> {
    let b = XlaBuilder::new("broadcasting");
    let x = param(&b, 0, lhs);
    let y = param(&b, 1, rhs);
    let sum = add(x, y, broadcast_dimensions);
    b.get_shape(sum).map_err(|e| e.to_string())
}

/// Asserts that `lhs + rhs` has dimensions `expected` (and the default layout).
#[track_caller]
fn assert_add(lhs: &[i64], rhs: &[i64], broadcast_dimensions: &[i64], expected: &[i64]) {
    let shape = add_shape(lhs, rhs, broadcast_dimensions)
        .unwrap_or_else(|e| panic!("{lhs:?} + {rhs:?} with {broadcast_dimensions:?} failed: {e}"));
    assert_eq!(
        shape,
        Shape::new(ElementType::F32, expected),
        "{lhs:?} + {rhs:?} with {broadcast_dimensions:?}"
    );
}

/// Asserts that `lhs + rhs` fails with a message starting with XLA's `sentence`, followed by
/// lazy-xla's context ` (op add; ...`.
#[track_caller]
fn assert_add_err(lhs: &[i64], rhs: &[i64], broadcast_dimensions: &[i64], sentence: &str) {
    let message = add_shape(lhs, rhs, broadcast_dimensions)
        .map(|s| panic!("{lhs:?} + {rhs:?} with {broadcast_dimensions:?} gave {s}, expected an error"))
        .unwrap_err();
    assert!(
        message.starts_with(&format!("{sentence} (op add; operands ")),
        "{lhs:?} + {rhs:?} with {broadcast_dimensions:?}:\n  got      {message}\n  expected {sentence} (op add; ..."
    );
}

/// The HLO text of `lhs + rhs` with parameters `p0` and `p1`, built by a builder named `name`.
fn add_hlo(name: &str, lhs: &[i64], rhs: &[i64], broadcast_dimensions: &[i64]) -> String {
    let b = XlaBuilder::new(name);
    let x = b.parameter(0, &Shape::new(ElementType::F32, lhs), "parameter");
    let y = b.parameter(1, &Shape::new(ElementType::F32, rhs), "parameter");
    b.build(add(x, y, broadcast_dimensions)).expect("valid").to_hlo_text()
}

// ---- Broadcasting a lower-rank array onto a higher-rank array ---------------------------------

#[test]
fn scalar_broadcasts_over_a_matrix_without_dimensions() {
    assert_add(&[2, 3], &[], &[], &[2, 3]);
    assert_add(&[], &[2, 3], &[], &[2, 3]);
    assert_add(&[], &[], &[], &[]);
}

#[test]
fn matrix_plus_vector_with_dimension_1() {
    assert_add(&[2, 3], &[3], &[1], &[2, 3]);
    assert_add(&[3], &[2, 3], &[1], &[2, 3]);
}

#[test]
fn matrix_plus_vector_without_dimensions_is_invalid() {
    assert_add_err(&[2, 3], &[3], &[], "Shapes must be equal rank, but are f32[3] and f32[2,3]");
    // The smaller shape is named first, whichever side it is on.
    assert_add_err(&[3], &[2, 3], &[], "Shapes must be equal rank, but are f32[3] and f32[2,3]");
}

#[test]
fn square_matrix_plus_vector_along_either_dimension() {
    assert_add(&[3, 3], &[3], &[1], &[3, 3]);
    assert_add(&[3, 3], &[3], &[0], &[3, 3]);
    // The two differ in which output dimension the vector lands on.
    let rows = add_hlo("u", &[3, 3], &[3], &[1]);
    assert!(rows.contains("broadcast.3 = f32[3,3]{1,0} broadcast(parameter.2), dimensions={1}\n"), "{rows}");
    let columns = add_hlo("u", &[3, 3], &[3], &[0]);
    assert!(
        columns.contains("broadcast.3 = f32[3,3]{1,0} broadcast(parameter.2), dimensions={0}\n"),
        "{columns}"
    );
}

#[test]
fn matrix_2x3_plus_vector_3_with_dimension_0_is_invalid() {
    assert_add_err(&[2, 3], &[3], &[0], "Broadcast dimension 0 mismatch: 3 != 2; f32[3] and f32[2,3].");
}

#[test]
fn cuboid_plus_matrix_with_dimensions_1_2() {
    assert_add(&[2, 3, 4], &[3, 4], &[1, 2], &[2, 3, 4]);
    assert_add(&[3, 4], &[2, 3, 4], &[1, 2], &[2, 3, 4]);
}

// ---- Formal definition: T onto MxNxPxQ, TxV onto MxNxPxQ ---------------------------------------

const MNPQ: [i64; 4] = [2, 3, 4, 5];

#[test]
fn vector_t_matches_each_dimension_of_mnpq() {
    for (d, &t) in MNPQ.iter().enumerate() {
        assert_add(&MNPQ, &[t], &[d as i64], &MNPQ);
        assert_add(&[t], &MNPQ, &[d as i64], &MNPQ);
    }
}

#[test]
fn vector_t_must_equal_the_matched_dimension() {
    for (d, &size) in MNPQ.iter().enumerate() {
        let other = if d == 0 { 3 } else { 2 };
        let expected =
            format!("Broadcast dimension 0 mismatch: {other} != {size}; f32[{other}] and f32[2,3,4,5].");
        assert_add_err(&MNPQ, &[other], &[d as i64], &expected);
    }
}

#[test]
fn vector_of_size_1_matches_any_dimension() {
    for d in 0..4 {
        assert_add(&MNPQ, &[1], &[d], &MNPQ);
    }
}

#[test]
fn matrix_txv_matches_every_increasing_pair_of_mnpq() {
    // The document's (2,3), (1,2), (0,3), "etc.": every strictly increasing pair.
    for (first, &t) in MNPQ.iter().enumerate() {
        for (second, &v) in MNPQ.iter().enumerate().skip(first + 1) {
            assert_add(&MNPQ, &[t, v], &[first as i64, second as i64], &MNPQ);
        }
    }
    assert_add(&MNPQ, &[4, 5], &[2, 3], &MNPQ);
    assert_add(&MNPQ, &[3, 4], &[1, 2], &MNPQ);
    assert_add(&MNPQ, &[2, 5], &[0, 3], &MNPQ);
}

#[test]
fn matching_v_to_n_and_t_to_p_is_illegal() {
    // T = P = 4, V = N = 3: sizes fit, but the tuple (2,1) is not increasing.
    assert_add_err(&MNPQ, &[4, 3], &[2, 1], "Broadcast dimensions order is wrong: 1 comes after 2.");
}

#[test]
fn matching_v_to_both_p_and_n_is_illegal() {
    // One lower-rank dimension cannot be given two higher-rank dimensions: a repeated entry ...
    assert_add_err(&MNPQ, &[3, 3], &[1, 1], "Broadcast dimensions order is wrong: 1 comes after 1.");
    // ... nor a tuple longer than the lower rank.
    assert_add_err(
        &MNPQ,
        &[3, 4],
        &[1, 2, 1],
        "Size of broadcast_dimensions has to match lower-rank operand's rank;  lower-rank operand's rank \
         is 2, size of broadcast_dimensions is 3.",
    );
}

// ---- Degenerate dimensions ----------------------------------------------------------------------

#[test]
fn degenerate_examples_of_the_document() {
    assert_add(&[2, 1], &[2, 3], &[], &[2, 3]);
    assert_add(&[1, 2, 5], &[7, 2, 5], &[], &[7, 2, 5]);
    assert_add(&[7, 2, 5], &[7, 1, 5], &[], &[7, 2, 5]);
}

#[test]
fn incompatible_same_rank_shapes() {
    assert_add_err(
        &[7, 2, 5],
        &[7, 2, 6],
        &[],
        "Binary op with incompatible shapes: f32[7,2,5] and f32[7,2,6].",
    );
}

#[test]
fn outer_operation_with_degenerate_dimensions_at_different_indices() {
    assert_add(&[2, 1], &[1, 3], &[], &[2, 3]);
    assert_eq!(
        add_hlo("c3", &[2, 1], &[1, 3], &[]),
        "HloModule c3.8, entry_computation_layout={(f32[2,1]{1,0}, f32[1,3]{1,0})->f32[2,3]{1,0}}\n\n\
         ENTRY c3.8 {\n\
         \x20 parameter.1 = f32[2,1]{1,0} parameter(0)\n\
         \x20 reshape.3 = f32[2]{0} reshape(parameter.1)\n\
         \x20 broadcast.4 = f32[2,3]{1,0} broadcast(reshape.3), dimensions={0}\n\
         \x20 parameter.2 = f32[1,3]{1,0} parameter(1)\n\
         \x20 reshape.5 = f32[3]{0} reshape(parameter.2)\n\
         \x20 broadcast.6 = f32[2,3]{1,0} broadcast(reshape.5), dimensions={1}\n\
         \x20 ROOT add.7 = f32[2,3]{1,0} add(broadcast.4, broadcast.6)\n\
         }\n\n"
    );
}

// ---- Broadcast composition ------------------------------------------------------------------------

#[test]
fn vector_4_plus_matrix_1x2_with_dimension_0() {
    assert_add(&[4], &[1, 2], &[0], &[4, 2]);
    assert_eq!(
        add_hlo("c1", &[4], &[1, 2], &[0]),
        "HloModule c1.7, entry_computation_layout={(f32[4]{0}, f32[1,2]{1,0})->f32[4,2]{1,0}}\n\n\
         ENTRY c1.7 {\n\
         \x20 parameter.1 = f32[4]{0} parameter(0)\n\
         \x20 broadcast.3 = f32[4,2]{1,0} broadcast(parameter.1), dimensions={0}\n\
         \x20 parameter.2 = f32[1,2]{1,0} parameter(1)\n\
         \x20 reshape.4 = f32[2]{0} reshape(parameter.2)\n\
         \x20 broadcast.5 = f32[4,2]{1,0} broadcast(reshape.4), dimensions={1}\n\
         \x20 ROOT add.6 = f32[4,2]{1,0} add(broadcast.3, broadcast.5)\n\
         }\n\n"
    );
}

#[test]
fn matrix_1x2_plus_array_4x3x1_with_dimensions_1_2() {
    assert_add(&[1, 2], &[4, 3, 1], &[1, 2], &[4, 3, 2]);
    assert_eq!(
        add_hlo("c2", &[1, 2], &[4, 3, 1], &[1, 2]),
        "HloModule c2.9, entry_computation_layout={(f32[1,2]{1,0}, f32[4,3,1]{2,1,0})->f32[4,3,2]{2,1,0}}\n\n\
         ENTRY c2.9 {\n\
         \x20 parameter.1 = f32[1,2]{1,0} parameter(0)\n\
         \x20 broadcast.3 = f32[4,1,2]{2,1,0} broadcast(parameter.1), dimensions={1,2}\n\
         \x20 reshape.4 = f32[4,2]{1,0} reshape(broadcast.3)\n\
         \x20 broadcast.5 = f32[4,3,2]{2,1,0} broadcast(reshape.4), dimensions={0,2}\n\
         \x20 parameter.2 = f32[4,3,1]{2,1,0} parameter(1)\n\
         \x20 reshape.6 = f32[4,3]{1,0} reshape(parameter.2)\n\
         \x20 broadcast.7 = f32[4,3,2]{2,1,0} broadcast(reshape.6), dimensions={0,1}\n\
         \x20 ROOT add.8 = f32[4,3,2]{2,1,0} add(broadcast.5, broadcast.7)\n\
         }\n\n"
    );
}

// ---- The golden table of shape_inference_test.cc (xla-semantics.md §1.2) -----------------------

#[test]
fn bin_op_broadcast_matrix_vector() {
    assert_add(&[16, 8], &[8], &[1], &[16, 8]);
    assert_add_err(&[16, 8], &[8], &[0], "Broadcast dimension 0 mismatch: 8 != 16; f32[8] and f32[16,8].");
}

#[test]
fn bin_op_broadcast_cube_matrix() {
    assert_add(&[16, 8, 4], &[8, 4], &[1, 2], &[16, 8, 4]);
    assert_add(&[16, 8, 4], &[16, 4], &[0, 2], &[16, 8, 4]);
    assert_add(&[16, 8, 4], &[16, 8], &[0, 1], &[16, 8, 4]);
}

#[test]
fn bin_op_broadcast_bad_dimension() {
    assert_add_err(&[16, 8, 4], &[8], &[], "Shapes must be equal rank, but are f32[8] and f32[16,8,4]");
    assert_add_err(
        &[16, 8, 4],
        &[8],
        &[3],
        "Broadcast dimension number (3) too large; higher-rank operand has rank 3.",
    );
    assert_add_err(
        &[16, 8, 4],
        &[8, 4],
        &[0, 1, 2],
        "Size of broadcast_dimensions has to match lower-rank operand's rank;  lower-rank operand's rank \
         is 2, size of broadcast_dimensions is 3.",
    );
    // The size check of dimension 0 comes before the order check.
    assert_add_err(
        &[16, 8, 4],
        &[8, 4],
        &[2, 1],
        "Broadcast dimension 0 mismatch: 8 != 4; f32[8,4] and f32[16,8,4].",
    );
    assert_add_err(&[8, 8, 8], &[8, 8], &[0, 0], "Broadcast dimensions order is wrong: 0 comes after 0.");
    assert_add_err(&[8, 8, 8], &[8, 8], &[1, 0], "Broadcast dimensions order is wrong: 0 comes after 1.");
}

#[test]
fn bin_op_incompatible_shapes_and_types() {
    assert_add_err(&[2, 3], &[2, 4], &[], "Binary op with incompatible shapes: f32[2,3] and f32[2,4].");
    let b = XlaBuilder::new("types");
    let x = b.parameter(0, &shape!(f32[2]), "x");
    let y = b.parameter(1, &shape!(s32[2]), "y");
    let message = b.get_shape(add(x, y, &[])).unwrap_err().to_string();
    assert!(
        message.starts_with("Binary op add with different element types: f32[2] and s32[2]. (op add; "),
        "{message}"
    );
}

#[test]
fn negative_broadcast_dimension() {
    assert_add_err(&[2, 3], &[3], &[-1], "Broadcast dimension number (-1) cannot be negative.");
}

#[test]
fn same_rank_broadcast_dimensions_must_be_identity_or_empty() {
    assert_add(&[2, 3], &[2, 3], &[0, 1], &[2, 3]);
    assert_add(&[2, 1], &[2, 3], &[0, 1], &[2, 3]);
    assert_add_err(
        &[2, 3],
        &[2, 3],
        &[1, 0],
        "Broadcast dimensions field must either be not set or be the identity on binary operations with \
         operands of the same rank.",
    );
}

#[test]
fn scalar_with_broadcast_dimensions_is_rejected() {
    assert_add_err(
        &[2, 3],
        &[],
        &[0],
        "Size of broadcast_dimensions has to match lower-rank operand's rank;  lower-rank operand's rank \
         is 0, size of broadcast_dimensions is 1.",
    );
}

#[test]
fn table_of_the_in_dim_source_comment() {
    // InferInDimBroadcastShape's own examples (smaller, larger, dims).
    assert_add(&[2, 3], &[], &[], &[2, 3]);
    assert_add(&[3], &[4, 3], &[1], &[4, 3]);
    assert_add(&[2, 3], &[2, 3, 4], &[0, 1], &[2, 3, 4]);
    assert_add(&[2, 1], &[2, 3, 4], &[0, 2], &[2, 3, 4]);
    assert_add(&[2, 3], &[2, 1, 4], &[0, 1], &[2, 3, 4]);
}

// ---- The error's context: op, operands with layouts, caller location -------------------------------

#[test]
fn error_context_names_op_operands_and_this_file() {
    let b = XlaBuilder::new("context");
    let x = b.parameter(0, &shape!(f32[16, 8]), "x");
    let v = b.parameter(1, &shape!(f32[8]), "v");
    let line = line!() + 1;
    let sum = add(x, v, &[0]);
    let message = b.get_shape(sum).unwrap_err().to_string();
    assert_eq!(
        message,
        format!(
            "Broadcast dimension 0 mismatch: 8 != 16; f32[8] and f32[16,8]. \
             (op add; operands f32[16,8]{{1,0}}, f32[8]{{0}}) at tests/building_broadcasting.rs:{line}:15"
        )
    );
}

#[test]
fn error_context_lists_operands_in_call_order_with_their_layouts() {
    let b = XlaBuilder::new("context");
    let v = b.parameter(0, &shape!(f32[8]), "v");
    let x = b.parameter(1, &shape!(f32[16, 8, 4]{0, 1, 2}), "x");
    let line = line!() + 1;
    let product = mul(v, x, &[]);
    let message = b.get_shape(product).unwrap_err().to_string();
    assert_eq!(
        message,
        format!(
            "Shapes must be equal rank, but are f32[8] and f32[16,8,4] \
             (op multiply; operands f32[8]{{0}}, f32[16,8,4]{{0,1,2}}) at tests/building_broadcasting.rs:{line}:19"
        )
    );
}

#[test]
fn error_context_for_compare_and_logical_ops() {
    let b = XlaBuilder::new("context");
    let x = b.parameter(0, &shape!(s32[2, 3]), "x");
    let y = b.parameter(1, &shape!(s32[2, 4]), "y");
    let line = line!() + 1;
    let equal = eq(x, y, &[]);
    assert_eq!(
        b.get_shape(equal).unwrap_err().to_string(),
        format!(
            "Binary op with incompatible shapes: s32[2,3] and s32[2,4]. \
             (op compare; operands s32[2,3]{{1,0}}, s32[2,4]{{1,0}}) at tests/building_broadcasting.rs:{line}:17"
        )
    );

    let b = XlaBuilder::new("context");
    let x = b.parameter(0, &shape!(f32[2]), "x");
    let line = line!() + 1;
    let both = and(x, x, &[]);
    assert_eq!(
        b.get_shape(both).unwrap_err().to_string(),
        format!(
            "Expected pred or integral type in argument to and/or operation; got F32. \
             (op and; operands f32[2]{{0}}, f32[2]{{0}}) at tests/building_broadcasting.rs:{line}:16"
        )
    );
}

#[test]
fn error_context_of_an_operator() {
    let b = XlaBuilder::new("context");
    let x = b.parameter(0, &shape!(f32[7, 2, 5]), "x");
    let y = b.parameter(1, &shape!(f32[7, 2, 6]), "y");
    let line = line!() + 1;
    let difference = x - y;
    let message = b.get_shape(difference).unwrap_err().to_string();
    assert_eq!(
        message,
        format!(
            "Binary op with incompatible shapes: f32[7,2,5] and f32[7,2,6]. \
             (op subtract; operands f32[7,2,5]{{2,1,0}}, f32[7,2,6]{{2,1,0}}) at tests/building_broadcasting.rs:{line}:22"
        )
    );
    // The free function gives the same sentence.
    let b = XlaBuilder::new("context");
    let x = b.parameter(0, &shape!(f32[7, 2, 5]), "x");
    let y = b.parameter(1, &shape!(f32[7, 2, 6]), "y");
    let message = b.get_shape(sub(x, y, &[])).unwrap_err().to_string();
    assert!(
        message.starts_with("Binary op with incompatible shapes: f32[7,2,5] and f32[7,2,6]. (op subtract;")
    );
}

// ---- Result element types and layouts under broadcasting --------------------------------------------

#[test]
fn broadcasting_result_gets_the_default_layout() {
    let b = XlaBuilder::new("layout");
    let x = b.parameter(0, &shape!(f32[2, 3]{0, 1}), "x");
    let s = b.parameter(1, &shape!(f32[]), "s");
    let v = b.parameter(2, &shape!(f32[3]), "v");
    let row = b.parameter(3, &shape!(f32[1, 3]{0, 1}), "row");
    assert_eq!(b.get_shape(add(x, s, &[])).unwrap().to_string(), "f32[2,3]{1,0}");
    assert_eq!(b.get_shape(add(x, v, &[1])).unwrap().to_string(), "f32[2,3]{1,0}");
    assert_eq!(b.get_shape(add(x, row, &[])).unwrap().to_string(), "f32[2,3]{1,0}");
    assert_eq!(b.get_shape(add(x, x, &[])).unwrap().to_string(), "f32[2,3]{0,1}");
    assert_eq!(b.get_shape(add(x, x, &[0, 1])).unwrap().to_string(), "f32[2,3]{0,1}");
}

#[test]
fn compare_broadcasts_like_add_and_gives_pred() {
    let b = XlaBuilder::new("compare");
    let x = b.parameter(0, &shape!(f32[16, 8, 4]), "x");
    let m = b.parameter(1, &shape!(f32[16, 4]), "m");
    assert_eq!(b.get_shape(eq(x, m, &[0, 2])).unwrap(), shape!(pred[16, 8, 4]));
    assert_eq!(b.get_shape(eq(m, x, &[0, 2])).unwrap(), shape!(pred[16, 8, 4]));
}
