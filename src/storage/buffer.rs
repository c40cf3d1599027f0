//! [`Buffer`]: the memory of one [`Storage`](super::Storage), aligned to a cache line.
//!
//! Every buffer lazy-xla allocates starts on a 64-byte boundary ([`ALIGNMENT`]), as XLA:CPU
//! aligns its own (`Align()` in `xla/backends/cpu/alignment.h`). An AVX-512 register is 64
//! bytes: in a buffer that starts 16 bytes past a line (where the system allocator puts large
//! blocks), each of its loads and stores spans two cache lines.
//!
//! A `Vec` handed over (`Literal::from_vec`) is kept as it is when it is small or already
//! aligned, and copied into an aligned buffer otherwise, written once (not zeroed first).
//!
//! A buffer of [`HUGE_PAGE`] bytes or more starts on a huge page's boundary, and on Linux asks
//! to be backed by transparent huge pages (`madvise(MADV_HUGEPAGE)`, before its first write).
//! Where the system gives huge pages only to memory that asks (`enabled` is `madvise`, the
//! usual default), a walk through such a buffer needs a TLB entry per 2 MiB rather than per
//! 4 KiB. Copies and adds between buffers gain nothing from it, so the benches' bounds (copies
//! and adds between plain `Vec`s) are still the bounds. A huge buffer's block, dropped, is
//! kept for the next huge buffer of its size (`recycled.rs`): its pages are faulted in once.

use std::alloc::Layout;
use std::ptr::NonNull;

use super::recycled;

/// The alignment of the buffers lazy-xla allocates, in bytes: a cache line, and the width of
/// an AVX-512 register.
pub(crate) const ALIGNMENT: usize = 64;

/// Buffers of at least this many bytes (a huge page of x86-64 and of AArch64 with 4 KiB pages)
/// are aligned to it and advised to be backed by huge pages.
const HUGE_PAGE: usize = 1 << 21;

/// A handed-over `Vec` of at least this many bytes is copied into an aligned buffer when it
/// is not aligned: below, vectorized loops over it are too short to pay for the copy.
const REALIGN_MIN_BYTES: usize = 1 << 14;

/// What a buffer holds: a `Copy` type (so it has no destructor) whose all-zero bits are a
/// value (`false`, 0, +0.0). The native types implement it; nothing outside the crate can
/// name it, so it also seals [`NativeType`](super::NativeType).
///
/// # Safety
/// All-zero bits must be a value of the type.
pub unsafe trait Zeroable: Copy + 'static {}

/// Elements of `T` in memory of their own: `len` initialized elements in an allocation of
/// `capacity` elements aligned to `align` bytes (none when `capacity` or `T`'s size is 0).
pub struct Buffer<T> {
    pointer: NonNull<T>,
    len: usize,
    capacity: usize,
    align: usize,
}

// SAFETY: a buffer owns its elements, as a `Vec` does: sending or sharing it sends or shares
// them, and nothing else.
unsafe impl<T: Send> Send for Buffer<T> {}
// SAFETY: as for `Send`; `&Buffer` gives only `&[T]`.
unsafe impl<T: Sync> Sync for Buffer<T> {}

impl<T: Zeroable> Buffer<T> {
    /// `len` zeros, in memory aligned to [`ALIGNMENT`] (to [`HUGE_PAGE`], and advised to be
    /// backed by huge pages, when it is that large); `None`, not an abort, when the memory
    /// cannot be had.
    pub(super) fn zeroed(len: usize) -> Option<Buffer<T>> {
        Buffer::allocated(Contents::Zeros(len))
    }

    /// `contents` in memory aligned as [`Buffer::zeroed`]'s, each element written once.
    fn allocated(contents: Contents<'_, T>) -> Option<Buffer<T>> {
        let (len, values) = match contents {
            Contents::Zeros(len) => (len, None),
            Contents::CopyOf(values) => (values.len(), Some(values)),
        };
        if len == 0 || size_of::<T>() == 0 {
            return Some(Buffer::from_vec(values.map_or_else(Vec::new, <[T]>::to_vec)));
        }
        let bytes = len.checked_mul(size_of::<T>())?;
        let huge = bytes >= HUGE_PAGE;
        let align = if huge { HUGE_PAGE } else { ALIGNMENT.max(align_of::<T>()) };
        let layout = Layout::from_size_align(bytes, align).ok()?;
        // SAFETY: `layout` has a nonzero size (len > 0 and T is not zero-sized). A null
        // result is an allocation failure, reported as `None`. Otherwise its `bytes` are
        // this buffer's own (a recycled block's too): advised (when huge) before anything
        // first writes them, then written whole, by the copy of `len` values or by zeros
        // (unless the allocator zeroed them).
        let pointer = unsafe {
            let pointer = match (huge, values) {
                (false, None) => std::alloc::alloc_zeroed(layout),
                (false, Some(_)) => std::alloc::alloc(layout),
                (true, _) => recycled::take(layout).unwrap_or_else(|| {
                    let pointer = std::alloc::alloc(layout);
                    if !pointer.is_null() {
                        advise_huge_pages(pointer, bytes);
                    }
                    pointer
                }),
            };
            if !pointer.is_null() {
                match values {
                    Some(values) => pointer.cast::<T>().copy_from_nonoverlapping(values.as_ptr(), len),
                    None if huge => pointer.write_bytes(0, bytes),
                    None => {}
                }
            }
            pointer
        };
        let pointer = NonNull::new(pointer.cast::<T>())?;
        // All-zero bits are a value of every `Zeroable` type, and copies are values: `len`
        // initialized elements in an allocation of `layout`.
        Some(Buffer { pointer, len, capacity: len, align: layout.align() })
    }

