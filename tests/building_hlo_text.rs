//! The exact HLO text of built computations, pinned against what jaxlib 0.6.0's
//! `XlaComputation.as_hlo_text()` prints for the same graphs (notes/xla-ops.md §0–15): names
//! `opcode.id` from one per-builder counter, no `%`, operands by name, attributes, constants,
//! explicit broadcast lowerings and XLA's instruction post order.

use lazy_xla::{
    add, broadcast, broadcast_in_dim, clamp, concat_in_dim, convert_element_type, dot, dot_general, eq, exp,
    ge, gt, iota, le, lt, ne, neg, pad, reduce, reshape, rev, select, shape, slice, tanh, transpose,
    DotDimensionNumbers, ElementType, Literal, PaddingConfig, PaddingConfigDimension, Shape, XlaBuilder,
    XlaComputation, XlaOp,
};

/// A module of one entry computation `entry` with the `layout` signature and these
/// instruction lines, as as_hlo_text prints it.
fn module(entry: &str, layout: &str, lines: &[&str]) -> String {
    let body: String = lines.iter().map(|line| format!("  {line}\n")).collect();
    format!("HloModule {entry}, entry_computation_layout={{{layout}}}\n\nENTRY {entry} {{\n{body}}}\n\n")
}

/// Unnamed parameters (XLA names them `parameter.N`).
fn p<'b>(b: &'b XlaBuilder, number: i64, shape: &str) -> XlaOp<'b> {
    b.parameter(number, &shape.parse::<Shape>().unwrap(), "parameter")
}

/// The HLO text of the op `f` makes in a builder named `name`.
fn text<F>(name: &str, f: F) -> String
where
    F: for<'b> FnOnce(&'b XlaBuilder) -> XlaOp<'b>,
{
    let b = XlaBuilder::new(name);
    let root = f(&b);
    b.build(root).unwrap_or_else(|e| panic!("{e}")).to_hlo_text()
}

fn scalar_reducer(name: &str) -> XlaComputation {
    let r = XlaBuilder::new(name);
    let a = r.parameter(0, &shape!(f32[]), "parameter");
    let b = r.parameter(1, &shape!(f32[]), "parameter");
    r.build(add(a, b, &[])).unwrap()
}

// ---- §12: a full module with a reduce, byte for byte ------------------------------------------------

#[test]
fn reduce_module_byte_for_byte() {
    let sum = scalar_reducer("add");
    let b = XlaBuilder::new("u");
    let x = b.parameter(0, &shape!(f32[2, 3]), "x");
    let init = b.parameter(1, &shape!(f32[]), "parameter");
    let computation = b.build(reduce(x, init, &sum, &[1])).unwrap();
    assert_eq!(
        computation.to_hlo_text(),
        "HloModule u.8, entry_computation_layout={(f32[2,3]{1,0}, f32[])->f32[2]{0}}\n\nadd.3 {\n  parameter.4 = \
         f32[] parameter(0)\n  parameter.5 = f32[] parameter(1)\n  ROOT add.6 = f32[] add(parameter.4, \
         parameter.5)\n}\n\nENTRY u.8 {\n  x.1 = f32[2,3]{1,0} parameter(0)\n  parameter.2 = f32[] parameter(1)\n  \
         ROOT reduce.7 = f32[2]{0} reduce(x.1, parameter.2), dimensions={1}, to_apply=add.3\n}\n\n"
    );
}

#[test]
fn a_standalone_reducer_module() {
    assert_eq!(
        scalar_reducer("sum").to_hlo_text(),
        module(
            "sum.4",
            "(f32[], f32[])->f32[]",
            &[
                "parameter.1 = f32[] parameter(0)",
                "parameter.2 = f32[] parameter(1)",
                "ROOT add.3 = f32[] add(parameter.1, parameter.2)"
            ]
        )
    );
}

