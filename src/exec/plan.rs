//! The plan of an executable: one step per instruction, prepared at compile time — a loop
//! program for every instruction (or fusion) a strided loop can compute, a kernel for the rest
//! — and run in order, each step's output freed after its last use.

use std::borrow::Cow;
use std::sync::Arc;

use crate::exec::kernels::contraction;
use crate::exec::kernels::data_movement;
use crate::exec::loop_program::LoopProgram;
use crate::hlo::{HloComputation, Instruction, Opcode};
use crate::{Literal, Result, Shape};

/// A computation made ready to run.
pub(crate) struct Plan {
    computation: Arc<HloComputation>,
    steps: Vec<Step>,
    /// For each instruction, the last step that reads it.
    last_use: Vec<usize>,
}

/// How one instruction is computed.
enum Step {
    /// Argument `n`, relaid out to the parameter's declared layout if it comes in another.
    Parameter(usize),
    Constant(Arc<Literal>),
    Loop(Box<LoopProgram>),
    /// A reduce whose reducer is not a single element-wise op: the reducer's plan, run on
    /// scalars.
    Reduce(Box<Plan>),
    /// Dot, concatenate, pad, or a reshape that moves data.
    Kernel,
}

impl Plan {
    /// Prepares every instruction of `computation`.
    pub(crate) fn new(computation: Arc<HloComputation>) -> Plan {
        let shapes: Vec<&Shape> = computation.instructions.iter().map(|i| &i.shape).collect();
        let steps = computation
            .instructions
            .iter()
            .map(|instruction| {
                let operand_shapes: Vec<Shape> =
                    instruction.operands.iter().map(|&o| shapes[o].clone()).collect();
                match &instruction.opcode {
                    Opcode::Parameter { number } => Step::Parameter(*number as usize),
                    Opcode::Constant(literal) => Step::Constant(literal.clone()),
                    Opcode::Fusion { computation: fused, .. } => Step::Loop(Box::new(
                        fused_program(fused, &operand_shapes)
                            .expect("a fusion holds only what a loop computes"),
                    )),
                    Opcode::Reduce { reducer, .. } => match reducer.simple_reducer() {
                        Some(_) => Step::Loop(Box::new(
                            fused_program(
                                &HloComputation::single(instruction, &operand_shapes),
                                &operand_shapes,
                            )
                            .expect("a reduce of a parameter is a loop"),
                        )),
                        None => Step::Reduce(Box::new(Plan::new(reducer.clone()))),
                    },
                    _ => LoopProgram::for_instruction(instruction, &operand_shapes)
                        .map_or(Step::Kernel, |program| Step::Loop(Box::new(program))),
                }
            })
            .collect();
        let mut last_use = vec![0; computation.instructions.len()];
        for (id, instruction) in computation.instructions.iter().enumerate() {
            for &operand in &instruction.operands {
                last_use[operand] = id;
            }
        }
        Plan { computation, steps, last_use }
    }

    /// The computation planned.
    pub(crate) fn computation(&self) -> &Arc<HloComputation> {
        &self.computation
    }

    /// Runs the plan on `arguments` (checked against the parameters' element types and
    /// dimensions by the caller) and returns the root's value.
    pub(crate) fn run<'a>(&'a self, arguments: &[&'a Literal], parallel: bool) -> Result<Cow<'a, Literal>> {
        self.run_steps(arguments, parallel, None)?.ok_or_else(|| unreachable!("no output given"))
    }

    /// Runs the plan and writes the root's value into `out` (same element type and
    /// dimensions; any layout): directly when `out` has the root's shape, else by a copy.
    pub(crate) fn run_into(&self, arguments: &[&Literal], out: &mut Literal, parallel: bool) -> Result<()> {
        if out.shape() == self.computation.result_shape() {
            return self.run_steps(arguments, parallel, Some(out)).map(|_| ());
        }
        let value = self.run(arguments, parallel)?;
        relayout_into(&value, out, parallel)
    }

    /// Runs every step; the root's value is written into `out` if given (and its step computes
    /// into a buffer), else returned.
    fn run_steps<'a>(
        &'a self,
        arguments: &[&'a Literal],
        parallel: bool,
        mut out: Option<&mut Literal>,
    ) -> Result<Option<Cow<'a, Literal>>> {
        let instructions = &self.computation.instructions;
        let mut values: Vec<Option<Cow<'a, Literal>>> = vec![None; instructions.len()];
        for (id, (instruction, step)) in instructions.iter().zip(&self.steps).enumerate() {
            let value = match step {
                Step::Parameter(number) => {
                    let argument = arguments[*number];
                    if argument.shape() == &instruction.shape {
                        Cow::Borrowed(argument)
                    } else {
                        Cow::Owned(relayout(argument, &instruction.shape, parallel)?)
                    }
                }
                Step::Constant(literal) => Cow::Borrowed(&**literal),
                _ => {
                    let inputs: Vec<&Literal> = instruction
                        .operands
                        .iter()
                        .map(|&o| values[o].as_deref().expect("operands run first"))
                        .collect();
                    if id == self.computation.root {
                        if let Some(out) = out.as_deref_mut() {
                            compute(step, instruction, &inputs, out, parallel)?;
                            return Ok(None);
                        }
                    }
                    let mut fresh = Literal::for_overwrite(&instruction.shape)?;
                    compute(step, instruction, &inputs, &mut fresh, parallel)?;
                    Cow::Owned(fresh)
                }
            };
            values[id] = Some(value);
            for &operand in &instruction.operands {
                if self.last_use[operand] == id && operand != self.computation.root {
                    values[operand] = None;
                }
            }
        }
        let root = values[self.computation.root].take().expect("the root runs");
        match out {
            // A root that is a parameter or a constant: copy it into the output.
            Some(out) => relayout_into(&root, out, parallel).map(|_| None),
            None => Ok(Some(root)),
        }
    }
}

