//! `shape!` rejects malformed shapes at compile time, with the error on the culprit.
//! Each `tests/ui/*.rs` must fail to compile with exactly its `.stderr`; regenerate those with
//! `TRYBUILD=overwrite cargo test -p lazy-xla-macros` and read them before committing.

#[test]
fn shape_macro_rejects_malformed_shapes() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
