//! lazy-xla: a pure-Rust lazy tensor builder with XLA's exact semantics.
//!
//! Shapes are written in XLA's notation, laid out in memory as XLA lays them out, and indexed
//! as XLA's `IndexUtil` indexes them:
//!
//! ```
//! use lazy_xla::{shape, Literal};
//! let s = shape!(f32[2, 3]{0, 1}); // column-major
//! assert_eq!(s.to_string(), "f32[2,3]{0,1}");
//! let m = Literal::from_vec(&s, vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
//! assert_eq!(m.memory::<f32>()?, &[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
//! # Ok::<(), lazy_xla::Error>(())
//! ```
#![warn(missing_docs)]

extern crate self as lazy_xla;

mod builder;
mod error;
mod exec;
mod hlo;
mod literal;
mod passes;
mod shape;
mod shape_inference;
mod storage;

pub use builder::*;
pub use error::{Error, Result};
pub use exec::{CompileOptions, Executable};
pub use hlo::{
    BinaryOp, ComparisonDirection, DotDimensionNumbers, PaddingConfig, PaddingConfigDimension, UnaryOp,
};
pub use literal::Literal;
pub use shape::{ElementType, Layout, NativeType, PaddingValue, Shape};

/// A [`Shape`] in XLA's notation: `shape!(f32[2, 3])`, `shape!(f32[2, 3]{0, 1})`,
/// `shape!(s32[])`, `shape!(f32[n, 4])`.
///
/// Dimensions are integer expressions (converted with `as i64`); the layout, if given, lists
/// integer literals and is checked at compile time.
///
/// ```
/// use lazy_xla::shape;
/// let n = 7;
/// assert_eq!(shape!(f32[n, 4]).to_string(), "f32[7,4]{1,0}");
/// assert_eq!(shape!(f32[2, 3]{0, 1}).to_string(), "f32[2,3]{0,1}");
/// assert_eq!(shape!(s32[]).to_string(), "s32[]");
/// ```
///
/// A layout that is not a permutation of the dimensions does not compile:
///
/// ```compile_fail
/// let s = lazy_xla::shape!(f32[2, 3]{0, 0});
/// ```
///
/// # Panics
/// When a dimension computed at run time is negative, or the element count overflows `i64`.
pub use lazy_xla_macros::shape;
