//! The heap of one run: one allocation holding every temporary buffer the plan placed in it
//! (`buffer_assignment.rs`), handed out as literals that are views of their bytes.
//!
//! A heap's memory is a freed one of the same size when one was kept (a run after the first
//! allocates nothing for its temporaries), else fresh; it goes back to be kept when the run
//! ends. A view's memory is the heap's: the plan drops every view before the heap (a run's
//! values before its heap, and the buffers its result holds are never views), and views that
//! share bytes are never live at once (the assignment's promise).

use std::ptr::NonNull;

use crate::element_type::ElementType;
use crate::error::{Error, Result};
use crate::exec::buffer_assignment::HEAP_ALIGNMENT;
use crate::literal::Literal;
use crate::shape::Shape;
use crate::storage::{recycle, with_native_type, Storage};

/// The memory of one run's temporaries.
pub(crate) struct Heap {
    /// The bytes, as `u8` storage (so a freed heap is kept for reuse as any large buffer is).
    storage: Storage,
    /// Where they start: taken once, so that views are made without borrowing `storage`.
    base: NonNull<u8>,
    len: usize,
}

impl Heap {
    /// A heap of `bytes` (none for 0), or an error when the memory cannot be had.
    pub(crate) fn new(bytes: u64) -> Result<Heap> {
        let len = usize::try_from(bytes).map_err(|_| Error::invalid(format!("a heap of {bytes} bytes")))?;
        let mut storage = Storage::for_overwrite(ElementType::U8, len)?;
        let base = NonNull::new(storage.as_mut_slice::<u8>()?.as_mut_ptr()).unwrap_or(NonNull::dangling());
        Ok(Heap { storage, base, len })
    }

    /// A literal of `shape` (an array) over the heap's bytes from `offset`, its elements
    /// arbitrary (they are about to be overwritten) and its padding filled.
    ///
    /// # Safety
    /// The literal is dropped before the heap, and while it lives no other literal over any of
    /// its bytes is used.
    pub(crate) unsafe fn literal(&self, offset: u64, shape: &Shape) -> Result<Literal> {
        let len = usize::try_from(shape.buffer_len())
            .map_err(|_| Error::invalid(format!("a buffer of {shape}")))?;
        let bytes = len.checked_mul(shape.element_type().byte_size());
        let start = usize::try_from(offset).ok();
        let fits = start
            .zip(bytes)
            .and_then(|(start, bytes)| start.checked_add(bytes))
            .is_some_and(|end| end <= self.len);
        if !fits || !offset.is_multiple_of(HEAP_ALIGNMENT) {
            return Err(Error::invalid(format!(
                "a buffer of {shape} at offset {offset} does not fit a heap of {} bytes",
                self.len
            )));
        }
        let pointer = match len {
            // An empty buffer needs a pointer aligned for its type only, not memory.
            0 => with_native_type!(shape.element_type(), T => NonNull::<T>::dangling().cast::<u8>()),
            // SAFETY: `offset + bytes` lies in the heap's allocation (checked above).
            _ => unsafe { self.base.add(offset as usize) },
        };
        // SAFETY: the bytes lie in the heap (checked above), are initialized (a heap's memory
        // is zeroed when new, and holds elements written since), aligned for every element
        // type (the heap starts on a cache line and `offset` is a multiple of one), and the
        // caller keeps the literal to itself and within the heap's life.
        let storage = unsafe { Storage::borrowed(shape.element_type(), pointer, len) };
        Literal::over(shape, storage)
    }
}

impl Drop for Heap {
    fn drop(&mut self) {
        recycle(std::mem::replace(&mut self.storage, Storage::empty()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_write_where_they_are_placed_and_refuse_what_does_not_fit() {
        let heap = Heap::new(256).unwrap();
        let shape = Shape::new(ElementType::F32, &[4]);
        let (mut a, mut b) = unsafe { (heap.literal(0, &shape).unwrap(), heap.literal(64, &shape).unwrap()) };
        a.storage_mut().unwrap().as_mut_slice::<f32>().unwrap().copy_from_slice(&[1.0, 2.0, 3.0, 4.0]);
        b.storage_mut().unwrap().as_mut_slice::<f32>().unwrap().copy_from_slice(&[5.0; 4]);
        assert_eq!(a.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
        // A clone owns its copy; dropping the views frees nothing of the heap's.
        let copy = a.clone();
        drop((a, b));
        assert_eq!(copy.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
        let again = unsafe { heap.literal(0, &shape).unwrap() };
        assert_eq!(
            again.to_vec::<f32>().unwrap(),
            vec![1.0, 2.0, 3.0, 4.0],
            "the heap's bytes are still there"
        );
        drop(again);
        // Past the end, misaligned, or empty.
        assert!(unsafe { heap.literal(248, &shape) }.is_err());
        assert!(unsafe { heap.literal(4, &shape) }.is_err());
        assert!(unsafe { heap.literal(u64::MAX - 63, &shape) }.is_err());
        let empty = unsafe { heap.literal(256, &Shape::new(ElementType::F64, &[0, 3])).unwrap() };
        assert_eq!(empty.to_vec::<f64>().unwrap(), Vec::<f64>::new());
        assert!(unsafe { Heap::new(0).unwrap().literal(0, &Shape::new(ElementType::S8, &[0])) }.is_ok());
    }
}
