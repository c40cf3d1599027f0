//! The output a run writes, shared by its threads: each writes only its own items.

use super::chunk::Operand;
use super::chunk_ops::{self, fold_in_chunks};
use crate::attributes::BinaryOp;
use crate::error::Result;
use crate::exec::element::{with_binary_fn, Element};
use crate::literal::Literal;
use crate::shape::Shape;
use crate::storage::with_native_type;

/// The output buffer, shared by the threads of one run; each writes only its own items.
pub(super) struct OutTarget<T> {
    pub(super) ptr: *mut T,
    pub(super) len: usize,
}

// SAFETY: `OutTarget` is only a pointer to the output buffer, which outlives the run; the
// threads of a run write disjoint elements (see `store`), and nothing reads through it.
unsafe impl<T: Send> Send for OutTarget<T> {}
// SAFETY: as above: concurrent use only ever writes disjoint elements.
unsafe impl<T: Send> Sync for OutTarget<T> {}

/// A loop's output that threads computing disjoint rows of it share
/// ([`LoopProgram::run_rows`](super::LoopProgram::run_rows)): its shape and its memory, borrowed for `'a`.
pub(crate) struct SharedOutput<'a> {
    pub(super) shape: Shape,
    pub(super) ptr: *mut u8,
    /// Its length in elements.
    pub(super) len: usize,
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
    pub(super) fn check(&self, offset: isize, stride: isize, len: usize) {
        let last = offset + (len as isize - 1) * stride;
        assert!(
            offset >= 0 && last >= 0 && (offset.max(last) as usize) < self.len,
            "a loop program writes inside its output"
        );
    }

    /// Combines `rows` rows of `len` values, one after another, into the `len` elements from
    /// `offset` on with `op` (a reduction that keeps the row: a column sum's tile).
    pub(super) fn accumulate_rows(
        &self,
        op: BinaryOp,
        offset: isize,
        values: Operand<'_, T>,
        rows: usize,
        len: usize,
    ) {
        self.check(offset, 1, len);
        // SAFETY: `offset..offset + len` lies in the buffer (checked above), live for the run,
        // and given to this thread alone by the run's partition.
        let acc = unsafe { std::slice::from_raw_parts_mut(self.ptr.add(offset as usize), len) };
        chunk_ops::accumulate(op, acc, values, rows);
    }

    /// Combines `len` values into the elements at `offset + i·stride` with `op` (a reduction;
    /// stride 0 folds the whole chunk into one element).
    pub(super) fn accumulate(
        &self,
        op: BinaryOp,
        offset: isize,
        stride: isize,
        values: Operand<'_, T>,
        len: usize,
    ) {
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
    pub(super) fn store(&self, offset: isize, stride: isize, values: Operand<'_, T>, len: usize) {
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

/// `*element = g(*element)`.
///
/// # Safety
/// `element` points to a live, initialized `T` that nothing else accesses meanwhile.
#[inline(always)]
unsafe fn read_modify_write<T>(element: *mut T, g: impl FnOnce(T) -> T) {
    // SAFETY: the caller's guarantee.
    unsafe { element.write(g(element.read())) }
}
