//! `exp`, `expm1`, `log`, `log1p`.
//!
//! - `exp`: `x = n·ln 2 + r` with `|r| ≤ ln 2 / 2` (Cody–Waite: `ln 2` in a short high part,
//!   so `n·LN2_HI` is exact, and a low part), `eʳ = 1 + r + r²·q(r)` by a minimax polynomial,
//!   scaled by `2ⁿ` by adding `n` to the exponent field; below the normal range 0 (XLA
//!   flushes denormals), past the overflow threshold ∞.
//! - `expm1`: the same reduction; `eʳ - 1 = r + r²·g(r)`, and `eˣ - 1 = 2·(t·(eʳ-1) + (t - ½))`
//!   with `t = 2ⁿ⁻¹`, exact but for one rounding of the sum.
//! - `log`: `x = m·2ᵉ` with `m` in `[√½, √2)`, `log x = e·ln 2 + log1p(m - 1)`, the latter a
//!   minimax polynomial (`f32`) or `2·atanh(f / (2 + f))` by a polynomial in its square (`f64`).
//! - `log1p`: `u = 1 + x` rounded, `log1p x = log u + (x - (u - 1)) / u` (the second term
//!   restores what rounding `u` lost).
//!
//! Measured bounds (ulps; `f32`: all 2³² inputs, `f64`: random samples against libm) are in
//! `tests/sweeps.rs`.

use super::real::{clamp, daz, poly, round, select, MulAdd, Real};

/// The constants of the exponential and logarithm for one float type.
pub(crate) trait ExpLog: Real {
    /// The largest argument whose `exp` is finite.
    const EXP_OVERFLOW: Self;
    /// Below this `exp` is 0 (its result would be denormal, or 0); at and above it `n` is
    /// at least the smallest normal exponent, so the scaled result is normal or flushed.
    const EXP_UNDERFLOW: Self;
    /// From this on (up to `EXP_OVERFLOW`) `exp`'s result is normal: [`exp_fast`] is `exp`.
    const EXP_FAST_MIN: Self;
    /// `expm1` clamps its argument to `[EXPM1_MIN, EXPM1_MAX]` (beyond: -1 or ∞).
    const EXPM1_MAX: Self;
    /// `expm1` is -1 below this.
    const EXPM1_MIN: Self;
    /// `expm1(x)` rounds to `x` below this magnitude.
    const EXPM1_TINY: Self;
    /// `ln 2` in a high part with few enough bits that `n·LN2_HI` is exact, and the rest.
    const LN2_HI: Self;
    const LN2_LO: Self;
    /// `(eʳ - 1 - r) / r²` on `|r| ≤ ln 2 / 2`.
    const EXP_Q: &'static [Self];
    /// `(eʳ - 1 - r) / r²` again, fitted for the relative error of `eʳ - 1`.
    const EXPM1_G: &'static [Self];

    /// `log1p f` for `f` in `[√½ - 1, √2 - 1]`.
    fn log1p_reduced<M: MulAdd>(f: Self) -> Self;
}

impl ExpLog for f32 {
    const EXP_OVERFLOW: f32 = 88.722_83; // 0x42b17217
    const EXP_UNDERFLOW: f32 = -87.5;
    const EXP_FAST_MIN: f32 = -87.3; // ln f32::MIN_POSITIVE = -87.336…
    const EXPM1_MAX: f32 = 89.0;
    const EXPM1_MIN: f32 = -20.0;
    const EXPM1_TINY: f32 = 2.980_232_2e-8; // 2⁻²⁵
    const LN2_HI: f32 = 0.693_145_75; // 0x3f317200: 16 significant bits
    const LN2_LO: f32 = 1.428_606_8e-6;
    const EXP_Q: &'static [f32] = &[0.499_999_94, 0.166_665_21, 0.041_668_39, 0.008_368_71, 0.001_381_461_3];
    const EXPM1_G: &'static [f32] =
        &[0.5, 0.166_666_66, 0.041_666_48, 0.008_333_419, 0.001_393_324_5, 0.000_198_241_29];

    #[inline(always)]
    fn log1p_reduced<M: MulAdd>(f: f32) -> f32 {
        // log1p f = f + f²·q(f), q minimax on [√½ - 1, √2 - 1] for the relative error.
        const Q: &[f32] = &[
            -0.5,
            0.333_333_3,
            -0.250_008_2,
            0.200_012_27,
            -0.166_233_57,
            0.142_017_57,
            -0.131_601_83,
            0.127_615_78,
            -0.076_344_98,
        ];
        f + f * f * poly::<M, _>(f, Q)
    }
}

