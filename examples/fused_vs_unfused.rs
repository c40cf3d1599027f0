//! Fused against unfused, on one workload: W1 of the design,
//! `max((X[rows, cols] + b{1}) * s{0}, 0) + 1` in f32.
//!
//! It prints the HLO as built (the implicit broadcasts recorded as explicit `broadcast`
//! instructions, as XLA records them), the HLO after the optimizer (one `fusion` instruction,
//! `kind=kLoop`, calling a fused computation that holds the whole chain), checks that both
//! modes compute the same values, and times both.
//!
//! It also draws both graphs with Graphviz (`to_dot`): `target/pictures/w1.before.dot` and
//! `w1.after.dot`, the fusion a coloured cluster, and `.svg` files when Graphviz's `dot` is
//! installed.
//!
//! Run with `cargo run --release --example fused_vs_unfused`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use lazy_xla::{add, max, mul, shape, CompileOptions, Executable, Literal, XlaBuilder, XlaComputation};

/// The default size of `X` (32 MiB of f32), as in the design's W1.
const ROWS: usize = 2048;
/// The default number of columns of `X`.
const COLUMNS: usize = 4096;
/// Timed runs of each mode; the median is reported.
const RUNS: usize = 10;

#[macro_use]
#[path = "common/text.rs"]
mod text;
use text::heading;

/// W1 over `X: f32[rows, cols]`, `b: f32[cols]` (added along dimension 1) and `s: f32[rows]`
/// (multiplied along dimension 0).
pub fn w1(rows: usize, cols: usize) -> lazy_xla::Result<XlaComputation> {
    let builder = XlaBuilder::new("w1");
    let x = builder.parameter(0, &shape!(f32[rows, cols]), "x");
    let b = builder.parameter(1, &shape!(f32[cols]), "b");
    let s = builder.parameter(2, &shape!(f32[rows]), "s");
    let scaled = mul(add(x, b, &[1]), s, &[0]);
    let relu = max(scaled, builder.constant_r0(0.0f32), &[]);
    builder.build(relu + builder.constant_r0(1.0f32))
}

/// Deterministic arguments for W1: `X` spans negative and positive values so the `max` matters.
pub fn w1_arguments(rows: usize, cols: usize) -> lazy_xla::Result<[Literal; 3]> {
    let x: Vec<f32> = (0..rows * cols).map(|i| ((i * 7919) % 1009) as f32 / 100.0 - 5.0).collect();
    let b: Vec<f32> = (0..cols).map(|j| (j % 13) as f32 * 0.25 - 1.5).collect();
    let s: Vec<f32> = (0..rows).map(|i| (i % 5) as f32 * 0.5 - 0.75).collect();
    Ok([Literal::from_vec(&shape!(f32[rows, cols]), x)?, Literal::vec1(&b), Literal::vec1(&s)])
}

/// The median of a few timed `execute_into` runs (after one untimed run that warms the caches
/// and the executable's buffers).
fn median_time(
    exe: &Executable,
    arguments: &[&Literal],
    out: &mut Literal,
    runs: usize,
) -> lazy_xla::Result<Duration> {
    exe.execute_into(arguments, out)?;
    let mut times = Vec::with_capacity(runs.max(1));
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        exe.execute_into(arguments, out)?;
        times.push(start.elapsed());
    }
    times.sort();
    Ok(times[times.len() / 2])
}

