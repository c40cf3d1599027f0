//! `lazy-xla`: run, optimize, draw and time HLO modules (what jax's
//! `jax.jit(f).lower(..).as_text(dialect="hlo")` and XLA's dumps print) with lazy-xla, inputs and
//! outputs as NumPy `.npy` files. A bad file or a shape mismatch is one line on stderr and exit
//! status 1.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use lazy_xla::{CompileOptions, Error, Executable, Literal, Shape, XlaComputation};

#[derive(Parser)]
#[command(name = "lazy-xla", version, about = "Run, optimize, draw and time HLO modules with lazy-xla")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a module on .npy inputs; print the results as XLA's Literal text and write them.
    #[command(
        after_help = "Example:\n  lazy-xla run mlp.hlo --input x.npy --input w.npy --output out.npy\n\n\
        A tuple result is printed element by element; give one --output per element, or one \
        path to write out.0.npy, out.1.npy, …"
    )]
    Run {
        #[command(flatten)]
        module: ModuleArgs,
        /// Where to write the results (.npy).
        #[arg(long, short)]
        output: Vec<PathBuf>,
        /// Print every element, however many.
        #[arg(long)]
        full: bool,
        /// Print the memory the run is planned to use (arguments, outputs, temporaries, peak).
        #[arg(long)]
        memory: bool,
        /// Compile without fusion.
        #[arg(long)]
        no_fusion: bool,
        /// Run on this PJRT plugin (a shared library such as XLA's pjrt_c_api_cpu_plugin.so or
        /// jax-cuda12-pjrt's xla_cuda_plugin.so) instead of lazy-xla's executor; needs lazy-xla
        /// built with `--features pjrt`.
        #[arg(long, value_name = "PLUGIN")]
        pjrt: Option<PathBuf>,
    },
    /// Print the optimized module (fusions included) as HLO text.
    #[command(after_help = "Example:\n  lazy-xla opt mlp.hlo > mlp.optimized.hlo")]
    Opt {
        /// The HLO module.
        module: PathBuf,
        /// Optimize without fusing.
        #[arg(long)]
        no_fusion: bool,
    },
    /// Write the module as Graphviz (`dot -Tsvg`); optimized, each fusion a coloured cluster.
    #[command(after_help = "Example:\n  lazy-xla dot mlp.hlo --optimized | dot -Tsvg > mlp.svg")]
    Dot {
        /// The HLO module.
        module: PathBuf,
        /// Draw the optimized graph (fusions as clusters) rather than the module as written.
        #[arg(long)]
        optimized: bool,
        /// Write to this file instead of stdout.
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Print the module's derivative as HLO text: its gradient, or its vjp or jvp.
    #[command(after_help = "Example:\n  lazy-xla grad loss.hlo --wrt 0,1 > loss.grad.hlo\n\n\
        Without --vjp, --jvp or --value, the module's result must be a floating-point scalar and \
        the printed module returns the tuple of its gradients (jax.grad); --value puts the value \
        first (jax.value_and_grad); --vjp takes one more parameter, the result's cotangent; \
        --jvp one tangent per listed parameter.")]
    Grad {
        /// The HLO module.
        module: PathBuf,
        /// The parameters to differentiate with respect to, by number.
        #[arg(long, value_delimiter = ',', required = true)]
        wrt: Vec<i64>,
        /// Reverse mode of any result: the cotangents of the listed parameters.
        #[arg(long, conflicts_with_all = ["jvp", "value"])]
        vjp: bool,
        /// Forward mode: the result, then its tangent.
        #[arg(long, conflicts_with = "value")]
        jvp: bool,
        /// The value, then the gradients.
        #[arg(long)]
        value: bool,
        /// Write to this file instead of stdout.
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Time the module fused against unfused.
    #[command(after_help = "Example:\n  lazy-xla bench mlp.hlo --input x.npy --input w.npy --seconds 5\n\n\
        Without --input, every parameter gets deterministic pseudo-random values of its shape.")]
    Bench {
        #[command(flatten)]
        module: ModuleArgs,
        /// Seconds to spend on each of fused and unfused.
        #[arg(long, default_value_t = 2.0)]
        seconds: f64,
    },
    /// Write the module as a serialized xla.HloModuleProto (what a PJRT plugin compiles as
    /// format "hlo", and jaxlib's `XlaComputation(bytes)` reads).
    #[cfg(feature = "pjrt")]
    #[command(after_help = "Example:\n  lazy-xla proto mlp.hlo -o mlp.pb")]
    Proto {
        /// The HLO module (text).
        module: PathBuf,
        /// Where to write the proto.
        #[arg(long, short)]
        output: PathBuf,
    },
}

#[derive(Args)]
struct ModuleArgs {
    /// The HLO module (text).
    module: PathBuf,
    /// An input (.npy), one per parameter, in parameter order.
    #[arg(long, short)]
    input: Vec<PathBuf>,
    /// Threads to run on (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// The most bytes a run may have live at once (default: what the system has available).
    #[arg(long)]
    memory_limit: Option<u64>,
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("lazy-xla: {message}");
            ExitCode::FAILURE
        }
    }
}