#[test]
fn a_reducer_used_twice_is_imported_twice() {
    let sum = scalar_reducer("sum");
    let b = XlaBuilder::new("v");
    let x = b.parameter(0, &shape!(f32[2, 3]), "x");
    let zero = b.constant_r0(0.0f32);
    let both = add(reduce(x, zero, &sum, &[1]), reduce(x, zero, &sum, &[1]), &[]);
    assert_eq!(
        b.build(both).unwrap().to_hlo_text(),
        "HloModule v.14, entry_computation_layout={(f32[2,3]{1,0})->f32[2]{0}}\n\n\
         sum.3 {\n  parameter.4 = f32[] parameter(0)\n  parameter.5 = f32[] parameter(1)\n  \
         ROOT add.6 = f32[] add(parameter.4, parameter.5)\n}\n\n\
         sum.8 {\n  parameter.9 = f32[] parameter(0)\n  parameter.10 = f32[] parameter(1)\n  \
         ROOT add.11 = f32[] add(parameter.9, parameter.10)\n}\n\n\
         ENTRY v.14 {\n  x.1 = f32[2,3]{1,0} parameter(0)\n  constant.2 = f32[] constant(0)\n  \
         reduce.7 = f32[2]{0} reduce(x.1, constant.2), dimensions={1}, to_apply=sum.3\n  \
         reduce.12 = f32[2]{0} reduce(x.1, constant.2), dimensions={1}, to_apply=sum.8\n  \
         ROOT add.13 = f32[2]{0} add(reduce.7, reduce.12)\n}\n\n"
    );
}

// ---- §2b: binary-op broadcast lowerings ----------------------------------------------------------------

#[test]
fn scalar_operand_lowering() {
    assert_eq!(
        text("b1", |b| add(p(b, 0, "f32[2,3]{0,1}"), p(b, 1, "f32[]"), &[])),
        module(
            "b1.5",
            "(f32[2,3]{0,1}, f32[])->f32[2,3]{1,0}",
            &[
                "parameter.1 = f32[2,3]{0,1} parameter(0)",
                "parameter.2 = f32[] parameter(1)",
                "broadcast.3 = f32[2,3]{1,0} broadcast(parameter.2), dimensions={}",
                "ROOT add.4 = f32[2,3]{1,0} add(parameter.1, broadcast.3)",
            ]
        )
    );
}

#[test]
fn degenerate_operand_lowering() {
    assert_eq!(
        text("b2", |b| add(p(b, 0, "f32[2,3]{0,1}"), p(b, 1, "f32[1,3]"), &[])),
        module(
            "b2.6",
            "(f32[2,3]{0,1}, f32[1,3]{1,0})->f32[2,3]{1,0}",
            &[
                "parameter.1 = f32[2,3]{0,1} parameter(0)",
                "parameter.2 = f32[1,3]{1,0} parameter(1)",
                "reshape.3 = f32[3]{0} reshape(parameter.2)",
                "broadcast.4 = f32[2,3]{1,0} broadcast(reshape.3), dimensions={1}",
                "ROOT add.5 = f32[2,3]{1,0} add(parameter.1, broadcast.4)",
            ]
        )
    );
}

#[test]
fn in_dim_operand_lowering() {
    assert_eq!(
        text("b3", |b| add(p(b, 0, "f32[2,3]{0,1}"), p(b, 1, "f32[3]"), &[1])),
        module(
            "b3.5",
            "(f32[2,3]{0,1}, f32[3]{0})->f32[2,3]{1,0}",
            &[
                "parameter.1 = f32[2,3]{0,1} parameter(0)",
                "parameter.2 = f32[3]{0} parameter(1)",
                "broadcast.3 = f32[2,3]{1,0} broadcast(parameter.2), dimensions={1}",
                "ROOT add.4 = f32[2,3]{1,0} add(parameter.1, broadcast.3)",
            ]
        )
    );
}

// ---- §6: broadcast_in_dim, §5: broadcast ---------------------------------------------------------------

