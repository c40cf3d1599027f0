//! The arithmetic of every element type, exactly as XLA computes it: integer division and
//! shifts with XLA's edge cases, NaN-propagating max/min, conversions that truncate and
//! saturate, half-precision types computed in f32 and rounded once. Floats take their
//! elementary functions (exp, tanh, sin, …) from [`crate::exec::math`], which vectorizes.

use crate::exec::half_convert::{
    bf16_from_f32, bf16_from_f64, bf16_to_f32, f16_from_f32, f16_from_f64, f16_to_f32,
};
use crate::exec::math::{self, FastPath, MulAdd, Separate};
use crate::storage::NativeType;

/// A value of any element type widened without loss: integers to `i128`, floats to `f64`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Wide {
    Int(i128),
    Float(f64),
}

/// The operations of the executor on one element type. Operations a type never reaches
/// (the builder rejects them) compute through `f64`, so every type has one meaning for each.
pub(crate) trait Element: NativeType {
    fn widen(self) -> Wide;
    /// XLA's `convert`: floats to integers truncate toward zero and saturate (NaN → 0),
    /// integers wrap, anything to `pred` is `!= 0`.
    fn narrow(wide: Wide) -> Self;

    fn add(self, rhs: Self) -> Self;
    fn sub(self, rhs: Self) -> Self;
    fn mul(self, rhs: Self) -> Self;
    fn div(self, rhs: Self) -> Self;
    fn rem(self, rhs: Self) -> Self;
    fn maximum(self, rhs: Self) -> Self;
    fn minimum(self, rhs: Self) -> Self;
    /// `M` says how polynomial steps are computed (fused in chunk loops built with FMA).
    fn pow<M: MulAdd>(self, rhs: Self) -> Self;
    fn neg(self) -> Self;
    fn abs(self) -> Self;
    fn sign(self) -> Self;
    fn and(self, rhs: Self) -> Self {
        self.bitwise(rhs, |a, b| a & b)
    }
    fn or(self, rhs: Self) -> Self {
        self.bitwise(rhs, |a, b| a | b)
    }
    fn xor(self, rhs: Self) -> Self {
        self.bitwise(rhs, |a, b| a ^ b)
    }
    fn not(self) -> Self {
        self.bitwise(self, |a, _| !a)
    }
    /// `f` on the two values' bits (as `i128`); floats reach it only through a bug upstream.
    fn bitwise(self, rhs: Self, f: fn(i128, i128) -> i128) -> Self {
        match (self.widen(), rhs.widen()) {
            (Wide::Int(a), Wide::Int(b)) => Self::narrow(Wide::Int(f(a, b))),
            _ => self,
        }
    }
    fn shift_left(self, rhs: Self) -> Self;
    fn shift_right_arithmetic(self, rhs: Self) -> Self;
    fn shift_right_logical(self, rhs: Self) -> Self;
    /// A float function (exp, sin, …) computed through `f64`: what an integer type would
    /// mean by it (the builder never lets integers reach these; floats override each).
    fn via_f64(self, f: fn(f64) -> f64) -> Self {
        Self::narrow(Wide::Float(f(self.to_f64())))
    }
    fn exp<M: MulAdd>(self) -> Self {
        self.via_f64(f64::exp)
    }
    /// `exp` without branches, valid where [`Element::beyond_fast`] of [`FastPath::Exp`] is
    /// false, as [`Element::sin_fast`].
    fn exp_fast<M: MulAdd>(self) -> Self {
        self.exp::<M>()
    }
    fn log<M: MulAdd>(self) -> Self {
        self.via_f64(f64::ln)
    }
    fn log1p<M: MulAdd>(self) -> Self {
        self.via_f64(f64::ln_1p)
    }
    fn expm1<M: MulAdd>(self) -> Self {
        self.via_f64(f64::exp_m1)
    }
    fn tanh<M: MulAdd>(self) -> Self {
        self.via_f64(f64::tanh)
    }
    fn logistic<M: MulAdd>(self) -> Self {
        self.via_f64(|v| 1.0 / (1.0 + (-v).exp()))
    }
    fn sqrt(self) -> Self {
        self.via_f64(f64::sqrt)
    }
    fn rsqrt(self) -> Self {
        self.via_f64(|v| 1.0 / v.sqrt())
    }
    fn floor(self) -> Self {
        self
    }
    fn ceil(self) -> Self {
        self
    }
    fn round(self) -> Self {
        self
    }
    fn round_nearest_even(self) -> Self {
        self
    }
    fn sin<M: MulAdd>(self) -> Self {
        self.via_f64(f64::sin)
    }
    fn cos<M: MulAdd>(self) -> Self {
        self.via_f64(f64::cos)
    }
    /// `sin` without branches, valid where [`Element::beyond_fast`] of [`FastPath::Trig`] is
    /// false: chunk loops run it over every lane, then `sin` over the lanes beyond.
    fn sin_fast<M: MulAdd>(self) -> Self {
        self.sin::<M>()
    }
    /// `cos` without branches, as [`Element::sin_fast`].
    fn cos_fast<M: MulAdd>(self) -> Self {
        self.cos::<M>()
    }
    /// Whether `path`'s fast part (`sin_fast`, `exp_fast`, …) is not valid for this value.
    fn beyond_fast(self, _path: FastPath) -> bool {
        false
    }
    fn atan2<M: MulAdd>(self, rhs: Self) -> Self {
        Self::narrow(Wide::Float(self.to_f64().atan2(rhs.to_f64())))
    }
    fn is_finite(self) -> bool {
        self.to_f64().is_finite()
    }
    fn erf<M: MulAdd>(self) -> Self {
        self.via_f64(math::erf::<f64, Separate>)
    }
    fn tan<M: MulAdd>(self) -> Self {
        self.via_f64(f64::tan)
    }
    /// `tan` without branches, as [`Element::sin_fast`].
    fn tan_fast<M: MulAdd>(self) -> Self {
        self.tan::<M>()
    }
    fn cbrt<M: MulAdd>(self) -> Self {
        self.via_f64(f64::cbrt)
    }
    /// Leading zero bits (integers; other types never reach it and keep their value).
    fn clz(self) -> Self {
        self
    }
    /// One bits (integers; other types never reach it and keep their value).
    fn population_count(self) -> Self {
        self
    }
    /// XLA's `ReducePrecision` (floats; other types never reach it and keep their value).
    fn reduce_precision(self, _exponent_bits: i32, _mantissa_bits: i32) -> Self {
        self
    }
}

