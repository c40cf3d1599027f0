//! The element-wise ops of the control issue beyond the first wave's: `clz`,
//! `population_count`, `erf`, `tan`, `cbrt` and `reduce_precision`: XLA's type rules and
//! sentences, HLO text, and values against independent references (std's bit counts, the
//! `half` crate's roundings), fused and unfused, in any layout.

use lazy_xla::half::{bf16, f16};
use lazy_xla::*;
use proptest::prelude::*;

/// `f` of one parameter of `shape`, run on `x` fused and unfused; both results must agree.
fn run_both(shape: &Shape, x: &Literal, f: impl for<'b> Fn(XlaOp<'b>) -> XlaOp<'b>) -> Result<Literal> {
    let b = XlaBuilder::new("extras");
    let p = b.parameter(0, shape, "x");
    let computation = b.build(f(p))?;
    let fused = computation.compile(&CompileOptions::default())?.execute(&[x])?;
    let unfused = computation.compile(&CompileOptions::unfused())?.execute(&[x])?;
    assert_eq!(fused.to_string(), unfused.to_string(), "fused and unfused differ");
    Ok(fused)
}

/// The sentence of the error `f` gives on a parameter of `shape`.
fn error_of(shape: Shape, f: impl for<'b> Fn(XlaOp<'b>) -> XlaOp<'b>) -> String {
    let b = XlaBuilder::new("bad");
    let p = b.parameter(0, &shape, "x");
    b.build(f(p)).expect_err("the op should be rejected").to_string()
}

