//! The reference interpreter's values: one [`Value`] per element (integers and `pred` exactly as
//! `i128`, floats as the `f64` that holds the element type's value exactly), an error bound per
//! element ([`Elem`]), row-major arrays ([`Array`]), the per-type facts the arithmetic needs
//! (bit widths, wrapping, rounding, float limits), and the bridge to and from [`Literal`]s.

use half::{bf16, f16};
use lazy_xla::{ElementType, Literal, NativeType, Shape};

/// One element's value: integers and `pred` (0 or 1) as `i128`, floats as `f64`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// An integer or `pred` value, always within its element type's range.
    Int(i128),
    /// A float value, always exactly representable in its element type.
    Float(f64),
}

impl Value {
    /// The integer (`pred`: 0 or 1); panics on a float.
    pub fn int(self) -> i128 {
        match self {
            Value::Int(v) => v,
            Value::Float(v) => panic!("expected an integer, got {v}"),
        }
    }

    /// The float; panics on an integer.
    pub fn float(self) -> f64 {
        match self {
            Value::Float(v) => v,
            Value::Int(v) => panic!("expected a float, got {v}"),
        }
    }

    /// An integer value as a value of `ty` (a float for float types).
    pub fn into_type(self, ty: ElementType) -> Value {
        match (self, ty.is_float()) {
            (Value::Int(v), true) => Value::Float(v as f64),
            (v, _) => v,
        }
    }

    /// Equal as results: integers equal, floats equal or both NaN (+0 equals -0).
    pub fn same(self, other: Value) -> bool {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a == b || (a.is_nan() && b.is_nan()),
            _ => false,
        }
    }

    /// The same value to the bit: [`Value::same`], but +0 and -0 differ.
    pub fn identical(self, other: Value) -> bool {
        match (self, other) {
            (Value::Float(a), Value::Float(b)) => a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            _ => self.same(other),
        }
    }
}

/// A reference element: its value and a bound on how far a correct implementation may be from
/// it (`0`: exactly this value; `+∞`: any value is right, e.g. `floor` of an inexact value that
/// may fall on either side of an integer). Inexact values are always finite floats.
#[derive(Clone, Copy, Debug)]
pub struct Elem {
    /// The value the reference computed.
    pub value: Value,
    /// The error bound: 0 (exact), finite (floats only), or +∞ (unknown).
    pub err: f64,
}

impl Elem {
    /// An exact element.
    pub fn exact(value: Value) -> Elem {
        Elem { value, err: 0.0 }
    }

    /// An element whose value is not determined (any result is accepted).
    pub fn unknown(value: Value) -> Elem {
        Elem { value, err: f64::INFINITY }
    }

    /// An unknown element of `ty`.
    pub fn unknown_of(ty: ElementType) -> Elem {
        Elem::unknown(if ty.is_float() { Value::Float(f64::NAN) } else { Value::Int(0) })
    }

    /// An exact float.
    pub fn float(value: f64) -> Elem {
        Elem::exact(Value::Float(value))
    }

    /// An exact integer or pred.
    pub fn int(value: i128) -> Elem {
        Elem::exact(Value::Int(value))
    }

    /// An exact pred.
    pub fn pred(value: bool) -> Elem {
        Elem::int(value as i128)
    }

    /// Whether the element is exact.
    pub fn is_exact(&self) -> bool {
        self.err == 0.0
    }

    /// Whether any value is accepted (an infinite or NaN bound).
    pub fn is_unknown(&self) -> bool {
        !self.err.is_finite()
    }

    /// Whether `got` is an acceptable result for this element: anything if unknown, the same
    /// value if exact, within `err` otherwise.
    pub fn accepts(&self, got: Value) -> bool {
        if self.is_unknown() {
            return true;
        }
        if self.is_exact() {
            return self.value.same(got);
        }
        match (self.value, got) {
            (Value::Float(v), Value::Float(g)) => (g - v).abs() <= self.err,
            _ => false,
        }
    }
}

/// A reference array: element type, dimensions and elements in logical row-major order.
#[derive(Clone, Debug)]
pub struct Array {
    /// The element type.
    pub ty: ElementType,
    /// The dimensions.
    pub dims: Vec<i64>,
    /// The elements, row-major.
    pub elems: Vec<Elem>,
}

impl Array {
    /// An array of exact values.
    pub fn exact(ty: ElementType, dims: &[i64], values: &[Value]) -> Array {
        Array { ty, dims: dims.to_vec(), elems: values.iter().map(|&v| Elem::exact(v)).collect() }
    }