/// `literal`'s values in `shape`'s layout (same element type and dimensions).
pub(crate) fn relayout(literal: &Literal, shape: &Shape, parallel: bool) -> Result<Literal> {
    let mut out = Literal::for_overwrite(shape)?;
    relayout_into(literal, &mut out, parallel)?;
    Ok(out)
}

/// Copies `literal`'s values into `out` (same element type and dimensions), in `out`'s layout.
pub(crate) fn relayout_into(literal: &Literal, out: &mut Literal, parallel: bool) -> Result<()> {
    let copy = Instruction {
        opcode: Opcode::Convert,
        operands: vec![0],
        shape: out.shape().clone(),
        name: "relayout".into(),
    };
    let program = LoopProgram::for_instruction(&copy, &[literal.shape().clone()]).expect("a copy is a loop");
    program.run(&[literal], out, parallel)
}

/// Runs a computing step into `out`.
fn compute(
    step: &Step,
    instruction: &Instruction,
    inputs: &[&Literal],
    out: &mut Literal,
    parallel: bool,
) -> Result<()> {
    match step {
        Step::Loop(program) => program.run(inputs, out, parallel),
        Step::Reduce(reducer_plan) => reduce(&instruction.opcode, reducer_plan, inputs, out),
        _ => kernel(&instruction.opcode, inputs, out, parallel),
    }
}

/// The loop of a fusion (or of a single instruction as one): a plain loop, or, when rooted at
/// a reduce, a reduction of its producer.
fn fused_program(fused: &HloComputation, input_shapes: &[Shape]) -> Option<LoopProgram> {
    let root = &fused.instructions[fused.root];
    match &root.opcode {
        Opcode::Reduce { dimensions, reducer } => {
            let Opcode::Parameter { number: init } = fused.instructions[root.operands[1]].opcode else {
                return None;
            };
            let op = reducer.simple_reducer()?;
            let reduction = (op, init as usize);
            LoopProgram::compile_reduction(
                fused,
                root.operands[0],
                input_shapes,
                dimensions,
                reduction,
                &root.shape,
            )
        }
        _ => LoopProgram::compile(fused, input_shapes),
    }
}

/// Runs a reduce step whose reducer is interpreted.
fn reduce(opcode: &Opcode, reducer_plan: &Plan, inputs: &[&Literal], out: &mut Literal) -> Result<()> {
    let Opcode::Reduce { dimensions, .. } = opcode else { unreachable!("a reduce step holds a reduce") };
    let interpret = |accumulator: &Literal, value: &Literal| -> Result<Literal> {
        Ok(reducer_plan.run(&[accumulator, value], false)?.into_owned())
    };
    contraction::reduce_interpreted([inputs[0], inputs[1]], dimensions, &interpret, out)
}

/// Runs a kernel step.
fn kernel(opcode: &Opcode, inputs: &[&Literal], out: &mut Literal, parallel: bool) -> Result<()> {
    match opcode {
        Opcode::Reshape => data_movement::reshape(inputs[0], out),
        Opcode::Concatenate { dimension } => data_movement::concatenate(inputs, *dimension, out),
        Opcode::Pad(config) => data_movement::pad([inputs[0], inputs[1]], config, out),
        Opcode::Dot(numbers) => contraction::dot([inputs[0], inputs[1]], numbers, out, parallel),
        other => unreachable!("{} is planned as a loop program", other.name()),
    }
}

/// Evaluates `computation` on `arguments` once (plans it, then runs it, without the
/// optimizer): for passes that fold constants, and as a reference in their tests.
pub(crate) fn evaluate(computation: &HloComputation, arguments: &[&Literal]) -> Result<Literal> {
    Ok(Plan::new(Arc::new(computation.clone())).run(arguments, false)?.into_owned())
}
