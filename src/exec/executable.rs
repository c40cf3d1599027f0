//! `CompileOptions` and `Executable`: a computation made ready to run, and running it.

use std::sync::Arc;

use crate::error::{invalid_argument, Error, Result};
use crate::exec::memory::MemoryStats;
use crate::exec::plan::step::fused_program;
use crate::exec::plan::{evaluate, Plan};
use crate::exec::value::Value;
use crate::hlo::computation::XlaComputation;
use crate::hlo::dot::computation_dot;
use crate::hlo::ir::{HloComputation, InstructionId};
use crate::hlo::text::module_text;
use crate::literal::Literal;
use crate::passes::{optimize, Backend};
use crate::shape::Shape;

/// How to compile a computation.
///
/// ```
/// use lazy_xla::CompileOptions;
/// let single_threaded = CompileOptions { num_threads: Some(1), ..Default::default() };
/// assert!(single_threaded.fusion);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileOptions {
    /// Fuse chains of broadcasts and element-wise ops into single loops (default true).
    pub fusion: bool,
    /// Threads to run on; `None` uses rayon's global pool, `Some(1)` the calling thread only.
    pub num_threads: Option<usize>,
    /// The most bytes a run may have live at once (its planned peak,
    /// [`MemoryStats::peak_bytes`]): a plan whose peak is more is an error from `compile`, and
    /// a run that would need more (with copies of arguments in other layouts) an error from
    /// `execute`, before anything large is allocated. `None` (the default) limits a run only
    /// by the memory the system has available, which `execute` checks in any case.
    pub memory_limit: Option<u64>,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions { fusion: true, num_threads: None, memory_limit: None }
    }
}

impl CompileOptions {
    /// The default options with fusion off: every op computes into its own buffer (the
    /// baseline fused execution is measured and checked against).
    ///
    /// ```
    /// use lazy_xla::*;
    /// let b = XlaBuilder::new("f");
    /// let x = b.parameter(0, &shape!(f32[4]), "x");
    /// let exe = b.build(exp(x) + x)?.compile(&CompileOptions::unfused())?;
    /// assert!(!exe.to_hlo_text().contains("fusion"));
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn unfused() -> CompileOptions {
        CompileOptions { fusion: false, ..Default::default() }
    }
}

/// A compiled computation: run it with [`Executable::execute`] or [`Executable::execute_into`].
/// It is `Send + Sync`, and several threads may run it at once.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("axpy");
/// let x = b.parameter(0, &shape!(f32[3]), "x");
/// let y = b.parameter(1, &shape!(f32[3]), "y");
/// let exe = b.build(b.constant_r0(2.0f32) * x + y)?.compile(&CompileOptions::default())?;
/// let out = exe.execute(&[&Literal::vec1(&[1.0f32, 2.0, 3.0]), &Literal::vec1(&[1.0f32; 3])])?;
/// assert_eq!(out.to_vec::<f32>()?, vec![3.0, 5.0, 7.0]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
pub struct Executable {
    plan: Plan,
    /// The computation's parameters, by number (found once: each call checks its arguments).
    parameters: Vec<InstructionId>,
    options: CompileOptions,
    pool: Option<rayon::ThreadPool>,
}

impl XlaComputation {
    /// Compiles the computation for this machine's CPU.
    ///
    /// ```
    /// use lazy_xla::*;
    /// let b = XlaBuilder::new("f");
    /// let x = b.parameter(0, &shape!(f32[2]), "x");
    /// let exe = b.build(-x)?.compile(&CompileOptions { fusion: false, ..Default::default() })?;
    /// assert_eq!(exe.execute(&[&Literal::vec1(&[1.0f32, -2.0])])?.to_vec::<f32>()?, vec![-1.0, 2.0]);
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn compile(&self, options: &CompileOptions) -> Result<Executable> {
        let pool = match options.num_threads {
            Some(0) => invalid_argument!("num_threads must be at least 1 (or None for rayon's pool)"),
            Some(threads) if threads > 1 => Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .map_err(|e| Error::invalid(format!("cannot start {threads} threads: {e}")))?,
            ),
            _ => None,
        };
        let loop_compiles = |fused: &HloComputation, inputs: &[Shape]| {
            fused_program(fused, inputs, fused.result_shape()).is_some_and(|p| p.folds_as_unfused())
        };
        let backend = Backend { evaluate: &evaluate, loop_compiles: &loop_compiles };
        let optimized = optimize(&self.entry, options.fusion, verify_passes(), backend)?;
        let parameters = optimized.parameter_ids();
        let plan = Plan::new(Arc::new(optimized))?;
        let stats = plan.memory_stats();
        if let Some(limit) = options.memory_limit.filter(|&limit| stats.peak_bytes > limit) {
            return Err(Error::ResourceExhausted {
                needed: stats.peak_bytes,
                available: limit,
                by: "the memory_limit".into(),
            });
        }
        Ok(Executable { plan, parameters, options: options.clone(), pool })
    }
}

