//! The code sample of `README.md`, verbatim between the markers below, run as a test; a second
//! test checks that the README still shows exactly this code.

// README sample begins
use lazy_xla::*;

fn main() -> Result<()> {
    // A reducer: a scalar (f32, f32) -> f32 computation, built like any other.
    let s = XlaBuilder::new("sum");
    let (p, q) = (s.parameter(0, &shape!(f32[]), "p"), s.parameter(1, &shape!(f32[]), "q"));
    let sum = s.build(p + q)?;

    // Record ops: nothing runs yet, but every shape is inferred (and checked) on the spot.
    let b = XlaBuilder::new("center_rows");
    let x = b.parameter(0, &shape!(f32[2, 3]), "x");
    let means = reduce(x, b.constant_r0(0.0f32), &sum, &[1]) / b.constant_r0(3.0f32);
    assert_eq!(b.get_shape(means)?, shape!(f32[2]));
    let centered = sub(x, means, &[0]); // means matched to dimension 0 of x, as in XLA
    let computation = b.build(centered)?;
    println!("{}", computation.to_hlo_text()); // ... broadcast(..), dimensions={0} ... subtract

    // Compile (the optimizer fuses the broadcast and the arithmetic into one loop) and run.
    let exe = computation.compile(&CompileOptions::default())?;
    println!("{}", exe.to_hlo_text()); // ... fusion(..), kind=kLoop ...
    let x_values = Literal::from_vec(&shape!(f32[2, 3]), vec![1.0f32, 2.0, 3.0, 4.0, 6.0, 8.0])?;
    let out = exe.execute(&[&x_values])?;
    assert_eq!(out.to_vec::<f32>()?, vec![-1.0, 0.0, 1.0, -2.0, 0.0, 2.0]);
    Ok(())
}
// README sample ends

#[test]
fn readme_sample_runs() {
    if let Err(error) = main() {
        panic!("the README sample failed: {error}");
    }
}

/// The text between the line `begin` and the line `end` of `text`.
fn between<'a>(text: &'a str, begin: &str, end: &str) -> &'a str {
    let start = text.find(begin).unwrap_or_else(|| panic!("missing {begin:?}")) + begin.len();
    let length = text[start..].find(end).unwrap_or_else(|| panic!("missing {end:?}"));
    &text[start..start + length]
}

#[test]
fn readme_shows_this_sample() {
    let this_file = include_str!("readme_sample.rs");
    let sample = between(this_file, "// README sample begins\n", "// README sample ends\n");
    let readme = include_str!("../README.md");
    let shown = between(readme, "```rust\n", "```\n");
    assert_eq!(shown, sample, "README.md's sample differs from tests/readme_sample.rs");
}
