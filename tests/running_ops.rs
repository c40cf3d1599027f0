//! Every op of API.md runs with exact expected values, for several element types, fused and
//! unfused; arguments and outputs in any layout; errors instead of panics; threads.
//!
//! Values marked "XLA CPU" were checked against jaxlib 0.6.0's CPU client (reference/ask-xla.md).

use std::fmt::Debug;

#[path = "common/computations.rs"]
mod computations;

use lazy_xla::{
    abs, add, and, atan2, broadcast, broadcast_in_dim, cbrt, ceil, clamp, concat_in_dim,
    convert_element_type, cos, div, dot, dot_general, eq, erf, exp, expm1, floor, ge, gt, iota, is_finite,
    le, log, log1p, logistic, lt, max, min, mul, ne, neg, not, or, pad, pow, reduce, rem, reshape, rev,
    round, rsqrt, select, shift_left, shift_right_arithmetic, shift_right_logical, sign, sin, slice, sqrt,
    sub, tan, tanh, transpose, xor, CompileOptions, DotDimensionNumbers, ElementType, Layout, Literal,
    NativeType, PaddingConfig, PaddingConfigDimension, Shape, XlaBuilder, XlaComputation, XlaOp,
};

/// A shape in XLA's notation.
fn sh(text: &str) -> Shape {
    text.parse().unwrap_or_else(|e| panic!("shape {text}: {e}"))
}

/// A literal of the shape `text` from logical row-major values.
fn lit<T: NativeType>(text: &str, values: Vec<T>) -> Literal {
    Literal::from_vec(&sh(text), values).expect("literal")
}

/// Builds the computation `f` makes from one parameter per argument (of the argument's shape).
fn computation<F>(args: &[&Literal], f: F) -> XlaComputation
where
    F: for<'b> FnOnce(&'b XlaBuilder, &[XlaOp<'b>]) -> XlaOp<'b>,
{
    let b = XlaBuilder::new("ops");
    let params: Vec<XlaOp<'_>> =
        args.iter().enumerate().map(|(i, a)| b.parameter(i as i64, a.shape(), &format!("p{i}"))).collect();
    let root = f(&b, &params);
    b.build(root).unwrap_or_else(|e| panic!("build: {e}"))
}

/// Runs `f` on `args` fused and unfused; asserts both agree (shape with layout, and values,
/// NaNs included) and returns the result.
#[track_caller]
fn run<F>(args: &[&Literal], f: F) -> Literal
where
    F: for<'b> FnOnce(&'b XlaBuilder, &[XlaOp<'b>]) -> XlaOp<'b>,
{
    let c = computation(args, f);
    let fused = c.compile(&CompileOptions::default()).unwrap().execute(args).unwrap();
    let plain = c.compile(&CompileOptions::unfused()).unwrap().execute(args).unwrap();
    assert_eq!(fused.shape(), plain.shape());
    assert_eq!(format!("{fused:?}"), format!("{plain:?}"), "fused vs unfused");
    fused
}

/// The values of a result as `T`, logical row-major order.
#[track_caller]
fn values<T: NativeType>(l: &Literal) -> Vec<T> {
    l.to_vec::<T>().unwrap_or_else(|e| panic!("to_vec: {e}"))
}

/// Runs `f` and returns its values.
#[track_caller]
fn run_v<T: NativeType, F>(args: &[&Literal], f: F) -> Vec<T>
where
    F: for<'b> FnOnce(&'b XlaBuilder, &[XlaOp<'b>]) -> XlaOp<'b>,
{
    values(&run(args, f))
}

/// Asserts two float vectors are equal bit for bit, NaN matching NaN.
#[track_caller]
fn assert_same<T: NativeType + Debug>(got: &[T], expected: &[T]) {
    let same = got.len() == expected.len()
        && got.iter().zip(expected).all(|(g, e)| {
            let (g, e) = (g.to_f64(), e.to_f64());
            (g.is_nan() && e.is_nan()) || g.to_bits() == e.to_bits()
        });
    assert!(same, "\n  got      {got:?}\n  expected {expected:?}");
}

/// Asserts that `got` is within `ulps` units in the last place of `expected` (of `T`'s
/// precision), element by element: the transcendental functions are polynomial approximations
/// of a few ulps, as XLA's CPU backend computes them.
#[track_caller]
fn assert_within_ulps<T: NativeType + Debug>(got: &[T], expected: &[T], ulps: f64) {
    let epsilon = if T::ELEMENT_TYPE == ElementType::F32 { f64::from(f32::EPSILON) } else { f64::EPSILON };
    let close = got.len() == expected.len()
        && got.iter().zip(expected).all(|(g, e)| {
            let (g, e) = (g.to_f64(), e.to_f64());
            g == e || (g - e).abs() <= ulps * epsilon * e.abs().max(f64::MIN_POSITIVE)
        });
    assert!(close, "\n  got      {got:?}\n  expected {expected:?} (within {ulps} ulps)");
}

/// A scalar `(T, T) -> T` computation of `f(a, b)`.
fn reducer<F>(element_type: ElementType, f: F) -> XlaComputation
where
    F: for<'b> FnOnce(&'b XlaBuilder, XlaOp<'b>, XlaOp<'b>) -> XlaOp<'b>,
{
    computations::scalar_computation("reducer", element_type, f)
}

// ---------------------------------------------------------------------------------------------
// Element-wise binary and unary ops on floats, against Rust's std in the type's precision.

macro_rules! float_tests {
    ($($m:ident: $t:ty),*) => {$(
        mod $m {
            use super::*;
            type T = $t;
            const X: [T; 6] = [1.5, -2.25, 0.5, 3.0, -7.5, 10.0];
            const Y: [T; 6] = [0.5, 4.0, -1.5, 2.0, 2.0, -3.0];

            fn args() -> (Literal, Literal) {
                (lit("[2,3]".replace("[", concat!(stringify!($t), "[")).as_str(), X.to_vec()),
                 lit("[2,3]".replace("[", concat!(stringify!($t), "[")).as_str(), Y.to_vec()))
            }

            /// `f` against `g` element by element: exactly, or within `ulps` (0 for exact).
            fn binary_within(f: for<'b> fn(XlaOp<'b>, XlaOp<'b>, &[i64]) -> XlaOp<'b>, g: fn(T, T) -> T, ulps: f64) {
                let (x, y) = args();
                let got = run_v::<T, _>(&[&x, &y], |_, p| f(p[0], p[1], &[]));
                let expected: Vec<T> = X.iter().zip(&Y).map(|(&a, &b)| g(a, b)).collect();
                match ulps {
                    0.0 => assert_same(&got, &expected),
                    _ => assert_within_ulps(&got, &expected, ulps),
                }
            }

            fn binary(f: for<'b> fn(XlaOp<'b>, XlaOp<'b>, &[i64]) -> XlaOp<'b>, g: fn(T, T) -> T) {
                binary_within(f, g, 0.0)
            }

            #[test]
            fn arithmetic() {
                binary(add, |a, b| a + b);
                binary(sub, |a, b| a - b);
                binary(mul, |a, b| a * b);
                binary(div, |a, b| a / b);
                binary(rem, |a, b| a % b);
                binary(max, |a, b| if a > b { a } else { b });
                binary(min, |a, b| if a < b { a } else { b });
                binary_within(pow, <T>::powf, 6.0);
                binary_within(atan2, <T>::atan2, 2.0);
            }

            #[test]
            fn std_ops_operators() {
                let (x, y) = args();
                let got = run_v::<T, _>(&[&x, &y], |_, p| (p[0] + p[1]) * p[0] - p[1] / p[0] + -p[1]);
                let expected: Vec<T> = X.iter().zip(&Y).map(|(&a, &b)| (a + b) * a - b / a + -b).collect();
                assert_same(&got, &expected);
            }

            #[test]
            fn nan_and_zero_edge_cases() {
                let x = Literal::vec1(&[T::NAN, 1.0, 7.5, -7.5, 1.0, -1.0]);
                let y = Literal::vec1(&[1.0 as T, 2.0, 0.0, 2.0, 0.0, 0.0]);
                // NaN propagates through max/min (NaN first, as XLA CPU does).
                assert!(run_v::<T, _>(&[&x, &y], |_, p| max(p[0], p[1], &[]))[0].is_nan());
                assert!(run_v::<T, _>(&[&x, &y], |_, p| min(p[0], p[1], &[]))[0].is_nan());
                // Float rem keeps the dividend's sign; x % 0 is NaN; x / 0 is ±inf.
                let r = run_v::<T, _>(&[&x, &y], |_, p| rem(p[0], p[1], &[]));
                assert!(r[2].is_nan());
                assert_eq!(r[3], -1.5);
                let d = run_v::<T, _>(&[&x, &y], |_, p| div(p[0], p[1], &[]));
                assert_eq!(&d[4..], &[T::INFINITY, T::NEG_INFINITY]);
            }

            #[test]
            fn unary_ops() {
                let xs: Vec<T> = vec![0.25, 1.5, 2.0, 0.75, 3.5, 0.5];
                let x = lit(concat!(stringify!($t), "[2,3]{0,1}"), xs.clone());
                // Exact ops (ulps 0) and approximations within XLA's ulps + 1.
                let check = |f: for<'b> fn(XlaOp<'b>) -> XlaOp<'b>, g: fn(T) -> T, ulps: f64| {
                    let out = run(&[&x], |_, p| f(p[0]));
                    // Unary ops keep the operand's layout.
                    assert_eq!(out.shape(), x.shape());
                    let expected: Vec<T> = xs.iter().map(|&v| g(v)).collect();
                    match ulps {
                        0.0 => assert_same(&values::<T>(&out), &expected),
                        _ => assert_within_ulps(&values::<T>(&out), &expected, ulps),
                    }
                };
                check(neg, |v| -v, 0.0);
                check(abs, <T>::abs, 0.0);
                check(exp, <T>::exp, 2.0);
                check(log, <T>::ln, 2.0);
                check(log1p, <T>::ln_1p, 3.0);
                check(expm1, <T>::exp_m1, 6.0);
                check(tanh, <T>::tanh, 6.0);
                check(sqrt, <T>::sqrt, 0.0);
                check(rsqrt, |v| 1.0 / v.sqrt(), 2.0);
                check(floor, <T>::floor, 0.0);
                check(ceil, <T>::ceil, 0.0);
                check(sin, <T>::sin, 2.0);
                check(cos, <T>::cos, 2.0);
                check(tan, <T>::tan, 3.0);
                check(cbrt, <T>::cbrt, 2.0);
                // erf of `xs` (Python's math.erf, correctly rounded in f64).
                let erf_xs = [0.2763263901682369, 0.9661051464753108, 0.9953222650189527, 0.7111556336535151,
                    0.9999992569016276, 0.5204998778130465];
                let got = run_v::<T, _>(&[&x], |_, p| erf(p[0]));
                assert_within_ulps(&got, &erf_xs.map(|e: f64| e as T), 3.0);
                let got = run_v::<T, _>(&[&x], |_, p| logistic(p[0]));
                for (g, &v) in got.iter().zip(&xs) {
                    approx::assert_relative_eq!(*g, 1.0 / (1.0 + (-v).exp()), max_relative = 1e-6);
                }
            }

            #[test]
            fn round_sign_is_finite() {
                let x = Literal::vec1(&[0.5 as T, 1.5, 2.5, -2.5, -0.5, -0.0, T::NAN, -3.25]);
                // Round half away from zero (XLA CPU: 1 2 3 -3 -1).
                assert_same(&run_v::<T, _>(&[&x], |_, p| round(p[0])), &[1.0, 2.0, 3.0, -3.0, -1.0, -0.0, T::NAN, -3.0]);
                // Sign passes ±0 and NaN through.
                assert_same(&run_v::<T, _>(&[&x], |_, p| sign(p[0])), &[1.0, 1.0, 1.0, -1.0, -1.0, -0.0, T::NAN, -1.0]);
                let y = Literal::vec1(&[1.0 as T, T::INFINITY, T::NEG_INFINITY, T::NAN]);
                let f = run(&[&y], |_, p| is_finite(p[0]));
                assert_eq!(f.shape().element_type(), ElementType::Pred);
                assert_eq!(values::<bool>(&f), vec![true, false, false, false]);
            }

            #[test]
            fn compare_with_nan() {
                let x = Literal::vec1(&[T::NAN, 1.0, T::NAN, 2.0, 3.0]);
                let y = Literal::vec1(&[T::NAN, 1.0, 1.0, 3.0, 2.0]);
                let c = |f: for<'b> fn(XlaOp<'b>, XlaOp<'b>, &[i64]) -> XlaOp<'b>| {
                    run_v::<bool, _>(&[&x, &y], |_, p| f(p[0], p[1], &[]))
                };
                assert_eq!(c(eq), [false, true, false, false, false]);
                assert_eq!(c(ne), [true, false, true, true, true]);
                assert_eq!(c(lt), [false, false, false, true, false]);
                assert_eq!(c(le), [false, true, false, true, false]);
                assert_eq!(c(gt), [false, false, false, false, true]);
                assert_eq!(c(ge), [false, true, false, false, true]);
            }
        }
    )*};
}

