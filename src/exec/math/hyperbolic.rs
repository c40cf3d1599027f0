//! `tanh` and the logistic sigmoid, from the exponential functions.
//!
//! - `tanh |x| = m / (m + 2)` with `m = expm1(2|x|)` (accurate from 0, where it is `x`, to
//!   saturation at ±1, where `|x|` is clamped), the sign restored last.
//! - `logistic x = 1 / (1 + e⁻ˣ)`, denormal results flushed as XLA's runtime does.

use super::exp_log::{exp, expm1, ExpLog};
use super::{clamp, daz, ftz};

/// The constants of `tanh` for one float type.
pub(crate) trait Hyperbolic: ExpLog {
    /// `tanh x` rounds to ±1 beyond this magnitude.
    const TANH_SATURATION: Self;
    /// Whether XLA reads a denormal argument of `tanh` as zero (it does for `f64`; for `f32`
    /// it returns the argument).
    const TANH_DAZ: bool;
}

impl Hyperbolic for f32 {
    const TANH_SATURATION: f32 = 10.0;
    const TANH_DAZ: bool = false;
}

impl Hyperbolic for f64 {
    const TANH_SATURATION: f64 = 20.0;
    const TANH_DAZ: bool = true;
}

/// Hyperbolic tangent.
#[inline(always)]
pub(crate) fn tanh<T: Hyperbolic>(x: T) -> T {
    let x = if T::TANH_DAZ { daz(x) } else { x };
    let a = clamp(x.abs(), T::ZERO, T::TANH_SATURATION);
    let m = expm1(a + a);
    let t = m / (m + T::TWO);
    t.copysign(x)
}

/// `1 / (1 + e⁻ˣ)`.
#[inline(always)]
pub(crate) fn logistic<T: ExpLog>(x: T) -> T {
    ftz(T::ONE / (T::ONE + exp(-x)))
}
