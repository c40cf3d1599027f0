//! `std::ops` on [`XlaOp`]: `x + y`, `x - y`, `x * y`, `x / y`, `-x`, with the same rules
//! as the free functions and no broadcast dimensions (scalars and size-1 dimensions still
//! broadcast).

use std::ops::{Add, Div, Mul, Neg, Sub};

use crate::builder::XlaOp;

macro_rules! binary_operator {
    ($($trait:ident::$method:ident => $function:ident),*) => {$(
        /// The same as the free function of that name with no broadcast dimensions.
        ///
        /// ```
        /// use lazy_xla::*;
        /// let b = XlaBuilder::new("f");
        /// let x = b.parameter(0, &shape!(f32[2, 3]), "x");
        #[doc = concat!("let y = std::ops::", stringify!($trait), "::", stringify!($method), "(x, b.constant_r0(2.0f32));")]
        /// assert_eq!(b.get_shape(y)?, shape!(f32[2, 3]));
        /// # Ok::<(), lazy_xla::Error>(())
        /// ```
        impl<'b> $trait for XlaOp<'b> {
            type Output = XlaOp<'b>;

            #[track_caller]
            fn $method(self, rhs: XlaOp<'b>) -> XlaOp<'b> {
                crate::builder::$function(self, rhs, &[])
            }
        }
    )*};
}

binary_operator!(Add::add => add, Sub::sub => sub, Mul::mul => mul, Div::div => div);

/// `-x`, the same as [`neg`](crate::neg).
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("f");
/// let x = b.parameter(0, &shape!(f32[2]), "x");
/// assert_eq!(b.get_shape(-x)?, shape!(f32[2]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
impl<'b> Neg for XlaOp<'b> {
    type Output = XlaOp<'b>;

    #[track_caller]
    fn neg(self) -> XlaOp<'b> {
        crate::builder::neg(self)
    }
}
