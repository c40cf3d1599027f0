//! Element-wise ops: unary and binary ops (with every form of XLA's broadcasting), comparisons
//! and the selects they feed, clamp, bitcasts between types of any width, reduce_precision.

use crate::common::generate::{Generator, TYPES};
use crate::common::recipe::{Id, Step};
use crate::common::semantics::{BinaryKind, CompareKind, UnaryKind};
use lazy_xla::ElementType;

/// The element types of each width in bits (`pred` has none it can be bitcast to).
const WIDTHS: [(u32, &[ElementType]); 4] = [
    (8, &[ElementType::S8, ElementType::U8]),
    (16, &[ElementType::S16, ElementType::U16, ElementType::F16, ElementType::Bf16]),
    (32, &[ElementType::S32, ElementType::U32, ElementType::F32]),
    (64, &[ElementType::S64, ElementType::U64, ElementType::F64]),
];

/// Exponent and mantissa bit counts for reduce_precision: the narrower float types', then
/// odd ones (no mantissa bits at all, a single exponent bit).
const PRECISIONS: [(i32, i32); 10] =
    [(8, 7), (5, 10), (8, 23), (11, 52), (5, 2), (4, 3), (8, 0), (1, 0), (2, 1), (6, 30)];

impl Generator<'_> {
    /// A unary op XLA takes on `x`'s type.
    pub(super) fn unary(&mut self, x: Id) -> Option<Step> {
        let ty = self.ty(x);
        let ops: Vec<UnaryKind> = UnaryKind::ALL.into_iter().filter(|op| op.accepts(ty)).collect();
        Some(Step::Unary { op: self.choices.one_of(&ops), x })
    }

    /// A second operand for a binary op with `x`, the broadcast dimensions, and whether `x`
    /// goes first: same dimensions, a scalar, a lower-rank value broadcast in, same-rank
    /// degenerate (size-1) broadcasting, an existing value, or `x` as the lower-rank side.
    pub(super) fn partner(&mut self, x: Id) -> (Id, Vec<i64>, bool) {
        let (ty, dims) = (self.ty(x), self.dims(x));
        let rank = dims.len();
        let x_first = !self.choices.one_in(2);
        let (other, broadcast_dimensions) = match self.choices.pick(6) {
            0 => (self.fresh(ty, &dims), vec![]),
            1 => (self.scalar(ty, None), vec![]),
            2 => {
                let k = self.choices.pick(rank + 1);
                let kept = self.choices.subset(rank, k);
                let small: Vec<i64> =
                    kept.iter().map(|&d| if self.choices.one_in(3) { 1 } else { dims[d as usize] }).collect();
                let identity_or_empty = if k == rank && self.choices.one_in(2) { vec![] } else { kept };
                (self.fresh(ty, &small), identity_or_empty)
            }
            3 => {
                let degenerate: Vec<i64> = dims
                    .iter()
                    .map(|&d| match (d, self.choices.pick(3)) {
                        (1, 2) => self.choices.size(),
                        (_, 1) => 1,
                        _ => d,
                    })
                    .collect();
                (self.fresh(ty, &degenerate), vec![])
            }
            4 => (self.existing(ty, &dims).unwrap_or(x), vec![]),
            _ => {
                // x is the lower-rank operand, mapped into a value of higher rank.
                let extra = self.choices.pick(4 - rank.min(4) + 1);
                let out_rank = rank + extra;
                let positions = self.choices.subset(out_rank, rank);
                let mut large: Vec<i64> = (0..out_rank).map(|_| self.choices.size()).collect();
                for (k, &p) in positions.iter().enumerate() {
                    if dims[k] != 1 || self.choices.one_in(2) {
                        large[p as usize] = dims[k];
                    }
                }
                if extra == 0 {
                    (self.fresh(ty, &large), vec![])
                } else {
                    (self.fresh(ty, &large), positions)
                }
            }
        };
        (other, broadcast_dimensions, x_first)
    }

    pub(super) fn binary(&mut self, x: Id) -> Option<Step> {
        let ty = self.ty(x);
        let ops: Vec<BinaryKind> = BinaryKind::ALL.into_iter().filter(|op| op.accepts(ty)).collect();
        let op = self.choices.one_of(&ops);
        let (other, broadcast_dimensions, x_first) = self.partner(x);
        let (lhs, rhs) = if x_first { (x, other) } else { (other, x) };
        Some(Step::Binary { op, lhs, rhs, broadcast_dimensions })
    }

    pub(super) fn compare(&mut self, x: Id) -> Option<Step> {
        let op = self.choices.one_of(&CompareKind::ALL);
        let (other, broadcast_dimensions, x_first) = self.partner(x);
        let (lhs, rhs) = if x_first { (x, other) } else { (other, x) };
        let compare = Step::Compare { op, lhs, rhs, broadcast_dimensions };
        if !self.choices.one_in(2) {
            return Some(compare);
        }
        // Select between x and another value where the comparison holds.
        let pred = self.push(compare);
        if self.dims(pred) != self.dims(x) {
            return None;
        }
        let alternative = self.branch(self.ty(x), &self.dims(x));
        Some(Step::Select { pred, on_true: x, on_false: alternative })
    }

    /// A branch or bound of `ty` for a select or clamp with `dims`: a scalar constant or a value
    /// of those dimensions.
    pub(super) fn branch(&mut self, ty: ElementType, dims: &[i64]) -> Id {
        match self.choices.pick(3) {
            0 => self.scalar(ty, None),
            1 => self.existing(ty, dims).unwrap_or_else(|| self.fresh(ty, dims)),
            _ => self.fresh(ty, dims),
        }
    }

    pub(super) fn select(&mut self, x: Id) -> Option<Step> {
        let (ty, dims) = (self.ty(x), self.dims(x));
        if ty == ElementType::Pred && self.choices.one_in(2) {
            let branch_type = self.choices.one_of(&TYPES);
            let on_true = self.branch(branch_type, &dims);
            let on_false = self.branch(branch_type, &dims);
            return Some(Step::Select { pred: x, on_true, on_false });
        }
        let pred = match self.choices.pick(3) {
            0 => self.fresh(ElementType::Pred, &dims),
            1 => self.scalar(ElementType::Pred, None),
            _ => {
                let test = self.choices.one_of(&[UnaryKind::IsFinite, UnaryKind::Not]);
                match ty {
                    t if t.is_float() && test == UnaryKind::IsFinite => {
                        self.push(Step::Unary { op: test, x })
                    }
                    ElementType::Pred => self.push(Step::Unary { op: UnaryKind::Not, x }),
                    _ => self.fresh(ElementType::Pred, &dims),
                }
            }
        };
        let other = self.branch(ty, &dims);
        let (on_true, on_false) = if self.choices.one_in(2) { (other, x) } else { (x, other) };
        Some(Step::Select { pred, on_true, on_false })
    }

    pub(super) fn clamp(&mut self, x: Id) -> Option<Step> {
        let (ty, dims) = (self.ty(x), self.dims(x));
        if ty == ElementType::Pred {
            return None; // XLA builds a pred clamp but cannot compile it
        }
        if self.choices.one_in(5) {
            // A scalar operand clamped by a bound of x's dimensions.
            let operand = self.scalar(ty, None);
            let max = self.branch(ty, &dims);
            return Some(Step::Clamp { min: x, operand, max });
        }
        let min = self.branch(ty, &dims);
        let max = self.branch(ty, &dims);
        Some(Step::Clamp { min, operand: x, max })
    }

    /// `bitcast_convert_type` to a type of the same width, a narrower one (a new last
    /// dimension) or, where the last dimension is the ratio, a wider one.
    pub(super) fn bitcast(&mut self, x: Id) -> Option<Step> {
        let (ty, dims) = (self.ty(x), self.dims(x));
        if ty == ElementType::Pred {
            return None;
        }
        let bits = 8 * ty.byte_size() as u32;
        let fits = |&(width, _): &(u32, &[ElementType])| {
            width <= bits || dims.last() == Some(&i64::from(width / bits))
        };
        let widths: Vec<(u32, &[ElementType])> = WIDTHS.into_iter().filter(fits).collect();
        let same = widths.iter().position(|&(w, _)| w == bits).expect("the type's own width");
        let (_, types) = if self.choices.one_in(2) { widths[same] } else { self.choices.one_of(&widths) };
        Some(Step::BitcastConvert { x, to: self.choices.one_of(types) })
    }

    /// `reduce_precision` of a float value.
    pub(super) fn reduce_precision(&mut self, x: Id) -> Option<Step> {
        if !self.ty(x).is_float() {
            return None;
        }
        let (exponent_bits, mantissa_bits) = match self.choices.one_in(4) {
            true => (1 + self.choices.pick(11) as i32, self.choices.pick(53) as i32),
            false => self.choices.one_of(&PRECISIONS),
        };
        Some(Step::ReducePrecision { x, exponent_bits, mantissa_bits })
    }
}
