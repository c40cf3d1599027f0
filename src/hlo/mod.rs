//! The IR, the contract every stage speaks: HLO-like instructions in an arena in topological
//! order ([`HloComputation`](ir::HloComputation)), the built computation users hold ([`XlaComputation`]), what each
//! instruction may be and where it may be fused (`ir`, `loop_part`), the shape every
//! instruction must have (`infer`), the verifier that checks a computation after each stage
//! (`verify`), and the text form.
//!
//! The builder produces an [`XlaComputation`], the passes rewrite its `HloComputation`, the
//! executor consumes it; none of them imports a stage after it, and this module imports none
//! of them.
//!
//! [`XlaComputation`]: crate::XlaComputation

pub(crate) mod computation;
pub(crate) mod dot;
pub(crate) mod infer;
pub(crate) mod ir;
pub(crate) mod loop_part;
pub(crate) mod output_fusion;
pub(crate) mod parse;
#[cfg(feature = "pjrt")]
pub(crate) mod proto;
pub(crate) mod rewrite;
pub(crate) mod text;
pub(crate) mod verify;
