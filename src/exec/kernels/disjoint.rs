//! A buffer that several threads write at once, each at elements no other thread touches:
//! what kernels whose threads own interleaved parts of an output (blocks of columns, rows of
//! a strided layout, scattered windows) share instead of `&mut` slices, which cannot
//! interleave.

use std::marker::PhantomData;

/// A mutable buffer shared by threads that write disjoint elements of it.
pub(crate) struct DisjointWrites<'a, T> {
    elements: *mut T,
    len: usize,
    buffer: PhantomData<&'a mut [T]>,
}

// SAFETY: the pointer comes from a `&'a mut [T]` held for the value's life, and every access
// through it is an `unsafe` method whose callers guarantee no two threads meet at an element.
unsafe impl<T: Send> Sync for DisjointWrites<'_, T> {}

impl<'a, T> DisjointWrites<'a, T> {
    pub(crate) fn new(buffer: &'a mut [T]) -> Self {
        DisjointWrites { elements: buffer.as_mut_ptr(), len: buffer.len(), buffer: PhantomData }
    }

    /// Writes `value` at `index`, if inside.
    ///
    /// # Safety
    /// No other thread may access `index` while the buffer is shared.
    pub(crate) unsafe fn write(&self, index: usize, value: T) {
        if index < self.len {
            // SAFETY: `index` is inside the buffer; the caller guarantees no other access.
            unsafe { self.elements.add(index).write(value) };
        }
    }

    /// The `len` elements from `start`, if inside.
    ///
    /// # Safety
    /// No other thread may access them while the slice lives.
    #[allow(clippy::mut_from_ref)] // disjoint parts of one buffer, each handed to one thread
    pub(crate) unsafe fn part(&self, start: usize, len: usize) -> Option<&mut [T]> {
        let inside = start.checked_add(len).is_some_and(|end| end <= self.len);
        // SAFETY: the range is inside the buffer; the caller guarantees no other access.
        inside.then(|| unsafe { std::slice::from_raw_parts_mut(self.elements.add(start), len) })
    }

    /// The pointer to element `start`, if the `len` elements from it are inside, for a kernel
    /// that writes some of them through strides.
    ///
    /// # Safety
    /// The caller writes only elements of the span that no other thread accesses.
    pub(crate) unsafe fn span(&self, start: usize, len: usize) -> Option<*mut T> {
        let inside = start.checked_add(len).is_some_and(|end| end <= self.len);
        // SAFETY: `start` is inside the buffer (or one past it, for an empty span).
        inside.then(|| unsafe { self.elements.add(start) })
    }

    /// The pointer to element `start`, if inside, for a kernel that writes through strides.
    ///
    /// # Safety
    /// The caller writes only elements inside the buffer that no other thread accesses.
    pub(crate) unsafe fn pointer(&self, start: usize) -> Option<*mut T> {
        // SAFETY: `start` is inside the buffer.
        (start < self.len).then(|| unsafe { self.elements.add(start) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    #[test]
    fn threads_write_interleaved_elements_and_nothing_outside() {
        let mut buffer = vec![0u32; 1001];
        let shared = DisjointWrites::new(&mut buffer);
        (0..2usize).into_par_iter().for_each(|parity| {
            for i in (parity..1001 + 8).step_by(2) {
                // SAFETY: the two threads write the even and the odd elements apart.
                unsafe { shared.write(i, i as u32 + 1) };
            }
        });
        // SAFETY: no other thread holds the buffer now.
        unsafe {
            assert!(shared.part(1000, 2).is_none());
            assert!(shared.part(1001, 0).is_some_and(|p| p.is_empty()));
            assert!(shared.pointer(1001).is_none());
            assert_eq!(shared.part(999, 2).unwrap(), &[1000, 1001]);
        }
        assert!(buffer.iter().enumerate().all(|(i, &v)| v == i as u32 + 1));
        let mut empty: Vec<u8> = Vec::new();
        let shared = DisjointWrites::new(&mut empty);
        // SAFETY: one thread.
        unsafe {
            shared.write(0, 1);
            assert!(shared.pointer(0).is_none());
        }
    }
}
