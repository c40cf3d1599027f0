//! Windowed reductions: `reduce_window` (pooling) and `select_and_scatter` (its gradient), with
//! a `Padding` enum or explicit padding.

use crate::attributes::{Padding, Window};
use crate::builder::builder::{Emitter, Operand, XlaOp};
use crate::error::Result;
use crate::hlo::computation::XlaComputation;
use crate::hlo::ir::{InstructionId, Opcode};
use crate::shape_inference::window::{
    padding_for, reduce_window_shape, select_and_scatter_shape, window_from_dimensions,
};

/// XLA's `ReduceWindow`: each window of `window_dimensions` moved by `window_strides` over
/// `operand` (padded as `padding` says) reduced with `computation` from `init_value`. The
/// result has the default layout.
///
/// ```
/// use lazy_xla::*;
/// let max = { let m = XlaBuilder::new("max");
///     let (a, c) = (m.parameter(0, &shape!(f32[]), "a"), m.parameter(1, &shape!(f32[]), "b"));
///     m.build(lazy_xla::max(a, c, &[]))? };
/// let b = XlaBuilder::new("max_pool");
/// let x = b.constant_r1(&[1.0f32, 5.0, 2.0, 4.0, 3.0]);
/// let pooled = reduce_window(x, b.constant_r0(f32::NEG_INFINITY), &max, &[2], &[2], Padding::Same);
/// let exe = b.build(pooled)?.compile(&CompileOptions::default())?;
/// assert_eq!(exe.execute(&[])?.to_vec::<f32>()?, vec![5.0, 4.0, 3.0]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn reduce_window<'b>(
    operand: XlaOp<'b>,
    init_value: XlaOp<'b>,
    computation: &XlaComputation,
    window_dimensions: &[i64],
    window_strides: &[i64],
    padding: Padding,
) -> XlaOp<'b> {
    operand.builder().record("reduce-window", &[operand, init_value], |emit, operands| {
        let pads = padding_for(operands[0].shape.dimensions(), window_dimensions, window_strides, padding)?;
        let window = window_from_dimensions(window_dimensions, window_strides, &pads, &[], &[])?;
        record_reduce_window(emit, operands, computation, window)
    })
}

/// XLA's `ReduceWindowWithGeneralPadding`: [`reduce_window`] with `(low, high)` padding per
/// dimension (padding elements are never reduced: a window of padding alone gives
/// `init_value`), the operand dilated by `base_dilations` and the window by
/// `window_dilations`. An empty list means strides and dilations of 1 and no padding.
///
/// ```
/// use lazy_xla::*;
/// let sum = { let s = XlaBuilder::new("add");
///     let (a, c) = (s.parameter(0, &shape!(f32[]), "a"), s.parameter(1, &shape!(f32[]), "b"));
///     s.build(add(a, c, &[]))? };
/// let b = XlaBuilder::new("sums");
/// let x = b.constant_r1(&[1.0f32, 2.0, 3.0]);
/// let y = reduce_window_with_general_padding(x, b.constant_r0(0.0f32), &sum, &[2], &[], &[], &[], &[(1, 1)]);
/// let exe = b.build(y)?.compile(&CompileOptions::default())?;
/// assert_eq!(exe.execute(&[])?.to_vec::<f32>()?, vec![1.0, 3.0, 5.0, 3.0]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
#[allow(clippy::too_many_arguments)] // XLA's signature
pub fn reduce_window_with_general_padding<'b>(
    operand: XlaOp<'b>,
    init_value: XlaOp<'b>,
    computation: &XlaComputation,
    window_dimensions: &[i64],
    window_strides: &[i64],
    base_dilations: &[i64],
    window_dilations: &[i64],
    padding: &[(i64, i64)],
) -> XlaOp<'b> {
    operand.builder().record("reduce-window", &[operand, init_value], |emit, operands| {
        let window = window_from_dimensions(
            window_dimensions,
            window_strides,
            padding,
            base_dilations,
            window_dilations,
        )?;
        record_reduce_window(emit, operands, computation, window)
    })
}

/// Shape inference, converts of the operand and init value to the reducer's types where only
/// the float precision differs, and the reducer embedded.
fn record_reduce_window(
    emit: &mut Emitter<'_>,
    operands: &[Operand],
    computation: &XlaComputation,
    window: Window,
) -> Result<InstructionId> {
    let signature = computation.program_shape();
    reduce_window_shape(&operands[0].shape, &operands[1].shape, &window, &signature)?;
    let parameter_type = |i: usize| signature.parameters[i].1.element_type();
    let operand = emit.convert_if_needed(operands[0].id, parameter_type(1));
    let init = emit.convert_if_needed(operands[1].id, parameter_type(0));
    let result = reduce_window_shape(emit.shape(operand), emit.shape(init), &window, &signature)?;
    let reducer = emit.embed(&computation.entry);
    Ok(emit.emit(Opcode::ReduceWindow { window, reducer }, &[operand, init], result))
}