/// The fewest bytes a run holds at its peak for [`Executable::execute`] to move it onto
/// rayon's pool: a smaller one has no step large enough to share, and would pay the hand-over
/// (a few microseconds) for nothing.
const SHARED_RUN_BYTES: u64 = 1 << 16;

/// Whether `compile` verifies the computation and the result of every optimizer pass: always
/// in debug builds of lazy-xla (and so in its tests), and in release builds when the
/// environment variable `LAZY_XLA_VERIFY` is set to `1`. A failure is an
/// [`Error::InvalidComputation`] naming the pass and the instruction.
fn verify_passes() -> bool {
    cfg!(debug_assertions) || std::env::var_os("LAZY_XLA_VERIFY").is_some_and(|v| v == "1")
}

impl Executable {
    /// Runs the computation on `arguments` (one per parameter, in parameter order; any layout
    /// and padding) and returns the result in the root's shape and layout.
    ///
    /// ```
    /// use lazy_xla::*;
    /// let b = XlaBuilder::new("f");
    /// let x = b.parameter(0, &shape!(s32[2, 2]), "x");
    /// let exe = b.build(transpose(x, &[1, 0]))?.compile(&CompileOptions::default())?;
    /// let out = exe.execute(&[&Literal::from_vec(&shape!(s32[2, 2]), vec![1, 2, 3, 4])?])?;
    /// assert_eq!(out.shape().to_string(), "s32[2,2]{0,1}");
    /// assert_eq!(out.to_vec::<i32>()?, vec![1, 3, 2, 4]);
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn execute(&self, arguments: &[&Literal]) -> Result<Literal> {
        self.check_arguments(arguments)?;
        self.check_memory(arguments)?;
        let parallel = self.parallel();
        let run = || {
            let values: Vec<Value<'_>> = arguments.iter().map(|&a| Value::of(a)).collect();
            let result = self.plan.evaluate(&values, parallel)?;
            self.plan.result_literal(result, parallel)
        };
        self.on_pool(run)
    }

    /// Runs the computation and writes the result into `out`, which must have the root's
    /// element type and dimensions; it is written in `out`'s own layout and padding.
    ///
    /// ```
    /// use lazy_xla::*;
    /// let b = XlaBuilder::new("f");
    /// let x = b.parameter(0, &shape!(f32[2]), "x");
    /// let exe = b.build(x * x)?.compile(&CompileOptions::default())?;
    /// let mut out = Literal::vec1(&[0.0f32; 2]);
    /// exe.execute_into(&[&Literal::vec1(&[3.0f32, 4.0])], &mut out)?;
    /// assert_eq!(out.to_vec::<f32>()?, vec![9.0, 16.0]);
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn execute_into(&self, arguments: &[&Literal], out: &mut Literal) -> Result<()> {
        let root_shape = self.plan.computation().result_shape();
        if !out.shape().same_dimensions_and_type(root_shape) {
            invalid_argument!(
                "execute_into: the output literal has shape {} but the computation returns {}",
                out.shape(),
                root_shape
            );
        }
        self.check_arguments(arguments)?;
        self.check_memory(arguments)?;
        let parallel = self.parallel();
        self.on_pool(|| self.plan.run_into(arguments, out, parallel))
    }

    /// The computation as HLO text, as it runs.
    ///
    /// ```
    /// use lazy_xla::*;
    /// let b = XlaBuilder::new("f");
    /// let exe = b.build(b.constant_r0(1.0f32))?.compile(&CompileOptions::default())?;
    /// assert!(exe.to_hlo_text().contains("constant(1)"));
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn to_hlo_text(&self) -> String {
        module_text(self.plan.computation())
    }

