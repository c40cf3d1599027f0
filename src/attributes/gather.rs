//! `GatherDimensionNumbers` and `ScatterDimensionNumbers`: how a gather reads slices at
//! indices, and how a scatter writes update windows at indices (xla_data.proto's messages).

use crate::shape::layout::join;

/// How `gather` reads (xla_data.proto's `GatherDimensionNumbers`): each index vector of the
/// start indices (along `index_vector_dim`) gives the start of one slice of the operand, in the
/// operand dimensions `start_index_map` lists; the slice's dimensions that are not collapsed
/// become the output's `offset_dims`, the other output dimensions are the indices' batch.
///
/// ```
/// use lazy_xla::*;
/// // Rows of a table: each index is one row number.
/// let rows = GatherDimensionNumbers {
///     offset_dims: vec![1],
///     collapsed_slice_dims: vec![0],
///     start_index_map: vec![0],
///     index_vector_dim: 1,
///     ..Default::default()
/// };
/// let b = XlaBuilder::new("embed");
/// let table = b.parameter(0, &shape!(f32[100, 8]), "table");
/// let ids = b.parameter(1, &shape!(s32[5]), "ids");
/// assert_eq!(b.get_shape(gather(table, ids, &rows, &[1, 8], false))?, shape!(f32[5, 8]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct GatherDimensionNumbers {
    /// The output dimensions that index into a slice, ascending.
    pub offset_dims: Vec<i64>,
    /// The operand dimensions whose slice size is 1 and that the output drops, ascending.
    pub collapsed_slice_dims: Vec<i64>,
    /// For each component of an index vector, the operand dimension it starts.
    pub start_index_map: Vec<i64>,
    /// The dimension of the start indices that holds the index vectors (their rank: each
    /// index is a scalar, read as a 1-vector).
    pub index_vector_dim: i64,
    /// Operand dimensions (slice size 1, dropped) indexed by the batch position itself.
    pub operand_batching_dims: Vec<i64>,
    /// The start-indices dimensions that pair with `operand_batching_dims`.
    pub start_indices_batching_dims: Vec<i64>,
}

/// How `scatter` writes (xla_data.proto's `ScatterDimensionNumbers`): each index vector of
/// the scatter indices (along `index_vector_dim`) gives the start, in the operand dimensions
/// `scatter_dims_to_operand_dims` lists, of one update window; `update_window_dims` are the
/// dimensions of the updates inside a window, `inserted_window_dims` the operand dimensions a
/// window has size 1 in and the updates do not have.
///
/// ```
/// let numbers = lazy_xla::ScatterDimensionNumbers {
///     update_window_dims: vec![1],
///     inserted_window_dims: vec![0],
///     scatter_dims_to_operand_dims: vec![0],
///     index_vector_dim: 1,
///     ..Default::default()
/// };
/// assert!(numbers.input_batching_dims.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ScatterDimensionNumbers {
    /// The dimensions of the updates that index inside a window, ascending.
    pub update_window_dims: Vec<i64>,
    /// The operand dimensions in which a window has size 1 (not in the updates), ascending.
    pub inserted_window_dims: Vec<i64>,
    /// For each component of an index vector, the operand dimension it starts.
    pub scatter_dims_to_operand_dims: Vec<i64>,
    /// The dimension of the scatter indices that holds the index vectors (their rank: each
    /// index is a scalar, read as a 1-vector).
    pub index_vector_dim: i64,
    /// Operand dimensions (window size 1) indexed by the batch position itself.
    pub input_batching_dims: Vec<i64>,
    /// The scatter-indices dimensions that pair with `input_batching_dims`.
    pub scatter_indices_batching_dims: Vec<i64>,
}

impl GatherDimensionNumbers {
    /// The attributes as XLA's HLO text prints them (`offset_dims={1}, …, index_vector_dim=1`);
    /// the batching lists only when they are not empty.
    pub(crate) fn hlo_text(&self) -> String {
        let mut parts = vec![
            format!("offset_dims={{{}}}", join(&self.offset_dims)),
            format!("collapsed_slice_dims={{{}}}", join(&self.collapsed_slice_dims)),
            format!("start_index_map={{{}}}", join(&self.start_index_map)),
        ];
        if !self.operand_batching_dims.is_empty() {
            parts.push(format!("operand_batching_dims={{{}}}", join(&self.operand_batching_dims)));
            parts
                .push(format!("start_indices_batching_dims={{{}}}", join(&self.start_indices_batching_dims)));
        }
        parts.push(format!("index_vector_dim={}", self.index_vector_dim));
        parts.join(", ")
    }
}

impl ScatterDimensionNumbers {
    /// The attributes as XLA's HLO text prints them (`update_window_dims={1}, …,
    /// index_vector_dim=1`); the batching lists only when they are not empty.
    pub(crate) fn hlo_text(&self) -> String {
        let mut parts = vec![
            format!("update_window_dims={{{}}}", join(&self.update_window_dims)),
            format!("inserted_window_dims={{{}}}", join(&self.inserted_window_dims)),
            format!("scatter_dims_to_operand_dims={{{}}}", join(&self.scatter_dims_to_operand_dims)),
        ];
        if !self.input_batching_dims.is_empty() {
            parts.push(format!("input_batching_dims={{{}}}", join(&self.input_batching_dims)));
            parts.push(format!(
                "scatter_indices_batching_dims={{{}}}",
                join(&self.scatter_indices_batching_dims)
            ));
        }
        parts.push(format!("index_vector_dim={}", self.index_vector_dim));
        parts.join(", ")
    }
}
