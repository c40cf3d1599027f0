//! Row reductions: a reduce that a loop reads broadcast along its row is computed inside that
//! loop, whole rows per chunk (softmax and layer norm become one loop each, reading their
//! input once; rows that are whole blocks of a chain's lanes several at a time). Fused must equal unfused bit for bit in every layout, element type and
//! reducer; rows too short or too long, and reduces read across rows, keep a loop of their own.

use lazy_xla::{
    add, broadcast_in_dim, div, exp, max, min, mul, neg, reduce, rsqrt, sub, CompileOptions, ElementType,
    Executable, Literal, Result, Shape, XlaBuilder, XlaComputation, XlaOp,
};
use proptest::prelude::*;

#[path = "common/computations.rs"]
mod computations;

/// The `kind=` of each fusion in ENTRY, and whether ENTRY still computes a reduce of its own
/// (a `reduce` instruction or a `kInput` fusion).
fn entry_loops(executable: &Executable) -> (Vec<String>, bool) {
    let hlo = executable.to_hlo_text();
    let entry = hlo.split("ENTRY ").nth(1).expect("an ENTRY computation");
    let body = entry.split("\n}").next().unwrap_or(entry);
    let kinds: Vec<String> = body
        .lines()
        .filter(|l| l.contains(" fusion("))
        .filter_map(|l| l.split("kind=").nth(1))
        .map(|k| k.split([',', ' ']).next().unwrap_or(k).to_string())
        .collect();
    let reduces_alone = body.lines().any(|l| l.contains(" reduce(")) || kinds.iter().any(|k| k == "kInput");
    (kinds, reduces_alone)
}

/// Runs `computation` fused and unfused on `args` and checks the two agree bit for bit (NaN
/// with NaN); returns the fused executable and its result.
fn fused_equals_unfused(computation: &XlaComputation, args: &[&Literal]) -> (Executable, Literal) {
    let fused = computation.compile(&CompileOptions::default()).expect("compiles fused");
    let unfused = computation.compile(&CompileOptions::unfused()).expect("compiles unfused");
    let (got, want) =
        (fused.execute(args).expect("runs fused"), unfused.execute(args).expect("runs unfused"));
    assert_eq!(got.shape(), want.shape());
    let bits = |l: &Literal| -> Vec<Option<u64>> {
        match l.element_type() {
            ElementType::F32 => {
                l.to_vec::<f32>().unwrap().iter().map(|v| (!v.is_nan()).then(|| v.to_bits().into())).collect()
            }
            ElementType::F64 => {
                l.to_vec::<f64>().unwrap().iter().map(|v| (!v.is_nan()).then(|| v.to_bits())).collect()
            }
            _ => l.to_vec::<i32>().unwrap().iter().map(|&v| Some(v as u32 as u64)).collect(),
        }
    };
    assert_eq!(bits(&got), bits(&want), "fused differs from unfused\n{}", fused.to_hlo_text());
    (fused, got)
}

/// A literal of `shape` whose logical row-major elements are `value(i)` converted to its type.
fn literal(shape: &Shape, value: impl Fn(usize) -> f64) -> Literal {
    let count = shape.element_count() as usize;
    match shape.element_type() {
        ElementType::F32 => Literal::from_vec(shape, (0..count).map(|i| value(i) as f32).collect()),
        ElementType::F64 => Literal::from_vec(shape, (0..count).map(&value).collect()),
        _ => Literal::from_vec(shape, (0..count).map(|i| value(i) as i32).collect()),
    }
    .expect("values fit")
}

fn max_reducer(element_type: ElementType) -> XlaComputation {
    computations::scalar_computation("max", element_type, |_, a, b| max(a, b, &[]))
}

/// Row softmax, as jax writes it.
fn softmax<'b>(b: &'b XlaBuilder, x: XlaOp<'b>) -> XlaOp<'b> {
    let m = reduce(x, b.constant_r0(f32::NEG_INFINITY), &max_reducer(ElementType::F32), &[1]);
    let e = exp(sub(x, m, &[0]));
    div(e, reduce(e, b.constant_r0(0.0f32), &computations::sum(ElementType::F32), &[1]), &[0])
}

