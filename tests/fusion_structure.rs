//! How many loops a graph becomes (tinygrad's `check_schedule`): each test builds a graph,
//! compiles it, counts the `fusion` instructions and the other computing instructions left in
//! the ENTRY computation of the optimized HLO text, and checks the fused result against the
//! unfused executor (`fusion: false`) and, where it is short to write, the exact values.
//!
//! Graphs that broadcast a scalar constant (or hold an iota) use shapes of more than 64
//! elements: below that the simplifier folds the broadcast into a dense constant that stays
//! outside the fusion (the `#[ignore]`d BUG tests pin that down).

use approx::assert_relative_eq;
use lazy_xla::{
    abs, add, broadcast_in_dim, convert_element_type, dot, exp, gt, iota, is_finite, lt, max, mul, neg,
    reduce, reshape, select, sub, transpose, CompileOptions, ElementType, Executable, Literal, NativeType,
    Result, Shape, XlaBuilder, XlaComputation, XlaOp,
};

#[path = "common/computations.rs"]
mod computations;

/// One instruction line of the HLO text: its opcode and the whole line (trimmed).
#[derive(Debug)]
struct Line {
    opcode: String,
    text: String,
}

/// The instructions of the first computation in `hlo` whose header line `header` accepts.
fn computation_lines(hlo: &str, header: impl Fn(&str) -> bool) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut inside = false;
    for line in hlo.lines() {
        if !inside {
            inside = header(line);
            continue;
        }
        if line.starts_with('}') {
            break;
        }
        lines.push(parse_line(line));
    }
    lines
}

/// `[ROOT ]name = shape opcode(operands), attributes` → its opcode.
fn parse_line(line: &str) -> Line {
    let (_, rest) = line.split_once(" = ").unwrap_or_else(|| panic!("not an instruction: {line}"));
    // The shape holds no spaces; the opcode runs from after it to the '('.
    let (_, rest) = rest.split_once(' ').unwrap_or_else(|| panic!("no opcode: {line}"));
    let opcode = rest.split_once('(').map_or(rest, |(opcode, _)| opcode).to_string();
    Line { opcode, text: line.trim().to_string() }
}

/// The ENTRY computation's instructions.
fn entry(hlo: &str) -> Vec<Line> {
    computation_lines(hlo, |line| line.starts_with("ENTRY "))
}

/// Every fused computation's instructions, in the order printed.
fn fused_computations(hlo: &str) -> Vec<Vec<Line>> {
    let names: Vec<&str> = hlo
        .lines()
        .filter(|l| l.starts_with("fused_computation") && l.ends_with('{'))
        .map(|l| l.trim_end_matches('{').trim())
        .collect();
    names
        .iter()
        .map(|name| computation_lines(hlo, |line| line.trim_end_matches('{').trim() == *name))
        .collect()
}

/// The opcodes of ENTRY's instructions other than parameters, in order; a loop fusion is
/// `fusion`, any other kind `fusion:kind` (`fusion:kInput` for a reduce with its producers).
fn entry_ops(hlo: &str) -> Vec<String> {
    entry(hlo)
        .into_iter()
        .filter(|l| l.opcode != "parameter")
        .map(|l| match attribute(&l.text, "kind=") {
            Some(kind) if l.opcode == "fusion" && kind != "kLoop" => format!("fusion:{kind}"),
            _ => l.opcode,
        })
        .collect()
}

/// The value of `key` (like `kind=` or `calls=`) in an instruction's text.
fn attribute<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let (_, rest) = text.split_once(key)?;
    Some(rest.split([',', ' ']).next().unwrap_or(rest))
}

/// The fused computation each `fusion` of ENTRY calls, in ENTRY's order: its opcodes.
fn fusion_bodies(hlo: &str) -> Vec<Vec<String>> {
    entry(hlo)
        .iter()
        .filter(|l| l.opcode == "fusion")
        .map(|l| {
            let called = attribute(&l.text, "calls=").expect("a fusion calls a computation");
            computation_lines(hlo, |line| line.trim_end_matches('{').trim() == called)
                .into_iter()
                .map(|l| l.opcode)
                .collect()
        })
        .collect()
}

/// How many instructions of the whole module (ENTRY and fused computations) have `opcode`.
fn count_everywhere(hlo: &str, opcode: &str) -> usize {
    hlo.lines().filter(|l| l.contains(" = ")).filter(|l| parse_line(l).opcode == opcode).count()
}

/// Compiled with fusion (the default); the optimized text is checked by the caller.
fn fused(computation: &XlaComputation) -> Executable {
    computation.compile(&CompileOptions::default()).expect("compile fused")
}

