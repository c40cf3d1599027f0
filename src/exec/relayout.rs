//! Copies between layouts, each compiled once: an argument that comes in another layout than
//! its parameter's, a result written into an output of another layout.

use std::sync::{Arc, Mutex};

use crate::error::Result;
use crate::exec::loop_program::LoopProgram;
use crate::literal::Literal;
use crate::shape::Shape;

/// How many copy programs an executable keeps.
const KEPT: usize = 32;

/// The copy programs an executable has needed so far, by (from, to) shape: a new pair of
/// layouts is compiled once, on the first run that meets it, and reused after (the most
/// recent [`KEPT`] pairs).
#[derive(Default)]
pub(crate) struct Relayouts {
    programs: Mutex<Vec<CopyProgram>>,
}

/// A copy program and the (from, to) shapes it copies between.
struct CopyProgram {
    from: Shape,
    to: Shape,
    program: Arc<LoopProgram>,
}

impl Relayouts {
    /// Copies `literal` into `out` (the same element type and dimensions), in `out`'s layout.
    pub(crate) fn copy_into(&self, literal: &Literal, out: &mut Literal, parallel: bool) -> Result<()> {
        self.program(literal.shape(), out.shape()).run(&[literal], out, parallel)
    }

    /// `literal`'s values in `shape`'s layout (the same element type and dimensions).
    pub(crate) fn copy(&self, literal: &Literal, shape: &Shape, parallel: bool) -> Result<Literal> {
        let mut out = Literal::for_overwrite(shape)?;
        self.copy_into(literal, &mut out, parallel)?;
        Ok(out)
    }

    /// The program copying `from` into `to`, compiled now if it is new.
    fn program(&self, from: &Shape, to: &Shape) -> Arc<LoopProgram> {
        // A poisoned lock only means another thread panicked while holding it; the list is
        // still a valid list of programs.
        let mut programs = self.programs.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(copy) = programs.iter().find(|c| c.from == *from && c.to == *to) {
            return copy.program.clone();
        }
        let program = Arc::new(LoopProgram::copy(from, to));
        if programs.len() == KEPT {
            programs.remove(0);
        }
        programs.push(CopyProgram { from: from.clone(), to: to.clone(), program: program.clone() });
        program
    }
}