#[test]
fn softmax_is_one_loop_that_reads_its_input_once() -> Result<()> {
    let b = XlaBuilder::new("softmax");
    let x = b.parameter(0, &"f32[6,300]".parse()?, "x");
    let computation = b.build(softmax(&b, x))?;
    let x_value = literal(&"f32[6,300]".parse()?, |i| ((i * 37) % 101) as f64 / 17.0 - 3.0);
    let (fused, out) = fused_equals_unfused(&computation, &[&x_value]);
    assert_eq!(entry_loops(&fused), (vec!["kLoop".to_string()], false), "{}", fused.to_hlo_text());
    let (xs, out) = (x_value.to_vec::<f32>()?, out.to_vec::<f32>()?);
    for (row, got) in xs.chunks(300).zip(out.chunks(300)) {
        let top = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v.into()));
        let total: f64 = row.iter().map(|&v| (f64::from(v) - top).exp()).sum();
        for (&v, &g) in row.iter().zip(got) {
            let want = (f64::from(v) - top).exp() / total;
            assert!((f64::from(g) - want).abs() <= 4e-7 * want, "{g} vs {want}");
        }
    }
    Ok(())
}

/// Softmax's sum of `exp(x − m)`, which the chain computing `exp(x − m)` folds as it runs on
/// rows of whole blocks of its lanes (in pieces of 1024 lanes, their sums added to the initial
/// value in order): fused equals unfused to the bit on rows of a few blocks, of one piece, of
/// two and three pieces the last of them short, from 0 and from another initial value, with
/// NaN, infinities, zeros of both signs and denormals among the values.
#[test]
fn sums_a_chain_folds_equal_unfused_on_rows_of_one_and_several_pieces() -> Result<()> {
    for row in [256i64, 1024, 1152, 2176] {
        for init in [0.0f32, -0.0, 0.1, 1000.3] {
            let shape = Shape::new(ElementType::F32, &[12, row]);
            let b = XlaBuilder::new("folded_softmax");
            let x = b.parameter(0, &shape, "x");
            let m = reduce(x, b.constant_r0(f32::NEG_INFINITY), &max_reducer(ElementType::F32), &[1]);
            let e = exp(sub(x, m, &[0]));
            let s = reduce(e, b.constant_r0(init), &computations::sum(ElementType::F32), &[1]);
            let computation = b.build(div(e, s, &[0]))?;
            let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 0.0, 1e-40, -1e-40, -200.0];
            let x_value = Literal::from_vec(
                &shape,
                (0..12 * row as usize)
                    .map(|i| match (i / row as usize, i * 7919 % 1009) {
                        // Rows 0 to 3 finite; each later row with one kind of special value
                        // here and there.
                        (r, k) if r > 3 && k < 9 => specials[(r + k) % specials.len()],
                        (r, k) => (k as f32 / 97.0 - 5.0) * (1.0 + r as f32 / 7.0),
                    })
                    .collect(),
            )?;
            let (fused, _) = fused_equals_unfused(&computation, &[&x_value]);
            assert_eq!(entry_loops(&fused), (vec!["kLoop".to_string()], false), "{}", fused.to_hlo_text());
        }
    }
    Ok(())
}

#[test]
fn layer_norm_with_sibling_reduces_is_one_loop() -> Result<()> {
    let b = XlaBuilder::new("layer_norm");
    let x = b.parameter(0, &"f32[5,1100]".parse()?, "x");
    let sum = computations::sum(ElementType::F32);
    let n = b.constant_r0(1100.0f32);
    let mean = reduce(x, b.constant_r0(0.0f32), &sum, &[1]) / n;
    let mean_of_squares = reduce(x * x, b.constant_r0(0.0f32), &sum, &[1]) / n;
    let scale = rsqrt(mean_of_squares - mean * mean + b.constant_r0(1e-5f32));
    let computation = b.build(mul(sub(x, mean, &[0]), scale, &[0]))?;
    let x_value = literal(&"f32[5,1100]".parse()?, |i| ((i * 13) % 29) as f64 / 7.0 - 2.0);
    let (fused, out) = fused_equals_unfused(&computation, &[&x_value]);
    assert_eq!(entry_loops(&fused), (vec!["kLoop".to_string()], false), "{}", fused.to_hlo_text());
    let (xs, out) = (x_value.to_vec::<f32>()?, out.to_vec::<f32>()?);
    for (row, got) in xs.chunks(1100).zip(out.chunks(1100)) {
        let mean = row.iter().map(|&v| f64::from(v)).sum::<f64>() / 1100.0;
        let variance = row.iter().map(|&v| (f64::from(v) - mean).powi(2)).sum::<f64>() / 1100.0;
        for (&v, &g) in row.iter().zip(got) {
            let want = (f64::from(v) - mean) / (variance + 1e-5).sqrt();
            assert!((f64::from(g) - want).abs() <= 1e-4, "{g} vs {want}");
        }
    }
    Ok(())
}

