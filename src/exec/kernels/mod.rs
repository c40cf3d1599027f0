//! The kernels of what a strided loop cannot compute: dot, reduce with an interpreted
//! reducer, and the data movement that is not a view (a reordering reshape, concatenate, pad).

pub(crate) mod arg_reduce;
pub(crate) mod bitcast;
pub(crate) mod contraction;
pub(crate) mod convolution;
pub(crate) mod data_movement;
pub(crate) mod disjoint;
pub(crate) mod gather;
pub(crate) mod gemm;
pub(crate) mod indexing;
pub(crate) mod interpreted;
pub(crate) mod random;
pub(crate) mod scatter;
pub(crate) mod sort;
pub(crate) mod windows;
