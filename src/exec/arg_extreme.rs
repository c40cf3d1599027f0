//! Reducers read as argmax or argmin: the reducer of `(value, index)` pairs that jax's `argmax`
//! and `argmin` write, or the usual hand-written one, recognized so that its reduce runs as the
//! two-pass kernel (`kernels/arg_reduce.rs`) rather than by applying the reducer per element.

use crate::exec::kernels::arg_reduce::ArgExtreme;
use crate::hlo::ir::{HloComputation, InstructionId, Opcode};

/// An argmax or argmin reducer of `(value, index)` pairs, as jax's `argmax`/`argmin` write it
/// (a NaN wins; equal values keep the lower index) or as it is usually written by hand
/// (without the NaN clause): recognized by the canonical text of its two results.
pub(crate) fn arg_extreme(reducer: &HloComputation) -> Option<ArgExtreme> {
    let root = &reducer.instructions[reducer.root];
    if !matches!(root.opcode, Opcode::Tuple) || root.operands.len() != 2 || reducer.parameters().len() != 4 {
        return None;
    }
    let index_type = reducer.parameters()[1].shape.element_type();
    if !index_type.is_integral() {
        return None;
    }
    let texts = [canonical(reducer, root.operands[0]), canonical(reducer, root.operands[1])];
    for (max, better) in [(true, "GT"), (false, "LT")] {
        let nan = "NE(p0,p0)";
        let tie = "and(EQ(p0,p2),LT(p1,p3))";
        let jax = [
            format!("select(or({better}(p0,p2),{nan}),p0,p2)"),
            format!("select(or(or({better}(p0,p2),{nan}),{tie}),p1,p3)"),
        ];
        let wins = format!("or({better}(p0,p2),{tie})");
        let plain = [format!("select({wins},p0,p2)"), format!("select({wins},p1,p3)")];
        if texts == jax {
            return Some(ArgExtreme { max, nan_wins: true });
        }
        if texts == plain {
            return Some(ArgExtreme { max, nan_wins: false });
        }
    }
    None
}

/// A scalar expression as canonical text: `p3` for parameter 3, `GT(p0,p2)` for a
/// comparison, `op(a,b,…)` for anything else.
fn canonical(computation: &HloComputation, id: InstructionId) -> String {
    let instruction = &computation.instructions[id];
    let operands: Vec<String> = instruction.operands.iter().map(|&o| canonical(computation, o)).collect();
    match &instruction.opcode {
        Opcode::Parameter { number } => format!("p{number}"),
        Opcode::Compare(direction) => format!("{direction}({})", operands.join(",")),
        other => format!("{}({})", other.name(), operands.join(",")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{and, eq, gt, lt, ne, or, select, tuple, XlaBuilder};
    use crate::element_type::ElementType;
    use crate::shape::Shape;

    /// An argmax (`max`) or argmin reducer, jax's (`nan_wins`) or the usual one; `disguised`
    /// adds a no-op the recognizer does not know.
    fn reducer(max: bool, nan_wins: bool, disguised: bool) -> HloComputation {
        let r = XlaBuilder::new("arg");
        let (f, s) = (Shape::scalar(ElementType::F32), Shape::scalar(ElementType::S32));
        let (av, ai) = (r.parameter(0, &f, "av"), r.parameter(1, &s, "ai"));
        let (bv, bi) = (r.parameter(2, &f, "bv"), r.parameter(3, &s, "bi"));
        let better = if max { gt(av, bv, &[]) } else { lt(av, bv, &[]) };
        let better = if disguised { and(better, r.constant_r0(true), &[]) } else { better };
        let tie = and(eq(av, bv, &[]), lt(ai, bi, &[]), &[]);
        let root = if nan_wins {
            let pick_a = or(better, ne(av, av, &[]), &[]);
            tuple(&r, &[select(pick_a, av, bv), select(or(pick_a, tie, &[]), ai, bi)])
        } else {
            let a_wins = or(better, tie, &[]);
            tuple(&r, &[select(a_wins, av, bv), select(a_wins, ai, bi)])
        };
        (*r.build(root).unwrap().entry).clone()
    }

    #[test]
    fn argmax_and_argmin_reducers_are_recognized() {
        for max in [true, false] {
            for nan_wins in [true, false] {
                assert_eq!(arg_extreme(&reducer(max, nan_wins, false)), Some(ArgExtreme { max, nan_wins }));
                assert_eq!(arg_extreme(&reducer(max, nan_wins, true)), None);
            }
        }
    }
}
