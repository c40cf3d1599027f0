//! `sin`, `cos`, `tan` and `atan2`.
//!
//! - `sin`, `cos`: `|x| = r + q·π/2` with `q` even for sine (`q = 2·round(|x|/π)`) and odd for
//!   cosine, so that both become `±sin r` on `|r| ≤ π/2`, one odd minimax polynomial. `f32`
//!   arguments are reduced and evaluated in `f64` (π/2 in two parts; results within an ulp);
//!   `f64` arguments are reduced to a double-`f64` `hi + lo` (π/2 in four parts, the rounding
//!   of the first subtraction recovered exactly). The fast path covers `|x| ≤ FAST_MAX`;
//!   beyond it (and at ±∞) the complete functions call the system libm, and chunk loops
//!   recompute just those lanes ([`trig_beyond_fast`]).
//! - `tan`: `q = round(|x|·2/π)`, `r` on `|r| ≤ π/4`, `tan = sin r / cos r` for even `q`,
//!   `-cos r / sin r` for odd, one division.
//! - `atan2`: `t = min(|y|, |x|) / max(|y|, |x|)` or, above `tan(π/8)`, `(min - max) /
//!   (min + max)` with `π/4` added back; `atan t` by an odd polynomial; the octant restored as
//!   `k·π/4 ± atan t` in one sum (π/4 in a high part whose small multiples are exact, and a
//!   low part), the sign last.

use super::real::{daz, poly, round, select, MulAdd, Real};

/// The constants and fast paths of the trigonometric functions for one float type.
pub(crate) trait Trig: Real {
    /// The largest `|x|` the branch-free `sin`, `cos` and `tan` reduce correctly.
    const FAST_MAX: Self;
    /// `(atan t - t) / t³` in `t²`, on `|t| ≤ tan(π/8)`.
    const ATAN_P: &'static [Self];
    /// π/4 with its last two bits zero (so `k·FRAC_PI_4_HI` is exact for `k ≤ 4`), and the
    /// rest.
    const FRAC_PI_4_HI: Self;
    const FRAC_PI_4_LO: Self;

    /// `sin x` for `|x| ≤ FAST_MAX`.
    fn sin_fast<M: MulAdd>(self) -> Self;
    /// `cos x` for `|x| ≤ FAST_MAX`.
    fn cos_fast<M: MulAdd>(self) -> Self;
    /// `tan x` for `|x| ≤ FAST_MAX`.
    fn tan_fast<M: MulAdd>(self) -> Self;
    /// The system libm's functions, for arguments beyond the fast path.
    fn sin_libm(self) -> Self;
    fn cos_libm(self) -> Self;
    fn tan_libm(self) -> Self;
}

/// `(sin r - r) / r³` in `r²` on `|r| ≤ π/2`, for `f32` results (evaluated in `f64`).
const SIN_P_FOR_F32: &[f64] = &[
    -0.166_666_666_660_821_8,
    0.008_333_333_053_390_9,
    -0.000_198_411_363_663_815_05,
    2.753_914_242_239_817e-6,
    -2.412_456_502_223_426e-8,
];

/// The same to `f64` precision.
const SIN_P: &[f64] = &[
    -0.166_666_666_666_666_66,
    0.008_333_333_333_333_333,
    -0.000_198_412_698_412_698_4,
    2.755_731_922_398_358e-6,
    -2.505_210_838_459_126_6e-8,
    1.605_904_368_676_748e-10,
    -7.647_149_712_682_963e-13,
    2.810_745_748_262_062_3e-15,
    -8.035_121_022_941_462e-18,
];

/// `(cos r - 1 + r²/2) / r⁴` in `r²` on `|r| ≤ π/4`, for `f32` results.
const COS_Q_FOR_F32: &[f64] = &[
    0.041_666_666_665_419_495,
    -0.001_388_888_785_490_950_5,
    2.480_062_582_801_434_6e-5,
    -2.729_975_057_992_906_5e-7,
];

