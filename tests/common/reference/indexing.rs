//! `gather` and `scatter`, as XLA's operation semantics define them. A gather's start index is
//! clamped so that its slice fits the operand; a scatter's update window that does not fit
//! whole is skipped (XLA's CPU backend, asked through jax's `PROMISE_IN_BOUNDS` mode: a window
//! of 3 at 4 in an operand of 6 is dropped). Several updates to one element combine in any
//! order: a reducer folds them as a reduce does (`reduction::fold`), overwrites of different
//! values leave the element unknown. An unknown index makes what it could reach unknown.

use crate::common::recipe::computations::Updater;
use crate::common::reference::movement::unknown_array;
use crate::common::reference::reduction::fold;
use crate::common::reference::{indices, linear};
use crate::common::semantics::either;
use crate::common::values::{Array, Elem};
use lazy_xla::{GatherDimensionNumbers, ScatterDimensionNumbers};

/// The index vector at the batch position `batch` (the indices' dimensions other than
/// `index_vector_dim`, in order) of `indices`; `None` if any component is unknown.
fn index_vector(indices: &Array, index_vector_dim: i64, batch: &[i64]) -> Option<Vec<i128>> {
    let v = index_vector_dim as usize;
    let components = if v == indices.dims.len() { 1 } else { indices.dims[v] };
    (0..components)
        .map(|k| {
            let mut at = batch.to_vec();
            if v < indices.dims.len() {
                at.insert(v, k);
            }
            let e = indices.at(&at);
            (!e.is_unknown()).then(|| e.value.int())
        })
        .collect()
}

/// The position among the batch dimensions of the indices' dimension `d` (which is not
/// `index_vector_dim`).
fn batch_position(d: i64, index_vector_dim: i64) -> usize {
    (if d > index_vector_dim { d - 1 } else { d }) as usize
}

/// `gather(operand, indices, numbers, slice_sizes)`: output dimensions in `offset_dims` walk
/// the slice (over the operand dimensions neither collapsed nor batching, in order), the
/// others are the batch dimensions of the indices; the slice starts at the index vector
/// (mapped by `start_index_map`, each start clamped into `[0, dim − size]`), and at the batch
/// position itself in the operand's batching dimensions.
pub fn gather(
    operand: &Array,
    indices_array: &Array,
    numbers: &GatherDimensionNumbers,
    slice_sizes: &[i64],
) -> Array {
    let rank = operand.dims.len();
    let v = numbers.index_vector_dim;
    let dropped = |d: usize| {
        numbers.collapsed_slice_dims.contains(&(d as i64))
            || numbers.operand_batching_dims.contains(&(d as i64))
    };
    let window_dims: Vec<usize> = (0..rank).filter(|&d| !dropped(d)).collect();
    let batch_dims: Vec<i64> = (0..indices_array.dims.len() as i64)
        .filter(|&d| d != v)
        .map(|d| indices_array.dims[d as usize])
        .collect();
    let output_rank = batch_dims.len() + numbers.offset_dims.len();
    let (mut window, mut batch) = (window_dims.iter(), batch_dims.iter());
    let dims: Vec<i64> = (0..output_rank as i64)
        .map(|d| match numbers.offset_dims.contains(&d) {
            true => slice_sizes[*window.next().expect("an offset dimension")],
            false => *batch.next().expect("a batch dimension"),
        })
        .collect();
    Array::from_fn(operand.ty, &dims, |out| {
        let is_offset = |d: &usize| numbers.offset_dims.contains(&(*d as i64));
        let batch: Vec<i64> = (0..output_rank).filter(|d| !is_offset(d)).map(|d| out[d]).collect();
        let offsets: Vec<i64> = (0..output_rank).filter(is_offset).map(|d| out[d]).collect();
        let Some(vector) = index_vector(indices_array, v, &batch) else {
            return Elem::unknown_of(operand.ty);
        };
        let mut full = vec![0i64; rank];
        for (k, &d) in numbers.start_index_map.iter().enumerate() {
            let d = d as usize;
            full[d] = vector[k].clamp(0, i128::from(operand.dims[d] - slice_sizes[d])) as i64;
        }
        for (&d, &i) in numbers.operand_batching_dims.iter().zip(&numbers.start_indices_batching_dims) {
            full[d as usize] = batch[batch_position(i, v)];
        }
        for (&d, &offset) in window_dims.iter().zip(&offsets) {
            full[d] += offset;
        }
        operand.at(&full)
    })
}