impl ExpLog for f64 {
    const EXP_OVERFLOW: f64 = 709.782_712_893_384; // 0x40862e42fefa39ef
    const EXP_UNDERFLOW: f64 = -708.5;
    const EXP_FAST_MIN: f64 = -708.3; // ln f64::MIN_POSITIVE = -708.396…
    const EXPM1_MAX: f64 = 710.0;
    const EXPM1_MIN: f64 = -40.0;
    const EXPM1_TINY: f64 = 5.551_115_123_125_783e-17; // 2⁻⁵⁴
    const LN2_HI: f64 = 6.931_471_803_691_238_2e-1; // 32 significant bits
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    const EXP_Q: &'static [f64] = &[
        0.500_000_000_000_001_1,
        0.166_666_666_666_664_13,
        0.041_666_666_666_530_267,
        0.008_333_333_333_494_336,
        0.001_388_888_894_359_776_6,
        0.000_198_412_695_067_722_6,
        2.480_149_313_610_629_6e-5,
        2.755_758_627_339_054_5e-6,
        2.763_023_394_999_228_4e-7,
        2.500_006_998_103_552_3e-8,
    ];
    const EXPM1_G: &'static [f64] = &[
        0.5,
        0.166_666_666_666_666_77,
        0.041_666_666_666_666_58,
        0.008_333_333_333_322_167,
        0.001_388_888_888_894_262_5,
        0.000_198_412_698_849_187_47,
        2.480_158_719_828_097_8e-5,
        2.755_724_532_116_035e-6,
        2.755_738_701_933_913e-7,
        2.510_867_609_453_608_6e-8,
        2.087_891_103_730_336_7e-9,
    ];

    #[inline(always)]
    fn log1p_reduced<M: MulAdd>(f: f64) -> f64 {
        // log1p f = 2·atanh s with s = f / (2 + f); 2·atanh s = 2s + s·z·r(z), z = s², and
        // 2s = f - f²/2 + s·f²/2 keeps the large terms exact.
        const R: &[f64] = &[
            0.666_666_666_666_671_2,
            0.399_999_999_995_068_36,
            0.285_714_287_322_439_7,
            0.222_221_987_891_465_6,
            0.181_835_868_847_832_7,
            0.153_127_834_610_468_86,
            0.148_142_016_296_259_67,
        ];
        let s = f / (2.0 + f);
        let z = s * s;
        let half_f2 = 0.5 * f * f;
        f - (half_f2 - s * (half_f2 + z * poly::<M, _>(z, R)))
    }
}

/// `eˣ`; denormal results are 0 (XLA's runtime flushes them).
#[inline(always)]
pub(crate) fn exp<T: ExpLog, M: MulAdd>(x: T) -> T {
    let y = exp_fast::<T, M>(x);
    // Denormal results (an exponent field of 0) and anything below flush to 0; past the
    // overflow threshold ∞, and NaN stays NaN (x + ∞).
    let y = select(x < T::EXP_UNDERFLOW || y < T::MIN_POSITIVE, T::ZERO, y);
    select(x <= T::EXP_OVERFLOW, y, x + T::INFINITY)
}

/// `eˣ` without [`exp`]'s selects: equal to it where the result is normal, unspecified
/// where [`exp_beyond_fast`] (chunk loops compute every lane so, then those lanes again).
#[inline(always)]
pub(crate) fn exp_fast<T: ExpLog, M: MulAdd>(x: T) -> T {
    // n = round(x / ln 2), kept in the low bits of t as well. Fusing these steps only
    // removes roundings: any integer near x / ln 2 serves, and n·LN2_HI is exact.
    let t = M::mul_add(x, T::c(std::f64::consts::LOG2_E), T::ROUNDER);
    let n = t - T::ROUNDER;
    let r = M::mul_add(-n, T::LN2_LO, M::mul_add(-n, T::LN2_HI, x));
    let p = T::ONE + M::mul_add(r * r, poly::<M, _>(r, T::EXP_Q), r);
    p.scale_by(t)
}

/// Whether [`exp_fast`] is not `exp` at `x`: below `EXP_FAST_MIN`, past the overflow
/// threshold, or NaN.
#[inline(always)]
pub(crate) fn exp_beyond_fast<T: ExpLog>(x: T) -> bool {
    !(x >= T::EXP_FAST_MIN && x <= T::EXP_OVERFLOW)
}

/// `eˣ - 1`, accurate near 0.
#[inline(always)]
pub(crate) fn expm1<T: ExpLog, M: MulAdd>(x: T) -> T {
    let xc = clamp(x, T::EXPM1_MIN, T::EXPM1_MAX);
    let n = round(xc * T::c(std::f64::consts::LOG2_E));
    let r = (xc - n * T::LN2_HI) - n * T::LN2_LO;
    let em = r + r * r * poly::<M, _>(r, T::EXPM1_G);
    let t = T::pow2i(n - T::ONE);
    let y = (t * em + (t - T::HALF)) * T::TWO;
    // Tiny arguments (zeros and denormals included) are their own result.
    select(x.abs() < T::EXPM1_TINY, x, y)
}

/// `ln x` for positive normal finite `x`.
#[inline(always)]
fn log_positive<T: ExpLog, M: MulAdd>(x: T) -> T {
    let (m, e) = x.split_exponent();
    e * T::LN2_HI + (T::log1p_reduced::<M>(m - T::ONE) + e * T::LN2_LO)
}

/// `ln x`: -∞ at ±0 and, as in XLA, at denormals; NaN below 0.
#[inline(always)]
pub(crate) fn log<T: ExpLog, M: MulAdd>(x: T) -> T {
    let x = daz(x);
    let y = select(x == T::INFINITY, x, log_positive::<T, M>(x));
    select(x > T::ZERO, y, select(x == T::ZERO, -T::INFINITY, T::NAN))
}

/// `ln(1 + x)`, accurate near 0; denormals read as ±0, as in XLA.
#[inline(always)]
pub(crate) fn log1p<T: ExpLog, M: MulAdd>(x: T) -> T {
    let x = daz(x);
    let u = T::ONE + x;
    let y = log_positive::<T, M>(u) + (x - (u - T::ONE)) / u;
    let y = select(x == T::INFINITY, x, select(x == T::ZERO, x, y));
    select(x > -T::ONE, y, select(x == -T::ONE, -T::INFINITY, T::NAN))
}
