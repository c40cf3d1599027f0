//! `examples/tour.rs` walks the whole library: pin the lines that carry its facts, at a small
//! size of the timed workload.

#[allow(dead_code)]
#[path = "../examples/tour.rs"]
mod tour;

/// The tour with W1 at 16×16 and one timed run, or the error that stopped it.
fn tour() -> String {
    tour::tour(16, 1).unwrap_or_else(|error| panic!("the tour failed: {error}"))
}

/// The part of `text` from the heading `start` up to the heading `end`.
fn section<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(&format!("\n{start}\n")).unwrap_or_else(|| panic!("missing {start:?} in\n{text}"));
    let to = text[from..].find(&format!("\n{end}\n")).unwrap_or_else(|| panic!("missing {end:?} in\n{text}"));
    &text[from..from + to]
}

/// Asserts that every one of `expected` is a whole line of `text`.
fn assert_lines(text: &str, expected: &[&str]) {
    for line in expected {
        assert!(text.lines().any(|l| l == *line), "missing line {line:?} in\n{text}");
    }
}

const HEADINGS: [&str; 10] = [
    "1. Shapes and the shape! macro",
    "2. Literals",
    "3. Building a small model, with eager shape inference",
    "4. An error, with its file:line",
    "5. The HLO text of the built computation",
    "6. Compile and execute",
    "7. execute_into: a reused output, in the output's own layout",
    "8. The optimized HLO: exe.to_hlo_text()",
    "9. Fused against unfused",
    "10. Derivatives: grad (value_and_grad, vjp and jvp alike)",
];

#[test]
fn the_gradient_is_the_derivative_by_hand() {
    let text = tour();
    assert_lines(
        &text,
        &[
            "grad(&f, &[0])                  : (x: f32[3], w: f32[3]) -> (f32[3])",
            "equal to (1 - tanh(x)^2) * w within 1e-6: true",
        ],
    );
}

#[test]
fn sections_come_in_order() {
    let text = tour();
    let positions: Vec<usize> = HEADINGS
        .iter()
        .map(|h| text.find(&format!("\n{h}\n")).unwrap_or_else(|| panic!("missing heading {h:?}")))
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
}

#[test]
fn shapes_and_literals() {
    let text = tour();
    assert_lines(
        &text,
        &[
            "shape!(f32[rows, 3])     = f32[2,3]{1,0}   (default layout: row-major)",
            "shape!(f32[2, 3]{0, 1})  = f32[2,3]{0,1}   (column-major: dimension 0 is minor)",
            "\"f32[2,3]{0,1}\".parse() = f32[2,3]{0,1}   (XLA's text form, both ways; equal: true)",
            "f32[2,3]{0,1}: index [1, 2] is at linear position 5 in memory",
            "its memory (column-major) = [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]",
            "its values (logical)      = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]",
            "Literal::scalar(7.0f32) = f32[] 7;  Literal::vec1(&[1, 2, 3]) = s32[3] {1, 2, 3}",
        ],
    );
}

#[test]
fn shapes_are_inferred_as_ops_are_made() {
    let text = tour();
    assert_lines(
        &text,
        &[
            "    w = parameter 1 (column-major)     : f32[3,4]{0,1}",
            "    xw = dot(x, w)                     : f32[2,4]{1,0}",
            "    z = add(xw, b, &[1])               : f32[2,4]{1,0}",
            "    row_sums = reduce(y, 0, sum, &[1]) : f32[2]{0}",
            "    root = div(y, row_sums, &[0])      : f32[2,4]{1,0}",
        ],
    );
}

#[test]
fn the_error_names_xlas_sentence_and_the_callers_line() {
    let text = tour();
    let errors = section(&text, HEADINGS[3], HEADINGS[4]);
    let lines: Vec<&str> = errors.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("add(v: f32[8], m: f32[16,8], &[0]) on line "))
        .expect("the op");
    let place =
        lines[at].trim_start_matches("add(v: f32[8], m: f32[16,8], &[0]) on line ").trim_end_matches(':');
    let (line, file) = place.split_once(" of ").expect("line N of FILE");
    assert!(file.ends_with("tour.rs"), "{file}");
    let error = lines[at + 1];
    assert!(
        error.starts_with(
            "    Broadcast dimension 0 mismatch: 8 != 16; f32[8] and f32[16,8]. \
             (op add; operands f32[8]{0}, f32[16,8]{1,0}) at "
        ),
        "{error}"
    );
    assert!(error.contains(&format!(" at {file}:{line}:")), "{error} should point at {file}:{line}");
    assert_lines(errors, &["build(a later, valid op) returns the same first error: true"]);
}

#[test]
fn built_hlo_has_explicit_broadcasts_and_no_fusion() {
    let text = tour();
    let hlo = section(&text, HEADINGS[4], HEADINGS[5]);
    assert!(hlo.contains("    HloModule dense"), "{hlo}");
    assert!(hlo.contains("broadcast(b.3), dimensions={1}"), "{hlo}");
    assert!(hlo.contains("dimensions={0}") && hlo.contains("reduce("), "{hlo}");
    assert!(!hlo.contains("fusion"), "{hlo}");
}

#[test]
fn execute_and_execute_into_give_the_model_values() {
    let text = tour();
    assert_lines(
        &text,
        &[
            "      { 0.4, 0.4, 0.2, 0 },",
            "      { 0.416666657, 0.416666657, 0.0833333358, 0.0833333358 }",
            "into f32[2,4]{0,1}: same values: true",
            "memory, column by column: [0.4, 0.41666666, 0.4, 0.41666666, 0.2, 0.083333336, 0.0, 0.083333336]",
        ],
    );
}

#[test]
fn optimized_hlo_has_loop_fusions() {
    let text = tour();
    let optimized = section(&text, HEADINGS[7], HEADINGS[8]);
    assert!(optimized.contains("kind=kLoop"), "{optimized}");
    assert!(optimized.contains("calls=fused_computation."), "{optimized}");
    let root = optimized.lines().find(|l| l.trim_start().starts_with("ROOT fusion")).expect("a fused root");
    assert!(root.contains("f32[2,4]{1,0} fusion("), "{root}");
}

#[test]
fn fused_and_unfused_agree_and_are_timed() {
    let text = tour();
    assert_lines(
        &text,
        &[
            "W1 = max((X + b{1}) * s{0}, 0) + 1 with X: f32[16,16], median of 1 run(s) each",
            "fused and unfused agree on all 256 values: true",
        ],
    );
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.iter().any(|l| l.starts_with("fused ") && l.ends_with(" ms")), "{text}");
    assert!(lines.iter().any(|l| l.starts_with("unfused ") && l.ends_with(" ms")), "{text}");
    assert!(lines.iter().any(|l| l.starts_with("unfused / fused = ") && l.ends_with('x')), "{text}");
}