    /// The optimized computation as a Graphviz `digraph`, each fusion a coloured cluster of
    /// the instructions it runs as one loop (see [`XlaComputation::to_dot`]).
    ///
    /// ```
    /// use lazy_xla::*;
    /// let b = XlaBuilder::new("f");
    /// let x = b.parameter(0, &shape!(f32[4]), "x");
    /// let exe = b.build(exp(x) * x + x)?.compile(&CompileOptions::default())?;
    /// assert!(exe.to_dot().contains("subgraph cluster_"));
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn to_dot(&self) -> String {
        computation_dot(self.plan.computation())
    }

    /// The memory a run uses, planned at compile time: see [`MemoryStats`].
    ///
    /// ```
    /// use lazy_xla::*;
    /// let b = XlaBuilder::new("f");
    /// let x = b.parameter(0, &shape!(f32[256, 256]), "x");
    /// let exe = b.build(dot(exp(x), x))?.compile(&CompileOptions::default())?;
    /// let stats = exe.memory_stats();
    /// assert_eq!(stats.argument_bytes, 256 * 256 * 4);
    /// assert!(stats.peak_bytes >= stats.argument_bytes + stats.output_bytes);
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn memory_stats(&self) -> MemoryStats {
        self.plan.memory_stats()
    }

    /// The options it was compiled with.
    ///
    /// ```
    /// use lazy_xla::*;
    /// let b = XlaBuilder::new("f");
    /// let exe = b.build(b.constant_r0(1u8))?.compile(&CompileOptions::default())?;
    /// assert_eq!(exe.options(), &CompileOptions::default());
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn options(&self) -> &CompileOptions {
        &self.options
    }

    /// The plan (for tests that look inside it).
    #[cfg(test)]
    pub(crate) fn plan(&self) -> &Plan {
        &self.plan
    }

    fn parallel(&self) -> bool {
        self.options.num_threads != Some(1)
    }

    /// Runs `run` on a thread of the pool the computation shares its work on: its own
    /// (`num_threads`), or rayon's global pool where the caller is outside it and the run
    /// holds at least [`SHARED_RUN_BYTES`]. A parallel step started outside a pool hands its
    /// work in and sleeps until a worker is done, two thread switches per step, which a loop
    /// of small dots pays on every trip; started on a worker, it shares its work directly.
    fn on_pool<R: Send>(&self, run: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(pool) => pool.install(run),
            None if self.parallel()
                && rayon::current_thread_index().is_none()
                && self.plan.memory_stats().peak_bytes >= SHARED_RUN_BYTES =>
            {
                rayon::scope(|_| run())
            }
            None => run(),
        }
    }

    /// An error unless a run on `arguments` fits in memory: the plan's peak, with copies of
    /// the arguments that come in another layout than their parameter's, within the limit and
    /// what the system has available (see [`MemoryStats`]).
    fn check_memory(&self, arguments: &[&Literal]) -> Result<()> {
        let instructions = &self.plan.computation().instructions;
        let copies = self
            .parameters
            .iter()
            .zip(arguments)
            .filter(|(&id, argument)| argument.shape() != &instructions[id].shape)
            .map(|(&id, _)| instructions[id].shape.byte_size())
            .fold(0, u64::saturating_add);
        self.memory_stats().check_fits(self.options.memory_limit, copies)
    }

    /// Arguments must match the parameters in count, element type and dimensions (any layout).
    fn check_arguments(&self, arguments: &[&Literal]) -> Result<()> {
        let instructions = &self.plan.computation().instructions;
        let parameters = self.parameters.iter().map(|&id| &instructions[id]);
        if arguments.len() != parameters.len() {
            invalid_argument!(
                "the computation takes {} arguments but {} were given",
                parameters.len(),
                arguments.len()
            );
        }
        for (number, (parameter, argument)) in parameters.zip(arguments).enumerate() {
            if !argument.shape().same_dimensions_and_type(&parameter.shape) {
                invalid_argument!(
                    "argument {number} ({}) has shape {} but parameter {} expects {}",
                    parameter.name,
                    argument.shape(),
                    number,
                    parameter.shape
                );
            }
        }
        Ok(())
    }
}
