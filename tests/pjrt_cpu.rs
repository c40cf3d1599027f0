//! `lazy_xla::pjrt` (the `pjrt` feature) on XLA's own CPU plugin: every module of
//! `examples/hlo/` and `examples/hlo/programs/`, and the tour's and tutorials' models, compile
//! and run through PJRT with the values lazy-xla computes (floats within a tolerance, integers
//! and predicates exactly). Those tests are `#[ignore]`d: they need the plugin, whose path they
//! read from `LAZY_XLA_PJRT_PLUGIN` (`scripts/fetch_pjrt_cpu_plugin.sh` fetches it and prints
//! the path). The others need no plugin: paths that are no plugin are errors, never a crash.
//!
//! ```text
//! LAZY_XLA_PJRT_PLUGIN=$(scripts/fetch_pjrt_cpu_plugin.sh) \
//!     cargo test --features pjrt --test pjrt_cpu -- --ignored --nocapture
//! ```
#![cfg(feature = "pjrt")]
#![allow(clippy::duplicate_mod)]

use std::path::{Path, PathBuf};

use lazy_xla::half::{bf16, f16};
use lazy_xla::*;

#[allow(dead_code)]
#[path = "../examples/tour.rs"]
mod tour;

#[allow(dead_code)]
#[path = "../examples/mlp.rs"]
mod mlp;

#[allow(dead_code)]
#[path = "../examples/cnn.rs"]
mod cnn;

#[allow(dead_code)]
#[path = "../examples/train_mlp.rs"]
mod train_mlp;

/// The tolerance of a float element, normwise: `|pjrt - ours| <= ATOL + RTOL * max|ours|`, the
/// largest magnitude of the array (an element that cancels to near zero keeps the rounding of
/// the larger terms it sums, which a different summation order rounds differently).
const RTOL: f64 = 1e-4;
const ATOL: f64 = 1e-5;

/// The plugin named by `LAZY_XLA_PJRT_PLUGIN`, or a panic saying how to get it.
fn plugin() -> PathBuf {
    match std::env::var_os("LAZY_XLA_PJRT_PLUGIN") {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => panic!(
            "LAZY_XLA_PJRT_PLUGIN is not set: set it to the path of a PJRT plugin, e.g. \
             LAZY_XLA_PJRT_PLUGIN=$(scripts/fetch_pjrt_cpu_plugin.sh)"
        ),
    }
}

fn client() -> pjrt::Client {
    let path = plugin();
    pjrt::Client::load(&path).unwrap_or_else(|e| panic!("loading {}: {e}", path.display()))
}

/// Every `.hlo` file of `examples/hlo/` and `examples/hlo/programs/`.
fn example_modules() -> Vec<PathBuf> {
    let mut found = Vec::new();
    for folder in ["examples/hlo", "examples/hlo/programs"] {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
        for entry in std::fs::read_dir(&folder).expect("the folder") {
            let path = entry.expect("an entry").path();
            if path.extension().is_some_and(|e| e == "hlo") {
                found.push(path);
            }
        }
    }
    found.sort();
    assert!(found.len() >= 15, "examples/hlo/ holds its modules: {found:?}");
    found
}

