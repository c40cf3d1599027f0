//! The arithmetic of every element type, exactly as XLA computes it: integer division and
//! shifts with XLA's edge cases, NaN-propagating max/min, conversions that truncate and
//! saturate, half-precision types computed in f32 and rounded once.

use crate::NativeType;

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
    fn pow(self, rhs: Self) -> Self;
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
    /// A float function of one argument, computed in the type's own precision.
    fn float_unary(self, f32_op: fn(f32) -> f32, f64_op: fn(f64) -> f64) -> Self {
        Self::narrow(Wide::Float(f64_op(self.to_f64())))
            .select_precision(|| Self::narrow(Wide::Float(f32_op(self.to_f64() as f32) as f64)))
    }
    /// A float function of two arguments, in the type's own precision.
    fn float_binary(self, rhs: Self, f32_op: fn(f32, f32) -> f32, f64_op: fn(f64, f64) -> f64) -> Self {
        Self::narrow(Wide::Float(f64_op(self.to_f64(), rhs.to_f64()))).select_precision(|| {
            Self::narrow(Wide::Float(f32_op(self.to_f64() as f32, rhs.to_f64() as f32) as f64))
        })
    }
    /// `self`, computed in f64, for f64 and the integer types; `in_f32()` for f32 and the
    /// half types, which XLA computes in single precision.
    fn select_precision(self, in_f32: impl FnOnce() -> Self) -> Self {
        let _ = in_f32;
        self
    }
    fn is_finite(self) -> bool {
        self.to_f64().is_finite()
    }
}

macro_rules! signed_integer {
    ($($t:ty => $u:ty),*) => {$(
        impl Element for $t {
            fn widen(self) -> Wide { Wide::Int(self as i128) }
            fn narrow(wide: Wide) -> Self {
                match wide { Wide::Int(i) => i as $t, Wide::Float(f) => f as $t }
            }
            fn add(self, rhs: Self) -> Self { self.wrapping_add(rhs) }
            fn sub(self, rhs: Self) -> Self { self.wrapping_sub(rhs) }
            fn mul(self, rhs: Self) -> Self { self.wrapping_mul(rhs) }
            fn div(self, rhs: Self) -> Self { if rhs == 0 { -1 } else { self.wrapping_div(rhs) } }
            fn rem(self, rhs: Self) -> Self { if rhs == 0 { self } else { self.wrapping_rem(rhs) } }
            fn maximum(self, rhs: Self) -> Self { Ord::max(self, rhs) }
            fn minimum(self, rhs: Self) -> Self { Ord::min(self, rhs) }
            fn pow(self, rhs: Self) -> Self { integer_pow(self as i128, rhs as i128) as $t }
            fn neg(self) -> Self { self.wrapping_neg() }
            fn abs(self) -> Self { self.wrapping_abs() }
            fn sign(self) -> Self { self.signum() }
            fn shift_left(self, rhs: Self) -> Self {
                if (rhs as $u) >= <$t>::BITS as $u { 0 } else { self.wrapping_shl(rhs as u32) }
            }
            fn shift_right_arithmetic(self, rhs: Self) -> Self {
                if (rhs as $u) >= <$t>::BITS as $u { if self < 0 { -1 } else { 0 } } else { self >> rhs }
            }
            fn shift_right_logical(self, rhs: Self) -> Self {
                if (rhs as $u) >= <$t>::BITS as $u { 0 } else { ((self as $u) >> rhs) as $t }
            }
        }
    )*};
}

macro_rules! unsigned_integer {
    ($($t:ty => $s:ty),*) => {$(
        impl Element for $t {
            fn widen(self) -> Wide { Wide::Int(self as i128) }
            fn narrow(wide: Wide) -> Self {
                match wide { Wide::Int(i) => i as $t, Wide::Float(f) => f as $t }
            }
            fn add(self, rhs: Self) -> Self { self.wrapping_add(rhs) }
            fn sub(self, rhs: Self) -> Self { self.wrapping_sub(rhs) }
            fn mul(self, rhs: Self) -> Self { self.wrapping_mul(rhs) }
            fn div(self, rhs: Self) -> Self { if rhs == 0 { <$t>::MAX } else { self / rhs } }
            fn rem(self, rhs: Self) -> Self { if rhs == 0 { self } else { self % rhs } }
            fn maximum(self, rhs: Self) -> Self { Ord::max(self, rhs) }
            fn minimum(self, rhs: Self) -> Self { Ord::min(self, rhs) }
            fn pow(self, rhs: Self) -> Self { integer_pow(self as i128, rhs as i128) as $t }
            fn neg(self) -> Self { self.wrapping_neg() }
            fn abs(self) -> Self { self }
            fn sign(self) -> Self { (self != 0) as $t }
            fn shift_left(self, rhs: Self) -> Self {
                if rhs >= <$t>::BITS as $t { 0 } else { self << rhs }
            }
            /// XLA shifts the bits as if they were signed: a set top bit fills with ones.
            fn shift_right_arithmetic(self, rhs: Self) -> Self {
                let shift = if rhs >= <$t>::BITS as $t { <$t>::BITS - 1 } else { rhs as u32 };
                ((self as $s) >> shift) as $t
            }
            fn shift_right_logical(self, rhs: Self) -> Self {
                if rhs >= <$t>::BITS as $t { 0 } else { self >> rhs }
            }
        }
    )*};
}