#[test]
fn broadcast_in_dim_with_degenerate_dimensions() {
    assert_eq!(
        text("d1", |b| broadcast_in_dim(p(b, 0, "f32[1,3,1]"), &[4, 2, 3, 5], &[1, 2, 3])),
        module(
            "d1.5",
            "(f32[1,3,1]{2,1,0})->f32[4,2,3,5]{3,2,1,0}",
            &[
                "parameter.1 = f32[1,3,1]{2,1,0} parameter(0)",
                "broadcast.2 = f32[4,1,3,1]{3,2,1,0} broadcast(parameter.1), dimensions={1,2,3}",
                "reshape.3 = f32[4,3]{1,0} reshape(broadcast.2)",
                "ROOT broadcast.4 = f32[4,2,3,5]{3,2,1,0} broadcast(reshape.3), dimensions={0,2}",
            ]
        )
    );
    assert_eq!(
        text("d2", |b| broadcast_in_dim(p(b, 0, "f32[1,3]"), &[2, 3], &[0, 1])),
        module(
            "d2.5",
            "(f32[1,3]{1,0})->f32[2,3]{1,0}",
            &[
                "parameter.1 = f32[1,3]{1,0} parameter(0)",
                "broadcast.2 = f32[1,3]{1,0} broadcast(parameter.1), dimensions={0,1}",
                "reshape.3 = f32[3]{0} reshape(broadcast.2)",
                "ROOT broadcast.4 = f32[2,3]{1,0} broadcast(reshape.3), dimensions={1}",
            ]
        )
    );
    assert_eq!(
        text("d3", |b| broadcast_in_dim(p(b, 0, "f32[1,1]"), &[2, 3], &[0, 1])),
        module(
            "d3.5",
            "(f32[1,1]{1,0})->f32[2,3]{1,0}",
            &[
                "parameter.1 = f32[1,1]{1,0} parameter(0)",
                "broadcast.2 = f32[1,1]{1,0} broadcast(parameter.1), dimensions={0,1}",
                "reshape.3 = f32[] reshape(broadcast.2)",
                "ROOT broadcast.4 = f32[2,3]{1,0} broadcast(reshape.3), dimensions={}",
            ]
        )
    );
}

#[test]
fn broadcast_in_dim_without_expansion_is_one_broadcast() {
    assert_eq!(
        text("d4", |b| broadcast_in_dim(p(b, 0, "f32[3]"), &[2, 3], &[1])),
        module(
            "d4.3",
            "(f32[3]{0})->f32[2,3]{1,0}",
            &[
                "parameter.1 = f32[3]{0} parameter(0)",
                "ROOT broadcast.2 = f32[2,3]{1,0} broadcast(parameter.1), dimensions={1}"
            ]
        )
    );
    assert_eq!(
        text("d5", |b| broadcast_in_dim(p(b, 0, "f32[]"), &[2, 3], &[])),
        module(
            "d5.3",
            "(f32[])->f32[2,3]{1,0}",
            &[
                "parameter.1 = f32[] parameter(0)",
                "ROOT broadcast.2 = f32[2,3]{1,0} broadcast(parameter.1), dimensions={}"
            ]
        )
    );
    assert!(text("d6", |b| broadcast_in_dim(p(b, 0, "f32[2,3]{0,1}"), &[2, 3], &[0, 1]))
        .contains("ROOT broadcast.2 = f32[2,3]{1,0} broadcast(parameter.1), dimensions={0,1}\n"));
}

#[test]
fn broadcast_prepends() {
    assert!(text("e", |b| broadcast(p(b, 0, "f32[2,3]"), &[4, 5]))
        .contains("ROOT broadcast.2 = f32[4,5,2,3]{3,2,1,0} broadcast(parameter.1), dimensions={2,3}\n"));
    assert!(text("e", |b| broadcast(p(b, 0, "f32[]"), &[4]))
        .contains("ROOT broadcast.2 = f32[4]{0} broadcast(parameter.1), dimensions={}\n"));
    assert!(text("e", |b| broadcast(p(b, 0, "f32[2,3]{0,1}"), &[]))
        .contains("ROOT broadcast.2 = f32[2,3]{1,0} broadcast(parameter.1), dimensions={0,1}\n"));
}

// ---- §7–11: data movement -------------------------------------------------------------------------------

