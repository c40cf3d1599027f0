//! XLA's element-wise semantics, one element at a time, exact per type, with error bounds.
//!
//! Integers wrap in their width and follow XLA's edge cases (x/0 = -1 signed, all ones unsigned;
//! x%0 = x; MIN/-1 = MIN; MIN%-1 = 0; shifts out of range give 0 or the sign fill; an unsigned
//! arithmetic shift treats the bits as signed; integer pow with a negative exponent, an unsigned
//! one with its top bit set included, is 0 unless the base is 1). `pred` arithmetic is logical:
//! add/max = or, mul/min = and. Floats are rounded
//! once per op in their type; f16 and bf16 ops are computed in f32 and rounded once (asked
//! jaxlib 0.6.0: its CPU backend rounds after every op, even inside fusions). max/min are IEEE
//! 754-2019 maximum/minimum: NaN if either is NaN, and -0 < +0 (`max(-0, +0)` is +0); clamp is
//! `min(max(x, lo), hi)`, so NaN anywhere gives NaN. These are what `jax.jit` computes; note that
//! compiling through the bare `xla_client` as `ask-xla.md` shows runs XLA's fast min/max
//! instead (`max(1, NaN)` is 1 there) unless `XLA_FLAGS=--xla_cpu_enable_fast_min_max=false`.
//!
//! # Error bounds (see [`Elem`])
//!
//! Exact inputs to +, -, *, /, rem, sqrt, max, min, comparisons, conversions and all integer ops
//! (clz and population_count included) give an exact result: lazy-xla must match it bit for bit
//! (+0 and -0 compare equal, NaN equals NaN). Transcendental ops (exp, log, log1p, expm1, tanh,
//! logistic, rsqrt, sin, cos, tan, erf, cbrt, pow, atan2) are computed in f64 and rounded, with
//! a tolerance of [`transcendental_tolerance`] relative to the result (plus an absolute part for
//! results that may be near 0, tan's through its slope, and twice the smallest normal for
//! results that underflow); results within that tolerance of overflowing are unknown. An inexact input widens the bound by the op's Lipschitz bound over the input's
//! interval plus the rounding of the result; where the interval crosses a discontinuity (floor,
//! sign, comparisons, conversion to integers, division by an interval holding 0, rem, pow,
//! atan2, …) the result is unknown.

use crate::common::values::{
    bit_width, int_max, max_finite, min_normal, min_subnormal, round_float, unit_roundoff, wrap, Elem, Value,
};
use lazy_xla::ElementType;

/// The element-wise unary ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryKind {
    Neg,
    Abs,
    Exp,
    Log,
    Log1p,
    Expm1,
    Tanh,
    Logistic,
    Sqrt,
    Rsqrt,
    Sign,
    Floor,
    Ceil,
    Round,
    RoundNearestEven,
    Sin,
    Cos,
    Not,
    IsFinite,
    Clz,
    PopulationCount,
    Erf,
    Tan,
    Cbrt,
}

/// The element-wise binary ops (comparisons are [`CompareKind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryKind {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Max,
    Min,
    Pow,
    Atan2,
    And,
    Or,
    Xor,
    ShiftLeft,
    ShiftRightArithmetic,
    ShiftRightLogical,
}

/// The comparison directions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareKind {
    Eq,
    Ne,
    Ge,
    Gt,
    Le,
    Lt,
}

impl UnaryKind {
    /// Every unary op.
    pub const ALL: [UnaryKind; 24] = [
        UnaryKind::Neg,
        UnaryKind::Abs,
        UnaryKind::Exp,
        UnaryKind::Log,
        UnaryKind::Log1p,
        UnaryKind::Expm1,
        UnaryKind::Tanh,
        UnaryKind::Logistic,
        UnaryKind::Sqrt,
        UnaryKind::Rsqrt,
        UnaryKind::Sign,
        UnaryKind::Floor,
        UnaryKind::Ceil,
        UnaryKind::Round,
        UnaryKind::RoundNearestEven,
        UnaryKind::Sin,
        UnaryKind::Cos,
        UnaryKind::Not,
        UnaryKind::IsFinite,
        UnaryKind::Clz,
        UnaryKind::PopulationCount,
        UnaryKind::Erf,
        UnaryKind::Tan,
        UnaryKind::Cbrt,
    ];

