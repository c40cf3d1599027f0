//! Data movement: broadcasts, reshapes, slices, concatenation, padding, reversal and dynamic
//! slices (starts of every integer type, in and out of range).

use crate::common::generate::{Generator, INTEGER_TYPES};
use crate::common::recipe::{Id, Step};
use crate::common::reference::count;
use lazy_xla::ElementType;

impl Generator<'_> {
    pub(super) fn broadcast(&mut self, x: Id) -> Option<Step> {
        let dims = self.dims(x);
        let rank = dims.len();
        if rank < 4 && self.choices.one_in(3) {
            let sizes: Vec<i64> = (0..1 + self.choices.pick(4 - rank)).map(|_| self.choices.size()).collect();
            return Some(Step::Broadcast { x, sizes });
        }
        let out_rank = rank + self.choices.pick(4usize.saturating_sub(rank) + 1);
        let positions = self.choices.subset(out_rank, rank);
        let mut out: Vec<i64> = (0..out_rank).map(|_| self.choices.size()).collect();
        for (k, &p) in positions.iter().enumerate() {
            if dims[k] != 1 || !self.choices.one_in(2) {
                out[p as usize] = dims[k];
            }
        }
        Some(Step::BroadcastInDim { x, dims: out, broadcast_dimensions: positions })
    }

    pub(super) fn reshape(&mut self, x: Id) -> Option<Step> {
        let dims = self.dims(x);
        let n = count(&dims) as i64;
        let new: Vec<i64> = match self.choices.pick(4) {
            0 => vec![n],
            1 => dims.iter().copied().filter(|&d| d != 1).collect(),
            2 if dims.len() < 4 => {
                let mut grown = dims.clone();
                grown.insert(self.choices.pick(dims.len() + 1), 1);
                grown
            }
            _ if n == 0 => {
                let rank = 1 + self.choices.pick(4);
                let mut new: Vec<i64> = (0..rank).map(|_| self.choices.size()).collect();
                new[self.choices.pick(rank)] = 0;
                new
            }
            _ => {
                // Spread n's prime factors over up to 4 dimensions.
                let rank = 1 + self.choices.pick(4);
                let mut new = vec![1i64; rank];
                let (mut rest, mut p) = (n, 2);
                while rest > 1 {
                    while rest % p == 0 {
                        new[self.choices.pick(rank)] *= p;
                        rest /= p;
                    }
                    p += 1;
                }
                new
            }
        };
        Some(Step::Reshape { x, dims: new })
    }

    pub(super) fn slice(&mut self, x: Id) -> Option<Step> {
        let dims = self.dims(x);
        let (mut start, mut limit, mut strides) = (vec![], vec![], vec![]);
        for &d in &dims {
            let s = self.choices.pick(d as usize + 1) as i64;
            start.push(s);
            limit.push(d - self.choices.pick((d - s) as usize + 1) as i64);
            strides.push(1 + self.choices.pick(3) as i64);
        }
        Some(Step::Slice { x, start, limit, strides })
    }

    pub(super) fn concat(&mut self, x: Id) -> Option<Step> {
        let (ty, dims) = (self.ty(x), self.dims(x));
        if dims.is_empty() {
            return None;
        }
        let k = self.choices.pick(dims.len());
        let mut xs = vec![x];
        for _ in 0..1 + self.choices.pick(2) {
            let part = match self.choices.pick(3) {
                0 => {
                    let mut other = dims.clone();
                    other[k] = self.choices.size();
                    self.fresh(ty, &other)
                }
                1 => x,
                _ => self.existing(ty, &dims).unwrap_or(x),
            };
            let at = self.choices.pick(xs.len() + 1);
            xs.insert(at, part);
        }
        Some(Step::Concat { xs, dimension: k as i64 })
    }

    pub(super) fn pad(&mut self, x: Id) -> Option<Step> {
        let (ty, dims) = (self.ty(x), self.dims(x));
        let scalars: Vec<Id> =
            (0..self.steps.len()).filter(|&i| self.ty(i) == ty && self.dims(i).is_empty()).collect();
        let value = match self.choices.pick(3) {
            2 if !scalars.is_empty() => self.choices.one_of(&scalars),
            _ => self.scalar(ty, None),
        };
        let mut config = Vec::new();
        for &n in &dims {
            let low = self.choices.one_of(&[0, 1, 2, -1, -2]);
            let high = self.choices.one_of(&[0, 1, 2, -1, -2]);
            let interior = self.choices.one_of(&[0, 1, 2]);
            let size = low + high + n + (n - 1).max(0) * interior;
            config.push(if size < 0 { [0, 0, interior] } else { [low, high, interior] });
        }
        Some(Step::Pad { x, value, config })
    }

    /// `rev` over some dimensions.
    pub(super) fn rev(&mut self, x: Id) -> Option<Step> {
        let rank = self.dims(x).len();
        let k = self.choices.pick(rank + 1);
        Some(Step::Rev { x, dimensions: self.choices.subset(rank, k) })
    }

    /// One scalar start of type `ty` per dimension, for a slice of `sizes` of `dims`: mostly in
    /// range, sometimes beyond it either way (XLA clamps them).
    fn starts(&mut self, ty: ElementType, dims: &[i64], sizes: &[i64]) -> Vec<Id> {
        (dims.iter().zip(sizes))
            .map(|(&dim, &size)| {
                let start = self.index_value(ty, dim - size);
                match self.choices.pick(3) {
                    2 => self.holding(ty, &[], vec![start]),
                    _ => self.scalar(ty, Some(start)),
                }
            })
            .collect()
    }

    /// `dynamic_slice` of sizes up to the operand's.
    pub(super) fn dynamic_slice(&mut self, x: Id) -> Option<Step> {
        let dims = self.dims(x);
        let sizes: Vec<i64> = dims.iter().map(|&d| d - self.choices.pick(d as usize + 1) as i64).collect();
        let ty = self.choices.one_of(&INTEGER_TYPES);
        let starts = self.starts(ty, &dims, &sizes);
        Some(Step::DynamicSlice { x, starts, sizes })
    }

    /// `dynamic_update_slice` with an update of the operand's type, at most its size.
    pub(super) fn dynamic_update_slice(&mut self, x: Id) -> Option<Step> {
        let (ty, dims) = (self.ty(x), self.dims(x));
        let sizes: Vec<i64> = dims.iter().map(|&d| d - self.choices.pick(d as usize + 1) as i64).collect();
        let update = match self.existing(ty, &sizes) {
            Some(existing) if self.choices.one_in(3) => existing,
            _ => self.fresh(ty, &sizes),
        };
        let index_type = self.choices.one_of(&INTEGER_TYPES);
        let starts = self.starts(index_type, &dims, &sizes);
        Some(Step::DynamicUpdateSlice { x, update, starts })
    }
}
