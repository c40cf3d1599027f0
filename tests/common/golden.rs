//! Golden data taken from XLA (jaxlib 0.6.0) and kept in `tests/data/`: arrays as JSON
//! (`{type, dims, bits | values}`), read back as literals and compared bit for bit.
#![allow(dead_code)] // each test file uses a part of it

use lazy_xla::{half, ElementType, Literal, Shape};
use serde_json::Value as Json;

/// The JSON document `tests/data/NAME`.
pub fn load(text: &str) -> Json {
    serde_json::from_str(text).expect("golden JSON")
}

/// An array `{type, dims, bits | values}` as a literal (default layout); `None` for a type
/// lazy-xla does not have (XLA's 4-bit and complex types).
pub fn literal(json: &Json) -> Option<Literal> {
    let element_type: ElementType = json["type"].as_str()?.parse().ok()?;
    let dims: Vec<i64> = json["dims"].as_array()?.iter().map(|d| d.as_i64().unwrap()).collect();
    let shape = Shape::new(element_type, &dims);
    let words: Vec<u64> = match json.get("bits") {
        Some(bits) => bits
            .as_array()?
            .iter()
            .map(|b| u64::from_str_radix(b.as_str().unwrap().trim_start_matches("0x"), 16).unwrap())
            .collect(),
        None => json["values"]
            .as_array()?
            .iter()
            .map(|v| match v {
                Json::Bool(b) => u64::from(*b),
                Json::String(s) => s.parse::<i128>().unwrap() as u64,
                other => other.as_i64().map(|i| i as u64).or_else(|| other.as_u64()).unwrap(),
            })
            .collect(),
    };
    let literal = match element_type {
        ElementType::Pred => Literal::from_vec(&shape, words.iter().map(|&w| w != 0).collect()),
        ElementType::S8 => Literal::from_vec(&shape, words.iter().map(|&w| w as i8).collect()),
        ElementType::S16 => Literal::from_vec(&shape, words.iter().map(|&w| w as i16).collect()),
        ElementType::S32 => Literal::from_vec(&shape, words.iter().map(|&w| w as i32).collect()),
        ElementType::S64 => Literal::from_vec(&shape, words.iter().map(|&w| w as i64).collect()),
        ElementType::U8 => Literal::from_vec(&shape, words.iter().map(|&w| w as u8).collect()),
        ElementType::U16 => Literal::from_vec(&shape, words.iter().map(|&w| w as u16).collect()),
        ElementType::U32 => Literal::from_vec(&shape, words.iter().map(|&w| w as u32).collect()),
        ElementType::U64 => Literal::from_vec(&shape, words),
        ElementType::F16 => {
            Literal::from_vec(&shape, words.iter().map(|&w| half::f16::from_bits(w as u16)).collect())
        }
        ElementType::Bf16 => {
            Literal::from_vec(&shape, words.iter().map(|&w| half::bf16::from_bits(w as u16)).collect())
        }
        ElementType::F32 => {
            Literal::from_vec(&shape, words.iter().map(|&w| f32::from_bits(w as u32)).collect())
        }
        ElementType::F64 => Literal::from_vec(&shape, words.iter().map(|&w| f64::from_bits(w)).collect()),
    };
    Some(literal.expect("a golden array fits its shape"))
}

/// A literal's elements as bit patterns (floats by their bits, so NaNs and -0 compare exactly),
/// in logical order.
pub fn bits(literal: &Literal) -> Vec<u64> {
    match literal.element_type() {
        ElementType::Pred => literal.to_vec::<bool>().unwrap().into_iter().map(u64::from).collect(),
        ElementType::S8 => literal.to_vec::<i8>().unwrap().into_iter().map(|v| v as u64).collect(),
        ElementType::S16 => literal.to_vec::<i16>().unwrap().into_iter().map(|v| v as u64).collect(),
        ElementType::S32 => literal.to_vec::<i32>().unwrap().into_iter().map(|v| v as u64).collect(),
        ElementType::S64 => literal.to_vec::<i64>().unwrap().into_iter().map(|v| v as u64).collect(),
        ElementType::U8 => literal.to_vec::<u8>().unwrap().into_iter().map(u64::from).collect(),
        ElementType::U16 => literal.to_vec::<u16>().unwrap().into_iter().map(u64::from).collect(),
        ElementType::U32 => literal.to_vec::<u32>().unwrap().into_iter().map(u64::from).collect(),
        ElementType::U64 => literal.to_vec::<u64>().unwrap(),
        ElementType::F16 => {
            literal.to_vec::<half::f16>().unwrap().into_iter().map(|v| u64::from(v.to_bits())).collect()
        }
        ElementType::Bf16 => {
            literal.to_vec::<half::bf16>().unwrap().into_iter().map(|v| u64::from(v.to_bits())).collect()
        }
        ElementType::F32 => {
            literal.to_vec::<f32>().unwrap().into_iter().map(|v| u64::from(v.to_bits())).collect()
        }
        ElementType::F64 => literal.to_vec::<f64>().unwrap().into_iter().map(f64::to_bits).collect(),
    }
}

/// The leaves of a literal (a tuple's elements, depth first; an array is its own leaf).
pub fn leaves(literal: &Literal) -> Vec<&Literal> {
    if !literal.is_tuple() {
        return vec![literal];
    }
    (0..literal.shape().tuple_shapes().len())
        .flat_map(|i| leaves(literal.tuple_element(i).unwrap()))
        .collect()
}
