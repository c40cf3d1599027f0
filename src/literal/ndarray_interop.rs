//! Conversions between [`Literal`] and ndarray arrays.

use ndarray::{Array, ArrayD, Dimension, IxDyn};

use crate::error::{Error, Result};

use crate::literal::Literal;

use crate::shape::Shape;

use crate::storage::NativeType;

/// An ndarray array of any dimensionality and any strides becomes a row-major literal.
///
/// ```
/// use lazy_xla::Literal;
/// let a = ndarray::arr2(&[[1.0f32, 2.0], [3.0, 4.0]]);
/// let lit = Literal::from(a.t().to_owned()); // a transposed (column-major) array
/// assert_eq!(lit.shape().to_string(), "f32[2,2]{1,0}");
/// assert_eq!(lit.to_vec::<f32>()?, vec![1.0, 3.0, 2.0, 4.0]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
impl<T: NativeType, D: Dimension> From<Array<T, D>> for Literal {
    fn from(array: Array<T, D>) -> Literal {
        let dimensions: Vec<i64> = array.shape().iter().map(|&d| d as i64).collect();
        // An ndarray that exists in memory has an element count that fits in an i64.
        let shape = Shape::new(T::ELEMENT_TYPE, &dimensions);
        let values: Vec<T> = if array.is_standard_layout() {
            array.into_raw_vec_and_offset().0
        } else {
            array.iter().copied().collect()
        };
        Literal::from_vec(&shape, values).expect("the values match the shape by construction")
    }
}

impl Literal {
    /// The values as an ndarray array of the literal's dimensions (row-major).
    ///
    /// ```
    /// use lazy_xla::{shape, Literal};
    /// let m = Literal::from_vec(&shape!(s32[2, 2]{0, 1}), vec![1, 2, 3, 4])?;
    /// let a = m.to_ndarray::<i32>()?;
    /// assert_eq!(a, ndarray::arr2(&[[1, 2], [3, 4]]).into_dyn());
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn to_ndarray<T: NativeType>(&self) -> Result<ArrayD<T>> {
        let dimensions: Vec<usize> = self.shape().dimensions().iter().map(|&d| d as usize).collect();
        ArrayD::from_shape_vec(IxDyn(&dimensions), self.to_vec::<T>()?)
            .map_err(|e| Error::invalid(format!("cannot make an ndarray of {}: {e}", self.shape())))
    }
}