/// Deterministic values for `shape`: integers in [0, 8), random predicates, and floats in
/// [-1, 1) divided by the square root of the fan-in (the product of all dimensions but the
/// last), as weights are initialized, so that the models' sums stay of order 1 and their
/// outputs do not amplify the rounding of one summation order over another's.
fn generated(shape: &Shape, seed: u64) -> Literal {
    let count = shape.element_count() as usize;
    let dimensions = shape.dimensions();
    let fan_in: i64 = dimensions[..dimensions.len().saturating_sub(1)].iter().product();
    let scale = 1.0 / (fan_in.max(1) as f64).sqrt();
    let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ seed.wrapping_mul(0x2545_f491_4f6c_dd1d);
    let mut unit = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let units: Vec<f64> = (0..count).map(|_| unit() * 2.0 - 1.0).collect();
    let small: Vec<u8> = units.iter().map(|v| ((v + 1.0) * 4.0) as u8).collect();
    let floats: Vec<f64> = units.iter().map(|v| v * scale).collect();
    let literal = match shape.element_type() {
        ElementType::Pred => Literal::from_vec(shape, small.iter().map(|&v| v >= 4).collect()),
        ElementType::S8 => Literal::from_vec(shape, small.iter().map(|&v| v as i8).collect()),
        ElementType::S16 => Literal::from_vec(shape, small.iter().map(|&v| v as i16).collect()),
        ElementType::S32 => Literal::from_vec(shape, small.iter().map(|&v| v as i32).collect()),
        ElementType::S64 => Literal::from_vec(shape, small.iter().map(|&v| v as i64).collect()),
        ElementType::U8 => Literal::from_vec(shape, small.clone()),
        ElementType::U16 => Literal::from_vec(shape, small.iter().map(|&v| v as u16).collect()),
        ElementType::U32 => Literal::from_vec(shape, small.iter().map(|&v| v as u32).collect()),
        ElementType::U64 => Literal::from_vec(shape, small.iter().map(|&v| v as u64).collect()),
        ElementType::F16 => Literal::from_vec(shape, floats.iter().map(|&v| f16::from_f64(v)).collect()),
        ElementType::Bf16 => Literal::from_vec(shape, floats.iter().map(|&v| bf16::from_f64(v)).collect()),
        ElementType::F32 => Literal::from_vec(shape, floats.iter().map(|&v| v as f32).collect()),
        ElementType::F64 => Literal::from_vec(shape, floats),
    };
    literal.expect("generated values fill the shape")
}

/// A module's inputs: its `.in{i}.npy` files beside it where they exist, else generated.
fn inputs(path: &Path, computation: &XlaComputation) -> Vec<Literal> {
    let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
    computation
        .program_shape()
        .parameters
        .iter()
        .enumerate()
        .map(|(i, (_, shape))| {
            let npy = path.with_file_name(format!("{stem}.in{i}.npy"));
            if npy.exists() {
                Literal::read_npy(&npy).unwrap_or_else(|e| panic!("{}: {e}", npy.display()))
            } else {
                generated(shape, i as u64 + 1)
            }
        })
        .collect()
}

/// A float array's values as f64, or `None` for an integer or predicate array.
fn float_values(literal: &Literal) -> Option<Vec<f64>> {
    Some(match literal.element_type() {
        ElementType::F16 => literal.to_vec::<f16>().unwrap().iter().map(|v| v.to_f64()).collect(),
        ElementType::Bf16 => literal.to_vec::<bf16>().unwrap().iter().map(|v| v.to_f64()).collect(),
        ElementType::F32 => literal.to_vec::<f32>().unwrap().iter().map(|&v| v as f64).collect(),
        ElementType::F64 => literal.to_vec::<f64>().unwrap(),
        _ => return None,
    })
}

/// The largest absolute and relative differences of PJRT's result from lazy-xla's, or what
/// differs beyond the tolerance (or at all, for integers).
fn compare(ours: &Literal, theirs: &Literal, what: &str) -> Result<(f64, f64), String> {
    if ours.shape() != theirs.shape() {
        return Err(format!("{what}: PJRT's shape {} is not lazy-xla's {}", theirs.shape(), ours.shape()));
    }
    if ours.is_tuple() {
        let (a, b) = (ours.clone().decompose_tuple().unwrap(), theirs.clone().decompose_tuple().unwrap());
        let mut worst = (0.0f64, 0.0f64);
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            let (abs, rel) = compare(x, y, &format!("{what}.{i}"))?;
            worst = (worst.0.max(abs), worst.1.max(rel));
        }
        return Ok(worst);
    }
    let Some(a) = float_values(ours) else {
        return if ours == theirs { Ok((0.0, 0.0)) } else { Err(format!("{what}: integers differ")) };
    };
    let b = float_values(theirs).unwrap();
    let largest = a.iter().filter(|v| v.is_finite()).fold(0.0f64, |m, v| m.max(v.abs()));
    let (mut max_abs, mut max_rel) = (0.0f64, 0.0f64);
    for (i, (&x, &y)) in a.iter().zip(&b).enumerate() {
        if x.is_nan() && y.is_nan() || x == y {
            continue;
        }
        let abs = (x - y).abs();
        if abs.is_nan() || abs > ATOL + RTOL * largest {
            return Err(format!("{what}: element {i}: lazy-xla {x}, PJRT {y} (largest magnitude {largest})"));
        }
        max_abs = max_abs.max(abs);
        if x != 0.0 {
            max_rel = max_rel.max(abs / x.abs());
        }
    }
    Ok((max_abs, max_rel))
}

