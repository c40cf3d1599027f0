//! Gather and scatter: XLA's `InferGatherShape` and `InferScatterShape` with their
//! dimension-number validations, checks in XLA's order and its sentences verbatim. The
//! batching dimensions (added to XLA after the sentences quoted here were fixed) are checked
//! after the older fields, with sentences in the same style.

use crate::attributes::{GatherDimensionNumbers, ScatterDimensionNumbers};
use crate::error::{invalid_argument, Result};
use crate::shape::program_shape::ProgramShape;
use crate::shape::Shape;
use crate::shape_inference::make_shape;
use crate::shape_inference::reduce::verify_reducer;

/// `values` joined as XLA's `StrJoin(values, sep)`.
fn join(values: &[i64], separator: &str) -> String {
    values.iter().map(i64::to_string).collect::<Vec<_>>().join(separator)
}

fn is_sorted(values: &[i64]) -> bool {
    values.windows(2).all(|w| w[0] <= w[1])
}

fn has_adjacent_repeat(values: &[i64]) -> bool {
    values.windows(2).any(|w| w[0] == w[1])
}

fn has_repeat(values: &[i64]) -> bool {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    has_adjacent_repeat(&sorted)
}

/// The index dimensions with the index vector dimension appended as a 1 when it is the rank
/// (each index a scalar), after XLA's check that it is within `[0, rank]`.
fn expanded_indices(indices: &Shape, index_vector_dim: i64, op: &str, leaf: &str) -> Result<Vec<i64>> {
    if !indices.element_type().is_integral() {
        invalid_argument!(
            "{op} indices parameter must be an integral tensor; got {}.",
            indices.human_string()
        );
    }
    let rank = indices.rank() as i64;
    if rank < index_vector_dim || index_vector_dim < 0 {
        invalid_argument!(
            "{op} index leaf dimension must be within [0, rank({leaf}) + 1). rank({leaf}) is {rank} and \
             {} index leaf dimension is {index_vector_dim}.",
            op.to_lowercase()
        );
    }
    let mut expanded = indices.dimensions().to_vec();
    if expanded.len() as i64 == index_vector_dim {
        expanded.push(1);
    }
    Ok(expanded)
}

/// The batching dimensions of a gather or scatter: operand dimensions and index dimensions,
/// pairwise, of equal sizes, disjoint from the collapsed (inserted) dimensions and the index
/// vector dimension.
fn validate_batching_dims(
    op: &str,
    operand: &Shape,
    indices: &[i64],
    index_vector_dim: i64,
    (operand_name, operand_dims): (&str, &[i64]),
    (indices_name, indices_dims): (&str, &[i64]),
    (collapsed_name, collapsed): (&str, &[i64]),
) -> Result<()> {
    let rank = operand.rank() as i64;
    if let Some(&d) = operand_dims.iter().find(|&&d| d < 0 || d >= rank) {
        invalid_argument!("Invalid {operand_name} set in {op} op; valid range is [0, {rank}), got: {d}.");
    }
    if !is_sorted(operand_dims) {
        invalid_argument!("{operand_name} in {op} op must be sorted; got: {}", join(operand_dims, ", "));
    }
    if has_adjacent_repeat(operand_dims) {
        invalid_argument!(
            "Repeated dimensions not allowed in {operand_name} in {op} op; got: {}.",
            join(operand_dims, ", ")
        );
    }
    if let Some(d) = operand_dims.iter().find(|d| collapsed.contains(d)) {
        invalid_argument!("{collapsed_name} and {operand_name} in {op} op must not overlap; got: {d}.");
    }
    if operand_dims.len() != indices_dims.len() {
        invalid_argument!(
            "{operand_name} and {indices_name} in {op} op must be of the same size; got: {} and {}.",
            operand_dims.len(),
            indices_dims.len()
        );
    }
    let indices_rank = indices.len() as i64;
    if let Some(&d) = indices_dims.iter().find(|&&d| d < 0 || d >= indices_rank || d == index_vector_dim) {
        invalid_argument!(
            "Invalid {indices_name} set in {op} op; valid range is [0, {indices_rank}) excluding \
             index_vector_dim={index_vector_dim}, got: {d}."
        );
    }
    if has_repeat(indices_dims) {
        invalid_argument!(
            "Repeated dimensions not allowed in {indices_name} in {op} op; got: {}.",
            join(indices_dims, ", ")
        );
    }
    for (&o, &i) in operand_dims.iter().zip(indices_dims) {
        let (operand_size, indices_size) = (operand.dimensions()[o as usize], indices[i as usize]);
        if operand_size != indices_size {
            invalid_argument!(
                "{operand_name} and {indices_name} in {op} op must have the same sizes; got: {operand_size} \
                 (dimension {o}) and {indices_size} (dimension {i})."
            );
        }
    }
    Ok(())
}

