//! Software prefetch of the lines a work item writes, for walks that read an input transposed,
//! a page apart per element (see `reorder_for_gathers`). There an item writes each of its
//! rows a few lines at a time, in as many streams as it has rows, far more than the hardware
//! prefetchers follow, so every store would wait on its line in turn. Asking for the next
//! item's lines of the output while the current one computes overlaps those waits.
//!
//! Not its inputs' lines, since their transposed tiles go through registers
//! (`chunk_ops/transpose.rs`): asking for those too is slower, even for an `f64` transpose,
//! whose columns are read one element at a time.
//!
//! And the lines a later item of a walk with row reductions reads, asked for a block at a
//! time as a chain computes the current one ([`Ahead`]): there each tile of rows is read from
//! memory once by its first pass (softmax's row maxima), then computed on in cache by the
//! next ones, so memory idles while they compute unless a later tile's lines are fetched
//! meanwhile.

use super::chunk::Chunk;

/// The bytes of a cache line.
const LINE_BYTES: usize = 64;

/// A buffer whose lines a chunk reads or writes: its first byte, its length in elements, and
/// their size.
#[derive(Clone, Copy)]
pub(super) struct Lines {
    pub(super) base: *const u8,
    pub(super) len: usize,
    pub(super) element_bytes: usize,
}

/// Asks the cache for every line of `buffer` holding an element of `chunk`, element (r, i) at
/// index `start + r·steps[0] + i·steps[1]`, into L1. A hint only: it changes no value, and on
/// other CPUs than x86-64 does nothing.
pub(super) fn prefetch(buffer: Lines, start: isize, steps: [isize; 2], chunk: Chunk) {
    each_line(buffer, start, steps, chunk, |offset| request(buffer.base, offset));
}

/// How far ahead of its start's values a chain asks for lines as it computes (see the
/// module's notes): the same values `distance` bytes further on, where an item
/// [`AHEAD_ITEMS`] later reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Ahead {
    pub(super) distance: usize,
}

/// The items ahead of the current one whose lines a chain asks for: two gain more than one,
/// and more gain nothing. Maps without row reductions, which gain nothing, do not ask.
pub(super) const AHEAD_ITEMS: usize = 2;

impl Ahead {
    /// Asks for the lines `distance` bytes past each line of the `bytes` bytes from `from`,
    /// into L1. A hint only: whatever the address (past the buffer's end too), it changes no
    /// value.
    #[inline(always)]
    pub(super) fn request(self, from: *const u8, bytes: usize) {
        for offset in (0..bytes).step_by(LINE_BYTES) {
            request(from, self.distance + offset);
        }
    }
}

/// Calls `request` with the byte offset of an element of `chunk` (placed as [`prefetch`]
/// says) on every line of `buffer` that holds one: once per line along the direction in which
/// the chunk is contiguous (its rows, or its columns for a transposed input), plus once at the
/// end of each run along it. Elements outside the buffer are skipped.
fn each_line(buffer: Lines, start: isize, steps: [isize; 2], chunk: Chunk, mut request: impl FnMut(usize)) {
    if chunk.count() == 0 {
        return;
    }
    let size = buffer.element_bytes as isize;
    // Each direction's count of distinct elements (one along a step of 0) and step. Runs go
    // along the one of the shorter step that has several: `along` elements `step` apart,
    // `runs` of them `run_step` apart.
    let [rows, columns] =
        [(chunk.rows, steps[0]), (chunk.len, steps[1])].map(|(n, s)| (if s == 0 { 1 } else { n }, s));
    let rows_along = rows.0 > 1 && (columns.0 == 1 || rows.1.abs() < columns.1.abs());
    let ((along, step), (runs, run_step)) = if rows_along { (rows, columns) } else { (columns, rows) };
    // Elements between requests along a run: a line's worth, or each one when farther apart.
    let per_request = (LINE_BYTES / (step * size).unsigned_abs().max(1)).max(1);
    let elements = buffer.len as isize;
    // Whether the chunk's extreme elements, and so all, lie in the buffer: then no run is cut
    // (the divisions cutting them cost more than the requests).
    let extent = |count: usize, step: isize| (count as isize - 1) * step;
    let (ends_a, ends_b) = (extent(along, step), extent(runs, run_step));
    let lowest = start + ends_a.min(0) + ends_b.min(0);
    let highest = start + ends_a.max(0) + ends_b.max(0);
    let whole = lowest >= 0 && highest < elements;
    for run in 0..runs as isize {
        let first = start + run * run_step;
        let cut = if whole { Some((0, along as isize - 1)) } else { inside(first, step, along, elements) };
        let Some((low, high)) = cut else { continue };
        // The run's last element too, which may begin a line the requests stepped past.
        let last = (!((high - low) as usize).is_multiple_of(per_request)).then_some(high);
        for k in (low..=high).step_by(per_request).chain(last) {
            // In the buffer (`whole`, or cut by `inside`), so not negative.
            request(((first + k * step) * size) as usize);
        }
    }
}

