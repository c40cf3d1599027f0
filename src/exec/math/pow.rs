//! `pow(x, y)` with C's (and XLA's) special values.
//!
//! `|x|^y = e^{y·ln|x|}`, the product carried with more precision than the type has: `f32`
//! computes it all in `f64` (a relative error of 2⁻⁴⁵ before the one rounding to `f32`);
//! `f64` takes `ln|x|` as a double-`f64` `hi + lo` and `e^{hi' + lo'} ≈ e^{hi'}·(1 + lo')`.
//! Then the sign (a negative base to an odd integer power), NaN for a negative base to a
//! non-integer power, and the special cases: `pow(x, ±0) = 1` and `pow(1, y) = 1` even for
//! NaN, `pow(-1, ±∞) = 1`.

use super::exp_log::{exp, ExpLog};
use super::real::{ftz, select, MulAdd, Real};

/// Splits `a` into a high half of 26 significant bits and the rest (Dekker), for exact products.
#[inline(always)]
fn split(a: f64) -> (f64, f64) {
    let c = 134_217_729.0 * a; // 2²⁷ + 1
    let hi = c - (c - a);
    (hi, a - hi)
}

/// `a·b` as `hi + lo` exactly (Dekker's product; `|a|, |b| < 2⁹⁹⁵`).
#[inline(always)]
fn two_product(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    let ((ah, al), (bh, bl)) = (split(a), split(b));
    (p, ((ah * bh - p) + ah * bl + al * bh) + al * bl)
}

/// `a.split_exponent()` for any positive finite `a` (`m` in [√½, √2)): a denormal `a` is
/// scaled by 2⁵⁴ into the normal range, the scale taken back in the exponent (exactly: an
/// integer added to it). Only an `f64` base needs it: an `f32` widened is never denormal.
#[inline(always)]
fn split_any_exponent(a: f64) -> (f64, f64) {
    const TWO_POW_54: f64 = 18_014_398_509_481_984.0;
    let denormal = a < f64::MIN_POSITIVE;
    let (m, e) = select(denormal, a * TWO_POW_54, a).split_exponent();
    (m, e + select(denormal, -54.0, 0.0))
}

/// `ln(m·2^e)` as `hi + lo`, for `(m, e)` split as by [`Real::split_exponent`], to about 2⁻⁶⁵
/// relative.
#[inline(always)]
fn log_extended<M: MulAdd>((m, e): (f64, f64)) -> (f64, f64) {
    const LN2_HI: f64 = 6.931_471_803_691_238_2e-1; // 32 significant bits: e·LN2_HI is exact
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    const R: &[f64] = &[
        0.666_666_666_666_671_2,
        0.399_999_999_995_068_36,
        0.285_714_287_322_439_7,
        0.222_221_987_891_465_6,
        0.181_835_868_847_832_7,
        0.153_127_834_610_468_86,
        0.148_142_016_296_259_67,
    ];
    let f = m - 1.0; // exact
                     // ln m = 2·atanh s, s = f / (2 + f) = 2s + s³·r(s²); 2s is carried as hi + lo.
    let d = 2.0 + f;
    let d_lo = f - (d - 2.0); // 2 + f = d + d_lo exactly
    let s = f / d;
    let (p, p_lo) = two_product(s, d);
    let s_lo = (((f - p) - p_lo) - s * d_lo) / d; // s + s_lo = f / (d + d_lo) to 2⁻¹⁰⁶
    let z = s * s;
    let tail = s * z * super::real::poly::<M, _>(z, R);
    let hi = e * LN2_HI + 2.0 * s;
    let lo = (e * LN2_HI - hi + 2.0 * s) + (2.0 * s_lo + tail + e * LN2_LO);
    // Renormalized, so that `lo` is below half an ulp of `hi`.
    let sum = hi + lo;
    (sum, lo - (sum - hi))
}

