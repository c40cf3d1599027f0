//! The plan of an executable: one step per instruction, decided at compile time — a loop
//! program for every instruction (or fusion) a strided loop computes, a kernel with its
//! attributes for the rest — and run in order, each step's output freed after its last use.

use std::borrow::Cow;
use std::sync::Arc;

use crate::attributes::{
    BinaryOp, ConvolutionDimensionNumbers, GatherDimensionNumbers, ScatterDimensionNumbers, Window,
};
use crate::attributes::{ComparisonDirection, PaddingConfig, RandomAlgorithm};
use crate::error::{Error, Result};
use crate::exec::arg_extreme::arg_extreme;
use crate::exec::buffer_assignment::{self, BufferAssignment, Holds, Placement};
use crate::exec::comparator::{key_order, Key};
use crate::exec::dot_step::{DotStep, TypedProduct};
use crate::exec::fused_product::FusedProduct;
use crate::exec::heap::Heap;
use crate::exec::kernels::arg_reduce::{self, ArgExtreme};
use crate::exec::kernels::interpreted::Combine;
use crate::exec::kernels::windows::{self, SelectScatter};
use crate::exec::kernels::{bitcast, data_movement, interpreted, random, sort};
use crate::exec::kernels::{convolution, gather, scatter};
use crate::exec::loop_program::LoopProgram;
use crate::exec::memory::MemoryStats;
use crate::exec::relayout::LayoutPrograms;
use crate::exec::scalar_program::{Scalar, ScalarProgram};
use crate::exec::value::Value;
use crate::hlo::ir::{FusionKind, HloComputation, Instruction, InstructionId, Opcode};
use crate::hlo::text::instruction_text;
use crate::literal::Literal;
use crate::shape::Shape;
use crate::storage::Storage;

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
    /// Argument `n` (relaid out to the parameter's layout if it comes in another).
    Parameter(usize),
    Constant(Arc<Literal>),
    /// A tuple of the operands' values (nothing copied).
    Tuple,
    /// Element `index` of the operand's tuple (nothing copied).
    GetTupleElement(usize),
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

impl Step {
    /// Whether the step makes a value of its own (a tuple, or arrays it allocates) rather than
    /// computing one array into a buffer it is given.
    fn makes_a_value(&self) -> bool {
        matches!(
            self,
            Step::InterpretedReduce { .. }
                | Step::ArgReduce { .. }
                | Step::Sort { .. }
                | Step::TopK { .. }
                | Step::RngBitGenerator(_)
                | Step::While { .. }
                | Step::Conditional(_)
                | Step::Call(_)
        )
    }

    /// What buffer assignment needs to know of the step of instruction `id`: the arrays it
    /// computes into buffers of its own, which buffers its value may hold, and its scratch.
    fn buffers(&self, computation: &HloComputation, id: InstructionId) -> buffer_assignment::Instruction {
        let instruction = &computation.instructions[id];
        let operand_shapes: Vec<&Shape> =
            instruction.operands.iter().map(|&o| &computation.instructions[o].shape).collect();
        let arrays = |shape: &Shape| match shape.is_tuple() {
            true => shape.tuple_shapes().iter().map(Shape::byte_size).collect(),
            false => vec![shape.byte_size()],
        };
        // What a sub-plan adds to the memory live when it runs: all but its arguments, which
        // are this plan's values.
        let own =
            |plan: &Plan| plan.buffers.stats.peak_bytes.saturating_sub(plan.buffers.stats.argument_bytes);
        let (defines, holds, scratch) = match self {
            Step::Parameter(_) | Step::Constant(_) => (vec![], Holds::Nothing, 0),
            Step::Tuple => (vec![], Holds::Tuple, 0),
            Step::GetTupleElement(index) => (vec![], Holds::Element(*index), 0),
            Step::While { condition, body } => (vec![], Holds::AnyOperand, own(condition).max(own(body))),
            Step::Conditional(branches) => {
                (vec![], Holds::AnyOperand, branches.iter().map(own).max().unwrap_or(0))
            }
            Step::Call(plan) => (vec![], Holds::AnyOperand, own(plan)),
            Step::Loop(_) => (arrays(&instruction.shape), Holds::Defined, 0),
            kernel => {
                // Kernels read and write dense buffers (`Plan::compute`): a padded operand
                // is copied, a padded result computed apart.
                let padded = |shape: &Shape| if shape.is_padded() { shape.byte_size() } else { 0 };
                let dense = operand_shapes
                    .iter()
                    .map(|s| padded(s))
                    .fold(padded(&instruction.shape), u64::saturating_add);
                let own = match kernel {
                    Step::Dot(dot) => {
                        dot.scratch_bytes([operand_shapes[0], operand_shapes[1]], &instruction.shape)
                    }
                    Step::FusedProduct(product) => product.scratch_bytes(&operand_shapes),
                    Step::Convolution { window, numbers, feature_group_count, batch_group_count, types } => {
                        let attributes = convolution::Convolution {
                            window,
                            numbers,
                            feature_group_count: *feature_group_count,
                            batch_group_count: *batch_group_count,
                        };
                        let patches = convolution::scratch_bytes(
                            operand_shapes[0],
                            operand_shapes[1],
                            &instruction.shape,
                            &attributes,
                        );
                        types.scratch_bytes().saturating_add(patches)
                    }
                    Step::ReduceWindow { relayout: Some(_), .. } => instruction.shape.byte_size(),
                    _ => 0,
                };
                (arrays(&instruction.shape), Holds::Defined, dense.saturating_add(own))
            }
        };
        // A dynamic update slice or scatter writes its updates over its operand's buffer
        // when it may take it: same shape, dense (so the kernel computes into it directly).
        let reuses = match self {
            Step::DynamicUpdateSlice | Step::Scatter { .. }
                if operand_shapes.first() == Some(&&instruction.shape) && !instruction.shape.is_padded() =>
            {
                Some(0)
            }
            _ => None,
        };
        let operands = instruction.operands.clone();
        buffer_assignment::Instruction { defines, operands, holds, scratch, reuses }
    }

