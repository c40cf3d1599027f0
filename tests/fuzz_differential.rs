//! Differential fuzzing: random valid graphs over every op of API.md — element-wise ops (13
//! element types, broadcasting, bitcasts, reduce_precision), movement ops and dynamic slices,
//! gather and scatter, reduces (simple, interpreted and variadic), window ops, dots and
//! convolutions with precision configs and preferred types, sort and top_k, random bits, while
//! loops, conditionals, call and map, tuples — each built with the public API and run fused,
//! unfused and with `execute_into` (random layouts and padding of arguments and outputs),
//! against an independent reference interpreter (`tests/common/`).
//!
//! The normal run checks [`NORMAL_CASES`] graphs (about 30 s of the debug build, which uses
//! opt-level 1, on one core of this 2-core machine). The soak test runs [`SOAK_CASES`] by
//! default (about two minutes), or `LAZY_XLA_FUZZ_CASES`:
//!
//! ```text
//! cargo test --test fuzz_differential -- --ignored soak --nocapture
//! LAZY_XLA_FUZZ_CASES=1000000 cargo test --test fuzz_differential -- --ignored soak --nocapture
//! cargo test --test fuzz_differential -- --ignored statistics --nocapture   # what it generates
//! ```
//!
//! A failure is shrunk twice (proptest shrinks the generator's number lists, then
//! `common::minimize` cuts the graph down) and printed as a Rust program over the public API,
//! with the expected values, ready to become a test in `tests/fuzz_regressions.rs`. proptest
//! keeps the failing numbers in `fuzz_differential.proptest-regressions` and tries them first
//! on the next run. Failures of a known open lazy-xla bug ([`KNOWN_BUGS`]) are counted and
//! printed but pass, so that the fuzzer keeps looking for new ones.

mod common;

use std::collections::BTreeMap;
use std::sync::Mutex;

use common::check::{check, report, Failure};
use common::generate::generate;
use common::minimize::minimize;
use common::recipe::Recipe;
use common::reference::random::random_bits;
use lazy_xla::{ElementType, RandomAlgorithm};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestError, TestRunner};
use serde_json::Value as Json;

/// Graphs in the normal run.
const NORMAL_CASES: u32 = 30_000;

/// Graphs in the soak run unless `LAZY_XLA_FUZZ_CASES` says otherwise.
const SOAK_CASES: u32 = 100_000;

/// An open lazy-xla bug the fuzzer knows: what it is, pieces of the classes of the failures it
/// causes, and which recipes can trigger it. Remove an entry when the bug is fixed (its
/// regression test in `fuzz_regressions.rs` then loses its `#[ignore]`).
struct KnownBug {
    what: &'static str,
    classes: &'static [&'static str],
    triggered_by: fn(&Recipe) -> bool,
}

/// The open lazy-xla bugs: a failure of their class in a recipe that can trigger them is
/// counted and printed but passes, so that the fuzzer keeps looking for new ones.
const KNOWN_BUGS: &[KnownBug] = &[];

/// The known bug that explains `failure` of `recipe`, if any.
fn known_bug(recipe: &Recipe, failure: &Failure) -> Option<&'static str> {
    let class = failure.class();
    (KNOWN_BUGS.iter())
        .find(|bug| bug.classes.iter().any(|piece| class.contains(piece)) && (bug.triggered_by)(recipe))
        .map(|bug| bug.what)
}

/// The generator's inputs: the structure's numbers and the values'.
fn numbers() -> impl Strategy<Value = (Vec<u32>, Vec<u32>)> {
    (vec(any::<u32>(), 0..1000), vec(any::<u32>(), 0..48))
}