    /// The values (without their bounds).
    pub fn values(&self) -> Vec<Value> {
        self.elems.iter().map(|e| e.value).collect()
    }

    /// Whether every element is exact.
    pub fn is_exact(&self) -> bool {
        self.elems.iter().all(Elem::is_exact)
    }
}

/// The number of bits of an integer type.
pub fn bit_width(ty: ElementType) -> u32 {
    match ty {
        ElementType::S8 | ElementType::U8 => 8,
        ElementType::S16 | ElementType::U16 => 16,
        ElementType::S32 | ElementType::U32 => 32,
        ElementType::S64 | ElementType::U64 => 64,
        other => panic!("no bit width for {other}"),
    }
}

/// `v` wrapped into the integer type `ty` (two's complement), or `pred`'s `v != 0`.
pub fn wrap(ty: ElementType, v: i128) -> i128 {
    match ty {
        ElementType::Pred => (v != 0) as i128,
        ElementType::S8 => v as i8 as i128,
        ElementType::S16 => v as i16 as i128,
        ElementType::S32 => v as i32 as i128,
        ElementType::S64 => v as i64 as i128,
        ElementType::U8 => v as u8 as i128,
        ElementType::U16 => v as u16 as i128,
        ElementType::U32 => v as u32 as i128,
        ElementType::U64 => v as u64 as i128,
        other => panic!("{other} is not an integer type"),
    }
}

/// The smallest value of an integer type.
pub fn int_min(ty: ElementType) -> i128 {
    if ty.is_signed_integral() {
        -(1i128 << (bit_width(ty) - 1))
    } else {
        0
    }
}

/// The largest value of an integer type.
pub fn int_max(ty: ElementType) -> i128 {
    if ty.is_signed_integral() {
        (1i128 << (bit_width(ty) - 1)) - 1
    } else {
        (1i128 << bit_width(ty)) - 1
    }
}

/// The unit roundoff (half an ulp at 1) of a float type.
pub fn unit_roundoff(ty: ElementType) -> f64 {
    match ty {
        ElementType::F16 => 2f64.powi(-11),
        ElementType::Bf16 => 2f64.powi(-8),
        ElementType::F32 => 2f64.powi(-24),
        ElementType::F64 => 2f64.powi(-53),
        other => panic!("{other} is not a float type"),
    }
}

/// The largest finite value of a float type.
pub fn max_finite(ty: ElementType) -> f64 {
    match ty {
        ElementType::F16 => f16::MAX.to_f64(),
        ElementType::Bf16 => bf16::MAX.to_f64(),
        ElementType::F32 => f32::MAX as f64,
        ElementType::F64 => f64::MAX,
        other => panic!("{other} is not a float type"),
    }
}

/// The smallest positive normal value of a float type.
pub fn min_normal(ty: ElementType) -> f64 {
    match ty {
        ElementType::F16 => f16::MIN_POSITIVE.to_f64(),
        ElementType::Bf16 => bf16::MIN_POSITIVE.to_f64(),
        ElementType::F32 => f32::MIN_POSITIVE as f64,
        ElementType::F64 => f64::MIN_POSITIVE,
        other => panic!("{other} is not a float type"),
    }
}

/// The smallest positive subnormal value of a float type.
pub fn min_subnormal(ty: ElementType) -> f64 {
    match ty {
        ElementType::F16 => 2f64.powi(-24),
        ElementType::Bf16 => 2f64.powi(-133),
        ElementType::F32 => 2f64.powi(-149),
        ElementType::F64 => 2f64.powi(-1074),
        other => panic!("{other} is not a float type"),
    }
}

/// The number of bits of an element of `ty` in memory (`pred`: 8, as XLA stores it).
pub fn storage_bits(ty: ElementType) -> u32 {
    8 * ty.byte_size() as u32
}

/// The explicit mantissa (significand without its leading bit) width of a float type.
pub fn mantissa_bits(ty: ElementType) -> u32 {
    match ty {
        ElementType::F16 => 10,
        ElementType::Bf16 => 7,
        ElementType::F32 => 23,
        ElementType::F64 => 52,
        other => panic!("{other} is not a float type"),
    }
}

/// The IEEE encoding of `v` (a value of the float type `ty`) in `ty`'s width.
pub fn float_to_bits(ty: ElementType, v: f64) -> u64 {
    match ty {
        ElementType::F16 => u64::from(f16::from_f64(v).to_bits()),
        ElementType::Bf16 => u64::from(bf16::from_f64(v).to_bits()),
        ElementType::F32 => u64::from((v as f32).to_bits()),
        ElementType::F64 => v.to_bits(),
        other => panic!("{other} is not a float type"),
    }
}

