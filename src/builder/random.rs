//! Random bits: `rng_bit_generator`.

use crate::attributes::RandomAlgorithm;
use crate::builder::builder::XlaOp;
use crate::hlo::ir::Opcode;
use crate::shape::Shape;
use crate::shape_inference::random::rng_bit_generator_shape;

/// XLA's `RngBitGenerator`: random bits of `shape` (unsigned, of its type's width: `u32` for
/// `f32` or `s32`) from `initial_state` (`u64[2]`; Philox also takes `u64[3]`), and the state to
/// continue from: a tuple `(new state, bits)`. The same state gives the same bits, bit for bit
/// what XLA's CPU backend gives.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("bits");
/// let state = b.parameter(0, &shape!(u64[2]), "state");
/// let bits = rng_bit_generator(RandomAlgorithm::ThreeFry, state, &shape!(u32[3]));
/// let exe = b.build(bits)?.compile(&CompileOptions::default())?;
/// let out = exe.execute(&[&Literal::vec1(&[1u64, 2])])?;
/// assert_eq!(out.tuple_element(0)?.to_vec::<u64>()?, vec![1, 4]);
/// assert_eq!(out.tuple_element(1)?.to_vec::<u32>()?, vec![43444564, 2150618427, 3979645651]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn rng_bit_generator<'b>(
    algorithm: RandomAlgorithm,
    initial_state: XlaOp<'b>,
    shape: &Shape,
) -> XlaOp<'b> {
    initial_state.builder().record("rng-bit-generator", &[initial_state], |emit, operands| {
        let result = rng_bit_generator_shape(algorithm, &operands[0].shape, shape)?;
        Ok(emit.emit(Opcode::RngBitGenerator { algorithm }, &[operands[0].id], result))
    })
}
