//! Sums of products: `dot`, `dot_general` and `conv_general_dilated` (any dimension numbers, 1
//! to 3 spatial dimensions, strides, padding, both dilations, feature and batch groups), each
//! now and then in its `_with` form with a precision config and a preferred element type.

use crate::common::generate::{Generator, TYPES};
use crate::common::recipe::{ConvPadding, Convolution, DotOptions, Id, Step};
use crate::common::reference::count;
use lazy_xla::{
    ConvolutionDimensionNumbers, DotDimensionNumbers, ElementType, Padding, Precision, PrecisionConfig,
};

/// The most multiply-adds a generated convolution takes (the reference is slow).
const MAX_CONVOLUTION_WORK: usize = 20_000;

impl Generator<'_> {
    /// The optional arguments of a `_with` function, or (mostly) `None` for the plain one.
    fn dot_options(&mut self) -> Option<DotOptions> {
        if !self.choices.one_in(3) {
            return None;
        }
        let precisions = [Precision::Default, Precision::High, Precision::Highest];
        let precision = match self.choices.pick(5) {
            0 => None,
            n => Some(PrecisionConfig {
                operand_precision: (0..n - 1).map(|_| self.choices.one_of(&precisions)).collect(),
            }),
        };
        let preferred = (!self.choices.one_in(3)).then(|| self.choices.one_of(&TYPES));
        Some(DotOptions { precision, preferred })
    }

    /// `dot` or `dot_general` of `x` and a fresh operand (of another type now and then), with
    /// or without precision and a preferred type.
    pub(super) fn dot(&mut self, x: Id) -> Option<Step> {
        let (ty, dims) = (self.ty(x), self.dims(x));
        let options = self.dot_options();
        let other_type = if self.choices.one_in(5) { self.choices.one_of(&TYPES) } else { ty };
        let rank = dims.len();
        if (rank == 1 || rank == 2) && !self.choices.one_in(2) {
            let free: Vec<i64> = (0..self.choices.pick(2)).map(|_| self.choices.size()).collect();
            return Some(if self.choices.one_in(2) {
                let other: Vec<i64> = free.into_iter().chain([dims[0]]).collect();
                Step::Dot { lhs: self.fresh(other_type, &other), rhs: x, options }
            } else {
                let other: Vec<i64> = [dims[rank - 1]].into_iter().chain(free).collect();
                Step::Dot { lhs: x, rhs: self.fresh(other_type, &other), options }
            });
        }
        // dot_general: roles of x's dimensions (0 free, 1 batch, 2 contracting), then the other
        // operand's dimensions in a random order.
        let roles: Vec<usize> = (0..rank).map(|_| self.choices.pick(3)).collect();
        let x_batch: Vec<i64> = (0..rank as i64).filter(|&d| roles[d as usize] == 1).collect();
        let x_contracting: Vec<i64> = (0..rank as i64).filter(|&d| roles[d as usize] == 2).collect();
        // The other operand's free dimensions: both operands and the result stay within rank 4.
        let x_free = rank - x_batch.len() - x_contracting.len();
        let max_free = 4usize.saturating_sub(x_batch.len() + x_free.max(x_contracting.len())).min(2);
        let free = self.choices.pick(max_free + 1);
        let other_rank = x_batch.len() + x_contracting.len() + free;
        let placement = self.choices.permutation(other_rank);
        let mut other_dims = vec![0i64; other_rank];
        let sources = x_batch.iter().chain(&x_contracting);
        for (k, &d) in sources.enumerate() {
            other_dims[placement[k] as usize] = dims[d as usize];
        }
        for k in x_batch.len() + x_contracting.len()..other_rank {
            other_dims[placement[k] as usize] = self.choices.size();
        }
        let other_batch = placement[..x_batch.len()].to_vec();
        let other_contracting = placement[x_batch.len()..x_batch.len() + x_contracting.len()].to_vec();
        let other = self.fresh(other_type, &other_dims);
        Some(if self.choices.one_in(2) {
            let numbers = DotDimensionNumbers {
                lhs_contracting_dimensions: other_contracting,
                rhs_contracting_dimensions: x_contracting,
                lhs_batch_dimensions: other_batch,
                rhs_batch_dimensions: x_batch,
            };
            Step::DotGeneral { lhs: other, rhs: x, numbers, options }
        } else {
            let numbers = DotDimensionNumbers {
                lhs_contracting_dimensions: x_contracting,
                rhs_contracting_dimensions: other_contracting,
                lhs_batch_dimensions: x_batch,
                rhs_batch_dimensions: other_batch,
            };
            Step::DotGeneral { lhs: x, rhs: other, numbers, options }
        })
    }

    /// Divisors of `n` (1 first), for group counts.
    fn divisor(&mut self, n: i64) -> i64 {
        let divisors: Vec<i64> = (1..=n.max(1)).filter(|d| n % d == 0).collect();
        if self.choices.one_in(3) {
            self.choices.one_of(&divisors)
        } else {
            1
        }
    }

    /// `conv_general_dilated` with `x` as its input (when its rank is 3 to 5) or a fresh one,
    /// dimension numbers permuted at random; now and then the plain `conv` (default dimension
    /// numbers, a `Padding`, strides alone).
    pub(super) fn conv(&mut self, x: Id) -> Option<Step> {
        let ty = self.ty(x);
        if ty == ElementType::Pred {
            return None;
        }
        let use_x = (3..=5).contains(&self.dims(x).len()) && !self.choices.one_in(4);
        let rank = if use_x { self.dims(x).len() } else { 3 + self.choices.pick(3) };
        let spatial = rank - 2;
        let plain = self.choices.one_in(5);
        let roles = |g: &mut Self| {
            let p = if plain { (0..rank as i64).collect() } else { g.choices.permutation(rank) };
            (p[0], p[1], p[2..].to_vec())
        };
        let (input_batch_dimension, input_feature_dimension, input_spatial_dimensions) = roles(self);
        // XLA's default kernel numbers put the output features first.
        let (kernel_output_feature_dimension, kernel_input_feature_dimension, kernel_spatial_dimensions) =
            roles(self);
        let (output_batch_dimension, output_feature_dimension, output_spatial_dimensions) = roles(self);
        let lhs_dims: Vec<i64> = match use_x {
            true => self.dims(x),
            false => (0..rank).map(|_| 1 + self.choices.pick(if rank == 5 { 2 } else { 4 }) as i64).collect(),
        };
        let (batch, features) =
            (lhs_dims[input_batch_dimension as usize], lhs_dims[input_feature_dimension as usize]);
        let feature_group_count = if plain { 1 } else { self.divisor(features) };
        let batch_group_count = if feature_group_count == 1 && !plain { self.divisor(batch) } else { 1 };
        let outputs = (1 + self.choices.pick(2) as i64) * feature_group_count * batch_group_count;
        let mut rhs_dims = vec![0i64; rank];
        rhs_dims[kernel_input_feature_dimension as usize] = features / feature_group_count;
        rhs_dims[kernel_output_feature_dimension as usize] = outputs;
        for &d in &kernel_spatial_dimensions {
            rhs_dims[d as usize] = 1 + self.choices.pick(3) as i64;
        }
        let factors = |g: &mut Self, most: usize| -> Vec<i64> {
            match g.choices.one_in(4) || plain {
                true => vec![],
                false => (0..spatial).map(|_| 1 + g.choices.pick(most) as i64).collect(),
            }
        };
        let (lhs_dilation, rhs_dilation) = (factors(self, 2), factors(self, 2));
        let strides = match plain {
            true => (0..spatial).map(|_| 1 + self.choices.pick(2) as i64).collect(),
            false => factors(self, 2),
        };
        let padding = match self.choices.one_in(4) {
            _ if plain => ConvPadding::Enum(self.choices.one_of(&[Padding::Valid, Padding::Same])),
            true => ConvPadding::Explicit(vec![]),
            false => ConvPadding::Explicit(
                (0..spatial)
                    .map(|k| {
                        let base = lhs_dims[input_spatial_dimensions[k] as usize];
                        let dilated = if base == 0 {
                            0
                        } else {
                            (base - 1) * lhs_dilation.get(k).copied().unwrap_or(1) + 1
                        };
                        let (low, high) = (self.choices.pick(4) as i64 - 1, self.choices.pick(4) as i64 - 1);
                        if dilated + low + high < 0 {
                            (0, 0)
                        } else {
                            (low, high)
                        }
                    })
                    .collect(),
            ),
        };
        let window: usize =
            kernel_spatial_dimensions.iter().map(|&d| rhs_dims[d as usize] as usize).product();
        let work = count(&lhs_dims) / batch_group_count.max(1) as usize * outputs as usize * window;
        if work / feature_group_count.max(1) as usize > MAX_CONVOLUTION_WORK {
            return None;
        }
        let numbers = ConvolutionDimensionNumbers {
            input_batch_dimension,
            input_feature_dimension,
            input_spatial_dimensions,
            kernel_input_feature_dimension,
            kernel_output_feature_dimension,
            kernel_spatial_dimensions,
            output_batch_dimension,
            output_feature_dimension,
            output_spatial_dimensions,
        };
        let conv = Convolution {
            strides,
            padding,
            lhs_dilation,
            rhs_dilation,
            numbers,
            feature_group_count,
            batch_group_count,
        };
        let lhs = if use_x { x } else { self.fresh(ty, &lhs_dims) };
        let rhs = self.fresh(ty, &rhs_dims);
        let options = if plain { None } else { self.dot_options() };
        Some(Step::Conv { lhs, rhs, conv, options })
    }
}