/// Runs `computation` fused and unfused on `args`; the two results must have the same shape and
/// values (exactly for integers and `pred`, within 1e-6 relative for floats). Returns the fused
/// result.
#[track_caller]
fn same_as_unfused(computation: &XlaComputation, args: &[&Literal]) -> Literal {
    let fused_out = fused(computation).execute(args).expect("execute fused");
    let unfused_out = computation
        .compile(&CompileOptions::unfused())
        .expect("compile unfused")
        .execute(args)
        .expect("execute");
    assert_eq!(fused_out.shape(), unfused_out.shape());
    if fused_out.element_type().is_float() {
        assert_relative_eq!(fused_out, unfused_out, epsilon = 1e-6, max_relative = 1e-6);
    } else {
        assert_eq!(fused_out, unfused_out);
    }
    fused_out
}

/// A literal of `shape` (written in XLA's notation) whose logical row-major elements are
/// `value(i)`.
fn literal<T: NativeType>(shape: &str, value: impl Fn(usize) -> T) -> Literal {
    let shape: Shape = shape.parse().expect("shape text");
    let values = (0..shape.element_count() as usize).map(value).collect();
    Literal::from_vec(&shape, values).expect("literal")
}

/// Small values with negatives, zeros and fractions.
fn wavy(seed: usize) -> impl Fn(usize) -> f32 {
    move |i| ((i * 7 + seed * 5) % 13) as f32 * 0.5 - 3.0
}

/// W1 `max((X + b{1}) * s{0}, 0) + 1` on X of `[rows, columns]`.
fn w1(rows: i64, columns: i64) -> Result<XlaComputation> {
    let b = XlaBuilder::new("w1");
    let x = b.parameter(0, &Shape::new(ElementType::F32, &[rows, columns]), "x");
    let bias = b.parameter(1, &Shape::new(ElementType::F32, &[columns]), "b");
    let scale = b.parameter(2, &Shape::new(ElementType::F32, &[rows]), "s");
    let scaled = mul(add(x, bias, &[1]), scale, &[0]);
    b.build(add(max(scaled, b.constant_r0(0.0f32), &[]), b.constant_r0(1.0f32), &[]))
}

/// Checks W1 at `[rows, columns]`: one fusion and nothing else but parameters in ENTRY, and
/// the values of `max((x + b) * s, 0) + 1` element by element.
fn check_w1(rows: i64, columns: i64) -> Result<()> {
    let computation = w1(rows, columns)?;
    let hlo = fused(&computation).to_hlo_text();
    assert_eq!(entry_ops(&hlo), ["fusion"], "{hlo}");
    assert_eq!(fused_computations(&hlo).len(), 1, "{hlo}");
    let (r, c) = (rows as usize, columns as usize);
    let x = literal(&format!("f32[{rows},{columns}]"), wavy(0));
    let bias = literal(&format!("f32[{columns}]"), wavy(1));
    let scale = literal(&format!("f32[{rows}]"), wavy(2));
    let out = same_as_unfused(&computation, &[&x, &bias, &scale]).to_vec::<f32>()?;
    let expected: Vec<f32> =
        (0..r * c).map(|i| ((wavy(0)(i) + wavy(1)(i % c)) * wavy(2)(i / c)).max(0.0) + 1.0).collect();
    assert_eq!(out, expected);
    Ok(())
}

#[test]
fn w1_is_one_fusion_and_nothing_else() -> Result<()> {
    check_w1(16, 32)
}

/// Small shapes too: the simplifier never folds a broadcast (or an iota) into a constant, as
/// XLA's `HloConstantFolding` never does, so they stay free inside the fusion.
#[test]
fn w1_at_a_small_shape_is_one_fusion_and_nothing_else() -> Result<()> {
    check_w1(2, 3)
}

#[test]
fn degenerate_broadcasts_of_the_seed_fuse_into_one_loop() -> Result<()> {
    // (lhs shape, rhs shape, broadcast_dimensions, result dimensions)
    let cases: [(&str, &str, &[i64], &[i64]); 5] = [
        ("f32[2,1]", "f32[2,3]", &[], &[2, 3]),
        ("f32[1,2,5]", "f32[7,2,5]", &[], &[7, 2, 5]),
        ("f32[7,2,5]", "f32[7,1,5]", &[], &[7, 2, 5]),
        ("f32[2,1]", "f32[1,3]", &[], &[2, 3]),
        ("f32[1,2]", "f32[4,3,1]", &[1, 2], &[4, 3, 2]),
    ];
    for (lhs, rhs, dimensions, result) in cases {
        let x = literal(lhs, |i| i as f32);
        let y = literal(rhs, |i| i as f32 * 100.0);
        let b = XlaBuilder::new("degenerate");
        let px = b.parameter(0, x.shape(), "x");
        let py = b.parameter(1, y.shape(), "y");
        let computation = b.build(add(px, py, dimensions))?;
        let hlo = fused(&computation).to_hlo_text();
        assert_eq!(entry_ops(&hlo), ["fusion"], "{lhs} + {rhs}\n{hlo}");
        // The reshapes that drop the size-1 dimensions and the broadcasts are inside.
        let inside: Vec<String> = fused_computations(&hlo)[0].iter().map(|l| l.opcode.clone()).collect();
        assert!(
            inside.contains(&"reshape".to_string()) && inside.contains(&"broadcast".to_string()),
            "{hlo}"
        );
        let out = same_as_unfused(&computation, &[&x, &y]);
        assert_eq!(out.shape().dimensions(), result);
    }
    // One case by value: out[a,b,c] = x[0,b,c] + y[a,b,c] for [1,2,5] + [7,2,5].
    let x = literal("f32[1,2,5]", |i| i as f32);
    let y = literal("f32[7,2,5]", |i| (i / 10) as f32 * 1000.0);
    let b = XlaBuilder::new("degenerate");
    let computation = b.build(add(b.parameter(0, x.shape(), "x"), b.parameter(1, y.shape(), "y"), &[]))?;
    let out = same_as_unfused(&computation, &[&x, &y]).to_vec::<f32>()?;
    let expected: Vec<f32> = (0..70).map(|i| ((i / 10) * 1000 + i % 10) as f32).collect();
    assert_eq!(out, expected);
    Ok(())
}

