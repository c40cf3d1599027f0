//! `gather` and `scatter` over XLA's valid dimension numbers: the operand's dimensions split
//! into batching, collapsed (inserted) and indexed or windowed ones, the indices' batch
//! dimensions with the index vector anywhere (or implicit, past the last), indices of every
//! integer type in and out of range; the sorted and unique flags set only where they hold.

use crate::common::generate::{Generator, INTEGER_TYPES};
use crate::common::recipe::computations::{Reducer, Updater};
use crate::common::recipe::{Id, Step};
use crate::common::reference::{count, indices as indices_of, scatter_targets};
use crate::common::values::{int_max, int_min, wrap, Value};
use lazy_xla::{ElementType, GatherDimensionNumbers, ScatterDimensionNumbers};

/// How a generated gather or scatter indexes its operand.
struct Indexing {
    /// The operand's batching dimensions (sorted).
    batching: Vec<i64>,
    /// The operand dimensions the index vector's components start, in component order.
    mapped: Vec<i64>,
    /// The indices' dimensions, the index vector's included (unless implicit).
    dims: Vec<i64>,
    index_vector_dim: i64,
    /// For each operand batching dimension, the indices' dimension paired with it.
    indices_batching: Vec<i64>,
    /// The number of the indices' batch dimensions (all but the index vector's).
    batch: usize,
}

