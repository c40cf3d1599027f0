//! Element-wise ops: the JVP rules of the unary and binary functions, select, clamp and
//! convert (jax's `lax.py`), and the linear ops they make, with their transposes: sums,
//! negation, scaling by a primal value, selection by a primal predicate, conversion.

use crate::attributes::{BinaryOp, UnaryOp};
use crate::autodiff::tape::{filled, scalar, zeros, Linear, Tan, Tape, Tid};
use crate::builder::{
    and, convert_element_type, cos, div, eq, exp, floor, ge, gt, log, lt, pow, reduce_precision, select,
    sign, sin, XlaOp,
};
use crate::element_type::ElementType;
use crate::error::Result;
use crate::shape::Shape;

/// `a + b`, or `a - b`.
struct Sum {
    subtract: bool,
}

impl<'b> Linear<'b> for Sum {
    fn apply(&self, inputs: &[XlaOp<'b>]) -> XlaOp<'b> {
        if self.subtract {
            inputs[0] - inputs[1]
        } else {
            inputs[0] + inputs[1]
        }
    }
    fn transpose(&self, cotangent: XlaOp<'b>, _: &[Shape]) -> Vec<Option<XlaOp<'b>>> {
        vec![Some(cotangent), Some(if self.subtract { -cotangent } else { cotangent })]
    }
}

/// `-t`.
struct Negate;

impl<'b> Linear<'b> for Negate {
    fn apply(&self, inputs: &[XlaOp<'b>]) -> XlaOp<'b> {
        -inputs[0]
    }
    fn transpose(&self, cotangent: XlaOp<'b>, _: &[Shape]) -> Vec<Option<XlaOp<'b>>> {
        vec![Some(-cotangent)]
    }
}

/// `t * by` or `t / by`, `by` a primal array of the tangent's shape.
struct Scale<'b> {
    by: XlaOp<'b>,
    divide: bool,
}

impl<'b> Linear<'b> for Scale<'b> {
    fn apply(&self, inputs: &[XlaOp<'b>]) -> XlaOp<'b> {
        self.on(inputs[0])
    }
    fn transpose(&self, cotangent: XlaOp<'b>, _: &[Shape]) -> Vec<Option<XlaOp<'b>>> {
        vec![Some(self.on(cotangent))]
    }
}

impl<'b> Scale<'b> {
    fn on(&self, t: XlaOp<'b>) -> XlaOp<'b> {
        if self.divide {
            div(t, self.by, &[])
        } else {
            t * self.by
        }
    }
}

/// `select(pred, on_true, on_false)` where the tangents of the sides `present` are the inputs
/// (the others zero).
struct Choose<'b> {
    pred: XlaOp<'b>,
    present: [bool; 2],
    shape: Shape,
}

impl<'b> Linear<'b> for Choose<'b> {
    fn apply(&self, inputs: &[XlaOp<'b>]) -> XlaOp<'b> {
        let builder = inputs[0].builder();
        let mut given = inputs.iter();
        let mut side = |present: bool| {
            if present {
                *given.next().expect("an input")
            } else {
                zeros(builder, &self.shape)
            }
        };
        let (on_true, on_false) = (side(self.present[0]), side(self.present[1]));
        select(self.pred, on_true, on_false)
    }
    fn transpose(&self, cotangent: XlaOp<'b>, inputs: &[Shape]) -> Vec<Option<XlaOp<'b>>> {
        let zero = zeros(cotangent.builder(), &inputs[0]);
        let mut parts = Vec::new();
        if self.present[0] {
            parts.push(Some(select(self.pred, cotangent, zero)));
        }
        if self.present[1] {
            parts.push(Some(select(self.pred, zero, cotangent)));
        }
        parts
    }
}

/// A conversion between float types.
struct Convert {
    to: ElementType,
}

impl<'b> Linear<'b> for Convert {
    fn apply(&self, inputs: &[XlaOp<'b>]) -> XlaOp<'b> {
        convert_element_type(inputs[0], self.to)
    }
    fn transpose(&self, cotangent: XlaOp<'b>, inputs: &[Shape]) -> Vec<Option<XlaOp<'b>>> {
        vec![Some(convert_element_type(cotangent, inputs[0].element_type()))]
    }
}

/// `reduce_precision`, linear (jax's `deflinear`): its own transpose.
struct Rounded {
    exponent_bits: i32,
    mantissa_bits: i32,
}

impl<'b> Linear<'b> for Rounded {
    fn apply(&self, inputs: &[XlaOp<'b>]) -> XlaOp<'b> {
        reduce_precision(inputs[0], self.exponent_bits, self.mantissa_bits)
    }
    fn transpose(&self, cotangent: XlaOp<'b>, _: &[Shape]) -> Vec<Option<XlaOp<'b>>> {
        vec![Some(self.apply(&[cotangent]))]
    }
}

/// `t * by` (zero stays zero).
pub(super) fn scale<'b>(tape: &mut Tape<'b>, t: Option<Tid>, by: XlaOp<'b>, shape: &Shape) -> Tan {
    match t {
        Some(t) => tape.push(Scale { by, divide: false }, &[t], shape),
        None => Tan::Zero,
    }
}

fn divide<'b>(tape: &mut Tape<'b>, t: Option<Tid>, by: XlaOp<'b>, shape: &Shape) -> Tan {
    match t {
        Some(t) => tape.push(Scale { by, divide: true }, &[t], shape),
        None => Tan::Zero,
    }
}

/// `a + b`, or `a - b`, of tangents of `shape` (zeros dropped).
pub(super) fn sum<'b>(tape: &mut Tape<'b>, a: &Tan, b: &Tan, subtract: bool, shape: &Shape) -> Tan {
    match (a.array(), b.array()) {
        (Some(a), Some(b)) => tape.push(Sum { subtract }, &[a, b], shape),
        (Some(_), None) => a.clone(),
        (None, Some(b)) if subtract => tape.push(Negate, &[b], shape),
        (None, Some(_)) => b.clone(),
        (None, None) => Tan::Zero,
    }
}

/// `select(pred, a, b)` of tangents.
pub(super) fn choose<'b>(
    tape: &mut Tape<'b>,
    pred: XlaOp<'b>,
    a: Option<Tid>,
    b: Option<Tid>,
    shape: &Shape,
) -> Tan {
    let inputs: Vec<Tid> = a.into_iter().chain(b).collect();
    if inputs.is_empty() {
        return Tan::Zero;
    }
    tape.push(Choose { pred, present: [a.is_some(), b.is_some()], shape: shape.clone() }, &inputs, shape)
}

/// The tangent of `y = op(x)`; `None` for an op this module has no rule for.
pub(super) fn unary<'b>(
    tape: &mut Tape<'b>,
    op: UnaryOp,
    x: XlaOp<'b>,
    y: XlaOp<'b>,
    t: Option<Tid>,
    shape: &Shape,
) -> Option<Tan> {
    let b = tape.builder;
    let c = |v: f64| scalar(b, shape.element_type(), v);
    let by = match op {
        UnaryOp::Neg => return Some(t.map_or(Tan::Zero, |t| tape.push(Negate, &[t], shape))),
        UnaryOp::Sign
        | UnaryOp::Floor
        | UnaryOp::Ceil
        | UnaryOp::Round
        | UnaryOp::RoundNearestEven
        | UnaryOp::IsFinite
        | UnaryOp::Not
        | UnaryOp::Clz
        | UnaryOp::PopulationCount => return Some(Tan::Zero),
        UnaryOp::ReducePrecision { exponent_bits, mantissa_bits } => {
            return Some(
                t.map_or(Tan::Zero, |t| tape.push(Rounded { exponent_bits, mantissa_bits }, &[t], shape)),
            )
        }
        UnaryOp::Log => return Some(divide(tape, t, x, shape)),
        UnaryOp::Log1p => return Some(divide(tape, t, x + c(1.0), shape)),
        // jax: select(x >= 0, g, -g).
        UnaryOp::Abs => select(ge(x, c(0.0), &[]), filled(b, shape, 1.0), filled(b, shape, -1.0)),
        UnaryOp::Exp => y,
        UnaryOp::Expm1 => y + c(1.0),
        UnaryOp::Tanh => c(1.0) - y * y,
        UnaryOp::Logistic => y * (c(1.0) - y),
        UnaryOp::Sqrt => div(c(0.5), y, &[]),
        UnaryOp::Rsqrt => c(-0.5) * div(y, x, &[]),
        UnaryOp::Sin => cos(x),
        UnaryOp::Cos => -sin(x),
        UnaryOp::Tan => c(1.0) + y * y,
        UnaryOp::Erf => c(std::f64::consts::FRAC_2_SQRT_PI) * exp(-(x * x)),
        UnaryOp::Cbrt => div(c(1.0 / 3.0), y * y, &[]),
    };
    Some(scale(tape, t, by, shape))
}

/// The tangent of `y = op(x0, x1)`; `None` for an op this module has no rule for.
pub(super) fn binary<'b>(
    tape: &mut Tape<'b>,
    op: BinaryOp,
    x: [XlaOp<'b>; 2],
    y: XlaOp<'b>,
    t: [&Tan; 2],
    shape: &Shape,
) -> Option<Tan> {
    use BinaryOp::*;
    let b = tape.builder;
    let c = |v: f64| scalar(b, shape.element_type(), v);
    let [x0, x1] = x;
    let [t0, t1] = [t[0].array(), t[1].array()];
    let tangent = match op {
        Add | Sub => sum(tape, t[0], t[1], op == Sub, shape),
        Mul => {
            let (a, bb) = (scale(tape, t0, x1, shape), scale(tape, t1, x0, shape));
            sum(tape, &a, &bb, false, shape)
        }
        Div => {
            let a = divide(tape, t0, x1, shape);
            let bb = if t1.is_some() { scale(tape, t1, -div(y, x1, &[]), shape) } else { Tan::Zero };
            sum(tape, &a, &bb, false, shape)
        }
        // jax's `_balanced_eq`: where the operands tie, each gets half.
        Max | Min => {
            let balanced = |mine: XlaOp<'b>, other: XlaOp<'b>| {
                let half_or_one = select(eq(other, y, &[]), filled(b, shape, 0.5), filled(b, shape, 1.0));
                select(eq(mine, y, &[]), half_or_one, zeros(b, shape))
            };
            let a = if t0.is_some() { scale(tape, t0, balanced(x0, x1), shape) } else { Tan::Zero };
            let bb = if t1.is_some() { scale(tape, t1, balanced(x1, x0), shape) } else { Tan::Zero };
            sum(tape, &a, &bb, false, shape)
        }
        Pow => {
            let replace_zero = |v: XlaOp<'b>| select(eq(v, c(0.0), &[]), filled(b, shape, 1.0), v);
            let a = if t0.is_some() {
                let jacobian = select(
                    eq(x1, c(0.0), &[]),
                    zeros(b, shape),
                    replace_zero(x1) * pow(x0, x1 - c(1.0), &[]),
                );
                scale(tape, t0, jacobian, shape)
            } else {
                Tan::Zero
            };
            let bb = if t1.is_some() { scale(tape, t1, log(replace_zero(x0)) * y, shape) } else { Tan::Zero };
            sum(tape, &a, &bb, false, shape)
        }
        Atan2 => {
            let norm = x0 * x0 + x1 * x1;
            let a = if t0.is_some() { scale(tape, t0, div(x1, norm, &[]), shape) } else { Tan::Zero };
            let bb = if t1.is_some() { scale(tape, t1, div(-x0, norm, &[]), shape) } else { Tan::Zero };
            sum(tape, &a, &bb, false, shape)
        }
        // jax: the rhs's tangent times -trunc(x0 / x1).
        Rem => {
            let quotient = div(x0, x1, &[]);
            let bb = if t1.is_some() {
                let abs_q = select(ge(quotient, c(0.0), &[]), quotient, -quotient);
                scale(tape, t1, -(sign(quotient) * floor(abs_q)), shape)
            } else {
                Tan::Zero
            };
            sum(tape, t[0], &bb, false, shape)
        }
        And | Or | Xor | ShiftLeft | ShiftRightArithmetic | ShiftRightLogical => Tan::Zero,
    };
    Some(tangent)
}

/// jax's clamp rule: the operand's tangent where it lies strictly inside, the bounds' where
/// they bind (ties give nothing).
pub(super) fn clamp<'b>(tape: &mut Tape<'b>, x: [XlaOp<'b>; 3], t: [&Tan; 3], shape: &Shape) -> Tan {
    let [low, operand, high] = x;
    let both = |p: XlaOp<'b>, q: XlaOp<'b>| and(p, q, &[]);
    let mut total = Tan::Zero;
    if let Some(t) = t[0].array() {
        let part = choose(tape, both(gt(low, operand, &[]), lt(low, high, &[])), Some(t), None, shape);
        total = sum(tape, &total, &part, false, shape);
    }
    if let Some(t) = t[1].array() {
        let part = choose(tape, both(gt(operand, low, &[]), lt(operand, high, &[])), Some(t), None, shape);
        total = sum(tape, &total, &part, false, shape);
    }
    if let Some(t) = t[2].array() {
        let part = choose(tape, lt(high, operand, &[]), Some(t), None, shape);
        total = sum(tape, &total, &part, false, shape);
    }
    total
}

/// A convert: linear between float types, zero otherwise.
pub(super) fn convert<'b>(tape: &mut Tape<'b>, from: ElementType, t: Option<Tid>, shape: &Shape) -> Tan {
    match t {
        Some(t) if from.is_float() && shape.element_type().is_float() => {
            tape.push(Convert { to: shape.element_type() }, &[t], shape)
        }
        _ => Tan::Zero,
    }
}

/// The tangent of a select: each side's where the primal predicate picks it.
pub(super) fn select_rule<'b>(
    tape: &mut Tape<'b>,
    pred: XlaOp<'b>,
    t: [&Tan; 2],
    shape: &Shape,
) -> Result<Tan> {
    Ok(choose(tape, pred, t[0].array(), t[1].array(), shape))
}
