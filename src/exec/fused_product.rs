//! An output fusion (`kOutput`) as the plan runs it: the dot or convolution on the register
//! tile a block at a time (rows of a dot, a task's lines of a convolution), and the fusion's
//! element-wise loop (its *epilogue*: a bias, an activation) over each block as soon as it is
//! computed, on the same thread, while the block is in cache. The product is never written
//! whole; the result is, once.
//!
//! A dot's lhs may be a row gather (an embedding lookup): the tile then reads each looked-up
//! row in the table, through the clamped indices, and the gathered matrix is never written.
//!
//! Where the tile cannot run (no AVX-512, other types, a strided lhs depth, feature groups),
//! the product is computed whole (after the gather, into a matrix of its own) and the epilogue
//! runs over it as any loop: the same values either way, as the epilogue computes each element
//! from the product's element at its own index.

use std::ops::Range;

use crate::attributes::{ConvolutionDimensionNumbers, DotDimensionNumbers, GatherDimensionNumbers, Window};
use crate::error::{invalid_argument, Error, Result};
use crate::exec::dot_step::{DotStep, TypedProduct};
use crate::exec::kernels::contraction::GatheredRows;
use crate::exec::kernels::indexing::{clamp_start, index_value};
use crate::exec::kernels::{contraction, convolution, gather};
use crate::exec::loop_program::{LoopProgram, SharedOutput};
use crate::hlo::ir::{HloComputation, Instruction, Opcode};
use crate::hlo::output_fusion::{fused_product, gathered_lhs};
use crate::literal::Literal;
use crate::shape::Shape;

/// How one output fusion runs.
#[derive(Debug)]
pub(crate) struct FusedProduct {
    product: Product,
    /// The fusion operands the product reads (lhs, or a gathered lhs's table; rhs).
    operands: [usize; 2],
    /// The lhs's row gather, where it is one.
    gathered: Option<RowGather>,
    /// The product's result (row-major, dense `f32`).
    product_shape: Shape,
    /// The epilogue over the fusion's operands and then the product, into the result.
    epilogue: LoopProgram,
    /// The same loop by rows of the result, where the product's blocks are whole rows of it
    /// (see [`LoopProgram::compile_by_rows`]).
    by_rows: Option<LoopProgram>,
}

/// A dot's lhs gathered from rows of a table (`hlo::output_fusion::row_gather`).
#[derive(Debug)]
struct RowGather {
    /// The fusion operand of the indices (the table's is the product's lhs operand).
    indices: usize,
    numbers: GatherDimensionNumbers,
    slice_sizes: Vec<i64>,
    /// The gathered matrix's shape, `f32[N, D]`.
    shape: Shape,
}

impl RowGather {
    /// Where each gathered row starts in `table`: its index clamped into the table's rows.
    fn row_starts(&self, table: &Literal, indices: &Literal) -> Result<Vec<usize>> {
        let (rows, row_len) = (table.shape().dimensions()[0], table.shape().dimensions()[1]);
        let count = self.shape.dimensions()[0] as usize;
        (0..count)
            .map(|n| Ok(clamp_start(index_value(indices, n)?, rows, 1) as usize * row_len as usize))
            .collect()
    }

    /// The gathered matrix itself, for a product that cannot read through it.
    fn materialize(&self, table: &Literal, indices: &Literal, parallel: bool) -> Result<Literal> {
        let mut gathered = Literal::for_overwrite(&self.shape)?;
        gather::gather(table, indices, &self.numbers, &self.slice_sizes, &mut gathered, parallel)?;
        Ok(gathered)
    }
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
        let gathered = match gathered_lhs(fused, id).map(|g| &fused.instructions[g]) {
            Some(Instruction {
                opcode: Opcode::Gather { numbers, slice_sizes, .. },
                operands,
                shape,
                ..
            }) => {
                let (table, indices) = (number(operands[0])?, number(operands[1])?);
                let gather = RowGather {
                    indices,
                    numbers: numbers.clone(),
                    slice_sizes: slice_sizes.clone(),
                    shape: shape.clone(),
                };
                Some((table, gather))
            }
            _ => None,
        };
        let lhs_operand = match &gathered {
            Some((table, _)) => *table,
            None => number(instruction.operands[0])?,
        };
        let operands = [lhs_operand, number(instruction.operands[1])?];
        let gathered = gathered.map(|(_, gather)| gather);
        let lhs = gathered.as_ref().map_or_else(|| operand_shapes[operands[0]].clone(), |g| g.shape.clone());
        let rhs = operand_shapes[operands[1]].clone();
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
        let product_shape = instruction.shape.clone();
        Ok(FusedProduct { product, operands, gathered, product_shape, epilogue, by_rows })
    }

    /// The bytes it computes in besides its operands and result: the product's, the product
    /// whole and a gathered lhs whole (where it cannot run by blocks; each thread's block is
    /// smaller).
    pub(crate) fn scratch_bytes(&self, operand_shapes: &[&Shape]) -> u64 {
        let [lhs, rhs] = self.operands.map(|o| operand_shapes[o]);
        let (lhs, gathered_bytes) = match &self.gathered {
            Some(g) => (&g.shape, g.shape.byte_size()),
            None => (lhs, 0),
        };
        let own =
            match &self.product {
                Product::Dot { step, .. } => step.scratch_bytes([lhs, rhs], &self.product_shape),
                Product::Convolution(c) => c.types.scratch_bytes().saturating_add(
                    convolution::scratch_bytes(lhs, rhs, &self.product_shape, &c.attributes()),
                ),
            };
        own.saturating_add(self.product_shape.byte_size()).saturating_add(gathered_bytes)
    }

    /// Computes the fusion of `inputs` (its operands, dense) into `out` (its shape, dense).
    pub(crate) fn run(&self, inputs: &[&Literal], out: &mut Literal, parallel: bool) -> Result<()> {
        let operands = [inputs[self.operands[0]], inputs[self.operands[1]]];
        if let Some(by_rows) = self.by_rows.as_ref().filter(|_| self.computes_in_f32_alone()) {
            let row_starts = match &self.gathered {
                Some(g) => Some(g.row_starts(operands[0], inputs[g.indices])?),
                None => None,
            };
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
                    let gathered = self.gathered.as_ref().zip(row_starts.as_deref());
                    let gathered = gathered.map(|(g, starts)| GatheredRows { shape: &g.shape, starts });
                    contraction::dot_by_blocks(operands, numbers, gathered, &consume, parallel)?
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
        let gathered = match &self.gathered {
            Some(g) => Some(g.materialize(operands[0], inputs[g.indices], parallel)?),
            None => None,
        };
        let operands = [gathered.as_ref().unwrap_or(operands[0]), operands[1]];
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