    /// `values` as a buffer: the vector itself when it is short or aligned, else a copy in
    /// aligned memory (or the vector itself when that memory cannot be had).
    pub(super) fn from_handed_over(values: Vec<T>) -> Buffer<T> {
        let bytes = values.len() * size_of::<T>();
        if bytes < REALIGN_MIN_BYTES || (values.as_ptr() as usize).is_multiple_of(ALIGNMENT) {
            return Buffer::from_vec(values);
        }
        Buffer::copy_of(&values).unwrap_or_else(|| Buffer::from_vec(values))
    }

    /// `values` copied into aligned memory, or `None` when it cannot be had.
    fn copy_of(values: &[T]) -> Option<Buffer<T>> {
        Buffer::allocated(Contents::CopyOf(values))
    }

    /// The vector's own memory as a buffer (no copy).
    fn from_vec(values: Vec<T>) -> Buffer<T> {
        let mut values = std::mem::ManuallyDrop::new(values);
        let (len, capacity) = (values.len(), values.capacity());
        // Dangling (but aligned and non-null) when the vector has no allocation.
        let pointer = NonNull::from(&mut values[..]).cast::<T>();
        Buffer { pointer, len, capacity, align: align_of::<T>() }
    }
}

impl<T> Buffer<T> {
    /// The `len` elements at `pointer`, in memory this buffer does not own (a run's heap,
    /// `exec/heap.rs`): dropping it frees nothing, and cloning it copies them into memory of
    /// the clone's own.
    ///
    /// # Safety
    /// `pointer` is aligned for `T` and holds `len` initialized elements, and the memory stays
    /// allocated, and is used through nothing else, for as long as the buffer lives.
    pub(crate) unsafe fn borrowed(pointer: NonNull<T>, len: usize) -> Buffer<T> {
        Buffer { pointer, len, capacity: 0, align: 0 }
    }

    /// Whether the buffer owns its memory (a borrowed one does not, nor does an empty one).
    pub(crate) fn owns_memory(&self) -> bool {
        self.capacity > 0
    }
}

/// What a new buffer holds.
enum Contents<'a, T> {
    /// This many zeros.
    Zeros(usize),
    /// Copies of these values.
    CopyOf(&'a [T]),
}

/// Asks Linux to back the `bytes` at `start` with transparent huge pages. A hint: refused
/// advice (a kernel without them, or with them off) leaves ordinary pages, and other systems
/// are not asked.
fn advise_huge_pages(start: *mut u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    // SAFETY: `madvise` reads no memory and changes no value; `MADV_HUGEPAGE` only marks how
    // the range's pages are backed. The result is ignored: the advice is a hint.
    unsafe {
        libc::madvise(start.cast(), bytes, libc::MADV_HUGEPAGE);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, bytes);
}

impl<T> std::ops::Deref for Buffer<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        // SAFETY: `pointer` holds `len` initialized elements (or is dangling, aligned and
        // non-null for `len` = 0), owned by `self` for as long as the borrow.
        unsafe { std::slice::from_raw_parts(self.pointer.as_ptr(), self.len) }
    }
}

impl<T> std::ops::DerefMut for Buffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as for `deref`, and `&mut self` borrows the elements uniquely.
        unsafe { std::slice::from_raw_parts_mut(self.pointer.as_ptr(), self.len) }
    }
}

impl<T> Drop for Buffer<T> {
    fn drop(&mut self) {
        if self.capacity == 0 || size_of::<T>() == 0 {
            return;
        }
        // SAFETY: the allocation was made with this layout: `capacity` elements at `align`
        // (by `zeroed`, or by the `Vec` that `from_vec` took it from, with `T`'s alignment).
        // Buffers are built of `Zeroable` (so `Copy`) types only, which have no destructors
        // to run.
        // Huge blocks are kept for the next buffer of their size.
        unsafe {
            let layout = Layout::from_size_align_unchecked(self.capacity * size_of::<T>(), self.align);
            match self.align {
                HUGE_PAGE => recycled::give_back(self.pointer.as_ptr().cast(), layout),
                _ => std::alloc::dealloc(self.pointer.as_ptr().cast(), layout),
            }
        }
    }
}

