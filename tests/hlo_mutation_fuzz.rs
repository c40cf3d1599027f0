//! Mutation fuzzing of HLO text import (`XlaComputation::from_hlo_text`) over every module in
//! `examples/hlo/*.hlo`, read at run time.
//!
//! Each case applies one to four mutations to one module:
//!
//! - lines deleted, duplicated, swapped, or inserted: instructions of every opcode the importer
//!   reads, written over the module's own names, shapes and computations (made the root, and
//!   one of their numbers changed, at times);
//! - numbers changed (dimensions, layouts, attribute values, constants, parameter numbers,
//!   indices, the digits of names) to 0, -1, 2^31, 2^63-1, 10^20, random ones;
//! - element types changed: to other types, to XLA's that lazy-xla lacks (`f8e4m3fn`), to
//!   garbage;
//! - opcodes changed, to other opcodes and to nonsense;
//! - attributes deleted, duplicated, renamed, given other values, added (`dimensions`,
//!   `slice`, `window`, `dim_labels`, `to_apply`, `lhs_contracting_dims`, `padding`, …);
//! - operands renamed (to other instructions, to the instruction itself, to computations, to
//!   nothing), added and removed; the root moved;
//! - shapes made tuples; layouts reversed, dropped, malformed or padded (lazy-xla's extension);
//! - a dimension size or an element type changed everywhere it is written, so that the module
//!   stays consistent and imports (zero-sized, huge and retyped modules);
//! - the text truncated at a random byte offset (inside a multi-byte character too, once one
//!   is inserted), random bytes inserted or deleted.
//!
//! The choices come from proptest with a fixed seed, so a run is repeatable (and needs no
//! failure persistence file).
//!
//! `from_hlo_text` must return `Ok` or `Err`, never panic, hang or abort. A module that imports
//! must print text that imports back to the same text, and compile fused and unfused (both, or
//! neither). When every array in the imported module (the parameters, the result and every
//! instruction between) has at most [`MAX_RUN_ELEMENTS`] elements and it has no `while` loop
//! (a mutated trip count may never end), both executables run on the same deterministic
//! arguments (zeros, or small values counting up, per element type) and must both fail or
//! agree: exactly (NaN equal to NaN), or within float reassociation tolerance when a dot or a
//! reduction is present. An `Err` from `compile` or `execute` is fine; a panic is not. Every
//! case runs on a thread of its own under `catch_unwind` and a [`CASE_TIMEOUT`]. A run goes on
//! past failures; at its end every kind of failure found (a panic's location, another
//! failure's first line) is reported with its count, its message, the stage it happened in
//! and its first case, minimized (lines deleted, instructions made parameters) while it fails
//! the same way.
//!
//! The normal run tries [`QUICK_CASES`] mutated modules and truncates each module at every
//! [`QUICK_STRIDE`]th byte offset (and at each offset inside a multi-byte character); the soak
//! tries [`SOAK_CASES`] mutated modules (the environment variable `LAZY_XLA_HLO_FUZZ_CASES`
//! changes the number, `LAZY_XLA_HLO_FUZZ_SEED` the sequence) and truncates at every offset:
//!
//! ```text
//! LAZY_XLA_HLO_FUZZ_CASES=20000 cargo test --test hlo_mutation_fuzz -- --ignored soak --nocapture
//! ```
//!
//! (`--nocapture` shows how far the cases got, and the errors compile and execute gave.) A
//! crash that `catch_unwind` cannot catch (an abort, a stack overflow) ends the process; with
//! `LAZY_XLA_HLO_FUZZ_TRACE=1` every text is printed before it runs, so the last one printed
//! is the culprit. The `replay` test runs one module from a file (`LAZY_XLA_HLO_FUZZ_REPLAY`),
//! for checking a failure minimized by hand.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Mutex, Once, PoisonError};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use lazy_xla::half::{bf16, f16};
use lazy_xla::{CompileOptions, ElementType, Literal, NativeType, Shape, XlaComputation};
use proptest::array::uniform4;
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngSeed, TestRunner};

/// Mutated modules in the normal run (about a second in the debug test profile).
const QUICK_CASES: u32 = 500;
/// Mutated modules in the soak, unless `LAZY_XLA_HLO_FUZZ_CASES` says otherwise.
const SOAK_CASES: u32 = 20_000;
/// The normal run truncates each module at every this many bytes.
const QUICK_STRIDE: usize = 5;
/// The seed of the mutations' sequence, unless `LAZY_XLA_HLO_FUZZ_SEED` says otherwise.
const SEED: u64 = 49;
/// The most elements any array of a module may have for the module to be run.
const MAX_RUN_ELEMENTS: i64 = 1_000_000;
/// How long one case (import, two compiles, two runs) may take before it counts as hung.
const CASE_TIMEOUT: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------------------------------------
// What mutations choose from.

/// Element types to change an array's type to: lazy-xla's, XLA's that lazy-xla lacks, garbage.
const ELEMENT_TYPES: &[&str] = &[
    "s32", "pred", "bf16", "u64", "f8e4m3fn", "f16", "f64", "s8", "u8", "s16", "u16", "u32", "s64", "f8e5m2",
    "s4", "u2", "c64", "c128", "token", "opaque", "F32", "f33", "f", "", "tuple",
];

/// Opcodes to change an instruction's opcode to: every one the importer reads, some of XLA's it
/// refuses, and nonsense.
const OPCODES: &[&str] = &[
    "negate",
    "abs",
    "exponential",
    "log",
    "log-plus-one",
    "exponential-minus-one",
    "tanh",
    "logistic",
    "sqrt",
    "rsqrt",
    "sign",
    "floor",
    "ceil",
    "round-nearest-afz",
    "round-nearest-even",
    "sine",
    "cosine",
    "not",
    "is-finite",
    "count-leading-zeros",
    "popcnt",
    "erf",
    "tan",
    "cbrt",
    "reduce-precision",
    "add",
    "subtract",
    "multiply",
    "divide",
    "remainder",
    "maximum",
    "minimum",
    "power",
    "atan2",
    "and",
    "or",
    "xor",
    "shift-left",
    "shift-right-arithmetic",
    "shift-right-logical",
    "iota",
    "compare",
    "select",
    "clamp",
    "convert",
    "broadcast",
    "reshape",
    "transpose",
    "slice",
    "concatenate",
    "pad",
    "reverse",
    "tuple",
    "get-tuple-element",
    "reduce",
    "dot",
    "gather",
    "scatter",
    "dynamic-slice",
    "dynamic-update-slice",
    "reduce-window",
    "select-and-scatter",
    "convolution",
    "sort",
    "topk",
    "rng-bit-generator",
    "bitcast-convert",
    "while",
    "conditional",
    "call",
    "map",
    "fusion",
    "copy",
    "opt-barrier",
    "bitcast",
    "parameter",
    "constant",
    "custom-call",
    "fft",
    "rng",
    "after-all",
    "all-reduce",
    "complex",
    "ADD",
    "add_",
    "",
    "-",
    "foo",
    "%add",
    "ROOT",
];

/// Replacement numbers: the edges of `i32`, `u32`, `i64`, `u64`, beyond them, and things that
/// are numbers only to some readers.
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "3",
    "2147483647",
    "2147483648",
    "-2147483649",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "100000000000000000000",
    "1e300",
    "-0",
    "0.5",
    "1e-05",
    "nan",
    "-inf",
    "0x10",
    "+3",
    "",
    "٣",
];

/// Values to give an attribute.
const ATTRIBUTE_VALUES: &[&str] = &[
    "{}",
    "{0}",
    "{1}",
    "{2}",
    "{1,0}",
    "{0,1}",
    "{0,0}",
    "{-1}",
    "{0,1,2}",
    "{2147483648}",
    "{9223372036854775807}",
    "{-9223372036854775808}",
    "0",
    "-1",
    "1",
    "3",
    "9223372036854775807",
    "GE",
    "LT",
    "XX",
    "TOTALORDER",
    "kLoop",
    "kInput",
    "{[0:2]}",
    "{[0:10:2], [0:16]}",
    "{[5:2], [0:16]}",
    "{[0:10:0], [0:16]}",
    "{[0:10:-1], [0:16]}",
    "{[0:9223372036854775807], [0:16]}",
    "{[-1:10], [0:16]}",
    "\"\"",
    "",
    "{",
    "}",
    "{size=2x2}",
    "{size=1x1 stride=1x1 pad=0_0x0_0}",
    "{size=0x9223372036854775807}",
    "{size=2x2 stride=0x0}",
    "{size=3 pad=-5_-5 lhs_dilate=0 rhs_dilate=2}",
    "b01f_01io->b01f",
    "bf_io->bf",
    "bf_oi->bf",
    "bb_oo->bb",
    "0_0x1_1",
    "0_0_1x0_0_0",
    "-1_-1x0_0",
    "0_0_-1x0_0",
    "9223372036854775807_1x0_0",
    "true",
    "false",
    "rng_default",
    "rng_three_fry",
    "{default}",
    "{highest, highest}",
    "{ {0} }",
];

/// Names to rename an attribute to.
const ATTRIBUTE_NAMES: &[&str] = &[
    "dimensions",
    "to_apply",
    "slice",
    "window",
    "dim_labels",
    "padding",
    "lhs_contracting_dims",
    "rhs_contracting_dims",
    "lhs_batch_dims",
    "rhs_batch_dims",
    "iota_dimension",
    "index",
    "direction",
    "type",
    "kind",
    "calls",
    "metadata",
    "sharding",
    "dimension",
    "foo",
    "",
];

