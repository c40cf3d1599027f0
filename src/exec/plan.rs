//! The plan of an executable: one step per instruction, decided at compile time, and run in
//! order, each step's output freed after its last use. A value step's value is given (a
//! parameter, a constant), made of its operands' values (a tuple), or computed from them by
//! plans of its own (a loop, a branch, a call); an array step computes its instruction's
//! arrays into planned buffers, by a loop program (every instruction or fusion a strided loop
//! computes) or by a kernel with its attributes.
//!
//! The types are here, as plans hold steps and steps hold plans; `plan/step.rs` builds a step
//! from an instruction, `plan/run.rs` runs the steps, `plan/kernel.rs` an array step's kernel.

mod kernel;
mod run;
pub(crate) mod step;

use std::sync::Arc;

use crate::attributes::{
    BinaryOp, ComparisonDirection, ConvolutionDimensionNumbers, GatherDimensionNumbers, PaddingConfig,
    RandomAlgorithm, ScatterDimensionNumbers, Window,
};
use crate::error::{Error, Result};
use crate::exec::buffer_assignment::{self, BufferAssignment};
use crate::exec::comparator::Key;
use crate::exec::dot_step::{DotStep, TypedProduct};
use crate::exec::fused_product::FusedProduct;
use crate::exec::kernels::arg_reduce::ArgExtreme;
use crate::exec::loop_program::LoopProgram;
use crate::exec::memory::MemoryStats;
use crate::exec::relayout::LayoutPrograms;
use crate::exec::scalar_program::{Scalar, ScalarProgram};
use crate::exec::value::Value;
use crate::hlo::ir::{HloComputation, InstructionId};
use crate::hlo::text::instruction_text;
use crate::literal::Literal;

/// A computation made ready to run.
pub(crate) struct Plan {
    computation: Arc<HloComputation>,
    steps: Vec<Step>,
    /// For each instruction, the last step that reads it.
    last_use: Vec<usize>,
    /// Where each array the steps compute lives during a run.
    buffers: BufferAssignment,
    /// Copies between layouts met at run time (arguments, outputs), compiled once each.
    relayouts: LayoutPrograms,
    /// The root's loop writing into outputs of other layouts than the root's, by (root shape,
    /// output shape), compiled once each.
    root_loops: LayoutPrograms,
}

/// How one instruction is computed, with everything it needs decided.
enum Step {
    /// A value given, or made of other values: nothing computed into this plan's buffers.
    Value(ValueStep),
    /// The instruction's arrays (one, or a tuple's elements) computed into planned buffers.
    Array(ArrayStep),
}

/// A step whose value is an argument, a constant, made of its operands' values, or what a
/// plan of its own computes from them.
enum ValueStep {
    /// Argument `n` (relaid out to the parameter's layout if it comes in another).
    Parameter(usize),
    Constant(Arc<Literal>),
    /// A tuple of the operands' values (nothing copied).
    Tuple,
    /// Element `index` of the operand's tuple (nothing copied).
    GetTupleElement(usize),
    /// A loop: the body's plan run on the state while the condition's plan says so.
    While {
        condition: Box<Plan>,
        body: Box<Plan>,
    },
    /// A branch chosen by operand 0, run on its operand.
    Conditional(Vec<Plan>),
    /// A computation run on the operands (one the optimizer did not inline).
    Call(Box<Plan>),
}

