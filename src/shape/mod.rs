//! Shapes, layouts and indices: XLA's `Shape`, `Layout`, `PrimitiveType` and `IndexUtil`.

pub(crate) mod element_type;
pub(crate) mod index;
pub(crate) mod layout;
pub(crate) mod parse;
#[allow(clippy::module_inception)]
pub(crate) mod shape;

pub use element_type::{ElementType, NativeType};
pub use layout::{Layout, PaddingValue};
pub use shape::Shape;
