//! Every op of the builder: result shapes and layouts (as jaxlib 0.6.0's shape inference gives
//! them, notes/xla-ops.md §1–14), element types accepted and rejected, and XLA's exact
//! rejection sentences, in XLA's check order.

use lazy_xla::{
    abs, add, and, atan2, broadcast, broadcast_in_dim, ceil, clamp, concat_in_dim, convert_element_type, cos,
    div, dot, dot_general, eq, exp, expm1, floor, ge, gt, iota, is_finite, le, log, log1p, logistic, lt, max,
    min, mul, ne, neg, not, or, pad, pow, reduce, rem, reshape, rev, round, rsqrt, select, shape, shift_left,
    shift_right_arithmetic, shift_right_logical, sign, sin, slice, sqrt, sub, tanh, transpose, xor,
    DotDimensionNumbers, ElementType, Literal, PaddingConfig, PaddingConfigDimension, Shape, XlaBuilder,
    XlaComputation, XlaOp,
};

/// A parameter of the shape written in XLA's notation (`"f32[2,3]{0,1}"`).
fn p<'b>(b: &'b XlaBuilder, number: i64, shape: &str) -> XlaOp<'b> {
    b.parameter(number, &shape.parse::<Shape>().expect("shape text"), "p")
}

/// The result shape of the op `f` makes in a fresh builder, as text with layout, or the error.
fn build<F>(f: F) -> Result<String, String>
where
    F: for<'b> FnOnce(&'b XlaBuilder) -> XlaOp<'b>,
{
    let b = XlaBuilder::new("ops");
    let op = f(&b);
    b.get_shape(op).map(|s| s.to_string()).map_err(|e| e.to_string())
}

/// The result shape (with layout) of the op `f` makes; panics on an error.
#[track_caller]
fn shape_of<F>(f: F) -> String
where
    F: for<'b> FnOnce(&'b XlaBuilder) -> XlaOp<'b>,
{
    build(f).unwrap_or_else(|e| panic!("unexpected error: {e}"))
}

/// The error of the op `f` makes; asserts it starts with XLA's `sentence` followed by
/// lazy-xla's ` (op <op>; operands ` context.
#[track_caller]
fn assert_rejects<F>(op: &str, sentence: &str, f: F)
where
    F: for<'b> FnOnce(&'b XlaBuilder) -> XlaOp<'b>,
{
    match build(f) {
        Ok(shape) => panic!("expected `{sentence}`, got the shape {shape}"),
        Err(message) => assert!(
            message.starts_with(&format!("{sentence} (op {op}; operands ")),
            "\n  got      {message}\n  expected {sentence} (op {op}; operands ..."
        ),
    }
}

/// A scalar `(T, T) -> T` reducer named `name` computing `lhs + rhs`.
fn add_reducer(element_type: ElementType) -> XlaComputation {
    let r = XlaBuilder::new("add");
    let scalar = Shape::scalar(element_type);
    let a = r.parameter(0, &scalar, "a");
    let b = r.parameter(1, &scalar, "b");
    r.build(add(a, b, &[])).expect("reducer")
}

const TYPES: [ElementType; 9] = [
    ElementType::Pred,
    ElementType::S8,
    ElementType::S32,
    ElementType::U8,
    ElementType::U32,
    ElementType::F16,
    ElementType::Bf16,
    ElementType::F32,
    ElementType::F64,
];

/// A unary free function.
type Unary = for<'b> fn(XlaOp<'b>) -> XlaOp<'b>;
/// A binary free function with broadcast dimensions.
type Binary = for<'b, 'd> fn(XlaOp<'b>, XlaOp<'b>, &'d [i64]) -> XlaOp<'b>;

/// A parameter `t[2,3]{0,1}`.
fn column_major(b: &XlaBuilder, number: i64, t: ElementType) -> XlaOp<'_> {
    b.parameter(number, &Shape::with_layout(t, &[2, 3], &[0, 1]).unwrap(), "p")
}

// ---- 1. Unary ops ------------------------------------------------------------------------------

/// A unary op, its HLO name, the types it accepts and the sentence rejecting others.
type UnaryCase = (Unary, &'static str, fn(ElementType) -> bool, &'static str);

/// Which unary ops take which types, and XLA's sentence for the others (`{}` = the type name).
fn unary_table() -> Vec<UnaryCase> {
    let float = |t: ElementType| t.is_float();
    let signed_or_float = |t: ElementType| t.is_float() || t.is_signed_integral();
    let transcendental =
        "Expected element type in shape to be floating or complex for {op} operation; got {}.";
    vec![
        (
            neg,
            "negate",
            |t| t.is_float() || t.is_integral(),
            "Expected element type in shape to be integral, floating or complex for negate operation; got {}.",
        ),
        (abs, "abs", signed_or_float, "Expected element type in shape to be floating or complex for abs operation; got {}."),
        (sign, "sign", signed_or_float, "Expected element type in shape to be signed or complex for sign operation; got {}."),
        (exp, "exponential", float, transcendental),
        (log, "log", float, transcendental),
        (log1p, "log-plus-one", float, transcendental),
        (expm1, "exponential-minus-one", float, transcendental),
        (tanh, "tanh", float, transcendental),
        (logistic, "logistic", float, transcendental),
        (sqrt, "sqrt", float, transcendental),
        (rsqrt, "rsqrt", float, transcendental),
        (sin, "sine", float, transcendental),
        (cos, "cosine", float, transcendental),
        (floor, "floor", float, "Expected element type in shape to be floating for {op} operation; got {}."),
        (ceil, "ceil", float, "Expected element type in shape to be floating for {op} operation; got {}."),
        (
            round,
            "round-nearest-afz",
            float,
            "Expected element type in shape to be floating for {op} operation; got {}.",
        ),
        (
            not,
            "not",
            |t| t == ElementType::Pred || t.is_integral(),
            "Expected pred or an integral element type in argument to Not operation; got {}.",
        ),
        (
            is_finite,
            "is-finite",
            float,
            "Expected element type in shape to be floating point for IsFinite operation; got {}.",
        ),
    ]
}

#[test]
fn unary_ops_keep_shape_and_layout_and_accept_xla_types() {
    for (f, name, accepts, sentence) in unary_table() {
        for t in TYPES {
            let result = build(|b| f(column_major(b, 0, t)));
            if accepts(t) {
                let result_type = if name == "is-finite" { ElementType::Pred } else { t };
                assert_eq!(result, Ok(format!("{result_type}[2,3]{{0,1}}")), "{name} on {t}");
            } else {
                let message = result.expect_err(name);
                let expected = sentence.replace("{op}", name).replace("{}", &t.primitive_type_name());
                // abs's sentence is checked separately (abs_rejects_unsigned_with_xla_sentence).
                if name != "abs" {
                    assert!(
                        message.starts_with(&format!("{expected} (op {name}; ")),
                        "{name} on {t}: {message}"
                    );
                }
            }
        }
    }
}

#[test]
fn unary_ops_on_scalars_and_other_layouts() {
    assert_eq!(shape_of(|b| exp(p(b, 0, "f32[]"))), "f32[]");
    assert_eq!(shape_of(|b| neg(p(b, 0, "s32[2,3,4]{1,0,2}"))), "s32[2,3,4]{1,0,2}");
    assert_eq!(shape_of(|b| is_finite(p(b, 0, "bf16[4,2,3]{2,1,0}"))), "pred[4,2,3]{2,1,0}");
    assert_eq!(shape_of(|b| -p(b, 0, "f64[2,3]{0,1}")), "f64[2,3]{0,1}");
    assert_eq!(shape_of(|b| neg(p(b, 0, "u32[2]"))), "u32[2]{0}");
    assert_eq!(shape_of(|b| abs(p(b, 0, "s32[2]"))), "s32[2]{0}");
}

