//! Running a loop program: the walk is cut into work items (a segment of one row, or of a tile
//! of consecutive rows), split across rayon's threads when large; each item computes its start
//! offsets, evaluates the expression into cache-resident registers, and stores (or folds) the
//! result row by row; a tile whose rows lie apart in the output, with a binary result,
//! computes that result straight into the output's rows (`LoopProgram::result_by_rows`).

use rayon::prelude::*;

use super::chains::{self, Chain, Role};
use super::chunk_ops::{self, load, ChainOperand, ChainOperands, Chunk, Operand, RowFold, RowOperand, Rows};
use super::prefetch::{prefetch, Ahead, Lines, AHEAD_ITEMS};
use super::{LoopProgram, Node, NodeKind, Sink};
use crate::attributes::{BinaryOp, UnaryOp};
use crate::element_type::ElementType;
use crate::error::{invalid_argument, Error, Result};
use crate::exec::element::{with_binary_fn, Element, Wide};
use crate::literal::{for_each_element, Literal};
use crate::shape::Shape;
use crate::storage::{with_native_type, NativeType, Storage};

/// The longest row segment of a reduction, and the pieces every fold adds in (so a fused
/// reduce adds in the order of its own loop).
pub(super) const CHUNK: usize = 1024;

/// Elements per work item of a plain loop: its segment of a long row (or of a walk that
/// coalesced into one), and the most a tile of rows holds. A reduction's segments stay
/// `CHUNK` and its tiles `REDUCTION_TILE` (row reductions take `ROW_REDUCTION_TILE`), except
/// for a sum of fewer rows than `PARTIALS` (see `LoopProgram::geometry`).
///
/// Large items stream memory better, up to where a long chain's slots outgrow the cache
/// (GELU's fourteen take 56 bytes per element: 896 KiB a thread here). A tile of short rows is
/// tall enough to read a transposed input's columns 256 bytes of f32 at a time or more.
const PLAIN_CHUNK: usize = 16 * CHUNK;

/// The most elements a plain loop's tile holds when it reads a transposed input (its items
/// walk in blocks: see `reorder_for_gathers`; their output lines prefetched: `prefetch.rs`),
/// sized for transposed columns read through registers (`chunk_ops/transpose.rs`).
const BLOCKED_CHUNK: usize = 4 * CHUNK;

/// The longest segment of such a loop's rows, so that its tiles are tall enough for each line
/// of the transposed input to be read whole in one item, not fetched again by later items.
const BLOCKED_SEGMENT: usize = 64;

/// The most elements a tile of a reduction's rows holds (each row still folded on its own, in
/// order), unless it takes [`INPUT_REDUCTION_TILE`].
const REDUCTION_TILE: usize = 4 * CHUNK;

/// The most elements a tile holds of a reduction of an input itself along its rows (a program
/// of one node, one slot at most), whose per-item work is then paid once per 256 KiB of f32;
/// also of a large sum into few elements, whose partial sums' [`Bands`] no tile changes. Other
/// column reductions keep short tiles, whose outputs `accumulate` holds in registers.
const INPUT_REDUCTION_TILE: usize = 64 * CHUNK;

/// The most elements a tile of rows with row reductions holds: its per-node work is paid once
/// per tile, so tall tiles amortize it, though the tile's slots then outgrow L1 (16 rows of
/// 1024 `f32` are 64 KiB a slot).
const ROW_REDUCTION_TILE: usize = 16 * CHUNK;

/// Below this many output elements a program runs on the calling thread: a rayon call costs
/// more than such work.
const PARALLEL_THRESHOLD: usize = 1 << 17;

/// The ranges of items (or segments) a parallel run is cut into, per thread: the more there
/// are, the fewer a thread slowed by other work on the machine leaves for the others to take
/// over. Items stay the unit, so a small run is still cut into no more ranges than it has
/// items.
const BLOCKS_PER_THREAD: usize = 16;

/// The partial sums of a large sum into few elements (see [`Bands`]): enough bands for the
/// threads to share such a sum; more gain nothing.
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
    /// Bands of items, each summed into a partial output of its own, the partials then added
    /// in order: a sum into few elements (reassociated, as XLA does), its input read in order.
    Partials(Bands),
}

/// How a large sum into few elements is cut into its `PARTIALS` partial sums: by the walk's
/// sizes alone, whatever the program that computes the summed values, so that a fused sum
/// adds in the same order as the unfused one that reads them from memory (whose tiles
/// differ).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Bands {
    /// Partial `b` sums band `b` of the walk's rows (the outer and tile dimensions as one,
    /// cut into even bands), in tiles cut at the band's edges.
    Rows,
    /// Fewer rows than `PARTIALS` (a walk coalesced into one long row, say): tiles of one row
    /// (segments as long as a plain loop's), and partial `b` sums range `b` of the items.
    Items,
}

/// One work item: segment `segment` of rows `first_row..first_row + rows` of the tile
/// dimension (row 0 alone without one), at index `outer` of the outer dimensions (row-major).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Item {
    segment: usize,
    outer: usize,
    first_row: usize,
    rows: usize,
}

/// A thread's chunk buffers: the program's slots (see `slots.rs`), and the frame that points
/// into them during a run; both kept between runs, so a run allocates nothing.
#[derive(Debug)]
pub(super) struct RegisterFile {
    slots: Vec<Storage>,
    frame: Frame,
}

/// Where a node's values for the current chunk are: elements of the node's type from `ptr`
/// (in a slot, an input, a constant or the output), as many as their [`Form`] says.
#[derive(Clone, Copy, Debug)]
struct Values {
    ptr: *const u8,
    form: Form,
}

/// How a node's values for a chunk lie.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Form {
    /// The chunk's elements, row after row.
    Chunk,
    /// One element standing for all.
    Splat,
    /// One row's elements, the same in every row of the chunk: a row vector broadcast down a
    /// tile, read in place (only chains read it; see [`broadcast_rows`]).
    Row,
    /// One element per row, row after row: a column broadcast along the rows, read in place
    /// (only chains read it), or a tile's row reductions and what is computed from them
    /// alone (read by any node: see [`View`]).
    PerRow,
}

/// The part of a chunk a node is evaluated over, and how its operands are read there.
#[derive(Clone, Copy, Debug, PartialEq)]
enum View {
    /// The whole chunk: every operand the chunk's values or a splat.
    Chunk,
    /// One value per row: every operand one per row ([`Form::PerRow`], a row reduction's
    /// results in a tile and what is computed from them alone) or a splat.
    PerRow,
    /// Row `r` alone: an operand's values there (a per-row operand is a splat of its value
    /// at `r`, a row operand its row).
    Row(usize),
}

impl View {
    /// The elements of `chunk` this view covers, and the first one's index.
    fn span(self, chunk: Chunk) -> (usize, usize) {
        match self {
            View::Chunk => (0, chunk.count()),
            View::PerRow => (0, chunk.rows),
            View::Row(r) => (r * chunk.len, chunk.len),
        }
    }

    /// How a node with operands of these `forms` is evaluated: over one view (`Some`), or row
    /// by row (`None`: one operand varies along the rows, another has one value per row or
    /// one row for all).
    fn of(forms: impl Iterator<Item = Form>) -> Option<View> {
        let (mut per_row, mut chunk, mut row) = (false, false, false);
        for form in forms {
            match form {
                Form::Splat => {}
                Form::PerRow => per_row = true,
                Form::Chunk => chunk = true,
                Form::Row => row = true,
            }
        }
        match (per_row, chunk, row) {
            (_, _, true) | (true, true, _) => None,
            (true, false, false) => Some(View::PerRow),
            (false, _, false) => Some(View::Chunk),
        }
    }
}

impl Values {
    /// The values of `view` of `chunk`, as `T`s; `None` for a form the view does not read
    /// (only chains read a row form over the whole chunk).
    ///
    /// # Safety
    /// `ptr` points to initialized `T`s that nothing writes while the result lives: the
    /// chunk's count of them ([`Form::Chunk`]), one (a splat), a row's ([`Form::Row`]), or
    /// one per row ([`Form::PerRow`]).
    #[inline(always)]
    unsafe fn operand<'a, T: Copy>(self, chunk: Chunk, view: View) -> Option<Operand<'a, T>> {
        let ptr = self.ptr.cast::<T>();
        let (first, len) = view.span(chunk);
        // SAFETY (of each read): the caller's guarantee, with the view's span inside the form's
        // elements: a row's span of a chunk's, one per row's first `rows`, row `r` of one per
        // row its element `r`.
        match (self.form, view) {
            (Form::Splat, _) => Some(Operand::Splat(unsafe { ptr.read() })),
            (Form::Chunk, View::Chunk | View::Row(_)) | (Form::PerRow, View::PerRow) => {
                Some(Operand::Values(unsafe { std::slice::from_raw_parts(ptr.add(first), len) }))
            }
            (Form::PerRow, View::Row(r)) => Some(Operand::Splat(unsafe { ptr.add(r).read() })),
            (Form::Row, View::Row(_)) => {
                Some(Operand::Values(unsafe { std::slice::from_raw_parts(ptr, len) }))
            }
            _ => None,
        }
    }