float_tests!(float_f32: f32, float_f64: f64);

macro_rules! half_tests {
    ($($m:ident: $t:ty => $name:literal),*) => {$(
        mod $m {
            use super::*;
            type T = $t;
            fn h(v: f32) -> T { T::from_f32(v) }

            #[test]
            fn arithmetic_in_single_precision_rounded_once() {
                let x = lit(concat!($name, "[4]"), vec![h(1.5), h(-2.25), h(0.5), h(3.0)]);
                let y = lit(concat!($name, "[4]"), vec![h(0.5), h(4.0), h(-1.5), h(2.0)]);
                assert_eq!(run_v::<T, _>(&[&x, &y], |_, p| add(p[0], p[1], &[])), vec![h(2.0), h(1.75), h(-1.0), h(5.0)]);
                assert_eq!(run_v::<T, _>(&[&x, &y], |_, p| mul(p[0], p[1], &[])), vec![h(0.75), h(-9.0), h(-0.75), h(6.0)]);
                assert_eq!(run_v::<T, _>(&[&x, &y], |_, p| max(p[0], p[1], &[])), vec![h(1.5), h(4.0), h(0.5), h(3.0)]);
                let expected: Vec<T> = [1.5f32, -2.25, 0.5, 3.0].iter().map(|&v| h(v.exp())).collect();
                assert_eq!(run_v::<T, _>(&[&x], |_, p| exp(p[0])), expected);
                assert_eq!(run_v::<T, _>(&[&x], |_, p| neg(p[0])), vec![h(-1.5), h(2.25), h(-0.5), h(-3.0)]);
                // 1 + ε/2 rounds back to 1 in the narrow type.
                let one = lit(concat!($name, "[1]"), vec![h(1.0)]);
                let tiny = lit(concat!($name, "[1]"), vec![T::EPSILON / h(2.0)]);
                assert_eq!(run_v::<T, _>(&[&one, &tiny], |_, p| add(p[0], p[1], &[])), vec![h(1.0)]);
            }
        }
    )*};
}

half_tests!(half_f16: half::f16 => "f16", half_bf16: half::bf16 => "bf16");

// ---------------------------------------------------------------------------------------------
// Integers: wrapping arithmetic and XLA's edge cases.

macro_rules! signed_tests {
    ($($m:ident: $t:ty => $name:literal),*) => {$(
        mod $m {
            use super::*;
            type T = $t;
            const BITS: T = <$t>::BITS as T;

            fn v(values: &[T]) -> Literal { Literal::vec1(values) }
            fn bin(f: for<'b> fn(XlaOp<'b>, XlaOp<'b>, &[i64]) -> XlaOp<'b>, x: &[T], y: &[T]) -> Vec<T> {
                run_v::<T, _>(&[&v(x), &v(y)], |_, p| f(p[0], p[1], &[]))
            }

            #[test]
            fn div_rem_truncate_and_edge_cases() {
                let x = [7, -7, 7, -7, T::MIN, T::MIN, 5, 0, -5];
                let y = [2, 2, -2, -2, -1, 0, 0, 0, 0];
                assert_eq!(bin(div, &x, &y), [3, -3, -3, 3, T::MIN, -1, -1, -1, -1]);
                assert_eq!(bin(rem, &x, &y), [1, -1, 1, -1, 0, T::MIN, 5, 0, -5]);
            }

            #[test]
            fn wrapping_arithmetic() {
                assert_eq!(bin(add, &[T::MAX, T::MIN, 3], &[1, -1, 4]), [T::MIN, T::MAX, 7]);
                assert_eq!(bin(sub, &[T::MIN, T::MAX, 3], &[1, -1, 4]), [T::MAX, T::MIN, -1]);
                assert_eq!(bin(mul, &[T::MAX, T::MIN, -3], &[2, -1, 4]), [-2, T::MIN, -12]);
                assert_eq!(bin(max, &[T::MAX, T::MIN, -3], &[2, -1, 4]), [T::MAX, -1, 4]);
                assert_eq!(bin(min, &[T::MAX, T::MIN, -3], &[2, -1, 4]), [2, T::MIN, -3]);
                let x = v(&[T::MIN, -3, 0, T::MAX]);
                assert_eq!(run_v::<T, _>(&[&x], |_, p| neg(p[0])), [T::MIN, 3, 0, -T::MAX]);
                // XLA CPU: abs(INT_MIN) = INT_MIN.
                assert_eq!(run_v::<T, _>(&[&x], |_, p| abs(p[0])), [T::MIN, 3, 0, T::MAX]);
                assert_eq!(run_v::<T, _>(&[&x], |_, p| sign(p[0])), [-1, -1, 0, 1]);
                assert_eq!(run_v::<T, _>(&[&x], |_, p| not(p[0])), [T::MAX, 2, -1, T::MIN]);
            }

            #[test]
            fn bitwise() {
                let (x, y) = ([0b1100, -1, 5], [0b1010, 0b0110, 0]);
                assert_eq!(bin(and, &x, &y), [0b1000, 0b0110, 0]);
                assert_eq!(bin(or, &x, &y), [0b1110, -1, 5]);
                assert_eq!(bin(xor, &x, &y), [0b0110, !0b0110, 5]);
            }

            #[test]
            fn shifts_out_of_range_give_zero_or_sign_fill() {
                let x = [1, 1, 1, -8, -8, -8, -8, 5];
                let y = [3, BITS - 1, BITS, 1, BITS, -1, T::MAX, 1];
                assert_eq!(bin(shift_left, &x, &y), [8, T::MIN, 0, -16, 0, 0, 0, 10]);
                assert_eq!(bin(shift_right_arithmetic, &x, &y), [0, 0, 0, -4, -1, -1, -1, 2]);
                assert_eq!(bin(shift_right_logical, &x, &y), [0, 0, 0, T::MAX - 3, 0, 0, 0, 2]);
            }

            #[test]
            fn integer_pow() {
                // XLA CPU: repeated squaring, wrapping.
                assert_eq!(bin(pow, &[2, 3, 1, 2, 0, -2, 5], &[3, 0, -3, BITS, 0, 3, 1]), [8, 1, 1, 0, 1, -8, 5]);
                // A negative exponent gives 0 unless the base is 1.
                assert_eq!(bin(pow, &[2, 0, -2], &[-1, -1, -1]), [0, 0, 0]);
            }

            #[test]
            fn integer_pow_minus_one_negative_exponent() {
                // XLA CPU (jaxlib 0.6.0): pow(-1, -1) = pow(-1, -2) = pow(-1, -3) = 0.
                assert_eq!(bin(pow, &[-1, -1, -1], &[-1, -2, -3]), [0, 0, 0]);
            }

            #[test]
            fn compare_and_select() {
                let x = v(&[T::MIN, 0, 5, T::MAX]);
                let y = v(&[T::MIN, 1, 4, -1]);
                assert_eq!(run_v::<bool, _>(&[&x, &y], |_, p| lt(p[0], p[1], &[])), [false, true, false, false]);
                assert_eq!(run_v::<bool, _>(&[&x, &y], |_, p| ge(p[0], p[1], &[])), [true, false, true, true]);
                assert_eq!(run_v::<T, _>(&[&x, &y], |_, p| select(gt(p[0], p[1], &[]), p[0], p[1])), [T::MIN, 1, 5, T::MAX]);
            }

            #[test]
            fn reduce_ints() {
                let x = lit(concat!($name, "[2,3]"), vec![1 as T, 2, 3, 4, 5, 6]);
                let e = ElementType::from(<T as NativeType>::ELEMENT_TYPE);
                let sum = reducer(e, |_, a, b| add(a, b, &[]));
                let prod = reducer(e, |_, a, b| mul(a, b, &[]));
                let mx = reducer(e, |_, a, b| max(a, b, &[]));
                assert_eq!(run_v::<T, _>(&[&x], |b, p| reduce(p[0], b.constant_r0(0 as T), &sum, &[1])), [6, 15]);
                assert_eq!(run_v::<T, _>(&[&x], |b, p| reduce(p[0], b.constant_r0(1 as T), &prod, &[0])), [4, 10, 18]);
                assert_eq!(run_v::<T, _>(&[&x], |b, p| reduce(p[0], b.constant_r0(T::MIN), &mx, &[0, 1])), [6]);
            }
        }
    )*};
}

