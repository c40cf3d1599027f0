//! Reading element types and shapes in XLA's text notation (`bf16`; `f32[2,3]`, `f32[2,3]{0,1}`, `pred[]`), and lazy-xla's
//! padding extension `f32[2,3]{0,1:pad(3,5)=zero}`.
//!
//! Grammar (white space allowed between tokens, as XLA's lexer allows):
//! `shape ::= type '[' (int (',' int)*)? ']' layout?`,
//! `layout ::= '{' (int (',' int)*)? (':' 'pad' '(' (int (',' int)*)? ')' '=' value)? '}'`.

use std::str::FromStr;

use crate::element_type::ElementType;

use crate::error::{Error, Result};

use crate::shape::{Layout, PaddingValue, Shape};

impl FromStr for ElementType {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        ElementType::ALL
            .into_iter()
            .find(|t| t.to_string() == s)
            .ok_or_else(|| Error::invalid(format!("Invalid element type string: \"{s}\".")))
    }
}

impl FromStr for Shape {
    type Err = Error;

    /// Parses XLA's notation; without a layout the default layout is used. Tuples are
    /// `(shape, shape, …)`, with or without XLA's `/*index=N*/` comments. A malformed string
    /// is an [`Error::Parse`] naming the offending byte.
    ///
    /// ```
    /// use lazy_xla::{shape, Shape};
    /// assert_eq!("f32[2,3]{0,1}".parse::<Shape>()?, shape!(f32[2, 3]{0, 1}));
    /// assert_eq!("f32[2, 3]".parse::<Shape>()?, shape!(f32[2, 3]));
    /// let pair = "(f32[2]{0}, s32[])".parse::<Shape>()?;
    /// assert_eq!(pair, Shape::tuple(&[shape!(f32[2]), shape!(s32[])]));
    /// let err = "f32[2,x]".parse::<Shape>().unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "cannot parse shape \"f32[2,x]\": expected a dimension size at byte 6 ('x')"
    /// );
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    fn from_str(text: &str) -> Result<Shape> {
        let mut parser = Parser { text, offset: 0, depth: 0 };
        let shape = parser.shape()?;
        parser.skip_space();
        if parser.offset != text.len() {
            return Err(parser.error("the end of the shape"));
        }
        Ok(shape)
    }
}

struct Parser<'a> {
    text: &'a str,
    offset: usize,
    /// How many tuples the parser is inside.
    depth: usize,
}

/// Tuples nest at most this deep (a limit on recursion, far beyond any real shape).
const MAX_TUPLE_DEPTH: usize = 64;

