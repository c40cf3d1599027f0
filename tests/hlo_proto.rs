//! `XlaComputation::to_hlo_proto` and `from_hlo_proto` (the `pjrt` feature): every module of
//! `examples/hlo/` and random builder-made graphs of every op family (the differential
//! fuzzer's generator) round-trip to the same HLO text and the same bytes; truncated and
//! mutated bytes are refused with an `Error` or read, never a panic. (That XLA itself reads
//! and runs these protos is checked by `scripts/check_hlo_proto.py`, outside the tests.)
#![cfg(feature = "pjrt")]

mod common;

use std::path::{Path, PathBuf};

use common::generate::generate;
use common::recipe::build;
use lazy_xla::{dot_with, ElementType, Error, Precision, PrecisionConfig, Shape, XlaBuilder, XlaComputation};
use proptest::collection::vec;
use proptest::prelude::*;

/// Every `.hlo` file of `examples/hlo/` and `examples/hlo/programs/`.
fn example_modules() -> Vec<PathBuf> {
    let mut found = Vec::new();
    for folder in ["examples/hlo", "examples/hlo/programs"] {
        for entry in
            std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(folder)).expect("the folder")
        {
            let path = entry.expect("an entry").path();
            if path.extension().is_some_and(|e| e == "hlo") {
                found.push(path);
            }
        }
    }
    found.sort();
    assert!(found.len() >= 15, "examples/hlo/ holds its modules: {found:?}");
    found
}

fn import(path: &Path) -> XlaComputation {
    let text = std::fs::read_to_string(path).expect("the module");
    XlaComputation::from_hlo_text(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The proto reads back to the same text, and writes the same bytes again (lazy-xla's
/// padding, which XLA has not, is left out of both, as the text leaves it out).
fn assert_round_trips(computation: &XlaComputation, what: &str) {
    let bytes = computation.to_hlo_proto();
    let back = XlaComputation::from_hlo_proto(&bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(back.to_hlo_text(), computation.to_hlo_text(), "{what}");
    assert_eq!(back.to_hlo_proto(), bytes, "{what}: the bytes of the proto read back");
}

#[test]
fn every_example_module_round_trips() {
    for path in example_modules() {
        assert_round_trips(&import(&path), &path.display().to_string());
    }
}

#[test]
fn precision_configs_of_any_length_round_trip() {
    use Precision::{Default, Highest};
    for operand_precision in [vec![], vec![Default; 3], vec![Highest], vec![Default, Default, Highest]] {
        let builder = XlaBuilder::new("dot");
        let shape = Shape::new(ElementType::F32, &[2, 2]);
        let (x, y) = (builder.parameter(0, &shape, "x"), builder.parameter(1, &shape, "y"));
        let config = PrecisionConfig { operand_precision: operand_precision.clone() };
        let computation = builder.build(dot_with(x, y, Some(&config), None)).expect("a dot");
        assert_round_trips(&computation, &format!("{operand_precision:?}"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random graphs over every op family the builder has (the differential fuzzer's
    /// generator: parameters of random layouts, constants of every element type, element-wise
    /// ops, movement, gather and scatter, reductions and windows, dots and convolutions with
    /// precision configs, sort and top-k, loops, conditionals, calls and maps, tuples).
    #[test]
    fn random_builder_graphs_round_trip((structure, values) in (vec(any::<u32>(), 0..1000), vec(any::<u32>(), 0..48))) {
        let recipe = generate(&structure, &values);
        let built = build(&recipe).expect("a generated recipe builds");
        assert_round_trips(&built.computation, &built.computation.to_hlo_text());
    }
}

#[test]
fn every_prefix_of_a_proto_is_refused_or_read_without_panicking() {
    for path in example_modules().iter().take(3) {
        let bytes = import(path).to_hlo_proto();
        for length in 0..bytes.len() {
            match XlaComputation::from_hlo_proto(&bytes[..length]) {
                Ok(_) | Err(Error::HloProto(_) | Error::InvalidComputation { .. }) => {}
                Err(other) => panic!("{} cut at {length}: an unexpected error {other:?}", path.display()),
            }
        }
    }
}

#[test]
fn mutated_protos_are_refused_or_read_without_panicking() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut refused = 0;
    let mut total = 0;
    for path in example_modules() {
        let bytes = import(&path).to_hlo_proto();
        for _ in 0..150 {
            let mut mutated = bytes.clone();
            for _ in 0..1 + next() % 3 {
                let at = (next() % mutated.len() as u64) as usize;
                match next() % 3 {
                    0 => mutated[at] = next() as u8,
                    1 => mutated[at] ^= 1 << (next() % 8),
                    _ => mutated[at] = 0xff,
                }
            }
            total += 1;
            if let Ok(computation) = XlaComputation::from_hlo_proto(&mutated) {
                // What is read is a valid computation: it prints and writes again.
                let _ = computation.to_hlo_text();
                let _ = computation.to_hlo_proto();
            } else {
                refused += 1;
            }
        }
    }
    assert!(refused > total / 4, "most mutations are refused ({refused} of {total})");
}

#[test]
fn refusals_say_what_is_wrong() {
    let cases: [(&[u8], &str); 3] = [
        (&[], "module \"\" has no computations"),
        (&[0x1a, 0x05, 0x0a], "the bytes are not a serialized HloModuleProto"),
        (&[0x0a, 0x80], "the bytes are not a serialized HloModuleProto"),
    ];
    for (bytes, expected) in cases {
        let error = XlaComputation::from_hlo_proto(bytes).unwrap_err();
        assert!(matches!(error, Error::HloProto(_)), "{error:?}");
        assert!(error.to_string().contains(expected), "{error} should say {expected}");
    }
}
