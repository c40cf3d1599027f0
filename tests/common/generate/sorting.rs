//! `sort` (one to three operands, lexicographic keys, `lt`/`gt` or jax's total order, stable
//! or not, along any dimension) and `top_k`.

use crate::common::generate::Generator;
use crate::common::recipe::computations::Comparator;
use crate::common::recipe::{Id, Step};
use lazy_xla::ElementType;

impl Generator<'_> {
    /// `sort` of `x` and up to two companions (an iota along the sorted dimension among them,
    /// as an argsort writes it).
    pub(super) fn sort(&mut self, x: Id) -> Option<Step> {
        let dims = self.dims(x);
        if dims.is_empty() {
            return None;
        }
        let dimension = self.choices.pick(dims.len()) as i64;
        let mut xs = vec![x];
        for _ in 0..self.choices.pick(3) {
            let other = match self.choices.one_in(3) {
                true => {
                    let shape = self.shape(ElementType::S32, &dims);
                    self.push(Step::Iota { shape, dimension })
                }
                false => self.companion(x),
            };
            xs.push(other);
        }
        let comparator = Comparator {
            keys: 1 + self.choices.pick(xs.len().min(2)),
            descending: self.choices.one_in(3),
            total_order: self.choices.one_in(2),
        };
        let dimension =
            if self.choices.one_in(4) && dimension == dims.len() as i64 - 1 { -1 } else { dimension };
        let stable = !self.choices.one_in(3);
        let output = self.choices.pick(xs.len());
        Some(Step::Sort { xs, comparator, dimension, stable, output })
    }

    /// `top_k` along the last dimension.
    pub(super) fn top_k(&mut self, x: Id) -> Option<Step> {
        let (ty, dims) = (self.ty(x), self.dims(x));
        let last = *dims.last()?;
        if ty == ElementType::Pred {
            return None;
        }
        let k = self.choices.pick(last as usize + 1) as i64;
        Some(Step::TopK { x, k, largest: !self.choices.one_in(3), output: self.choices.pick(2) })
    }
}
