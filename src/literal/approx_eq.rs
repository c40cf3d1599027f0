//! Approximate comparison of literals with the `approx` crate.

use approx::{AbsDiffEq, RelativeEq};

use crate::literal::Literal;
use crate::storage::{with_native_type, NativeType};

impl Literal {
    /// Every pair of elements (in logical order; a tuple's elements one after the other) as
    /// `f64`, if the two literals have the same element types and dimensions (layouts may
    /// differ).
    fn paired_values(&self, other: &Literal) -> Option<Vec<(f64, f64)>> {
        if !self.shape().same_dimensions_and_type(other.shape()) {
            return None;
        }
        if self.is_tuple() {
            let pairs = (0..self.shape().tuple_shapes().len())
                .map(|i| self.tuple_element(i).ok()?.paired_values(other.tuple_element(i).ok()?));
            return pairs.collect::<Option<Vec<_>>>().map(|all| all.concat());
        }
        with_native_type!(self.element_type(), T => {
            let lhs = self.to_vec::<T>().ok()?;
            let rhs = other.to_vec::<T>().ok()?;
            Some(lhs.into_iter().zip(rhs).map(|(a, b)| (a.to_f64(), b.to_f64())).collect())
        })
    }
}

/// Element-wise absolute-difference comparison of two literals of the same element type and
/// dimensions (their layouts may differ); the epsilon is an `f64`. Equal infinities and two
/// NaNs count as equal, so results can be compared where both sides overflow.
///
/// ```
/// use approx::assert_abs_diff_eq;
/// use lazy_xla::Literal;
/// assert_abs_diff_eq!(Literal::vec1(&[1.0f32, 2.0]), Literal::vec1(&[1.0f32, 2.0 + 1e-7]), epsilon = 1e-6);
/// ```
impl AbsDiffEq for Literal {
    type Epsilon = f64;

    fn default_epsilon() -> f64 {
        f64::default_epsilon()
    }

    fn abs_diff_eq(&self, other: &Self, epsilon: f64) -> bool {
        self.paired_values(other)
            .is_some_and(|pairs| pairs.iter().all(|(a, b)| same_or(*a, *b, || a.abs_diff_eq(b, epsilon))))
    }
}

/// Element-wise relative comparison of two literals of the same element type and dimensions.
///
/// ```
/// use approx::assert_relative_eq;
/// use lazy_xla::Literal;
/// assert_relative_eq!(Literal::vec1(&[1e6f64]), Literal::vec1(&[1e6f64 + 1e-4]), max_relative = 1e-9);
/// ```
impl RelativeEq for Literal {
    fn default_max_relative() -> f64 {
        f64::default_max_relative()
    }

    fn relative_eq(&self, other: &Self, epsilon: f64, max_relative: f64) -> bool {
        self.paired_values(other).is_some_and(|pairs| {
            pairs.iter().all(|(a, b)| same_or(*a, *b, || a.relative_eq(b, epsilon, max_relative)))
        })
    }
}

/// Whether `a` and `b` are the same value (NaN matching NaN), or `close` says they are near.
fn same_or(a: f64, b: f64, close: impl FnOnce() -> bool) -> bool {
    a == b || (a.is_nan() && b.is_nan()) || close()
}