/// Whole attributes to add to an instruction.
const ATTRIBUTES: &[&str] = &[
    "dimensions={0}",
    "dimensions={}",
    "dimensions={1,0}",
    "dimensions={0,1,2}",
    "slice={[0:10], [0:16:2]}",
    "slice={[0:1]}",
    "window={size=1x3 pad=0_0x1_1}",
    "window={size=2x2 stride=2x2}",
    "window={size=1}",
    "dim_labels=bf_io->bf",
    "dim_labels=b01f_01io->b01f",
    "lhs_contracting_dims={1}",
    "rhs_contracting_dims={0}",
    "lhs_batch_dims={0}",
    "rhs_batch_dims={0}",
    "padding=0_0x1_1",
    "padding=0_0_1x0_0_0",
    "padding=",
    "iota_dimension=0",
    "iota_dimension=2",
    "index=0",
    "index=2",
    "direction=GE",
    "type=TOTALORDER",
    "type=FLOAT",
    "metadata={op_name=\"jit(f)/x\" source_file=\"f.py\" source_line=3}",
    "sharding={replicated}",
    "operand_precision={highest,default}",
    "precision_config={highest,highest}",
    "feature_group_count=2",
    "batch_group_count=0",
    "is_stable=true",
    "k=2",
    "largest=false",
    "kind=kLoop",
    "exponent_bits=5",
    "mantissa_bits=-1",
    "indices_are_sorted=true",
    "unique_indices=true",
    "slice_sizes={1,16}",
    "dynamic_slice_sizes={1,1}",
    "algorithm=rng_three_fry",
    "backend_config=\"{}\"",
    "frontend_attributes={a=\"b\"}",
    "offset_dims={1}",
    "collapsed_slice_dims={0}",
    "start_index_map={0}",
    "index_vector_dim=1",
    "update_window_dims={1}",
    "inserted_window_dims={0}",
    "scatter_dims_to_operand_dims={0}",
    "unknown_attribute=7",
];

/// Attributes that name a computation, to add with one of the module's computations.
const CALL_ATTRIBUTES: &[&str] =
    &["to_apply", "calls", "condition", "body", "select", "scatter", "true_computation", "false_computation"];

/// Instructions to insert. `{N}` is a fresh name, `{A}`…`{D}` names of instructions of the
/// computation the line goes into, `{SA}`/`{SB}` the shapes of `{A}`/`{B}`, `{R}` a name of
/// one of the module's computations.
const TEMPLATES: &[&str] = &[
    "{N} = {SA} negate({A})",
    "{N} = {SA} add({A}, {B})",
    "{N} = {SA} copy({A})",
    "{N} = {SA} opt-barrier({A})",
    "{N} = {SA} reverse({A}), dimensions={0}",
    "{N} = {SA} clamp({A}, {A}, {A})",
    "{N} = {SA} select({B}, {A}, {A})",
    "{N} = {SA} sort({A}), dimensions={0}, to_apply={R}",
    "{N} = {SA} sort({A}, {B}), dimensions={1}, is_stable=true, to_apply={R}",
    "{N} = {SA} map({A}, {B}), dimensions={0,1}, to_apply={R}",
    "{N} = {SA} call({A}, {B}), to_apply={R}",
    "{N} = {SA} call({A}, {B}, {C}), to_apply={R}",
    "{N} = {SA} fusion({A}, {B}), kind=kLoop, calls={R}",
    "{N} = {SA} while({A}), condition={R}, body={R}",
    "{N} = {SA} conditional({B}, {A}, {A}), branch_computations={{R}, {R}}",
    "{N} = {SA} conditional({B}, {A}, {C}), true_computation={R}, false_computation={R}",
    "{N} = {SA} reduce-precision({A}), exponent_bits=5, mantissa_bits=10",
    "{N} = {SA} bitcast({A})",
    "{N} = f32[160]{0} bitcast({A})",
    "{N} = {SA} convert({A})",
    "{N} = s32[10,16]{1,0} bitcast-convert({A})",
    "{N} = {SA} rng-bit-generator({A}), algorithm=rng_default",
    "{N} = {SA} custom-call({A}), custom_call_target=\"f\"",
    "{N} = f32[10,8]{1,0} slice({A}), slice={[0:10], [0:16:2]}",
    "{N} = f32[5]{0} slice({A}), slice={[0:10:2]}",
    "{N} = f32[12,18]{1,0} pad({A}, {B}), padding=1_1x1_1",
    "{N} = f32[10,31]{1,0} pad({A}, {B}), padding=0_0x0_0_1",
    "{N} = f32[10,16]{1,0} reduce-window({A}, {B}), window={size=1x3 pad=0_0x1_1}, to_apply={R}",
    "{N} = f32[6,16]{1,0} reduce-window({A}, {B}), window={size=1x1 stride=2x1 lhs_dilate=1x1}, to_apply={R}",
    concat!(
        "{N} = f32[10,16]{1,0} select-and-scatter({A}, {B}, {C}), window={size=2x2 stride=2x2}, ",
        "select={R}, scatter={R}"
    ),
    "{N} = f32[10,10]{1,0} convolution({A}, {B}), dim_labels=bf_oi->bf",
    concat!(
        "{N} = f32[10,5,16]{2,1,0} convolution({A}, {B}), window={size=2 stride=2 pad=0_1 rhs_dilate=1}, ",
        "dim_labels=b0f_0io->b0f"
    ),
    "{N} = f32[10,10]{1,0} dot({A}, {B}), lhs_contracting_dims={1}, rhs_contracting_dims={1}",
    "{N} = f32[16,16]{1,0} dot({A}, {B}), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
    concat!(
        "{N} = f32[10]{0} dot({A}, {B}), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, ",
        "rhs_contracting_dims={1}"
    ),
    "{N} = f32[16,10]{0,1} transpose({A}), dimensions={1,0}",
    "{N} = f32[160]{0} reshape({A})",
    "{N} = f32[20,16]{1,0} concatenate({A}, {B}), dimensions={0}",
    "{N} = f32[10,16,3]{2,1,0} broadcast({A}), dimensions={0,1}",
    "{N} = f32[16]{0} reduce({A}, {B}), dimensions={0}, to_apply={R}",
    "{N} = (f32[10]{0}, f32[10]{0}) reduce({A}, {B}, {C}, {D}), dimensions={1}, to_apply={R}",
    "{N} = ({SA}, {SB}) tuple({A}, {B})",
    "{N} = {SA} get-tuple-element({A}), index=0",
    "{N} = {SA} get-tuple-element({A}), index=1",
    "{N} = f32[4,16]{1,0} dynamic-slice({A}, {B}, {C}), dynamic_slice_sizes={4,16}",
    "{N} = {SA} dynamic-update-slice({A}, {B}, {C}, {D})",
    concat!(
        "{N} = f32[3,16]{1,0} gather({A}, {B}), offset_dims={1}, collapsed_slice_dims={0}, ",
        "start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}"
    ),
    concat!(
        "{N} = {SA} scatter({A}, {B}, {C}), update_window_dims={1}, inserted_window_dims={0}, ",
        "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply={R}"
    ),
    "{N} = ({SA}, s32[10,3]{1,0}) topk({A}), k=3, largest=true",
    "{N} = s32[10,16]{1,0} iota(), iota_dimension=1",
    "{N} = pred[10,16]{1,0} compare({A}, {B}), direction=LT, type=TOTALORDER",
    "{N} = f32[2,2]{1,0} constant({ {1, 2}, {3, 4} })",
    "{N} = f32[] constant(nan(0x7))",
    "{N} = bf16[3]{0} constant({1, inf, -inf})",
    "{N} = pred[] constant(true)",
    "{N} = f32[3]{0} constant({...})",
    "{N} = s32[] parameter(3)",
    "{N} = {SA} parameter(0)",
];

/// Tuple shapes to give an instruction; `{S}` is its own shape.
const TUPLE_SHAPES: &[&str] =
    &["({S})", "({S}, {S})", "()", "(({S}))", "({S}, ())", "(pred[], {S})", "(s32[], {S}, f32[2]{0})"];

/// Layouts to give a shape as written (malformed ones, XLA's tiles and element sizes, lazy-xla's
/// padding).
const LAYOUTS: &[&str] = &[
    "{}",
    "{0}",
    "{1,1}",
    "{0,1,2}",
    "{-1,0}",
    "{1,0:T(8,128)}",
    "{1,0:E(4)}",
    "{1,0:pad(1)=zero}",
    "{1,0:pad(0,0)=one}",
    "{1,0:pad(4,4)=nan}",
    "{1,0:pad(9223372036854775807,1)=zero}",
    "{:pad()=zero}",
];

/// Padding values of lazy-xla's padded layouts.
const PADDING_VALUES: &[&str] = &["zero", "one", "lowest", "highest"];

/// Fragments to insert: HLO's punctuation and keywords, and characters a byte-minded lexer
/// trips on (multi-byte ones, for truncations inside them).
const TOKENS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ",",
    "=",
    ":",
    "->",
    "\n",
    " ",
    "\t",
    "ROOT ",
    "ENTRY ",
    "HloModule m\n",
    "%",
    "\"",
    "/*",
    "*/",
    "//",
    "...",
    "<=",
    "?",
    "-",
    "_",
    "x",
    "0",
    "-1",
    "é",
    "\u{1F600}",
    "\u{FFFD}",
    "\u{A0}",
    "\0",
    "\r\n",
    "f32[",
    "{1,0}",
    "parameter(0)",
];

// ---------------------------------------------------------------------------------------------
// Mutations.

/// The kind of place a number is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NumberClass {
    /// Any number.
    Any,
    /// A dimension size of a shape (`f32[10,16]`).
    Dimension,
    /// A layout's dimension (`{1,0}` after a shape).
    Layout,
    /// A parameter's number (`parameter(0)`).
    Parameter,
    /// A constant's value (`constant(4)`).
    Constant,
    /// An attribute's value, or a number in one (`dimensions={1}`, `index=0`).
    Attribute,
    /// Digits inside a word: names (`Arg_0.25`), element types, window and padding words.
    InWord,
}

