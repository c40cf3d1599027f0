//! The optimizer: small passes behind one trait, run by a pipeline in a fixed order (the
//! simplifying passes to a fixed point), then fusion.
//!
//! Every pass works on the one IR ([`HloComputation`]) and is tested on its own: a graph in,
//! a graph out, pinned by HLO text.

mod cse;
mod dce;
mod fusion;
mod simplify;

use crate::hlo::HloComputation;

/// One rewrite of a computation.
pub(crate) trait Pass {
    /// The pass's name (for diagnostics).
    #[allow(dead_code)]
    fn name(&self) -> &'static str;
    /// Rewrites `computation`; returns whether anything changed.
    fn run(&self, computation: &mut HloComputation) -> bool;
}

/// How many rounds the simplifying passes get to reach a fixed point.
const MAX_ROUNDS: usize = 8;

/// The optimized form of `computation`: simplification, CSE and DCE to a fixed point, then
/// (if `fusion`) loop fusion.
pub(crate) fn optimize(computation: &HloComputation, fusion: bool) -> HloComputation {
    let mut optimized = computation.clone();
    let passes: [&dyn Pass; 3] = [&simplify::AlgebraicSimplifier, &cse::CommonSubexpressions, &dce::DeadCode];
    for _ in 0..MAX_ROUNDS {
        let mut changed = false;
        for pass in passes {
            changed |= pass.run(&mut optimized);
        }
        if !changed {
            break;
        }
    }
    if fusion {
        fusion::LoopFusion.run(&mut optimized);
    }
    optimized
}
