//! A position in the token list, the grammar's helpers (peek, expect, integers) and errors
//! that name a token's `line:column`.

use crate::error::Error;
use crate::error::Result;
use crate::hlo::parse::lexer::{Kind, Token};

/// An [`Error::HloText`] at `token`.
pub(super) fn error_at(token: &Token<'_>, message: impl Into<String>) -> Error {
    Error::HloText {
        message: message.into(),
        line: token.line,
        column: token.column,
        token: token.describe(),
    }
}

/// Reads tokens in order; never moves past the final [`Kind::End`].
pub(super) struct Cursor<'t, 'a> {
    tokens: &'t [Token<'a>],
    position: usize,
}

impl<'t, 'a> Cursor<'t, 'a> {
    /// A cursor at the first of `tokens`, which end with a [`Kind::End`] token.
    pub(super) fn new(tokens: &'t [Token<'a>]) -> Self {
        Cursor { tokens, position: 0 }
    }

    /// The next token.
    pub(super) fn peek(&self) -> Token<'a> {
        self.peek_nth(0)
    }

    /// The token `n` after the next one (the end token past the end).
    pub(super) fn peek_nth(&self, n: usize) -> Token<'a> {
        let last = self.tokens.len() - 1;
        self.tokens[(self.position + n).min(last)]
    }

    /// Takes the next token.
    pub(super) fn next(&mut self) -> Token<'a> {
        let token = self.peek();
        if token.kind != Kind::End {
            self.position += 1;
        }
        token
    }

    /// Takes the next token if it is of `kind`.
    pub(super) fn eat(&mut self, kind: Kind) -> bool {
        let found = self.peek().kind == kind;
        if found {
            self.next();
        }
        found
    }

    /// Takes the next token if it is the word `word`.
    pub(super) fn eat_word(&mut self, word: &str) -> bool {
        let found = self.peek().is_word(word);
        if found {
            self.next();
        }
        found
    }

    /// Takes the next token, which must be of `kind`; `what` names it for the error.
    pub(super) fn require(&mut self, kind: Kind, what: &str) -> Result<Token<'a>> {
        let token = self.peek();
        if token.kind != kind {
            return Err(error_at(&token, format!("expected {what}")));
        }
        Ok(self.next())
    }

    /// Takes a word (a name, an opcode, a number…).
    pub(super) fn word(&mut self, what: &str) -> Result<Token<'a>> {
        self.require(Kind::Word, what)
    }

    /// Takes a decimal integer.
    pub(super) fn int(&mut self, what: &str) -> Result<i64> {
        let token = self.peek();
        match token.kind {
            Kind::Word => {
                token.text.parse().map_err(|_| error_at(&token, format!("expected {what}"))).inspect(|_| {
                    self.next();
                })
            }
            _ => Err(error_at(&token, format!("expected {what}"))),
        }
    }

    /// `{` integers separated by commas `}`.
    pub(super) fn int_list(&mut self, what: &str) -> Result<Vec<i64>> {
        self.require(Kind::LBrace, "`{`")?;
        let mut values = Vec::new();
        if self.eat(Kind::RBrace) {
            return Ok(values);
        }
        loop {
            values.push(self.int(what)?);
            if self.eat(Kind::RBrace) {
                return Ok(values);
            }
            self.require(Kind::Comma, "`,` or `}`")?;
        }
    }

    /// Takes tokens through the bracket that closes the one just taken (`open`/`close` of one
    /// kind, nested), for a value read and ignored.
    pub(super) fn skip_balanced(&mut self, open: Kind, close: Kind) -> Result<()> {
        let start = self.peek();
        let mut depth = 1usize;
        loop {
            let token = self.next();
            match token.kind {
                Kind::End => return Err(error_at(&start, "unbalanced brackets: the text ends inside them")),
                kind if kind == open => depth += 1,
                kind if kind == close => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
    }

    /// The tokens from `start` (a position) up to the current one.
    pub(super) fn since(&self, start: usize) -> &'t [Token<'a>] {
        &self.tokens[start..self.position]
    }

    /// The current position, for [`Cursor::since`].
    pub(super) fn position(&self) -> usize {
        self.position
    }
}