/// A number to write instead of another.
#[derive(Clone, Debug)]
enum NumberValue {
    /// One of [`NUMBERS`].
    Named(&'static str),
    /// A small non-negative number, which may still make sense.
    Small(u8),
    /// Any 64-bit number.
    Any(i64),
}

/// What to do to one attribute of an instruction.
#[derive(Clone, Debug)]
enum AttributeEdit {
    /// Remove it.
    Delete,
    /// Write it twice.
    Duplicate,
    /// Give it one of [`ATTRIBUTE_VALUES`].
    Value(&'static str),
    /// Give it the name of one of the module's computations.
    Computation(Index),
    /// Rename it to one of [`ATTRIBUTE_NAMES`].
    Rename(&'static str),
    /// Add one of [`ATTRIBUTES`] to the instruction.
    Add(&'static str),
    /// Add one of [`CALL_ATTRIBUTES`] naming one of the module's computations.
    AddCall(&'static str, Index),
}

/// What to do to one operand of an instruction.
#[derive(Clone, Debug)]
enum OperandEdit {
    /// Name another instruction of the same computation instead.
    Other(Index),
    /// Name the instruction itself (a cycle).
    Itself,
    /// Name an instruction that does not exist.
    Missing,
    /// Name a computation.
    Computation(Index),
    /// Remove it.
    Delete,
    /// Write it twice.
    Duplicate,
    /// Add an instruction of the same computation as the last operand.
    Add(Index),
}

/// A new layout for a shape.
#[derive(Clone, Debug)]
enum LayoutForm {
    /// Its dimensions in the opposite order (`{0,1}` for `{1,0}`).
    Reversed,
    /// None written: the default one.
    Absent,
    /// Padded: every dimension `extra` larger in memory, the padding holding `value`.
    Padded { extra: u8, value: &'static str },
    /// One of [`LAYOUTS`].
    Written(&'static str),
}

/// Bytes to insert.
#[derive(Clone, Debug)]
enum Bytes {
    /// One of [`TOKENS`].
    Token(&'static str),
    /// Random bytes (made into text lossily).
    Raw(Vec<u8>),
}

/// One edit of a module's text. Indices choose among the places the edit applies to (lines,
/// instruction lines, numbers, …); an edit with no such place leaves the text as it is.
#[derive(Clone, Debug)]
enum Mutation {
    /// Delete a line.
    DeleteLine(Index),
    /// Copy a line to before another.
    DuplicateLine { line: Index, to: Index },
    /// Swap two lines.
    SwapLines(Index, Index),
    /// Change a number of a class.
    Number { class: NumberClass, which: Index, value: NumberValue },
    /// Change an array's element type.
    ElementType { which: Index, to: &'static str },
    /// Change the layout of a shape.
    Layout { which: Index, form: LayoutForm },
    /// Make an instruction's shape a tuple (one of [`TUPLE_SHAPES`]), for its users too.
    TupleShape { line: Index, form: &'static str },
    /// Change a dimension size everywhere it is written (so shapes stay consistent).
    ResizeAll { which: Index, value: NumberValue },
    /// Change an element type everywhere it is written.
    RetypeAll { which: Index, to: &'static str },
    /// Change an instruction's opcode.
    Opcode { line: Index, to: &'static str },
    /// Edit an instruction's attributes.
    Attribute { line: Index, which: Index, edit: AttributeEdit },
    /// Edit an instruction's operands.
    Operand { line: Index, which: Index, edit: OperandEdit },
    /// Insert an instruction made from one of [`TEMPLATES`] before an instruction (and make it
    /// the root, and change one of its numbers other than its name's).
    InsertLine {
        at: Index,
        template: usize,
        operands: [Index; 4],
        computation: Index,
        root: bool,
        tweak: Option<(Index, NumberValue)>,
    },
    /// Make an instruction its computation's root.
    MoveRoot(Index),
    /// Cut the text at a byte offset.
    Truncate(Index),
    /// Insert bytes at a byte offset.
    InsertBytes { at: Index, bytes: Bytes },
    /// Delete bytes from a byte offset on.
    DeleteBytes { at: Index, len: usize },
}

/// The mutations, the structured ones weighted up.
fn mutation() -> impl Strategy<Value = Mutation> {
    let class = select(
        &[
            NumberClass::Any,
            NumberClass::Dimension,
            NumberClass::Layout,
            NumberClass::Parameter,
            NumberClass::Constant,
            NumberClass::Attribute,
            NumberClass::InWord,
        ][..],
    );
    let value = prop_oneof![
        2 => select(NUMBERS).prop_map(NumberValue::Named),
        2 => any::<u8>().prop_map(|n| NumberValue::Small(n % 40)),
        1 => any::<i64>().prop_map(NumberValue::Any),
    ];
    // Sizes that keep a module's shapes consistent when written everywhere: small ones mostly.
    let size = prop_oneof![
        4 => any::<u8>().prop_map(|n| NumberValue::Small(n % 40)),
        2 => select(NUMBERS).prop_map(NumberValue::Named),
        1 => any::<i64>().prop_map(NumberValue::Any),
    ];
    let attribute_edit = prop_oneof![
        1 => Just(AttributeEdit::Delete),
        1 => Just(AttributeEdit::Duplicate),
        2 => select(ATTRIBUTE_VALUES).prop_map(AttributeEdit::Value),
        1 => any::<Index>().prop_map(AttributeEdit::Computation),
        1 => select(ATTRIBUTE_NAMES).prop_map(AttributeEdit::Rename),
        2 => select(ATTRIBUTES).prop_map(AttributeEdit::Add),
        1 => (select(CALL_ATTRIBUTES), any::<Index>()).prop_map(|(name, c)| AttributeEdit::AddCall(name, c)),
    ];
    let operand_edit = prop_oneof![
        3 => any::<Index>().prop_map(OperandEdit::Other),
        1 => Just(OperandEdit::Itself),
        1 => Just(OperandEdit::Missing),
        1 => any::<Index>().prop_map(OperandEdit::Computation),
        1 => Just(OperandEdit::Delete),
        1 => Just(OperandEdit::Duplicate),
        1 => any::<Index>().prop_map(OperandEdit::Add),
    ];
    let bytes = prop_oneof![
        2 => select(TOKENS).prop_map(Bytes::Token),
        1 => vec(any::<u8>(), 1..6).prop_map(Bytes::Raw),
    ];
    let lines = prop_oneof![
        2 => any::<Index>().prop_map(Mutation::DeleteLine),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(line, to)| Mutation::DuplicateLine { line, to }),
        2 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        1 => any::<Index>().prop_map(Mutation::MoveRoot),
    ];
    let tweak = value.clone();
    let layout = prop_oneof![
        1 => Just(LayoutForm::Reversed),
        1 => Just(LayoutForm::Absent),
        2 => (0u8..4, select(PADDING_VALUES)).prop_map(|(extra, value)| LayoutForm::Padded { extra, value }),
        1 => select(LAYOUTS).prop_map(LayoutForm::Written),
    ];
    let byte_edits = prop_oneof![
        2 => any::<Index>().prop_map(Mutation::Truncate),
        2 => (any::<Index>(), bytes).prop_map(|(at, bytes)| Mutation::InsertBytes { at, bytes }),
        1 => (any::<Index>(), 1usize..16).prop_map(|(at, len)| Mutation::DeleteBytes { at, len }),
    ];
    prop_oneof![
        6 => lines,
        5 => (class, any::<Index>(), value)
            .prop_map(|(class, which, value)| Mutation::Number { class, which, value }),
        3 => prop_oneof![
            (any::<Index>(), select(ELEMENT_TYPES))
                .prop_map(|(which, to)| Mutation::ElementType { which, to }),
            (any::<Index>(), select(ELEMENT_TYPES)).prop_map(|(which, to)| Mutation::RetypeAll { which, to }),
        ],
        2 => prop_oneof![
            (any::<Index>(), select(TUPLE_SHAPES))
                .prop_map(|(line, form)| Mutation::TupleShape { line, form }),
            (any::<Index>(), layout).prop_map(|(which, form)| Mutation::Layout { which, form }),
        ],
        3 => (any::<Index>(), size).prop_map(|(which, value)| Mutation::ResizeAll { which, value }),
        3 => (any::<Index>(), select(OPCODES)).prop_map(|(line, to)| Mutation::Opcode { line, to }),
        4 => (any::<Index>(), any::<Index>(), attribute_edit)
            .prop_map(|(line, which, edit)| Mutation::Attribute { line, which, edit }),
        3 => (any::<Index>(), any::<Index>(), operand_edit)
            .prop_map(|(line, which, edit)| Mutation::Operand { line, which, edit }),
        4 => (
            any::<Index>(),
            0..TEMPLATES.len(),
            uniform4(any::<Index>()),
            any::<Index>(),
            any::<bool>(),
            option::of((any::<Index>(), tweak))
        )
            .prop_map(|(at, template, operands, computation, root, tweak)| Mutation::InsertLine {
                at,
                template,
                operands,
                computation,
                root,
                tweak
            }),
        5 => byte_edits,
    ]
}

/// The `index`th of `len` places, if there are any.
fn pick(index: &Index, len: usize) -> Option<usize> {
    (len > 0).then(|| index.index(len))
}

impl Mutation {
    /// The text with this mutation applied.
    fn apply(&self, text: &str) -> String {
        match self {
            Mutation::DeleteLine(line) => edit_lines(text, |lines| {
                if let Some(i) = pick(line, lines.len()) {
                    lines.remove(i);
                }
            }),
            Mutation::DuplicateLine { line, to } => edit_lines(text, |lines| {
                if let Some(i) = pick(line, lines.len()) {
                    let copy = lines[i].clone();
                    lines.insert(to.index(lines.len() + 1), copy);
                }
            }),
            Mutation::SwapLines(a, b) => edit_lines(text, |lines| {
                if let (Some(a), Some(b)) = (pick(a, lines.len()), pick(b, lines.len())) {
                    lines.swap(a, b);
                }
            }),
            Mutation::Number { class, which, value } => {
                let places: Vec<Range<usize>> = numbers(text)
                    .into_iter()
                    .filter(|(_, c)| *class == NumberClass::Any || c == class)
                    .map(|(range, _)| range)
                    .collect();
                match pick(which, places.len()) {
                    Some(i) => replace(text, places[i].clone(), &value.text()),
                    None => text.to_string(),
                }
            }
            Mutation::ElementType { which, to } => {
                let places = element_types(text);
                match pick(which, places.len()) {
                    Some(i) => replace(text, places[i].clone(), to),
                    None => text.to_string(),
                }
            }
            Mutation::ResizeAll { which, value } => {
                let dimensions: Vec<Range<usize>> = numbers(text)
                    .into_iter()
                    .filter(|(_, class)| *class == NumberClass::Dimension)
                    .map(|(range, _)| range)
                    .collect();
                match pick(which, dimensions.len()) {
                    Some(i) => {
                        let size = &text[dimensions[i].clone()];
                        let same = dimensions.iter().filter(|range| &text[(*range).clone()] == size);
                        replace_all(text, same.cloned().collect(), &value.text())
                    }
                    None => text.to_string(),
                }
            }
            Mutation::RetypeAll { which, to } => {
                let places = element_types(text);
                match pick(which, places.len()) {
                    Some(i) => {
                        let from = &text[places[i].clone()];
                        let same = places.iter().filter(|range| &text[(*range).clone()] == from);
                        replace_all(text, same.cloned().collect(), to)
                    }
                    None => text.to_string(),
                }
            }
            Mutation::Opcode { line, to } => edit_instruction(text, line, |lines, i, parts| {
                lines[i].replace_range(parts.opcode.clone(), to);
            }),
            Mutation::Attribute { line, which, edit } => {
                edit_instruction(text, line, |lines, i, parts| edit.apply(lines, i, parts, which))
            }
            Mutation::Operand { line, which, edit } => {
                edit_instruction(text, line, |lines, i, parts| edit.apply(lines, i, parts, which))
            }
            Mutation::InsertLine { at, template, operands, computation, root, tweak } => {
                edit_lines(text, |lines| {
                    // Before an instruction: inside a computation.
                    let instructions: Vec<usize> =
                        (0..lines.len()).filter(|&i| parts(&lines[i]).is_some()).collect();
                    let at = pick(at, instructions.len()).map_or(lines.len(), |k| instructions[k]);
                    let near = instructions_near(lines, at.min(lines.len() - 1));
                    let computations = computation_names(lines);
                    let chosen = |i: usize| {
                        pick(&operands[i], near.len())
                            .map_or(("missing.0", "f32[]"), |k| (near[k].0.as_str(), near[k].1.as_str()))
                    };
                    let called =
                        pick(computation, computations.len()).map_or("missing.0", |k| &computations[k]);
                    let fresh = format!("fuzz.{}", text.matches("fuzz.").count());
                    let line = TEMPLATES[*template]
                        .replace("{N}", &fresh)
                        .replace("{SA}", chosen(0).1)
                        .replace("{SB}", chosen(1).1)
                        .replace("{A}", chosen(0).0)
                        .replace("{B}", chosen(1).0)
                        .replace("{C}", chosen(2).0)
                        .replace("{D}", chosen(3).0)
                        .replace("{R}", called);
                    let line = match tweak {
                        Some((which, value)) => {
                            let places: Vec<Range<usize>> = numbers(&line)
                                .into_iter()
                                .filter(|(_, class)| *class != NumberClass::InWord)
                                .map(|(range, _)| range)
                                .collect();
                            pick(which, places.len())
                                .map_or(line.clone(), |k| replace(&line, places[k].clone(), &value.text()))
                        }
                        None => line,
                    };
                    lines.insert(at, format!("  {line}"));
                    if *root {
                        make_root(lines, at);
                    }
                })
            }
            Mutation::Layout { which, form } => {
                let places = layouts(text);
                match pick(which, places.len()) {
                    Some(k) => {
                        let (dimensions, layout) = places[k].clone();
                        let new = form.layout(&text[dimensions], &text[layout.clone()]);
                        replace(text, layout, &new)
                    }
                    None => text.to_string(),
                }
            }
            Mutation::TupleShape { line, form } => edit_instruction(text, line, |lines, i, parts| {
                let shape = parts.name.end + " = ".len()..parts.opcode.start;
                let tuple = form.replace("{S}", lines[i][shape.clone()].trim());
                lines[i].replace_range(shape, &format!("{tuple} "));
            }),
            Mutation::MoveRoot(line) => edit_instruction(text, line, |lines, i, _| make_root(lines, i)),
            Mutation::Truncate(at) => {
                let mut bytes = text.as_bytes().to_vec();
                bytes.truncate(at.index(bytes.len() + 1));
                String::from_utf8_lossy(&bytes).into_owned()
            }
            Mutation::InsertBytes { at, bytes } => {
                let mut all = text.as_bytes().to_vec();
                let at = at.index(all.len() + 1);
                let inserted = match bytes {
                    Bytes::Token(token) => token.as_bytes(),
                    Bytes::Raw(raw) => raw.as_slice(),
                };
                all.splice(at..at, inserted.iter().copied());
                String::from_utf8_lossy(&all).into_owned()
            }
            Mutation::DeleteBytes { at, len } => {
                let mut all = text.as_bytes().to_vec();
                let at = at.index(all.len() + 1);
                all.drain(at..(at + len).min(all.len()));
                String::from_utf8_lossy(&all).into_owned()
            }
        }
    }
}

impl NumberValue {
    /// The number as text.
    fn text(&self) -> String {
        match self {
            NumberValue::Named(text) => text.to_string(),
            NumberValue::Small(n) => n.to_string(),
            NumberValue::Any(n) => n.to_string(),
        }
    }
}

impl LayoutForm {
    /// The layout to write instead of `layout` (braces included, or empty) of a shape whose
    /// dimensions are written `dimensions` (between its brackets).
    fn layout(&self, dimensions: &str, layout: &str) -> String {
        let written = layout.trim_start_matches('{').trim_end_matches('}');
        let minor_to_major = written.split(':').next().unwrap_or("");
        match self {
            LayoutForm::Reversed => {
                let reversed: Vec<&str> = minor_to_major.split(',').rev().collect();
                format!("{{{}}}", reversed.join(","))
            }
            LayoutForm::Absent => String::new(),
            LayoutForm::Padded { extra, value } => {
                let sizes: Option<Vec<i64>> = dimensions
                    .split(',')
                    .filter(|d| !d.is_empty())
                    .map(|d| d.trim().parse::<i64>().ok().map(|d| d.saturating_add(i64::from(*extra))))
                    .collect();
                match sizes {
                    Some(sizes) => {
                        let padded: Vec<String> = sizes.iter().map(i64::to_string).collect();
                        format!("{{{minor_to_major}:pad({})={value}}}", padded.join(","))
                    }
                    None => layout.to_string(),
                }
            }
            LayoutForm::Written(written) => written.to_string(),
        }
    }
}

impl AttributeEdit {
    /// Edits the `which`th attribute of instruction line `i` (whose parts are `parts`).
    fn apply(&self, lines: &mut [String], i: usize, parts: &Parts, which: &Index) {
        let computations = computation_names(lines);
        let computation = |index: &Index| pick(index, computations.len()).map(|k| computations[k].as_str());
        let line = &mut lines[i];
        let end = line.len();
        let chosen = pick(which, parts.attributes.len()).map(|k| parts.attributes[k].clone());
        match (self, chosen) {
            (AttributeEdit::Delete, Some(range)) => line.replace_range(range, ""),
            (AttributeEdit::Duplicate, Some(range)) => {
                let copy = line[range.clone()].to_string();
                line.insert_str(range.end, &copy);
            }
            (AttributeEdit::Value(value), Some(range)) => set_value(line, range, value),
            (AttributeEdit::Computation(index), Some(range)) => {
                if let Some(name) = computation(index) {
                    set_value(line, range, name);
                }
            }
            (AttributeEdit::Rename(name), Some(range)) => {
                // The name runs from after the `,` (and spaces) to the `=`.
                let start = range.start + 1 + line[range.start + 1..].len()
                    - line[range.start + 1..].trim_start().len();
                let equals = line[range.clone()].find('=').map_or(range.end, |e| range.start + e);
                line.replace_range(start.min(equals)..equals, name);
            }
            (AttributeEdit::Add(attribute), _) => line.insert_str(end, &format!(", {attribute}")),
            (AttributeEdit::AddCall(name, index), _) => {
                if let Some(called) = computation(index) {
                    line.insert_str(end, &format!(", {name}={called}"));
                }
            }
            _ => {}
        }
    }
}

/// Sets the value of the attribute at `range` of `line` (from its `,` to the next) to `value`.
fn set_value(line: &mut String, range: Range<usize>, value: &str) {
    if let Some(equals) = line[range.clone()].find('=') {
        line.replace_range(range.start + equals + 1..range.end, value);
    }
}

impl OperandEdit {
    /// Edits the `which`th operand of instruction line `i` (whose parts are `parts`).
    fn apply(&self, lines: &mut [String], i: usize, parts: &Parts, which: &Index) {
        let near = instructions_near(lines, i);
        let computations = computation_names(lines);
        let own_name = lines[i][parts.name.clone()].to_string();
        let chosen = pick(which, parts.operands.len()).map(|k| parts.operands[k].clone());
        let line = &mut lines[i];
        match (self, chosen) {
            (OperandEdit::Other(other), Some(range)) => {
                if let Some(k) = pick(other, near.len()) {
                    line.replace_range(range, &near[k].0);
                }
            }
            (OperandEdit::Itself, Some(range)) => line.replace_range(range, &own_name),
            (OperandEdit::Missing, Some(range)) => line.replace_range(range, "missing.0"),
            (OperandEdit::Computation(computation), Some(range)) => {
                if let Some(k) = pick(computation, computations.len()) {
                    line.replace_range(range, &computations[k]);
                }
            }
            (OperandEdit::Delete, Some(range)) => {
                // The operand and the `, ` before it (or after it, for the first).
                let before = line[..range.start].trim_end();
                let after = &line[range.end..];
                let removed = match (before.strip_suffix(','), after.strip_prefix(", ")) {
                    (Some(kept), _) => format!("{kept}{after}"),
                    (None, Some(rest)) => format!("{}{rest}", &line[..range.start]),
                    (None, None) => format!("{}{after}", &line[..range.start]),
                };
                *line = removed;
            }
            (OperandEdit::Duplicate, Some(range)) => {
                let copy = format!(", {}", &line[range.clone()]);
                line.insert_str(range.end, &copy);
            }
            (OperandEdit::Add(other), _) => {
                if let Some(k) = pick(other, near.len()) {
                    let separator = if parts.operands.is_empty() { "" } else { ", " };
                    line.insert_str(parts.close, &format!("{separator}{}", near[k].0));
                }
            }
            _ => {}
        }
    }
}

/// The text with its lines edited by `edit`.
fn edit_lines(text: &str, edit: impl FnOnce(&mut Vec<String>)) -> String {
    let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    edit(&mut lines);
    lines.join("\n")
}

/// The text with the `line`th of its instruction lines edited by `edit` (given the lines, the
/// line's index and its parts).
fn edit_instruction(text: &str, line: &Index, edit: impl FnOnce(&mut Vec<String>, usize, &Parts)) -> String {
    edit_lines(text, |lines| {
        let instructions: Vec<(usize, Parts)> =
            lines.iter().enumerate().filter_map(|(i, l)| parts(l).map(|p| (i, p))).collect();
        if let Some(k) = pick(line, instructions.len()) {
            let (i, parts) = &instructions[k];
            edit(lines, *i, parts);
        }
    })
}

/// Makes line `target` the root of its computation: `ROOT ` is taken off the computation's
/// other lines and put before it.
fn make_root(lines: &mut [String], target: usize) {
    let block = computation_around(lines, target);
    for line in &mut lines[block] {
        if let Some(rest) = line.trim_start().strip_prefix("ROOT ") {
            *line = format!("  {rest}");
        }
    }
    let line = &mut lines[target];
    *line = format!("  ROOT {}", line.trim_start());
}

/// `text` with each of `ranges` (in order, not overlapping) replaced by `with`.
fn replace_all(text: &str, ranges: Vec<Range<usize>>, with: &str) -> String {
    ranges.into_iter().rev().fold(text.to_string(), |text, range| replace(&text, range, with))
}

/// `text` with `range` replaced by `with`.
fn replace(text: &str, range: Range<usize>, with: &str) -> String {
    let mut text = text.to_string();
    text.replace_range(range, with);
    text
}

// ---------------------------------------------------------------------------------------------
// Finding the places of a module's text that mutations edit. Every position found is that of
// an ASCII byte (or the end), so a character boundary even in text with multi-byte characters.

/// Where the parts of an instruction line are (byte ranges of the line).
struct Parts {
    /// The instruction's name.
    name: Range<usize>,
    /// Its opcode.
    opcode: Range<usize>,
    /// Each operand between the opcode's parentheses, trimmed.
    operands: Vec<Range<usize>>,
    /// Where the `)` closing the operands is.
    close: usize,
    /// Each attribute after the operands: from its `,` up to the next attribute's.
    attributes: Vec<Range<usize>>,
}

/// The parts of `line`, if it reads as `[ROOT] name = shape opcode(operands), attributes`.
fn parts(line: &str) -> Option<Parts> {
    let bytes = line.as_bytes();
    let mut start = line.len() - line.trim_start().len();
    if line[start..].starts_with("ROOT ") {
        start += "ROOT ".len();
    }
    let equals = start + line[start..].find(" = ")?;
    let mut at = equals + " = ".len();
    if bytes.get(at) == Some(&b'(') {
        at = matching(bytes, at)? + 1;
    }
    while at < bytes.len() && bytes[at] != b' ' {
        at += 1;
    }
    while bytes.get(at) == Some(&b' ') {
        at += 1;
    }
    let open = at + line[at..].find('(')?;
    let close = matching(bytes, open)?;
    let operands = top_level_pieces(bytes, open + 1, close)
        .into_iter()
        .map(|range| trimmed(line, range))
        .filter(|range| !range.is_empty())
        .collect();
    let commas = top_level_commas(bytes, close + 1, bytes.len());
    let attributes = commas
        .iter()
        .enumerate()
        .map(|(k, &comma)| comma..commas.get(k + 1).copied().unwrap_or(bytes.len()))
        .collect();
    Some(Parts { name: start..equals, opcode: at..open, operands, close, attributes })
}

/// The position of the bracket closing the one at `open`, if it is closed.
fn matching(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut quoted = false;
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'"' => quoted = !quoted,
            b'(' | b'[' | b'{' if !quoted => depth += 1,
            b')' | b']' | b'}' if !quoted => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The positions of the commas of `bytes[start..end]` outside brackets and strings.
fn top_level_commas(bytes: &[u8], start: usize, end: usize) -> Vec<usize> {
    let mut depth = 0i64;
    let mut quoted = false;
    let mut commas = Vec::new();
    for (i, &b) in bytes.iter().enumerate().take(end).skip(start) {
        match b {
            b'"' => quoted = !quoted,
            b'(' | b'[' | b'{' if !quoted => depth += 1,
            b')' | b']' | b'}' if !quoted => depth -= 1,
            b',' if !quoted && depth == 0 => commas.push(i),
            _ => {}
        }
    }
    commas
}

/// The pieces of `bytes[start..end]` between its top-level commas.
fn top_level_pieces(bytes: &[u8], start: usize, end: usize) -> Vec<Range<usize>> {
    let mut pieces = Vec::new();
    let mut from = start;
    for comma in top_level_commas(bytes, start, end) {
        pieces.push(from..comma);
        from = comma + 1;
    }
    pieces.push(from..end);
    pieces
}

/// `range` of `line` without the whitespace at its ends.
fn trimmed(line: &str, range: Range<usize>) -> Range<usize> {
    let piece = &line[range.clone()];
    let start = range.start + (piece.len() - piece.trim_start().len());
    start..start + piece.trim().len()
}

/// The lines of the computation around line `at` (its instructions, between its header and
/// its `}`), or every line when `at` is in none.
fn computation_around(lines: &[String], at: usize) -> Range<usize> {
    let header = (0..=at.min(lines.len().saturating_sub(1))).rev().find(|&i| is_header(&lines[i]));
    match header {
        Some(h) => {
            h + 1..lines[h + 1..].iter().position(|l| l.trim() == "}").map_or(lines.len(), |p| h + 1 + p)
        }
        None => 0..lines.len(),
    }
}

/// Whether `line` opens a computation (`[ENTRY] name [signature] {`).
fn is_header(line: &str) -> bool {
    !line.starts_with(char::is_whitespace) && !line.starts_with("HloModule") && line.trim_end().ends_with('{')
}

/// The names and shapes of the instructions of the computation around line `at` (of the
/// whole text, when that has none).
fn instructions_near(lines: &[String], at: usize) -> Vec<(String, String)> {
    let named = |range: Range<usize>| -> Vec<(String, String)> {
        lines[range]
            .iter()
            .filter_map(|line| {
                let parts = parts(line)?;
                let shape = line[parts.name.end + " = ".len()..parts.opcode.start].trim();
                Some((line[parts.name].to_string(), shape.to_string()))
            })
            .collect()
    };
    let near = named(computation_around(lines, at));
    if near.is_empty() {
        named(0..lines.len())
    } else {
        near
    }
}

/// The names of the module's computations.
fn computation_names(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter(|line| is_header(line))
        .filter_map(|line| {
            let line = line.strip_prefix("ENTRY ").unwrap_or(line);
            line.split(|c: char| c.is_whitespace() || c == '(').next().map(str::to_string)
        })
        .filter(|name| !name.is_empty())
        .collect()
}

/// Whether `b` can be part of an HLO word (a name, an opcode, a number).
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_.%$".contains(&b)
}

/// Every number of the text (digits with a decimal point and exponent, and a `-` before
/// them) and the kind of place it is in.
fn numbers(text: &str) -> Vec<(Range<usize>, NumberClass)> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() || (i > 0 && (bytes[i - 1].is_ascii_digit() || bytes[i - 1] == b'.')) {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < bytes.len() {
            let b = bytes[end];
            let exponent_sign =
                (b == b'-' || b == b'+') && matches!(bytes.get(end.wrapping_sub(1)), Some(b'e' | b'E'));
            if b.is_ascii_digit() || b == b'.' || b == b'e' || b == b'E' || exponent_sign {
                end += 1;
            } else {
                break;
            }
        }
        let start = if i > 0 && bytes[i - 1] == b'-' { i - 1 } else { i };
        found.push((start..end, number_class(bytes, start)));
        i = end;
    }
    found
}

/// What kind of place a number starting at `start` is in.
fn number_class(bytes: &[u8], start: usize) -> NumberClass {
    if start > 0 && is_word_byte(bytes[start - 1]) {
        return NumberClass::InWord;
    }
    let mut depth = 0usize;
    for i in (0..start).rev() {
        match bytes[i] {
            b'\n' => break,
            b')' | b']' | b'}' => depth += 1,
            b'(' | b'[' | b'{' if depth > 0 => depth -= 1,
            b'[' if i > 0 && bytes[i - 1].is_ascii_alphanumeric() => return NumberClass::Dimension,
            b'{' if i > 0 && bytes[i - 1] == b']' => return NumberClass::Layout,
            b'(' => {
                let word_start =
                    (0..i).rev().find(|&k| !is_word_byte(bytes[k]) && bytes[k] != b'-').map_or(0, |k| k + 1);
                return match &bytes[word_start..i] {
                    b"parameter" => NumberClass::Parameter,
                    b"constant" => NumberClass::Constant,
                    _ => NumberClass::Attribute,
                };
            }
            b'[' | b'{' => return NumberClass::Attribute,
            _ => {}
        }
    }
    NumberClass::Attribute
}

/// The element types of the text's shapes (the word before each `[` that is one).
fn element_types(text: &str) -> Vec<Range<usize>> {
    const TYPES: &[&[u8]] = &[
        b"pred", b"s8", b"s16", b"s32", b"s64", b"u8", b"u16", b"u32", b"u64", b"f16", b"bf16", b"f32",
        b"f64",
    ];
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        if b != b'[' {
            continue;
        }
        let start = (0..i).rev().find(|&k| !bytes[k].is_ascii_alphanumeric()).map_or(0, |k| k + 1);
        if TYPES.contains(&&bytes[start..i]) {
            found.push(start..i);
        }
    }
    found
}

/// The layouts of the text's array shapes: the range of each shape's dimensions (between its
/// brackets) and of its layout (braces included; empty where none is written).
fn layouts(text: &str) -> Vec<(Range<usize>, Range<usize>)> {
    let bytes = text.as_bytes();
    element_types(text)
        .into_iter()
        .filter_map(|shape| {
            let open = shape.end;
            let close = matching(bytes, open)?;
            let layout = match bytes.get(close + 1) {
                Some(b'{') => close + 1..matching(bytes, close + 1)? + 1,
                _ => close + 1..close + 1,
            };
            Some((open + 1..close, layout))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The modules, and what a mutated one must do.

/// Every `examples/hlo/*.hlo`: its file name and text, sorted by name.
fn seeds() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/hlo");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    let mut seeds: Vec<(String, String)> = entries
        .map(|entry| entry.unwrap_or_else(|e| panic!("reading {}: {e}", dir.display())).path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "hlo"))
        .map(|path| {
            let text =
                std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
            (path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned()), text)
        })
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "no .hlo modules in {}", dir.display());
    seeds
}

/// `text` with multi-byte characters where the importer reads and ignores them: a comment
/// after the first line and a `metadata` string on the first parameter.
fn with_multibyte_characters(text: &str) -> String {
    let mut marked = false;
    let lines: Vec<String> = text
        .split('\n')
        .enumerate()
        .map(|(i, line)| {
            if i == 0 {
                format!("{line}\n// π ≈ 3.14159, “quoted”, naïve, 😀")
            } else if !marked && line.contains(" parameter(") {
                marked = true;
                format!("{line}, metadata={{op_name=\"jit(ƒ)/ünïcode😀\"}}")
            } else {
                line.to_string()
            }
        })
        .collect();
    lines.join("\n")
}

/// The mutated text.
fn mutate(text: &str, mutations: &[Mutation]) -> String {
    mutations.iter().fold(text.to_string(), |text, mutation| mutation.apply(&text))
}

/// The arguments a module that imports is run on.
#[derive(Clone, Copy, Debug)]
enum Arguments {
    /// Every element zero (`false`).
    Zeros,
    /// Small values counting up and wrapping (-3..=3 for signed types, 0..=6 for unsigned ones,
    /// -1.5..=1.5 in quarters for floats, alternating for `pred`).
    Counting,
}

/// A literal of `shape` with `kind`'s values.
fn argument(shape: &Shape, kind: Arguments) -> lazy_xla::Result<Literal> {
    /// A literal of `shape` whose element `i` (in row-major order) is `value(i)`.
    fn fill<T: NativeType>(shape: &Shape, value: impl Fn(i64) -> T) -> lazy_xla::Result<Literal> {
        Literal::from_vec(shape, (0..shape.element_count()).map(value).collect())
    }
    /// The float value of element `i`.
    fn float(i: i64) -> f64 {
        (i % 13 - 6) as f64 * 0.25
    }
    if shape.is_tuple() {
        let elements =
            shape.tuple_shapes().iter().map(|s| argument(s, kind)).collect::<lazy_xla::Result<_>>()?;
        return Ok(Literal::tuple(elements));
    }
    if let Arguments::Zeros = kind {
        return Literal::zeros(shape);
    }
    match shape.element_type() {
        ElementType::Pred => fill(shape, |i| i % 2 == 1),
        ElementType::S8 => fill(shape, |i| (i % 7 - 3) as i8),
        ElementType::S16 => fill(shape, |i| (i % 7 - 3) as i16),
        ElementType::S32 => fill(shape, |i| (i % 7 - 3) as i32),
        ElementType::S64 => fill(shape, |i| i % 7 - 3),
        ElementType::U8 => fill(shape, |i| (i % 7) as u8),
        ElementType::U16 => fill(shape, |i| (i % 7) as u16),
        ElementType::U32 => fill(shape, |i| (i % 7) as u32),
        ElementType::U64 => fill(shape, |i| (i % 7) as u64),
        ElementType::F16 => fill(shape, |i| f16::from_f64(float(i))),
        ElementType::Bf16 => fill(shape, |i| bf16::from_f64(float(i))),
        ElementType::F32 => fill(shape, |i| float(i) as f32),
        ElementType::F64 => fill(shape, float),
    }
}

/// How far a mutated module got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Reached {
    /// `from_hlo_text` refused it.
    Rejected,
    /// It imported (and both compiles failed).
    Imported,
    /// It compiled fused and unfused (and was not run: too large, or a loop).
    Compiled,
    /// Both executables ran (or both failed to).
    Ran,
}

/// What a case that did not fail came to: how far it got, and the error both modes gave, if
/// compiling or running failed.
struct Outcome {
    /// How far it got.
    reached: Reached,
    /// The error of `compile` or `execute`, if both modes gave one.
    error: Option<String>,
}

thread_local! {
    /// The stage the case on this thread is in, for a panic's report.
    static STAGE: Cell<&'static str> = const { Cell::new("") };
}

/// Notes that the case on this thread enters `stage`.
fn stage(stage: &'static str) {
    STAGE.with(|s| s.set(stage));
}

/// Imports `text`; if it imports, checks the round trip through HLO text, compiles it fused and
/// unfused and, if it is small enough, runs both on `arguments`. `Err` is a failure.
fn check(text: &str, arguments: Arguments) -> Result<Outcome, String> {
    let outcome = |reached, error| Ok(Outcome { reached, error });
    stage("from_hlo_text");
    let Ok(computation) = XlaComputation::from_hlo_text(text) else {
        return outcome(Reached::Rejected, None);
    };
    stage("to_hlo_text and from_hlo_text of it");
    let printed = computation.to_hlo_text();
    match XlaComputation::from_hlo_text(&printed) {
        Ok(again) if again.to_hlo_text() == printed => {}
        Ok(again) => {
            return Err(format!(
                "it imports and prints as\n{printed}\nwhich imports and prints as\n{}",
                again.to_hlo_text()
            ))
        }
        Err(e) => return Err(format!("it imports and prints as\n{printed}\nwhich does not import: {e}")),
    }
    stage("compile (fused)");
    let fused = computation.compile(&CompileOptions::default());
    stage("compile (unfused)");
    let unfused = computation.compile(&CompileOptions::unfused());
    let (fused, unfused) = match (fused, unfused) {
        (Ok(fused), Ok(unfused)) => (fused, unfused),
        (Err(fused), Err(_)) => return outcome(Reached::Imported, Some(format!("compile: {fused}"))),
        (fused, unfused) => {
            let describe =
                |r: Result<_, lazy_xla::Error>| r.map_or_else(|e| e.to_string(), |_| "Ok".to_string());
            return Err(format!(
                "fused and unfused compiles differ:\nfused: {}\nunfused: {}\n--- imported ---\n{printed}",
                describe(fused.map(|_| ())),
                describe(unfused.map(|_| ()))
            ));
        }
    };
    if printed.contains(" while(") || largest_array(&printed).is_none_or(|n| n > MAX_RUN_ELEMENTS) {
        return outcome(Reached::Compiled, None);
    }
    stage("making the arguments");
    let signature = computation.program_shape();
    let literals = signature
        .parameters
        .iter()
        .map(|(_, shape)| argument(shape, arguments))
        .collect::<lazy_xla::Result<Vec<_>>>()
        .map_err(|e| format!("cannot make the arguments: {e}"))?;
    let literals: Vec<&Literal> = literals.iter().collect();
    stage("execute (fused)");
    let fused = fused.execute(&literals);
    stage("execute (unfused)");
    let unfused = unfused.execute(&literals);
    stage("comparing the results");
    match (fused, unfused) {
        (Ok(fused), Ok(unfused)) => {
            if fused.shape() != &signature.result {
                return Err(format!(
                    "the result's shape is {}, not the root's {}",
                    fused.shape(),
                    signature.result
                ));
            }
            let reassociated = [" dot(", " reduce(", " convolution(", " reduce-window("]
                .iter()
                .any(|op| printed.contains(op));
            compare(&fused, &unfused, reassociated)
                .map_err(|e| format!("fused and unfused results differ: {e}\n--- imported ---\n{printed}"))?;
            outcome(Reached::Ran, None)
        }
        (Err(fused), Err(_)) => outcome(Reached::Ran, Some(format!("execute: {fused}"))),
        (fused, unfused) => {
            let describe = |r: &lazy_xla::Result<Literal>| {
                r.as_ref().map_or_else(|e| e.to_string(), |_| "Ok".to_string())
            };
            Err(format!(
                "fused and unfused runs differ:\nfused: {}\nunfused: {}\n--- imported ---\n{printed}",
                describe(&fused),
                describe(&unfused)
            ))
        }
    }
}

/// The most elements of any array shape written in `text` (`f32[10,16]`, tuples' elements
/// too), or `None` when a shape's size is not plain numbers or overflows.
fn largest_array(text: &str) -> Option<i64> {
    let mut largest = 1i64;
    for range in element_types(text) {
        let open = range.end;
        let close = open + text[open..].find(']')?;
        let dimensions = &text[open + 1..close];
        let count = dimensions
            .split(',')
            .filter(|d| !d.is_empty())
            .try_fold(1i64, |count, d| count.checked_mul(d.trim().parse::<i64>().ok()?))?;
        largest = largest.max(count);
    }
    Some(largest)
}

/// One element of a result, exactly.
#[derive(Clone, Copy, Debug)]
enum Element {
    /// An integer or `pred`.
    Int(i128),
    /// A float, widened exactly.
    Float(f64),
}

/// The elements of array `literal`, in row-major order.
fn elements(literal: &Literal) -> lazy_xla::Result<Vec<Element>> {
    /// The elements of an integer or `pred` literal.
    fn ints<T: NativeType + Into<i128>>(literal: &Literal) -> lazy_xla::Result<Vec<Element>> {
        Ok(literal.to_vec::<T>()?.into_iter().map(|v| Element::Int(v.into())).collect())
    }
    /// The elements of a float literal.
    fn floats<T: NativeType>(literal: &Literal) -> lazy_xla::Result<Vec<Element>> {
        Ok(literal.to_vec::<T>()?.into_iter().map(|v| Element::Float(v.to_f64())).collect())
    }
    match literal.element_type() {
        ElementType::Pred => ints::<bool>(literal),
        ElementType::S8 => ints::<i8>(literal),
        ElementType::S16 => ints::<i16>(literal),
        ElementType::S32 => ints::<i32>(literal),
        ElementType::S64 => ints::<i64>(literal),
        ElementType::U8 => ints::<u8>(literal),
        ElementType::U16 => ints::<u16>(literal),
        ElementType::U32 => ints::<u32>(literal),
        ElementType::U64 => ints::<u64>(literal),
        ElementType::F16 => floats::<f16>(literal),
        ElementType::Bf16 => floats::<bf16>(literal),
        ElementType::F32 => floats::<f32>(literal),
        ElementType::F64 => floats::<f64>(literal),
    }
}

/// Whether the fused and unfused results agree: the same shapes, the same values (NaN equal to
/// NaN), floats within reassociation tolerance of the result's largest magnitude when
/// `reassociated`.
fn compare(fused: &Literal, unfused: &Literal, reassociated: bool) -> Result<(), String> {
    if fused.shape() != unfused.shape() {
        return Err(format!("shapes {} and {}", fused.shape(), unfused.shape()));
    }
    if fused.is_tuple() {
        for i in 0..fused.shape().tuple_shapes().len() {
            let (f, u) = (fused.tuple_element(i), unfused.tuple_element(i));
            let (f, u) = (f.map_err(|e| e.to_string())?, u.map_err(|e| e.to_string())?);
            compare(f, u, reassociated).map_err(|e| format!("element {i}: {e}"))?;
        }
        return Ok(());
    }
    let (a, b) = (elements(fused).map_err(|e| e.to_string())?, elements(unfused).map_err(|e| e.to_string())?);
    let relative = match (reassociated, fused.element_type()) {
        (false, _) => 0.0,
        (true, ElementType::F64) => 1e-9,
        (true, ElementType::F32) => 1e-4,
        (true, ElementType::F16) => 1e-2,
        (true, _) => 5e-2,
    };
    let magnitude = a
        .iter()
        .chain(&b)
        .filter_map(|e| match e {
            Element::Float(v) if v.is_finite() => Some(v.abs()),
            _ => None,
        })
        .fold(1.0f64, f64::max);
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        let same = match (x, y) {
            (Element::Int(x), Element::Int(y)) => x == y,
            (Element::Float(x), Element::Float(y)) => {
                x == y || (x.is_nan() && y.is_nan()) || (x - y).abs() <= relative * magnitude
            }
            _ => false,
        };
        if !same {
            return Err(format!("element {i} (row-major) of {}: fused {x:?}, unfused {y:?}", fused.shape()));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Running a case on its own thread, catching panics and hangs.

/// How many cases are running (while any is, panics on their threads and on unnamed ones,
/// rayon's workers, are recorded rather than printed).
static RUNNING: AtomicUsize = AtomicUsize::new(0);
/// Panics caught while cases ran: the thread, the message and the location.
static PANICS: Mutex<Vec<(ThreadId, String, String)>> = Mutex::new(Vec::new());

/// A panic's payload as text.
fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(a panic whose payload is not text)".to_string())
}

/// Installs (once) the panic hook that records the panics of cases with their locations.
fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let current = thread::current();
            let case_thread = current.name().is_none_or(|name| name == CASE_THREAD);
            if RUNNING.load(Ordering::SeqCst) == 0 || !case_thread {
                default(info);
                return;
            }
            let location = info.location().map_or_else(|| "an unknown place".to_string(), |l| l.to_string());
            let message = payload_text(info.payload());
            PANICS.lock().unwrap_or_else(PoisonError::into_inner).push((current.id(), message, location));
        }));
    });
}

/// The name of the threads cases run on.
const CASE_THREAD: &str = "hlo-fuzz-case";

/// Where the panic with message `message` caught on thread `id` happened: as recorded on that
/// thread, else on another with the same message (a rayon worker's, resumed on the case's).
fn recorded_location(id: ThreadId, message: &str) -> String {
    let mut panics = PANICS.lock().unwrap_or_else(PoisonError::into_inner);
    let position = panics
        .iter()
        .rposition(|(thread, _, _)| *thread == id)
        .or_else(|| panics.iter().rposition(|(_, recorded, _)| recorded == message));
    position.map_or_else(|| "an unrecorded place".to_string(), |p| panics.remove(p).2)
}

/// What one case came to.
enum Verdict {
    /// It did what it must.
    Passed(Outcome),
    /// It broke a rule other than not panicking.
    Failed(String),
    /// It panicked.
    Panicked {
        /// What it was doing ([`stage`]).
        stage: &'static str,
        /// The panic's message.
        message: String,
        /// Where in the source it panicked.
        location: String,
    },
    /// It ran longer than [`CASE_TIMEOUT`].
    Hung,
}

impl Verdict {
    /// What kind of failure this is, for telling failures apart and for keeping a minimized
    /// text failing the same way: a panic's location, else the failure's first line with its
    /// digits masked; `None` for a pass.
    fn failure_class(&self) -> Option<String> {
        match self {
            Verdict::Passed(_) => None,
            Verdict::Failed(failure) => {
                let first_line = failure.lines().next().unwrap_or("");
                Some(first_line.chars().map(|c| if c.is_ascii_digit() { '#' } else { c }).collect())
            }
            Verdict::Panicked { stage, location, .. } => Some(format!("{stage} panicked at {location}")),
            Verdict::Hung => Some(format!("ran longer than {CASE_TIMEOUT:?}")),
        }
    }

