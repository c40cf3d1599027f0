//! Ops that combine many elements into one: `reduce`, `dot` and `dot_general`.

use crate::attributes::{DotDimensionNumbers, PrecisionConfig};
use crate::builder::builder::{Operand, XlaBuilder, XlaOp};
use crate::element_type::ElementType;
use crate::hlo::computation::XlaComputation;
use crate::hlo::ir::Opcode;
use crate::shape_inference::dot::dot_shape;
use crate::shape_inference::reduce::reduce_shape;

/// `operand` reduced over `dimensions_to_reduce` with the scalar computation `computation`
/// (`(accumulator, value) -> accumulator`, built by another [`XlaBuilder`](crate::XlaBuilder)),
/// starting from the scalar `init_value`. Reducing over no dimension returns the operand.
///
/// ```
/// use lazy_xla::*;
/// let sum = {
///     let r = XlaBuilder::new("sum");
///     let (a, b) = (r.parameter(0, &shape!(f32[]), "a"), r.parameter(1, &shape!(f32[]), "b"));
///     r.build(add(a, b, &[]))?
/// };
/// let b = XlaBuilder::new("f");
/// let x = b.parameter(0, &shape!(f32[2, 3]), "x");
/// let row_sums = reduce(x, b.constant_r0(0.0f32), &sum, &[1]);
/// assert_eq!(b.get_shape(row_sums)?, shape!(f32[2]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn reduce<'b>(
    operand: XlaOp<'b>,
    init_value: XlaOp<'b>,
    computation: &XlaComputation,
    dimensions_to_reduce: &[i64],
) -> XlaOp<'b> {
    record_reduce(operand.builder(), &[operand], &[init_value], computation, dimensions_to_reduce)
}

/// XLA's variadic `Reduce`: `operands` (of one set of dimensions, any element types) reduced
/// together over `dimensions_to_reduce`, starting from `init_values` (a scalar each), by
/// `computation`, which takes N accumulators then N values and returns a tuple of N scalars.
/// The result is a tuple of N arrays (one operand and a scalar reducer: an array). An argmax
/// reduces values and their indices together:
///
/// ```
/// use lazy_xla::*;
/// let r = XlaBuilder::new("argmax");
/// let (av, ai) = (r.parameter(0, &shape!(f32[]), "av"), r.parameter(1, &shape!(s32[]), "ai"));
/// let (bv, bi) = (r.parameter(2, &shape!(f32[]), "bv"), r.parameter(3, &shape!(s32[]), "bi"));
/// let a_wins = or(gt(av, bv, &[]), and(eq(av, bv, &[]), lt(ai, bi, &[]), &[]), &[]);
/// let argmax = r.build(tuple(&r, &[select(a_wins, av, bv), select(a_wins, ai, bi)]))?;
///
/// let b = XlaBuilder::new("rows");
/// let x = b.parameter(0, &shape!(f32[2, 3]), "x");
/// let indices = iota(&b, &shape!(s32[2, 3]), 1);
/// let inits = [b.constant_r0(f32::NEG_INFINITY), b.constant_r0(0i32)];
/// let best = reduce_variadic(&b, &[x, indices], &inits, &argmax, &[1]);
/// assert_eq!(b.get_shape(best)?.to_string(), "(f32[2]{0}, s32[2]{0})");
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn reduce_variadic<'b>(
    builder: &'b XlaBuilder,
    operands: &[XlaOp<'b>],
    init_values: &[XlaOp<'b>],
    computation: &XlaComputation,
    dimensions_to_reduce: &[i64],
) -> XlaOp<'b> {
    record_reduce(builder, operands, init_values, computation, dimensions_to_reduce)
}

/// Records a reduce of any arity: shape inference, converts of the operands and init values
/// to the reducer's types (XLA leaves mixed float precisions to its compiler), and the reducer
/// embedded into this builder.
#[track_caller]
fn record_reduce<'b>(
    builder: &'b XlaBuilder,
    operands: &[XlaOp<'b>],
    init_values: &[XlaOp<'b>],
    computation: &XlaComputation,
    dimensions_to_reduce: &[i64],
) -> XlaOp<'b> {
    let arguments: Vec<XlaOp<'b>> = operands.iter().chain(init_values).copied().collect();
    builder.record("reduce", &arguments, |emit, arguments| {
        let (inputs, inits) = arguments.split_at(operands.len());
        let shapes = |list: &[Operand]| list.iter().map(|o| o.shape.clone()).collect::<Vec<_>>();
        let (input_shapes, init_shapes) = (shapes(inputs), shapes(inits));
        let signature = computation.program_shape();
        let result = reduce_shape(
            &input_shapes.iter().collect::<Vec<_>>(),
            &init_shapes.iter().collect::<Vec<_>>(),
            &signature,
            dimensions_to_reduce,
        )?;
        let n = inputs.len();
        let parameter_type = |i: usize| signature.parameters[i].1.element_type();
        let mut ids: Vec<_> = inputs
            .iter()
            .enumerate()
            .map(|(i, o)| emit.convert_if_needed(o.id, parameter_type(n + i)))
            .collect();
        ids.extend(inits.iter().enumerate().map(|(i, o)| emit.convert_if_needed(o.id, parameter_type(i))));
        let reducer = emit.embed(&computation.entry);
        let opcode = Opcode::Reduce { dimensions: dimensions_to_reduce.to_vec(), reducer };
        Ok(emit.emit(opcode, &ids, result))
    })
}