/// The same to `f64` precision.
const COS_Q: &[f64] = &[
    0.041_666_666_666_666_664,
    -0.001_388_888_888_888_851_4,
    2.480_158_730_026_060_4e-5,
    -2.755_731_793_216_742e-7,
    2.087_626_219_339_397e-9,
    -1.138_966_518_056_694_4e-11,
];

/// π/2 in two parts for `f32` arguments: the first has 30 significant bits, so `q·P1` is
/// exact for `q < 2²²`.
const P1_FOR_F32: f64 = 1.570_796_327_665_448_2;
const P2_FOR_F32: f64 = -8.705_515_695_504_166e-10;

/// π/2 in four parts for `f64` arguments: the first two have 26 significant bits, so their
/// products with `q < 2²⁷` are exact.
const P1: f64 = 1.570_796_340_703_964_2;
const P2: f64 = -1.390_906_767_539_945_6e-8;
const P3: f64 = 6.123_233_995_736_766e-17;
const P4: f64 = -1.497_384_904_859_169_8e-33;

/// `sin r` on `|r| ≤ π/2` to about 2⁻³⁰, for `f32` results.
#[inline(always)]
fn sin_poly_for_f32<M: MulAdd>(r: f64) -> f64 {
    let z = r * r;
    r + r * (z * poly::<M, _>(z, SIN_P_FOR_F32))
}

/// `sin(hi + lo)` for `|hi| ≤ π/2`, `|lo| ≤ ulp(hi)`.
#[inline(always)]
fn sin_poly<M: MulAdd>(hi: f64, lo: f64) -> f64 {
    let z = hi * hi;
    hi + (lo * (1.0 - 0.5 * z) + hi * (z * poly::<M, _>(z, SIN_P)))
}

/// `cos(hi + lo)` for `|hi| ≤ π/4`, `|lo| ≤ ulp(hi)`.
#[inline(always)]
fn cos_poly<M: MulAdd>(hi: f64, lo: f64, coefficients: &[f64]) -> f64 {
    let z = hi * hi;
    let half_z = 0.5 * z;
    let w = 1.0 - half_z;
    // 1 - z/2 rounded, and what that rounding lost, so the small terms add to the exact sum.
    w + (((1.0 - w) - half_z) + (z * z * poly::<M, _>(z, coefficients) - hi * lo))
}

/// `a - q·π/2` as `hi + lo` (double-`f64`), for `0 ≤ q < 2²⁷` near `a·2/π`.
#[inline(always)]
fn reduce(a: f64, q: f64) -> (f64, f64) {
    let r1 = a - q * P1; // exact: q·P1 is exact and close to a
    let w = q * P2; // exact
    let hi = r1 - w;
    // Knuth's two-sum: the exact rounding error of `hi`.
    let back = hi - r1;
    let err = (r1 - (hi - back)) + (-w - back);
    let lo = (err - q * P3) - q * P4;
    let s = hi + lo;
    (s, lo - (s - hi))
}

/// Flips `y`'s sign where `odd` holds.
#[inline(always)]
fn negate_if(odd: bool, y: f64) -> f64 {
    select(odd, -y, y)
}

impl Trig for f32 {
    const FAST_MAX: f32 = 4.0e6;
    const ATAN_P: &'static [f32] =
        &[-0.333_333_34, 0.199_997_75, -0.142_699_67, 0.107_911_96, -0.065_679_215];
    const FRAC_PI_4_HI: f32 = 0.785_398_24; // 22 significant bits
    const FRAC_PI_4_LO: f32 = -8.146_034e-8;

    #[inline(always)]
    fn sin_fast<M: MulAdd>(self) -> f32 {
        let a = f64::from(self.abs());
        let j = round(a * std::f64::consts::FRAC_1_PI);
        let r = (a - (2.0 * j) * P1_FOR_F32) - (2.0 * j) * P2_FOR_F32;
        (negate_if(f64::is_odd_integer(j), sin_poly_for_f32::<M>(r)) as f32).xor_sign(self)
    }