impl<T: Zeroable> Clone for Buffer<T> {
    /// A copy in aligned memory (or in a `Vec` when that cannot be had).
    fn clone(&self) -> Buffer<T> {
        Buffer::copy_of(self).unwrap_or_else(|| Buffer::from_vec(self.to_vec()))
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl<T: PartialEq> PartialEq for Buffer<T> {
    fn eq(&self, other: &Buffer<T>) -> bool {
        **self == **other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocated_buffers_are_aligned_zeroed_and_freed_whatever_their_length() {
        for len in [0usize, 1, 3, 16, 1000, 1 << 16] {
            let mut buffer = Buffer::<f32>::zeroed(len).unwrap();
            assert_eq!(buffer.len(), len);
            assert!(buffer.iter().all(|&v| v == 0.0));
            assert!(len == 0 || (buffer.as_ptr() as usize).is_multiple_of(ALIGNMENT), "{len}");
            buffer.iter_mut().enumerate().for_each(|(k, v)| *v = k as f32);
            let copy = buffer.clone();
            assert_eq!(copy, buffer);
            assert!(len == 0 || (copy.as_ptr() as usize).is_multiple_of(ALIGNMENT), "{len}");
        }
        assert!(Buffer::<u8>::zeroed(usize::MAX).is_none());
    }

    #[test]
    fn large_buffers_start_on_a_huge_page_and_ask_for_huge_pages() {
        for len in [HUGE_PAGE / 4, HUGE_PAGE / 4 + 3, 5 * HUGE_PAGE / 4] {
            let mut buffer = Buffer::<f32>::zeroed(len).unwrap();
            assert!((buffer.as_ptr() as usize).is_multiple_of(HUGE_PAGE), "{len}");
            assert!(buffer.iter().all(|&v| v == 0.0));
            buffer.iter_mut().enumerate().for_each(|(k, v)| *v = k as f32);
            assert_eq!(buffer[len - 1], (len - 1) as f32);
            // A copy is aligned (and advised) as any large buffer.
            let copy = buffer.clone();
            assert!((copy.as_ptr() as usize).is_multiple_of(HUGE_PAGE), "{len}");
            assert_eq!(copy, buffer);
            // Where the kernel has huge pages and reports its mappings' flags.
            #[cfg(target_os = "linux")]
            if std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
                if let Some(flags) = mapping_flags(buffer.as_ptr() as usize) {
                    assert!(flags.split_whitespace().any(|f| f == "hg"), "{len}: VmFlags {flags}");
                }
            }
        }
        // One byte short of a huge page: a cache line's alignment is enough.
        let below = Buffer::<u8>::zeroed(HUGE_PAGE - 1).unwrap();
        assert!((below.as_ptr() as usize).is_multiple_of(ALIGNMENT));
        assert!(below.iter().all(|&v| v == 0));
    }

    /// The `VmFlags` of the mapping holding `address`, from `/proc/self/smaps` (`hg`: advised
    /// to use huge pages); `None` where the kernel reports no flags.
    #[cfg(target_os = "linux")]
    fn mapping_flags(address: usize) -> Option<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut inside = false;
        for line in smaps.lines() {
            // A mapping's first line starts with its range, `start-end` in hexadecimal.
            let range = line.split_whitespace().next().and_then(|field| field.split_once('-'));
            if let Some((Ok(start), Ok(end))) =
                range.map(|(start, end)| (usize::from_str_radix(start, 16), usize::from_str_radix(end, 16)))
            {
                inside = (start..end).contains(&address);
                continue;
            }
            if let Some(flags) = line.strip_prefix("VmFlags:").filter(|_| inside) {
                return Some(flags.to_string());
            }
        }
        assert!(!smaps.contains("VmFlags:"), "no mapping holds {address:#x}");
        None
    }

    #[test]
    fn handed_over_vectors_are_kept_when_short_or_aligned_and_copied_aligned_otherwise() {
        // Short: kept, wherever it lies.
        let short: Vec<u8> = (0..100).collect();
        let at = short.as_ptr();
        let kept = Buffer::from_handed_over(short);
        assert_eq!(kept.as_ptr(), at);
        assert_eq!(*kept, (0..100).collect::<Vec<u8>>()[..]);
        // Long: aligned afterwards, and the vector itself if it was aligned. (The system
        // allocator puts large blocks 16 bytes past a line; the copy is then always taken.)
        for len in [REALIGN_MIN_BYTES / 4, 1 << 20] {
            let values: Vec<f32> = (0..len).map(|k| k as f32).collect();
            let (at, expected) = (values.as_ptr(), values.clone());
            let buffer = Buffer::from_handed_over(values);
            assert!((buffer.as_ptr() as usize).is_multiple_of(ALIGNMENT), "{len}");
            assert!(!(at as usize).is_multiple_of(ALIGNMENT) || buffer.as_ptr() == at);
            assert_eq!(*buffer, expected[..]);
        }
        // An empty vector has no allocation to free.
        assert!(Buffer::<f64>::from_handed_over(Vec::new()).is_empty());
    }
}
