//! Values XLA's CPU backend returns at edge points (jaxlib 0.6.0, `jax.jit` on CPU; the
//! table in `tests/data/xla_math_values.rs`): zeros, infinities, NaN, denormals, `MIN_POSITIVE`, `MAX`, and
//! each function's overflow, underflow and saturation thresholds with their neighbours.
//! Where an argument or XLA's result is special (NaN, ±∞, ±0, denormal), ours must give the
//! same bits (any NaN for NaN), in both `MulAdd` variants; elsewhere within 6 ulps (XLA's
//! and our errors together; the sweeps measure ours), except where XLA is less accurate than
//! its own bounds (listed in `xla_is_inaccurate`).
//!
//! What XLA's runtime does with denormals, as these points show: it runs with FTZ and DAZ,
//! so results below the normal range are ±0 (`exp(-100) = 0`, `logistic(-100) = 0`,
//! `exp(-745.0f64) = 0`), and most functions read denormal arguments as ±0 (`log(1e-45) =
//! -∞`, `log(-1e-45) = -∞`, `sqrt(1e-45) = 0`, `rsqrt(±1e-45) = ±∞`, `log1p`, `tan` and
//! `erf` of a denormal are ±0, and `f64` `tanh` too). Functions whose XLA form returns a
//! tiny argument unchanged keep it: `f32` `tanh(1e-45) = 1e-45`, `expm1` and `sin` of any
//! denormal.

use super::super::{exp_log, hyperbolic, pow, roots, special, trig, Fused, MulAdd, Separate};
use super::xla_values::{ATAN2_F32, ATAN2_F64, POW_F32, POW_F64, UNARY_F32, UNARY_F64};
use super::{ulps_f32, ulps_f64};

/// The float types of the tables, with what the comparison needs of them.
trait Float: hyperbolic::Hyperbolic + trig::Trig + special::Erf + roots::Roots + pow::Pow {
    type Bits: Copy + PartialEq + std::fmt::LowerHex;
    fn from_bits(bits: Self::Bits) -> Self;
    fn bits(self) -> Self::Bits;
    /// Error in ulps against an accurate `want`.
    fn ulps(self, want: Self) -> f64;
}

impl Float for f32 {
    type Bits = u32;
    fn from_bits(bits: u32) -> f32 {
        f32::from_bits(bits)
    }
    fn bits(self) -> u32 {
        self.to_bits()
    }
    fn ulps(self, want: f32) -> f64 {
        ulps_f32(self, f64::from(want))
    }
}

