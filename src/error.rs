//! The one error type of lazy-xla.
//!
//! Every user-reachable failure is an [`Error`]. Where XLA rejects the same thing, the message
//! starts with XLA's own sentence, verbatim, so it can be searched for; context that XLA cannot
//! give (the op, its operand shapes with layouts, the caller's `file:line`) follows.

use std::panic::Location;

use crate::element_type::ElementType;

/// `Result` with lazy-xla's [`Error`] as the default error type.
///
/// ```
/// fn parse(s: &str) -> lazy_xla::Result<lazy_xla::Shape> {
///     s.parse()
/// }
/// assert!(parse("f32[2,3]").is_ok());
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in lazy-xla.
///
/// ```
/// use lazy_xla::{ElementType, Shape};
/// let err = Shape::with_layout(ElementType::F32, &[2, 3], &[0, 0]).unwrap_err();
/// assert!(err.to_string().starts_with("layout minor_to_major field has duplicate values: {0,0}"));
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// An argument XLA would reject with `InvalidArgument`; the text is XLA's sentence where
    /// XLA has one.
    #[error("{0}")]
    InvalidArgument(String),
    /// A shape string that does not follow XLA's notation.
    #[error("cannot parse shape {input:?}: {expected} at byte {offset} ({found})")]
    Parse {
        /// The whole text given.
        input: String,
        /// Byte offset of the offending character.
        offset: usize,
        /// What the parser wanted there.
        expected: String,
        /// What it found there, described (`'x'` or `end of input`).
        found: String,
    },
    /// Values of one element type used where another was required.
    #[error("element type mismatch: expected {expected}, got {actual}")]
    ElementTypeMismatch {
        /// The type the shape or parameter declares.
        expected: ElementType,
        /// The type that was given.
        actual: ElementType,
    },
    /// An op the builder rejected: XLA's sentence, then the op, its operands and where it was
    /// made.
    #[error("{source} (op {op}; operands {}) at {location}", join_shapes(operands))]
    Op {
        /// The op's name as HLO prints it (`add`, `broadcast`, …).
        op: String,
        /// The shapes of its operands in XLA's text form, with layouts (`f32[2,3]{1,0}`).
        operands: Vec<String>,
        /// The caller's `file:line:column`.
        location: &'static Location<'static>,
        /// The rejection itself.
        #[source]
        source: Box<Error>,
    },
    /// A computation that breaks the IR's contract, found by the verifier: an instruction whose
    /// shape is not what shape inference gives, an operand after its user, a fusion holding
    /// what its kind cannot compute, …; a bug in the stage named (or a malformed module).
    #[error("{message}: `{instruction}` in computation {computation} (verified after {stage})")]
    InvalidComputation {
        /// What made the computation: `build`, or the optimizer pass that changed it last.
        stage: String,
        /// The computation's name.
        computation: String,
        /// The offending instruction, as HLO text.
        instruction: String,
        /// What is wrong with it.
        message: String,
    },
    /// HLO text that does not parse, or does not make a valid computation: what is wrong
    /// (XLA's sentence where XLA has one), where (1-based line and column) and the token there.
    #[error("{message} at {line}:{column} (`{token}`)")]
    HloText {
        /// What is wrong.
        message: String,
        /// The line of the offending token.
        line: usize,
        /// Its column, in characters.
        column: usize,
        /// The offending token (`end of input` at the end).
        token: String,
    },
    /// A run that needs more memory than it may have (XLA's `RESOURCE_EXHAUSTED`), found from
    /// its plan before anything large is allocated.
    #[error("Out of memory: the run needs {needed} bytes, {available} available ({by})")]
    ResourceExhausted {
        /// The bytes the run needs (at its peak, or still to allocate).
        needed: u64,
        /// The bytes it may have.
        available: u64,
        /// What limits it: the `memory_limit`, or the memory the system has available.
        by: String,
    },
    /// Bytes that are not a serialized `xla.HloModuleProto` lazy-xla can read
    /// (`XlaComputation::from_hlo_proto`): malformed, or a module whose opcodes, element types
    /// or fields lazy-xla lacks; the sentence names the instruction and computation.
    #[error("HLO module proto: {0}")]
    HloProto(String),
    /// An error of a PJRT plugin (`lazy_xla::pjrt`, the `pjrt` feature), or of loading one: the
    /// plugin's sentence (or lazy-xla's, for a plugin that does not open or does not fit), then
    /// the C API function that failed, the plugin's error code, and the caller's `file:line`.
    #[error("{message} ({call}{}) at {location}", code_suffix(code))]
    Pjrt {
        /// What went wrong, as the plugin says it.
        message: String,
        /// abseil's name of the plugin's error code (`INVALID_ARGUMENT`, …); `None` when
        /// lazy-xla found the problem itself.
        code: Option<String>,
        /// The C API function that failed (`PJRT_Client_Compile`, …), or `lazy-xla`.
        call: String,
        /// The caller's `file:line:column`.
        location: &'static Location<'static>,
    },
    /// A feature XLA has that lazy-xla does not implement.
    #[error("unimplemented: {0}")]
    Unimplemented(String),
}

impl Error {
    /// An [`Error::InvalidArgument`] from anything printable.
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Error::InvalidArgument(message.into())
    }
}

/// Shapes joined as `f32[2]{0}, s32[]`.
fn join_shapes(shapes: &[String]) -> String {
    if shapes.is_empty() {
        "none".to_string()
    } else {
        shapes.join(", ")
    }
}

/// `, CODE` for a PJRT error code, nothing without one.
fn code_suffix(code: &Option<String>) -> String {
    code.as_ref().map_or_else(String::new, |code| format!(", {code}"))
}

/// Returns early with an [`Error::InvalidArgument`] built by `format!`.
macro_rules! invalid_argument {
    ($($arg:tt)*) => {
        return Err($crate::error::Error::InvalidArgument(format!($($arg)*)))
    };
}
pub(crate) use invalid_argument;
