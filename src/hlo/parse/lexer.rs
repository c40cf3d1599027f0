//! HLO text as tokens: words (names, opcodes, numbers, `0_1x2_3`, `b01f_01io`), strings,
//! punctuation, each with its `line:column`; comments (`/* … */`, `// …`) dropped.

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A run of letters, digits and `_ . - + %` (a leading `%` is dropped from the text).
    Word,
    /// A double-quoted string, quotes included.
    String,
    LBrace,
    RBrace,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Equals,
    Colon,
    /// `->`.
    Arrow,
    /// A character HLO text has no use for (or an unterminated string or comment).
    Other,
    /// The end of the text.
    End,
}

/// One token and where it starts (1-based line and column, in characters).
#[derive(Clone, Copy, Debug)]
pub(super) struct Token<'a> {
    pub(super) kind: Kind,
    pub(super) text: &'a str,
    pub(super) line: usize,
    pub(super) column: usize,
}

impl Token<'_> {
    /// Whether this is the word `word`.
    pub(super) fn is_word(&self, word: &str) -> bool {
        self.kind == Kind::Word && self.text == word
    }

    /// How the token reads in an error: its text, or `end of input`.
    pub(super) fn describe(&self) -> String {
        match self.kind {
            Kind::End => "end of input".to_string(),
            _ => self.text.chars().take(40).collect(),
        }
    }
}

/// The tokens of `text`, ending with one [`Kind::End`].
pub(super) fn tokenize(text: &str) -> Vec<Token<'_>> {
    let mut lexer = Lexer { text, offset: 0, line: 1, column: 1, tokens: Vec::new() };
    lexer.run();
    lexer.tokens
}

struct Lexer<'a> {
    text: &'a str,
    offset: usize,
    line: usize,
    column: usize,
    tokens: Vec<Token<'a>>,
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_.-+%$".contains(&b)
}

impl<'a> Lexer<'a> {
    fn run(&mut self) {
        let bytes = self.text.as_bytes();
        while let Some(&b) = bytes.get(self.offset) {
            let (line, column, start) = (self.line, self.column, self.offset);
            let next = bytes.get(self.offset + 1).copied();
            let kind = match b {
                b if b.is_ascii_whitespace() => {
                    self.bump();
                    continue;
                }
                b'/' if next == Some(b'*') => match self.rest().find("*/") {
                    Some(end) => {
                        self.advance_bytes(end + 2);
                        continue;
                    }
                    None => {
                        self.advance_bytes(self.rest().len());
                        Kind::Other
                    }
                },
                b'/' if next == Some(b'/') => {
                    let end = self.rest().find('\n').unwrap_or(self.rest().len());
                    self.advance_bytes(end);
                    continue;
                }
                b'"' => self.string(),
                b'-' if next == Some(b'>') => {
                    self.advance_bytes(2);
                    Kind::Arrow
                }
                b if is_word_byte(b) => {
                    let mut end = self.offset;
                    while end < bytes.len()
                        && is_word_byte(bytes[end])
                        && !(bytes[end] == b'-' && bytes.get(end + 1) == Some(&b'>'))
                    {
                        end += 1;
                    }
                    // Word bytes are ASCII and never a newline: one column each.
                    self.column += end - self.offset;
                    self.offset = end;
                    Kind::Word
                }
                _ => {
                    self.bump();
                    match b {
                        b'{' => Kind::LBrace,
                        b'}' => Kind::RBrace,
                        b'(' => Kind::LParen,
                        b')' => Kind::RParen,
                        b'[' => Kind::LBracket,
                        b']' => Kind::RBracket,
                        b',' => Kind::Comma,
                        b'=' => Kind::Equals,
                        b':' => Kind::Colon,
                        _ => Kind::Other,
                    }
                }
            };
            let mut token_text = &self.text[start..self.offset];
            if kind == Kind::Word {
                token_text = token_text.strip_prefix('%').unwrap_or(token_text);
            }
            self.tokens.push(Token { kind, text: token_text, line, column });
        }
        let (line, column) = (self.line, self.column);
        self.tokens.push(Token { kind: Kind::End, text: "", line, column });
    }

    /// A string from its opening quote through its closing one (backslash escapes skipped);
    /// unterminated, it runs to the end of the line and is [`Kind::Other`].
    fn string(&mut self) -> Kind {
        self.bump();
        while let Some(&b) = self.text.as_bytes().get(self.offset) {
            match b {
                b'"' => {
                    self.bump();
                    return Kind::String;
                }
                b'\\' => {
                    self.bump();
                    self.bump();
                }
                b'\n' => return Kind::Other,
                _ => self.bump(),
            }
        }
        Kind::Other
    }

    fn rest(&self) -> &'a str {
        &self.text[self.offset..]
    }

    /// Moves past one character (all of its bytes), counting lines and columns.
    fn bump(&mut self) {
        let bytes = self.text.as_bytes();
        let Some(&b) = bytes.get(self.offset) else { return };
        self.offset += 1;
        while bytes.get(self.offset).is_some_and(|&c| c & 0xC0 == 0x80) {
            self.offset += 1;
        }
        if b == b'\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
    }

    fn advance_bytes(&mut self, bytes: usize) {
        let end = self.offset + bytes;
        while self.offset < end {
            self.bump();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(Kind, &str)> {
        tokenize(text).into_iter().map(|t| (t.kind, t.text)).collect()
    }

    #[test]
    fn words_punctuation_and_positions() {
        let tokens = tokenize(
            "ROOT %add.3 = f32[2]{0} add(x, y), dim_labels=b01f_01io->b01f /*index=5*/\n  \"a\\\"b\"",
        );
        let texts: Vec<&str> = tokens.iter().map(|t| t.text).collect();
        assert_eq!(
            texts,
            [
                "ROOT",
                "add.3",
                "=",
                "f32",
                "[",
                "2",
                "]",
                "{",
                "0",
                "}",
                "add",
                "(",
                "x",
                ",",
                "y",
                ")",
                ",",
                "dim_labels",
                "=",
                "b01f_01io",
                "->",
                "b01f",
                "\"a\\\"b\"",
                ""
            ]
        );
        let string = &tokens[22];
        assert_eq!((string.kind, string.line, string.column), (Kind::String, 2, 3));
        assert_eq!((tokens[1].line, tokens[1].column), (1, 6));
    }

    #[test]
    fn numbers_and_paddings_are_words() {
        assert_eq!(
            kinds("-1.5e+10 -inf 0_1x2_3_1"),
            [(Kind::Word, "-1.5e+10"), (Kind::Word, "-inf"), (Kind::Word, "0_1x2_3_1"), (Kind::End, "")]
        );
    }

    #[test]
    fn unterminated_strings_and_comments_are_other() {
        assert_eq!(kinds("\"abc")[0].0, Kind::Other);
        assert_eq!(kinds("/* abc")[0].0, Kind::Other);
        assert_eq!(kinds("a // note\nb"), [(Kind::Word, "a"), (Kind::Word, "b"), (Kind::End, "")]);
    }
}