    /// Whether the step computes one array from arrays (the steps `Plan::run` hands to
    /// `compute`): every step but parameters, constants, tuples and those that make a value.
    fn reads_arrays(&self) -> bool {
        !matches!(self, Step::Parameter(_) | Step::Constant(_) | Step::Tuple | Step::GetTupleElement(_))
            && !self.makes_a_value()
    }
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
}

impl Plan {
    /// Prepares every instruction of `computation` (a verified one: a fusion the loop compiler
    /// cannot compute is an error, never a panic).
    pub(crate) fn new(computation: Arc<HloComputation>) -> Result<Plan> {
        let steps: Vec<Step> =
            (0..computation.instructions.len()).map(|id| step(&computation, id)).collect::<Result<_>>()?;
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

    /// Whether instruction `id`'s array took over the buffer of its first operand (which died
    /// at this step: see [`buffer_assignment::Instruction::reuses`]), so it already holds the
    /// operand's values, and the operand must not be read (its memory is the output's).
    fn in_place(&self, id: InstructionId) -> bool {
        let operand = self.computation.instructions[id].operands.first();
        let placement = |i: InstructionId| self.buffers.placements[i].first();
        matches!(
            (placement(id), operand.and_then(|&o| placement(o))),
            (Some(Placement::Heap(a)), Some(Placement::Heap(b))) if a == b
        )
    }

    /// A buffer for array `k` of instruction `id`'s value, of `shape`: a view of its place in
    /// the run's `heap`, or memory of its own for an output.
    fn buffer(&self, heap: &Heap, id: InstructionId, k: usize, shape: &Shape) -> Result<Literal> {
        match self.buffers.placements[id].get(k) {
            // SAFETY: the plan drops every value before the run's heap (`run`), and the
            // assignment never gives bytes to two buffers that are live at once; this one is
            // live from this step to the last that reads a value holding it, and no value
            // that outlives the run (the result) holds a view.
            Some(&Placement::Heap(offset)) => unsafe { heap.literal(offset, shape) },
            _ => Literal::for_overwrite(shape),
        }
    }

    /// The computation planned.
    pub(crate) fn computation(&self) -> &Arc<HloComputation> {
        &self.computation
    }

    /// Runs the plan on `arguments` (checked against the parameters' shapes by the caller, any
    /// layout) and writes the root's value into `out` (the root's element types and dimensions,
    /// any layout): directly when `out` has the root's shape, else by a copy.
    pub(crate) fn run_into<'a>(
        &'a self,
        arguments: &[&'a Literal],
        out: &mut Literal,
        parallel: bool,
    ) -> Result<()> {
        let arguments: Vec<Value<'a>> = arguments.iter().map(|&a| Value::of(a)).collect();
        match self.run(arguments, Some(&mut *out), parallel)? {
            Some(value) => self.write_into(&value, out, parallel),
            None => Ok(()),
        }
    }

    /// Runs the plan on `arguments` and returns the root's value (for sub-computations: a
    /// reducer, a loop body, a branch).
    pub(crate) fn evaluate<'a>(&'a self, arguments: &[Value<'a>], parallel: bool) -> Result<Value<'a>> {
        self.evaluate_owned(arguments.to_vec(), parallel)
    }

    /// [`Plan::evaluate`] of arguments handed over: an array only they hold can then be
    /// updated in place (a loop's state, from one trip to the next).
    pub(crate) fn evaluate_owned<'a>(
        &'a self,
        arguments: Vec<Value<'a>>,
        parallel: bool,
    ) -> Result<Value<'a>> {
        self.run(arguments, None, parallel)?.ok_or_else(|| missing(&self.computation, self.computation.root))
    }

