//! The tutorials print what they compute: pin the lines that
//! carry the broadcasting document's values and errors, and the perceptron's checks.

// Each example is included whole, with its own copy of the shared report writer.
#![allow(clippy::duplicate_mod)]

#[allow(dead_code)]
#[path = "../examples/broadcasting.rs"]
mod broadcasting;

#[allow(dead_code)]
#[path = "../examples/mlp.rs"]
mod mlp;

#[allow(dead_code)]
#[path = "../examples/control_flow.rs"]
mod control_flow;

#[allow(dead_code)]
#[path = "../examples/mixed_precision.rs"]
mod mixed_precision;

#[allow(dead_code)]
#[path = "../examples/cnn.rs"]
mod cnn;

#[allow(dead_code)]
#[path = "../examples/train_mlp.rs"]
mod train_mlp;

/// The broadcasting tutorial's headings, in the document's order.
const HEADINGS: [&str; 8] = [
    "1. A scalar and a matrix",
    "2. A matrix and a vector, broadcast dimensions (1)",
    "3. A 3x3 matrix and a vector: (1) or (0)",
    "4. A 2x3 matrix and a 3-element vector with (0) is invalid",
    "5. A 2x3x4 cuboid and a 3x4 matrix, broadcast dimensions (1,2)",
    "6. Formal definition: matching onto MxNxPxQ = 2x3x4x5",
    "7. Similar-rank arrays with degenerate dimensions",
    "8. Broadcast composition",
];

/// A tutorial's text, or the error that stopped it.
fn text_of(tutorial: fn() -> lazy_xla::Result<String>) -> String {
    tutorial().unwrap_or_else(|error| panic!("the tutorial failed: {error}"))
}

/// Section `number` (1-based) of the broadcasting tutorial: its heading up to the next one.
fn section(number: usize) -> String {
    let text = text_of(broadcasting::tutorial);
    let start = |h: &str| text.find(&format!("\n{h}\n")).unwrap_or_else(|| panic!("missing heading {h:?}"));
    let begin = start(HEADINGS[number - 1]);
    let end = HEADINGS.get(number).map_or(text.len(), |h| start(h));
    text[begin..end].to_string()
}

/// An array picture as the tutorial prints it: each line indented by four spaces.
fn picture(lines: &[&str]) -> String {
    lines.iter().map(|line| format!("    {line}\n")).collect()
}

/// Asserts that `text` contains the picture `lines` right after the line `label`.
#[track_caller]
fn assert_shows(text: &str, label: &str, lines: &[&str]) {
    let expected = format!("{label}\n{}", picture(lines));
    assert!(text.contains(&expected), "missing\n{expected}in\n{text}");
}

/// Asserts that `text` has an error line starting with XLA's `sentence` and lazy-xla's context.
#[track_caller]
fn assert_error(text: &str, sentence: &str) {
    let prefix = format!("error: {sentence} (op add; operands ");
    assert!(text.lines().any(|line| line.starts_with(&prefix)), "missing {prefix:?}... in\n{text}");
}

/// Asserts that `text` has the line `line`.
#[track_caller]
fn assert_line(text: &str, line: &str) {
    assert!(text.lines().any(|l| l == line), "missing line {line:?} in\n{text}");
}

// ---- examples/broadcasting.rs -----------------------------------------------------------------

#[test]
fn sections_come_in_the_documents_order() {
    let text = text_of(broadcasting::tutorial);
    let positions: Vec<usize> = HEADINGS
        .iter()
        .map(|h| text.find(&format!("\n{h}\n")).unwrap_or_else(|| panic!("missing heading {h:?}")))
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
}

#[test]
fn scalar_plus_matrix_is_the_documents() {
    let text = section(1);
    assert_line(&text, "shapes: f32[2,3] + f32[] -> f32[2,3]");
    assert_shows(&text, "result: f32[2,3]", &["|8  9  10|", "|11 12 13|"]);
    assert!(text.contains("broadcast(rhs.2), dimensions={}"), "{text}");
}

#[test]
fn matrix_plus_vector_needs_dimension_1() {
    let text = section(2);
    assert_error(&text, "Shapes must be equal rank, but are f32[3] and f32[2,3]");
    assert!(text.contains("broadcast.3 = f32[2,3]{1,0} broadcast(rhs.2), dimensions={1}"), "{text}");
    assert_shows(&text, "rhs broadcast: f32[2,3]", &["|7 8 9|", "|7 8 9|"]);
    assert_shows(&text, "result: f32[2,3]", &["|8  10 12|", "|11 13 15|"]);
}

#[test]
fn square_matrix_and_vector_broadcast_both_ways() {
    let text = section(3);
    // The document's two pictures: (1) duplicates the vector for each row, (0) for each column.
    assert_shows(&text, "rhs broadcast: f32[3,3]", &["|7 8 9|", "|7 8 9|", "|7 8 9|"]);
    assert_shows(&text, "rhs broadcast: f32[3,3]", &["|7 7 7|", "|8 8 8|", "|9 9 9|"]);
    assert_shows(&text, "result: f32[3,3]", &["|17 28 39|", "|47 58 69|", "|77 88 99|"]);
    assert_shows(&text, "result: f32[3,3]", &["|17 27 37|", "|48 58 68|", "|79 89 99|"]);
}