/// The first and last `k < count` for which `first + k·step` lies in `0..elements` (they are
/// consecutive, as the elements move one way); `None` if no `k` does.
fn inside(first: isize, step: isize, count: usize, elements: isize) -> Option<(isize, isize)> {
    let last_element = elements - 1;
    // `k·step ≥ -first` and `k·step ≤ last_element - first`, solved for `k`.
    let (low, high) = match step.signum() {
        0 => return (0..elements).contains(&first).then_some((0, 0)),
        1 => (ceil_div(-first, step), (last_element - first).div_euclid(step)),
        _ => (ceil_div(first - last_element, -step), first.div_euclid(-step)),
    };
    let (low, high) = (low.max(0), high.min(count as isize - 1));
    (low <= high).then_some((low, high))
}

/// `⌈a / b⌉` for `b > 0`.
fn ceil_div(a: isize, b: isize) -> isize {
    -(-a).div_euclid(b)
}

/// Asks for the line holding byte `offset` from `base`, into L1 (to be written, or read soon).
#[inline(always)]
fn request(base: *const u8, offset: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let address = base.wrapping_add(offset).cast::<i8>();
        // SAFETY: SSE is part of every x86-64 CPU, and a prefetch accesses no memory (it
        // cannot fault, whatever the address; `each_line` keeps it in the buffer anyway, and
        // the address is made with `wrapping_add`, so it may lie past any allocation). Not
        // `_MM_HINT_ET0`: without the `prfchw` feature, which the build does not assume, it
        // compiles to this same `prefetcht0`.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(address) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (base, offset);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Over contiguous, transposed, broadcast, reversed and scattered chunks of 1-, 2-, 4- and
    /// 8-byte elements, placed so that some fall outside the buffer, at three alignments of
    /// the buffer to a line: every line holding an element in the buffer is requested, every
    /// request lies in the buffer, there are no more requests than elements, and where runs
    /// share no line, at most one more per run than lines.
    #[test]
    fn every_line_of_a_chunk_is_requested_once_and_only_in_the_buffer() {
        let step_pairs: [[isize; 2]; 9] =
            [[70, 1], [1, 1100], [0, 1], [1, 0], [0, 0], [-70, -1], [-1, 1100], [3, 5], [1100, 1]];
        for element_bytes in [1, 2, 4, 8] {
            for steps in step_pairs {
                for (rows, len) in [(1, 1), (1, 70), (32, 64), (5, 3), (17, 1)] {
                    for start in [0isize, 37, 5000, 90_000] {
                        for misalignment in [0, 4, 60] {
                            let buffer = Lines { base: std::ptr::null(), len: 100_000, element_bytes };
                            let chunk = Chunk { rows, len };
                            let line = |offset: usize| (offset + misalignment) / LINE_BYTES;
                            let mut requested = Vec::new();
                            each_line(buffer, start, steps, chunk, |offset| requested.push(offset));
                            let case =
                                format!("{element_bytes} bytes, steps {steps:?}, {rows}×{len} from {start}");
                            let bytes = buffer.len * element_bytes;
                            assert!(requested.iter().all(|&offset| offset < bytes), "{case}");
                            let lines: BTreeSet<usize> =
                                requested.iter().map(|&offset| line(offset)).collect();
                            let mut expected = BTreeSet::new();
                            for r in 0..rows as isize {
                                for i in 0..len as isize {
                                    let element = start + r * steps[0] + i * steps[1];
                                    if let Some(offset) = usize::try_from(element * element_bytes as isize)
                                        .ok()
                                        .filter(|&offset| offset < bytes)
                                    {
                                        expected.insert(line(offset));
                                    }
                                }
                            }
                            assert_eq!(lines, expected, "{case}");
                            assert!(requested.len() <= rows * len, "{case}: {}", requested.len());
                            // Runs that share no line: at most one request more than a line each.
                            if steps.iter().any(|s| s.abs() <= 1) {
                                let runs = rows.max(len);
                                assert!(
                                    requested.len() <= expected.len() + runs,
                                    "{case}: {}",
                                    requested.len()
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// Prefetching reads nothing: requests for lines of a live buffer, at its edges and past
    /// them, leave it as it was (the instructions run here on x86-64).
    #[test]
    fn prefetching_a_buffer_changes_nothing() {
        let values: Vec<f32> = (0..3000).map(|i| i as f32).collect();
        let lines =
            Lines { base: values.as_ptr().cast(), len: values.len(), element_bytes: size_of::<f32>() };
        for (steps, chunk) in
            [([1024, 1], Chunk { rows: 2, len: 1000 }), ([1, 1000], Chunk { rows: 3, len: 3 })]
        {
            prefetch(lines, 0, steps, chunk);
            prefetch(lines, 2999, steps.map(|s| -s), chunk);
        }
        // A chain's requests ahead: in the buffer, from its last line, and a gibibyte past it.
        for distance in [0, 64, 1 << 30] {
            Ahead { distance }.request(values.as_ptr().cast(), 3000 * size_of::<f32>());
            Ahead { distance }.request(values[2990..].as_ptr().cast(), 10 * size_of::<f32>());
        }
        assert!(values.iter().enumerate().all(|(i, &v)| v == i as f32));
    }
}