/// The float of type `ty` whose encoding is the low bits of `bits`.
pub fn float_from_bits(ty: ElementType, bits: u64) -> f64 {
    match ty {
        ElementType::F16 => f16::from_bits(bits as u16).to_f64(),
        ElementType::Bf16 => bf16::from_bits(bits as u16).to_f64(),
        ElementType::F32 => f64::from(f32::from_bits(bits as u32)),
        ElementType::F64 => f64::from_bits(bits),
        other => panic!("{other} is not a float type"),
    }
}

/// `x` rounded to the float type `ty` (to nearest, ties to even). As XLA's CPU backend does,
/// f16 and bf16 go through f32 (asked jaxlib 0.6.0: f64 `1 + 2^-11 + 2^-40` converts to f16 1.0,
/// the double rounding of f64 → f32 → f16); f64 → f32 rounds once.
pub fn round_float(ty: ElementType, x: f64) -> f64 {
    match ty {
        ElementType::F64 => x,
        ElementType::F32 => x as f32 as f64,
        ElementType::F16 => f16::from_f32(x as f32).to_f64(),
        ElementType::Bf16 => bf16::from_f32(x as f32).to_f64(),
        other => panic!("{other} is not a float type"),
    }
}

/// A Rust type of the crate's element types, with the reference's conversions and a way to
/// print a value as Rust source.
pub trait Native: NativeType {
    /// The value as the reference holds it.
    fn to_value(self) -> Value;
    /// The reference's value in this type (it must be representable).
    fn from_value(value: Value) -> Self;
    /// The value as a Rust expression of this type.
    fn rust(self) -> String;
}

impl Native for bool {
    fn to_value(self) -> Value {
        Value::Int(self as i128)
    }
    fn from_value(value: Value) -> Self {
        value.int() != 0
    }
    fn rust(self) -> String {
        self.to_string()
    }
}

macro_rules! native_int {
    ($($t:ident),*) => {$(
        impl Native for $t {
            fn to_value(self) -> Value {
                Value::Int(self as i128)
            }
            fn from_value(value: Value) -> Self {
                value.int() as $t
            }
            fn rust(self) -> String {
                match self {
                    $t::MIN if $t::MIN != 0 => concat!(stringify!($t), "::MIN").to_string(),
                    $t::MAX => concat!(stringify!($t), "::MAX").to_string(),
                    v => format!("{v}{}", stringify!($t)),
                }
            }
        }
    )*};
}

native_int!(i8, i16, i32, i64, u8, u16, u32, u64);

/// A float as a Rust expression: `module::NAN` and the like, else a literal with `suffix`.
fn float_rust(v: f64, suffix: &str, module: &str) -> String {
    if v.is_nan() {
        format!("{module}::NAN")
    } else if v == f64::INFINITY {
        format!("{module}::INFINITY")
    } else if v == f64::NEG_INFINITY {
        format!("{module}::NEG_INFINITY")
    } else if suffix == "f64" {
        format!("{v:?}f64")
    } else {
        format!("{:?}f32", v as f32)
    }
}

impl Native for f32 {
    fn to_value(self) -> Value {
        Value::Float(self as f64)
    }
    fn from_value(value: Value) -> Self {
        value.float() as f32
    }
    fn rust(self) -> String {
        float_rust(self as f64, "f32", "f32")
    }
}

impl Native for f64 {
    fn to_value(self) -> Value {
        Value::Float(self)
    }
    fn from_value(value: Value) -> Self {
        value.float()
    }
    fn rust(self) -> String {
        float_rust(self, "f64", "f64")
    }
}

macro_rules! native_half {
    ($($t:ident),*) => {$(
        impl Native for $t {
            fn to_value(self) -> Value {
                Value::Float(self.to_f64())
            }
            fn from_value(value: Value) -> Self {
                $t::from_f64(value.float())
            }
            fn rust(self) -> String {
                let v = self.to_f64();
                if v.is_finite() {
                    format!("half::{}::from_f32({})", stringify!($t), float_rust(v, "f32", "f32"))
                } else {
                    float_rust(v, "", concat!("half::", stringify!($t)))
                }
            }
        }
    )*};
}

native_half!(f16, bf16);