signed_tests!(int_s8: i8 => "s8", int_s16: i16 => "s16", int_s32: i32 => "s32", int_s64: i64 => "s64");

macro_rules! unsigned_tests {
    ($($m:ident: $t:ty),*) => {$(
        mod $m {
            use super::*;
            type T = $t;
            const BITS: T = <$t>::BITS as T;

            fn bin(f: for<'b> fn(XlaOp<'b>, XlaOp<'b>, &[i64]) -> XlaOp<'b>, x: &[T], y: &[T]) -> Vec<T> {
                run_v::<T, _>(&[&Literal::vec1(x), &Literal::vec1(y)], |_, p| f(p[0], p[1], &[]))
            }

            #[test]
            fn div_rem_wrapping() {
                // XLA CPU: x / 0 is all ones; x % 0 = x.
                assert_eq!(bin(div, &[7, 5, 0, T::MAX], &[2, 0, 0, 1]), [3, T::MAX, T::MAX, T::MAX]);
                assert_eq!(bin(rem, &[7, 5, 0, T::MAX], &[2, 0, 0, 1]), [1, 5, 0, 0]);
                assert_eq!(bin(add, &[T::MAX, 1], &[1, 2]), [0, 3]);
                assert_eq!(bin(sub, &[0, 5], &[1, 2]), [T::MAX, 3]);
                assert_eq!(bin(mul, &[T::MAX, 3], &[2, 2]), [T::MAX - 1, 6]);
                assert_eq!(bin(pow, &[2, 3, 2], &[3, 2, BITS]), [8, 9, 0]);
            }

            #[test]
            fn logical_shifts() {
                let x = [1, 1, T::MAX, T::MAX, 4];
                let y = [BITS - 1, BITS, 1, T::MAX, 1];
                assert_eq!(bin(shift_left, &x, &y), [1 << (BITS - 1), 0, T::MAX - 1, 0, 8]);
                assert_eq!(bin(shift_right_logical, &x, &y), [0, 0, T::MAX >> 1, 0, 2]);
            }

            #[test]
            fn arithmetic_shift_treats_bits_as_signed() {
                // XLA CPU (jaxlib 0.6.0), u8: [255,255,128,4] >>a [1,8,200,1] = [255,255,255,2].
                let x = [T::MAX, T::MAX, 1 << (BITS - 1), 4];
                let y = [1, BITS, T::MAX, 1];
                assert_eq!(bin(shift_right_arithmetic, &x, &y), [T::MAX, T::MAX, T::MAX, 2]);
            }
        }
    )*};
}

unsigned_tests!(uint_u8: u8, uint_u16: u16, uint_u32: u32, uint_u64: u64);

#[test]
fn pred_logic() {
    let x = Literal::vec1(&[false, false, true, true]);
    let y = Literal::vec1(&[false, true, false, true]);
    assert_eq!(run_v::<bool, _>(&[&x, &y], |_, p| and(p[0], p[1], &[])), [false, false, false, true]);
    assert_eq!(run_v::<bool, _>(&[&x, &y], |_, p| or(p[0], p[1], &[])), [false, true, true, true]);
    assert_eq!(run_v::<bool, _>(&[&x, &y], |_, p| xor(p[0], p[1], &[])), [false, true, true, false]);
    assert_eq!(run_v::<bool, _>(&[&x], |_, p| not(p[0])), [true, true, false, false]);
    assert_eq!(run_v::<bool, _>(&[&x, &y], |_, p| eq(p[0], p[1], &[])), [true, false, false, true]);
}

// ---------------------------------------------------------------------------------------------
// select, clamp, convert.

#[test]
fn select_array_and_scalar_pred() {
    let pred = lit("pred[2,2]{0,1}", vec![true, false, false, true]);
    let t = lit("s32[2,2]", vec![1, 2, 3, 4]);
    let f = lit("s32[2,2]", vec![10, 20, 30, 40]);
    let out = run(&[&pred, &t, &f], |_, p| select(p[0], p[1], p[2]));
    // select takes the pred's layout.
    assert_eq!(out.shape().to_string(), "s32[2,2]{0,1}");
    assert_eq!(values::<i32>(&out), [1, 20, 30, 4]);
    for (flag, expected) in [(true, [1, 2, 3, 4]), (false, [10, 20, 30, 40])] {
        let scalar = Literal::scalar(flag);
        assert_eq!(run_v::<i32, _>(&[&scalar, &t, &f], |_, p| select(p[0], p[1], p[2])), expected);
    }
    let tf = lit("f32[3]", vec![1.0f32, 2.0, 3.0]);
    let ff = lit("f32[3]", vec![-1.0f32, -2.0, -3.0]);
    let pf = lit("pred[3]", vec![false, true, false]);
    assert_eq!(run_v::<f32, _>(&[&pf, &tf, &ff], |_, p| select(p[0], p[1], p[2])), [-1.0, 2.0, -3.0]);
}

#[test]
fn clamp_scalars_arrays_and_inverted_bounds() {
    let x = lit("f32[2,3]{0,1}", vec![-5.0f32, 0.0, 2.5, 7.0, 10.0, f32::NAN]);
    let out = run(&[&x], |b, p| clamp(b.constant_r0(0.0f32), p[0], b.constant_r0(5.0f32)));
    assert_eq!(out.shape().to_string(), "f32[2,3]{0,1}");
    assert_same(&values::<f32>(&out), &[0.0, 0.0, 2.5, 5.0, 5.0, f32::NAN]);
    // min > max gives max (XLA CPU: clamp(5, [0,3,9], 1) = [1,1,1]).
    assert_eq!(
        run_v::<f32, _>(&[&Literal::vec1(&[0.0f32, 3.0, 9.0])], |b, p| clamp(
            b.constant_r0(5.0f32),
            p[0],
            b.constant_r0(1.0f32)
        )),
        [1.0, 1.0, 1.0]
    );
    let lo = Literal::vec1(&[0i32, 10, -3]);
    let hi = Literal::vec1(&[1i32, 20, -1]);
    let v = Literal::vec1(&[5i32, 15, -7]);
    assert_eq!(run_v::<i32, _>(&[&lo, &v, &hi], |_, p| clamp(p[0], p[1], p[2])), [1, 15, -3]);
    // A scalar operand against array bounds.
    assert_eq!(
        run_v::<i32, _>(&[&lo, &Literal::scalar(4i32), &hi], |_, p| clamp(p[0], p[1], p[2])),
        [1, 10, -1]
    );
}

#[test]
fn convert_float_to_int_truncates_and_saturates() {
    let x = Literal::vec1(&[2.9f32, -2.9, 3e9, -3e9, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.5]);
    assert_eq!(
        run_v::<i32, _>(&[&x], |_, p| convert_element_type(p[0], ElementType::S32)),
        [2, -2, i32::MAX, i32::MIN, 0, i32::MAX, i32::MIN, 0]
    );
    assert_eq!(
        run_v::<i8, _>(&[&x], |_, p| convert_element_type(p[0], ElementType::S8)),
        [2, -2, 127, -128, 0, 127, -128, 0]
    );
    // XLA CPU: f32 -> u8 of [-3.5, 300, NaN, 7.9] = [0, 255, 0, 7].
    let y = Literal::vec1(&[-3.5f32, 300.0, f32::NAN, 7.9]);
    assert_eq!(run_v::<u8, _>(&[&y], |_, p| convert_element_type(p[0], ElementType::U8)), [0, 255, 0, 7]);
}

