//! Running a plan: its steps in order, a value step's value made of its operands' values (or
//! computed by a plan of its own), an array step's arrays computed into their planned buffers
//! (the caller's output itself, for the root, when it can be), each value dropped after its
//! last use.

use std::borrow::Cow;
use std::sync::Arc;

use crate::error::Result;
use crate::exec::buffer_assignment::Placement;
use crate::exec::heap::Heap;
use crate::exec::kernels::scatter;
use crate::exec::loop_program::LoopProgram;
use crate::exec::plan::step::loop_program;
use crate::exec::plan::{missing, ArrayStep, Plan, Step, ValueStep};
use crate::exec::value::Value;
use crate::hlo::ir::InstructionId;
use crate::literal::Literal;
use crate::shape::Shape;

impl Plan {
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
    /// the root's shape and the root is one array (then `None` is returned), else returned.
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
            let value = match step {
                Step::Value(step) => self.value(step, id, &mut arguments, &values, parallel)?,
                Step::Array(step) => {
                    let out = out.as_deref_mut().filter(|_| id == root);
                    match self.arrays(step, id, &mut values, out, &heap, parallel)? {
                        Some(value) => value,
                        None => return Ok(None),
                    }
                }
            };
            for &operand in &self.computation.instructions[id].operands {
                if self.last_use[operand] == id && operand != root {
                    values[operand] = None;
                }
            }
            values[id] = Some(value);
        }
        values[root].take().map(Some).ok_or_else(|| missing(&self.computation, root))
    }

    /// The value of value step `id`: an argument (taken from `arguments`), a constant, a tuple
    /// of its operands' values or an element of one, or what its plans compute from them.
    fn value<'a>(
        &'a self,
        step: &'a ValueStep,
        id: InstructionId,
        arguments: &mut [Value<'a>],
        values: &[Option<Value<'a>>],
        parallel: bool,
    ) -> Result<Value<'a>> {
        let inputs = self.inputs(id, values)?;
        match step {
            ValueStep::Parameter(number) => {
                // Taken, not shared: the plan reads each parameter once.
                let argument = arguments.get_mut(*number).ok_or_else(|| missing(&self.computation, id))?;
                let argument = std::mem::replace(argument, Value::Tuple(Vec::new()));
                self.conform(&argument, &self.computation.instructions[id].shape, parallel)
            }
            ValueStep::Constant(literal) => Ok(Value::of(literal)),
            ValueStep::Tuple => Ok(Value::Tuple(inputs.iter().map(|&v| v.clone()).collect())),
            ValueStep::GetTupleElement(index) => {
                let element = inputs.first().and_then(|t| t.elements().ok()?.get(*index));
                element.cloned().ok_or_else(|| missing(&self.computation, id))
            }
            ValueStep::While { condition, body } => {
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
            ValueStep::Conditional(branches) => {
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
            ValueStep::Call(plan) => {
                let arguments: Vec<Value<'a>> = inputs.iter().map(|&v| v.clone()).collect();
                plan.evaluate(&arguments, parallel)
            }
        }
    }

    /// The value of array step `id`, computed from its operands' arrays into its planned
    /// buffers, or (`None`) into `out`, the caller's output, when it is given for the root:
    /// an array of its shape, or any layout for a loop.
    fn arrays<'a>(
        &'a self,
        step: &ArrayStep,
        id: InstructionId,
        values: &mut [Option<Value<'a>>],
        out: Option<&mut Literal>,
        heap: &Heap,
        parallel: bool,
    ) -> Result<Option<Value<'a>>> {
        // Before anything borrows the values: an update may take its operand's memory.
        if out.is_none() {
            if let Some(value) = self.update_in_place(step, id, values, parallel)? {
                return Ok(Some(value));
            }
        }
        let arrays = self.operand_arrays(id, values)?;
        let shape = &self.computation.instructions[id].shape;
        if let Some(out) = out {
            if out.shape() == shape && !shape.is_tuple() {
                self.compute(step, id, &arrays, std::slice::from_mut(out), parallel)?;
                return Ok(None);
            }
            // A loop writes any layout: computing in the root's and copying after would cost
            // a second pass (a transposing one, between layouts).
            if let Some(program) = self.root_loop_into(step, out.shape()) {
                program.run(&arrays, out, parallel)?;
                return Ok(None);
            }
        }
        let shapes = match shape.is_tuple() {
            true => shape.tuple_shapes(),
            false => std::slice::from_ref(shape),
        };
        let mut outs: Vec<Literal> = shapes
            .iter()
            .enumerate()
            .map(|(k, shape)| self.buffer(heap, id, k, shape))
            .collect::<Result<_>>()?;
        self.compute(step, id, &arrays, &mut outs, parallel)?;
        Ok(Some(value_of_outputs(shape, outs)))
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

    /// Computes array step `id` from `inputs` into `outs` (the result's arrays, in order). A
    /// loop reads and writes every layout, padded ones included, and writes nothing but
    /// elements. Kernels read and write dense buffers only: a padded operand is copied out of
    /// its padding first, and padded results computed densely, then copied into `outs`'
    /// elements, so no kernel can write over the padding of a buffer (a caller's, with
    /// `execute_into`) or read it as an element.
    fn compute(
        &self,
        step: &ArrayStep,
        id: InstructionId,
        inputs: &[&Literal],
        outs: &mut [Literal],
        parallel: bool,
    ) -> Result<()> {
        if let (ArrayStep::Loop(program), [out]) = (step, &mut *outs) {
            return program.run(inputs, out, parallel);
        }
        let dense = self.dense_all(inputs, parallel)?;
        let inputs: Vec<&Literal> = dense.iter().map(|array| &**array).collect();
        if !outs.iter().any(|out| out.shape().is_padded()) {
            return self.kernel(step, id, &inputs, outs, parallel);
        }
        let mut results = (outs.iter())
            .map(|out| Literal::for_overwrite(&out.shape().without_padding()))
            .collect::<Result<Vec<_>>>()?;
        self.kernel(step, id, &inputs, &mut results, parallel)?;
        for (result, out) in results.iter().zip(outs) {
            self.relayouts.copy_into(result, out, parallel)?;
        }
        Ok(())
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

    /// A `dynamic_update_slice` whose operand this run computed into memory of its own, that
    /// nothing else holds and nothing reads later, and whose result is not planned in the
    /// heap (a root's, a loop state's), writes its update into that operand and takes it as
    /// its value: a loop updating its state (a scan stacking its outputs) then copies nothing
    /// per trip. `None` (the operand untouched) where that does not hold.
    fn update_in_place<'a>(
        &'a self,
        step: &ArrayStep,
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
        if !matches!(step, ArrayStep::DynamicUpdateSlice)
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
    fn root_loop_into(&self, step: &ArrayStep, out_shape: &Shape) -> Option<Arc<LoopProgram>> {
        let ArrayStep::Loop(_) = step else { return None };
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
}

/// The value of a step's outputs: the array, or the tuple of them.
fn value_of_outputs<'a>(shape: &Shape, outs: Vec<Literal>) -> Value<'a> {
    let mut values: Vec<Value<'a>> = outs.into_iter().map(Value::computed).collect();
    match (shape.is_tuple(), values.len()) {
        (false, 1) => values.remove(0),
        _ => Value::Tuple(values),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{tuple, XlaBuilder};
    use crate::element_type::ElementType;
    use crate::shape::Shape;

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