signed_integer!(i8 => u8, i16 => u16, i32 => u32, i64 => u64);
unsigned_integer!(u8 => i8, u16 => i16, u32 => i32, u64 => i64);

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
    fn pow(self, rhs: Self) -> Self {
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

/// XLA's float max: NaN if either is NaN.
fn float_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a > b {
        a
    } else {
        b
    }
}

/// XLA's float min: NaN if either is NaN.
fn float_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a < b {
        a
    } else {
        b
    }
}

/// Sign of a float: ±1, with ±0 and NaN passed through.
fn float_sign(a: f64) -> f64 {
    if a == 0.0 || a.is_nan() {
        a
    } else {
        a.signum()
    }
}

macro_rules! float {
    ($t:ty, $to:expr, $from:expr, $from_int:expr) => {
        impl Element for $t {
            fn widen(self) -> Wide {
                Wide::Float(self.to_f64())
            }
            fn narrow(wide: Wide) -> Self {
                let from: fn(f64) -> $t = $from;
                // Integers round once, straight to the type (not through f64 first).
                let from_int: fn(i128) -> $t = $from_int;
                match wide {
                    Wide::Int(i) => from_int(i),
                    Wide::Float(f) => from(f),
                }
            }
            fn add(self, rhs: Self) -> Self {
                self.arith(rhs, |a, b| a + b, |a, b| a + b)
            }
            fn sub(self, rhs: Self) -> Self {
                self.arith(rhs, |a, b| a - b, |a, b| a - b)
            }
            fn mul(self, rhs: Self) -> Self {
                self.arith(rhs, |a, b| a * b, |a, b| a * b)
            }
            fn div(self, rhs: Self) -> Self {
                self.arith(rhs, |a, b| a / b, |a, b| a / b)
            }
            fn rem(self, rhs: Self) -> Self {
                self.arith(rhs, |a, b| a % b, |a, b| a % b)
            }
            fn maximum(self, rhs: Self) -> Self {
                Self::narrow(Wide::Float(float_max(self.to_f64(), rhs.to_f64())))
            }
            fn minimum(self, rhs: Self) -> Self {
                Self::narrow(Wide::Float(float_min(self.to_f64(), rhs.to_f64())))
            }
            fn pow(self, rhs: Self) -> Self {
                self.arith(rhs, f32::powf, f64::powf)
            }
            fn neg(self) -> Self {
                Self::narrow(Wide::Float(-self.to_f64()))
            }
            fn abs(self) -> Self {
                Self::narrow(Wide::Float(self.to_f64().abs()))
            }
            fn sign(self) -> Self {
                Self::narrow(Wide::Float(float_sign(self.to_f64())))
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
            fn select_precision(self, in_f32: impl FnOnce() -> Self) -> Self {
                let single: bool = $to;
                if single {
                    in_f32()
                } else {
                    self
                }
            }
        }
    };
}

float!(f32, true, |f| f as f32, |i| i as f32);
float!(f64, false, |f| f, |i| i as f64);
float!(half::f16, true, half::f16::from_f64, |i| half::f16::from_f32(i as f32));
float!(half::bf16, true, half::bf16::from_f64, |i| half::bf16::from_f32(i as f32));

/// Binary float arithmetic in the type's precision.
trait FloatArith: Element {
    fn arith(self, rhs: Self, f32_op: fn(f32, f32) -> f32, f64_op: fn(f64, f64) -> f64) -> Self {
        self.float_binary(rhs, f32_op, f64_op)
    }
}

impl<T: Element> FloatArith for T {}

/// Converts one element to another type, as XLA's `convert` does.
pub(crate) fn convert<S: Element, D: Element>(value: S) -> D {
    D::narrow(value.widen())
}
