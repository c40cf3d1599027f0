//! `DotDimensionNumbers`: which dimensions a dot contracts and which it batches over.

/// Which dimensions a `dot_general` contracts and which it batches over (xla_data.proto's
/// `DotDimensionNumbers`).
///
/// ```
/// use lazy_xla::DotDimensionNumbers;
/// let batched_matmul = DotDimensionNumbers {
///     lhs_contracting_dimensions: vec![2],
///     rhs_contracting_dimensions: vec![1],
///     lhs_batch_dimensions: vec![0],
///     rhs_batch_dimensions: vec![0],
/// };
/// assert_eq!(batched_matmul.lhs_batch_dimensions, [0]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct DotDimensionNumbers {
    /// Dimensions of the lhs summed over.
    pub lhs_contracting_dimensions: Vec<i64>,
    /// Dimensions of the rhs summed over, pairwise with the lhs's.
    pub rhs_contracting_dimensions: Vec<i64>,
    /// Dimensions of the lhs that index independent products.
    pub lhs_batch_dimensions: Vec<i64>,
    /// Dimensions of the rhs that index independent products, pairwise with the lhs's.
    pub rhs_batch_dimensions: Vec<i64>,
}

impl DotDimensionNumbers {
    /// Dimension numbers from the four lists, in xla_data.proto's field order: contracting
    /// dimensions of the lhs and of the rhs, then batch dimensions of the lhs and of the rhs.
    ///
    /// ```
    /// use lazy_xla::*;
    /// let batched_matmul = DotDimensionNumbers::new(&[2], &[1], &[0], &[0]);
    /// assert_eq!(batched_matmul.rhs_contracting_dimensions, [1]);
    /// let b = XlaBuilder::new("bmm");
    /// let x = b.parameter(0, &shape!(f32[8, 2, 3]), "x");
    /// let y = b.parameter(1, &shape!(f32[8, 3, 4]), "y");
    /// assert_eq!(b.get_shape(dot_general(x, y, &batched_matmul))?, shape!(f32[8, 2, 4]));
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn new(
        lhs_contracting_dimensions: &[i64],
        rhs_contracting_dimensions: &[i64],
        lhs_batch_dimensions: &[i64],
        rhs_batch_dimensions: &[i64],
    ) -> DotDimensionNumbers {
        DotDimensionNumbers {
            lhs_contracting_dimensions: lhs_contracting_dimensions.to_vec(),
            rhs_contracting_dimensions: rhs_contracting_dimensions.to_vec(),
            lhs_batch_dimensions: lhs_batch_dimensions.to_vec(),
            rhs_batch_dimensions: rhs_batch_dimensions.to_vec(),
        }
    }
}
