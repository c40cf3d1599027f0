//! The `lazy-xla` binary on jax's modules (`tests/data/jax/`): `run`, `opt`, `dot`, `bench`
//! and `--help`; bad files and shape mismatches are one line on stderr and exit status 1.

use std::path::PathBuf;
use std::process::{Command, Output};

use lazy_xla::Literal;

fn data(file: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/jax").join(file).display().to_string()
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("lazy-xla-cli-{}-{name}", std::process::id()))
}

fn lazy_xla(arguments: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lazy-xla")).args(arguments).output().expect("the binary runs")
}

fn stdout(output: &Output) -> String {
    assert!(output.status.success(), "failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// `--input` for each of `name`'s input files.
fn inputs(name: &str, count: usize) -> Vec<String> {
    (0..count).flat_map(|i| ["--input".to_string(), data(&format!("{name}.in{i}.npy"))]).collect()
}

#[test]
fn run_prints_and_writes_the_results() {
    let out = temp("mlp.npy");
    let mut arguments =
        vec!["run".to_string(), data("mlp.hlo"), "--output".into(), out.display().to_string()];
    arguments.extend(inputs("mlp", 5));
    let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
    let printed = stdout(&lazy_xla(&arguments));
    assert!(printed.starts_with("f32[4,3] {\n  { 0.14"), "{printed}");
    let got = Literal::read_npy(&out).unwrap().to_vec::<f32>().unwrap();
    let want = Literal::read_npy(data("mlp.out0.npy")).unwrap().to_vec::<f32>().unwrap();
    assert!(got.iter().zip(&want).all(|(g, w)| (g - w).abs() <= 1e-5 * w.abs() + 1e-6));
    std::fs::remove_file(&out).unwrap();

    // A tuple: one path becomes one file per element; unfused on one thread.
    let out = temp("stats.npy");
    let mut arguments = vec![
        "run".to_string(),
        data("statistics.hlo"),
        "-o".into(),
        out.display().to_string(),
        "--no-fusion".into(),
    ];
    arguments.extend(["--threads".to_string(), "1".to_string()]);
    arguments.extend(inputs("statistics", 2));
    let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
    let printed = stdout(&lazy_xla(&arguments));
    assert!(printed.contains("s32[4] {"), "{printed}");
    for i in 0..6 {
        let file = out.with_extension(format!("{i}.npy"));
        let want = Literal::read_npy(data(&format!("statistics.out{i}.npy"))).unwrap();
        assert_eq!(Literal::read_npy(&file).unwrap().shape(), want.shape());
        std::fs::remove_file(file).unwrap();
    }
}

#[test]
fn bench_refuses_no_fusion_since_it_times_both() {
    let output = lazy_xla(&["bench", &data("mlp.hlo"), "--no-fusion"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("unexpected argument '--no-fusion'"), "{stderr}");
}

#[test]
fn opt_dot_and_bench() {
    let optimized = stdout(&lazy_xla(&["opt", &data("mlp.hlo")]));
    assert!(optimized.starts_with("HloModule") && optimized.contains(" fusion("), "{optimized}");
    let graph = stdout(&lazy_xla(&["dot", &data("mlp.hlo"), "--optimized"]));
    assert!(graph.starts_with("digraph") && graph.contains("subgraph cluster_"), "{graph}");
    let file = temp("graph.dot");
    stdout(&lazy_xla(&["dot", &data("where_clip_relu.hlo"), "-o", file.to_str().unwrap()]));
    assert!(std::fs::read_to_string(&file).unwrap().contains("call"));
    std::fs::remove_file(&file).unwrap();
    let timed = stdout(&lazy_xla(&["bench", &data("mlp_optimized.hlo"), "--seconds", "0"]));
    assert!(timed.contains("fused: median") && timed.contains("fusion speedup"), "{timed}");
}

#[test]
fn every_subcommand_has_help_with_an_example() {
    for subcommand in ["run", "opt", "dot", "bench", "grad"] {
        let help = stdout(&lazy_xla(&[subcommand, "--help"]));
        assert!(help.contains(&format!("Example:\n  lazy-xla {subcommand} ")), "{help}");
    }
}

#[test]
fn grad_prints_a_module_that_runs_and_refuses_what_has_no_gradient() {
    // f(x, w) = Σ x·x·w: ∂f/∂x = 2·x·w, ∂f/∂w = x·x.
    let module = temp("square_sum.hlo");
    std::fs::write(
        &module,
        "HloModule square_sum\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
         ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  x = f32[3]{0} parameter(0)\n  \
         w = f32[3]{0} parameter(1)\n  xx = f32[3]{0} multiply(x, x)\n  y = f32[3]{0} multiply(xx, w)\n  \
         zero = f32[] constant(0)\n  ROOT r = f32[] reduce(y, zero), dimensions={0}, to_apply=add\n}\n",
    )
    .unwrap();
    let (x, w) = (temp("square_sum.x.npy"), temp("square_sum.w.npy"));
    Literal::vec1(&[1.0f32, -2.0, 0.5]).write_npy(&x).unwrap();
    Literal::vec1(&[3.0f32, 1.0, -4.0]).write_npy(&w).unwrap();
    let gradient = temp("square_sum.grad.hlo");
    let (module_path, gradient_path) = (module.to_str().unwrap(), gradient.to_str().unwrap());
    stdout(&lazy_xla(&["grad", module_path, "--wrt", "1,0", "-o", gradient_path]));
    let out = temp("square_sum.grad.npy");
    let arguments = ["run", gradient_path, "-i", x.to_str().unwrap(), "-i", w.to_str().unwrap()];
    stdout(&lazy_xla(&[&arguments[..], &["-o", out.to_str().unwrap()]].concat()));
    let part = |i: usize| {
        Literal::read_npy(out.with_extension(format!("{i}.npy"))).unwrap().to_vec::<f32>().unwrap()
    };
    assert_eq!(part(0), vec![1.0, 4.0, 0.25], "∂f/∂w");
    assert_eq!(part(1), vec![6.0, -4.0, -4.0], "∂f/∂x");
    // The other modes print modules with the parameters they add.
    let vjp = stdout(&lazy_xla(&["grad", module_path, "--wrt", "0", "--vjp"]));
    assert!(vjp.contains("(f32[3]{0}, f32[3]{0}, f32[])->"), "{vjp}");
    let jvp = stdout(&lazy_xla(&["grad", module_path, "--wrt", "0", "--jvp"]));
    assert!(jvp.contains("(f32[3]{0}, f32[3]{0}, f32[3]{0})->(f32[], f32[])"), "{jvp}");
    fails(&["grad", module_path, "--wrt", "2"], "square_sum.hlo: ");
    for file in [module, x, w, gradient, out.with_extension("0.npy"), out.with_extension("1.npy")] {
        std::fs::remove_file(file).unwrap();
    }
}

/// Fails with one line on stderr containing `expected`, no backtrace.
fn fails(arguments: &[&str], expected: &str) {
    let output = lazy_xla(arguments);
    assert_eq!(output.status.code(), Some(1), "{arguments:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(expected) && !stderr.contains("panicked"), "{stderr}\nwant: {expected}");
}

#[test]
fn bad_input_is_one_line_and_exit_status_1() {
    fails(&["run", "/no/such/module.hlo"], "/no/such/module.hlo: No such file");
    let module = temp("bad.hlo");
    std::fs::write(&module, "HloModule m\n\nENTRY e {\n  ROOT y = f32[2]{0} no-such-op()\n}\n").unwrap();
    fails(
        &["opt", module.to_str().unwrap()],
        &format!("{}:4:22: unknown opcode: no-such-op", module.display()),
    );
    std::fs::remove_file(&module).unwrap();
    fails(&["run", &data("mlp.hlo"), "--input", &data("mlp.in0.npy")], "takes 5 parameters but 1 --input");
    let mut swapped = inputs("mlp", 5);
    swapped.swap(1, 3);
    let mut arguments = vec!["run".to_string(), data("mlp.hlo")];
    arguments.extend(swapped);
    let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
    fails(&arguments, "holds f32[8,16] but parameter 0 (Arg_0) is f32[4,8]");
    fails(
        &["run", &data("loops.hlo"), "-i", &data("mlp.hlo"), "-i", &data("loops.in1.npy")],
        "not a .npy file",
    );
}

/// `run --pjrt PLUGIN`'s arguments for `mlp.hlo` and its inputs.
fn run_on_plugin(plugin: &str) -> Vec<String> {
    let mut arguments = vec!["run".to_string(), data("mlp.hlo"), "--pjrt".into(), plugin.into()];
    arguments.extend(inputs("mlp", 5));
    arguments
}

#[test]
#[cfg(not(feature = "pjrt"))]
fn run_on_a_pjrt_plugin_needs_the_feature() {
    let arguments = run_on_plugin("/some/pjrt_plugin.so");
    let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
    fails(
        &arguments,
        "--pjrt /some/pjrt_plugin.so needs lazy-xla built with the pjrt feature: cargo build --release --features pjrt",
    );
}

#[test]
#[cfg(feature = "pjrt")]
fn run_on_a_plugin_that_does_not_open_is_one_line() {
    let arguments = run_on_plugin("/no/such/pjrt_plugin.so");
    let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
    fails(&arguments, "cannot open the PJRT plugin /no/such/pjrt_plugin.so");
}

#[test]
#[cfg(feature = "pjrt")]
#[ignore = "needs a PJRT plugin: LAZY_XLA_PJRT_PLUGIN=$(scripts/fetch_pjrt_cpu_plugin.sh)"]
fn run_on_the_cpu_plugin_gives_jaxs_values() {
    let plugin =
        std::env::var("LAZY_XLA_PJRT_PLUGIN").expect("LAZY_XLA_PJRT_PLUGIN: the path of a PJRT plugin");
    let out = temp("mlp-pjrt.npy");
    let mut arguments = run_on_plugin(&plugin);
    arguments.extend(["--output".to_string(), out.display().to_string()]);
    let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
    let printed = stdout(&lazy_xla(&arguments));
    assert!(printed.starts_with("f32[4,3] {\n  { 0.14"), "{printed}");
    let got = Literal::read_npy(&out).unwrap().to_vec::<f32>().unwrap();
    let want = Literal::read_npy(data("mlp.out0.npy")).unwrap().to_vec::<f32>().unwrap();
    assert!(got.iter().zip(&want).all(|(g, w)| (g - w).abs() <= 1e-5 * w.abs() + 1e-6));
    std::fs::remove_file(&out).unwrap();
}
