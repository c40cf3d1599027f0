//! lazy-xla: XLA's `XlaBuilder` in pure Rust, with XLA's exact semantics and a fusing CPU
//! executor.
//!
//! You record ops into a graph with an [`XlaBuilder`]; each op's shape is inferred as it is made,
//! by XLA's rules. [`XlaBuilder::build`] returns an [`XlaComputation`], which prints as HLO text
//! and compiles into an [`Executable`] whose optimizer fuses chains of broadcasts and element-wise
//! ops into single strided loops. The executable runs over [`Literal`]s, host arrays in any
//! layout.
//!
//! ```
//! use lazy_xla::*;
//!
//! // The reducer of `reduce`: a scalar (f32, f32) -> f32 computation.
//! let r = XlaBuilder::new("max");
//! let (a, b) = (r.parameter(0, &shape!(f32[]), "a"), r.parameter(1, &shape!(f32[]), "b"));
//! let max_of = r.build(max(a, b, &[]))?;
//!
//! // x - max(x) along each row: a reduce, then a broadcast of its result back over the rows.
//! let b = XlaBuilder::new("shift_rows");
//! let x = b.parameter(0, &shape!(f32[2, 3]), "x");
//! let row_max = reduce(x, b.constant_r0(f32::NEG_INFINITY), &max_of, &[1]);
//! assert_eq!(b.get_shape(row_max)?, shape!(f32[2]));
//! let shifted = sub(x, row_max, &[0]); // row_max matched to dimension 0 of x
//! let computation = b.build(shifted)?;
//! assert!(computation.to_hlo_text().contains("dimensions={0}")); // the broadcast of row_max
//!
//! let exe = computation.compile(&CompileOptions::default())?;
//! let x_values = Literal::from_vec(&shape!(f32[2, 3]), vec![1.0f32, 5.0, 3.0, -2.0, -4.0, 0.0])?;
//! let out = exe.execute(&[&x_values])?;
//! assert_eq!(out.to_vec::<f32>()?, vec![-4.0, 0.0, -2.0, -2.0, -4.0, 0.0]);
//! # Ok::<(), lazy_xla::Error>(())
//! ```
//!
//! # Shapes and layouts
//!
//! A [`Shape`] is an [`ElementType`] (XLA's 13 real types, printed with XLA's names: `pred`,
//! `s32`, `bf16`, `f32`, …), the dimension sizes (`i64`, as in XLA) and a [`Layout`]: the
//! `minor_to_major` order of the dimensions in memory, optionally with padded dimensions and a
//! [`PaddingValue`]. The [`shape!`] macro writes shapes in XLA's notation, and shapes print and
//! parse in XLA's text form. A [`Literal`] takes and gives values in logical (row-major) order,
//! whatever its layout, and [`Literal::memory`] shows the bytes as they are laid out:
//!
//! ```
//! use lazy_xla::{shape, Literal, Shape};
//! let s = shape!(f32[2, 3]{0, 1}); // column-major: dimension 0 varies fastest
//! assert_eq!(s.to_string(), "f32[2,3]{0,1}");
//! assert_eq!("f32[2,3]{0,1}".parse::<Shape>()?, s);
//! let m = Literal::from_vec(&s, vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
//! assert_eq!(m.memory::<f32>()?, &[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
//! assert_eq!(m.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
//! # Ok::<(), lazy_xla::Error>(())
//! ```
//!
//! # Building, and errors
//!
//! Ops are free functions named as in XLA ([`add`], [`broadcast_in_dim`], [`reduce`],
//! [`dot_general`], …) taking and returning [`XlaOp`] handles, which are `Copy`; `x + y`, `x * y`
//! and `-x` work too. Binary ops broadcast as XLA does: `broadcast_dimensions` maps the lower-rank
//! operand's dimensions onto the other's, and the broadcast is recorded as an explicit
//! `broadcast` instruction, as XLA records it. [`XlaBuilder::get_shape`] gives any op's shape at
//! once.
//!
//! A bad op does not panic. It records an [`Error`] and returns a poisoned handle; as in XLA, the
//! first error fails the builder, so `get_shape` and `build` return it. The message is XLA's own
//! sentence for the rejection, then the op, its operand shapes and the `file:line:column` of the
//! call that made it:
//!
//! ```
//! use lazy_xla::*;
//! let b = XlaBuilder::new("oops");
//! let v = b.parameter(0, &shape!(f32[8]), "v");
//! let m = b.parameter(1, &shape!(f32[16, 8]), "m");
//! let bad = add(v, m, &[0]); // v's 8 elements matched to m's dimension 0, of 16
//! let error = b.build(bad).unwrap_err().to_string();
//! assert!(error.starts_with("Broadcast dimension 0 mismatch: 8 != 16; f32[8] and f32[16,8]."));
//! assert!(error.contains("(op add; operands f32[8]{0}, f32[16,8]{1,0}) at "));
//! ```
//!
//! # Compiling and running
//!
//! [`XlaComputation::compile`] runs the optimizer (simplification, common-subexpression and
//! dead-code elimination, fusion) and plans the kernels; [`CompileOptions`] turns fusion off or
//! fixes the number of threads. [`Executable::execute`] returns the result as a new [`Literal`]
//! in the root's layout; [`Executable::execute_into`] writes into an output you keep, in that
//! output's own layout, so repeated calls allocate nothing:
//!
//! ```
//! use lazy_xla::*;
//! let b = XlaBuilder::new("scale");
//! let x = b.parameter(0, &shape!(f32[2, 2]), "x");
//! let exe = b.build(x * b.constant_r0(10.0f32))?.compile(&CompileOptions::default())?;
//! let x_values = Literal::from_vec(&shape!(f32[2, 2]), vec![1.0f32, 2.0, 3.0, 4.0])?;
//! let mut out = Literal::zeros(&shape!(f32[2, 2]{0, 1}))?; // column-major output
//! exe.execute_into(&[&x_values], &mut out)?;
//! assert_eq!(out.to_vec::<f32>()?, vec![10.0, 20.0, 30.0, 40.0]);
//! assert_eq!(out.memory::<f32>()?, &[10.0, 30.0, 20.0, 40.0]);
//! # Ok::<(), lazy_xla::Error>(())
//! ```
//!
//! # Fusion
//!
//! Broadcasts, element-wise ops, converts and movement ops (transpose, reshape, slice, …)
//! feeding one another become one `fusion` instruction (XLA's `kind=kLoop`), run as one loop
//! over the output: a broadcast operand is read with stride 0 and a transpose through permuted
//! strides, nothing in between is materialized, and large outputs are split across threads.
//! [`Executable::to_hlo_text`] shows what the optimizer made; `CompileOptions { fusion: false,
//! .. }` runs op by op instead, with the same results:
//!
//! ```
//! use lazy_xla::*;
//! let b = XlaBuilder::new("w1");
//! let x = b.parameter(0, &shape!(f32[4, 8]), "x");
//! let bias = b.parameter(1, &shape!(f32[8]), "b");
//! let y = max(add(x, bias, &[1]), b.constant_r0(0.0f32), &[]) + b.constant_r0(1.0f32);
//! let computation = b.build(y)?;
//! let fused = computation.compile(&CompileOptions::default())?;
//! assert!(fused.to_hlo_text().contains("kind=kLoop"));
//! let unfused = computation.compile(&CompileOptions { fusion: false, ..Default::default() })?;
//! assert!(!unfused.to_hlo_text().contains("fusion"));
//! let x_values = Literal::from_vec(&shape!(f32[4, 8]), (0..32).map(|i| i as f32 - 16.0).collect())?;
//! let bias_values = Literal::vec1(&[0.5f32; 8]);
//! let arguments = [&x_values, &bias_values];
//! assert_eq!(fused.execute(&arguments)?, unfused.execute(&arguments)?);
//! # Ok::<(), lazy_xla::Error>(())
//! ```
//!
//! # On XLA's own backends
//!
//! With the `pjrt` cargo feature, `XlaComputation::to_hlo_proto` writes XLA's serialized
//! `HloModuleProto`, and the `pjrt` module compiles and runs a computation through a PJRT plugin
//! loaded at run time (XLA's CPU plugin, jax's CUDA plugin, `libtpu`, …), with the same
//! `Literal`s in and out; the repository's `docs/accelerators.md` shows the path.
//!
//! # Examples
//!
//! The repository's `examples/` are tutorials that run (`cargo run --release --example NAME`):
//!
//! - `tour`: the whole library in five minutes, ending with fused against unfused timing;
//! - `layouts`: XLA's shapes-and-layout document, fact by fact;
//! - `broadcasting`: every example of XLA's broadcasting document, built, printed and run;
//! - `mlp`: a two-layer perceptron (dot, bias, relu, softmax) checked against ndarray;
//! - `fused_vs_unfused`: the HLO before and after the optimizer, and the timing of both modes.
#![warn(missing_docs)]

extern crate self as lazy_xla;

mod attributes;
mod autodiff;
mod builder;
mod element_type;
mod error;
mod exec;
mod hlo;
mod literal;
mod passes;
#[cfg(feature = "pjrt")]
pub mod pjrt;
mod shape;
mod shape_inference;
mod storage;

pub use attributes::{
    BinaryOp, ComparisonDirection, DotDimensionNumbers, PaddingConfig, PaddingConfigDimension, Precision,
    PrecisionConfig, RandomAlgorithm, UnaryOp,
};
pub use attributes::{ConvolutionDimensionNumbers, GatherDimensionNumbers, Padding, ScatterDimensionNumbers};
pub use autodiff::{grad, jvp, value_and_grad, vjp};
pub use builder::*;
pub use element_type::ElementType;
pub use error::{Error, Result};
pub use exec::{CompileOptions, Executable, MemoryStats};
/// The `half` crate, whose `f16` and `bf16` hold lazy-xla's `f16` and `bf16` elements.
pub use half;
pub use hlo::computation::XlaComputation;
pub use literal::Literal;
pub use shape::program_shape::ProgramShape;
pub use shape::{Layout, PaddingValue, Shape};
pub use storage::NativeType;

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
