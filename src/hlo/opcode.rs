//! What an HLO instruction does: its opcode and attributes.

use std::fmt;
use std::sync::Arc;

use crate::hlo::HloComputation;
use crate::Literal;

/// An element-wise function of one operand.
///
/// ```
/// assert_eq!(lazy_xla::UnaryOp::Exp.hlo_name(), "exponential");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x`.
    Neg,
    /// `|x|`.
    Abs,
    /// `eˣ`.
    Exp,
    /// `ln x`.
    Log,
    /// `ln(1 + x)`.
    Log1p,
    /// `eˣ - 1`.
    Expm1,
    /// Hyperbolic tangent.
    Tanh,
    /// `1 / (1 + e⁻ˣ)`.
    Logistic,
    /// Square root.
    Sqrt,
    /// `1 / √x`.
    Rsqrt,
    /// -1, 0 or 1 (and ±0, NaN for floats).
    Sign,
    /// Round toward -∞.
    Floor,
    /// Round toward +∞.
    Ceil,
    /// Round half away from zero.
    Round,
    /// Sine.
    Sin,
    /// Cosine.
    Cos,
    /// Logical not of `pred`, bitwise not of integers.
    Not,
    /// Whether a float is neither infinite nor NaN (result `pred`).
    IsFinite,
}

impl UnaryOp {
    /// The opcode's name in HLO text.
    pub fn hlo_name(self) -> &'static str {
        use UnaryOp::*;
        match self {
            Neg => "negate",
            Abs => "abs",
            Exp => "exponential",
            Log => "log",
            Log1p => "log-plus-one",
            Expm1 => "exponential-minus-one",
            Tanh => "tanh",
            Logistic => "logistic",
            Sqrt => "sqrt",
            Rsqrt => "rsqrt",
            Sign => "sign",
            Floor => "floor",
            Ceil => "ceil",
            Round => "round-nearest-afz",
            Sin => "sine",
            Cos => "cosine",
            Not => "not",
            IsFinite => "is-finite",
        }
    }
}

/// An element-wise function of two operands of one shape.
///
/// ```
/// assert_eq!(lazy_xla::BinaryOp::Sub.hlo_name(), "subtract");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b` (integers truncate toward zero).
    Div,
    /// Remainder with the dividend's sign.
    Rem,
    /// The larger.
    Max,
    /// The smaller.
    Min,
    /// `aᵇ`.
    Pow,
    /// `atan2(a, b)`.
    Atan2,
    /// Logical/bitwise and.
    And,
    /// Logical/bitwise or.
    Or,
    /// Logical/bitwise exclusive or.
    Xor,
    /// `a << b`.
    ShiftLeft,
    /// `a >> b`, filling with the sign bit.
    ShiftRightArithmetic,
    /// `a >> b`, filling with zeros.
    ShiftRightLogical,
}

impl BinaryOp {
    /// The opcode's name in HLO text (and in XLA's messages).
    pub fn hlo_name(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Add => "add",
            Sub => "subtract",
            Mul => "multiply",
            Div => "divide",
            Rem => "remainder",
            Max => "maximum",
            Min => "minimum",
            Pow => "power",
            Atan2 => "atan2",
            And => "and",
            Or => "or",
            Xor => "xor",
            ShiftLeft => "shift-left",
            ShiftRightArithmetic => "shift-right-arithmetic",
            ShiftRightLogical => "shift-right-logical",
        }
    }
}

/// The comparison a `compare` makes.
///
/// ```
/// assert_eq!(lazy_xla::ComparisonDirection::Gt.to_string(), "GT");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, derive_more::Display)]
pub enum ComparisonDirection {
    /// `==`.
    #[display("EQ")]
    Eq,
    /// `!=`.
    #[display("NE")]
    Ne,
    /// `>=`.
    #[display("GE")]
    Ge,
    /// `>`.
    #[display("GT")]
    Gt,
    /// `<=`.
    #[display("LE")]
    Le,
    /// `<`.
    #[display("LT")]
    Lt,
}

/// Which dimensions a `dot_general` contracts and which it batches over (xla_data.proto's
/// `DotDimensionNumbers`).
///
/// ```
/// use lazy_xla::DotDimensionNumbers;
/// let batched_matmul = DotDimensionNumbers {
///     lhs_contracting_dimensions: vec![2],
///     rhs_contracting_dimensions: vec![1],
///     lhs_batch_dimensions: vec![0],
///     rhs_batch_dimensions: vec![0],
/// };
/// assert_eq!(batched_matmul.lhs_batch_dimensions, [0]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct DotDimensionNumbers {
    /// Dimensions of the lhs summed over.
    pub lhs_contracting_dimensions: Vec<i64>,
    /// Dimensions of the rhs summed over, pairwise with the lhs's.
    pub rhs_contracting_dimensions: Vec<i64>,
    /// Dimensions of the lhs that index independent products.
    pub lhs_batch_dimensions: Vec<i64>,
    /// Dimensions of the rhs that index independent products, pairwise with the lhs's.
    pub rhs_batch_dimensions: Vec<i64>,
}

