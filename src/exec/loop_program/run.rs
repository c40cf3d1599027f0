//! Running a loop program: the output is cut into work items (a chunk of one row each), split
//! across rayon's threads when large; each item computes its start offsets, evaluates the
//! expression into cache-resident registers, and stores the result row segment.

use rayon::prelude::*;

use super::chunk_ops::{self, Operand};
use super::{LoopProgram, Node, NodeKind, Sink};
use crate::attributes::{BinaryOp, UnaryOp};
use crate::error::{invalid_argument, Result};
use crate::exec::element::{with_binary_fn, Element, Wide};
use crate::literal::Literal;
use crate::storage::{with_native_type, NativeType, Storage};

/// Elements per chunk: small enough that every register of an expression stays in L1/L2,
/// large enough that per-chunk dispatch is noise.
const CHUNK: usize = 4096;

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
#[derive(Debug)]
pub(super) struct Register {
    values: Storage,
    state: State,
}

/// Where a register's values for the current chunk are.
#[derive(Clone, Copy, Debug)]
enum State {
    /// In its own buffer.
    Values,
    /// One value, in element 0 of its buffer, stands for all.
    Splat,
    /// A contiguous run of an input, read in place: `len` elements of input `.0` from `.1`.
    Borrowed(usize, usize),
}

