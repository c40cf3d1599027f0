//! XLA's `Shape`: an array's element type, dimension sizes and layout, or a tuple of shapes.

use std::fmt;

use crate::element_type::ElementType;
use crate::error::{invalid_argument, Result};
use crate::shape::layout::{join, Layout};

/// The shape of an array: element type, dimension sizes (in dimension order) and a [`Layout`];
/// or the shape of a tuple: the shapes of its elements ([`Shape::tuple`]).
///
/// Every `Shape` is valid: sizes are non-negative, the element count (padded or not) fits in
/// an `i64`, and the layout is a permutation of the dimensions with sane padding.
///
/// The array accessors describe a tuple as XLA does: it has no dimensions ([`Shape::rank`] 0,
/// [`Shape::dimensions`] empty, [`Shape::element_count`] 0, an empty layout) and is not a scalar;
/// [`Shape::element_type`] and [`Shape::with_element_type`] panic on it (XLA's is `TUPLE`,
/// which is no element type here): ask [`Shape::is_tuple`] first.
///
/// ```
/// use lazy_xla::{ElementType, Shape};
/// let s = Shape::new(ElementType::F32, &[2, 3]);
/// assert_eq!(s.to_string(), "f32[2,3]{1,0}");
/// assert_eq!((s.rank(), s.element_count(), s.dimension(-1)), (2, 6, 3));
/// let c = Shape::with_layout(ElementType::F32, &[2, 3], &[0, 1])?;
/// assert_eq!(c.to_string(), "f32[2,3]{0,1}");
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    element_type: ElementType,
    dimensions: Vec<i64>,
    layout: Layout,
    element_count: i64,
    /// Elements in the buffer: the product of the padded sizes (the element count without
    /// padding).
    buffer_len: i64,
    /// The elements' shapes, for a tuple (whose array fields are those of `pred[0]`, unused).
    tuple_shapes: Option<Vec<Shape>>,
}

impl Shape {
    /// A shape with the default (row-major) layout.
    ///
    /// # Panics
    /// On a negative size or an element count that overflows `i64`; [`Shape::try_new`] returns
    /// these as errors instead.
    ///
    /// ```
    /// let s = lazy_xla::Shape::new(lazy_xla::ElementType::S32, &[4]);
    /// assert_eq!(s.to_string(), "s32[4]{0}");
    /// ```
    #[track_caller]
    pub fn new(element_type: ElementType, dimensions: &[i64]) -> Shape {
        match Shape::try_new(element_type, dimensions) {
            Ok(shape) => shape,
            Err(e) => panic!("{e}"),
        }
    }

    /// A shape with the default (row-major) layout, or an error for a negative size or an
    /// element count that overflows `i64`.
    ///
    /// ```
    /// use lazy_xla::{ElementType, Shape};
    /// assert!(Shape::try_new(ElementType::F32, &[2, 3]).is_ok());
    /// assert!(Shape::try_new(ElementType::F32, &[-1]).is_err());
    /// assert!(Shape::try_new(ElementType::F32, &[1 << 40, 1 << 40]).is_err());
    /// ```
    pub fn try_new(element_type: ElementType, dimensions: &[i64]) -> Result<Shape> {
        Shape::build(element_type, dimensions, Layout::default_for_rank(dimensions.len()))
    }

    /// A shape with the layout `minor_to_major` (a permutation of `0..rank`).
    ///
    /// ```
    /// use lazy_xla::{ElementType, Shape};
    /// let s = Shape::with_layout(ElementType::F32, &[2, 3], &[0, 1])?;
    /// assert_eq!(s.layout().minor_to_major(), &[0, 1]);
    /// let err = Shape::with_layout(ElementType::F32, &[2, 3], &[0, 2]).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "layout minor_to_major field has out-of-bounds value: {0,2}; shape: f32[2,3]"
    /// );
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn with_layout(
        element_type: ElementType,
        dimensions: &[i64],
        minor_to_major: &[i64],
    ) -> Result<Shape> {
        Shape::build(element_type, dimensions, Layout::new(minor_to_major))
    }

    /// A scalar (rank-0) shape.
    ///
    /// ```
    /// assert_eq!(lazy_xla::Shape::scalar(lazy_xla::ElementType::Pred).to_string(), "pred[]");
    /// ```
    pub fn scalar(element_type: ElementType) -> Shape {
        Shape::new(element_type, &[])
    }