#[test]
fn exp_rejects_s32() {
    assert_rejects(
        "exponential",
        "Expected element type in shape to be floating or complex for exponential operation; got S32.",
        |b| exp(p(b, 0, "s32[2]")),
    );
}

#[test]
fn abs_rejects_unsigned_with_xla_sentence() {
    assert_rejects(
        "abs",
        "Expected element type in shape to be floating or complex for abs operation; got U32.",
        |b| abs(p(b, 0, "u32[2]")),
    );
    assert_rejects(
        "abs",
        "Expected element type in shape to be floating or complex for abs operation; got PRED.",
        |b| abs(p(b, 0, "pred[2]")),
    );
}

#[test]
fn floor_not_and_is_finite_rejections() {
    assert_rejects(
        "floor",
        "Expected element type in shape to be floating for floor operation; got S32.",
        |b| floor(p(b, 0, "s32[2]")),
    );
    assert_rejects(
        "not",
        "Expected pred or an integral element type in argument to Not operation; got F32.",
        |b| not(p(b, 0, "f32[2]")),
    );
    assert_rejects(
        "is-finite",
        "Expected element type in shape to be floating point for IsFinite operation; got S32.",
        |b| is_finite(p(b, 0, "s32[2]")),
    );
    assert_rejects(
        "sign",
        "Expected element type in shape to be signed or complex for sign operation; got U32.",
        |b| sign(p(b, 0, "u32[2]")),
    );
    assert_rejects(
        "negate",
        "Expected element type in shape to be integral, floating or complex for negate operation; got PRED.",
        |b| neg(p(b, 0, "pred[2]")),
    );
}

// ---- 2. Binary ops --------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Debug)]
enum Rule {
    /// Any type.
    All,
    /// Not pred (`subtract`, `divide`, `remainder`, `power`).
    Arithmetic,
    /// Floats only; pred rejected as arithmetic (`atan2`).
    Float,
    /// Integers only; pred rejected as arithmetic (shifts: XLA's builder lets floats through
    /// and fails at compile time, lazy-xla rejects them at once).
    Shift,
    /// Pred and integers (`and`, `or`, `xor`).
    Logical,
}

fn binary_table() -> Vec<(Binary, &'static str, Rule)> {
    vec![
        (add, "add", Rule::All),
        (mul, "multiply", Rule::All),
        (max, "maximum", Rule::All),
        (min, "minimum", Rule::All),
        (sub, "subtract", Rule::Arithmetic),
        (div, "divide", Rule::Arithmetic),
        (rem, "remainder", Rule::Arithmetic),
        (pow, "power", Rule::Arithmetic),
        (atan2, "atan2", Rule::Float),
        (shift_left, "shift-left", Rule::Shift),
        (shift_right_arithmetic, "shift-right-arithmetic", Rule::Shift),
        (shift_right_logical, "shift-right-logical", Rule::Shift),
        (and, "and", Rule::Logical),
        (or, "or", Rule::Logical),
        (xor, "xor", Rule::Logical),
    ]
}

#[test]
fn binary_ops_element_types() {
    for (f, name, rule) in binary_table() {
        for t in TYPES {
            let result = build(|b| f(column_major(b, 0, t), column_major(b, 1, t), &[]));
            let type_name = t.primitive_type_name();
            let arithmetic = format!(
                "Expected element type in shape to be arithmetic type for operation {name}; got PRED."
            );
            let expected: Result<(), String> = match rule {
                Rule::All => Ok(()),
                Rule::Arithmetic | Rule::Float | Rule::Shift if t == ElementType::Pred => Err(arithmetic),
                Rule::Arithmetic => Ok(()),
                Rule::Float if t.is_float() => Ok(()),
                // The sentence is checked in atan2_rejects_integers_with_xla_sentence.
                Rule::Float => Err(String::new()),
                Rule::Shift if t.is_integral() => Ok(()),
                Rule::Shift => Err(String::new()),
                Rule::Logical if t == ElementType::Pred || t.is_integral() => Ok(()),
                Rule::Logical => Err(format!(
                    "Expected pred or integral type in argument to and/or operation; got {type_name}."
                )),
            };
            match expected {
                Ok(()) => assert_eq!(result, Ok(format!("{t}[2,3]{{0,1}}")), "{name} on {t}"),
                Err(sentence) => {
                    let message = result.expect_err(&format!("{name} on {t} must fail"));
                    assert!(message.starts_with(&sentence), "{name} on {t}: {message}");
                    assert!(message.contains(&format!("(op {name}; operands ")), "{name} on {t}: {message}");
                }
            }
        }
    }
}

#[test]
fn binary_result_keeps_the_lhs_layout_without_broadcast() {
    for (f, name, _) in binary_table() {
        let t = if name == "atan2" { "f32" } else { "s32" };
        let same = |lhs: &str, rhs: &str| {
            build(|b| f(p(b, 0, &format!("{t}{lhs}")), p(b, 1, &format!("{t}{rhs}")), &[]))
        };
        assert_eq!(same("[2,3]{0,1}", "[2,3]{1,0}"), Ok(format!("{t}[2,3]{{0,1}}")), "{name}");
        assert_eq!(same("[2,3]{1,0}", "[2,3]{0,1}"), Ok(format!("{t}[2,3]{{1,0}}")), "{name}");
        // Any broadcast gives the default layout.
        assert_eq!(same("[2,3]{0,1}", "[]"), Ok(format!("{t}[2,3]{{1,0}}")), "{name}");
        assert_eq!(same("[]", "[2,3]{0,1}"), Ok(format!("{t}[2,3]{{1,0}}")), "{name}");
        assert_eq!(same("[2,3]{0,1}", "[1,3]{0,1}"), Ok(format!("{t}[2,3]{{1,0}}")), "{name}");
        let in_dim = build(|b| f(p(b, 0, &format!("{t}[2,3]{{0,1}}")), p(b, 1, &format!("{t}[3]")), &[1]));
        assert_eq!(in_dim, Ok(format!("{t}[2,3]{{1,0}}")), "{name}");
    }
}

#[test]
fn compare_ops_give_pred_with_lhs_layout() {
    let compares: [(Binary, &str); 6] =
        [(eq, "EQ"), (ne, "NE"), (ge, "GE"), (gt, "GT"), (le, "LE"), (lt, "LT")];
    for (f, direction) in compares {
        for t in TYPES {
            let result = build(|b| f(column_major(b, 0, t), p(b, 1, &format!("{t}[2,3]")), &[]));
            assert_eq!(result, Ok("pred[2,3]{0,1}".to_string()), "{direction} on {t}");
        }
        let result = build(|b| f(p(b, 0, "f32[2,3]{0,1}"), p(b, 1, "f32[3]"), &[1]));
        assert_eq!(result, Ok("pred[2,3]{1,0}".to_string()), "{direction} with broadcast");
        assert_rejects(
            "compare",
            "Binary op compare with different element types: f32[2] and s32[2].",
            |b| f(p(b, 0, "f32[2]"), p(b, 1, "s32[2]"), &[]),
        );
    }
    // f32 against bf16 is fine.
    assert_eq!(shape_of(|b| lt(p(b, 0, "f32[2]"), p(b, 1, "bf16[2]"), &[])), "pred[2]{0}");
}

