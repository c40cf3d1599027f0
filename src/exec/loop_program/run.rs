//! Running a loop program: the output is cut into work items (a chunk of one row each), split
//! across rayon's threads when large; each item computes its start offsets, evaluates the
//! expression into cache-resident registers, and stores the result row segment.

use rayon::prelude::*;

use super::chunk_ops::{self, Operand};
use super::{LoopProgram, Node, NodeKind, Sink};
use crate::error::invalid_argument;
use crate::exec::element::{with_binary_fn, Element, Wide};
use crate::hlo::{BinaryOp, UnaryOp};
use crate::shape::element_type::with_native_type;
use crate::storage::Storage;
use crate::{Literal, NativeType, Result};

/// Elements per chunk: small enough that every register of an expression stays in L1/L2,
/// large enough that per-chunk dispatch is noise.
const CHUNK: usize = 1024;

/// Below this many output elements a program runs on the calling thread: a rayon call costs
/// more than such work (DESIGN.md, performance).
const PARALLEL_THRESHOLD: usize = 1 << 17;

/// How a run's work items are shared among threads.
enum Partition {
    Sequential,
    /// Contiguous ranges of items, cut at multiples of the given number of items.
    ItemRanges(usize),
    /// Ranges of segments (column chunks), each over every row.
    Segments,
}

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

impl<T: Element> OutTarget<T> {
    /// Checks that `offset + i·stride` lies in the buffer for every `i < len`.
    fn check(&self, offset: isize, stride: isize, len: usize) {
        let last = offset + (len as isize - 1) * stride;
        assert!(
            offset >= 0 && last >= 0 && (offset.max(last) as usize) < self.len,
            "a loop program writes inside its output"
        );
    }

    /// Combines `len` values into the elements at `offset + i·stride` with `op` (a reduction;
    /// stride 0 folds the whole chunk into one element).
    fn accumulate(&self, op: BinaryOp, offset: isize, stride: isize, values: Operand<'_, T>, len: usize) {
        self.check(offset, stride, len);
        with_binary_fn!(T, op, f => {
            let update = |position: isize, value: T| {
                // SAFETY: `position` is `offset + i·stride` for some `i < len`, inside the
                // buffer (checked above); the run's partition gives each output element to one
                // thread (`LoopProgram::partition`), so this read-modify-write races with
                // nothing.
                unsafe {
                    let element = self.ptr.add(position as usize);
                    element.write(f(element.read(), value));
                }
            };
            match (values, stride) {
                (Operand::Values(values), 0) => update(offset, fold(op, values, f)),
                (Operand::Splat(value), 0) => update(offset, fold(op, &vec![value; len], f)),
                (values, _) => {
                    for i in 0..len {
                        let value = match values {
                            Operand::Splat(v) => v,
                            Operand::Values(values) => values[i],
                        };
                        update(offset + i as isize * stride, value);
                    }
                }
            }
        })
    }

    /// Writes `len` values at `offset + i·stride`.
    fn store(&self, offset: isize, stride: isize, values: Operand<'_, T>, len: usize) {
        self.check(offset, stride, len);
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
        let row_len = *self.sizes.last().unwrap_or(&1);
        let segments = row_len.div_ceil(CHUNK).max(1);
        let rows: usize = self.sizes[..self.sizes.len() - 1].iter().product();
        let total = rows * row_len;
        with_native_type!(self.out_shape.element_type(), T => {
            let memory = out.storage_mut().as_mut_slice::<T>()?;
            if let Sink::Accumulate { init, .. } = self.sink {
                memory.fill(inputs[init].memory::<T>()?[0]);
            }
            if total == 0 {
                return Ok(());
            }
            let target = OutTarget { ptr: memory.as_mut_ptr(), len: memory.len() };
            let run_items = |items: &mut dyn Iterator<Item = usize>| -> Result<()> {
                let mut registers = self.registers(row_len.min(CHUNK))?;
                let mut starts = vec![0isize; self.nodes.len()];
                for item in items {
                    self.run_item::<T>(item, segments, inputs, &mut registers, &mut starts, &target)?;
                }
                Ok(())
            };
            let items = rows * segments;
            let blocks = rayon::current_num_threads() * 4;
            match self.partition(parallel && total >= PARALLEL_THRESHOLD, items, segments) {
                Partition::Sequential => run_items(&mut (0..items))?,
                Partition::ItemRanges(granule) => {
                    // Ranges of whole granules (items that write the same outputs stay together).
                    let granules = items / granule;
                    let blocks = blocks.min(granules).max(1);
                    (0..blocks).into_par_iter().try_for_each(|b| {
                        run_items(&mut ((b * granules / blocks) * granule..((b + 1) * granules / blocks) * granule))
                    })?;
                }
                Partition::Segments => {
                    let blocks = blocks.min(segments);
                    (0..blocks).into_par_iter().try_for_each(|b| {
                        let (first, last) = (b * segments / blocks, (b + 1) * segments / blocks);
                        run_items(&mut (0..rows).flat_map(|row| (first..last).map(move |s| row * segments + s)))
                    })?;
                }
            }
        });
        Ok(())
    }

    /// How the work items may be split across threads so that no two threads write one output
    /// element: any items for a plain loop; for a reduction, whole slices of the outermost
    /// walk dimension if it is kept, or column ranges (segments of every row) if the row is.
    fn partition(&self, parallel: bool, items: usize, segments: usize) -> Partition {
        if !parallel || items < 2 {
            return Partition::Sequential;
        }
        let last = self.sizes.len() - 1;
        match self.sink {
            Sink::Store => Partition::ItemRanges(1),
            Sink::Accumulate { .. } if last > 0 && self.out_strides[0] != 0 && self.sizes[0] > 1 => {
                Partition::ItemRanges(items / self.sizes[0])
            }
            Sink::Accumulate { .. } if self.out_strides[last] != 0 && segments > 1 => Partition::Segments,
            Sink::Accumulate { .. } => Partition::Sequential,
        }
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
    fn run_item<T: Element>(
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
        match self.sink {
            Sink::Store => target.store(out_offset, self.out_strides[last], result, len),
            Sink::Accumulate { op, .. } => {
                target.accumulate(op, out_offset, self.out_strides[last], result, len)
            }
        }
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

/// Lanes of independent accumulators when folding a chunk: they break the dependency chain so
/// the fold vectorizes (for the associative ops).
const LANES: usize = 16;

/// `values` folded with `f` (the function of `op`): in `LANES` interleaved partial results
/// for the associative ops (add, multiply, max, min, and, or, xor; float sums are
/// reassociated, as XLA may), in order for any other op.
#[inline(always)]
fn fold<T: Copy>(op: BinaryOp, values: &[T], f: impl Fn(T, T) -> T) -> T {
    use BinaryOp::*;
    let (first, rest) = values.split_first().expect("a chunk holds at least one value");
    if !matches!(op, Add | Mul | Max | Min | And | Or | Xor) || values.len() < 2 * LANES {
        return rest.iter().fold(*first, |acc, &v| f(acc, v));
    }
    let mut lanes: [T; LANES] = std::array::from_fn(|i| values[i]);
    let mut chunks = values[LANES..].chunks_exact(LANES);
    for chunk in &mut chunks {
        for (lane, &v) in lanes.iter_mut().zip(chunk) {
            *lane = f(*lane, v);
        }
    }
    let partial = chunks.remainder().iter().fold(lanes[0], |acc, &v| f(acc, v));
    lanes[1..].iter().fold(partial, |acc, &v| f(acc, v))
}
