//! Precision configs and preferred element types on `dot_with` and `dot_general_with`: XLA's
//! result types, its HLO attributes, and values as XLA's CPU backend computes them (the
//! operands converted to a wider preferred type first; a narrower one computes in the
//! operands' type and converts the result), fused and unfused, operands in any layout.

use lazy_xla::half::{bf16, f16};
use lazy_xla::*;
use proptest::prelude::*;

fn highest() -> PrecisionConfig {
    PrecisionConfig { operand_precision: vec![Precision::Highest, Precision::Highest] }
}

/// `dot_with(x, w)` over parameters of the two shapes, run fused and unfused (equal bit for
/// bit), with `preferred`.
fn run_dot(x: &Literal, w: &Literal, preferred: Option<ElementType>) -> Literal {
    let b = XlaBuilder::new("dot");
    let (p, q) = (b.parameter(0, x.shape(), "x"), b.parameter(1, w.shape(), "w"));
    let computation = b.build(dot_with(p, q, Some(&highest()), preferred)).expect("a valid dot");
    let fused =
        computation.compile(&CompileOptions::default()).and_then(|e| e.execute(&[x, w])).expect("runs");
    let unfused =
        computation.compile(&CompileOptions::unfused()).and_then(|e| e.execute(&[x, w])).expect("runs");
    assert_eq!(fused.to_string(), unfused.to_string(), "fused and unfused differ");
    fused
}

#[test]
fn int8_products_accumulate_in_the_preferred_type() -> Result<()> {
    let x = Literal::from_vec(&shape!(s8[1, 200]), vec![100i8; 200])?;
    let w = Literal::from_vec(&shape!(s8[200, 1]), vec![100i8; 200])?;
    assert_eq!(run_dot(&x, &w, Some(ElementType::S32)).to_vec::<i32>()?, vec![2_000_000]);
    // Without it, an s8 accumulator wraps: 2,000,000 mod 256 is 128, as s8 -128 (XLA's too).
    assert_eq!(run_dot(&x, &w, None).to_vec::<i8>()?, vec![-128]);
    // u8 · s8: the inferred type is s8, the operands widen to s32 with their values.
    let u = Literal::from_vec(&shape!(u8[1, 3]), vec![200u8, 255, 1])?;
    let s = Literal::from_vec(&shape!(s8[3, 1]), vec![-128i8, 127, -1])?;
    assert_eq!(run_dot(&u, &s, Some(ElementType::S32)).to_vec::<i32>()?, vec![200 * -128 + 255 * 127 - 1]);
    Ok(())
}

#[test]
fn half_products_sum_in_f32_and_round_once() -> Result<()> {
    let mut xs = vec![bf16::from_f32(1.0)];
    xs.extend(std::iter::repeat_n(bf16::from_f32(1.0 / 512.0), 256));
    let x = Literal::from_vec(&shape!(bf16[1, 257]), xs)?;
    let w = Literal::from_vec(&shape!(bf16[257, 1]), vec![bf16::from_f32(1.0); 257])?;
    assert_eq!(run_dot(&x, &w, Some(ElementType::F32)).to_vec::<f32>()?, vec![1.5]);
    assert_eq!(run_dot(&x, &w, None).to_vec::<bf16>()?, vec![bf16::from_f32(1.5)]);
    let h = Literal::from_vec(&shape!(f16[1, 2]), vec![f16::from_f32(65504.0), f16::from_f32(65504.0)])?;
    let ones = Literal::from_vec(&shape!(f16[2, 1]), vec![f16::ONE; 2])?;
    // In f32 the sum is finite; rounded to f16 it overflows.
    assert_eq!(run_dot(&h, &ones, Some(ElementType::F32)).to_vec::<f32>()?, vec![131008.0]);
    assert_eq!(run_dot(&h, &ones, None).to_vec::<f16>()?, vec![f16::INFINITY]);
    Ok(())
}

