//! XLA's `ProgramShape`: a computation's signature.

use std::fmt;

use crate::shape::Shape;

/// The signature of a computation: its parameters (name and shape, by parameter number) and
/// its result shape.
///
/// ```
/// use lazy_xla::{shape, XlaBuilder};
/// let b = XlaBuilder::new("f");
/// let x = b.parameter(0, &shape!(f32[2, 3]), "x");
/// let signature = b.build(x * x)?.program_shape();
/// assert_eq!(signature.parameters, vec![("x".to_string(), shape!(f32[2, 3]))]);
/// assert_eq!(signature.result, shape!(f32[2, 3]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramShape {
    /// `(name, shape)` of every parameter, in parameter-number order.
    pub parameters: Vec<(String, Shape)>,
    /// The shape of the result.
    pub result: Shape,
}

/// XLA's `ProgramShape` text, as its messages print a computation: `(x: f32[], i: s32[]) ->
/// (f32[], s32[])` (shapes without layouts).
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("f");
/// let x = b.parameter(0, &shape!(f32[2]), "x");
/// assert_eq!(b.build(-x)?.program_shape().to_string(), "(x: f32[2]) -> f32[2]");
/// # Ok::<(), lazy_xla::Error>(())
/// ```
impl fmt::Display for ProgramShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parameters: Vec<String> =
            self.parameters.iter().map(|(name, shape)| format!("{name}: {}", shape.human_string())).collect();
        write!(f, "({}) -> {}", parameters.join(", "), self.result.human_string())
    }
}
