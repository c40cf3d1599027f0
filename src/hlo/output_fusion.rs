//! What an output fusion (XLA's `kOutput`) holds: one dot or convolution (its *product*), its
//! operands parameters (or, for a dot's lhs, a gather of rows of a parameter: an embedding
//! lookup, which the product reads through instead of materializing it), and element-wise ops
//! that read its result at their own index, so the executor can apply them to each block of
//! the product as it is computed, before the block leaves the cache. The predicates both the
//! fusion pass and the verifier read.

use crate::element_type::ElementType;
use crate::hlo::ir::{HloComputation, Instruction, InstructionId, Opcode};
use crate::hlo::loop_part::LoopPart;
use crate::shape::Shape;

/// The product (dot or convolution) of fused computation `fused` if it is what an output
/// fusion computes, else why not: exactly one product, reading two parameters (a dot's lhs
/// may instead be a [`row_gather`] of two parameters), its result
/// dense, row-major `f32` of the root's dimensions with a row of at least two; every other
/// instruction a parameter or a loop part (no reduce); and every instruction that depends on
/// the product element-wise, so each element of the result reads the product at its own
/// index alone.
pub(crate) fn fused_product(fused: &HloComputation) -> Result<InstructionId, String> {
    let instructions = &fused.instructions;
    let products: Vec<InstructionId> =
        (0..instructions.len()).filter(|&id| is_product(&instructions[id].opcode)).collect();
    let [product_id] = products[..] else {
        return Err(format!("a kOutput fusion holds {} dots and convolutions, not one", products.len()));
    };
    let product = &instructions[product_id];
    let is_parameter = |id: InstructionId| matches!(instructions[id].opcode, Opcode::Parameter { .. });
    let gathered = gathered_lhs(fused, product_id);
    let reads_parameters = product.operands.iter().all(|&o| is_parameter(o) || Some(o) == gathered);
    if !reads_parameters {
        return Err(format!("the product of a kOutput fusion, {}, reads more than parameters", product.name));
    }
    let root_shape = &instructions[fused.root].shape;
    let shape = &product.shape;
    let plain = shape.element_type() == ElementType::F32
        && !shape.is_padded()
        && shape.layout().is_default()
        && shape.dimensions().last().is_some_and(|&row| row >= 2)
        && shape.dimensions() == root_shape.dimensions();
    if !plain {
        return Err(format!(
            "the product of a kOutput fusion, {}, is {shape}, not dense row-major f32 of the root's dimensions",
            product.name
        ));
    }
    let mut depends = vec![false; instructions.len()];
    depends[product_id] = true;
    for (id, instruction) in instructions.iter().enumerate().skip(product_id + 1) {
        depends[id] = instruction.operands.iter().any(|&o| depends[o]);
    }
    for (id, instruction) in instructions.iter().enumerate() {
        let part = fused.loop_part(id);
        if id != product_id && !is_parameter(id) && Some(id) != gathered && part.is_none() {
            return Err(format!(
                "a kOutput fusion holds {} ({}), which a loop cannot compute",
                instruction.name,
                instruction.opcode.name()
            ));
        }
        if id != product_id && depends[id] && part != Some(LoopPart::Elementwise) {
            return Err(format!(
                "{} ({}) of a kOutput fusion reads its product other than element-wise",
                instruction.name,
                instruction.opcode.name()
            ));
        }
    }
    Ok(product_id)
}

/// The lhs of dot `product_id` of `fused` if it is a [`row_gather`] of two parameters.
pub(crate) fn gathered_lhs(fused: &HloComputation, product_id: InstructionId) -> Option<InstructionId> {
    let lhs = lhs_row_gather(fused, product_id)?;
    let is_parameter = |&o: &InstructionId| matches!(fused.instructions[o].opcode, Opcode::Parameter { .. });
    fused.instructions[lhs].operands.iter().all(is_parameter).then_some(lhs)
}

