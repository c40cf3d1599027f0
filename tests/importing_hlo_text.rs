//! HLO text in (`XlaComputation::from_hlo_text`): every module `to_hlo_text()` prints imports
//! back to a computation that prints the same text and computes the same values (the fuzzer's
//! random graphs and hand-built ones over every op); what jax and XLA's dumps add is read and
//! ignored; malformed modules are errors naming `line:column`, never panics.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use common::computations::{scalar_computation, sum};
use common::generate::generate;
use common::golden::{bits, leaves};
use common::recipe::build;
use lazy_xla::*;
use proptest::collection::vec;
use proptest::prelude::*;

/// Imports `computation`'s text, checks that the import prints the same text and imports again
/// to an equal computation, and returns it.
fn round_trip(computation: &XlaComputation) -> XlaComputation {
    let text = computation.to_hlo_text();
    let imported = XlaComputation::from_hlo_text(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(imported.to_hlo_text(), text);
    // Compared through `Debug`, which NaN constants (never `==`) pass too.
    let again = XlaComputation::from_hlo_text(&imported.to_hlo_text()).unwrap();
    assert_eq!(format!("{again:?}"), format!("{imported:?}"));
    imported
}

/// The bits of every array in `literal` (a tuple's leaves in order).
fn all_bits(literal: &Literal) -> Vec<Vec<u64>> {
    leaves(literal).into_iter().map(bits).collect()
}

/// Runs both computations fused and unfused; every result must have the same bits.
fn same_values(original: &XlaComputation, imported: &XlaComputation, arguments: &[&Literal]) -> Literal {
    let mut results = Vec::new();
    for options in [CompileOptions::default(), CompileOptions::unfused()] {
        for computation in [original, imported] {
            results.push(computation.compile(&options).unwrap().execute(arguments).unwrap());
        }
    }
    assert_eq!(all_bits(&results[0]), all_bits(&results[1]), "fused: the import computes other values");
    assert_eq!(all_bits(&results[2]), all_bits(&results[3]), "unfused: the import computes other values");
    results.swap_remove(0)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, failure_persistence: None, ..ProptestConfig::default() })]

    /// The differential fuzzer's random graphs (13 types, layouts, broadcasts, movement ops,
    /// reduces, dots) print and import back, computing the same values.
    #[test]
    fn fuzzer_graphs_import_back(structure in vec(any::<u32>(), 0..300), values in vec(any::<u32>(), 0..48)) {
        let recipe = generate(&structure, &values);
        let built = build(&recipe).unwrap();
        let imported = round_trip(&built.computation);
        let arguments = recipe.arguments();
        let arguments: Vec<&Literal> = arguments.iter().collect();
        let options = CompileOptions::unfused();
        let want = built.computation.compile(&options).unwrap().execute(&arguments).unwrap();
        let got = imported.compile(&options).unwrap().execute(&arguments).unwrap();
        prop_assert_eq!(all_bits(&want), all_bits(&got));
    }
}

#[test]
fn constants_of_every_element_type_import_back() -> Result<()> {
    let b = XlaBuilder::new("constants");
    let f = [0.1, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN, 1e-40, 65504.0];
    let elements = vec![
        b.constant_r1(&[true, false]),
        b.constant_r1(&[i8::MIN, i8::MAX]),
        b.constant_r1(&[i16::MIN, -1]),
        b.constant_r1(&[i32::MIN, 7]),
        b.constant_r1(&[i64::MIN, i64::MAX]),
        b.constant_r1(&[u8::MAX, 0]),
        b.constant_r1(&[u16::MAX, 1]),
        b.constant_r1(&[u32::MAX, 2]),
        b.constant_r1(&[u64::MAX, 3]),
        b.constant_r1(&f.map(half::f16::from_f64)),
        b.constant_r1(&f.map(half::bf16::from_f64)),
        b.constant_r1(&f.map(|v| v as f32)),
        b.constant_r1(&f),
        b.constant_literal(&Literal::from_vec(&shape!(s32[2, 1, 2, 3]), (0..12).collect())?),
        b.constant_literal(&Literal::from_vec(
            &shape!(f32[2, 3]{0, 1}),
            vec![1.5f32, 2.0, 3.0, 4.0, 5.0, 6.0],
        )?),
        b.constant_literal(&Literal::from_vec(&shape!(pred[2, 2]), vec![true, false, false, true])?),
        b.constant_literal(&Literal::from_vec::<f32>(&shape!(f32[0, 3]), vec![])?),
        b.constant_r0(true),
        b.constant_r0(1.0f64 / 3.0),
    ];
    let computation = b.build(tuple(&b, &elements))?;
    let imported = round_trip(&computation);
    same_values(&computation, &imported, &[]);
    Ok(())
}

