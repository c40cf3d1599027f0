//! One work item of a run: its offsets, each node evaluated into its slot (or read where it
//! lies, or computed by its chain), and its result stored or folded into the output. What an
//! item of a given chunk shape does (in place or through slots, chains in registers or not,
//! row by row into the output) is decided once per shape ([`ChunkPlan`]).

use super::chain::{Chain, Role};
use super::chunk::{Chunk, RowFold, RowOperand};
use super::evaluate::{
    binary_over_rows, broadcast_rows, evaluate_chain, evaluate_node, fold_pieces, read_in_place, sum_pieces,
};
use super::frame::{buffer_type_mismatch, Form, Frame, View};
use super::geometry::{Geometry, Item};
use super::nodes::NodeKind;
use super::prefetch::{prefetch, Ahead, Lines, AHEAD_ITEMS};
use super::program::{LoopProgram, Sink};
use super::registers;
use super::target::OutTarget;
use crate::error::Result;
use crate::exec::element::Element;
use crate::literal::Literal;

/// What every item of one run shares: the program, how its walk is cut, its inputs (input `i`
/// read `shifts[i]` elements before where the program's shapes place it; none: 0) and the
/// output its items write.
pub(super) struct Items<'r, T> {
    pub(super) program: &'r LoopProgram,
    pub(super) geometry: &'r Geometry,
    pub(super) inputs: &'r [&'r Literal],
    pub(super) target: &'r OutTarget<T>,
    pub(super) shifts: &'r [isize],
}

/// How an item of one chunk shape is computed: the same for every item of that shape, so
/// decided once for it ([`Items::plan`]).
#[derive(Clone, Copy)]
pub(super) struct ChunkPlan {
    chunk: Chunk,
    /// The output's step from one row of the chunk to the next.
    out_tile_step: isize,
    /// The result is computed in place: a plain loop whose chunk is one run of the output.
    direct: bool,
    /// Chains are computed in registers: the chunk holds a block of their lanes (every chain
    /// is of `chain::CHAINED_TYPE`).
    chained: bool,
    /// Each row is whole blocks of the chains' lanes: chains fold row sums of their values.
    whole_blocks: bool,
    /// Broadcasts along a tile's rows that only chains read are read in place (see
    /// `evaluate::broadcast_rows`): rows of whole blocks, several of them.
    rows_in_place: bool,
    /// A tile whose rows lie apart in the output computes its result, a binary node no chain
    /// computes, row by row straight into them ([`Items::result_by_rows`]).
    by_rows: bool,
}