/// XLA's `SelectAndScatter`: for each window of `operand` (as [`reduce_window`] moves it),
/// `select` (`(a, b) -> pred`, "keep a over b") picks one element, and the window's `source`
/// value is combined by `scatter` into that position of a result that starts as `init_value`
/// everywhere. Padding is never selected; with `ge` the first of equal elements wins, with
/// `gt` the last. The result has the operand's shape, layout included.
///
/// ```
/// use lazy_xla::*;
/// let scalar = |name: &str, f: for<'b> fn(XlaOp<'b>, XlaOp<'b>) -> XlaOp<'b>| -> Result<XlaComputation> {
///     let c = XlaBuilder::new(name);
///     let (a, d) = (c.parameter(0, &shape!(f32[]), "a"), c.parameter(1, &shape!(f32[]), "b"));
///     c.build(f(a, d))
/// };
/// let ge = scalar("ge", |a, d| ge(a, d, &[]))?;
/// let add = scalar("add", |a, d| add(a, d, &[]))?;
/// let b = XlaBuilder::new("max_pool_grad");
/// let x = b.constant_r1(&[1.0f32, 5.0, 2.0, 4.0]);
/// let grads = b.constant_r1(&[10.0f32, 20.0]);
/// let y = select_and_scatter(x, &ge, &[2], &[2], Padding::Valid, grads, b.constant_r0(0.0f32), &add);
/// let exe = b.build(y)?.compile(&CompileOptions::default())?;
/// assert_eq!(exe.execute(&[])?.to_vec::<f32>()?, vec![0.0, 10.0, 0.0, 20.0]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
#[allow(clippy::too_many_arguments)] // XLA's signature
pub fn select_and_scatter<'b>(
    operand: XlaOp<'b>,
    select: &XlaComputation,
    window_dimensions: &[i64],
    window_strides: &[i64],
    padding: Padding,
    source: XlaOp<'b>,
    init_value: XlaOp<'b>,
    scatter: &XlaComputation,
) -> XlaOp<'b> {
    operand.builder().record("select-and-scatter", &[operand, source, init_value], |emit, operands| {
        let pads = padding_for(operands[0].shape.dimensions(), window_dimensions, window_strides, padding)?;
        let window = window_from_dimensions(window_dimensions, window_strides, &pads, &[], &[])?;
        record_select_and_scatter(emit, operands, select, scatter, window)
    })
}

/// XLA's `SelectAndScatterWithGeneralPadding`: [`select_and_scatter`] with `(low, high)`
/// padding per dimension (an empty list: none; empty strides: all 1).
///
/// ```
/// use lazy_xla::*;
/// let scalar = |name: &str, f: for<'b> fn(XlaOp<'b>, XlaOp<'b>) -> XlaOp<'b>| -> Result<XlaComputation> {
///     let c = XlaBuilder::new(name);
///     let (a, d) = (c.parameter(0, &shape!(f32[]), "a"), c.parameter(1, &shape!(f32[]), "b"));
///     c.build(f(a, d))
/// };
/// let (ge, add) = (scalar("ge", |a, d| ge(a, d, &[]))?, scalar("add", |a, d| add(a, d, &[]))?);
/// let b = XlaBuilder::new("grad");
/// let x = b.constant_r1(&[3.0f32, 1.0]);
/// let ones = b.constant_r1(&[1.0f32; 3]);
/// let y = select_and_scatter_with_general_padding(x, &ge, &[2], &[1], &[(1, 1)], ones, b.constant_r0(0.0f32), &add);
/// let exe = b.build(y)?.compile(&CompileOptions::default())?;
/// assert_eq!(exe.execute(&[])?.to_vec::<f32>()?, vec![2.0, 1.0]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
#[allow(clippy::too_many_arguments)] // XLA's signature
pub fn select_and_scatter_with_general_padding<'b>(
    operand: XlaOp<'b>,
    select: &XlaComputation,
    window_dimensions: &[i64],
    window_strides: &[i64],
    padding: &[(i64, i64)],
    source: XlaOp<'b>,
    init_value: XlaOp<'b>,
    scatter: &XlaComputation,
) -> XlaOp<'b> {
    operand.builder().record("select-and-scatter", &[operand, source, init_value], |emit, operands| {
        let window = window_from_dimensions(window_dimensions, window_strides, padding, &[], &[])?;
        record_select_and_scatter(emit, operands, select, scatter, window)
    })
}

/// Shape inference, converts of the operand, source and init value to the computations'
/// types where only the float precision differs, and both computations embedded (select
/// first, as XlaBuilder embeds them).
fn record_select_and_scatter(
    emit: &mut Emitter<'_>,
    operands: &[Operand],
    select: &XlaComputation,
    scatter: &XlaComputation,
    window: Window,
) -> Result<InstructionId> {
    let (select_signature, scatter_signature) = (select.program_shape(), scatter.program_shape());
    let infer = |emit: &Emitter<'_>, ids: [InstructionId; 3]| {
        select_and_scatter_shape(
            emit.shape(ids[0]),
            &select_signature,
            &window,
            emit.shape(ids[1]),
            emit.shape(ids[2]),
            &scatter_signature,
        )
    };
    infer(emit, [operands[0].id, operands[1].id, operands[2].id])?;
    let ids = [
        emit.convert_if_needed(operands[0].id, select_signature.parameters[0].1.element_type()),
        emit.convert_if_needed(operands[1].id, scatter_signature.parameters[1].1.element_type()),
        emit.convert_if_needed(operands[2].id, scatter_signature.parameters[0].1.element_type()),
    ];
    let result = infer(emit, ids)?;
    let select = emit.embed(&select.entry);
    let scatter = emit.embed(&scatter.entry);
    Ok(emit.emit(Opcode::SelectAndScatter { window, select, scatter }, &ids, result))
}