/// Checks `cases` random graphs; panics with a minimized report on the first new failure.
fn fuzz(cases: u32) {
    let config = Config {
        cases,
        max_shrink_iters: 2048,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        source_file: Some(file!()),
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    // Per known bug and the ops of the results of the graphs it failed.
    let hits: Mutex<BTreeMap<(&str, String), usize>> = Mutex::default();
    let result = runner.run(&numbers(), |(structure, values)| {
        let recipe = generate(&structure, &values);
        match check(&recipe) {
            Ok(()) => Ok(()),
            Err(failure) => match known_bug(&recipe, &failure) {
                Some(what) => {
                    let ops: Vec<&str> = recipe.results.iter().map(|&r| recipe.steps[r].name()).collect();
                    *hits.lock().expect("the counts").entry((what, ops.join(", "))).or_insert(0) += 1;
                    Ok(())
                }
                None => Err(TestCaseError::fail(failure.class())),
            },
        }
    });
    let mut by_bug: BTreeMap<&str, Vec<(String, usize)>> = BTreeMap::new();
    for ((what, ops), n) in hits.into_inner().expect("the counts") {
        by_bug.entry(what).or_default().push((ops, n));
    }
    for (what, results) in by_bug {
        let total: usize = results.iter().map(|(_, n)| n).sum();
        let results: Vec<String> = results.iter().map(|(ops, n)| format!("{ops} ×{n}")).collect();
        eprintln!(
            "{total} graphs hit the known lazy-xla bug: {what} (their results: {})",
            results.join("; ")
        );
    }
    match result {
        Ok(()) => {}
        Err(TestError::Fail(_, (structure, values))) => {
            let recipe = generate(&structure, &values);
            let failure = check(&recipe).expect_err("the shrunk case fails");
            let small = minimize(&recipe, &failure.class());
            let small_failure = check(&small).expect_err("the minimized case fails");
            panic!(
                "{}\n\n(from the generator's numbers {structure:?} / {values:?})",
                report(&small, &small_failure)
            );
        }
        Err(other) => panic!("{other}"),
    }
}

#[test]
fn random_graphs_agree_with_the_reference() {
    fuzz(NORMAL_CASES);
}

#[test]
#[ignore = "soak: 100,000 graphs (LAZY_XLA_FUZZ_CASES to change), minutes"]
fn soak() {
    let cases = std::env::var("LAZY_XLA_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(SOAK_CASES);
    fuzz(cases);
}

/// The reference's Threefry and Philox (`common/reference/random.rs`) against XLA's own
/// outputs (jaxlib 0.6.0's CPU backend, `tests/data/xla_rng_bit_generator.json`), bit for bit:
/// the new state and every bit, or the first and last eight of a long request.
#[test]
fn the_reference_rng_matches_xla_bit_for_bit() {
    let golden: Json = serde_json::from_str(include_str!("data/xla_rng_bit_generator.json")).expect("JSON");
    let words = |json: &Json| -> Vec<u64> {
        json.as_array()
            .expect("a list")
            .iter()
            .map(|v| v.as_str().expect("a number").parse().expect("u64"))
            .collect()
    };
    let mut checked = 0;
    for case in golden["cases"].as_array().expect("cases") {
        // XLA's 4-bit types have no lazy-xla counterpart.
        let Ok(requested) = case["requested_type"].as_str().expect("a type").parse::<ElementType>() else {
            continue;
        };
        let algorithm = match case["algorithm"].as_str().expect("an algorithm") {
            "three_fry" => RandomAlgorithm::ThreeFry,
            "philox" => RandomAlgorithm::Philox,
            _ => RandomAlgorithm::Default,
        };
        let dims: Vec<i64> =
            case["dims"].as_array().expect("dims").iter().map(|d| d.as_i64().expect("a size")).collect();
        let bits = 8 * requested.byte_size() as u32;
        let (state, values) = random_bits(algorithm, &words(&case["initial_state"]), &dims, bits);
        assert_eq!(state, words(&case["new_state"]), "{case}");
        match case.get("bits") {
            Some(expected) => assert_eq!(values, words(expected), "{case}"),
            None => {
                let n = values.len();
                assert_eq!(n as u64, case["count"].as_u64().expect("a count"), "{case}");
                assert_eq!(values[..8], words(&case["first8"])[..], "{case}");
                assert_eq!(values[n - 8..], words(&case["last8"])[..], "{case}");
            }
        }
        checked += 1;
    }
    assert!(checked >= 100, "only {checked} vectors checked");
}

/// What the generator makes: ops and their attributes (`op/feature`) per step, element types,
/// and how much of the results the reference pins (exact), bounds, or leaves open. Run with
/// `--ignored statistics --nocapture`.
#[test]
#[ignore = "prints the generator's coverage"]
fn statistics() {
    use proptest::strategy::ValueTree;
    let mut runner = TestRunner::new(Config { cases: 1, ..Config::default() });
    let (mut ops, mut features, mut types) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    let (mut exact, mut bounded, mut unknown, mut steps, mut tuples) =
        (0usize, 0usize, 0usize, 0usize, 0usize);
    // Graphs with a value longer than a loop's piece of 1024 elements.
    let mut large = 0usize;
    let graphs = 5000;
    for _ in 0..graphs {
        let (structure, values) = numbers().new_tree(&mut runner).expect("numbers").current();
        let recipe = generate(&structure, &values);
        let arrays = common::reference::evaluate(&recipe);
        let describe = |id: usize| (arrays[id].ty, arrays[id].dims.clone());
        steps += recipe.steps.len();
        tuples += usize::from(recipe.tuple);
        large += usize::from(arrays.iter().any(|array| array.elems.len() > 1024));
        for (step, array) in recipe.steps.iter().zip(&arrays) {
            *ops.entry(step.name()).or_insert(0) += 1;
            for feature in step.features(&describe) {
                *features.entry(feature).or_insert(0) += 1;
            }
            *types.entry(array.ty.to_string()).or_insert(0) += 1;
        }
        for e in recipe.results.iter().flat_map(|&r| &arrays[r].elems) {
            match (e.is_exact(), e.is_unknown()) {
                (true, _) => exact += 1,
                (_, true) => unknown += 1,
                _ => bounded += 1,
            }
        }
    }
    println!("{graphs} graphs, {:.1} steps each, {tuples} with a tuple root", steps as f64 / graphs as f64);
    println!("steps by op:");
    for (op, n) in &ops {
        println!("  {op}: {n}");
    }
    println!("attributes and forms:");
    for (feature, n) in &features {
        println!("  {feature}: {n}");
    }
    println!("values by element type: {types:?}");
    println!("result elements: {exact} exact, {bounded} bounded, {unknown} unknown");
    println!("graphs with a value over 1024 elements: {large}");
}
