//! Running what jax wrote: the modules in `examples/hlo/` were printed by jax 0.6.0
//! (`jax.jit(f).lower(..).as_text(dialect="hlo")`, see `examples/hlo/generate.py`) with the
//! inputs jax was given and the outputs it computed, as `.npy` files. For each one this
//! tutorial imports the module, optimizes it (how many loops its instructions fuse into), runs
//! it fused and unfused, and checks the results against jax's within 1e-5 relative.
//!
//! Run with `cargo run --release --example from_jax`.

use std::path::{Path, PathBuf};

use lazy_xla::*;

#[macro_use]
#[path = "common/text.rs"]
mod text;
use text::heading;

/// The modules, with a line on what each computes.
const MODULES: [(&str, &str); 3] = [
    ("mlp", "two dense layers with gelu, softmax over 4 classes"),
    ("layer_norm", "rows normalized to mean 0 and variance 1, scaled and shifted"),
    ("attention", "single-head attention with a causal mask (two results: output and weights)"),
];

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/hlo")
}

/// `NAME.<what><i>.npy` for i = 0, 1, … while they exist.
fn numbered(name: &str, what: &str) -> Result<Vec<Literal>> {
    (0..)
        .map(|i| folder().join(format!("{name}.{what}{i}.npy")))
        .take_while(|path| path.exists())
        .map(Literal::read_npy)
        .collect()
}

/// The largest error of `got` against `want`, relative to 1e-6 + |want|.
fn worst_error(got: &Literal, want: &Literal) -> Result<f64> {
    let (got, want) = (got.to_vec::<f32>()?, want.to_vec::<f32>()?);
    Ok(got
        .iter()
        .zip(&want)
        .map(|(&g, &w)| f64::from((g - w).abs()) / (1e-6 + f64::from(w.abs())))
        .fold(0.0, f64::max))
}

/// Imports, optimizes and runs one module; returns the worst relative error seen.
fn check(out: &mut String, name: &str, what: &str) -> Result<f64> {
    heading(out, &format!("{name}: {what}"));
    let text = std::fs::read_to_string(folder().join(format!("{name}.hlo")))
        .map_err(|e| Error::InvalidArgument(format!("{name}.hlo: {e}")))?;
    let computation = XlaComputation::from_hlo_text(&text)?;
    let signature = computation.program_shape();
    let parameters: Vec<String> = signature.parameters.iter().map(|(n, s)| format!("{n}: {s}")).collect();
    say!(out, "imported {} lines: ({}) -> {}", text.lines().count(), parameters.join(", "), signature.result);
    let executable = computation.compile(&CompileOptions::default())?;
    let optimized = executable.to_hlo_text();
    let entry = optimized.split("ENTRY").nth(1).unwrap_or_default();
    let fusions = entry.lines().filter(|line| line.contains(" fusion(")).count();
    let instructions = entry.lines().filter(|line| line.contains(" = ")).count();
    say!(out, "optimized: {instructions} instructions in the entry computation, {fusions} of them fusions");
    let inputs = numbered(name, "in")?;
    let wanted = numbered(name, "out")?;
    let arguments: Vec<&Literal> = inputs.iter().collect();
    let mut worst = 0.0f64;
    for options in [CompileOptions::default(), CompileOptions::unfused()] {
        let result = computation.compile(&options)?.execute(&arguments)?;
        let results = if result.is_tuple() { result.decompose_tuple()? } else { vec![result] };
        let mut errors = Vec::new();
        for (got, want) in results.iter().zip(&wanted) {
            let error = worst_error(got, want)?;
            worst = worst.max(error);
            errors.push(format!("{} off by {error:.1e}", got.shape().human_string()));
        }
        let mode = if options.fusion { "fused" } else { "unfused" };
        say!(out, "{mode:>8}: {} (relative to jax)", errors.join(", "));
    }
    say!(out, "{}", if worst <= 1e-5 { "matches jax within 1e-5" } else { "DIFFERS from jax" });
    Ok(worst)
}

/// The whole tutorial's text; an `Err` if a module does not import or run, or differs from jax.
pub fn report() -> Result<String> {
    let mut out = String::new();
    for (name, what) in MODULES {
        let worst = check(&mut out, name, what)?;
        if worst > 1e-5 {
            return Err(Error::InvalidArgument(format!("{name} differs from jax by {worst:e}:\n{out}")));
        }
    }
    Ok(out)
}

fn main() -> Result<()> {
    print!("{}", report()?);
    Ok(())
}