/// The integer types: `$s` and `$u` are the signed and unsigned types of `$t`'s width (one of
/// them `$t` itself), so one definition serves both signednesses; only `abs`, `sign` and the
/// quotient differ. `quotient` is `a / b` for `b ≠ 0` (its value for 0 is discarded),
/// truncated and wrapped. Up to 32 bits it divides in a float type
/// whose mantissa holds every operand, `f32` up to 16 bits and `f64` for 32, where the
/// quotient is exact (a quotient `q` that is not an integer is at least `1/|b|` from one,
/// more than its rounding error `|q|·2⁻ᵖ` when `|a| < 2ᵖ`), then truncated by
/// [`truncated_f32`] or [`truncated_f64`] and wrapped to the type (`MIN / -1` is `-MIN`,
/// which wraps to `MIN`). The loops vectorize that and select the result for `b = 0`, where
/// an integer division is a scalar `idiv` behind a branch.
macro_rules! integer {
    ($($t:ty: signed $s:ty, unsigned $u:ty, abs $abs:expr, sign $sign:expr,
        quotient |$a:ident, $b:ident| $quotient:expr;)*) => {$(
        impl Element for $t {
            fn widen(self) -> Wide { Wide::Int(self as i128) }
            /// A float saturates to the type's range, NaN to 0 (Rust's `as`). Up to 32 bits
            /// it is clamped, then truncated by [`truncated_f64`], which the loops vectorize
            /// (`as` became a compare and a branch per lane).
            #[inline(always)]
            fn narrow(wide: Wide) -> Self {
                match wide {
                    Wide::Int(i) => i as $t,
                    Wide::Float(f) if <$t>::BITS <= 32 => {
                        let clamped = f.clamp(<$t>::MIN as f64, <$t>::MAX as f64);
                        if f.is_nan() { 0 } else { truncated_f64(clamped) as $t }
                    }
                    Wide::Float(f) => f as $t,
                }
            }
            fn add(self, rhs: Self) -> Self { self.wrapping_add(rhs) }
            fn sub(self, rhs: Self) -> Self { self.wrapping_sub(rhs) }
            fn mul(self, rhs: Self) -> Self { self.wrapping_mul(rhs) }
            /// `x / 0` is all ones (-1 signed, the maximum unsigned); `MIN / -1` wraps to `MIN`.
            #[inline(always)]
            fn div(self, rhs: Self) -> Self {
                let ($a, $b) = (self, rhs);
                let quotient: $t = $quotient;
                if rhs == 0 { !0 } else { quotient }
            }
            /// `x % 0` is `x`; `MIN % -1` is 0.
            #[inline(always)]
            fn rem(self, rhs: Self) -> Self {
                let ($a, $b) = (self, rhs);
                let quotient: $t = $quotient;
                if rhs == 0 { self } else { self.wrapping_sub(quotient.wrapping_mul(rhs)) }
            }
            fn maximum(self, rhs: Self) -> Self { Ord::max(self, rhs) }
            fn minimum(self, rhs: Self) -> Self { Ord::min(self, rhs) }
            /// The exponent's sign is its top bit whatever the type, as in XLA's integer pow.
            fn pow<M: MulAdd>(self, rhs: Self) -> Self { integer_pow(self as i128, (rhs as $s) as i128) as $t }
            fn neg(self) -> Self { self.wrapping_neg() }
            fn abs(self) -> Self { let abs: fn($t) -> $t = $abs; abs(self) }
            fn sign(self) -> Self { let sign: fn($t) -> $t = $sign; sign(self) }
            // Shift amounts compare as unsigned: a negative amount is as large as can be.
            fn shift_left(self, rhs: Self) -> Self {
                if (rhs as $u) >= <$t>::BITS as $u { 0 } else { self.wrapping_shl(rhs as u32) }
            }
            /// The bits shift as if signed (a set top bit fills with ones), as XLA does.
            fn shift_right_arithmetic(self, rhs: Self) -> Self {
                let shift = if (rhs as $u) >= <$t>::BITS as $u { <$t>::BITS - 1 } else { rhs as u32 };
                ((self as $s) >> shift) as $t
            }
            fn shift_right_logical(self, rhs: Self) -> Self {
                if (rhs as $u) >= <$t>::BITS as $u { 0 } else { ((self as $u) >> rhs as u32) as $t }
            }
            fn clz(self) -> Self { self.leading_zeros() as $t }
            fn population_count(self) -> Self { self.count_ones() as $t }
        }
    )*};
}

