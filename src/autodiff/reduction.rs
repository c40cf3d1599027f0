//! `reduce` with an add, multiply, max or min reducer (jax's `_reduce_sum_jvp_rule`,
//! `_reduce_prod_jvp_rule`, exact at zeros, `_reduce_chooser_jvp_rule`): each tangent is a sum of the operand's
//! tangent weighted by primal values, so one linear op, the sum over dimensions, and its
//! transpose, a broadcast back, carry all four.

use crate::attributes::BinaryOp;
use crate::autodiff::elementwise::{scale, sum};
use crate::autodiff::tape::{filled, sum_over, zeros, Linear, Tan, Tape, Tid};
use crate::builder::{
    and, broadcast_in_dim, convert_element_type, div, eq, reduce as reduce_op, select, XlaBuilder, XlaOp,
};
use crate::element_type::ElementType;
use crate::error::Result;
use crate::hlo::computation::XlaComputation;
use crate::hlo::ir::Opcode;
use crate::shape::Shape;

/// The sum of the tangent over `dimensions`.
struct SumOver {
    dimensions: Vec<i64>,
    element_type: ElementType,
}

impl<'b> Linear<'b> for SumOver {
    fn apply(&self, inputs: &[XlaOp<'b>]) -> XlaOp<'b> {
        sum_over(inputs[0], self.element_type, &self.dimensions)
    }
    fn transpose(&self, cotangent: XlaOp<'b>, inputs: &[Shape]) -> Vec<Option<XlaOp<'b>>> {
        let kept: Vec<i64> = (0..inputs[0].rank() as i64).filter(|d| !self.dimensions.contains(d)).collect();
        vec![Some(broadcast_in_dim(cotangent, inputs[0].dimensions(), &kept))]
    }
}

/// The tangent of `y = reduce(x, init)` over `dimensions` by the reducer `op`.
#[allow(clippy::too_many_arguments)]
pub(super) fn reduce<'b>(
    tape: &mut Tape<'b>,
    op: Option<BinaryOp>,
    dimensions: &[i64],
    x: [XlaOp<'b>; 2],
    y: XlaOp<'b>,
    t: [&Tan; 2],
    operand: &Shape,
    shape: &Shape,
) -> Result<Tan> {
    let [x, init] = x;
    let kept: Vec<i64> = (0..operand.rank() as i64).filter(|d| !dimensions.contains(d)).collect();
    let back = |v: XlaOp<'b>| broadcast_in_dim(v, operand.dimensions(), &kept);
    let summed = |tape: &mut Tape<'b>, t: Option<Tid>| match t {
        Some(t) => tape.push(
            SumOver { dimensions: dimensions.to_vec(), element_type: shape.element_type() },
            &[t],
            shape,
        ),
        None => Tan::Zero,
    };
    let weighted = match op {
        Some(BinaryOp::Add) => {
            let of_operand = summed(tape, t[0].array());
            let of_init = match t[1].array() {
                Some(init) => crate::autodiff::movement::moved(
                    tape,
                    &Opcode::Broadcast { dimensions: vec![] },
                    &[y],
                    &[Shape::scalar(shape.element_type())],
                    &[Tan::Array(init)],
                    shape,
                )?,
                None => Tan::Zero,
            };
            return Ok(sum(tape, &of_operand, &of_init, false, shape));
        }
        _ if t[1].array().is_some() => {
            return Err(tape.not_implemented(
                "reduce",
                " for an init value with a tangent (only an add reducer takes one)",
            ))
        }
        // jax: the tangents where the operand equals the result, shared among the ties.
        Some(BinaryOp::Max) | Some(BinaryOp::Min) => {
            let element_type = operand.element_type();
            let at = convert_element_type(eq(x, back(y), &[]), element_type);
            let counts = sum_over(at, element_type, dimensions);
            div(at, back(counts), &[])
        }
        // Each element's weight is the product of the others (and the init value): the
        // product of the nonzero ones over the element where its group has no zero, that
        // product at the group's only zero, else nothing.
        Some(BinaryOp::Mul) => {
            let element_type = operand.element_type();
            let (one, zero) = (filled(tape.builder, operand, 1.0), zeros(tape.builder, operand));
            let is_zero = eq(x, zero, &[]);
            let nonzero = select(is_zero, one, x);
            let others = back(reduce_op(nonzero, init, &multiplier(element_type), dimensions));
            let count = back(sum_over(convert_element_type(is_zero, element_type), element_type, dimensions));
            let alone = and(eq(count, one, &[]), is_zero, &[]);
            select(eq(count, zero, &[]), div(others, nonzero, &[]), select(alone, others, zero))
        }
        _ => {
            return Err(tape.not_implemented("reduce", " for a reducer other than add, multiply, max or min"))
        }
    };
    let scaled = scale(tape, t[0].array(), weighted, operand);
    Ok(summed(tape, scaled.array()))
}

/// The scalar computation `p * q` of `element_type`.
fn multiplier(element_type: ElementType) -> XlaComputation {
    let b = XlaBuilder::new("mul");
    let scalar = Shape::scalar(element_type);
    let (p, q) = (b.parameter(0, &scalar, "p"), b.parameter(1, &scalar, "q"));
    // Two scalar parameters of a float type always multiply.
    b.build(p * q).expect("scalar floats multiply")
}