#[test]
fn transpose_feeding_an_add_fuses() -> Result<()> {
    let b = XlaBuilder::new("transpose_add");
    let x = b.parameter(0, &"f32[3,4]".parse()?, "x");
    let y = b.parameter(1, &"f32[4,3]".parse()?, "y");
    let computation = b.build(add(transpose(x, &[1, 0]), y, &[]))?;
    let hlo = fused(&computation).to_hlo_text();
    assert_eq!(entry_ops(&hlo), ["fusion"], "{hlo}");
    assert_eq!(count_everywhere(&hlo, "transpose"), 1, "the transpose is inside the fusion\n{hlo}");
    let xv = literal("f32[3,4]", |i| i as f32);
    let yv = literal("f32[4,3]", |i| i as f32 * 100.0);
    let out = same_as_unfused(&computation, &[&xv, &yv]).to_vec::<f32>()?;
    // out[i,j] = x[j,i] + y[i,j]
    let expected: Vec<f32> = (0..12).map(|k| ((k % 3) * 4 + k / 3) as f32 + k as f32 * 100.0).collect();
    assert_eq!(out, expected);
    Ok(())
}

#[test]
fn column_major_plus_row_major_is_one_loop_without_a_copy() -> Result<()> {
    let cases = [("f32[8,9]{0,1}", "f32[8,9]{1,0}"), ("f32[3,4,2,3]{0,1,2,3}", "f32[3,4,2,3]")];
    for (column_major, row_major) in cases {
        let a = literal(column_major, |i| i as f32);
        let c = literal(row_major, |i| i as f32 * 0.25);
        // A lone add is one loop by itself…
        let b = XlaBuilder::new("w3");
        let computation =
            b.build(add(b.parameter(0, a.shape(), "a"), b.parameter(1, c.shape(), "c"), &[]))?;
        let hlo = fused(&computation).to_hlo_text();
        assert_eq!(entry_ops(&hlo), ["add"], "{hlo}");
        let out = same_as_unfused(&computation, &[&a, &c]).to_vec::<f32>()?;
        assert_eq!(out, (0..out.len()).map(|i| i as f32 * 1.25).collect::<Vec<_>>());
        // …and with a scale after it, one fusion; never a transpose or a copy.
        let b = XlaBuilder::new("w3");
        let sum = add(b.parameter(0, a.shape(), "a"), b.parameter(1, c.shape(), "c"), &[]);
        let computation = b.build(mul(sum, b.constant_r0(2.0f32), &[]))?;
        let hlo = fused(&computation).to_hlo_text();
        assert_eq!(entry_ops(&hlo), ["fusion"], "{hlo}");
        assert_eq!(count_everywhere(&hlo, "transpose") + count_everywhere(&hlo, "copy"), 0, "{hlo}");
        let out = same_as_unfused(&computation, &[&a, &c]).to_vec::<f32>()?;
        assert_eq!(out, (0..out.len()).map(|i| i as f32 * 2.5).collect::<Vec<_>>());
    }
    Ok(())
}

