//! What every function is built of: a float type's arithmetic and bits ([`Real`]), the
//! multiply-add of its polynomials ([`MulAdd`]: [`Fused`] or [`Separate`]), and the steps they
//! share (selects, polynomials, rounding, XLA's flushing of denormals).

use std::ops::{Add, Div, Mul, Neg, Sub};

/// What the functions need of a float type: its arithmetic, its bits, and a few constants.
pub(crate) trait Real:
    'static
    + Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    const HALF: Self;
    const TWO: Self;
    const INFINITY: Self;
    const NAN: Self;
    /// The smallest positive normal number.
    const MIN_POSITIVE: Self;
    /// `1.5 · 2^mantissa_bits`: `(x + ROUNDER) - ROUNDER` is `x` rounded to the nearest
    /// integer (ties to even) for `|x| < 2^(mantissa_bits - 1)`, and the low bits of
    /// `x + ROUNDER` hold that integer.
    const ROUNDER: Self;

    /// The value nearest to `v` (for constants; folded at compile time).
    fn c(v: f64) -> Self;
    fn abs(self) -> Self;
    /// `self·a + b` with one rounding.
    fn fused_mul_add(self, a: Self, b: Self) -> Self;
    fn is_nan(self) -> bool;
    /// `self` with the sign of `sign`.
    fn copysign(self, sign: Self) -> Self;
    /// `self` with its sign bit flipped where `sign`'s sign bit is set (an exclusive or).
    fn xor_sign(self, sign: Self) -> Self;
    /// `2^n` for an integral `n` (as a float) in the normal exponent range.
    fn pow2i(n: Self) -> Self;
    /// `self · 2ⁿ` where `t = n + ROUNDER` holds `n` in its low bits, by adding `n` to the
    /// exponent field: right where the result is normal, garbage elsewhere (callers select).
    fn scale_by(self, t: Self) -> Self;
    /// Whether the integral `n` (as a float, `|n| < 2^(mantissa_bits - 1)`) is odd.
    fn is_odd_integer(n: Self) -> bool;
    /// `(m, e)` with `self = m · 2^e`, `m` in `[√½, √2)`, `e` integral, for positive normal
    /// finite `self` (anything else gives unspecified values).
    fn split_exponent(self) -> (Self, Self);
    /// `m` in `[1, 2)` and integral `e` with `self = m · 2^e`, for positive normal finite
    /// `self`.
    fn split_exponent_unit(self) -> (Self, Self);
    /// Square root (one instruction).
    fn sqrt(self) -> Self;
    /// The bitwise and of the two values' bits.
    fn and_bits(self, other: Self) -> Self;
    /// The bitwise or of the two values' bits.
    fn or_bits(self, other: Self) -> Self;
}

macro_rules! real {
    ($t:ty, $bits:ty, $signed:ty, mantissa $m:expr, sqrt_half $sqrt_half:expr) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const HALF: Self = 0.5;
            const TWO: Self = 2.0;
            const INFINITY: Self = <$t>::INFINITY;
            const NAN: Self = <$t>::NAN;
            const MIN_POSITIVE: Self = <$t>::MIN_POSITIVE;
            const ROUNDER: Self = 1.5 * (1u64 << $m) as $t;

            #[inline(always)]
            fn c(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn fused_mul_add(self, a: Self, b: Self) -> Self {
                <$t>::mul_add(self, a, b)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline(always)]
            fn copysign(self, sign: Self) -> Self {
                <$t>::copysign(self, sign)
            }
            #[inline(always)]
            fn xor_sign(self, sign: Self) -> Self {
                const SIGN: $bits = 1 << (<$bits>::BITS - 1);
                <$t>::from_bits(self.to_bits() ^ (sign.to_bits() & SIGN))
            }
            #[inline(always)]
            fn pow2i(n: Self) -> Self {
                // The low bits of `n + ROUNDER` are `n` in two's complement; adding the bias
                // and shifting the rest out leaves the biased exponent.
                const BIAS: $bits = (1 << (<$bits>::BITS - $m - 2)) - 1;
                <$t>::from_bits((n + Self::ROUNDER).to_bits().wrapping_add(BIAS) << $m)
            }
            #[inline(always)]
            fn scale_by(self, t: Self) -> Self {
                <$t>::from_bits(self.to_bits().wrapping_add(t.to_bits() << $m))
            }
            #[inline(always)]
            fn is_odd_integer(n: Self) -> bool {
                (n + Self::ROUNDER).to_bits() & 1 == 1
            }
            #[inline(always)]
            fn split_exponent(self) -> (Self, Self) {
                // Offsetting by √½'s bits makes the exponent field count from √½, not 1.
                const OFFSET: $bits = ($sqrt_half as $t).to_bits();
                const MANTISSA: $bits = (1 << $m) - 1;
                let shifted = self.to_bits().wrapping_sub(OFFSET);
                let m = <$t>::from_bits((shifted & MANTISSA).wrapping_add(OFFSET));
                // The exponent (an arithmetic shift), into a float through `ROUNDER`'s bits.
                let e = ((shifted as $signed) >> $m) as $bits;
                let e = <$t>::from_bits(Self::ROUNDER.to_bits().wrapping_add(e));
                (m, e - Self::ROUNDER)
            }
            #[inline(always)]
            fn split_exponent_unit(self) -> (Self, Self) {
                const MANTISSA: $bits = (1 << $m) - 1;
                const ONE: $bits = (1.0 as $t).to_bits();
                let bits = self.to_bits();
                let m = <$t>::from_bits((bits & MANTISSA) | ONE);
                let e = <$t>::from_bits(
                    Self::ROUNDER.to_bits().wrapping_add((bits >> $m).wrapping_sub(ONE >> $m)),
                );
                (m, e - Self::ROUNDER)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn and_bits(self, other: Self) -> Self {
                <$t>::from_bits(self.to_bits() & other.to_bits())
            }
            #[inline(always)]
            fn or_bits(self, other: Self) -> Self {
                <$t>::from_bits(self.to_bits() | other.to_bits())
            }
        }
    };
}