impl Generator<'_> {
    /// A start index of type `ty` for a dimension whose starts are valid in `[0, bound]`:
    /// mostly in range, sometimes just beyond it either way or at the type's extremes.
    pub(super) fn index_value(&mut self, ty: ElementType, bound: i64) -> Value {
        let v = match self.choices.pick(8) {
            7 => self.choices.one_of(&[int_min(ty), int_max(ty), -1, -2]),
            6 => i128::from(bound) + 1 + self.choices.pick(3) as i128,
            _ => self.choices.pick(bound.max(0) as usize + 1) as i128,
        };
        Value::Int(wrap(ty, v))
    }

    /// How to index an operand of `dims`: its batching dimensions, the dimensions the index
    /// vector starts (at least one: XLA's CPU backend takes empty indices for an empty gather,
    /// zeros, or scatter, no updates, asked jaxlib 0.6.0, where index vectors of no components
    /// would each start at 0), and the indices' shape around them (the caller then picks the
    /// collapsed or inserted dimensions among the rest); `None` for a scalar operand.
    fn indexing(&mut self, dims: &[i64]) -> Option<Indexing> {
        let rank = dims.len();
        let spare = rank.checked_sub(1)?;
        let batching = match self.choices.one_in(4) && spare > 0 {
            true => {
                let k = 1 + self.choices.pick(spare.min(2));
                self.choices.subset(rank, k)
            }
            false => vec![],
        };
        let others: Vec<i64> = (0..rank as i64).filter(|d| !batching.contains(d)).collect();
        let order = self.choices.permutation(others.len());
        let m = 1 + self.choices.pick(others.len());
        let mapped: Vec<i64> = order[..m].iter().map(|&k| others[k as usize]).collect();
        let extra = self.choices.pick(3);
        let batch = batching.len() + extra;
        // The batch dimensions in order: the batching ones at random places among the others.
        let places = self.choices.subset(batch, batching.len());
        let mut batch_dims: Vec<i64> = (0..batch).map(|_| 1 + self.choices.pick(3) as i64).collect();
        for (k, &p) in places.iter().enumerate() {
            batch_dims[p as usize] = dims[batching[k] as usize];
        }
        let implicit = m == 1 && self.choices.one_in(3);
        let index_vector_dim = if implicit { batch } else { self.choices.pick(batch + 1) } as i64;
        let mut indices_dims = batch_dims;
        if !implicit {
            indices_dims.insert(index_vector_dim as usize, m as i64);
        }
        let indices_batching: Vec<i64> =
            places.iter().map(|&p| if p >= index_vector_dim { p + 1 } else { p }).collect();
        Some(Indexing { batching, mapped, dims: indices_dims, index_vector_dim, indices_batching, batch })
    }

    /// An indices array for `indexing`: the component of the index vector that starts
    /// operand dimension `d` valid in `[0, bounds[d]]`.
    fn indices_array(&mut self, indexing: &Indexing, bounds: &[i64]) -> Id {
        let ty = self.choices.one_of(&INTEGER_TYPES);
        let v = indexing.index_vector_dim as usize;
        let implicit = v == indexing.dims.len();
        let values: Vec<Value> = indices_of(&indexing.dims)
            .iter()
            .map(|i| {
                let component = if implicit { 0 } else { i[v] as usize };
                self.index_value(ty, bounds[indexing.mapped[component] as usize])
            })
            .collect();
        self.holding(ty, &indexing.dims, values)
    }

    /// Whether the index vectors of `indices` (exact, in row-major order of their batch
    /// positions) never go down, lexicographically.
    fn sorted_indices(&self, indices: Id, index_vector_dim: i64) -> bool {
        let array = &self.arrays[indices];
        if !array.is_exact() {
            return false;
        }
        let v = index_vector_dim as usize;
        let implicit = v == array.dims.len();
        let batch_dims: Vec<i64> = (0..array.dims.len()).filter(|&d| d != v).map(|d| array.dims[d]).collect();
        let components = if implicit { 1 } else { array.dims[v] };
        let vectors: Vec<Vec<i128>> = (indices_of(&batch_dims).iter())
            .map(|batch| {
                (0..components)
                    .map(|k| {
                        let mut at = batch.clone();
                        if !implicit {
                            at.insert(v, k);
                        }
                        array.at(&at).value.int()
                    })
                    .collect()
            })
            .collect();
        vectors.windows(2).all(|w| w[0] <= w[1])
    }

    /// `gather` from `x`.
    pub(super) fn gather(&mut self, x: Id) -> Option<Step> {
        let dims = self.dims(x);
        let rank = dims.len();
        let indexing = self.indexing(&dims)?;
        // A collapsed dimension of size 0 would leave its output elements nothing to read.
        let collapsible: Vec<i64> =
            (0..rank as i64).filter(|&d| !indexing.batching.contains(&d) && dims[d as usize] > 0).collect();
        let collapsed: Vec<i64> = collapsible.into_iter().filter(|_| self.choices.one_in(3)).collect();
        let slice_sizes: Vec<i64> = (0..rank)
            .map(|d| match collapsed.contains(&(d as i64)) || indexing.batching.contains(&(d as i64)) {
                true => dims[d].min(1),
                false => dims[d] - self.choices.pick(dims[d] as usize + 1) as i64,
            })
            .collect();
        let offsets = rank - collapsed.len() - indexing.batching.len();
        let batch: i64 = (0..indexing.dims.len() as i64)
            .filter(|&d| d != indexing.index_vector_dim)
            .map(|d| indexing.dims[d as usize])
            .product();
        let slice: i64 = slice_sizes.iter().product();
        if (batch * slice) as usize > self.max_elements {
            return None;
        }
        let bounds: Vec<i64> = dims.iter().zip(&slice_sizes).map(|(&d, &s)| d - s).collect();
        let indices = self.indices_array(&indexing, &bounds);
        let offset_dims = self.choices.subset(indexing.batch + offsets, offsets);
        let numbers = GatherDimensionNumbers {
            offset_dims,
            collapsed_slice_dims: collapsed,
            start_index_map: indexing.mapped,
            index_vector_dim: indexing.index_vector_dim,
            operand_batching_dims: indexing.batching,
            start_indices_batching_dims: indexing.indices_batching,
        };
        let sorted = self.sorted_indices(indices, numbers.index_vector_dim) && self.choices.one_in(2);
        Some(Step::Gather { operand: x, indices, numbers, slice_sizes, sorted })
    }

    /// `scatter` into `x` with a reducer or an overwrite.
    pub(super) fn scatter(&mut self, x: Id) -> Option<Step> {
        let (ty, dims) = (self.ty(x), self.dims(x));
        let rank = dims.len();
        let indexing = self.indexing(&dims)?;
        let insertable: Vec<i64> = (0..rank as i64).filter(|d| !indexing.batching.contains(d)).collect();
        let inserted: Vec<i64> = insertable.into_iter().filter(|_| self.choices.one_in(3)).collect();
        let windowed: Vec<usize> = (0..rank)
            .filter(|&d| !inserted.contains(&(d as i64)) && !indexing.batching.contains(&(d as i64)))
            .collect();
        let window: Vec<i64> = windowed
            .iter()
            .map(|&d| dims[d].min(1 + self.choices.pick(dims[d].max(1) as usize) as i64))
            .collect();
        let mut sizes = vec![1i64; rank];
        for (&d, &w) in windowed.iter().zip(&window) {
            sizes[d] = w;
        }
        let bounds: Vec<i64> = dims.iter().zip(&sizes).map(|(&d, &s)| d - s).collect();
        let indices = self.indices_array(&indexing, &bounds);
        let update_rank = indexing.batch + window.len();
        let update_window_dims = self.choices.subset(update_rank, window.len());
        let mut batch_sizes = (0..indexing.dims.len() as i64)
            .filter(|&d| d != indexing.index_vector_dim)
            .map(|d| indexing.dims[d as usize]);
        let mut window_sizes = window.iter();
        let update_dims: Vec<i64> = (0..update_rank as i64)
            .map(|d| match update_window_dims.contains(&d) {
                true => *window_sizes.next().expect("a window dimension"),
                false => batch_sizes.next().expect("a batch dimension"),
            })
            .collect();
        if count(&update_dims) > self.max_elements {
            return None;
        }
        let updates = self.fresh(ty, &update_dims);
        let numbers = ScatterDimensionNumbers {
            update_window_dims,
            inserted_window_dims: inserted,
            scatter_dims_to_operand_dims: indexing.mapped,
            index_vector_dim: indexing.index_vector_dim,
            input_batching_dims: indexing.batching,
            scatter_indices_batching_dims: indexing.indices_batching,
        };
        let reducers: Vec<Reducer> = Reducer::ALL.into_iter().filter(|r| r.accepts(ty)).collect();
        let updater = match self.choices.one_in(4) {
            true => Updater::Overwrite,
            false => Updater::Reduce(self.choices.one_of(&reducers)),
        };
        let sorted = self.sorted_indices(indices, numbers.index_vector_dim) && self.choices.one_in(2);
        let targets = scatter_targets(&dims, &self.arrays[indices], &update_dims, &numbers);
        let unique = targets.is_some_and(|targets| {
            let mut hit: Vec<usize> = targets.into_iter().flatten().collect();
            hit.sort_unstable();
            hit.windows(2).all(|w| w[0] != w[1])
        }) && self.choices.one_in(2);
        Some(Step::Scatter { operand: x, indices, updates, updater, numbers, sorted, unique })
    }
}