#[test]
fn a_reduce_read_across_rows_keeps_its_own_loop() -> Result<()> {
    // Column sums broadcast back along the columns: the loop's row is not what is reduced.
    let b = XlaBuilder::new("columns");
    let x = b.parameter(0, &"f32[300,200]".parse()?, "x");
    let sums = reduce(exp(x), b.constant_r0(0.0f32), &computations::sum(ElementType::F32), &[0]);
    let computation = b.build(div(exp(x), sums, &[1]))?;
    let x_value = literal(&"f32[300,200]".parse()?, |i| (i % 23) as f64 / 9.0);
    let (fused, _) = fused_equals_unfused(&computation, &[&x_value]);
    assert!(entry_loops(&fused).1, "{}", fused.to_hlo_text());
    Ok(())
}

#[test]
fn a_reduce_of_a_broadcast_scalar_folds_as_a_buffer_would() -> Result<()> {
    // The reduced operand is one value for the whole row: a sum of 0.1 over 1000 elements
    // rounds as a sum of a materialized row does.
    let b = XlaBuilder::new("splat");
    let x = b.parameter(0, &"f32[3,1000]".parse()?, "x");
    let tenth = lazy_xla::broadcast_in_dim(b.constant_r0(0.1f32), &[3, 1000], &[]);
    let sums = reduce(tenth, b.constant_r0(0.0f32), &computations::sum(ElementType::F32), &[1]);
    let computation = b.build(add(x, sums, &[0]))?;
    let x_value = literal(&"f32[3,1000]".parse()?, |i| i as f64);
    fused_equals_unfused(&computation, &[&x_value]);
    Ok(())
}

#[test]
fn a_reduce_of_a_broadcast_scalar_in_its_own_loop_folds_as_a_buffer_would() -> Result<()> {
    // The same sum as the root: its own (kInput) loop, where the operand is a splat too.
    for dimensions in [[1], [0]] {
        let b = XlaBuilder::new("splat_root");
        let x = b.parameter(0, &"f32[]".parse()?, "x");
        let tenth = lazy_xla::broadcast_in_dim(x, &[3, 1000], &[]);
        let computation =
            b.build(reduce(tenth, b.constant_r0(0.0f32), &computations::sum(ElementType::F32), &dimensions))?;
        fused_equals_unfused(&computation, &[&Literal::scalar(0.1f32)]);
    }
    Ok(())
}

/// The reducers the property test draws: add, max, min, multiply.
fn reducer(choice: usize, element_type: ElementType) -> XlaComputation {
    type Op = for<'b> fn(XlaOp<'b>, XlaOp<'b>, &[i64]) -> XlaOp<'b>;
    let ops: [(&str, Op); 4] = [("add", add), ("max", max), ("min", min), ("mul", mul)];
    let (name, op) = ops[choice];
    computations::scalar_computation(name, element_type, move |_, a, b| op(a, b, &[]))
}

/// The scalar constant `value` of `element_type`.
fn constant<'b>(b: &'b XlaBuilder, element_type: ElementType, value: f64) -> XlaOp<'b> {
    match element_type {
        ElementType::F32 => b.constant_r0(value as f32),
        ElementType::F64 => b.constant_r0(value),
        _ => b.constant_r0(value as i32),
    }
}

/// One row-reduction graph: `consumer(p, reduce(p))` with `p = producer(x)`.
#[derive(Clone, Copy, Debug)]
struct Case {
    element_type: ElementType,
    column_major: bool,
    producer: usize,
    reduce_op: usize,
    consumer: usize,
    seed: u32,
}