    /// Runs every step; the root's value is computed straight into `out` when it is given, has
    /// the root's shape and the root is an array step (then `None` is returned), else returned.
    fn run<'a>(
        &'a self,
        mut arguments: Vec<Value<'a>>,
        mut out: Option<&mut Literal>,
        parallel: bool,
    ) -> Result<Option<Value<'a>>> {
        let root = self.computation.root;
        // Declared before the values, so dropped after them: no view outlives it.
        let heap = Heap::new(self.buffers.heap_bytes)?;
        let mut values: Vec<Option<Value<'a>>> = vec![None; self.steps.len()];
        for (id, step) in self.steps.iter().enumerate() {
            let shape = &self.computation.instructions[id].shape;
            // Before anything borrows the values: an update may take its operand's memory.
            let updated = match out.is_none() || id != root {
                true => self.update_in_place(step, id, &mut values, parallel)?,
                false => None,
            };
            // Array steps read their operands as arrays (one list, not two, per step).
            let inputs = match (step, &updated) {
                (_, Some(_)) => Vec::new(),
                (Step::Parameter(_) | Step::Constant(_), _) => Vec::new(),
                _ if step.reads_arrays() => Vec::new(),
                _ => self.inputs(id, &values)?,
            };
            let value = match updated {
                Some(value) => value,
                None => match step {
                    Step::Parameter(number) => {
                        // Taken, not shared: the plan reads each parameter once.
                        let argument =
                            arguments.get_mut(*number).ok_or_else(|| missing(&self.computation, id))?;
                        let argument = std::mem::replace(argument, Value::Tuple(Vec::new()));
                        self.conform(&argument, shape, parallel)?
                    }
                    Step::Constant(literal) => Value::of(literal),
                    Step::Tuple => Value::Tuple(inputs.iter().map(|&v| v.clone()).collect()),
                    Step::GetTupleElement(index) => {
                        let element = inputs.first().and_then(|t| t.elements().ok()?.get(*index));
                        element.cloned().ok_or_else(|| missing(&self.computation, id))?
                    }
                    _ if step.makes_a_value() => self.compute_value(step, id, &inputs, &heap, parallel)?,
                    _ => {
                        let arrays = self.operand_arrays(id, &values)?;
                        if let Some(out) = out.as_deref_mut().filter(|_| id == root) {
                            if out.shape() == shape {
                                self.compute(step, id, &arrays, out, parallel)?;
                                return Ok(None);
                            }
                            // A loop writes any layout: computing in the root's and copying after
                            // would cost a second pass (a transposing one, between layouts).
                            if let Some(program) = self.root_loop_into(step, out.shape()) {
                                program.run(&arrays, out, parallel)?;
                                return Ok(None);
                            }
                        }
                        self.compute_array(step, id, &values, &heap, parallel)?
                    }
                },
            };
            drop(inputs);
            for &operand in &self.computation.instructions[id].operands {
                if self.last_use[operand] == id && operand != root {
                    values[operand] = None;
                }
            }
            values[id] = Some(value);
        }
        values[root].take().map(Some).ok_or_else(|| missing(&self.computation, root))
    }

    /// The arrays of instruction `id`'s operands.
    fn operand_arrays<'v>(
        &self,
        id: InstructionId,
        values: &'v [Option<Value<'_>>],
    ) -> Result<Vec<&'v Literal>> {
        (self.computation.instructions[id].operands.iter())
            .map(|&o| values[o].as_ref().ok_or_else(|| missing(&self.computation, o))?.array())
            .collect()
    }

    /// Array step `id` computed into its planned buffer.
    fn compute_array<'a>(
        &'a self,
        step: &Step,
        id: InstructionId,
        values: &[Option<Value<'a>>],
        heap: &Heap,
        parallel: bool,
    ) -> Result<Value<'a>> {
        let arrays = self.operand_arrays(id, values)?;
        let mut fresh = self.buffer(heap, id, 0, &self.computation.instructions[id].shape)?;
        self.compute(step, id, &arrays, &mut fresh, parallel)?;
        Ok(Value::computed(fresh))
    }

    /// A `dynamic_update_slice` whose operand this run computed into memory of its own, that
    /// nothing else holds and nothing reads later, and whose result is not planned in the
    /// heap (a root's, a loop state's), writes its update into that operand and takes it as
    /// its value: a loop updating its state (a scan stacking its outputs) then copies nothing
    /// per trip. `None` (the operand untouched) where that does not hold.
    fn update_in_place<'a>(
        &'a self,
        step: &Step,
        id: InstructionId,
        values: &mut [Option<Value<'a>>],
        parallel: bool,
    ) -> Result<Option<Value<'a>>> {
        let instruction = &self.computation.instructions[id];
        let Some((&operand, rest)) = instruction.operands.split_first() else { return Ok(None) };
        let sole = |value: &Option<Value<'a>>| match value {
            Some(Value::Computed(array)) => Arc::strong_count(array) == 1 && array.owns_memory(),
            _ => false,
        };
        // A result planned in the heap stays there: a later step may update it in place.
        let in_heap = matches!(self.buffers.placements[id].first(), Some(Placement::Heap(_)));
        if !matches!(step, Step::DynamicUpdateSlice)
            || in_heap
            || self.last_use[operand] != id
            || operand == self.computation.root
            || rest.contains(&operand)
            || instruction.shape.is_padded()
            || !sole(&values[operand])
        {
            return Ok(None);
        }
        let Some(Value::Computed(array)) = values[operand].take() else { return Ok(None) };
        let mut target = Arc::try_unwrap(array).unwrap_or_else(|shared| (*shared).clone());
        if target.shape() != &instruction.shape {
            target = self.relayouts.copy(&target, &instruction.shape, parallel)?;
        }
        let rest: Vec<&Literal> = (rest.iter())
            .map(|&o| values[o].as_ref().ok_or_else(|| missing(&self.computation, o))?.array())
            .collect::<Result<_>>()?;
        let dense = self.dense_all(&rest, parallel)?;
        let Some((update, starts)) = dense.split_first() else { return Err(missing(&self.computation, id)) };
        let starts: Vec<&Literal> = starts.iter().map(|start| &**start).collect();
        scatter::dynamic_update_slice(None, update, &starts, &mut target, parallel)?;
        Ok(Some(Value::computed(target)))
    }

    /// The root's loop compiled to write `out_shape` (the root's element type and dimensions,
    /// another layout), if the root's `step` is a loop.
    fn root_loop_into(&self, step: &Step, out_shape: &Shape) -> Option<Arc<LoopProgram>> {
        let Step::Loop(_) = step else { return None };
        let root = self.computation.root;
        let root_shape = &self.computation.instructions[root].shape;
        self.root_loops.program(root_shape, out_shape, || loop_program(&self.computation, root, out_shape))
    }

    /// The root's `value` as a literal of the root's shape, layouts included (a computed array
    /// that nothing else holds is moved, not copied).
    pub(crate) fn result_literal(&self, value: Value<'_>, parallel: bool) -> Result<Literal> {
        let conformed = self.conform(&value, self.computation.result_shape(), parallel)?;
        // `conform` shares what it keeps: with `value` gone, `conformed` alone holds a kept
        // array, which then moves out rather than being copied into fresh pages every call.
        drop(value);
        Ok(conformed.into_literal())
    }

    /// `value` in `shape`'s layouts: arrays in another layout are copied, anything else is
    /// taken as it is.
    fn conform<'a>(&'a self, value: &Value<'a>, shape: &Shape, parallel: bool) -> Result<Value<'a>> {
        match value {
            Value::Tuple(elements) => Ok(Value::Tuple(
                elements
                    .iter()
                    .zip(shape.tuple_shapes())
                    .map(|(element, shape)| self.conform(element, shape, parallel))
                    .collect::<Result<_>>()?,
            )),
            array if array.array()?.shape() == shape => Ok(array.clone()),
            array => Ok(Value::computed(self.relayouts.copy(array.array()?, shape, parallel)?)),
        }
    }

    /// Writes `value` into `out` (the same element types and dimensions), in `out`'s layouts.
    fn write_into(&self, value: &Value<'_>, out: &mut Literal, parallel: bool) -> Result<()> {
        match value {
            Value::Tuple(elements) => {
                for (i, element) in elements.iter().enumerate() {
                    self.write_into(element, out.tuple_element_mut(i)?, parallel)?;
                }
                Ok(())
            }
            array => self.relayouts.copy_into(array.array()?, out, parallel),
        }
    }

    /// The values of instruction `id`'s operands, computed by earlier steps.
    fn inputs<'v, 'a>(
        &self,
        id: InstructionId,
        values: &'v [Option<Value<'a>>],
    ) -> Result<Vec<&'v Value<'a>>> {
        self.computation.instructions[id]
            .operands
            .iter()
            .map(|&o| values[o].as_ref().ok_or_else(|| missing(&self.computation, o)))
            .collect()
    }

    /// Runs computing step `id` into `out` (of the instruction's shape). A loop reads and
    /// writes every layout, padded ones included, and writes nothing but elements. Kernels read
    /// and write dense buffers only: a padded operand is copied out of its padding first, and a
    /// padded result computed densely, then copied into `out`'s elements, so no kernel can
    /// write over the padding of a buffer (a caller's, with `execute_into`) or read it as an
    /// element.
    fn compute(
        &self,
        step: &Step,
        id: InstructionId,
        inputs: &[&Literal],
        out: &mut Literal,
        parallel: bool,
    ) -> Result<()> {
        if let Step::Loop(program) = step {
            return program.run(inputs, out, parallel);
        }
        let dense = self.dense_all(inputs, parallel)?;
        let inputs: Vec<&Literal> = dense.iter().map(|array| &**array).collect();
        if !out.shape().is_padded() {
            return self.kernel(step, id, &inputs, out, parallel);
        }
        let mut result = Literal::for_overwrite(&out.shape().without_padding())?;
        self.kernel(step, id, &inputs, &mut result, parallel)?;
        self.relayouts.copy_into(&result, out, parallel)
    }

    /// Runs the kernel of step `id` from `inputs` into `out`, all dense.
    fn kernel(
        &self,
        step: &Step,
        id: InstructionId,
        inputs: &[&Literal],
        out: &mut Literal,
        parallel: bool,
    ) -> Result<()> {
        match (step, inputs) {
            (Step::Map(function), _) => {
                let mut registers = Vec::new();
                interpreted::map(
                    inputs,
                    &mut |arguments, results| function.apply(arguments, results, &mut registers),
                    out,
                )
            }
            (Step::Dot(dot), &[lhs, rhs]) => dot.run([lhs, rhs], out, parallel),
            (Step::FusedProduct(product), _) => product.run(inputs, out, parallel),
            (Step::Gather { numbers, slice_sizes }, &[operand, indices]) => {
                gather::gather(operand, indices, numbers, slice_sizes, out, parallel)
            }
            (Step::Scatter { numbers, native, update }, &[operand, indices, updates]) => {
                let mut registers = Vec::new();
                let mut apply = |arguments: &[Scalar], results: &mut Vec<Scalar>| {
                    update.apply(arguments, results, &mut registers)
                };
                let combine = match native {
                    Some(op) => Combine::Native(*op),
                    None => Combine::Interpreted(&mut apply),
                };
                let operand = (!self.in_place(id)).then_some(operand);
                scatter::scatter(operand, [indices, updates], numbers, combine, out)
            }
            (Step::DynamicSlice, [operand, starts @ ..]) => {
                gather::dynamic_slice(operand, starts, out, parallel)
            }
            (Step::DynamicUpdateSlice, &[operand, update, ref starts @ ..]) => {
                let operand = (!self.in_place(id)).then_some(operand);
                scatter::dynamic_update_slice(operand, update, starts, out, parallel)
            }
            (Step::ReduceWindow { window, native, reducer, relayout }, &[operand, init]) => {
                let mut registers = Vec::new();
                let mut apply = |arguments: &[Scalar], results: &mut Vec<Scalar>| {
                    reducer.apply(arguments, results, &mut registers)
                };
                let combine = match native {
                    Some(op) => Combine::Native(*op),
                    None => Combine::Interpreted(&mut apply),
                };
                match relayout {
                    None => windows::reduce_window(operand, init, window, combine, out, parallel),
                    Some(relayout) => {
                        let mut row_major = Literal::for_overwrite(&out.shape().with_default_layout())?;
                        windows::reduce_window(operand, init, window, combine, &mut row_major, parallel)?;
                        relayout.run(&[&row_major], out, parallel)
                    }
                }
            }
            (Step::SelectAndScatter { window, native, select, scatter }, &[operand, source, init]) => {
                let (mut select_registers, mut scatter_registers) = (Vec::new(), Vec::new());
                let mut select = |arguments: &[Scalar], results: &mut Vec<Scalar>| {
                    select.apply(arguments, results, &mut select_registers)
                };
                let mut scatter = |arguments: &[Scalar], results: &mut Vec<Scalar>| {
                    scatter.apply(arguments, results, &mut scatter_registers)
                };
                let functions = match native {
                    Some((direction, op)) => SelectScatter::Native(*direction, *op),
                    None => SelectScatter::Interpreted { select: &mut select, scatter: &mut scatter },
                };
                windows::select_and_scatter([operand, source, init], window, functions, out)
            }
            (
                Step::Convolution { window, numbers, feature_group_count, batch_group_count, types },
                &[lhs, rhs],
            ) => {
                let attributes = convolution::Convolution {
                    window,
                    numbers,
                    feature_group_count: *feature_group_count,
                    batch_group_count: *batch_group_count,
                };
                types.run([lhs, rhs], out, parallel, |[lhs, rhs], out| {
                    convolution::convolution(lhs, rhs, &attributes, out, parallel)
                })
            }
            (Step::Reshape, &[operand]) if out.shape().layout().is_default() => {
                // A row-major result holds the operand's elements in the operand's row-major
                // order: the operand laid out row-major, straight into the result's memory.
                let result_shape = out.shape().clone();
                let storage = std::mem::replace(out.storage_mut()?, Storage::empty());
                let mut row_major = Literal::over(&operand.shape().with_default_layout(), storage)?;
                self.relayouts.copy_into(operand, &mut row_major, parallel)?;
                let storage = std::mem::replace(row_major.storage_mut()?, Storage::empty());
                *out = Literal::over(&result_shape, storage)?;
                Ok(())
            }
            (Step::Reshape, &[operand]) => data_movement::reshape(operand, out),
            (Step::BitcastConvert, &[operand]) => bitcast::bitcast_convert(operand, out),
            (Step::Concatenate { dimension }, _) => data_movement::concatenate(inputs, *dimension, out),
            (Step::Pad(config), &[operand, value]) => data_movement::pad([operand, value], config, out),
            _ => Err(Error::InvalidComputation {
                stage: "plan".into(),
                computation: self.computation.name.clone(),
                instruction: instruction_text(&self.computation, id),
                message: format!("a step of this kind cannot take {} operands", inputs.len()),
            }),
        }
    }
}

