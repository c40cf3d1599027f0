//! Evaluating one node (or one chain) over a chunk: where its values come from (read in
//! place, a splat, a slot), the chunk op that computes them, and the form they take.

use super::chain::Chain;
use super::chunk::{ChainOperand, ChainOperands, Chunk, Operand, RowFold, RowOperand};
use super::chunk_ops::{self, fold_in_chunks, load, Rows};
use super::frame::{constant_values, Form, Values, View};
use super::nodes::{Node, NodeKind};
use super::prefetch::Ahead;
use super::registers;
use crate::attributes::{BinaryOp, UnaryOp};
use crate::element_type::ElementType;
use crate::exec::element::{with_binary_fn, Element, Wide};
use crate::literal::Literal;
use crate::storage::with_native_type;

/// Whether a load's chunk, `steps` apart from row to row and along a row, is one contiguous
/// run of its input: it is then read where it lies.
pub(super) fn read_in_place([tile_step, step]: [isize; 2], chunk: Chunk) -> bool {
    step == 1 && (chunk.rows == 1 || tile_step == chunk.len as isize)
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
pub(super) unsafe fn evaluate_node(
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
pub(super) fn binary_over_rows<'o, T: Element + 'o>(
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
/// row as it goes, and with `ahead` asking for lines past its start's (see `registers::chain`).
///
/// # Safety
/// `values` of the chain's start and of its links' other operands (its side runs' too) hold
/// the chunk's elements of `element_type` in their form (the side runs' starts a chunk's or a
/// splat), which nothing writes while this runs; the chunk holds at least the type's
/// [`registers::lanes`], and its rows a multiple of them if an operand is of a row form. `out`
/// points to the chunk's elements of `element_type`, which nothing else reads or writes while
/// this runs.
pub(super) unsafe fn evaluate_chain(
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
    let splat = registers::chain(chain, &operands, out_values, chunk.len, fold, ahead)?;
    Some(Values { ptr: out.cast_const(), form: if splat { Form::Splat } else { Form::Chunk } })
}

/// Where fold `index` (`chain::Fold`) keeps the sums of the pieces of `chunk`'s rows among a
/// frame's `folds`.
pub(super) fn fold_pieces(index: usize, chunk: Chunk) -> std::ops::Range<usize> {
    let pieces = chunk.rows * RowFold::pieces_per_row(chunk.len);
    index * pieces..(index + 1) * pieces
}

/// A row sum its chain folded (`chain::Fold`) into `out`, from the sums of `chunk`'s rows'
/// `pieces`: each row's initial value (`init`'s) plus its pieces' sums in order, as
/// [`fold_in_chunks`] adds the pieces of a row in memory. One value per row, a splat for one
/// row (as a reduce's own evaluation).
///
/// # Safety
/// `init` holds the chunk's `f32`s in its form, which nothing writes while this runs; `out`
/// points to `chunk.rows` `f32`s, which nothing else reads or writes while this runs.
pub(super) unsafe fn sum_pieces(init: &Values, pieces: &[f32], out: *mut u8, chunk: Chunk) -> Option<Values> {
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

/// A load's values for `chunk` read in place in a form only chains read, if they are a
/// row broadcast down the tile ([`Form::Row`]) or one value per row ([`Form::PerRow`]): the
/// chunk's copy of them would cost more than the chain's reads (W5's tile of 32 rows of 64
/// copied a row vector 32 times and filled a column's value into each row). `None` for any
/// other load, or `f32` values not in its input.
pub(super) fn broadcast_rows(
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