impl<T: Element> Items<'_, T> {
    /// Computes `items` in order with `frame`, each output's lines asked for one item ahead
    /// when the program walks blocked items.
    pub(super) fn run(&self, items: impl Iterator<Item = Item>, frame: &mut Frame) -> Result<()> {
        let mut items = items.peekable();
        let mut plan: Option<ChunkPlan> = None;
        while let Some(item) = items.next() {
            if let Some(&next) = items.peek().filter(|_| self.program.blocked_items) {
                self.prefetch(next);
            }
            let chunk = self.program.chunk_of(item, self.geometry);
            let item_plan = match plan {
                Some(known) if known.chunk == chunk => known,
                _ => *plan.insert(self.plan(chunk)),
            };
            self.run_item(item, item_plan, frame)?;
        }
        Ok(())
    }

    /// How items of `chunk`'s shape are computed.
    fn plan(&self, chunk: Chunk) -> ChunkPlan {
        let program = self.program;
        let last = program.sizes.len() - 1;
        let [out_tile_step, _] = program.chunk_steps(self.geometry, &program.out_strides);
        let direct = program.sink == Sink::Store
            && program.out_strides[last] == 1
            && (chunk.rows == 1 || out_tile_step == chunk.len as isize);
        let lanes = registers::lanes();
        let chained = lanes.is_some_and(|lanes| chunk.count() >= lanes);
        let whole_blocks = chained && lanes.is_some_and(|lanes| chunk.len.is_multiple_of(lanes));
        let by_rows = !direct && program.computes_by_rows(chunk, out_tile_step, chained);
        ChunkPlan {
            chunk,
            out_tile_step,
            direct,
            chained,
            whole_blocks,
            rows_in_place: whole_blocks && chunk.rows > 1,
            by_rows,
        }
    }

    /// How far ahead of its start's values `chain` asks for lines as it computes (see
    /// `prefetch.rs`): in a walk with row reductions, [`AHEAD_ITEMS`] items' worth of its
    /// start when that is an input read where it lies (its later items' values follow it),
    /// unless the chain writes `into_output`: those stores go to memory too, and compete with
    /// the requests.
    fn chain_ahead(&self, chain: &Chain, chunk: Chunk, into_output: bool) -> Option<Ahead> {
        let program = self.program;
        let NodeKind::Load { strides, .. } = &program.nodes[chain.start].kind else { return None };
        let ahead = program.row_reductions && !into_output;
        // Chains compute `f32` (`chain::CHAINED_TYPE`).
        (ahead && read_in_place(program.chunk_steps(self.geometry, strides), chunk))
            .then(|| Ahead { distance: AHEAD_ITEMS * chunk.count() * size_of::<f32>() })
    }

    /// Asks the cache for the lines `item` will write in the output (see `prefetch.rs`), while
    /// an earlier item computes.
    fn prefetch(&self, item: Item) {
        let (program, geometry, target) = (self.program, self.geometry, self.target);
        if program.sink == Sink::Store {
            // Only its address is read: the slice is never made.
            let lines = Lines {
                base: target.ptr.cast_const().cast(),
                len: target.len,
                element_bytes: size_of::<T>(),
            };
            prefetch(
                lines,
                program.offset_of(item, geometry, &program.out_strides, 0),
                program.chunk_steps(geometry, &program.out_strides),
                program.chunk_of(item, geometry),
            );
        }
    }

    /// Evaluates one work item, of `plan`'s chunk, and stores (or folds) it.
    fn run_item(&self, item: Item, plan: ChunkPlan, frame: &mut Frame) -> Result<()> {
        let (program, geometry, inputs, target) = (self.program, self.geometry, self.inputs, self.target);
        let last = program.sizes.len() - 1;
        let chunk = plan.chunk;
        if chunk.count() > frame.capacity {
            return Err(buffer_type_mismatch());
        }
        let out_offset = program.offset_of(item, geometry, &program.out_strides, 0);
        for (start, node) in frame.starts.iter_mut().zip(&program.nodes) {
            if let NodeKind::Load { offset, strides, .. } | NodeKind::Index { offset, strides } = &node.kind {
                *start = program.offset_of(item, geometry, strides, *offset);
            }
            if let NodeKind::Load { input, .. } = node.kind {
                *start -= self.shifts.get(input).copied().unwrap_or(0);
            }
        }
        let Chunk { rows, len } = chunk;
        if plan.direct {
            target.check(out_offset, 1, chunk.count());
        }
        let result = program.nodes.len() - 1;
        // Of the chains that may ask for a later item's lines (see `chain_ahead`), the first
        // does.
        let mut asked_ahead = false;
        for (k, node) in program.nodes.iter().enumerate() {
            if k == result && plan.by_rows {
                return self.result_by_rows(item, plan, frame);
            }
            match program.chains[k] {
                // Computed by its chain's last node, never materialized.
                Role::Inside(_) if plan.chained => continue,
                Role::Folded(end) if plan.whole_blocks && frame.values[end].form == Form::Chunk => {
                    // Its chain computed values (not a splat), and summed each piece of each row.
                    let Role::End(Chain { fold: Some(fold), .. }) = &program.chains[end] else {
                        return Err(buffer_type_mismatch());
                    };
                    let pieces =
                        frame.folds.get(fold_pieces(fold.index, chunk)).ok_or_else(buffer_type_mismatch)?;
                    let out = frame.slots[program.slots.of_node[k]];
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
                    let steps = program.chunk_steps(geometry, strides);
                    if plan.rows_in_place && program.read_by_links_only[k] {
                        if let Some(values) = broadcast_rows(node, inputs, frame.starts[k], steps, chunk) {
                            frame.values[k] = values;
                            continue;
                        }
                    }
                    if plan.by_rows && self.rows_in_input(k).is_some() {
                        // The result reads its rows where they lie.
                        continue;
                    }
                    ((frame.starts[k], steps), false)
                }
                _ => ((0, [0, 0]), plan.direct && k == result),
            };
            let out = match into_output {
                true => target.ptr.wrapping_offset(out_offset).cast::<u8>(),
                false => frame.slots[program.slots.of_node[k]],
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
            let values = match &program.chains[k] {
                Role::End(chain) if plan.chained => {
                    let fold = match chain.fold {
                        Some(fold) if plan.whole_blocks => {
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
                        false => self.chain_ahead(chain, chunk, into_output),
                    };
                    asked_ahead |= ahead.is_some();
                    // SAFETY: as above; `fold` only with rows of whole blocks.
                    unsafe {
                        evaluate_chain(chain, node.element_type, &frame.values, out, chunk, (fold, ahead))
                    }
                }
                _ => unsafe { evaluate_node(node, &program.nodes, &frame.values, inputs, out, place, chunk) },
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
        if let Sink::Accumulate { op, .. } = program.sink {
            if plan.out_tile_step == 0 && program.out_strides[last] == 1 && len > 0 {
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
            let offset = out_offset + r as isize * plan.out_tile_step;
            match program.sink {
                Sink::Store => target.store(offset, program.out_strides[last], row, len),
                Sink::Accumulate { op, .. } => {
                    target.accumulate(op, offset, program.out_strides[last], row, len)
                }
            }
        }
        Ok(())
    }

    /// For a result computed row by row: whether node `k` is a load that only the result
    /// reads whose chunk's rows are each one run of its input, in order (a row vector
    /// broadcast down the tile among them); if so, the elements from one row to the next. The
    /// result then reads them where they lie, rather than from a slot they were copied into.
    fn rows_in_input(&self, k: usize) -> Option<usize> {
        let program = self.program;
        let NodeKind::Load { strides, .. } = &program.nodes[k].kind else { return None };
        if !program.read_by_result_only[k] {
            return None;
        }
        let [tile_step, step] = program.chunk_steps(self.geometry, strides);
        (step == 1 && tile_step >= 0).then(|| tile_step.unsigned_abs())
    }

    /// Computes `item`'s result, a binary node (see [`ChunkPlan::by_rows`]), row by row
    /// straight into its rows of the output, from its operands' rows: in their slots, or for
    /// a load only it reads whose rows are runs of its input ([`Self::rows_in_input`]),
    /// there. The tile's result is then not copied into the output row by row, nor such a
    /// load's rows into a slot; the loop over the rows is one call of the op, not a call of the
    /// node's evaluation per row.
    fn result_by_rows(&self, item: Item, plan: ChunkPlan, frame: &Frame) -> Result<()> {
        let (program, geometry, inputs, target) = (self.program, self.geometry, self.inputs, self.target);
        let node = &program.nodes[program.nodes.len() - 1];
        let NodeKind::Binary(op) = node.kind else { return Err(buffer_type_mismatch()) };
        let (chunk, out_tile_step) = (plan.chunk, plan.out_tile_step);
        let out_offset = program.offset_of(item, geometry, &program.out_strides, 0);
        // Operands are of the result's type (`nodes_agree`), `T`.
        let operand = |k: usize| -> Option<RowOperand<'_, T>> {
            match (&program.nodes[k].kind, self.rows_in_input(k)) {
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

impl LoopProgram {
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
}