    /// The values of `chunk`, as `T`s read row by row ([`RowOperand`]).
    ///
    /// # Safety
    /// As [`Values::operand`]'s.
    unsafe fn row_operand<'a, T: Copy>(self, chunk: Chunk) -> RowOperand<'a, T> {
        let ptr = self.ptr.cast::<T>();
        // SAFETY (of each): the caller's guarantee: `ptr` points to that many `T`s.
        match self.form {
            Form::Splat => RowOperand::Splat(unsafe { ptr.read() }),
            Form::Chunk => RowOperand::Rows {
                values: unsafe { std::slice::from_raw_parts(ptr, chunk.count()) },
                pitch: chunk.len,
            },
            Form::Row => {
                RowOperand::Rows { values: unsafe { std::slice::from_raw_parts(ptr, chunk.len) }, pitch: 0 }
            }
            Form::PerRow => RowOperand::PerRow(unsafe { std::slice::from_raw_parts(ptr, chunk.rows) }),
        }
    }

    /// The values of `chunk`, as `T`s read by a chain link.
    ///
    /// # Safety
    /// `ptr` points to initialized `T`s that nothing writes while the result lives: the
    /// chunk's count of them ([`Form::Chunk`]), one (a splat), a row's ([`Form::Row`]), or
    /// one per row ([`Form::PerRow`]).
    #[inline(always)]
    unsafe fn chain_operand<'a, T: Copy>(self, chunk: Chunk) -> ChainOperand<'a, T> {
        let ptr = self.ptr.cast::<T>();
        let len = match self.form {
            Form::Splat => 1,
            Form::Chunk => chunk.count(),
            Form::Row => chunk.len,
            Form::PerRow => chunk.rows,
        };
        // SAFETY: the caller's guarantee: `ptr` points to `len` such `T`s.
        let values = unsafe { std::slice::from_raw_parts(ptr, len) };
        match self.form {
            Form::Splat => ChainOperand::Chunk(Operand::Splat(values[0])),
            Form::Chunk => ChainOperand::Chunk(Operand::Values(values)),
            Form::Row => ChainOperand::Row(values),
            Form::PerRow => ChainOperand::PerRow(values),
        }
    }
}

/// One thread's working state in a run: where its register file's slots begin (each holds
/// `capacity` elements of its type), where each node's values for the current chunk are, and
/// the offset of each load's and index's first element. Evaluating a node then costs a few
/// pointer reads rather than a lookup per operand. Its pointers are set at the start of each
/// run ([`RegisterFile::frame`]) and by the run's items, and read only within that run.
#[derive(Debug, Default)]
struct Frame {
    slots: Vec<*mut u8>,
    capacity: usize,
    values: Vec<Values>,
    starts: Vec<isize>,
    /// The sums of the pieces of rows that chains fold (`chunk_ops::RowFold`), fold after
    /// fold.
    folds: Vec<f32>,
}

// SAFETY: a frame's pointers are dereferenced only during the run that set them, on the
// thread that runs it (`RegisterFile::frame` sets the slots' and constants' at its start,
// `run_item` every other node's before its readers); kept between runs, they are never read.
unsafe impl Send for Frame {}

impl RegisterFile {
    /// The frame for a run of `nodes`: the slots' and constants' pointers set (`None`: a slot
    /// or constant of another element type than its node's).
    fn frame(&mut self, nodes: &[Node]) -> Option<&mut Frame> {
        let frame = &mut self.frame;
        frame.capacity = self.slots.iter().map(Storage::len).min().unwrap_or(0);
        frame.slots.clear();
        for slot in &mut self.slots {
            let start =
                with_native_type!(slot.element_type(), T => T::slice_of_mut(slot)?.as_mut_ptr().cast::<u8>());
            frame.slots.push(start);
        }
        frame.values.clear();
        for node in nodes {
            frame.values.push(match &node.kind {
                NodeKind::Constant(literal) => constant_values(literal, node.element_type)?,
                _ => Values { ptr: std::ptr::null(), form: Form::Splat },
            });
        }
        frame.starts.resize(nodes.len(), 0);
        Some(frame)
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

/// A loop's output that threads computing disjoint rows of it share
/// ([`LoopProgram::run_rows`]): its shape and its memory, borrowed for `'a`.
pub(crate) struct SharedOutput<'a> {
    shape: Shape,
    ptr: *mut u8,
    /// Its length in elements.
    len: usize,
    output: std::marker::PhantomData<&'a mut Literal>,
}

// SAFETY: only a pointer to an output borrowed mutably for `'a`; `run_rows`'s callers promise
// that concurrent calls write disjoint elements, and nothing reads through it.
unsafe impl Send for SharedOutput<'_> {}
// SAFETY: as above.
unsafe impl Sync for SharedOutput<'_> {}

impl<'a> SharedOutput<'a> {
    /// `out`, to be written by rows from several threads.
    pub(crate) fn new(out: &'a mut Literal) -> Result<SharedOutput<'a>> {
        let element_type = out.element_type();
        let storage = out.storage_mut()?;
        let (ptr, len) = with_native_type!(element_type, T => {
            let memory = storage.as_mut_slice::<T>()?;
            (memory.as_mut_ptr().cast::<u8>(), memory.len())
        });
        Ok(SharedOutput { shape: out.shape().clone(), ptr, len, output: std::marker::PhantomData })
    }
}

impl<T: Element> OutTarget<T> {
    /// Checks that `offset + i·stride` lies in the buffer for every `i < len`.
    fn check(&self, offset: isize, stride: isize, len: usize) {
        let last = offset + (len as isize - 1) * stride;
        assert!(
            offset >= 0 && last >= 0 && (offset.max(last) as usize) < self.len,
            "a loop program writes inside its output"
        );
    }

    /// Combines `rows` rows of `len` values, one after another, into the `len` elements from
    /// `offset` on with `op` (a reduction that keeps the row: a column sum's tile).
    fn accumulate_rows(&self, op: BinaryOp, offset: isize, values: Operand<'_, T>, rows: usize, len: usize) {
        self.check(offset, 1, len);
        // SAFETY: `offset..offset + len` lies in the buffer (checked above), live for the run,
        // and given to this thread alone by the run's partition.
        let acc = unsafe { std::slice::from_raw_parts_mut(self.ptr.add(offset as usize), len) };
        chunk_ops::accumulate(op, acc, values, rows);
    }

