//! The kernels of the unfused executor: one function per op family, each writing one
//! instruction's output from its operands' buffers.

pub(crate) mod contraction;
pub(crate) mod data_movement;

use crate::exec::strided::{for_each_row, View};
use crate::Shape;

/// Writes `f(offsets)` at every element of `out` (laid out as `out_shape`), where `offsets[k]`
/// is the element's position in operand `k` as read through `views[k]` (at most three).
pub(crate) fn map_elements<U: Send>(
    out_shape: &Shape,
    out: &mut [U],
    views: &[View],
    parallel: bool,
    f: impl Fn(&[usize; 3]) -> U + Sync,
) {
    debug_assert!(views.len() <= 3);
    for_each_row(out_shape, out, views, parallel, |chunk, row, steps| {
        let mut offsets = [0usize; 3];
        for i in 0..row.len {
            for (k, offset) in offsets.iter_mut().enumerate().take(views.len()) {
                *offset = (row.starts[k] + i as isize * steps.operands[k]) as usize;
            }
            chunk[row.out_start + i * steps.out] = f(&offsets);
        }
    });
}
