//! The fuzzer's reference interpreter (`tests/common/semantics.rs`) on XLA's edge cases: every
//! expected value here was asked from jaxlib 0.6.0 through `jax.jit` (see
//! `shared/reference/ask-xla.md`), so a change to the reference that drifts from XLA fails here
//! rather than as a flood of false fuzzer failures. Exact results must match bit for bit (the
//! sign of zero included); transcendental ones must be accepted within the reference's bound.

mod common;

use common::semantics::{binary, clamp, compare, convert, unary, BinaryKind, CompareKind, UnaryKind};
use common::values::{round_float, Elem, Value};
use lazy_xla::ElementType::{self, *};

fn int(ty: ElementType, values: &[i128]) -> Vec<Elem> {
    values.iter().map(|&v| Elem::int(common::values::wrap(ty, v))).collect()
}

fn float(ty: ElementType, values: &[f64]) -> Vec<Elem> {
    values.iter().map(|&v| Elem::float(round_float(ty, v))).collect()
}

/// Each result exact and equal to `want` (bits of floats, NaN matching NaN), or, for an
/// inexact result, `want` within its bound.
fn assert_results(what: &str, got: &[Elem], want: &[Value]) {
    assert_eq!(got.len(), want.len());
    for (k, (g, &w)) in got.iter().zip(want).enumerate() {
        let ok = match (g.value, w) {
            (Value::Float(a), Value::Float(b)) if g.is_exact() => {
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
            }
            _ if g.is_exact() => g.value == w,
            _ => g.accepts(w),
        };
        assert!(ok, "{what}[{k}]: reference {g:?}, XLA {w:?}");
    }
}

fn ints(values: &[i128]) -> Vec<Value> {
    values.iter().map(|&v| Value::Int(v)).collect()
}

fn floats(values: &[f64]) -> Vec<Value> {
    values.iter().map(|&v| Value::Float(v)).collect()
}

fn binary_all(op: BinaryKind, ty: ElementType, a: &[Elem], b: &[Elem]) -> Vec<Elem> {
    a.iter().zip(b).map(|(&x, &y)| binary(op, ty, x, y)).collect()
}

fn unary_all(op: UnaryKind, ty: ElementType, a: &[Elem]) -> Vec<Elem> {
    a.iter().map(|&x| unary(op, ty, x)).collect()
}

fn convert_all(from: ElementType, to: ElementType, a: &[Elem]) -> Vec<Elem> {
    a.iter().map(|&x| convert(from, to, x)).collect()
}

#[test]
fn integer_division_remainder_and_pow() {
    let (a, b) = (int(S32, &[7, -7, i32::MIN as i128, 5]), int(S32, &[0, 2, -1, -3]));
    assert_results(
        "s32 div",
        &binary_all(BinaryKind::Div, S32, &a, &b),
        &ints(&[-1, -3, i32::MIN as i128, -1]),
    );
    assert_results("s32 rem", &binary_all(BinaryKind::Rem, S32, &a, &b), &ints(&[7, -1, 0, 2]));
    let (a, b) = (int(U8, &[7, 0]), int(U8, &[0, 0]));
    assert_results("u8 div", &binary_all(BinaryKind::Div, U8, &a, &b), &ints(&[255, 255]));
    assert_results("u8 rem", &binary_all(BinaryKind::Rem, U8, &a, &b), &ints(&[7, 0]));
    let (a, b) = (int(S32, &[2, 1, -1, -1, 0, 0, 3, -2]), int(S32, &[-1, -5, -1, -2, 0, -1, 2, 3]));
    assert_results("s32 pow", &binary_all(BinaryKind::Pow, S32, &a, &b), &ints(&[0, 1, 0, 0, 1, 0, 9, -8]));
    let (a, b) = (int(U8, &[2, 3, 255, 0]), int(U8, &[7, 5, 2, 0]));
    assert_results("u8 pow", &binary_all(BinaryKind::Pow, U8, &a, &b), &ints(&[128, 243, 1, 1]));
}

#[test]
fn shifts_out_of_range_and_unsigned_arithmetic_shifts() {
    let shift = |op, ty, a: &[i128], b: &[i128]| binary_all(op, ty, &int(ty, a), &int(ty, b));
    let left = shift(BinaryKind::ShiftLeft, S8, &[1, 1, -1, 3], &[7, 8, -1, 2]);
    assert_results("s8 shl", &left, &ints(&[-128, 0, 0, 12]));
    let arithmetic = shift(BinaryKind::ShiftRightArithmetic, S8, &[-128, -128, 64, 3], &[7, 8, -1, 9]);
    assert_results("s8 sra", &arithmetic, &ints(&[-1, -1, 0, 0]));
    let logical = shift(BinaryKind::ShiftRightLogical, S8, &[-128, -128, 64, 3], &[7, 8, -1, 1]);
    assert_results("s8 srl", &logical, &ints(&[1, 0, 0, 1]));
    let unsigned = shift(BinaryKind::ShiftRightArithmetic, U8, &[0x80, 0x80, 0x40, 200], &[1, 9, 7, 8]);
    assert_results("u8 sra", &unsigned, &ints(&[192, 255, 0, 255]));
}