/// XLA's `ValidateGatherDimensionNumbers`, over the expanded index dimensions.
fn validate_gather_numbers(operand: &Shape, indices: &[i64], numbers: &GatherDimensionNumbers) -> Result<()> {
    let offset_dims = &numbers.offset_dims;
    if !is_sorted(offset_dims) {
        invalid_argument!(
            "Output window dimensions in gather op must be ascending; got: {}.",
            join(offset_dims, ", ")
        );
    }
    if has_adjacent_repeat(offset_dims) {
        invalid_argument!(
            "Output window dimensions in gather op must not repeat; got: {}.",
            join(offset_dims, ", ")
        );
    }
    let output_rank = offset_dims.len() as i64 + indices.len() as i64 - 1;
    for (i, &d) in offset_dims.iter().enumerate() {
        if d < 0 || d >= output_rank {
            invalid_argument!(
                "Offset dimension {i} in gather op is out of bounds; got {d}, but should have been in \
                 [0,{output_rank})."
            );
        }
    }
    let index_vector_size = indices[numbers.index_vector_dim as usize];
    if numbers.start_index_map.len() as i64 != index_vector_size {
        invalid_argument!(
            "Gather op has {} elements in start_index_map and the bound of dimension index_vector_dim={} of \
             start_indices is {index_vector_size}. These two numbers must be equal.",
            numbers.start_index_map.len(),
            numbers.index_vector_dim
        );
    }
    let rank = operand.rank() as i64;
    for (i, &d) in numbers.start_index_map.iter().enumerate() {
        if d < 0 || d >= rank {
            invalid_argument!("Invalid start_index_map; domain is [0, {rank}), got: {i}->{d}.");
        }
    }
    if has_repeat(&numbers.start_index_map) {
        invalid_argument!(
            "Repeated dimensions are not allowed in start_index_map; got: {}.",
            join(&numbers.start_index_map, ", ")
        );
    }
    let collapsed = &numbers.collapsed_slice_dims;
    if let Some(&d) = collapsed.iter().find(|&&d| d < 0 || d >= rank) {
        invalid_argument!(
            "Invalid collapsed_slice_dims set in gather op; valid range is [0, {rank}), got: {d}."
        );
    }
    if !is_sorted(collapsed) {
        invalid_argument!("collapsed_slice_dims in gather op must be sorted; got: {}", join(collapsed, ", "));
    }
    if has_adjacent_repeat(collapsed) {
        invalid_argument!(
            "Repeated dimensions not allowed in collapsed_slice_dims in gather op; got: {}.",
            join(collapsed, ", ")
        );
    }
    validate_batching_dims(
        "gather",
        operand,
        indices,
        numbers.index_vector_dim,
        ("operand_batching_dims", &numbers.operand_batching_dims),
        ("start_indices_batching_dims", &numbers.start_indices_batching_dims),
        ("collapsed_slice_dims", collapsed),
    )
}