    /// Combines `len` values into the elements at `offset + i·stride` with `op` (a reduction;
    /// stride 0 folds the whole chunk into one element).
    fn accumulate(&self, op: BinaryOp, offset: isize, stride: isize, values: Operand<'_, T>, len: usize) {
        if stride == 1 {
            return self.accumulate_rows(op, offset, values, 1, len);
        }
        self.check(offset, stride, len);
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
        if !self.nodes_agree {
            return Err(buffer_type_mismatch());
        }
        let total: usize = self.sizes.iter().product();
        let parallel = parallel && total >= PARALLEL_THRESHOLD && rayon::current_num_threads() > 1;
        let partials = self.sums_in_partials();
        let geometry =
            self.geometry(if parallel && !partials { rayon::current_num_threads() } else { 1 }, partials);
        with_native_type!(self.out_shape.element_type(), T => {
            let memory = out.storage_mut()?.as_mut_slice::<T>()?;
            if let Sink::Accumulate { init, .. } = self.sink {
                let init = inputs[init].memory::<T>()?[0];
                for_each_element(&self.out_shape, memory, |_, element| *element = init);
            }
            if total == 0 {
                return Ok(());
            }
            let target = OutTarget { ptr: memory.as_mut_ptr(), len: memory.len() };
            let run_into = |items: &mut dyn Iterator<Item = Item>, target: &OutTarget<T>| -> Result<()> {
                let mut file = self.take_registers(geometry.tile * geometry.segment_len)?;
                let frame = file.frame(&self.nodes).ok_or_else(buffer_type_mismatch)?;
                let mut items = items.peekable();
                while let Some(item) = items.next() {
                    if let Some(&next) = items.peek().filter(|_| self.blocked_items) {
                        self.prefetch_item(next, &geometry, target);
                    }
                    self.run_item::<T>(item, &geometry, inputs, frame, target, &[])?;
                }
                self.return_registers(file);
                Ok(())
            };
            // Items given by their numbers (`Geometry::item`), into `target`.
            let run_numbered = |numbers: &mut dyn Iterator<Item = usize>, target: &OutTarget<T>| {
                run_into(&mut numbers.map(|n| geometry.item(n)), target)
            };
            let run_items = |numbers: &mut dyn Iterator<Item = usize>| run_numbered(numbers, &target);
            let (items, segments) = (geometry.items, geometry.segments);
            let blocks = rayon::current_num_threads() * BLOCKS_PER_THREAD;
            match self.partition(parallel, &geometry) {
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
                Partition::Partials(bands) => {
                    let len = memory.len();
                    let partial = |b: usize| {
                        // -0 is the identity of a float sum (and 0 of an integer one).
                        let mut partial = vec![T::ZERO.neg(); len];
                        let target = OutTarget { ptr: partial.as_mut_ptr(), len };
                        match bands {
                            Bands::Rows => run_into(&mut geometry.band_items(b, PARTIALS), &target)?,
                            Bands::Items => run_numbered(&mut geometry.band_numbers(b), &target)?,
                        }
                        Ok(partial)
                    };
                    let partials: Vec<Vec<T>> = match parallel {
                        true => (0..PARTIALS).into_par_iter().map(partial).collect::<Result<_>>()?,
                        false => (0..PARTIALS).map(partial).collect::<Result<_>>()?,
                    };
                    for partial in partials {
                        for_each_element(&self.out_shape, memory, |offset, m| *m = m.add(partial[offset]));
                    }
                }
            }
        });
        Ok(())
    }

    /// Computes rows `rows` of the walk (of a program from [`LoopProgram::compile_by_rows`]:
    /// rows of the row-major output) into `out` on the calling thread, input `i` read
    /// `shifts[i]` elements before where the program's shapes place it (an input that holds
    /// only these rows of its array: a product's block). Reads outside an input are an `Err`.
    ///
    /// # Safety
    /// No other thread may access the elements of these rows of `out` during the call.
    pub(crate) unsafe fn run_rows(
        &self,
        inputs: &[&Literal],
        out: &SharedOutput<'_>,
        rows: std::ops::Range<usize>,
        shifts: &[isize],
    ) -> Result<()> {
        if out.shape != self.out_shape || self.sink != Sink::Store || self.blocked_items {
            invalid_argument!("loop program for {} cannot compute rows of {}", self.out_shape, out.shape);
        }
        if !self.nodes_agree {
            return Err(buffer_type_mismatch());
        }
        let geometry = self.geometry(1, false);
        if rows.end > geometry.outer * geometry.tile_len {
            invalid_argument!("rows {rows:?} of a loop over {}", self.out_shape);
        }
        with_native_type!(self.out_shape.element_type(), T => {
            let target = OutTarget { ptr: out.ptr.cast::<T>(), len: out.len };
            let mut file = self.take_registers(geometry.tile * geometry.segment_len)?;
            let frame = file.frame(&self.nodes).ok_or_else(buffer_type_mismatch)?;
            for item in geometry.row_items(rows) {
                self.run_item::<T>(item, &geometry, inputs, frame, &target, shifts)?;
            }
            self.return_registers(file);
        });
        Ok(())
    }

    /// How the work items may be split across threads so that no two threads write one output
    /// element: any items for a plain loop; for a reduction, whole slices of the outermost
    /// walk dimension if it is kept, or column ranges (segments of every row) if the row is;
    /// a large sum into few elements (a full sum, column sums) is cut into the geometry's
    /// bands, summed apart on any number of threads, so its value does not depend on how many
    /// there are.
    fn partition(&self, parallel: bool, geometry: &Geometry) -> Partition {
        let (items, segments) = (geometry.items, geometry.segments);
        if let Some(bands) = geometry.bands {
            return Partition::Partials(bands);
        }
        if !parallel || items < 2 {
            return Partition::Sequential;
        }
        match self.sink {
            Sink::Store => Partition::ItemRanges(1),
            Sink::Accumulate { .. } if self.outer_kept() => {
                // The items of one index of the outermost dimension (of one tile of it, when
                // it is the tile dimension) write the same outputs.
                let groups = if geometry.tile_dim == Some(0) { geometry.tile_blocks } else { self.sizes[0] };
                Partition::ItemRanges(items / groups)
            }
            Sink::Accumulate { .. } if self.row_kept() && segments > 1 => Partition::Segments,
            Sink::Accumulate { .. } => Partition::Sequential,
        }
    }

    /// Whether a run adds in `PARTIALS` partial sums: a large sum into few elements (on any
    /// number of threads, so that its value does not depend on how many there are).
    fn sums_in_partials(&self) -> bool {
        self.sizes.iter().product::<usize>() >= PARALLEL_THRESHOLD && self.sums_into_few()
    }

    /// Whether this reduction folds each output's values in the same pieces and partial sums
    /// as `other`, a reduction over the same domain walked in the same order (the reduce of
    /// this one's operand materialized), so the two give the same bits. Walks of the same
    /// sizes do. Where this one's walk keeps more dimensions apart, a row it reduces to one
    /// value must be whole pieces of `CHUNK` (the other's longer rows fold in pieces of
    /// `CHUNK` from their start, so its row boundaries are then theirs too), and both must
    /// add in partial sums that start at the same elements, or neither in partial sums. A
    /// reduction that keeps the row folds each output's values one by one, in order, however
    /// the rows are cut.
    pub(super) fn folds_like(&self, other: &LoopProgram) -> bool {
        if self.sizes == other.sizes {
            return true;
        }
        let whole_pieces = self.row_kept() || self.sizes[self.sizes.len() - 1].is_multiple_of(CHUNK);
        whole_pieces && self.band_starts() == other.band_starts()
    }

    /// Where each partial sum's elements start in the walk's order (`None` for a run without
    /// partial sums).
    fn band_starts(&self) -> Option<Vec<usize>> {
        if !self.sums_in_partials() {
            return None;
        }
        let geometry = self.geometry(1, true);
        let row_len = self.sizes[self.sizes.len() - 1];
        let start = |band: usize| match geometry.bands {
            Some(Bands::Rows) => geometry.band_rows(band, PARTIALS).start * row_len,
            _ => {
                let item = geometry.item(geometry.band_numbers(band).start);
                (item.outer * geometry.tile_len + item.first_row) * row_len
                    + item.segment * geometry.segment_len
            }
        };
        Some((0..PARTIALS).map(start).collect())
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
        Ok(RegisterFile { slots, frame: Frame::default() })
    }

    /// Keeps a register file for later runs (one per thread that may run at once).
    fn return_registers(&self, file: RegisterFile) {
        if let Ok(mut kept) = self.registers.lock() {
            if kept.len() < rayon::current_num_threads() * 4 {
                kept.push(file);
            }
        }
    }

    /// The chunk `item` computes: its rows, and its segment's length.
    fn chunk_of(&self, item: Item, geometry: &Geometry) -> Chunk {
        let first = item.segment * geometry.segment_len;
        Chunk { rows: item.rows, len: geometry.segment_len.min(self.sizes[self.sizes.len() - 1] - first) }
    }

    /// The offset of `item`'s first element in a buffer walked with `strides` from `base`:
    /// its segment, its tile's first row, then the outer dimensions decoded from its outer
    /// index.
    fn offset_of(&self, item: Item, geometry: &Geometry, strides: &[isize], base: isize) -> isize {
        let last = self.sizes.len() - 1;
        let mut offset = base + (item.segment * geometry.segment_len) as isize * strides[last];
        if let Some(tile_dim) = geometry.tile_dim {
            offset += item.first_row as isize * strides[tile_dim];
        }
        let mut rest = item.outer;
        for d in (0..geometry.outer_dims).rev() {
            offset += (rest % self.sizes[d]) as isize * strides[d];
            rest /= self.sizes[d];
        }
        offset
    }

    /// The steps, in a buffer walked with `strides`, between a chunk's rows (0 without a tile)
    /// and between the elements of a row.
    fn chunk_steps(&self, geometry: &Geometry, strides: &[isize]) -> [isize; 2] {
        [geometry.tile_dim.map_or(0, |d| strides[d]), strides[self.sizes.len() - 1]]
    }