    /// The failure in full.
    fn describe(&self) -> String {
        match self {
            Verdict::Passed(_) => "passed".to_string(),
            Verdict::Failed(failure) => failure.clone(),
            Verdict::Panicked { stage, message, location } => {
                format!("{stage} panicked at {location}: {message}")
            }
            Verdict::Hung => format!("ran longer than {CASE_TIMEOUT:?}"),
        }
    }
}

/// Runs [`check`] on `text` on a thread of its own, catching panics and giving up after
/// [`CASE_TIMEOUT`] (leaving the thread behind).
fn run_case(text: &str, arguments: Arguments) -> Verdict {
    install_panic_hook();
    if std::env::var_os("LAZY_XLA_HLO_FUZZ_TRACE").is_some() {
        eprintln!("--- case ({arguments:?}) ---\n{text}\n--- end of case ---");
    }
    let (sender, receiver) = mpsc::channel();
    let owned = text.to_string();
    RUNNING.fetch_add(1, Ordering::SeqCst);
    let spawned = thread::Builder::new().name(CASE_THREAD.to_string()).spawn(move || {
        let verdict = match panic::catch_unwind(AssertUnwindSafe(|| check(&owned, arguments))) {
            Ok(Ok(outcome)) => Verdict::Passed(outcome),
            Ok(Err(failure)) => Verdict::Failed(failure),
            Err(payload) => {
                let message = payload_text(payload.as_ref());
                let location = recorded_location(thread::current().id(), &message);
                Verdict::Panicked { stage: STAGE.with(Cell::get), message, location }
            }
        };
        // The receiver is gone only when the case timed out.
        let _ = sender.send(verdict);
    });
    let verdict = match spawned {
        Err(e) => Verdict::Failed(format!("cannot start the case's thread: {e}")),
        Ok(handle) => match receiver.recv_timeout(CASE_TIMEOUT) {
            Ok(verdict) => {
                let _ = handle.join();
                verdict
            }
            Err(RecvTimeoutError::Timeout) => Verdict::Hung,
            Err(RecvTimeoutError::Disconnected) => {
                Verdict::Failed("the case's thread ended without a verdict".to_string())
            }
        },
    };
    RUNNING.fetch_sub(1, Ordering::SeqCst);
    verdict
}

/// `text` made smaller while it keeps failing with `class`: runs of lines deleted, from half the
/// text down to single lines; single lines deleted with every line that uses what they define
/// (transitively); instructions made parameters (cutting what they used loose); each
/// computation's parameters renumbered 0, 1, … after every change; until nothing more goes.
fn minimize(text: &str, arguments: Arguments, class: &str) -> String {
    let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    let fails = |candidate: &[String]| {
        run_case(&candidate.join("\n"), arguments).failure_class().as_deref() == Some(class)
    };
    // The candidate, its parameters renumbered if it fails so then, if it still fails so.
    let failing = |candidate: Vec<String>| {
        let renumbered = renumber_parameters(candidate.clone());
        [renumbered, candidate].into_iter().find(|candidate| fails(candidate))
    };
    loop {
        let before = lines.clone();
        let mut run = (lines.len() / 2).max(1);
        loop {
            let mut start = 0;
            while start < lines.len() {
                let candidate = [&lines[..start], &lines[(start + run).min(lines.len())..]].concat();
                match failing(candidate) {
                    Some(smaller) => lines = smaller,
                    None => start += run,
                }
            }
            if run == 1 {
                break;
            }
            run /= 2;
        }
        let mut i = lines.len();
        while i > 0 {
            i -= 1;
            if let Some(smaller) = failing(without_users(&lines, i)) {
                lines = smaller;
                i = i.min(lines.len());
            }
        }
        for i in 0..lines.len() {
            let Some(parts) = parts(&lines[i]) else { continue };
            if &lines[i][parts.opcode.clone()] == "parameter" {
                continue;
            }
            // A number past the computation's parameters; renumbering closes the gap.
            let mut candidate = lines.clone();
            candidate[i] = format!("{} parameter({})", lines[i][..parts.opcode.start].trim_end(), i32::MAX);
            if let Some(smaller) = failing(candidate) {
                lines = smaller;
            }
        }
        if lines == before {
            return lines.join("\n");
        }
    }
}

/// `lines` with each computation's parameters numbered 0, 1, … in the order of their numbers.
fn renumber_parameters(mut lines: Vec<String>) -> Vec<String> {
    let mut computations: Vec<Vec<(i64, usize, Range<usize>)>> = vec![Vec::new()];
    for (i, line) in lines.iter().enumerate() {
        if is_header(line) {
            computations.push(Vec::new());
        }
        let Some(parts) = parts(line) else { continue };
        let Some(number) = parts.operands.first().filter(|_| &line[parts.opcode.clone()] == "parameter")
        else {
            continue;
        };
        if let (Ok(value), Some(parameters)) = (line[number.clone()].parse(), computations.last_mut()) {
            parameters.push((value, i, number.clone()));
        }
    }
    for mut parameters in computations {
        parameters.sort_by_key(|&(value, i, _)| (value, i));
        for (new, (_, i, number)) in parameters.into_iter().enumerate() {
            lines[i].replace_range(number, &new.to_string());
        }
    }
    lines
}

/// `lines` without line `i` (and its body and `}`, if it opens a computation) and the lines
/// that use a name it defines, or one that they define, and so on.
fn without_users(lines: &[String], i: usize) -> Vec<String> {
    /// The name line `line` defines: an instruction's or a computation's.
    fn defined(line: &str) -> Option<&str> {
        let line = line.trim_start();
        let line = line.strip_prefix("ROOT ").or_else(|| line.strip_prefix("ENTRY ")).unwrap_or(line);
        line.split(|c: char| c.is_whitespace() || c == '(').next().filter(|name| !name.is_empty())
    }
    /// The words of `line` (names, opcodes, numbers), without the name it defines.
    fn used(line: &str) -> impl Iterator<Item = &str> {
        let own = defined(line);
        line.split(|c: char| !(c.is_ascii() && (is_word_byte(c as u8) || c == '-')))
            .filter(move |w| Some(*w) != own)
    }
    let mut removed = vec![false; lines.len()];
    removed[i] = true;
    if is_header(&lines[i]) {
        let body = computation_around(lines, i);
        let close = body.end;
        for k in body {
            removed[k] = true;
        }
        if lines.get(close).is_some_and(|line| line.trim() == "}") {
            removed[close] = true;
        }
    }
    let mut names: Vec<&str> = defined(&lines[i]).into_iter().collect();
    let mut changed = true;
    while changed {
        changed = false;
        for (j, line) in lines.iter().enumerate() {
            if !removed[j] && used(line).any(|word| names.contains(&word)) {
                removed[j] = true;
                names.extend(defined(line));
                changed = true;
            }
        }
    }
    lines.iter().zip(&removed).filter(|(_, &removed)| !removed).map(|(line, _)| line.clone()).collect()
}

/// A kind of failure found: how often, and its first case.
struct Found {
    /// How many cases failed so.
    count: usize,
    /// Where the first case came from (the module and its mutations, or its truncation).
    origin: String,
    /// The first case's text.
    text: String,
    /// The arguments it ran on.
    arguments: Arguments,
    /// How it failed.
    description: String,
}

/// What a run of cases came to.
#[derive(Default)]
struct Stats {
    /// Cases by how far they got.
    reached: BTreeMap<Reached, usize>,
    /// The errors compile and execute gave (both modes alike), first lines, by count.
    errors: BTreeMap<String, usize>,
    /// The failures, by [`Verdict::failure_class`].
    failures: BTreeMap<String, Found>,
}

impl Stats {
    /// Counts case `text` (from `origin`, run on `arguments`) by its verdict; `false` when it
    /// hung, after which no more cases should run (the hung thread still does).
    fn record(
        &mut self,
        origin: impl FnOnce() -> String,
        text: &str,
        arguments: Arguments,
        verdict: Verdict,
    ) -> bool {
        let Some(class) = verdict.failure_class() else {
            if let Verdict::Passed(outcome) = verdict {
                *self.reached.entry(outcome.reached).or_default() += 1;
                if let Some(error) = outcome.error {
                    let first_line: String = error.lines().next().unwrap_or("").chars().take(160).collect();
                    *self.errors.entry(first_line).or_default() += 1;
                }
            }
            return true;
        };
        let hung = matches!(verdict, Verdict::Hung);
        let found = self.failures.entry(class).or_insert_with(|| Found {
            count: 0,
            origin: origin(),
            text: text.to_string(),
            arguments,
            description: verdict.describe(),
        });
        found.count += 1;
        !hung
    }