real!(f32, u32, i32, mantissa 23, sqrt_half std::f64::consts::FRAC_1_SQRT_2);
real!(f64, u64, i64, mantissa 52, sqrt_half std::f64::consts::FRAC_1_SQRT_2);

/// `if condition { a } else { b }`, which LLVM turns into a blend in vectorized loops.
#[inline(always)]
pub(crate) fn select<T>(condition: bool, a: T, b: T) -> T {
    if condition {
        a
    } else {
        b
    }
}

/// `x` limited to `[lo, hi]`; NaN stays NaN (the comparisons are false for it).
#[inline(always)]
pub(super) fn clamp<T: Real>(x: T, lo: T, hi: T) -> T {
    let x = select(x < lo, lo, x);
    select(x > hi, hi, x)
}

/// How the steps `a·b + c` of a polynomial are computed: [`Fused`] or [`Separate`].
pub(crate) trait MulAdd {
    /// Whether this is [`Fused`]: a function may pick a cheaper form whose accuracy needs it.
    const FUSED: bool;
    fn mul_add<T: Real>(a: T, b: T, c: T) -> T;
}

/// One rounding (`mul_add`): the `vfmadd` instruction in chunk loops compiled for AVX2 or
/// AVX-512 (whose CPUs all have FMA); a libm call anywhere else, exact but slow.
pub(crate) enum Fused {}

/// A product and a sum, two roundings: for code compiled without FMA (the baseline build).
pub(crate) enum Separate {}

/// Whether the chunk loops run with [`Fused`] on this CPU (it has AVX2 and FMA, or AVX-512):
/// code outside them (scalar programs) then computes with [`Fused`] too, so a function gives
/// the same bits wherever it runs.
pub(crate) fn chunk_loops_fuse() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        is_x86_feature_detected!("fma") && is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

impl MulAdd for Fused {
    const FUSED: bool = true;
    #[inline(always)]
    fn mul_add<T: Real>(a: T, b: T, c: T) -> T {
        a.fused_mul_add(b, c)
    }
}

impl MulAdd for Separate {
    const FUSED: bool = false;
    #[inline(always)]
    fn mul_add<T: Real>(a: T, b: T, c: T) -> T {
        a * b + c
    }
}

/// `c[0] + x·c[1] + x²·c[2] + …` by Horner's rule (unrolled: `c` is a constant).
#[inline(always)]
pub(super) fn poly<M: MulAdd, T: Real>(x: T, c: &[T]) -> T {
    let (last, rest) = c.split_last().expect("a polynomial has a coefficient");
    rest.iter().rev().fold(*last, |acc, &k| M::mul_add(acc, x, k))
}

/// `x` rounded to the nearest integer, ties to even (`|x| < 2^(mantissa_bits - 1)`).
#[inline(always)]
pub(super) fn round<T: Real>(x: T) -> T {
    (x + T::ROUNDER) - T::ROUNDER
}

/// A denormal `y` flushed to zero of its sign, as XLA's runtime (FTZ) leaves results.
#[inline(always)]
pub(super) fn ftz<T: Real>(y: T) -> T {
    select(y.abs() < T::MIN_POSITIVE, y * T::ZERO, y)
}

/// A denormal `x` read as zero of its sign, as XLA's runtime (DAZ) reads arguments.
#[inline(always)]
pub(super) fn daz<T: Real>(x: T) -> T {
    select(x.abs() < T::MIN_POSITIVE, x * T::ZERO, x)
}