    /// The lazy-xla function's name.
    pub fn name(self) -> &'static str {
        use UnaryKind::*;
        match self {
            Neg => "neg",
            Abs => "abs",
            Exp => "exp",
            Log => "log",
            Log1p => "log1p",
            Expm1 => "expm1",
            Tanh => "tanh",
            Logistic => "logistic",
            Sqrt => "sqrt",
            Rsqrt => "rsqrt",
            Sign => "sign",
            Floor => "floor",
            Ceil => "ceil",
            Round => "round",
            RoundNearestEven => "round_nearest_even",
            Sin => "sin",
            Cos => "cos",
            Not => "not",
            IsFinite => "is_finite",
            Clz => "clz",
            PopulationCount => "population_count",
            Erf => "erf",
            Tan => "tan",
            Cbrt => "cbrt",
        }
    }

    /// Whether XLA takes the op on `ty` (jaxlib 0.6.0 builds and compiles exactly these).
    pub fn accepts(self, ty: ElementType) -> bool {
        use UnaryKind::*;
        match self {
            Neg => ty != ElementType::Pred,
            Abs | Sign => ty.is_float() || ty.is_signed_integral(),
            Not => !ty.is_float(),
            Clz | PopulationCount => ty.is_integral(),
            _ => ty.is_float(),
        }
    }

    /// The result's element type.
    pub fn result_type(self, ty: ElementType) -> ElementType {
        if self == UnaryKind::IsFinite {
            ElementType::Pred
        } else {
            ty
        }
    }
}

impl BinaryKind {
    /// Every binary op.
    pub const ALL: [BinaryKind; 15] = [
        BinaryKind::Add,
        BinaryKind::Sub,
        BinaryKind::Mul,
        BinaryKind::Div,
        BinaryKind::Rem,
        BinaryKind::Max,
        BinaryKind::Min,
        BinaryKind::Pow,
        BinaryKind::Atan2,
        BinaryKind::And,
        BinaryKind::Or,
        BinaryKind::Xor,
        BinaryKind::ShiftLeft,
        BinaryKind::ShiftRightArithmetic,
        BinaryKind::ShiftRightLogical,
    ];

    /// The lazy-xla function's name.
    pub fn name(self) -> &'static str {
        use BinaryKind::*;
        match self {
            Add => "add",
            Sub => "sub",
            Mul => "mul",
            Div => "div",
            Rem => "rem",
            Max => "max",
            Min => "min",
            Pow => "pow",
            Atan2 => "atan2",
            And => "and",
            Or => "or",
            Xor => "xor",
            ShiftLeft => "shift_left",
            ShiftRightArithmetic => "shift_right_arithmetic",
            ShiftRightLogical => "shift_right_logical",
        }
    }

    /// Whether XLA takes the op on `ty` (jaxlib 0.6.0 builds and compiles exactly these).
    pub fn accepts(self, ty: ElementType) -> bool {
        use BinaryKind::*;
        match self {
            Add | Mul | Max | Min => true,
            Sub | Div | Rem | Pow => ty != ElementType::Pred,
            Atan2 => ty.is_float(),
            And | Or | Xor => !ty.is_float(),
            ShiftLeft | ShiftRightArithmetic | ShiftRightLogical => ty.is_integral(),
        }
    }
}

impl CompareKind {
    /// Every direction.
    pub const ALL: [CompareKind; 6] = [
        CompareKind::Eq,
        CompareKind::Ne,
        CompareKind::Ge,
        CompareKind::Gt,
        CompareKind::Le,
        CompareKind::Lt,
    ];