/// `(i, v)`: `v = round_nearest_even(v * 1.5)`, `i += 1`, while `i < 3`.
fn counted_loop() -> Result<XlaComputation> {
    let state = Shape::tuple(&[shape!(s32[]), shape!(f32[4])]);
    let c = XlaBuilder::new("cond");
    let t = c.parameter(0, &state, "t");
    let condition = c.build(lt(get_tuple_element(t, 0), c.constant_r0(3i32), &[]))?;
    let d = XlaBuilder::new("body");
    let t = d.parameter(0, &state, "t");
    let (i, v) = (get_tuple_element(t, 0), get_tuple_element(t, 1));
    let body =
        d.build(tuple(&d, &[i + d.constant_r0(1i32), round_nearest_even(v * d.constant_r0(1.5f32))]))?;
    let b = XlaBuilder::new("counted");
    let x = b.parameter(0, &shape!(f32[4]), "x");
    b.build(while_loop(&condition, &body, tuple(&b, &[b.constant_r0(0i32), x])))
}

#[test]
fn control_flow_and_called_computations_import_back() -> Result<()> {
    let x = Literal::vec1(&[0.5f32, 1.5, -2.5, 3.25]);
    let computation = counted_loop()?;
    let imported = round_trip(&computation);
    let out = same_values(&computation, &imported, &[&x]);
    // Three trips of v = round_nearest_even(1.5 v): 0.5 → 1 (0.75) → 2 (1.5, to even) → 3;
    // 1.5 → 2 → 3 → 4 (4.5); -2.5 → -4 → -6 → -9; 3.25 → 5 → 8 (7.5) → 12.
    assert_eq!(out.tuple_element(1)?.to_vec::<f32>()?, [3.0, 4.0, -9.0, 12.0]);

    let negate = {
        let n = XlaBuilder::new("negate");
        let v = n.parameter(0, &shape!(f32[4]), "v");
        n.build(-v)?
    };
    let twice = {
        let t = XlaBuilder::new("twice");
        let v = t.parameter(0, &shape!(f32[4]), "v");
        t.build(v + v)?
    };
    let maximum = scalar_computation("max", ElementType::F32, |_, a, b| max(a, b, &[]));
    let less = scalar_computation("less", ElementType::F32, |_, a, b| lt(a, b, &[]));
    let b = XlaBuilder::new("control");
    let p = b.parameter(0, &shape!(f32[4]), "p");
    let flag = b.parameter(1, &shape!(pred[]), "flag");
    let index = b.parameter(2, &shape!(s32[]), "index");
    let picked = conditional(flag, p, &negate, p, &twice);
    let indexed = conditional_indexed(index, &[&negate, &twice, &negate], &[p, p, p]);
    let mapped = map(&b, &[p, picked], &maximum, &[0]);
    let called = call(&b, &twice, &[indexed]);
    let sorted = sort(&[p], &less, 0, true);
    let top = top_k(p, 2, true);
    let state = b.constant_r1(&[1u64, 2]);
    let random = rng_bit_generator(RandomAlgorithm::ThreeFry, state, &shape!(u32[2, 2]));
    let bits_of = bitcast_convert_type(p, ElementType::S32);
    let reduced = reduce(p, b.constant_r0(0.0f32), &sum(ElementType::F32), &[0]);
    let root = tuple(&b, &[picked, indexed, mapped, called, sorted, top, random, bits_of, reduced]);
    let computation = b.build(root)?;
    let imported = round_trip(&computation);
    for (flag, index) in [(true, 0), (false, 1), (true, 7)] {
        same_values(&computation, &imported, &[&x, &Literal::scalar(flag), &Literal::scalar(index)]);
    }
    Ok(())
}