    /// How far ahead of its start's values `chain` asks for lines as it computes (see
    /// `prefetch.rs`): in a walk with row reductions, [`AHEAD_ITEMS`] items' worth of its
    /// start when that is an input read where it lies (its later items' values follow it),
    /// unless the chain writes `into_output`: those stores go to memory too, and compete with
    /// the requests.
    fn chain_ahead(
        &self,
        chain: &Chain,
        geometry: &Geometry,
        chunk: Chunk,
        into_output: bool,
    ) -> Option<Ahead> {
        let NodeKind::Load { strides, .. } = &self.nodes[chain.start].kind else { return None };
        let ahead = self.row_reductions && !into_output;
        // Chains compute `f32` (`chains::CHAINED_TYPE`).
        (ahead && read_in_place(self.chunk_steps(geometry, strides), chunk))
            .then(|| Ahead { distance: AHEAD_ITEMS * chunk.count() * size_of::<f32>() })
    }

    /// Asks the cache for the lines `item` will write in the output (see `prefetch.rs`), while
    /// an earlier item computes.
    fn prefetch_item<T: Element>(&self, item: Item, geometry: &Geometry, target: &OutTarget<T>) {
        if self.sink == Sink::Store {
            // Only its address is read: the slice is never made.
            let lines = Lines {
                base: target.ptr.cast_const().cast(),
                len: target.len,
                element_bytes: size_of::<T>(),
            };
            prefetch(
                lines,
                self.offset_of(item, geometry, &self.out_strides, 0),
                self.chunk_steps(geometry, &self.out_strides),
                self.chunk_of(item, geometry),
            );
        }
    }