integer! {
    i8: signed i8, unsigned u8, abs i8::wrapping_abs, sign i8::signum,
        quotient |a, b| truncated_f32(f32::from(a) / f32::from(b)) as i8;
    i16: signed i16, unsigned u16, abs i16::wrapping_abs, sign i16::signum,
        quotient |a, b| truncated_f32(f32::from(a) / f32::from(b)) as i16;
    i32: signed i32, unsigned u32, abs i32::wrapping_abs, sign i32::signum,
        quotient |a, b| truncated_f64(f64::from(a) / f64::from(b)) as i32;
    i64: signed i64, unsigned u64, abs i64::wrapping_abs, sign i64::signum,
        quotient |a, b| a.checked_div(b).unwrap_or(a);
    u8: signed i8, unsigned u8, abs |v| v, sign |v| u8::from(v != 0),
        quotient |a, b| truncated_f32(f32::from(a) / f32::from(b)) as u8;
    u16: signed i16, unsigned u16, abs |v| v, sign |v| u16::from(v != 0),
        quotient |a, b| truncated_f32(f32::from(a) / f32::from(b)) as u16;
    u32: signed i32, unsigned u32, abs |v| v, sign |v| u32::from(v != 0),
        quotient |a, b| truncated_f64(f64::from(a) / f64::from(b)) as u32;
    u64: signed i64, unsigned u64, abs |v| v, sign |v| u64::from(v != 0),
        quotient |a, b| a.checked_div(b).unwrap_or(0);
}

