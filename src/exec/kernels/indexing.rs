//! The shared arithmetic of indexing kernels: integer index values of any type read as `i64`
//! (unsigned ones as unsigned), the buffer offsets of every element of a box of dimensions,
//! and a copy of many windows at once.

use rayon::prelude::*;

use crate::error::Result;
use crate::exec::kernels::disjoint::DisjointWrites;
use crate::literal::Literal;
use crate::storage::{with_native_type, NativeType};

/// Element `position` (memory order) of an integer literal as an `i64`: unsigned values read
/// as unsigned (saturating above `i64::MAX`, which clamps the same way).
pub(crate) fn index_value(indices: &Literal, position: usize) -> Result<i64> {
    use crate::element_type::ElementType::*;
    Ok(match indices.element_type() {
        S8 => indices.memory::<i8>()?[position].into(),
        S16 => indices.memory::<i16>()?[position].into(),
        S32 => indices.memory::<i32>()?[position].into(),
        S64 => indices.memory::<i64>()?[position],
        U8 => indices.memory::<u8>()?[position].into(),
        U16 => indices.memory::<u16>()?[position].into(),
        U32 => indices.memory::<u32>()?[position].into(),
        U64 => i64::try_from(indices.memory::<u64>()?[position]).unwrap_or(i64::MAX),
        other => return Err(crate::error::Error::invalid(format!("indices must be integers, not {other}"))),
    })
}

/// XLA's clamp of a start index: into `[0, bound − size]`.
pub(crate) fn clamp_start(start: i64, bound: i64, size: i64) -> i64 {
    start.clamp(0, (bound - size).max(0))
}

/// The buffer offsets (`Σ index[d] · strides[d]`) of every index of the box `sizes`, in
/// row-major order.
pub(crate) fn box_offsets(sizes: &[i64], strides: &[i64]) -> Vec<usize> {
    crate::shape::index::RowMajorOffsets::new(sizes, strides).collect()
}

/// A box of dimensions as two layouts see it: the offsets of its runs (elements consecutive
/// in both layouts: the innermost dimensions, while they are), in row-major order, and the
/// length of a run. Copies move runs, not elements.
pub(crate) struct BoxRuns {
    pub(crate) from: Vec<usize>,
    pub(crate) to: Vec<usize>,
    pub(crate) len: usize,
}

/// The runs of the box `sizes` read through `from_strides` and written through `to_strides`.
pub(crate) fn box_runs(sizes: &[i64], from_strides: &[i64], to_strides: &[i64]) -> BoxRuns {
    let mut outer = sizes.len();
    let mut len = 1i64;
    while outer > 0 {
        let d = outer - 1;
        let consecutive = sizes[d] == 1 || (from_strides[d] == len && to_strides[d] == len);
        if !consecutive {
            break;
        }
        len *= sizes[d];
        outer = d;
    }
    BoxRuns {
        from: box_offsets(&sizes[..outer], &from_strides[..outer]),
        to: box_offsets(&sizes[..outer], &to_strides[..outer]),
        len: len as usize,
    }
}

/// Windows to copy: window `w` reads run `r` of `runs` at `from[sources[w] + runs.from[r]..]`
/// into `to[targets[w] + runs.to[r]..]`.
pub(crate) struct Windows<'a> {
    pub(crate) sources: &'a [usize],
    pub(crate) targets: &'a [usize],
    pub(crate) runs: &'a BoxRuns,
}

/// Copies `windows` of `from` into `to` (same element type). Each (window, element) pair must
/// target a distinct position of `to` (a gather's output map is a bijection), which lets the
/// windows be copied in parallel.
pub(crate) fn copy_windows(
    from: &Literal,
    to: &mut Literal,
    windows: &Windows<'_>,
    parallel: bool,
) -> Result<()> {
    with_native_type!(from.element_type(), T => copy_typed::<T>(from.memory::<T>()?, to.storage_mut()?.as_mut_slice::<T>()?, windows, parallel));
    Ok(())
}

fn copy_typed<T: NativeType>(from: &[T], to: &mut [T], windows: &Windows<'_>, parallel: bool) {
    let BoxRuns { from: from_runs, to: to_runs, len } = windows.runs;
    let (runs, len) = (from_runs.len(), *len);
    if runs == 0 || len == 0 {
        // Empty windows (a size-0 slice) copy nothing; their starts may lie at the bounds.
        return;
    }
    let out = DisjointWrites::new(to);
    // Copies run `r` of window `w`, for `i = w · runs + r`.
    let copy_one = |i: usize| {
        let (w, r) = (i / runs, i % runs);
        let (source, target) = (windows.sources[w] + from_runs[r], windows.targets[w] + to_runs[r]);
        // SAFETY: no other run of any window writes `target..target + len` (the caller's
        // contract).
        let dst = unsafe { out.part(target, len) };
        dst.expect("run out of the output").copy_from_slice(&from[source..source + len]);
    };
    let count = windows.sources.len() * runs;
    if parallel && count * len >= 1 << 15 {
        let grain = (count / (4 * rayon::current_num_threads())).max(1);
        (0..count).into_par_iter().with_min_len(grain).for_each(copy_one);
    } else {
        (0..count).for_each(copy_one);
    }
}
