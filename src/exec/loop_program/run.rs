//! Running a loop program: the walk is cut into work items (a segment of one row, or of a tile
//! of consecutive rows), split across rayon's threads when large; each item computes its start
//! offsets, evaluates the expression into cache-resident registers, and stores (or folds) the
//! result row by row; a tile whose rows lie apart in the output, with a binary result,
//! computes that result straight into the output's rows (`item.rs`).

use rayon::prelude::*;

use super::frame::{buffer_type_mismatch, Frame, RegisterFile};
use super::geometry::{Bands, Item, Partition, BLOCKS_PER_THREAD, PARALLEL_THRESHOLD, PARTIALS};
use super::item::Items;
use super::program::{LoopProgram, Sink};
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
                Items { program: self, geometry: &geometry, inputs, target, shifts: &[] }.run(items, frame)?;
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
            let items = Items { program: self, geometry: &geometry, inputs, target: &target, shifts };
            items.run(geometry.row_items(rows), frame)?;
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
}
