//! Literals: values in and out in logical order, memory in the layout's order (padding
//! included), ndarray and approx interop, and XLA's `Literal::ToString`.

use approx::{
    assert_abs_diff_eq, assert_abs_diff_ne, assert_relative_eq, assert_relative_ne, AbsDiffEq, RelativeEq,
};
use half::{bf16, f16};
use lazy_xla::{shape, ElementType, Error, Layout, Literal, NativeType, PaddingValue, Shape};
use ndarray::{arr2, arr3, s, Array, ArrayD, Axis, IxDyn};
use proptest::prelude::*;

/// The seed's padded column-major layout: `{0,1:pad(3,5)=value}`.
fn padded_column_major(value: PaddingValue) -> lazy_xla::Result<Layout> {
    Layout::new(&[0, 1]).with_padding(&[3, 5], value)
}

/// `[a, b, c, d, e, f]` of a [2,3] literal laid out `{0,1:pad(3,5)}`, `p` in the padding.
fn seed_padded_memory<T: Copy>(v: &[T], p: T) -> Vec<T> {
    vec![v[0], v[3], p, v[1], v[4], p, v[2], v[5], p, p, p, p, p, p, p]
}

/// Every element type except `t`.
fn other_types(t: ElementType) -> impl Iterator<Item = ElementType> {
    ElementType::ALL.into_iter().filter(move |&other| other != t)
}

/// The same tests for every element type: `$module` holds them, `$T` is the Rust type,
/// `$values` six distinct values of it (the seed's `a b c d e f`).
macro_rules! per_element_type {
    ($($module:ident: $T:ty = $values:expr;)*) => {$(
        mod $module {
            use super::*;

            fn values() -> Vec<$T> {
                $values.to_vec()
            }

            fn shape_2x3(minor_to_major: &[i64]) -> lazy_xla::Result<Shape> {
                Shape::with_layout(<$T as NativeType>::ELEMENT_TYPE, &[2, 3], minor_to_major)
            }

            #[test]
            fn row_major_memory_is_the_values() -> lazy_xla::Result<()> {
                let literal = Literal::from_vec(&shape_2x3(&[1, 0])?, values())?;
                assert_eq!(literal.element_type(), <$T as NativeType>::ELEMENT_TYPE);
                assert_eq!(literal.shape().dimensions(), &[2, 3]);
                assert_eq!(literal.to_vec::<$T>()?, values());
                assert_eq!(literal.memory::<$T>()?, values().as_slice());
                Ok(())
            }

            #[test]
            fn column_major_memory_is_a_d_b_e_c_f() -> lazy_xla::Result<()> {
                let v = values();
                let literal = Literal::from_vec(&shape_2x3(&[0, 1])?, v.clone())?;
                assert_eq!(literal.to_vec::<$T>()?, v);
                assert_eq!(literal.memory::<$T>()?, &[v[0], v[3], v[1], v[4], v[2], v[5]]);
                assert_eq!(literal.get::<$T>(&[1, 2])?, v[5]);
                assert_eq!(literal.get::<$T>(&[0, 1])?, v[1]);
                Ok(())
            }

            #[test]
            fn padding_is_filled_with_the_padding_value() -> lazy_xla::Result<()> {
                let v = values();
                let row_major = Literal::from_vec(&shape_2x3(&[1, 0])?, v.clone())?;
                for (value, fill) in [
                    (PaddingValue::Zero, <$T as NativeType>::ZERO),
                    (PaddingValue::One, <$T as NativeType>::ONE),
                    (PaddingValue::Lowest, <$T as NativeType>::LOWEST),
                    (PaddingValue::Highest, <$T as NativeType>::HIGHEST),
                ] {
                    let padded = row_major.relayout(&padded_column_major(value)?)?;
                    assert_eq!(padded.memory::<$T>()?, seed_padded_memory(&v, fill).as_slice(), "{value}");
                    assert_eq!(padded.to_vec::<$T>()?, v);
                    // from_vec into the padded shape directly gives the same buffer.
                    let direct = Literal::from_vec(padded.shape(), v.clone())?;
                    assert_eq!(direct.memory::<$T>()?, padded.memory::<$T>()?);
                    assert_eq!(padded.relayout(&Layout::new(&[1, 0]))?, row_major);
                }
                Ok(())
            }

            #[test]
            fn scalar_vec1_zeros_and_ndarray() -> lazy_xla::Result<()> {
                let v = values();
                let scalar = Literal::scalar(v[4]);
                assert_eq!(scalar.shape(), &Shape::scalar(<$T as NativeType>::ELEMENT_TYPE));
                assert_eq!(scalar.to_vec::<$T>()?, vec![v[4]]);
                let vector = Literal::vec1(&v);
                assert_eq!(vector.shape().dimensions(), &[6]);
                assert_eq!(vector.to_vec::<$T>()?, v);
                let zeros = Literal::zeros(&shape_2x3(&[0, 1])?)?;
                assert_eq!(zeros.to_vec::<$T>()?, vec![<$T as NativeType>::ZERO; 6]);
                let literal = Literal::from_vec(&shape_2x3(&[0, 1])?, v.clone())?;
                let array = literal.to_ndarray::<$T>()?;
                assert_eq!(array.shape(), &[2, 3]);
                assert_eq!(array[[1, 0]], v[3]);
                assert_eq!(array.iter().copied().collect::<Vec<_>>(), v);
                assert_eq!(Literal::from(array), literal.relayout(&Layout::new(&[1, 0]))?);
                Ok(())
            }

            #[test]
            fn wrong_element_type_is_an_error() -> lazy_xla::Result<()> {
                let mine = <$T as NativeType>::ELEMENT_TYPE;
                let literal = Literal::from_vec(&shape_2x3(&[1, 0])?, values())?;
                for other in other_types(mine) {
                    let shape = Shape::new(other, &[2, 3]);
                    let mismatch = Error::ElementTypeMismatch { expected: other, actual: mine };
                    assert_eq!(Literal::from_vec(&shape, values()).unwrap_err(), mismatch);
                    // Reading as the wrong type fails the same way, from the other side.
                    let zeros = Literal::zeros(&shape)?;
                    assert_eq!(zeros.to_vec::<$T>().unwrap_err(), mismatch);
                    assert_eq!(zeros.memory::<$T>().unwrap_err(), mismatch);
                    assert_eq!(zeros.to_ndarray::<$T>().unwrap_err(), mismatch);
                    assert_eq!(zeros.get::<$T>(&[0, 0]).unwrap_err(), mismatch);
                }
                assert_eq!(literal.to_vec::<$T>()?, values());
                Ok(())
            }

            #[test]
            fn wrong_value_count_is_an_error() -> lazy_xla::Result<()> {
                let mut v = values();
                v.pop();
                let err = Literal::from_vec(&shape_2x3(&[0, 1])?, v).unwrap_err();
                let t = <$T as NativeType>::ELEMENT_TYPE;
                assert_eq!(
                    err,
                    Error::InvalidArgument(format!(
                        "5 values given for shape {t}[2,3]{{0,1}}, which has 6 elements"
                    ))
                );
                let mut v = values();
                v.extend(values());
                assert!(Literal::from_vec(&shape_2x3(&[1, 0])?, v).is_err());
                Ok(())
            }
        }
    )*};
}

