//! Huge blocks that dropped buffers gave back, kept for the next buffer of the same size.
//!
//! A plan run again and again (a training loop, a benchmark) allocates its large outputs anew
//! each run. Memory fresh from the system is faulted in and cleared by the kernel page by page
//! on its first write; a block kept here was faulted in already and is still advised, as an
//! accelerator runtime's allocator keeps its blocks. The cache holds at most
//! [`RECYCLED_BYTES`]: a block that would overflow it goes back to the system.

use std::alloc::Layout;
use std::sync::Mutex;

/// The most bytes the cache keeps.
const RECYCLED_BYTES: usize = 256 << 20;

/// The kept blocks, as (address, layout), and their bytes in all.
static RECYCLED: Mutex<(Vec<(usize, Layout)>, usize)> = Mutex::new((Vec::new(), 0));

/// A kept block of exactly `layout`, if there is one: the caller owns it, as if the global
/// allocator had just returned it (its contents are whatever the last owner left).
pub(super) fn take(layout: Layout) -> Option<*mut u8> {
    let mut recycled = RECYCLED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let (blocks, bytes) = &mut *recycled;
    let at = blocks.iter().rposition(|&(_, kept)| kept == layout)?;
    let (address, _) = blocks.swap_remove(at);
    *bytes -= layout.size();
    Some(address as *mut u8)
}

/// Keeps the block at `pointer` (allocated by the global allocator with `layout`, owned by
/// the caller, not used by it again) for a later [`take`], or frees it where the cache is full.
///
/// # Safety
/// As [`std::alloc::dealloc`]'s: `pointer` was allocated with `layout` and is not used again.
pub(super) unsafe fn give_back(pointer: *mut u8, layout: Layout) {
    let mut recycled = RECYCLED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let (blocks, bytes) = &mut *recycled;
    if *bytes + layout.size() <= RECYCLED_BYTES {
        blocks.push((pointer as usize, layout));
        *bytes += layout.size();
    } else {
        drop(recycled);
        // SAFETY: the caller's guarantee.
        unsafe { std::alloc::dealloc(pointer, layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_given_back_is_taken_again_by_its_own_layout_only() {
        // An odd size of its own, so no other test's blocks answer for it.
        let layout = Layout::from_size_align(3 << 21 | 4096, 1 << 21).unwrap();
        // SAFETY: a nonzero layout; the block is handed to the cache and not used again.
        let pointer = unsafe { std::alloc::alloc(layout) };
        assert!(!pointer.is_null());
        unsafe { give_back(pointer, layout) };
        let other = Layout::from_size_align(layout.size() + 64, layout.align()).unwrap();
        assert_eq!(take(other), None);
        assert_eq!(take(layout), Some(pointer));
        assert_eq!(take(layout), None);
        // SAFETY: taken, so owned here again.
        unsafe { std::alloc::dealloc(pointer, layout) };
    }

    #[test]
    fn the_cache_frees_what_would_overflow_it() {
        let layout = Layout::from_size_align(RECYCLED_BYTES + 4096, 1 << 21).unwrap();
        // SAFETY: as above; the block is larger than the cache, so it is freed at once.
        let pointer = unsafe { std::alloc::alloc(layout) };
        assert!(!pointer.is_null());
        unsafe { give_back(pointer, layout) };
        assert_eq!(take(layout), None);
    }
}