/// An op of one operand.
type UnaryFunction = fn(XlaOp<'_>) -> XlaOp<'_>;

#[test]
fn type_rules_and_sentences_are_xlas() {
    let cases: [(Shape, UnaryFunction, &str); 8] = [
        (shape!(f32[2]), clz, "Expected an integral element type in argument to Clz operation; got F32."),
        (
            shape!(pred[2]),
            population_count,
            "Expected an integral element type in argument to PopulationCount operation; got PRED.",
        ),
        (shape!(s32[2]), erf, "Expected element type in shape to be floating for erf operation; got S32."),
        (
            shape!(u8[2]),
            tan,
            "Expected element type in shape to be floating or complex for tan operation; got U8.",
        ),
        (
            shape!(s64[2]),
            cbrt,
            "Expected element type in shape to be floating or complex for cbrt operation; got S64.",
        ),
        (
            shape!(s32[2]),
            |x| reduce_precision(x, 8, 7),
            "Expected element type in shape to be floating point for ReducePrecision operation; got S32.",
        ),
        (shape!(f32[2]), |x| reduce_precision(x, 0, 7), "Expected exponent_bits >= 1; got 0."),
        (shape!(f32[2]), |x| reduce_precision(x, 5, -1), "Expected non-negative mantissa_bits; got -1."),
    ];
    for (shape, f, sentence) in cases {
        let message = error_of(shape, f);
        assert!(message.starts_with(sentence), "{message}");
    }
    // The results keep the operand's shape, layout included.
    let b = XlaBuilder::new("ok");
    let x = b.parameter(0, &shape!(u16[2, 3]{0, 1}), "x");
    assert_eq!(b.get_shape(clz(x)).unwrap(), shape!(u16[2, 3]{0, 1}));
    let y = b.parameter(1, &shape!(bf16[4]), "y");
    assert_eq!(b.get_shape(reduce_precision(y, 5, 2)).unwrap(), shape!(bf16[4]));
}

#[test]
fn hlo_text_names_and_attributes_are_xlas() -> Result<()> {
    let b = XlaBuilder::new("text");
    let x = b.parameter(0, &shape!(f32[3]), "x");
    let n = b.parameter(1, &shape!(s32[3]), "n");
    let root = tuple(&b, &[erf(tan(cbrt(x))), reduce_precision(x, 5, 10), population_count(clz(n))]);
    let text = b.build(root)?.to_hlo_text();
    for expected in [
        "f32[3]{0} cbrt(x.1)",
        "f32[3]{0} tan(cbrt.",
        "f32[3]{0} erf(tan.",
        "f32[3]{0} reduce-precision(x.1), exponent_bits=5, mantissa_bits=10",
        "s32[3]{0} count-leading-zeros(n.2)",
        "s32[3]{0} popcnt(count-leading-zeros.",
    ] {
        assert!(text.contains(expected), "{expected} not in\n{text}");
    }
    Ok(())
}

/// Bit counts of one integer type against std's, fused (in a chain) and unfused.
macro_rules! bit_count_tests {
    ($($name:ident: $t:ty => $type_name:literal;)*) => {$(
        proptest! {
            #![proptest_config(ProptestConfig::with_cases(16))]
            #[test]
            fn $name(values in proptest::collection::vec(any::<$t>(), 1..40), column_major in any::<bool>()) {
                let layout = if column_major { "{0,1}" } else { "{1,0}" };
                let shape: Shape = format!("{}[{},1]{layout}", $type_name, values.len()).parse().unwrap();
                let x = Literal::from_vec(&shape, values.clone()).unwrap();
                let out = run_both(&shape, &x, |p| tuple(p.builder(), &[clz(p), population_count(p), clz(p) + population_count(p)])).unwrap();
                let counts = |i: usize| out.tuple_element(i).unwrap().to_vec::<$t>().unwrap();
                let clz_expected: Vec<$t> = values.iter().map(|v| v.leading_zeros() as $t).collect();
                let popcnt_expected: Vec<$t> = values.iter().map(|v| v.count_ones() as $t).collect();
                prop_assert_eq!(counts(0), clz_expected.clone());
                prop_assert_eq!(counts(1), popcnt_expected.clone());
                let sums: Vec<$t> = clz_expected.iter().zip(&popcnt_expected).map(|(a, b)| a.wrapping_add(*b)).collect();
                prop_assert_eq!(counts(2), sums);
            }
        }
    )*};
}

bit_count_tests! {
    bit_counts_s8: i8 => "s8";
    bit_counts_s16: i16 => "s16";
    bit_counts_s32: i32 => "s32";
    bit_counts_s64: i64 => "s64";
    bit_counts_u8: u8 => "u8";
    bit_counts_u16: u16 => "u16";
    bit_counts_u32: u32 => "u32";
    bit_counts_u64: u64 => "u64";
}

#[test]
fn bit_counts_at_the_edges() -> Result<()> {
    let x = Literal::vec1(&[0i32, -1, 1, i32::MIN, i32::MAX]);
    let out = run_both(x.shape(), &x, |p| tuple(p.builder(), &[clz(p), population_count(p)]))?;
    assert_eq!(out.tuple_element(0)?.to_vec::<i32>()?, vec![32, 0, 31, 0, 1]);
    assert_eq!(out.tuple_element(1)?.to_vec::<i32>()?, vec![0, 32, 1, 1, 31]);
    Ok(())
}

/// `f32` reduced to bfloat16's precision, as `half` rounds `f32` to `bf16` (to nearest, ties
/// to even; the same exponent range, so only NaNs differ in their payload).
fn f32_as_bf16(v: f32) -> f32 {
    bf16::from_f32(v).to_f32()
}

/// `f32` reduced to IEEE half's precision: `half`'s rounding where the result is a normal
/// half or beyond; below, XLA rounds to 10 mantissa bits as if the exponent went on, then
/// makes what is under the smallest normal ±0 (no denormals).
fn f32_as_f16(v: f32) -> f32 {
    let smallest_normal = f16::MIN_POSITIVE.to_f32();
    let a = v.abs();
    if a < smallest_normal - smallest_normal / 4096.0 {
        0.0f32.copysign(v)
    } else if a < smallest_normal {
        smallest_normal.copysign(v)
    } else {
        f16::from_f32(v).to_f32()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn reduce_precision_of_f32_rounds_as_the_narrower_types_do(bits in proptest::collection::vec(any::<u32>(), 1..64)) {
        let values: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b)).filter(|v| !v.is_nan()).collect();
        prop_assume!(!values.is_empty());
        let x = Literal::vec1(&values);
        let out = run_both(x.shape(), &x, |p| tuple(p.builder(), &[reduce_precision(p, 8, 7), reduce_precision(p, 5, 10)])).unwrap();
        let got_bf16 = out.tuple_element(0).unwrap().to_vec::<f32>().unwrap();
        let got_f16 = out.tuple_element(1).unwrap().to_vec::<f32>().unwrap();
        for ((&v, &b), &h) in values.iter().zip(&got_bf16).zip(&got_f16) {
            prop_assert_eq!(b.to_bits(), f32_as_bf16(v).to_bits(), "bf16 precision of {:e}", v);
            prop_assert_eq!(h.to_bits(), f32_as_f16(v).to_bits(), "f16 precision of {:e}", v);
        }
    }
}

