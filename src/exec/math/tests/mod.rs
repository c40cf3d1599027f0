//! Accuracy and edge values of the math functions.
//!
//! - `sweeps`: every `f32` function against an `f64` reference (std's functions, or the system
//!   libm's `erf`), over a dense sample of all 2³² inputs in the normal run and all of them
//!   in the ignored `*_full` tests: `cargo test --release --lib math -- --ignored`.
//!   `f64` functions against the system libm on random samples of every exponent.
//! - `fast_paths`: the branch-free parts chunk loops run (`exp_fast`, `sin_fast`, …) against
//!   the complete functions, bit for bit, wherever they stand for them.
//! - `xla_points`: values `jax.jit` (jaxlib 0.6.0, CPU) returns at zeros, infinities, NaN,
//!   denormals and the overflow and underflow thresholds, pinned bit for bit.

mod fast_paths;
mod sweeps;
mod xla_points;
#[path = "../../../../tests/data/xla_math_values.rs"]
mod xla_values;

/// The system libm's error function (std has none): the test reference for `erf`.
pub(super) fn libm_erf(x: f64) -> f64 {
    extern "C" {
        fn erf(x: f64) -> f64;
    }
    // SAFETY: `erf` is the C library's pure function of one double (C99, in every libm Rust
    // links on its tier-1 targets); it reads and writes nothing else.
    unsafe { erf(x) }
}

/// The error of `got` against the exact `want`, in units in the last place of `f32` at
/// `want` (denormal spacing below the normal range). NaN must meet NaN and infinities match
/// exactly; either mismatch is an infinite error.
pub(super) fn ulps_f32(got: f32, want: f64) -> f64 {
    if want.is_nan() || got.is_nan() {
        return if want.is_nan() && got.is_nan() { 0.0 } else { f64::INFINITY };
    }
    let want_f32 = want as f32;
    if want_f32.is_infinite() || got.is_infinite() {
        // An exact result just past f32's range rounds to ∞ as the reference does.
        return if got == want_f32 { 0.0 } else { f64::INFINITY };
    }
    if got == 0.0 && want == 0.0 {
        return if got.is_sign_negative() == want.is_sign_negative() { 0.0 } else { f64::INFINITY };
    }
    // The spacing of f32 in the binade of |want| (below the normal range, the denormals').
    let binade = f32::from_bits((want.abs() as f32).to_bits() & 0x7f80_0000);
    let ulp = f64::from(f32::from_bits(binade.to_bits() + 1)) - f64::from(binade);
    (f64::from(got) - want).abs() / ulp
}

/// The error of `got` against `want` (itself within an ulp: a libm result), in units in the
/// last place of `f64` at `want`, with the same rules for NaN, infinities and zeros.
pub(super) fn ulps_f64(got: f64, want: f64) -> f64 {
    if want.is_nan() || got.is_nan() {
        return if want.is_nan() && got.is_nan() { 0.0 } else { f64::INFINITY };
    }
    if want.is_infinite() || got.is_infinite() {
        return if got == want { 0.0 } else { f64::INFINITY };
    }
    if got == want {
        return if got != 0.0 || got.is_sign_negative() == want.is_sign_negative() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    // The spacing of f64 in the binade of |want| (below the normal range, the denormals').
    let binade = f64::from_bits(want.abs().to_bits() & 0x7ff0_0000_0000_0000);
    let ulp = f64::from_bits(binade.to_bits() + 1) - binade;
    (got - want).abs() / ulp
}

/// Every 4099th bit pattern (all exponents, both signs) and 2¹⁸ random ones: the sweeps'
/// sample of all `f32`s, and the one the chain kernel's functions in registers are checked on.
pub(crate) fn dense_sample() -> impl Iterator<Item = u32> {
    let mut rng = Rng::new(7);
    (0..=u32::MAX).step_by(4099).chain((0..1 << 18).map(move |_| rng.next() as u32))
}

/// A small deterministic generator (xorshift64*), for reproducible random samples.
pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}
