//! Shapes, layouts and index math, pinned to the facts of `seeds/xla-shapes-and-layout` and to
//! XLA's own tests (`xla/index_util_test.cc`, `xla/layout_util.cc`'s messages).

use lazy_xla::{shape, ElementType, Error, Layout, Literal, PaddingValue, Shape};
use proptest::prelude::*;

/// The seed's [2 x 3] array `a b c / d e f`, as the numbers 1..=6 (a = 1, …, f = 6).
const A_TO_F: [i32; 6] = [1, 2, 3, 4, 5, 6];

/// Memory of a literal written as letters: 1..=6 become `a`..`f`, 0 (padding) stays `0`.
fn letters(memory: &[i32]) -> String {
    memory
        .iter()
        .map(|&v| if v == 0 { "0".to_string() } else { char::from(b'a' + (v - 1) as u8).to_string() })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The seed's array in the layout `minor_to_major`.
fn seed_array(minor_to_major: &[i64]) -> lazy_xla::Result<Literal> {
    let shape = Shape::with_layout(ElementType::S32, &[2, 3], minor_to_major)?;
    Literal::from_vec(&shape, A_TO_F.to_vec())
}

/// For every element of the seed's array (in logical order), its letter placed at its linear
/// index: memory reconstructed from `linear_index` alone.
fn memory_from_linear_index(shape: &Shape) -> lazy_xla::Result<String> {
    let mut memory = vec![0; shape.buffer_len() as usize];
    let mut value = 0;
    for i in 0..shape.dimension(0) {
        for j in 0..shape.dimension(1) {
            value += 1;
            memory[shape.linear_index(&[i, j])? as usize] = value;
        }
    }
    Ok(letters(&memory))
}

// ---------------------------------------------------------------------------------------------
// The seed: minor_to_major and memory order.

#[test]
fn seed_column_major_memory_is_a_d_b_e_c_f() -> lazy_xla::Result<()> {
    let literal = seed_array(&[0, 1])?;
    assert_eq!(letters(literal.memory::<i32>()?), "a d b e c f");
    assert_eq!(memory_from_linear_index(literal.shape())?, "a d b e c f");
    // Logical order does not change with the layout.
    assert_eq!(literal.to_vec::<i32>()?, A_TO_F.to_vec());
    Ok(())
}

#[test]
fn seed_row_major_memory_is_a_b_c_d_e_f() -> lazy_xla::Result<()> {
    let literal = seed_array(&[1, 0])?;
    assert_eq!(letters(literal.memory::<i32>()?), "a b c d e f");
    assert_eq!(memory_from_linear_index(literal.shape())?, "a b c d e f");
    Ok(())
}

#[test]
fn seed_padded_column_major_memory() -> lazy_xla::Result<()> {
    let layout = Layout::new(&[0, 1]).with_padding(&[3, 5], PaddingValue::Zero)?;
    let literal = seed_array(&[1, 0])?.relayout(&layout)?;
    assert_eq!(letters(literal.memory::<i32>()?), "a d 0 b e 0 c f 0 0 0 0 0 0 0");
    assert_eq!(memory_from_linear_index(literal.shape())?, "a d 0 b e 0 c f 0 0 0 0 0 0 0");
    assert_eq!(literal.shape().buffer_len(), 15);
    assert_eq!(literal.shape().element_count(), 6);
    assert_eq!(literal.shape().strides(), vec![1, 3]);
    // "the same as the layout of this padded array": a b c 0 0 / d e f 0 0 / 0 0 0 0 0, stored
    // column-major.
    let picture = Shape::with_layout(ElementType::S32, &[3, 5], &[0, 1])?;
    let padded_array = Literal::from_vec(&picture, vec![1, 2, 3, 0, 0, 4, 5, 6, 0, 0, 0, 0, 0, 0, 0])?;
    assert_eq!(padded_array.memory::<i32>()?, literal.memory::<i32>()?);
    Ok(())
}

#[test]
fn seed_padded_row_major_memory() -> lazy_xla::Result<()> {
    let layout = Layout::new(&[1, 0]).with_padding(&[3, 5], PaddingValue::Zero)?;
    let literal = seed_array(&[1, 0])?.relayout(&layout)?;
    assert_eq!(letters(literal.memory::<i32>()?), "a b c 0 0 d e f 0 0 0 0 0 0 0");
    assert_eq!(literal.shape().strides(), vec![5, 1]);
    Ok(())
}

#[test]
fn default_layout_is_descending() {
    for rank in 0..6usize {
        let dims = vec![2; rank];
        let shape = Shape::new(ElementType::F32, &dims);
        let expected: Vec<i64> = (0..rank as i64).rev().collect();
        assert_eq!(shape.layout().minor_to_major(), expected.as_slice());
        assert!(shape.layout().is_default());
        assert_eq!(shape.layout(), &Layout::default_for_rank(rank));
    }
    assert_eq!(shape!(f32[2, 3, 4]).layout().minor_to_major(), &[2, 1, 0]);
    assert_eq!(Shape::try_new(ElementType::F32, &[2, 3]), Ok(shape!(f32[2, 3]{1, 0})));
    assert!(!shape!(f32[2, 3]{0, 1}).layout().is_default());
}

// ---------------------------------------------------------------------------------------------
// Rank, true rank, dimension numbering.

#[test]
fn negative_dimension_indices_count_from_the_end() {
    // [A x B x C] with A = 5, B = 6, C = 7.
    let s = shape!(f32[5, 6, 7]);
    assert_eq!(s.dimension(-1), 7);
    assert_eq!(s.dimension(-2), 6);
    assert_eq!(s.dimension(-3), 5);
    assert_eq!((s.dimension(0), s.dimension(1), s.dimension(2)), (5, 6, 7));
    assert_eq!(s.dimensions(), &[5, 6, 7]);
}

#[test]
#[should_panic(expected = "dimension index -4 out of range for rank 3")]
fn negative_dimension_index_past_the_start_panics() {
    shape!(f32[5, 6, 7]).dimension(-4);
}

#[test]
#[should_panic(expected = "dimension index 3 out of range for rank 3")]
fn dimension_index_past_the_end_panics() {
    shape!(f32[5, 6, 7]).dimension(3);
}

#[test]
fn rank_and_true_rank() {
    assert_eq!(shape!(f32[]).rank(), 0);
    assert_eq!(shape!(f32[]).true_rank(), 0);
    assert_eq!(shape!(f32[2, 3]).rank(), 2);
    assert_eq!(shape!(f32[2, 3]).true_rank(), 2);
    // Size-1 dimensions do not count…
    assert_eq!(shape!(f32[1, 3, 1]).rank(), 3);
    assert_eq!(shape!(f32[1, 3, 1]).true_rank(), 1);
    assert_eq!(shape!(f32[1, 1]).true_rank(), 0);
    // …but size-0 ones do: XLA's TrueRank counts every dimension that is not 1.
    assert_eq!(shape!(f32[0]).true_rank(), 1);
    assert_eq!(shape!(f32[1, 0, 1, 4]).true_rank(), 2);
}

#[test]
fn element_count() {
    assert_eq!(shape!(f32[]).element_count(), 1);
    assert_eq!(shape!(f32[2, 3]).element_count(), 6);
    assert_eq!(shape!(f32[2, 0, 3]).element_count(), 0);
    assert_eq!(shape!(f32[2, 3]).buffer_len(), 6);
}

#[test]
fn element_count_overflow_is_an_error() {
    let err = Shape::try_new(ElementType::F32, &[1 << 32, 1 << 32]).unwrap_err();
    assert_eq!(
        err,
        Error::InvalidArgument(
            "shape f32[4294967296,4294967296] has more elements than fit in an int64".into()
        )
    );
    // Exactly i64::MAX elements is fine; one more dimension of 2 is not.
    assert_eq!(Shape::try_new(ElementType::U8, &[i64::MAX]).map(|s| s.element_count()), Ok(i64::MAX));
    assert!(Shape::try_new(ElementType::U8, &[i64::MAX, 2]).is_err());
    // A zero-size dimension makes the count 0 whatever the others, so no overflow.
    assert_eq!(Shape::try_new(ElementType::F32, &[0, i64::MAX, i64::MAX]).map(|s| s.element_count()), Ok(0));
    // The parser reports the same.
    assert!(matches!(
        "f32[4294967296,4294967296]".parse::<Shape>(),
        Err(Error::InvalidArgument(m)) if m.contains("more elements than fit in an int64")
    ));
    // Padding that overflows is an error too, though the unpadded shape fits.
    let huge = Layout::new(&[1, 0]).with_padding(&[i64::MAX, 2], PaddingValue::Zero);
    let err = huge.and_then(|layout| shape!(f32[1, 1]).relayout(&layout)).unwrap_err();
    assert!(err.to_string().contains("more elements than fit in an int64"), "{err}");
}

#[test]
#[should_panic(expected = "more elements than fit in an int64")]
fn shape_new_panics_on_overflow_as_documented() {
    Shape::new(ElementType::F32, &[1 << 32, 1 << 32]);
}

#[test]
fn negative_size_is_an_error() {
    let err = Shape::try_new(ElementType::F32, &[2, -1]).unwrap_err();
    assert_eq!(err.to_string(), "shape's dimensions must not be < 0; dimension at index 1 was -1");
    assert!(Shape::with_layout(ElementType::F32, &[-3], &[0]).is_err());
}

// ---------------------------------------------------------------------------------------------
// Layout validation: XLA's sentences, verbatim.

#[test]
fn layout_with_too_few_entries() {
    let err = Shape::with_layout(ElementType::F32, &[2, 3], &[0]).unwrap_err();
    assert_eq!(
        err,
        Error::InvalidArgument(
            "layout minor_to_major field contains 1 elements, but shape has 2 dimensions: {0}; \
             shape: f32[2,3]"
                .into()
        )
    );
    let err = shape!(f32[2, 3]).relayout(&Layout::new(&[2, 1, 0])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "layout minor_to_major field contains 3 elements, but shape has 2 dimensions: {2,1,0}; \
         shape: f32[2,3]"
    );
}

#[test]
fn layout_with_duplicates() {
    let err = Shape::with_layout(ElementType::F32, &[2, 3], &[0, 0]).unwrap_err();
    assert_eq!(err.to_string(), "layout minor_to_major field has duplicate values: {0,0}; shape: f32[2,3]");
    let err = Shape::with_layout(ElementType::S32, &[4, 5, 6], &[2, 1, 2]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "layout minor_to_major field has duplicate values: {2,1,2}; shape: s32[4,5,6]"
    );
}

#[test]
fn layout_with_out_of_bounds_values() {
    let err = Shape::with_layout(ElementType::F32, &[2, 3], &[0, 2]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "layout minor_to_major field has out-of-bounds value: {0,2}; shape: f32[2,3]"
    );
    let err = Shape::with_layout(ElementType::F32, &[2, 3], &[-1, 0]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "layout minor_to_major field has out-of-bounds value: {-1,0}; shape: f32[2,3]"
    );
}

#[test]
fn padding_validation() -> lazy_xla::Result<()> {
    let err = Layout::new(&[0, 1]).with_padding(&[3], PaddingValue::Zero).unwrap_err();
    assert!(err.to_string().starts_with("layout has 1 padded dimensions, but shape is rank 2"), "{err}");
    let small = Layout::new(&[0, 1]).with_padding(&[1, 5], PaddingValue::Zero)?;
    let err = shape!(f32[2, 3]).relayout(&small).unwrap_err();
    assert_eq!(
        err.to_string(),
        "for dimension 0, dimension padding (1) is smaller than the dimension size (2) of the \
         shape; shape: f32[2,3]"
    );
    assert!(Layout::new(&[0]).with_padding(&[-2], PaddingValue::Zero).is_err());
    // Padding to exactly the sizes is allowed (and changes nothing in memory).
    let exact =
        shape!(f32[2, 3]).relayout(&Layout::new(&[1, 0]).with_padding(&[2, 3], PaddingValue::One)?)?;
    assert_eq!(exact.buffer_len(), 6);
    assert_eq!(exact.strides(), vec![3, 1]);
    // A padded shape is not equal to the unpadded one.
    assert_ne!(exact, shape!(f32[2, 3]));
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Text: Display (XLA's HumanStringWithLayout) and FromStr.

#[test]
fn display_is_xla_human_string_with_layout() -> lazy_xla::Result<()> {
    assert_eq!(shape!(f32[2, 3]).to_string(), "f32[2,3]{1,0}");
    assert_eq!(shape!(f32[2, 3]{0, 1}).to_string(), "f32[2,3]{0,1}");
    assert_eq!(shape!(f32[]).to_string(), "f32[]");
    assert_eq!(shape!(pred[7]).to_string(), "pred[7]{0}");
    assert_eq!(shape!(bf16[123, 456, 789]).to_string(), "bf16[123,456,789]{2,1,0}");
    assert_eq!(shape!(f32[2, 3]{0, 1}).human_string(), "f32[2,3]");
    let padded =
        shape!(f32[2, 3]).relayout(&Layout::new(&[0, 1]).with_padding(&[3, 5], PaddingValue::Zero)?)?;
    assert_eq!(padded.to_string(), "f32[2,3]{0,1:pad(3,5)=zero}");
    for t in ElementType::ALL {
        assert_eq!(Shape::new(t, &[1]).to_string(), format!("{t}[1]{{0}}"));
    }
    Ok(())
}

#[test]
fn parse_with_and_without_layout() -> lazy_xla::Result<()> {
    assert_eq!("f32[2,3]".parse::<Shape>()?, shape!(f32[2, 3]{1, 0}));
    assert_eq!("f32[2,3]{0,1}".parse::<Shape>()?, shape!(f32[2, 3]{0, 1}));
    assert_eq!("f32[]".parse::<Shape>()?, shape!(f32[]));
    assert_eq!("f32[]{}".parse::<Shape>()?, shape!(f32[]));
    assert_eq!("pred[0]".parse::<Shape>()?, shape!(pred[0]));
    // From hlo_parser_test.cc's ParseShapeStringWithLayout.
    assert_eq!("f32[123,456]{0,1}".parse::<Shape>()?.to_string(), "f32[123,456]{0,1}");
    // White space between tokens, as XLA's lexer allows.
    assert_eq!(" f32 [ 2 , 3 ] { 0 , 1 } ".parse::<Shape>()?, shape!(f32[2, 3]{0, 1}));
    assert_eq!("s64[4,\t5]\n".parse::<Shape>()?, shape!(s64[4, 5]));
    for t in ElementType::ALL {
        assert_eq!(format!("{t}[2,1]{{0,1}}").parse::<Shape>()?, Shape::with_layout(t, &[2, 1], &[0, 1])?);
    }
    Ok(())
}

#[test]
fn parse_padding_extension() -> lazy_xla::Result<()> {
    let s: Shape = "f32[2,3]{0,1:pad(3,5)=zero}".parse()?;
    assert_eq!(s.dimensions(), &[2, 3]);
    assert_eq!(s.layout().minor_to_major(), &[0, 1]);
    assert_eq!(s.layout().padded_dimensions(), Some(&[3, 5][..]));
    assert_eq!(s.layout().padding_value(), Some(PaddingValue::Zero));
    assert_eq!(s.to_string(), "f32[2,3]{0,1:pad(3,5)=zero}");
    for (text, value) in [
        ("zero", PaddingValue::Zero),
        ("one", PaddingValue::One),
        ("lowest", PaddingValue::Lowest),
        ("highest", PaddingValue::Highest),
    ] {
        let s: Shape = format!("s8[4]{{ 0 : pad( 6 ) = {text} }}").parse()?;
        assert_eq!(s.layout().padding_value(), Some(value));
        assert_eq!(s.to_string(), format!("s8[4]{{0:pad(6)={text}}}"));
    }
    Ok(())
}

/// The parse error of `text`: (offset, expected, found).
fn parse_error(text: &str) -> (usize, String, String) {
    match text.parse::<Shape>() {
        Err(Error::Parse { input, offset, expected, found }) => {
            assert_eq!(input, text);
            (offset, expected, found)
        }
        other => panic!("{text:?} should not parse, got {other:?}"),
    }
}

#[test]
fn parse_errors_point_at_the_culprit() {
    let types = "expected an element type (pred, s8, …, u64, f16, bf16, f32, f64)";
    let cases: &[(&str, usize, &str, &str)] = &[
        // Bad element type.
        ("f33[2]", 0, types, "'f'"),
        ("  float[2]", 2, types, "'f'"),
        ("[2]", 0, types, "'['"),
        ("", 0, types, "end of input"),
        // Missing or broken brackets.
        ("f32", 3, "expected '['", "end of input"),
        ("f32(2)", 3, "expected '['", "'('"),
        ("f32[2,3", 7, "expected ']'", "end of input"),
        ("f32[2 3]", 6, "expected ']'", "'3'"),
        ("f32[2,]", 6, "expected a dimension size", "']'"),
        // A negative (or otherwise non-numeric) dimension.
        ("f32[-1]", 4, "expected a dimension size", "'-'"),
        ("f32[2,-1]", 6, "expected a dimension size", "'-'"),
        ("f32[2,x]", 6, "expected a dimension size", "'x'"),
        ("f32[99999999999999999999]", 4, "expected a dimension size that fits in an int64", "'9'"),
        // Bad layouts.
        ("f32[2,3]{a}", 9, "expected a dimension number", "'a'"),
        ("f32[2,3]{0,1", 12, "expected '}'", "end of input"),
        ("f32[2,3]{0;1}", 10, "expected '}'", "';'"),
        ("f32[2,3]{0,-1}", 11, "expected a dimension number", "'-'"),
        ("f32[2,3]{0,1:tile(2)}", 13, "expected 'pad'", "'t'"),
        ("f32[2,3]{0,1:pad(3,5)}", 21, "expected '='", "'}'"),
        ("f32[2,3]{0,1:pad(3,5)=big}", 22, "expected a padding value (zero, one, lowest, highest)", "'b'"),
        // Trailing garbage.
        ("f32[2,3]x", 8, "expected '{'", "'x'"),
        ("f32[2,3]{0,1}x", 13, "expected the end of the shape", "'x'"),
        ("f32[2,3]{0,1} }", 14, "expected the end of the shape", "'}'"),
        ("f32[] f32[]", 6, "expected '{'", "'f'"),
    ];
    for &(text, offset, expected, found) in cases {
        assert_eq!(parse_error(text), (offset, expected.to_string(), found.to_string()), "parsing {text:?}");
    }
}

#[test]
fn parse_error_message_names_input_offset_and_found() {
    let err = "f32[-1]".parse::<Shape>().unwrap_err();
    assert_eq!(err.to_string(), "cannot parse shape \"f32[-1]\": expected a dimension size at byte 4 ('-')");
    let err = "f32[2,3".parse::<Shape>().unwrap_err();
    assert_eq!(err.to_string(), "cannot parse shape \"f32[2,3\": expected ']' at byte 7 (end of input)");
}

#[test]
fn parse_layout_errors_are_xla_sentences() {
    let err = "f32[2,3]{0}".parse::<Shape>().unwrap_err();
    assert_eq!(
        err,
        Error::InvalidArgument(
            "layout minor_to_major field contains 1 elements, but shape has 2 dimensions: {0}; \
             shape: f32[2,3]"
                .into()
        )
    );
    let err = "f32[2,3]{1,1}".parse::<Shape>().unwrap_err();
    assert_eq!(err.to_string(), "layout minor_to_major field has duplicate values: {1,1}; shape: f32[2,3]");
    let err = "f32[2,3]{0,5}".parse::<Shape>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "layout minor_to_major field has out-of-bounds value: {0,5}; shape: f32[2,3]"
    );
    let err = "f32[2,3]{0,1:pad(1,5)=zero}".parse::<Shape>().unwrap_err();
    assert!(err.to_string().starts_with("for dimension 0, dimension padding (1) is smaller"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// IndexUtil: XLA's golden cases (xla/index_util_test.cc, openxla/xla), ported.
// XLA's test names call {0,1} "row major" and {1,0} "column major" in two of them; the numbers,
// not the names, are what we pin.

/// index_util_test.cc `VectorIndexing`.
#[test]
fn xla_vector_indexing() -> lazy_xla::Result<()> {
    let vector = shape!(f32[100]);
    assert_eq!(vector.linear_index(&[42])?, 42);
    assert_eq!(vector.multi_index(42)?, vec![42]);
    Ok(())
}

/// index_util_test.cc `MatrixIndexingRowMajor` (layout {0,1}: linear = a + b * 10).
#[test]
fn xla_matrix_indexing_0_1() -> lazy_xla::Result<()> {
    let matrix = shape!(f32[10, 20]{0, 1});
    assert_eq!(matrix.linear_index(&[0, 0])?, 0);
    assert_eq!(matrix.linear_index(&[9, 19])?, 199);
    assert_eq!(matrix.linear_index(&[3, 5])?, 53);
    assert_eq!(matrix.multi_index(53)?, vec![3, 5]);
    Ok(())
}

/// index_util_test.cc `MatrixIndexingColumnMajor` (layout {1,0}: linear = a * 20 + b).
#[test]
fn xla_matrix_indexing_1_0() -> lazy_xla::Result<()> {
    let matrix = shape!(f32[10, 20]{1, 0});
    assert_eq!(matrix.linear_index(&[0, 0])?, 0);
    assert_eq!(matrix.linear_index(&[9, 19])?, 199);
    assert_eq!(matrix.linear_index(&[3, 5])?, 65);
    assert_eq!(matrix.multi_index(65)?, vec![3, 5]);
    Ok(())
}

/// index_util_test.cc `ThreeDArrayIndexing210` (linear = a * 20 * 30 + b * 30 + c).
#[test]
fn xla_three_d_array_indexing_210() -> lazy_xla::Result<()> {
    let shape = shape!(f32[10, 20, 30]{2, 1, 0});
    assert_eq!(shape.linear_index(&[3, 5, 7])?, 1957);
    assert_eq!(shape.linear_index(&[8, 15, 27])?, 5277);
    assert_eq!(shape.multi_index(1957)?, vec![3, 5, 7]);
    assert_eq!(shape.multi_index(5277)?, vec![8, 15, 27]);
    Ok(())
}

/// index_util_test.cc `ThreeDArrayIndexing120` (linear = a * 20 * 30 + b + c * 20).
#[test]
fn xla_three_d_array_indexing_120() -> lazy_xla::Result<()> {
    let shape = shape!(f32[10, 20, 30]{1, 2, 0});
    assert_eq!(shape.linear_index(&[3, 5, 7])?, 1945);
    assert_eq!(shape.linear_index(&[8, 15, 27])?, 5355);
    assert_eq!(shape.multi_index(1945)?, vec![3, 5, 7]);
    assert_eq!(shape.multi_index(5355)?, vec![8, 15, 27]);
    Ok(())
}

/// index_util_test.cc `FourDArrayIndexing3210` (linear = a*20*30*40 + b*30*40 + c*40 + d).
#[test]
fn xla_four_d_array_indexing_3210() -> lazy_xla::Result<()> {
    let shape = shape!(f32[10, 20, 30, 40]{3, 2, 1, 0});
    assert_eq!(shape.linear_index(&[3, 5, 7, 9])?, 78289);
    assert_eq!(shape.linear_index(&[8, 15, 27, 33])?, 211113);
    assert_eq!(shape.multi_index(211113)?, vec![8, 15, 27, 33]);
    Ok(())
}

/// index_util_test.cc `LinearToMultiToLinear`: a shape of 1,440,000,000 elements, three
/// layouts, six linear indices; linear → multi → linear is the identity.
#[test]
fn xla_linear_to_multi_to_linear() -> lazy_xla::Result<()> {
    let linear_indexes = [0, 1439999999, 1145567336, 43883404, 617295214, 1117613654];
    let orders: [[i64; 7]; 3] = [[6, 5, 4, 3, 2, 1, 0], [0, 1, 2, 3, 4, 5, 6], [4, 5, 1, 2, 6, 0, 3]];
    for order in orders {
        let shape = Shape::with_layout(ElementType::F32, &[10, 20, 30, 40, 30, 20, 10], &order)?;
        assert_eq!(shape.element_count(), 1_440_000_000);
        for linear in linear_indexes {
            let multi = shape.multi_index(linear)?;
            assert_eq!(shape.linear_index(&multi)?, linear, "layout {order:?}");
        }
    }
    Ok(())
}

/// index_util_test.cc `BumpIndices2x2`: logical iteration bumps the last dimension first,
/// whatever the layout; `to_vec` walks elements in that order.
#[test]
fn xla_bump_indices_order() -> lazy_xla::Result<()> {
    for layout in [[1, 0], [0, 1]] {
        let shape = Shape::with_layout(ElementType::S32, &[2, 2], &layout)?;
        // Values given in BumpIndices order: {0,0}, {0,1}, {1,0}, {1,1}, tagged a*10+b.
        let literal = Literal::from_vec(&shape, vec![0, 1, 10, 11])?;
        let mut memory = vec![-1i32; 4];
        for (a, b) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            memory[shape.linear_index(&[a, b])? as usize] = (a * 10 + b) as i32;
        }
        assert_eq!(literal.memory::<i32>()?, memory.as_slice(), "layout {layout:?}");
        assert_eq!(literal.to_vec::<i32>()?, vec![0, 1, 10, 11]);
    }
    Ok(())
}

#[test]
fn index_errors() -> lazy_xla::Result<()> {
    let s = shape!(f32[2, 3]);
    let err = s.linear_index(&[1]).unwrap_err();
    assert_eq!(err.to_string(), "index [1] has 1 entries but shape f32[2,3]{1,0} has rank 2");
    let err = s.linear_index(&[0, 3]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "index [0,3] is out of bounds in dimension 1 (size 3) of shape f32[2,3]{1,0}"
    );
    assert!(s.linear_index(&[-1, 0]).is_err());
    assert!(s.multi_index(6).is_err());
    assert!(s.multi_index(-1).is_err());
    // A scalar has one element, at 0.
    assert_eq!(shape!(f32[]).linear_index(&[])?, 0);
    assert_eq!(shape!(f32[]).multi_index(0)?, Vec::<i64>::new());
    assert!(shape!(f32[]).multi_index(1).is_err());
    // Padding positions are not elements.
    let padded: Shape = "f32[2,3]{0,1:pad(3,5)=zero}".parse()?;
    assert_eq!(padded.multi_index(4)?, vec![1, 1]);
    let err = padded.multi_index(2).unwrap_err();
    assert!(err.to_string().contains("holds padding"), "{err}");
    assert!(padded.multi_index(9).is_err()); // column 3 is padding
    assert!(padded.multi_index(14).is_err());
    assert!(padded.multi_index(15).is_err()); // past the buffer
                                              // Empty shapes have no valid index at all.
    assert!(shape!(f32[2, 0]).linear_index(&[0, 0]).is_err());
    assert!(shape!(f32[2, 0]).multi_index(0).is_err());
    Ok(())
}

#[test]
fn strides_of_the_seed() -> lazy_xla::Result<()> {
    assert_eq!(shape!(f32[2, 3]).strides(), vec![3, 1]);
    assert_eq!(shape!(f32[2, 3]{0, 1}).strides(), vec![1, 2]);
    assert_eq!(shape!(f32[10, 20, 30]{1, 2, 0}).strides(), vec![600, 1, 20]);
    assert_eq!("f32[2,3]{0,1:pad(3,5)=zero}".parse::<Shape>()?.strides(), vec![1, 3]);
    assert_eq!("f32[2,3]{0,1:pad(3,5)=zero}".parse::<Shape>()?.padded_sizes(), &[3, 5]);
    assert_eq!(shape!(f32[2, 3]).padded_sizes(), &[2, 3]);
    assert_eq!(shape!(f32[]).strides(), Vec::<i64>::new());
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Properties.

const PADDING_VALUES: [PaddingValue; 4] =
    [PaddingValue::Zero, PaddingValue::One, PaddingValue::Lowest, PaddingValue::Highest];

/// A random shape: rank 0–5, sizes 0–5, any element type, a random minor_to_major and maybe
/// a padding of 0–2 extra per dimension.
fn any_shape() -> impl Strategy<Value = Shape> {
    (0usize..=5)
        .prop_flat_map(|rank| {
            (
                prop::sample::select(ElementType::ALL.to_vec()),
                prop::collection::vec(0i64..=5, rank),
                Just((0..rank as i64).collect::<Vec<_>>()).prop_shuffle(),
                prop::option::of((
                    prop::collection::vec(0i64..=2, rank),
                    prop::sample::select(PADDING_VALUES.to_vec()),
                )),
            )
        })
        .prop_map(|(element_type, dims, minor_to_major, padding)| {
            let layout = match padding {
                None => Layout::new(&minor_to_major),
                Some((extra, value)) => {
                    let padded: Vec<i64> = dims.iter().zip(&extra).map(|(d, e)| d + e).collect();
                    match Layout::new(&minor_to_major).with_padding(&padded, value) {
                        Ok(layout) => layout,
                        Err(e) => panic!("valid padding by construction: {e}"),
                    }
                }
            };
            match Shape::try_new(element_type, &dims).and_then(|s| s.relayout(&layout)) {
                Ok(shape) => shape,
                Err(e) => panic!("valid shape by construction: {e}"),
            }
        })
}

/// Every multidimensional index of `dims`, in logical row-major order.
fn all_indices(dims: &[i64]) -> Vec<Vec<i64>> {
    let mut out = vec![vec![]];
    for &size in dims {
        out = out
            .into_iter()
            .flat_map(|prefix| (0..size).map(move |i| [prefix.clone(), vec![i]].concat()))
            .collect();
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn multi_index_inverts_linear_index(shape in any_shape()) {
        let mut seen = vec![false; shape.buffer_len() as usize];
        let indices = all_indices(shape.dimensions());
        prop_assert_eq!(indices.len() as i64, shape.element_count());
        for index in indices {
            let linear = shape.linear_index(&index)?;
            prop_assert!((0..shape.buffer_len()).contains(&linear));
            prop_assert!(!seen[linear as usize], "two elements at {}", linear);
            seen[linear as usize] = true;
            prop_assert_eq!(shape.multi_index(linear)?, index);
        }
        // Every other position of the buffer is padding, and multi_index says so.
        for (linear, element) in seen.iter().enumerate() {
            prop_assert_eq!(shape.multi_index(linear as i64).is_ok(), *element);
        }
        prop_assert!(shape.multi_index(shape.buffer_len()).is_err());
    }

    #[test]
    fn strides_agree_with_linear_index(shape in any_shape()) {
        let strides = shape.strides();
        let sizes = shape.padded_sizes().to_vec();
        let order = shape.layout().minor_to_major().to_vec();
        // The minor dimension has stride 1; each next one the stride times the padded size.
        let mut expected = 1;
        for &d in &order {
            prop_assert_eq!(strides[d as usize], expected);
            expected *= sizes[d as usize];
        }
        prop_assert_eq!(expected, shape.buffer_len());
        for index in all_indices(shape.dimensions()) {
            let dot: i64 = index.iter().zip(&strides).map(|(i, s)| i * s).sum();
            prop_assert_eq!(shape.linear_index(&index)?, dot);
        }
    }

    #[test]
    fn display_and_parse_round_trip(shape in any_shape()) {
        let text = shape.to_string();
        let parsed: Shape = text.parse()?;
        prop_assert_eq!(&parsed, &shape);
        prop_assert_eq!(&parsed.to_string(), &text);
        // Spaces between the tokens change nothing.
        let spaced = text.replace(',', " , ").replace('[', " [ ").replace('{', " { ");
        prop_assert_eq!(spaced.parse::<Shape>()?, shape);
    }

    #[test]
    fn default_layout_shapes_parse_without_layout(shape in any_shape()) {
        let default = shape.with_default_layout();
        prop_assert_eq!(default.human_string().parse::<Shape>()?, default.clone());
        prop_assert!(default.layout().is_default());
        prop_assert_eq!(default.buffer_len(), default.element_count());
    }
}