/// XLA's `InferGatherShape`: the offset dimensions (slice sizes of the dimensions neither
/// collapsed nor batching) at `offset_dims`, the index batch dimensions elsewhere in order; the
/// operand's element type, default layout.
pub(crate) fn gather_shape(
    operand: &Shape,
    start_indices: &Shape,
    numbers: &GatherDimensionNumbers,
    slice_sizes: &[i64],
) -> Result<Shape> {
    let indices = expanded_indices(start_indices, numbers.index_vector_dim, "Gather", "start_indices")?;
    validate_gather_numbers(operand, &indices, numbers)?;
    let rank = operand.rank();
    if slice_sizes.len() != rank {
        invalid_argument!(
            "Gather op must have one slice size for every input dimension; got: len(slice_sizes)={}, \
             input_shape.rank={rank}.",
            slice_sizes.len()
        );
    }
    let dropped = numbers.collapsed_slice_dims.len() + numbers.operand_batching_dims.len();
    if slice_sizes.len() != numbers.offset_dims.len() + dropped {
        invalid_argument!(
            "All components of the offset index in a gather op must either be a offset dimension or explicitly \
             collapsed or explicitly batched; got len(slice_sizes)={}, output_slice_sizes={}, \
             collapsed_slice_dims={}, operand_batching_dims={}.",
            slice_sizes.len(),
            join(&numbers.offset_dims, ","),
            join(&numbers.collapsed_slice_dims, ","),
            join(&numbers.operand_batching_dims, ",")
        );
    }
    for (i, (&size, &bound)) in slice_sizes.iter().zip(operand.dimensions()).enumerate() {
        if size < 0 || size > bound {
            invalid_argument!(
                "Slice size at index {i} in gather op is out of range, must be within [0, {}), got {size}.",
                bound + 1
            );
        }
    }
    for (i, &d) in numbers.collapsed_slice_dims.iter().enumerate() {
        if slice_sizes[d as usize] > 1 {
            invalid_argument!(
                "Gather op can only collapse slice dims with bound 1 or 0, but bound is {} for index {d} at \
                 position {i}.",
                slice_sizes[d as usize]
            );
        }
    }
    for (i, &d) in numbers.operand_batching_dims.iter().enumerate() {
        if slice_sizes[d as usize] > 1 {
            invalid_argument!(
                "Gather op can only have operand batching dims with bound 0/1, but bound is {} for index {d} at \
                 position {i}.",
                slice_sizes[d as usize]
            );
        }
    }
    let kept: Vec<i64> = (0..rank as i64)
        .filter(|d| !numbers.collapsed_slice_dims.contains(d) && !numbers.operand_batching_dims.contains(d))
        .map(|d| slice_sizes[d as usize])
        .collect();
    let batch: Vec<i64> = indices
        .iter()
        .enumerate()
        .filter(|&(d, _)| d as i64 != numbers.index_vector_dim)
        .map(|(_, &size)| size)
        .collect();
    let (mut kept, mut batch) = (kept.into_iter(), batch.into_iter());
    let output_rank = numbers.offset_dims.len() + indices.len() - 1;
    let dimensions: Vec<i64> = (0..output_rank as i64)
        .map(|d| match numbers.offset_dims.binary_search(&d) {
            Ok(_) => kept.next(),
            Err(_) => batch.next(),
        })
        .collect::<Option<_>>()
        .unwrap_or_default();
    make_shape(operand.element_type(), &dimensions)
}

