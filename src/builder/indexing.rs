//! Indexing: `gather`, `scatter`, `dynamic_slice` and `dynamic_update_slice` (XLA's ops of
//! the same names). Start indices out of range are clamped into it, as XLA clamps them; a
//! scatter window that does not fit is skipped whole.

use crate::attributes::{GatherDimensionNumbers, ScatterDimensionNumbers};
use crate::builder::builder::XlaOp;
use crate::hlo::computation::XlaComputation;
use crate::hlo::ir::Opcode;
use crate::shape::Shape;
use crate::shape_inference::dynamic_slice::{dynamic_slice_shape, dynamic_update_slice_shape};
use crate::shape_inference::gather::{gather_shape, scatter_shape};

/// XLA's `Gather`: for each index vector of `start_indices`, the slice of `operand` of
/// `slice_sizes` starting there (each start clamped to `[0, dim − size]`, unsigned indices
/// read as unsigned), laid out as `dimension_numbers` say. The result has the default layout.
///
/// ```
/// use lazy_xla::*;
/// let rows = GatherDimensionNumbers {
///     offset_dims: vec![1],
///     collapsed_slice_dims: vec![0],
///     start_index_map: vec![0],
///     index_vector_dim: 1,
///     ..Default::default()
/// };
/// let b = XlaBuilder::new("take");
/// let table = b.constant_literal(&Literal::from_vec(&shape!(f32[3, 2]), vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0])?);
/// let ids = b.constant_r1(&[2i32, 0, 7]); // 7 is clamped to 2
/// let exe = b.build(gather(table, ids, &rows, &[1, 2], false))?.compile(&CompileOptions::default())?;
/// assert_eq!(exe.execute(&[])?.to_vec::<f32>()?, vec![4.0, 5.0, 0.0, 1.0, 4.0, 5.0]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn gather<'b>(
    operand: XlaOp<'b>,
    start_indices: XlaOp<'b>,
    dimension_numbers: &GatherDimensionNumbers,
    slice_sizes: &[i64],
    indices_are_sorted: bool,
) -> XlaOp<'b> {
    operand.builder().record("gather", &[operand, start_indices], |emit, operands| {
        let result = gather_shape(&operands[0].shape, &operands[1].shape, dimension_numbers, slice_sizes)?;
        let opcode = Opcode::Gather {
            numbers: dimension_numbers.clone(),
            slice_sizes: slice_sizes.to_vec(),
            indices_are_sorted,
        };
        Ok(emit.emit(opcode, &[operands[0].id, operands[1].id], result))
    })
}

/// XLA's `Scatter`: `operand` with each window of `updates` combined into it by
/// `update_computation` (`(current, update) -> new`) at the start its index vector in
/// `scatter_indices` gives; a window that does not fit inside the operand is skipped whole.
/// The result has the operand's shape, layout included.
///
/// ```
/// use lazy_xla::*;
/// let sum = { let s = XlaBuilder::new("add");
///     let (a, c) = (s.parameter(0, &shape!(f32[]), "a"), s.parameter(1, &shape!(f32[]), "b"));
///     s.build(add(a, c, &[]))? };
/// let numbers = ScatterDimensionNumbers {
///     update_window_dims: vec![],
///     inserted_window_dims: vec![0],
///     scatter_dims_to_operand_dims: vec![0],
///     index_vector_dim: 1,
///     ..Default::default()
/// };
/// let b = XlaBuilder::new("histogram");
/// let counts = b.constant_r1(&[0.0f32; 4]);
/// let bins = b.constant_r1(&[1i32, 3, 1, 9]); // 9 is out of range: skipped
/// let ones = b.constant_r1(&[1.0f32; 4]);
/// let exe = b.build(scatter(counts, bins, ones, &sum, &numbers, false, false))?.compile(&CompileOptions::default())?;
/// assert_eq!(exe.execute(&[])?.to_vec::<f32>()?, vec![0.0, 2.0, 0.0, 1.0]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
#[allow(clippy::too_many_arguments)] // XLA's signature
pub fn scatter<'b>(
    operand: XlaOp<'b>,
    scatter_indices: XlaOp<'b>,
    updates: XlaOp<'b>,
    update_computation: &XlaComputation,
    dimension_numbers: &ScatterDimensionNumbers,
    indices_are_sorted: bool,
    unique_indices: bool,
) -> XlaOp<'b> {
    operand.builder().record("scatter", &[operand, scatter_indices, updates], |emit, operands| {
        let signature = update_computation.program_shape();
        let result = scatter_shape(
            &operands[0].shape,
            &operands[1].shape,
            &operands[2].shape,
            &signature,
            dimension_numbers,
        )?;
        // Updates of another float precision are converted to the operand's type.
        let updates = emit.convert_if_needed(operands[2].id, result.element_type());
        let opcode = Opcode::Scatter {
            numbers: dimension_numbers.clone(),
            indices_are_sorted,
            unique_indices,
            update: emit.embed(&update_computation.entry),
        };
        Ok(emit.emit(opcode, &[operands[0].id, operands[1].id, updates], result))
    })
}

