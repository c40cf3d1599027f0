//! `XlaComputation`: a built, immutable graph that owns its data.

use std::sync::Arc;

use crate::error::Result;
use crate::hlo::dot::computation_dot;
use crate::hlo::ir::HloComputation;
use crate::hlo::parse::parse_module;
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

    /// The computation of an `HloModule` in XLA's text syntax: what [`to_hlo_text`] prints,
    /// what jax prints for `jax.jit(f).lower(..).as_text(dialect="hlo")`, XLA's dumps. Its
    /// `ENTRY` computation (else its last) is the one returned, with the computations it calls;
    /// every instruction is checked by the builder's shape inference. What XLA and jax add
    /// without changing values (`metadata`, `sharding`, `frontend_attributes`,
    /// `backend_config`, layouts of the entry, …) is read and ignored; XLA's fusions become
    /// calls of their computations, `copy` and `opt-barrier` their operand, `bitcast` the
    /// transposes and reshape it stands for. A malformed module, an opcode lazy-xla lacks or a
    /// shape that does not follow from the operands is an [`Error::HloText`] naming
    /// `line:column` and the token.
    ///
    /// [`to_hlo_text`]: XlaComputation::to_hlo_text
    /// [`Error::HloText`]: crate::Error::HloText
    ///
    /// ```
    /// use lazy_xla::{shape, CompileOptions, Literal, XlaComputation};
    /// let text = "HloModule double\n\nENTRY main.3 {\n  x.1 = f32[2]{0} parameter(0)\n  \
    ///             ROOT add.2 = f32[2]{0} add(x.1, x.1)\n}\n";
    /// let computation = XlaComputation::from_hlo_text(text)?;
    /// assert_eq!(computation.program_shape().result, shape!(f32[2]));
    /// let out = computation.compile(&CompileOptions::default())?.execute(&[&Literal::vec1(&[1.0f32, 2.0])])?;
    /// assert_eq!(out.to_vec::<f32>()?, [2.0, 4.0]);
    /// assert_eq!(XlaComputation::from_hlo_text(&computation.to_hlo_text())?, computation);
    ///
    /// let error = XlaComputation::from_hlo_text("HloModule m\nENTRY e {\n  ROOT x = f32[2]{0} fft()\n}")
    ///     .unwrap_err();
    /// assert_eq!(
    ///     error.to_string(),
    ///     "complex numbers and fft are out of scope for lazy-xla: opcode fft at 3:22 (`fft`)"
    /// );
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn from_hlo_text(text: &str) -> Result<XlaComputation> {
        parse_module(text).map(XlaComputation::new)
    }

    /// The computation as a Graphviz `digraph` (render it with `dot -Tsvg`): one box per
    /// instruction with its name, opcode and shape, an edge from each operand to its user,
    /// the root outlined twice. [`Executable::to_dot`](crate::Executable::to_dot) draws the
    /// optimized graph, each fusion a coloured cluster.
    ///
    /// ```
    /// use lazy_xla::{shape, XlaBuilder};
    /// let b = XlaBuilder::new("f");
    /// let x = b.parameter(0, &shape!(f32[2]), "x");
    /// let dot = b.build(-x)?.to_dot();
    /// assert!(dot.starts_with("digraph \"f."));
    /// assert!(dot.contains("n0 -> n1;"));
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn to_dot(&self) -> String {
        computation_dot(&self.entry)
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
