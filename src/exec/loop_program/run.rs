//! Running a loop program: the output is cut into work items (a chunk of one row each), split
//! across rayon's threads when large; each item computes its start offsets, evaluates the
//! expression into cache-resident registers, and stores the result row segment.

use rayon::prelude::*;

use super::chunk_ops::{self, Operand};
use super::{LoopProgram, Node, NodeKind, Sink};
use crate::attributes::{BinaryOp, UnaryOp};
use crate::element_type::ElementType;
use crate::error::{invalid_argument, Error, Result};
use crate::exec::element::{with_binary_fn, Element, Wide};
use crate::literal::Literal;
use crate::storage::{with_native_type, NativeType, Storage};

/// Elements per chunk: small enough that the few slots an expression uses stay in L1 (4 KiB
/// each in f32), large enough that per-chunk dispatch is noise. Rows of at least this many
/// elements are one row per chunk, so a value broadcast along the row is one splat.
const CHUNK: usize = 1024;

/// Below this many output elements a program runs on the calling thread: a rayon call costs
/// more than such work (DESIGN.md, performance).
const PARALLEL_THRESHOLD: usize = 1 << 17;

/// The partial sums of a large sum into few elements (see `LoopProgram::partition`).
const PARTIALS: usize = 16;

/// The most output elements a sum is computed in partial sums for (each partial a copy of
/// the output).
const PARTIALS_MAX_OUTPUT: usize = 1 << 14;

/// How a run's work items are shared among threads.
enum Partition {
    Sequential,
    /// Contiguous ranges of items, cut at multiples of the given number of items.
    ItemRanges(usize),
    /// Ranges of segments (column chunks), each over every row.
    Segments,
    /// Ranges of items, each summed into a partial output of its own, the partials then added
    /// in order: a sum into few elements (reassociated, as XLA does), its input read in order.
    Partials,
}

/// A thread's chunk buffers: the program's slots (see `slots.rs`), and where each node's
/// values for the current chunk are.
#[derive(Debug)]
pub(super) struct RegisterFile {
    slots: Vec<Storage>,
    states: Vec<State>,
}

/// Where a node's values for the current chunk are.
#[derive(Clone, Copy, Debug)]
enum State {
    /// In its slot.
    Values,
    /// One value, in element 0 of its slot, stands for all.
    Splat,
    /// A contiguous run of an input, read in place: `len` elements of input `.0` from `.1`.
    Borrowed(usize, usize),
    /// A scalar constant, read from its node: set once when the register file is made, never
    /// evaluated per chunk.
    Constant,
}

/// What a node being evaluated reads: the register file (its own slot taken out) and the
/// inputs.
struct Reads<'a> {
    nodes: &'a [Node],
    file: &'a RegisterFile,
    slot_of: &'a [usize],
    inputs: &'a [&'a Literal],
}

impl<'a> Reads<'a> {
    /// Node `node`'s values for the current chunk of `len` elements (`None`: not `T`s).
    fn operand<T: NativeType>(&self, node: usize, len: usize) -> Option<Operand<'a, T>> {
        let slot = &self.file.slots[self.slot_of[node]];
        Some(match self.file.states[node] {
            State::Values => Operand::Values(&T::slice_of(slot)?[..len]),
            State::Splat => Operand::Splat(T::slice_of(slot)?[0]),
            State::Borrowed(input, start) => {
                Operand::Values(&self.inputs[input].slice::<T>()?[start..start + len])
            }
            State::Constant => match &self.nodes[node].kind {
                NodeKind::Constant(literal) => Operand::Splat(literal.slice::<T>()?[0]),
                _ => return None,
            },
        })
    }

    /// The element type of node `node` (its own, also for a constant, which reads no slot).
    fn element_type(&self, node: usize) -> ElementType {
        self.nodes[node].element_type
    }
}

/// Where a node's values go: its slot, or (the result of a plain loop whose chunk is one
/// contiguous run of the output) straight into the output.
struct Dest<'a> {
    slot: &'a mut Storage,
    /// The output's chunk: its first element, element type and length.
    direct: Option<(*mut u8, ElementType, usize)>,
}