#[test]
fn and_on_f32_and_sub_on_pred() {
    assert_rejects("and", "Expected pred or integral type in argument to and/or operation; got F32.", |b| {
        and(p(b, 0, "f32[2]"), p(b, 1, "f32[2]"), &[])
    });
    // and checks the lhs only, before element-type equality.
    assert_rejects("and", "Expected pred or integral type in argument to and/or operation; got F32.", |b| {
        and(p(b, 0, "f32[2]"), p(b, 1, "s32[2]"), &[])
    });
    assert_rejects("and", "Binary op and with different element types: s32[2] and f32[2].", |b| {
        and(p(b, 0, "s32[2]"), p(b, 1, "f32[2]"), &[])
    });
    assert_rejects("xor", "Expected pred or integral type in argument to and/or operation; got F32.", |b| {
        xor(p(b, 0, "f32[2]"), p(b, 1, "f32[2]"), &[])
    });
    assert_rejects(
        "subtract",
        "Expected element type in shape to be arithmetic type for operation subtract; got PRED.",
        |b| sub(p(b, 0, "pred[2]"), p(b, 1, "pred[2]"), &[]),
    );
    // Checked on both sides, before element types and shapes.
    assert_rejects(
        "subtract",
        "Expected element type in shape to be arithmetic type for operation subtract; got PRED.",
        |b| sub(p(b, 0, "f32[2]"), p(b, 1, "pred[2]"), &[]),
    );
    assert_rejects(
        "subtract",
        "Expected element type in shape to be arithmetic type for operation subtract; got PRED.",
        |b| sub(p(b, 0, "pred[2]"), p(b, 1, "f32[3]"), &[]),
    );
    assert_rejects(
        "shift-left",
        "Binary op shift-left with different element types: u32[2] and s32[2].",
        |b| shift_left(p(b, 0, "u32[2]"), p(b, 1, "s32[2]"), &[]),
    );
}

#[test]
fn atan2_rejects_integers_with_xla_sentence() {
    assert_rejects(
        "atan2",
        "Expected input element type to be floating or complex for atan2 operation; got S32.",
        |b| atan2(p(b, 0, "s32[2]"), p(b, 1, "s32[2]"), &[]),
    );
    // Type equality first, then the float check, then the shapes.
    assert_rejects("atan2", "Binary op atan2 with different element types: s32[2] and f32[2].", |b| {
        atan2(p(b, 0, "s32[2]"), p(b, 1, "f32[2]"), &[])
    });
    assert_rejects(
        "atan2",
        "Expected input element type to be floating or complex for atan2 operation; got S32.",
        |b| atan2(p(b, 0, "s32[2]"), p(b, 1, "s32[3]"), &[]),
    );
}

#[test]
fn integer_types_must_match_exactly() {
    assert_rejects("add", "Binary op add with different element types: s32[2] and s8[2].", |b| {
        add(p(b, 0, "s32[2]"), p(b, 1, "s8[2]"), &[])
    });
    assert_rejects("multiply", "Binary op multiply with different element types: u8[2] and pred[2].", |b| {
        mul(p(b, 0, "u8[2]"), p(b, 1, "pred[2]"), &[])
    });
}

#[test]
fn mixed_float_precisions_promote_with_an_explicit_convert() {
    assert_eq!(shape_of(|b| add(p(b, 0, "f32[2]"), p(b, 1, "bf16[2]"), &[])), "f32[2]{0}");
    assert_eq!(shape_of(|b| mul(p(b, 0, "bf16[2]"), p(b, 1, "f32[2]"), &[])), "f32[2]{0}");
    assert_eq!(shape_of(|b| max(p(b, 0, "f16[2]"), p(b, 1, "f64[2]"), &[])), "f64[2]{0}");
    assert_eq!(shape_of(|b| sub(p(b, 0, "f16[2]"), p(b, 1, "bf16[2]"), &[])), "bf16[2]{0}");

    let b = XlaBuilder::new("mixed");
    let x = b.parameter(0, &shape!(f32[2]), "x");
    let y = b.parameter(1, &shape!(bf16[2]), "y");
    let text = b.build(x + y).unwrap().to_hlo_text();
    assert_eq!(
        text,
        "HloModule mixed.5, entry_computation_layout={(f32[2]{0}, bf16[2]{0})->f32[2]{0}}\n\n\
         ENTRY mixed.5 {\n\
         \x20 x.1 = f32[2]{0} parameter(0)\n\
         \x20 y.2 = bf16[2]{0} parameter(1)\n\
         \x20 convert.3 = f32[2]{0} convert(y.2)\n\
         \x20 ROOT add.4 = f32[2]{0} add(x.1, convert.3)\n\
         }\n\n"
    );

    // The lhs is converted when it is the narrower one; a broadcast comes first.
    let b = XlaBuilder::new("mixed");
    let s = b.parameter(0, &shape!(bf16[]), "s");
    let v = b.parameter(1, &shape!(f32[3]), "v");
    let text = b.build(s * v).unwrap().to_hlo_text();
    assert!(text.contains("broadcast.3 = bf16[3]{0} broadcast(s.1), dimensions={}\n"), "{text}");
    assert!(text.contains("convert.4 = f32[3]{0} convert(broadcast.3)\n"), "{text}");
    assert!(text.contains("ROOT multiply.5 = f32[3]{0} multiply(convert.4, v.2)\n"), "{text}");

    // Compare converts too, and gives pred.
    let b = XlaBuilder::new("mixed");
    let x = b.parameter(0, &shape!(f32[2]), "x");
    let y = b.parameter(1, &shape!(bf16[2]), "y");
    let text = b.build(gt(x, y, &[])).unwrap().to_hlo_text();
    assert!(text.contains("convert.3 = f32[2]{0} convert(y.2)\n"), "{text}");
    assert!(text.contains("ROOT compare.4 = pred[2]{0} compare(x.1, convert.3), direction=GT\n"), "{text}");
}

#[test]
fn shifts_reject_floats_in_lazy_xla() {
    // XLA's builder lets shifts of floats through and fails at compile time; lazy-xla rejects
    // them when the op is made.
    let message = build(|b| shift_left(p(b, 0, "f32[2]"), p(b, 1, "f32[2]"), &[])).unwrap_err();
    assert!(message.contains("(op shift-left; operands f32[2]{0}, f32[2]{0})"), "{message}");
}

#[test]
fn operators_match_free_functions() {
    assert_eq!(shape_of(|b| p(b, 0, "f32[2,3]{0,1}") + p(b, 1, "f32[2,3]")), "f32[2,3]{0,1}");
    assert_eq!(shape_of(|b| p(b, 0, "s32[2,3]") - p(b, 1, "s32[]")), "s32[2,3]{1,0}");
    assert_eq!(shape_of(|b| p(b, 0, "f32[2,1]") * p(b, 1, "f32[1,3]")), "f32[2,3]{1,0}");
    assert_eq!(shape_of(|b| p(b, 0, "u8[4]") / p(b, 1, "u8[4]")), "u8[4]{0}");
    assert_eq!(shape_of(|b| -p(b, 0, "s8[4]")), "s8[4]{0}");
    assert_rejects(
        "divide",
        "Expected element type in shape to be arithmetic type for operation divide; got PRED.",
        |b| p(b, 0, "pred[2]") / p(b, 1, "pred[2]"),
    );
}

// ---- 3. select / clamp / convert ----------------------------------------------------------------------

