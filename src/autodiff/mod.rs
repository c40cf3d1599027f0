//! Derivatives of computations (API.md, section `autodiff`), jax's design: every op has a JVP
//! rule that records its tangent as linear ops on a tape (`tape.rs`), beside the primal value
//! copied into a new builder; forward mode applies them as recorded, reverse mode transposes
//! the tape from the result's cotangent. Files in import order: `tape.rs` (the tape and the
//! `Linear` trait), the rules by op family (`elementwise.rs`, `movement.rs`, `reduction.rs`,
//! `contraction.rs`, `convolution.rs`, `windows.rs`, `sorting.rs`; each op's JVP rule beside its linear ops' transposes;
//! `control.rs`, while and conditional, by walks of their bodies and branches, the walk handed
//! in), `walk.rs` (the instruction walk, through calls), `transform.rs` (`grad`,
//! `value_and_grad`, `vjp`, `jvp`).

mod contraction;
mod control;
mod convolution;
mod elementwise;
mod movement;
mod reduction;
mod residuals;
mod sorting;
mod tape;
mod transform;
mod walk;
mod windows;

pub use transform::{grad, jvp, value_and_grad, vjp};