/// `value` truncated toward zero, as an integer: exact for `|value| < 2²²`, any bits for
/// others (∞ and NaN among them). Adding 1.5·2²³ puts the integer in the sum's low mantissa
/// bits: a float add and an integer subtract, which the loops vectorize, where a saturating
/// `as` became a compare and a branch per lane.
#[inline(always)]
fn truncated_f32(value: f32) -> i32 {
    const SHIFTER: f32 = 12_582_912.0;
    (value.trunc() + SHIFTER).to_bits() as i32 - SHIFTER.to_bits() as i32
}

/// `value` truncated toward zero, as an integer: exact for `|value| < 2⁵¹`, any bits for
/// others (as [`truncated_f32`], with 1.5·2⁵²).
#[inline(always)]
fn truncated_f64(value: f64) -> i64 {
    const SHIFTER: f64 = 6_755_399_441_055_744.0;
    (value.trunc() + SHIFTER).to_bits() as i64 - SHIFTER.to_bits() as i64
}

/// XLA's integer power: repeated squaring with wrapping; a negative exponent gives 0 unless
/// the base is 1 (XLA's CPU runtime gives 0 for a base of -1 too).
fn integer_pow(base: i128, exponent: i128) -> i128 {
    if exponent < 0 {
        return i128::from(base == 1);
    }
    let (mut result, mut base, mut exponent) = (1i128, base, exponent);
    while exponent > 0 {
        if exponent & 1 == 1 {
            result = result.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        exponent >>= 1;
    }
    result
}

/// `pred` arithmetic as XLA's evaluator does it: `+` and `max` are or, `*` and `min` are and.
impl Element for bool {
    fn widen(self) -> Wide {
        Wide::Int(self as i128)
    }
    fn narrow(wide: Wide) -> Self {
        match wide {
            Wide::Int(i) => i != 0,
            Wide::Float(f) => f != 0.0,
        }
    }
    fn add(self, rhs: Self) -> Self {
        self | rhs
    }
    fn sub(self, rhs: Self) -> Self {
        self & !rhs
    }
    fn mul(self, rhs: Self) -> Self {
        self & rhs
    }
    fn div(self, rhs: Self) -> Self {
        self & rhs
    }
    fn rem(self, _rhs: Self) -> Self {
        false
    }
    fn maximum(self, rhs: Self) -> Self {
        self | rhs
    }
    fn minimum(self, rhs: Self) -> Self {
        self & rhs
    }
    fn pow<M: MulAdd>(self, rhs: Self) -> Self {
        self | !rhs
    }
    fn neg(self) -> Self {
        self
    }
    fn abs(self) -> Self {
        self
    }
    fn sign(self) -> Self {
        self
    }
    fn and(self, rhs: Self) -> Self {
        self & rhs
    }
    fn or(self, rhs: Self) -> Self {
        self | rhs
    }
    fn xor(self, rhs: Self) -> Self {
        self ^ rhs
    }
    fn not(self) -> Self {
        !self
    }
    fn shift_left(self, _rhs: Self) -> Self {
        false
    }
    fn shift_right_arithmetic(self, _rhs: Self) -> Self {
        false
    }
    fn shift_right_logical(self, _rhs: Self) -> Self {
        false
    }
}

macro_rules! float {
    ($t:ty, compute in $c:ty, $to:expr, $from:expr, from int $from_int:expr, bits $bits:ty) => {
        /// Computed in `$c` (f16 and bf16 in f32, as XLA's CPU backend does) and rounded once.
        impl Element for $t {
            fn widen(self) -> Wide {
                // Exact through the compute type (which `$to` widens to without branches).
                let to: fn($t) -> $c = $to;
                Wide::Float(f64::from(to(self)))
            }
            fn narrow(wide: Wide) -> Self {
                // Integers round once, straight to the type (not through f64 first).
                let from_int: fn(i128) -> $t = $from_int;
                match wide {
                    Wide::Int(i) => from_int(i),
                    Wide::Float(f) => <$t>::from_f64_value(f),
                }
            }
            float!(@binary $t, $c, $to, $from; add: |a, b| a + b, sub: |a, b| a - b, mul: |a, b| a * b,
                div: |a, b| a / b, rem: |a, b| a % b,
                // IEEE 754-2019 maximum/minimum, as XLA: NaN wins, and -0 orders below +0.
                maximum: math::maximum::<$c>, minimum: math::minimum::<$c>);
            float!(@binary_m $t, $c, $to, $from; pow, atan2);
            float!(@unary_m $t, $c, $to, $from; exp, exp_fast, log, log1p, expm1, tanh, logistic, sin, cos, sin_fast, cos_fast,
                tan, tan_fast, erf, cbrt);
            /// On the type's own bits, as XLA's CPU backend (denormal results of a narrowed
            /// exponent range are ±0).
            fn reduce_precision(self, exponent_bits: i32, mantissa_bits: i32) -> Self {
                let bits = reduce_precision_bits(
                    self.to_bits().into(),
                    <$bits>::BITS,
                    <$t>::MANTISSA_DIGITS - 1,
                    exponent_bits,
                    mantissa_bits,
                );
                <$t>::from_bits(bits as $bits)
            }
            float!(@unary $t, $c, $to, $from; neg: |a: $c| -a, abs: <$c>::abs,
                sign: |a: $c| if a == 0.0 || a.is_nan() { a } else { a.signum() },
                sqrt: math::sqrt::<$c>, rsqrt: math::rsqrt::<$c>, floor: <$c>::floor, ceil: <$c>::ceil,
                round: <$c>::round, round_nearest_even: <$c>::round_ties_even);
            #[inline(always)]
            fn beyond_fast(self, path: FastPath) -> bool {
                let to: fn($t) -> $c = $to;
                math::beyond_fast(to(self), path)
            }
            fn is_finite(self) -> bool {
                let to: fn($t) -> $c = $to;
                to(self).is_finite()
            }
            fn shift_left(self, _rhs: Self) -> Self {
                self
            }
            fn shift_right_arithmetic(self, _rhs: Self) -> Self {
                self
            }
            fn shift_right_logical(self, _rhs: Self) -> Self {
                self
            }
        }
    };
    (@binary $t:ty, $c:ty, $to:expr, $from:expr; $($name:ident: $f:expr),*) => {$(
        #[inline(always)]
        fn $name(self, rhs: Self) -> Self {
            let (to, from): (fn($t) -> $c, fn($c) -> $t) = ($to, $from);
            let f: fn($c, $c) -> $c = $f;
            from(f(to(self), to(rhs)))
        }
    )*};
    // The functions of `crate::exec::math` of the same names, with their `MulAdd` parameter.
    (@binary_m $t:ty, $c:ty, $to:expr, $from:expr; $($name:ident),*) => {$(
        #[inline(always)]
        fn $name<M: MulAdd>(self, rhs: Self) -> Self {
            let (to, from): (fn($t) -> $c, fn($c) -> $t) = ($to, $from);
            from(math::$name::<$c, M>(to(self), to(rhs)))
        }
    )*};
    (@unary_m $t:ty, $c:ty, $to:expr, $from:expr; $($name:ident),*) => {$(
        #[inline(always)]
        fn $name<M: MulAdd>(self) -> Self {
            let (to, from): (fn($t) -> $c, fn($c) -> $t) = ($to, $from);
            from(math::$name::<$c, M>(to(self)))
        }
    )*};
    (@unary $t:ty, $c:ty, $to:expr, $from:expr; $($name:ident: $f:expr),*) => {$(
        #[inline(always)]
        fn $name(self) -> Self {
            let (to, from): (fn($t) -> $c, fn($c) -> $t) = ($to, $from);
            let f: fn($c) -> $c = $f;
            from(f(to(self)))
        }
    )*};
}

/// Rounding an `f64` to each float type.
trait FromF64Value {
    fn from_f64_value(value: f64) -> Self;
}

impl FromF64Value for f32 {
    fn from_f64_value(value: f64) -> Self {
        value as f32
    }
}

impl FromF64Value for f64 {
    fn from_f64_value(value: f64) -> Self {
        value
    }
}

impl FromF64Value for half::f16 {
    #[inline(always)]
    fn from_f64_value(value: f64) -> Self {
        f16_from_f64(value)
    }
}

impl FromF64Value for half::bf16 {
    #[inline(always)]
    fn from_f64_value(value: f64) -> Self {
        bf16_from_f64(value)
    }
}

float!(f32, compute in f32, |v| v, |v| v, from int |i| i as f32, bits u32);
float!(f64, compute in f64, |v| v, |v| v, from int |i| i as f64, bits u64);
float!(half::f16, compute in f32, f16_to_f32, f16_from_f32, from int |i| f16_from_f32(i as f32), bits u16);
float!(half::bf16, compute in f32, bf16_to_f32, bf16_from_f32, from int |i| bf16_from_f32(i as f32), bits u16);

/// XLA's `ReducePrecision` (its CPU emitter, without quieting NaNs) on the bits of a float
/// `width` bits wide with `mantissa` explicit mantissa bits: the mantissa rounded to
/// `mantissa_bits` (to nearest, ties to even; a carry moves into the exponent), then an
/// exponent beyond the range of `exponent_bits` bits made ±∞ and one at or below its
/// smallest normal made ±0. A NaN stays itself (becomes +∞ when no mantissa bit is kept).
fn reduce_precision_bits(x: u64, width: u32, mantissa: u32, exponent_bits: i32, mantissa_bits: i32) -> u64 {
    let exponent = width - 1 - mantissa;
    let in_width = if width == 64 { u64::MAX } else { (1 << width) - 1 };
    let sign_mask = 1u64 << (width - 1);
    let exponent_mask = ((1u64 << exponent) - 1) << mantissa;
    let is_nan = x & !sign_mask > exponent_mask;
    let mut bits = x;
    if i64::from(mantissa_bits) < i64::from(mantissa) {
        let shift = mantissa - mantissa_bits as u32;
        let last_kept = 1u64 << shift;
        let bias = (bits & last_kept) >> shift;
        let bias = bias + (last_kept >> 1) - 1;
        bits = bits.wrapping_add(bias) & !(last_kept - 1) & in_width;
    }
    if i64::from(exponent_bits) < i64::from(exponent) {
        let bias = (1u64 << (exponent - 1)) - 1;
        let reduced_bias = (1u64 << (exponent_bits - 1)) - 1;
        let biased_exponent = bits & exponent_mask;
        let signed_zero = bits & sign_mask;
        if biased_exponent > (bias + reduced_bias) << mantissa {
            bits = signed_zero | exponent_mask;
        } else if biased_exponent <= (bias - reduced_bias) << mantissa {
            bits = signed_zero;
        }
    }
    match (is_nan, mantissa_bits > 0) {
        (false, _) => bits,
        (true, true) => x,
        (true, false) => exponent_mask,
    }
}

/// Converts one element to another type, as XLA's `convert` does.
pub(crate) fn convert<S: Element, D: Element>(value: S) -> D {
    D::narrow(value.widen())
}

/// Runs `$body` with `$f` bound to the function of the binary op `$op` on elements of `$T`:
/// the op is matched once, outside whatever loop `$body` runs, so each loop is monomorphized
/// for its op and vectorizes.
macro_rules! with_binary_fn {
    ($T:ty, $op:expr, $f:ident => $body:expr) => {{
        use $crate::attributes::BinaryOp::*;
        match $op {
            Add => {
                let $f = |a: $T, b: $T| Element::add(a, b);
                $body
            }
            Sub => {
                let $f = |a: $T, b: $T| Element::sub(a, b);
                $body
            }
            Mul => {
                let $f = |a: $T, b: $T| Element::mul(a, b);
                $body
            }
            Div => {
                let $f = |a: $T, b: $T| Element::div(a, b);
                $body
            }
            Rem => {
                let $f = |a: $T, b: $T| Element::rem(a, b);
                $body
            }
            Max => {
                let $f = |a: $T, b: $T| Element::maximum(a, b);
                $body
            }
            Min => {
                let $f = |a: $T, b: $T| Element::minimum(a, b);
                $body
            }
            Pow => {
                let $f = |a: $T, b: $T| Element::pow::<$crate::exec::math::Separate>(a, b);
                $body
            }
            Atan2 => {
                let $f = |a: $T, b: $T| Element::atan2::<$crate::exec::math::Separate>(a, b);
                $body
            }
            And => {
                let $f = |a: $T, b: $T| Element::and(a, b);
                $body
            }
            Or => {
                let $f = |a: $T, b: $T| Element::or(a, b);
                $body
            }
            Xor => {
                let $f = |a: $T, b: $T| Element::xor(a, b);
                $body
            }
            ShiftLeft => {
                let $f = |a: $T, b: $T| Element::shift_left(a, b);
                $body
            }
            ShiftRightArithmetic => {
                let $f = |a: $T, b: $T| Element::shift_right_arithmetic(a, b);
                $body
            }
            ShiftRightLogical => {
                let $f = |a: $T, b: $T| Element::shift_right_logical(a, b);
                $body
            }
        }
    }};
}
pub(crate) use with_binary_fn;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every integer type's `div` and `rem` against the quotient truncated in `i128` and
    /// wrapped to the type (`x / 0` all ones, `x % 0` is `x`), over every pair of the type's
    /// edges (0, ±1, ±2, `MIN`, `MAX` and their neighbours) and random pairs.
    #[test]
    fn integer_division_matches_truncated_i128_division() {
        macro_rules! check {
            ($($t:ty),*) => {$({
                let edges: Vec<$t> = [0i128, 1, 2, 3, 7, -1, -2, -3, -7]
                    .into_iter()
                    .chain([<$t>::MIN as i128, <$t>::MAX as i128])
                    .chain([<$t>::MIN as i128 + 1, <$t>::MAX as i128 - 1, <$t>::MAX as i128 / 2])
                    .map(|v| v as $t)
                    .collect();
                let mut state = 0x2545_f491_4f6c_dd1d_u64;
                let mut random = || {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    // Random magnitudes: the value shifted right by a random count.
                    ((state >> (state % 61)) as $t).wrapping_mul(if state & 1 == 0 { 1 } else { !0 })
                };
                let random_pairs: Vec<($t, $t)> = (0..20_000).map(|_| (random(), random())).collect();
                let pairs = edges.iter().flat_map(|&a| edges.iter().map(move |&b| (a, b))).chain(random_pairs);
                for (a, b) in pairs {
                    let (want_div, want_rem) = match b {
                        0 => (!0, a),
                        _ => ((a as i128 / b as i128) as $t, (a as i128 % b as i128) as $t),
                    };
                    assert_eq!((a.div(b), a.rem(b)), (want_div, want_rem), "{} {a} / {b}", stringify!($t));
                }
            })*};
        }
        check!(i8, i16, i32, i64, u8, u16, u32, u64);
    }

    /// Floats become integers of every type as Rust's saturating `as` makes them (NaN 0, ±∞
    /// and beyond the range the type's extremes, fractions truncated): edges, halves and
    /// random `f64`s of every magnitude.
    #[test]
    fn floats_narrow_to_integers_as_saturating_casts() {
        macro_rules! check {
            ($($t:ty),*) => {$({
                let (min, max) = (<$t>::MIN as f64, <$t>::MAX as f64);
                let mut values = vec![f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, 0.5, -0.5,
                    0.999, -0.999, 1.5, -1.5, 2.5, -2.5, min, max, min - 1.0, max + 1.0, min - 0.5, max + 0.5,
                    min + 0.5, max - 0.5, 2f64.powi(51), -2f64.powi(51), 2f64.powi(63), -2f64.powi(64), 1e300];
                let mut state = 0x9e37_79b9_7f4a_7c15_u64;
                for _ in 0..20_000 {
                    state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                    // Magnitudes from 2⁻⁶⁰ to 2⁶⁷, of both signs, with fractions.
                    let exponent = (state >> 57) as i32 + 1023 - 60;
                    values.push(f64::from_bits((state & !(0x7ff << 52)) | (exponent as u64) << 52));
                }
                for value in values {
                    let narrowed = <$t as Element>::narrow(Wide::Float(value));
                    assert_eq!(narrowed, value as $t, "{} {value:e}", stringify!($t));
                }
            })*};
        }
        check!(i8, i16, i32, i64, u8, u16, u32, u64);
    }

    /// Integers become `bf16` as XLA's CPU backend (jaxlib 0.6.0) converts them: through
    /// `f32`, rounding twice (2³⁰ + 2²² + 1 is a tie once in `f32`, so it becomes 2³⁰).
    #[test]
    fn integers_round_to_bf16_through_f32_as_xla_does() {
        for (integer, bits) in [((1 << 30) + (1 << 22) + 1, 0x4e80), ((1 << 24) + (1 << 16) + 1, 0x4b80)] {
            assert_eq!(<half::bf16 as Element>::narrow(Wide::Int(integer)).to_bits(), bits, "{integer}");
        }
    }
}
