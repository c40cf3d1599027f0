//! The builder: [`XlaBuilder`] records ops into a graph, [`XlaOp`] handles them, the free
//! functions make them (one file per op family); [`XlaBuilder::build`] returns the graph as an
//! [`XlaComputation`](crate::XlaComputation).

#[allow(clippy::module_inception)]
mod builder;
mod contraction;
mod control;
mod convolution;
mod data_movement;
mod elementwise;
mod indexing;
mod lowering;
mod operators;
mod random;
mod sorting;
mod tuples;
mod windows;

pub use builder::{XlaBuilder, XlaOp};
pub use contraction::{dot, dot_general, dot_general_with, dot_with, reduce, reduce_variadic};
pub use control::{call, conditional, conditional_indexed, map, while_loop};
pub use convolution::{conv, conv_general_dilated, conv_general_dilated_with};
pub use data_movement::{
    broadcast, broadcast_in_dim, concat_in_dim, iota, pad, reshape, rev, slice, transpose,
};
pub use elementwise::{
    abs, add, and, atan2, bitcast_convert_type, cbrt, ceil, clamp, clz, convert_element_type, cos, div, eq,
    erf, exp, expm1, floor, ge, gt, is_finite, le, log, log1p, logistic, lt, max, min, mul, ne, neg, not, or,
    population_count, pow, reduce_precision, rem, round, round_nearest_even, rsqrt, select, shift_left,
    shift_right_arithmetic, shift_right_logical, sign, sin, sqrt, sub, tan, tanh, xor,
};
pub use indexing::{dynamic_slice, dynamic_update_slice, gather, scatter};
pub use random::rng_bit_generator;
pub use sorting::{sort, top_k};
pub use tuples::{get_tuple_element, tuple};
pub use windows::{
    reduce_window, reduce_window_with_general_padding, select_and_scatter,
    select_and_scatter_with_general_padding,
};