per_element_type! {
    pred_literals: bool = [true, false, false, true, true, false];
    s8_literals: i8 = [-128i8, -1, 0, 1, 2, 127];
    s16_literals: i16 = [-32768i16, -7, 0, 3, 300, 32767];
    s32_literals: i32 = [i32::MIN, -70000, 0, 3, 70000, i32::MAX];
    s64_literals: i64 = [i64::MIN, -1 << 40, 0, 3, 1 << 40, i64::MAX];
    u8_literals: u8 = [0u8, 1, 2, 3, 200, 255];
    u16_literals: u16 = [0u16, 1, 2, 3, 60000, 65535];
    u32_literals: u32 = [0u32, 1, 2, 3, 1 << 31, u32::MAX];
    u64_literals: u64 = [0u64, 1, 2, 3, 1 << 63, u64::MAX];
    f16_literals: f16 = [
        f16::from_f32(-1.5), f16::from_f32(0.5), f16::ZERO, f16::ONE, f16::from_f32(1000.0), f16::MAX,
    ];
    bf16_literals: bf16 = [
        bf16::from_f32(-1.5), bf16::from_f32(0.5), bf16::ZERO, bf16::ONE, bf16::from_f32(1e30), bf16::MAX,
    ];
    f32_literals: f32 = [-1.5f32, 0.1, 0.0, 1.0, 1e30, f32::MAX];
    f64_literals: f64 = [-1.5f64, 0.1, 0.0, 1.0, 1e300, f64::MAX];
}

// ---------------------------------------------------------------------------------------------
// Padding values spelled out, as xla_data.proto's PaddingValue means them.

