//! Printing literals as XLA's `Literal::ToString` does.

use std::fmt;

use crate::literal::Literal;
use crate::storage::{with_native_type, NativeType};

/// XLA's `Literal::ToString`: the shape without layout, a space, then the values in nested
/// braces (`f32[] 7`, `f32[3] {1, 2, 3}`, rank ≥ 2 one innermost row per line). Floats print
/// in C's `%g` style with just enough digits to read back exactly (`1`, `0.5`, `1e+10`,
/// `inf`, `nan`); a `pred` scalar prints `true`/`false`, `pred` array elements `1`/`0`.
///
/// ```
/// use lazy_xla::{shape, Literal};
/// assert_eq!(Literal::scalar(7.0f32).to_string(), "f32[] 7");
/// assert_eq!(Literal::vec1(&[1.5f32, 1e10]).to_string(), "f32[2] {1.5, 1e+10}");
/// let m = Literal::from_vec(&shape!(pred[2, 1]), vec![true, false])?;
/// assert_eq!(m.to_string(), "pred[2,1] {\n  {1},\n  {0}\n}");
/// assert_eq!(Literal::scalar(true).to_string(), "pred[] true");
/// # Ok::<(), lazy_xla::Error>(())
/// ```
///
/// A tuple prints each element so, between `(` and `)` lines (XLA's `TuplePrintHelper`):
/// `(\nf32[2] {1, 2},\ns32[] 7\n)`.
impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_tuple() {
            let elements = (0..self.shape().tuple_shapes().len())
                .map(|i| self.tuple_element(i).map_or_else(|e| e.to_string(), |e| e.to_string()));
            return write!(f, "(\n{}\n)", elements.collect::<Vec<_>>().join(",\n"));
        }
        write!(f, "{} {}", self.shape().human_string(), values_text(self, "\n"))
    }
}

/// The values of `literal` in XLA's nested braces; `linebreak` is `"\n"` for
/// `Literal::ToString` and `" "` for the one-line form HLO constants use
/// (`{ { 1, 2 }, { 3, 4 } }`).
/// A tuple's values print as XLA's HLO printer prints a large constant: `{...}`.
pub(crate) fn values_text(literal: &Literal, linebreak: &str) -> String {
    if literal.is_tuple() {
        return "{...}".to_string();
    }
    let rank = literal.shape().rank();
    let elements: Vec<String> = with_native_type!(literal.element_type(), T => {
        literal.to_vec::<T>().unwrap_or_default().into_iter().map(|v| array_element_text(v, rank)).collect()
    });
    let mut out = String::new();
    let layout = Nesting { rank: literal.shape().rank(), linebreak };
    layout.print(&mut out, literal.shape().dimensions(), &mut Vec::new(), &mut elements.iter());
    out
}

/// XLA's `print_recursive` of `DenseArrayToStringHelper`: braces and separators placed exactly
/// as XLA places them.
struct Nesting<'a> {
    rank: usize,
    linebreak: &'a str,
}

impl Nesting<'_> {
    fn print<'e>(
        &self,
        out: &mut String,
        dimensions: &[i64],
        index: &mut Vec<i64>,
        elements: &mut impl Iterator<Item = &'e String>,
    ) {
        let Some((&size, inner)) = dimensions.split_first() else {
            out.push_str(elements.next().map_or("", String::as_str));
            return;
        };
        out.push_str(&self.brace("{", size, inner.is_empty(), index));
        for i in 0..size {
            index.push(i);
            self.print(out, inner, index, elements);
            index.pop();
            if i + 1 < size {
                out.push(',');
                out.push_str(if inner.is_empty() { " " } else { self.linebreak });
            }
        }
        out.push_str(&self.brace("}", size, inner.is_empty(), index));
    }

    fn brace(&self, brace: &str, size: i64, innermost: bool, index: &[i64]) -> String {
        let linebreak = self.linebreak;
        if self.rank == 1 {
            brace.to_string()
        } else if innermost {
            let indent = if linebreak == "\n" { "  " } else { "" };
            let space = if size <= 1 { "" } else { " " };
            if brace == "{" {
                format!("{indent}{{{space}")
            } else {
                format!("{space}}}")
            }
        } else if brace == "{" {
            if self.rank > 3 && !index.is_empty() && index.len() < self.rank {
                let linebreak = if size > 0 { linebreak } else { "" };
                format!("{{ /*i{}={}*/{linebreak}", index.len() - 1, index[index.len() - 1])
            } else {
                format!("{{{linebreak}")
            }
        } else {
            format!("{linebreak}}}")
        }
    }
}

/// One element of a rank-`rank` array as XLA prints it: `pred` elements of arrays print as
/// `1`/`0`, a `pred` scalar as `true`/`false`.
fn array_element_text<T: NativeType>(value: T, rank: usize) -> String {
    if T::ELEMENT_TYPE == crate::element_type::ElementType::Pred && rank > 0 {
        return if value == T::ONE { "1" } else { "0" }.to_string();
    }
    element_text(value)
}

/// One element as XLA's `GetAsString` prints it.
pub(crate) fn element_text<T: NativeType>(value: T) -> String {
    use crate::element_type::ElementType::*;
    match T::ELEMENT_TYPE {
        Pred => if value == T::ONE { "true" } else { "false" }.to_string(),
        F16 => float_text(value.to_f64(), (5, 5), float_round_trips::<T>),
        Bf16 => float_text(value.to_f64(), (4, 4), float_round_trips::<T>),
        F32 => float_text(value.to_f64(), (6, 9), float_round_trips::<T>),
        F64 => float_text(value.to_f64(), (15, 17), float_round_trips::<T>),
        _ => integer_text(value),
    }
}

