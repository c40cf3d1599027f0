//! `XlaComputation`: a built, immutable graph that owns its data.

use std::sync::Arc;

use crate::hlo::ir::HloComputation;
use crate::hlo::text::module_text;
use crate::shape::program_shape::ProgramShape;

/// A built computation: an immutable graph (it outlives its builder; `Send + Sync`), ready to
/// print as HLO text or to compile.
///
/// ```
/// use lazy_xla::{shape, XlaBuilder, XlaComputation};
/// let computation: XlaComputation = {
///     let b = XlaBuilder::new("negate");
///     let x = b.parameter(0, &shape!(f32[3]), "x");
///     b.build(-x)?
/// };
/// assert!(computation.to_hlo_text().contains("negate("));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct XlaComputation {
    pub(crate) entry: Arc<HloComputation>,
}

impl XlaComputation {
    pub(crate) fn new(entry: HloComputation) -> XlaComputation {
        XlaComputation { entry: Arc::new(entry) }
    }

    /// The parameters' names and shapes and the result's shape.
    ///
    /// ```
    /// let b = lazy_xla::XlaBuilder::new("f");
    /// let computation = b.build(b.constant_r0(1u8))?;
    /// assert!(computation.program_shape().parameters.is_empty());
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn program_shape(&self) -> ProgramShape {
        self.entry.program_shape()
    }

    /// The computation's name in HLO text (the builder's name and a unique suffix).
    ///
    /// ```
    /// let b = lazy_xla::XlaBuilder::new("f");
    /// assert!(b.build(b.constant_r0(1u8))?.name().starts_with("f."));
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn name(&self) -> &str {
        &self.entry.name
    }

    /// The computation as an `HloModule` in XLA's text syntax, which XLA's own HLO parser
    /// accepts: reducers first, then the `ENTRY` computation.
    ///
    /// ```
    /// use lazy_xla::{shape, XlaBuilder};
    /// let b = XlaBuilder::new("f");
    /// let x = b.parameter(0, &shape!(f32[2]), "x");
    /// let text = b.build(x + x)?.to_hlo_text();
    /// assert!(text.starts_with("HloModule f"));
    /// assert!(text.contains("ROOT add.2 = f32[2]{0} add(x.1, x.1)"));
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn to_hlo_text(&self) -> String {
        module_text(&self.entry)
    }
}