    /// Prints the counts (seen with `--nocapture`), then panics with every kind of failure
    /// found, each with its first case minimized (a hang's as it was).
    fn finish(self, what: &str, elapsed: Duration) {
        let passed: usize = self.reached.values().sum();
        let failed: usize = self.failures.values().map(|f| f.count).sum();
        eprintln!(
            "{what}: {} cases in {:.1} s: {:?}, failed: {failed}",
            passed + failed,
            elapsed.as_secs_f64(),
            self.reached
        );
        for (error, count) in &self.errors {
            eprintln!("  {count:>6} × {error}");
        }
        if self.failures.is_empty() {
            return;
        }
        let mut report = format!("{what}: {} kind(s) of failure in {failed} case(s)\n", self.failures.len());
        for (k, (class, found)) in self.failures.iter().enumerate() {
            let minimized = match class.starts_with("ran longer") {
                true => found.text.clone(),
                false => minimize(&found.text, found.arguments, class),
            };
            let description = match run_case(&minimized, found.arguments) {
                verdict @ (Verdict::Failed(_) | Verdict::Panicked { .. }) => verdict.describe(),
                _ => found.description.clone(),
            };
            report += &format!(
                "\n=== {}. {class}: {} case(s); the first: {}, on {:?} arguments\n{description}\n\
                 --- minimized ---\n{minimized}\n",
                k + 1,
                found.count,
                found.origin,
                found.arguments,
            );
        }
        panic!("{report}");
    }
}

/// The environment variable `name` as a number, else `default`.
fn from_environment<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(value) => value.parse().unwrap_or_else(|_| panic!("{name}={value} is not a number")),
        Err(_) => default,
    }
}