#[test]
fn data_movement_and_dots_import_back() -> Result<()> {
    let b = XlaBuilder::new("movement");
    let x = b.parameter(0, &shape!(f32[2, 3]{0, 1}), "x");
    let y = b.parameter(1, &shape!(f32[2, 3, 4]), "y");
    let padded = pad(x, b.constant_r0(-1.0f32), &PaddingConfig::new(&[(1, -1, 1), (0, 2, 0)]));
    let sliced = slice(y, &[0, 1, 0], &[2, 3, 4], &[1, 1, 3]);
    let turned = transpose(rev(y, &[0, 2]), &[2, 0, 1]);
    let joined = concat_in_dim(&b, &[x, x], 1);
    let batched = dot_general(y, y, &DotDimensionNumbers::new(&[2], &[2], &[0], &[0]));
    let counted = iota(&b, &shape!(s32[2, 3]{0, 1}), 1);
    let clamped = clamp(b.constant_r0(0.0f32), reshape(x, &[3, 2]), b.constant_r0(2.0f32));
    let chosen =
        select(gt(x, b.constant_r0(1.0f32), &[]), x, convert_element_type(counted, ElementType::F32));
    let broadcasted = add(y, b.constant_r1(&[1.0f32, 2.0, 3.0, 4.0]), &[2]);
    let root = tuple(&b, &[padded, sliced, turned, joined, batched, counted, clamped, chosen, broadcasted]);
    let computation = b.build(root).unwrap_or_else(|e| panic!("{e}"));
    let imported = round_trip(&computation);
    let xs = Literal::from_vec(&shape!(f32[2, 3]), vec![0.5f32, 1.5, 2.5, -1.0, 3.0, 1.0])?;
    let ys = Literal::from_vec(&shape!(f32[2, 3, 4]), (0..24).map(|v| v as f32 * 0.25).collect())?;
    same_values(&computation, &imported, &[&xs, &ys]);
    Ok(())
}

/// A module as jax and XLA's dumps print it: module attributes, `%` names, signatures,
/// metadata, sharding, frontend attributes, backend configs, `/*index=N*/` comments, operands
/// with shapes, parameters and instructions out of order, a fusion, copy, bitcast,
/// opt-barrier.
const DUMP: &str = r#"HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[2,3]{1,0}, f32[3]{0})->(f32[3,2]{1,0}, f32[2,3]{0,1}, f32[6]{0}, f32[], f32[], /*index=5*/f32[])}, allow_spmd_sharding_propagation_to_parameters={true}, allow_spmd_sharding_propagation_to_output={true}, input_output_alias={ {0}: (0, {}, may-alias) }, frontend_attributes={fingerprint_before_lhs="abc"}

%fused_computation (param_0.1: f32[2,3], param_1.2: f32[3]) -> f32[2,3] {
  %param_0.1 = f32[2,3]{1,0} parameter(0)
  %param_1.2 = f32[3]{0} parameter(1)
  %broadcast.3 = f32[2,3]{1,0} broadcast(f32[3]{0} %param_1.2), dimensions={1}, metadata={op_name="jit(f)/add" source_file="/tmp/f.py" source_line=4}
  ROOT %add.4 = f32[2,3]{1,0} add(f32[2,3]{1,0} %param_0.1, f32[2,3]{1,0} %broadcast.3), metadata={op_name="jit(f)/add"}
}