#[test]
fn dimension_0_of_a_2x3_matrix_does_not_fit_a_3_vector() {
    assert_error(&section(4), "Broadcast dimension 0 mismatch: 3 != 2; f32[3] and f32[2,3].");
}

#[test]
fn cuboid_plus_matrix_repeats_the_matrix() {
    let text = section(5);
    assert_line(&text, "shapes: f32[2,3,4] + f32[3,4] -> f32[2,3,4]");
    assert!(text.contains("broadcast(rhs.2), dimensions={1,2}"), "{text}");
    let result = [
        "[0] |111 112 113 114|",
        "    |121 122 123 124|",
        "    |131 132 133 134|",
        "[1] |211 212 213 214|",
        "    |221 222 223 224|",
        "    |231 232 233 234|",
    ];
    assert_shows(&text, "result: f32[2,3,4]", &result);
}

#[test]
fn formal_definition_matchings_and_illegal_tuples() {
    let text = section(6);
    for line in [
        "    dim 3:          T  add(X, f32[5], &[3]) -> f32[2,3,4,5]: every element as defined",
        "    dim 2:        T    add(X, f32[4], &[2]) -> f32[2,3,4,5]: every element as defined",
        "    dim 1:      T      add(X, f32[3], &[1]) -> f32[2,3,4,5]: every element as defined",
        "    dim 0:    T        add(X, f32[2], &[0]) -> f32[2,3,4,5]: every element as defined",
        "    dim 2,3:      T V  add(X, f32[4,5], &[2, 3]) -> f32[2,3,4,5]: every element as defined",
        "    dim 1,2:    T V    add(X, f32[3,4], &[1, 2]) -> f32[2,3,4,5]: every element as defined",
        "    dim 0,3:  T     V  add(X, f32[2,5], &[0, 3]) -> f32[2,3,4,5]: every element as defined",
    ] {
        assert_line(&text, line);
    }
    assert_error(&text, "Broadcast dimensions order is wrong: 1 comes after 2.");
    assert_error(
        &text,
        "Size of broadcast_dimensions has to match lower-rank operand's rank;  lower-rank operand's \
         rank is 2, size of broadcast_dimensions is 3.",
    );
}

#[test]
fn degenerate_dimensions_stretch() {
    let text = section(7);
    for line in [
        "shapes: f32[2,1] + f32[2,3] -> f32[2,3]",
        "shapes: f32[1,2,5] + f32[7,2,5] -> f32[7,2,5]",
        "shapes: f32[7,2,5] + f32[7,1,5] -> f32[7,2,5]",
        "shapes: f32[2,1] + f32[1,3] -> f32[2,3]",
    ] {
        assert_line(&text, line);
    }
    assert_shows(&text, "result: f32[2,3]", &["|11 21 31|", "|42 52 62|"]);
    // Both (7,2,5) examples give layer i, row j, column k the value 100(i+1) + 10(j+1) + k + 1.
    let layers: Vec<String> = (1..=7)
        .flat_map(|i| {
            let row = |j: i32| (1..=5).map(|k| (100 * i + 10 * j + k).to_string()).collect::<Vec<_>>();
            [format!("[{}] |{}|", i - 1, row(1).join(" ")), format!("    |{}|", row(2).join(" "))]
        })
        .collect();
    let layers: Vec<&str> = layers.iter().map(String::as_str).collect();
    assert_eq!(text.matches(&format!("result: f32[7,2,5]\n{}", picture(&layers))).count(), 2, "{text}");
    assert_error(&text, "Binary op with incompatible shapes: f32[7,2,5] and f32[7,2,6].");
    // The outer operation.
    assert_shows(&text, "result: f32[2,3]", &["|11 12 13|", "|21 22 23|"]);
}

#[test]
fn composition_examples_are_the_documents() {
    let text = section(8);
    assert_line(&text, "shapes: f32[4] + f32[1,2] -> f32[4,2]");
    assert_shows(&text, "lhs broadcast: f32[4,2]", &["|1 1|", "|2 2|", "|3 3|", "|4 4|"]);
    assert_shows(&text, "rhs broadcast: f32[4,2]", &["|5 6|", "|5 6|", "|5 6|", "|5 6|"]);
    assert_shows(&text, "result: f32[4,2]", &["|6  7|", "|7  8|", "|8  9|", "|9 10|"]);
    // The 1x2 matrix first becomes the document's 4x1x2 intermediate.
    assert_line(&text, "shapes: f32[1,2] + f32[4,3,1] -> f32[4,3,2]");
    assert!(text.contains("f32[4,1,2]{2,1,0} broadcast(lhs.1), dimensions={1,2}"), "{text}");
    let result = (0..4).flat_map(|i| {
        (1..=3).map(move |j| {
            let label = if j == 1 { format!("[{i}] ") } else { "    ".to_string() };
            format!("{label}|{0}{j}1 {0}{j}2|", i + 1)
        })
    });
    let result: Vec<String> = result.collect();
    let result: Vec<&str> = result.iter().map(String::as_str).collect();
    assert_shows(&text, "result: f32[4,3,2]", &result);
}

