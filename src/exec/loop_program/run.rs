//! Running a loop program: the output is cut into work items (a chunk of one row each), split
//! across rayon's threads when large; each item computes its start offsets, evaluates the
//! expression into cache-resident registers, and stores the result row segment.

use rayon::prelude::*;

use super::chunk_ops::{self, Operand};
use super::{LoopProgram, Node, NodeKind};
use crate::error::invalid_argument;
use crate::exec::element::{Element, Wide};
use crate::hlo::UnaryOp;
use crate::shape::element_type::with_native_type;
use crate::storage::Storage;
use crate::{Literal, NativeType, Result};

/// Elements per chunk: small enough that every register of an expression stays in L1/L2,
/// large enough that per-chunk dispatch is noise.
const CHUNK: usize = 1024;

/// Below this many output elements a program runs on the calling thread: a rayon call costs
/// more than such work (DESIGN.md, performance).
const PARALLEL_THRESHOLD: usize = 1 << 17;

/// One node's values for the current chunk; a splat holds its one value in element 0.
struct Register {
    values: Storage,
    splat: bool,
}

impl Register {
    fn operand<T: NativeType>(&self, len: usize) -> Result<Operand<'_, T>> {
        let values = self.values.as_slice::<T>()?;
        Ok(if self.splat { Operand::Splat(values[0]) } else { Operand::Values(&values[..len]) })
    }
}

/// The output buffer, shared by the threads of one run; each writes only its own items.
struct OutTarget<T> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: `OutTarget` is only a pointer to the output buffer, which outlives the run; the
// threads of a run write disjoint elements (see `store`), and nothing reads through it.
unsafe impl<T: Send> Send for OutTarget<T> {}
// SAFETY: as above: concurrent use only ever writes disjoint elements.
unsafe impl<T: Send> Sync for OutTarget<T> {}

impl<T: Copy> OutTarget<T> {
    /// Writes `len` values at `offset + i·stride`.
    fn store(&self, offset: isize, stride: isize, values: Operand<'_, T>, len: usize) {
        let last = offset + (len as isize - 1) * stride;
        assert!(
            offset >= 0 && last >= 0 && (offset.max(last) as usize) < self.len,
            "a loop program writes inside its output"
        );
        for i in 0..len {
            let position = (offset + i as isize * stride) as usize;
            let value = match values {
                Operand::Splat(v) => v,
                Operand::Values(values) => values[i],
            };
            // SAFETY: `position` lies in `0..self.len` (checked above for the extremes of this
            // arithmetic progression), `ptr` points to a live buffer of `self.len` elements,
            // and no other thread writes this position: a work item owns a distinct chunk of a
            // distinct output row, and the output layout maps distinct indices to distinct
            // positions.
            unsafe { self.ptr.add(position).write(value) };
        }
    }
}

impl LoopProgram {
    /// Computes the output from `inputs` (of the shapes the program was compiled for) into
    /// `out` (of the program's output shape; its padding is left as it is).
    pub(crate) fn run(&self, inputs: &[&Literal], out: &mut Literal, parallel: bool) -> Result<()> {
        if out.shape() != &self.out_shape {
            invalid_argument!("loop program for {} given an output of shape {}", self.out_shape, out.shape());
        }
        let total = self.out_shape.element_count() as usize;
        if total == 0 {
            return Ok(());
        }
        let row_len = *self.sizes.last().unwrap_or(&1);
        let segments = row_len.div_ceil(CHUNK);
        let items = self.sizes[..self.sizes.len() - 1].iter().product::<usize>() * segments;
        with_native_type!(self.out_shape.element_type(), T => {
            let memory = out.storage_mut().as_mut_slice::<T>()?;
            let target = OutTarget { ptr: memory.as_mut_ptr(), len: memory.len() };
            let run_items = |range: std::ops::Range<usize>| -> Result<()> {
                let mut registers = self.registers(row_len.min(CHUNK))?;
                let mut starts = vec![0isize; self.nodes.len()];
                for item in range {
                    self.run_item::<T>(item, segments, inputs, &mut registers, &mut starts, &target)?;
                }
                Ok(())
            };
            if parallel && total >= PARALLEL_THRESHOLD && items > 1 {
                let blocks = items.min(rayon::current_num_threads() * 4);
                (0..blocks).into_par_iter().try_for_each(|b| run_items(b * items / blocks..(b + 1) * items / blocks))?;
            } else {
                run_items(0..items)?;
            }
        });
        Ok(())
    }

    /// One register per node, of its element type.
    fn registers(&self, len: usize) -> Result<Vec<Register>> {
        self.nodes
            .iter()
            .map(|node| {
                let values = with_native_type!(node.element_type, T => Storage::filled(T::ZERO, len.max(1))?);
                Ok(Register { values, splat: false })
            })
            .collect()
    }

