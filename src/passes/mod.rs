//! The optimizer: small passes behind one trait, run by a pipeline in a fixed order (the
//! simplifying passes to a fixed point), then fusion; the verifier checks the computation
//! after every pass that changed it, when asked.
//!
//! Every pass works on the one IR ([`HloComputation`]) and is tested on its own: a graph in,
//! a graph out, pinned by HLO text. Passes never import the executor: constant folding
//! evaluates, and fusion asks what one loop computes, through the [`Backend`] they are handed.

mod backend;
mod boundary_layouts;
mod cse;
mod dce;
mod fusion;
mod inline;
mod output_fusion;
mod pass;
mod simplify;
mod tuple_elements;

pub(crate) use backend::Backend;

use std::sync::Arc;

use crate::error::{invalid_argument, Result};
use crate::hlo::ir::{HloComputation, Opcode};
use crate::hlo::verify::verify;
use crate::passes::pass::Pass;
use crate::shape::Shape;

/// How many rounds the simplifying passes get to reach a fixed point.
const MAX_ROUNDS: usize = 8;

/// The optimized form of `computation`: layouts made equal across computation boundaries,
/// calls inlined, simplification (folding constants with the backend's
/// `evaluate`), CSE and DCE to a fixed point, then (if `fusion`) loop and output fusion, and
/// last the parameters' tuple elements moved ahead of the rest. With `verify`,
/// the input and the result of every pass that changed something are verified, and the
/// result's shape must stay the input's (layout included).
pub(crate) fn optimize(
    computation: &HloComputation,
    fusion: bool,
    verify_each_pass: bool,
    backend: Backend<'_>,
) -> Result<HloComputation> {
    if verify_each_pass {
        verify(computation, "build")?;
    }
    let mut optimized = computation.clone();
    let result_shape = computation.result_shape();
    run_pass(&boundary_layouts::BoundaryLayouts, &mut optimized, result_shape, verify_each_pass)?;
    run_pass(&inline::InlineCalls, &mut optimized, result_shape, verify_each_pass)?;
    optimize_called(&mut optimized, fusion, verify_each_pass, backend)?;
    let simplify = simplify::AlgebraicSimplifier { evaluate: backend.evaluate };
    let passes: [&dyn Pass; 3] = [&simplify, &cse::CommonSubexpressions, &dce::DeadCode];
    for _ in 0..MAX_ROUNDS {
        let mut changed = false;
        for pass in passes {
            changed |= run_pass(pass, &mut optimized, result_shape, verify_each_pass)?;
        }
        if !changed {
            break;
        }
    }
    if fusion {
        let fusion = fusion::LoopFusion { loop_compiles: backend.loop_compiles };
        run_pass(&fusion, &mut optimized, result_shape, verify_each_pass)?;
        run_pass(&output_fusion::OutputFusion, &mut optimized, result_shape, verify_each_pass)?;
    }
    run_pass(&tuple_elements::ParameterElementsFirst, &mut optimized, result_shape, verify_each_pass)?;
    Ok(optimized)
}

/// Optimizes, with the same pipeline, the computations that loops and branches run (they
/// are planned as whole computations, so they fuse like the entry); reducers and mapped
/// computations run on scalars and stay as they are.
fn optimize_called(
    computation: &mut HloComputation,
    fusion: bool,
    verify_each_pass: bool,
    backend: Backend<'_>,
) -> Result<()> {
    for instruction in &mut computation.instructions {
        if matches!(
            instruction.opcode,
            Opcode::While { .. } | Opcode::Conditional { .. } | Opcode::Call { .. }
        ) {
            for called in instruction.opcode.called_computations_mut() {
                *called = Arc::new(optimize(called, fusion, verify_each_pass, backend)?);
            }
        }
    }
    Ok(())
}

/// Runs one pass; if it changed the computation and `verify_result`, verifies the result
/// (naming the pass in the error) and checks that the result's shape is still `result_shape`.
fn run_pass(
    pass: &dyn Pass,
    computation: &mut HloComputation,
    result_shape: &Shape,
    verify_result: bool,
) -> Result<bool> {
    let changed = pass.run(computation);
    if changed && verify_result {
        verify(computation, pass.name())?;
        if computation.result_shape() != result_shape {
            invalid_argument!(
                "the {} pass changed the result's shape from {result_shape} to {}",
                pass.name(),
                computation.result_shape()
            );
        }
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::ir::Opcode;
    use crate::*;

    /// A broken pass: it turns the root `negate` into an `add` of one operand.
    struct Breaks;

    impl Pass for Breaks {
        fn name(&self) -> &'static str {
            "breaks"
        }
        fn run(&self, computation: &mut HloComputation) -> bool {
            let root = computation.root;
            computation.instructions[root].opcode = Opcode::Binary(BinaryOp::Add);
            true
        }
    }

    #[test]
    fn a_pass_that_breaks_the_contract_is_named_in_the_error() -> Result<()> {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(f32[2]), "x");
        let computation = b.build(neg(x))?;
        let mut entry = (*computation.entry).clone();
        let shape = computation.entry.result_shape().clone();
        assert!(run_pass(&Breaks, &mut entry.clone(), &shape, false)?);
        let error = run_pass(&Breaks, &mut entry, &shape, true).unwrap_err().to_string();
        assert!(
            error.starts_with("add takes 2 operand(s) but has 1: `ROOT negate.2 = f32[2]{0} add(x.1)`"),
            "{error}"
        );
        assert!(error.ends_with("(verified after breaks)"), "{error}");
        Ok(())
    }
}