/// Runs `cases` mutated modules, drawn from proptest's sequence `seed` (with a fixed seed the
/// sequence replays, so failures need no persistence file), into `stats`.
fn fuzz(cases: u32, seed: u64, stats: &mut Stats) {
    let seeds = seeds();
    let config = Config { rng_seed: RngSeed::Fixed(seed), failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new(config);
    let arguments = prop_oneof![Just(Arguments::Zeros), Just(Arguments::Counting)];
    let mutations =
        prop_oneof![4 => vec(mutation(), 1..=1), 2 => vec(mutation(), 2..=2), 1 => vec(mutation(), 3..=4)];
    let strategy = (0..seeds.len(), mutations, arguments);
    for _ in 0..cases {
        let (seed, mutations, arguments) =
            strategy.new_tree(&mut runner).unwrap_or_else(|e| panic!("drawing a case: {e}")).current();
        let (name, original) = &seeds[seed];
        let text = mutate(original, &mutations);
        let origin = || format!("{name} mutated by {mutations:?}");
        if !stats.record(origin, &text, arguments, run_case(&text, arguments)) {
            break;
        }
    }
}

/// Truncates every module (and its copy with multi-byte characters) at every `stride`th byte
/// offset and at every offset inside a multi-byte character, into `stats`.
fn truncations(stride: usize, stats: &mut Stats) {
    for (name, original) in seeds() {
        for (copy, text) in
            [("", original.clone()), (" (with multi-byte characters)", with_multibyte_characters(&original))]
        {
            let bytes = text.as_bytes();
            let inside_characters = (0..bytes.len()).filter(|&i| !text.is_char_boundary(i));
            let mut offsets: Vec<usize> =
                (0..=bytes.len()).step_by(stride).chain(inside_characters).collect();
            offsets.sort_unstable();
            offsets.dedup();
            for at in offsets {
                let cut = String::from_utf8_lossy(&bytes[..at]);
                let origin = || format!("{name}{copy} cut at byte {at}");
                if !stats.record(origin, &cut, Arguments::Counting, run_case(&cut, Arguments::Counting)) {
                    return;
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The tests.

/// The harness reaches the end on the modules as they are: each (and its copy with multi-byte
/// characters) imports, compiles and runs fused and unfused with agreeing results.
#[test]
fn the_examples_import_compile_and_run() {
    for (name, text) in seeds() {
        for text in [text.clone(), with_multibyte_characters(&text)] {
            for arguments in [Arguments::Zeros, Arguments::Counting] {
                match run_case(&text, arguments) {
                    Verdict::Passed(Outcome { reached: Reached::Ran, error: None }) => {}
                    Verdict::Passed(Outcome { reached, error }) => {
                        panic!("{name}: reached {reached:?}, {error:?}")
                    }
                    verdict => panic!("{name}: {}", verdict.describe()),
                }
            }
        }
    }
}

/// [`QUICK_CASES`] mutated modules import or fail cleanly, and those that import compile and
/// run alike fused and unfused.
#[test]
fn mutated_modules_import_or_fail_cleanly() {
    let (start, mut stats) = (Instant::now(), Stats::default());
    fuzz(QUICK_CASES, SEED, &mut stats);
    stats.finish("mutated modules", start.elapsed());
}

/// Every module cut at every [`QUICK_STRIDE`]th byte offset imports or fails cleanly.
#[test]
fn truncated_modules_import_or_fail_cleanly() {
    let (start, mut stats) = (Instant::now(), Stats::default());
    truncations(QUICK_STRIDE, &mut stats);
    stats.finish("truncated modules", start.elapsed());
}

/// The soak: [`SOAK_CASES`] mutated modules (`LAZY_XLA_HLO_FUZZ_CASES`, from the sequence
/// `LAZY_XLA_HLO_FUZZ_SEED`), then every truncation of every module; every kind of failure
/// found is reported at the end, minimized.
#[test]
#[ignore = "a soak of 20,000 mutations: cargo test --test hlo_mutation_fuzz -- --ignored soak"]
fn soak() {
    let (start, mut stats) = (Instant::now(), Stats::default());
    let cases = from_environment("LAZY_XLA_HLO_FUZZ_CASES", SOAK_CASES);
    fuzz(cases, from_environment("LAZY_XLA_HLO_FUZZ_SEED", SEED), &mut stats);
    truncations(1, &mut stats);
    stats.finish("mutated and truncated modules", start.elapsed());
}

/// Runs the module in the file `LAZY_XLA_HLO_FUZZ_REPLAY` names as one case (on counting
/// arguments, or zeros with `LAZY_XLA_HLO_FUZZ_ZEROS=1`) and prints what it came to: for
/// checking a hand-minimized failure.
#[test]
#[ignore = "replays LAZY_XLA_HLO_FUZZ_REPLAY: cargo test --test hlo_mutation_fuzz -- --ignored replay"]
fn replay() {
    let Some(path) = std::env::var_os("LAZY_XLA_HLO_FUZZ_REPLAY") else {
        return eprintln!("LAZY_XLA_HLO_FUZZ_REPLAY names no file: nothing to replay");
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path:?}: {e}"));
    let arguments = match std::env::var_os("LAZY_XLA_HLO_FUZZ_ZEROS") {
        Some(_) => Arguments::Zeros,
        None => Arguments::Counting,
    };
    match run_case(&text, arguments) {
        Verdict::Passed(Outcome { reached, error }) => {
            eprintln!("{path:?} passed: reached {reached:?}, {error:?}")
        }
        verdict => panic!("{path:?}: {}", verdict.describe()),
    }
}