// ---- examples/mlp.rs --------------------------------------------------------------------------

#[test]
fn mlp_checks_pass() {
    let text = text_of(mlp::tutorial);
    for prefix in [
        "ndarray reference: max |difference| < 1e-5: ok (",
        "every row sums to 1 within 1e-5: ok (",
        "fused == unfused within 1e-5: ok (",
    ] {
        assert!(text.lines().any(|line| line.starts_with(prefix)), "missing {prefix:?}... in\n{text}");
    }
}

#[test]
fn mlp_prints_a_probability_row_per_input() {
    let text = text_of(mlp::tutorial);
    let rows: Vec<Vec<f32>> = text
        .lines()
        .filter_map(|line| line.strip_prefix("    |")?.strip_suffix('|'))
        .map(|row| row.split(' ').map(|p| p.parse().expect("a probability")).collect())
        .collect();
    assert_eq!(rows.len(), 4, "{text}");
    for row in rows {
        assert_eq!(row.len(), 3);
        assert!(row.iter().all(|p| (0.0..=1.0).contains(p)), "{row:?}");
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5, "{row:?}");
    }
}

/// HLO text with the builder's id suffixes dropped from names (`divide.31` → `divide`), so a
/// test pins the structure, not how many ops the tutorial happened to make before.
fn without_ids(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let in_name = |p: char| p.is_ascii_alphanumeric() || p == '_' || p == '-';
        let token = &out[out.rfind(|p: char| !in_name(p)).map_or(0, |i| i + 1)..];
        let after_name = token.starts_with(|p: char| p.is_ascii_alphabetic());
        if c == '.' && after_name && chars.peek().is_some_and(char::is_ascii_digit) {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn mlp_hlo_shows_its_broadcasts() {
    let text = without_ids(&text_of(mlp::tutorial));
    for fragment in [
        "broadcast(b1), dimensions={1}",
        "reduce(add, constant), dimensions={1}, to_apply=max",
        "broadcast(reduce), dimensions={0}",
        "ROOT divide = f32[4,3]{1,0} divide(exponential, broadcast)",
    ] {
        assert!(text.contains(fragment), "missing {fragment:?} in\n{text}");
    }
}

// ---- examples/control_flow.rs ------------------------------------------------------------------

#[test]
fn the_control_flow_tutorial_checks_itself_and_reports() {
    let text = text_of(control_flow::tutorial);
    assert_line(&text, "predicted classes [1, 0, 3] (a tie goes to the lower class)");
    assert!(text
        .lines()
        .any(|l| l.starts_with("sqrt of [2.0, 9.0, 0.25, 1000000.0] = [1.4142135, 3.0, 0.5, 1000")));
    assert_line(&text, "[3.0, 0.0, 4.0] -> [0.6, 0.0, 0.8]");
    assert_line(&text, "labels by descending score: [11, 13, 15, 12, 10, 14]");
    assert_line(&text, "top 3 scores [0.9, 0.9, 0.7] at positions [1, 3, 5]");
    assert_line(&text, "the same seed gives the same mask");
}

// ---- examples/mixed_precision.rs ----------------------------------------------------------------

#[test]
fn the_mixed_precision_tutorial_keeps_each_arithmetic_within_its_bound() {
    let text = text_of(mixed_precision::tutorial);
    for name in ["f32", "bf16 operands, f32 accumulation", "int8 operands, s32 accumulation"] {
        assert!(text.lines().any(|l| l.starts_with(name)), "no line for {name} in\n{text}");
    }
    assert_line(&text, "each error is within its arithmetic's bound");
}

// ---- examples/cnn.rs ---------------------------------------------------------------------------

#[test]
fn cnn_checks_pass() {
    let text = text_of(cnn::tutorial);
    for prefix in [
        "loop reference: max |difference| < 1e-5: ok (",
        "fused == unfused within 1e-5: ok (",
        "embedding bags equal the loops' (token 12 clamped to row 9): ok",
        "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f",
        "window={size=1x2x2x1 stride=1x2x2x1}, to_apply=",
    ] {
        assert!(
            text.lines().any(|line| line.starts_with(prefix) || line.contains(prefix)),
            "missing {prefix:?} in\n{text}"
        );
    }
}

// ---- examples/train_mlp.rs --------------------------------------------------------------------

#[test]
fn train_mlp_learns_the_blobs() {
    let text = text_of(train_mlp::tutorial);
    let epochs =
        text.lines().filter(|line| line.starts_with("epoch ") && line.contains(": mean loss ")).count();
    assert_eq!(epochs, 12, "{text}");
    for prefix in [
        "the loss falls to below half the first batch's, epoch by epoch: ok (",
        "held-out accuracy above 90%: ok (",
    ] {
        assert!(text.lines().any(|line| line.starts_with(prefix)), "missing {prefix:?}... in\n{text}");
    }
}