/// The HLO before and after optimization, the agreement of the two modes, and their median
/// times over `runs` runs each, as the text `main` prints.
pub fn report(rows: usize, cols: usize, runs: usize) -> lazy_xla::Result<String> {
    let mut out = String::new();
    say!(out, "W1 = max((X + b{{1}}) * s{{0}}, 0) + 1 with X: f32[{rows},{cols}], fused and unfused");

    let computation = w1(rows, cols)?;
    heading(&mut out, "HLO as built (before optimization)");
    say!(out, "Each implicit broadcast is an explicit instruction; each op would write a full array.");
    say!(out);
    out.push_str(&computation.to_hlo_text());

    let fused = computation.compile(&CompileOptions::default())?;
    let unfused = computation.compile(&CompileOptions { fusion: false, ..Default::default() })?;
    heading(&mut out, "HLO after optimization (fusion on)");
    say!(out, "The whole chain is one loop fusion: one pass over X, one write of the output.");
    say!(out);
    out.push_str(&fused.to_hlo_text());

    heading(&mut out, "Same values");
    let arguments = w1_arguments(rows, cols)?;
    let arguments: Vec<&Literal> = arguments.iter().collect();
    let fused_values = fused.execute(&arguments)?.to_vec::<f32>()?;
    let unfused_values = unfused.execute(&arguments)?.to_vec::<f32>()?;
    let largest_difference =
        fused_values.iter().zip(&unfused_values).map(|(f, u)| (f - u).abs()).fold(0.0f32, f32::max);
    let agree = fused_values.len() == unfused_values.len()
        && fused_values.len() == rows * cols
        && largest_difference <= 1e-6;
    if agree {
        say!(
            out,
            "fused and unfused agree on all {} values (largest difference {largest_difference:e})",
            fused_values.len()
        );
    } else {
        say!(
            out,
            "fused and unfused DISAGREE: {} against {} values, largest difference {largest_difference:e}",
            fused_values.len(),
            unfused_values.len()
        );
    }

    heading(&mut out, "Time (execute_into a reused output, median)");
    let mut output = Literal::zeros(&shape!(f32[rows, cols]))?;
    let fused_time = median_time(&fused, &arguments, &mut output, runs)?;
    let unfused_time = median_time(&unfused, &arguments, &mut output, runs)?;
    let megabytes = (2 * rows * cols + rows + cols) as f64 * 4.0 / 1e6;
    for (mode, time) in [("fused", fused_time), ("unfused", unfused_time)] {
        say!(
            out,
            "{mode:<8} {:>10.3} ms over {runs} run(s)  ({:.1} GB/s of the {megabytes:.1} MB a single pass moves)",
            time.as_secs_f64() * 1e3,
            megabytes / 1e3 / time.as_secs_f64().max(1e-12)
        );
    }
    say!(out, "unfused / fused = {:.2}x", unfused_time.as_secs_f64() / fused_time.as_secs_f64().max(1e-12));
    Ok(out)
}

/// Writes the graph before and after optimization as `.dot` files in `folder` (and as `.svg`
/// when Graphviz's `dot` runs); returns what it did, as text.
pub fn pictures(folder: &Path) -> lazy_xla::Result<String> {
    let mut out = String::new();
    heading(&mut out, "Pictures");
    let io = |e: std::io::Error| lazy_xla::Error::InvalidArgument(format!("{}: {e}", folder.display()));
    std::fs::create_dir_all(folder).map_err(io)?;
    let computation = w1(4, 8)?;
    let optimized = computation.compile(&CompileOptions::default())?;
    let mut graphviz = true;
    for (name, dot) in [("w1.before", computation.to_dot()), ("w1.after", optimized.to_dot())] {
        let path = folder.join(format!("{name}.dot"));
        std::fs::write(&path, dot).map_err(io)?;
        say!(out, "wrote {}", path.display());
        if graphviz {
            let svg = path.with_extension("svg");
            match Command::new("dot").arg("-Tsvg").arg(&path).arg("-o").arg(&svg).status() {
                Ok(status) if status.success() => say!(out, "wrote {}", svg.display()),
                _ => graphviz = false,
            }
        }
    }
    if !graphviz {
        say!(
            out,
            "Graphviz's `dot` did not run: install it (apt-get install graphviz, brew install graphviz)"
        );
        say!(out, "and render with `dot -Tsvg w1.after.dot -o w1.after.svg`.");
    }
    Ok(out)
}

fn main() -> lazy_xla::Result<()> {
    print!("{}", report(ROWS, COLUMNS, RUNS)?);
    print!("{}", pictures(Path::new("target/pictures"))?);
    Ok(())
}
