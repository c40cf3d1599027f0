//! `round_nearest_even` (XLA's RoundNearestEven, `jnp.round`): halves to even in every float
//! type, fused and unfused, as jaxlib 0.6.0 computes it; integers rejected with XLA's sentence.

use lazy_xla::*;

const INPUT: [f64; 9] = [-2.5, 0.5, 1.5, 2.5, -0.4, -0.5, 3.5, f64::NAN, f64::INFINITY];
/// jax.lax.round(x, TO_NEAREST_EVEN) on jaxlib 0.6.0's CPU, alike for f32, bf16, f16 and f64.
const XLA: [f64; 9] = [-2.0, 0.0, 2.0, 2.0, -0.0, -0.0, 4.0, f64::NAN, f64::INFINITY];

fn run(element_type: ElementType) -> Result<Vec<f64>> {
    let b = XlaBuilder::new("round");
    let x = b.parameter(0, &Shape::new(ElementType::F64, &[9]), "x");
    let y = convert_element_type(round_nearest_even(convert_element_type(x, element_type)), ElementType::F64);
    let computation = b.build(y)?;
    let mut results = Vec::new();
    for options in [CompileOptions::default(), CompileOptions::unfused()] {
        results.push(computation.compile(&options)?.execute(&[&Literal::vec1(&INPUT)])?.to_vec::<f64>()?);
    }
    assert_eq!(format!("{:?}", results[0]), format!("{:?}", results[1]), "fused and unfused differ");
    Ok(results.swap_remove(0))
}

#[test]
fn halves_round_to_even_in_every_float_type() -> Result<()> {
    for element_type in [ElementType::F16, ElementType::Bf16, ElementType::F32, ElementType::F64] {
        let got = run(element_type)?;
        assert_eq!(format!("{got:?}"), format!("{XLA:?}"), "{element_type}");
    }
    Ok(())
}

#[test]
fn integers_are_rejected_with_xlas_sentence() {
    let b = XlaBuilder::new("round");
    let y = round_nearest_even(b.constant_r1(&[1i32]));
    let error = b.get_shape(y).unwrap_err().to_string();
    assert!(
        error.starts_with(
            "Expected element type in shape to be floating for round-nearest-even operation; got S32."
        ),
        "{error}"
    );
}