%region_0.5 (Arg_0.6: f32[], Arg_1.7: f32[]) -> f32[] {
  %Arg_1.7 = f32[] parameter(1)
  %Arg_0.6 = f32[] parameter(0)
  ROOT %add.8 = f32[] add(f32[] %Arg_0.6, f32[] %Arg_1.7)
}, execution_thread="main"

ENTRY %main.20 (Arg_0.1: f32[2,3], Arg_1.2: f32[3]) -> (f32[3,2], f32[2,3], f32[6], f32[], f32[], /*index=5*/f32[]) {
  %fusion.9 = f32[2,3]{1,0} fusion(f32[2,3]{1,0} %Arg_0.1, f32[3]{0} %Arg_1.2), kind=kLoop, calls=%fused_computation, backend_config={"outer_dimension_partitions":["2"]}
  %Arg_1.2 = f32[3]{0} parameter(1), sharding={replicated}, metadata={op_name="w"}
  %Arg_0.1 = f32[2,3]{1,0} parameter(0), sharding={replicated}, origin={{"x"}}
  %bitcast.10 = f32[3,2]{0,1} bitcast(f32[2,3]{1,0} %fusion.9)
  %copy.11 = f32[3,2]{1,0} copy(f32[3,2]{0,1} %bitcast.10)
  %copy.12 = f32[2,3]{0,1} copy(f32[2,3]{1,0} %fusion.9)
  %bitcast.13 = f32[6]{0} bitcast(f32[2,3]{1,0} %fusion.9)
  %constant.14 = f32[] constant(0)
  %reduce.15 = f32[] reduce(f32[2,3]{1,0} %fusion.9, f32[] %constant.14), dimensions={0,1}, to_apply=%region_0.5
  %tuple.16 = (f32[], f32[]) tuple(%reduce.15, %constant.14)
  %opt-barrier.17 = (f32[], f32[]) opt-barrier((f32[], f32[]) %tuple.16)
  %get-tuple-element.18 = f32[] get-tuple-element((f32[], f32[]) %opt-barrier.17), index=0
  %round-nearest-even.19 = f32[] round-nearest-even(f32[] %get-tuple-element.18), frontend_attributes={_xla_compute_type="host"}, statistics_viz={stat_index_to_visualize=0}
  ROOT %tuple.20 = (f32[3,2]{1,0}, f32[2,3]{0,1}, f32[6]{0}, f32[], f32[], /*index=5*/f32[]) tuple(%copy.11, %copy.12, %bitcast.13, %reduce.15, %get-tuple-element.18, /*index=5*/%round-nearest-even.19)
}
"#;

