//! `sqrt`, `rsqrt` and `cbrt`.
//!
//! - `sqrt`: the instruction (correctly rounded); `rsqrt`: `1 / sqrt x` (two roundings, within
//!   an ulp). Both read denormal arguments as ±0, as XLA does.
//! - `cbrt`: `|x| = m·2ᵉ`, `e = 3k + i`; a polynomial guess of `∛m` times `∛2ⁱ`, one Halley
//!   step on `m·2ⁱ` (cubic convergence: the guess's 10⁻⁴ or 10⁻⁶ becomes rounding noise),
//!   scaled by `2ᵏ`. `f32` is computed in `f64`, so its denormals are ordinary numbers there.

use super::real::{daz, poly, round, select, MulAdd, Real};

/// `√x`; denormals read as ±0 (`√-0 = -0`, negative → NaN).
#[inline(always)]
pub(crate) fn sqrt<T: Real>(x: T) -> T {
    daz(x).sqrt()
}

/// `1 / √x`: `rsqrt(±0) = ±∞` (denormals included), `rsqrt(∞) = 0`, negative → NaN.
#[inline(always)]
pub(crate) fn rsqrt<T: Real>(x: T) -> T {
    T::ONE / daz(x).sqrt()
}

/// `∛m` on `[1, 2)` to about 10⁻⁴ (`f32` results) and 10⁻⁶ (`f64`).
const CBRT_GUESS_FOR_F32: &[f64] =
    &[0.552_823_417_895_741, 0.587_114_293_127_232_2, -0.162_969_672_884_543_4, 0.023_104_964_328_443_684];
const CBRT_GUESS: &[f64] = &[
    0.473_330_679_523_502_16,
    0.838_160_031_902_49,
    -0.469_228_717_442_805_75,
    0.202_777_228_040_182_18,
    -0.050_386_538_558_967_9,
    0.005_348_547_496_018_32,
];

/// `∛a` for positive finite normal `a`, from a guess polynomial for `∛m` on `[1, 2)`.
#[inline(always)]
fn cbrt_positive<M: MulAdd>(a: f64, guess: &[f64]) -> f64 {
    let (m, e) = a.split_exponent_unit();
    // e = 3k + i with i in {0, 1, 2}: k = round((e - 1) / 3).
    let k = round((e - 1.0) * (1.0 / 3.0));
    let i = e - 3.0 * k;
    let y = poly::<M, _>(m, guess)
        * select(i == 0.0, 1.0, select(i == 1.0, 1.259_921_049_894_873_2, 1.587_401_051_968_199_6));
    let m = m * select(i == 0.0, 1.0, select(i == 1.0, 2.0, 4.0));
    // Halley: y ← y + y·(m - y³) / (2y³ + m).
    let y3 = y * y * y;
    let y = y + y * ((m - y3) / (y3 + y3 + m));
    y * f64::pow2i(k)
}

/// `∛x`, odd, exact at 0 and ±∞.
#[inline(always)]
pub(crate) fn cbrt<T: Roots, M: MulAdd>(x: T) -> T {
    x.cbrt::<M>()
}

/// The cube root of one float type.
pub(crate) trait Roots: Real {
    fn cbrt<M: MulAdd>(self) -> Self;
}

impl Roots for f32 {
    #[inline(always)]
    fn cbrt<M: MulAdd>(self) -> f32 {
        let a = f64::from(self.abs());
        let y = cbrt_positive::<M>(a, CBRT_GUESS_FOR_F32) as f32;
        select(a == 0.0 || a == f64::INFINITY || a.is_nan(), self, y.copysign(self))
    }
}

impl Roots for f64 {
    #[inline(always)]
    fn cbrt<M: MulAdd>(self) -> f64 {
        let a = self.abs();
        // Denormals are scaled into the normal range (by 2⁵⁴, whose cube root is 2¹⁸).
        let tiny = a < f64::MIN_POSITIVE;
        let scaled = select(tiny, a * 18_014_398_509_481_984.0, a);
        let y = cbrt_positive::<M>(scaled, CBRT_GUESS);
        let y = select(tiny, y * 3.814_697_265_625e-6, y);
        select(a == 0.0 || a == f64::INFINITY || a.is_nan(), self, y.copysign(self))
    }
}
