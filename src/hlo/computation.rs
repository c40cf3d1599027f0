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

    /// The computation as a serialized `xla.HloModuleProto` (XLA's `hlo.proto`, field numbers
    /// and all): what a PJRT plugin compiles as format `"hlo"`, and what jaxlib's
    /// `XlaComputation(bytes)` reads. It holds every computation the entry calls (callees
    /// first, each once), instruction and computation ids unique in the module, every shape
    /// with its layout (lazy-xla's padding left out, as in [`to_hlo_text`]), constants in
    /// their layout's order, and every attribute `to_hlo_text` prints;
    /// [`from_hlo_proto`](XlaComputation::from_hlo_proto) reads it back to a computation whose
    /// text is the same. Needs the `pjrt` feature.
    ///
    /// [`to_hlo_text`]: XlaComputation::to_hlo_text
    ///
    /// ```
    /// use lazy_xla::{shape, XlaBuilder, XlaComputation};
    /// let b = XlaBuilder::new("f");
    /// let x = b.parameter(0, &shape!(f32[2, 3]), "x");
    /// let computation = b.build(lazy_xla::exp(x))?;
    /// let bytes = computation.to_hlo_proto();
    /// let back = XlaComputation::from_hlo_proto(&bytes)?;
    /// assert_eq!(back.to_hlo_text(), computation.to_hlo_text());
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    #[cfg(feature = "pjrt")]
    pub fn to_hlo_proto(&self) -> Vec<u8> {
        crate::hlo::proto::module_to_proto(&self.entry)
    }

    /// The computation of a serialized `xla.HloModuleProto`: what
    /// [`to_hlo_proto`](XlaComputation::to_hlo_proto) writes, or XLA's own serialization of a
    /// module made of the opcodes lazy-xla has. Computations must come callees first and
    /// instructions operands first (as XLA writes them); the entry is the one
    /// `entry_computation_id` names (else the last). Every instruction is checked by shape
    /// inference, as [`from_hlo_text`](XlaComputation::from_hlo_text) checks it. Bytes that do
    /// not decode, an opcode, element type or field lazy-xla lacks (tiled layouts, dynamic
    /// dimensions, window reversal, dot algorithms), a missing field, an id that names nothing
    /// before it or a literal whose values do not fill its shape is an [`Error::HloProto`]
    /// naming the instruction; nothing is allocated beyond what the bytes hold. Needs the
    /// `pjrt` feature.
    ///
    /// [`Error::HloProto`]: crate::Error::HloProto
    ///
    /// ```
    /// use lazy_xla::XlaComputation;
    /// let error = XlaComputation::from_hlo_proto(&[0x1a, 0xff, 0x01]).unwrap_err();
    /// assert!(error.to_string().starts_with("HLO module proto: the bytes are not a serialized HloModuleProto"));
    /// ```
    #[cfg(feature = "pjrt")]
    pub fn from_hlo_proto(bytes: &[u8]) -> Result<XlaComputation> {
        crate::hlo::proto::module_from_proto(bytes).map(XlaComputation::new)
    }
}
