//! The loop engine: an output walked in its own memory order, a row (the minor dimension) at
//! a time, with every operand read through a stride vector over the output's index space.
//!
//! Strides are the one idea behind every view: broadcast dimensions have stride 0, a
//! transpose permutes strides, a reverse negates them, a slice scales and offsets them, and
//! any layout or padding of an operand is just other strides.

use rayon::prelude::*;

use crate::Shape;

/// How an operand is read over the output's index space: element at output index `i` is at
/// `offset + Σ i[d]·strides[d]` in the operand's buffer.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct View {
    pub(crate) offset: isize,
    pub(crate) strides: Vec<isize>,
}

impl View {
    /// An operand of the output's dimensions, read through its own layout.
    pub(crate) fn of(shape: &Shape) -> View {
        View { offset: 0, strides: shape.strides().iter().map(|&s| s as isize).collect() }
    }
}

/// One row of the walk: where it starts in the output and in each operand, and its length.
/// Steps along the row are in [`RowSteps`].
pub(crate) struct Row<'a> {
    /// Start of the row in the output chunk being written.
    pub(crate) out_start: usize,
    /// Start of the row in each operand's buffer.
    pub(crate) starts: &'a [isize],
    pub(crate) len: usize,
}

/// Steps along a row: the output's and each operand's.
pub(crate) struct RowSteps {
    pub(crate) out: usize,
    pub(crate) operands: Vec<isize>,
}

/// Below this many output elements the walk stays on the calling thread: a rayon call costs
/// more than the work (DESIGN.md, performance).
const PARALLEL_THRESHOLD: usize = 1 << 16;

/// Calls `row` for every row of `out_shape` (the minor dimension in memory order), writing into
/// `out` (the output buffer, padding included), with `views` giving each operand's offset and
/// strides over the output's dimensions. Large outputs are split by their major dimension
/// across rayon's threads when `parallel` allows.
pub(crate) fn for_each_row<T: Send>(
    out_shape: &Shape,
    out: &mut [T],
    views: &[View],
    parallel: bool,
    row: impl Fn(&mut [T], &Row<'_>, &RowSteps) + Sync,
) {
    if out_shape.element_count() == 0 {
        return;
    }
    // Dimensions in memory order, major first.
    let order: Vec<usize> = out_shape.layout().minor_to_major().iter().rev().map(|&d| d as usize).collect();
    let sizes: Vec<usize> = order.iter().map(|&d| out_shape.dimensions()[d] as usize).collect();
    let out_strides: Vec<usize> = {
        let strides = out_shape.strides();
        order.iter().map(|&d| strides[d] as usize).collect()
    };
    let operand_strides: Vec<Vec<isize>> =
        views.iter().map(|v| order.iter().map(|&d| v.strides[d]).collect()).collect();
    if order.is_empty() {
        let starts: Vec<isize> = views.iter().map(|v| v.offset).collect();
        let steps = RowSteps { out: 1, operands: vec![0; views.len()] };
        row(out, &Row { out_start: 0, starts: &starts, len: 1 }, &steps);
        return;
    }
    let last = order.len() - 1;
    let steps =
        RowSteps { out: out_strides[last], operands: operand_strides.iter().map(|s| s[last]).collect() };
    let walk_chunk = |chunk: &mut [T], outer: Option<usize>| {
        // `outer`: the index of the major dimension this chunk holds (when split by it).
        let first = usize::from(outer.is_some());
        let mut index = vec![0usize; order.len()];
        let mut starts: Vec<isize> = views
            .iter()
            .zip(&operand_strides)
            .map(|(v, s)| v.offset + outer.map_or(0, |o| o as isize * s[0]))
            .collect();
        let mut out_start = 0usize;
        loop {
            row(chunk, &Row { out_start, starts: &starts, len: sizes[last] }, &steps);
            // Advance the odometer over dimensions first..last (exclusive of the row).
            let mut d = last;
            loop {
                if d == first {
                    return;
                }
                d -= 1;
                index[d] += 1;
                out_start += out_strides[d];
                for (start, s) in starts.iter_mut().zip(&operand_strides) {
                    *start += s[d];
                }
                if index[d] < sizes[d] {
                    break;
                }
                out_start -= out_strides[d] * sizes[d];
                for (start, s) in starts.iter_mut().zip(&operand_strides) {
                    *start -= s[d] * sizes[d] as isize;
                }
                index[d] = 0;
            }
        }
    };
    let total = out_shape.element_count() as usize;
    if parallel && total >= PARALLEL_THRESHOLD && order.len() > 1 && sizes[0] > 1 {
        let chunk_len = out_strides[0];
        out.par_chunks_mut(chunk_len)
            .take(sizes[0])
            .enumerate()
            .for_each(|(o, chunk)| walk_chunk(chunk, Some(o)));
    } else {
        walk_chunk(out, None);
    }
}