#[test]
fn slice_text() {
    assert_eq!(
        text("s1", |b| slice(p(b, 0, "f32[4,6]"), &[0, 0], &[2, 4], &[1, 2])),
        module(
            "s1.3",
            "(f32[4,6]{1,0})->f32[2,2]{1,0}",
            &[
                "parameter.1 = f32[4,6]{1,0} parameter(0)",
                "ROOT slice.2 = f32[2,2]{1,0} slice(parameter.1), slice={[0:2:1], [0:4:2]}",
            ]
        )
    );
    assert_eq!(
        text("s2", |b| slice(p(b, 0, "f32[4,6]{0,1}"), &[1, 2], &[4, 6], &[1, 1])),
        module(
            "s2.3",
            "(f32[4,6]{0,1})->f32[3,4]{1,0}",
            &[
                "parameter.1 = f32[4,6]{0,1} parameter(0)",
                "ROOT slice.2 = f32[3,4]{1,0} slice(parameter.1), slice={[1:4], [2:6]}"
            ]
        )
    );
    assert!(text("s3", |b| slice(p(b, 0, "f32[]"), &[], &[], &[]))
        .contains("ROOT slice.2 = f32[] slice(parameter.1), slice={}\n"));
}

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
fn pad_text() {
    assert_eq!(
        text("p1", |b| pad(p(b, 0, "f32[2,3]"), p(b, 1, "f32[]"), &config(&[(0, 0, 0), (1, 2, 1)]))),
        module(
            "p1.4",
            "(f32[2,3]{1,0}, f32[])->f32[2,8]{1,0}",
            &[
                "parameter.1 = f32[2,3]{1,0} parameter(0)",
                "parameter.2 = f32[] parameter(1)",
                "ROOT pad.3 = f32[2,8]{1,0} pad(parameter.1, parameter.2), padding=0_0_0x1_2_1",
            ]
        )
    );
    assert!(text("p2", |b| pad(p(b, 0, "f32[2,5]"), p(b, 1, "f32[]"), &config(&[(-1, 0, 0), (-2, -1, 1)])))
        .contains("ROOT pad.3 = f32[1,6]{1,0} pad(parameter.1, parameter.2), padding=-1_0_0x-2_-1_1\n"));
    assert!(text("p3", |b| pad(p(b, 0, "f32[2,5]"), p(b, 1, "f32[]"), &config(&[(0, 0, 0), (0, 0, 0)])))
        .contains("ROOT pad.3 = f32[2,5]{1,0} pad(parameter.1, parameter.2), padding=0_0x0_0\n"));
    assert!(text("p4", |b| pad(p(b, 0, "f32[]"), p(b, 1, "f32[]"), &config(&[])))
        .contains("ROOT pad.3 = f32[] pad(parameter.1, parameter.2), padding=\n"));
}

#[test]
fn transpose_reverse_concatenate_convert_reshape_text() {
    assert_eq!(
        text("t", |b| transpose(p(b, 0, "f32[2,3,4]{1,0,2}"), &[2, 0, 1])),
        module(
            "t.3",
            "(f32[2,3,4]{1,0,2})->f32[4,2,3]{2,1,0}",
            &[
                "parameter.1 = f32[2,3,4]{1,0,2} parameter(0)",
                "ROOT transpose.2 = f32[4,2,3]{2,1,0} transpose(parameter.1), dimensions={2,0,1}",
            ]
        )
    );
    assert_eq!(
        text("r", |b| rev(p(b, 0, "f32[2,3]{0,1}"), &[1, 0])),
        module(
            "r.3",
            "(f32[2,3]{0,1})->f32[2,3]{0,1}",
            &[
                "parameter.1 = f32[2,3]{0,1} parameter(0)",
                "ROOT reverse.2 = f32[2,3]{0,1} reverse(parameter.1), dimensions={1,0}"
            ]
        )
    );
    assert_eq!(
        text("cc", |b| concat_in_dim(b, &[p(b, 0, "f32[2,3]"), p(b, 1, "f32[4,3]")], 0)),
        module(
            "cc.4",
            "(f32[2,3]{1,0}, f32[4,3]{1,0})->f32[6,3]{1,0}",
            &[
                "parameter.1 = f32[2,3]{1,0} parameter(0)",
                "parameter.2 = f32[4,3]{1,0} parameter(1)",
                "ROOT concatenate.3 = f32[6,3]{1,0} concatenate(parameter.1, parameter.2), dimensions={0}",
            ]
        )
    );
    assert_eq!(
        text("cv", |b| convert_element_type(p(b, 0, "f32[2,3]{0,1}"), ElementType::S32)),
        module(
            "cv.3",
            "(f32[2,3]{0,1})->s32[2,3]{0,1}",
            &[
                "parameter.1 = f32[2,3]{0,1} parameter(0)",
                "ROOT convert.2 = s32[2,3]{0,1} convert(parameter.1)"
            ]
        )
    );
    assert!(text("cv", |b| convert_element_type(p(b, 0, "f32[2,3]{0,1}"), ElementType::F32))
        .contains("ROOT convert.2 = f32[2,3]{0,1} convert(parameter.1)\n"));
    assert!(text("rs", |b| reshape(p(b, 0, "f32[2,3]{0,1}"), &[3, 2]))
        .contains("ROOT reshape.2 = f32[3,2]{1,0} reshape(parameter.1)\n"));
}