    /// XLA's tuple shape: the shapes of the elements, in order (any of them a tuple too).
    ///
    /// ```
    /// use lazy_xla::{shape, Shape};
    /// let pair = Shape::tuple(&[shape!(f32[2]), shape!(s32[])]);
    /// assert!(pair.is_tuple());
    /// assert_eq!(pair.tuple_shapes(), &[shape!(f32[2]), shape!(s32[])]);
    /// assert_eq!(pair.to_string(), "(f32[2]{0}, s32[])");
    /// assert_eq!(Shape::tuple(&[]).to_string(), "()");
    /// ```
    pub fn tuple(element_shapes: &[Shape]) -> Shape {
        Shape {
            element_type: ElementType::Pred,
            dimensions: Vec::new(),
            layout: Layout::default_for_rank(0),
            element_count: 0,
            buffer_len: 0,
            tuple_shapes: Some(element_shapes.to_vec()),
        }
    }

    /// Whether this is a tuple shape.
    ///
    /// ```
    /// use lazy_xla::{shape, Shape};
    /// assert!(Shape::tuple(&[shape!(f32[2])]).is_tuple() && !shape!(f32[2]).is_tuple());
    /// ```
    pub fn is_tuple(&self) -> bool {
        self.tuple_shapes.is_some()
    }

    /// A tuple's element shapes; empty for an array shape.
    ///
    /// ```
    /// use lazy_xla::{shape, Shape};
    /// assert_eq!(Shape::tuple(&[shape!(u8[])]).tuple_shapes(), &[shape!(u8[])]);
    /// assert!(shape!(f32[2]).tuple_shapes().is_empty());
    /// ```
    pub fn tuple_shapes(&self) -> &[Shape] {
        self.tuple_shapes.as_deref().unwrap_or(&[])
    }

    /// The same dimensions and element type with another layout (padding included).
    ///
    /// ```
    /// use lazy_xla::{shape, Layout, PaddingValue};
    /// let s = shape!(f32[2, 3]).relayout(&Layout::new(&[0, 1]).with_padding(&[3, 5], PaddingValue::Zero)?)?;
    /// assert_eq!(s.to_string(), "f32[2,3]{0,1:pad(3,5)=zero}");
    /// assert!(shape!(f32[2, 3]).relayout(&Layout::new(&[0])).is_err());
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn relayout(&self, layout: &Layout) -> Result<Shape> {
        if self.is_tuple() {
            invalid_argument!("a tuple shape has no layout of its own: {self}");
        }
        Shape::build(self.element_type, &self.dimensions, layout.clone())
    }

    /// The same dimensions and layout with another element type.
    ///
    /// # Panics
    /// On a tuple shape.
    ///
    /// ```
    /// use lazy_xla::{shape, ElementType};
    /// assert_eq!(shape!(f32[2]).with_element_type(ElementType::Pred), shape!(pred[2]));
    /// ```
    #[track_caller]
    pub fn with_element_type(&self, element_type: ElementType) -> Shape {
        assert!(!self.is_tuple(), "with_element_type of the tuple shape {self}");
        Shape { element_type, ..self.clone() }
    }

    /// The same element type and dimensions with the default layout.
    ///
    /// ```
    /// use lazy_xla::shape;
    /// assert_eq!(shape!(f32[2, 3]{0, 1}).with_default_layout(), shape!(f32[2, 3]));
    /// ```
    pub fn with_default_layout(&self) -> Shape {
        if let Some(elements) = &self.tuple_shapes {
            return Shape::tuple(&elements.iter().map(Shape::with_default_layout).collect::<Vec<_>>());
        }
        let layout = Layout::default_for_rank(self.rank());
        Shape { layout, buffer_len: self.element_count, ..self.clone() }
    }

    /// The bytes of the shape's buffer, padding included (of every element's, for a tuple;
    /// saturating at `u64::MAX`).
    ///
    /// ```
    /// use lazy_xla::{shape, Shape};
    /// assert_eq!(shape!(f32[2, 3]).byte_size(), 24);
    /// assert_eq!(Shape::tuple(&[shape!(f64[2]), shape!(u8[3])]).byte_size(), 19);
    /// ```
    pub fn byte_size(&self) -> u64 {
        match &self.tuple_shapes {
            Some(elements) => elements.iter().fold(0u64, |sum, e| sum.saturating_add(e.byte_size())),
            None => (self.buffer_len as u64).saturating_mul(self.element_type.byte_size() as u64),
        }
    }

    /// Whether the shape, or an element of a tuple shape, has padding in its layout.
    ///
    /// ```
    /// use lazy_xla::{shape, Layout, PaddingValue, Shape};
    /// let padded = shape!(f32[3]).relayout(&Layout::new(&[0]).with_padding(&[4], PaddingValue::Zero)?)?;
    /// assert!(padded.is_padded() && Shape::tuple(&[padded]).is_padded());
    /// assert!(!shape!(f32[3]).is_padded());
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn is_padded(&self) -> bool {
        match &self.tuple_shapes {
            Some(elements) => elements.iter().any(Shape::is_padded),
            None => self.layout.padded_dimensions().is_some(),
        }
    }