/// Runs `computation` on lazy-xla and on the plugin and compares; the differences, or why not.
fn run_both(
    client: &pjrt::Client,
    computation: &XlaComputation,
    arguments: &[Literal],
    what: &str,
) -> Result<(f64, f64), String> {
    let arguments: Vec<&Literal> = arguments.iter().collect();
    let ours = computation
        .compile(&CompileOptions::default())
        .and_then(|exe| exe.execute(&arguments))
        .map_err(|e| format!("{what}: lazy-xla: {e}"))?;
    let executable = client.compile(computation).map_err(|e| format!("{what}: PJRT compile: {e}"))?;
    let theirs = executable.execute(&arguments).map_err(|e| format!("{what}: PJRT execute: {e}"))?;
    compare(&ours, &theirs, what)
}

/// Runs every case, prints each one's differences, and fails listing those that failed.
fn run_all(cases: Vec<(String, XlaComputation, Vec<Literal>)>) {
    let client = client();
    let mut failures = Vec::new();
    let (mut worst_abs, mut worst_rel) = (0.0f64, 0.0f64);
    let total = cases.len();
    for (what, computation, arguments) in cases {
        match run_both(&client, &computation, &arguments, &what) {
            Ok((abs, rel)) => {
                println!("{what}: equal; max abs diff {abs:.3e}, max elementwise rel diff {rel:.3e}");
                worst_abs = worst_abs.max(abs);
                worst_rel = worst_rel.max(rel);
            }
            Err(message) => {
                println!("{message}");
                failures.push(message);
            }
        }
    }
    println!(
        "{} of {total} equal on {} (normwise rtol {RTOL:e}, atol {ATOL:e}); worst abs diff {worst_abs:.3e}, elementwise rel {worst_rel:.3e}",
        total - failures.len(),
        client.platform_name()
    );
    assert!(failures.is_empty(), "{} of {total} differ:\n{}", failures.len(), failures.join("\n"));
}

#[test]
#[ignore = "needs a PJRT plugin: LAZY_XLA_PJRT_PLUGIN=$(scripts/fetch_pjrt_cpu_plugin.sh)"]
fn every_example_module_runs_on_the_plugin_as_on_lazy_xla() {
    let cases = example_modules()
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("the module");
            let computation =
                XlaComputation::from_hlo_text(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let arguments = inputs(&path, &computation);
            let name = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(&path).display().to_string();
            (name, computation, arguments)
        })
        .collect();
    run_all(cases);
}

#[test]
#[ignore = "needs a PJRT plugin: LAZY_XLA_PJRT_PLUGIN=$(scripts/fetch_pjrt_cpu_plugin.sh)"]
fn the_tour_and_tutorial_models_run_on_the_plugin_as_on_lazy_xla() {
    let with_inputs = |what: &str, computation: XlaComputation| {
        let arguments = computation
            .program_shape()
            .parameters
            .iter()
            .enumerate()
            .map(|(i, (_, shape))| generated(shape, i as u64 + 7))
            .collect();
        (what.to_string(), computation, arguments)
    };
    let loss = train_mlp::loss().unwrap();
    let cases = vec![
        with_inputs("tour: dense (column-major w)", tour::model(&mut String::new()).unwrap()),
        with_inputs("tour: W1 at 64", tour::w1(64).unwrap()),
        with_inputs("mlp: forward pass", mlp::forward_pass().unwrap()),
        with_inputs("cnn: forward pass", cnn::forward_pass().unwrap()),
        with_inputs("cnn: embedding bag", cnn::embedding_bag().unwrap()),
        with_inputs("train_mlp: value_and_grad(loss)", value_and_grad(&loss, &[0, 1, 2, 3]).unwrap()),
        with_inputs("train_mlp: loss", loss),
        with_inputs("train_mlp: adam step", train_mlp::adam().unwrap()),
        with_inputs("train_mlp: forward", train_mlp::forward().unwrap()),
    ];
    run_all(cases);
}

#[test]
#[ignore = "needs a PJRT plugin: LAZY_XLA_PJRT_PLUGIN=$(scripts/fetch_pjrt_cpu_plugin.sh)"]
fn the_client_names_its_platform_and_devices() {
    let client = client();
    assert_eq!(client.platform_name(), "cpu");
    let devices = client.devices();
    assert!(!devices.is_empty());
    assert!(devices.iter().all(|d| d.kind() == "cpu"), "{devices:?}");
    // A second client of the same plugin (initialized once) works beside the first.
    let again = pjrt::Client::load(plugin()).expect("a second client");
    assert_eq!(again.devices(), devices);
}

