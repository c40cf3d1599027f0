//! Host arrays: a [`Shape`] (layout and padding included) and a typed buffer in memory order;
//! and tuples of literals.

mod approx_eq;
pub(crate) mod display;
mod ndarray_interop;
mod npy;

use crate::element_type::ElementType;
use crate::error::{invalid_argument, Error, Result};
use crate::shape::{Layout, PaddingValue, Shape};
use crate::storage::{with_native_type, NativeType, Storage};

/// An array on the host: a [`Shape`] and its elements, stored in the shape's layout (padding
/// included, filled with the layout's padding value); or a tuple of literals
/// ([`Literal::tuple`]).
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
    contents: Contents,
}

/// What a literal holds.
#[derive(Clone, Debug, PartialEq)]
enum Contents {
    /// An array's buffer, in memory order.
    Array(Storage),
    /// A tuple's elements.
    Tuple(Vec<Literal>),
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
        Literal {
            shape: Shape::scalar(T::ELEMENT_TYPE),
            contents: Contents::Array(T::into_storage(vec![value])),
        }
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
            contents: Contents::Array(T::into_storage(values.to_vec())),
        }
    }

    /// A literal of `shape` holding `values`, given in logical row-major order and stored in
    /// the shape's layout. The values must be of the shape's element type and as many as its
    /// elements. The vector's memory is kept when the layout is the default one, unless it is
    /// 16 KiB or more and does not start on a 64-byte boundary: then it is copied into memory
    /// that does, where vectorized loops read whole cache lines (XLA:CPU aligns its buffers
    /// so, too).
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
            return Ok(Literal { shape: shape.clone(), contents: Contents::Array(T::into_storage(values)) });
        }
        let mut literal = Literal::zeros(shape)?;
        let memory = literal.storage_mut()?.as_mut_slice::<T>()?;
        for (offset, value) in shape.row_major_offsets().zip(values) {
            memory[offset] = value;
        }
        Ok(literal)
    }

    /// Overwrites the elements with `values`, given as [`Literal::from_vec`] takes them, in
    /// the literal's own memory: a kernel's output that is a view of a planned buffer stays
    /// one (replacing the literal would leave the buffer unwritten). The padding is untouched.
    pub(crate) fn fill_from_vec<T: NativeType>(&mut self, values: Vec<T>) -> Result<()> {
        check_element_type::<T>(&self.shape)?;
        if values.len() as i64 != self.shape.element_count() {
            invalid_argument!("{} values given for shape {}", values.len(), self.shape);
        }
        let shape = self.shape.clone();
        let memory = self.storage_mut()?.as_mut_slice::<T>()?;
        match shape.layout().is_default() {
            true => memory.copy_from_slice(&values),
            false => shape.row_major_offsets().zip(values).for_each(|(offset, value)| memory[offset] = value),
        }
        Ok(())
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
        if shape.is_tuple() {
            let elements = shape.tuple_shapes().iter().map(Literal::zeros).collect::<Result<_>>()?;
            return Ok(Literal { shape: shape.clone(), contents: Contents::Tuple(elements) });
        }
        let len = usize::try_from(shape.buffer_len())
            .map_err(|_| Error::invalid(format!("shape {shape} is too large for this machine")))?;
        let storage = with_native_type!(shape.element_type(), T => {
            let mut storage = Storage::filled(T::ZERO, len)?;
            if let Some(value) = shape.layout().padding_value() {
                fill_padding::<T>(shape, storage.as_mut_slice::<T>()?, padding_element(value));
            }
            storage
        });
        Ok(Literal { shape: shape.clone(), contents: Contents::Array(storage) })
    }

    /// A literal of `shape` whose elements are about to be overwritten (the executor's outputs):
    /// its values are arbitrary, its padding holds the padding value.
    pub(crate) fn for_overwrite(shape: &Shape) -> Result<Literal> {
        if shape.is_tuple() {
            let elements = shape.tuple_shapes().iter().map(Literal::for_overwrite).collect::<Result<_>>()?;
            return Ok(Literal { shape: shape.clone(), contents: Contents::Tuple(elements) });
        }
        let len = usize::try_from(shape.buffer_len())
            .map_err(|_| Error::invalid(format!("shape {shape} is too large for this machine")))?;
        let mut storage = Storage::for_overwrite(shape.element_type(), len)?;
        if let Some(value) = shape.layout().padding_value() {
            with_native_type!(shape.element_type(), T => {
                fill_padding::<T>(shape, storage.as_mut_slice::<T>()?, padding_element(value))
            });
        }
        Ok(Literal { shape: shape.clone(), contents: Contents::Array(storage) })
    }

    /// A literal of `shape` (an array) over `storage` (of its element type and buffer length),
    /// whose elements are about to be overwritten: its padding is filled here.
    pub(crate) fn over(shape: &Shape, mut storage: Storage) -> Result<Literal> {
        if shape.is_tuple()
            || storage.element_type() != shape.element_type()
            || storage.len() as i64 != shape.buffer_len()
        {
            invalid_argument!(
                "a buffer of {} elements of {} for {shape}",
                storage.len(),
                storage.element_type()
            );
        }
        if let Some(value) = shape.layout().padding_value() {
            with_native_type!(shape.element_type(), T => {
                fill_padding::<T>(shape, storage.as_mut_slice::<T>()?, padding_element(value))
            });
        }
        Ok(Literal { shape: shape.clone(), contents: Contents::Array(storage) })
    }

    /// The literal with memory of its own: itself, or a copy of one whose buffers are views of
    /// memory it does not own (a run's heap).
    pub(crate) fn into_owned(self) -> Literal {
        match self.is_view() {
            false => self,
            true => self.clone(),
        }
    }

    /// Whether every buffer of the literal is memory of its own (none a view of a run's heap).
    pub(crate) fn owns_memory(&self) -> bool {
        !self.is_view()
    }

    /// Whether some buffer of the literal is a view of memory it does not own.
    fn is_view(&self) -> bool {
        match &self.contents {
            Contents::Array(storage) => !storage.owns_memory() && storage.len() > 0,
            Contents::Tuple(elements) => elements.iter().any(Literal::is_view),
        }
    }

    /// A tuple of `elements` (XLA's `LiteralUtil::MakeTupleOwned`); its shape is the tuple of
    /// theirs.
    ///
    /// ```
    /// use lazy_xla::{shape, Literal, Shape};
    /// let t = Literal::tuple(vec![Literal::vec1(&[1.0f32, 2.0]), Literal::scalar(7i32)]);
    /// assert_eq!(t.shape(), &Shape::tuple(&[shape!(f32[2]), shape!(s32[])]));
    /// assert_eq!(t.tuple_element(1)?.to_vec::<i32>()?, vec![7]);
    /// assert_eq!(t.to_string(), "(\nf32[2] {1, 2},\ns32[] 7\n)");
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn tuple(elements: Vec<Literal>) -> Literal {
        let shapes: Vec<Shape> = elements.iter().map(|e| e.shape.clone()).collect();
        Literal { shape: Shape::tuple(&shapes), contents: Contents::Tuple(elements) }
    }

    /// Whether this is a tuple literal.
    ///
    /// ```
    /// use lazy_xla::Literal;
    /// assert!(Literal::tuple(vec![]).is_tuple() && !Literal::scalar(1u8).is_tuple());
    /// ```
    pub fn is_tuple(&self) -> bool {
        matches!(self.contents, Contents::Tuple(_))
    }

    /// Element `index` of a tuple; an error for an array or an index out of range.
    ///
    /// ```
    /// use lazy_xla::Literal;
    /// let t = Literal::tuple(vec![Literal::scalar(1u8)]);
    /// assert_eq!(t.tuple_element(0)?, &Literal::scalar(1u8));
    /// assert!(t.tuple_element(1).is_err());
    /// assert!(Literal::scalar(1u8).tuple_element(0).is_err());
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn tuple_element(&self, index: usize) -> Result<&Literal> {
        match &self.contents {
            Contents::Tuple(elements) => elements.get(index).ok_or_else(|| {
                Error::invalid(format!("tuple element {index} is out of range for the tuple {}", self.shape))
            }),
            Contents::Array(_) => invalid_argument!("tuple_element of the array literal {}", self.shape),
        }
    }

    /// Element `index` of a tuple, mutable (the executor writes results into it).
    pub(crate) fn tuple_element_mut(&mut self, index: usize) -> Result<&mut Literal> {
        let shape = &self.shape;
        match &mut self.contents {
            Contents::Tuple(elements) => elements.get_mut(index).ok_or_else(|| {
                Error::invalid(format!("tuple element {index} is out of range for the tuple {shape}"))
            }),
            Contents::Array(_) => invalid_argument!("tuple_element of the array literal {shape}"),
        }
    }

    /// A tuple's elements, taking the tuple apart (XLA's `DecomposeTuple`); an error for an
    /// array.
    ///
    /// ```
    /// use lazy_xla::Literal;
    /// let parts = Literal::tuple(vec![Literal::scalar(1u8), Literal::scalar(2.5f64)]).decompose_tuple()?;
    /// assert_eq!(parts, vec![Literal::scalar(1u8), Literal::scalar(2.5f64)]);
    /// assert!(Literal::scalar(1.0f32).decompose_tuple().is_err());
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn decompose_tuple(mut self) -> Result<Vec<Literal>> {
        match &mut self.contents {
            Contents::Tuple(elements) => Ok(std::mem::take(elements)),
            Contents::Array(_) => invalid_argument!("decompose_tuple of the array literal {}", self.shape),
        }
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
    /// # Panics
    /// On a tuple literal, as [`Shape::element_type`].
    ///
    /// ```
    /// assert_eq!(lazy_xla::Literal::scalar(true).element_type(), lazy_xla::ElementType::Pred);
    /// ```
    #[track_caller]
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
        let memory = self.memory::<T>()?;
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
        match &self.contents {
            Contents::Array(storage) => storage.as_slice::<T>(),
            Contents::Tuple(_) => {
                invalid_argument!("a tuple literal has no buffer of its own: {}", self.shape)
            }
        }
    }

    /// The buffer as `T`s, or `None` for a tuple or another element type: the executor's hot
    /// paths, where a mismatch is a bug told once rather than a `Result` per access.
    pub(crate) fn slice<T: NativeType>(&self) -> Option<&[T]> {
        match &self.contents {
            Contents::Array(storage) => T::slice_of(storage),
            Contents::Tuple(_) => None,
        }
    }

    /// The buffer, mutable; the executor writes results through it. An error for a tuple.
    pub(crate) fn storage_mut(&mut self) -> Result<&mut Storage> {
        match &mut self.contents {
            Contents::Array(storage) => Ok(storage),
            Contents::Tuple(_) => {
                invalid_argument!("a tuple literal has no buffer of its own: {}", self.shape)
            }
        }
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
        if self.is_tuple() {
            invalid_argument!("a tuple literal has no layout of its own: {}", self.shape);
        }
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
        Ok(self.memory::<T>()?[linear as usize])
    }
}

/// An error unless `T` holds `shape`'s element type.
fn check_element_type<T: NativeType>(shape: &Shape) -> Result<()> {
    if shape.is_tuple() {
        invalid_argument!("values of {} given for the tuple shape {shape}", T::ELEMENT_TYPE);
    }
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

/// Calls `f` with the offset of every element of `memory`, a buffer of `shape`, and the element:
/// a writer that must not touch the padding (the caller's memory) goes through this.
pub(crate) fn for_each_element<T>(shape: &Shape, memory: &mut [T], mut f: impl FnMut(usize, &mut T)) {
    match shape.is_padded() {
        false => memory.iter_mut().enumerate().for_each(|(offset, element)| f(offset, element)),
        true => shape.row_major_offsets().for_each(|offset| f(offset, &mut memory[offset])),
    }
}

/// A dropped literal's large buffer is kept for reuse by later results.
impl Drop for Literal {
    fn drop(&mut self) {
        if let Contents::Array(storage) = &mut self.contents {
            crate::storage::recycle(std::mem::replace(storage, Storage::empty()));
        }
    }
}