type Outcome<T = ()> = std::result::Result<T, String>;

fn run(cli: Cli) -> Outcome {
    match cli.command {
        Command::Run { module, output, full, memory, no_fusion, pjrt } => {
            run_module(&module, &output, full, memory, !no_fusion, pjrt.as_deref())
        }
        Command::Opt { module, no_fusion } => {
            let options = CompileOptions { fusion: !no_fusion, ..Default::default() };
            let executable = compile(&load(&module)?, &options, &module)?;
            print!("{}", executable.to_hlo_text());
            Ok(())
        }
        Command::Dot { module, optimized, output } => {
            let computation = load(&module)?;
            let dot = match optimized {
                true => compile(&computation, &CompileOptions::default(), &module)?.to_dot(),
                false => computation.to_dot(),
            };
            write_or_print(output.as_deref(), &dot)
        }
        Command::Bench { module, seconds } => bench(&module, seconds),
        Command::Grad { module, wrt, vjp, jvp, value, output } => {
            let computation = load(&module)?;
            let derive = match (vjp, jvp, value) {
                (true, _, _) => lazy_xla::vjp,
                (_, true, _) => lazy_xla::jvp,
                (_, _, true) => lazy_xla::value_and_grad,
                _ => lazy_xla::grad,
            };
            let derived = derive(&computation, &wrt).map_err(|e| format!("{}: {e}", module.display()))?;
            write_or_print(output.as_deref(), &derived.to_hlo_text())
        }
        #[cfg(feature = "pjrt")]
        Command::Proto { module, output } => {
            let bytes = load(&module)?.to_hlo_proto();
            std::fs::write(&output, bytes).map_err(|e| format!("{}: {e}", output.display()))
        }
    }
}

/// Writes `text` to `path`, or prints it where there is none.
fn write_or_print(path: Option<&Path>, text: &str) -> Outcome {
    match path {
        Some(path) => std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display())),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

/// Reads and imports a module; a parse error names `file:line:column`.
fn load(path: &Path) -> Outcome<XlaComputation> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    XlaComputation::from_hlo_text(&text).map_err(|error| match error {
        Error::HloText { message, line, column, token } => {
            format!("{}:{line}:{column}: {message} (at `{token}`)", path.display())
        }
        other => format!("{}: {other}", path.display()),
    })
}

fn compile(computation: &XlaComputation, options: &CompileOptions, path: &Path) -> Outcome<Executable> {
    computation.compile(options).map_err(|e| format!("{}: {e}", path.display()))
}