/// Checks `case` on an `x` of dimensions `dims` (the row last): fused equals unfused bit for
/// bit; returns whether the fused program computes no reduce of its own.
fn check(case: Case, dims: &[i64]) -> bool {
    let Case { element_type, column_major, producer, reduce_op, consumer, seed } = case;
    let rank = dims.len();
    let minor_to_major: Vec<i64> =
        if column_major { (0..rank as i64).collect() } else { (0..rank as i64).rev().collect() };
    let shape = Shape::with_layout(element_type, dims, &minor_to_major).expect("a shape");
    let b = XlaBuilder::new("row_reduction");
    let x = b.parameter(0, &shape, "x");
    let p = match (producer, element_type.is_float()) {
        (0, _) => x,
        (1, true) => exp(x),
        (1, false) => neg(x),
        // A chain of two links (in f32), which folds a row sum of its values as it runs.
        (3, true) => exp(neg(x)),
        _ => mul(x, x, &[]),
    };
    let init = match reduce_op {
        0 => 0.0,
        1 => -1e9,
        2 => 1e9,
        _ => 1.0,
    };
    let row_reduce = |v| {
        reduce(v, constant(&b, element_type, init), &reducer(reduce_op, element_type), &[rank as i64 - 1])
    };
    let r = row_reduce(p);
    let kept: Vec<i64> = (0..rank as i64 - 1).collect();
    let out = match consumer {
        0 => sub(p, r, &kept),
        1 => add(mul(p, r, &kept), p, &[]),
        // Scalar ops on each row's value before it is broadcast (as layer norm's variance).
        2 => add(p, sub(mul(r, r, &[]), r, &[]), &kept),
        3 => max(r, p, &kept),
        // A chain of four links (in f32) reading each row's value, the first with it on the left.
        4 => sub(add(mul(sub(r, p, &kept), r, &kept), p, &[]), r, &kept),
        // Each row's value alone, broadcast along the row: the result has one value per row.
        5 => broadcast_in_dim(mul(r, r, &[]), dims, &kept),
        // A reduce of each row's value broadcast along the row.
        _ => sub(p, row_reduce(broadcast_in_dim(r, dims, &kept)), &kept),
    };
    let computation = b.build(out).expect("a valid graph");
    let value = |i: usize| {
        let h = (i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 8;
        f64::from(h % 61) / 10.0 - 3.0
    };
    let (fused, _) = fused_equals_unfused(&computation, &[&literal(&shape, value)]);
    !entry_loops(&fused).1
}

/// Every graph of the property test on rows that are whole blocks of a register chain's
/// lanes, which a loop takes several at a time (a tile of rows, each row's reduced value one
/// per row): fused equals unfused, with each row's value read by chains, by scalar ops, by a
/// reduce, and as the result itself.
#[test]
fn tiles_of_rows_fused_equal_unfused() {
    for element_type in [ElementType::F32, ElementType::F64, ElementType::S32] {
        for dims in [&[6i64, 256][..], &[3, 7, 1024], &[70, 256]] {
            for (producer, reduce_op, consumer) in every_triple(4, 4, 7) {
                let case = Case { element_type, column_major: false, producer, reduce_op, consumer, seed: 7 };
                assert!(check(case, dims), "{case:?} on {dims:?} is not one loop");
            }
        }
    }
}

/// `(a, b, c)` for every `a < x`, `b < y`, `c < z`.
fn every_triple(x: usize, y: usize, z: usize) -> impl Iterator<Item = (usize, usize, usize)> {
    (0..x).flat_map(move |a| (0..y).flat_map(move |b| (0..z).map(move |c| (a, b, c))))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// `consumer(p, reduce(p))` with `p = producer(x)`, the reduce along the row and broadcast
    /// back: one loop when the row length and layout allow, and always the unfused bits.
    #[test]
    fn row_reductions_fused_equal_unfused(
        element_type in prop::sample::select(vec![ElementType::F32, ElementType::F64, ElementType::S32]),
        outer in prop::collection::vec(1i64..=3, 1..=2),
        row in prop::sample::select(vec![100i64, 255, 256, 257, 700, 1024, 1500, 2049]),
        column_major in any::<bool>(),
        producer in 0usize..4,
        reduce_op in 0usize..4,
        consumer in 0usize..7,
        seed in any::<u32>(),
    ) {
        let mut dims = outer.clone();
        dims.push(row);
        let case = Case { element_type, column_major, producer, reduce_op, consumer, seed };
        let one_loop = check(case, &dims);
        // Element-wise ops keep their operand's layout: a column-major x makes the reduced
        // operand column-major too, whose own reduce walks another order (unless the row is
        // its only dimension longer than 1).
        let row_minor = !column_major || outer.iter().all(|&d| d == 1);
        let row_fused = (256..=16384).contains(&row) && row_minor;
        prop_assert_eq!(one_loop, row_fused, "{:?} on {:?}", case, dims);
    }
}