impl Dest<'_> {
    /// The first `len` elements written, as `T`s (`None`: the slot holds another type).
    fn slice<T: NativeType>(&mut self, len: usize) -> Option<&mut [T]> {
        match self.direct {
            Some((ptr, element_type, direct_len)) if element_type == T::ELEMENT_TYPE && len <= direct_len => {
                // SAFETY: `run_item` gives `direct` only for a run of `direct_len` elements of
                // the output (of element type `T`, checked here) that lies inside it (checked by
                // `OutTarget::check`) and that this work item alone writes during the run; the
                // slice lives no longer than this `Dest`, which lives within the run.
                Some(unsafe { std::slice::from_raw_parts_mut(ptr.cast::<T>(), len) })
            }
            _ => Some(&mut T::slice_of_mut(self.slot)?[..len]),
        }
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
        if stride == 1 {
            // SAFETY: `offset..offset + len` lies in the buffer (checked above), live for the
            // run, and given to this thread alone by the run's partition.
            let row = unsafe { std::slice::from_raw_parts_mut(self.ptr.add(offset as usize), len) };
            chunk_ops::accumulate(op, row, values);
            return;
        }
        if stride == 0 {
            // SAFETY: `offset` lies in the buffer (checked above), live for the run, and given
            // to this thread alone by the run's partition.
            fold_in_chunks(op, unsafe { &mut *self.ptr.add(offset as usize) }, values, len);
            return;
        }
        with_binary_fn!(T, op, f => {
            // Only positions `offset + i·stride` with `i < len` are modified: inside the buffer
            // (checked above), live for the run, and given to this thread alone by the run's
            // partition (`LoopProgram::partition`).
            let at = |i: usize| self.ptr.wrapping_offset(offset + i as isize * stride);
            match values {
                Operand::Splat(value) => {
                    for i in 0..len {
                        // SAFETY: `at(i)` with `i < len`, as said above.
                        unsafe { read_modify_write(at(i), |acc| f(acc, value)) }
                    }
                }
                Operand::Values(values) => {
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
        let total: usize = self.sizes.iter().product();
        let large = total >= PARALLEL_THRESHOLD;
        let parallel = parallel && large && rayon::current_num_threads() > 1;
        let partials = large && self.sums_into_few();
        let geometry = self.geometry(if parallel && !partials { rayon::current_num_threads() } else { 1 });
        with_native_type!(self.out_shape.element_type(), T => {
            let memory = out.storage_mut()?.as_mut_slice::<T>()?;
            if let Sink::Accumulate { init, .. } = self.sink {
                memory.fill(inputs[init].memory::<T>()?[0]);
            }
            if total == 0 {
                return Ok(());
            }
            let target = OutTarget { ptr: memory.as_mut_ptr(), len: memory.len() };
            let run_into = |items: &mut dyn Iterator<Item = usize>, target: &OutTarget<T>| -> Result<()> {
                let mut file = self.take_registers(geometry.tile * geometry.segment_len)?;
                let mut starts = vec![0isize; self.nodes.len()];
                for item in items {
                    self.run_item::<T>(item, &geometry, inputs, &mut file, &mut starts, target)?;
                }
                self.return_registers(file);
                Ok(())
            };
            let run_items = |items: &mut dyn Iterator<Item = usize>| run_into(items, &target);
            let (items, segments) = (geometry.items, geometry.segments);
            let blocks = rayon::current_num_threads() * 4;
            match self.partition(parallel, large, items, segments) {
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
                Partition::Partials => {
                    let blocks = PARTIALS.min(items);
                    let len = memory.len();
                    let partial = |b: usize| {
                        // -0 is the identity of a float sum (and 0 of an integer one).
                        let mut partial = vec![T::ZERO.neg(); len];
                        let target = OutTarget { ptr: partial.as_mut_ptr(), len };
                        run_into(&mut (b * items / blocks..(b + 1) * items / blocks), &target)?;
                        Ok(partial)
                    };
                    let partials: Vec<Vec<T>> = match parallel {
                        true => (0..blocks).into_par_iter().map(partial).collect::<Result<_>>()?,
                        false => (0..blocks).map(partial).collect::<Result<_>>()?,
                    };
                    for partial in partials {
                        memory.iter_mut().zip(partial).for_each(|(m, p)| *m = m.add(p));
                    }
                }
            }
        });
        Ok(())
    }

    /// How the work items may be split across threads so that no two threads write one output
    /// element: any items for a plain loop; for a reduction, whole slices of the outermost
    /// walk dimension if it is kept, or column ranges (segments of every row) if the row is;
    /// a `large` sum into few elements (a full sum, column sums) is cut into `PARTIALS` ranges
    /// of rows summed apart, on any number of threads, so its value does not depend on how
    /// many there are.
    fn partition(&self, parallel: bool, large: bool, items: usize, segments: usize) -> Partition {
        if large && self.sums_into_few() && items >= PARTIALS {
            return Partition::Partials;
        }
        if !parallel || items < 2 {
            return Partition::Sequential;
        }
        match self.sink {
            Sink::Store => Partition::ItemRanges(1),
            Sink::Accumulate { .. } if self.outer_kept() => Partition::ItemRanges(items / self.sizes[0]),
            Sink::Accumulate { .. } if self.row_kept() && segments > 1 => Partition::Segments,
            Sink::Accumulate { .. } => Partition::Sequential,
        }
    }

    /// Whether this is a sum into an output small enough to keep `PARTIALS` copies of, whose
    /// outermost walk dimension is reduced (so ranges of items share outputs).
    fn sums_into_few(&self) -> bool {
        matches!(self.sink, Sink::Accumulate { op: BinaryOp::Add, .. })
            && !self.outer_kept()
            && self.out_shape.element_count() <= PARTIALS_MAX_OUTPUT as i64
    }

    /// Whether a reduction keeps its outermost walk dimension (so slices of it are disjoint).
    fn outer_kept(&self) -> bool {
        self.sizes.len() > 1 && self.out_strides[0] != 0 && self.sizes[0] > 1
    }

    /// Whether a reduction keeps the row (the walk's last dimension): column sums.
    fn row_kept(&self) -> bool {
        self.out_strides[self.sizes.len() - 1] != 0
    }

    /// A register file with slots of `len` elements: one kept from an earlier run (so a small
    /// program called often allocates nothing), or a new one.
    fn take_registers(&self, len: usize) -> Result<RegisterFile> {
        let kept = self.registers.lock().ok().and_then(|mut kept| kept.pop());
        if let Some(file) = kept.filter(|f| f.slots.first().is_none_or(|s| s.len() >= len.max(1))) {
            return Ok(file);
        }
        let slots = self
            .slots
            .types
            .iter()
            .map(|&element_type| with_native_type!(element_type, T => Storage::filled(T::ZERO, len.max(1))))
            .collect::<Result<_>>()?;
        let states = self
            .nodes
            .iter()
            .map(|node| match node.kind {
                NodeKind::Constant(_) => State::Constant,
                _ => State::Values,
            })
            .collect();
        Ok(RegisterFile { slots, states })
    }

    /// Keeps a register file for later runs (one per thread that may run at once).
    fn return_registers(&self, file: RegisterFile) {
        if let Ok(mut kept) = self.registers.lock() {
            if kept.len() < rayon::current_num_threads() * 4 {
                kept.push(file);
            }
        }
    }

    /// Evaluates one work item (chunk `item % segments` of row `item / segments`) and stores it.
    fn run_item<T: Element>(
        &self,
        item: usize,
        geometry: &Geometry,
        inputs: &[&Literal],
        file: &mut RegisterFile,
        starts: &mut [isize],
        target: &OutTarget<T>,
    ) -> Result<()> {
        let last = self.sizes.len() - 1;
        let segment = item % geometry.segments;
        let mut rest = item / geometry.segments;
        let block = rest % geometry.tile_blocks;
        rest /= geometry.tile_blocks;
        let first = segment * geometry.segment_len;
        let len = geometry.segment_len.min(self.sizes[last] - first);
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
        let out_tile_step = if geometry.tile_dim.is_some() { self.out_strides[tile_stride_of] } else { 0 };
        // The result of a plain loop whose chunk is one run of the output is computed in place.
        let direct = (self.sink == Sink::Store
            && self.out_strides[last] == 1
            && (rows == 1 || out_tile_step == len as isize))
            .then(|| {
                target.check(out_offset, 1, chunk.count());
                (target.ptr.wrapping_offset(out_offset).cast::<u8>(), T::ELEMENT_TYPE, chunk.count())
            });
        let result = self.nodes.len() - 1;
        for (k, (node, &start)) in self.nodes.iter().zip(starts.iter()).enumerate() {
            if let NodeKind::Constant(_) = node.kind {
                continue; // read from the node itself (`State::Constant`)
            }
            let steps = match &node.kind {
                NodeKind::Load { strides, .. } | NodeKind::Index { strides, .. } => {
                    let tile_step = if geometry.tile_dim.is_some() { strides[tile_stride_of] } else { 0 };
                    [tile_step, strides[last]]
                }
                _ => [0, 0],
            };
            let computed = !matches!(node.kind, NodeKind::Load { .. } | NodeKind::Index { .. });
            let slot = self.slots.of_node[k];
            let mut values = std::mem::replace(&mut file.slots[slot], Storage::Pred(Vec::new()));
            let mut dest = Dest { slot: &mut values, direct: direct.filter(|_| k == result && computed) };
            let reads = Reads { nodes: &self.nodes, file, slot_of: &self.slots.of_node, inputs };
            let state = evaluate(node, &reads, &mut dest, (start, steps), chunk);
            let wrote_direct = dest.direct.is_some();
            file.slots[slot] = values;
            file.states[k] = state.ok_or_else(buffer_type_mismatch)?;
            if wrote_direct {
                if let State::Splat = file.states[k] {
                    // SAFETY: as in `Dest::slice`: `direct` is this item's run of the output.
                    let out = unsafe {
                        std::slice::from_raw_parts_mut(target.ptr.offset(out_offset), chunk.count())
                    };
                    let value = out[0];
                    out.fill(value);
                }
                return Ok(());
            }
        }
        let reads = Reads { nodes: &self.nodes, file, slot_of: &self.slots.of_node, inputs };
        let result = reads.operand::<T>(result, rows * len).ok_or_else(buffer_type_mismatch)?;
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

    /// How the walk is cut into work items, for a run on `threads` threads.
    fn geometry(&self, threads: usize) -> Geometry {
        let last = self.sizes.len() - 1;
        let row_len = self.sizes[last];
        // A loop with row reductions takes each row whole (the compiler bounds its length).
        let mut segment_len = if self.row_reductions { row_len.max(1) } else { row_len.clamp(1, CHUNK) };
        // A reduction that keeps the row (a column sum) is shared by column ranges: short rows
        // are cut so that every thread has some (in whole cache lines).
        let by_columns =
            matches!(self.sink, Sink::Accumulate { .. }) && !self.outer_kept() && self.row_kept();
        if by_columns && threads > 1 && row_len < CHUNK * threads {
            segment_len = row_len.div_ceil(threads).next_multiple_of(64).clamp(1, CHUNK);
        }
        let segments = row_len.div_ceil(segment_len).max(1);
        // Short rows are computed several at a time (a tile of consecutive rows along the
        // fastest outer dimension), so per-item work is amortized and a gathered input is
        // read along its contiguous dimension. Reductions keep one row per item.
        let tile_dim = (last >= 1 && self.sink == Sink::Store && !self.row_reductions).then(|| last - 1);
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

/// The error of a node whose buffers hold another element type than its own (a compiler bug:
/// the hot path tells it by `None`, cheaper than a `Result` per operand).
fn buffer_type_mismatch() -> Error {
    Error::invalid("a loop program read or wrote a buffer of another element type than its node's")
}

/// Evaluates one node over a chunk into `out` and says where its values are (`None`: a buffer
/// of another element type than the node's). For a `Load` or `Index` node, `place` is the
/// chunk's first offset and its steps from row to row and along a row.
fn evaluate(
    node: &Node,
    reads: &Reads<'_>,
    out: &mut Dest<'_>,
    (start, [tile_step, step]): (isize, [isize; 2]),
    chunk: Chunk,
) -> Option<State> {
    let len = chunk.count();
    if let NodeKind::Load { input, .. } = &node.kind {
        // A chunk that is one contiguous run of its input is read where it lies.
        if step == 1 && (chunk.rows == 1 || tile_step == chunk.len as isize) {
            return Some(State::Borrowed(*input, start as usize));
        }
    }
    // One value for the whole chunk: along the row and (if there are several) across rows.
    let uniform = step == 0 && (tile_step == 0 || chunk.rows == 1);
    let operand = |k: usize| node.operands[k];
    let splat = match &node.kind {
        NodeKind::Load { input, .. } => with_native_type!(node.element_type, T => {
            let source = reads.inputs[*input].slice::<T>()?;
            load::<T>(source, start, [tile_step, step], chunk, out.slice::<T>(len)?)
        }),
        NodeKind::Index { .. } => with_native_type!(node.element_type, T => {
            let out = out.slice::<T>(len)?;
            let value = |r: usize, i: usize| {
                T::narrow(Wide::Int((start + r as isize * tile_step + i as isize * step) as i128))
            };
            if uniform {
                out[0] = value(0, 0);
                true
            } else {
                for (r, row) in out.chunks_exact_mut(chunk.len).enumerate() {
                    row.iter_mut().enumerate().for_each(|(i, o)| *o = value(r, i));
                }
                false
            }
        }),
        // `run_item` skips constants; their one value is read from the node.
        NodeKind::Constant(_) => return Some(State::Constant),
        NodeKind::Unary(UnaryOp::IsFinite) => with_native_type!(reads.element_type(operand(0)), T => {
            chunk_ops::is_finite(reads.operand::<T>(operand(0), len)?, out.slice::<bool>(len)?)
        }),
        NodeKind::Unary(op) => with_native_type!(node.element_type, T => {
            chunk_ops::unary(*op, reads.operand::<T>(operand(0), len)?, out.slice::<T>(len)?)
        }),
        NodeKind::Binary(op) => with_native_type!(node.element_type, T => {
            let (a, b) = (reads.operand::<T>(operand(0), len)?, reads.operand::<T>(operand(1), len)?);
            chunk_ops::binary(*op, a, b, out.slice::<T>(len)?)
        }),
        NodeKind::Compare(direction) => with_native_type!(reads.element_type(operand(0)), T => {
            let (a, b) = (reads.operand::<T>(operand(0), len)?, reads.operand::<T>(operand(1), len)?);
            chunk_ops::compare(*direction, a, b, out.slice::<bool>(len)?)
        }),
        NodeKind::Select => with_native_type!(node.element_type, T => {
            let pred = reads.operand::<bool>(operand(0), len)?;
            let (t, f) = (reads.operand::<T>(operand(1), len)?, reads.operand::<T>(operand(2), len)?);
            chunk_ops::select(pred, t, f, out.slice::<T>(len)?)
        }),
        NodeKind::Clamp => with_native_type!(node.element_type, T => {
            let [lo, x, hi] = [0, 1, 2].map(|k| reads.operand::<T>(operand(k), len));
            chunk_ops::clamp(lo?, x?, hi?, out.slice::<T>(len)?)
        }),
        NodeKind::Reduce(op) => with_native_type!(node.element_type, T => {
            let mut acc = reads.operand::<T>(operand(1), len)?.get(0);
            fold_in_chunks(*op, &mut acc, reads.operand::<T>(operand(0), len)?, len);
            out.slice::<T>(len)?[0] = acc;
            true
        }),
        NodeKind::Convert => with_native_type!(reads.element_type(operand(0)), S => {
            let x = reads.operand::<S>(operand(0), len)?;
            with_native_type!(node.element_type, D => chunk_ops::convert::<S, D>(x, out.slice::<D>(len)?))
        }),
    };
    Some(if splat { State::Splat } else { State::Values })
}

/// `len` values folded into `acc` with `op` a CHUNK at a time, in order: as a reduce's own loop
/// folds a row, so a row reduction inside a wider loop rounds as that loop does. One value for
/// all is folded as a buffer of it would be (an unfused reduce reads a materialized broadcast).
fn fold_in_chunks<T: Element>(op: BinaryOp, acc: &mut T, values: Operand<'_, T>, len: usize) {
    let splat_buffer;
    let values = match values {
        Operand::Values(values) => &values[..len],
        Operand::Splat(value) => {
            splat_buffer = vec![value; len];
            &splat_buffer[..]
        }
    };
    for piece in values.chunks(CHUNK) {
        chunk_ops::fold(op, acc, piece);
    }
}

/// Reads a chunk of `source`: element (r, i) from `start + r·tile_step + i·step`. A splat
/// when it is one value (both steps 0, or one row with step 0); rows copied when contiguous;
/// otherwise gathered, column by column when the rows are the contiguous direction (a
/// transposed input). Returns whether it is a splat.
fn load<T: Element>(
    source: &[T],
    start: isize,
    [tile_step, step]: [isize; 2],
    chunk: Chunk,
    out: &mut [T],
) -> bool {
    let at = |r: usize, i: usize| (start + r as isize * tile_step + i as isize * step) as usize;
    if step == 0 && (tile_step == 0 || chunk.rows == 1) {
        out[0] = source[start as usize];
        return true;
    }
    match (tile_step, step) {
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