#[test]
fn select_takes_the_pred_layout() {
    assert_eq!(
        shape_of(|b| select(p(b, 0, "pred[2,3]{1,0}"), p(b, 1, "f32[2,3]{0,1}"), p(b, 2, "f32[2,3]{0,1}"))),
        "f32[2,3]{1,0}"
    );
    assert_eq!(
        shape_of(|b| select(p(b, 0, "pred[2,3]{0,1}"), p(b, 1, "f32[2,3]"), p(b, 2, "f32[2,3]"))),
        "f32[2,3]{0,1}"
    );
    // A scalar pred is broadcast in the layout of the first non-scalar operand.
    assert_eq!(
        shape_of(|b| select(p(b, 0, "pred[]"), p(b, 1, "f32[2,3]{0,1}"), p(b, 2, "f32[2,3]"))),
        "f32[2,3]{0,1}"
    );
    assert_eq!(shape_of(|b| select(p(b, 0, "pred[]"), p(b, 1, "s32[]"), p(b, 2, "s32[]"))), "s32[]");
    assert_eq!(shape_of(|b| select(p(b, 0, "pred[4]"), p(b, 1, "f32[]"), p(b, 2, "f32[4]"))), "f32[4]{0}");
    // Branches of different float precisions give the higher one.
    assert_eq!(shape_of(|b| select(p(b, 0, "pred[2]"), p(b, 1, "bf16[2]"), p(b, 2, "f32[2]"))), "f32[2]{0}");
}

#[test]
fn select_rejections() {
    assert_rejects("select", "Select's pred operand must have PRED element type; got s32[2,3].", |b| {
        select(p(b, 0, "s32[2,3]"), p(b, 1, "f32[2,3]"), p(b, 2, "f32[2,3]"))
    });
    // A scalar non-pred is named in its broadcast shape.
    assert_rejects("select", "Select's pred operand must have PRED element type; got s32[2,3].", |b| {
        select(p(b, 0, "s32[]"), p(b, 1, "f32[2,3]"), p(b, 2, "f32[2,3]"))
    });
    // Branch types are checked before the pred's.
    assert_rejects("select", "Operands to select must be the same shape; got f32[2,3] and s32[2,3].", |b| {
        select(p(b, 0, "s32[2,3]"), p(b, 1, "f32[2,3]"), p(b, 2, "s32[2,3]"))
    });
    // Only scalars broadcast (XLA: an INTERNAL RET_CHECK ending in this sentence).
    for (pred, on_true, on_false) in [
        ("pred[1,3]", "f32[2,3]", "f32[2,3]"),
        ("pred[3]", "f32[2,3]", "f32[2,3]"),
        ("pred[2,3]", "f32[2,3]", "f32[3,2]"),
    ] {
        let message = build(|b| select(p(b, 0, pred), p(b, 1, on_true), p(b, 2, on_false))).unwrap_err();
        assert!(message.contains("Unimplemented implicit broadcast."), "{message}");
        assert!(message.contains("(op select; operands "), "{message}");
    }
}

#[test]
fn clamp_takes_the_operand_shape() {
    assert_eq!(
        shape_of(|b| clamp(p(b, 0, "f32[2,3]{0,1}"), p(b, 1, "f32[2,3]{1,0}"), p(b, 2, "f32[2,3]{0,1}"))),
        "f32[2,3]{1,0}"
    );
    assert_eq!(
        shape_of(|b| clamp(p(b, 0, "f32[]"), p(b, 1, "f32[2,3]{0,1}"), p(b, 2, "f32[]"))),
        "f32[2,3]{0,1}"
    );
    // A scalar operand takes the first non-scalar argument's shape.
    assert_eq!(
        shape_of(|b| clamp(p(b, 0, "s32[2,3]{0,1}"), p(b, 1, "s32[]"), p(b, 2, "s32[]"))),
        "s32[2,3]{0,1}"
    );
    assert_eq!(shape_of(|b| clamp(p(b, 0, "pred[2]"), p(b, 1, "pred[2]"), p(b, 2, "pred[2]"))), "pred[2]{0}");
    // The operand's element type wins among floats.
    assert_eq!(shape_of(|b| clamp(p(b, 0, "bf16[2]"), p(b, 1, "f16[2]"), p(b, 2, "f32[2]"))), "f16[2]{0}");
}

#[test]
fn clamp_with_mixed_types() {
    assert_rejects("clamp", "Clamp with incompatible element types: s32[2,3], f32[2,3], f32[2,3].", |b| {
        clamp(p(b, 0, "s32[]"), p(b, 1, "f32[2,3]"), p(b, 2, "f32[]"))
    });
    assert_rejects("clamp", "Clamp with incompatible element types: f32[2], f32[2], u8[2].", |b| {
        clamp(p(b, 0, "f32[2]"), p(b, 1, "f32[2]"), p(b, 2, "u8[2]"))
    });
    let message = build(|b| clamp(p(b, 0, "f32[3]"), p(b, 1, "f32[2,3]"), p(b, 2, "f32[]"))).unwrap_err();
    assert!(message.contains("Unimplemented implicit broadcast."), "{message}");
}

#[test]
fn convert_keeps_the_layout() {
    for from in TYPES {
        for to in TYPES {
            let result = build(|b| convert_element_type(column_major(b, 0, from), to));
            assert_eq!(result, Ok(format!("{to}[2,3]{{0,1}}")), "{from} -> {to}");
        }
    }
    assert_eq!(shape_of(|b| convert_element_type(p(b, 0, "f32[]"), ElementType::S64)), "s64[]");
}

// ---- 4–7. iota, broadcast, broadcast_in_dim, reshape, transpose ----------------------------------------------

#[test]
fn iota_keeps_the_given_layout() {
    let b = XlaBuilder::new("iota");
    let i = iota(&b, &shape!(s32[2, 3]{0, 1}), 1);
    assert_eq!(b.get_shape(i).unwrap().to_string(), "s32[2,3]{0,1}");
    let j = iota(&b, &shape!(f32[4]), 0);
    assert_eq!(b.get_shape(j).unwrap().to_string(), "f32[4]{0}");
    let k = iota(&b, &shape!(u8[0, 3]), 0);
    assert_eq!(b.get_shape(k).unwrap().to_string(), "u8[0,3]{1,0}");
}

#[test]
fn iota_rejects_what_xla_verifier_rejects() {
    // XLA's builder accepts these and its verifier rejects them; lazy-xla rejects at once.
    for (shape, dimension) in
        [(shape!(s32[]), 0), (shape!(s32[2, 3]), 2), (shape!(s32[2, 3]), -1), (shape!(pred[2]), 0)]
    {
        let b = XlaBuilder::new("iota");
        let i = iota(&b, &shape, dimension);
        let message = b.get_shape(i).unwrap_err().to_string();
        assert!(message.contains("(op iota; operands none)"), "{message}");
    }
}

#[test]
fn broadcast_prepends_dimensions_with_default_layout() {
    assert_eq!(shape_of(|b| broadcast(p(b, 0, "f32[2,3]{0,1}"), &[4, 5])), "f32[4,5,2,3]{3,2,1,0}");
    assert_eq!(shape_of(|b| broadcast(p(b, 0, "f32[]"), &[4])), "f32[4]{0}");
    assert_eq!(shape_of(|b| broadcast(p(b, 0, "f32[2,3]{0,1}"), &[])), "f32[2,3]{1,0}");
    assert_eq!(shape_of(|b| broadcast(p(b, 0, "s8[2]"), &[0])), "s8[0,2]{1,0}");
    assert_rejects("broadcast", "Broadcast with negative dimension size -1.", |b| {
        broadcast(p(b, 0, "f32[2]"), &[4, -1])
    });
}

#[test]
fn broadcast_in_dim_shapes() {
    assert_eq!(shape_of(|b| broadcast_in_dim(p(b, 0, "f32[3]"), &[2, 3], &[1])), "f32[2,3]{1,0}");
    assert_eq!(shape_of(|b| broadcast_in_dim(p(b, 0, "f32[2,3]{0,1}"), &[2, 3], &[0, 1])), "f32[2,3]{1,0}");
    assert_eq!(
        shape_of(|b| broadcast_in_dim(p(b, 0, "f32[1,3,1]"), &[4, 2, 3, 5], &[1, 2, 3])),
        "f32[4,2,3,5]{3,2,1,0}"
    );
    assert_eq!(shape_of(|b| broadcast_in_dim(p(b, 0, "f32[]"), &[2, 3], &[])), "f32[2,3]{1,0}");
    assert_eq!(shape_of(|b| broadcast_in_dim(p(b, 0, "s32[1,1]"), &[2, 3], &[0, 1])), "s32[2,3]{1,0}");
}

