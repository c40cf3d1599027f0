//! An output fusion (`kOutput`) as the plan runs it: the dot or convolution on the register
//! tile a block at a time (rows of a dot, a task's lines of a convolution), and the fusion's
//! element-wise loop (its *epilogue*: a bias, an activation) over each block as soon as it is
//! computed, on the same thread, while the block is in cache. The product is never written
//! whole; the result is, once.
//!
//! Where the tile cannot run (no AVX-512, other types, a strided lhs depth, feature groups),
//! the product is computed whole and the epilogue runs over it as any loop: the same values
//! either way, as the epilogue computes each element from the product's element at its own
//! index.

use std::ops::Range;

use crate::attributes::{ConvolutionDimensionNumbers, DotDimensionNumbers, Window};
use crate::error::{invalid_argument, Error, Result};
use crate::exec::dot_step::{DotStep, TypedProduct};
use crate::exec::kernels::{contraction, convolution};
use crate::exec::loop_program::{LoopProgram, SharedOutput};
use crate::hlo::ir::{HloComputation, Instruction, Opcode};
use crate::hlo::output_fusion::fused_product;
use crate::literal::Literal;
use crate::shape::Shape;

/// How one output fusion runs.
#[derive(Debug)]
pub(crate) struct FusedProduct {
    product: Product,
    /// The fusion operands the product reads (lhs, rhs).
    operands: [usize; 2],
    /// The product's result (row-major, dense `f32`).
    product_shape: Shape,
    /// The epilogue over the fusion's operands and then the product, into the result.
    epilogue: LoopProgram,
    /// The same loop by rows of the result, where the product's blocks are whole rows of it
    /// (see [`LoopProgram::compile_by_rows`]).
    by_rows: Option<LoopProgram>,
}

/// The product of an output fusion.
#[derive(Debug)]
enum Product {
    Dot { step: DotStep, numbers: DotDimensionNumbers },
    Convolution(ConvolutionProduct),
}

/// A convolution's attributes, and the types it computes in.
#[derive(Debug)]
struct ConvolutionProduct {
    window: Window,
    numbers: ConvolutionDimensionNumbers,
    feature_group_count: i64,
    batch_group_count: i64,
    types: TypedProduct,
}

impl ConvolutionProduct {
    /// Its attributes, as the convolution kernel reads them.
    fn attributes(&self) -> convolution::Convolution<'_> {
        convolution::Convolution {
            window: &self.window,
            numbers: &self.numbers,
            feature_group_count: self.feature_group_count,
            batch_group_count: self.batch_group_count,
        }
    }
}

impl FusedProduct {
    /// The step of a `kOutput` fusion of computation `fused` over operands of
    /// `operand_shapes` (dense) into `out_shape`.
    pub(crate) fn new(
        fused: &HloComputation,
        operand_shapes: &[Shape],
        out_shape: &Shape,
    ) -> Result<FusedProduct> {
        let id = fused_product(fused).or_else(|message| invalid_argument!("{message}"))?;
        let instruction = &fused.instructions[id];
        let number = |id: usize| match fused.instructions[id].opcode {
            Opcode::Parameter { number } => Ok(number as usize),
            _ => invalid_argument!("the product of a kOutput fusion reads more than parameters"),
        };
        let operands = [number(instruction.operands[0])?, number(instruction.operands[1])?];
        let [lhs, rhs] = operands.map(|o| operand_shapes[o].clone());
        let rank = instruction.shape.rank() as i64;
        // Blocks of the product are whole rows of the result where its minor dimension is
        // the rhs's last free one (a dot) or the output feature (a convolution).
        let (product, rows_whole) = match &instruction.opcode {
            Opcode::Dot { numbers, .. } => {
                let rhs_free = numbers.rhs_contracting_dimensions.len() + numbers.rhs_batch_dimensions.len()
                    < rhs.rank();
                let step = DotStep::new(instruction, numbers, &[lhs, rhs])?;
                (Product::Dot { step, numbers: numbers.clone() }, rhs_free)
            }
            Opcode::Convolution { window, numbers, feature_group_count, batch_group_count, .. } => {
                let types = TypedProduct::new(&instruction.shape, [&lhs, &rhs], None)?;
                let feature_last = numbers.output_feature_dimension == rank - 1;
                let product = Product::Convolution(ConvolutionProduct {
                    window: window.clone(),
                    numbers: numbers.clone(),
                    feature_group_count: *feature_group_count,
                    batch_group_count: *batch_group_count,
                    types,
                });
                (product, feature_last)
            }
            _ => invalid_argument!("a kOutput fusion without a dot or convolution"),
        };
        // The epilogue reads the product as one more parameter, after the fusion's operands.
        let mut epilogue_computation = fused.clone();
        epilogue_computation.instructions[id] = Instruction {
            opcode: Opcode::Parameter { number: operand_shapes.len() as i64 },
            operands: Vec::new(),
            ..instruction.clone()
        };
        let mut input_shapes = operand_shapes.to_vec();
        input_shapes.push(instruction.shape.clone());
        let not_a_loop = || Error::invalid("the epilogue of a kOutput fusion is not one loop");
        let epilogue =
            LoopProgram::compile(&epilogue_computation, &input_shapes, out_shape).ok_or_else(not_a_loop)?;
        let by_rows = match rows_whole {
            true => LoopProgram::compile_by_rows(&epilogue_computation, &input_shapes, out_shape),
            false => None,
        };
        Ok(FusedProduct { product, operands, product_shape: instruction.shape.clone(), epilogue, by_rows })
    }