#[test]
fn padding_values_for_f32_are_zero_one_minus_inf_plus_inf() -> lazy_xla::Result<()> {
    let literal = Literal::from_vec(&shape!(f32[2, 3]), vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    for (value, fill) in [
        (PaddingValue::Zero, 0.0),
        (PaddingValue::One, 1.0),
        (PaddingValue::Lowest, f32::NEG_INFINITY),
        (PaddingValue::Highest, f32::INFINITY),
    ] {
        let padded = literal.relayout(&padded_column_major(value)?)?;
        let memory = padded.memory::<f32>()?;
        assert_eq!(memory.len(), 15);
        assert_eq!(memory[2], fill);
        assert_eq!(memory[14], fill);
        assert_eq!(memory[..2], [1.0, 4.0]);
    }
    Ok(())
}

#[test]
fn padding_values_for_s8_and_pred() -> lazy_xla::Result<()> {
    let s8 = Literal::from_vec(&shape!(s8[2, 3]), vec![1i8, 2, 3, 4, 5, 6])?;
    let lowest = s8.relayout(&padded_column_major(PaddingValue::Lowest)?)?;
    assert_eq!(
        lowest.memory::<i8>()?,
        &[1, 4, -128, 2, 5, -128, 3, 6, -128, -128, -128, -128, -128, -128, -128]
    );
    let highest = s8.relayout(&padded_column_major(PaddingValue::Highest)?)?;
    assert_eq!(highest.memory::<i8>()?[8..], [127; 7]);

    let pred = Literal::from_vec(&shape!(pred[2, 3]), vec![true; 6])?;
    let lowest = pred.relayout(&padded_column_major(PaddingValue::Lowest)?)?;
    assert_eq!(lowest.memory::<bool>()?.iter().filter(|&&b| b).count(), 6);
    assert!(!lowest.memory::<bool>()?[2]);
    let zero = Literal::from_vec(&shape!(pred[2, 3]), vec![false; 6])?;
    let highest = zero.relayout(&padded_column_major(PaddingValue::Highest)?)?;
    assert_eq!(highest.memory::<bool>()?.iter().filter(|&&b| b).count(), 9);
    assert!(highest.memory::<bool>()?[2]);
    Ok(())
}

#[test]
fn zeros_of_a_padded_shape_fill_the_padding() -> lazy_xla::Result<()> {
    let shape: Shape = "s32[2,3]{1,0:pad(3,4)=one}".parse()?;
    let zeros = Literal::zeros(&shape)?;
    assert_eq!(zeros.memory::<i32>()?, &[0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1]);
    assert_eq!(zeros.to_vec::<i32>()?, vec![0; 6]);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Relayout.

#[test]
fn relayout_changes_memory_not_values() -> lazy_xla::Result<()> {
    let values: Vec<i32> = (0..24).collect();
    let literal = Literal::from_vec(&shape!(s32[2, 3, 4]), values.clone())?;
    let other = literal.relayout(&Layout::new(&[0, 2, 1]))?;
    assert_eq!(other.shape(), &shape!(s32[2, 3, 4]{0, 2, 1}));
    assert_eq!(other.to_vec::<i32>()?, values);
    assert_ne!(other.memory::<i32>()?, literal.memory::<i32>()?);
    // Dimension 0 is minor, then 2: memory starts with [0,0,0], [1,0,0], [0,0,1], [1,0,1].
    assert_eq!(other.memory::<i32>()?[..4], [0, 12, 1, 13]);
    // Equality includes the layout.
    assert_ne!(other, literal);
    assert_eq!(other.relayout(&Layout::new(&[2, 1, 0]))?, literal);
    // A layout of the wrong rank is an error.
    let err = literal.relayout(&Layout::new(&[1, 0])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "layout minor_to_major field contains 2 elements, but shape has 3 dimensions: {1,0}; \
         shape: s32[2,3,4]"
    );
    Ok(())
}

#[test]
fn empty_literals() -> lazy_xla::Result<()> {
    let empty = Literal::from_vec::<f32>(&shape!(f32[2, 0]{0, 1}), vec![])?;
    assert_eq!(empty.to_vec::<f32>()?, Vec::<f32>::new());
    assert_eq!(empty.memory::<f32>()?.len(), 0);
    let padded = empty.relayout(&Layout::new(&[1, 0]).with_padding(&[2, 2], PaddingValue::One)?)?;
    assert_eq!(padded.memory::<f32>()?, &[1.0; 4]);
    assert_eq!(padded.to_ndarray::<f32>()?.shape(), &[2, 0]);
    Ok(())
}

/// A random [dims] with a random layout and maybe a padding of 0–2 per dimension.
fn any_layout_of(rank: usize) -> impl Strategy<Value = (Vec<i64>, Option<(Vec<i64>, PaddingValue)>)> {
    (
        Just((0..rank as i64).collect::<Vec<_>>()).prop_shuffle(),
        prop::option::of((
            prop::collection::vec(0i64..=2, rank),
            prop::sample::select(vec![
                PaddingValue::Zero,
                PaddingValue::One,
                PaddingValue::Lowest,
                PaddingValue::Highest,
            ]),
        )),
    )
}

/// The layout of `dims` that `any_layout_of` described.
fn make_layout(dims: &[i64], (order, padding): &(Vec<i64>, Option<(Vec<i64>, PaddingValue)>)) -> Layout {
    let layout = Layout::new(order);
    match padding {
        None => layout,
        Some((extra, value)) => {
            let padded: Vec<i64> = dims.iter().zip(extra).map(|(d, e)| d + e).collect();
            match layout.with_padding(&padded, *value) {
                Ok(layout) => layout,
                Err(e) => panic!("valid padding by construction: {e}"),
            }
        }
    }
}

fn dims_and_two_layouts() -> impl Strategy<Value = (Vec<i64>, Layout, Layout)> {
    (0usize..=4)
        .prop_flat_map(|rank| {
            (prop::collection::vec(0i64..=4, rank), any_layout_of(rank), any_layout_of(rank))
        })
        .prop_map(|(dims, a, b)| {
            let (la, lb) = (make_layout(&dims, &a), make_layout(&dims, &b));
            (dims, la, lb)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn relayout_round_trips((dims, from, to) in dims_and_two_layouts()) {
        let shape = Shape::new(ElementType::F32, &dims).relayout(&from)?;
        let values: Vec<f32> = (0..shape.element_count()).map(|v| v as f32 + 0.5).collect();
        let literal = Literal::from_vec(&shape, values.clone())?;
        prop_assert_eq!(literal.to_vec::<f32>()?, values.clone());
        let moved = literal.relayout(&to)?;
        prop_assert_eq!(moved.shape().layout(), &to);
        prop_assert_eq!(moved.to_vec::<f32>()?, values.clone());
        prop_assert_eq!(moved.memory::<f32>()?.len() as i64, moved.shape().buffer_len());
        // Each element sits at its linear index; every other slot holds the padding value.
        let fill = match to.padding_value() {
            None | Some(PaddingValue::Zero) => 0.0,
            Some(PaddingValue::One) => 1.0,
            Some(PaddingValue::Lowest) => f32::NEG_INFINITY,
            Some(PaddingValue::Highest) => f32::INFINITY,
        };
        let memory = moved.memory::<f32>()?;
        for (linear, &slot) in memory.iter().enumerate() {
            match moved.shape().multi_index(linear as i64) {
                Ok(index) => prop_assert_eq!(slot, moved.get::<f32>(&index)?),
                Err(_) => prop_assert_eq!(slot, fill),
            }
        }
        let back = moved.relayout(&from)?;
        prop_assert_eq!(&back, &literal);
        prop_assert_eq!(back.memory::<f32>()?, literal.memory::<f32>()?);
        // Different layouts, same values: approximately equal.
        prop_assert!(moved.abs_diff_eq(&literal, 0.0));
        prop_assert_eq!(moved.to_ndarray::<f32>()?, literal.to_ndarray::<f32>()?);
    }
}

// ---------------------------------------------------------------------------------------------
// ndarray, both ways.

#[test]
fn from_standard_ndarray() -> lazy_xla::Result<()> {
    let literal = Literal::from(arr2(&[[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]));
    assert_eq!(literal.shape(), &shape!(f32[2, 3]));
    assert_eq!(literal.memory::<f32>()?, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let cube = Literal::from(arr3(&[[[1i32, 2], [3, 4]], [[5, 6], [7, 8]]]));
    assert_eq!(cube.shape(), &shape!(s32[2, 2, 2]));
    assert_eq!(cube.to_vec::<i32>()?, (1..=8).collect::<Vec<_>>());
    let scalar = Literal::from(ndarray::arr0(2.5f64));
    assert_eq!(scalar, Literal::scalar(2.5f64));
    let dynamic = Literal::from(
        ArrayD::from_shape_vec(IxDyn(&[3]), vec![1u8, 2, 3])
            .map_err(|e| Error::InvalidArgument(e.to_string()))?,
    );
    assert_eq!(dynamic, Literal::vec1(&[1u8, 2, 3]));
    Ok(())
}

#[test]
fn from_transposed_ndarray() -> lazy_xla::Result<()> {
    let a = arr2(&[[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    let transposed = a.t().to_owned();
    assert!(!transposed.is_standard_layout(), "the test needs a non-standard-strided array");
    let literal = Literal::from(transposed);
    assert_eq!(literal.shape(), &shape!(f32[3, 2]));
    assert_eq!(literal.to_vec::<f32>()?, vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    Ok(())
}

#[test]
fn from_stepped_and_reversed_ndarrays() -> lazy_xla::Result<()> {
    let base = Array::from_shape_vec((3, 4), (0..12).collect::<Vec<i64>>())
        .map_err(|e| Error::InvalidArgument(e.to_string()))?;
    // An owned array whose strides step over every other column.
    let mut stepped = base.clone();
    stepped.slice_collapse(s![.., ..;2]);
    assert_eq!(stepped.strides(), &[4, 2]);
    let literal = Literal::from(stepped);
    assert_eq!(literal.shape(), &shape!(s64[3, 2]));
    assert_eq!(literal.to_vec::<i64>()?, vec![0, 2, 4, 6, 8, 10]);
    // A copy of a stepped view with a negative step.
    let view = base.slice(s![..;-2, 1..;2]).to_owned();
    assert_eq!(Literal::from(view).to_vec::<i64>()?, vec![9, 11, 1, 3]);
    // An owned array with a reversed axis (negative stride).
    let mut reversed = base;
    reversed.invert_axis(Axis(0));
    let literal = Literal::from(reversed);
    assert_eq!(literal.to_vec::<i64>()?[..4], [8, 9, 10, 11]);
    assert_eq!(literal.to_vec::<i64>()?[8..], [0, 1, 2, 3]);
    Ok(())
}

#[test]
fn to_ndarray_of_any_layout() -> lazy_xla::Result<()> {
    let expected = arr2(&[[1i32, 2, 3], [4, 5, 6]]).into_dyn();
    for text in ["s32[2,3]", "s32[2,3]{0,1}", "s32[2,3]{0,1:pad(3,5)=highest}", "s32[2,3]{1,0:pad(2,7)=one}"]
    {
        let shape: Shape = text.parse()?;
        let literal = Literal::from_vec(&shape, vec![1, 2, 3, 4, 5, 6])?;
        let array = literal.to_ndarray::<i32>()?;
        assert_eq!(array, expected, "{text}");
        assert!(array.is_standard_layout());
        assert_eq!(Literal::from(array).relayout(shape.layout())?, literal);
    }
    assert_eq!(Literal::scalar(7i16).to_ndarray::<i16>()?, ndarray::arr0(7i16).into_dyn());
    assert!(Literal::scalar(7i16).to_ndarray::<i32>().is_err());
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// approx.

#[test]
fn approx_comparisons() -> lazy_xla::Result<()> {
    let a = Literal::from_vec(&shape!(f32[2, 2]), vec![1.0f32, 2.0, 3.0, 4.0])?;
    let near = Literal::from_vec(&shape!(f32[2, 2]), vec![1.0f32, 2.0, 3.0, 4.0 + 1e-6])?;
    assert_abs_diff_eq!(a, near, epsilon = 1e-5);
    assert_abs_diff_ne!(a, near, epsilon = 1e-7);
    assert_relative_eq!(a, near, max_relative = 1e-5);
    assert_relative_ne!(a, near, epsilon = 0.0, max_relative = 1e-8);
    assert_ne!(a, near);
    // Different layouts, same values: approximately equal, but not `==`.
    let column_major = a.relayout(&Layout::new(&[0, 1]))?;
    assert_abs_diff_eq!(a, column_major, epsilon = 0.0);
    assert_relative_eq!(column_major, near, max_relative = 1e-5);
    assert_ne!(a, column_major);
    let padded = a.relayout(&Layout::new(&[0, 1]).with_padding(&[3, 3], PaddingValue::Highest)?)?;
    assert_abs_diff_eq!(padded, a, epsilon = 0.0);
    // Different dimensions (even with the same values), or element types, never compare equal.
    let flat = Literal::vec1(&[1.0f32, 2.0, 3.0, 4.0]);
    assert!(!a.abs_diff_eq(&flat, 1.0));
    assert!(!a.relative_eq(&flat, 1.0, 1.0));
    let wide = Literal::from_vec(&shape!(f64[2, 2]), vec![1.0f64, 2.0, 3.0, 4.0])?;
    assert!(!a.abs_diff_eq(&wide, 1.0));
    // Infinities and NaNs compare equal to themselves.
    let special = Literal::vec1(&[f64::INFINITY, f64::NAN, f64::NEG_INFINITY]);
    assert_abs_diff_eq!(special, special.clone(), epsilon = 0.0);
    assert_relative_eq!(special, special.clone());
    assert!(!special.abs_diff_eq(&Literal::vec1(&[f64::INFINITY, 0.0, f64::NEG_INFINITY]), 1e300));
    // Integers compare through f64.
    assert_abs_diff_eq!(Literal::vec1(&[1i32, 5]), Literal::vec1(&[2i32, 5]), epsilon = 1.0);
    assert_abs_diff_ne!(Literal::vec1(&[1i32, 5]), Literal::vec1(&[3i32, 5]), epsilon = 1.0);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Display: XLA's Literal::ToString.

#[test]
fn display_rank_0_and_1() -> lazy_xla::Result<()> {
    assert_eq!(Literal::scalar(7.0f32).to_string(), "f32[] 7");
    assert_eq!(Literal::scalar(-3i64).to_string(), "s64[] -3");
    assert_eq!(Literal::scalar(true).to_string(), "pred[] true");
    assert_eq!(Literal::vec1(&[1.0f32, 2.0, 3.0]).to_string(), "f32[3] {1, 2, 3}");
    assert_eq!(Literal::vec1(&[5u8]).to_string(), "u8[1] {5}");
    assert_eq!(Literal::vec1::<i32>(&[]).to_string(), "s32[0] {}");
    // XLA's literal.cc: "We display predicates as 0s and 1s so that the string is more dense"
    // (arrays only; a pred scalar goes through GetAsString and prints true/false).
    assert_eq!(Literal::vec1(&[true, false]).to_string(), "pred[2] {1, 0}");
    Ok(())
}

#[test]
fn display_rank_2_and_3() -> lazy_xla::Result<()> {
    let m = Literal::from_vec(&shape!(f32[2, 3]), vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    assert_eq!(m.to_string(), "f32[2,3] {\n  { 1, 2, 3 },\n  { 4, 5, 6 }\n}");
    // The layout changes nothing in the text (XLA prints the shape without it).
    assert_eq!(m.relayout(&Layout::new(&[0, 1]))?.to_string(), m.to_string());
    let p = Literal::from_vec(&shape!(pred[2, 2]), vec![true, false, false, true])?;
    assert_eq!(p.to_string(), "pred[2,2] {\n  { 1, 0 },\n  { 0, 1 }\n}");
    let column = Literal::from_vec(&shape!(s32[3, 1]), vec![1, 2, 3])?;
    assert_eq!(column.to_string(), "s32[3,1] {\n  {1},\n  {2},\n  {3}\n}");
    let cube = Literal::from_vec(&shape!(s32[2, 1, 3]), vec![1, 2, 3, 4, 5, 6])?;
    assert_eq!(cube.to_string(), "s32[2,1,3] {\n{\n  { 1, 2, 3 }\n},\n{\n  { 4, 5, 6 }\n}\n}");
    Ok(())
}

#[test]
fn display_floats_as_xla_does() {
    let values = Literal::vec1(&[0.1f32, 1e10, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -0.5, 1.0 / 3.0]);
    assert_eq!(values.to_string(), "f32[7] {0.1, 1e+10, inf, -inf, nan, -0.5, 0.333333343}");
    let doubles = Literal::vec1(&[0.1f64, 1e10, 1e-5, 123456.0, 1234567.0]);
    assert_eq!(doubles.to_string(), "f64[5] {0.1, 10000000000, 1e-05, 123456, 1234567}");
    // Half types print with max_digits10 (f16 5, bf16 4), as XLA's GenericRoundTripFpToString.
    let halves = Literal::vec1(&[f16::from_f32(0.1), f16::from_f32(0.5), f16::INFINITY, f16::NAN]);
    assert_eq!(halves.to_string(), "f16[4] {0.099976, 0.5, inf, nan}");
    let brains =
        Literal::vec1(&[bf16::from_f32(0.1), bf16::from_f32(2.0), bf16::from_f32(1e10), bf16::NEG_INFINITY]);
    assert_eq!(brains.to_string(), "bf16[4] {0.1001, 2, 9.999e+09, -inf}");
}