/// Runs `$body` with `$T` bound to the Rust type of the element type `$ty`.
macro_rules! with_native {
    ($ty:expr, $T:ident => $body:expr) => {
        match $ty {
            lazy_xla::ElementType::Pred => {
                type $T = bool;
                $body
            }
            lazy_xla::ElementType::S8 => {
                type $T = i8;
                $body
            }
            lazy_xla::ElementType::S16 => {
                type $T = i16;
                $body
            }
            lazy_xla::ElementType::S32 => {
                type $T = i32;
                $body
            }
            lazy_xla::ElementType::S64 => {
                type $T = i64;
                $body
            }
            lazy_xla::ElementType::U8 => {
                type $T = u8;
                $body
            }
            lazy_xla::ElementType::U16 => {
                type $T = u16;
                $body
            }
            lazy_xla::ElementType::U32 => {
                type $T = u32;
                $body
            }
            lazy_xla::ElementType::U64 => {
                type $T = u64;
                $body
            }
            lazy_xla::ElementType::F16 => {
                type $T = half::f16;
                $body
            }
            lazy_xla::ElementType::Bf16 => {
                type $T = half::bf16;
                $body
            }
            lazy_xla::ElementType::F32 => {
                type $T = f32;
                $body
            }
            lazy_xla::ElementType::F64 => {
                type $T = f64;
                $body
            }
        }
    };
}
pub(crate) use with_native;

/// A literal of `shape` (its layout and padding included) holding `values` (row-major).
pub fn literal(shape: &Shape, values: &[Value]) -> Literal {
    with_native!(shape.element_type(), T => {
        let typed: Vec<T> = values.iter().map(|&v| T::from_value(v)).collect();
        Literal::from_vec(shape, typed).unwrap_or_else(|e| panic!("literal of {shape}: {e}"))
    })
}

/// A literal's values, row-major.
pub fn values_of(literal: &Literal) -> Vec<Value> {
    with_native!(literal.element_type(), T => {
        let typed: Vec<T> = literal.to_vec::<T>().unwrap_or_else(|e| panic!("values of a literal: {e}"));
        typed.into_iter().map(Native::to_value).collect()
    })
}

/// A literal's buffer in memory order, padding included.
pub fn memory_of(literal: &Literal) -> Vec<Value> {
    with_native!(literal.element_type(), T => {
        let typed: &[T] = literal.memory::<T>().unwrap_or_else(|e| panic!("memory of a literal: {e}"));
        typed.iter().map(|&v| v.to_value()).collect()
    })
}

/// The buffer offsets of `shape`'s padding: every offset that no element's index maps to.
pub fn padding_offsets(shape: &Shape) -> Vec<usize> {
    let len = Literal::zeros(shape).map(|l| memory_of(&l).len()).unwrap_or(0);
    let mut is_element = vec![false; len];
    let dims = shape.dimensions().to_vec();
    let count: i64 = dims.iter().product();
    let mut index = vec![0i64; dims.len()];
    for _ in 0..count {
        let offset = shape.linear_index(&index).unwrap_or_else(|e| panic!("index {index:?} of {shape}: {e}"));
        is_element[offset as usize] = true;
        for d in (0..dims.len()).rev() {
            index[d] += 1;
            if index[d] < dims[d] {
                break;
            }
            index[d] = 0;
        }
    }
    (0..len).filter(|&o| !is_element[o]).collect()
}

/// A value of `ty` as a Rust expression (`1.5f32`, `i8::MIN`, `half::bf16::from_f32(2.0f32)`).
pub fn rust_value(ty: ElementType, value: Value) -> String {
    with_native!(ty, T => T::from_value(value).rust())
}

/// The Rust type of `ty`'s elements, as source.
pub fn rust_type(ty: ElementType) -> &'static str {
    match ty {
        ElementType::Pred => "bool",
        ElementType::S8 => "i8",
        ElementType::S16 => "i16",
        ElementType::S32 => "i32",
        ElementType::S64 => "i64",
        ElementType::U8 => "u8",
        ElementType::U16 => "u16",
        ElementType::U32 => "u32",
        ElementType::U64 => "u64",
        ElementType::F16 => "half::f16",
        ElementType::Bf16 => "half::bf16",
        ElementType::F32 => "f32",
        ElementType::F64 => "f64",
    }
}

/// Values of `ty` as a Rust `vec![…]` (typed when empty).
pub fn rust_vec(ty: ElementType, values: &[Value]) -> String {
    if values.is_empty() {
        return format!("Vec::<{}>::new()", rust_type(ty));
    }
    let items: Vec<String> = values.iter().map(|&v| rust_value(ty, v)).collect();
    format!("vec![{}]", items.join(", "))
}