/// Where each element of a scatter's updates (of `update_dims`, row-major) goes in an operand
/// of `operand_dims`: its row-major position, or `None` where its window does not fit whole;
/// `None` for all of them if an index is unknown.
pub fn scatter_targets(
    operand_dims: &[i64],
    indices_array: &Array,
    update_dims: &[i64],
    numbers: &ScatterDimensionNumbers,
) -> Option<Vec<Option<usize>>> {
    let rank = operand_dims.len();
    let v = numbers.index_vector_dim;
    let inserted = |d: usize| {
        numbers.inserted_window_dims.contains(&(d as i64))
            || numbers.input_batching_dims.contains(&(d as i64))
    };
    let window_dims: Vec<usize> = (0..rank).filter(|&d| !inserted(d)).collect();
    let is_window = |d: &usize| numbers.update_window_dims.contains(&(*d as i64));
    let mut window_size = vec![1i64; rank];
    for (&d, &u) in window_dims.iter().zip(&numbers.update_window_dims) {
        window_size[d] = update_dims[u as usize];
    }
    indices(update_dims)
        .iter()
        .map(|u| {
            let batch: Vec<i64> = (0..u.len()).filter(|d| !is_window(d)).map(|d| u[d]).collect();
            let offsets: Vec<i64> = (0..u.len()).filter(is_window).map(|d| u[d]).collect();
            let vector = index_vector(indices_array, v, &batch)?;
            let mut start = vec![0i128; rank];
            for (k, &d) in numbers.scatter_dims_to_operand_dims.iter().enumerate() {
                start[d as usize] = vector[k];
            }
            for (&d, &i) in numbers.input_batching_dims.iter().zip(&numbers.scatter_indices_batching_dims) {
                start[d as usize] = i128::from(batch[batch_position(i, v)]);
            }
            let fits = (0..rank).all(|d| {
                start[d] >= 0 && start[d] + i128::from(window_size[d]) <= i128::from(operand_dims[d])
            });
            if !fits {
                return Some(None);
            }
            let mut full: Vec<i64> = start.iter().map(|&s| s as i64).collect();
            for (&d, &offset) in window_dims.iter().zip(&offsets) {
                full[d] += offset;
            }
            Some(Some(linear(operand_dims, &full)))
        })
        .collect()
}

/// `scatter(operand, indices, updates, updater, numbers)`: each update element combined into
/// the operand element `scatter_targets` sends it to.
pub fn scatter(
    operand: &Array,
    indices_array: &Array,
    updates: &Array,
    updater: Updater,
    numbers: &ScatterDimensionNumbers,
) -> Array {
    let Some(targets) = scatter_targets(&operand.dims, indices_array, &updates.dims, numbers) else {
        return unknown_array(operand.ty, &operand.dims);
    };
    let mut received: Vec<Vec<Elem>> = vec![Vec::new(); operand.elems.len()];
    for (position, target) in targets.into_iter().enumerate() {
        if let Some(target) = target {
            received[target].push(updates.elems[position]);
        }
    }
    let elems = (operand.elems.iter().zip(&received))
        .map(|(&current, updates)| match (updater, &updates[..]) {
            (Updater::Reduce(reducer), _) => fold(reducer, operand.ty, current, updates),
            (Updater::Overwrite, []) => current,
            (Updater::Overwrite, _) => either(operand.ty, updates),
        })
        .collect();
    Array { ty: operand.ty, dims: operand.dims.clone(), elems }
}
