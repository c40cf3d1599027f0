//! Running an array step's kernel: the step's attributes handed to its kernel in
//! `exec/kernels/`, dense buffers in and out (`Plan::compute` copies padded ones), and the
//! memory each kernel computes in besides its operands and result.

use crate::attributes::BinaryOp;
use crate::error::{Error, Result};
use crate::exec::buffer_assignment::Placement;
use crate::exec::kernels::interpreted::{self, Combine};
use crate::exec::kernels::windows::{self, SelectScatter};
use crate::exec::kernels::{arg_reduce, bitcast, convolution, data_movement, gather, random, scatter, sort};
use crate::exec::plan::{missing, ArrayStep, Function, Plan};
use crate::exec::scalar_program::Scalar;
use crate::hlo::ir::InstructionId;
use crate::hlo::text::instruction_text;
use crate::literal::Literal;
use crate::shape::Shape;
use crate::storage::Storage;

impl Plan {
    /// Runs the kernel of array step `id` from `inputs` into `outs` (the result's arrays, in
    /// order: one, or a tuple's elements), all dense.
    pub(super) fn kernel(
        &self,
        step: &ArrayStep,
        id: InstructionId,
        inputs: &[&Literal],
        outs: &mut [Literal],
        parallel: bool,
    ) -> Result<()> {
        match (step, inputs, outs) {
            (ArrayStep::Map(function), _, [out]) => interpreted::map(inputs, &mut function.applier(), out),
            (ArrayStep::Dot(dot), &[lhs, rhs], [out]) => dot.run([lhs, rhs], out, parallel),
            (ArrayStep::FusedProduct(product), _, [out]) => product.run(inputs, out, parallel),
            (ArrayStep::Gather { numbers, slice_sizes }, &[operand, indices], [out]) => {
                gather::gather(operand, indices, numbers, slice_sizes, out, parallel)
            }
            (ArrayStep::Scatter { numbers, native, update }, &[operand, indices, updates], [out]) => {
                let operand = (!self.in_place(id)).then_some(operand);
                combine(*native, update, |combine| {
                    scatter::scatter(operand, [indices, updates], numbers, combine, out)
                })
            }
            (ArrayStep::DynamicSlice, [operand, starts @ ..], [out]) => {
                gather::dynamic_slice(operand, starts, out, parallel)
            }
            (ArrayStep::DynamicUpdateSlice, &[operand, update, ref starts @ ..], [out]) => {
                let operand = (!self.in_place(id)).then_some(operand);
                scatter::dynamic_update_slice(operand, update, starts, out, parallel)
            }
            (ArrayStep::ReduceWindow { window, native, reducer, relayout }, &[operand, init], [out]) => {
                combine(*native, reducer, |combine| match relayout {
                    None => windows::reduce_window(operand, init, window, combine, out, parallel),
                    Some(relayout) => {
                        let mut row_major = Literal::for_overwrite(&out.shape().with_default_layout())?;
                        windows::reduce_window(operand, init, window, combine, &mut row_major, parallel)?;
                        relayout.run(&[&row_major], out, parallel)
                    }
                })
            }
            (
                ArrayStep::SelectAndScatter { window, native, select, scatter },
                &[operand, source, init],
                [out],
            ) => {
                let (mut select, mut scatter) = (select.applier(), scatter.applier());
                let functions = match native {
                    Some((direction, op)) => SelectScatter::Native(*direction, *op),
                    None => SelectScatter::Interpreted { select: &mut select, scatter: &mut scatter },
                };
                windows::select_and_scatter([operand, source, init], window, functions, out)
            }
            (
                ArrayStep::Convolution { window, numbers, feature_group_count, batch_group_count, types },
                &[lhs, rhs],
                [out],
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
            (ArrayStep::Reshape, &[operand], [out]) if out.shape().layout().is_default() => {
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
            (ArrayStep::Reshape, &[operand], [out]) => data_movement::reshape(operand, out),
            (ArrayStep::BitcastConvert, &[operand], [out]) => bitcast::bitcast_convert(operand, out),
            (ArrayStep::Concatenate { dimension }, _, [out]) => {
                data_movement::concatenate(inputs, *dimension, out)
            }
            (ArrayStep::Pad(config), &[operand, value], [out]) => {
                data_movement::pad([operand, value], config, out)
            }
            (ArrayStep::InterpretedReduce { dimensions, reducer }, _, outs) => {
                let (operands, inits) = inputs.split_at(inputs.len() / 2);
                let mut targets: Vec<&mut Literal> = outs.iter_mut().collect();
                interpreted::reduce(operands, inits, dimensions, &mut reducer.applier(), &mut targets)
            }
            (ArrayStep::Sort { dimension, keys, comparator }, _, outs) => {
                let less = |arguments: &[Scalar], registers: &mut Vec<Scalar>| -> Result<bool> {
                    let mut results = Vec::with_capacity(1);
                    comparator.apply(arguments, &mut results, registers)?;
                    Ok(results.first() == Some(&Scalar::Pred(true)))
                };
                let mut targets: Vec<&mut Literal> = outs.iter_mut().collect();
                sort::sort(inputs, *dimension, keys.as_deref(), &less, parallel, &mut targets)
            }
            (ArrayStep::ArgReduce { kind, dimension }, _, outs) => {
                let (&[values, indices], &[init_value, init_index]) = (&inputs[..2], &inputs[2..]) else {
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
            (ArrayStep::TopK { k, largest }, _, outs) => {
                let operand = inputs.first().ok_or_else(|| missing(&self.computation, id))?;
                let [values, indices] = outs else { return Err(missing(&self.computation, id)) };
                sort::top_k(operand, *k, *largest, values, indices)
            }
            (ArrayStep::RngBitGenerator(algorithm), _, outs) => {
                let state = inputs.first().ok_or_else(|| missing(&self.computation, id))?;
                let [new_state, bits] = outs else { return Err(missing(&self.computation, id)) };
                random::rng_bit_generator(*algorithm, state, new_state, bits)
            }
            _ => Err(Error::InvalidComputation {
                stage: "plan".into(),
                computation: self.computation.name.clone(),
                instruction: instruction_text(&self.computation, id),
                message: format!("a step of this kind cannot take {} operands", inputs.len()),
            }),
        }
    }

    /// Whether instruction `id`'s array took over the buffer of its first operand (which died
    /// at this step: see [`buffer_assignment::Instruction::reuses`]), so it already holds the
    /// operand's values, and the operand must not be read (its memory is the output's).
    ///
    /// [`buffer_assignment::Instruction::reuses`]: crate::exec::buffer_assignment::Instruction::reuses
    fn in_place(&self, id: InstructionId) -> bool {
        let operand = self.computation.instructions[id].operands.first();
        let placement = |i: InstructionId| self.buffers.placements[i].first();
        matches!(
            (placement(id), operand.and_then(|&o| placement(o))),
            (Some(Placement::Heap(a)), Some(Placement::Heap(b))) if a == b
        )
    }
}

impl ArrayStep {
    /// The bytes the step computes in besides its operands (of `operand_shapes`) and its
    /// result (of `shape`): for a kernel, dense copies of padded operands and of a padded
    /// result, and its own scratch; a loop reads and writes padded buffers in place.
    pub(super) fn scratch_bytes(&self, operand_shapes: &[&Shape], shape: &Shape) -> u64 {
        let own = match self {
            ArrayStep::Loop(_) => return 0,
            ArrayStep::Dot(dot) => dot.scratch_bytes([operand_shapes[0], operand_shapes[1]], shape),
            ArrayStep::FusedProduct(product) => product.scratch_bytes(operand_shapes),
            ArrayStep::Convolution { window, numbers, feature_group_count, batch_group_count, types } => {
                let attributes = convolution::Convolution {
                    window,
                    numbers,
                    feature_group_count: *feature_group_count,
                    batch_group_count: *batch_group_count,
                };
                let patches =
                    convolution::scratch_bytes(operand_shapes[0], operand_shapes[1], shape, &attributes);
                types.scratch_bytes().saturating_add(patches)
            }
            ArrayStep::ReduceWindow { relayout: Some(_), .. } => shape.byte_size(),
            _ => 0,
        };
        let padded = |shape: &Shape| if shape.is_padded() { shape.byte_size() } else { 0 };
        let dense = operand_shapes.iter().map(|s| padded(s)).fold(padded(shape), u64::saturating_add);
        dense.saturating_add(own)
    }

    /// Whether the kernel can compute its result in its first operand's buffer, writing only
    /// the elements it changes: a dynamic update slice or a scatter.
    pub(super) fn may_update_its_operand(&self) -> bool {
        matches!(self, ArrayStep::DynamicUpdateSlice | ArrayStep::Scatter { .. })
    }
}

/// Runs `body` with how its kernel combines an accumulator with a value: by the `native` op
/// where the step found one, else by applying `function` to scalars.
fn combine<R>(native: Option<BinaryOp>, function: &Function, body: impl FnOnce(Combine<'_>) -> R) -> R {
    let mut apply = function.applier();
    body(match native {
        Some(op) => Combine::Native(op),
        None => Combine::Interpreted(&mut apply),
    })
}
