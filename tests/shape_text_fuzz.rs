//! Mutation fuzzing of the shape text parser and the index maps: valid shape strings of many
//! forms are mutated (bit flips, inserted, deleted and duplicated bytes, splices of other
//! strings, tokens that parsers trip on, arbitrary bytes made into a string lossily) and
//! `s.parse::<Shape>()` must return `Ok` or `Err`, never panic; an `Ok` shape must print and
//! parse back to itself, and `linear_index`/`multi_index` must never panic, whatever the index,
//! and must invert each other on the shape's elements.

mod common;

use common::check::catch;
use lazy_xla::Shape;
use proptest::collection::vec;
use proptest::prelude::*;

/// Valid (and a few almost valid) shape strings to start from.
const SEEDS: &[&str] = &[
    "f32[2,3]{0,1}",
    "f32[2,3]{1,0}",
    "f32[2,3]",
    "f32[]",
    "pred[]",
    "s8[0]",
    "u64[1,1,1,1]{0,1,2,3}",
    "bf16[4,0,2]{2,0,1}",
    "f16[5]{0}",
    "s16[3,4]{0,1:pad(3,5)=zero}",
    "f32[2,3]{0,1:pad(3,5)=zero}",
    "f64[2,2]{1,0:pad(2,9)=one}",
    "u8[7]{0:pad(8)=lowest}",
    "s64[1,2,3]{2,1,0:pad(1,2,3)=highest}",
    "f32[]{:pad()=zero}",
    "f32[2, 3] {0, 1}",
    "f32[<=5]",
    "f32[?,3]",
    "f32[9223372036854775807]",
    "f32[4294967296,4294967296]",
    "u32[999999999999999999999]",
    "f32[-1]",
    "(f32[2], s32[])",
    "f32[2,3]{0,1:T(2,128)}",
    "c64[2]",
];

/// Fragments that parsers trip on.
const TOKENS: &[&str] = &[
    "-",
    "-1",
    "0",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551616",
    ",",
    "[",
    "]",
    "{",
    "}",
    ":",
    "(",
    ")",
    "=",
    "pad(",
    "=zero",
    "<=",
    "?",
    " ",
    "\t",
    "\u{a0}",
    "é",
    "\u{1F600}",
    "\0",
    "f32",
    "pred",
];

/// One edit of a byte string.
#[derive(Clone, Debug)]
enum Mutation {
    Flip { at: usize, bit: u8 },
    Insert { at: usize, byte: u8 },
    Delete { at: usize },
    Duplicate { at: usize, len: usize },
    Splice { at: usize, seed: usize, from: usize, len: usize },
    Token { at: usize, token: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::Flip { at, bit }),
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Insert { at, byte }),
        any::<usize>().prop_map(|at| Mutation::Delete { at }),
        (any::<usize>(), 1usize..8).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        (any::<usize>(), 0..SEEDS.len(), any::<usize>(), 1usize..12)
            .prop_map(|(at, seed, from, len)| Mutation::Splice { at, seed, from, len }),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(at, token)| Mutation::Token { at, token }),
    ]
}

impl Mutation {
    fn apply(&self, bytes: &mut Vec<u8>) {
        let position = |at: usize, len: usize| at % (len + 1);
        match *self {
            Mutation::Flip { at, bit } if !bytes.is_empty() => {
                let i = at % bytes.len();
                bytes[i] ^= 1 << bit;
            }
            Mutation::Insert { at, byte } => bytes.insert(position(at, bytes.len()), byte),
            Mutation::Delete { at } if !bytes.is_empty() => {
                bytes.remove(at % bytes.len());
            }
            Mutation::Duplicate { at, len } if !bytes.is_empty() => {
                let start = at % bytes.len();
                let piece: Vec<u8> = bytes[start..(start + len).min(bytes.len())].to_vec();
                bytes.splice(start..start, piece);
            }
            Mutation::Splice { at, seed, from, len } => {
                let other = SEEDS[seed].as_bytes();
                let start = from % other.len();
                let piece = &other[start..(start + len).min(other.len())];
                let at = position(at, bytes.len());
                bytes.splice(at..at, piece.iter().copied());
            }
            Mutation::Token { at, token } => {
                let at = position(at, bytes.len());
                bytes.splice(at..at, TOKENS[token].bytes());
            }
            _ => {}
        }
    }
}