/// An integer element's decimal text (through `Debug`, which prints integers plainly).
fn integer_text<T: NativeType>(value: T) -> String {
    format!("{value:?}")
}

/// Whether `text` reads back as exactly `value` in the float type `T`.
fn float_round_trips<T: NativeType>(text: &str, value: f64) -> bool {
    let Ok(parsed) = text.parse::<f64>() else { return false };
    round_to::<T>(parsed) == round_to::<T>(value)
}

/// `value` rounded to the precision of the float type `T`, as an `f64`.
fn round_to<T: NativeType>(value: f64) -> f64 {
    use crate::element_type::ElementType::*;
    match T::ELEMENT_TYPE {
        F16 => half::f16::from_f64(value).to_f64(),
        Bf16 => half::bf16::from_f64(value).to_f64(),
        F32 => value as f32 as f64,
        _ => value,
    }
}

/// XLA's `RoundTripFpToString`: C's `%.{p}g` with `p` the first precision given if that text
/// reads back as the same value, else the second (f32: 6 then 9, f64: 15 then 17; the half
/// types print with their `max_digits10` alone: f16 5, bf16 4).
pub(crate) fn float_text(
    value: f64,
    (digits10, max_digits10): (usize, usize),
    round_trips: impl Fn(&str, f64) -> bool,
) -> String {
    if value.is_nan() {
        return if value.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    let short = format_g(value, digits10);
    if round_trips(&short, value) {
        short
    } else {
        format_g(value, max_digits10)
    }
}

/// C's `printf("%.*g", precision, value)` for a finite value.
fn format_g(value: f64, precision: usize) -> String {
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let scientific = format!("{:.*e}", precision - 1, value);
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if exponent < -4 || exponent >= precision as i32 {
        let mantissa = strip_zeros(mantissa);
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    } else {
        let decimals = (precision as i32 - 1 - exponent).max(0) as usize;
        strip_zeros(&format!("{value:.decimals$}")).to_string()
    }
}

/// `1.500` → `1.5`, `2.000` → `2`; text without a point is returned as it is.
fn strip_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::literal::Literal;
    use crate::shape;

    #[test]
    fn format_g_matches_c() {
        assert_eq!(format_g(1.0, 6), "1");
        assert_eq!(format_g(0.1, 1), "0.1");
        assert_eq!(format_g(123456.0, 6), "123456");
        assert_eq!(format_g(1234567.0, 6), "1.23457e+06");
        assert_eq!(format_g(0.0001, 6), "0.0001");
        assert_eq!(format_g(0.00001, 6), "1e-05");
        assert_eq!(format_g(-2.5, 6), "-2.5");
        assert_eq!(format_g(1e100, 3), "1e+100");
    }

    #[test]
    fn floats_print_shortest_round_trip() {
        assert_eq!(element_text(0.1f32), "0.1");
        assert_eq!(element_text(1.0f32 / 3.0), "0.333333343");
        assert_eq!(element_text(0.1f64), "0.1");
        assert_eq!(element_text(1.0f64 / 3.0), "0.33333333333333331");
        assert_eq!(element_text(half::bf16::from_f32(0.1)), "0.1001");
        assert_eq!(element_text(half::f16::from_f32(0.1)), "0.099976");
        assert_eq!(element_text(1e-40f32), "9.99995e-41");
        assert_eq!(element_text(123456789f32), "123456792");
        assert_eq!(element_text(half::bf16::from_f32(1.0 / 3.0)), "0.334");
        assert_eq!(element_text(f32::NEG_INFINITY), "-inf");
        assert_eq!(element_text(-0.0f32), "-0");
        assert_eq!(element_text(-7i8), "-7");
        assert_eq!(element_text(u64::MAX), "18446744073709551615");
    }

    #[test]
    fn nesting_matches_xla() {
        let cube = Literal::from_vec(&shape!(s32[2, 2, 2]), (1..=8).collect()).unwrap();
        assert_eq!(
            cube.to_string(),
            "s32[2,2,2] {\n{\n  { 1, 2 },\n  { 3, 4 }\n},\n{\n  { 5, 6 },\n  { 7, 8 }\n}\n}"
        );
        let four = Literal::from_vec(&shape!(s32[2, 1, 1, 1]), vec![1, 2]).unwrap();
        assert_eq!(
            four.to_string(),
            "s32[2,1,1,1] {\n{ /*i0=0*/\n{ /*i1=0*/\n  {1}\n}\n},\n{ /*i0=1*/\n{ /*i1=0*/\n  {2}\n}\n}\n}"
        );
        assert_eq!(Literal::vec1::<f32>(&[]).to_string(), "f32[0] {}");
        let empty = Literal::from_vec::<f32>(&shape!(f32[2, 0]), vec![]).unwrap();
        assert_eq!(empty.to_string(), "f32[2,0] {\n  {},\n  {}\n}");
        let m = Literal::from_vec(&shape!(s32[2, 2]), vec![1, 2, 3, 4]).unwrap();
        assert_eq!(values_text(&m, " "), "{ { 1, 2 }, { 3, 4 } }");
    }
}