#[test]
fn an_expensive_op_with_users_in_two_places_is_computed_once() -> Result<()> {
    // e = exp(x) feeds a dot and an element-wise chain after the dot: the two users are never
    // in one fusion, so e is computed once, by itself, and read by both (the dot and the chain
    // after it an output fusion).
    let b = XlaBuilder::new("shared_exp");
    let x = b.parameter(0, &"f32[9,9]".parse()?, "x");
    let w = b.parameter(1, &"f32[9,9]".parse()?, "w");
    let e = exp(x);
    let product = dot(e, w);
    let computation = b.build(add(mul(e, b.constant_r0(2.0f32), &[]), product, &[]))?;
    let hlo = fused(&computation).to_hlo_text();
    assert_eq!(count_everywhere(&hlo, "exponential"), 1, "{hlo}");
    assert_eq!(entry_ops(&hlo), ["exponential", "fusion:kOutput"], "{hlo}");
    let xv = literal("f32[9,9]", |i| i as f32 * 0.0625 - 2.0);
    let wv = literal("f32[9,9]", |i| if i % 10 == 0 { 1.0f32 } else { 0.0 });
    // w is the identity: out = 2·e + e = 3·exp(x).
    let out = same_as_unfused(&computation, &[&xv, &wv]);
    let expected = literal("f32[9,9]", |i| 3.0 * (i as f32 * 0.0625 - 2.0).exp());
    assert_relative_eq!(out, expected, max_relative = 1e-5);

    // Two element-wise chains that are separated by a reduce both read e: still once.
    let b = XlaBuilder::new("shared_exp");
    let x = b.parameter(0, &"f32[3,4]".parse()?, "x");
    let e = exp(x);
    let sums = reduce(neg(e), b.constant_r0(0.0f32), &sum_computation()?, &[1]);
    let computation = b.build(sub(e, sums, &[0]))?;
    let hlo = fused(&computation).to_hlo_text();
    assert_eq!(count_everywhere(&hlo, "exponential"), 1, "{hlo}");
    let xv = literal("f32[3,4]", |i| i as f32 * 0.25 - 1.5);
    let out = same_as_unfused(&computation, &[&xv]).to_vec::<f32>()?;
    for (i, value) in out.iter().enumerate() {
        let row: f32 = (0..4).map(|j| -(((i / 4) * 4 + j) as f32 * 0.25 - 1.5).exp()).sum();
        let expected = (i as f32 * 0.25 - 1.5).exp() - row;
        assert!((value - expected).abs() <= 1e-5 * expected.abs(), "{i}: {value} vs {expected}");
    }
    Ok(())
}

/// `a + b` over f32 scalars, as a reducer.
fn sum_computation() -> Result<XlaComputation> {
    Ok(computations::sum(ElementType::F32))
}

#[test]
fn a_broadcast_used_by_two_fusions_is_duplicated_into_both() -> Result<()> {
    // bv = broadcast(v) feeds exp(x + bv) (reduced next) and (y · bv) + rowsums.
    let b = XlaBuilder::new("shared_broadcast");
    let x = b.parameter(0, &"f32[3,4]".parse()?, "x");
    let y = b.parameter(1, &"f32[3,4]".parse()?, "y");
    let v = b.parameter(2, &"f32[4]".parse()?, "v");
    let bv = broadcast_in_dim(v, &[3, 4], &[1]);
    let sums = reduce(exp(add(x, bv, &[])), b.constant_r0(0.0f32), &sum_computation()?, &[1]);
    let computation = b.build(add(mul(y, bv, &[]), sums, &[0]))?;
    let hlo = fused(&computation).to_hlo_text();
    // The first fusion is the reduce with its producers, the second the chain after it.
    assert_eq!(entry_ops(&hlo), ["constant", "fusion:kInput", "fusion"], "{hlo}");
    let bodies = fusion_bodies(&hlo);
    assert!(bodies[0].contains(&"reduce".to_string()) && bodies[0].contains(&"exponential".to_string()));
    assert!(!bodies[1].contains(&"reduce".to_string()), "{hlo}");
    let fusions = fused_computations(&hlo);
    assert_eq!(fusions.len(), 2);
    for fusion in &fusions {
        let from_v = fusion
            .iter()
            .filter(|l| {
                l.opcode == "broadcast" && l.text.contains("f32[3,4]") && l.text.ends_with("dimensions={1}")
            })
            .count();
        assert_eq!(from_v, 1, "each fusion computes bv itself\n{hlo}");
    }
    let xv = literal("f32[3,4]", |i| i as f32 * 0.125);
    let yv = literal("f32[3,4]", |i| i as f32);
    let vv = literal("f32[4]", |i| i as f32 - 1.0);
    let out = same_as_unfused(&computation, &[&xv, &yv, &vv]).to_vec::<f32>()?;
    for (k, value) in out.iter().enumerate() {
        let (i, j) = (k / 4, k % 4);
        let row: f32 = (0..4).map(|jj| ((i * 4 + jj) as f32 * 0.125 + jj as f32 - 1.0).exp()).sum();
        let expected = k as f32 * (j as f32 - 1.0) + row;
        assert!((value - expected).abs() <= 1e-5 * expected.abs().max(1.0), "{k}: {value} vs {expected}");
    }
    Ok(())
}

#[test]
fn a_dot_between_two_chains_splits_them_into_a_loop_and_an_output_fusion() -> Result<()> {
    let b = XlaBuilder::new("around_dot");
    let x = b.parameter(0, &"f32[40,4]".parse()?, "x");
    let w = b.parameter(1, &"f32[4,2]".parse()?, "w");
    let before = max(add(neg(x), b.constant_r0(1.0f32), &[]), b.constant_r0(0.0f32), &[]);
    let after = mul(sub(dot(before, w), b.constant_r0(0.5f32), &[]), b.constant_r0(2.0f32), &[]);
    let computation = b.build(after)?;
    let hlo = fused(&computation).to_hlo_text();
    assert_eq!(entry_ops(&hlo), ["fusion", "fusion:kOutput"], "{hlo}");
    let xv = literal("f32[40,4]", |i| (i % 9) as f32 * 0.25 - 1.0);
    let wv = literal("f32[4,2]", |i| (i % 3) as f32);
    let out = same_as_unfused(&computation, &[&xv, &wv]).to_vec::<f32>()?;
    let relu = |i: usize| (1.0 - ((i % 9) as f32 * 0.25 - 1.0)).max(0.0);
    let expected: Vec<f32> = (0..80)
        .map(|k| {
            let (i, j) = (k / 2, k % 2);
            let product: f32 = (0..4).map(|t| relu(i * 4 + t) * ((t * 2 + j) % 3) as f32).sum();
            (product - 0.5) * 2.0
        })
        .collect();
    assert_eq!(out, expected);
    Ok(())
}

