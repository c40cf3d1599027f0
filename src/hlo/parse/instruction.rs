//! One instruction's line: `[ROOT] name = shape opcode(operands), attribute=value, …`.
//! Operands are names, optionally after their shapes as optimized dumps print them
//! (`add(f32[2]{0} %x, f32[2]{0} %y)`); `parameter(N)` and `constant(values)` take a number
//! and values instead.

use crate::error::Result;
use crate::hlo::parse::attributes::{raw_attribute, RawAttribute};
use crate::hlo::parse::constants::literal;
use crate::hlo::parse::cursor::{error_at, Cursor};
use crate::hlo::parse::lexer::{Kind, Token};
use crate::hlo::parse::shapes::{shape, starts_shape};
use crate::literal::Literal;
use crate::shape::Shape;

/// What stands between an instruction's parentheses.
pub(super) enum Operands<'a> {
    /// Names of other instructions.
    Names(Vec<Token<'a>>),
    /// A parameter's number.
    Parameter(i64),
    /// A constant's values.
    Constant(Literal),
}

/// An instruction as written, its operands and called computations not yet resolved.
pub(super) struct RawInstruction<'a> {
    pub(super) is_root: bool,
    pub(super) name: Token<'a>,
    pub(super) shape: Shape,
    pub(super) opcode: Token<'a>,
    pub(super) operands: Operands<'a>,
    pub(super) attributes: Vec<RawAttribute<'a>>,
}

/// Reads one instruction.
pub(super) fn raw_instruction<'a>(cursor: &mut Cursor<'_, 'a>) -> Result<RawInstruction<'a>> {
    let is_root = cursor.peek().is_word("ROOT") && cursor.peek_nth(1).kind == Kind::Word;
    if is_root {
        cursor.next();
    }
    let name = cursor.word("an instruction's name")?;
    cursor.require(Kind::Equals, "`=` after the instruction's name")?;
    let shape = shape(cursor)?;
    let opcode = cursor.word("an opcode")?;
    cursor.require(Kind::LParen, "`(` after the opcode")?;
    let operands = match opcode.text {
        "parameter" => {
            let number = cursor.int("a parameter number")?;
            cursor.require(Kind::RParen, "`)`")?;
            Operands::Parameter(number)
        }
        "constant" => {
            let values = literal(cursor, &shape)?;
            cursor.require(Kind::RParen, "`)` after the constant's values")?;
            Operands::Constant(values)
        }
        _ => Operands::Names(operand_names(cursor)?),
    };
    let mut attributes = Vec::new();
    while cursor.eat(Kind::Comma) {
        attributes.push(raw_attribute(cursor)?);
    }
    for (i, attribute) in attributes.iter().enumerate() {
        if attributes[..i].iter().any(|a| a.name.text == attribute.name.text) {
            return Err(error_at(
                &attribute.name,
                format!("attribute {} is given twice", attribute.name.text),
            ));
        }
    }
    Ok(RawInstruction { is_root, name, shape, opcode, operands, attributes })
}

/// Operand names up to the closing `)`, each optionally after its shape.
fn operand_names<'a>(cursor: &mut Cursor<'_, 'a>) -> Result<Vec<Token<'a>>> {
    let mut names = Vec::new();
    if cursor.eat(Kind::RParen) {
        return Ok(names);
    }
    loop {
        if starts_shape(cursor) {
            shape(cursor)?;
        }
        names.push(cursor.word("an operand's name")?);
        if cursor.eat(Kind::RParen) {
            return Ok(names);
        }
        cursor.require(Kind::Comma, "`,` or `)` after an operand")?;
    }
}