#[test]
fn reduce_precision_edge_values() -> Result<()> {
    let nan = f32::from_bits(0x7fc0_0001);
    let x = Literal::vec1(&[
        nan,
        f32::INFINITY,
        -0.0,
        1.0 + 1.0 / 256.0, // a tie at 7 mantissa bits: to even (1.0)
        1.0 + 3.0 / 256.0, // a tie: to even (1 + 4/256)
        f32::MAX,          // rounds up into the exponent: ∞
        65520.0,           // beyond f16's range after rounding: ∞
        -1e-5,             // below f16's normals: -0
    ]);
    let out = run_both(x.shape(), &x, |p| {
        tuple(
            p.builder(),
            &[reduce_precision(p, 8, 7), reduce_precision(p, 5, 10), reduce_precision(p, 5, 0)],
        )
    })?;
    let bf = out.tuple_element(0)?.to_vec::<f32>()?;
    let h = out.tuple_element(1)?.to_vec::<f32>()?;
    let no_mantissa = out.tuple_element(2)?.to_vec::<f32>()?;
    // A NaN keeps its bits where mantissa bits remain; with none it becomes +∞.
    assert_eq!(bf[0].to_bits(), nan.to_bits());
    assert_eq!(no_mantissa[0], f32::INFINITY);
    assert_eq!(&bf[1..6], &[f32::INFINITY, -0.0, 1.0, 1.0 + 4.0 / 256.0, f32::INFINITY]);
    assert!(bf[2].is_sign_negative());
    assert_eq!(&h[6..], &[f32::INFINITY, -0.0]);
    assert!(h[7].is_sign_negative());
    // Every type reduces on its own bits: bf16 to 2 mantissa bits, f64 to f32's precision.
    let y = Literal::vec1(&[bf16::from_f32(1.375), bf16::from_f32(1.625)]);
    let out = run_both(y.shape(), &y, |p| reduce_precision(p, 8, 2))?;
    assert_eq!(out.to_vec::<bf16>()?, vec![bf16::from_f32(1.5), bf16::from_f32(1.5)]);
    let z = Literal::vec1(&[0.1f64, 1e300, -1e-300]);
    let out = run_both(z.shape(), &z, |p| reduce_precision(p, 8, 23))?;
    assert_eq!(out.to_vec::<f64>()?, vec![f64::from(0.1f32), f64::INFINITY, -0.0]);
    Ok(())
}

#[test]
fn erf_tan_cbrt_fuse_and_keep_xlas_edge_values() -> Result<()> {
    let x = Literal::vec1(&[0.0f32, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 8.0, -27.0, 1e-3]);
    let out = run_both(x.shape(), &x, |p| tuple(p.builder(), &[erf(p), tan(p), cbrt(p)]))?;
    let erf_x = out.tuple_element(0)?.to_vec::<f32>()?;
    let tan_x = out.tuple_element(1)?.to_vec::<f32>()?;
    let cbrt_x = out.tuple_element(2)?.to_vec::<f32>()?;
    assert_eq!(&erf_x[..4], &[0.0, -0.0, 1.0, -1.0]);
    assert!(erf_x[1].is_sign_negative() && erf_x[4].is_nan());
    assert_eq!(&tan_x[..2], &[0.0, -0.0]);
    assert!(tan_x[1].is_sign_negative() && tan_x[2].is_nan() && tan_x[3].is_nan() && tan_x[4].is_nan());
    assert_eq!(&cbrt_x[..4], &[0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY]);
    assert_eq!(&cbrt_x[5..7], &[2.0, -3.0]);
    assert!(cbrt_x[1].is_sign_negative() && cbrt_x[4].is_nan());
    // In a fused chain over a column-major operand: GELU's exact form, 0.5·x·(1 + erf(x/√2)).
    let shape = shape!(f32[3, 2]{0, 1});
    let values = vec![-2.0f32, -0.5, 0.0, 0.5, 1.0, 3.0];
    let x = Literal::from_vec(&shape, values.clone())?;
    let out = run_both(&shape, &x, |p| {
        let b = p.builder();
        b.constant_r0(0.5f32)
            * p
            * (b.constant_r0(1.0f32) + erf(p * b.constant_r0(std::f32::consts::FRAC_1_SQRT_2)))
    })?;
    let erf_half_sqrt2 = [
        -0.9544997361036416f64,
        -0.3829249225480262,
        0.0,
        0.3829249225480262,
        0.6826894921370859,
        0.9973002039367398,
    ];
    for ((&v, e), got) in values.iter().zip(erf_half_sqrt2).zip(out.to_vec::<f32>()?) {
        let expected = 0.5 * f64::from(v) * (1.0 + e);
        assert!(
            (f64::from(got) - expected).abs() <= 1e-6 * expected.abs().max(1.0),
            "gelu({v}) = {got}, expected {expected}"
        );
    }
    Ok(())
}