    /// The lazy-xla function's name.
    pub fn name(self) -> &'static str {
        match self {
            CompareKind::Eq => "eq",
            CompareKind::Ne => "ne",
            CompareKind::Ge => "ge",
            CompareKind::Gt => "gt",
            CompareKind::Le => "le",
            CompareKind::Lt => "lt",
        }
    }

    fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            CompareKind::Eq => a == b,
            CompareKind::Ne => a != b,
            CompareKind::Ge => a >= b,
            CompareKind::Gt => a > b,
            CompareKind::Le => a <= b,
            CompareKind::Lt => a < b,
        }
    }
}

/// The relative tolerance of transcendental ops in `ty`: about 84 ulps of f32 (the fast
/// polynomial approximations promise a few), 4 ulps of f16 and bf16 (computed in f32 and
/// rounded: at most one ulp apart), and 1e-13 for f64.
pub fn transcendental_tolerance(ty: ElementType) -> f64 {
    match ty {
        ElementType::F32 => 1e-5,
        ElementType::F64 => 1e-13,
        other => 8.0 * unit_roundoff(other),
    }
}

/// The zero an order-dependent choice (a select-based max over a reduction) picks among
/// `values`: exact if all zeros among them have one sign, else either zero.
pub fn zero_of_either_sign(ty: ElementType, values: &[f64]) -> Elem {
    let zeros = values.iter().filter(|v| **v == 0.0);
    let (negative, positive) =
        zeros.fold((false, false), |(n, p), z| (n || z.is_sign_negative(), p || z.is_sign_positive()));
    match (negative, positive) {
        (true, true) => Elem { value: Value::Float(0.0), err: min_subnormal(ty) },
        (true, false) => Elem::float(-0.0),
        _ => Elem::float(0.0),
    }
}

/// The smallest normal number of the type XLA's CPU runtime computes `ty` in (f32 for the
/// half types), below which it reads arguments as ±0.
fn compute_min_normal(ty: ElementType) -> f64 {
    if ty == ElementType::F64 {
        f64::MIN_POSITIVE
    } else {
        f64::from(f32::MIN_POSITIVE)
    }
}

/// A float result with the bound `err`; unknown if it may overflow.
fn bounded(ty: ElementType, v: f64, err: f64) -> Elem {
    if err > 0.0 && (!v.is_finite() || v.abs() + err >= max_finite(ty)) {
        Elem::unknown(Value::Float(v))
    } else {
        Elem { value: Value::Float(v), err }
    }
}

/// The result `v` of a float op whose exact value over the inputs' intervals moves at most `d`:
/// `d` plus the rounding of either result.
fn perturbed(ty: ElementType, v: f64, d: f64) -> Elem {
    if !d.is_finite() || !v.is_finite() {
        return Elem::unknown(Value::Float(v));
    }
    bounded(ty, v, d + 2.0 * unit_roundoff(ty) * (v.abs() + d) + min_subnormal(ty))
}

/// The result of a transcendental op computed in f64 as `exact` from exact inputs, with the
/// absolute tolerance `absolute` on top of the relative one.
fn transcendental(ty: ElementType, exact: f64, absolute: f64) -> Elem {
    let rel = transcendental_tolerance(ty);
    let v = round_float(ty, exact);
    if exact.is_nan() || exact.is_infinite() {
        return Elem::float(v);
    }
    if exact.abs() * (1.0 - 4.0 * rel) > max_finite(ty) * (1.0 + unit_roundoff(ty)) {
        return Elem::float(v); // overflows for certain
    }
    bounded(ty, v, rel * exact.abs() + absolute + 2.0 * min_normal(ty))
}

/// The error function in f64 (std has none): `2/√π·e^(−x²)·Σ (2x²)ⁿ·x / (2n+1)!!`, a series of
/// positive terms (no cancellation, a few ulps), and ±1 beyond |x| = 6 (erfc(6) < 3e-17).
pub fn erf(x: f64) -> f64 {
    if x.is_nan() || x.abs() >= 6.0 {
        return if x.is_nan() { x } else { 1f64.copysign(x) };
    }
    let x2 = x * x;
    let (mut term, mut sum, mut n) = (x, x, 0.0);
    while term.abs() > sum.abs() * 1e-17 {
        n += 1.0;
        term *= 2.0 * x2 / (2.0 * n + 1.0);
        sum += term;
    }
    std::f64::consts::FRAC_2_SQRT_PI * (-x2).exp() * sum
}

