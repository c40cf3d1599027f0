//! An instruction's attributes (`dimensions={1}`, `to_apply=region_0.1`, `metadata={…}`): read
//! as token runs first, then by the opcode that wants them, with a typed reader per kind of
//! value. What XLA and jax add without changing values (metadata, sharding, …) is read and
//! ignored; an attribute nothing asked for is an error, so no meaning is dropped silently.

use std::sync::Arc;

use crate::attributes::{ComparisonDirection, PaddingConfig, RandomAlgorithm};
use crate::error::Result;
use crate::hlo::ir::HloComputation;
use crate::hlo::parse::cursor::{error_at, Cursor};
use crate::hlo::parse::lexer::{Kind, Token};

/// Attributes that never change what an instruction computes, read and ignored.
const IGNORED: &[&str] = &[
    "metadata",
    "sharding",
    "frontend_attributes",
    "backend_config",
    "origin",
    "statistics_viz",
    "control-predecessors",
];

/// One `name=value`, the value as its tokens (ending with an end token).
pub(super) struct RawAttribute<'a> {
    pub(super) name: Token<'a>,
    value: Vec<Token<'a>>,
}

/// Reads `name=value`: a value in braces (opened on the line of the `=`) through its closing
/// brace, else the tokens up to the next `,` or `}` on that line (brackets and parentheses
/// kept together).
pub(super) fn raw_attribute<'a>(cursor: &mut Cursor<'_, 'a>) -> Result<RawAttribute<'a>> {
    let name = cursor.word("an attribute name")?;
    let equals = cursor.require(Kind::Equals, "`=` after the attribute name")?;
    let start = cursor.position();
    let first = cursor.peek();
    loop {
        let token = cursor.peek();
        if (cursor.position() > start && first.kind == Kind::LBrace) || token.line != equals.line {
            break;
        }
        match token.kind {
            Kind::Comma | Kind::RBrace | Kind::RParen | Kind::RBracket | Kind::End => break,
            Kind::LBrace => {
                cursor.next();
                cursor.skip_balanced(Kind::LBrace, Kind::RBrace)?;
            }
            Kind::LParen => {
                cursor.next();
                cursor.skip_balanced(Kind::LParen, Kind::RParen)?;
            }
            Kind::LBracket => {
                cursor.next();
                cursor.skip_balanced(Kind::LBracket, Kind::RBracket)?;
            }
            _ => {
                cursor.next();
            }
        }
    }
    // A value may be empty: the padding of a scalar prints as `padding=`.
    let mut value = cursor.since(start).to_vec();
    let last = value.last().copied().unwrap_or(equals);
    value.push(Token {
        kind: Kind::End,
        text: "",
        line: last.line,
        column: last.column + last.text.chars().count(),
    });
    Ok(RawAttribute { name, value })
}

/// The attributes of one instruction, as its opcode asks for them.
pub(super) struct Attributes<'a, 'r> {
    opcode: Token<'a>,
    raw: &'r [RawAttribute<'a>],
    used: Vec<bool>,
    resolve: &'r mut dyn FnMut(Token<'a>) -> Result<Arc<HloComputation>>,
}

