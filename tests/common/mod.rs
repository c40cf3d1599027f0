//! Test helpers shared by the differential fuzzer (`fuzz_differential.rs`) and its regression
//! tests (`fuzz_regressions.rs`): a graph recipe ([`recipe`]) whose computations are
//! expressions ([`expr`]), its random generator ([`generate`], reading [`choices`]), an
//! independent reference interpreter ([`reference`] over [`values`] with the element
//! semantics of [`semantics`] and [`bits`]), the comparison against lazy-xla ([`check`]) and a
//! minimizer for failing recipes ([`minimize`]).
//!
//! Each test file compiles this module on its own and uses a part of it, hence the
//! `dead_code` allowance.
#![allow(dead_code)]

pub mod bits;
pub mod check;
pub mod choices;
pub mod computations;
pub mod expr;
pub mod generate;
pub mod golden;
pub mod minimize;
pub mod recipe;
pub mod reference;
pub mod semantics;
pub mod values;