    /// The bytes it computes in besides its operands and result: the product's, and the
    /// product whole (where it cannot run by blocks; each thread's block is smaller).
    pub(crate) fn scratch_bytes(&self, operand_shapes: &[&Shape]) -> u64 {
        let [lhs, rhs] = self.operands.map(|o| operand_shapes[o]);
        let own =
            match &self.product {
                Product::Dot { step, .. } => step.scratch_bytes([lhs, rhs], &self.product_shape),
                Product::Convolution(c) => c.types.scratch_bytes().saturating_add(
                    convolution::scratch_bytes(lhs, rhs, &self.product_shape, &c.attributes()),
                ),
            };
        own.saturating_add(self.product_shape.byte_size())
    }

    /// Computes the fusion of `inputs` (its operands, dense) into `out` (its shape, dense).
    pub(crate) fn run(&self, inputs: &[&Literal], out: &mut Literal, parallel: bool) -> Result<()> {
        let operands = [inputs[self.operands[0]], inputs[self.operands[1]]];
        if let Some(by_rows) = self.by_rows.as_ref().filter(|_| self.computes_in_f32_alone()) {
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
                // SAFETY: the blocks a product hands out are disjoint parts of it, so these
                // rows of the result are this call's alone.
                unsafe { by_rows.run_rows(&all, &shared, rows, &shifts) }
            };
            let by_blocks = match &self.product {
                Product::Dot { numbers, .. } => {
                    contraction::dot_by_blocks(operands, numbers, &consume, parallel)?
                }
                Product::Convolution(c) => {
                    let [lhs, rhs] = operands;
                    let attributes = c.attributes();
                    convolution::convolution_by_blocks(
                        lhs,
                        rhs,
                        &attributes,
                        &self.product_shape,
                        &consume,
                        parallel,
                    )?
                }
            };
            if by_blocks {
                return Ok(());
            }
        }
        let mut product = Literal::for_overwrite(&self.product_shape)?;
        match &self.product {
            Product::Dot { step, .. } => step.run(operands, &mut product, parallel)?,
            Product::Convolution(c) => c.types.run(operands, &mut product, parallel, |[lhs, rhs], out| {
                convolution::convolution(lhs, rhs, &c.attributes(), out, parallel)
            })?,
        }
        let mut all = inputs.to_vec();
        all.push(&product);
        self.epilogue.run(&all, out, parallel)
    }

    /// Whether the product computes `f32` operands into its `f32` result, converting nothing.
    fn computes_in_f32_alone(&self) -> bool {
        match &self.product {
            Product::Dot { step, .. } => step.computes_in_f32_alone(),
            Product::Convolution(c) => c.types.computes_in_f32_alone(),
        }
    }
}
