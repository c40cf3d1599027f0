//! The generator's two sources of randomness: [`Choices`] for the graph's structure and
//! [`Values`] for the elements of parameters and constants. Both read lists of numbers that
//! proptest shrinks towards fewer and smaller entries, and the number 0 always means the
//! plainest option (the first of a menu, "no" for a rare feature, the value 1 or `true`).

use crate::common::values::{bit_width, int_max, int_min, max_finite, min_normal, round_float, wrap, Value};
use lazy_xla::ElementType;

/// The sizes [`Choices::size`] picks from, the plainest first.
const SIZES: [i64; 10] = [2, 3, 1, 4, 5, 2, 3, 1, 4, 0];

/// How rarely a size of a graph's first value is large ([`Choices::first_size`]).
const LARGE_ONE_IN: usize = 64;

/// The large sizes: a piece of 1024 and one over, odd sizes around the lanes, a long row.
const LARGE_SIZES: [i64; 6] = [1024, 33, 1025, 130, 2049, 7];

/// A list of choices, read in order.
pub struct Choices<'g> {
    genes: &'g [u32],
    next: usize,
}

impl<'g> Choices<'g> {
    /// Choices read from `genes`.
    pub fn new(genes: &'g [u32]) -> Choices<'g> {
        Choices { genes, next: 0 }
    }

    /// The next number (0 once the list runs out).
    fn gene(&mut self) -> u32 {
        let gene = self.genes.get(self.next).copied().unwrap_or(0);
        self.next += 1;
        gene
    }

    /// A choice among `n` options (`n ≥ 1`).
    pub fn pick(&mut self, n: usize) -> usize {
        self.gene() as usize % n.max(1)
    }

    /// True one time in `n` (never for the gene 0).
    pub fn one_in(&mut self, n: usize) -> bool {
        self.pick(n) == n - 1
    }

    /// One of `options`.
    pub fn one_of<T: Copy>(&mut self, options: &[T]) -> T {
        options[self.pick(options.len())]
    }

    /// A dimension size from 0 to 5 (0 rarely).
    pub fn size(&mut self) -> i64 {
        self.one_of(&SIZES)
    }

    /// A dimension size of the graph's first value: as [`Choices::size`], but one gene in
    /// [`LARGE_ONE_IN`] (by its digits above the last, so that most kept seeds keep their
    /// sizes) picks one of [`LARGE_SIZES`]. Such graphs reach what small ones never do: rows
    /// longer than the loops' pieces of 1024, folded a piece at a time. (Partial sums of 16,384
    /// elements and items split across threads stay with the dedicated tests: the reference
    /// is too slow for values that large.)
    pub fn first_size(&mut self) -> i64 {
        let gene = self.gene() as usize;
        let large = gene / SIZES.len();
        match large % LARGE_ONE_IN == LARGE_ONE_IN - 1 {
            true => LARGE_SIZES[large / LARGE_ONE_IN % LARGE_SIZES.len()],
            false => SIZES[gene % SIZES.len()],
        }
    }

    /// A random permutation of `0..n` (the identity first).
    pub fn permutation(&mut self, n: usize) -> Vec<i64> {
        let mut items: Vec<i64> = (0..n as i64).collect();
        for i in 0..n {
            let j = i + self.pick(n - i);
            items.swap(i, j);
        }
        items
    }

    /// A sorted subset of `0..n` of `k` elements.
    pub fn subset(&mut self, n: usize, k: usize) -> Vec<i64> {
        let mut chosen: Vec<i64> = self.permutation(n).into_iter().take(k).collect();
        chosen.sort_unstable();
        chosen
    }
}

/// Small values (most of them) and special ones.
const SMALL_FLOATS: [f64; 20] = [
    1.0, 0.0, -1.0, 2.0, 0.5, -2.0, 3.0, -0.5, 1.5, -3.0, 0.25, 4.0, -1.5, 2.5, -4.0, 0.75, -2.5, 5.0, -0.25,
    3.5,
];
const SMALL_INTS: [i128; 16] = [1, 0, -1, 2, -2, 3, 5, -3, 4, 7, -5, 8, 6, -7, 9, 10];

/// Element values read from a list of numbers, cycling.
pub struct Values<'g> {
    genes: &'g [u32],
    next: usize,
}

impl<'g> Values<'g> {
    /// Values read from `genes` (all 1 or `true` if it is empty).
    pub fn new(genes: &'g [u32]) -> Values<'g> {
        Values { genes, next: 0 }
    }

    /// The next value, of `ty`.
    pub fn next(&mut self, ty: ElementType) -> Value {
        let gene = if self.genes.is_empty() { 0 } else { self.genes[self.next % self.genes.len()] };
        self.next += 1;
        let (g, k) = (gene % 10, gene as usize / 10);
        if ty == ElementType::Pred {
            return Value::Int((gene % 2 == 0) as i128);
        }
        if ty.is_float() {
            let max = max_finite(ty);
            let specials = [
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                -0.0,
                100.0,
                -1000.0,
                1e-3,
                max,
                -max,
                min_normal(ty),
                0.1,
                3e4,
            ];
            let v = if g < 8 { SMALL_FLOATS[k % SMALL_FLOATS.len()] } else { specials[k % specials.len()] };
            return Value::Float(round_float(ty, v));
        }
        let bits = bit_width(ty) as i128;
        let specials = [
            int_min(ty),
            int_max(ty),
            int_min(ty) + 1,
            int_max(ty) - 1,
            bits,
            bits - 1,
            bits + 1,
            gene as i128 * 2654435761,
        ];
        let v = if g < 8 { SMALL_INTS[k % SMALL_INTS.len()] } else { specials[k % specials.len()] };
        Value::Int(wrap(ty, v))
    }
}