#[test]
fn broadcast_in_dim_errors_in_xla_order() {
    const SIZE: &str = "Size of broadcast_dimensions has to match operand's rank; operand rank: 2, size of broadcast_dimensions 1.";
    assert_rejects("broadcast_in_dim", SIZE, |b| broadcast_in_dim(p(b, 0, "f32[2,3]"), &[3], &[0]));
    assert_rejects("broadcast_in_dim", SIZE, |b| broadcast_in_dim(p(b, 0, "f32[2,3]"), &[4, 5], &[7]));
    assert_rejects("broadcast_in_dim", SIZE, |b| broadcast_in_dim(p(b, 0, "f32[2,3]"), &[], &[0]));
    // Out of bound (beyond the output rank) is checked for all dimensions before sizes.
    assert_rejects("broadcast_in_dim", "Broadcast dimension 5 is out of bound", |b| {
        broadcast_in_dim(p(b, 0, "f32[3,3]"), &[2, 3], &[0, 5])
    });
    assert_rejects("broadcast_in_dim", "Broadcast dimension 5 is out of bound", |b| {
        broadcast_in_dim(p(b, 0, "f32[2,3]"), &[3], &[0, 5])
    });
    assert_rejects("broadcast_in_dim", "Broadcast dimension -1 is out of bound", |b| {
        broadcast_in_dim(p(b, 0, "f32[3]"), &[2, 3], &[-1])
    });
    assert_rejects("broadcast_in_dim", "Broadcast dimension 1 is out of bound", |b| {
        broadcast_in_dim(p(b, 0, "f32[3]"), &[3], &[1])
    });
    assert_rejects("broadcast_in_dim", "Broadcast dimension 2 is out of bound", |b| {
        broadcast_in_dim(p(b, 0, "f32[3,3]"), &[3, 3], &[1, 2])
    });
    assert_rejects(
        "broadcast_in_dim",
        "InDim style broadcast must be to an equal or higher ranked shape; operand rank: 2; output rank: 1",
        |b| broadcast_in_dim(p(b, 0, "f32[2,3]"), &[3], &[0, 0]),
    );
    assert_rejects(
        "broadcast_in_dim",
        "Input dimension should be either 1 or equal to the output dimension it is broadcasting into; the 0th \
         operand dimension is 3, the 1th output dimension is 4.",
        |b| broadcast_in_dim(p(b, 0, "f32[3]"), &[2, 4], &[1]),
    );
    // The size check of a dimension comes before its order check.
    assert_rejects(
        "broadcast_in_dim",
        "Input dimension should be either 1 or equal to the output dimension it is broadcasting into; the 1th \
         operand dimension is 3, the 0th output dimension is 4.",
        |b| broadcast_in_dim(p(b, 0, "f32[5,3]"), &[4, 5], &[1, 0]),
    );
    assert_rejects("broadcast_in_dim", "Broadcast dimensions order is wrong: 1 comes after 1.", |b| {
        broadcast_in_dim(p(b, 0, "f32[3,3]"), &[3, 3], &[1, 1])
    });
    assert_rejects("broadcast_in_dim", "Broadcast dimensions order is wrong: 0 comes after 1.", |b| {
        broadcast_in_dim(p(b, 0, "f32[3,3]"), &[3, 3], &[1, 0])
    });
    assert_rejects("broadcast_in_dim", "Broadcast dimensions order is wrong: 1 comes after 2.", |b| {
        broadcast_in_dim(p(b, 0, "f32[3,3]"), &[4, 3, 3], &[2, 1])
    });
}

#[test]
fn broadcast_in_dim_dimension_equal_to_output_rank_is_checked_late() {
    // jaxlib 0.6.0: f32[2,3] -> [3] with {0,1} gives the rank sentence, not `1 is out of bound`.
    assert_rejects(
        "broadcast_in_dim",
        "InDim style broadcast must be to an equal or higher ranked shape; operand rank: 2; output rank: 1",
        |b| broadcast_in_dim(p(b, 0, "f32[2,3]"), &[3], &[0, 1]),
    );
    assert_rejects(
        "broadcast_in_dim",
        "InDim style broadcast must be to an equal or higher ranked shape; operand rank: 1; output rank: 0",
        |b| broadcast_in_dim(p(b, 0, "f32[2]"), &[], &[0]),
    );
    // f32[3,3] -> [2,3] with {0,2}: dimension 0's size mismatch comes before dimension 1's bound.
    assert_rejects(
        "broadcast_in_dim",
        "Input dimension should be either 1 or equal to the output dimension it is broadcasting into; the 0th \
         operand dimension is 3, the 0th output dimension is 2.",
        |b| broadcast_in_dim(p(b, 0, "f32[3,3]"), &[2, 3], &[0, 2]),
    );
}

#[test]
fn broadcast_in_dim_negative_output_size_is_the_first_error() {
    // XLA: `invalid shape type=11, dims=[-1]` before any other check.
    for (sizes, dims) in [(vec![-2i64, 3], vec![1i64]), (vec![-1], vec![0, 1]), (vec![2, -3], vec![7])] {
        let message = build(|b| broadcast_in_dim(p(b, 0, "f32[3]"), &sizes, &dims)).unwrap_err();
        assert!(!message.starts_with("Size of broadcast_dimensions"), "{message}");
        assert!(!message.starts_with("Broadcast dimension"), "{message}");
        assert!(message.contains("(op broadcast_in_dim; operands f32[3]{0})"), "{message}");
    }
}

#[test]
fn reshape_shapes_and_errors() {
    assert_eq!(shape_of(|b| reshape(p(b, 0, "f32[2,3]{0,1}"), &[3, 2])), "f32[3,2]{1,0}");
    assert_eq!(shape_of(|b| reshape(p(b, 0, "f32[2,3]{0,1}"), &[2, 3])), "f32[2,3]{1,0}");
    assert_eq!(shape_of(|b| reshape(p(b, 0, "f32[1,1]"), &[])), "f32[]");
    assert_eq!(shape_of(|b| reshape(p(b, 0, "s32[2,3,4]"), &[2, 12])), "s32[2,12]{1,0}");
    assert_eq!(shape_of(|b| reshape(p(b, 0, "s32[0,3]"), &[3, 0, 7])), "s32[3,0,7]{2,1,0}");
    assert_rejects(
        "reshape",
        "Reshape operation has mismatched element counts: from=6 (f32[2,3]) to=8 (f32[4,2]).",
        |b| reshape(p(b, 0, "f32[2,3]"), &[4, 2]),
    );
    // A negative size aborts XLA; lazy-xla returns an error.
    let message = build(|b| reshape(p(b, 0, "f32[2,3]"), &[-2, -3])).unwrap_err();
    assert!(message.contains("(op reshape; operands f32[2,3]{1,0})"), "{message}");
}