fn float_unary(op: UnaryKind, ty: ElementType, x: f64, e: f64) -> Elem {
    use UnaryKind::*;
    let unknown = Elem::unknown(Value::Float(f64::NAN));
    let rel = transcendental_tolerance(ty);
    match op {
        Neg => Elem { value: Value::Float(-x), err: e },
        Abs => Elem { value: Value::Float(x.abs()), err: e },
        Sign => {
            let s = if x == 0.0 || x.is_nan() { x } else { x.signum() };
            if e > 0.0 && x.abs() <= e {
                unknown
            } else {
                Elem::float(s)
            }
        }
        Floor | Ceil | Round | RoundNearestEven => {
            let f = |t: f64| match op {
                Floor => t.floor(),
                Ceil => t.ceil(),
                RoundNearestEven => t.round_ties_even(),
                _ => t.round(), // half away from zero, as XLA's round
            };
            if e == 0.0 || f(x - e).to_bits() == f(x + e).to_bits() {
                Elem::float(f(x))
            } else {
                unknown
            }
        }
        IsFinite => {
            if e == 0.0 || x.abs() + e < max_finite(ty) {
                Elem::pred(x.is_finite())
            } else {
                Elem::unknown(Value::Int(0))
            }
        }
        Sqrt => {
            // XLA's CPU runtime reads a denormal argument as ±0 (DAZ): sqrt(-1e-45) = -0.
            let x = if x.abs() < compute_min_normal(ty) { x * 0.0 } else { x };
            let v = round_float(ty, x.sqrt());
            if e == 0.0 {
                Elem::float(v)
            } else if x - e < 0.0 {
                unknown
            } else {
                perturbed(ty, v, e.sqrt().min(e / ((x - e).sqrt() + x.sqrt())))
            }
        }
        Not => panic!("not on a float"),
        _ => {
            // XLA's CPU runtime reads denormal arguments (of the type it computes in: f32 for
            // the half types) of some functions as zero (DAZ): either reading is right.
            if x != 0.0 && x.abs() < compute_min_normal(ty) {
                return unknown;
            }
            let (exact, absolute) = match op {
                Exp => (x.exp(), 0.0),
                Log => (x.ln(), rel),
                Log1p => (x.ln_1p(), rel),
                Expm1 => (x.exp_m1(), rel),
                Tanh => (x.tanh(), rel),
                Logistic => (1.0 / (1.0 + (-x).exp()), 0.0),
                Rsqrt => (1.0 / x.sqrt(), 0.0),
                Sin => (x.sin(), rel * x.abs().max(1.0)),
                Cos => (x.cos(), rel * x.abs().max(1.0)),
                Erf => (erf(x), rel),
                // An argument error of `rel·max(|x|, 1)` (the range reduction), through tan's
                // slope 1 + tan².
                Tan => (x.tan(), rel * x.abs().max(1.0) * (1.0 + x.tan().powi(2))),
                Cbrt => (x.cbrt(), 0.0),
                _ => unreachable!("{op:?}"),
            };
            if e == 0.0 {
                return transcendental(ty, exact, absolute);
            }
            // Inexact (finite) input: how far the exact result moves over [x - e, x + e].
            let d = match op {
                Exp => exact.abs() * e.exp_m1(),
                Expm1 => x.exp() * e.exp_m1(),
                Log if x - e > 0.0 => e / (x - e),
                Log1p if 1.0 + x - e > 0.0 => e / (1.0 + x - e),
                Rsqrt if x - e > 0.0 => 1.0 / (x - e).sqrt() - 1.0 / x.sqrt(),
                Tanh | Sin | Cos => e,
                Logistic => e / 4.0,
                Erf => e * std::f64::consts::FRAC_2_SQRT_PI,
                // 1 / cos² over the interval, while it keeps away from a pole.
                Tan if e < x.cos().abs() / 2.0 => e / (x.cos().abs() - e).powi(2),
                Cbrt if x.abs() > e => e / (3.0 * (x.abs() - e).powf(2.0 / 3.0)),
                Cbrt => 2.0 * e.cbrt(),
                _ => return unknown,
            };
            let tolerance = rel * exact.abs() + absolute + 2.0 * min_normal(ty);
            perturbed(ty, round_float(ty, exact), d + tolerance)
        }
    }
}