/// The matrix product of `lhs` and `rhs` (XLA's `Dot`): contracts dimension 1 of a rank-2 lhs
/// (0 of a vector) with dimension 0 of the rhs.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("f");
/// let x = b.parameter(0, &shape!(f32[2, 3]), "x");
/// let w = b.parameter(1, &shape!(f32[3, 4]), "w");
/// assert_eq!(b.get_shape(dot(x, w))?, shape!(f32[2, 4]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn dot<'b>(lhs: XlaOp<'b>, rhs: XlaOp<'b>) -> XlaOp<'b> {
    dot_with(lhs, rhs, None, None)
}

/// [`dot`] with XLA's two optional arguments: a precision per operand (for backends that
/// compute less precisely by default, such as XLA's GPU backend, which runs a `Default` f32
/// dot in TF32) and the preferred element type, the type products are accumulated in and
/// returned as (`bf16 · bf16 → f32`, `s8 · s8 → s32`; a narrower type computes in the
/// operands' type and converts the result).
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("int8");
/// let x = b.parameter(0, &shape!(s8[1, 200]), "x");
/// let w = b.parameter(1, &shape!(s8[200, 1]), "w");
/// let y = dot_with(x, w, None, Some(ElementType::S32));
/// let exe = b.build(y)?.compile(&CompileOptions::default())?;
/// let hundreds = |s: &Shape| Literal::from_vec(s, vec![100i8; 200]);
/// let out = exe.execute(&[&hundreds(&shape!(s8[1, 200]))?, &hundreds(&shape!(s8[200, 1]))?])?;
/// assert_eq!(out.to_vec::<i32>()?, vec![2_000_000]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn dot_with<'b>(
    lhs: XlaOp<'b>,
    rhs: XlaOp<'b>,
    precision_config: Option<&PrecisionConfig>,
    preferred_element_type: Option<ElementType>,
) -> XlaOp<'b> {
    let lhs_rank = lhs.builder().get_shape(lhs).map_or(2, |s| s.rank());
    let numbers = DotDimensionNumbers {
        lhs_contracting_dimensions: vec![if lhs_rank == 1 { 0 } else { 1 }],
        rhs_contracting_dimensions: vec![0],
        ..Default::default()
    };
    dot_general_with(lhs, rhs, &numbers, precision_config, preferred_element_type)
}

/// The general tensor contraction (XLA's `DotGeneral`): sums over pairs of contracting
/// dimensions, independently for each index of the batch dimensions. The result's dimensions
/// are the batch dimensions, then lhs's free dimensions, then rhs's.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("f");
/// let x = b.parameter(0, &shape!(f32[8, 2, 3]), "x");
/// let y = b.parameter(1, &shape!(f32[8, 3, 4]), "y");
/// let numbers = DotDimensionNumbers {
///     lhs_contracting_dimensions: vec![2],
///     rhs_contracting_dimensions: vec![1],
///     lhs_batch_dimensions: vec![0],
///     rhs_batch_dimensions: vec![0],
/// };
/// assert_eq!(b.get_shape(dot_general(x, y, &numbers))?, shape!(f32[8, 2, 4]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn dot_general<'b>(lhs: XlaOp<'b>, rhs: XlaOp<'b>, dimension_numbers: &DotDimensionNumbers) -> XlaOp<'b> {
    dot_general_with(lhs, rhs, dimension_numbers, None, None)
}

/// [`dot_general`] with XLA's two optional arguments, as [`dot_with`] has them. Without a
/// preferred type, operands of different types are converted to the result's (the
/// higher-precision one); with one, the dot keeps its operands' types, as XLA's does, and its
/// result has the preferred type.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("mixed");
/// let x = b.parameter(0, &shape!(bf16[8, 2, 3]), "x");
/// let y = b.parameter(1, &shape!(bf16[8, 3, 4]), "y");
/// let numbers = DotDimensionNumbers::new(&[2], &[1], &[0], &[0]);
/// let highest = PrecisionConfig { operand_precision: vec![Precision::Highest; 2] };
/// let z = dot_general_with(x, y, &numbers, Some(&highest), Some(ElementType::F32));
/// assert_eq!(b.get_shape(z)?, shape!(f32[8, 2, 4]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn dot_general_with<'b>(
    lhs: XlaOp<'b>,
    rhs: XlaOp<'b>,
    dimension_numbers: &DotDimensionNumbers,
    precision_config: Option<&PrecisionConfig>,
    preferred_element_type: Option<ElementType>,
) -> XlaOp<'b> {
    lhs.builder().record("dot", &[lhs, rhs], |emit, operands| {
        let result =
            dot_shape(&operands[0].shape, &operands[1].shape, dimension_numbers, preferred_element_type)?;
        let ids: Vec<_> = match preferred_element_type {
            Some(_) => operands.iter().map(|o| o.id).collect(),
            None => operands.iter().map(|o| emit.convert_if_needed(o.id, result.element_type())).collect(),
        };
        let precision = precision_config.cloned().unwrap_or_default();
        Ok(emit.emit(Opcode::Dot { numbers: dimension_numbers.clone(), precision }, &ids, result))
    })
}