impl Float for f64 {
    type Bits = u64;
    fn from_bits(bits: u64) -> f64 {
        f64::from_bits(bits)
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
    fn ulps(self, want: f64) -> f64 {
        ulps_f64(self, want)
    }
}

/// Ours for the unary function `name`.
fn unary<T: Float, M: MulAdd>(name: &str, x: T) -> T {
    match name {
        "exp" => exp_log::exp::<T, M>(x),
        "expm1" => exp_log::expm1::<T, M>(x),
        "log" => exp_log::log::<T, M>(x),
        "log1p" => exp_log::log1p::<T, M>(x),
        "tanh" => hyperbolic::tanh::<T, M>(x),
        "logistic" => hyperbolic::logistic::<T, M>(x),
        "sin" => trig::sin::<T, M>(x),
        "cos" => trig::cos::<T, M>(x),
        "tan" => trig::tan::<T, M>(x),
        "erf" => special::erf::<T, M>(x),
        "rsqrt" => roots::rsqrt(x),
        "sqrt" => roots::sqrt(x),
        "cbrt" => roots::cbrt::<T, M>(x),
        "atan2" | "pow" => panic!("{name} takes two arguments"),
        _ => panic!("no function {name}"),
    }
}

/// Ours for the binary function `name`.
fn binary<T: Float, M: MulAdd>(name: &str, a: T, b: T) -> T {
    match name {
        "atan2" => trig::atan2::<T, M>(a, b),
        "pow" => pow::pow::<T, M>(a, b),
        _ => panic!("no binary function {name}"),
    }
}

/// NaN, ±∞, ±0 or denormal.
fn special<T: Float>(v: T) -> bool {
    v.is_nan() || v.abs() == T::INFINITY || v.abs() < T::MIN_POSITIVE
}

/// Points where XLA's result is further from the exact value than ours and than its own
/// bounds: it saturates `tanh` to ±1 from |x| ≈ 8.95 and `erf` from 3.707 (where the
/// correctly rounded results are still 1 - 2⁻²⁴); its `exp` and `expm1` are 4 ulps low just
/// below the overflow threshold (88.72282 to 88.72283); its `cbrt` is up to 12 ulps off
/// (at `MAX`) and maps every denormal to ±8.881775e-16 (ours: the cube root); `pow` with a
/// denormal base treats it as 2⁻¹⁵⁰.
fn xla_is_inaccurate(name: &str, x: f64) -> bool {
    match name {
        "tanh" => x.abs() > 8.9,
        "erf" => x.abs() > 3.7,
        "exp" | "expm1" => x > 88.7 && x < 88.73,
        "cbrt" => true,
        _ => false,
    }
}

/// Compares ours (both variants) with XLA's table; returns the differences found.
fn check_unary<T: Float + Into<f64>>(table: &[(&str, T::Bits, T::Bits)]) -> Vec<String> {
    let mut found = Vec::new();
    for &(name, x, want) in table {
        let (x, want) = (T::from_bits(x), T::from_bits(want));
        for ours in [unary::<T, Separate>(name, x), unary::<T, Fused>(name, x)] {
            let same = ours.bits() == want.bits() || ours.is_nan() && want.is_nan();
            let ok = if special(x) || special(want) {
                same || name == "cbrt" && x.abs() < T::MIN_POSITIVE
            } else {
                same || ours.ulps(want) <= 6.0 || xla_is_inaccurate(name, x.into())
            };
            if !ok {
                found.push(format!(
                    "{name}({:e}): ours {:e} ({:#x}), XLA {:e} ({:#x})",
                    x.into(),
                    ours.into(),
                    ours.bits(),
                    want.into(),
                    want.bits()
                ));
            }
        }
    }
    found
}

/// A row of a binary table: the function, both arguments' bits, XLA's result's bits.
type BinaryRow<'a, B> = (&'a str, B, B, B);