#[test]
fn integer_and_pred_unary_and_logic() {
    assert_results(
        "abs s32",
        &unary_all(UnaryKind::Abs, S32, &int(S32, &[i32::MIN as i128, -3])),
        &ints(&[i32::MIN as i128, 3]),
    );
    assert_results("neg u8", &unary_all(UnaryKind::Neg, U8, &int(U8, &[1, 0, 200])), &ints(&[255, 0, 56]));
    assert_results("not u8", &unary_all(UnaryKind::Not, U8, &int(U8, &[5, 0])), &ints(&[250, 255]));
    assert_results("not pred", &unary_all(UnaryKind::Not, Pred, &int(Pred, &[1, 0])), &ints(&[0, 1]));
    assert_results(
        "sign s8",
        &unary_all(UnaryKind::Sign, S8, &int(S8, &[-5, 0, 7, -128])),
        &ints(&[-1, 0, 1, -1]),
    );
    let (a, b) = (int(Pred, &[1, 1, 0, 0]), int(Pred, &[1, 0, 1, 0]));
    for (op, want) in [
        (BinaryKind::Add, [1, 1, 1, 0]),
        (BinaryKind::Max, [1, 1, 1, 0]),
        (BinaryKind::Mul, [1, 0, 0, 0]),
        (BinaryKind::Min, [1, 0, 0, 0]),
        (BinaryKind::Xor, [0, 1, 1, 0]),
    ] {
        assert_results(&format!("pred {op:?}"), &binary_all(op, Pred, &a, &b), &ints(&want));
    }
    let greater: Vec<Elem> = a.iter().zip(&b).map(|(&x, &y)| compare(CompareKind::Gt, Pred, x, y)).collect();
    assert_results("pred gt", &greater, &ints(&[0, 1, 0, 0]));
}

#[test]
fn conversions_saturate_wrap_and_round_through_f32() {
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    let to_u8 = convert_all(F32, U8, &float(F32, &[-1.5, 300.0, nan, inf, -inf, 254.9]));
    assert_results("f32 -> u8", &to_u8, &ints(&[0, 255, 0, 255, 0, 254]));
    assert_results(
        "f32 -> s8",
        &convert_all(F32, S8, &float(F32, &[200.0, -200.0, nan, -1.9])),
        &ints(&[127, -128, 0, -1]),
    );
    let to_s64 = convert_all(F64, S64, &float(F64, &[9.3e18, -9.3e18, nan]));
    assert_results("f64 -> s64", &to_s64, &ints(&[i64::MAX as i128, i64::MIN as i128, 0]));
    let to_u64 = convert_all(F64, U64, &float(F64, &[1.9e19, -1.0, nan]));
    assert_results("f64 -> u64", &to_u64, &ints(&[u64::MAX as i128, 0, 0]));
    assert_results("s32 -> u8", &convert_all(S32, U8, &int(S32, &[-1, 256, 300])), &ints(&[255, 0, 44]));
    assert_results(
        "f32 -> pred",
        &convert_all(F32, Pred, &float(F32, &[nan, 0.0, -0.0, 0.1])),
        &ints(&[1, 0, 0, 1]),
    );
    let big = (1i128 << 24) + (1 << 16) + 1;
    assert_results("s32 -> bf16", &convert_all(S32, Bf16, &int(S32, &[big])), &floats(&[16777216.0]));
    let tails = float(F64, &[1.0 + 2f64.powi(-8) + 2f64.powi(-30), 1.0 + 2f64.powi(-11) + 2f64.powi(-40)]);
    assert_results("f64 -> bf16", &convert_all(F64, Bf16, &tails), &floats(&[1.0, 1.0]));
    assert_results("f64 -> f16", &convert_all(F64, F16, &tails), &floats(&[1.00390625, 1.0]));
    let wide = (1i128 << 60) + (1 << 36) + 1;
    assert_results(
        "s64 -> f32",
        &convert_all(S64, F32, &int(S64, &[wide])),
        &floats(&[2f64.powi(60) + 2f64.powi(37)]),
    );
}

