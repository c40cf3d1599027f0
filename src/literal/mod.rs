//! Host arrays: a [`Shape`] (layout and padding included) and a typed buffer in memory order.

mod approx_eq;
pub(crate) mod display;
mod ndarray_interop;

use crate::element_type::ElementType;
use crate::error::{invalid_argument, Error, Result};
use crate::shape::{Layout, PaddingValue, Shape};
use crate::storage::{with_native_type, NativeType, Storage};

/// An array on the host: a [`Shape`] and its elements, stored in the shape's layout (padding
/// included, filled with the layout's padding value).
///
/// Values go in and come out in logical row-major order (the last dimension fastest), whatever
/// the layout; [`Literal::memory`] shows the buffer as it is laid out.
///
/// ```
/// use lazy_xla::{shape, Literal};
/// let m = Literal::from_vec(&shape!(f32[2, 3]{0, 1}), vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// assert_eq!(m.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
/// assert_eq!(m.memory::<f32>()?, &[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
/// assert_eq!(m.to_string(), "f32[2,3] {\n  { 1, 2, 3 },\n  { 4, 5, 6 }\n}");
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Literal {
    shape: Shape,
    storage: Storage,
}

impl Literal {
    /// A rank-0 literal.
    ///
    /// ```
    /// let seven = lazy_xla::Literal::scalar(7i32);
    /// assert_eq!(seven.shape().to_string(), "s32[]");
    /// assert_eq!(seven.to_vec::<i32>()?, vec![7]);
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn scalar<T: NativeType>(value: T) -> Literal {
        Literal { shape: Shape::scalar(T::ELEMENT_TYPE), storage: T::into_storage(vec![value]) }
    }

    /// A rank-1 literal holding `values`.
    ///
    /// ```
    /// let v = lazy_xla::Literal::vec1(&[1.0f32, 2.0, 3.0]);
    /// assert_eq!(v.shape().to_string(), "f32[3]{0}");
    /// ```
    pub fn vec1<T: NativeType>(values: &[T]) -> Literal {
        Literal {
            shape: Shape::new(T::ELEMENT_TYPE, &[values.len() as i64]),
            storage: T::into_storage(values.to_vec()),
        }
    }

    /// A literal of `shape` holding `values`, given in logical row-major order and stored in
    /// the shape's layout. The values must be of the shape's element type and as many as its
    /// elements.
    ///
    /// ```
    /// use lazy_xla::{shape, Literal};
    /// let m = Literal::from_vec(&shape!(s32[2, 2]), vec![1, 2, 3, 4])?;
    /// assert_eq!(m.to_vec::<i32>()?, vec![1, 2, 3, 4]);
    /// assert!(Literal::from_vec(&shape!(s32[2, 2]), vec![1, 2, 3]).is_err());
    /// assert!(Literal::from_vec(&shape!(f32[2]), vec![1i32, 2]).is_err());
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn from_vec<T: NativeType>(shape: &Shape, values: Vec<T>) -> Result<Literal> {
        check_element_type::<T>(shape)?;
        if values.len() as i64 != shape.element_count() {
            invalid_argument!(
                "{} values given for shape {shape}, which has {} elements",
                values.len(),
                shape.element_count()
            );
        }
        if shape.layout().is_default() {
            return Ok(Literal { shape: shape.clone(), storage: T::into_storage(values) });
        }
        let mut literal = Literal::zeros(shape)?;
        let memory = literal.storage.as_mut_slice::<T>()?;
        for (offset, value) in shape.row_major_offsets().zip(values) {
            memory[offset] = value;
        }
        Ok(literal)
    }

    /// A literal of `shape` whose elements are all zero (`false` for `pred`), its padding filled
    /// with the layout's padding value. Fails, rather than aborting, when the memory cannot be
    /// had.
    ///
    /// ```
    /// use lazy_xla::{shape, Literal};
    /// assert_eq!(Literal::zeros(&shape!(u8[3]))?.to_vec::<u8>()?, vec![0, 0, 0]);
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn zeros(shape: &Shape) -> Result<Literal> {
        let len = usize::try_from(shape.buffer_len())
            .map_err(|_| Error::invalid(format!("shape {shape} is too large for this machine")))?;
        let storage = with_native_type!(shape.element_type(), T => {
            let mut storage = Storage::filled(T::ZERO, len)?;
            if let Some(value) = shape.layout().padding_value() {
                fill_padding::<T>(shape, storage.as_mut_slice::<T>()?, padding_element(value));
            }
            storage
        });
        Ok(Literal { shape: shape.clone(), storage })
    }

    /// A literal of `shape` whose elements are about to be overwritten (the executor's outputs):
    /// its values are arbitrary, its padding holds the padding value.
    pub(crate) fn for_overwrite(shape: &Shape) -> Result<Literal> {
        let len = usize::try_from(shape.buffer_len())
            .map_err(|_| Error::invalid(format!("shape {shape} is too large for this machine")))?;
        let mut storage = Storage::for_overwrite(shape.element_type(), len)?;
        if let Some(value) = shape.layout().padding_value() {
            with_native_type!(shape.element_type(), T => {
                fill_padding::<T>(shape, storage.as_mut_slice::<T>()?, padding_element(value))
            });
        }
        Ok(Literal { shape: shape.clone(), storage })
    }

