//! `rng_bit_generator`, bit for bit against 110 vectors taken from XLA's CPU backend (jaxlib
//! 0.6.0; `tests/data/xla_rng_bit_generator.json`): ThreeFry, Philox and Default, u8 to u64,
//! ranks 0 to 3, odd sizes, counters that carry.

use lazy_xla::*;
use serde_json::Value as Json;

fn cases() -> Vec<Json> {
    let text = include_str!("data/xla_rng_bit_generator.json");
    let golden: Json = serde_json::from_str(text).expect("golden JSON");
    golden["cases"].as_array().expect("cases").clone()
}

fn u64s(json: &Json) -> Vec<u64> {
    json.as_array()
        .expect("a list")
        .iter()
        .map(|v| v.as_str().expect("a decimal string").parse().unwrap())
        .collect()
}

/// The bits of `literal` (of an unsigned type) as u64s, in logical order.
fn bits(literal: &Literal) -> Vec<u64> {
    match literal.element_type() {
        ElementType::U8 => literal.to_vec::<u8>().unwrap().into_iter().map(u64::from).collect(),
        ElementType::U16 => literal.to_vec::<u16>().unwrap().into_iter().map(u64::from).collect(),
        ElementType::U32 => literal.to_vec::<u32>().unwrap().into_iter().map(u64::from).collect(),
        ElementType::U64 => literal.to_vec::<u64>().unwrap(),
        other => panic!("bits of type {other}"),
    }
}

#[test]
fn every_vector_matches_xla_bit_for_bit() -> Result<()> {
    let mut checked = 0;
    for case in cases() {
        let algorithm = match case["algorithm"].as_str().unwrap() {
            "three_fry" => RandomAlgorithm::ThreeFry,
            "philox" => RandomAlgorithm::Philox,
            _ => RandomAlgorithm::Default,
        };
        // XLA's 4-bit types have no lazy-xla counterpart.
        let Ok(requested) = case["requested_type"].as_str().unwrap().parse::<ElementType>() else { continue };
        let dims: Vec<i64> = case["dims"].as_array().unwrap().iter().map(|d| d.as_i64().unwrap()).collect();
        let state = u64s(&case["initial_state"]);
        let b = XlaBuilder::new("bits");
        let s = b.parameter(0, &Shape::new(ElementType::U64, &[state.len() as i64]), "state");
        let generated = rng_bit_generator(algorithm, s, &Shape::new(requested, &dims));
        let result_shape = b.get_shape(generated)?;
        assert_eq!(result_shape.to_string(), case["result_shape"].as_str().unwrap(), "{case}");
        let computation = b.build(generated)?;
        let out = computation.compile(&CompileOptions::default())?.execute(&[&Literal::vec1(&state)])?;
        assert_eq!(out.tuple_element(0)?.to_vec::<u64>()?, u64s(&case["new_state"]), "{case}");
        let got = bits(out.tuple_element(1)?);
        if let Some(expected) = case.get("bits") {
            assert_eq!(got, u64s(expected), "{case}");
        } else {
            let count = case["count"].as_u64().unwrap() as usize;
            assert_eq!(got.len(), count);
            assert_eq!(got[..8], u64s(&case["first8"])[..], "{case}");
            assert_eq!(got[count - 8..], u64s(&case["last8"])[..], "{case}");
        }
        checked += 1;
    }
    assert!(checked >= 100, "only {checked} vectors checked");
    Ok(())
}

#[test]
fn the_state_advances_and_layouts_do_not_change_values() -> Result<()> {
    let b = XlaBuilder::new("bits");
    let state = b.parameter(0, &shape!(u64[2]), "state");
    let first = rng_bit_generator(RandomAlgorithm::Philox, state, &shape!(f32[3, 5]{0, 1}));
    let second = rng_bit_generator(RandomAlgorithm::Philox, get_tuple_element(first, 0), &shape!(u32[3, 5]));
    assert_eq!(b.get_shape(first)?.to_string(), "(u64[2]{0}, u32[3,5]{0,1})");
    let computation = b.build(tuple(&b, &[get_tuple_element(first, 1), get_tuple_element(second, 1)]))?;
    let out = computation.compile(&CompileOptions::default())?.execute(&[&Literal::vec1(&[7u64, 9])])?;
    let (a, c) = (out.tuple_element(0)?.to_vec::<u32>()?, out.tuple_element(1)?.to_vec::<u32>()?);
    assert_ne!(a, c, "a new state gives new bits");
    // The values are logical: the layout of the requested shape changes only the memory order.
    let b = XlaBuilder::new("row_major");
    let state = b.parameter(0, &shape!(u64[2]), "state");
    let row_major =
        b.build(get_tuple_element(rng_bit_generator(RandomAlgorithm::Philox, state, &shape!(u32[3, 5])), 1))?;
    let again = row_major.compile(&CompileOptions::default())?.execute(&[&Literal::vec1(&[7u64, 9])])?;
    assert_eq!(again.to_vec::<u32>()?, a);
    Ok(())
}

#[test]
fn bad_states_and_shapes_get_clear_errors() {
    let cases: [(RandomAlgorithm, Shape, Shape, &str); 4] = [
        (RandomAlgorithm::ThreeFry, shape!(u64[3]), shape!(u32[2]), "Expected state shape to match between input and output for RngBitGenerator. Got u64[3] vs. u64[2]"),
        (RandomAlgorithm::Philox, shape!(u32[4]), shape!(u32[2]), "Expected state shape to match between input and output for RngBitGenerator. Got u32[4] vs. u64[2] or u64[3]"),
        (RandomAlgorithm::Default, shape!(u64[2]), Shape::tuple(&[shape!(u32[3])]), "Unsupported shape for RngBitGenerator: TUPLE"),
        (RandomAlgorithm::Default, shape!(u64[2]), shape!(pred[3]), "Unsupported shape for RngBitGenerator: PRED"),
    ];
    for (algorithm, state, shape, sentence) in cases {
        let b = XlaBuilder::new("bits");
        let s = b.parameter(0, &state, "state");
        let bad = rng_bit_generator(algorithm, s, &shape);
        let error = b.build(bad).unwrap_err().to_string();
        assert!(error.starts_with(sentence), "{sentence}\n{error}");
    }
}