/// A unary op on an element of `ty`.
pub fn unary(op: UnaryKind, ty: ElementType, x: Elem) -> Elem {
    use UnaryKind::*;
    if x.is_unknown() {
        return Elem::unknown(Value::Int(0).into_type(op.result_type(ty)));
    }
    if ty.is_float() {
        return float_unary(op, ty, x.value.float(), x.err);
    }
    let a = x.value.int();
    let v = match op {
        Not if ty == ElementType::Pred => 1 - a,
        Not => wrap(ty, !a),
        Neg => wrap(ty, -a),
        Clz => {
            let bits = bit_width(ty);
            let unsigned = (a as u128) & ((1u128 << bits) - 1);
            (unsigned.leading_zeros() - (128 - bits)) as i128
        }
        PopulationCount => {
            let unsigned = (a as u128) & ((1u128 << bit_width(ty)) - 1);
            unsigned.count_ones() as i128
        }
        Abs => wrap(ty, a.abs()),
        Sign => a.signum(),
        _ => panic!("{op:?} on {ty}"),
    };
    Elem::int(v)
}

/// XLA's float max: NaN if either is NaN, else the larger, +0 over -0.
pub fn xla_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a > b || (a == b && b.is_sign_negative()) {
        a
    } else {
        b
    }
}

/// XLA's float min: NaN if either is NaN, else the smaller, -0 over +0.
pub fn xla_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a < b || (a == b && a.is_sign_negative()) {
        a
    } else {
        b
    }
}

fn float_binary(op: BinaryKind, ty: ElementType, a: Elem, b: Elem) -> Elem {
    use BinaryKind::*;
    let (x, y) = (a.value.float(), b.value.float());
    let unknown = Elem::unknown(Value::Float(f64::NAN));
    if a.is_unknown() || b.is_unknown() {
        return unknown;
    }
    let exact = a.is_exact() && b.is_exact();
    let (ea, eb) = (a.err, b.err);
    match op {
        Add | Sub | Mul | Div => {
            let v = round_float(
                ty,
                match op {
                    Add => x + y,
                    Sub => x - y,
                    Mul => x * y,
                    _ => x / y,
                },
            );
            if exact {
                return Elem::float(v);
            }
            if !x.is_finite() || !y.is_finite() {
                return unknown;
            }
            let d = match op {
                Add | Sub => ea + eb,
                Mul => x.abs() * eb + y.abs() * ea + ea * eb,
                _ if y.abs() <= eb => return unknown,
                _ => (y.abs() * ea + x.abs() * eb) / (y.abs() * (y.abs() - eb)),
            };
            perturbed(ty, v, d)
        }
        Rem if exact => Elem::float(x % y), // fmod: exact, the dividend's sign
        Max | Min => {
            let v = if op == Max { xla_max(x, y) } else { xla_min(x, y) };
            if exact || v.is_nan() {
                Elem::float(v)
            } else {
                bounded(ty, v, ea.max(eb))
            }
        }
        Pow if exact => {
            let v = x.powf(y);
            let amplification = if v.is_finite() && v != 0.0 { (y * x.abs().ln()).abs() } else { 0.0 };
            let rel = transcendental_tolerance(ty);
            transcendental(ty, v, rel * v.abs() * amplification)
        }
        Atan2 if exact => transcendental(ty, x.atan2(y), transcendental_tolerance(ty)),
        Rem | Pow | Atan2 => unknown,
        _ => panic!("{op:?} on {ty}"),
    }
}