#[test]
fn transpose_permutes_the_layout() {
    assert_eq!(shape_of(|b| transpose(p(b, 0, "f32[2,3]{1,0}"), &[1, 0])), "f32[3,2]{0,1}");
    assert_eq!(shape_of(|b| transpose(p(b, 0, "f32[2,3,4]{1,0,2}"), &[2, 0, 1])), "f32[4,2,3]{2,1,0}");
    assert_eq!(shape_of(|b| transpose(p(b, 0, "f32[2,3]{1,0}"), &[0, 1])), "f32[2,3]{1,0}");
    assert_eq!(shape_of(|b| transpose(p(b, 0, "f32[]"), &[])), "f32[]");
    for (permutation, text) in
        [(vec![0i64, 0], "0,0"), (vec![0], "0"), (vec![0, 2], "0,2"), (vec![-1, 0], "-1,0")]
    {
        let sentence = format!(
            "Transpose dimensions [{text}] are not a permutation of the operand dimensions (operand shape is f32[2,3])."
        );
        assert_rejects("transpose", &sentence, |b| transpose(p(b, 0, "f32[2,3]"), &permutation));
    }
}

// ---- 8. slice -------------------------------------------------------------------------------------------

#[test]
fn slice_shapes() {
    assert_eq!(shape_of(|b| slice(p(b, 0, "f32[4,6]{0,1}"), &[0, 0], &[4, 6], &[1, 1])), "f32[4,6]{1,0}");
    assert_eq!(shape_of(|b| slice(p(b, 0, "f32[4,6]"), &[0, 0], &[2, 4], &[1, 2])), "f32[2,2]{1,0}");
    assert_eq!(shape_of(|b| slice(p(b, 0, "f32[4,6]"), &[0, 1], &[4, 6], &[2, 2])), "f32[2,3]{1,0}");
    assert_eq!(shape_of(|b| slice(p(b, 0, "f32[4,6]"), &[2, 0], &[2, 6], &[1, 1])), "f32[0,6]{1,0}");
    assert_eq!(shape_of(|b| slice(p(b, 0, "s32[10]"), &[1], &[10], &[3])), "s32[3]{0}");
    assert_eq!(shape_of(|b| slice(p(b, 0, "f32[]"), &[], &[], &[])), "f32[]");
}

#[test]
fn slice_errors_in_xla_order() {
    let x = "f32[4,6]";
    assert_rejects(
        "slice",
        "slice start and limit sizes differ: 1 vs 2 in slice operation; argument shape: f32[4,6]; starts: {0}; \
         limits: {4,6}; strides: {1,1}.",
        |b| slice(p(b, 0, x), &[0], &[4, 6], &[1, 1]),
    );
    assert_rejects(
        "slice",
        "slice start and strides sizes differ: 2 vs 1 in slice operation; argument shape: f32[4,6]; starts: {0,0}; \
         limits: {4,6}; strides: {1}.",
        |b| slice(p(b, 0, x), &[0, 0], &[4, 6], &[1]),
    );
    assert_rejects("slice", "Slice index count does not match argument rank: 1 vs 2.", |b| {
        slice(p(b, 0, x), &[0], &[4], &[1])
    });
    assert_rejects("slice", "Negative start index to slice: -1.", |b| {
        slice(p(b, 0, x), &[-1, 0], &[4, 6], &[1, 1])
    });
    assert_rejects(
        "slice",
        "limit index (5) must be less than or equal to dimension size (4) in slice operation; argument shape: \
         f32[4,6]; starts: {0,0}; limits: {5,6}; strides: {1,1}.",
        |b| slice(p(b, 0, x), &[0, 0], &[5, 6], &[1, 1]),
    );
    assert_rejects(
        "slice",
        "limit index (2) must be greater or equal to start index (3) in slice with positive stride in slice \
         operation; argument shape: f32[4,6]; starts: {3,0}; limits: {2,6}; strides: {1,1}.",
        |b| slice(p(b, 0, x), &[3, 0], &[2, 6], &[1, 1]),
    );
    assert_rejects(
        "slice",
        "limit index (-1) must be greater or equal to start index (0) in slice with positive stride in slice \
         operation; argument shape: f32[4,6]; starts: {0,0}; limits: {-1,6}; strides: {1,1}.",
        |b| slice(p(b, 0, x), &[0, 0], &[-1, 6], &[1, 1]),
    );
    assert_rejects("slice", "Stride (0) must be positive.", |b| slice(p(b, 0, x), &[0, 0], &[4, 6], &[0, 1]));
    assert_rejects("slice", "Stride (-2) must be positive.", |b| {
        slice(p(b, 0, x), &[0, 0], &[4, 6], &[1, -2])
    });
    // All checks of dimension 0 come before any of dimension 1.
    assert_rejects("slice", "Stride (0) must be positive.", |b| {
        slice(p(b, 0, x), &[0, -1], &[4, 6], &[0, 1])
    });
}

// ---- 9. concatenate ---------------------------------------------------------------------------------------

#[test]
fn concat_shapes() {
    let b = XlaBuilder::new("concat");
    let x = p(&b, 0, "f32[2,3]{0,1}");
    let y = p(&b, 1, "f32[4,3]");
    let z = p(&b, 2, "bf16[1,3]");
    assert_eq!(b.get_shape(concat_in_dim(&b, &[x, y], 0)).unwrap().to_string(), "f32[6,3]{1,0}");
    assert_eq!(b.get_shape(concat_in_dim(&b, &[x], 1)).unwrap().to_string(), "f32[2,3]{1,0}");
    assert_eq!(b.get_shape(concat_in_dim(&b, &[z, x, y], 0)).unwrap().to_string(), "f32[7,3]{1,0}");
    assert_eq!(b.get_shape(concat_in_dim(&b, &[x, x, x], 1)).unwrap().to_string(), "f32[2,9]{1,0}");
}

#[test]
fn concat_errors() {
    assert_rejects("concatenate", "Concatenate expects at least one argument.", |b| concat_in_dim(b, &[], 0));
    assert_rejects("concatenate", "Concatenate dimension out of bounds: 2.", |b| {
        concat_in_dim(b, &[p(b, 0, "f32[2,3]")], 2)
    });
    assert_rejects("concatenate", "Concatenate dimension out of bounds: -1.", |b| {
        concat_in_dim(b, &[p(b, 0, "f32[2,3]")], -1)
    });
    assert_rejects("concatenate", "Concatenate dimension out of bounds: 0.", |b| {
        concat_in_dim(b, &[p(b, 0, "f32[]"), p(b, 1, "f32[]")], 0)
    });
    // Rank before type.
    assert_rejects(
        "concatenate",
        "Cannot concatenate arrays with different ranks: 2 (f32[2,3]) vs 1 (s32[4]).",
        |b| concat_in_dim(b, &[p(b, 0, "f32[2,3]"), p(b, 1, "s32[4]")], 0),
    );
    assert_rejects(
        "concatenate",
        "Cannot concatenate arrays with different element types: F32 vs S32.",
        |b| concat_in_dim(b, &[p(b, 0, "f32[2,3]"), p(b, 1, "s32[4,3]")], 0),
    );
    assert_rejects(
        "concatenate",
        "Cannot concatenate arrays that differ in dimensions other than the one being concatenated. Dimension 1 in \
         both shapes must be equal (or compatible): f32[2,3] vs f32[4,2].",
        |b| concat_in_dim(b, &[p(b, 0, "f32[2,3]"), p(b, 1, "f32[4,2]")], 0),
    );
}

// ---- 10. pad ----------------------------------------------------------------------------------------------

fn config(dims: &[(i64, i64, i64)]) -> PaddingConfig {
    PaddingConfig {
        dimensions: dims
            .iter()
            .map(|&(lo, hi, interior)| PaddingConfigDimension {
                edge_padding_low: lo,
                edge_padding_high: hi,
                interior_padding: interior,
            })
            .collect(),
    }
}