impl<'a, 'r> Attributes<'a, 'r> {
    /// The attributes `raw` of an instruction of `opcode`; `resolve` finds called computations.
    pub(super) fn new(
        opcode: Token<'a>,
        raw: &'r [RawAttribute<'a>],
        resolve: &'r mut dyn FnMut(Token<'a>) -> Result<Arc<HloComputation>>,
    ) -> Self {
        Attributes { opcode, raw, used: vec![false; raw.len()], resolve }
    }

    /// Whether attribute `name` is present.
    pub(super) fn has(&self, name: &str) -> bool {
        self.raw.iter().any(|a| a.name.text == name)
    }

    /// Reads attribute `name` with `read` (which must take all of its value), if present.
    pub(super) fn optional<T>(
        &mut self,
        name: &str,
        read: impl FnOnce(&mut Cursor<'_, 'a>) -> Result<T>,
    ) -> Result<Option<T>> {
        let Some(index) = self.raw.iter().position(|a| a.name.text == name) else {
            return Ok(None);
        };
        self.used[index] = true;
        let mut cursor = Cursor::new(&self.raw[index].value);
        let value = read(&mut cursor)?;
        let rest = cursor.peek();
        if rest.kind != Kind::End {
            return Err(error_at(&rest, format!("unexpected text in attribute {name}")));
        }
        Ok(Some(value))
    }

    /// Reads attribute `name`, which the opcode needs.
    pub(super) fn required<T>(
        &mut self,
        name: &str,
        read: impl FnOnce(&mut Cursor<'_, 'a>) -> Result<T>,
    ) -> Result<T> {
        let opcode = self.opcode;
        self.optional(name, read)?
            .ok_or_else(|| error_at(&opcode, format!("attribute {name} is required for {}", opcode.text)))
    }

    /// `name={1,2}`.
    pub(super) fn ints(&mut self, name: &str) -> Result<Vec<i64>> {
        self.required(name, |c| c.int_list("an integer"))
    }

    /// `name={1,2}`, empty when absent.
    pub(super) fn ints_or_empty(&mut self, name: &str) -> Result<Vec<i64>> {
        Ok(self.optional(name, |c| c.int_list("an integer"))?.unwrap_or_default())
    }

    /// `name={d}`: one integer in braces.
    pub(super) fn one_int(&mut self, name: &str) -> Result<i64> {
        let opcode = self.opcode;
        let values = self.ints(name)?;
        match values[..] {
            [value] => Ok(value),
            _ => Err(error_at(&opcode, format!("{} takes one integer in {name}", opcode.text))),
        }
    }

    /// `name=3`.
    pub(super) fn int(&mut self, name: &str) -> Result<i64> {
        self.required(name, |c| c.int("an integer"))
    }

    /// `name=true` or `name=false`, `default` when absent.
    pub(super) fn bool_or(&mut self, name: &str, default: bool) -> Result<bool> {
        let value = self.optional(name, |c| {
            let token = c.word("true or false")?;
            match token.text {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(error_at(&token, "expected true or false")),
            }
        })?;
        Ok(value.unwrap_or(default))
    }

    /// `name=word`, with the token (for errors), if present.
    pub(super) fn word(&mut self, name: &str) -> Result<Option<Token<'a>>> {
        self.optional(name, |c| c.word("a word"))
    }

    /// `name=computation`: a called computation.
    pub(super) fn computation(&mut self, name: &str) -> Result<Arc<HloComputation>> {
        let token = self.required(name, |c| c.word("a computation's name"))?;
        (self.resolve)(token)
    }

    /// `name={a, b, …}`: called computations.
    pub(super) fn computations(&mut self, name: &str) -> Result<Vec<Arc<HloComputation>>> {
        let tokens = self.required(name, |c| {
            c.require(Kind::LBrace, "`{`")?;
            let mut names = vec![c.word("a computation's name")?];
            while c.eat(Kind::Comma) {
                names.push(c.word("a computation's name")?);
            }
            c.require(Kind::RBrace, "`,` or `}`")?;
            Ok(names)
        })?;
        tokens.into_iter().map(|t| (self.resolve)(t)).collect()
    }

    /// `slice={[0:2], [1:5:2]}`: starts, limits and strides.
    pub(super) fn slice(&mut self) -> Result<(Vec<i64>, Vec<i64>, Vec<i64>)> {
        self.required("slice", |c| {
            let (mut starts, mut limits, mut strides) = (Vec::new(), Vec::new(), Vec::new());
            c.require(Kind::LBrace, "`{`")?;
            while !c.eat(Kind::RBrace) {
                if !starts.is_empty() {
                    c.require(Kind::Comma, "`,` or `}`")?;
                }
                c.require(Kind::LBracket, "`[start:limit]`")?;
                starts.push(c.int("a start index")?);
                c.require(Kind::Colon, "`:`")?;
                limits.push(c.int("a limit index")?);
                strides.push(if c.eat(Kind::Colon) { c.int("a stride")? } else { 1 });
                c.require(Kind::RBracket, "`]`")?;
            }
            Ok((starts, limits, strides))
        })
    }

    /// `padding=0_1x2_3_1`: low_high or low_high_interior per dimension, joined by `x`.
    pub(super) fn padding(&mut self) -> Result<PaddingConfig> {
        self.required("padding", |c| {
            if c.peek().kind == Kind::End {
                return Ok(PaddingConfig::default());
            }
            let token = c.word("a padding such as 0_1x2_3_1")?;
            let bad = || {
                error_at(&token, "expected a padding such as 0_1x2_3_1 (low_high[_interior] per dimension)")
            };
            let mut triples = Vec::new();
            for dimension in token.text.split('x') {
                let parts: Vec<i64> =
                    dimension.split('_').map(|p| p.parse().map_err(|_| bad())).collect::<Result<_>>()?;
                triples.push(match parts[..] {
                    [low, high] => (low, high, 0),
                    [low, high, interior] => (low, high, interior),
                    _ => return Err(bad()),
                });
            }
            Ok(PaddingConfig::new(&triples))
        })
    }

    /// `direction=LT`.
    pub(super) fn direction(&mut self) -> Result<ComparisonDirection> {
        use ComparisonDirection::*;
        self.required("direction", |c| {
            let token = c.word("a comparison direction")?;
            [Eq, Ne, Ge, Gt, Le, Lt]
                .into_iter()
                .find(|d| d.to_string() == token.text)
                .ok_or_else(|| error_at(&token, "expected a comparison direction (EQ, NE, GE, GT, LE, LT)"))
        })
    }

    /// `algorithm=rng_three_fry`.
    pub(super) fn algorithm(&mut self) -> Result<RandomAlgorithm> {
        use RandomAlgorithm::*;
        let algorithm = self.optional("algorithm", |c| {
            let token = c.word("a random algorithm")?;
            [Default, ThreeFry, Philox]
                .into_iter()
                .find(|a| a.hlo_name() == token.text)
                .ok_or_else(|| error_at(&token, "expected rng_default, rng_three_fry or rng_philox"))
        })?;
        Ok(algorithm.unwrap_or_default())
    }

    /// Fails on an attribute nobody asked for and lazy-xla does not know to be harmless.
    pub(super) fn finish(self) -> Result<()> {
        for (attribute, used) in self.raw.iter().zip(&self.used) {
            if !used && !IGNORED.contains(&attribute.name.text) {
                return Err(error_at(
                    &attribute.name,
                    format!(
                        "lazy-xla does not understand attribute {} of {}",
                        attribute.name.text, self.opcode.text
                    ),
                ));
            }
        }
        Ok(())
    }
}