/// Indices to try: the right rank or not, in range or not, negative, huge.
fn index_strategy() -> impl Strategy<Value = Vec<i64>> {
    vec(prop_oneof![0i64..6, -3i64..0, Just(i64::MAX), Just(i64::MIN), any::<i64>()], 0..6)
}

/// The parser, printer and index maps on one string: never a panic, and the round trips hold.
fn check_text(text: &str, indices: &[Vec<i64>], linears: &[i64]) -> Result<(), TestCaseError> {
    let parsed = catch(|| text.parse::<Shape>());
    let parsed =
        parsed.map_err(|panic| TestCaseError::fail(format!("parsing {text:?} panicked: {panic}")))?;
    let Ok(shape) = parsed else {
        return Ok(());
    };
    let printed =
        catch(|| shape.to_string()).map_err(|p| TestCaseError::fail(format!("printing {text:?}: {p}")))?;
    let reparsed = catch(|| printed.parse::<Shape>()).map_err(|p| {
        TestCaseError::fail(format!("parsing {printed:?} (printed from {text:?}) panicked: {p}"))
    })?;
    prop_assert_eq!(
        reparsed.as_ref().ok(),
        Some(&shape),
        "{:?} printed as {:?}, which parses to {:?}",
        text,
        printed,
        reparsed
    );
    for index in indices {
        let linear = catch(|| shape.linear_index(index))
            .map_err(|p| TestCaseError::fail(format!("{shape}.linear_index({index:?}) panicked: {p}")))?;
        if let Ok(linear) = linear {
            let back = catch(|| shape.multi_index(linear))
                .map_err(|p| TestCaseError::fail(format!("{shape}.multi_index({linear}) panicked: {p}")))?;
            let back = back.ok();
            prop_assert_eq!(back.as_ref(), Some(index), "{}: {:?} -> {} -> back", shape, index, linear);
        }
    }
    for &linear in linears {
        let _ = catch(|| shape.multi_index(linear))
            .map_err(|p| TestCaseError::fail(format!("{shape}.multi_index({linear}) panicked: {p}")))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 50_000, ..ProptestConfig::default() })]

    #[test]
    fn mutated_shape_text_parses_or_errs(
        seed in 0..SEEDS.len(),
        mutations in vec(mutation(), 0..6),
        indices in vec(index_strategy(), 0..6),
        linears in vec(prop_oneof![0i64..200, any::<i64>()], 0..6),
    ) {
        let mut bytes = SEEDS[seed].as_bytes().to_vec();
        for m in &mutations {
            m.apply(&mut bytes);
        }
        check_text(&String::from_utf8_lossy(&bytes), &indices, &linears)?;
    }

    #[test]
    fn arbitrary_bytes_parse_or_err(bytes in vec(any::<u8>(), 0..40)) {
        check_text(&String::from_utf8_lossy(&bytes), &[], &[])?;
    }
}

/// Every element of every seed that parses: `linear_index` and `multi_index` invert each other,
/// and positions past the buffer are errors.
#[test]
fn index_maps_invert_each_other_on_every_seed() {
    for text in SEEDS {
        let Ok(shape) = text.parse::<Shape>() else { continue };
        if shape.is_tuple() || shape.element_count() > 1000 {
            continue;
        }
        let indices = common::reference::indices(shape.dimensions());
        let mut linears: Vec<i64> =
            indices.iter().map(|index| shape.linear_index(index).expect("an index in range")).collect();
        for (index, &linear) in indices.iter().zip(&linears) {
            assert_eq!(&shape.multi_index(linear).expect("a position of an element"), index, "{text}");
        }
        linears.sort_unstable();
        linears.dedup();
        assert_eq!(linears.len(), indices.len(), "{text}: two elements at one position");
        assert!(shape.multi_index(shape.buffer_len()).is_err(), "{text}: past the buffer");
        assert!(shape.multi_index(-1).is_err(), "{text}: a negative position");
    }
}