impl Parser<'_> {
    fn shape(&mut self) -> Result<Shape> {
        if self.eat('(') {
            return self.tuple();
        }
        let element_type = self.element_type()?;
        self.require('[')?;
        let dimensions = self.int_list(']', "a dimension size")?;
        self.skip_space();
        let ends_here = match self.depth {
            0 => self.peek().is_none(),
            _ => matches!(self.peek(), Some(',' | ')')),
        };
        if ends_here {
            return Shape::try_new(element_type, &dimensions);
        }
        self.require('{')?;
        let minor_to_major = self.int_list_until(&['}', ':'], "a dimension number")?;
        let mut layout = Layout::new(&minor_to_major);
        if self.eat(':') {
            self.require_word("pad")?;
            self.require('(')?;
            let padded = self.int_list(')', "a padded size")?;
            self.require('=')?;
            let value = self.padding_value()?;
            layout = layout.with_padding(&padded, value)?;
        }
        self.require('}')?;
        Shape::try_new(element_type, &dimensions)?.relayout(&layout)
    }

    /// A tuple's elements after its `(`, up to and including the `)`; an element may be
    /// preceded by XLA's `/*index=N*/` comment.
    fn tuple(&mut self) -> Result<Shape> {
        if self.depth == MAX_TUPLE_DEPTH {
            return Err(self.error(&format!("tuples nested at most {MAX_TUPLE_DEPTH} deep")));
        }
        self.depth += 1;
        let mut elements = Vec::new();
        if !self.eat(')') {
            loop {
                self.skip_index_comment();
                elements.push(self.shape()?);
                if self.eat(')') {
                    break;
                }
                self.require(',')?;
            }
        }
        self.depth -= 1;
        Ok(Shape::tuple(&elements))
    }

    /// Skips a `/*index=N*/` comment (any `/* … */`), if one is next.
    fn skip_index_comment(&mut self) {
        self.skip_space();
        if self.text[self.offset..].starts_with("/*") {
            if let Some(end) = self.text[self.offset..].find("*/") {
                self.offset += end + 2;
            }
        }
    }

    fn element_type(&mut self) -> Result<ElementType> {
        self.skip_space();
        let start = self.offset;
        let word = self.word();
        word.parse().map_err(|_| {
            self.offset = start;
            self.error("an element type (pred, s8, …, u64, f16, bf16, f32, f64)")
        })
    }

    fn padding_value(&mut self) -> Result<PaddingValue> {
        self.skip_space();
        let start = self.offset;
        let word = self.word();
        PaddingValue::ALL.into_iter().find(|v| v.to_string() == word).ok_or_else(|| {
            self.offset = start;
            self.error("a padding value (zero, one, lowest, highest)")
        })
    }

    /// Integers separated by commas, up to and including `close`.
    fn int_list(&mut self, close: char, what: &str) -> Result<Vec<i64>> {
        let list = self.int_list_until(&[close], what)?;
        self.require(close)?;
        Ok(list)
    }

    /// Integers separated by commas, stopping (without consuming) before one of `closers`.
    fn int_list_until(&mut self, closers: &[char], what: &str) -> Result<Vec<i64>> {
        let mut list = Vec::new();
        self.skip_space();
        if self.peek().is_some_and(|c| closers.contains(&c)) {
            return Ok(list);
        }
        loop {
            list.push(self.int(what)?);
            self.skip_space();
            if !self.eat(',') {
                return Ok(list);
            }
        }
    }

    fn int(&mut self, what: &str) -> Result<i64> {
        self.skip_space();
        let start = self.offset;
        let digits: String = self.text[start..].chars().take_while(char::is_ascii_digit).collect();
        if digits.is_empty() {
            return Err(self.error(what));
        }
        match digits.parse() {
            Ok(value) => {
                self.offset += digits.len();
                Ok(value)
            }
            Err(_) => Err(self.error(&format!("{what} that fits in an int64"))),
        }
    }

    fn word(&mut self) -> &str {
        let rest = &self.text[self.offset..];
        let len = rest.find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(rest.len());
        self.offset += len;
        &rest[..len]
    }

    fn require_word(&mut self, word: &str) -> Result<()> {
        self.skip_space();
        let start = self.offset;
        if self.word() == word {
            Ok(())
        } else {
            self.offset = start;
            Err(self.error(&format!("'{word}'")))
        }
    }

    fn require(&mut self, c: char) -> Result<()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.error(&format!("'{c}'")))
        }
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_space();
        if self.peek() == Some(c) {
            self.offset += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn peek(&self) -> Option<char> {
        self.text[self.offset..].chars().next()
    }

    fn skip_space(&mut self) {
        while let Some(c) = self.peek().filter(|c| c.is_whitespace()) {
            self.offset += c.len_utf8();
        }
    }

    fn error(&self, expected: &str) -> Error {
        let found = match self.peek() {
            Some(c) => format!("{c:?}"),
            None => "end of input".to_string(),
        };
        Error::Parse {
            input: self.text.to_string(),
            offset: self.offset,
            expected: format!("expected {expected}"),
            found,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_type_names_round_trip() {
        for t in ElementType::ALL {
            assert_eq!(t.to_string().parse::<ElementType>().unwrap(), t);
        }
    }

    #[test]
    fn unknown_element_type_name_is_an_error() {
        let err = "f33".parse::<ElementType>().unwrap_err();
        assert_eq!(err.to_string(), "Invalid element type string: \"f33\".");
    }
}