#[test]
fn pad_shapes() {
    let c = config(&[(0, 0, 0), (1, 2, 1)]);
    assert_eq!(shape_of(|b| pad(p(b, 0, "f32[2,3]{0,1}"), p(b, 1, "f32[]"), &c)), "f32[2,8]{1,0}");
    let c = config(&[(-1, 0, 0), (-2, -1, 1)]);
    assert_eq!(shape_of(|b| pad(p(b, 0, "f32[2,5]"), p(b, 1, "f32[]"), &c)), "f32[1,6]{1,0}");
    let c = config(&[(0, 0, 5)]);
    assert_eq!(shape_of(|b| pad(p(b, 0, "s32[0]"), p(b, 1, "s32[]"), &c)), "s32[0]{0}");
    assert_eq!(shape_of(|b| pad(p(b, 0, "f32[]"), p(b, 1, "f32[]"), &config(&[]))), "f32[]");
    let c = config(&[(1, 1, 0)]);
    assert_eq!(shape_of(|b| pad(p(b, 0, "bf16[3]"), p(b, 1, "f32[]"), &c)), "f32[5]{0}");
}

#[test]
fn pad_errors_in_xla_order() {
    let one = config(&[(1, 0, 0)]);
    assert_rejects("pad", "Pad operation does not support non-scalar padding values.", |b| {
        pad(p(b, 0, "f32[2]"), p(b, 1, "f32[1]"), &one)
    });
    assert_rejects(
        "pad",
        "The rank of the operand and the padding configuration do not match: f32[2,3] vs dimensions { \
         edge_padding_low: 1 }.",
        |b| pad(p(b, 0, "f32[2,3]"), p(b, 1, "f32[]"), &one),
    );
    let full = config(&[(1, -2, -1), (3, 4, 5)]);
    assert_rejects(
        "pad",
        "The rank of the operand and the padding configuration do not match: f32[2] vs dimensions { \
         edge_padding_low: 1 edge_padding_high: -2 interior_padding: -1 } dimensions { edge_padding_low: 3 \
         edge_padding_high: 4 interior_padding: 5 }.",
        |b| pad(p(b, 0, "f32[2]"), p(b, 1, "f32[]"), &full),
    );
    assert_rejects("pad", "The element types of the operands to Pad do not match.", |b| {
        pad(p(b, 0, "f32[2]"), p(b, 1, "s32[]"), &one)
    });
    let negative_interior = config(&[(0, 0, -1), (0, 0, 0)]);
    assert_rejects(
        "pad",
        "Interior padding cannot be negative: dimensions { interior_padding: -1 } dimensions { }",
        |b| pad(p(b, 0, "f32[2,3]"), p(b, 1, "f32[]"), &negative_interior),
    );
    let too_negative = config(&[(0, 0, 0), (-2, -2, 0)]);
    assert_rejects("pad", "Padding result in negative size for dimension 1", |b| {
        pad(p(b, 0, "f32[2,3]"), p(b, 1, "f32[]"), &too_negative)
    });
}

// ---- 11. reverse -----------------------------------------------------------------------------------------

#[test]
fn rev_keeps_the_layout() {
    assert_eq!(shape_of(|b| rev(p(b, 0, "f32[2,3]{0,1}"), &[0])), "f32[2,3]{0,1}");
    assert_eq!(shape_of(|b| rev(p(b, 0, "f32[2,3]{0,1}"), &[1, 0])), "f32[2,3]{0,1}");
    assert_eq!(shape_of(|b| rev(p(b, 0, "s32[2,3]"), &[])), "s32[2,3]{1,0}");
}

#[test]
fn rev_errors() {
    assert_rejects("reverse", "a dimension number is duplicated in reverse", |b| {
        rev(p(b, 0, "f32[2,3]"), &[0, 0])
    });
    // Duplicates are checked for all dimensions before the range.
    assert_rejects("reverse", "a dimension number is duplicated in reverse", |b| {
        rev(p(b, 0, "f32[2,3]"), &[5, 5])
    });
    assert_rejects("reverse", "One of the reverse dimensions (2) is out-of-bounds in shape f32[2,3].", |b| {
        rev(p(b, 0, "f32[2,3]"), &[2])
    });
    assert_rejects(
        "reverse",
        "One of the reverse dimensions (-1) is out-of-bounds in shape f32[2,3].",
        |b| rev(p(b, 0, "f32[2,3]"), &[0, -1]),
    );
}

// ---- 12. reduce -------------------------------------------------------------------------------------------

/// The result shape of reducing a parameter `operand` from a parameter `init`.
fn reduce_result(
    operand: &str,
    init: &str,
    reducer: &XlaComputation,
    dims: &[i64],
) -> Result<String, String> {
    build(|b| reduce(p(b, 0, operand), p(b, 1, init), reducer, dims))
}

#[test]
fn reduce_shapes() {
    let sum = add_reducer(ElementType::F32);
    assert_eq!(reduce_result("f32[2,3]", "f32[]", &sum, &[1]), Ok("f32[2]{0}".into()));
    assert_eq!(reduce_result("f32[2,3]", "f32[]", &sum, &[0, 1]), Ok("f32[]".into()));
    assert_eq!(reduce_result("f32[2,3,4]{0,1,2}", "f32[]", &sum, &[1]), Ok("f32[2,4]{1,0}".into()));
    assert_eq!(reduce_result("f32[2,3,4]", "f32[]", &sum, &[2, 0]), Ok("f32[3]{0}".into()));
    assert_eq!(reduce_result("f32[2,3]{0,1}", "f32[]", &sum, &[]), Ok("f32[2,3]{1,0}".into()));
    // The reducer's type is the result's; floats of other precisions are tolerated.
    let bf16_sum = add_reducer(ElementType::Bf16);
    assert_eq!(reduce_result("f32[2,3]", "f32[]", &bf16_sum, &[1]), Ok("bf16[2]{0}".into()));
    let s32_sum = add_reducer(ElementType::S32);
    assert_eq!(reduce_result("s32[5,2]", "s32[]", &s32_sum, &[0]), Ok("s32[2]{0}".into()));
}

#[test]
fn reduce_errors_in_xla_order() {
    let sum = add_reducer(ElementType::F32);
    let three = {
        let r = XlaBuilder::new("three");
        let s = shape!(f32[]);
        let (a, b, c) = (r.parameter(0, &s, "a"), r.parameter(1, &s, "b"), r.parameter(2, &s, "c"));
        r.build(add(add(a, b, &[]), c, &[])).unwrap()
    };
    let vector = {
        let r = XlaBuilder::new("vector");
        let s = shape!(f32[]);
        let (a, b) = (r.parameter(0, &s, "a"), r.parameter(1, &s, "b"));
        r.build(broadcast(add(a, b, &[]), &[2])).unwrap()
    };
    let s32_sum = add_reducer(ElementType::S32);
    let cases: Vec<(&str, &str, &XlaComputation, Vec<i64>, &str)> = vec![
        ("f32[2,3]", "f32[]", &three, vec![1], "Reduction function must take 2 parameters, but takes 3 parameter(s)."),
        (
            "f32[2,3]",
            "f32[]",
            &vector,
            vec![1],
            "Reduction function must return a scalar or tuple of scalars but returns shape: f32[2]",
        ),
        (
            "f32[2,3]",
            "f32[1]",
            &sum,
            vec![1],
            "Reduction function's accumulator shape at index 0 differs from the init_value shape: f32[] vs f32[1]",
        ),
        (
            "f32[2,3]",
            "s32[]",
            &sum,
            vec![1],
            "Reduction function's accumulator shape at index 0 differs from the init_value shape: f32[] vs s32[]",
        ),
        (
            "f32[2,3]",
            "f32[]",
            &s32_sum,
            vec![1],
            "Reduction function's accumulator shape at index 0 differs from the init_value shape: s32[] vs f32[]",
        ),
        (
            "s32[2,3]",
            "f32[]",
            &sum,
            vec![1],
            "Reduction function's 1-th parameter shape differs from the input type element type: f32[] vs s32[]",
        ),
        ("f32[2,3]", "f32[]", &sum, vec![1, 1, 5], "Reducing out-of-bounds dimension 5 in shape f32[2,3]."),
        ("f32[2,3]", "f32[]", &sum, vec![-1], "Reducing out-of-bounds dimension -1 in shape f32[2,3]."),
        ("f32[2,3]", "f32[]", &sum, vec![1, 1], "Duplicate reduction dimension: 1"),
    ];
    for (operand, init, reducer, dims, sentence) in cases {
        assert_rejects("reduce", sentence, |b| reduce(p(b, 0, operand), p(b, 1, init), reducer, &dims));
    }
}

