//! What each opcode of HLO text means in lazy-xla's IR: one line per opcode in [`OPCODES`]
//! (element-wise ops come from `UnaryOp::ALL` and `BinaryOp::ALL`, so a new one imports as
//! soon as it exists). `parameter` and `constant` are read by the instruction grammar, whose
//! operand lists they replace.

use crate::attributes::{BinaryOp, ComparisonDirection, DotDimensionNumbers, UnaryOp};
use crate::error::Result;
use crate::hlo::ir::Opcode;
use crate::hlo::parse::attributes::Attributes;
use crate::hlo::parse::cursor::error_at;
use crate::hlo::parse::lexer::Token;

/// What an instruction of the text becomes.
pub(super) enum Meaning {
    /// One IR instruction.
    Op(Opcode),
    /// Its operand's values in the instruction's own layout (`copy`, `opt-barrier`): the operand
    /// itself where the shapes are equal, else a relayout.
    Copy,
    /// A comparison in IEEE 754's total order (`type=TOTALORDER`, which jax's sort uses):
    /// floats compared as the integers XLA maps them to (`-NaN < -∞ < … < -0 < +0 < … < NaN`).
    TotalOrderCompare(ComparisonDirection),
    /// Its operand's memory read in the instruction's shape (`bitcast`: XLA's layout-only
    /// reinterpretation, which optimized dumps use for transposes and reshapes).
    Bitcast,
}

type Make = fn(&mut Attributes<'_, '_>) -> Result<Meaning>;

fn op(opcode: Opcode) -> Result<Meaning> {
    Ok(Meaning::Op(opcode))
}

/// Opcode name → what it becomes, reading the attributes it takes.
const OPCODES: &[(&str, Make)] = &[
    ("iota", |a| op(Opcode::Iota { dimension: a.int("iota_dimension")? })),
    ("compare", compare),
    ("select", |_| op(Opcode::Select)),
    ("clamp", |_| op(Opcode::Clamp)),
    ("convert", |_| op(Opcode::Convert)),
    ("broadcast", |a| op(Opcode::Broadcast { dimensions: a.ints("dimensions")? })),
    ("reshape", |_| op(Opcode::Reshape)),
    ("transpose", |a| op(Opcode::Transpose { permutation: a.ints("dimensions")? })),
    ("slice", |a| {
        a.slice().and_then(|(starts, limits, strides)| op(Opcode::Slice { starts, limits, strides }))
    }),
    ("concatenate", |a| op(Opcode::Concatenate { dimension: a.one_int("dimensions")? })),
    ("pad", |a| op(Opcode::Pad(a.padding()?))),
    ("reverse", |a| op(Opcode::Reverse { dimensions: a.ints("dimensions")? })),
    ("tuple", |_| op(Opcode::Tuple)),
    ("get-tuple-element", |a| op(Opcode::GetTupleElement { index: a.int("index")? })),
    ("reduce", |a| {
        op(Opcode::Reduce { dimensions: a.ints("dimensions")?, reducer: a.computation("to_apply")? })
    }),
    ("dot", dot),
    ("reduce-precision", reduce_precision),
    ("gather", |a| {
        op(Opcode::Gather {
            numbers: a.gather_numbers()?,
            slice_sizes: a.ints("slice_sizes")?,
            indices_are_sorted: a.bool_or("indices_are_sorted", false)?,
        })
    }),
    ("scatter", |a| {
        op(Opcode::Scatter {
            numbers: a.scatter_numbers()?,
            indices_are_sorted: a.bool_or("indices_are_sorted", false)?,
            unique_indices: a.bool_or("unique_indices", false)?,
            update: a.computation("to_apply")?,
        })
    }),
    ("dynamic-slice", |a| op(Opcode::DynamicSlice { slice_sizes: a.ints("dynamic_slice_sizes")? })),
    ("dynamic-update-slice", |_| op(Opcode::DynamicUpdateSlice)),
    ("reduce-window", |a| {
        op(Opcode::ReduceWindow { window: a.window()?, reducer: a.computation("to_apply")? })
    }),
    ("select-and-scatter", |a| {
        op(Opcode::SelectAndScatter {
            window: a.window()?,
            select: a.computation("select")?,
            scatter: a.computation("scatter")?,
        })
    }),
    ("convolution", convolution),
    ("sort", |a| {
        let (dimension, is_stable) = (a.one_int("dimensions")?, a.bool_or("is_stable", false)?);
        op(Opcode::Sort { dimension, is_stable, comparator: a.computation("to_apply")? })
    }),
    ("topk", |a| op(Opcode::TopK { k: a.int("k")?, largest: a.bool_or("largest", true)? })),
    ("rng-bit-generator", |a| op(Opcode::RngBitGenerator { algorithm: a.algorithm()? })),
    ("bitcast-convert", |_| op(Opcode::BitcastConvert)),
    ("while", |a| op(Opcode::While { condition: a.computation("condition")?, body: a.computation("body")? })),
    ("conditional", conditional),
    ("call", |a| op(Opcode::Call { computation: a.computation("to_apply")? })),
    ("map", |a| {
        op(Opcode::Map { dimensions: a.ints("dimensions")?, computation: a.computation("to_apply")? })
    }),
    // XLA's fusions (any kind) run as calls of their computations; lazy-xla fuses anew.
    ("fusion", |a| {
        a.word("kind")?;
        op(Opcode::Call { computation: a.computation("calls")? })
    }),
    ("copy", |_| Ok(Meaning::Copy)),
    ("opt-barrier", |_| Ok(Meaning::Copy)),
    ("bitcast", |_| Ok(Meaning::Bitcast)),
];

