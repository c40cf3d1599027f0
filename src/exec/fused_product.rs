//! An output fusion (`kOutput`) as the plan runs it: the dot on the register tile a block of
//! rows at a time, and the fusion's element-wise loop (its *epilogue*: a bias, an activation)
//! over each block as soon as it is computed, on the same thread, while the block is in
//! cache. The product is never written whole; the result is, once.
//!
//! Where the tile cannot run (no AVX-512, other types, a strided lhs depth), the product is
//! computed whole and the epilogue runs over it as any loop: the same values either way, as
//! the epilogue computes each element from the product's element at its own index.

use std::ops::Range;

use crate::attributes::DotDimensionNumbers;
use crate::error::{invalid_argument, Error, Result};
use crate::exec::dot_step::DotStep;
use crate::exec::kernels::contraction;
use crate::exec::loop_program::{LoopProgram, SharedOutput};
use crate::hlo::ir::{HloComputation, Instruction, Opcode};
use crate::hlo::output_fusion::fused_product;
use crate::literal::Literal;
use crate::shape::Shape;

/// How one output fusion runs.
#[derive(Debug)]
pub(crate) struct FusedProduct {
    dot: DotStep,
    numbers: DotDimensionNumbers,
    /// The fusion operands the dot reads (lhs, rhs).
    operands: [usize; 2],
    /// The dot's result (row-major, dense `f32`).
    product_shape: Shape,
    /// The epilogue over the fusion's operands and then the product, into the result.
    epilogue: LoopProgram,
    /// The same loop by rows of the result, where it can run so (see
    /// [`LoopProgram::compile_by_rows`]).
    by_rows: Option<LoopProgram>,
}

impl FusedProduct {
    /// The step of a `kOutput` fusion of computation `fused` over operands of
    /// `operand_shapes` (dense) into `out_shape`.
    pub(crate) fn new(
        fused: &HloComputation,
        operand_shapes: &[Shape],
        out_shape: &Shape,
    ) -> Result<FusedProduct> {
        let dot_id = fused_product(fused).or_else(|message| invalid_argument!("{message}"))?;
        let dot = &fused.instructions[dot_id];
        let Opcode::Dot { numbers, .. } = &dot.opcode else {
            invalid_argument!("a kOutput fusion without a dot")
        };
        let number = |id: usize| match fused.instructions[id].opcode {
            Opcode::Parameter { number } => Ok(number as usize),
            _ => invalid_argument!("the dot of a kOutput fusion reads more than parameters"),
        };
        let operands = [number(dot.operands[0])?, number(dot.operands[1])?];
        let dot_operands = [operand_shapes[operands[0]].clone(), operand_shapes[operands[1]].clone()];
        // The epilogue reads the product as one more parameter, after the fusion's operands.
        let mut epilogue_computation = fused.clone();
        epilogue_computation.instructions[dot_id] = Instruction {
            opcode: Opcode::Parameter { number: operand_shapes.len() as i64 },
            operands: Vec::new(),
            ..dot.clone()
        };
        let mut input_shapes = operand_shapes.to_vec();
        input_shapes.push(dot.shape.clone());
        let not_a_loop = || Error::invalid("the epilogue of a kOutput fusion is not one loop");
        let epilogue =
            LoopProgram::compile(&epilogue_computation, &input_shapes, out_shape).ok_or_else(not_a_loop)?;
        Ok(FusedProduct {
            dot: DotStep::new(dot, numbers, &dot_operands)?,
            numbers: numbers.clone(),
            operands,
            product_shape: dot.shape.clone(),
            epilogue,
            // Blocks of the product's rows are whole rows of the result where its last
            // dimension is the rhs's (the rhs has a free dimension).
            by_rows: (numbers.rhs_contracting_dimensions.len() + numbers.rhs_batch_dimensions.len()
                < dot_operands[1].rank())
            .then(|| LoopProgram::compile_by_rows(&epilogue_computation, &input_shapes, out_shape))
            .flatten(),
        })
    }

    /// The bytes it computes in besides its operands and result: the dot's, and the product
    /// whole (where the tile cannot run; each thread's block is smaller).
    pub(crate) fn scratch_bytes(&self, operand_shapes: &[&Shape]) -> u64 {
        let dot_operands = [operand_shapes[self.operands[0]], operand_shapes[self.operands[1]]];
        let dot = self.dot.scratch_bytes(dot_operands, &self.product_shape);
        dot.saturating_add(self.product_shape.byte_size())
    }

    /// Computes the fusion of `inputs` (its operands, dense) into `out` (its shape, dense).
    pub(crate) fn run(&self, inputs: &[&Literal], out: &mut Literal, parallel: bool) -> Result<()> {
        let operands = [inputs[self.operands[0]], inputs[self.operands[1]]];
        if let Some(by_rows) = self.by_rows.as_ref().filter(|_| self.dot.computes_in_f32_alone()) {
            let row_len = self.product_shape.dimensions().last().map_or(1, |&len| len as usize);
            let shared = SharedOutput::new(out)?;
            let product = inputs.len();
            let consume = |elements: Range<usize>, block: &Literal| {
                if !elements.start.is_multiple_of(row_len) || !elements.end.is_multiple_of(row_len) {
                    invalid_argument!("a block of {elements:?} is not whole rows of {}", self.product_shape);
                }
                let mut all = inputs.to_vec();
                all.push(block);
                let mut shifts = vec![0; product + 1];
                shifts[product] = elements.start as isize;
                let rows = elements.start / row_len..elements.end / row_len;
                // SAFETY: the blocks `dot_by_blocks` hands out are disjoint parts of the
                // product, so these rows of the result are this call's alone.
                unsafe { by_rows.run_rows(&all, &shared, rows, &shifts) }
            };
            if contraction::dot_by_blocks(operands, &self.numbers, &consume, parallel)? {
                return Ok(());
            }
        }
        let mut product = Literal::for_overwrite(&self.product_shape)?;
        self.dot.run(operands, &mut product, parallel)?;
        let mut all = inputs.to_vec();
        all.push(&product);
        self.epilogue.run(&all, out, parallel)
    }
}
