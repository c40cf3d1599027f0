//! The executor: compile a computation into an [`Executable`] and run it over layout-aware
//! buffers.

mod arg_extreme;
mod buffer_assignment;
mod comparator;
pub(crate) mod dot_step;
pub(crate) mod element;
pub(crate) mod executable;
mod fused_product;
mod half_convert;
mod heap;
pub(crate) mod kernels;
pub(crate) mod loop_program;
pub(crate) mod math;
mod memory;
pub(crate) mod plan;
mod relayout;
pub(crate) mod scalar_program;
mod value;

pub use executable::{CompileOptions, Executable};
pub use memory::MemoryStats;
