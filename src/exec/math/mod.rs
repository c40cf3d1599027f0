//! Vectorizable elementary functions for `f32` and `f64`, as XLA's CPU backend computes them:
//! polynomial approximations after range reduction, written as branch-free scalar code (only
//! arithmetic, bit casts, comparisons and selects, all `#[inline(always)]`) so that LLVM
//! vectorizes the chunk loops that call them under each instruction set `chunk_ops` is
//! compiled for.
//!
//! Rules every function here follows:
//! - **Fused multiply-add where it is an instruction.** Every function takes a [`MulAdd`]
//!   parameter for the steps of its polynomials: [`Fused`] in chunk loops compiled for AVX2 or
//!   AVX-512, [`Separate`] (`a * b + c`) in the baseline build, where `mul_add` would be a
//!   libm call. Range reductions fuse only in `exp` (where fusing just drops roundings); the
//!   others' exactness is designed for separate roundings. The tests check both variants
//!   (`Fused` through libm's exact `fma` there).
//! - **Integers through the float unit.** Rounding to an integer adds and subtracts
//!   [`Real::ROUNDER`]; powers of two are built from the bits of that sum ([`Real::pow2i`]).
//!   No float↔integer conversions, which AVX2 lacks for 64-bit lanes.
//! - **XLA's edge values.** NaN in gives NaN out; infinities, signed zeros, overflow and
//!   underflow thresholds are XLA's. XLA's CPU runtime runs with denormals flushed (FTZ and
//!   DAZ): results that would be denormal are ±0 ([`ftz`](real::ftz)), and a function whose
//!   XLA implementation reads a denormal argument as zero does so here ([`daz`](real::daz));
//!   the tests pin each such point to what `jax.jit` returns (`tests/xla_points.rs`).
//! - Where a fast path covers only part of the domain (sin and cos of huge arguments), the
//!   function comes in a branch-free part, a test for the lanes it does not cover, and a
//!   complete scalar function that chunk loops call for those lanes only.
//!
//! Accuracy bounds (ulps against a correctly rounded result) are stated on each function and
//! checked by the tests: dense sweeps of every `f32` exponent in the normal run, the full
//! 2³² sweep behind `#[ignore]` (`cargo test --release --lib math -- --ignored`), and random
//! samples against the system libm for `f64`.

// Polynomial coefficients are written as the fitting printed them (minimax, to 50 digits,
// then rounded to the type): the compiler rounds the last digits.
#![allow(clippy::excessive_precision)]

mod exp_log;
mod extrema;
mod hyperbolic;
mod pow;
mod real;
mod roots;
mod special;
mod trig;

#[cfg(test)]
pub(crate) mod tests;

pub(crate) use exp_log::{exp, exp_fast, expm1, log, log1p, ExpLog};
pub(crate) use extrema::{maximum, minimum};
pub(crate) use hyperbolic::{logistic, tanh, TANH_ONE_FROM, TANH_P, TANH_Q};
pub(crate) use pow::pow;
pub(crate) use real::{chunk_loops_fuse, Fused, MulAdd, Real, Separate};
pub(crate) use roots::{cbrt, rsqrt, sqrt};
pub(crate) use special::erf;
pub(crate) use trig::{atan2, cos, cos_fast, sin, sin_fast, tan, tan_fast};

/// The functions whose chunk loops compute every lane by a branch-free fast part (`sin_fast`,
/// `exp_fast`, …), then the few lanes [`beyond_fast`] again with the complete function.
#[derive(Clone, Copy)]
pub(crate) enum FastPath {
    /// `sin`, `cos` and `tan`: huge arguments need an exact reduction.
    Trig,
    /// `exp`: results that overflow, are not normal, or NaN.
    Exp,
}

/// Whether `x` lies beyond `path`'s fast part.
#[inline(always)]
pub(crate) fn beyond_fast<T: trig::Trig + exp_log::ExpLog>(x: T, path: FastPath) -> bool {
    match path {
        FastPath::Trig => trig::trig_beyond_fast(x),
        FastPath::Exp => exp_log::exp_beyond_fast(x),
    }
}
