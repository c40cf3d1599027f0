//! `maximum` and `minimum` as XLA computes them (IEEE 754-2019): NaN if either operand is NaN,
//! and −0 orders below +0. Written with selects, not branches, so a chunk of them (relu, a
//! max-reduction) vectorizes.

use super::real::{select, Real};

/// The larger of `a` and `b`; NaN if either is, +0 for ±0.
///
/// `a > b ? a : b` and `b > a ? b : a` (one `maxps` each) are both the larger of two ordered
/// values that differ; where they are equal (at most in the sign of a zero) one is `a`, the
/// other `b`, so their bitwise and is the result: −0 only if both are.
#[inline(always)]
pub(crate) fn maximum<T: Real>(a: T, b: T) -> T {
    let larger = select(a > b, a, b).and_bits(select(b > a, b, a));
    select(a.is_nan() | b.is_nan(), T::NAN, larger)
}

/// The smaller of `a` and `b`; NaN if either is, −0 for ±0 (the bitwise or where equal, as
/// [`maximum`]).
#[inline(always)]
pub(crate) fn minimum<T: Real>(a: T, b: T) -> T {
    let smaller = select(a < b, a, b).or_bits(select(b < a, b, a));
    select(a.is_nan() | b.is_nan(), T::NAN, smaller)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The branching definitions these replace, as the reference.
    fn reference_maximum(a: f64, b: f64) -> f64 {
        if a.is_nan() || b.is_nan() {
            f64::NAN
        } else if a > b || (a == b && b.is_sign_negative()) {
            a
        } else {
            b
        }
    }

    fn reference_minimum(a: f64, b: f64) -> f64 {
        if a.is_nan() || b.is_nan() {
            f64::NAN
        } else if a < b || (a == b && b.is_sign_positive()) {
            a
        } else {
            b
        }
    }

    const SPECIAL: [f64; 12] =
        [0.0, -0.0, 1.0, -1.0, 1.5, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e-310, -1e-310, 3e38, -2.5];

    #[test]
    fn extrema_match_the_ieee_definitions_bit_for_bit() {
        for &a in &SPECIAL {
            for &b in &SPECIAL {
                let bits32 = |v: f32| v.to_bits();
                let (a32, b32) = (a as f32, b as f32);
                assert_eq!(maximum(a, b).to_bits(), reference_maximum(a, b).to_bits(), "max({a}, {b})");
                assert_eq!(minimum(a, b).to_bits(), reference_minimum(a, b).to_bits(), "min({a}, {b})");
                let (max32, min32) =
                    (reference_maximum(a32.into(), b32.into()), reference_minimum(a32.into(), b32.into()));
                assert_eq!(bits32(maximum(a32, b32)), bits32(max32 as f32), "max({a32}, {b32})");
                assert_eq!(bits32(minimum(a32, b32)), bits32(min32 as f32), "min({a32}, {b32})");
            }
        }
    }
}