#[test]
fn what_jax_and_xla_dumps_add_is_read_and_ignored() -> Result<()> {
    let computation = XlaComputation::from_hlo_text(DUMP)?;
    assert_eq!(computation.name(), "main.20");
    let signature = computation.program_shape();
    assert_eq!(signature.parameters[0], ("Arg_0".to_string(), shape!(f32[2, 3])));
    assert_eq!(signature.parameters[1], ("Arg_1".to_string(), shape!(f32[3])));
    let x = Literal::from_vec(&shape!(f32[2, 3]), vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    let w = Literal::vec1(&[0.25f32, 0.0, -0.5]);
    // fusion.9 = x + w = [[1.25, 2, 2.5], [4.25, 5, 5.5]]; in memory 1.25 2 2.5 4.25 5 5.5.
    for options in [CompileOptions::default(), CompileOptions::unfused()] {
        let out = computation.compile(&options)?.execute(&[&x, &w])?.decompose_tuple()?;
        // The bitcast reads that memory as f32[3,2]{0,1}: column j of the result is memory
        // elements 3j..3j+3.
        assert_eq!(out[0].shape(), &shape!(f32[3, 2]));
        assert_eq!(out[0].to_vec::<f32>()?, [1.25, 4.25, 2.0, 5.0, 2.5, 5.5]);
        assert_eq!(out[1].shape(), &shape!(f32[2, 3]{0, 1}));
        assert_eq!(out[1].to_vec::<f32>()?, [1.25, 2.0, 2.5, 4.25, 5.0, 5.5]);
        assert_eq!(out[2].to_vec::<f32>()?, [1.25, 2.0, 2.5, 4.25, 5.0, 5.5]);
        assert_eq!(out[3].to_vec::<f32>()?, [20.5]);
        assert_eq!(out[4].to_vec::<f32>()?, [20.5]);
        assert_eq!(out[5].to_vec::<f32>()?, [20.0]); // 20.5 rounds to even
    }
    Ok(())
}

/// The error for `text`, as a string (panics if it imports).
fn error(text: &str) -> String {
    match XlaComputation::from_hlo_text(text) {
        Ok(_) => panic!("imported:\n{text}"),
        Err(error) => error.to_string(),
    }
}

/// A module whose entry computation has `lines` (after `x = f32[2]{0} parameter(0)` and
/// `y = f32[2]{0} parameter(1)`, which are lines 4 and 5).
fn module(lines: &str) -> String {
    format!("HloModule m\n\nENTRY main {{\n  x = f32[2]{{0}} parameter(0)\n  y = f32[2]{{0}} parameter(1)\n{lines}\n}}\n")
}

#[test]
fn errors_name_the_line_column_and_token() {
    let cases: &[(&str, &str)] = &[
        ("  ROOT z = f32[2]{0} no-such-op(x)", "unknown opcode: no-such-op at 6:22 (`no-such-op`)"),
        (
            "  ROOT z = f32[2]{0} cholesky(x)",
            "lazy-xla does not implement opcode cholesky at 6:22 (`cholesky`)",
        ),
        (
            "  ROOT z = f32[2]{0} fft(x)",
            "complex numbers and fft are out of scope for lazy-xla: opcode fft at 6:22",
        ),
        ("  ROOT z = c64[2]{0} add(x, y)", "complex numbers are out of scope for lazy-xla at 6:12 (`c64`)"),
        (
            "  ROOT z = f32[3]{0} add(x, y)",
            "Expected instruction to have shape equal to f32[2], actual shape is f32[3] at 6:8 (`z`)",
        ),
        (
            "  a = f32[3]{0} constant({1, 2, 3})\n  ROOT z = f32[2]{0} add(x, a)",
            "Binary op with incompatible shapes: f32[2] and f32[3]. at 7:8 (`z`)",
        ),
        ("  ROOT z = f32[2]{0} add(x, w)", "instruction w is not defined in computation main at 6:29 (`w`)"),
        (
            "  ROOT z = f32[2]{0} add(x, y)\n  z = f32[2]{0} add(x, y)",
            "instruction z is defined twice at 7:3 (`z`)",
        ),
        (
            "  a = f32[2]{0} add(x, b)\n  ROOT b = f32[2]{0} add(x, a)",
            "instruction a depends on itself at 6:3 (`a`)",
        ),
        ("  ROOT c = f32[100]{0} constant({...})", "the constant's values are elided (`{...}`)"),
        ("  ROOT c = s8[] constant(300)", "expected a value of type s8 at 6:26 (`300`)"),
        (
            "  ROOT z = f32[2]{0} add(x, y), frobnicate=3",
            "lazy-xla does not understand attribute frobnicate of add at 6:33",
        ),
        ("  ROOT z = f32[2]{0} pad(x, y), padding=1_x", "expected a padding such as 0_1x2_3_1"),
        (
            "  ROOT z = f32[] reduce(x, y), dimensions={0}, to_apply=nowhere",
            "computation nowhere is not defined in the module",
        ),
        (
            "  ROOT z = f32[2]{0} broadcast(x)",
            "attribute dimensions is required for broadcast at 6:22 (`broadcast`)",
        ),
        (
            "  w = f32[2]{0} parameter(3)\n  ROOT z = f32[2]{0} add(x, y)",
            "parameter number 2 is missing from computation main",
        ),
        ("  ROOT z = f32[2]{0} add(x y)", "expected `,` or `)` after an operand at 6:28 (`y`)"),
    ];
    for (lines, expected) in cases {
        let got = error(&module(lines));
        assert!(got.starts_with(expected), "{lines}\n  gave: {got}\n  want: {expected}");
    }
    assert_eq!(error(""), "expected `HloModule` at the start of the module at 1:1 (`end of input`)");
    assert_eq!(error("HloModule m"), "the module has no computations at 1:12 (`end of input`)");
    assert!(error("HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(0)\n")
        .starts_with("computation e is not closed"));
    assert!(error("HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(0)\n}\nENTRY f {\n  ROOT x = f32[] parameter(0)\n}")
        .starts_with("the module has a second ENTRY computation at 5:7"));
}

/// Modules the HLO mutation fuzzer (`hlo_mutation_fuzz.rs`) found panicking the importer or
/// the planner, minimized: each an `Err` now, or a plan whose byte counts saturate.
#[test]
fn malformed_modules_found_by_mutation_are_errors() {
    let cases: &[(&str, &str)] = &[
        (
            "  ROOT d = f32[2]{0} dynamic-update-slice(x)",
            "dynamic-update-slice takes at least two operands but has 1",
        ),
        (
            "  ROOT d = (f32[2,2]{1,0}) dot(x, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
            "dot makes an array, not (f32[2,2])",
        ),
        (
            "  s = f32[] parameter(2)\n  ROOT b = (f32[2]{0}) broadcast(s), dimensions={}",
            "broadcast makes an array, not (f32[2])",
        ),
        (
            "  t = (f32[2]{0}) tuple(x)\n  ROOT c = pred[2]{0} compare(t, y), direction=LT, type=TOTALORDER",
            "Expected array argument for operand of compare, but got (f32[2]).",
        ),
    ];
    for (lines, expected) in cases {
        let got = error(&module(lines));
        assert!(got.starts_with(expected), "{lines}\n  gave: {got}\n  want: {expected}");
    }
    // XLA's builder lets a reduce's init differ in float precision from its reducer; its
    // verifier refuses the module.
    let mixed = "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\
                 ENTRY e {\n  x = f32[4]{0} parameter(0)\n  z = bf16[] constant(0)\n  \
                 ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add\n}\n";
    assert!(
        error(mixed).starts_with("Seen floating point types of different precisions in reduce"),
        "{}",
        error(mixed)
    );
    // Huge but valid: the plan's byte counts saturate rather than overflow.
    let huge = "HloModule m\nENTRY e {\n  p = f32[2147483648,2147483648]{1,0} parameter(0)\n  ROOT n = f32[2147483648,2147483648]{1,0} negate(p)\n}\n";
    let stats = XlaComputation::from_hlo_text(huge)
        .unwrap()
        .compile(&CompileOptions::unfused())
        .unwrap()
        .memory_stats();
    assert_eq!((stats.argument_bytes, stats.peak_bytes), (u64::MAX, u64::MAX));
}

/// Module texts to mutate: a jax-like dump, what the builder prints for control flow, and
/// jax's own modules (an optimized dump among them).
fn corpus() -> Vec<String> {
    vec![
        DUMP.to_string(),
        counted_loop().unwrap().to_hlo_text(),
        module("  ROOT z = f32[2]{0} add(x, y)"),
        include_str!("data/jax/mlp_optimized.hlo").to_string(),
        include_str!("data/jax/statistics.hlo").to_string(),
        include_str!("../examples/hlo/attention.hlo").to_string(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    /// Cut, flipped, dropped, duplicated and swapped lines and bytes: an `Ok` or an `Err`,
    /// never a panic.
    #[test]
    fn malformed_modules_are_errors_not_panics(which in 0usize..6, kind in 0u8..5, a in any::<usize>(), b in any::<usize>(), byte in 32u8..127) {
        let text = &corpus()[which];
        let mut lines: Vec<&str> = text.lines().collect();
        let mutated = match kind {
            0 => {
                let cut = (a % text.len()..).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len());
                text[..cut].to_string()
            }
            1 => {
                let mut bytes = text.clone().into_bytes();
                let at = a % bytes.len();
                if bytes[at].is_ascii() {
                    bytes[at] = byte;
                }
                String::from_utf8(bytes).unwrap()
            }
            2 => {
                lines.remove(a % lines.len());
                lines.join("\n")
            }
            3 => {
                let line = lines[a % lines.len()];
                lines.insert(b % lines.len(), line);
                lines.join("\n")
            }
            _ => {
                let len = lines.len();
                lines.swap(a % len, b % len);
                lines.join("\n")
            }
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| XlaComputation::from_hlo_text(&mutated).map(|c| c.to_hlo_text())));
        prop_assert!(outcome.is_ok(), "panicked on:\n{}", mutated);
    }
}

/// A chain of `count` element-wise instructions over two parameters, as HLO text.
fn long_module(count: usize) -> String {
    let mut text = String::from(
        "HloModule long\n\nENTRY main {\n  p0 = f32[16]{0} parameter(0)\n  p1 = f32[16]{0} parameter(1)\n",
    );
    let mut previous = "p0".to_string();
    for i in 0..count {
        let opcode = ["add", "multiply", "subtract", "maximum"][i % 4];
        let root = if i + 1 == count { "ROOT " } else { "" };
        text.push_str(&format!(
            "  {root}{opcode}.{i} = f32[16]{{0}} {opcode}({previous}, p1), metadata={{op_name=\"jit(f)/{opcode}\" source_line={i}}}\n"
        ));
        previous = format!("{opcode}.{i}");
    }
    text.push_str("}\n");
    text
}

#[test]
fn ten_thousand_instructions_import_quickly() -> Result<()> {
    let text = long_module(10_000);
    let start = std::time::Instant::now();
    let computation = XlaComputation::from_hlo_text(&text)?;
    let elapsed = start.elapsed();
    eprintln!("imported {} lines (10,000 instructions) in {elapsed:?}", text.lines().count());
    assert_eq!(computation.program_shape().parameters.len(), 2);
    // The target is 20 ms in a release build; this debug build (opt-level 1) gets headroom.
    assert!(elapsed.as_millis() < 500, "{elapsed:?}");
    Ok(())
}

#[test]
fn total_order_comparisons_order_signed_zeros_and_nans() -> Result<()> {
    let computation = XlaComputation::from_hlo_text(&module(
        "  ROOT lt = pred[2]{0} compare(x, y), direction=LT, type=TOTALORDER",
    ))?;
    let pairs = [
        (-0.0f32, 0.0f32),
        (f32::NAN, f32::INFINITY),
        (-f32::NAN, f32::NEG_INFINITY),
        (1.0, 2.0),
        (2.0, 1.0),
    ];
    for options in [CompileOptions::default(), CompileOptions::unfused()] {
        let exe = computation.compile(&options)?;
        let got: Vec<bool> = pairs
            .iter()
            .map(|&(a, b)| {
                exe.execute(&[&Literal::vec1(&[a, b]), &Literal::vec1(&[b, a])])
                    .unwrap()
                    .to_vec::<bool>()
                    .unwrap()[0]
            })
            .collect();
        // -0 < +0, +NaN above ∞, -NaN below -∞.
        assert_eq!(got, [true, false, true, true, false]);
    }
    Ok(())
}
