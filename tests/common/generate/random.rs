//! `rng_bit_generator`: every algorithm, states of two and three words (new ones, or the state
//! an earlier generator returned), bits of any requested type, shape and layout.

use crate::common::generate::{Generator, TYPES};
use crate::common::recipe::{Id, Step};
use lazy_xla::{ElementType, RandomAlgorithm};

impl Generator<'_> {
    /// `rng_bit_generator` of bits shaped as `x`.
    pub(super) fn rng_bit_generator(&mut self, x: Id) -> Option<Step> {
        let algorithm = self.choices.one_of(&[
            RandomAlgorithm::ThreeFry,
            RandomAlgorithm::Philox,
            RandomAlgorithm::Default,
        ]);
        let words = if algorithm != RandomAlgorithm::ThreeFry && self.choices.one_in(3) { 3 } else { 2 };
        let state = match self.existing(ElementType::U64, &[words]) {
            Some(state) if self.choices.one_in(2) => state,
            _ => {
                let values = self.values_for(ElementType::U64, &[words]);
                self.holding(ElementType::U64, &[words], values)
            }
        };
        let requested: Vec<ElementType> = TYPES.into_iter().filter(|&t| t != ElementType::Pred).collect();
        let ty = self.choices.one_of(&requested);
        let dims = self.dims(x);
        let shape = self.shape(ty, &dims);
        Some(Step::RngBitGenerator { algorithm, state, shape, output: self.choices.pick(2) })
    }
}