#[test]
fn a_reduce_between_two_chains_splits_them_into_two_fusions() -> Result<()> {
    let b = XlaBuilder::new("around_reduce");
    let x = b.parameter(0, &"f32[70,3]".parse()?, "x");
    let squares = mul(add(x, b.constant_r0(1.0f32), &[]), add(x, b.constant_r0(1.0f32), &[]), &[]);
    let sums = reduce(squares, b.constant_r0(0.0f32), &sum_computation()?, &[1]);
    let computation = b.build(neg(mul(sums, b.constant_r0(3.0f32), &[])))?;
    let hlo = fused(&computation).to_hlo_text();
    // The reduce takes the chain before it into its own (input) fusion; the chain after it
    // is a second loop.
    assert_eq!(entry_ops(&hlo), ["constant", "fusion:kInput", "fusion"], "{hlo}");
    let bodies = fusion_bodies(&hlo);
    assert_eq!(count_everywhere(&hlo, "reduce"), 1, "{hlo}");
    for op in ["add", "multiply", "reduce"] {
        assert!(bodies[0].contains(&op.to_string()), "{op}\n{hlo}");
    }
    assert_eq!(
        bodies[1].iter().filter(|op| *op != "parameter").collect::<Vec<_>>(),
        ["constant", "broadcast", "multiply", "negate"]
    );
    let xv = literal("f32[70,3]", |i| (i % 17) as f32 - 10.0);
    let out = same_as_unfused(&computation, &[&xv]).to_vec::<f32>()?;
    let expected: Vec<f32> = (0..70)
        .map(|r| -3.0 * (0..3).map(|c| (((r * 3 + c) % 17) as f32 - 9.0).powi(2)).sum::<f32>())
        .collect();
    assert_eq!(out, expected);
    Ok(())
}

/// The everyday "relu, then sum" (XLA's `ReduceHloTest.HandleReductionToVectorAndOtherReduction`
/// narrowed down): one scalar constant feeds both the reduced expression and the reduce's init
/// value. The init stays an input of the input fusion (the loop starts from it) while the
/// constant is also computed inside it.
#[test]
fn a_constant_that_is_both_init_and_operand_fuses_into_the_reduce() -> Result<()> {
    let b = XlaBuilder::new("relu_sum");
    let x = b.parameter(0, &"f32[6]".parse()?, "x");
    let zero = b.constant_r0(0.0f32);
    let computation = b.build(reduce(max(x, zero, &[]), zero, &sum_computation()?, &[0]))?;
    let hlo = fused(&computation).to_hlo_text();
    assert_eq!(entry_ops(&hlo), ["constant", "fusion:kInput"], "{hlo}");
    let xv = Literal::vec1(&[1.0f32, -2.0, 3.0, -4.0, 5.0, 0.5]);
    assert_eq!(same_as_unfused(&computation, &[&xv]).to_vec::<f32>()?, vec![9.5]);
    Ok(())
}

/// The masked reduction of issue 9: the sum of `select(is_finite(x), abs(x), zeros)`, whose
/// `zero` (merged by CSE with the init value) is both inside the loop and its starting value.
#[test]
fn a_masked_reduction_runs_fused() -> Result<()> {
    let b = XlaBuilder::new("masked_sum");
    let x = b.parameter(0, &"f32[6]".parse()?, "x");
    let zeros = broadcast_in_dim(b.constant_r0(0.0f32), &[6], &[]);
    let masked = select(is_finite(x), abs(x), zeros);
    let computation = b.build(reduce(masked, b.constant_r0(0.0f32), &sum_computation()?, &[0]))?;
    let xv = Literal::vec1(&[1.0f32, f32::NAN, -3.0, f32::INFINITY, 2.5, f32::NEG_INFINITY]);
    assert_eq!(same_as_unfused(&computation, &[&xv]).to_vec::<f32>()?, vec![6.5]);
    // The smallest graph the differential fuzzer found: reduce(x + zero, zero).
    let b = XlaBuilder::new("plus_zero_sum");
    let x = b.parameter(0, &"f32[3]".parse()?, "x");
    let zero = b.constant_r0(0.0f32);
    let computation = b.build(reduce(add(x, zero, &[]), zero, &sum_computation()?, &[0]))?;
    let xv = Literal::vec1(&[1.0f32, 2.0, 4.0]);
    assert_eq!(same_as_unfused(&computation, &[&xv]).to_vec::<f32>()?, vec![7.0]);
    Ok(())
}

