//! Whole jax programs, fused against unfused: every module of `examples/hlo/programs/` (an
//! MLP forward and train step, a transformer block and its gradient, a CNN and its gradient,
//! an Adam step, a GRU scan, softmax cross-entropy, an embedding lookup, sort and top_k), on
//! the inputs its `generate.py` wrote where they exist, else on deterministic values of the
//! parameters' shapes. Before timing, fused and unfused must agree (within 1e-4 of each
//! output's scale). The comparison with jax.jit itself is `scripts/bench_vs_jax.py`.
//!
//! Run with `cargo bench --bench programs` (a few minutes on two cores), or one program with
//! `cargo bench --bench programs -- sort_rows`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use lazy_xla::*;

/// The modules, by name, in name order.
fn modules() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/hlo/programs");
    let entries = std::fs::read_dir(&dir).expect("examples/hlo/programs");
    let mut modules: Vec<PathBuf> = (entries.map(|e| e.expect("a directory entry").path()))
        .filter(|p| p.extension().is_some_and(|e| e == "hlo"))
        .collect();
    modules.sort();
    modules
}

/// The module's inputs: `NAME.in0.npy`, … if they are all there, else deterministic values.
fn inputs(module: &Path, computation: &XlaComputation) -> Vec<Literal> {
    let parameters = computation.program_shape().parameters;
    let files: Vec<PathBuf> =
        (0..parameters.len()).map(|i| module.with_extension(format!("in{i}.npy"))).collect();
    if files.iter().all(|f| f.exists()) {
        return files.iter().map(|f| Literal::read_npy(f).expect("an .npy input")).collect();
    }
    parameters.iter().map(|(_, shape)| deterministic(shape)).collect()
}

/// Values of `shape`: floats in [-1, 1), integers in [0, 16) (valid ids and labels), and
/// zeros for other types.
fn deterministic(shape: &Shape) -> Literal {
    let count = shape.element_count() as usize;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    match shape.element_type() {
        ElementType::F32 => {
            let values = (0..count).map(|_| (next() >> 40) as f32 / (1u64 << 23) as f32 - 1.0).collect();
            Literal::from_vec(shape, values).expect("f32 values")
        }
        ElementType::S32 => {
            Literal::from_vec(shape, (0..count).map(|_| (next() % 16) as i32).collect()).expect("s32 values")
        }
        _ => Literal::zeros(shape).expect("zeros"),
    }
}

/// Whether every array of `a` is within 1e-4 of the largest magnitude of `b`'s (exactly, for
/// integers).
fn agree(a: &Literal, b: &Literal) -> bool {
    if a.is_tuple() {
        let (a, b) =
            (a.clone().decompose_tuple().expect("a tuple"), b.clone().decompose_tuple().expect("a tuple"));
        return a.len() == b.len() && a.iter().zip(&b).all(|(a, b)| agree(a, b));
    }
    match (a.to_vec::<f64>(), b.to_vec::<f64>()) {
        (Ok(a), Ok(b)) => {
            let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| (x - y).abs() <= 1e-4 * scale || x == y)
        }
        _ => a == b,
    }
}

fn programs(c: &mut Criterion) {
    for module in modules() {
        let name = module.file_stem().and_then(|s| s.to_str()).unwrap_or("module").to_string();
        let text = std::fs::read_to_string(&module).expect("the module's text");
        let computation = XlaComputation::from_hlo_text(&text).expect("the module imports");
        let literals = inputs(&module, &computation);
        let arguments: Vec<&Literal> = literals.iter().collect();
        let compile = |fusion| computation.compile(&CompileOptions { fusion, ..CompileOptions::default() });
        let (fused, unfused) =
            (compile(true).expect("compiles fused"), compile(false).expect("compiles unfused"));
        let (a, b) =
            (fused.execute(&arguments).expect("runs fused"), unfused.execute(&arguments).expect("runs"));
        assert!(agree(&a, &b), "{name}: fused and unfused differ");

        let mut group = c.benchmark_group(name);
        group.sample_size(10);
        group.sampling_mode(SamplingMode::Flat);
        group.warm_up_time(Duration::from_millis(500));
        group.measurement_time(Duration::from_secs(3));
        group.bench_function("fused", |bench| bench.iter(|| fused.execute(&arguments).expect("runs")));
        group.bench_function("unfused", |bench| bench.iter(|| unfused.execute(&arguments).expect("runs")));
        group.finish();
    }
}

criterion_group!(benches, programs);
criterion_main!(benches);