    /// The shape, layout included.
    ///
    /// ```
    /// assert_eq!(lazy_xla::Literal::scalar(1.5f64).shape().to_string(), "f64[]");
    /// ```
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The element type.
    ///
    /// ```
    /// assert_eq!(lazy_xla::Literal::scalar(true).element_type(), lazy_xla::ElementType::Pred);
    /// ```
    pub fn element_type(&self) -> ElementType {
        self.shape.element_type()
    }

    /// The values in logical row-major order, whatever the layout.
    ///
    /// ```
    /// use lazy_xla::{shape, Literal, Layout};
    /// let m = Literal::from_vec(&shape!(f32[2, 2]), vec![1.0f32, 2.0, 3.0, 4.0])?;
    /// let c = m.relayout(&Layout::new(&[0, 1]))?;
    /// assert_eq!(c.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 4.0]);
    /// assert!(c.to_vec::<f64>().is_err());
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn to_vec<T: NativeType>(&self) -> Result<Vec<T>> {
        let memory = self.storage.as_slice::<T>()?;
        if self.shape.layout().is_default() {
            return Ok(memory.to_vec());
        }
        Ok(self.shape.row_major_offsets().map(|offset| memory[offset]).collect())
    }

    /// The buffer as it is laid out in memory, padding included.
    ///
    /// ```
    /// use lazy_xla::Literal;
    /// let m: Literal = Literal::from_vec(&"s32[2,3]{0,1}".parse()?, vec![1, 2, 3, 4, 5, 6])?;
    /// assert_eq!(m.memory::<i32>()?, &[1, 4, 2, 5, 3, 6]);
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn memory<T: NativeType>(&self) -> Result<&[T]> {
        self.storage.as_slice::<T>()
    }

    /// The buffer, mutable; the executor writes results through it.
    pub(crate) fn storage_mut(&mut self) -> &mut Storage {
        &mut self.storage
    }

    /// The same values in another layout (memory order and padding).
    ///
    /// ```
    /// use lazy_xla::{shape, Layout, Literal, PaddingValue};
    /// let m = Literal::from_vec(&shape!(s32[2, 3]), vec![1, 2, 3, 4, 5, 6])?;
    /// let padded = m.relayout(&Layout::new(&[0, 1]).with_padding(&[3, 5], PaddingValue::Zero)?)?;
    /// assert_eq!(padded.memory::<i32>()?, &[1, 4, 0, 2, 5, 0, 3, 6, 0, 0, 0, 0, 0, 0, 0]);
    /// assert_eq!(padded.relayout(&Layout::new(&[1, 0]))?, m);
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn relayout(&self, layout: &Layout) -> Result<Literal> {
        let shape = self.shape.relayout(layout)?;
        with_native_type!(self.element_type(), T => Literal::from_vec(&shape, self.to_vec::<T>()?))
    }

    /// The element at a multidimensional `index`.
    ///
    /// ```
    /// use lazy_xla::{shape, Literal};
    /// let m = Literal::from_vec(&shape!(s32[2, 3]{0, 1}), vec![1, 2, 3, 4, 5, 6])?;
    /// assert_eq!(m.get::<i32>(&[1, 0])?, 4);
    /// assert!(m.get::<i32>(&[2, 0]).is_err());
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn get<T: NativeType>(&self, index: &[i64]) -> Result<T> {
        let linear = self.shape.linear_index(index)?;
        Ok(self.storage.as_slice::<T>()?[linear as usize])
    }
}

/// An error unless `T` holds `shape`'s element type.
fn check_element_type<T: NativeType>(shape: &Shape) -> Result<()> {
    if T::ELEMENT_TYPE != shape.element_type() {
        return Err(Error::ElementTypeMismatch { expected: shape.element_type(), actual: T::ELEMENT_TYPE });
    }
    Ok(())
}

/// The element that a [`PaddingValue`] stands for in type `T`.
fn padding_element<T: NativeType>(value: PaddingValue) -> T {
    match value {
        PaddingValue::Zero => T::ZERO,
        PaddingValue::One => T::ONE,
        PaddingValue::Lowest => T::LOWEST,
        PaddingValue::Highest => T::HIGHEST,
    }
}

/// Writes `value` into every position of `memory` that holds padding rather than an element.
pub(crate) fn fill_padding<T: NativeType>(shape: &Shape, memory: &mut [T], value: T) {
    let Some(padded) = shape.layout().padded_dimensions() else { return };
    let mut is_element = vec![false; memory.len()];
    for offset in shape.row_major_offsets() {
        is_element[offset] = true;
    }
    debug_assert_eq!(padded.iter().product::<i64>() as usize, memory.len());
    for (slot, element) in memory.iter_mut().zip(is_element) {
        if !element {
            *slot = value;
        }
    }
}

/// A dropped literal's large buffer is kept for reuse by later results.
impl Drop for Literal {
    fn drop(&mut self) {
        crate::storage::recycle(std::mem::replace(&mut self.storage, Storage::Pred(Vec::new())));
    }
}