    /// The same shape with the padding taken out of its layouts (every element's, for a
    /// tuple): the dense buffer of the same memory order.
    ///
    /// ```
    /// use lazy_xla::{shape, Layout, PaddingValue};
    /// let padded = shape!(f32[2, 3]{0, 1}).relayout(&Layout::new(&[0, 1]).with_padding(&[3, 5], PaddingValue::One)?)?;
    /// assert_eq!(padded.without_padding(), shape!(f32[2, 3]{0, 1}));
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn without_padding(&self) -> Shape {
        if let Some(elements) = &self.tuple_shapes {
            return Shape::tuple(&elements.iter().map(Shape::without_padding).collect::<Vec<_>>());
        }
        Shape { layout: self.layout.without_padding(), buffer_len: self.element_count, ..self.clone() }
    }

    fn build(element_type: ElementType, dimensions: &[i64], layout: Layout) -> Result<Shape> {
        for (index, &size) in dimensions.iter().enumerate() {
            if size < 0 {
                invalid_argument!(
                    "shape's dimensions must not be < 0; dimension at index {index} was {size}"
                );
            }
        }
        let human = || format!("{element_type}[{}]", join(dimensions));
        let element_count = checked_product(dimensions).ok_or_else(|| {
            crate::error::Error::invalid(format!("shape {} has more elements than fit in an int64", human()))
        })?;
        validate_minor_to_major(layout.minor_to_major(), dimensions.len(), &human)?;
        let buffer_len = match layout.padded_dimensions() {
            None => element_count,
            Some(padded) => {
                if padded.len() != dimensions.len() {
                    invalid_argument!(
                        "layout has {} padded dimensions, but shape is rank {}; shape: {}",
                        padded.len(),
                        dimensions.len(),
                        human()
                    );
                }
                for (d, (&pad, &size)) in padded.iter().zip(dimensions).enumerate() {
                    if pad < size {
                        invalid_argument!(
                            "for dimension {d}, dimension padding ({pad}) is smaller than the \
                             dimension size ({size}) of the shape; shape: {}",
                            human()
                        );
                    }
                }
                checked_product(padded).ok_or_else(|| {
                    crate::error::Error::invalid(format!(
                        "padded shape {}{layout} has more elements than fit in an int64",
                        human()
                    ))
                })?
            }
        };
        Ok(Shape {
            element_type,
            dimensions: dimensions.to_vec(),
            layout,
            element_count,
            buffer_len,
            tuple_shapes: None,
        })
    }

    /// The element type.
    ///
    /// # Panics
    /// On a tuple shape (XLA's `TUPLE` is no element type here).
    ///
    /// ```
    /// assert_eq!(lazy_xla::shape!(u8[3]).element_type(), lazy_xla::ElementType::U8);
    /// ```
    #[track_caller]
    pub fn element_type(&self) -> ElementType {
        assert!(!self.is_tuple(), "the element type of the tuple shape {self}");
        self.element_type
    }

    /// The size of every dimension, in dimension order.
    ///
    /// ```
    /// assert_eq!(lazy_xla::shape!(f32[2, 3]{0, 1}).dimensions(), &[2, 3]);
    /// ```
    pub fn dimensions(&self) -> &[i64] {
        &self.dimensions
    }

    /// The size of dimension `index`; a negative index counts from the end (`-1` is the last
    /// dimension), as in XLA's utilities and Python.
    ///
    /// # Panics
    /// When `index` is out of range, like slice indexing.
    ///
    /// ```
    /// let s = lazy_xla::shape!(f32[5, 6, 7]);
    /// assert_eq!((s.dimension(0), s.dimension(-1), s.dimension(-3)), (5, 7, 5));
    /// ```
    #[track_caller]
    pub fn dimension(&self, index: i64) -> i64 {
        let rank = self.rank() as i64;
        let resolved = if index < 0 { index + rank } else { index };
        if !(0..rank).contains(&resolved) {
            panic!("dimension index {index} out of range for rank {rank} shape {self}");
        }
        self.dimensions[resolved as usize]
    }

    /// The number of dimensions.
    ///
    /// ```
    /// assert_eq!(lazy_xla::shape!(f32[]).rank(), 0);
    /// ```
    pub fn rank(&self) -> usize {
        self.dimensions.len()
    }

    /// The number of dimensions whose size is not 1 (XLA's `TrueRank`; size-0 dimensions
    /// count).
    ///
    /// ```
    /// assert_eq!(lazy_xla::shape!(f32[1, 3, 1, 0]).true_rank(), 2);
    /// ```
    pub fn true_rank(&self) -> usize {
        self.dimensions.iter().filter(|&&d| d != 1).count()
    }

