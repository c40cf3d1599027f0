//! Control flow and the ops around it, in five small programs:
//!
//! 1. an argmax classifier: `reduce_variadic` over the logits and their indices at once;
//! 2. Newton's method for square roots, as a `while_loop` that runs until it converges;
//! 3. a `conditional` that rescales a vector only when its norm is too large;
//! 4. sorting scores with their labels, and the `top_k` of them, as a beam search does;
//! 5. a dropout mask from `rng_bit_generator`: the same seed gives the same mask.
//!
//! Each result is checked against a plain Rust computation. Run with
//! `cargo run --example control_flow`.

use lazy_xla::*;

#[macro_use]
#[path = "common/text.rs"]
mod text;
use text::heading;

/// Compiles and runs `computation`, fused.
fn run(computation: &XlaComputation, arguments: &[&Literal]) -> Result<Literal> {
    computation.compile(&CompileOptions::default())?.execute(arguments)
}

/// A scalar computation of two parameters of `element_type`.
fn binary(
    name: &str,
    element_type: ElementType,
    f: impl for<'b> Fn(XlaOp<'b>, XlaOp<'b>) -> XlaOp<'b>,
) -> Result<XlaComputation> {
    let b = XlaBuilder::new(name);
    let s = Shape::scalar(element_type);
    let (x, y) = (b.parameter(0, &s, "x"), b.parameter(1, &s, "y"));
    b.build(f(x, y))
}

// ---- 1. Argmax ---------------------------------------------------------------------------------

/// jax's argmax reducer over (value, index) pairs: the greater value wins (a NaN wins
/// everything), and of equal values the lower index.
fn argmax_reducer() -> Result<XlaComputation> {
    let r = XlaBuilder::new("argmax");
    let (f, s) = (shape!(f32[]), shape!(s32[]));
    let (av, ai) = (r.parameter(0, &f, "av"), r.parameter(1, &s, "ai"));
    let (bv, bi) = (r.parameter(2, &f, "bv"), r.parameter(3, &s, "bi"));
    let pick_a = or(gt(av, bv, &[]), ne(av, av, &[]), &[]);
    let tie = and(eq(av, bv, &[]), lt(ai, bi, &[]), &[]);
    r.build(tuple(&r, &[select(pick_a, av, bv), select(or(pick_a, tie, &[]), ai, bi)]))
}

fn argmax_classifier(out: &mut String) -> Result<()> {
    heading(out, "1. An argmax classifier");
    let logits = [[0.1f32, 2.5, -1.0, 2.5], [3.0, 0.0, 0.5, -2.0], [-1.0, -0.5, -3.0, -0.25]];
    let b = XlaBuilder::new("classify");
    let x = b.parameter(0, &shape!(f32[3, 4]), "logits");
    let classes = iota(&b, &shape!(s32[3, 4]), 1);
    let inits = [b.constant_r0(f32::NEG_INFINITY), b.constant_r0(0i32)];
    let best = reduce_variadic(&b, &[x, classes], &inits, &argmax_reducer()?, &[1]);
    let computation = b.build(get_tuple_element(best, 1))?;
    let values = Literal::from_vec(&shape!(f32[3, 4]), logits.iter().flatten().copied().collect())?;
    let predicted = run(&computation, &[&values])?.to_vec::<i32>()?;
    let expected: Vec<i32> = logits
        .iter()
        .map(|row| {
            let top = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            row.iter().position(|&v| v == top).unwrap_or(0) as i32
        })
        .collect();
    say!(out, "logits {logits:?}");
    say!(out, "predicted classes {predicted:?} (a tie goes to the lower class)");
    if predicted != expected {
        return Err(Error::InvalidArgument(format!("argmax gave {predicted:?}, expected {expected:?}")));
    }
    Ok(())
}

// ---- 2. Newton's method in a loop --------------------------------------------------------------

/// One Newton step for `x² = a` on the state `(x, a, …)`: `(x + a / x) / 2`.
fn step<'b>(b: &'b XlaBuilder, t: XlaOp<'b>) -> XlaOp<'b> {
    let (x, a) = (get_tuple_element(t, 0), get_tuple_element(t, 1));
    mul(b.constant_r0(0.5f32), x + a / x, &[])
}