#[test]
fn convert_to_pred_and_from_pred() {
    let x = Literal::vec1(&[0.0f32, -0.0, 0.5, f32::NAN]);
    assert_eq!(
        run_v::<bool, _>(&[&x], |_, p| convert_element_type(p[0], ElementType::Pred)),
        [false, false, true, true]
    );
    let i = Literal::vec1(&[0i32, -7, 1]);
    assert_eq!(
        run_v::<bool, _>(&[&i], |_, p| convert_element_type(p[0], ElementType::Pred)),
        [false, true, true]
    );
    let b = Literal::vec1(&[true, false]);
    assert_eq!(run_v::<f32, _>(&[&b], |_, p| convert_element_type(p[0], ElementType::F32)), [1.0, 0.0]);
    assert_eq!(run_v::<i64, _>(&[&b], |_, p| convert_element_type(p[0], ElementType::S64)), [1, 0]);
}

#[test]
fn convert_between_ints_wraps() {
    let x = Literal::vec1(&[(1i64 << 32) + 5, 1 << 31, -1, -(1i64 << 31) - 1]);
    assert_eq!(
        run_v::<i32, _>(&[&x], |_, p| convert_element_type(p[0], ElementType::S32)),
        [5, i32::MIN, -1, i32::MAX]
    );
    assert_eq!(run_v::<u8, _>(&[&x], |_, p| convert_element_type(p[0], ElementType::U8)), [5, 0, 255, 255]);
    let u = Literal::vec1(&[u32::MAX, 7]);
    assert_eq!(
        run_v::<i64, _>(&[&u], |_, p| convert_element_type(p[0], ElementType::S64)),
        [u32::MAX as i64, 7]
    );
    assert_eq!(run_v::<i32, _>(&[&u], |_, p| convert_element_type(p[0], ElementType::S32)), [-1, 7]);
}

#[test]
fn convert_rounds_to_nearest_even() {
    // f32 -> bf16 (XLA CPU: 1+2^-8 -> 1, 1+3·2^-8 -> 1+2^-6, 1+2^-8+2^-20 -> 1+2^-7).
    let x = Literal::vec1(&[
        1.0 + 2f32.powi(-8),
        1.0 + 3.0 * 2f32.powi(-8),
        1.0 + 2f32.powi(-8) + 2f32.powi(-20),
    ]);
    let got = run_v::<half::bf16, _>(&[&x], |_, p| convert_element_type(p[0], ElementType::Bf16));
    let got: Vec<f32> = got.iter().map(|v| v.to_f32()).collect();
    assert_eq!(got, [1.0, 1.0 + 2f32.powi(-6), 1.0 + 2f32.powi(-7)]);
    // s32 -> f32: 2^24 + 1 ties to 2^24, 2^24 + 3 ties to 2^24 + 4.
    let i = Literal::vec1(&[(1i32 << 24) + 1, (1 << 24) + 3, -((1 << 24) + 1)]);
    assert_eq!(
        run_v::<f32, _>(&[&i], |_, p| convert_element_type(p[0], ElementType::F32)),
        [16777216.0, 16777220.0, -16777216.0]
    );
    // f32 -> f64 exact, f64 -> f32 rounds.
    let d = Literal::vec1(&[0.1f64]);
    assert_eq!(run_v::<f32, _>(&[&d], |_, p| convert_element_type(p[0], ElementType::F32)), [0.1f32]);
}

#[test]
fn convert_s64_to_f32_rounds_once() {
    // XLA CPU (jaxlib 0.6.0): 2^60 + 2^36 + 1 -> 2^60 + 2^37 (above the halfway point).
    let v = (1i64 << 60) + (1 << 36) + 1;
    let x = Literal::vec1(&[v, -v]);
    let expected = ((1i64 << 60) + (1 << 37)) as f32;
    assert_eq!(
        run_v::<f32, _>(&[&x], |_, p| convert_element_type(p[0], ElementType::F32)),
        [expected, -expected]
    );
    let u = Literal::vec1(&[v as u64]);
    assert_eq!(run_v::<f32, _>(&[&u], |_, p| convert_element_type(p[0], ElementType::F32)), [expected]);
}

// ---------------------------------------------------------------------------------------------
// Data movement.

#[test]
fn iota_in_any_layout() {
    let b = XlaBuilder::new("iota");
    let c = b.build(iota(&b, &sh("s32[2,3]{0,1}"), 1)).unwrap();
    for options in [CompileOptions::default(), CompileOptions::unfused()] {
        let out = c.compile(&options).unwrap().execute(&[]).unwrap();
        assert_eq!(out.shape().to_string(), "s32[2,3]{0,1}");
        assert_eq!(values::<i32>(&out), [0, 1, 2, 0, 1, 2]);
        assert_eq!(out.memory::<i32>().unwrap(), &[0, 0, 1, 1, 2, 2]);
    }
    let b = XlaBuilder::new("iota");
    let c = b.build(iota(&b, &sh("f32[3,2]"), 0)).unwrap();
    let out = c.compile(&CompileOptions::default()).unwrap().execute(&[]).unwrap();
    assert_eq!(values::<f32>(&out), [0.0, 0.0, 1.0, 1.0, 2.0, 2.0]);
    let b = XlaBuilder::new("iota");
    let c = b.build(iota(&b, &sh("u8[5]"), 0)).unwrap();
    assert_eq!(
        values::<u8>(&c.compile(&CompileOptions::unfused()).unwrap().execute(&[]).unwrap()),
        [0, 1, 2, 3, 4]
    );
}

#[test]
fn broadcast_prepends_dimensions() {
    let x = Literal::vec1(&[1i32, 2]);
    let out = run(&[&x], |_, p| broadcast(p[0], &[3]));
    assert_eq!(out.shape().to_string(), "s32[3,2]{1,0}");
    assert_eq!(values::<i32>(&out), [1, 2, 1, 2, 1, 2]);
    let s = Literal::scalar(2.5f64);
    assert_eq!(run_v::<f64, _>(&[&s], |_, p| broadcast(p[0], &[2, 2])), [2.5; 4]);
}