    /// The number of elements (the product of the sizes; 1 for a scalar).
    ///
    /// ```
    /// assert_eq!(lazy_xla::shape!(f32[2, 0]).element_count(), 0);
    /// assert_eq!(lazy_xla::shape!(f32[]).element_count(), 1);
    /// ```
    pub fn element_count(&self) -> i64 {
        self.element_count
    }

    /// The number of elements the buffer holds, padding included.
    ///
    /// ```
    /// let s: lazy_xla::Shape = "f32[2,3]{0,1:pad(3,5)=zero}".parse()?;
    /// assert_eq!(s.buffer_len(), 15);
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn buffer_len(&self) -> i64 {
        self.buffer_len
    }

    /// The layout.
    ///
    /// ```
    /// assert!(lazy_xla::shape!(f32[2, 3]).layout().is_default());
    /// ```
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Whether the shape has rank 0.
    ///
    /// ```
    /// assert!(lazy_xla::shape!(s32[]).is_scalar());
    /// ```
    pub fn is_scalar(&self) -> bool {
        self.dimensions.is_empty() && !self.is_tuple()
    }

    /// Whether `other` has the same element type and dimensions, whatever the layouts.
    ///
    /// ```
    /// use lazy_xla::shape;
    /// assert!(shape!(f32[2, 3]).same_dimensions_and_type(&shape!(f32[2, 3]{0, 1})));
    /// ```
    pub fn same_dimensions_and_type(&self, other: &Shape) -> bool {
        match (&self.tuple_shapes, &other.tuple_shapes) {
            (None, None) => self.element_type == other.element_type && self.dimensions == other.dimensions,
            (Some(a), Some(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.same_dimensions_and_type(b))
            }
            _ => false,
        }
    }

    /// XLA's `HumanString`: the shape without its layout, as XLA's messages print it
    /// (`f32[2,3]`).
    ///
    /// ```
    /// assert_eq!(lazy_xla::shape!(f32[2, 3]{0, 1}).human_string(), "f32[2,3]");
    /// ```
    pub fn human_string(&self) -> String {
        match &self.tuple_shapes {
            Some(elements) => tuple_text(elements, Shape::human_string),
            None => format!("{}[{}]", self.element_type, join(&self.dimensions)),
        }
    }
}

/// A tuple as XLA prints it: `(a, b, c, d, e, /*index=5*/f, …)`: elements joined by `, `, each
/// fifth after the first preceded by its index in a comment.
pub(crate) fn tuple_text<T>(elements: &[T], text: impl Fn(&T) -> String) -> String {
    let parts: Vec<String> = elements
        .iter()
        .enumerate()
        .map(|(i, e)| if i > 0 && i % 5 == 0 { format!("/*index={i}*/{}", text(e)) } else { text(e) })
        .collect();
    format!("({})", parts.join(", "))
}

/// XLA's `HumanStringWithLayout`: `f32[2,3]{1,0}`; a scalar prints no layout (`f32[]`) unless
/// it is padded; a tuple prints its elements so: `(f32[2]{0}, s32[])`.
impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(elements) = &self.tuple_shapes {
            return f.write_str(&tuple_text(elements, Shape::to_string));
        }
        write!(f, "{}", self.human_string())?;
        if !self.is_scalar() || self.layout.padded_dimensions().is_some() {
            write!(f, "{}", self.layout)?;
        }
        Ok(())
    }
}

/// The product of `sizes`, or `None` when it overflows `i64` on the way, left to right (as
/// XLA's `ValidateShapeSize` multiplies: `[0, huge, huge]` is valid, `[huge, huge, 0]` is not).
fn checked_product(sizes: &[i64]) -> Option<i64> {
    sizes.iter().try_fold(1i64, |acc, &d| acc.checked_mul(d))
}

/// XLA's `ValidateLayoutInShape` checks of `minor_to_major`, with its sentences.
fn validate_minor_to_major(minor_to_major: &[i64], rank: usize, human: &dyn Fn() -> String) -> Result<()> {
    let text = join(minor_to_major);
    if minor_to_major.len() != rank {
        invalid_argument!(
            "layout minor_to_major field contains {} elements, but shape has {rank} dimensions: \
             {{{text}}}; shape: {}",
            minor_to_major.len(),
            human()
        );
    }
    let mut seen = vec![false; rank];
    for &dim in minor_to_major {
        if dim < 0 || dim >= rank as i64 {
            invalid_argument!(
                "layout minor_to_major field has out-of-bounds value: {{{text}}}; shape: {}",
                human()
            );
        }
        if std::mem::replace(&mut seen[dim as usize], true) {
            invalid_argument!(
                "layout minor_to_major field has duplicate values: {{{text}}}; shape: {}",
                human()
            );
        }
    }
    Ok(())
}