impl Plan {
    /// Runs a step whose value is not one array computed into a buffer: a kernel that makes
    /// its own arrays (a variadic or interpreted reduce, a sort, ...), a loop, a branch, a call.
    fn compute_value<'a>(
        &'a self,
        step: &'a Step,
        id: InstructionId,
        inputs: &[&Value<'a>],
        heap: &Heap,
        parallel: bool,
    ) -> Result<Value<'a>> {
        let shape = &self.computation.instructions[id].shape;
        match step {
            Step::While { condition, body } => {
                let mut state =
                    inputs.first().map(|&v| v.clone()).ok_or_else(|| missing(&self.computation, id))?;
                loop {
                    let go = condition.evaluate(std::slice::from_ref(&state), parallel)?;
                    if !go.array()?.memory::<bool>()?.first().copied().unwrap_or(false) {
                        return Ok(state);
                    }
                    state = body.evaluate_owned(vec![state], parallel)?;
                }
            }
            Step::Conditional(branches) => {
                let selector = inputs.first().ok_or_else(|| missing(&self.computation, id))?.array()?;
                // A pred picks branch 0 when true; an index out of range runs the last branch.
                let branch = match selector.memory::<bool>() {
                    Ok(pred) => usize::from(!pred.first().copied().unwrap_or(false)),
                    Err(_) => {
                        let index = selector.memory::<i32>()?.first().copied().unwrap_or(-1);
                        usize::try_from(index)
                            .ok()
                            .filter(|&i| i < branches.len())
                            .unwrap_or(branches.len() - 1)
                    }
                };
                let operand = inputs.get(1 + branch).ok_or_else(|| missing(&self.computation, id))?;
                branches[branch].evaluate(&[(*operand).clone()], parallel)
            }
            Step::Call(plan) => {
                let arguments: Vec<Value<'a>> = inputs.iter().map(|&v| v.clone()).collect();
                plan.evaluate(&arguments, parallel)
            }
            _ => {
                // Kernels read and write dense buffers only (see `compute`).
                let arrays = inputs.iter().map(|v| v.array()).collect::<Result<Vec<_>>>()?;
                let dense = self.dense_all(&arrays, parallel)?;
                let arrays: Vec<&Literal> = dense.iter().map(|array| &**array).collect();
                let shapes = match shape.is_tuple() {
                    true => shape.tuple_shapes(),
                    false => std::slice::from_ref(shape),
                };
                let mut outs: Vec<Literal> = shapes
                    .iter()
                    .enumerate()
                    .map(|(k, shape)| self.buffer(heap, id, k, shape))
                    .collect::<Result<_>>()?;
                if !shape.is_padded() {
                    self.make_arrays(step, id, &arrays, &mut outs, parallel)?;
                } else {
                    let mut results = shapes
                        .iter()
                        .map(|s| Literal::for_overwrite(&s.without_padding()))
                        .collect::<Result<Vec<_>>>()?;
                    self.make_arrays(step, id, &arrays, &mut results, parallel)?;
                    for (result, out) in results.iter().zip(&mut outs) {
                        self.relayouts.copy_into(result, out, parallel)?;
                    }
                }
                Ok(value_of_outputs(shape, outs))
            }
        }
    }

    /// Runs a kernel that makes arrays of its own into `outs` (dense buffers of the step's
    /// array shapes, in order) from the dense arrays `arrays`.
    fn make_arrays(
        &self,
        step: &Step,
        id: InstructionId,
        arrays: &[&Literal],
        outs: &mut [Literal],
        parallel: bool,
    ) -> Result<()> {
        match step {
            Step::InterpretedReduce { dimensions, reducer } => {
                let (operands, inits) = arrays.split_at(arrays.len() / 2);
                let mut registers = Vec::new();
                let mut apply = |arguments: &[Scalar], results: &mut Vec<Scalar>| {
                    reducer.apply(arguments, results, &mut registers)
                };
                let mut targets: Vec<&mut Literal> = outs.iter_mut().collect();
                interpreted::reduce(operands, inits, dimensions, &mut apply, &mut targets)
            }
            Step::Sort { dimension, keys, comparator } => {
                let less = |arguments: &[Scalar], registers: &mut Vec<Scalar>| -> Result<bool> {
                    let mut results = Vec::with_capacity(1);
                    comparator.apply(arguments, &mut results, registers)?;
                    Ok(results.first() == Some(&Scalar::Pred(true)))
                };
                let mut targets: Vec<&mut Literal> = outs.iter_mut().collect();
                sort::sort(arrays, *dimension, keys.as_deref(), &less, parallel, &mut targets)
            }
            Step::ArgReduce { kind, dimension } => {
                let (&[values, indices], &[init_value, init_index]) = (&arrays[..2], &arrays[2..]) else {
                    return Err(missing(&self.computation, id));
                };
                let [out_values, out_indices] = outs else { return Err(missing(&self.computation, id)) };
                arg_reduce::arg_reduce(
                    *kind,
                    [values, indices],
                    [init_value, init_index],
                    *dimension,
                    parallel,
                    [out_values, out_indices],
                )
            }
            Step::TopK { k, largest } => {
                let operand = arrays.first().ok_or_else(|| missing(&self.computation, id))?;
                let [values, indices] = outs else { return Err(missing(&self.computation, id)) };
                sort::top_k(operand, *k, *largest, values, indices)
            }
            Step::RngBitGenerator(algorithm) => {
                let state = arrays.first().ok_or_else(|| missing(&self.computation, id))?;
                let [new_state, bits] = outs else { return Err(missing(&self.computation, id)) };
                random::rng_bit_generator(*algorithm, state, new_state, bits)
            }
            _ => Err(missing(&self.computation, id)),
        }
    }

    /// Each of `arrays` without padding: itself when it has none, else its elements copied
    /// into a dense buffer of the same memory order. Kernels read and write only such buffers.
    fn dense_all<'l>(&self, arrays: &[&'l Literal], parallel: bool) -> Result<Vec<Cow<'l, Literal>>> {
        let dense = |array: &'l Literal| match array.shape().is_padded() {
            false => Ok(Cow::Borrowed(array)),
            true => Ok(Cow::Owned(self.relayouts.copy(array, &array.shape().without_padding(), parallel)?)),
        };
        arrays.iter().map(|&array| dense(array)).collect()
    }
}