    /// Evaluates one work item (chunk `item % segments` of row `item / segments`) and stores it.
    fn run_item<T: NativeType>(
        &self,
        item: usize,
        segments: usize,
        inputs: &[&Literal],
        registers: &mut [Register],
        starts: &mut [isize],
        target: &OutTarget<T>,
    ) -> Result<()> {
        let last = self.sizes.len() - 1;
        let (mut row, segment) = (item / segments, item % segments);
        let first = segment * CHUNK;
        let len = CHUNK.min(self.sizes[last] - first);
        let mut out_offset = first as isize * self.out_strides[last];
        for (start, node) in starts.iter_mut().zip(&self.nodes) {
            if let NodeKind::Load { offset, strides, .. } | NodeKind::Index { offset, strides } = &node.kind {
                *start = offset + first as isize * strides[last];
            }
        }
        for d in (0..last).rev() {
            let index = (row % self.sizes[d]) as isize;
            row /= self.sizes[d];
            out_offset += index * self.out_strides[d];
            for (start, node) in starts.iter_mut().zip(&self.nodes) {
                if let NodeKind::Load { strides, .. } | NodeKind::Index { strides, .. } = &node.kind {
                    *start += index * strides[d];
                }
            }
        }
        for k in 0..self.nodes.len() {
            let (before, rest) = registers.split_at_mut(k);
            let row_stride = match &self.nodes[k].kind {
                NodeKind::Load { strides, .. } | NodeKind::Index { strides, .. } => strides[last],
                _ => 0,
            };
            rest[0].splat =
                evaluate(&self.nodes[k], before, &mut rest[0].values, inputs, starts[k], row_stride, len)?;
        }
        let result = registers.last().expect("a program has a result").operand::<T>(len)?;
        target.store(out_offset, self.out_strides[last], result, len);
        Ok(())
    }
}

/// Evaluates one node over a chunk of `len` elements into `out`; returns whether the result is
/// a splat. `start` and `stride` place a `Load` or `Index` node's chunk.
fn evaluate(
    node: &Node,
    registers: &[Register],
    out: &mut Storage,
    inputs: &[&Literal],
    start: isize,
    stride: isize,
    len: usize,
) -> Result<bool> {
    let operand_type = |k: usize| registers[node.operands[k]].values.element_type();
    Ok(match &node.kind {
        NodeKind::Load { input, .. } => with_native_type!(node.element_type, T => {
            load::<T>(inputs[*input].memory::<T>()?, start, stride, &mut out.as_mut_slice::<T>()?[..len])
        }),
        NodeKind::Index { .. } => with_native_type!(node.element_type, T => {
            let out = &mut out.as_mut_slice::<T>()?[..len];
            let value = |i: usize| T::narrow(Wide::Int((start + i as isize * stride) as i128));
            if stride == 0 {
                out[0] = value(0);
                true
            } else {
                out.iter_mut().enumerate().for_each(|(i, o)| *o = value(i));
                false
            }
        }),
        NodeKind::Constant(literal) => with_native_type!(node.element_type, T => {
            out.as_mut_slice::<T>()?[0] = literal.memory::<T>()?[0];
            true
        }),
        NodeKind::Unary(UnaryOp::IsFinite) => with_native_type!(operand_type(0), T => {
            chunk_ops::is_finite(registers[node.operands[0]].operand::<T>(len)?, &mut out.as_mut_slice::<bool>()?[..len])
        }),
        NodeKind::Unary(op) => with_native_type!(node.element_type, T => {
            chunk_ops::unary(*op, registers[node.operands[0]].operand::<T>(len)?, &mut out.as_mut_slice::<T>()?[..len])
        }),
        NodeKind::Binary(op) => with_native_type!(node.element_type, T => {
            let [a, b] = operands2::<T>(node, registers, len)?;
            chunk_ops::binary(*op, a, b, &mut out.as_mut_slice::<T>()?[..len])
        }),
        NodeKind::Compare(direction) => with_native_type!(operand_type(0), T => {
            let [a, b] = operands2::<T>(node, registers, len)?;
            chunk_ops::compare(*direction, a, b, &mut out.as_mut_slice::<bool>()?[..len])
        }),
        NodeKind::Select => with_native_type!(node.element_type, T => {
            let pred = registers[node.operands[0]].operand::<bool>(len)?;
            let (t, f) = (registers[node.operands[1]].operand::<T>(len)?, registers[node.operands[2]].operand::<T>(len)?);
            chunk_ops::select(pred, t, f, &mut out.as_mut_slice::<T>()?[..len])
        }),
        NodeKind::Clamp => with_native_type!(node.element_type, T => {
            let [lo, x, hi] = [0, 1, 2].map(|k| registers[node.operands[k]].operand::<T>(len));
            chunk_ops::clamp(lo?, x?, hi?, &mut out.as_mut_slice::<T>()?[..len])
        }),
        NodeKind::Convert => with_native_type!(operand_type(0), S => {
            let x = registers[node.operands[0]].operand::<S>(len)?;
            with_native_type!(node.element_type, D => chunk_ops::convert::<S, D>(x, &mut out.as_mut_slice::<D>()?[..len]))
        }),
    })
}

/// The two operands of a binary node.
fn operands2<'r, T: NativeType>(
    node: &Node,
    registers: &'r [Register],
    len: usize,
) -> Result<[Operand<'r, T>; 2]> {
    Ok([registers[node.operands[0]].operand::<T>(len)?, registers[node.operands[1]].operand::<T>(len)?])
}

/// Reads `out.len()` elements of `source` from `start`, `stride` apart: a copy when they are
/// contiguous, a splat when the stride is 0, a gather otherwise. Returns whether it is a splat.
fn load<T: Element>(source: &[T], start: isize, stride: isize, out: &mut [T]) -> bool {
    let start = start as usize;
    match stride {
        0 => {
            out[0] = source[start];
            true
        }
        1 => {
            out.copy_from_slice(&source[start..start + out.len()]);
            false
        }
        _ => {
            for (i, o) in out.iter_mut().enumerate() {
                *o = source[(start as isize + i as isize * stride) as usize];
            }
            false
        }
    }
}
