//! A dot (and the types of any sum of products) as the plan runs it, with XLA's CPU rules for a result type that is not the operands'
//! (a preferred element type):
//!
//! - the dot computes in the result type when that is at least as precise as the operands'
//!   higher type (XLA's `OperandUpcaster` converts the operands first: `bf16·bf16 → f32` sums
//!   in f32, `s32 → f32` rounds each operand), else in the operands' type, and the result is
//!   converted (`ResultCaster`: integers wrap, floats saturate into integers, NaN → 0);
//! - integer products whose values fit 16 bits are summed exactly in f64 through `dgemm` and
//!   wrapped into the computing type, which is what an integer accumulator gives, for any
//!   contraction length a buffer can have, at floating-point GEMM speed.
//!
//! The product is computed row-major; a last loop converts and lays it out as the result.

use crate::attributes::DotDimensionNumbers;
use crate::element_type::ElementType;
use crate::error::{invalid_argument, Result};
use crate::exec::element::{Element, Wide};
use crate::exec::kernels::contraction;
use crate::exec::kernels::gemm;
use crate::exec::loop_program::LoopProgram;
use crate::hlo::ir::{HloComputation, Instruction, Opcode};
use crate::literal::Literal;
use crate::shape::Shape;
use crate::shape_inference::higher_precision;
use crate::storage::with_native_type;

/// Integer contractions up to this length are summed exactly in f64 (16-bit products stay
/// below 2³², their sums below 2⁵³).
const EXACT_DEPTH: i64 = 1 << 21;

/// How one dot instruction runs: its dimension numbers and its types.
#[derive(Debug)]
pub(crate) struct DotStep {
    numbers: DotDimensionNumbers,
    types: TypedProduct,
}

impl DotStep {
    /// The step of `dot` (an instruction with `numbers`) over operands of `operand_shapes`.
    pub(crate) fn new(
        dot: &Instruction,
        numbers: &DotDimensionNumbers,
        operand_shapes: &[Shape],
    ) -> Result<DotStep> {
        let [lhs, rhs] = operand_shapes else {
            invalid_argument!("a dot takes two operands, not {}", operand_shapes.len());
        };
        let depth: i64 =
            numbers.lhs_contracting_dimensions.iter().map(|&d| lhs.dimensions()[d as usize]).product();
        Ok(DotStep {
            numbers: numbers.clone(),
            types: TypedProduct::new(&dot.shape, [lhs, rhs], Some(depth))?,
        })
    }

    /// The bytes it computes in besides its operands and result: the typed product's
    /// conversions, for half types the `f32` panels the dot kernel sums in, and each thread's
    /// packed block of the rhs.
    pub(crate) fn scratch_bytes(&self, operand_shapes: [&Shape; 2], result: &Shape) -> u64 {
        let half = [ElementType::F16, ElementType::Bf16].contains(&self.types.kernel_type());
        let elements = |s: &Shape| s.element_count() as u64;
        let panels = match half {
            true => [operand_shapes[0], operand_shapes[1], result]
                .into_iter()
                .fold(0u64, |sum, shape| sum.saturating_add(elements(shape).saturating_mul(4))),
            false => 0,
        };
        // The rhs as `depth × columns`, its batches counted among the columns (a bound).
        let lhs_dimensions = operand_shapes[0].dimensions();
        let depth: i64 =
            self.numbers.lhs_contracting_dimensions.iter().map(|&d| lhs_dimensions[d as usize]).product();
        let columns = elements(operand_shapes[1]) / depth.max(1) as u64;
        let threads = rayon::current_num_threads() as u64;
        let packed = gemm::packed_bytes(depth as usize, columns as usize, contraction::DEPTH_BLOCK) * threads;
        self.types.scratch_bytes().saturating_add(panels).saturating_add(packed)
    }

    /// Whether it computes `f32` operands into an `f32` row-major result, converting nothing.
    pub(crate) fn computes_in_f32_alone(&self) -> bool {
        self.types.computes_in_f32_alone()
    }

    /// Computes the dot of `lhs` and `rhs` into `out` (the instruction's shape).
    pub(crate) fn run(&self, operands: [&Literal; 2], out: &mut Literal, parallel: bool) -> Result<()> {
        self.types.run(operands, out, parallel, |operands, product| {
            contraction::dot(operands, &self.numbers, product, parallel)
        })
    }
}

/// The types a sum of products (a dot, a convolution) computes in, and the conversions around
/// its kernel, which takes operands of one type and writes a row-major result of it.
#[derive(Debug)]
pub(crate) struct TypedProduct {
    /// Each operand converted to the type the products are computed in, where it differs:
    /// the converted shape and the loop.
    operand_converts: [Option<(Shape, LoopProgram)>; 2],
    /// The row-major product, if it is not the result itself, and the loop that converts and
    /// lays it out as the result.
    product: Option<(Shape, LoopProgram)>,
    /// For integer products summed in f64: the integer type they wrap into.
    exact_integer: Option<ElementType>,
    /// The type the kernel computes in (the operands' after conversion).
    kernel_type: ElementType,
}