#[test]
fn wider_preferred_types_convert_the_operands_first_narrower_ones_the_result() -> Result<()> {
    // s32 → f32 is "higher": each operand is rounded to f32 before the product.
    let x = Literal::from_vec(&shape!(s32[1, 1]), vec![(1 << 24) + 1])?;
    let one = Literal::from_vec(&shape!(s32[1, 1]), vec![1])?;
    assert_eq!(run_dot(&x, &one, Some(ElementType::F32)).to_vec::<f32>()?, vec![16_777_216.0]);
    // s32 → s8 is narrower: s32 products, then a wrapping convert.
    let y = Literal::from_vec(&shape!(s32[1, 2]), vec![200, 100])?;
    let two = Literal::from_vec(&shape!(s32[2, 1]), vec![1, 1])?;
    assert_eq!(run_dot(&y, &two, Some(ElementType::S8)).to_vec::<i8>()?, vec![300i32 as i8]);
    // f32 → pred: nonzero; f32 → s32 saturates; NaN → 0.
    let f = Literal::from_vec(&shape!(f32[3, 1]), vec![0.5f32, 0.0, 3e10])?;
    let g = Literal::from_vec(&shape!(f32[1, 1]), vec![1.0f32])?;
    assert_eq!(run_dot(&f, &g, Some(ElementType::Pred)).to_vec::<bool>()?, vec![true, false, true]);
    assert_eq!(run_dot(&f, &g, Some(ElementType::S32)).to_vec::<i32>()?, vec![0, 0, i32::MAX]);
    let nan = Literal::from_vec(&shape!(f32[1, 1]), vec![f32::NAN])?;
    assert_eq!(run_dot(&nan, &g, Some(ElementType::S32)).to_vec::<i32>()?, vec![0]);
    Ok(())
}

/// An `f64` dot with a narrower half type preferred is summed in `f64` and converted as XLA's
/// CPU backend converts an `f64`: to `f32`, then to the half type (asked jaxlib 0.6.0: `1 +
/// 2⁻¹¹ + 2⁻³⁰` gives 1 in `f16`, the tiny term lost in `f32`; with `2⁻²⁰` it survives to
/// round up).
#[test]
fn f64_products_narrowed_to_half_types_round_through_f32() -> Result<()> {
    let sum = |terms: Vec<f64>, preferred| -> Result<Literal> {
        let n = terms.len() as i64;
        let x = Literal::from_vec(&Shape::new(ElementType::F64, &[1, n]), terms)?;
        let ones = Literal::from_vec(&Shape::new(ElementType::F64, &[n, 1]), vec![1.0; n as usize])?;
        Ok(run_dot(&x, &ones, Some(preferred)))
    };
    let f16_of = |tiny: f64| -> Result<f64> {
        Ok(sum(vec![1.0, 2f64.powi(-11), tiny], ElementType::F16)?.to_vec::<f16>()?[0].to_f64())
    };
    assert_eq!(f16_of(2f64.powi(-30))?, 1.0);
    assert_eq!(f16_of(2f64.powi(-20))?, 1.0 + 2f64.powi(-10));
    let bf16_of = |tiny: f64| -> Result<f64> {
        Ok(sum(vec![1.0, 2f64.powi(-8), tiny], ElementType::Bf16)?.to_vec::<bf16>()?[0].to_f64())
    };
    assert_eq!(bf16_of(2f64.powi(-30))?, 1.0);
    assert_eq!(bf16_of(2f64.powi(-20))?, 1.0 + 2f64.powi(-7));
    Ok(())
}

#[test]
fn hlo_text_carries_the_precision_and_the_result_type() -> Result<()> {
    let b = XlaBuilder::new("text");
    let x = b.parameter(0, &shape!(bf16[2, 3]), "x");
    let w = b.parameter(1, &shape!(bf16[3, 4]), "w");
    let one = PrecisionConfig { operand_precision: vec![Precision::High] };
    let root = tuple(
        &b,
        &[
            dot_with(x, w, Some(&highest()), Some(ElementType::F32)),
            dot_with(x, w, Some(&one), None),
            dot_with(x, w, Some(&PrecisionConfig::default()), None),
        ],
    );
    let text = b.build(root)?.to_hlo_text();
    let lines: Vec<&str> = text.lines().filter(|l| l.contains(" dot(")).collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].contains("f32[2,4]{1,0} dot(x.1, w.2), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,highest}"), "{text}");
    assert!(lines[1].ends_with("rhs_contracting_dims={0}, operand_precision={high,default}"), "{text}");
    assert!(lines[2].ends_with("rhs_contracting_dims={0}"), "{text}");
    Ok(())
}