    /// Evaluates one work item and stores (or folds) it.
    fn run_item<T: Element>(
        &self,
        item: Item,
        geometry: &Geometry,
        inputs: &[&Literal],
        frame: &mut Frame,
        target: &OutTarget<T>,
        shifts: &[isize],
    ) -> Result<()> {
        let last = self.sizes.len() - 1;
        let chunk = self.chunk_of(item, geometry);
        if chunk.count() > frame.capacity {
            return Err(buffer_type_mismatch());
        }
        let out_offset = self.offset_of(item, geometry, &self.out_strides, 0);
        for (start, node) in frame.starts.iter_mut().zip(&self.nodes) {
            if let NodeKind::Load { offset, strides, .. } | NodeKind::Index { offset, strides } = &node.kind {
                *start = self.offset_of(item, geometry, strides, *offset);
            }
            if let NodeKind::Load { input, .. } = node.kind {
                *start -= shifts.get(input).copied().unwrap_or(0);
            }
        }
        let Chunk { rows, len } = chunk;
        let [out_tile_step, _] = self.chunk_steps(geometry, &self.out_strides);
        // The result of a plain loop whose chunk is one run of the output is computed in place.
        let direct = self.sink == Sink::Store
            && self.out_strides[last] == 1
            && (rows == 1 || out_tile_step == len as isize);
        if direct {
            target.check(out_offset, 1, chunk.count());
        }
        let result = self.nodes.len() - 1;
        // Chains are computed in registers when the chunk holds a block of their lanes (every
        // chain is of `chains::CHAINED_TYPE`, so this is asked once per item).
        let lanes = chains::lanes(chains::CHAINED_TYPE);
        let chained = lanes.is_some_and(|lanes| chunk.count() >= lanes);
        // Chains fold row sums of their values when each row is whole blocks, and broadcasts
        // along a tile's rows that only chains read are then read in place (see
        // `broadcast_rows`).
        let whole_blocks = chained && lanes.is_some_and(|lanes| len.is_multiple_of(lanes));
        let rows_in_place = whole_blocks && rows > 1;
        // A tile whose rows lie apart in the output computes its result row by row into them.
        let by_rows = !direct && self.computes_by_rows(chunk, out_tile_step, chained);
        // Of the chains that may ask for a later item's lines (see `chain_ahead`), the first
        // does.
        let mut asked_ahead = false;
        for (k, node) in self.nodes.iter().enumerate() {
            if k == result && by_rows {
                return self.result_by_rows(item, geometry, inputs, frame, target);
            }
            match self.chains[k] {
                // Computed by its chain's last node, never materialized.
                Role::Inside(_) if chained => continue,
                Role::Folded(end) if whole_blocks && frame.values[end].form == Form::Chunk => {
                    // Its chain computed values (not a splat), and summed each piece of each row.
                    let Role::End(Chain { fold: Some(fold), .. }) = &self.chains[end] else {
                        return Err(buffer_type_mismatch());
                    };
                    let pieces =
                        frame.folds.get(fold_pieces(fold.index, chunk)).ok_or_else(buffer_type_mismatch)?;
                    let out = frame.slots[self.slots.of_node[k]];
                    // SAFETY: as for any node below: its initial value is an operand set by this
                    // item, and `out` its slot, of at least `chunk.count()` ≥ `rows` elements of
                    // its type (`f32`, a fold's).
                    let sums = unsafe { sum_pieces(&frame.values[node.operands[1]], pieces, out, chunk) };
                    frame.values[k] = sums.ok_or_else(buffer_type_mismatch)?;
                    continue;
                }
                _ => {}
            }
            let (place, into_output) = match &node.kind {
                // Read from the node itself (`RegisterFile::frame`).
                NodeKind::Constant(_) => continue,
                NodeKind::Load { strides, .. } | NodeKind::Index { strides, .. } => {
                    let steps = self.chunk_steps(geometry, strides);
                    if rows_in_place && self.read_by_links_only[k] {
                        if let Some(values) = broadcast_rows(node, inputs, frame.starts[k], steps, chunk) {
                            frame.values[k] = values;
                            continue;
                        }
                    }
                    if by_rows && self.rows_in_input(k, geometry).is_some() {
                        // The result reads its rows where they lie.
                        continue;
                    }
                    ((frame.starts[k], steps), false)
                }
                _ => ((0, [0, 0]), direct && k == result),
            };
            let out = match into_output {
                true => target.ptr.wrapping_offset(out_offset).cast::<u8>(),
                false => frame.slots[self.slots.of_node[k]],
            };
            // SAFETY: the program's nodes passed `nodes_agree` when it was compiled: each
            // node's operands come before it (so this item has already set their `values`:
            // `chunk.count()` elements of their own type, or one for a splat, in a slot, an
            // input or a constant, none of which this node writes), and have the types the
            // node reads. `out` is the node's slot (`capacity` ≥ `chunk.count()` elements of
            // the node's type, never an operand's slot: `slots::assign`), or for the result
            // of a direct store this item's own run of `chunk.count()` output elements (of
            // type `T`, the result's), checked to lie in the output above. A chain's start
            // and other operands, and its side runs', are nodes outside it (set by this item,
            // of the chain's type: every link keeps its type); the nodes inside it are read by
            // nothing else.
            // Only chains read a value of a row form (`read_by_links_only`), and only
            // when chained with rows of whole blocks (`rows_in_place`).
            let values = match &self.chains[k] {
                Role::End(chain) if chained => {
                    let fold = match chain.fold {
                        Some(fold) if whole_blocks => {
                            let pieces = fold_pieces(fold.index, chunk);
                            if frame.folds.len() < pieces.end {
                                frame.folds.resize(pieces.end, 0.0);
                            }
                            Some(RowFold { pieces: &mut frame.folds[pieces] })
                        }
                        _ => None,
                    };
                    let ahead = match asked_ahead {
                        true => None,
                        false => self.chain_ahead(chain, geometry, chunk, into_output),
                    };
                    asked_ahead |= ahead.is_some();
                    // SAFETY: as above; `fold` only with rows of whole blocks.
                    unsafe {
                        evaluate_chain(chain, node.element_type, &frame.values, out, chunk, (fold, ahead))
                    }
                }
                _ => unsafe { evaluate_node(node, &self.nodes, &frame.values, inputs, out, place, chunk) },
            };
            let values = values.ok_or_else(buffer_type_mismatch)?;
            frame.values[k] = values;
            if into_output {
                // SAFETY: `out` is this item's own run of the output, as said above.
                let out = unsafe { std::slice::from_raw_parts_mut(out.cast::<T>(), chunk.count()) };
                match values.form {
                    Form::Splat => {
                        let value = out[0];
                        out.fill(value);
                    }
                    // Last row first: row `r`'s value (at `r`) lies before every later row.
                    Form::PerRow => (0..rows).rev().for_each(|r| {
                        let value = out[r];
                        out[r * len..(r + 1) * len].fill(value);
                    }),
                    Form::Chunk | Form::Row => {}
                }
                return Ok(());
            }
        }
        let result = frame.values[result];
        if let Sink::Accumulate { op, .. } = self.sink {
            if out_tile_step == 0 && self.out_strides[last] == 1 && len > 0 {
                // Every row of the tile folds into the same outputs.
                // SAFETY: as below, over the whole chunk.
                if let Some(whole) = unsafe { result.operand::<T>(chunk, View::Chunk) } {
                    target.accumulate_rows(op, out_offset, whole, rows, len);
                    return Ok(());
                }
            }
        }
        for r in 0..rows {
            // SAFETY: the result's values were set by this item (as above), of type `T`.
            let row = unsafe { result.operand::<T>(chunk, View::Row(r)) }.ok_or_else(buffer_type_mismatch)?;
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

    /// Whether `chunk`'s result is computed row by row straight into the output
    /// ([`Self::result_by_rows`]): a plain loop whose chunk's rows are runs of the output
    /// `out_tile_step` apart rather than one run (a blocked walk's tile), whose result is a
    /// binary node that no chain computes (a `chained` chain computes the whole chunk at
    /// once).
    fn computes_by_rows(&self, chunk: Chunk, out_tile_step: isize, chained: bool) -> bool {
        let last = self.sizes.len() - 1;
        let result = self.nodes.len() - 1;
        let binary = matches!(self.nodes[result].kind, NodeKind::Binary(_));
        let in_chain = chained && matches!(self.chains[result], Role::End(_));
        self.sink == Sink::Store
            && self.out_strides[last] == 1
            && chunk.rows > 1
            && out_tile_step != chunk.len as isize
            && binary
            && !in_chain
    }

    /// For a result computed row by row: whether node `k` is a load that only the result
    /// reads whose chunk's rows are each one run of its input, in order (a row vector
    /// broadcast down the tile among them); if so, the elements from one row to the next. The
    /// result then reads them where they lie, rather than from a slot they were copied into.
    fn rows_in_input(&self, k: usize, geometry: &Geometry) -> Option<usize> {
        let NodeKind::Load { strides, .. } = &self.nodes[k].kind else { return None };
        if !self.read_by_result_only[k] {
            return None;
        }
        let [tile_step, step] = self.chunk_steps(geometry, strides);
        (step == 1 && tile_step >= 0).then(|| tile_step.unsigned_abs())
    }

    /// Computes `item`'s result, a binary node (see [`Self::computes_by_rows`]), row by row
    /// straight into its rows of the output, from its operands' rows: in their slots, or for
    /// a load only it reads whose rows are runs of its input ([`Self::rows_in_input`]),
    /// there. The tile's result is then not copied into the output row by row, nor such a
    /// load's rows into a slot; the loop over the rows is one call of the op, not a call of the
    /// node's evaluation per row.
    fn result_by_rows<T: Element>(
        &self,
        item: Item,
        geometry: &Geometry,
        inputs: &[&Literal],
        frame: &Frame,
        target: &OutTarget<T>,
    ) -> Result<()> {
        let node = &self.nodes[self.nodes.len() - 1];
        let NodeKind::Binary(op) = node.kind else { return Err(buffer_type_mismatch()) };
        let chunk = self.chunk_of(item, geometry);
        let out_offset = self.offset_of(item, geometry, &self.out_strides, 0);
        let [out_tile_step, _] = self.chunk_steps(geometry, &self.out_strides);
        // Operands are of the result's type (`nodes_agree`), `T`.
        let operand = |k: usize| -> Option<RowOperand<'_, T>> {
            match (&self.nodes[k].kind, self.rows_in_input(k, geometry)) {
                (NodeKind::Load { input, .. }, Some(pitch)) => {
                    let start = usize::try_from(frame.starts[k]).ok()?;
                    Some(RowOperand::Rows { values: inputs.get(*input)?.slice::<T>()?.get(start..)?, pitch })
                }
                // SAFETY: the node's values for this chunk, set by this item before the result
                // (its operand): `T`s in their form, which nothing writes while they are read.
                _ => Some(unsafe { frame.values[k].row_operand::<T>(chunk) }),
            }
        };
        let operands = [0, 1].map(|o| node.operands.get(o).and_then(|&k| operand(k)));
        target.check(out_offset, out_tile_step, chunk.rows);
        target.check(out_offset + chunk.len as isize - 1, out_tile_step, chunk.rows);
        let out = |r: usize| {
            let offset = out_offset + r as isize * out_tile_step;
            // SAFETY: `offset..offset + len` lies in the output (the first and last elements of
            // every row checked above), which is live for the run, and no other thread
            // touches it: this item's row `r`, which no other row of it overlaps (`rows` > 1
            // runs of `len`, `out_tile_step` apart and not one run, are a layout's distinct
            // positions).
            unsafe { std::slice::from_raw_parts_mut(target.ptr.add(offset as usize), chunk.len) }
        };
        binary_over_rows(op, operands, chunk, out).ok_or_else(buffer_type_mismatch)
    }

    /// Whether chains compute runs of this program and read a tile's broadcast rows in place:
    /// rows of `row_len` are whole blocks of their lanes (see [`broadcast_rows`]).
    fn chains_read_rows(&self, row_len: usize) -> bool {
        chains::lanes(chains::CHAINED_TYPE).is_some_and(|lanes| row_len.is_multiple_of(lanes))
            && self.chains.iter().any(|role| matches!(role, Role::End(_)))
    }

    /// How the walk is cut into work items, for a run on `threads` threads (of a large sum into
    /// few elements in partial sums when `partials`).
    fn geometry(&self, threads: usize, partials: bool) -> Geometry {
        let last = self.sizes.len() - 1;
        let row_len = self.sizes[last];
        let tile_dim = (last >= 1).then(|| last - 1);
        let tile_len = tile_dim.map_or(1, |d| self.sizes[d]);
        let outer_dims = tile_dim.unwrap_or(last);
        let outer: usize = self.sizes[..outer_dims].iter().product();
        let bands = partials.then(|| match outer * tile_len {
            rows if rows >= PARTIALS => Bands::Rows,
            _ => Bands::Items,
        });
        // A loop with row reductions takes each row whole (the compiler bounds its length). A
        // sum into few elements of fewer rows than `PARTIALS` (a walk coalesced into one long
        // row, say) takes items of one segment each, as long as a plain loop's, so that its
        // per-item work is paid less often than in segments of `CHUNK`.
        let items_banded = bands == Some(Bands::Items);
        let chunk = if self.sink == Sink::Store || items_banded { PLAIN_CHUNK } else { CHUNK };
        let mut segment_len = if self.row_reductions { row_len.max(1) } else { row_len.clamp(1, chunk) };
        if self.blocked_items && !self.row_reductions {
            segment_len = row_len.clamp(1, BLOCKED_SEGMENT);
        }
        // A reduction that keeps the row (a column sum) is shared by column ranges: short rows
        // are cut so that every thread has some (in whole cache lines).
        let by_columns =
            matches!(self.sink, Sink::Accumulate { .. }) && !self.outer_kept() && self.row_kept();
        if by_columns && threads > 1 && row_len < CHUNK * threads {
            segment_len = row_len.div_ceil(threads).next_multiple_of(64).clamp(1, CHUNK);
        }
        let segments = row_len.div_ceil(segment_len).max(1);
        // Rows are computed several at a time (a tile of consecutive rows along the fastest outer
        // dimension), so per-item work is amortized and a gathered input is read along its
        // contiguous dimension. A plain loop's rows of `CHUNK` or more stay one per item (a tile of
        // them would copy every vector broadcast along the row, where one row reads it in place)
        // unless chains read such vectors in place ([`Self::chains_read_rows`]), as W1's chain
        // does. A reduction's rows (a segment each, at most `CHUNK`) are tiled up to
        // `REDUCTION_TILE` elements (`INPUT_REDUCTION_TILE` for a reduction of an input itself
        // along its rows, or a large sum of it into few elements): each row is still folded on its
        // own, in order (a sum's partial sums take bands of rows that no tile changes), so tiling
        // changes no sum, and a row sum's per-item work, more than its adds, is paid per tile. Row
        // reductions take each row whole, in tiles of up to `ROW_REDUCTION_TILE` elements when rows
        // are whole blocks of a chain's lanes, so that chains read the rows' reduced values in
        // place (one per row: `Form::PerRow`).
        let rows_per_tile = match self.sink {
            _ if self.row_reductions => {
                let whole_blocks =
                    chains::lanes(chains::CHAINED_TYPE).is_none_or(|lanes| row_len.is_multiple_of(lanes));
                if whole_blocks {
                    (ROW_REDUCTION_TILE / segment_len).max(1)
                } else {
                    1
                }
            }
            Sink::Store if segment_len >= CHUNK && !self.chains_read_rows(row_len) => 1,
            Sink::Store if self.blocked_items => BLOCKED_CHUNK / segment_len,
            Sink::Store => PLAIN_CHUNK / segment_len,
            Sink::Accumulate { .. } if items_banded => 1,
            Sink::Accumulate { .. } if self.nodes.len() == 1 && (bands.is_some() || !self.row_kept()) => {
                INPUT_REDUCTION_TILE / segment_len
            }
            Sink::Accumulate { .. } => REDUCTION_TILE / segment_len,
        };
        let tile = tile_len.clamp(1, rows_per_tile);
        let tile_blocks = tile_len.div_ceil(tile);
        let blocked_plane = (self.blocked_items && outer_dims >= 2)
            .then(|| [outer_dims - 2, outer_dims - 1].map(|d| self.sizes[d]));
        Geometry {
            segments,
            segment_len,
            tile_dim,
            tile,
            tile_blocks,
            tile_len,
            outer_dims,
            outer,
            blocked_plane,
            items: outer * tile_blocks * segments,
            bands,
        }
    }
}

/// The side of the blocks in which the work items of a program with `blocked_items` walk its
/// two innermost outer dimensions.
const ITEM_BLOCK: usize = 16;

/// The outer index (row-major over the outer dimensions) of the `n`th work item when the two
/// innermost outer dimensions, of sizes `rows` and `columns`, are walked in blocks of
/// `ITEM_BLOCK` × `ITEM_BLOCK` (those at the ends cut short), each block row by row, the
/// blocks of a band of rows one after another; the dimensions before them as before.
fn blocked_outer_index(n: usize, rows: usize, columns: usize) -> usize {
    let plane = rows * columns;
    let (before, n) = (n / plane, n % plane);
    let band = n / (ITEM_BLOCK * columns);
    let band_rows = ITEM_BLOCK.min(rows - band * ITEM_BLOCK);
    let in_band = n - band * ITEM_BLOCK * columns;
    let block = in_band / (band_rows * ITEM_BLOCK);
    let block_columns = ITEM_BLOCK.min(columns - block * ITEM_BLOCK);
    let in_block = in_band - block * band_rows * ITEM_BLOCK;
    let (row, column) = (in_block / block_columns, in_block % block_columns);
    before * plane + (band * ITEM_BLOCK + row) * columns + block * ITEM_BLOCK + column
}

/// How a run cuts the walk into work items: each item is one segment (up to `PLAIN_CHUNK`
/// elements, `CHUNK` for a reduction, a whole row with row reductions) of `tile` consecutive
/// rows. A plain loop's rows of `CHUNK` elements or more are one row per item, so a value
/// broadcast along the row is one splat.
struct Geometry {
    segments: usize,
    segment_len: usize,
    /// The walk dimension whose consecutive indices form a tile (the fastest outer one).
    tile_dim: Option<usize>,
    tile: usize,
    tile_blocks: usize,
    /// The size of the tile dimension (1 without one).
    tile_len: usize,
    /// The walk dimensions before the tile dimension, decoded from an item's number.
    outer_dims: usize,
    /// The product of their sizes.
    outer: usize,
    /// The sizes of the two innermost outer dimensions when the items walk them in blocks
    /// (see [`blocked_outer_index`]).
    blocked_plane: Option<[usize; 2]>,
    items: usize,
    /// How a large sum into few elements is cut into partial sums.
    bands: Option<Bands>,
}

impl Geometry {
    /// The `n`th work item: segment `n % segments` of tile `n / segments` (tiles numbered
    /// along the tile dimension, then the outer dimensions).
    fn item(&self, n: usize) -> Item {
        let segment = n % self.segments;
        let rest = n / self.segments;
        let block = rest % self.tile_blocks;
        let mut outer = rest / self.tile_blocks;
        if let Some([rows, columns]) = self.blocked_plane {
            outer = blocked_outer_index(outer, rows, columns);
        }
        let first_row = block * self.tile;
        Item { segment, outer, first_row, rows: self.tile.min(self.tile_len - first_row) }
    }