/// XLA's `DynamicSlice`: the `slice_sizes` slice of `operand` starting at `start_indices`
/// (one integer scalar per dimension, each clamped to `[0, dim − size]`). The result has the
/// default layout.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("window");
/// let x = b.constant_r1(&[0.0f32, 1.0, 2.0, 3.0]);
/// let start = b.parameter(0, &shape!(s32[]), "start");
/// let exe = b.build(dynamic_slice(x, &[start], &[2]))?.compile(&CompileOptions::default())?;
/// assert_eq!(exe.execute(&[&Literal::scalar(1i32)])?.to_vec::<f32>()?, vec![1.0, 2.0]);
/// assert_eq!(exe.execute(&[&Literal::scalar(5i32)])?.to_vec::<f32>()?, vec![2.0, 3.0]); // clamped to 2
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn dynamic_slice<'b>(operand: XlaOp<'b>, start_indices: &[XlaOp<'b>], slice_sizes: &[i64]) -> XlaOp<'b> {
    let all: Vec<XlaOp<'b>> = std::iter::once(operand).chain(start_indices.iter().copied()).collect();
    operand.builder().record("dynamic-slice", &all, |emit, operands| {
        let starts: Vec<&Shape> = operands[1..].iter().map(|o| &o.shape).collect();
        let result = dynamic_slice_shape(&operands[0].shape, &starts, slice_sizes)?;
        let ids: Vec<_> = operands.iter().map(|o| o.id).collect();
        Ok(emit.emit(Opcode::DynamicSlice { slice_sizes: slice_sizes.to_vec() }, &ids, result))
    })
}

/// XLA's `DynamicUpdateSlice`: `operand` with `update` written over it at `start_indices`
/// (one integer scalar per dimension, each clamped to `[0, dim − update size]`). The result
/// has the operand's shape, layout included.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("write");
/// let x = b.constant_r1(&[0.0f32; 4]);
/// let start = b.parameter(0, &shape!(s32[]), "start");
/// let y = dynamic_update_slice(x, b.constant_r1(&[7.0f32, 8.0]), &[start]);
/// let exe = b.build(y)?.compile(&CompileOptions::default())?;
/// assert_eq!(exe.execute(&[&Literal::scalar(-3i32)])?.to_vec::<f32>()?, vec![7.0, 8.0, 0.0, 0.0]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn dynamic_update_slice<'b>(
    operand: XlaOp<'b>,
    update: XlaOp<'b>,
    start_indices: &[XlaOp<'b>],
) -> XlaOp<'b> {
    let all: Vec<XlaOp<'b>> = [operand, update].into_iter().chain(start_indices.iter().copied()).collect();
    operand.builder().record("dynamic-update-slice", &all, |emit, operands| {
        let starts: Vec<&Shape> = operands[2..].iter().map(|o| &o.shape).collect();
        let result = dynamic_update_slice_shape(&operands[0].shape, &operands[1].shape, &starts)?;
        let mut ids: Vec<_> = operands.iter().map(|o| o.id).collect();
        ids[1] = emit.convert_if_needed(ids[1], result.element_type());
        Ok(emit.emit(Opcode::DynamicUpdateSlice, &ids, result))
    })
}
