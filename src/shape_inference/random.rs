//! `RngBitGenerator`: XLA's builder checks, and the state shapes XLA's compiler requires
//! (lazy-xla checks them when the op is made).

use crate::attributes::RandomAlgorithm;
use crate::element_type::ElementType;
use crate::error::{invalid_argument, Result};
use crate::shape::Shape;

/// The result of `rng_bit_generator`: the state's shape, then `shape` with the unsigned type of
/// its width (bits are unsigned whatever type was asked), layout kept.
pub(crate) fn rng_bit_generator_shape(
    algorithm: RandomAlgorithm,
    state: &Shape,
    shape: &Shape,
) -> Result<Shape> {
    if shape.is_tuple() {
        invalid_argument!("Unsupported shape for RngBitGenerator: TUPLE");
    }
    let bits = match shape.element_type().byte_size() {
        _ if shape.element_type() == ElementType::Pred => invalid_argument!(
            "Unsupported shape for RngBitGenerator: PRED (XLA's builder makes u1 bits, which its compiler refuses)"
        ),
        1 => ElementType::U8,
        2 => ElementType::U16,
        4 => ElementType::U32,
        _ => ElementType::U64,
    };
    let state_sizes: &[i64] = match algorithm {
        RandomAlgorithm::ThreeFry => &[2],
        RandomAlgorithm::Philox | RandomAlgorithm::Default => &[2, 3],
    };
    let fits = !state.is_tuple()
        && state.element_type() == ElementType::U64
        && state.rank() == 1
        && state_sizes.contains(&state.dimensions()[0]);
    if !fits {
        let wanted = match algorithm {
            RandomAlgorithm::ThreeFry => "u64[2]",
            _ => "u64[2] or u64[3]",
        };
        invalid_argument!(
            "Expected state shape to match between input and output for RngBitGenerator. Got {} vs. {wanted} \
             (the state of {} is {wanted})",
            state.human_string(),
            algorithm.hlo_name()
        );
    }
    Ok(Shape::tuple(&[state.clone(), shape.with_element_type(bits)]))
}
