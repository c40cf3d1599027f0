//! The module's grammar: `HloModule name, attributes…` then computations, each
//! `[ENTRY] name [(signature) -> shape] { instructions }`. Module attributes
//! (`entry_computation_layout`, `is_scheduled`, `input_output_alias`,
//! `allow_spmd_sharding_propagation_*`, …) and signatures repeat what the instructions say,
//! and are read and ignored.

use crate::error::Result;
use crate::hlo::parse::attributes::raw_attribute;
use crate::hlo::parse::cursor::{error_at, Cursor};
use crate::hlo::parse::instruction::{raw_instruction, RawInstruction};
use crate::hlo::parse::lexer::{Kind, Token};
use crate::hlo::parse::shapes::shape;

/// A computation as written.
pub(super) struct RawComputation<'a> {
    pub(super) is_entry: bool,
    pub(super) name: Token<'a>,
    pub(super) instructions: Vec<RawInstruction<'a>>,
}

/// Reads a whole module.
pub(super) fn raw_module<'a>(cursor: &mut Cursor<'_, 'a>) -> Result<Vec<RawComputation<'a>>> {
    if !cursor.eat_word("HloModule") {
        return Err(error_at(&cursor.peek(), "expected `HloModule` at the start of the module"));
    }
    cursor.word("the module's name")?;
    while cursor.eat(Kind::Comma) {
        raw_attribute(cursor)?;
    }
    let mut computations = Vec::new();
    while cursor.peek().kind != Kind::End {
        computations.push(raw_computation(cursor)?);
    }
    if computations.is_empty() {
        return Err(error_at(&cursor.peek(), "the module has no computations"));
    }
    Ok(computations)
}

fn raw_computation<'a>(cursor: &mut Cursor<'_, 'a>) -> Result<RawComputation<'a>> {
    let is_entry = cursor.eat_word("ENTRY");
    let name = cursor.word("a computation's name (or ENTRY)")?;
    if cursor.eat(Kind::LParen) {
        cursor.skip_balanced(Kind::LParen, Kind::RParen)?;
        if cursor.eat(Kind::Arrow) {
            shape(cursor)?;
        }
    }
    cursor.require(Kind::LBrace, "`{` opening the computation's instructions")?;
    let mut instructions = Vec::new();
    while !cursor.eat(Kind::RBrace) {
        if cursor.peek().kind == Kind::End {
            return Err(error_at(&cursor.peek(), format!("computation {} is not closed by `}}`", name.text)));
        }
        instructions.push(raw_instruction(cursor)?);
    }
    // `, execution_thread="main"` and the like.
    while cursor.eat(Kind::Comma) {
        raw_attribute(cursor)?;
    }
    if instructions.is_empty() {
        return Err(error_at(&name, format!("computation {} has no instructions", name.text)));
    }
    Ok(RawComputation { is_entry, name, instructions })
}