#[test]
#[ignore = "needs a PJRT plugin: LAZY_XLA_PJRT_PLUGIN=$(scripts/fetch_pjrt_cpu_plugin.sh)"]
fn layouts_tuples_and_every_element_type_cross_the_boundary() {
    let client = client();
    for element_type in ElementType::ALL {
        // A column-major argument, a padded one and a row-major one; a tuple result whose first
        // element is column-major (a transpose keeps the layout permuted).
        let b = XlaBuilder::new("boundary");
        let column = Shape::with_layout(element_type, &[3, 4], &[0, 1]).unwrap();
        let padded = Shape::with_layout(element_type, &[3, 4], &[1, 0])
            .unwrap()
            .relayout(&Layout::new(&[1, 0]).with_padding(&[4, 5], PaddingValue::Zero).unwrap())
            .unwrap();
        let x = b.parameter(0, &column, "x");
        let y = b.parameter(1, &padded, "y");
        let z = b.parameter(2, &Shape::new(element_type, &[4, 3]), "z");
        let t = transpose(z, &[1, 0]);
        let root = tuple(&b, &[t, x, y]);
        let computation = b.build(root).unwrap();
        let arguments = [
            generated(&column, 1),
            generated(&padded.without_padding(), 2).relayout(padded.layout()).unwrap(),
            generated(&Shape::new(element_type, &[4, 3]), 3),
        ];
        let what = format!("{element_type}");
        let (abs, _) = run_both(&client, &computation, &arguments, &what).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(abs, 0.0, "{what}: moved values are exact");
    }
}

#[test]
#[ignore = "needs a PJRT plugin: LAZY_XLA_PJRT_PLUGIN=$(scripts/fetch_pjrt_cpu_plugin.sh)"]
fn tuple_arguments_cross_the_boundary_as_their_leaves() {
    let client = client();
    // A nested tuple parameter between two arrays; its first leaf column-major.
    let b = XlaBuilder::new("tupled");
    let column = Shape::with_layout(ElementType::F32, &[2, 3], &[0, 1]).unwrap();
    let state = Shape::tuple(&[column.clone(), Shape::tuple(&[shape!(s32[]), shape!(f32[3])])]);
    let scale = b.parameter(0, &shape!(f32[]), "scale");
    let tupled = b.parameter(1, &state, "state");
    let offset = b.parameter(2, &shape!(f32[3]), "offset");
    let (matrix, inner) = (get_tuple_element(tupled, 0), get_tuple_element(tupled, 1));
    let (count, vector) = (get_tuple_element(inner, 0), get_tuple_element(inner, 1));
    let row = broadcast_in_dim(vector + offset, &[2, 3], &[1]);
    let root = tuple(&b, &[matrix * broadcast_in_dim(scale, &[2, 3], &[]) + row, count + count]);
    let computation = b.build(root).unwrap();
    let arguments = [
        Literal::scalar(1.5f32),
        Literal::tuple(vec![
            generated(&column, 4),
            Literal::tuple(vec![Literal::scalar(21i32), generated(&shape!(f32[3]), 5)]),
        ]),
        generated(&shape!(f32[3]), 6),
    ];
    let (abs, _) = run_both(&client, &computation, &arguments, "tupled").unwrap_or_else(|e| panic!("{e}"));
    assert!(abs <= 1e-6, "{abs}");
    // A tuple of the wrong structure is refused before the plugin sees it.
    let executable = client.compile(&computation).unwrap();
    let flat = Literal::tuple(vec![generated(&column, 4), Literal::scalar(21i32)]);
    let error = executable.execute(&[&arguments[0], &flat, &arguments[2]]).err().unwrap();
    assert!(matches!(error, Error::InvalidArgument(_)), "{error}");
    assert!(error.to_string().starts_with("argument 1 (state) has shape ("), "{error}");
}

