//! Shapes in HLO text: `f32[2,3]{1,0}`, `pred[]`, tuples `(f32[2]{0}, /*index=1*/s32[])`.
//! Layout details XLA adds for its accelerators (tiles, memory spaces after a `:`) do not
//! change values and are skipped.

use crate::element_type::ElementType;
use crate::error::Result;
use crate::hlo::parse::cursor::{error_at, Cursor};
use crate::hlo::parse::lexer::Kind;
use crate::shape::{Layout, Shape};

/// Tuples nest at most this deep (a bound on recursion).
const MAX_TUPLE_DEPTH: usize = 64;

/// Whether the next tokens start a shape (`f32[` or a tuple's `(`).
pub(super) fn starts_shape(cursor: &Cursor<'_, '_>) -> bool {
    let token = cursor.peek();
    token.kind == Kind::LParen
        || (token.kind == Kind::Word && cursor.peek_nth(1).kind == Kind::LBracket && is_type_name(token.text))
}

fn is_type_name(text: &str) -> bool {
    element_type_named(text).is_some() || UNSUPPORTED_TYPES.contains(&text)
}

/// The element type XLA names `text` (without allocating, as `FromStr` does).
fn element_type_named(text: &str) -> Option<ElementType> {
    use ElementType::*;
    Some(match text {
        "pred" => Pred,
        "s8" => S8,
        "s16" => S16,
        "s32" => S32,
        "s64" => S64,
        "u8" => U8,
        "u16" => U16,
        "u32" => U32,
        "u64" => U64,
        "f16" => F16,
        "bf16" => Bf16,
        "f32" => F32,
        "f64" => F64,
        _ => return None,
    })
}

/// XLA's element types lazy-xla does not have, named in the error.
const UNSUPPORTED_TYPES: &[&str] = &[
    "c64",
    "c128",
    "token",
    "s1",
    "s2",
    "s4",
    "u1",
    "u2",
    "u4",
    "f4e2m1fn",
    "f8e3m4",
    "f8e4m3",
    "f8e4m3fn",
    "f8e4m3b11fnuz",
    "f8e4m3fnuz",
    "f8e5m2",
    "f8e5m2fnuz",
    "f8e8m0fnu",
];

/// A shape.
pub(super) fn shape(cursor: &mut Cursor<'_, '_>) -> Result<Shape> {
    shape_at_depth(cursor, 0)
}

fn shape_at_depth(cursor: &mut Cursor<'_, '_>, depth: usize) -> Result<Shape> {
    if cursor.peek().kind == Kind::LParen {
        let open = cursor.next();
        if depth == MAX_TUPLE_DEPTH {
            return Err(error_at(&open, format!("tuples nest at most {MAX_TUPLE_DEPTH} deep")));
        }
        let mut elements = Vec::new();
        if !cursor.eat(Kind::RParen) {
            loop {
                elements.push(shape_at_depth(cursor, depth + 1)?);
                if cursor.eat(Kind::RParen) {
                    break;
                }
                cursor.require(Kind::Comma, "`,` or `)` in a tuple shape")?;
            }
        }
        return Ok(Shape::tuple(&elements));
    }
    let type_token = cursor.word("a shape (an element type such as f32, or a tuple)")?;
    let element_type: ElementType = match element_type_named(type_token.text).ok_or(()) {
        Ok(element_type) => element_type,
        Err(()) if type_token.text.starts_with('c') && UNSUPPORTED_TYPES.contains(&type_token.text) => {
            return Err(error_at(&type_token, "complex numbers are out of scope for lazy-xla"))
        }
        Err(()) if UNSUPPORTED_TYPES.contains(&type_token.text) => {
            return Err(error_at(
                &type_token,
                format!("lazy-xla does not implement element type {}", type_token.text),
            ))
        }
        Err(()) => {
            let message = format!("Invalid element type string: \"{}\".", type_token.text);
            return Err(error_at(&type_token, message));
        }
    };
    cursor.require(Kind::LBracket, "`[` after the element type")?;
    let mut dimensions = Vec::new();
    if !cursor.eat(Kind::RBracket) {
        loop {
            let token = cursor.peek();
            if matches!(token.kind, Kind::Other) {
                return Err(error_at(&token, "dynamic dimensions (`<=`, `?`) are not supported by lazy-xla"));
            }
            dimensions.push(cursor.int("a dimension size")?);
            if cursor.eat(Kind::RBracket) {
                break;
            }
            cursor.require(Kind::Comma, "`,` or `]` in the dimensions")?;
        }
    }
    let shape =
        Shape::try_new(element_type, &dimensions).map_err(|e| error_at(&type_token, e.to_string()))?;
    if !starts_layout(cursor) {
        return Ok(shape);
    }
    cursor.next();
    let mut minor_to_major = Vec::new();
    loop {
        match cursor.peek().kind {
            Kind::RBrace => {
                cursor.next();
                break;
            }
            Kind::Colon => {
                // Tiles, memory space, element size: XLA's physical details, not values.
                cursor.next();
                cursor.skip_balanced(Kind::LBrace, Kind::RBrace)?;
                break;
            }
            _ => {
                if !minor_to_major.is_empty() {
                    cursor.require(Kind::Comma, "`,` or `}` in the layout")?;
                }
                minor_to_major.push(cursor.int("a dimension number in the layout")?);
            }
        }
    }
    shape.relayout(&Layout::new(&minor_to_major)).map_err(|e| error_at(&type_token, e.to_string()))
}

/// Whether a `{` that follows a shape opens its layout (`{1,0}`, `{}`, `{:T(8)}`) rather
/// than, say, a computation's body.
fn starts_layout(cursor: &Cursor<'_, '_>) -> bool {
    let after = cursor.peek_nth(1);
    cursor.peek().kind == Kind::LBrace
        && match after.kind {
            Kind::RBrace | Kind::Colon => true,
            Kind::Word => after.text.parse::<i64>().is_ok(),
            _ => false,
        }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::parse::lexer::tokenize;

    fn parse(text: &str) -> Result<Shape> {
        let tokens = tokenize(text);
        shape(&mut Cursor::new(&tokens))
    }

    #[test]
    fn arrays_layouts_and_tuples() {
        assert_eq!(parse("f32[2,3]{0,1}").unwrap().to_string(), "f32[2,3]{0,1}");
        assert_eq!(parse("pred[]").unwrap().to_string(), "pred[]");
        assert_eq!(parse("f32[8]{0:T(128)}").unwrap().to_string(), "f32[8]{0}");
        let tuple = parse("(f32[2]{0}, /*index=1*/s32[], ())").unwrap();
        assert_eq!(tuple.tuple_shapes().len(), 3);
    }

    #[test]
    fn unsupported_shapes_are_named() {
        let complex = parse("c64[2]").unwrap_err().to_string();
        assert_eq!(complex, "complex numbers are out of scope for lazy-xla at 1:1 (`c64`)");
        assert!(parse("f32[<=4]").unwrap_err().to_string().starts_with("dynamic dimensions"));
        assert!(parse("f32[2,3]{0,0}").unwrap_err().to_string().contains("duplicate"));
        assert!(parse("u4[2]")
            .unwrap_err()
            .to_string()
            .starts_with("lazy-xla does not implement element type u4"));
    }
}
