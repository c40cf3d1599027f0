//! A thread's chunk buffers and the frame of values that points into them: where each node's
//! values for the current chunk are, and in which form (a chunk's, a splat, a row, one per
//! row), so evaluating a node costs a few pointer reads.

use super::chunk::{ChainOperand, Chunk, Operand, RowOperand};
use super::nodes::{Node, NodeKind};
use crate::element_type::ElementType;
use crate::error::Error;
use crate::literal::Literal;
use crate::storage::{with_native_type, NativeType, Storage};

/// A thread's chunk buffers: the program's slots (see `slots.rs`), and the frame that points
/// into them during a run; both kept between runs, so a run allocates nothing.
#[derive(Debug)]
pub(super) struct RegisterFile {
    pub(super) slots: Vec<Storage>,
    pub(super) frame: Frame,
}

/// Where a node's values for the current chunk are: elements of the node's type from `ptr`
/// (in a slot, an input, a constant or the output), as many as their [`Form`] says.
#[derive(Clone, Copy, Debug)]
pub(super) struct Values {
    pub(super) ptr: *const u8,
    pub(super) form: Form,
}

/// How a node's values for a chunk lie.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Form {
    /// The chunk's elements, row after row.
    Chunk,
    /// One element standing for all.
    Splat,
    /// One row's elements, the same in every row of the chunk: a row vector broadcast down a
    /// tile, read in place (only chains read it; see `evaluate::broadcast_rows`).
    Row,
    /// One element per row, row after row: a column broadcast along the rows, read in place
    /// (only chains read it), or a tile's row reductions and what is computed from them
    /// alone (read by any node: see [`View`]).
    PerRow,
}

/// The part of a chunk a node is evaluated over, and how its operands are read there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum View {
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
    pub(super) fn span(self, chunk: Chunk) -> (usize, usize) {
        match self {
            View::Chunk => (0, chunk.count()),
            View::PerRow => (0, chunk.rows),
            View::Row(r) => (r * chunk.len, chunk.len),
        }
    }

    /// How a node with operands of these `forms` is evaluated: over one view (`Some`), or row
    /// by row (`None`: one operand varies along the rows, another has one value per row or
    /// one row for all).
    pub(super) fn of(forms: impl Iterator<Item = Form>) -> Option<View> {
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
    pub(super) unsafe fn operand<'a, T: Copy>(self, chunk: Chunk, view: View) -> Option<Operand<'a, T>> {
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
    pub(super) unsafe fn row_operand<'a, T: Copy>(self, chunk: Chunk) -> RowOperand<'a, T> {
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
    pub(super) unsafe fn chain_operand<'a, T: Copy>(self, chunk: Chunk) -> ChainOperand<'a, T> {
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
pub(super) struct Frame {
    pub(super) slots: Vec<*mut u8>,
    pub(super) capacity: usize,
    pub(super) values: Vec<Values>,
    pub(super) starts: Vec<isize>,
    /// The sums of the pieces of rows that chains fold (`chunk::RowFold`), fold after
    /// fold.
    pub(super) folds: Vec<f32>,
}

// SAFETY: a frame's pointers are dereferenced only during the run that set them, on the
// thread that runs it (`RegisterFile::frame` sets the slots' and constants' at its start,
// `run_item` every other node's before its readers); kept between runs, they are never read.
unsafe impl Send for Frame {}

impl RegisterFile {
    /// The frame for a run of `nodes`: the slots' and constants' pointers set (`None`: a slot
    /// or constant of another element type than its node's).
    pub(super) fn frame(&mut self, nodes: &[Node]) -> Option<&mut Frame> {
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

/// The error of a node whose buffers hold another element type than its own (a compiler bug:
/// the hot path tells it by `None`, cheaper than a `Result` per operand).
pub(super) fn buffer_type_mismatch() -> Error {
    Error::invalid("a loop program read or wrote a buffer of another element type than its node's")
}

/// A constant's one value, read where its literal holds it (`None`: not of `element_type`).
pub(super) fn constant_values(literal: &Literal, element_type: ElementType) -> Option<Values> {
    with_native_type!(element_type, T => {
        Some(Values { ptr: (literal.slice::<T>()?.first()? as *const T).cast(), form: Form::Splat })
    })
}