#[test]
#[ignore = "needs a PJRT plugin: LAZY_XLA_PJRT_PLUGIN=$(scripts/fetch_pjrt_cpu_plugin.sh)"]
fn wrong_arguments_are_errors_before_the_plugin_sees_them() {
    let client = client();
    let b = XlaBuilder::new("f");
    let x = b.parameter(0, &shape!(f32[2]), "x");
    let executable = client.compile(&b.build(x + x).unwrap()).unwrap();
    let error = executable.execute(&[]).err().unwrap();
    assert_eq!(error.to_string(), "the computation takes 1 arguments but 0 were given");
    let error = executable.execute(&[&Literal::vec1(&[1.0f32, 2.0, 3.0])]).err().unwrap();
    assert!(
        error.to_string().starts_with("argument 0 (x) has shape f32[3]{0} but parameter 0 expects f32[2]"),
        "{error}"
    );
    let error = executable.execute(&[&Literal::vec1(&[1i32, 2])]).err().unwrap();
    assert!(matches!(error, Error::InvalidArgument(_)), "{error}");
    // And the executable still runs.
    let out = executable.execute(&[&Literal::vec1(&[1.0f32, 2.0])]).unwrap();
    assert_eq!(out.to_vec::<f32>().unwrap(), vec![2.0, 4.0]);
}

#[test]
#[ignore = "needs a PJRT plugin: LAZY_XLA_PJRT_PLUGIN=$(scripts/fetch_pjrt_cpu_plugin.sh)"]
fn a_module_the_plugin_rejects_is_an_error_with_its_message() {
    let client = client();
    // 2^61 f32 elements: lazy-xla builds the (never run) graph, XLA's shape check refuses a
    // buffer of 2^63 bytes.
    let b = XlaBuilder::new("too_big");
    let huge = iota(&b, &Shape::new(ElementType::F32, &[1 << 20, 1 << 20, 1 << 21]), 0);
    let sum = XlaBuilder::new("sum");
    let (p, q) = (sum.parameter(0, &shape!(f32[]), "p"), sum.parameter(1, &shape!(f32[]), "q"));
    let sum = sum.build(add(p, q, &[])).unwrap();
    let computation = b.build(reduce(huge, b.constant_r0(0.0f32), &sum, &[0, 1, 2])).unwrap();
    let error = client.compile(&computation).err().expect("the plugin refuses the module");
    let Error::Pjrt { message, call, code, .. } = &error else { panic!("not a PJRT error: {error:?}") };
    assert_eq!(call, "PJRT_Client_Compile");
    assert!(code.is_some(), "{error}");
    assert!(!message.is_empty());
    assert!(error.to_string().contains("tests/pjrt_cpu.rs:"), "the caller's line: {error}");
    println!("{error}");
}

#[test]
fn a_path_that_does_not_exist_is_an_error() {
    let error = pjrt::Client::load("/no/such/dir/pjrt_plugin.so").err().expect("an error");
    let Error::Pjrt { message, code, call, .. } = &error else { panic!("{error:?}") };
    assert!(message.starts_with("cannot open the PJRT plugin /no/such/dir/pjrt_plugin.so: "), "{message}");
    assert_eq!((code, call.as_str()), (&None, "lazy-xla"));
    assert!(error.to_string().contains("tests/pjrt_cpu.rs:"), "the caller's line: {error}");
}

#[test]
fn a_file_that_is_no_library_is_an_error() {
    let path = std::env::temp_dir().join(format!("lazy-xla-not-a-plugin-{}.so", std::process::id()));
    std::fs::write(&path, b"not an ELF file").unwrap();
    let error = pjrt::Client::load(&path).err().expect("an error");
    std::fs::remove_file(&path).unwrap();
    assert!(error.to_string().starts_with("cannot open the PJRT plugin "), "{error}");
}

#[test]
fn a_library_without_get_pjrt_api_is_an_error() {
    // The C library, wherever this system keeps it: a shared library, but no plugin.
    let candidates = [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/usr/lib/x86_64-linux-gnu/libc.so.6",
        "/lib/aarch64-linux-gnu/libc.so.6",
        "/usr/lib64/libc.so.6",
        "/lib64/libc.so.6",
        "/usr/lib/libc.so.6",
    ];
    let Some(libc) = candidates.iter().map(Path::new).find(|p| p.exists()) else {
        println!("no libc.so.6 at the usual places; nothing to load");
        return;
    };
    let error = pjrt::Client::load(libc).err().expect("an error");
    assert!(error.to_string().contains("is not a PJRT plugin (no GetPjrtApi)"), "{error}");
}