/// The lhs of `product_id` of `computation` if the product is a dot and its lhs a
/// [`row_gather`].
pub(crate) fn lhs_row_gather(
    computation: &HloComputation,
    product_id: InstructionId,
) -> Option<InstructionId> {
    let instructions = &computation.instructions;
    let product = &instructions[product_id];
    let &lhs = product.operands.first()?;
    let gather = &instructions[lhs];
    let shapes: Vec<&Shape> = gather.operands.iter().map(|&o| &instructions[o].shape).collect();
    (matches!(product.opcode, Opcode::Dot { .. }) && row_gather(gather, &shapes)).then_some(lhs)
}

/// Whether `gather` (of operands of `operand_shapes`) looks up whole rows of a dense row-major
/// `f32` matrix: `table[V, D]` at `indices[N]` (or `[N, 1]`) of integers into
/// `f32[N, D]`, row `n` being row `indices[n]` clamped into `0..V` (as XLA clamps). A product
/// reads such a lhs through the indices, one row start each, as it reads a matrix.
pub(crate) fn row_gather(gather: &Instruction, operand_shapes: &[&Shape]) -> bool {
    let Opcode::Gather { numbers, slice_sizes, .. } = &gather.opcode else { return false };
    let [table, indices] = operand_shapes[..] else { return false };
    let dense_f32 = |shape: &Shape| {
        shape.element_type() == ElementType::F32 && !shape.is_padded() && shape.layout().is_default()
    };
    let index_dims = indices.dimensions();
    let one_index_each = matches!(index_dims, [_] | [_, 1]);
    table.rank() == 2
        && dense_f32(table)
        && dense_f32(&gather.shape)
        && indices.element_type().is_integral()
        && one_index_each
        && numbers.index_vector_dim == 1
        && numbers.offset_dims == [1]
        && numbers.collapsed_slice_dims == [0]
        && numbers.start_index_map == [0]
        && numbers.operand_batching_dims.is_empty()
        && slice_sizes[..] == [1, table.dimensions()[1]]
        && gather.shape.dimensions() == [index_dims[0], table.dimensions()[1]]
}

/// Whether `opcode` is a product an output fusion may hold: a dot or a convolution.
pub(crate) fn is_product(opcode: &Opcode) -> bool {
    matches!(opcode, Opcode::Dot { .. } | Opcode::Convolution { .. })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attributes::{DotDimensionNumbers, PrecisionConfig, UnaryOp};
    use crate::hlo::ir::Instruction;

    fn instruction(name: &str, opcode: Opcode, operands: &[InstructionId], shape: &str) -> Instruction {
        Instruction { opcode, operands: operands.to_vec(), shape: shape.parse().unwrap(), name: name.into() }
    }

    /// `tanh(reader(x·w))` over `x: f32[4,3]`, `w: f32[3,4]`, `reader` of the product.
    fn epilogue_through(reader: Opcode) -> HloComputation {
        let numbers = DotDimensionNumbers::new(&[1], &[0], &[], &[]);
        let dot = Opcode::Dot { numbers, precision: PrecisionConfig::default() };
        HloComputation {
            name: "fused".into(),
            instructions: vec![
                instruction("x", Opcode::Parameter { number: 0 }, &[], "f32[4,3]"),
                instruction("w", Opcode::Parameter { number: 1 }, &[], "f32[3,4]"),
                instruction("dot", dot, &[0, 1], "f32[4,4]"),
                instruction("reader", reader, &[2], "f32[4,4]"),
                instruction("tanh", Opcode::Unary(UnaryOp::Tanh), &[3], "f32[4,4]"),
            ],
            root: 4,
        }
    }

    #[test]
    fn element_wise_readers_of_the_product_make_an_output_fusion() {
        assert_eq!(fused_product(&epilogue_through(Opcode::Unary(UnaryOp::Neg))), Ok(2));
    }

    #[test]
    fn a_reader_at_another_index_is_refused_with_its_name() {
        let refused = fused_product(&epilogue_through(Opcode::Transpose { permutation: vec![1, 0] }));
        assert_eq!(
            refused,
            Err("reader (transpose) of a kOutput fusion reads its product other than element-wise".into())
        );
    }
}