#[test]
fn broadcast_in_dim_including_size_one() {
    let x = Literal::vec1(&[1.0f32, 2.0, 3.0]);
    assert_eq!(
        run_v::<f32, _>(&[&x], |_, p| broadcast_in_dim(p[0], &[2, 3], &[1])),
        [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]
    );
    assert_eq!(
        run_v::<f32, _>(&[&x], |_, p| broadcast_in_dim(p[0], &[3, 2], &[0])),
        [1.0, 1.0, 2.0, 2.0, 3.0, 3.0]
    );
    // A size-1 operand dimension stretches.
    let r = lit("f32[1,3]{0,1}", vec![1.0f32, 2.0, 3.0]);
    let out = run(&[&r], |_, p| broadcast_in_dim(p[0], &[2, 3], &[0, 1]));
    assert_eq!(out.shape().to_string(), "f32[2,3]{1,0}");
    assert_eq!(values::<f32>(&out), [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
    let c = lit("s32[2,1]", vec![7, 8]);
    assert_eq!(run_v::<i32, _>(&[&c], |_, p| broadcast_in_dim(p[0], &[4, 2, 3], &[1, 2])), {
        let mut v = Vec::new();
        for _ in 0..4 {
            v.extend([7, 7, 7, 8, 8, 8]);
        }
        v
    });
}

#[test]
fn reshape_reads_logical_order() {
    let x = lit("f32[2,3]{0,1}", vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let out = run(&[&x], |_, p| reshape(p[0], &[3, 2]));
    assert_eq!(out.shape().to_string(), "f32[3,2]{1,0}");
    assert_eq!(values::<f32>(&out), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(run_v::<f32, _>(&[&x], |_, p| reshape(p[0], &[6])), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let y = lit("s32[2,2,2]{1,2,0}", (0..8).collect());
    assert_eq!(run_v::<i32, _>(&[&y], |_, p| reshape(p[0], &[4, 2])), (0..8).collect::<Vec<_>>());
    assert_eq!(run_v::<i32, _>(&[&Literal::scalar(3i32)], |_, p| reshape(p[0], &[1, 1])), [3]);
}

#[test]
fn transpose_permutes_the_layout() {
    let x = lit("s32[2,3]", vec![1, 2, 3, 4, 5, 6]);
    let out = run(&[&x], |_, p| transpose(p[0], &[1, 0]));
    assert_eq!(out.shape().to_string(), "s32[3,2]{0,1}");
    assert_eq!(values::<i32>(&out), [1, 4, 2, 5, 3, 6]);
    let y = lit("f32[2,3,4]", (0..24).map(|i| i as f32).collect());
    let out = run(&[&y], |_, p| transpose(p[0], &[2, 0, 1]));
    assert_eq!(out.shape().dimensions(), &[4, 2, 3]);
    let expected: Vec<f32> = (0..24)
        .map(|i| {
            let (k, a, j) = (i / 6, (i / 3) % 2, i % 3);
            (a * 12 + j * 4 + k) as f32
        })
        .collect();
    assert_eq!(values::<f32>(&out), expected);
    // A transpose feeding an element-wise op.
    assert_eq!(
        run_v::<i32, _>(&[&x], |b, p| add(transpose(p[0], &[1, 0]), b.constant_r0(10i32), &[])),
        [11, 14, 12, 15, 13, 16]
    );
}

#[test]
fn slice_with_strides() {
    let x = lit("s32[4,6]", (0..24).collect());
    let out = run(&[&x], |_, p| slice(p[0], &[0, 1], &[4, 6], &[2, 2]));
    assert_eq!(out.shape().to_string(), "s32[2,3]{1,0}");
    assert_eq!(values::<i32>(&out), [1, 3, 5, 13, 15, 17]);
    let cm = x.relayout(&Layout::new(&[0, 1])).unwrap();
    assert_eq!(
        run_v::<i32, _>(&[&cm], |_, p| slice(p[0], &[1, 2], &[4, 5], &[2, 1])),
        [8, 9, 10, 20, 21, 22]
    );
    assert_eq!(run_v::<i32, _>(&[&x], |_, p| slice(p[0], &[3, 5], &[4, 6], &[1, 1])), [23]);
    assert_eq!(run_v::<i32, _>(&[&x], |_, p| slice(p[0], &[2, 2], &[2, 4], &[1, 1])), Vec::<i32>::new());
}

#[test]
fn concat_in_either_dimension() {
    let x = lit("f32[2,2]", vec![1.0f32, 2.0, 3.0, 4.0]);
    let y = lit("f32[1,2]{0,1}", vec![5.0f32, 6.0]);
    let z = lit("f32[2,1]", vec![7.0f32, 8.0]);
    let out = run(&[&x, &y], |b, p| concat_in_dim(b, &[p[0], p[1]], 0));
    assert_eq!(out.shape().to_string(), "f32[3,2]{1,0}");
    assert_eq!(values::<f32>(&out), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(
        run_v::<f32, _>(&[&x, &z], |b, p| concat_in_dim(b, &[p[1], p[0], p[1]], 1)),
        [7.0, 1.0, 2.0, 7.0, 8.0, 3.0, 4.0, 8.0]
    );
    let a = Literal::vec1(&[1u16, 2]);
    let e = lit("u16[0]", Vec::<u16>::new());
    assert_eq!(run_v::<u16, _>(&[&a, &e], |b, p| concat_in_dim(b, &[p[1], p[0], p[0]], 0)), [1, 2, 1, 2]);
}

fn padding(dims: &[(i64, i64, i64)]) -> PaddingConfig {
    PaddingConfig {
        dimensions: dims
            .iter()
            .map(|&(edge_padding_low, edge_padding_high, interior_padding)| PaddingConfigDimension {
                edge_padding_low,
                edge_padding_high,
                interior_padding,
            })
            .collect(),
    }
}

#[test]
fn pad_edges_negative_and_interior() {
    let x = Literal::vec1(&[1i32, 2, 3, 4, 5]);
    let zero = Literal::scalar(0i32);
    let pad1 = |cfg: (i64, i64, i64)| run_v::<i32, _>(&[&x, &zero], |_, p| pad(p[0], p[1], &padding(&[cfg])));
    assert_eq!(pad1((2, 1, 0)), [0, 0, 1, 2, 3, 4, 5, 0]);
    assert_eq!(pad1((0, 0, 1)), [1, 0, 2, 0, 3, 0, 4, 0, 5]);
    assert_eq!(pad1((-1, 2, 1)), [0, 2, 0, 3, 0, 4, 0, 5, 0, 0]);
    assert_eq!(pad1((-2, -2, 0)), [3]);
    assert_eq!(pad1((1, -3, 2)), [0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 4]);
    let m = lit("f32[2,3]{0,1}", vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let out = run(&[&m], |b, p| pad(p[0], b.constant_r0(-1.0f32), &padding(&[(1, 0, 1), (-1, 1, 0)])));
    assert_eq!(out.shape().to_string(), "f32[4,3]{1,0}");
    assert_eq!(values::<f32>(&out), [-1.0, -1.0, -1.0, 2.0, 3.0, -1.0, -1.0, -1.0, -1.0, 5.0, 6.0, -1.0]);
}

#[test]
fn rev_reverses_dimensions() {
    let x = lit("s64[2,3]{0,1}", vec![1i64, 2, 3, 4, 5, 6]);
    let out = run(&[&x], |_, p| rev(p[0], &[1]));
    assert_eq!(out.shape().to_string(), "s64[2,3]{0,1}");
    assert_eq!(values::<i64>(&out), [3, 2, 1, 6, 5, 4]);
    assert_eq!(run_v::<i64, _>(&[&x], |_, p| rev(p[0], &[0, 1])), [6, 5, 4, 3, 2, 1]);
    assert_eq!(run_v::<i64, _>(&[&x], |_, p| rev(p[0], &[])), [1, 2, 3, 4, 5, 6]);
}

// ---------------------------------------------------------------------------------------------
// Reduce.

#[test]
fn reduce_with_simple_reducers() {
    let x = lit("f32[2,3,2]{0,2,1}", (1..=12).map(|i| i as f32).collect());
    let f = ElementType::F32;
    let sum = reducer(f, |_, a, b| add(a, b, &[]));
    let mx = reducer(f, |_, a, b| max(a, b, &[]));
    let mn = reducer(f, |_, a, b| min(a, b, &[]));
    let pr = reducer(f, |_, a, b| mul(a, b, &[]));
    let out = run(&[&x], |b, p| reduce(p[0], b.constant_r0(0.0f32), &sum, &[1]));
    assert_eq!(out.shape().to_string(), "f32[2,2]{1,0}");
    assert_eq!(values::<f32>(&out), [9.0, 12.0, 27.0, 30.0]);
    assert_eq!(
        run_v::<f32, _>(&[&x], |b, p| reduce(p[0], b.constant_r0(0.0f32), &sum, &[0, 2])),
        [18.0, 26.0, 34.0]
    );
    assert_eq!(
        run_v::<f32, _>(&[&x], |b, p| reduce(p[0], b.constant_r0(100.0f32), &sum, &[0, 1, 2])),
        [178.0]
    );
    assert_eq!(
        run_v::<f32, _>(&[&x], |b, p| reduce(p[0], b.constant_r0(f32::NEG_INFINITY), &mx, &[0, 1])),
        [11.0, 12.0]
    );
    assert_eq!(
        run_v::<f32, _>(&[&x], |b, p| reduce(p[0], b.constant_r0(f32::INFINITY), &mn, &[2])),
        [1.0, 3.0, 5.0, 7.0, 9.0, 11.0]
    );
    assert_eq!(
        run_v::<f32, _>(&[&x], |b, p| reduce(p[0], b.constant_r0(1.0f32), &pr, &[0])),
        [7.0, 16.0, 27.0, 40.0, 55.0, 72.0]
    );
    // A reduce over an empty dimension gives the init value.
    let e = lit("f32[2,0]", Vec::<f32>::new());
    assert_eq!(run_v::<f32, _>(&[&e], |b, p| reduce(p[0], b.constant_r0(5.0f32), &sum, &[1])), [5.0, 5.0]);
}

#[test]
fn reduce_over_no_dimensions_returns_the_operand() {
    let x = lit("s32[2,2]{0,1}", vec![1, 2, 3, 4]);
    let sum = reducer(ElementType::S32, |_, a, b| add(a, b, &[]));
    let out = run(&[&x], |b, p| reduce(p[0], b.constant_r0(100i32), &sum, &[]));
    assert_eq!(out.shape().dimensions(), &[2, 2]);
    assert_eq!(values::<i32>(&out), [1, 2, 3, 4]);
}

#[test]
fn reduce_with_a_computed_reducer() {
    // a*2 + b, built by another builder: XLA CPU folds in order, [1,2,3] -> 11, [[1,2],[3,4]] -> 26.
    let twice_plus = reducer(ElementType::F32, |r, a, b| add(mul(a, r.constant_r0(2.0f32), &[]), b, &[]));
    let v = Literal::vec1(&[1.0f32, 2.0, 3.0]);
    assert_eq!(run_v::<f32, _>(&[&v], |b, p| reduce(p[0], b.constant_r0(0.0f32), &twice_plus, &[0])), [11.0]);
    let m = lit("f32[2,2]", vec![1.0f32, 2.0, 3.0, 4.0]);
    assert_eq!(
        run_v::<f32, _>(&[&m], |b, p| reduce(p[0], b.constant_r0(0.0f32), &twice_plus, &[0, 1])),
        [26.0]
    );
    assert_eq!(
        run_v::<f32, _>(&[&m], |b, p| reduce(p[0], b.constant_r0(1.0f32), &twice_plus, &[1])),
        [8.0, 14.0]
    );
    // sub(b, a): parameters in swapped order, not commutative: acc' = value - acc.
    let swapped = reducer(ElementType::S32, |_, a, b| sub(b, a, &[]));
    let s = Literal::vec1(&[1i32, 2, 3]);
    // 0 -> 1-0=1 -> 2-1=1 -> 3-1=2
    assert_eq!(run_v::<i32, _>(&[&s], |b, p| reduce(p[0], b.constant_r0(0i32), &swapped, &[0])), [2]);
    let maxabs = reducer(ElementType::S32, |_, a, b| max(a, abs(b), &[]));
    let t = lit("s32[2,3]", vec![-5, 2, 3, 1, -9, 4]);
    assert_eq!(run_v::<i32, _>(&[&t], |b, p| reduce(p[0], b.constant_r0(0i32), &maxabs, &[1])), [5, 9]);
}

// ---------------------------------------------------------------------------------------------
// Dot.

fn numbers(lc: &[i64], rc: &[i64], lb: &[i64], rb: &[i64]) -> DotDimensionNumbers {
    DotDimensionNumbers {
        lhs_contracting_dimensions: lc.to_vec(),
        rhs_contracting_dimensions: rc.to_vec(),
        lhs_batch_dimensions: lb.to_vec(),
        rhs_batch_dimensions: rb.to_vec(),
    }
}

macro_rules! dot_tests {
    ($($m:ident: $t:ty => $name:literal),*) => {$(
        mod $m {
            use super::*;
            type T = $t;
            fn t(v: i32) -> T { <T as NativeType>::ZERO + (v as i8 as f32).to_t() }
            trait ToT { fn to_t(self) -> T; }
            impl ToT for f32 {
                fn to_t(self) -> T {
                    let l = Literal::scalar(self);
                    let b = XlaBuilder::new("c");
                    let p = b.parameter(0, l.shape(), "p");
                    let c = b.build(convert_element_type(p, <T as NativeType>::ELEMENT_TYPE)).unwrap();
                    c.compile(&CompileOptions::default()).unwrap().execute(&[&l]).unwrap().to_vec::<T>().unwrap()[0]
                }
            }
            fn tv(v: &[i32]) -> Vec<T> { v.iter().map(|&x| t(x)).collect() }
            fn m(shape: &str, v: &[i32]) -> Literal { lit(&format!("{}{}", $name, shape), tv(v)) }

            #[test]
            fn matrix_matrix_vector_vector() {
                let a = m("[2,3]", &[1, 2, 3, 4, 5, 6]);
                let bm = m("[3,2]", &[1, 2, 3, 4, 5, 6]);
                let out = run(&[&a, &bm], |_, p| dot(p[0], p[1]));
                assert_eq!(out.shape().dimensions(), &[2, 2]);
                assert_eq!(values::<T>(&out), tv(&[22, 28, 49, 64]));
                let v = m("[3]", &[1, 0, -1]);
                assert_eq!(run_v::<T, _>(&[&a, &v], |_, p| dot(p[0], p[1])), tv(&[-2, -2]));
                let w = m("[3]", &[2, 3, 4]);
                assert_eq!(run_v::<T, _>(&[&v, &w], |_, p| dot(p[0], p[1])), tv(&[-2]));
                assert_eq!(run_v::<T, _>(&[&w, &bm], |_, p| dot(p[0], p[1])), tv(&[31, 40]));
            }

            #[test]
            fn column_major_and_padded_operands() {
                let a = m("[2,3]", &[1, 2, 3, 4, 5, 6]);
                let bm = m("[3,2]{0,1}", &[1, 2, 3, 4, 5, 6]);
                assert_eq!(run_v::<T, _>(&[&a, &bm], |_, p| dot(p[0], p[1])), tv(&[22, 28, 49, 64]));
                let ac = a.relayout(&Layout::new(&[0, 1])).unwrap();
                assert_eq!(run_v::<T, _>(&[&ac, &bm], |_, p| dot(p[0], p[1])), tv(&[22, 28, 49, 64]));
                // Arguments of another layout than the parameters'.
                let c = computation(&[&a, &a.relayout(&Layout::new(&[0, 1])).unwrap()], |_, p| {
                    dot_general(p[0], p[1], &numbers(&[1], &[1], &[], &[]))
                });
                let padded = Literal::from_vec(&sh(&format!("{}[2,3]{{0,1:pad(3,5)=zero}}", $name)), tv(&[1, 0, 0, 0, 1, 0])).unwrap();
                for options in [CompileOptions::default(), CompileOptions::unfused()] {
                    let out = c.compile(&options).unwrap().execute(&[&a, &padded]).unwrap();
                    assert_eq!(values::<T>(&out), tv(&[1, 2, 4, 5]));
                }
            }

            #[test]
            fn batch_and_general_contractions() {
                // lhs [b=2, m=2, k=2], rhs [b=2, k=2, n=1]
                let l = m("[2,2,2]", &[1, 2, 3, 4, 5, 6, 7, 8]);
                let r = m("[2,2,1]", &[1, 1, 2, -1]);
                let out = run(&[&l, &r], |_, p| dot_general(p[0], p[1], &numbers(&[2], &[1], &[0], &[0])));
                assert_eq!(out.shape().dimensions(), &[2, 2, 1]);
                assert_eq!(values::<T>(&out), tv(&[3, 7, 4, 6]));
                // Batch dimension last in the rhs, contracting first: rhs [k=2, n=1, b=2].
                let r2 = m("[2,1,2]", &[1, 2, 1, -1]);
                assert_eq!(
                    run_v::<T, _>(&[&l, &r2], |_, p| dot_general(p[0], p[1], &numbers(&[2], &[0], &[0], &[2]))),
                    tv(&[3, 7, 4, 6])
                );
                // Two contracting dimensions: full inner product of two 2x2 matrices.
                let x = m("[2,2]", &[1, 2, 3, 4]);
                let y = m("[2,2]{0,1}", &[1, 1, 1, 1]);
                assert_eq!(run_v::<T, _>(&[&x, &y], |_, p| dot_general(p[0], p[1], &numbers(&[0, 1], &[0, 1], &[], &[]))), tv(&[10]));
                // No contraction: outer product.
                let u = m("[2]", &[1, 2]);
                let w = m("[3]", &[1, 0, -1]);
                assert_eq!(run_v::<T, _>(&[&u, &w], |_, p| dot_general(p[0], p[1], &numbers(&[], &[], &[], &[]))), tv(&[1, 0, -1, 2, 0, -2]));
            }
        }
    )*};
}

dot_tests!(dot_f32: f32 => "f32", dot_f64: f64 => "f64", dot_s32: i32 => "s32", dot_bf16: half::bf16 => "bf16");

#[test]
fn dot_mixed_s32_f32() {
    let a = lit("s32[1,2]", vec![1, 2]);
    let b = lit("f32[2,1]", vec![0.5f32, 0.25]);
    let out = run(&[&a, &b], |_, p| dot(p[0], p[1]));
    assert_eq!(out.shape().element_type(), ElementType::F32);
    assert_eq!(values::<f32>(&out), [1.0]);
}

// ---------------------------------------------------------------------------------------------
// Layouts of arguments and results, execute_into, errors, threads.

#[test]
fn arguments_in_any_layout_including_padding() {
    let param = lit("f32[2,3]", vec![0.0f32; 6]);
    let c = computation(&[&param, &param], |_, p| sub(p[0], p[1], &[]));
    let x = lit("f32[2,3]{0,1:pad(3,5)=zero}", vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let y = lit("f32[2,3]{1,0:pad(4,4)=one}", vec![6.0f32, 5.0, 4.0, 3.0, 2.0, 1.0]);
    assert!(x.memory::<f32>().unwrap().len() > 6);
    for options in [CompileOptions::default(), CompileOptions::unfused()] {
        let exe = c.compile(&options).unwrap();
        let out = exe.execute(&[&x, &y]).unwrap();
        assert_eq!(out.shape().to_string(), "f32[2,3]{1,0}");
        assert_eq!(values::<f32>(&out), [-5.0, -3.0, -1.0, 1.0, 3.0, 5.0]);
        let out = exe.execute(&[&y, &x.relayout(&Layout::new(&[0, 1])).unwrap()]).unwrap();
        assert_eq!(values::<f32>(&out), [5.0, 3.0, 1.0, -1.0, -3.0, -5.0]);
    }
}

#[test]
fn result_in_the_root_layout() {
    let x = lit("f32[2,3]", vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let out = run(&[&x], |_, p| transpose(p[0], &[1, 0]));
    assert_eq!(out.shape().to_string(), "f32[3,2]{0,1}");
    assert_eq!(out.memory::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(values::<f32>(&out), [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    // The lhs's layout for same-shape binary ops.
    let cm = lit("f32[2,3]{0,1}", vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let out = run(&[&cm, &x], |_, p| add(p[0], p[1], &[]));
    assert_eq!(out.shape().to_string(), "f32[2,3]{0,1}");
    assert_eq!(out.memory::<f32>().unwrap(), &[2.0, 8.0, 4.0, 10.0, 6.0, 12.0]);
}

#[test]
fn execute_into_another_layout_and_padding() {
    let x = lit("s32[2,3]", vec![1, 2, 3, 4, 5, 6]);
    let c = computation(&[&x], |b, p| mul(p[0], b.constant_r0(10i32), &[]));
    for options in [CompileOptions::default(), CompileOptions::unfused()] {
        let exe = c.compile(&options).unwrap();
        let mut out = Literal::zeros(&sh("s32[2,3]{0,1:pad(4,4)=one}")).unwrap();
        exe.execute_into(&[&x], &mut out).unwrap();
        assert_eq!(out.shape().to_string(), "s32[2,3]{0,1:pad(4,4)=one}");
        assert_eq!(values::<i32>(&out), [10, 20, 30, 40, 50, 60]);
        let mut plain = Literal::zeros(&sh("s32[2,3]{0,1}")).unwrap();
        exe.execute_into(&[&x], &mut plain).unwrap();
        assert_eq!(plain.memory::<i32>().unwrap(), &[10, 40, 20, 50, 30, 60]);
        // Reusing the output overwrites it.
        let y = lit("s32[2,3]", vec![0, 0, 0, 0, 0, 1]);
        exe.execute_into(&[&y], &mut plain).unwrap();
        assert_eq!(values::<i32>(&plain), [0, 0, 0, 0, 0, 10]);
    }
}

/// A column-major plus a row-major array large enough that the column-major one's rows are
/// read an element per page (the loop walks its work items in blocks then, cut short at the
/// edges of outer dimensions of 20), on one thread and several, into either layout: every
/// element is its sum.
#[test]
fn a_transposed_operand_read_pages_apart_sums_every_element() {
    let dims = [8usize, 20, 20, 48];
    let count: usize = dims.iter().product();
    let a_values: Vec<f32> = (0..count).map(|i| (i % 1009) as f32).collect();
    let c_values: Vec<f32> = (0..count).map(|i| (i % 997) as f32 * 1000.0).collect();
    let a = lit("f32[8,20,20,48]{0,1,2,3}", a_values.clone());
    let c = lit("f32[8,20,20,48]", c_values.clone());
    let expected: Vec<f32> = a_values.iter().zip(&c_values).map(|(a, c)| a + c).collect();
    let sum = computation(&[&a, &c], |_, p| p[0] + p[1]);
    for threads in [Some(1), None] {
        let exe = sum.compile(&CompileOptions { num_threads: threads, ..Default::default() }).unwrap();
        assert_eq!(values::<f32>(&exe.execute(&[&a, &c]).unwrap()), expected);
        let mut row_major = Literal::zeros(c.shape()).unwrap();
        exe.execute_into(&[&a, &c], &mut row_major).unwrap();
        assert_eq!(values::<f32>(&row_major), expected);
    }
}

/// A matrix read transposed a page apart per element (rows of 1,100 `f32`s), plus another
/// read in place, reversed or not: the loop cuts its rows of 70 into segments of 64 and 6, its
/// 1,100 rows into tiles of 32 and a last of 12, and prefetches each item's lines while the
/// one before computes. On one thread and several, fused and unfused, into either layout:
/// every element is `2·t[j, i] + x[i, j]` (or with `t`'s rows reversed).
#[test]
fn a_matrix_read_transposed_pages_apart_gives_every_element() {
    let (rows, columns) = (1100usize, 70usize);
    let t_values: Vec<f32> = (0..rows * columns).map(|k| (k % 1013) as f32).collect();
    let x_values: Vec<f32> = (0..rows * columns).map(|k| (k % 991) as f32 * 1000.0).collect();
    let t = lit("f32[70,1100]", t_values.clone());
    let x = lit("f32[1100,70]", x_values.clone());
    for reversed in [false, true] {
        let expected: Vec<f32> = (0..rows * columns)
            .map(|k| {
                let (i, j) = (k / columns, k % columns);
                let j_of_t = if reversed { columns - 1 - j } else { j };
                2.0 * t_values[j_of_t * rows + i] + x_values[k]
            })
            .collect();
        let graph = computation(&[&t, &x], |b, p| {
            let t = if reversed { rev(p[0], &[0]) } else { p[0] };
            transpose(t, &[1, 0]) * b.constant_r0(2.0f32) + p[1]
        });
        for options in [
            CompileOptions { num_threads: Some(1), ..Default::default() },
            CompileOptions::default(),
            CompileOptions::unfused(),
        ] {
            let exe = graph.compile(&options).unwrap();
            assert_eq!(values::<f32>(&exe.execute(&[&t, &x]).unwrap()), expected, "reversed: {reversed}");
            let mut column_major = Literal::zeros(&sh("f32[1100,70]{0,1}")).unwrap();
            exe.execute_into(&[&t, &x], &mut column_major).unwrap();
            assert_eq!(values::<f32>(&column_major), expected, "reversed: {reversed}");
        }
    }
}

/// A binary op of a matrix read transposed a page apart per element (rows of 1,100) into a
/// row-major output: the loop computes each tile of rows (segments of 64 and 6 of rows of 70)
/// row by row straight into the output, its other operand's rows read where they lie: another
/// matrix (as either operand), a row vector broadcast down the rows, or a constant. In `f32`,
/// `f64` and `s32`, for three ops, on one thread and several, fused and unfused, into either
/// layout: every element is the op of its operands.
#[test]
fn binary_ops_of_a_matrix_read_transposed_pages_apart_give_every_element() {
    #[derive(Clone, Copy, Debug)]
    enum Op {
        Sub,
        Max,
        Div,
    }
    fn build<'b>(op: Op, l: XlaOp<'b>, r: XlaOp<'b>) -> XlaOp<'b> {
        match op {
            Op::Sub => sub(l, r, &[]),
            Op::Max => max(l, r, &[]),
            Op::Div => div(l, r, &[]),
        }
    }
    fn check<T>(value: fn(usize) -> T)
    where
        T: NativeType + Copy + PartialOrd + Debug + std::ops::Sub<Output = T> + std::ops::Div<Output = T>,
    {
        let (rows, columns) = (1100usize, 70usize);
        let name = T::ELEMENT_TYPE.to_string();
        let t_values: Vec<T> = (0..rows * columns).map(|k| value(k % 1013 + 1)).collect();
        let x_values: Vec<T> = (0..rows * columns).map(|k| value(k % 991 + 7)).collect();
        let v_values: Vec<T> = (0..columns).map(|k| value(3 * k + 2)).collect();
        let t = lit(&format!("{name}[70,1100]"), t_values.clone());
        let x = lit(&format!("{name}[1100,70]"), x_values.clone());
        let v = lit(&format!("{name}[70]"), v_values.clone());
        let c = value(5);
        for op in [Op::Sub, Op::Max, Op::Div] {
            let apply = |a: T, b: T| match op {
                Op::Sub => a - b,
                Op::Max => {
                    if a > b {
                        a
                    } else {
                        b
                    }
                }
                Op::Div => a / b,
            };
            // The other operand: x, x as the first operand, v down the rows, the constant.
            for other in 0..4 {
                let expected: Vec<T> = (0..rows * columns)
                    .map(|k| {
                        let (i, j) = (k / columns, k % columns);
                        let tt = t_values[j * rows + i];
                        match other {
                            0 => apply(tt, x_values[k]),
                            1 => apply(x_values[k], tt),
                            2 => apply(tt, v_values[j]),
                            _ => apply(tt, c),
                        }
                    })
                    .collect();
                let graph = computation(&[&t, &x, &v], |b, p| {
                    let tt = transpose(p[0], &[1, 0]);
                    match other {
                        0 => build(op, tt, p[1]),
                        1 => build(op, p[1], tt),
                        2 => build(op, tt, broadcast_in_dim(p[2], &[1100, 70], &[1])),
                        _ => build(op, tt, b.constant_r0(c)),
                    }
                });
                for options in [
                    CompileOptions { num_threads: Some(1), ..Default::default() },
                    CompileOptions::default(),
                    CompileOptions::unfused(),
                ] {
                    let exe = graph.compile(&options).unwrap();
                    let case = format!("{name} {op:?}, other operand {other}");
                    assert_eq!(values::<T>(&exe.execute(&[&t, &x, &v]).unwrap()), expected, "{case}");
                    let mut column_major = Literal::zeros(&sh(&format!("{name}[1100,70]{{0,1}}"))).unwrap();
                    exe.execute_into(&[&t, &x, &v], &mut column_major).unwrap();
                    assert_eq!(values::<T>(&column_major), expected, "{case}, column-major");
                }
            }
        }
    }
    check::<f32>(|k| k as f32 * 0.25);
    check::<f64>(|k| k as f64 * 0.5);
    check::<i32>(|k| k as i32);
}

/// A root computed by a loop writes an output of another layout itself (no copy after it):
/// a fused chain over operands of two layouts, a row and a column reduction, a reduce over
/// no dimension (each root row-major), each into another layout or padding, again after a
/// first run (the program for that layout is kept), fused and unfused.
#[test]
fn loops_write_outputs_of_another_layout_themselves() {
    let f = ElementType::F32;
    let sum = reducer(f, |_, a, b| add(a, b, &[]));
    let cm = lit("f32[2,3]{0,1}", vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let rm = lit("f32[2,3]", vec![10.0f32, 20.0, 30.0, 40.0, 50.0, 60.0]);
    let chain = computation(&[&cm, &rm], |b, p| max(p[0] * p[1] - b.constant_r0(15.0f32), p[1], &[]) + p[0]);
    let row_sum = computation(&[&rm], |b, p| {
        reduce(exp(p[0] * b.constant_r0(0.0f32)) + p[0], b.constant_r0(0.0f32), &sum, &[1])
    });
    let column_sum = computation(&[&cm], |b, p| reduce(p[0], b.constant_r0(0.5f32), &sum, &[0]));
    let identity = computation(&[&cm], |b, p| reduce(p[0], b.constant_r0(0.0f32), &sum, &[]));
    let check = |c: &XlaComputation, arguments: &[&Literal], layouts: &[&str], expected: &[f32]| {
        for options in [CompileOptions::default(), CompileOptions::unfused()] {
            let exe = c.compile(&options).unwrap();
            for layout in layouts {
                let mut out = Literal::zeros(&sh(layout)).unwrap();
                for _ in 0..2 {
                    exe.execute_into(arguments, &mut out).unwrap();
                    assert_eq!(out.shape().to_string(), sh(layout).to_string());
                    assert_eq!(values::<f32>(&out), expected, "{layout}");
                }
            }
        }
    };
    let (both, padded) = (["f32[2,3]{0,1}", "f32[2,3]{1,0:pad(3,5)=zero}"], "f32[2,3]{0,1:pad(3,4)=zero}");
    check(&chain, &[&cm, &rm], &both, &[11.0, 27.0, 78.0, 149.0, 240.0, 351.0]);
    check(&row_sum, &[&rm], &["f32[2]{0:pad(3)=one}"], &[63.0, 153.0]);
    check(&column_sum, &[&cm], &["f32[3]{0:pad(5)=zero}"], &[5.5, 7.5, 9.5]);
    check(&identity, &[&cm], &["f32[2,3]{0,1}", padded], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
}

#[test]
fn mismatches_are_errors() {
    let x = lit("f32[2,3]", vec![0.0f32; 6]);
    let c = computation(&[&x, &x], |_, p| add(p[0], p[1], &[]));
    let exe = c.compile(&CompileOptions::default()).unwrap();
    assert!(exe.execute(&[&x]).is_err());
    assert!(exe.execute(&[&x, &x, &x]).is_err());
    assert!(exe.execute(&[]).is_err());
    let wrong_dims = lit("f32[3,2]", vec![0.0f32; 6]);
    assert!(exe.execute(&[&x, &wrong_dims]).is_err());
    let wrong_type = lit("s32[2,3]", vec![0i32; 6]);
    let err = exe.execute(&[&wrong_type, &x]).unwrap_err();
    assert!(!err.to_string().is_empty());
    let mut out = Literal::zeros(&sh("f32[3,2]")).unwrap();
    assert!(exe.execute_into(&[&x, &x], &mut out).is_err());
    let mut out = Literal::zeros(&sh("f64[2,3]")).unwrap();
    assert!(exe.execute_into(&[&x, &x], &mut out).is_err());
    let mut out = Literal::zeros(&sh("f32[2,3]")).unwrap();
    assert!(exe.execute_into(&[&x], &mut out).is_err());
    exe.execute_into(&[&x, &x], &mut out).unwrap();
    assert!(c.compile(&CompileOptions { num_threads: Some(0), ..Default::default() }).is_err());
}

/// A computation big enough to be split across threads: (x·2 + 1) summed over rows, and a dot.
fn big_computation() -> (XlaComputation, Literal) {
    let n = 300i64;
    let x = Literal::from_vec(&sh(&format!("f32[{n},{n}]")), (0..n * n).map(|i| (i % 17) as f32).collect())
        .unwrap();
    let c = computation(&[&x], |b, p| {
        let y = add(mul(p[0], b.constant_r0(2.0f32), &[]), b.constant_r0(1.0f32), &[]);
        let t = transpose(y, &[1, 0]);
        let sum = reducer(ElementType::F32, |_, a, b| add(a, b, &[]));
        let rows = reduce(t, b.constant_r0(0.0f32), &sum, &[1]);
        add(dot(y, rows), y, &[0])
    });
    (c, x)
}

#[test]
fn one_executable_from_four_threads() {
    let (c, x) = big_computation();
    let exe = c.compile(&CompileOptions::default()).unwrap();
    let expected = values::<f32>(&exe.execute(&[&x]).unwrap());
    let unfused_result =
        values::<f32>(&c.compile(&CompileOptions::unfused()).unwrap().execute(&[&x]).unwrap());
    assert_eq!(expected, unfused_result);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| (0..3).map(|_| values::<f32>(&exe.execute(&[&x]).unwrap())).collect::<Vec<_>>())
            })
            .collect();
        for h in handles {
            for got in h.join().unwrap() {
                assert_eq!(got, expected);
            }
        }
    });
}

#[test]
fn thread_counts_agree() {
    let (c, x) = big_computation();
    let one = values::<f32>(
        &c.compile(&CompileOptions { num_threads: Some(1), ..Default::default() })
            .unwrap()
            .execute(&[&x])
            .unwrap(),
    );
    let two = values::<f32>(
        &c.compile(&CompileOptions { num_threads: Some(2), ..Default::default() })
            .unwrap()
            .execute(&[&x])
            .unwrap(),
    );
    let default = values::<f32>(&c.compile(&CompileOptions::default()).unwrap().execute(&[&x]).unwrap());
    assert_eq!(one, two);
    assert_eq!(one, default);
    // Spot-check one value: row i of y = 2·(x % 17) + 1; rows[j] = Σ_i y[i, j].
    let n = 300usize;
    let y = |i: usize, j: usize| 2.0 * ((i * n + j) % 17) as f64 + 1.0;
    let rows: Vec<f64> = (0..n).map(|j| (0..n).map(|i| y(i, j)).sum()).collect();
    let expected_00: f64 = (0..n).map(|k| y(0, k) * rows[k]).sum::<f64>() + y(0, 0);
    approx::assert_relative_eq!(one[0] as f64, expected_00, max_relative = 1e-5);
}

/// A zero-sized dimension beside sizes whose product overflows: no element, so nothing to
/// compute, and nothing may overflow on the way (strides, coalescing, index maps).
#[test]
fn empty_arrays_with_huge_dimensions_run() -> lazy_xla::Result<()> {
    let huge = i64::MAX / 2;
    for layout in [[2i64, 1, 0], [0, 1, 2]] {
        let shape = Shape::with_layout(ElementType::F32, &[0, huge, 3], &layout)?;
        let b = XlaBuilder::new("empty");
        let x = b.parameter(0, &shape, "x");
        let y = add(rev(x, &[1]), x, &[]);
        let sliced = slice(y, &[0, 1, 0], &[0, huge, 3], &[1, 2, 1]);
        let computation = b.build(sliced)?;
        let argument = Literal::zeros(&shape)?;
        for options in [CompileOptions::default(), CompileOptions::unfused()] {
            let out = computation.compile(&options)?.execute(&[&argument])?;
            assert_eq!(out.shape().element_count(), 0);
        }
    }
    Ok(())
}

/// XLA's CPU backend sums half-precision products in f32 and rounds once: 1 + 256 · 2^-9 is
/// 1.5 as a bf16 result, where a bf16 accumulator (8 significant bits) would stay at 1.
#[test]
fn half_precision_dots_sum_in_f32() -> lazy_xla::Result<()> {
    for transposed in [false, true] {
        let b = XlaBuilder::new("bf16_dot");
        let layout: &[i64] = if transposed { &[0, 1] } else { &[1, 0] };
        let x = b.parameter(0, &Shape::with_layout(ElementType::Bf16, &[1, 257], layout)?, "x");
        let w = b.parameter(1, &"bf16[257]".parse::<Shape>()?, "w");
        let computation = b.build(dot(x, w))?;
        let mut xs = vec![half::bf16::from_f32(1.0)];
        xs.extend(std::iter::repeat_n(half::bf16::from_f32(1.0 / 512.0), 256));
        let x_values = Literal::from_vec(&Shape::with_layout(ElementType::Bf16, &[1, 257], layout)?, xs)?;
        let ones = Literal::from_vec(&"bf16[257]".parse::<Shape>()?, vec![half::bf16::from_f32(1.0); 257])?;
        for options in [CompileOptions::default(), CompileOptions::unfused()] {
            let out = computation.compile(&options)?.execute(&[&x_values, &ones])?;
            assert_eq!(out.to_vec::<half::bf16>()?, vec![half::bf16::from_f32(1.5)]);
        }
    }
    // f16 through a batch dimension (the plain loop when groups do not collapse).
    let b = XlaBuilder::new("f16_batched");
    let x = b.parameter(0, &"f16[2,3,2048]".parse::<Shape>()?, "x");
    let y = b.parameter(1, &"f16[2,2048]".parse::<Shape>()?, "y");
    let numbers = DotDimensionNumbers::new(&[2], &[1], &[0], &[0]);
    let computation = b.build(dot_general(x, y, &numbers))?;
    let small = half::f16::from_f32(1.0 / 1024.0);
    let x_values = Literal::from_vec(&"f16[2,3,2048]".parse::<Shape>()?, vec![small; 2 * 3 * 2048])?;
    let y_values = Literal::from_vec(&"f16[2,2048]".parse::<Shape>()?, vec![half::f16::ONE; 2 * 2048])?;
    let out = computation.compile(&CompileOptions::default())?.execute(&[&x_values, &y_values])?;
    // 2048 · 2^-10 = 2 exactly in f32; an f16 accumulator loses the small terms past 2^-10·2^11.
    assert_eq!(out.to_vec::<half::f16>()?, vec![half::f16::from_f32(2.0); 6]);
    Ok(())
}

/// Plain loops cut long walks into work items of 16,384 elements: a walk that coalesces into
/// one run (51,000 elements: three whole items and a short one); rows of 40,000 with a vector
/// broadcast along them (segments of each row, the last short); and a chain over seven rows of
/// 4,096 that reads a row vector and a column broadcast in place (where the CPU has AVX2:
/// tiles of four rows, the last of three). Each runs on one thread and on rayon's, fused and
/// unfused, against a plain loop element by element.
#[test]
fn long_walks_cut_into_items_compute_every_element() {
    let value = |i: usize| ((i * 7919) % 1013) as f32 / 64.0 - 8.0;
    let x = lit("f32[3,17000]", (0..51_000).map(value).collect());
    let rows = lit("f32[2,40000]", (0..80_000).map(value).collect());
    let column = lit("f32[2]", vec![0.5f32, -2.0]);
    let tall = lit("f32[7,4096]", (0..7 * 4096).map(value).collect());
    let bias = lit("f32[4096]", (0..4096).map(|i| value(i + 3)).collect());
    let scale = lit("f32[7]", (0..7).map(|i| value(i + 11)).collect());
    let coalesced = computation(&[&x], |b, p| neg(p[0]) * b.constant_r0(3.0f32) + p[0]);
    let broadcast = computation(&[&rows, &column], |_, p| max(add(p[0], p[1], &[0]), p[0] * p[0], &[]));
    let chain = computation(&[&tall, &bias, &scale], |b, p| {
        max(mul(add(p[0], p[1], &[1]), p[2], &[0]), b.constant_r0(0.0f32), &[]) + b.constant_r0(1.0f32)
    });
    let expect_coalesced: Vec<f32> = (0..51_000).map(|i| -value(i) * 3.0 + value(i)).collect();
    let expect_broadcast: Vec<f32> =
        (0..80_000).map(|i| (value(i) + [0.5f32, -2.0][i / 40_000]).max(value(i) * value(i))).collect();
    let expect_chain: Vec<f32> = (0..7 * 4096)
        .map(|i| ((value(i) + value(i % 4096 + 3)) * value(i / 4096 + 11)).max(0.0) + 1.0)
        .collect();
    for threads in [Some(1), None] {
        for fusion in [true, false] {
            let options = CompileOptions { fusion, num_threads: threads, ..Default::default() };
            let got = coalesced.compile(&options).unwrap().execute(&[&x]).unwrap();
            assert_same(&values::<f32>(&got), &expect_coalesced);
            let got = broadcast.compile(&options).unwrap().execute(&[&rows, &column]).unwrap();
            assert_same(&values::<f32>(&got), &expect_broadcast);
            let got = chain.compile(&options).unwrap().execute(&[&tall, &bias, &scale]).unwrap();
            assert_same(&values::<f32>(&got), &expect_chain);
        }
    }
}