fn compare(a: &mut Attributes<'_, '_>) -> Result<Meaning> {
    let direction = a.direction()?;
    // FLOAT, SIGNED and UNSIGNED are what the operands' type implies.
    match a.word("type")? {
        Some(kind) if kind.text == "TOTALORDER" => Ok(Meaning::TotalOrderCompare(direction)),
        Some(kind) if !["FLOAT", "SIGNED", "UNSIGNED"].contains(&kind.text) => {
            Err(error_at(&kind, format!("unknown comparison type {}", kind.text)))
        }
        _ => op(Opcode::Compare(direction)),
    }
}

fn dot(a: &mut Attributes<'_, '_>) -> Result<Meaning> {
    let numbers = DotDimensionNumbers::new(
        &a.ints_or_empty("lhs_contracting_dims")?,
        &a.ints_or_empty("rhs_contracting_dims")?,
        &a.ints_or_empty("lhs_batch_dims")?,
        &a.ints_or_empty("rhs_batch_dims")?,
    );
    op(Opcode::Dot { numbers, precision: a.precision()? })
}

fn reduce_precision(a: &mut Attributes<'_, '_>) -> Result<Meaning> {
    let bits = |a: &mut Attributes<'_, '_>, name: &str| -> Result<i32> {
        let value = a.int(name)?;
        i32::try_from(value)
            .map_err(|_| crate::error::Error::invalid(format!("{name}={value} is out of range")))
    };
    let (exponent_bits, mantissa_bits) = (bits(a, "exponent_bits")?, bits(a, "mantissa_bits")?);
    op(Opcode::Unary(UnaryOp::ReducePrecision { exponent_bits, mantissa_bits }))
}

fn convolution(a: &mut Attributes<'_, '_>) -> Result<Meaning> {
    op(Opcode::Convolution {
        window: a.window()?,
        numbers: a.dim_labels()?,
        feature_group_count: a.int_or("feature_group_count", 1)?,
        batch_group_count: a.int_or("batch_group_count", 1)?,
        precision: a.precision()?,
    })
}

fn conditional(a: &mut Attributes<'_, '_>) -> Result<Meaning> {
    let branches = match a.has("branch_computations") {
        true => a.computations("branch_computations")?,
        false => vec![a.computation("true_computation")?, a.computation("false_computation")?],
    };
    op(Opcode::Conditional { branches })
}

/// XLA's opcodes lazy-xla does not implement (yet), named as such in the error.
const XLA_OPCODES: &[&str] = &[
    "add-dependency",
    "after-all",
    "all-gather",
    "all-gather-done",
    "all-gather-start",
    "all-reduce",
    "all-reduce-done",
    "all-reduce-start",
    "all-to-all",
    "async-done",
    "async-start",
    "async-update",
    "batch-norm-grad",
    "batch-norm-inference",
    "batch-norm-training",
    "cholesky",
    "collective-broadcast",
    "collective-permute",
    "collective-permute-done",
    "collective-permute-start",
    "copy-done",
    "copy-start",
    "custom-call",
    "domain",
    "dynamic-reshape",
    "get-dimension-size",
    "infeed",
    "outfeed",
    "partition-id",
    "recv",
    "recv-done",
    "reduce-scatter",
    "replica-id",
    "rng",
    "rng-get-and-update-state",
    "send",
    "send-done",
    "set-dimension-size",
    "stochastic-convert",
    "triangular-solve",
];

/// XLA's opcodes of complex numbers and the Fourier transform, out of lazy-xla's scope.
const OUT_OF_SCOPE: &[&str] = &["complex", "real", "imag", "fft"];

/// What the instruction whose opcode is `opcode` means, its attributes read from `attributes`.
pub(super) fn meaning(opcode: &Token<'_>, attributes: &mut Attributes<'_, '_>) -> Result<Meaning> {
    let name = opcode.text;
    if let Some(&unary) = UnaryOp::ALL.iter().find(|u| u.hlo_name() == name) {
        return op(Opcode::Unary(unary));
    }
    if let Some(&binary) = BinaryOp::ALL.iter().find(|b| b.hlo_name() == name) {
        return op(Opcode::Binary(binary));
    }
    if let Some((_, make)) = OPCODES.iter().find(|(known, _)| *known == name) {
        return make(attributes);
    }
    let message = if OUT_OF_SCOPE.contains(&name) {
        format!("complex numbers and fft are out of scope for lazy-xla: opcode {name}")
    } else if XLA_OPCODES.contains(&name) {
        format!("lazy-xla does not implement opcode {name}")
    } else {
        format!("unknown opcode: {name}")
    };
    Err(error_at(opcode, message))
}