/// The value of a step's outputs: the array, or the tuple of them.
fn value_of_outputs<'a>(shape: &Shape, outs: Vec<Literal>) -> Value<'a> {
    let mut values: Vec<Value<'a>> = outs.into_iter().map(Value::computed).collect();
    match (shape.is_tuple(), values.len()) {
        (false, 1) => values.remove(0),
        _ => Value::Tuple(values),
    }
}

/// The step that computes instruction `id` of `computation`.
fn step(computation: &HloComputation, id: InstructionId) -> Result<Step> {
    let instruction = &computation.instructions[id];
    let operand_shapes: Vec<Shape> =
        instruction.operands.iter().map(|&o| computation.instructions[o].shape.clone()).collect();
    let dense_operands: Vec<Shape> = operand_shapes.iter().map(Shape::without_padding).collect();
    let not_a_loop = || Error::InvalidComputation {
        stage: "plan".into(),
        computation: computation.name.clone(),
        instruction: instruction_text(computation, id),
        message: "the loop compiler cannot compute this instruction".into(),
    };
    let program = || loop_program(computation, id, &instruction.shape).map(Box::new).ok_or_else(not_a_loop);
    Ok(match &instruction.opcode {
        Opcode::Parameter { number } => Step::Parameter(*number as usize),
        Opcode::Constant(literal) => Step::Constant(literal.clone()),
        Opcode::Tuple => Step::Tuple,
        Opcode::GetTupleElement { index } => Step::GetTupleElement(*index as usize),
        Opcode::Fusion { kind: FusionKind::Output, computation: fused } => Step::FusedProduct(Box::new(
            FusedProduct::new(fused, &dense_operands, &instruction.shape.without_padding())?,
        )),
        Opcode::Fusion { .. } => Step::Loop(program()?),
        Opcode::Reduce { dimensions, .. } if dimensions.is_empty() && !instruction.shape.is_tuple() => {
            Step::Loop(program()?)
        }
        Opcode::Reduce { dimensions, reducer } if dimensions.len() == 1 && arg_extreme(reducer).is_some() => {
            let kind = arg_extreme(reducer).ok_or_else(not_a_loop)?;
            Step::ArgReduce { kind, dimension: dimensions[0] as usize }
        }
        Opcode::Reduce { dimensions, reducer } if !instruction.folds_in_loop() => {
            Step::InterpretedReduce { dimensions: dimensions.clone(), reducer: Function::new(reducer)? }
        }
        Opcode::Map { computation: applied, .. } => Step::Map(Function::new(applied)?),
        Opcode::While { condition, body } => Step::While {
            condition: Box::new(Plan::new(condition.clone())?),
            body: Box::new(Plan::new(body.clone())?),
        },
        Opcode::Conditional { branches } => {
            Step::Conditional(branches.iter().map(|b| Plan::new(b.clone())).collect::<Result<_>>()?)
        }
        Opcode::Call { computation: called } => Step::Call(Box::new(Plan::new(called.clone())?)),
        Opcode::Sort { dimension, comparator, .. } => Step::Sort {
            dimension: *dimension as usize,
            keys: key_order(comparator),
            comparator: Function::new(comparator)?,
        },
        Opcode::TopK { k, largest } => Step::TopK { k: *k as usize, largest: *largest },
        Opcode::RngBitGenerator { algorithm } => Step::RngBitGenerator(*algorithm),
        Opcode::BitcastConvert => Step::BitcastConvert,
        Opcode::Reduce { .. } => Step::Loop(program()?),
        // Kernels compute over dense buffers (`Plan::compute`): their conversions and
        // relayouts are compiled for the shapes without padding.
        Opcode::Dot { numbers, .. } => {
            let dense = Instruction { shape: instruction.shape.without_padding(), ..instruction.clone() };
            Step::Dot(Box::new(DotStep::new(&dense, numbers, &dense_operands)?))
        }
        Opcode::Gather { numbers, slice_sizes, .. } => {
            Step::Gather { numbers: numbers.clone(), slice_sizes: slice_sizes.clone() }
        }
        Opcode::Scatter { numbers, update, .. } => {
            // Native when the update computation is one op on the operand's own type.
            let own_type = update
                .parameters()
                .iter()
                .all(|p| p.shape.element_type() == instruction.shape.element_type());
            let native = update.simple_reducer().filter(|_| own_type);
            Step::Scatter { numbers: numbers.clone(), native, update: Function::new(update)? }
        }
        Opcode::DynamicSlice { .. } => Step::DynamicSlice,
        Opcode::DynamicUpdateSlice => Step::DynamicUpdateSlice,
        Opcode::ReduceWindow { window, reducer } => {
            let (row_major, dense) =
                (instruction.shape.with_default_layout(), instruction.shape.without_padding());
            let relayout = (row_major != dense).then(|| Box::new(LoopProgram::copy(&row_major, &dense)));
            let native = reducer
                .simple_reducer()
                .filter(|_| operand_shapes[0].element_type() == instruction.shape.element_type());
            Step::ReduceWindow { window: window.clone(), native, reducer: Function::new(reducer)?, relayout }
        }
        Opcode::SelectAndScatter { window, select, scatter } => {
            let element_type = instruction.shape.element_type();
            let own_type = scatter.parameters().iter().all(|p| p.shape.element_type() == element_type);
            let native =
                select.simple_comparison(element_type).zip(scatter.simple_reducer().filter(|_| own_type));
            Step::SelectAndScatter {
                window: window.clone(),
                native,
                select: Function::new(select)?,
                scatter: Function::new(scatter)?,
            }
        }
        Opcode::Convolution { window, numbers, feature_group_count, batch_group_count, .. } => {
            Step::Convolution {
                window: window.clone(),
                numbers: numbers.clone(),
                feature_group_count: *feature_group_count,
                batch_group_count: *batch_group_count,
                types: Box::new(TypedProduct::new(
                    &instruction.shape.without_padding(),
                    [&dense_operands[0], &dense_operands[1]],
                    None,
                )?),
            }
        }
        Opcode::Concatenate { dimension } => Step::Concatenate { dimension: *dimension },
        Opcode::Pad(config) => Step::Pad(config.clone()),
        Opcode::Reshape if computation.loop_part(id).is_none() => Step::Reshape,
        _ => Step::Loop(program()?),
    })
}

