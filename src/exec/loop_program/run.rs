//! Running a loop program: the walk is cut into work items (a segment of one row, or of a tile
//! of consecutive rows), split across rayon's threads when large; each item computes its start
//! offsets, evaluates the expression into cache-resident registers, and stores (or folds) the
//! result row by row; a tile whose rows lie apart in the output, with a binary result,
//! computes that result straight into the output's rows (`LoopProgram::result_by_rows`).

use rayon::prelude::*;

use super::chain::{Chain, Role};
use super::chunk::{Chunk, RowFold, RowOperand};
use super::evaluate::{
    binary_over_rows, broadcast_rows, evaluate_chain, evaluate_node, fold_pieces, read_in_place, sum_pieces,
};
use super::frame::{buffer_type_mismatch, Form, Frame, RegisterFile, View};
use super::geometry::{Bands, Geometry, Item, Partition, BLOCKS_PER_THREAD, PARALLEL_THRESHOLD, PARTIALS};
use super::nodes::NodeKind;
use super::prefetch::{prefetch, Ahead, Lines, AHEAD_ITEMS};
use super::program::{LoopProgram, Sink};
use super::registers;
use super::target::{OutTarget, SharedOutput};
use crate::error::{invalid_argument, Result};
use crate::exec::element::Element;
use crate::literal::{for_each_element, Literal};
use crate::storage::{with_native_type, NativeType, Storage};

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
        // Chains compute `f32` (`chain::CHAINED_TYPE`).
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
        // chain is of `chain::CHAINED_TYPE`, so this is asked once per item).
        let lanes = registers::lanes();
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
}
