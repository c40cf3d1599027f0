//! `f16` and `bf16` to and from `f32` in plain integer and float operations, without branches,
//! so that the chunk loops that compute half types in `f32` vectorize them.
//!
//! `half`'s own conversions pick F16C at run time per element (`f16`) or branch (`bf16`). To
//! and from `f32` these give the same bits as `half`'s: rounding to nearest, ties to even;
//! denormals exact; NaN quieted with its payload's high bits kept. From `f64` they round
//! through `f32`, as XLA's compiled conversions do ([`f16_from_f64`], [`bf16_from_f64`]).

/// `f16`'s bits widened to `f32` (exact; a NaN gets the quiet bit).
#[inline(always)]
pub(crate) fn f16_to_f32(half: half::f16) -> f32 {
    const EXPONENT: u32 = 0x7c00 << 13;
    let h = half.to_bits();
    let shifted = u32::from(h & 0x7fff) << 13;
    let exponent = shifted & EXPONENT;
    // Rebias the exponent (15 to 127).
    let normal = shifted + ((127 - 15) << 23);
    // Infinity and NaN: the exponent all ones, a NaN quieted.
    let quiet = if shifted & 0x7f_ffff != 0 { 0x40_0000 } else { 0 };
    let special = (normal + ((128 - 16) << 23)) | quiet;
    // Zero and denormals: the mantissa as a float of exponent 2⁻¹⁴ less that exponent's 1.
    let magic = f32::from_bits(113 << 23);
    let small = (f32::from_bits(normal + (1 << 23)) - magic).to_bits();
    let magnitude = match exponent {
        EXPONENT => special,
        0 => small,
        _ => normal,
    };
    f32::from_bits(magnitude | (u32::from(h & 0x8000) << 16))
}

/// `value` rounded to `f16` (to nearest, ties to even; a NaN quieted, its payload's high bits
/// kept).
#[inline(always)]
pub(crate) fn f16_from_f32(value: f32) -> half::f16 {
    const F32_INFINITY: u32 = 0xff << 23;
    // From 2¹⁶ on, ∞ (or NaN); from 65520 to it, the normal path's rounding carries into ∞.
    const F16_OVERFLOW: u32 = (127 + 16) << 23;
    // ½, whose f32 ulp is f16's least denormal (2⁻²⁴): added to a magnitude below 2⁻¹⁴, the
    // sum's low bits are that magnitude in f16 denormal steps, rounded by the addition.
    const DENORMAL_MAGIC: u32 = ((127 - 15) + (23 - 10) + 1) << 23;
    let bits = value.to_bits();
    let sign = (bits >> 16) as u16 & 0x8000;
    let magnitude = bits & 0x7fff_ffff;
    let nan = 0x7e00 | ((magnitude >> 13) as u16 & 0x3ff);
    let overflow = if magnitude > F32_INFINITY { nan } else { 0x7c00 };
    let denormal = ((f32::from_bits(magnitude) + f32::from_bits(DENORMAL_MAGIC))
        .to_bits()
        .wrapping_sub(DENORMAL_MAGIC)) as u16;
    // Rebias the exponent and round: add half an f16 ulp less one, plus the kept lowest bit.
    let odd = (magnitude >> 13) & 1;
    let normal = (magnitude.wrapping_sub(112 << 23).wrapping_add(0xfff + odd) >> 13) as u16;
    let rounded = if magnitude >= F16_OVERFLOW {
        overflow
    } else if magnitude < 113 << 23 {
        denormal
    } else {
        normal
    };
    half::f16::from_bits(rounded | sign)
}

/// `value` rounded to `f16` as XLA's CPU backend rounds an `f64` it computes: to `f32`, then
/// to `f16` (each to nearest, ties to even: twice, so `1 + 2⁻¹¹ + 2⁻³⁰` becomes 1). XLA's
/// constant folding rounds once instead (to the next `f16`); a computation runs as compiled.
#[inline(always)]
pub(crate) fn f16_from_f64(value: f64) -> half::f16 {
    f16_from_f32(value as f32)
}

/// `value` rounded to `bf16` as XLA does: to `f32`, then to `bf16` (each to nearest, ties to
/// even: twice, so `1 + 2⁻⁸ + 2⁻³⁰` becomes 1).
#[inline(always)]
pub(crate) fn bf16_from_f64(value: f64) -> half::bf16 {
    bf16_from_f32(value as f32)
}

/// `bf16`'s bits widened to `f32` (exact; a NaN gets the quiet bit).
#[inline(always)]
pub(crate) fn bf16_to_f32(half: half::bf16) -> f32 {
    let h = half.to_bits();
    let quiet = if h & 0x7fff > 0x7f80 { 0x40 } else { 0 };
    f32::from_bits(u32::from(h | quiet) << 16)
}