/// The loop computing instruction `id` of `computation` into `out_shape` (its element type and
/// dimensions, in its own layout or another): of a fusion, of a reduce over no dimension (a
/// copy: XLA returns the operand unchanged, the init value not applied), or of any other
/// instruction as a fusion of one. `None` if the loop compiler cannot compute it.
fn loop_program(computation: &HloComputation, id: InstructionId, out_shape: &Shape) -> Option<LoopProgram> {
    let instruction = &computation.instructions[id];
    let operand_shapes: Vec<Shape> =
        instruction.operands.iter().map(|&o| computation.instructions[o].shape.clone()).collect();
    match &instruction.opcode {
        Opcode::Fusion { computation: fused, .. } => fused_program(fused, &operand_shapes, out_shape),
        Opcode::Reduce { dimensions, .. } if dimensions.is_empty() && !instruction.shape.is_tuple() => {
            Some(LoopProgram::copy(operand_shapes.first()?, out_shape))
        }
        _ => fused_program(&HloComputation::single(instruction, &operand_shapes), &operand_shapes, out_shape),
    }
}

/// The loop of a fusion (or of a single instruction as one) into `out_shape` (its result's
/// element type and dimensions, any layout): a plain loop, or, when rooted at a reduce that
/// folds in a loop, a reduction of its producer. `None` if the loop compiler cannot compute
/// it.
pub(crate) fn fused_program(
    fused: &HloComputation,
    input_shapes: &[Shape],
    out_shape: &Shape,
) -> Option<LoopProgram> {
    let root = &fused.instructions[fused.root];
    match &root.opcode {
        Opcode::Reduce { dimensions, reducer } => {
            let Opcode::Parameter { number: init } = fused.instructions[*root.operands.get(1)?].opcode else {
                return None;
            };
            let reduction = (reducer.simple_reducer()?, init as usize);
            LoopProgram::compile_reduction(
                fused,
                root.operands[0],
                input_shapes,
                dimensions,
                reduction,
                out_shape,
            )
        }
        _ => LoopProgram::compile(fused, input_shapes, out_shape),
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
                Step::InterpretedReduce { reducer, .. } | Step::ReduceWindow { reducer, .. } => vec![reducer],
                Step::Map(function) | Step::Scatter { update: function, .. } => vec![function],
                Step::Sort { comparator, keys, .. } => {
                    if keys.is_none() {
                        found.push(format!("{name}: a sort by its comparator"));
                    }
                    vec![comparator]
                }
                Step::SelectAndScatter { native, select, scatter, .. } => {
                    if native.is_none() {
                        found.push(format!("{name}: a select and scatter by scalar functions"));
                    }
                    vec![select, scatter]
                }
                Step::While { condition, body } => {
                    found.extend(condition.interpreted());
                    found.extend(body.interpreted());
                    vec![]
                }
                Step::Conditional(branches) => {
                    branches.iter().for_each(|b| found.extend(b.interpreted()));
                    vec![]
                }
                Step::Call(plan) => {
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
    use super::*;

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
    use crate::builder::{tuple, XlaBuilder};
    use crate::element_type::ElementType;

    #[test]
    fn a_computed_result_moves_out_uncopied() {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &Shape::new(ElementType::F32, &[2, 3]), "x");
        let pair = tuple(&b, &[x * x, x + x]);
        for root in [x * x, pair] {
            let computation = Arc::new((*b.build(root).unwrap().entry).clone());
            let plan = Plan::new(computation).unwrap();
            let argument =
                Literal::from_vec(&Shape::new(ElementType::F32, &[2, 3]), vec![1.0f32; 6]).unwrap();
            let value = plan.evaluate(&[Value::of(&argument)], false).unwrap();
            let arrays = match &value {
                Value::Tuple(elements) => elements.iter().map(|e| e.array().unwrap()).collect(),
                array => vec![array.array().unwrap()],
            };
            let computed: Vec<*const f32> =
                arrays.iter().map(|a| a.memory::<f32>().unwrap().as_ptr()).collect();
            let literal = plan.result_literal(value, false).unwrap();
            let results = match literal.shape().is_tuple() {
                true => (0..computed.len()).map(|i| literal.tuple_element(i).unwrap()).collect(),
                false => vec![&literal],
            };
            let moved: Vec<*const f32> =
                results.iter().map(|a| a.memory::<f32>().unwrap().as_ptr()).collect();
            assert_eq!(moved, computed, "the result's buffers are the computed ones");
        }
    }
}