fn newton_square_roots(out: &mut String) -> Result<()> {
    heading(out, "2. Newton's method until it converges");
    // The state: (estimates, targets, iteration). Continue while some estimate moves by more
    // than 1e-6 relative and fewer than 50 iterations ran.
    let state = Shape::tuple(&[shape!(f32[4]), shape!(f32[4]), shape!(s32[])]);
    let condition = {
        let c = XlaBuilder::new("moving");
        let t = c.parameter(0, &state, "t");
        let x = get_tuple_element(t, 0);
        let change = abs(step(&c, t) - x);
        let max_of = binary("max", ElementType::F32, |p, q| max(p, q, &[]))?;
        let largest = reduce(div(change, x, &[]), c.constant_r0(0.0f32), &max_of, &[0]);
        let moving = gt(largest, c.constant_r0(1e-6f32), &[]);
        c.build(and(moving, lt(get_tuple_element(t, 2), c.constant_r0(50i32), &[]), &[]))?
    };
    let body = {
        let d = XlaBuilder::new("newton_step");
        let t = d.parameter(0, &state, "t");
        let count = get_tuple_element(t, 2) + d.constant_r0(1i32);
        d.build(tuple(&d, &[step(&d, t), get_tuple_element(t, 1), count]))?
    };
    let b = XlaBuilder::new("square_roots");
    let a = b.parameter(0, &shape!(f32[4]), "a");
    let init = tuple(&b, &[a, a, b.constant_r0(0i32)]);
    let computation = b.build(while_loop(&condition, &body, init))?;
    let targets = [2.0f32, 9.0, 0.25, 1e6];
    let result = run(&computation, &[&Literal::vec1(&targets)])?;
    let roots = result.tuple_element(0)?.to_vec::<f32>()?;
    let iterations = result.tuple_element(2)?.to_vec::<i32>()?[0];
    say!(out, "sqrt of {targets:?} = {roots:?} after {iterations} iterations");
    for (root, target) in roots.iter().zip(targets) {
        if (root - target.sqrt()).abs() > 1e-5 * target.sqrt() {
            return Err(Error::InvalidArgument(format!("Newton gave {root} for sqrt({target})")));
        }
    }
    Ok(())
}

// ---- 3. A conditional --------------------------------------------------------------------------

fn clip_by_norm(out: &mut String) -> Result<()> {
    heading(out, "3. Rescale only when the norm is too large");
    let v3 = shape!(f32[3]);
    let rescale = {
        let r = XlaBuilder::new("rescale");
        let v = r.parameter(0, &v3, "v");
        let sum = binary("sum", ElementType::F32, |p, q| p + q)?;
        let norm = sqrt(reduce(v * v, r.constant_r0(0.0f32), &sum, &[0]));
        r.build(div(v, norm, &[]))?
    };
    let keep = {
        let k = XlaBuilder::new("keep");
        let v = k.parameter(0, &v3, "v");
        k.build(v)?
    };
    let b = XlaBuilder::new("clip");
    let v = b.parameter(0, &v3, "v");
    let sum = binary("sum", ElementType::F32, |p, q| p + q)?;
    let too_large = gt(reduce(v * v, b.constant_r0(0.0f32), &sum, &[0]), b.constant_r0(1.0f32), &[]);
    let computation = b.build(conditional(too_large, v, &rescale, v, &keep))?;
    for vector in [[3.0f32, 0.0, 4.0], [0.1, 0.2, 0.3]] {
        let result = run(&computation, &[&Literal::vec1(&vector)])?.to_vec::<f32>()?;
        say!(out, "{vector:?} -> {result:?}");
        let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
        let expected: Vec<f32> = vector.iter().map(|v| if norm > 1.0 { v / norm } else { *v }).collect();
        if result.iter().zip(&expected).any(|(r, e)| (r - e).abs() > 1e-6) {
            return Err(Error::InvalidArgument(format!("clip gave {result:?}, expected {expected:?}")));
        }
    }
    Ok(())
}

// ---- 4. Sorting and top-k ----------------------------------------------------------------------

