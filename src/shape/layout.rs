//! How an array's elements are laid out in linear memory: XLA's `Layout`.

use std::fmt;

use crate::error::{invalid_argument, Result};

/// What fills the padding of a padded layout (xla_data.proto's `PaddingValue`).
///
/// ```
/// use lazy_xla::{Layout, PaddingValue};
/// let layout = Layout::new(&[0, 1]).with_padding(&[3, 5], PaddingValue::Zero)?;
/// assert_eq!(layout.padding_value(), Some(PaddingValue::Zero));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, derive_more::Display)]
pub enum PaddingValue {
    /// Zero (`false` for `pred`).
    #[display("zero")]
    Zero,
    /// One (`true` for `pred`).
    #[display("one")]
    One,
    /// The lowest value of the element type (-∞ for floats, the minimum for integers).
    #[display("lowest")]
    Lowest,
    /// The highest value of the element type (+∞ for floats, the maximum for integers).
    #[display("highest")]
    Highest,
}

impl PaddingValue {
    /// Every padding value.
    pub(crate) const ALL: [PaddingValue; 4] =
        [PaddingValue::Zero, PaddingValue::One, PaddingValue::Lowest, PaddingValue::Highest];
}

/// A layout: `minor_to_major` (the dimension that varies fastest in memory first) and an
/// optional padding of every dimension to a larger size.
///
/// A `Layout` on its own is only a description; it is checked against a shape when attached
/// to one ([`Shape::with_layout`](crate::Shape::with_layout), [`Shape::relayout`](crate::Shape::relayout)).
///
/// ```
/// use lazy_xla::Layout;
/// let column_major = Layout::new(&[0, 1]);
/// assert_eq!(column_major.minor_to_major(), &[0, 1]);
/// assert_eq!(column_major.to_string(), "{0,1}");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    minor_to_major: Vec<i64>,
    padding: Option<Padding>,
}

/// Padded sizes of every dimension and the value that fills the padding.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Padding {
    padded_dimensions: Vec<i64>,
    value: PaddingValue,
}

impl Layout {
    /// A layout with this `minor_to_major` order and no padding.
    ///
    /// ```
    /// assert_eq!(lazy_xla::Layout::new(&[1, 0]).to_string(), "{1,0}");
    /// ```
    pub fn new(minor_to_major: &[i64]) -> Layout {
        Layout { minor_to_major: minor_to_major.to_vec(), padding: None }
    }

    /// The default (row-major, "descending") layout of a rank-`rank` array: `{rank-1,…,1,0}`.
    ///
    /// ```
    /// assert_eq!(lazy_xla::Layout::default_for_rank(3).minor_to_major(), &[2, 1, 0]);
    /// ```
    pub fn default_for_rank(rank: usize) -> Layout {
        Layout::new(&(0..rank as i64).rev().collect::<Vec<_>>())
    }

    /// This layout with every dimension padded to `padded_dimensions` (one size per dimension,
    /// in dimension order, each at least the dimension's size — checked when attached to a
    /// shape), the padding filled with `value`.
    ///
    /// ```
    /// use lazy_xla::{Layout, PaddingValue};
    /// let padded = Layout::new(&[0, 1]).with_padding(&[3, 5], PaddingValue::Zero)?;
    /// assert_eq!(padded.to_string(), "{0,1:pad(3,5)=zero}");
    /// assert!(Layout::new(&[0, 1]).with_padding(&[3], PaddingValue::Zero).is_err());
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn with_padding(&self, padded_dimensions: &[i64], value: PaddingValue) -> Result<Layout> {
        if padded_dimensions.len() != self.minor_to_major.len() {
            invalid_argument!(
                "layout has {} padded dimensions, but shape is rank {}: {self} padded to ({})",
                padded_dimensions.len(),
                self.minor_to_major.len(),
                join(padded_dimensions)
            );
        }
        if let Some(&negative) = padded_dimensions.iter().find(|&&p| p < 0) {
            invalid_argument!("padded dimension size {negative} is negative: {self}");
        }
        let padding = Padding { padded_dimensions: padded_dimensions.to_vec(), value };
        Ok(Layout { minor_to_major: self.minor_to_major.clone(), padding: Some(padding) })
    }

    /// This layout without padding.
    ///
    /// ```
    /// use lazy_xla::{Layout, PaddingValue};
    /// let padded = Layout::new(&[0]).with_padding(&[4], PaddingValue::One)?;
    /// assert_eq!(padded.without_padding(), Layout::new(&[0]));
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn without_padding(&self) -> Layout {
        Layout::new(&self.minor_to_major)
    }

    /// The dimensions from the fastest-varying in memory (minor) to the slowest (major).
    ///
    /// ```
    /// assert_eq!(lazy_xla::Layout::new(&[0, 2, 1]).minor_to_major(), &[0, 2, 1]);
    /// ```
    pub fn minor_to_major(&self) -> &[i64] {
        &self.minor_to_major
    }

    /// The padded size of every dimension, in dimension order, if the layout is padded.
    ///
    /// ```
    /// use lazy_xla::{Layout, PaddingValue};
    /// let padded = Layout::new(&[1, 0]).with_padding(&[3, 5], PaddingValue::Zero)?;
    /// assert_eq!(padded.padded_dimensions(), Some(&[3, 5][..]));
    /// assert_eq!(Layout::new(&[1, 0]).padded_dimensions(), None);
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn padded_dimensions(&self) -> Option<&[i64]> {
        self.padding.as_ref().map(|p| p.padded_dimensions.as_slice())
    }

    /// What fills the padding, if the layout is padded.
    ///
    /// ```
    /// assert_eq!(lazy_xla::Layout::new(&[0]).padding_value(), None);
    /// ```
    pub fn padding_value(&self) -> Option<PaddingValue> {
        self.padding.as_ref().map(|p| p.value)
    }

    /// Whether the layout is row-major (`{rank-1,…,0}`) with no padding.
    ///
    /// ```
    /// assert!(lazy_xla::Layout::new(&[1, 0]).is_default());
    /// assert!(!lazy_xla::Layout::new(&[0, 1]).is_default());
    /// ```
    pub fn is_default(&self) -> bool {
        self.padding.is_none() && *self == Layout::default_for_rank(self.minor_to_major.len())
    }
}

/// `{1,0}`, and with padding `{0,1:pad(3,5)=zero}` (lazy-xla's extension of XLA's notation).
impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{}", join(&self.minor_to_major))?;
        if let Some(padding) = &self.padding {
            write!(f, ":pad({})={}", join(&padding.padded_dimensions), padding.value)?;
        }
        write!(f, "}}")
    }
}

/// Numbers joined with commas and no spaces, as XLA prints dimensions.
pub(crate) fn join(values: &[i64]) -> String {
    values.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
}