#[test]
fn shape_errors_name_the_operands_own_types() {
    let b = XlaBuilder::new("bad");
    let x = b.parameter(0, &shape!(s8[2, 3]), "x");
    let w = b.parameter(1, &shape!(s8[4, 5]), "w");
    let error = b.build(dot_with(x, w, None, Some(ElementType::S32))).expect_err("sizes differ").to_string();
    assert!(error.starts_with("Cannot infer shape for dot operation: s8[2,3] <dot> s8[4,5]."), "{error}");
}

/// A literal of the integer type `t` from values that fit it.
fn int_literal(t: ElementType, shape: &Shape, values: &[i64]) -> Literal {
    macro_rules! of {
        ($($e:ident => $r:ty),*) => {
            match t {
                $(ElementType::$e => Literal::from_vec(shape, values.iter().map(|&v| v as $r).collect()),)*
                other => panic!("not an integer type: {other:?}"),
            }
        };
    }
    of!(S8 => i8, S16 => i16, S32 => i32, S64 => i64, U8 => u8, U16 => u16, U32 => u32, U64 => u64)
        .expect("fits")
}

/// The values of an integer literal, and `v` wrapped as the integer type `t` would hold it.
fn int_values(literal: &Literal) -> Vec<i128> {
    macro_rules! of {
        ($($e:ident => $r:ty),*) => {
            match literal.element_type() {
                $(ElementType::$e => literal.to_vec::<$r>().expect("typed").into_iter().map(i128::from).collect(),)*
                other => panic!("not an integer type: {other:?}"),
            }
        };
    }
    of!(S8 => i8, S16 => i16, S32 => i32, S64 => i64, U8 => u8, U16 => u16, U32 => u32, U64 => u64)
}

fn wrap(t: ElementType, v: i128) -> i128 {
    let bits = 8 * t.byte_size() as u32;
    let modulus = 1i128 << bits;
    let low = v.rem_euclid(modulus);
    if t.is_signed_integral() && low >= modulus / 2 {
        low - modulus
    } else {
        low
    }
}