fn sort_and_top_k(out: &mut String) -> Result<()> {
    heading(out, "4. Sorting scores with their labels, and the top 3");
    let scores = [0.2f32, 0.9, 0.4, 0.9, 0.05, 0.7];
    let labels = [10i32, 11, 12, 13, 14, 15];
    // Descending by score; equal scores keep their order (a stable sort).
    let c = XlaBuilder::new("greater");
    let (a, bb) = (c.parameter(0, &shape!(f32[]), "a"), c.parameter(1, &shape!(f32[]), "b"));
    let _labels = (c.parameter(2, &shape!(s32[]), "la"), c.parameter(3, &shape!(s32[]), "lb"));
    let greater = c.build(gt(a, bb, &[]))?;
    let b = XlaBuilder::new("ranking");
    let s = b.parameter(0, &shape!(f32[6]), "scores");
    let l = b.parameter(1, &shape!(s32[6]), "labels");
    let computation = b.build(tuple(&b, &[sort(&[s, l], &greater, 0, true), top_k(s, 3, true)]))?;
    let result = run(&computation, &[&Literal::vec1(&scores), &Literal::vec1(&labels)])?;
    let sorted = result.tuple_element(0)?;
    let ranked = sorted.tuple_element(1)?.to_vec::<i32>()?;
    let best = result.tuple_element(1)?;
    let top_positions = best.tuple_element(1)?.to_vec::<i32>()?;
    say!(out, "labels by descending score: {ranked:?}");
    say!(out, "top 3 scores {:?} at positions {top_positions:?}", best.tuple_element(0)?.to_vec::<f32>()?);
    let mut expected: Vec<(f32, i32)> = scores.iter().copied().zip(labels).collect();
    expected.sort_by(|x, y| y.0.total_cmp(&x.0));
    if ranked != expected.iter().map(|p| p.1).collect::<Vec<_>>() || top_positions != [1, 3, 5] {
        return Err(Error::InvalidArgument("sorting gave another order".into()));
    }
    Ok(())
}

// ---- 5. A reproducible dropout mask ------------------------------------------------------------

fn dropout_mask(out: &mut String) -> Result<()> {
    heading(out, "5. A dropout mask from random bits");
    // Uniform floats in [0, 1) from the top 23 bits: 1.m as a float, minus 1.
    let b = XlaBuilder::new("dropout");
    let seed = b.parameter(0, &shape!(u64[2]), "seed");
    let x = b.parameter(1, &shape!(f32[2, 8]), "x");
    let generated = rng_bit_generator(RandomAlgorithm::Philox, seed, &shape!(u32[2, 8]));
    let bits = get_tuple_element(generated, 1);
    let mantissa = shift_right_logical(bits, b.constant_r0(9u32), &[]);
    let one_to_two = bitcast_convert_type(or(mantissa, b.constant_r0(0x3f80_0000u32), &[]), ElementType::F32);
    let uniform = one_to_two - b.constant_r0(1.0f32);
    let keep = ge(uniform, b.constant_r0(0.5f32), &[]);
    let dropped = select(keep, x * b.constant_r0(2.0f32), b.constant_r0(0.0f32));
    let computation = b.build(tuple(&b, &[dropped, get_tuple_element(generated, 0)]))?;
    let seed_value = Literal::vec1(&[42u64, 0]);
    let ones = Literal::from_vec(&shape!(f32[2, 8]), vec![1.0f32; 16])?;
    let first = run(&computation, &[&seed_value, &ones])?;
    let again = run(&computation, &[&seed_value, &ones])?;
    let mask = first.tuple_element(0)?.to_vec::<f32>()?;
    let kept = mask.iter().filter(|&&v| v == 2.0).count();
    say!(out, "mask {:?}", mask.iter().map(|&v| if v > 0.0 { 1 } else { 0 }).collect::<Vec<_>>());
    say!(out, "{kept} of 16 kept (scaled by 2); next state {:?}", first.tuple_element(1)?.to_vec::<u64>()?);
    if first != again || mask.iter().any(|&v| v != 0.0 && v != 2.0) {
        return Err(Error::InvalidArgument("the mask is not reproducible".into()));
    }
    say!(out, "the same seed gives the same mask");
    Ok(())
}

/// The tutorial's report.
pub fn tutorial() -> Result<String> {
    let mut out = String::new();
    say!(out, "Control flow, sorting and random bits in lazy-xla");
    argmax_classifier(&mut out)?;
    newton_square_roots(&mut out)?;
    clip_by_norm(&mut out)?;
    sort_and_top_k(&mut out)?;
    dropout_mask(&mut out)?;
    Ok(out)
}

fn main() -> Result<()> {
    print!("{}", tutorial()?);
    Ok(())
}
