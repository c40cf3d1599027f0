//! Differential fuzzing: random valid graphs over the whole op set of the first wave (13 element
//! types, random layouts and padding, broadcasting, movement ops, reduces with simple and
//! interpreted reducers, dots), each built with the public API and run fused, unfused and with
//! `execute_into`, against an independent reference interpreter (`tests/common/`).
//!
//! The normal run checks [`NORMAL_CASES`] graphs (3–6 s of the debug build, which uses
//! opt-level 1, on one core of this 2-core machine). The soak test runs 100,000 by default
//! (about 50 s), or `LAZY_XLA_FUZZ_CASES`:
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

use std::sync::atomic::{AtomicUsize, Ordering};

use common::check::{check, report, Failure};
use common::generate::generate;
use common::minimize::minimize;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestError, TestRunner};

/// Graphs in the normal run.
const NORMAL_CASES: u32 = 10_000;

/// Graphs in the soak run unless `LAZY_XLA_FUZZ_CASES` says otherwise.
const SOAK_CASES: u32 = 100_000;

/// Open lazy-xla bugs: a piece of the failure's class, and what it is. Remove an entry when the
/// bug is fixed (its regression test in `fuzz_regressions.rs` then loses its `#[ignore]`).
const KNOWN_BUGS: &[(&str, &str)] = &[];

fn known_bug(failure: &Failure) -> Option<&'static str> {
    let class = failure.class();
    KNOWN_BUGS.iter().find(|(piece, _)| class.contains(piece)).map(|(_, what)| *what)
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
    let known = AtomicUsize::new(0);
    let mut runner = TestRunner::new(config);
    let numbers = (vec(any::<u32>(), 0..300), vec(any::<u32>(), 0..48));
    let result = runner.run(&numbers, |(structure, values)| match check(&generate(&structure, &values)) {
        Ok(()) => Ok(()),
        Err(failure) if known_bug(&failure).is_some() => {
            known.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
        Err(failure) => Err(TestCaseError::fail(failure.class())),
    });
    let known = known.into_inner();
    if known > 0 {
        eprintln!("{known} graphs hit known lazy-xla bugs: {KNOWN_BUGS:?}");
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

/// What the generator makes: ops and element types per step, and how much of the results the
/// reference pins (exact), bounds, or leaves open. Run with `--ignored statistics --nocapture`.
#[test]
#[ignore = "prints the generator's coverage"]
fn statistics() {
    use proptest::strategy::ValueTree;
    use std::collections::BTreeMap;
    let mut runner = TestRunner::new(Config { cases: 1, ..Config::default() });
    let numbers = (vec(any::<u32>(), 0..300), vec(any::<u32>(), 0..48));
    let (mut ops, mut types) = (BTreeMap::new(), BTreeMap::new());
    let (mut exact, mut bounded, mut unknown, mut steps) = (0usize, 0usize, 0usize, 0usize);
    // Graphs with a value longer than a loop's piece of 1024 elements.
    let mut large = 0usize;
    let graphs = 2000;
    for _ in 0..graphs {
        let (structure, values) = numbers.new_tree(&mut runner).expect("numbers").current();
        let recipe = generate(&structure, &values);
        let arrays = common::reference::evaluate(&recipe);
        steps += recipe.steps.len();
        large += usize::from(arrays.iter().any(|array| array.elems.len() > 1024));
        for (step, array) in recipe.steps.iter().zip(&arrays) {
            *ops.entry(step.name()).or_insert(0) += 1;
            *types.entry(array.ty.to_string()).or_insert(0) += 1;
        }
        for e in &arrays[recipe.root].elems {
            match (e.is_exact(), e.is_unknown()) {
                (true, _) => exact += 1,
                (_, true) => unknown += 1,
                _ => bounded += 1,
            }
        }
    }
    println!("{graphs} graphs, {:.1} steps each", steps as f64 / graphs as f64);
    println!("steps by op: {ops:?}");
    println!("values by element type: {types:?}");
    println!("root elements: {exact} exact, {bounded} bounded, {unknown} unknown");
    println!("graphs with a value over 1024 elements: {large}");
}