/// XLA's `ValidateScatterDimensionNumbers`, over the expanded index dimensions.
fn validate_scatter_numbers(
    operand: &Shape,
    indices: &[i64],
    updates: &Shape,
    numbers: &ScatterDimensionNumbers,
) -> Result<()> {
    let window = &numbers.update_window_dims;
    if !is_sorted(window) {
        invalid_argument!("update_window_dims in scatter op must be sorted; got: {}.", join(window, ", "));
    }
    if has_adjacent_repeat(window) {
        invalid_argument!("update_window_dims in scatter op must not repeat; got: {}.", join(window, ", "));
    }
    let updates_rank = updates.rank() as i64;
    if let Some(&d) = window.iter().find(|&&d| d < 0 || d >= updates_rank) {
        invalid_argument!(
            "Invalid update_window_dims set in scatter op; valid range is [0, {updates_rank}). got: {d}."
        );
    }
    let inserted = &numbers.inserted_window_dims;
    if !is_sorted(inserted) {
        invalid_argument!(
            "inserted_window_dims in scatter op must be sorted; got: {}.",
            join(inserted, ", ")
        );
    }
    if has_adjacent_repeat(inserted) {
        invalid_argument!(
            "inserted_window_dims in scatter op must not repeat; got: {}.",
            join(inserted, ", ")
        );
    }
    let rank = operand.rank() as i64;
    if let Some(&d) = inserted.iter().find(|&&d| d < 0 || d >= rank) {
        invalid_argument!(
            "Invalid inserted_window_dims set in scatter op; valid range is [0, {rank}), got: {d}."
        );
    }
    let window_size = window.len() + inserted.len() + numbers.input_batching_dims.len();
    if window_size as i64 != rank {
        invalid_argument!(
            "Scatter op has window of size {window_size}; doesn't match operand of rank {rank}."
        );
    }
    let index_vector_size = indices[numbers.index_vector_dim as usize];
    let map = &numbers.scatter_dims_to_operand_dims;
    if map.len() as i64 != index_vector_size {
        invalid_argument!(
            "Scatter op has {} elements in scatter_dims_to_operand_dims and the bound of dimension \
             index_vector_dim={} of scatter_indices is {index_vector_size}. These two numbers must be equal.",
            map.len(),
            numbers.index_vector_dim
        );
    }
    for (i, &d) in map.iter().enumerate() {
        if d < 0 || d >= rank {
            invalid_argument!(
                "Invalid scatter_dims_to_operand_dims mapping; domain is [0, {rank}), got: {i}->{d}."
            );
        }
    }
    if has_repeat(map) {
        invalid_argument!(
            "Repeated dimensions not allowed in scatter_dims_to_operand_dims; got: {}.",
            join(map, ", ")
        );
    }
    validate_batching_dims(
        "scatter",
        operand,
        indices,
        numbers.index_vector_dim,
        ("input_batching_dims", &numbers.input_batching_dims),
        ("scatter_indices_batching_dims", &numbers.scatter_indices_batching_dims),
        ("inserted_window_dims", inserted),
    )
}

/// XLA's `InferScatterShape` for one operand: the operand's shape (layout included), after
/// the updates' rank and bounds and the update computation (a reducer of the operand's and
/// the updates' element types) are checked.
pub(crate) fn scatter_shape(
    operand: &Shape,
    scatter_indices: &Shape,
    updates: &Shape,
    update_computation: &ProgramShape,
    numbers: &ScatterDimensionNumbers,
) -> Result<Shape> {
    let indices = expanded_indices(scatter_indices, numbers.index_vector_dim, "Scatter", "scatter_indices")?;
    let max_window: Vec<i64> = (0..operand.rank() as i64)
        .filter(|d| !numbers.inserted_window_dims.contains(d) && !numbers.input_batching_dims.contains(d))
        .map(|d| operand.dimensions()[d as usize])
        .collect();
    let expected_rank = indices.len() as i64 - 1 + numbers.update_window_dims.len() as i64;
    if updates.rank() as i64 != expected_rank {
        invalid_argument!("Updates tensor must be of rank {expected_rank}; got {}.", updates.rank());
    }
    validate_scatter_numbers(operand, &indices, updates, numbers)?;
    for (i, &d) in numbers.update_window_dims.iter().enumerate() {
        let bound = updates.dimensions()[d as usize];
        if bound > max_window[i] {
            invalid_argument!(
                "Bounds of the window dimensions of updates must not exceed the bounds of the corresponding \
                 dimensions of operand. For dimension {d}, updates bound is {bound}, operand bound is {}.",
                max_window[i]
            );
        }
    }
    let mut scatter_dims = (0..indices.len()).filter(|&d| d as i64 != numbers.index_vector_dim);
    for i in 0..updates.rank() as i64 {
        if numbers.update_window_dims.binary_search(&i).is_ok() {
            continue;
        }
        let Some(d) = scatter_dims.next() else { break };
        let bound = updates.dimensions()[i as usize];
        if bound != indices[d] {
            invalid_argument!(
                "Bounds of the scatter dimensions of updates must be same as the bounds of the corresponding \
                 dimensions of scatter indices. For scatter dimension {i}, updates bound is {bound}, \
                 scatter_indices bound is {}.",
                indices[d]
            );
        }
    }
    let init = Shape::scalar(operand.element_type());
    verify_reducer(update_computation, &[&init], &[updates])?;
    Ok(operand.clone())
}