/// `select(iota(dim 1) < limit{0}, convert(iota(dim 0)), -1)` as f32, with `x · 2` added.
fn iota_chain(rows: i64, columns: i64) -> Result<XlaComputation> {
    let b = XlaBuilder::new("iota_chain");
    let shape = Shape::new(ElementType::S32, &[rows, columns]);
    let limit = b.parameter(0, &Shape::new(ElementType::S32, &[rows]), "limit");
    let x = b.parameter(1, &Shape::new(ElementType::F32, &[rows, columns]), "x");
    let column = iota(&b, &shape, 1);
    let row = convert_element_type(iota(&b, &shape, 0), ElementType::F32);
    let picked = select(lt(column, limit, &[0]), row, b.constant_r0(-1.0f32));
    let positive = gt(x, b.constant_r0(0.0f32), &[]);
    b.build(add(picked, convert_element_type(positive, ElementType::F32), &[]))
}

fn check_iota_chain(rows: i64, columns: i64) -> Result<()> {
    let computation = iota_chain(rows, columns)?;
    let hlo = fused(&computation).to_hlo_text();
    assert_eq!(entry_ops(&hlo), ["fusion"], "{hlo}");
    assert_eq!(count_everywhere(&hlo, "iota"), 2, "{hlo}");
    let c = columns as usize;
    let limit = literal(&format!("s32[{rows}]"), |r| (r % (c + 1)) as i32);
    let x = literal(&format!("f32[{rows},{columns}]"), |i| (i % 3) as f32 - 1.0);
    let out = same_as_unfused(&computation, &[&limit, &x]).to_vec::<f32>()?;
    let expected: Vec<f32> = (0..out.len())
        .map(|i| {
            let (r, k) = (i / c, i % c);
            let picked = if k < r % (c + 1) { r as f32 } else { -1.0 };
            picked + if (i % 3) as f32 - 1.0 > 0.0 { 1.0 } else { 0.0 }
        })
        .collect();
    assert_eq!(out, expected);
    Ok(())
}

#[test]
fn iota_compare_select_and_convert_chains_fuse() -> Result<()> {
    check_iota_chain(12, 8)
}

#[test]
fn iota_chains_at_a_small_shape_fuse() -> Result<()> {
    check_iota_chain(3, 4)
}

#[test]
fn a_reshape_that_drops_unit_dimensions_fuses() -> Result<()> {
    let b = XlaBuilder::new("unit_reshape");
    let x = b.parameter(0, &"f32[8,1,9,1]".parse()?, "x");
    let y = b.parameter(1, &"f32[8,9]".parse()?, "y");
    let computation = b.build(mul(add(reshape(x, &[8, 9]), y, &[]), b.constant_r0(2.0f32), &[]))?;
    let hlo = fused(&computation).to_hlo_text();
    assert_eq!(entry_ops(&hlo), ["fusion"], "{hlo}");
    assert_eq!(count_everywhere(&hlo, "reshape"), 1, "{hlo}");
    let xv = literal("f32[8,1,9,1]", |i| i as f32);
    let yv = literal("f32[8,9]", |i| i as f32 * 10.0);
    let out = same_as_unfused(&computation, &[&xv, &yv]).to_vec::<f32>()?;
    assert_eq!(out, (0..72).map(|i| i as f32 * 22.0).collect::<Vec<_>>());
    Ok(())
}

#[test]
fn a_reshape_that_splits_a_dimension_fuses_and_reads_through_any_layout() -> Result<()> {
    let b = XlaBuilder::new("split_reshape");
    // Column-major, so the split dimension's index reaches memory through two strides.
    let x = b.parameter(0, &"f32[6,8]{0,1}".parse()?, "x");
    let y = b.parameter(1, &"f32[6,2,4]".parse()?, "y");
    let computation = b.build(mul(add(reshape(neg(x), &[6, 2, 4]), y, &[]), b.constant_r0(2.0f32), &[]))?;
    let hlo = fused(&computation).to_hlo_text();
    assert_eq!(entry_ops(&hlo), ["fusion"], "{hlo}");
    let xv = literal("f32[6,8]{0,1}", |i| i as f32);
    let yv = literal("f32[6,2,4]", |i| i as f32 * 3.0);
    let out = same_as_unfused(&computation, &[&xv, &yv]).to_vec::<f32>()?;
    assert_eq!(out, (0..48).map(|i| i as f32 * 4.0).collect::<Vec<_>>());
    Ok(())
}