impl Register {
    fn operand<'a, T: NativeType>(&'a self, len: usize, inputs: &[&'a Literal]) -> Result<Operand<'a, T>> {
        Ok(match self.state {
            State::Values => Operand::Values(&self.values.as_slice::<T>()?[..len]),
            State::Splat => Operand::Splat(self.values.as_slice::<T>()?[0]),
            State::Borrowed(input, start) => {
                Operand::Values(&inputs[input].memory::<T>()?[start..start + len])
            }
        })
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
            // Only positions `offset + i·stride` with `i < len` are modified: inside the buffer
            // (checked above), live for the run, and given to this thread alone by the run's
            // partition (`LoopProgram::partition`).
            let at = |i: usize| self.ptr.wrapping_offset(offset + i as isize * stride);
            match (values, stride) {
                // SAFETY: `at(0)`, as said above.
                (Operand::Values(values), 0) => unsafe { read_modify_write(at(0), |acc| fold(op, acc, values, f)) },
                // SAFETY: `at(0)`, as said above.
                (Operand::Splat(value), 0) => unsafe {
                    read_modify_write(at(0), |acc| (0..len).fold(acc, |a, _| f(a, value)))
                },
                (Operand::Splat(value), _) => {
                    for i in 0..len {
                        // SAFETY: `at(i)` with `i < len`, as said above.
                        unsafe { read_modify_write(at(i), |acc| f(acc, value)) }
                    }
                }
                (Operand::Values(values), _) => {
                    for (i, &value) in values[..len].iter().enumerate() {
                        // SAFETY: `at(i)` with `i < len`, as said above.
                        unsafe { read_modify_write(at(i), |acc| f(acc, value)) }
                    }
                }
            }
        })
    }

    /// Writes `len` values at `offset + i·stride`.
    fn store(&self, offset: isize, stride: isize, values: Operand<'_, T>, len: usize) {
        self.check(offset, stride, len);
        if stride == 1 {
            // SAFETY: `offset..offset + len` lies in the buffer (checked above), which is live
            // for the run, and no other thread touches it: a work item owns a distinct chunk of
            // a distinct output row, and the layout maps distinct indices to distinct positions.
            let row = unsafe { std::slice::from_raw_parts_mut(self.ptr.add(offset as usize), len) };
            match values {
                Operand::Splat(v) => row.fill(v),
                Operand::Values(values) => row.copy_from_slice(values),
            }
            return;
        }
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
        let geometry = self.geometry();
        let total: usize = self.sizes.iter().product();
        with_native_type!(self.out_shape.element_type(), T => {
            let memory = out.storage_mut()?.as_mut_slice::<T>()?;
            if let Sink::Accumulate { init, .. } = self.sink {
                memory.fill(inputs[init].memory::<T>()?[0]);
            }
            if total == 0 {
                return Ok(());
            }
            let target = OutTarget { ptr: memory.as_mut_ptr(), len: memory.len() };
            let run_items = |items: &mut dyn Iterator<Item = usize>| -> Result<()> {
                let mut registers = self.take_registers(geometry.tile * geometry.segment_len)?;
                let mut starts = vec![0isize; self.nodes.len()];
                for item in items {
                    self.run_item::<T>(item, &geometry, inputs, &mut registers, &mut starts, &target)?;
                }
                self.return_registers(registers);
                Ok(())
            };
            let (items, segments) = (geometry.items, geometry.segments);
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
                        run_items(&mut (0..items / segments).flat_map(|row| (first..last).map(move |s| row * segments + s)))
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
    /// A register file of `len` elements per node: one kept from an earlier run (so a small
    /// program called often allocates nothing), or a new one.
    fn take_registers(&self, len: usize) -> Result<Vec<Register>> {
        let kept = self.registers.lock().ok().and_then(|mut kept| kept.pop());
        if let Some(registers) = kept.filter(|r| r.first().is_none_or(|r| r.values.len() >= len.max(1))) {
            return Ok(registers);
        }
        self.nodes
            .iter()
            .map(|node| {
                let values = with_native_type!(node.element_type, T => Storage::filled(T::ZERO, len.max(1))?);
                Ok(Register { values, state: State::Values })
            })
            .collect()
    }

    /// Keeps a register file for later runs (one per thread that may run at once).
    fn return_registers(&self, registers: Vec<Register>) {
        if let Ok(mut kept) = self.registers.lock() {
            if kept.len() < rayon::current_num_threads() * 4 {
                kept.push(registers);
            }
        }
    }

    /// Evaluates one work item (chunk `item % segments` of row `item / segments`) and stores it.
    fn run_item<T: Element>(
        &self,
        item: usize,
        geometry: &Geometry,
        inputs: &[&Literal],
        registers: &mut [Register],
        starts: &mut [isize],
        target: &OutTarget<T>,
    ) -> Result<()> {
        let last = self.sizes.len() - 1;
        let segment = item % geometry.segments;
        let mut rest = item / geometry.segments;
        let block = rest % geometry.tile_blocks;
        rest /= geometry.tile_blocks;
        let first = segment * CHUNK;
        let len = CHUNK.min(self.sizes[last] - first);
        let (tile_stride_of, first_row, rows) = match geometry.tile_dim {
            Some(d) => {
                let first_row = block * geometry.tile;
                (d, first_row, geometry.tile.min(self.sizes[d] - first_row))
            }
            None => (last, 0, 1),
        };
        let chunk = Chunk { rows, len };
        // Offsets of the chunk's first element: the segment, the tile's first row, then the
        // outer dimensions decoded from the item number.
        let place = |strides: &[isize], base: isize, mut rest: usize| {
            let mut offset = base + first as isize * strides[last];
            if geometry.tile_dim.is_some() {
                offset += first_row as isize * strides[tile_stride_of];
            }
            for d in (0..geometry.outer_dims).rev() {
                offset += (rest % self.sizes[d]) as isize * strides[d];
                rest /= self.sizes[d];
            }
            offset
        };
        let out_offset = place(&self.out_strides, 0, rest);
        for (start, node) in starts.iter_mut().zip(&self.nodes) {
            if let NodeKind::Load { offset, strides, .. } | NodeKind::Index { offset, strides } = &node.kind {
                *start = place(strides, *offset, rest);
            }
        }
        for (k, (node, &start)) in self.nodes.iter().zip(starts.iter()).enumerate() {
            let (before, after) = registers.split_at_mut(k);
            let steps = match &node.kind {
                NodeKind::Load { strides, .. } | NodeKind::Index { strides, .. } => {
                    let tile_step = if geometry.tile_dim.is_some() { strides[tile_stride_of] } else { 0 };
                    [tile_step, strides[last]]
                }
                _ => [0, 0],
            };
            after[0].state = evaluate(node, before, &mut after[0].values, inputs, (start, steps), chunk)?;
        }
        let Some(result) = registers.last() else { return Ok(()) };
        let result = result.operand::<T>(rows * len, inputs)?;
        let out_tile_step = if geometry.tile_dim.is_some() { self.out_strides[tile_stride_of] } else { 0 };
        for r in 0..rows {
            let row = match result {
                Operand::Splat(v) => Operand::Splat(v),
                Operand::Values(values) => Operand::Values(&values[r * len..(r + 1) * len]),
            };
            let offset = out_offset + r as isize * out_tile_step;
            match self.sink {
                Sink::Store => target.store(offset, self.out_strides[last], row, len),
                Sink::Accumulate { op, .. } => {
                    target.accumulate(op, offset, self.out_strides[last], row, len)
                }
            }
        }
        Ok(())
    }

    /// How the walk is cut into work items.
    fn geometry(&self) -> Geometry {
        let last = self.sizes.len() - 1;
        let row_len = self.sizes[last];
        let segment_len = row_len.clamp(1, CHUNK);
        let segments = row_len.div_ceil(CHUNK).max(1);
        // Short rows are computed several at a time (a tile of consecutive rows along the
        // fastest outer dimension), so per-item work is amortized and a gathered input is
        // read along its contiguous dimension. Reductions keep one row per item.
        let tile_dim = (last >= 1 && self.sink == Sink::Store).then(|| last - 1);
        let tile = tile_dim.map_or(1, |d| self.sizes[d].clamp(1, (CHUNK / segment_len).max(1)));
        let tile_blocks = tile_dim.map_or(1, |d| self.sizes[d].div_ceil(tile));
        let outer_dims = tile_dim.unwrap_or(last);
        let outer: usize = self.sizes[..outer_dims].iter().product();
        Geometry {
            segments,
            segment_len,
            tile_dim,
            tile,
            tile_blocks,
            outer_dims,
            items: outer * tile_blocks * segments,
        }
    }
}

/// How a run cuts the walk into work items: each item is one segment (up to `CHUNK`
/// elements) of `tile` consecutive rows.
struct Geometry {
    segments: usize,
    segment_len: usize,
    /// The walk dimension whose consecutive indices form a tile (the fastest outer one).
    tile_dim: Option<usize>,
    tile: usize,
    tile_blocks: usize,
    /// The walk dimensions before the tile dimension, decoded from an item's number.
    outer_dims: usize,
    items: usize,
}

/// One work item's chunk: `rows` rows of `len` elements, row after row in the registers.
#[derive(Clone, Copy)]
struct Chunk {
    rows: usize,
    len: usize,
}

impl Chunk {
    fn count(self) -> usize {
        self.rows * self.len
    }
}

/// Evaluates one node over a chunk into `out` and says where its values are. For a `Load` or
/// `Index` node, `place` is the chunk's first offset and its steps from row to row and along
/// a row.
fn evaluate(
    node: &Node,
    registers: &[Register],
    out: &mut Storage,
    inputs: &[&Literal],
    (start, [tile_step, step]): (isize, [isize; 2]),
    chunk: Chunk,
) -> Result<State> {
    let len = chunk.count();
    if let NodeKind::Load { input, .. } = &node.kind {
        // A chunk that is one contiguous run of its input is read where it lies.
        if step == 1 && (chunk.rows == 1 || tile_step == chunk.len as isize) {
            return Ok(State::Borrowed(*input, start as usize));
        }
    }
    let operand_type = |k: usize| registers[node.operands[k]].values.element_type();
    let splat = match &node.kind {
        NodeKind::Load { input, .. } => with_native_type!(node.element_type, T => {
            let source = inputs[*input].memory::<T>()?;
            load::<T>(source, start, [tile_step, step], chunk, &mut out.as_mut_slice::<T>()?[..len])
        }),
        NodeKind::Index { .. } => with_native_type!(node.element_type, T => {
            let out = &mut out.as_mut_slice::<T>()?[..len];
            let value = |r: usize, i: usize| {
                T::narrow(Wide::Int((start + r as isize * tile_step + i as isize * step) as i128))
            };
            if tile_step == 0 && step == 0 {
                out[0] = value(0, 0);
                true
            } else {
                for (r, row) in out.chunks_exact_mut(chunk.len).enumerate() {
                    row.iter_mut().enumerate().for_each(|(i, o)| *o = value(r, i));
                }
                false
            }
        }),
        NodeKind::Constant(literal) => with_native_type!(node.element_type, T => {
            out.as_mut_slice::<T>()?[0] = literal.memory::<T>()?[0];
            true
        }),
        NodeKind::Unary(UnaryOp::IsFinite) => with_native_type!(operand_type(0), T => {
            chunk_ops::is_finite(registers[node.operands[0]].operand::<T>(len, inputs)?, &mut out.as_mut_slice::<bool>()?[..len])
        }),
        NodeKind::Unary(op) => with_native_type!(node.element_type, T => {
            chunk_ops::unary(*op, registers[node.operands[0]].operand::<T>(len, inputs)?, &mut out.as_mut_slice::<T>()?[..len])
        }),
        NodeKind::Binary(op) => with_native_type!(node.element_type, T => {
            let [a, b] = operands2::<T>(node, registers, len, inputs)?;
            chunk_ops::binary(*op, a, b, &mut out.as_mut_slice::<T>()?[..len])
        }),
        NodeKind::Compare(direction) => with_native_type!(operand_type(0), T => {
            let [a, b] = operands2::<T>(node, registers, len, inputs)?;
            chunk_ops::compare(*direction, a, b, &mut out.as_mut_slice::<bool>()?[..len])
        }),
        NodeKind::Select => with_native_type!(node.element_type, T => {
            let pred = registers[node.operands[0]].operand::<bool>(len, inputs)?;
            let (t, f) = (registers[node.operands[1]].operand::<T>(len, inputs)?, registers[node.operands[2]].operand::<T>(len, inputs)?);
            chunk_ops::select(pred, t, f, &mut out.as_mut_slice::<T>()?[..len])
        }),
        NodeKind::Clamp => with_native_type!(node.element_type, T => {
            let [lo, x, hi] = [0, 1, 2].map(|k| registers[node.operands[k]].operand::<T>(len, inputs));
            chunk_ops::clamp(lo?, x?, hi?, &mut out.as_mut_slice::<T>()?[..len])
        }),
        NodeKind::Convert => with_native_type!(operand_type(0), S => {
            let x = registers[node.operands[0]].operand::<S>(len, inputs)?;
            with_native_type!(node.element_type, D => chunk_ops::convert::<S, D>(x, &mut out.as_mut_slice::<D>()?[..len]))
        }),
    };
    Ok(if splat { State::Splat } else { State::Values })
}

/// The two operands of a binary node.
fn operands2<'r, T: NativeType>(
    node: &Node,
    registers: &'r [Register],
    len: usize,
    inputs: &[&'r Literal],
) -> Result<[Operand<'r, T>; 2]> {
    Ok([
        registers[node.operands[0]].operand::<T>(len, inputs)?,
        registers[node.operands[1]].operand::<T>(len, inputs)?,
    ])
}

/// Reads a chunk of `source`: element (r, i) from `start + r·tile_step + i·step`. A splat
/// when both steps are 0; rows copied when contiguous; otherwise gathered, column by column
/// when the rows are the contiguous direction (a transposed input). Returns whether it is a
/// splat.
fn load<T: Element>(
    source: &[T],
    start: isize,
    [tile_step, step]: [isize; 2],
    chunk: Chunk,
    out: &mut [T],
) -> bool {
    let at = |r: usize, i: usize| (start + r as isize * tile_step + i as isize * step) as usize;
    match (tile_step, step) {
        (0, 0) => {
            out[0] = source[start as usize];
            return true;
        }
        (_, 1) => {
            for (r, row) in out.chunks_exact_mut(chunk.len).enumerate() {
                let from = at(r, 0);
                row.copy_from_slice(&source[from..from + chunk.len]);
            }
        }
        (_, 0) => {
            for (r, row) in out.chunks_exact_mut(chunk.len).enumerate() {
                row.fill(source[at(r, 0)]);
            }
        }
        (1, _) if chunk.rows > 1 => {
            // A transposed input: each column of the chunk is contiguous in the source.
            for i in 0..chunk.len {
                let from = at(0, i);
                for (r, &value) in source[from..from + chunk.rows].iter().enumerate() {
                    out[r * chunk.len + i] = value;
                }
            }
        }
        _ => {
            for (r, row) in out.chunks_exact_mut(chunk.len).enumerate() {
                row.iter_mut().enumerate().for_each(|(i, o)| *o = source[at(r, i)]);
            }
        }
    }
    false
}

/// `*element = g(*element)`.
///
/// # Safety
/// `element` points to a live, initialized `T` that nothing else accesses meanwhile.
#[inline(always)]
unsafe fn read_modify_write<T>(element: *mut T, g: impl FnOnce(T) -> T) {
    // SAFETY: the caller's guarantee.
    unsafe { element.write(g(element.read())) }
}

/// Lanes of independent accumulators when folding a chunk: they break the dependency chain so
/// the fold vectorizes (for the associative ops).
const LANES: usize = 16;

/// `values` folded into `acc` with `f` (the function of `op`): in `LANES` interleaved partial
/// results for the associative ops (add, multiply, max, min, and, or, xor; float sums are
/// reassociated, as XLA may), in order for any other op.
#[inline(always)]
fn fold<T: Copy>(op: BinaryOp, acc: T, values: &[T], f: impl Fn(T, T) -> T) -> T {
    use BinaryOp::*;
    if !matches!(op, Add | Mul | Max | Min | And | Or | Xor) || values.len() < 2 * LANES {
        return values.iter().fold(acc, |acc, &v| f(acc, v));
    }
    let mut lanes: [T; LANES] = std::array::from_fn(|i| values[i]);
    let mut chunks = values[LANES..].chunks_exact(LANES);
    for chunk in &mut chunks {
        for (lane, &v) in lanes.iter_mut().zip(chunk) {
            *lane = f(*lane, v);
        }
    }
    let partial = chunks.remainder().iter().fold(lanes[0], |acc, &v| f(acc, v));
    f(acc, lanes[1..].iter().fold(partial, |acc, &v| f(acc, v)))
}