/// `value` rounded to `bf16` (to nearest, ties to even; a NaN quieted, its payload's high
/// bits kept).
#[inline(always)]
pub(crate) fn bf16_from_f32(value: f32) -> half::bf16 {
    let bits = value.to_bits();
    let truncated = (bits >> 16) as u16;
    // Half a bf16 ulp less one, plus the kept lowest bit: a carry rounds up.
    let rounded = (bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) >> 16) as u16;
    let nan = bits & 0x7fff_ffff > 0x7f80_0000;
    half::bf16::from_bits(if nan { truncated | 0x40 } else { rounded })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `f16` and `bf16` widens to `half`'s `f32`, bit for bit.
    #[test]
    fn every_half_widens_as_half_does() {
        for h in 0..=u16::MAX {
            let (f16, bf16) = (half::f16::from_bits(h), half::bf16::from_bits(h));
            assert_eq!(f16_to_f32(f16).to_bits(), f16.to_f32().to_bits(), "f16 {h:#06x}");
            assert_eq!(bf16_to_f32(bf16).to_bits(), bf16.to_f32().to_bits(), "bf16 {h:#06x}");
        }
    }

    /// `f32`s round to `half`'s `f16` and `bf16`, bit for bit: every 251st bit pattern (every
    /// exponent, both signs, NaNs and denormals among them), each `f16` and `bf16` as an `f32`
    /// and its neighbours (exact values and ties), and the edges of overflow.
    #[test]
    fn f32s_round_as_half_does() {
        let check = rounds_as_half_does;
        (0..=u32::MAX).step_by(251).for_each(check);
        for h in 0..=u16::MAX {
            for exact in [half::f16::from_bits(h).to_f32().to_bits(), u32::from(h) << 16] {
                // The value, its neighbours, and the ties on either side (an f16 ulp is 2¹³
                // f32 ulps for normals).
                for delta in [0, 1, 0xfff, 0x1000, 0x1001, 0x7fff, 0x8000, 0x8001] {
                    check(exact.wrapping_add(delta));
                    check(exact.wrapping_sub(delta));
                }
            }
        }
        for edge in [65504.0f32, 65519.996, 65520.0, 65536.0, f32::MAX, f32::INFINITY, 6.0e-8, 2.9e-8, 3.0e-8]
        {
            check(edge.to_bits());
            check((-edge).to_bits());
        }
    }

    /// `f64`s round to `f16` and `bf16` through `f32` (`half`'s rounding of `value as f32`):
    /// 2²⁰ random bit patterns, and every `f16` and `bf16` value, the ties between neighbours
    /// and the `f64`s beside each. NaNs stay NaNs of the same sign.
    #[test]
    fn f64s_round_to_half_types_through_f32() {
        let check = |value: f64| {
            let bits = value.to_bits();
            let (f16, bf16) = (f16_from_f64(value), bf16_from_f64(value));
            if value.is_nan() {
                assert!(f16.is_nan() && bf16.is_nan(), "{bits:#018x}");
                assert_eq!([f16.is_sign_negative(), bf16.is_sign_negative()], [value.is_sign_negative(); 2]);
                return;
            }
            assert_eq!(f16.to_bits(), half::f16::from_f32(value as f32).to_bits(), "f16 {bits:#018x}");
            assert_eq!(bf16.to_bits(), half::bf16::from_f32(value as f32).to_bits(), "bf16 {bits:#018x}");
        };
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..1 << 20 {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            check(f64::from_bits(state));
        }
        for h in 0..u16::MAX {
            let pairs = [
                (half::f16::from_bits(h).to_f64(), half::f16::from_bits(h + 1).to_f64()),
                (half::bf16::from_bits(h).to_f64(), half::bf16::from_bits(h + 1).to_f64()),
            ];
            for (value, next) in pairs {
                for point in [value, (value + next) / 2.0] {
                    for step in [0, 1, 2, 1 << 28, (1 << 29) - 1, 1 << 29, (1 << 29) + 1] {
                        check(f64::from_bits(point.to_bits().wrapping_add(step)));
                        check(f64::from_bits(point.to_bits().wrapping_sub(step)));
                    }
                }
            }
        }
        for edge in [f64::MAX, f64::INFINITY, f64::NAN, f64::MIN_POSITIVE, 5e-324, 3.3961e38, 65520.0] {
            check(edge);
            check(-edge);
        }
    }

    /// What XLA's CPU backend (jaxlib 0.6.0) gives for `convert` of these `f64`s, parameters
    /// of a compiled computation (its constant folding gives `0x3c01` for `tie_f16`).
    #[test]
    fn f64s_round_as_xla_does() {
        let (tie_f16, tie_bf16) =
            (1.0 + 2f64.powi(-11) + 2f64.powi(-30), 1.0 + 2f64.powi(-8) + 2f64.powi(-30));
        let low_bits = f64::from_bits(0x41a8_5000_9d32_b268);
        for (value, f16, bf16) in
            [(tie_f16, 0x3c00, 0x3f80), (tie_bf16, 0x3c04, 0x3f80), (low_bits, 0x7c00, 0x4d43)]
        {
            assert_eq!(f16_from_f64(value).to_bits(), f16, "f16 of {value:e}");
            assert_eq!(bf16_from_f64(value).to_bits(), bf16, "bf16 of {value:e}");
            assert_eq!(f16_from_f64(-value).to_bits(), f16 | 0x8000, "f16 of -{value:e}");
            assert_eq!(bf16_from_f64(-value).to_bits(), bf16 | 0x8000, "bf16 of -{value:e}");
        }
    }

    /// Every `f32` rounds to `half`'s `f16` and `bf16` (about 25 s in release).
    #[test]
    #[ignore = "all 2³² f32s: run with --release --ignored"]
    fn every_f32_rounds_as_half_does() {
        (0..=u32::MAX).for_each(rounds_as_half_does);
    }

    /// The `f32` of `bits` rounds to `half`'s `f16` and `bf16`.
    fn rounds_as_half_does(bits: u32) {
        let value = f32::from_bits(bits);
        assert_eq!(f16_from_f32(value).to_bits(), half::f16::from_f32(value).to_bits(), "f16 {bits:#010x}");
        assert_eq!(
            bf16_from_f32(value).to_bits(),
            half::bf16::from_f32(value).to_bits(),
            "bf16 {bits:#010x}"
        );
    }
}
