//! A constant's values: `constant(1.5)`, `constant({ {1, 2}, {3, 4} })`, `true`/`false` and
//! `1`/`0` for `pred`, `inf`, `-inf`, `nan` (and `nan(0x…)` payloads, read as NaN) for floats.
//! Elided values (`{...}`, which XLA prints for large constants unless asked not to) are
//! refused: the values are not in the text.

use crate::element_type::ElementType;
use crate::error::Result;
use crate::hlo::parse::cursor::{error_at, Cursor};
use crate::hlo::parse::lexer::{Kind, Token};
use crate::literal::Literal;
use crate::shape::Shape;
use crate::storage::with_native_type;

/// The deepest braces a constant may nest (a bound on recursion, far beyond real arrays).
const MAX_RANK: usize = 64;

/// The values of a constant of `shape`, from after `constant(` up to (not including) its `)`.
pub(super) fn literal(cursor: &mut Cursor<'_, '_>, shape: &Shape) -> Result<Literal> {
    let start = cursor.peek();
    if shape.is_tuple() {
        return Err(error_at(
            &start,
            "tuple constants are not supported; build the tuple from array constants",
        ));
    }
    if shape.rank() > MAX_RANK {
        return Err(error_at(&start, format!("constants of rank above {MAX_RANK} are not supported")));
    }
    let mut values = Vec::new();
    nested(cursor, shape.dimensions(), &mut values)?;
    let element_type = shape.element_type();
    with_native_type!(element_type, T => {
        let typed = values
            .iter()
            .map(|token| {
                <T as FromText>::from_text(token.text).ok_or_else(|| {
                    error_at(token, format!("expected a value of type {element_type}"))
                })
            })
            .collect::<Result<Vec<T>>>()?;
        Literal::from_vec(shape, typed).map_err(|e| error_at(&start, e.to_string()))
    })
}

/// The values of an array of `dimensions`, in braces nested one level per dimension (none for a
/// scalar), appended to `values` in row-major order.
fn nested<'a>(cursor: &mut Cursor<'_, 'a>, dimensions: &[i64], values: &mut Vec<Token<'a>>) -> Result<()> {
    let Some((&size, inner)) = dimensions.split_first() else {
        return element(cursor, values);
    };
    let open = cursor.require(Kind::LBrace, &format!("`{{` opening a dimension of {size} elements"))?;
    if cursor.peek().is_word("...") {
        return Err(error_at(
            &cursor.peek(),
            "the constant's values are elided (`{...}`); print the module with its large constants \
             (XLA's print_large_constants)",
        ));
    }
    let mut count = 0i64;
    if !cursor.eat(Kind::RBrace) {
        loop {
            nested(cursor, inner, values)?;
            count += 1;
            if cursor.eat(Kind::RBrace) {
                break;
            }
            cursor.require(Kind::Comma, "`,` or `}` in the constant")?;
        }
    }
    if count != size {
        return Err(error_at(
            &open,
            format!("expected {size} elements in this dimension of the constant, found {count}"),
        ));
    }
    Ok(())
}

/// One element's token (a `nan(0x…)` payload is read past).
fn element<'a>(cursor: &mut Cursor<'_, 'a>, values: &mut Vec<Token<'a>>) -> Result<()> {
    let token = cursor.word("a constant's value")?;
    if token.text.trim_start_matches(['-', '+']) == "nan" && cursor.peek().kind == Kind::LParen {
        cursor.next();
        cursor.skip_balanced(Kind::LParen, Kind::RParen)?;
    }
    values.push(token);
    Ok(())
}

/// An element type's value from its HLO text.
trait FromText: Sized {
    fn from_text(text: &str) -> Option<Self>;
}

impl FromText for bool {
    fn from_text(text: &str) -> Option<bool> {
        match text {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => None,
        }
    }
}

macro_rules! from_text_by_parse {
    ($($t:ty),*) => {$(
        impl FromText for $t {
            fn from_text(text: &str) -> Option<$t> {
                text.parse().ok()
            }
        }
    )*};
}
from_text_by_parse!(i8, i16, i32, i64, u8, u16, u32, u64);