    /// The rows of the walk (its outer and tile dimensions as one, row-major) that band `band`
    /// of `bands` even bands takes (see [`Bands::Rows`]).
    fn band_rows(&self, band: usize, bands: usize) -> std::ops::Range<usize> {
        let all_rows = self.outer * self.tile_len;
        band * all_rows / bands..(band + 1) * all_rows / bands
    }

    /// The numbers of the items (see [`Geometry::item`]) that partial sum `band` takes when
    /// they are cut by [`Bands::Items`].
    fn band_numbers(&self, band: usize) -> std::ops::Range<usize> {
        band * self.items / PARTIALS..(band + 1) * self.items / PARTIALS
    }

    /// The work items of band `band` of `bands` even bands (see [`Bands::Rows`]): its rows in
    /// order, in tiles cut at its edges and at each outer index's, each tile's segments in
    /// order.
    fn band_items(&self, band: usize, bands: usize) -> impl Iterator<Item = Item> + '_ {
        self.row_items(self.band_rows(band, bands))
    }

    /// The work items of the walk's rows `rows` (its outer and tile dimensions as one,
    /// row-major), in order, in tiles cut at the range's edges and at each outer index's, each
    /// tile's segments in order.
    fn row_items(&self, rows: std::ops::Range<usize>) -> impl Iterator<Item = Item> + '_ {
        let std::ops::Range { start: mut row, end } = rows;
        std::iter::from_fn(move || {
            (row < end).then(|| {
                let (outer, first_row) = (row / self.tile_len, row % self.tile_len);
                let rows = self.tile.min(self.tile_len - first_row).min(end - row);
                row += rows;
                Item { segment: 0, outer, first_row, rows }
            })
        })
        .flat_map(|tile| (0..self.segments).map(move |segment| Item { segment, ..tile }))
    }
}

/// Whether a load's chunk, `steps` apart from row to row and along a row, is one contiguous
/// run of its input: it is then read where it lies.
fn read_in_place([tile_step, step]: [isize; 2], chunk: Chunk) -> bool {
    step == 1 && (chunk.rows == 1 || tile_step == chunk.len as isize)
}

/// The error of a node whose buffers hold another element type than its own (a compiler bug:
/// the hot path tells it by `None`, cheaper than a `Result` per operand).
fn buffer_type_mismatch() -> Error {
    Error::invalid("a loop program read or wrote a buffer of another element type than its node's")
}

/// Evaluates one node over `view` of a chunk into `out` (the view's part of it) and says where
/// its values are (`None`: an input of another element type than the node's, or an operand
/// of a form the view does not read). For a `Load` or `Index` node (always over the whole
/// chunk), `place` is the chunk's first offset and its steps from row to row and along a row.
/// A reduce folds each row of the chunk into one value per row, whatever the view.
///
/// # Safety
/// For each operand `o` of `node`, `values[o]` holds the chunk's elements of `o`'s element
/// type in its form, the type `node` reads there, which nothing writes while this runs.
/// `out` points to `chunk.count()` elements of `node`'s element type, which nothing else
/// reads or writes while this runs.
unsafe fn evaluate(
    node: &Node,
    nodes: &[Node],
    values: &[Values],
    inputs: &[&Literal],
    out: *mut u8,
    (start, [tile_step, step]): (isize, [isize; 2]),
    (chunk, view): (Chunk, View),
) -> Option<Values> {
    let (first, len) = view.span(chunk);
    /// Operand `k`'s values in the view, as `T`s.
    macro_rules! operand {
        ($k:expr, $t:ty) => {
            // SAFETY: the caller's guarantee: `values` of the operand hold the chunk's `$t`s in
            // their form.
            unsafe { values[node.operands[$k]].operand::<$t>(chunk, view)? }
        };
    }
    /// The view's part of `out`, as `len` elements of `$t`.
    macro_rules! out {
        ($t:ty) => {
            // SAFETY: the caller's guarantee: `out` points to the chunk's `$t`s, only this node
            // uses; the view's span lies among them.
            unsafe { std::slice::from_raw_parts_mut(out.cast::<$t>().add(first), len) }
        };
    }
    if let NodeKind::Load { input, .. } = &node.kind {
        if read_in_place([tile_step, step], chunk) {
            return with_native_type!(node.element_type, T => {
                let run = inputs[*input].slice::<T>()?.get(start as usize..start as usize + len)?;
                Some(Values { ptr: run.as_ptr().cast(), form: Form::Chunk })
            });
        }
    }
    // One value for the whole chunk: along the row and (if there are several) across rows.
    let uniform = step == 0 && (tile_step == 0 || chunk.rows == 1);
    let element_type = |k: usize| nodes[node.operands[k]].element_type;
    let splat = match &node.kind {
        NodeKind::Load { input, .. } => with_native_type!(node.element_type, T => {
            let source = inputs[*input].slice::<T>()?;
            match uniform {
                // Read here: a call of the dispatched `load` costs more than the read (about
                // 90 instructions per row of layer norm and softmax).
                true => {
                    out!(T)[0] = *source.get(usize::try_from(start).ok()?)?;
                    true
                }
                false => load::<T>(source, start, [tile_step, step], chunk, out!(T)),
            }
        }),
        NodeKind::Index { .. } => with_native_type!(node.element_type, T => {
            let out = out!(T);
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
        // `run_item` skips constants: `RegisterFile::frame` has set their values once.
        NodeKind::Constant(literal) => return constant_values(literal, node.element_type),
        NodeKind::Unary(UnaryOp::IsFinite) => with_native_type!(element_type(0), T => {
            chunk_ops::is_finite(operand!(0, T), out!(bool))
        }),
        NodeKind::Unary(op) => with_native_type!(node.element_type, T => {
            chunk_ops::unary(*op, operand!(0, T), out!(T))
        }),
        NodeKind::Binary(op) => with_native_type!(node.element_type, T => {
            match (operand!(0, T), operand!(1, T)) {
                // One value op one value (layer norm's variance from its sums, once per row):
                // computed here, without the chunk op's dispatch. Not pow and atan2, whose
                // chunk ops use FMA where the CPU has it.
                (Operand::Splat(a), Operand::Splat(b)) if !matches!(op, BinaryOp::Pow | BinaryOp::Atan2) => {
                    out!(T)[0] = with_binary_fn!(T, *op, f => f(a, b));
                    true
                }
                (a, b) => chunk_ops::binary(*op, (a, b, out!(T))),
            }
        }),
        NodeKind::Compare(direction) => with_native_type!(element_type(0), T => {
            chunk_ops::compare(*direction, operand!(0, T), operand!(1, T), out!(bool))
        }),
        NodeKind::Select => with_native_type!(node.element_type, T => {
            chunk_ops::select(operand!(0, bool), operand!(1, T), operand!(2, T), out!(T))
        }),
        NodeKind::Clamp => with_native_type!(node.element_type, T => {
            chunk_ops::clamp(operand!(0, T), operand!(1, T), operand!(2, T), out!(T))
        }),
        // Each row folds on its own, into one value per row (a splat for a chunk of one row).
        NodeKind::Reduce(op) => with_native_type!(node.element_type, T => {
            let out = out!(T);
            for (r, out) in out.iter_mut().enumerate().take(chunk.rows) {
                let row = |k: usize| {
                    // SAFETY: as `operand!`'s, for row `r` of the chunk.
                    unsafe { values[node.operands[k]].operand::<T>(chunk, View::Row(r)) }
                };
                let mut acc = row(1)?.get(0);
                fold_in_chunks(*op, &mut acc, row(0)?, chunk.len);
                *out = acc;
            }
            chunk.rows == 1
        }),
        NodeKind::Convert => with_native_type!(element_type(0), S => {
            let x = operand!(0, S);
            with_native_type!(node.element_type, D => chunk_ops::convert::<S, D>(x, out!(D)))
        }),
    };
    let form = match (splat, &node.kind, view) {
        (true, _, _) => Form::Splat,
        (false, NodeKind::Reduce(_), _) | (false, _, View::PerRow) => Form::PerRow,
        (false, _, _) => Form::Chunk,
    };
    Some(Values { ptr: out.cast_const(), form })
}

/// Evaluates one node over `chunk` into `out` (see [`evaluate`]): over the whole chunk, over
/// one value per row if that is what its operands are, or row by row where per-row or row
/// operands meet operands that vary along the rows.
///
/// # Safety
/// As [`evaluate`]'s.
unsafe fn evaluate_node(
    node: &Node,
    nodes: &[Node],
    values: &[Values],
    inputs: &[&Literal],
    out: *mut u8,
    place: (isize, [isize; 2]),
    chunk: Chunk,
) -> Option<Values> {
    let forms = node.operands.iter().map(|&o| values[o].form);
    let view = if matches!(node.kind, NodeKind::Reduce(_)) { Some(View::Chunk) } else { View::of(forms) };
    if let Some(view) = view {
        // SAFETY: the caller's guarantee.
        return unsafe { evaluate(node, nodes, values, inputs, out, place, (chunk, view)) };
    }
    if let NodeKind::Binary(op) = node.kind {
        // SAFETY: the caller's guarantee.
        return with_native_type!(node.element_type, T => unsafe { binary_by_rows::<T>(op, node, values, out, chunk) });
    }
    for r in 0..chunk.rows {
        // SAFETY: the caller's guarantee. Some operand varies along the rows, so no row is a
        // splat: each row's values are written in place.
        let row = unsafe { evaluate(node, nodes, values, inputs, out, place, (chunk, View::Row(r)))? };
        if row.form == Form::Splat {
            return None;
        }
    }
    Some(Values { ptr: out.cast_const(), form: Form::Chunk })
}

/// Evaluates a binary node of type `T` over `chunk` into `out` row by row, in one call of its
/// chunk op ([`Rows`]) rather than a call of the node's evaluation per row, each row of its
/// operands read in their form: softmax's division of each row by its sum.
///
/// # Safety
/// As [`evaluate`]'s, for a node of type `T`.
unsafe fn binary_by_rows<T: Element>(
    op: BinaryOp,
    node: &Node,
    values: &[Values],
    out: *mut u8,
    chunk: Chunk,
) -> Option<Values> {
    // SAFETY: the caller's guarantee: the operands' values are the chunk's `T`s in their form.
    let operands =
        [0, 1].map(|o| node.operands.get(o).map(|&k| unsafe { values[k].row_operand::<T>(chunk) }));
    let out_rows = |r: usize| {
        // SAFETY: the caller's guarantee: `out` points to the chunk's `T`s, of which row `r`
        // is the `len` from `r·len`, only this node uses.
        unsafe { std::slice::from_raw_parts_mut(out.cast::<T>().add(r * chunk.len), chunk.len) }
    };
    binary_over_rows(op, operands, chunk, out_rows)?;
    Some(Values { ptr: out.cast_const(), form: Form::Chunk })
}

/// `op` over `chunk`'s rows, from the rows of its two operands into the rows `out` gives, in
/// one call of its chunk op ([`Rows`]); `None` where an operand is missing or does not hold
/// the chunk's rows.
fn binary_over_rows<'o, T: Element + 'o>(
    op: BinaryOp,
    [a, b]: [Option<RowOperand<'_, T>>; 2],
    chunk: Chunk,
    out: impl FnMut(usize) -> &'o mut [T],
) -> Option<()> {
    let holds = |operand: &RowOperand<'_, T>| operand.holds(chunk.rows, chunk.len);
    let (a, b) = a.filter(holds).zip(b.filter(holds))?;
    chunk_ops::binary(op, Rows { a, b, rows: chunk.rows, len: chunk.len, out });
    Some(())
}

/// Evaluates a chain (ending at a node of `element_type`) over `chunk` into `out`, and says
/// where its values are (`None`: a chain this CPU does not compute); with `fold`, summing each
/// row as it goes, and with `ahead` asking for lines past its start's (see `chunk_ops::chain`).
///
/// # Safety
/// `values` of the chain's start and of its links' other operands (its side runs' too) hold
/// the chunk's elements of `element_type` in their form (the side runs' starts a chunk's or a
/// splat), which nothing writes while this runs; the chunk holds at least the type's
/// [`chains::lanes`], and its rows a multiple of them if an operand is of a row form. `out`
/// points to the chunk's elements of `element_type`, which nothing else reads or writes while
/// this runs.
unsafe fn evaluate_chain(
    chain: &Chain,
    element_type: ElementType,
    values: &[Values],
    out: *mut u8,
    chunk: Chunk,
    (fold, ahead): (Option<RowFold<'_>>, Option<Ahead>),
) -> Option<Values> {
    if element_type != ElementType::F32 {
        return None;
    }
    let operands = ChunkValues { values, chunk };
    // SAFETY: the caller's guarantee: `out` points to the chunk's `f32`s, only this uses.
    let out_values = unsafe { std::slice::from_raw_parts_mut(out.cast::<f32>(), chunk.count()) };
    let splat = chunk_ops::chain(chain, &operands, out_values, chunk.len, fold, ahead)?;
    Some(Values { ptr: out.cast_const(), form: if splat { Form::Splat } else { Form::Chunk } })
}

/// Where fold `index` (`chains::Fold`) keeps the sums of the pieces of `chunk`'s rows among a
/// frame's `folds`.
fn fold_pieces(index: usize, chunk: Chunk) -> std::ops::Range<usize> {
    let pieces = chunk.rows * RowFold::pieces_per_row(chunk.len);
    index * pieces..(index + 1) * pieces
}

/// A row sum its chain folded (`chains::Fold`) into `out`, from the sums of `chunk`'s rows'
/// `pieces`: each row's initial value (`init`'s) plus its pieces' sums in order, as
/// [`fold_in_chunks`] adds the pieces of a row in memory. One value per row, a splat for one
/// row (as a reduce's own evaluation).
///
/// # Safety
/// `init` holds the chunk's `f32`s in its form, which nothing writes while this runs; `out`
/// points to `chunk.rows` `f32`s, which nothing else reads or writes while this runs.
unsafe fn sum_pieces(init: &Values, pieces: &[f32], out: *mut u8, chunk: Chunk) -> Option<Values> {
    // SAFETY: the caller's guarantee.
    let sums = unsafe { std::slice::from_raw_parts_mut(out.cast::<f32>(), chunk.rows) };
    let per_row = RowFold::pieces_per_row(chunk.len);
    for (r, (sum, pieces)) in sums.iter_mut().zip(pieces.chunks_exact(per_row)).enumerate() {
        // SAFETY: the caller's guarantee.
        let init = unsafe { init.operand::<f32>(chunk, View::Row(r))? }.get(0);
        *sum = pieces.iter().fold(init, |sum, &piece| sum + piece);
    }
    Some(Values { ptr: out.cast_const(), form: if chunk.rows == 1 { Form::Splat } else { Form::PerRow } })
}

/// The values of a chunk's nodes, read as a chain's operands: made only by
/// [`evaluate_chain`], whose caller guarantees that each node the chain reads holds the
/// chunk's elements of the chain's type, in its form.
struct ChunkValues<'a> {
    values: &'a [Values],
    chunk: Chunk,
}

impl<T: Copy> ChainOperands<T> for ChunkValues<'_> {
    fn operand(&self, node: usize) -> ChainOperand<'_, T> {
        // SAFETY: `evaluate_chain`'s caller guarantees that the nodes a chain reads hold the
        // chunk's `T`s in their form, which nothing writes while the chain runs.
        unsafe { self.values[node].chain_operand::<T>(self.chunk) }
    }
}

/// A constant's one value, read where its literal holds it (`None`: not of `element_type`).
fn constant_values(literal: &Literal, element_type: ElementType) -> Option<Values> {
    with_native_type!(element_type, T => {
        Some(Values { ptr: (literal.slice::<T>()?.first()? as *const T).cast(), form: Form::Splat })
    })
}

/// A load's values for `chunk` read in place in a form only chains read, if they are a
/// row broadcast down the tile ([`Form::Row`]) or one value per row ([`Form::PerRow`]): the
/// chunk's copy of them would cost more than the chain's reads (W5's tile of 32 rows of 64
/// copied a row vector 32 times and filled a column's value into each row). `None` for any
/// other load, or `f32` values not in its input.
fn broadcast_rows(
    node: &Node,
    inputs: &[&Literal],
    start: isize,
    [tile_step, step]: [isize; 2],
    chunk: Chunk,
) -> Option<Values> {
    let NodeKind::Load { input, .. } = node.kind else {
        return None;
    };
    let (form, len) = match (tile_step, step) {
        (0, 1) => (Form::Row, chunk.len),
        (1, 0) => (Form::PerRow, chunk.rows),
        _ => return None,
    };
    let start = usize::try_from(start).ok()?;
    let values = inputs.get(input)?.slice::<f32>()?.get(start..start.checked_add(len)?)?;
    Some(Values { ptr: values.as_ptr().cast(), form })
}

/// `len` values folded into `acc` with `op` a CHUNK at a time, in order: as a reduce's own loop
/// folds a row, so a row reduction inside a wider loop rounds as that loop does. One value for
/// all is folded as a buffer of it would be (an unfused reduce reads a materialized broadcast),
/// from one CHUNK of it on the stack.
fn fold_in_chunks<T: Element>(op: BinaryOp, acc: &mut T, values: Operand<'_, T>, len: usize) {
    match values {
        Operand::Values(values) => values[..len].chunks(CHUNK).for_each(|piece| {
            chunk_ops::fold(op, acc, piece);
        }),
        Operand::Splat(value) => {
            let piece = [value; CHUNK];
            (0..len).step_by(CHUNK).for_each(|first| {
                chunk_ops::fold(op, acc, &piece[..CHUNK.min(len - first)]);
            });
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The blocked order visits every outer index once, for planes of whole blocks, cut
    /// blocks at either end, a single row or column, and dimensions before the plane; the
    /// first block of a large plane is its first `ITEM_BLOCK` rows and columns.
    #[test]
    fn blocked_items_visit_every_outer_index_once_block_by_block() {
        for (rows, columns) in [(1, 1), (1, 40), (40, 1), (16, 16), (17, 33), (64, 64), (5, 40), (33, 7)] {
            for before in 1..=3 {
                let total = before * rows * columns;
                let mut seen: Vec<usize> =
                    (0..total).map(|n| blocked_outer_index(n, rows, columns)).collect();
                seen.sort_unstable();
                assert_eq!(seen, (0..total).collect::<Vec<_>>(), "{before}×{rows}×{columns}");
            }
        }
        let first_block: Vec<(usize, usize)> = (0..ITEM_BLOCK * ITEM_BLOCK)
            .map(|n| blocked_outer_index(n, 64, 64))
            .map(|i| (i / 64, i % 64))
            .collect();
        let square = (0..ITEM_BLOCK).flat_map(|r| (0..ITEM_BLOCK).map(move |c| (r, c)));
        assert_eq!(first_block, square.collect::<Vec<_>>());
        assert_eq!(blocked_outer_index(ITEM_BLOCK * ITEM_BLOCK, 64, 64), ITEM_BLOCK);
        assert_eq!(blocked_outer_index(64 * 64 + 1, 64, 64), 64 * 64 + 1);
    }

    /// A sum's bands take the same rows whatever its tile: each band's items, in order, are
    /// its rows in order (every segment of each), in tiles of at most `tile` rows that keep
    /// within one outer index, for tiles of 1, 4, 7 and 64 rows, outer dimensions of 1 to 3
    /// indices, and row counts that no band count divides.
    #[test]
    fn bands_take_the_same_rows_in_order_whatever_the_tile() {
        let cases: [(usize, usize, usize); 5] = [(1, 700, 1), (3, 333, 2), (2, 17, 3), (1, 16, 1), (5, 4, 1)];
        for (outer, tile_len, segments) in cases {
            let bands = PARTIALS;
            let rows_of_bands = |tile: usize| -> Vec<Vec<(usize, usize)>> {
                let geometry = Geometry {
                    segments,
                    segment_len: CHUNK,
                    tile_dim: Some(1),
                    tile,
                    tile_blocks: tile_len.div_ceil(tile),
                    tile_len,
                    outer_dims: 1,
                    outer,
                    blocked_plane: None,
                    items: outer * tile_len.div_ceil(tile) * segments,
                    bands: Some(Bands::Rows),
                };
                (0..bands)
                    .map(|b| {
                        let items: Vec<Item> = geometry.band_items(b, bands).collect();
                        let mut rows = Vec::new();
                        for tile_items in items.chunks(segments) {
                            let first = tile_items[0];
                            assert!(
                                first.rows >= 1
                                    && first.rows <= tile
                                    && first.first_row + first.rows <= tile_len
                            );
                            let segments_seen: Vec<usize> = tile_items.iter().map(|i| i.segment).collect();
                            assert_eq!(segments_seen, (0..segments).collect::<Vec<_>>());
                            assert!(tile_items
                                .iter()
                                .all(|i| Item { segment: 0, ..*i } == Item { segment: 0, ..first }));
                            rows.extend(
                                (first.first_row..first.first_row + first.rows).map(|r| (first.outer, r)),
                            );
                        }
                        rows
                    })
                    .collect()
            };
            let one_row_tiles = rows_of_bands(1);
            let every_row: Vec<(usize, usize)> = one_row_tiles.concat();
            let expected: Vec<(usize, usize)> =
                (0..outer).flat_map(|o| (0..tile_len).map(move |r| (o, r))).collect();
            assert_eq!(every_row, expected, "{outer}×{tile_len}");
            for tile in [4, 7, 64] {
                assert_eq!(rows_of_bands(tile), one_row_tiles, "{outer}×{tile_len} in tiles of {tile}");
            }
        }
    }
}
