//! What an element-wise instruction computes: its unary or binary function, or its comparison.

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
    /// Round half to even (XLA's `RoundNearestEven`, `jnp.round`).
    RoundNearestEven,
    /// Sine.
    Sin,
    /// Cosine.
    Cos,
    /// Logical not of `pred`, bitwise not of integers.
    Not,
    /// Whether a float is neither infinite nor NaN (result `pred`).
    IsFinite,
    /// The number of leading zero bits of an integer.
    Clz,
    /// The number of one bits of an integer.
    PopulationCount,
    /// The error function.
    Erf,
    /// Tangent.
    Tan,
    /// Cube root.
    Cbrt,
    /// A float rounded to `mantissa_bits` explicit mantissa bits (to nearest, ties to even)
    /// and its exponent range narrowed to `exponent_bits` bits (beyond it: ±∞, below it: ±0),
    /// still in its own type: XLA's `ReducePrecision`.
    ReducePrecision {
        /// Exponent bits kept (at least 1).
        exponent_bits: i32,
        /// Explicit mantissa bits kept (at least 0).
        mantissa_bits: i32,
    },
}

impl UnaryOp {
    /// Every unary op without attributes (all but [`UnaryOp::ReducePrecision`]).
    ///
    /// ```
    /// assert!(lazy_xla::UnaryOp::ALL.contains(&lazy_xla::UnaryOp::Tanh));
    /// ```
    pub const ALL: [UnaryOp; 24] = {
        use UnaryOp::*;
        [
            Neg,
            Abs,
            Exp,
            Log,
            Log1p,
            Expm1,
            Tanh,
            Logistic,
            Sqrt,
            Rsqrt,
            Sign,
            Floor,
            Ceil,
            Round,
            Sin,
            Cos,
            Not,
            IsFinite,
            Clz,
            PopulationCount,
            Erf,
            Tan,
            Cbrt,
            RoundNearestEven,
        ]
    };

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
            RoundNearestEven => "round-nearest-even",
            Sin => "sine",
            Cos => "cosine",
            Not => "not",
            IsFinite => "is-finite",
            Clz => "count-leading-zeros",
            PopulationCount => "popcnt",
            Erf => "erf",
            Tan => "tan",
            Cbrt => "cbrt",
            ReducePrecision { .. } => "reduce-precision",
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
    /// Every binary op.
    ///
    /// ```
    /// assert!(lazy_xla::BinaryOp::ALL.contains(&lazy_xla::BinaryOp::Atan2));
    /// ```
    pub const ALL: [BinaryOp; 15] = {
        use BinaryOp::*;
        [
            Add,
            Sub,
            Mul,
            Div,
            Rem,
            Max,
            Min,
            Pow,
            Atan2,
            And,
            Or,
            Xor,
            ShiftLeft,
            ShiftRightArithmetic,
            ShiftRightLogical,
        ]
    };

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

impl ComparisonDirection {
    /// Whether `a` compares to `b` this way (IEEE for floats: every comparison with NaN is
    /// false but `NE`).
    #[allow(clippy::bool_comparison)] // one comparison for every element type, pred included
    pub(crate) fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        use ComparisonDirection::*;
        match self {
            Eq => a == b,
            Ne => a != b,
            Ge => a >= b,
            Gt => a > b,
            Le => a <= b,
            Lt => a < b,
        }
    }
}
