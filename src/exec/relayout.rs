//! Loop programs for layouts met at run time, each compiled once: copies between layouts (an
//! argument that comes in another layout than its parameter's, a result written into an
//! output of another layout), and the root's loop writing straight into an output of another
//! layout than the root's (no copy after it).

use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use crate::exec::loop_program::LoopProgram;
use crate::literal::Literal;
use crate::shape::Shape;

/// How many programs a cache keeps.
const KEPT: usize = 32;

/// Programs compiled at run time, by the (from, to) shapes they are for: a new pair is
/// compiled on the first run that meets it and reused after (the most recent [`KEPT`] pairs).
/// `None` keeps that a pair has no program.
#[derive(Default)]
pub(crate) struct LayoutPrograms {
    programs: Mutex<Vec<KeptProgram>>,
}

/// A program (or that there is none) and the (from, to) shapes it is for.
struct KeptProgram {
    from: Shape,
    to: Shape,
    program: Option<Arc<LoopProgram>>,
}

impl LayoutPrograms {
    /// Copies `literal` into `out` (the same element type and dimensions), in `out`'s layout.
    pub(crate) fn copy_into(&self, literal: &Literal, out: &mut Literal, parallel: bool) -> Result<()> {
        let (from, to) = (literal.shape(), out.shape());
        let program = self
            .program(from, to, || Some(LoopProgram::copy(from, to)))
            .ok_or_else(|| Error::invalid("a copy between layouts has no loop program"))?;
        program.run(&[literal], out, parallel)
    }

    /// `literal`'s values in `shape`'s layout (the same element type and dimensions).
    pub(crate) fn copy(&self, literal: &Literal, shape: &Shape, parallel: bool) -> Result<Literal> {
        let mut out = Literal::for_overwrite(shape)?;
        self.copy_into(literal, &mut out, parallel)?;
        Ok(out)
    }

    /// The program for `from` and `to`, compiled by `compile` now if the pair is new.
    pub(crate) fn program(
        &self,
        from: &Shape,
        to: &Shape,
        compile: impl FnOnce() -> Option<LoopProgram>,
    ) -> Option<Arc<LoopProgram>> {
        // A poisoned lock only means another thread panicked while holding it; the list is
        // still a valid list of programs.
        let mut programs = self.programs.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(kept) = programs.iter().find(|kept| kept.from == *from && kept.to == *to) {
            return kept.program.clone();
        }
        let program = compile().map(Arc::new);
        if programs.len() == KEPT {
            programs.remove(0);
        }
        programs.push(KeptProgram { from: from.clone(), to: to.clone(), program: program.clone() });
        program
    }
}