/// `a` to the power `b` in the integer type `ty`, wrapping (XLA: a negative exponent gives 0
/// unless the base is 1; `0^0` is 1). XLA's emitter tests the exponent's sign as a signed
/// integer whatever the type, so an unsigned exponent with its top bit set counts as negative
/// (asked jaxlib 0.6.0: u8 `3^200` is 0, `1^200` is 1, `3^100` is 209).
fn int_pow(ty: ElementType, a: i128, b: i128) -> i128 {
    let top_bit = ty.is_unsigned_integral() && b >> (bit_width(ty) - 1) & 1 == 1;
    if b < 0 || top_bit {
        return (a == 1) as i128;
    }
    let (mut result, mut base, mut exponent) = (1i128, a, b);
    while exponent > 0 {
        if exponent & 1 == 1 {
            result = wrap(ty, result.wrapping_mul(base));
        }
        base = wrap(ty, base.wrapping_mul(base));
        exponent >>= 1;
    }
    result
}

fn int_binary(op: BinaryKind, ty: ElementType, a: i128, b: i128) -> i128 {
    use BinaryKind::*;
    if ty == ElementType::Pred {
        return match op {
            Add | Max | Or => a | b,
            Mul | Min | And => a & b,
            Xor => a ^ b,
            _ => panic!("{op:?} on pred"),
        };
    }
    let bits = bit_width(ty);
    let mask = int_max(ty) as u128 | if ty.is_signed_integral() { 1u128 << (bits - 1) } else { 0 };
    match op {
        Add => wrap(ty, a + b),
        Sub => wrap(ty, a - b),
        Mul => wrap(ty, a.wrapping_mul(b)),
        Div if b == 0 => wrap(ty, -1),
        Div => wrap(ty, a / b), // MIN / -1 wraps to MIN
        Rem if b == 0 => a,
        Rem => a % b, // MIN % -1 is 0
        Max => a.max(b),
        Min => a.min(b),
        Pow => int_pow(ty, a, b),
        And => wrap(ty, a & b),
        Or => wrap(ty, a | b),
        Xor => wrap(ty, a ^ b),
        ShiftLeft | ShiftRightArithmetic | ShiftRightLogical => {
            let u = (a as u128) & mask;
            let negative = u >> (bits - 1) & 1 == 1;
            if b < 0 || b >= bits as i128 {
                return if op == ShiftRightArithmetic && negative { wrap(ty, -1) } else { 0 };
            }
            match op {
                ShiftLeft => wrap(ty, (u << b) as i128),
                ShiftRightLogical => wrap(ty, (u >> b) as i128),
                _ => {
                    let signed = if negative { u as i128 - (1i128 << bits) } else { u as i128 };
                    wrap(ty, signed >> b)
                }
            }
        }
        Atan2 => panic!("atan2 on {ty}"),
    }
}

/// A binary op on elements of `ty` (both operands have `ty`).
pub fn binary(op: BinaryKind, ty: ElementType, a: Elem, b: Elem) -> Elem {
    if ty.is_float() {
        return float_binary(op, ty, a, b);
    }
    let v = int_binary(op, ty, a.value.int(), b.value.int());
    if a.is_unknown() || b.is_unknown() {
        Elem::unknown(Value::Int(v))
    } else {
        Elem::int(v)
    }
}

/// A comparison of elements of `ty`; the result is a pred.
pub fn compare(op: CompareKind, ty: ElementType, a: Elem, b: Elem) -> Elem {
    if a.is_unknown() || b.is_unknown() {
        return Elem::unknown(Value::Int(0));
    }
    if !ty.is_float() {
        return Elem::pred(op.holds(a.value.int(), b.value.int()));
    }
    let (x, y) = (a.value.float(), b.value.float());
    let result = Elem::pred(op.holds(x, y));
    // Inexact values are finite; the result holds over both intervals unless they overlap.
    let decided =
        x.is_nan() || y.is_nan() || x.is_infinite() || y.is_infinite() || (x - y).abs() > a.err + b.err;
    if a.is_exact() && b.is_exact() || decided {
        result
    } else {
        Elem::unknown(Value::Int(0))
    }
}