// ---- 13. dot / dot_general ---------------------------------------------------------------------------------

fn numbers(lc: &[i64], rc: &[i64], lb: &[i64], rb: &[i64]) -> DotDimensionNumbers {
    DotDimensionNumbers {
        lhs_contracting_dimensions: lc.to_vec(),
        rhs_contracting_dimensions: rc.to_vec(),
        lhs_batch_dimensions: lb.to_vec(),
        rhs_batch_dimensions: rb.to_vec(),
    }
}

#[test]
fn dot_shapes() {
    assert_eq!(shape_of(|b| dot(p(b, 0, "f32[2,3]{0,1}"), p(b, 1, "f32[3,4]{0,1}"))), "f32[2,4]{1,0}");
    assert_eq!(shape_of(|b| dot(p(b, 0, "f32[3]"), p(b, 1, "f32[3]"))), "f32[]");
    assert_eq!(shape_of(|b| dot(p(b, 0, "f32[3]"), p(b, 1, "f32[3,4]"))), "f32[4]{0}");
    assert_eq!(shape_of(|b| dot(p(b, 0, "f32[2,3]"), p(b, 1, "f32[3]"))), "f32[2]{0}");
    assert_eq!(shape_of(|b| dot(p(b, 0, "f32[2,3,4]"), p(b, 1, "f32[3,5]"))), "f32[2,4,5]{2,1,0}");
    let batched = numbers(&[2], &[0], &[1], &[2]);
    assert_eq!(
        shape_of(|b| dot_general(p(b, 0, "f32[2,5,3]"), p(b, 1, "f32[3,4,5]"), &batched)),
        "f32[5,2,4]{2,1,0}"
    );
    let outer = numbers(&[], &[], &[], &[]);
    assert_eq!(
        shape_of(|b| dot_general(p(b, 0, "f32[2]"), p(b, 1, "f32[3,4]"), &outer)),
        "f32[2,3,4]{2,1,0}"
    );
}

#[test]
fn dot_element_types_take_the_wider_type() {
    for (lhs, rhs, result) in [
        ("s32[2,3]", "f32[3,4]", "f32[2,4]{1,0}"),
        ("f32[2,3]", "bf16[3,4]", "f32[2,4]{1,0}"),
        ("s8[2,3]", "s32[3,4]", "s32[2,4]{1,0}"),
        ("pred[2,3]", "f32[3,4]", "f32[2,4]{1,0}"),
        ("pred[2,3]", "pred[3,4]", "pred[2,4]{1,0}"),
    ] {
        assert_eq!(build(|b| dot(p(b, 0, lhs), p(b, 1, rhs))), Ok(result.to_string()), "{lhs} . {rhs}");
    }
}

#[test]
fn dot_errors_in_xla_order() {
    assert_rejects(
        "dot",
        "Cannot infer shape for dot operation: f32[2,3] <dot> f32[4,2]. Contracting dimension sizes are not compatible.",
        |b| dot(p(b, 0, "f32[2,3]"), p(b, 1, "f32[4,2]")),
    );
    assert_rejects(
        "dot",
        "A dimension number is out of range in Dot: lhs_contracting_dimensions: 2\nrhs_contracting_dimensions: 0\n. \
         f32[2,3] f32[3,4]",
        |b| dot_general(p(b, 0, "f32[2,3]"), p(b, 1, "f32[3,4]"), &numbers(&[2], &[0], &[], &[])),
    );
    // A scalar lhs: Dot contracts its dimension 1.
    assert_rejects(
        "dot",
        "A dimension number is out of range in Dot: lhs_contracting_dimensions: 1\nrhs_contracting_dimensions: 0\n. \
         f32[] f32[3]",
        |b| dot(p(b, 0, "f32[]"), p(b, 1, "f32[3]")),
    );
    assert_rejects(
        "dot",
        "A dimension number is out of range in Dot: lhs_contracting_dimensions: 1\nrhs_contracting_dimensions: 0\n\
         lhs_batch_dimensions: 0\nrhs_batch_dimensions: -1\n. f32[2,3] f32[3,2]",
        |b| dot_general(p(b, 0, "f32[2,3]"), p(b, 1, "f32[3,2]"), &numbers(&[1], &[0], &[0], &[-1])),
    );
    assert_rejects(
        "dot",
        "A dimension number is not unique in Dot: lhs_contracting_dimensions: 0\nrhs_contracting_dimensions: 0\n\
         lhs_batch_dimensions: 0\nrhs_batch_dimensions: 1\n.",
        |b| dot_general(p(b, 0, "f32[2,2]"), p(b, 1, "f32[2,2]"), &numbers(&[0], &[0], &[0], &[1])),
    );
    assert_rejects(
        "dot",
        "Cannot infer shape for dot operation: f32[2,3] <dot> f32[3,2]. Must specify the same number of contracting \
         dimensions for lhs and rhs.",
        |b| dot_general(p(b, 0, "f32[2,3]"), p(b, 1, "f32[3,2]"), &numbers(&[1], &[0, 1], &[], &[])),
    );
    assert_rejects(
        "dot",
        "Cannot infer shape for dot operation: f32[5,2,3] <dot> f32[5,3,4]. Must the same number of batch \
         dimensions for lhs and rhs.",
        |b| dot_general(p(b, 0, "f32[5,2,3]"), p(b, 1, "f32[5,3,4]"), &numbers(&[2], &[1], &[0], &[])),
    );
    assert_rejects(
        "dot",
        "Cannot infer shape for dot operation: f32[5,2,3] <dot> f32[6,3,4]. Batch dimension sizes are not \
         compatible.",
        |b| dot_general(p(b, 0, "f32[5,2,3]"), p(b, 1, "f32[6,3,4]"), &numbers(&[2], &[1], &[0], &[0])),
    );
}

// ---- 14. constants and parameters ----------------------------------------------------------------------------

#[test]
fn constants_have_the_default_layout_and_parameters_keep_theirs() {
    let b = XlaBuilder::new("constants");
    assert_eq!(b.get_shape(b.constant_r0(1.0f32)).unwrap().to_string(), "f32[]");
    assert_eq!(b.get_shape(b.constant_r0(true)).unwrap().to_string(), "pred[]");
    assert_eq!(b.get_shape(b.constant_r1(&[1i64, 2, 3])).unwrap().to_string(), "s64[3]{0}");
    assert_eq!(b.get_shape(b.constant_r1::<u8>(&[])).unwrap().to_string(), "u8[0]{0}");
    let literal = Literal::from_vec(&shape!(s32[2, 3]), vec![1, 2, 3, 4, 5, 6]).unwrap();
    assert_eq!(b.get_shape(b.constant_literal(&literal)).unwrap().to_string(), "s32[2,3]{1,0}");
    let x = b.parameter(0, &shape!(f32[2, 3, 4]{0, 2, 1}), "x");
    assert_eq!(b.get_shape(x).unwrap().to_string(), "f32[2,3,4]{0,2,1}");
}