/// Compares ours (both variants) with XLA's table of a binary function.
fn check_binary<T: Float + Into<f64>>(table: &[BinaryRow<'_, T::Bits>]) -> Vec<String> {
    let mut found = Vec::new();
    for &(name, a, b, want) in table {
        let (a, b, want) = (T::from_bits(a), T::from_bits(b), T::from_bits(want));
        for ours in [binary::<T, Separate>(name, a, b), binary::<T, Fused>(name, a, b)] {
            let same = ours.bits() == want.bits() || ours.is_nan() && want.is_nan();
            let ok = same || !(special(a) || special(b) || special(want)) && ours.ulps(want) <= 6.0;
            if !ok {
                found.push(format!(
                    "{name}({:e}, {:e}): ours {:e}, XLA {:e}",
                    a.into(),
                    b.into(),
                    ours.into(),
                    want.into()
                ));
            }
        }
    }
    found
}

#[test]
fn f32_functions_match_xla_at_edge_points() {
    let mut found = check_unary::<f32>(UNARY_F32);
    found.extend(check_binary::<f32>(ATAN2_F32));
    found.extend(check_binary::<f32>(POW_F32));
    assert!(found.is_empty(), "{} differences:\n{}", found.len(), found.join("\n"));
}

#[test]
fn f64_functions_match_xla_at_edge_points() {
    let mut found = check_unary::<f64>(UNARY_F64);
    found.extend(check_binary::<f64>(ATAN2_F64));
    found.extend(check_binary::<f64>(POW_F64));
    assert!(found.is_empty(), "{} differences:\n{}", found.len(), found.join("\n"));
}

/// The answers to the questions one asks first, spelled out (all from `jax.jit` on CPU).
#[test]
fn xla_edge_values_by_name() {
    let den = f32::from_bits(1); // 1e-45
    type S = Separate;
    // exp flushes results below the normal range: no denormals for x in (-103.9, -87.34).
    assert_eq!(exp_log::exp::<f32, S>(-87.33), 1.183_210_7e-38);
    assert_eq!(exp_log::exp::<f32, S>(-87.34).to_bits(), 0);
    assert_eq!(exp_log::exp::<f32, S>(-100.0).to_bits(), 0);
    assert_eq!(exp_log::exp::<f32, S>(88.73), f32::INFINITY);
    assert_eq!(exp_log::exp::<f32, S>(f32::NEG_INFINITY).to_bits(), 0);
    assert_eq!(exp_log::exp::<f64, S>(-745.0).to_bits(), 0);
    // tanh of a denormal is the denormal for f32, +0 for f64; ±1 at ±∞; signs of zeros kept.
    assert_eq!(hyperbolic::tanh::<f32, S>(den).to_bits(), 1);
    assert_eq!(hyperbolic::tanh::<f64, S>(f64::from_bits(1)).to_bits(), 0);
    assert_eq!(hyperbolic::tanh::<f32, S>(-0.0).to_bits(), (-0.0f32).to_bits());
    assert_eq!(hyperbolic::tanh::<f32, S>(f32::NEG_INFINITY), -1.0);
    // logistic(-100) = 0 (flushed), logistic(-87.33) is still normal.
    assert_eq!(hyperbolic::logistic::<f32, S>(-100.0).to_bits(), 0);
    assert_eq!(hyperbolic::logistic::<f32, S>(-87.33), 1.183_210_7e-38);
    // log: -∞ at ±0 and at denormals of either sign, NaN below 0.
    assert_eq!(exp_log::log::<f32, S>(0.0), f32::NEG_INFINITY);
    assert_eq!(exp_log::log::<f32, S>(-den), f32::NEG_INFINITY);
    assert!(exp_log::log::<f32, S>(-1.0).is_nan());
    // log1p and expm1 keep -0; log1p reads a denormal as 0, expm1 returns it.
    assert_eq!(exp_log::log1p::<f32, S>(-0.0).to_bits(), (-0.0f32).to_bits());
    assert_eq!(exp_log::log1p::<f32, S>(den).to_bits(), 0);
    assert_eq!(exp_log::expm1::<f32, S>(-0.0).to_bits(), (-0.0f32).to_bits());
    assert_eq!(exp_log::expm1::<f32, S>(den).to_bits(), 1);
    assert_eq!(exp_log::log1p::<f32, S>(-1.0), f32::NEG_INFINITY);
    // sin(-0) = -0; sin and cos of huge arguments are reduced exactly.
    assert_eq!(trig::sin::<f32, S>(-0.0).to_bits(), (-0.0f32).to_bits());
    assert_eq!(trig::sin::<f32, S>(f32::MAX), -0.521_876_5);
    assert!(trig::cos::<f32, S>(f32::INFINITY).is_nan());
    // rsqrt(±0) = ±∞, denormals included; sqrt of a denormal is 0.
    assert_eq!(roots::rsqrt(0.0f32), f32::INFINITY);
    assert_eq!(roots::rsqrt(-0.0f32), f32::NEG_INFINITY);
    assert_eq!(roots::rsqrt(den), f32::INFINITY);
    assert_eq!(roots::sqrt(den).to_bits(), 0);
    // atan2 of signed zeros, pow's special cases.
    assert_eq!(trig::atan2::<f32, S>(-0.0, -0.0), -std::f32::consts::PI);
    assert_eq!(pow::pow::<f32, S>(f32::NAN, 0.0), 1.0);
    assert_eq!(pow::pow::<f32, S>(1.0, f32::NAN), 1.0);
    assert_eq!(pow::pow::<f32, S>(-1.0, f32::INFINITY), 1.0);
    assert_eq!(pow::pow::<f32, S>(-0.0, -3.0), f32::NEG_INFINITY);
    assert!(pow::pow::<f32, S>(-8.0, 1.0 / 3.0).is_nan());
}