#[test]
fn iota_text() {
    let b = XlaBuilder::new("i");
    let i = iota(&b, &shape!(f32[2, 3]), 1);
    assert_eq!(
        b.build(i).unwrap().to_hlo_text(),
        module("i.2", "()->f32[2,3]{1,0}", &["ROOT iota.1 = f32[2,3]{1,0} iota(), iota_dimension=1"])
    );
    let b = XlaBuilder::new("i2");
    let i = iota(&b, &shape!(s32[2, 3]{0, 1}), 0);
    assert_eq!(
        b.build(i).unwrap().to_hlo_text(),
        module("i2.2", "()->s32[2,3]{0,1}", &["ROOT iota.1 = s32[2,3]{0,1} iota(), iota_dimension=0"])
    );
}

// ---- §13: dot attributes, §2: compare direction --------------------------------------------------------

fn numbers(lc: &[i64], rc: &[i64], lb: &[i64], rb: &[i64]) -> DotDimensionNumbers {
    DotDimensionNumbers {
        lhs_contracting_dimensions: lc.to_vec(),
        rhs_contracting_dimensions: rc.to_vec(),
        lhs_batch_dimensions: lb.to_vec(),
        rhs_batch_dimensions: rb.to_vec(),
    }
}

#[test]
fn dot_text() {
    assert_eq!(
        text("m1", |b| dot(p(b, 0, "f32[2,3]"), p(b, 1, "f32[3,4]"))),
        module(
            "m1.4",
            "(f32[2,3]{1,0}, f32[3,4]{1,0})->f32[2,4]{1,0}",
            &[
                "parameter.1 = f32[2,3]{1,0} parameter(0)",
                "parameter.2 = f32[3,4]{1,0} parameter(1)",
                "ROOT dot.3 = f32[2,4]{1,0} dot(parameter.1, parameter.2), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
            ]
        )
    );
    assert!(text("m2", |b| dot_general(
        p(b, 0, "f32[2,5,3]"),
        p(b, 1, "f32[3,4,5]"),
        &numbers(&[2], &[0], &[1], &[2])
    ))
    .contains(
        "ROOT dot.3 = f32[5,2,4]{2,1,0} dot(parameter.1, parameter.2), lhs_batch_dims={1}, \
             lhs_contracting_dims={2}, rhs_batch_dims={2}, rhs_contracting_dims={0}\n"
    ));
    assert!(text("m3", |b| dot_general(
        p(b, 0, "f32[2]"),
        p(b, 1, "f32[3,4]"),
        &numbers(&[], &[], &[], &[])
    ))
    .contains(
        "ROOT dot.3 = f32[2,3,4]{2,1,0} dot(parameter.1, parameter.2), lhs_contracting_dims={}, \
             rhs_contracting_dims={}\n"
    ));
    assert!(text("m4", |b| dot(p(b, 0, "f32[3]"), p(b, 1, "f32[3]")))
        .contains("ROOT dot.3 = f32[] dot(parameter.1, parameter.2), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"));
}