/// A step that computes its instruction's arrays from its operands' arrays: a loop program,
/// or a kernel (`plan/kernel.rs`) with its attributes.
enum ArrayStep {
    /// Element-wise ops, movement ops, fusions, simple reduces: one strided loop.
    Loop(Box<LoopProgram>),
    /// A reduce (of any number of operands) whose reducer is not a single element-wise op:
    /// the reducer applied element by element.
    InterpretedReduce {
        dimensions: Vec<i64>,
        reducer: Function,
    },
    /// An argmax or argmin over one dimension: the two-pass kernel.
    ArgReduce {
        kind: ArgExtreme,
        dimension: usize,
    },
    /// A map: its computation applied element by element.
    Map(Function),
    /// A dot: XLA's types for its result, the product row-major, then laid out.
    Dot(Box<DotStep>),
    /// An output fusion: a dot and the loop over each block of its product.
    FusedProduct(Box<FusedProduct>),
    /// A reshape that reorders memory.
    Reshape,
    Concatenate {
        dimension: i64,
    },
    Pad(PaddingConfig),
    /// A sort along `dimension`: by native words of the keys where the comparator is an order
    /// of keys, else by the comparator applied to scalars.
    Sort {
        dimension: usize,
        keys: Option<Vec<Key>>,
        comparator: Function,
    },
    TopK {
        k: usize,
        largest: bool,
    },
    RngBitGenerator(RandomAlgorithm),
    BitcastConvert,
    Gather {
        numbers: GatherDimensionNumbers,
        slice_sizes: Vec<i64>,
    },
    /// A scatter combining by a native op (`native`) or its update computation.
    Scatter {
        numbers: ScatterDimensionNumbers,
        native: Option<BinaryOp>,
        update: Function,
    },
    DynamicSlice,
    DynamicUpdateSlice,
    /// A reduce window by a native op (`native`) or the reducer applied to scalars, computed
    /// row-major, then laid out by `relayout` if the result's layout is another.
    ReduceWindow {
        window: Window,
        native: Option<BinaryOp>,
        reducer: Function,
        relayout: Option<Box<LoopProgram>>,
    },
    /// A select and scatter by a native comparison and op (`native`) or its computations.
    SelectAndScatter {
        window: Window,
        native: Option<(ComparisonDirection, BinaryOp)>,
        select: Function,
        scatter: Function,
    },
    Convolution {
        window: Window,
        numbers: ConvolutionDimensionNumbers,
        feature_group_count: i64,
        batch_group_count: i64,
        /// The types it computes in, as a dot's.
        types: Box<TypedProduct>,
    },
}

/// A computation applied to scalars: compiled to a scalar program when it is made of
/// element-wise ops on scalars, else planned.
enum Function {
    Scalar(ScalarProgram),
    Planned(Box<Plan>),
}

impl Function {
    fn new(computation: &Arc<HloComputation>) -> Result<Function> {
        Ok(match ScalarProgram::compile(computation) {
            Some(program) => Function::Scalar(program),
            None => Function::Planned(Box::new(Plan::new(computation.clone())?)),
        })
    }

    /// The function's results for `arguments`, pushed onto `results`; `registers` is scratch.
    fn apply(
        &self,
        arguments: &[Scalar],
        results: &mut Vec<Scalar>,
        registers: &mut Vec<Scalar>,
    ) -> Result<()> {
        match self {
            Function::Scalar(program) => results.extend(program.run(arguments, registers)),
            Function::Planned(plan) => {
                let literals: Vec<Literal> = arguments.iter().map(|a| a.literal()).collect();
                let values: Vec<Value<'_>> = literals.iter().map(Value::of).collect();
                match plan.evaluate(&values, false)? {
                    Value::Tuple(elements) => {
                        for element in &elements {
                            results.push(Scalar::read(element.array()?, 0));
                        }
                    }
                    array => results.push(Scalar::read(array.array()?, 0)),
                }
            }
        }
        Ok(())
    }

    /// [`Function::apply`] as a kernel calls it, with scratch registers of its own.
    fn applier(&self) -> impl FnMut(&[Scalar], &mut Vec<Scalar>) -> Result<()> + '_ {
        let mut registers = Vec::new();
        move |arguments: &[Scalar], results: &mut Vec<Scalar>| self.apply(arguments, results, &mut registers)
    }
}

impl Plan {
    /// Prepares every instruction of `computation` (a verified one: a fusion the loop compiler
    /// cannot compute is an error, never a panic).
    pub(crate) fn new(computation: Arc<HloComputation>) -> Result<Plan> {
        let steps: Vec<Step> = (0..computation.instructions.len())
            .map(|id| Step::new(&computation, id))
            .collect::<Result<_>>()?;
        let mut last_use = vec![0; computation.instructions.len()];
        for (id, instruction) in computation.instructions.iter().enumerate() {
            for &operand in &instruction.operands {
                last_use[operand] = id;
            }
        }
        let instructions: Vec<buffer_assignment::Instruction> =
            steps.iter().enumerate().map(|(id, step)| step.buffers(&computation, id)).collect();
        let argument_bytes =
            computation.parameters().iter().map(|p| p.shape.byte_size()).fold(0, u64::saturating_add);
        let output_bytes = computation.result_shape().byte_size();
        let buffers =
            buffer_assignment::assign(&instructions, computation.root, argument_bytes, output_bytes);
        Ok(Plan {
            computation,
            steps,
            last_use,
            buffers,
            relayouts: LayoutPrograms::default(),
            root_loops: LayoutPrograms::default(),
        })
    }

