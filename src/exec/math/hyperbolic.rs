//! `tanh` and the logistic sigmoid, from the exponential functions.
//!
//! - `tanh`, `f32` with FMA: `|x|·p(x²) / q(x²)` (a minimax rational fit on `|x| ≤ 9.05`,
//!   degree 4 in `x²` both), exactly 1 from [`TANH_ONE_FROM`] on (never above 1 below it),
//!   the sign restored last. Without FMA (and for `f64`): `tanh |x| = m / (m + 2)` with
//!   `m = expm1(2|x|)`, `|x|` clamped to saturation, slower but accurate from 0 to saturation.
//! - `logistic x = 1 / (1 + e⁻ˣ)`, denormal results flushed as XLA's runtime does.

use super::exp_log::{exp, expm1, ExpLog};
use super::real::{clamp, daz, ftz, poly, select, MulAdd};

/// `tanh` for one float type.
pub(crate) trait Hyperbolic: ExpLog {
    /// `tanh x` rounds to ±1 beyond this magnitude.
    const TANH_SATURATION: Self;
    /// Whether XLA reads a denormal argument of `tanh` as zero (it does for `f64`; for `f32`
    /// it returns the argument).
    const TANH_DAZ: bool;

    /// `tanh a` for `a ≥ 0` (or NaN).
    fn tanh_magnitude<M: MulAdd>(a: Self) -> Self;
}

/// Where `f32`'s rational `tanh` gives way to 1. Between here and 9.010914 (where `tanh`
/// rounds to 1) the fit gives `1 + 2⁻²³` for 31,876 arguments, the first of them here; below,
/// it stays at most 1 (`bounded_functions_never_leave_their_range` checks every `f32` from 8
/// on). From here on, 1 is at most 2.9 ulps from `tanh` (`1 − 1.74·10⁻⁷` here).
pub(crate) const TANH_ONE_FROM: f32 = 8.129_067;

/// The numerator of `f32`'s rational `tanh` (with FMA), `|x|·TANH_P(x²) / TANH_Q(x²)`, as
/// coefficients of `x²` from the constant term on. Degree 4 over 4 keeps `tanh` within 5.16
/// ulps of every `f32` (the sweeps' bound is 5.5, XLA's own 5): 4 over 3 errs far more, and
/// 5 over 4 costs an FMA that a chain's `tanh`, bound by its instructions, pays in time.
pub(crate) const TANH_P: &[f32] = &[1.0, 0.133_777_1, 0.003_491_65, 2.054_427_8e-5, 1.326_478_7e-8];

/// The denominator of `f32`'s rational `tanh` (see [`TANH_P`]).
pub(crate) const TANH_Q: &[f32] = &[1.0, 0.467_110_25, 0.025_861_999, 0.000_327_919_5, 7.739_796e-7];

impl Hyperbolic for f32 {
    const TANH_SATURATION: f32 = 9.05;
    const TANH_DAZ: bool = false;

    #[inline(always)]
    fn tanh_magnitude<M: MulAdd>(a: f32) -> f32 {
        if !M::FUSED {
            // Without FMA the rational's roundings reach 6 ulps: the slower exact form.
            return tanh_by_expm1::<f32, M>(a);
        }
        // Unclamped: past the fit's range the select below replaces whatever the rational
        // gives (even NaN, from ∞/∞ once `a²` overflows), and a NaN `a` fails it.
        let z = a * a;
        let t = a * poly::<M, _>(z, TANH_P) / poly::<M, _>(z, TANH_Q);
        select(a >= TANH_ONE_FROM, 1.0, t)
    }
}

impl Hyperbolic for f64 {
    const TANH_SATURATION: f64 = 20.0;
    const TANH_DAZ: bool = true;

    #[inline(always)]
    fn tanh_magnitude<M: MulAdd>(a: f64) -> f64 {
        tanh_by_expm1::<f64, M>(a)
    }
}

/// `tanh a = m / (m + 2)` with `m = expm1(2a)`, for `a ≥ 0` (or NaN) clamped to saturation
/// (beyond it `m` would overflow to ∞ and the quotient be NaN).
#[inline(always)]
fn tanh_by_expm1<T: Hyperbolic, M: MulAdd>(a: T) -> T {
    let a = clamp(a, T::ZERO, T::TANH_SATURATION);
    let m = expm1::<T, M>(a + a);
    m / (m + T::TWO)
}

/// Hyperbolic tangent.
#[inline(always)]
pub(crate) fn tanh<T: Hyperbolic, M: MulAdd>(x: T) -> T {
    let x = if T::TANH_DAZ { daz(x) } else { x };
    T::tanh_magnitude::<M>(x.abs()).copysign(x)
}

/// `1 / (1 + e⁻ˣ)`.
#[inline(always)]
pub(crate) fn logistic<T: ExpLog, M: MulAdd>(x: T) -> T {
    ftz(T::ONE / (T::ONE + exp::<T, M>(-x)))
}