#[test]
fn compare_text() {
    type Compare = for<'b, 'd> fn(XlaOp<'b>, XlaOp<'b>, &'d [i64]) -> XlaOp<'b>;
    let compares: [(Compare, &str); 6] =
        [(eq, "EQ"), (ne, "NE"), (ge, "GE"), (gt, "GT"), (le, "LE"), (lt, "LT")];
    for (f, direction) in compares {
        for t in ["s32", "f32", "u8", "pred", "bf16"] {
            let hlo =
                text("c", |b| f(p(b, 0, &format!("{t}[2,3]{{0,1}}")), p(b, 1, &format!("{t}[2,3]")), &[]));
            assert_eq!(
                hlo,
                module(
                    "c.4",
                    &format!("({t}[2,3]{{0,1}}, {t}[2,3]{{1,0}})->pred[2,3]{{0,1}}"),
                    &[
                        &format!("parameter.1 = {t}[2,3]{{0,1}} parameter(0)"),
                        &format!("parameter.2 = {t}[2,3]{{1,0}} parameter(1)"),
                        &format!("ROOT compare.3 = pred[2,3]{{0,1}} compare(parameter.1, parameter.2), direction={direction}"),
                    ]
                )
            );
        }
    }
    assert_eq!(
        text("cb", |b| lt(p(b, 0, "f32[2,3]{0,1}"), p(b, 1, "f32[3]"), &[1])),
        module(
            "cb.5",
            "(f32[2,3]{0,1}, f32[3]{0})->pred[2,3]{1,0}",
            &[
                "parameter.1 = f32[2,3]{0,1} parameter(0)",
                "parameter.2 = f32[3]{0} parameter(1)",
                "broadcast.3 = f32[2,3]{1,0} broadcast(parameter.2), dimensions={1}",
                "ROOT compare.4 = pred[2,3]{1,0} compare(parameter.1, broadcast.3), direction=LT",
            ]
        )
    );
}

// ---- §14: constants ------------------------------------------------------------------------------------

#[test]
fn constants_text() {
    let b = XlaBuilder::new("k");
    b.constant_r0(1.0f32);
    b.constant_r1(&[1.0f32, 2.5, -3.0]);
    b.constant_literal(
        &Literal::from_vec(&shape!(f32[2, 3]), vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap(),
    );
    b.constant_literal(&Literal::from_vec(&shape!(s32[2, 2, 2]), (0..8).collect::<Vec<i32>>()).unwrap());
    b.constant_r1(&[true, false]);
    b.constant_r0(true);
    b.constant_r1(&[0.1f32, 1e10, f32::INFINITY, f32::NEG_INFINITY, 1.0 / 3.0, 1e-5]);
    b.constant_literal(&Literal::from_vec(&shape!(pred[2, 2]), vec![true, false, false, true]).unwrap());
    b.constant_literal(&Literal::from_vec(&shape!(f32[1, 1]), vec![1.0f32]).unwrap());
    b.constant_r0(-7i32);
    let last = b.constant_r1(&[0.1f64, 1.0 / 3.0]);
    assert_eq!(
        b.build(last).unwrap().to_hlo_text(),
        module(
            "k.12",
            "()->f64[2]{0}",
            &[
                "constant.1 = f32[] constant(1)",
                "constant.2 = f32[3]{0} constant({1, 2.5, -3})",
                "constant.3 = f32[2,3]{1,0} constant({ { 1, 2, 3 }, { 4, 5, 6 } })",
                "constant.4 = s32[2,2,2]{2,1,0} constant({ { { 0, 1 }, { 2, 3 } }, { { 4, 5 }, { 6, 7 } } })",
                "constant.5 = pred[2]{0} constant({1, 0})",
                "constant.6 = pred[] constant(true)",
                "constant.7 = f32[6]{0} constant({0.1, 1e+10, inf, -inf, 0.333333343, 1e-05})",
                "constant.8 = pred[2,2]{1,0} constant({ { 1, 0 }, { 0, 1 } })",
                "constant.9 = f32[1,1]{1,0} constant({ {1} })",
                "constant.10 = s32[] constant(-7)",
                "ROOT constant.11 = f64[2]{0} constant({0.1, 0.33333333333333331})",
            ]
        )
    );
}

#[test]
fn more_constant_scalars() {
    for (literal, expected) in [
        (Literal::scalar(false), "pred[] constant(false)"),
        (Literal::scalar(255u8), "u8[] constant(255)"),
        (Literal::scalar(i64::MIN), "s64[] constant(-9223372036854775808)"),
        (Literal::scalar(f32::NAN), "f32[] constant(nan)"),
        (Literal::scalar(-0.0f32), "f32[] constant(-0)"),
        (Literal::scalar(1e6f32), "f32[] constant(1e+06)"),
        (Literal::scalar(123456789f32), "f32[] constant(123456792)"),
        (Literal::scalar(1e-4f32), "f32[] constant(0.0001)"),
        (Literal::scalar(1e100f64), "f64[] constant(1e+100)"),
        (Literal::scalar(half::bf16::from_f32(0.1)), "bf16[] constant(0.1001)"),
        (Literal::scalar(half::f16::from_f32(0.1)), "f16[] constant(0.099976)"),
        (Literal::vec1::<f32>(&[]), "f32[0]{0} constant({})"),
    ] {
        let b = XlaBuilder::new("k");
        let c = b.constant_literal(&literal);
        let hlo = b.build(c).unwrap().to_hlo_text();
        assert!(hlo.contains(&format!("  ROOT constant.1 = {expected}\n")), "{hlo}");
    }
}

// ---- §3: select / clamp with scalar broadcast ------------------------------------------------------------

#[test]
fn select_with_a_scalar_pred() {
    assert_eq!(
        text("sel", |b| select(p(b, 0, "pred[]"), p(b, 1, "f32[2,3]{0,1}"), p(b, 2, "f32[2,3]"))),
        module(
            "sel.6",
            "(pred[], f32[2,3]{0,1}, f32[2,3]{1,0})->f32[2,3]{0,1}",
            &[
                "parameter.1 = pred[] parameter(0)",
                "broadcast.4 = pred[2,3]{0,1} broadcast(parameter.1), dimensions={}",
                "parameter.2 = f32[2,3]{0,1} parameter(1)",
                "parameter.3 = f32[2,3]{1,0} parameter(2)",
                "ROOT select.5 = f32[2,3]{0,1} select(broadcast.4, parameter.2, parameter.3)",
            ]
        )
    );
}

#[test]
fn clamp_with_scalar_bounds() {
    assert_eq!(
        text("cl", |b| clamp(p(b, 0, "f32[]"), p(b, 1, "f32[2,3]{0,1}"), p(b, 2, "f32[]"))),
        module(
            "cl.7",
            "(f32[], f32[2,3]{0,1}, f32[])->f32[2,3]{0,1}",
            &[
                "parameter.1 = f32[] parameter(0)",
                "broadcast.4 = f32[2,3]{0,1} broadcast(parameter.1), dimensions={}",
                "parameter.2 = f32[2,3]{0,1} parameter(1)",
                "parameter.3 = f32[] parameter(2)",
                "broadcast.5 = f32[2,3]{0,1} broadcast(parameter.3), dimensions={}",
                "ROOT clamp.6 = f32[2,3]{0,1} clamp(broadcast.4, parameter.2, broadcast.5)",
            ]
        )
    );
}

// ---- §15: instruction post order and names ---------------------------------------------------------------

#[test]
fn post_order_of_the_notes_example() {
    let b = XlaBuilder::new("po");
    let p0 = p(&b, 0, "f32[2]");
    let p1 = p(&b, 1, "f32[2]");
    let n1 = neg(p1);
    let n0 = neg(p0);
    assert_eq!(
        b.build(add(n1, n0, &[])).unwrap().to_hlo_text(),
        module(
            "po.6",
            "(f32[2]{0}, f32[2]{0})->f32[2]{0}",
            &[
                "parameter.2 = f32[2]{0} parameter(1)",
                "negate.3 = f32[2]{0} negate(parameter.2)",
                "parameter.1 = f32[2]{0} parameter(0)",
                "negate.4 = f32[2]{0} negate(parameter.1)",
                "ROOT add.5 = f32[2]{0} add(negate.3, negate.4)",
            ]
        )
    );
}

#[test]
fn dead_instructions_print_in_post_order_too() {
    // Creation order p0, exp(p0) (dead), p1, neg(p1), p2 (unused), add(neg, p0).
    let b = XlaBuilder::new("dd");
    let p0 = p(&b, 0, "f32[2]");
    let _dead = exp(p0);
    let p1 = p(&b, 1, "f32[2]");
    let n = neg(p1);
    let _unused = p(&b, 2, "f32[2]");
    assert_eq!(
        b.build(add(n, p0, &[])).unwrap().to_hlo_text(),
        module(
            "dd.7",
            "(f32[2]{0}, f32[2]{0}, f32[2]{0})->f32[2]{0}",
            &[
                "parameter.1 = f32[2]{0} parameter(0)",
                "exponential.2 = f32[2]{0} exponential(parameter.1)",
                "parameter.5 = f32[2]{0} parameter(2)",
                "parameter.3 = f32[2]{0} parameter(1)",
                "negate.4 = f32[2]{0} negate(parameter.3)",
                "ROOT add.6 = f32[2]{0} add(negate.4, parameter.1)",
            ]
        )
    );
    // A parameter made after the root prints after the ROOT line.
    let b = XlaBuilder::new("lt");
    let p0 = p(&b, 0, "f32[2]");
    let root = neg(p0);
    let _late = p(&b, 1, "f32[2]");
    assert_eq!(
        b.build(root).unwrap().to_hlo_text(),
        module(
            "lt.4",
            "(f32[2]{0}, f32[2]{0})->f32[2]{0}",
            &[
                "parameter.1 = f32[2]{0} parameter(0)",
                "ROOT negate.2 = f32[2]{0} negate(parameter.1)",
                "parameter.3 = f32[2]{0} parameter(1)"
            ]
        )
    );
}

#[test]
fn shared_operands_print_once() {
    let b = XlaBuilder::new("sh");
    let x = p(&b, 0, "f32[2,3]");
    let e = exp(x);
    let t = tanh(x);
    assert_eq!(
        b.build(add(e * t, e, &[])).unwrap().to_hlo_text(),
        module(
            "sh.6",
            "(f32[2,3]{1,0})->f32[2,3]{1,0}",
            &[
                "parameter.1 = f32[2,3]{1,0} parameter(0)",
                "exponential.2 = f32[2,3]{1,0} exponential(parameter.1)",
                "tanh.3 = f32[2,3]{1,0} tanh(parameter.1)",
                "multiply.4 = f32[2,3]{1,0} multiply(exponential.2, tanh.3)",
                "ROOT add.5 = f32[2,3]{1,0} add(multiply.4, exponential.2)",
            ]
        )
    );
}

#[test]
fn named_parameters_and_entry_layout_by_parameter_number() {
    let b = XlaBuilder::new("named");
    let w = b.parameter(1, &shape!(f32[3]{0}), "weights");
    let s = b.parameter(0, &shape!(s32[]), "x");
    let again = b.parameter(2, &shape!(f32[3]), "x");
    let root = add(w, again, &[]);
    let _ = s;
    assert_eq!(
        b.build(root).unwrap().to_hlo_text(),
        module(
            "named.5",
            "(s32[], f32[3]{0}, f32[3]{0})->f32[3]{0}",
            &[
                "x.2 = s32[] parameter(0)",
                "weights.1 = f32[3]{0} parameter(1)",
                "x.3 = f32[3]{0} parameter(2)",
                "ROOT add.4 = f32[3]{0} add(weights.1, x.3)",
            ]
        )
    );
}
