//! `shape!` with dimension expressions: any integer expression, converted with `as i64`.

use lazy_xla::{shape, ElementType, Shape};

#[test]
fn dimensions_may_be_expressions() -> lazy_xla::Result<()> {
    let n: usize = 5;
    let m: i32 = 2;
    let s = shape!(f32[n, 4]);
    assert_eq!(s, Shape::new(ElementType::F32, &[5, 4]));
    assert_eq!(s.to_string(), "f32[5,4]{1,0}");
    let t = shape!(f32[n * 2, m + 1]{0, 1});
    assert_eq!(t, Shape::with_layout(ElementType::F32, &[10, 3], &[0, 1])?);
    assert_eq!(t.to_string(), "f32[10,3]{0,1}");
    let dims = [7u8, 9];
    let u = shape!(u8[dims[0], dims[1] - 1, 1]{2, 0, 1});
    assert_eq!(u.to_string(), "u8[7,8,1]{2,0,1}");
    Ok(())
}

#[test]
fn literal_shapes() {
    assert_eq!(shape!(s32[]), Shape::scalar(ElementType::S32));
    assert_eq!(shape!(s32[]).to_string(), "s32[]");
    assert_eq!(shape!(pred[2, 3]), Shape::new(ElementType::Pred, &[2, 3]));
    assert_eq!(shape!(bf16[1, 2, 3, 4]).layout().minor_to_major(), &[3, 2, 1, 0]);
    // A trailing comma is allowed in both lists.
    assert_eq!(shape!(f64[2, 3,]{0, 1,}).to_string(), "f64[2,3]{0,1}");
    for (built, name) in [
        (shape!(pred[1]), "pred"),
        (shape!(s8[1]), "s8"),
        (shape!(s16[1]), "s16"),
        (shape!(s32[1]), "s32"),
        (shape!(s64[1]), "s64"),
        (shape!(u8[1]), "u8"),
        (shape!(u16[1]), "u16"),
        (shape!(u32[1]), "u32"),
        (shape!(u64[1]), "u64"),
        (shape!(f16[1]), "f16"),
        (shape!(bf16[1]), "bf16"),
        (shape!(f32[1]), "f32"),
        (shape!(f64[1]), "f64"),
    ] {
        assert_eq!(built.element_type().to_string(), name);
    }
}

#[test]
#[should_panic(expected = "shape!: shape's dimensions must not be < 0; dimension at index 0 was -3")]
fn a_negative_size_at_run_time_panics() {
    let n: i64 = -3;
    let _ = shape!(f32[n]);
}
