//! Index math (XLA's `IndexUtil`): multidimensional index ↔ position in a shape's buffer, for
//! any layout and padding, and the strides that the executor reads arrays through.

use crate::error::{invalid_argument, Result};
use crate::shape::Shape;

impl Shape {
    /// The stride of every dimension, in elements of the buffer, in dimension order: the
    /// product of the (padded) sizes of the dimensions more minor than it. This one fact is how
    /// the executor walks any layout.
    ///
    /// ```
    /// use lazy_xla::shape;
    /// assert_eq!(shape!(f32[2, 3]).strides(), vec![3, 1]);
    /// assert_eq!(shape!(f32[2, 3]{0, 1}).strides(), vec![1, 2]);
    /// let padded: lazy_xla::Shape = "f32[2,3]{0,1:pad(3,5)=zero}".parse()?;
    /// assert_eq!(padded.strides(), vec![1, 3]);
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn strides(&self) -> Vec<i64> {
        let sizes = self.padded_sizes();
        let mut strides = vec![0; self.rank()];
        let mut stride = 1i64;
        for &dim in self.layout().minor_to_major() {
            strides[dim as usize] = stride;
            // The padded product was checked when the shape was made, so this fits, unless a
            // zero-sized dimension made that product 0: then no element exists to be reached
            // through a stride, and saturating keeps the (unused) strides from overflowing.
            stride = stride.saturating_mul(sizes[dim as usize]);
        }
        strides
    }

    /// The size of every dimension in the buffer: the padded size where the layout pads, the
    /// dimension's size elsewhere.
    ///
    /// ```
    /// let padded: lazy_xla::Shape = "f32[2,3]{1,0:pad(3,5)=zero}".parse()?;
    /// assert_eq!(padded.padded_sizes(), &[3, 5]);
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn padded_sizes(&self) -> &[i64] {
        self.layout().padded_dimensions().unwrap_or(self.dimensions())
    }

    /// The position in the buffer of the element at `index` (XLA's
    /// `MultidimensionalIndexToLinearIndex`, generalized to padding).
    ///
    /// ```
    /// use lazy_xla::shape;
    /// // a b c / d e f, column-major: memory is a d b e c f, so `f` ([1, 2]) is at 5.
    /// assert_eq!(shape!(f32[2, 3]{0, 1}).linear_index(&[1, 2])?, 5);
    /// assert_eq!(shape!(f32[2, 3]{1, 0}).linear_index(&[1, 0])?, 3);
    /// assert!(shape!(f32[2, 3]).linear_index(&[2, 0]).is_err());
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn linear_index(&self, index: &[i64]) -> Result<i64> {
        if self.is_tuple() {
            invalid_argument!("a tuple shape has no elements to index: {self}");
        }
        if index.len() != self.rank() {
            invalid_argument!(
                "index [{}] has {} entries but shape {self} has rank {}",
                crate::shape::layout::join(index),
                index.len(),
                self.rank()
            );
        }
        let mut linear = 0;
        for (d, ((&i, &size), stride)) in index.iter().zip(self.dimensions()).zip(self.strides()).enumerate()
        {
            if !(0..size).contains(&i) {
                invalid_argument!(
                    "index [{}] is out of bounds in dimension {d} (size {size}) of shape {self}",
                    crate::shape::layout::join(index)
                );
            }
            linear += i * stride;
        }
        Ok(linear)
    }

    /// The multidimensional index of the element at buffer position `linear` (XLA's
    /// `LinearIndexToMultidimensionalIndex`, generalized to padding). A position that holds
    /// padding, or lies outside the buffer, is an error.
    ///
    /// ```
    /// use lazy_xla::shape;
    /// assert_eq!(shape!(f32[2, 3]{0, 1}).multi_index(5)?, vec![1, 2]);
    /// let padded: lazy_xla::Shape = "f32[2,3]{0,1:pad(3,5)=zero}".parse()?;
    /// assert_eq!(padded.multi_index(3)?, vec![0, 1]);
    /// assert!(padded.multi_index(2).is_err()); // padding
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn multi_index(&self, linear: i64) -> Result<Vec<i64>> {
        if !(0..self.buffer_len()).contains(&linear) {
            invalid_argument!(
                "linear index {linear} is out of bounds for shape {self} ({} elements in its buffer)",
                self.buffer_len()
            );
        }
        let sizes = self.padded_sizes();
        let mut index = vec![0; self.rank()];
        let mut rest = linear;
        for &dim in self.layout().minor_to_major() {
            let dim = dim as usize;
            index[dim] = rest % sizes[dim];
            rest /= sizes[dim];
            if index[dim] >= self.dimensions()[dim] {
                invalid_argument!(
                    "linear index {linear} of shape {self} holds padding (dimension {dim} at {})",
                    index[dim]
                );
            }
        }
        Ok(index)
    }

    /// The buffer positions of every element, in logical row-major order (the last dimension
    /// fastest), whatever the layout.
    pub(crate) fn row_major_offsets(&self) -> RowMajorOffsets {
        RowMajorOffsets::new(self.dimensions(), &self.strides())
    }
}

/// Iterates the buffer positions of a strided array's elements in logical row-major order.
pub(crate) struct RowMajorOffsets {
    sizes: Vec<i64>,
    strides: Vec<i64>,
    index: Vec<i64>,
    offset: i64,
    remaining: i64,
}

impl RowMajorOffsets {
    /// Walks an array of `sizes` whose dimension `d` advances `strides[d]` elements in memory.
    pub(crate) fn new(sizes: &[i64], strides: &[i64]) -> Self {
        RowMajorOffsets {
            sizes: sizes.to_vec(),
            strides: strides.to_vec(),
            index: vec![0; sizes.len()],
            offset: 0,
            remaining: sizes.iter().product(),
        }
    }
}

impl Iterator for RowMajorOffsets {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let current = self.offset as usize;
        for d in (0..self.sizes.len()).rev() {
            self.index[d] += 1;
            self.offset += self.strides[d];
            if self.index[d] < self.sizes[d] {
                break;
            }
            self.offset -= self.strides[d] * self.sizes[d];
            self.index[d] = 0;
        }
        Some(current)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining as usize, Some(self.remaining as usize))
    }
}

impl ExactSizeIterator for RowMajorOffsets {}