/// The inputs for `computation`: the files given, checked against the parameters, or (for
/// benchmarks, when none are given) pseudo-random values.
fn inputs(computation: &XlaComputation, files: &[PathBuf], allow_random: bool) -> Outcome<Vec<Literal>> {
    let parameters = computation.program_shape().parameters;
    if files.is_empty() && allow_random {
        return parameters.iter().map(|(_, shape)| random_literal(shape)).collect();
    }
    if files.len() != parameters.len() {
        return Err(format!(
            "the module takes {} parameters but {} --input files were given",
            parameters.len(),
            files.len()
        ));
    }
    let mut literals = Vec::new();
    for (number, (file, (name, shape))) in files.iter().zip(&parameters).enumerate() {
        let literal = Literal::read_npy(file).map_err(|e| e.to_string())?;
        if !literal.shape().same_dimensions_and_type(shape) {
            return Err(format!(
                "{} holds {} but parameter {number} ({name}) is {}",
                file.display(),
                literal.shape().human_string(),
                shape.human_string()
            ));
        }
        literals.push(literal);
    }
    Ok(literals)
}

/// Deterministic values in [-1, 1) (0/1 for pred, small integers for integer types).
fn random_literal(shape: &Shape) -> Outcome<Literal> {
    if shape.is_tuple() {
        return shape
            .tuple_shapes()
            .iter()
            .map(random_literal)
            .collect::<Outcome<Vec<_>>>()
            .map(Literal::tuple);
    }
    let count = usize::try_from(shape.element_count()).map_err(|_| format!("{shape} is too large"))?;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let values: Vec<f64> = (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect();
    let floats = Literal::from_vec(&shape.with_element_type(lazy_xla::ElementType::F64), values)
        .map_err(|e| e.to_string())?;
    convert(&floats, shape)
}

/// `literal`'s values as `shape`'s element type (through a one-op computation).
fn convert(literal: &Literal, shape: &Shape) -> Outcome<Literal> {
    let b = lazy_xla::XlaBuilder::new("convert");
    let x = b.parameter(0, literal.shape(), "x");
    let scaled = if shape.element_type().is_float() || shape.element_type() == lazy_xla::ElementType::Pred {
        x
    } else {
        x * b.constant_r0(8.0f64)
    };
    let converted = lazy_xla::convert_element_type(scaled, shape.element_type());
    let computation = b.build(converted).map_err(|e| e.to_string())?;
    let executable = computation.compile(&CompileOptions::default()).map_err(|e| e.to_string())?;
    executable.execute(&[literal]).map_err(|e| e.to_string())
}

fn options(module: &ModuleArgs, fusion: bool) -> CompileOptions {
    CompileOptions { fusion, num_threads: module.threads, memory_limit: module.memory_limit }
}

/// The plan's memory, in one line.
fn memory_line(executable: &Executable) -> String {
    let stats = executable.memory_stats();
    format!(
        "memory: arguments {}, outputs {}, temporaries {}, peak {} (every array apart: {})",
        format_bytes(stats.argument_bytes),
        format_bytes(stats.output_bytes),
        format_bytes(stats.temp_bytes),
        format_bytes(stats.peak_bytes),
        format_bytes(stats.unplanned_bytes)
    )
}

fn format_bytes(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.2} MiB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

fn run_module(
    module: &ModuleArgs,
    outputs: &[PathBuf],
    full: bool,
    memory: bool,
    fusion: bool,
    pjrt: Option<&Path>,
) -> Outcome {
    let computation = load(&module.module)?;
    let literals = inputs(&computation, &module.input, false)?;
    let arguments: Vec<&Literal> = literals.iter().collect();
    let result = match pjrt {
        Some(plugin) => {
            if memory {
                return Err("--memory shows lazy-xla's own plan; it does not apply with --pjrt".to_string());
            }
            run_on_plugin(plugin, &computation, &arguments)?
        }
        None => {
            let executable = compile(&computation, &options(module, fusion), &module.module)?;
            if memory {
                eprintln!("{}", memory_line(&executable));
            }
            executable.execute(&arguments).map_err(|e| e.to_string())?
        }
    };
    let leaves =
        if result.is_tuple() { result.decompose_tuple().map_err(|e| e.to_string())? } else { vec![result] };
    for leaf in &leaves {
        println!("{}", shortened(leaf, full));
    }
    let paths: Vec<PathBuf> = match (outputs, leaves.len()) {
        ([], _) => Vec::new(),
        (paths, count) if paths.len() == count => paths.to_vec(),
        ([one], count) => (0..count).map(|i| one.with_extension(format!("{i}.npy"))).collect(),
        (paths, count) => {
            return Err(format!(
                "the result has {count} arrays but {} --output paths were given",
                paths.len()
            ))
        }
    };
    for (leaf, path) in leaves.iter().zip(&paths) {
        leaf.write_npy(path).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// `computation` compiled and run on the PJRT plugin at `plugin`.
#[cfg(feature = "pjrt")]
fn run_on_plugin(plugin: &Path, computation: &XlaComputation, arguments: &[&Literal]) -> Outcome<Literal> {
    let client = lazy_xla::pjrt::Client::load(plugin).map_err(|e| e.to_string())?;
    let executable = client.compile(computation).map_err(|e| e.to_string())?;
    executable.execute(arguments).map_err(|e| e.to_string())
}

/// Without the `pjrt` feature there is no PJRT client: say how to build one.
#[cfg(not(feature = "pjrt"))]
fn run_on_plugin(plugin: &Path, _: &XlaComputation, _: &[&Literal]) -> Outcome<Literal> {
    Err(format!(
        "--pjrt {} needs lazy-xla built with the pjrt feature: cargo build --release --features pjrt",
        plugin.display()
    ))
}

/// XLA's Literal text, its first lines only for a big array unless `full`.
fn shortened(literal: &Literal, full: bool) -> String {
    const LINES: usize = 12;
    let text = literal.to_string();
    let lines: Vec<&str> = text.lines().collect();
    if full || literal.shape().element_count() <= 1000 || lines.len() <= LINES {
        return text;
    }
    format!(
        "{}\n… ({} elements; --full prints them all, --output writes them)",
        lines[..LINES].join("\n"),
        literal.shape().element_count()
    )
}

/// Times fused and unfused runs for `seconds` each.
fn bench(module: &ModuleArgs, seconds: f64) -> Outcome {
    let computation = load(&module.module)?;
    let literals = inputs(&computation, &module.input, true)?;
    let arguments: Vec<&Literal> = literals.iter().collect();
    let budget = Duration::from_secs_f64(seconds.max(0.0));
    let mut medians = Vec::new();
    let progress = std::io::stderr().is_terminal();
    for fusion in [true, false] {
        let label = if fusion { "fused" } else { "unfused" };
        let start = Instant::now();
        let executable = compile(&computation, &options(module, fusion), &module.module)?;
        let compiled = start.elapsed();
        executable.execute(&arguments).map_err(|e| e.to_string())?; // warm-up
        let (mut times, started, mut reported) = (Vec::new(), Instant::now(), Instant::now());
        while times.len() < 3 || started.elapsed() < budget {
            let run = Instant::now();
            executable.execute(&arguments).map_err(|e| e.to_string())?;
            times.push(run.elapsed());
            if progress && reported.elapsed() > Duration::from_millis(500) {
                eprint!(
                    "\r{label}: {} runs, {:.1} s of {seconds} s",
                    times.len(),
                    started.elapsed().as_secs_f64()
                );
                reported = Instant::now();
            }
        }
        if progress {
            eprint!("\r\x1b[K");
        }
        let mean = times.iter().sum::<Duration>() / times.len() as u32;
        times.sort();
        let median = times[times.len() / 2];
        println!(
            "{label:>8}: median {} mean {} min {} over {} runs (compiled in {})",
            format_duration(median),
            format_duration(mean),
            format_duration(times[0]),
            times.len(),
            format_duration(compiled)
        );
        println!("{label:>8}  {}", memory_line(&executable));
        medians.push(median);
    }
    println!("fusion speedup: {:.2}x", medians[1].as_secs_f64() / medians[0].as_secs_f64().max(1e-12));
    Ok(())
}

fn format_duration(duration: Duration) -> String {
    let seconds = duration.as_secs_f64();
    match seconds {
        s if s >= 1.0 => format!("{s:.3} s"),
        s if s >= 1e-3 => format!("{:.3} ms", s * 1e3),
        s => format!("{:.1} µs", s * 1e6),
    }
}