/// Padding of one dimension (xla_data.proto's `PaddingConfigDimension`).
///
/// ```
/// let p = lazy_xla::PaddingConfigDimension { edge_padding_low: 1, edge_padding_high: -1, interior_padding: 2 };
/// assert_eq!(p.interior_padding, 2);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PaddingConfigDimension {
    /// Elements added before the first (negative: removed).
    pub edge_padding_low: i64,
    /// Elements added after the last (negative: removed).
    pub edge_padding_high: i64,
    /// Elements added between each pair of neighbours (never negative).
    pub interior_padding: i64,
}

/// Padding of every dimension (xla_data.proto's `PaddingConfig`).
///
/// ```
/// use lazy_xla::{PaddingConfig, PaddingConfigDimension};
/// let config = PaddingConfig { dimensions: vec![PaddingConfigDimension::default(); 2] };
/// assert_eq!(config.dimensions.len(), 2);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PaddingConfig {
    /// One entry per dimension of the operand.
    pub dimensions: Vec<PaddingConfigDimension>,
}

/// What a fusion computes (XLA's fusion kinds).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, derive_more::Display)]
pub(crate) enum FusionKind {
    /// An element-wise loop over the output.
    #[display("kLoop")]
    Loop,
    /// A reduction whose input is computed on the fly.
    #[display("kInput")]
    Input,
}

/// An instruction's operation and attributes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Opcode {
    Parameter {
        number: i64,
    },
    Constant(Arc<Literal>),
    Iota {
        dimension: i64,
    },
    Unary(UnaryOp),
    Binary(BinaryOp),
    Compare(ComparisonDirection),
    Select,
    Clamp,
    Convert,
    /// XLA's HLO broadcast: operand dimension `i` becomes output dimension `dimensions[i]`.
    Broadcast {
        dimensions: Vec<i64>,
    },
    Reshape,
    Transpose {
        permutation: Vec<i64>,
    },
    Slice {
        starts: Vec<i64>,
        limits: Vec<i64>,
        strides: Vec<i64>,
    },
    Concatenate {
        dimension: i64,
    },
    Pad(PaddingConfig),
    Reverse {
        dimensions: Vec<i64>,
    },
    Reduce {
        dimensions: Vec<i64>,
        reducer: Arc<HloComputation>,
    },
    Dot(DotDimensionNumbers),
    /// A fusion: the called computation's parameters are this instruction's operands.
    Fusion {
        kind: FusionKind,
        computation: Arc<HloComputation>,
    },
}

impl Opcode {
    /// The opcode's name in HLO text.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Opcode::Parameter { .. } => "parameter",
            Opcode::Constant(_) => "constant",
            Opcode::Iota { .. } => "iota",
            Opcode::Unary(op) => op.hlo_name(),
            Opcode::Binary(op) => op.hlo_name(),
            Opcode::Compare(_) => "compare",
            Opcode::Select => "select",
            Opcode::Clamp => "clamp",
            Opcode::Convert => "convert",
            Opcode::Broadcast { .. } => "broadcast",
            Opcode::Reshape => "reshape",
            Opcode::Transpose { .. } => "transpose",
            Opcode::Slice { .. } => "slice",
            Opcode::Concatenate { .. } => "concatenate",
            Opcode::Pad(_) => "pad",
            Opcode::Reverse { .. } => "reverse",
            Opcode::Reduce { .. } => "reduce",
            Opcode::Dot(_) => "dot",
            Opcode::Fusion { .. } => "fusion",
        }
    }
}

impl fmt::Display for PaddingConfig {
    /// XLA's `PaddingConfigToString`: `lo_hi` per dimension, or `lo_hi_interior` for every
    /// dimension when any has interior padding, joined by `x`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let interior = self.dimensions.iter().any(|d| d.interior_padding != 0);
        let parts: Vec<String> = self
            .dimensions
            .iter()
            .map(|d| {
                if interior {
                    format!("{}_{}_{}", d.edge_padding_low, d.edge_padding_high, d.interior_padding)
                } else {
                    format!("{}_{}", d.edge_padding_low, d.edge_padding_high)
                }
            })
            .collect();
        f.write_str(&parts.join("x"))
    }
}
