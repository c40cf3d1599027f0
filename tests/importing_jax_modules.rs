//! Modules jax 0.6.0 printed (`tests/data/jax/`, made by its `generate.py`): imported, run fused
//! and unfused on the inputs jax was given, and compared with jax's outputs (within 1e-5
//! relative). An MLP with softmax, `where`/`clip`/`relu`/`round`/`%` (which jax wraps in calls),
//! a program returning a tuple (mean, var, argmax, one_hot, normalization, sort), loops and a
//! conditional, and XLA's optimized MLP (fusions, copies, bitcasts).

use std::path::PathBuf;

use lazy_xla::*;

fn data(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/jax").join(file)
}

/// The `.npy` files `prefix0.npy`, `prefix1.npy`, … that exist.
fn numbered(prefix: &str) -> Vec<Literal> {
    (0..)
        .map(|i| data(&format!("{prefix}{i}.npy")))
        .take_while(|p| p.exists())
        .map(|p| Literal::read_npy(p).unwrap())
        .collect()
}

/// Whether `got` is `want` within 1e-5 relative (1e-6 absolute near zero), elementwise.
fn close(got: &Literal, want: &Literal) -> Result<(), String> {
    if got.shape().dimensions() != want.shape().dimensions() || got.element_type() != want.element_type() {
        return Err(format!("shape {} where jax gave {}", got.shape(), want.shape()));
    }
    let as_f64 = |l: &Literal| {
        l.to_vec::<f64>().or_else(|_| {
            let converted = match l.element_type() {
                ElementType::F32 => l.to_vec::<f32>().map(|v| v.into_iter().map(f64::from).collect()),
                ElementType::S32 => l.to_vec::<i32>().map(|v| v.into_iter().map(f64::from).collect()),
                ElementType::Pred => {
                    l.to_vec::<bool>().map(|v| v.into_iter().map(|b| b as u8 as f64).collect())
                }
                other => panic!("no comparison for {other}"),
            };
            converted
        })
    };
    let (got, want) = (as_f64(got).unwrap(), as_f64(want).unwrap());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        if (g - w).abs() > 1e-5 * w.abs() + 1e-6 {
            return Err(format!("element {i}: {g} where jax gave {w}"));
        }
    }
    Ok(())
}

/// Imports `module`, runs it on `inputs`'s files fused and unfused, and compares with
/// `outputs`'s files.
fn check(module: &str, inputs: &str, outputs: &str) {
    let text = std::fs::read_to_string(data(module)).unwrap();
    let computation = XlaComputation::from_hlo_text(&text).unwrap_or_else(|e| panic!("{module}: {e}"));
    let inputs = numbered(&format!("{inputs}.in"));
    let wanted = numbered(&format!("{outputs}.out"));
    assert!(!inputs.is_empty() && !wanted.is_empty());
    let arguments: Vec<&Literal> = inputs.iter().collect();
    for options in [CompileOptions::default(), CompileOptions::unfused()] {
        let out = computation.compile(&options).unwrap().execute(&arguments).unwrap();
        let leaves = if out.is_tuple() { out.decompose_tuple().unwrap() } else { vec![out] };
        assert_eq!(leaves.len(), wanted.len(), "{module}: outputs");
        for (i, (got, want)) in leaves.iter().zip(&wanted).enumerate() {
            close(got, want)
                .unwrap_or_else(|e| panic!("{module} (fusion {}), output {i}: {e}", options.fusion));
        }
    }
}

#[test]
fn an_mlp_with_softmax() {
    check("mlp.hlo", "mlp", "mlp");
}

#[test]
fn xlas_optimized_mlp_with_fusions_copies_and_bitcasts() {
    check("mlp_optimized.hlo", "mlp", "mlp");
}

#[test]
fn where_clip_relu_round_and_remainder_in_calls() {
    check("where_clip_relu.hlo", "where_clip_relu", "where_clip_relu");
}

#[test]
fn a_tuple_of_statistics() {
    check("statistics.hlo", "statistics", "statistics");
}

#[test]
fn a_loop_and_a_conditional() {
    check("loops.hlo", "loops", "loops");
}

/// The whole programs `scripts/bench_vs_jax.py` times (`examples/hlo/programs/`, made by its
/// `generate.py`): each imports and compiles fused and unfused (the script checks their
/// values against jax's).
#[test]
fn every_benchmark_program_imports_and_compiles() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/hlo/programs");
    let mut modules: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hlo"))
        .collect();
    modules.sort();
    assert!(modules.len() >= 12, "{modules:?}");
    for path in modules {
        let text = std::fs::read_to_string(&path).unwrap();
        let computation =
            XlaComputation::from_hlo_text(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for fusion in [true, false] {
            let options = CompileOptions { fusion, ..CompileOptions::default() };
            computation
                .compile(&options)
                .unwrap_or_else(|e| panic!("{} (fusion {fusion}): {e}", path.display()));
        }
    }
}
