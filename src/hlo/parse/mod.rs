//! Reading XLA's HLO text (what `to_hlo_text()`, jax's `.as_text(dialect="hlo")` and XLA's
//! dumps print) into the IR: tokens (`lexer`), the module's and an instruction's grammar
//! (`module`, `instruction`, with `shapes`, `constants` and `attributes`), what each opcode
//! means (`opcodes`: one line per opcode), and the computations built and checked by shape
//! inference (`build`). Errors name the `line:column` and the token.

mod attributes;
mod build;
mod constants;
mod cursor;
mod indexing;
mod instruction;
mod lexer;
mod module;
mod opcodes;
mod shapes;

use crate::error::Result;
use crate::hlo::ir::HloComputation;
use crate::hlo::verify::verify;

/// The entry computation of the module `text`, with the computations it calls.
pub(crate) fn parse_module(text: &str) -> Result<HloComputation> {
    let tokens = lexer::tokenize(text);
    let mut cursor = cursor::Cursor::new(&tokens);
    let raw = module::raw_module(&mut cursor)?;
    let entry = build::build_module(&raw)?;
    verify(&entry, "import")?;
    Ok(entry)
}