/// XLA's type order among the integer types: wider first, then signed.
fn higher(a: ElementType, b: ElementType) -> ElementType {
    let rank = |t: ElementType| (t.byte_size(), t.is_signed_integral());
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

const INTEGERS: [ElementType; 8] = {
    use ElementType::*;
    [S8, S16, S32, S64, U8, U16, U32, U64]
};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Integer dots of every type pair and preferred type: the operands converted (wrapping)
    /// to the type computed in, exact sums wrapped into it, then converted to the result.
    #[test]
    fn integer_dots_wrap_as_xlas_accumulators(
        (m, k, n) in (1usize..4, 0usize..40, 1usize..4),
        types in (0usize..8, 0usize..8, proptest::option::of(0usize..8)),
        seed in any::<u64>(),
        column_major in any::<(bool, bool)>(),
    ) {
        let (lt, rt, preferred) = (INTEGERS[types.0], INTEGERS[types.1], types.2.map(|i| INTEGERS[i]));
        let mut state = seed | 1;
        let mut next = |t: ElementType| {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17;
            let bits = 8 * t.byte_size() as u32;
            let raw = (state >> (64 - bits.min(63))) as i64;
            wrap(t, raw as i128) as i64
        };
        let layout = |cm: bool| if cm { "{0,1}" } else { "{1,0}" };
        let lhs_shape: Shape = format!("{}[{m},{k}]{}", lt.primitive_type_name().to_lowercase(), layout(column_major.0)).parse().unwrap();
        let rhs_shape: Shape = format!("{}[{k},{n}]{}", rt.primitive_type_name().to_lowercase(), layout(column_major.1)).parse().unwrap();
        let a: Vec<i64> = (0..m * k).map(|_| next(lt)).collect();
        let b: Vec<i64> = (0..k * n).map(|_| next(rt)).collect();
        let out = run_dot(&int_literal(lt, &lhs_shape, &a), &int_literal(rt, &rhs_shape, &b), preferred);
        let inferred = higher(lt, rt);
        let result = preferred.unwrap_or(inferred);
        prop_assert_eq!(out.element_type(), result);
        let computing = if higher(inferred, result) == result { result } else { inferred };
        let expected: Vec<i128> = (0..m * n)
            .map(|e| {
                let (i, j) = (e / n, e % n);
                // Modulo 2¹²⁸, which keeps every lower bit exact.
                let sum = (0..k).fold(0i128, |sum, p| {
                    let product = wrap(computing, a[i * k + p] as i128).wrapping_mul(wrap(computing, b[p * n + j] as i128));
                    sum.wrapping_add(product)
                });
                wrap(result, wrap(computing, sum))
            })
            .collect();
        prop_assert_eq!(int_values(&out), expected, "{:?}·{:?} → {:?}", lt, rt, preferred);
    }

    /// Half and single floats into f32 or f64: within a few roundings of the f64 sum of the
    /// products (each operand exact in the accumulator's type).
    #[test]
    fn float_dots_accumulate_in_the_preferred_type(
        (m, k, n) in (1usize..5, 1usize..64, 1usize..5),
        pair in 0usize..3,
        to_f64 in any::<bool>(),
        seed in any::<u32>(),
    ) {
        let value = |i: usize| ((i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) >> 20) as f32 / 2048.0 - 1.0;
        let a: Vec<f32> = (0..m * k).map(value).collect();
        let b: Vec<f32> = (0..k * n).map(|i| value(i + 7919)).collect();
        let (x, w, a, b) = match pair {
            0 => {
                let (a, b): (Vec<bf16>, Vec<bf16>) = (a.iter().map(|&v| bf16::from_f32(v)).collect(), b.iter().map(|&v| bf16::from_f32(v)).collect());
                (Literal::from_vec(&format!("bf16[{m},{k}]").parse().unwrap(), a.clone()).unwrap(),
                 Literal::from_vec(&format!("bf16[{k},{n}]{{0,1}}").parse().unwrap(), b.clone()).unwrap(),
                 a.iter().map(|v| f64::from(v.to_f32())).collect::<Vec<_>>(), b.iter().map(|v| f64::from(v.to_f32())).collect::<Vec<_>>())
            }
            1 => {
                let (a, b): (Vec<f16>, Vec<f16>) = (a.iter().map(|&v| f16::from_f32(v)).collect(), b.iter().map(|&v| f16::from_f32(v)).collect());
                (Literal::from_vec(&format!("f16[{m},{k}]{{0,1}}").parse().unwrap(), a.clone()).unwrap(),
                 Literal::from_vec(&format!("f16[{k},{n}]").parse().unwrap(), b.clone()).unwrap(),
                 a.iter().map(|v| f64::from(v.to_f32())).collect::<Vec<_>>(), b.iter().map(|v| f64::from(v.to_f32())).collect::<Vec<_>>())
            }
            _ => (Literal::from_vec(&format!("f32[{m},{k}]").parse().unwrap(), a.clone()).unwrap(),
                  Literal::from_vec(&format!("f32[{k},{n}]").parse().unwrap(), b.clone()).unwrap(),
                  a.iter().map(|&v| f64::from(v)).collect::<Vec<_>>(), b.iter().map(|&v| f64::from(v)).collect::<Vec<_>>()),
        };
        let preferred = if to_f64 { ElementType::F64 } else { ElementType::F32 };
        let out = run_dot(&x, &w, Some(preferred));
        let got: Vec<f64> = if to_f64 { out.to_vec::<f64>().unwrap() } else { out.to_vec::<f32>().unwrap().into_iter().map(f64::from).collect() };
        for (e, g) in got.iter().enumerate() {
            let (i, j) = (e / n, e % n);
            let exact: f64 = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
            let magnitude: f64 = (0..k).map(|p| (a[i * k + p] * b[p * n + j]).abs()).sum();
            let epsilon = if to_f64 { f64::EPSILON } else { f64::from(f32::EPSILON) };
            prop_assert!((g - exact).abs() <= k as f64 * epsilon * magnitude + 1e-300, "{g} vs {exact}");
        }
    }
}
