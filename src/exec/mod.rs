//! The executor: compile a computation into an [`Executable`] and run it over layout-aware
//! buffers.

pub(crate) mod dot_step;
pub(crate) mod element;
mod executable;
mod half_convert;
pub(crate) mod kernels;
pub(crate) mod loop_program;
pub(crate) mod math;
pub(crate) mod plan;
mod relayout;
pub(crate) mod scalar_program;
mod value;

pub use executable::{CompileOptions, Executable};
