//! Shapes, layouts and indices: XLA's `Shape`, `Layout` and `IndexUtil`, and the text form.

pub(crate) mod index;
pub(crate) mod layout;
pub(crate) mod parse;
pub(crate) mod program_shape;
pub(crate) mod reshape;
#[allow(clippy::module_inception)]
pub(crate) mod shape;

pub use layout::{Layout, PaddingValue};
pub use shape::Shape;