    /// The memory a run of the plan uses.
    pub(crate) fn memory_stats(&self) -> MemoryStats {
        self.buffers.stats
    }

    /// The computation planned.
    pub(crate) fn computation(&self) -> &Arc<HloComputation> {
        &self.computation
    }
}

/// The error of a value that should exist and does not: a plan that does not match its
/// computation (a bug, reported rather than panicking).
fn missing(computation: &HloComputation, id: InstructionId) -> Error {
    Error::InvalidComputation {
        stage: "execute".into(),
        computation: computation.name.clone(),
        instruction: instruction_text(computation, id),
        message: "its value is not available when it is read".into(),
    }
}

/// Evaluates `computation` on `arguments` once, unoptimized (plans it, then runs it): how
/// constant folding computes a folded value (handed to the passes by `compile`), and a
/// reference in tests.
pub(crate) fn evaluate(computation: &HloComputation, arguments: &[&Literal]) -> Result<Literal> {
    let plan = Plan::new(Arc::new(computation.clone()))?;
    let arguments: Vec<Value<'_>> = arguments.iter().map(|&a| Value::of(a)).collect();
    let value = plan.evaluate(&arguments, false)?;
    plan.result_literal(value, false)
}

#[cfg(test)]
impl Plan {
    /// What the plan (and every plan inside it) leaves to run as a plan per element or per
    /// comparison: scalar functions that did not compile to scalar programs, and sorts whose
    /// comparator is not an order of keys; each named by its instruction.
    fn interpreted(&self) -> Vec<String> {
        let mut found = Vec::new();
        for (id, step) in self.steps.iter().enumerate() {
            let name = &self.computation.instructions[id].name;
            let functions: Vec<&Function> = match step {
                Step::Array(
                    ArrayStep::InterpretedReduce { reducer, .. } | ArrayStep::ReduceWindow { reducer, .. },
                ) => vec![reducer],
                Step::Array(ArrayStep::Map(function) | ArrayStep::Scatter { update: function, .. }) => {
                    vec![function]
                }
                Step::Array(ArrayStep::Sort { comparator, keys, .. }) => {
                    if keys.is_none() {
                        found.push(format!("{name}: a sort by its comparator"));
                    }
                    vec![comparator]
                }
                Step::Array(ArrayStep::SelectAndScatter { native, select, scatter, .. }) => {
                    if native.is_none() {
                        found.push(format!("{name}: a select and scatter by scalar functions"));
                    }
                    vec![select, scatter]
                }
                Step::Value(ValueStep::While { condition, body }) => {
                    found.extend(condition.interpreted());
                    found.extend(body.interpreted());
                    vec![]
                }
                Step::Value(ValueStep::Conditional(branches)) => {
                    branches.iter().for_each(|b| found.extend(b.interpreted()));
                    vec![]
                }
                Step::Value(ValueStep::Call(plan)) => {
                    found.extend(plan.interpreted());
                    vec![]
                }
                _ => vec![],
            };
            for function in functions {
                if let Function::Planned(_) = function {
                    found.push(format!("{name}: a scalar function run as a plan"));
                }
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    /// jax's programs whose scalar functions are what jax writes (tests/data/
    /// jax_scalar_functions): sorts by jax's NaN-canonicalizing total-order comparator on one
    /// or two keys, ascending and descending, argmax and argmin, sums, maxima, a max pool's
    /// gradient, scatters: every function compiles to a scalar program, every sort to keys,
    /// the max pool's gradient to a native comparison and sum.
    #[test]
    fn jax_scalar_functions_compile_to_native_paths() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/jax_scalar_functions");
        let mut modules = 0;
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "hlo") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let computation = crate::hlo::computation::XlaComputation::from_hlo_text(&text).unwrap();
            for fusion in [true, false] {
                let options = crate::exec::executable::CompileOptions { fusion, ..Default::default() };
                let executable = computation.compile(&options).unwrap();
                let interpreted = executable.plan().interpreted();
                assert!(interpreted.is_empty(), "{}: {interpreted:?}", path.display());
            }
            modules += 1;
        }
        assert!(modules >= 20, "{modules} modules in {}", folder.display());
    }
}
