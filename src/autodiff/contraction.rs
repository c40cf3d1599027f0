//! `dot` with any dimension numbers: linear in each operand, the other one primal; the
//! transpose is another dot of the cotangent with that operand, then a transpose into the
//! operand's dimension order (jax's `_dot_general_transpose_lhs` and `_rhs`).

use crate::attributes::{DotDimensionNumbers, PrecisionConfig};
use crate::autodiff::elementwise::sum;
use crate::autodiff::tape::{Linear, Tan, Tape};
use crate::builder::{convert_element_type, dot_general_with, transpose, XlaOp};
use crate::hlo::ir::Opcode;
use crate::shape::Shape;

/// `dot(t, other)` (the tangent on the lhs) or `dot(other, t)`.
struct Product<'b> {
    numbers: DotDimensionNumbers,
    precision: PrecisionConfig,
    other: XlaOp<'b>,
    other_shape: Shape,
    tangent_is_lhs: bool,
    shape: Shape,
}

impl<'b> Linear<'b> for Product<'b> {
    fn apply(&self, inputs: &[XlaOp<'b>]) -> XlaOp<'b> {
        let opcode = Opcode::Dot { numbers: self.numbers.clone(), precision: self.precision.clone() };
        let operands = if self.tangent_is_lhs { [inputs[0], self.other] } else { [self.other, inputs[0]] };
        inputs[0].builder().record_opcode(&opcode, &operands, &self.shape)
    }

    fn transpose(&self, cotangent: XlaOp<'b>, inputs: &[Shape]) -> Vec<Option<XlaOp<'b>>> {
        let n = &self.numbers;
        let (contract, other_contract, batch, other_batch) = if self.tangent_is_lhs {
            (
                &n.lhs_contracting_dimensions,
                &n.rhs_contracting_dimensions,
                &n.lhs_batch_dimensions,
                &n.rhs_batch_dimensions,
            )
        } else {
            (
                &n.rhs_contracting_dimensions,
                &n.lhs_contracting_dimensions,
                &n.rhs_batch_dimensions,
                &n.lhs_batch_dimensions,
            )
        };
        let mine = &inputs[0];
        let remaining = |rank: usize, a: &[i64], b: &[i64]| -> Vec<i64> {
            (0..rank as i64).filter(|d| !a.contains(d) && !b.contains(d)).collect()
        };
        let kept = remaining(mine.rank(), contract, batch);
        let other_kept = remaining(self.other_shape.rank(), other_contract, other_batch);
        // The result's dimensions: batch, then the lhs's kept, then the rhs's kept.
        let nb = batch.len() as i64;
        let result_other_kept: Vec<i64> = if self.tangent_is_lhs {
            (nb + kept.len() as i64..nb + (kept.len() + other_kept.len()) as i64).collect()
        } else {
            (nb..nb + other_kept.len() as i64).collect()
        };
        let result_batch: Vec<i64> = (0..nb).collect();
        let numbers = DotDimensionNumbers {
            lhs_contracting_dimensions: result_other_kept,
            rhs_contracting_dimensions: other_kept,
            lhs_batch_dimensions: result_batch,
            rhs_batch_dimensions: other_batch.clone(),
        };
        let other_type = self.other_shape.element_type();
        let cotangent = if self.shape.element_type() == other_type {
            cotangent
        } else {
            convert_element_type(cotangent, other_type)
        };
        let mut product = dot_general_with(cotangent, self.other, &numbers, Some(&self.precision), None);
        if other_type != mine.element_type() {
            product = convert_element_type(product, mine.element_type());
        }
        // The product's dimensions: batch, the cotangent's kept (mine), then my contracting
        // ones in the order of the other's contracting dimensions they pair with.
        let mut by_other: Vec<(i64, i64)> =
            other_contract.iter().copied().zip(contract.iter().copied()).collect();
        by_other.sort_unstable();
        let order: Vec<i64> = batch
            .iter()
            .copied()
            .chain(kept.iter().copied())
            .chain(by_other.iter().map(|&(_, m)| m))
            .collect();
        let mut permutation = vec![0i64; order.len()];
        for (position, &d) in order.iter().enumerate() {
            permutation[d as usize] = position as i64;
        }
        let identity = permutation.iter().enumerate().all(|(i, &p)| p == i as i64);
        vec![Some(if identity { product } else { transpose(product, &permutation) })]
    }
}

/// The tangent of `dot(x0, x1)`: `dot(t0, x1) + dot(x0, t1)`.
pub(super) fn dot<'b>(
    tape: &mut Tape<'b>,
    numbers: &DotDimensionNumbers,
    precision: &PrecisionConfig,
    x: [XlaOp<'b>; 2],
    shapes: [&Shape; 2],
    t: [&Tan; 2],
    shape: &Shape,
) -> Tan {
    let mut parts = [Tan::Zero, Tan::Zero];
    for side in 0..2 {
        if let Some(tangent) = t[side].array() {
            let product = Product {
                numbers: numbers.clone(),
                precision: precision.clone(),
                other: x[1 - side],
                other_shape: shapes[1 - side].clone(),
                tangent_is_lhs: side == 0,
                shape: shape.clone(),
            };
            parts[side] = tape.push(product, &[tangent], shape);
        }
    }
    sum(tape, &parts[0], &parts[1], false, shape)
}