/// A float's text: decimal or `inf`/`nan` with an optional sign (`-nan` keeps its sign bit).
fn float_text(text: &str) -> Option<f64> {
    let (negative, magnitude) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let value = match magnitude {
        "inf" => f64::INFINITY,
        "nan" => f64::NAN,
        _ if magnitude.starts_with(|c: char| c.is_ascii_digit() || c == '.') => magnitude.parse().ok()?,
        _ => return None,
    };
    Some(if negative { -value } else { value })
}

impl FromText for f64 {
    fn from_text(text: &str) -> Option<f64> {
        float_text(text)
    }
}

impl FromText for f32 {
    fn from_text(text: &str) -> Option<f32> {
        // Parsed straight to f32 (one rounding), as the value was printed from one.
        let value = float_text(text)?;
        if value.is_finite() {
            text.parse().ok()
        } else {
            Some(value as f32)
        }
    }
}

impl FromText for half::f16 {
    fn from_text(text: &str) -> Option<half::f16> {
        float_text(text).map(half::f16::from_f64)
    }
}

impl FromText for half::bf16 {
    fn from_text(text: &str) -> Option<half::bf16> {
        float_text(text).map(half::bf16::from_f64)
    }
}

// Every element type has a `FromText`: the `with_native_type!` above needs them all.
const _: [(); 13] = [(); ElementType::ALL.len()];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::parse::lexer::tokenize;
    use crate::shape;

    fn parse(text: &str, shape: &Shape) -> Result<Literal> {
        let tokens = tokenize(text);
        literal(&mut Cursor::new(&tokens), shape)
    }

    #[test]
    fn arrays_of_every_kind() {
        let m = parse("{ {1, 2}, {3, 4} }", &shape!(s32[2, 2])).unwrap();
        assert_eq!(m.to_vec::<i32>().unwrap(), [1, 2, 3, 4]);
        let p = parse("{1, 0, 1}", &shape!(pred[3])).unwrap();
        assert_eq!(p.to_vec::<bool>().unwrap(), [true, false, true]);
        let f = parse("{-inf, nan, -nan, 0.1, -0}", &shape!(f32[5])).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(f[0], f32::NEG_INFINITY);
        assert!(f[1].is_nan() && f[1].is_sign_positive() && f[2].is_nan() && f[2].is_sign_negative());
        assert_eq!((f[3], f[4].to_bits()), (0.1f32, (-0.0f32).to_bits()));
        let h = parse("{0.1001, inf}", &shape!(bf16[2])).unwrap().to_vec::<half::bf16>().unwrap();
        assert_eq!(h, [half::bf16::from_f32(0.1), half::bf16::INFINITY]);
        assert_eq!(
            parse("18446744073709551615", &shape!(u64[])).unwrap().to_vec::<u64>().unwrap(),
            [u64::MAX]
        );
        assert!(parse("nan(0x7fc00001)", &shape!(f32[])).unwrap().to_vec::<f32>().unwrap()[0].is_nan());
        assert_eq!(parse("{}", &shape!(f32[0])).unwrap().shape(), &shape!(f32[0]));
    }

    #[test]
    fn bad_values_are_named() {
        let error = |text: &str, shape: &Shape| parse(text, shape).unwrap_err().to_string();
        assert_eq!(error("300", &shape!(s8[])), "expected a value of type s8 at 1:1 (`300`)");
        assert!(error("{...}", &shape!(f32[100])).starts_with("the constant's values are elided"));
        assert!(error("{1, 2}", &shape!(f32[3])).starts_with("expected 3 elements"));
        assert!(error("{1, 2}", &shape!(f32[2, 1])).starts_with("expected `{`"));
        let deep = Shape::new(ElementType::F32, &[1; 65]);
        assert!(error("{", &deep).starts_with("constants of rank above 64"));
    }
}