    #[inline(always)]
    fn cos_fast<M: MulAdd>(self) -> f32 {
        let a = f64::from(self.abs());
        let j = round(a * std::f64::consts::FRAC_1_PI - 0.5);
        let q = 2.0 * j + 1.0;
        let r = (a - q * P1_FOR_F32) - q * P2_FOR_F32;
        negate_if(!f64::is_odd_integer(j), sin_poly_for_f32::<M>(r)) as f32
    }

    #[inline(always)]
    fn tan_fast<M: MulAdd>(self) -> f32 {
        let x = daz(self);
        let a = f64::from(x.abs());
        let q = round(a * std::f64::consts::FRAC_2_PI);
        let r = (a - q * P1_FOR_F32) - q * P2_FOR_F32;
        let (s, c) = (sin_poly_for_f32::<M>(r), cos_poly::<M>(r, 0.0, COS_Q_FOR_F32));
        let odd = f64::is_odd_integer(q);
        ((select(odd, -c, s) / select(odd, s, c)) as f32).xor_sign(x)
    }

    fn sin_libm(self) -> f32 {
        f32::sin(self)
    }
    fn cos_libm(self) -> f32 {
        f32::cos(self)
    }
    fn tan_libm(self) -> f32 {
        f32::tan(self)
    }
}

impl Trig for f64 {
    const FAST_MAX: f64 = 1.0e8;
    const ATAN_P: &'static [f64] = &[
        -0.333_333_333_333_333_3,
        0.2,
        -0.142_857_142_857_139_27,
        0.111_111_111_109_738_56,
        -0.090_909_090_713_436_52,
        0.076_923_063_704_126_08,
        -0.066_666_179_357_820_31,
        0.058_812_877_664_212_97,
        -0.052_487_078_932_227_01,
        0.046_381_889_915_850_266,
        -0.036_865_938_439_369_55,
        0.018_887_211_396_342_42,
    ];
    const FRAC_PI_4_HI: f64 = std::f64::consts::FRAC_PI_4; // its last three bits are zero
    const FRAC_PI_4_LO: f64 = 3.061_616_997_868_383e-17;

    #[inline(always)]
    fn sin_fast<M: MulAdd>(self) -> f64 {
        let a = self.abs();
        let j = round(a * std::f64::consts::FRAC_1_PI);
        let (hi, lo) = reduce(a, 2.0 * j);
        negate_if(f64::is_odd_integer(j), sin_poly::<M>(hi, lo)).xor_sign(self)
    }

    #[inline(always)]
    fn cos_fast<M: MulAdd>(self) -> f64 {
        let a = self.abs();
        let j = round(a * std::f64::consts::FRAC_1_PI - 0.5);
        let (hi, lo) = reduce(a, 2.0 * j + 1.0);
        negate_if(!f64::is_odd_integer(j), sin_poly::<M>(hi, lo))
    }

    #[inline(always)]
    fn tan_fast<M: MulAdd>(self) -> f64 {
        let x = daz(self);
        let a = x.abs();
        let q = round(a * std::f64::consts::FRAC_2_PI);
        let (hi, lo) = reduce(a, q);
        let (s, c) = (sin_poly::<M>(hi, lo), cos_poly::<M>(hi, lo, COS_Q));
        let odd = f64::is_odd_integer(q);
        (select(odd, -c, s) / select(odd, s, c)).xor_sign(x)
    }

    fn sin_libm(self) -> f64 {
        f64::sin(self)
    }
    fn cos_libm(self) -> f64 {
        f64::cos(self)
    }
    fn tan_libm(self) -> f64 {
        f64::tan(self)
    }
}

/// Whether `x` is beyond the fast path of `sin`, `cos` and `tan` (huge or infinite): chunk
/// loops compute such lanes again with the complete functions.
#[inline(always)]
pub(crate) fn trig_beyond_fast<T: Trig>(x: T) -> bool {
    x.abs() > T::FAST_MAX
}