#[test]
fn float_edge_cases() {
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    let sign = unary_all(UnaryKind::Sign, F32, &float(F32, &[-0.0, 0.0, nan, -3.0, 2.0]));
    assert_results("sign", &sign, &floats(&[-0.0, 0.0, nan, -1.0, 1.0]));
    let round = unary_all(UnaryKind::Round, F32, &float(F32, &[-2.5, 0.5, 1.5, 2.5, -0.4]));
    assert_results("round", &round, &floats(&[-3.0, 1.0, 2.0, 3.0, -0.0]));
    // XLA's RoundNearestEven (jaxlib 0.6.0, alike for f32, bf16, f16 and f64).
    let even =
        unary_all(UnaryKind::RoundNearestEven, F32, &float(F32, &[-2.5, 0.5, 1.5, 2.5, -0.4, -0.5, 3.5]));
    assert_results("round_nearest_even", &even, &floats(&[-2.0, 0.0, 2.0, 2.0, -0.0, -0.0, 4.0]));
    assert_results("ceil", &unary_all(UnaryKind::Ceil, F32, &float(F32, &[-0.5])), &floats(&[-0.0]));
    let sqrt = unary_all(UnaryKind::Sqrt, F32, &float(F32, &[0.0, -0.0, -1.0, inf, -inf]));
    assert_results("sqrt", &sqrt, &floats(&[0.0, -0.0, nan, inf, nan]));
    let (a, b) = (float(F32, &[-0.0, 5.0, 5.0, inf, -5.5]), float(F32, &[1.0, 0.0, inf, 2.0, 2.0]));
    assert_results("rem", &binary_all(BinaryKind::Rem, F32, &a, &b), &floats(&[-0.0, nan, 5.0, nan, -1.5]));
    let transcendental = [
        (UnaryKind::Rsqrt, vec![0.0, -0.0, -1.0, inf, 4.0], vec![inf, -inf, nan, 0.0, 0.5]),
        (UnaryKind::Log, vec![0.0, -0.0, -1.0, inf, 1.0], vec![-inf, -inf, nan, inf, 0.0]),
        (UnaryKind::Log1p, vec![-1.0, -2.0, -0.0, inf], vec![-inf, nan, -0.0, inf]),
        (UnaryKind::Expm1, vec![-inf, inf, -0.0, 100.0], vec![-1.0, inf, -0.0, inf]),
        (UnaryKind::Tanh, vec![-inf, inf, -0.0, 100.0, nan], vec![-1.0, 1.0, -0.0, 1.0, nan]),
        (UnaryKind::Logistic, vec![-inf, inf, -0.0, -200.0, nan], vec![0.0, 1.0, 0.5, 0.0, nan]),
        (UnaryKind::Exp, vec![-inf, inf, 88.8, -104.0], vec![0.0, inf, inf, 0.0]),
        (UnaryKind::Sin, vec![-inf, inf, -0.0], vec![nan, nan, -0.0]),
        (UnaryKind::Cos, vec![-inf, inf, -0.0], vec![nan, nan, 1.0]),
    ];
    for (op, x, want) in transcendental {
        assert_results(&format!("{op:?}"), &unary_all(op, F32, &float(F32, &x)), &floats(&want));
    }
    let x = float(F32, &[-8.0, 0.0, -0.0, nan, 1.0, -inf, -2.0, 2.0, -1.0]);
    let y = float(F32, &[1.0 / 3.0, -1.0, -1.0, 0.0, nan, 0.5, 3.0, 0.5, inf]);
    let pow = [nan, inf, -inf, 1.0, 1.0, inf, -8.0, std::f64::consts::SQRT_2, 1.0];
    assert_results("pow", &binary_all(BinaryKind::Pow, F32, &x, &y), &floats(&pow));
    let (y, x) =
        (float(F32, &[0.0, -0.0, 0.0, -0.0, inf, 1.0]), float(F32, &[-1.0, -1.0, 0.0, -0.0, inf, nan]));
    let pi = std::f64::consts::PI;
    let atan2 = binary_all(BinaryKind::Atan2, F32, &y, &x);
    assert_results("atan2", &atan2, &floats(&[pi, -pi, 0.0, -pi, pi / 4.0, nan]));
}

#[test]
fn max_min_and_clamp_propagate_nan() {
    let nan = f64::NAN;
    let (a, b) = (float(F32, &[nan, 1.0, 1.0]), float(F32, &[1.0, nan, 2.0]));
    assert_results("max", &binary_all(BinaryKind::Max, F32, &a, &b), &floats(&[nan, nan, 2.0]));
    assert_results("min", &binary_all(BinaryKind::Min, F32, &a, &b), &floats(&[nan, nan, 1.0]));
    let (lo, x, hi) = (
        float(F32, &[nan, 0.0, 0.0, 2.0]),
        float(F32, &[-0.5, nan, -5.0, 1.0]),
        float(F32, &[-1.0, 1.0, nan, 0.0]),
    );
    let clamped: Vec<Elem> = (0..4).map(|k| clamp(F32, lo[k], x[k], hi[k])).collect();
    assert_results("clamp", &clamped, &floats(&[nan, nan, nan, 0.0]));
}

/// f16 and bf16 ops round after every op, even in a chain (asked jaxlib on 4096 random pairs:
/// `(x + y) * y` matched per-op rounding everywhere, f32 intermediates in 82%).
#[test]
fn half_precision_rounds_after_every_op() {
    let x = float(Bf16, &[1.7, 3.3, 100.1]);
    let c = float(Bf16, &[0.1, 0.1, 0.1]);
    let sum = binary_all(BinaryKind::Add, Bf16, &x, &c);
    assert_results(
        "bf16 (x + 0.1) * x",
        &binary_all(BinaryKind::Mul, Bf16, &sum, &x),
        &floats(&[3.078125, 11.1875, 9984.0]),
    );
}