impl TypedProduct {
    /// The types of a product into `result` of operands of `lhs` and `rhs` shapes; `depth`, the
    /// number of products in each sum where the kernel is a dot (integer sums may then be
    /// computed exactly in f64).
    pub(crate) fn new(result: &Shape, [lhs, rhs]: [&Shape; 2], depth: Option<i64>) -> Result<TypedProduct> {
        let result_type = result.element_type();
        let inferred = higher_precision(lhs.element_type(), rhs.element_type());
        let computing =
            if higher_precision(inferred, result_type) == result_type { result_type } else { inferred };
        let exact = computing.is_integral()
            && depth.is_some_and(|depth| depth < EXACT_DEPTH)
            && [lhs, rhs].iter().all(|s| values_fit_16_bits(s.element_type(), computing));
        let operand_type = if exact { ElementType::F64 } else { computing };
        let convert_operand = |shape: &Shape| -> Result<Option<(Shape, LoopProgram)>> {
            if shape.element_type() == operand_type {
                return Ok(None);
            }
            let steps = [shape.with_element_type(computing), shape.with_element_type(operand_type)];
            Ok(Some((steps[1].clone(), converting(shape, &steps[..if exact { 2 } else { 1 }])?)))
        };
        let operand_converts = [convert_operand(lhs)?, convert_operand(rhs)?];
        let row_major = result.with_default_layout();
        let product_shape = row_major.with_element_type(operand_type);
        let product = if &product_shape == result {
            None
        } else {
            let finish = converting(&row_major.with_element_type(computing), std::slice::from_ref(result))?;
            Some((product_shape, finish))
        };
        Ok(TypedProduct {
            operand_converts,
            product,
            exact_integer: exact.then_some(computing),
            kernel_type: operand_type,
        })
    }

    /// Whether it computes `f32` operands into an `f32` row-major result, converting nothing.
    pub(crate) fn computes_in_f32_alone(&self) -> bool {
        self.kernel_type == ElementType::F32
            && self.operand_converts.iter().all(Option::is_none)
            && self.product.is_none()
    }

    /// The element type the kernel computes in.
    pub(crate) fn kernel_type(&self) -> ElementType {
        self.kernel_type
    }

    /// The bytes of the buffers it computes in besides the operands and the result: the
    /// converted operands, the row-major product and its wrapped integers.
    pub(crate) fn scratch_bytes(&self) -> u64 {
        let converts = self.operand_converts.iter().flatten().map(|(shape, _)| shape.byte_size());
        let product = self.product.as_ref().map_or(0, |(shape, _)| shape.byte_size());
        let wrapped = if self.exact_integer.is_some() { product } else { 0 };
        converts.chain([product, wrapped]).fold(0, u64::saturating_add)
    }

    /// Runs `kernel` (operands of one type into a row-major product of it) between the
    /// conversions, into `out` (the result's shape).
    pub(crate) fn run(
        &self,
        [lhs, rhs]: [&Literal; 2],
        out: &mut Literal,
        parallel: bool,
        kernel: impl FnOnce([&Literal; 2], &mut Literal) -> Result<()>,
    ) -> Result<()> {
        let convert =
            |program: &Option<(Shape, LoopProgram)>, operand: &Literal| -> Result<Option<Literal>> {
                program
                    .as_ref()
                    .map(|(shape, program)| {
                        let mut converted = Literal::for_overwrite(shape)?;
                        program.run(&[operand], &mut converted, parallel)?;
                        Ok(converted)
                    })
                    .transpose()
            };
        let (a, b) = (convert(&self.operand_converts[0], lhs)?, convert(&self.operand_converts[1], rhs)?);
        let operands = [a.as_ref().unwrap_or(lhs), b.as_ref().unwrap_or(rhs)];
        let Some((product_shape, finish)) = &self.product else {
            return kernel(operands, out);
        };
        let mut product = Literal::for_overwrite(product_shape)?;
        kernel(operands, &mut product)?;
        if let Some(integer) = self.exact_integer {
            product = wrapped(&product, integer)?;
        }
        finish.run(&[&product], out, parallel)
    }
}

/// Whether every value of type `from`, converted to the integer type `to`, lies within
/// ±2¹⁶, so that products of two are exact in f64.
fn values_fit_16_bits(from: ElementType, to: ElementType) -> bool {
    let bits = |t: ElementType| if t == ElementType::Pred { 1 } else { 8 * t.byte_size() };
    let widening_keeps_value =
        from == ElementType::Pred || from.is_unsigned_integral() || to.is_signed_integral();
    bits(to) <= 16
        || (from.is_integral() || from == ElementType::Pred) && bits(from) <= 16 && widening_keeps_value
}

/// A loop that converts an array of `shape` to each shape of `steps` in turn (their element
/// types; the last one's layout is the result's).
fn converting(shape: &Shape, steps: &[Shape]) -> Result<LoopProgram> {
    let parameter = Instruction {
        opcode: Opcode::Parameter { number: 0 },
        operands: vec![],
        shape: shape.clone(),
        name: "p0".into(),
    };
    let mut instructions = vec![parameter];
    for (i, step) in steps.iter().enumerate() {
        instructions.push(Instruction {
            opcode: Opcode::Convert,
            operands: vec![i],
            shape: step.clone(),
            name: format!("convert.{i}"),
        });
    }
    let root = instructions.len() - 1;
    let computation = HloComputation { name: "converting".into(), instructions, root };
    match LoopProgram::compile(&computation, std::slice::from_ref(shape), computation.result_shape()) {
        Some(program) => Ok(program),
        None => invalid_argument!("no loop converts {shape} to {:?}", steps.last().map(Shape::to_string)),
    }
}

/// The exact integer sums in `product` (f64) wrapped into `integer`, as an accumulator of
/// that type would hold them.
fn wrapped(product: &Literal, integer: ElementType) -> Result<Literal> {
    let shape = product.shape().with_element_type(integer);
    let mut out = Literal::for_overwrite(&shape)?;
    let sums = product.memory::<f64>()?;
    with_native_type!(integer, T => {
        let values = out.storage_mut()?.as_mut_slice::<T>()?;
        values.iter_mut().zip(sums).for_each(|(v, &sum)| *v = T::narrow(Wide::Int(sum as i128)));
    });
    Ok(out)
}