/// `sin x`, branch-free; valid where [`trig_beyond_fast`] is false.
#[inline(always)]
pub(crate) fn sin_fast<T: Trig, M: MulAdd>(x: T) -> T {
    x.sin_fast::<M>()
}

/// `cos x`, branch-free; valid where [`trig_beyond_fast`] is false.
#[inline(always)]
pub(crate) fn cos_fast<T: Trig, M: MulAdd>(x: T) -> T {
    x.cos_fast::<M>()
}

/// `tan x`, branch-free; valid where [`trig_beyond_fast`] is false.
#[inline(always)]
pub(crate) fn tan_fast<T: Trig, M: MulAdd>(x: T) -> T {
    x.tan_fast::<M>()
}

/// `sin x` for every `x` (branches to libm beyond the fast path).
#[inline(always)]
pub(crate) fn sin<T: Trig, M: MulAdd>(x: T) -> T {
    if trig_beyond_fast(x) {
        x.sin_libm()
    } else {
        x.sin_fast::<M>()
    }
}

/// `cos x` for every `x`.
#[inline(always)]
pub(crate) fn cos<T: Trig, M: MulAdd>(x: T) -> T {
    if trig_beyond_fast(x) {
        x.cos_libm()
    } else {
        x.cos_fast::<M>()
    }
}

/// `tan x` for every `x`; denormals read as ±0, as in XLA.
#[inline(always)]
pub(crate) fn tan<T: Trig, M: MulAdd>(x: T) -> T {
    if trig_beyond_fast(x) {
        x.tan_libm()
    } else {
        x.tan_fast::<M>()
    }
}

/// The angle of the point `(x, y)`: `atan(y / x)` in the right quadrant, with C's and XLA's
/// values at zeros and infinities (`atan2(±0, -0) = ±π`, `atan2(±∞, -∞) = ±3π/4`, …).
#[inline(always)]
pub(crate) fn atan2<T: Trig, M: MulAdd>(y: T, x: T) -> T {
    let (ax, ay) = (x.abs(), y.abs());
    let swap = ay > ax;
    let (small, big) = (select(swap, ax, ay), select(swap, ay, ax));
    // Above tan(π/8), atan t = π/4 + atan((t - 1) / (t + 1)).
    // Equal magnitudes (both infinite included) are exactly π/4 away.
    let shifted = small > big * T::c(0.414_213_562_373_095_03) || ax == ay;
    // Halving both (exactly, above 1) keeps `small + big` finite.
    let half = select(big > T::ONE, T::HALF, T::ONE);
    let (small_h, big_h) = (small * half, big * half);
    let t = select(shifted, small_h - big_h, small) / select(shifted, small_h + big_h, big);
    let t = select(ax == ay, T::ZERO, t);
    let z = t * t;
    let u = t + t * (z * poly::<M, _>(z, T::ATAN_P));
    // The angle is k·π/4 ± u: π/4 for the shift, then the octant: π/2 - a where |y| > |x|,
    // π - a where x < 0 (by its sign bit), π/2 + a for both.
    let x_negative = T::ONE.copysign(x) < T::ZERO;
    let s4 = select(shifted, T::ONE, T::ZERO);
    let k = select(x_negative, select(swap, T::TWO + s4, T::c(4.0) - s4), select(swap, T::TWO - s4, s4));
    let u = select(swap == x_negative, u, -u);
    let angle = k * T::FRAC_PI_4_HI + (k * T::FRAC_PI_4_LO + u);
    // y = ±0: 0 or π (by x's sign), whatever the rest computed from 0/0.
    let angle = select(
        y == T::ZERO,
        select(x_negative, T::c(4.0) * T::FRAC_PI_4_HI + T::c(4.0) * T::FRAC_PI_4_LO, T::ZERO),
        angle,
    );
    select(x.is_nan() || y.is_nan(), T::NAN, angle.copysign(y))
}