/// `on_true` where `pred`, else `on_false` (of type `ty`); with an unknown `pred`, what both
/// agree on ([`either`]).
pub fn select(ty: ElementType, pred: Elem, on_true: Elem, on_false: Elem) -> Elem {
    if !pred.is_unknown() {
        return if pred.value.int() != 0 { on_true } else { on_false };
    }
    either(ty, &[on_true, on_false])
}

/// What an element is that is one of `candidates` (of type `ty`), the reference not knowing
/// which: the candidate if all are the same (value and bound), a zero of either sign if they
/// are exact zeros of both signs, else unknown.
pub fn either(ty: ElementType, candidates: &[Elem]) -> Elem {
    let first = candidates[0];
    if candidates.iter().all(|c| c.value.identical(first.value) && c.err == first.err) {
        return first;
    }
    let exact = candidates.iter().all(Elem::is_exact);
    match first.value {
        Value::Float(_) if exact && candidates.iter().all(|c| c.value.same(Value::Float(0.0))) => {
            let values: Vec<f64> = candidates.iter().map(|c| c.value.float()).collect();
            zero_of_either_sign(ty, &values)
        }
        _ => Elem::unknown(first.value),
    }
}

/// XLA's clamp: `min(max(x, lo), hi)` (so `hi` wins where `lo > hi`).
pub fn clamp(ty: ElementType, lo: Elem, x: Elem, hi: Elem) -> Elem {
    if lo.is_unknown() || x.is_unknown() || hi.is_unknown() {
        return Elem::unknown(x.value);
    }
    if ty.is_float() {
        let (l, v, h) = (lo.value.float(), x.value.float(), hi.value.float());
        let r = xla_min(xla_max(v, l), h);
        let err = lo.err.max(x.err).max(hi.err);
        return if err == 0.0 || r.is_nan() { Elem::float(r) } else { bounded(ty, r, err) };
    }
    let (l, v, h) = (lo.value.int(), x.value.int(), hi.value.int());
    Elem::int(v.max(l).min(h))
}

/// Converts an element of `from` to `to`: integers wrap, floats to integers truncate and
/// saturate (NaN is 0), anything to pred is `!= 0` (NaN is true), integers and floats to f16 and
/// bf16 go through f32 (asked jaxlib: s32 2^24+2^16+1 converts to bf16 2^24), to f32 and f64
/// they round once (s64 2^60+2^36+1 converts to f32 2^60+2^37).
pub fn convert(from: ElementType, to: ElementType, x: Elem) -> Elem {
    if x.is_unknown() {
        return Elem::unknown(if to.is_float() { Value::Float(f64::NAN) } else { Value::Int(0) });
    }
    if !from.is_float() {
        let a = x.value.int();
        return if to.is_float() {
            let v = match to {
                ElementType::F64 => a as f64,
                _ => round_float(to, (a as f32) as f64),
            };
            Elem::float(v)
        } else {
            Elem::int(wrap(to, a))
        };
    }
    let v = x.value.float();
    let e = x.err;
    if to.is_float() {
        let r = round_float(to, v);
        return if e == 0.0 { Elem::float(r) } else { perturbed(to, r, e) };
    }
    let target = |t: f64| -> i128 {
        match to {
            ElementType::Pred => (t != 0.0) as i128,
            ElementType::S8 => t as i8 as i128,
            ElementType::S16 => t as i16 as i128,
            ElementType::S32 => t as i32 as i128,
            ElementType::S64 => t as i64 as i128,
            ElementType::U8 => t as u8 as i128,
            ElementType::U16 => t as u16 as i128,
            ElementType::U32 => t as u32 as i128,
            ElementType::U64 => t as u64 as i128,
            other => unreachable!("{other}"),
        }
    };
    let r = target(v);
    let decided = match to {
        ElementType::Pred => v.abs() > e,
        _ => target(v - e) == target(v + e),
    };
    if e == 0.0 || decided {
        Elem::int(r)
    } else {
        Elem::unknown(Value::Int(r))
    }
}