#[test]
fn a_general_reshape_stays_out_of_the_fusion() -> Result<()> {
    let b = XlaBuilder::new("general_reshape");
    let x = b.parameter(0, &"f32[8,9]".parse()?, "x");
    let y = b.parameter(1, &"f32[9,8]".parse()?, "y");
    let computation = b.build(mul(add(reshape(neg(x), &[9, 8]), y, &[]), b.constant_r0(2.0f32), &[]))?;
    let hlo = fused(&computation).to_hlo_text();
    assert_eq!(entry_ops(&hlo), ["negate", "reshape", "fusion"], "{hlo}");
    for fusion in fused_computations(&hlo) {
        assert!(fusion.iter().all(|l| l.opcode != "reshape"), "{hlo}");
    }
    let xv = literal("f32[8,9]", |i| i as f32);
    let yv = literal("f32[9,8]", |i| i as f32 * 3.0);
    let out = same_as_unfused(&computation, &[&xv, &yv]).to_vec::<f32>()?;
    assert_eq!(out, (0..72).map(|i| i as f32 * 4.0).collect::<Vec<_>>());
    Ok(())
}

#[test]
fn unused_ops_vanish() -> Result<()> {
    let b = XlaBuilder::new("dead");
    let x = b.parameter(0, &"f32[3,3]".parse()?, "x");
    let y = b.parameter(1, &"f32[3,3]".parse()?, "y");
    let _unused_exp = exp(x);
    let _unused_dot = dot(x, y);
    let _unused_chain = transpose(sub(y, x, &[]), &[1, 0]);
    let computation = b.build(mul(x, y, &[]))?;
    assert!(computation.to_hlo_text().contains("exponential"));
    for options in [CompileOptions::default(), CompileOptions::unfused()] {
        let hlo = computation.compile(&options)?.to_hlo_text();
        assert_eq!(entry_ops(&hlo), ["multiply"], "{hlo}");
        for gone in ["exponential", "dot", "subtract", "transpose"] {
            assert_eq!(count_everywhere(&hlo, gone), 0, "{gone}\n{hlo}");
        }
    }
    let xv = literal("f32[3,3]", |i| i as f32);
    let out = same_as_unfused(&computation, &[&xv, &xv]).to_vec::<f32>()?;
    assert_eq!(out, (0..9).map(|i| (i * i) as f32).collect::<Vec<_>>());
    Ok(())
}

#[test]
fn a_duplicated_subexpression_is_computed_once() -> Result<()> {
    let b = XlaBuilder::new("cse");
    let x = b.parameter(0, &"s32[4,5]".parse()?, "x");
    let v = b.parameter(1, &"s32[5]".parse()?, "v");
    let first: XlaOp<'_> = add(x, v, &[1]);
    let second = add(x, v, &[1]);
    let computation = b.build(mul(neg(first), second, &[]))?;
    assert_eq!(count_everywhere(&computation.to_hlo_text(), "add"), 2);
    for options in [CompileOptions::default(), CompileOptions::unfused()] {
        let hlo = computation.compile(&options)?.to_hlo_text();
        assert_eq!(count_everywhere(&hlo, "add"), 1, "{hlo}");
        assert_eq!(count_everywhere(&hlo, "broadcast"), 1, "{hlo}");
    }
    assert_eq!(entry_ops(&fused(&computation).to_hlo_text()), ["fusion"]);
    let xv = literal("s32[4,5]", |i| i as i32 - 7);
    let vv = literal("s32[5]", |i| i as i32 * 3);
    let out = same_as_unfused(&computation, &[&xv, &vv]).to_vec::<i32>()?;
    let expected: Vec<i32> = (0..20i32).map(|i| -(i - 7 + (i % 5) * 3).pow(2)).collect();
    assert_eq!(out, expected);
    Ok(())
}

#[test]
fn inverse_transposes_disappear() -> Result<()> {
    let b = XlaBuilder::new("transposes");
    let x = b.parameter(0, &"f32[2,3,4]".parse()?, "x");
    let y = b.parameter(1, &"f32[2,3,4]".parse()?, "y");
    let round_trip = transpose(transpose(x, &[1, 2, 0]), &[2, 0, 1]);
    let computation = b.build(sub(round_trip, y, &[]))?;
    for options in [CompileOptions::default(), CompileOptions::unfused()] {
        let hlo = computation.compile(&options)?.to_hlo_text();
        assert_eq!(count_everywhere(&hlo, "transpose"), 0, "{hlo}");
        assert_eq!(entry_ops(&hlo), ["subtract"], "{hlo}");
    }
    let xv = literal("f32[2,3,4]", |i| i as f32 * 3.0);
    let yv = literal("f32[2,3,4]", |i| i as f32);
    let out = same_as_unfused(&computation, &[&xv, &yv]).to_vec::<f32>()?;
    assert_eq!(out, (0..24).map(|i| i as f32 * 2.0).collect::<Vec<_>>());
    Ok(())
}

