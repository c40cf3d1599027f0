//! Bit-level element semantics: `bitcast_convert_type` (an element's encoding read as another
//! type of the same width, split into narrower elements or joined into a wider one,
//! little-endian, as XLA's CPU backend lays them out) and `reduce_precision` (XLA's rounding of a
//! float's encoding to fewer exponent and mantissa bits, as its elemental IR emitter writes it).
//!
//! The reference knows an element's encoding only for an exact value that is not a NaN (a NaN's
//! sign and payload depend on the ops that made it): a bitcast of anything else is unknown.

use crate::common::values::{float_from_bits, float_to_bits, mantissa_bits, storage_bits, wrap, Elem, Value};
use lazy_xla::ElementType;

/// The low `bits` bits set.
fn mask(bits: u32) -> u64 {
    if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The encoding of `e` (of type `ty`) as an unsigned integer of `ty`'s width, if known.
fn encoding(ty: ElementType, e: Elem) -> Option<u64> {
    if !e.is_exact() {
        return None;
    }
    match e.value {
        Value::Int(v) => Some(v as u64 & mask(storage_bits(ty))),
        Value::Float(v) if v.is_nan() => None,
        Value::Float(v) => Some(float_to_bits(ty, v)),
    }
}

/// The element of `ty` whose encoding is `bits`.
fn decode(ty: ElementType, bits: u64) -> Elem {
    match ty.is_float() {
        true => Elem::float(float_from_bits(ty, bits)),
        false => Elem::int(wrap(ty, bits as i128)),
    }
}

/// One element's encoding read as `to`, a type of the same width.
pub fn bitcast_element(from: ElementType, to: ElementType, e: Elem) -> Elem {
    encoding(from, e).map_or(Elem::unknown_of(to), |bits| decode(to, bits))
}

/// `bitcast_convert_type` of an array of `from` with `dims`: its dimensions and elements as
/// `to`. A narrower type adds a last dimension of the width ratio (the lowest bits first), a
/// wider one joins the last dimension, which is the ratio.
pub fn bitcast_convert(
    from: ElementType,
    to: ElementType,
    dims: &[i64],
    elems: &[Elem],
) -> (Vec<i64>, Vec<Elem>) {
    let (from_bits, to_bits) = (storage_bits(from), storage_bits(to));
    if from_bits == to_bits {
        return (dims.to_vec(), elems.iter().map(|&e| bitcast_element(from, to, e)).collect());
    }
    if from_bits > to_bits {
        let ratio = from_bits / to_bits;
        let split = |e: &Elem| -> Vec<Elem> {
            let pieces =
                |bits: u64| (0..ratio).map(move |k| decode(to, bits >> (k * to_bits) & mask(to_bits)));
            match encoding(from, *e) {
                Some(bits) => pieces(bits).collect(),
                None => vec![Elem::unknown_of(to); ratio as usize],
            }
        };
        let dims = [dims, &[i64::from(ratio)]].concat();
        return (dims, elems.iter().flat_map(split).collect());
    }
    let ratio = (to_bits / from_bits) as usize;
    let join = |group: &[Elem]| -> Elem {
        let words: Option<Vec<u64>> = group.iter().map(|&e| encoding(from, e)).collect();
        words.map_or(Elem::unknown_of(to), |words| {
            decode(to, words.iter().enumerate().fold(0, |acc, (k, w)| acc | w << (k as u32 * from_bits)))
        })
    };
    (dims[..dims.len() - 1].to_vec(), elems.chunks(ratio).map(join).collect())
}

/// XLA's `ReducePrecision` of an element of the float type `ty`: the mantissa rounded to
/// `mantissa` bits (to nearest, ties to even, on the encoding), then exponents beyond an
/// `exponent`-bit range made ±∞ and those below its normals ±0; a NaN stays a NaN, or becomes
/// +∞ with no mantissa bits left. An inexact input is unknown (the rounding is a step).
pub fn reduce_precision(ty: ElementType, e: Elem, exponent: i32, mantissa: i32) -> Elem {
    if e.is_unknown() {
        return Elem::unknown_of(ty);
    }
    let v = e.value.float();
    if v.is_nan() {
        return Elem::float(if mantissa > 0 { f64::NAN } else { f64::INFINITY });
    }
    if !e.is_exact() {
        return Elem::unknown(e.value);
    }
    let nbits = storage_bits(ty);
    let (src_mantissa, src_exponent) = (mantissa_bits(ty), nbits - 1 - mantissa_bits(ty));
    let mut x = float_to_bits(ty, v);
    if (mantissa as u32) < src_mantissa {
        let shift = src_mantissa - mantissa as u32;
        let last = 1u64 << shift;
        let bias = (x & last) >> shift;
        x = x.wrapping_add(bias + (last >> 1) - 1) & !(last - 1) & mask(nbits);
    }
    if (exponent as u32) < src_exponent {
        let sign = 1u64 << (nbits - 1);
        let exponent_mask = mask(src_exponent) << src_mantissa;
        let (bias, reduced_bias) = (mask(src_exponent - 1), mask(exponent as u32 - 1));
        let x_exponent = x & exponent_mask;
        if x_exponent > (bias + reduced_bias) << src_mantissa {
            x = (x & sign) | exponent_mask;
        } else if x_exponent <= (bias - reduced_bias) << src_mantissa {
            x &= sign;
        }
    }
    Elem::float(float_from_bits(ty, x))
}