/// Whether `y` is an integer (every float at or beyond 2^mantissa_bits is).
#[inline(always)]
fn is_integer<T: Real>(y: T, two_pow_mantissa: T) -> bool {
    let a = y.abs();
    a >= two_pow_mantissa || (a + two_pow_mantissa) - two_pow_mantissa == a
}

/// `|x|^y` for one float type, without the sign and the special cases.
pub(crate) trait Pow: ExpLog {
    /// 2^mantissa_bits: the magnitude from which every float is an even integer's neighbour.
    const TWO_POW_MANTISSA: Self;
    fn pow_magnitude<M: MulAdd>(a: Self, y: Self) -> Self;
}

impl Pow for f32 {
    const TWO_POW_MANTISSA: f32 = 8_388_608.0;

    #[inline(always)]
    fn pow_magnitude<M: MulAdd>(a: f32, y: f32) -> f32 {
        let (hi, lo) = log_extended::<M>(f64::from(a).split_exponent());
        ftz(exp::<f64, M>(f64::from(y) * (hi + lo)) as f32)
    }
}

impl Pow for f64 {
    const TWO_POW_MANTISSA: f64 = 4_503_599_627_370_496.0;

    #[inline(always)]
    fn pow_magnitude<M: MulAdd>(a: f64, y: f64) -> f64 {
        // Beyond 2¹⁰⁰ in magnitude, y·ln a is far past overflow or underflow for every a ≠ 1
        // (|ln a| ≥ 2⁻⁵³): clamping keeps Dekker's splits finite.
        let y = select(y.abs() > 1.267_650_600_228_229_4e30, 1.267_650_600_228_229_4e30.copysign(y), y);
        // A denormal base keeps its value (XLA reads any as 2⁻¹⁰⁷⁵).
        let (hi, lo) = log_extended::<M>(split_any_exponent(a));
        let (p, p_lo) = two_product(y, hi);
        // Past ±1000 the result is 0 or ∞ whatever the low part (which may be NaN there).
        let p_lo = select(p.abs() < 1000.0, p_lo + y * lo, 0.0);
        let big = exp::<f64, M>(p);
        ftz(select(big == f64::INFINITY, big, big + big * p_lo))
    }
}

/// `x^y`.
#[inline(always)]
pub(crate) fn pow<T: Pow, M: MulAdd>(x: T, y: T) -> T {
    let a = x.abs();
    // ln 0 = -∞ and ln ∞ = ∞ give 0 or ∞ through the exponential; `pow_magnitude` sees
    // positive finite numbers only (denormals too), the edges are selected below.
    let finite = a > T::ZERO && a < T::INFINITY;
    let magnitude = T::pow_magnitude::<M>(select(finite, a, T::ONE), y);
    let y_positive = y > T::ZERO;
    let edge = select((a == T::ZERO) == y_positive, T::ZERO, T::INFINITY);
    let magnitude = select(finite, magnitude, edge);
    // |x| = 1 with y = ±∞ is 1; |x| ≶ 1 with y = ±∞ is 0 or ∞.
    let y_infinite = y.abs() == T::INFINITY;
    let magnitude = select(
        y_infinite,
        select(a == T::ONE, T::ONE, select((a > T::ONE) == y_positive, T::INFINITY, T::ZERO)),
        magnitude,
    );
    let integer = is_integer(y, T::TWO_POW_MANTISSA);
    let odd = integer && !is_integer(y * T::HALF, T::TWO_POW_MANTISSA);
    let negative = T::ONE.copysign(x) < T::ZERO;
    let result = select(negative && odd, -magnitude, magnitude);
    // A negative finite base to a finite non-integer power has no real value.
    let result =
        select(negative && x > -T::INFINITY && x != T::ZERO && !integer && !y_infinite, T::NAN, result);
    let result = select(x.is_nan() || y.is_nan(), T::NAN, result);
    select(y == T::ZERO || x == T::ONE, T::ONE, result)
}