#[test]
fn multiplying_s32_by_one_disappears() -> Result<()> {
    let b = XlaBuilder::new("times_one");
    let x = b.parameter(0, &"s32[3,4]".parse()?, "x");
    let ones = mul(b.constant_r0(1i32), mul(x, b.constant_r0(1i32), &[]), &[]);
    let computation = b.build(neg(ones))?;
    for options in [CompileOptions::default(), CompileOptions::unfused()] {
        let hlo = computation.compile(&options)?.to_hlo_text();
        assert_eq!(count_everywhere(&hlo, "multiply"), 0, "{hlo}");
        assert_eq!(entry_ops(&hlo), ["negate"], "{hlo}");
    }
    let xv = literal("s32[3,4]", |i| i as i32 - 5);
    let out = same_as_unfused(&computation, &[&xv]).to_vec::<i32>()?;
    assert_eq!(out, (0..12).map(|i| 5 - i).collect::<Vec<_>>());
    Ok(())
}

/// A fused computation prints its parameters first, in number order, as XLA's fusion dumps do
/// (the entry computation keeps XLA's post order).
#[test]
fn fused_computations_list_their_parameters_in_number_order() -> Result<()> {
    let b = XlaBuilder::new("order");
    let x = b.parameter(0, &"f32[100]".parse()?, "x");
    let y = b.parameter(1, &"f32[100]".parse()?, "y");
    // exp(y) is made first, so y becomes the fused parameter 0; the root reads x's product
    // first, so XLA's post order alone would print parameter 1 first.
    let e = exp(y);
    let computation = b.build(sub(mul(x, x, &[]), e, &[]))?;
    let hlo = fused(&computation).to_hlo_text();
    let fused_lines = &fused_computations(&hlo)[0];
    let numbers: Vec<&str> = fused_lines
        .iter()
        .take_while(|line| line.opcode == "parameter")
        .map(|line| line.text.rsplit_once("parameter(").map_or("", |(_, n)| n.trim_end_matches(')')))
        .collect();
    assert_eq!(numbers, ["0", "1"], "{hlo}");
    assert!(fused_lines[2..].iter().all(|line| line.opcode != "parameter"), "{hlo}");
    Ok(())
}

/// A reduce keeps its producers only where its loop folds their values as it would fold their
/// result materialized: summed over both dimensions, `x + transpose(y)` walks rows of 3 (the
/// transposed read does not merge them) where the contiguous sum is one row of 12, folded in
/// other pieces. The sum then reads the producers' fusion, so fused and unfused sums round
/// alike. Summed over its rows, the walk is the same either way and the reduce keeps them.
#[test]
fn a_reduce_keeps_producers_only_when_it_folds_them_as_their_result() -> Result<()> {
    let cases: [(&[i64], &[&str]); 2] =
        [(&[0, 1], &["fusion", "constant", "reduce"]), (&[1], &["constant", "fusion:kInput"])];
    for (dimensions, want) in cases {
        let b = XlaBuilder::new("transposed_sum");
        let x = b.parameter(0, &"f32[4,3]".parse()?, "x");
        let y = b.parameter(1, &"f32[3,4]".parse()?, "y");
        let sum = reduce(x + transpose(y, &[1, 0]), b.constant_r0(0.0f32), &sum_computation()?, dimensions);
        let computation = b.build(sum)?;
        let hlo = fused(&computation).to_hlo_text();
        assert_eq!(entry_ops(&hlo), want, "{hlo}");
        let (xv, yv) = (literal("f32[4,3]", wavy(1)), literal("f32[3,4]", wavy(2)));
        same_as_unfused(&computation, &[&xv, &yv]);
    }
    Ok(())
}

/// A row vector broadcast down a full sum keeps the walk in rows too, and the reduce keeps its
/// producers only where those rows are whole pieces of the fold (1024 elements) and the
/// partial sums start where the contiguous sum's do: f32[256,1024] stays one loop (16 bands
/// of 16 rows either way), and so does f32[100,1024] (too small for partial sums).
/// f32[100,1000] and f32[256,1000] read their producers' result (rows that are not whole
/// pieces), and so does f32[300,1024] (partial sums of 18 or 19 rows, against the contiguous
/// sum's of 16 or 32).
#[test]
fn a_full_sum_over_a_broadcast_row_stays_fused_when_its_rows_are_whole_pieces() -> Result<()> {
    let one_loop: &[&str] = &["constant", "fusion:kInput"];
    let apart: &[&str] = &["fusion", "constant", "reduce"];
    let cases = [
        ("f32[256,1024]", one_loop),
        ("f32[100,1024]", one_loop),
        ("f32[100,1000]", apart),
        ("f32[256,1000]", apart),
        ("f32[300,1024]", apart),
    ];
    for (shape, want) in cases {
        let shape: Shape = shape.parse()?;
        let b = XlaBuilder::new("weighted_sum");
        let x = b.parameter(0, &shape, "x");
        let w = b.parameter(1, &Shape::new(ElementType::F32, &shape.dimensions()[1..]), "w");
        let sum = reduce(mul(x, w, &[1]), b.constant_r0(0.0f32), &sum_computation()?, &[0, 1]);
        let computation = b.build(sum)?;
        let hlo = fused(&computation).to_hlo_text();
        assert_eq!(entry_ops(&hlo), want, "{hlo}");
    }
    Ok(())
}
