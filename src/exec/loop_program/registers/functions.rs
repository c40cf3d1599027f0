//! `exp`, `tanh` and `logistic` on a chain's block in its registers: the same steps as
//! `math::exp`, `math::tanh` and `math::logistic` under [`Fused`] (the same constants,
//! operations and order, one vector instruction for each scalar one), so to the bit the
//! values of the chunk loops that compile those functions. `log` (and the blocks of `exp` or
//! `logistic` with a lane beyond `exp`'s fast part) go through memory to their vectorized
//! loop ([`ThroughMemory::apply_function`]).
//!
//! In registers the block skips a store, a loop of the function over its lanes and a load per
//! link, which makes a chain of two links through a function pay (see `chains::MIN_LINKS`).
//!
//! [`Fused`]: crate::exec::math::Fused

use super::vector::{each, for_each_vector, load, store, Avx2, Avx512, Block, Vector};
use crate::exec::element::Element;
use crate::exec::loop_program::chain::ChainFunction;
use crate::exec::loop_program::chunk::Operand;
use crate::exec::loop_program::chunk_ops::{inlined, map1, map1_fast};
use crate::exec::math::{ExpLog, FastPath, Fused, Real, TANH_ONE_FROM, TANH_P, TANH_Q};

/// `function` on every lane of `block` (`sign` is −0 in every lane): in registers for
/// `tanh`, and for `exp` and `logistic` unless a lane is beyond `exp`'s fast part; through
/// memory otherwise, and for `log`. (The kernel's loop over the registers, `each`, rather
/// than `array::map`, whose closure is not inlined into the kernel's instance for the
/// instruction set, each intrinsic then a call.)
#[inline(always)]
pub(super) fn apply<V: ThroughMemory>(mut block: Block<V>, function: ChainFunction, sign: V) -> Block<V> {
    match function {
        ChainFunction::Exp if all_within(&block, EXP_FAST, sign) => each(&mut block, |x| exp_fast(x, sign)),
        ChainFunction::Tanh => each(&mut block, |x| tanh(x, sign)),
        ChainFunction::Logistic if all_within(&block, LOGISTIC_FAST, sign) => {
            each(&mut block, |x| logistic(x, sign))
        }
        _ => return V::apply_function(block, function),
    }
    block
}

/// `function` on every lane of the block, as its pass computes it (`chunk_ops::unary`'s map
/// of the same function, whose builds with FMA fuse the same steps): through memory, where a
/// vectorized loop has the registers the function needs. Each vector type compiles it out of
/// line for its instruction set ([`ThroughMemory::apply_function`]), so that the block loop's
/// registers stay the block's (a block passed by reference stayed in memory across every link).
#[inline(always)]
fn map_function<V: Vector>(block: Block<V>, function: ChainFunction) -> Block<V> {
    let (mut values, mut out) = (V::ZEROED, V::ZEROED);
    store(&block, values.as_mut());
    let (x, out_lanes) = (Operand::Values(values.as_ref()), out.as_mut());
    match function {
        ChainFunction::Exp => {
            map1_fast(x, out_lanes, inlined!(exp_fast::<Fused>(x)), FastPath::Exp, inlined!(exp::<Fused>(x)))
        }
        ChainFunction::Log => map1(x, out_lanes, inlined!(log::<Fused>(x))),
        ChainFunction::Tanh => map1(x, out_lanes, inlined!(tanh::<Fused>(x))),
        ChainFunction::Logistic => map1(x, out_lanes, inlined!(logistic::<Fused>(x))),
    };
    load(block[0], out.as_ref())
}

/// A vector type whose instruction set [`map_function`] is compiled for.
pub(super) trait ThroughMemory: Vector {
    /// `function` on every lane of `block`, by [`map_function`] compiled for the instruction
    /// set of `Self` (out of line: the function needs registers of its own).
    fn apply_function(block: Block<Self>, function: ChainFunction) -> Block<Self>;
}

/// Implements [`ThroughMemory`] for a vector type with its instruction set's features.
macro_rules! through_memory {
    ($name:ident, $features:literal) => {
        impl ThroughMemory for $name {
            fn apply_function(block: Block<Self>, function: ChainFunction) -> Block<Self> {
                #[target_feature(enable = $features)]
                #[inline(never)]
                fn compiled(block: Block<$name>, function: ChainFunction) -> Block<$name> {
                    map_function(block, function)
                }
                // SAFETY: `block` exists, so the CPU has the instruction set.
                unsafe { compiled(block, function) }
            }
        }
    };
}
for_each_vector!(through_memory);

/// Where `math::exp_fast` is `math::exp` (beyond: `exp_beyond_fast`).
const EXP_FAST: [f32; 2] = [f32::EXP_FAST_MIN, f32::EXP_OVERFLOW];

/// Where `logistic`'s `exp(−x)` is within [`EXP_FAST`].
const LOGISTIC_FAST: [f32; 2] = [-f32::EXP_OVERFLOW, -f32::EXP_FAST_MIN];

/// Whether every lane of `block` lies in `[lo, hi]` (none is NaN; `like`: proof of the
/// instruction set).
#[inline(always)]
fn all_within<V: Vector>(block: &Block<V>, [lo, hi]: [f32; 2], like: V) -> bool {
    let (lo, hi) = (like.splat_like(lo), like.splat_like(hi));
    block.iter().all(|x| x.all_within(lo, hi))
}

/// `math::exp_fast::<f32, Fused>` on every lane.
#[inline(always)]
fn exp_fast<V: Vector>(x: V, sign: V) -> V {
    let splat = |v: f32| sign.splat_like(v);
    let rounder = splat(f32::ROUNDER);
    let t = x.mul_add(splat(std::f64::consts::LOG2_E as f32), rounder);
    let minus_n = t.sub(rounder).xor(sign);
    let r = minus_n.mul_add(splat(f32::LN2_LO), minus_n.mul_add(splat(f32::LN2_HI), x));
    let p = splat(1.0).add(r.mul(r).mul_add(poly(r, f32::EXP_Q, sign), r));
    p.scale_by(t)
}

/// `math::tanh::<f32, Fused>` on every lane: `|x|·p(x²) / q(x²)`, 1 from `TANH_ONE_FROM` on,
/// the sign of `x` restored. The magnitude's sign bit is clear (`p` and `q` are positive over
/// the fit's range, and a NaN `|x|` stays a positive NaN), so or-ing in `x`'s sign is
/// `copysign`, one instruction fewer than clearing the sign bit first.
#[inline(always)]
fn tanh<V: Vector>(x: V, sign: V) -> V {
    let a = sign.and_not(x);
    let z = a.mul(a);
    let t = a.mul(poly(z, TANH_P, sign)).div(poly(z, TANH_Q, sign));
    let magnitude = a.select_at_least(sign.splat_like(TANH_ONE_FROM), sign.splat_like(1.0), t);
    magnitude.or(x.and(sign))
}

/// `math::logistic::<f32, Fused>` on every lane where `−x` is within `exp`'s fast part:
/// `1 / (1 + e⁻ˣ)`, a denormal result flushed to +0.
#[inline(always)]
fn logistic<V: Vector>(x: V, sign: V) -> V {
    let one = sign.splat_like(1.0);
    let y = one.div(one.add(exp_fast(x.xor(sign), sign)));
    let magnitude = sign.and_not(y);
    magnitude.select_at_least(sign.splat_like(f32::MIN_POSITIVE), y, y.mul(sign.splat_like(0.0)))
}

/// `c[0] + x·c[1] + x²·c[2] + …` by Horner's rule, as `math::real::poly` (`like`: proof of the
/// instruction set).
#[inline(always)]
fn poly<V: Vector>(x: V, c: &[f32], like: V) -> V {
    let (&last, rest) = c.split_last().expect("a polynomial has a coefficient");
    rest.iter().rev().fold(like.splat_like(last), |acc, &k| acc.mul_add(x, like.splat_like(k)))
}

#[cfg(test)]
mod tests {
    use super::super::vector::for_each_instruction_set;
    use super::super::vector::REGISTERS;
    use super::*;
    use crate::exec::math::tests::dense_sample;
    use crate::exec::math::{exp, logistic as scalar_logistic, tanh as scalar_tanh, Fused};

    /// Arguments every lane kind of the functions meets: NaNs, infinities, zeros of both
    /// signs, denormals, the edges of `exp`'s fast part (and of `logistic`'s, where its
    /// results are denormal and flushed) and of `tanh`'s fit.
    const SPECIALS: [f32; 20] = [
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        1e-40,
        -1e-40,
        f32::EXP_FAST_MIN,
        f32::EXP_OVERFLOW,
        -87.4,
        88.8,
        -f32::EXP_FAST_MIN,
        -f32::EXP_OVERFLOW,
        -88.0,
        87.5,
        TANH_ONE_FROM,
        -TANH_ONE_FROM,
        9.1,
        f32::MAX,
    ];

    /// `apply(function)` over blocks of these values equals `scalar` lane by lane, to the bit
    /// (NaN for NaN), under each instruction set this CPU has.
    ///
    /// Blocks of specials each way round (through memory where `exp`'s fast part ends), the
    /// math sweeps' sample (every 4099th bit pattern, sorted, so most of its blocks lie in one
    /// binade, then random ones), and a ramp over `[lo, hi]`
    /// from its ends, led by zeros and denormals: blocks the registers compute whole.
    fn check(function: ChainFunction, scalar: fn(f32) -> f32, [lo, hi]: [f32; 2]) {
        let mut values: Vec<f32> = SPECIALS.iter().chain(SPECIALS.iter().rev()).copied().collect();
        values.extend(dense_sample().map(f32::from_bits));
        let steps = 1 << 13;
        values.extend([0.0, -0.0, 1e-40, -1e-40, lo, hi]);
        values.extend((0..=steps).map(|k| lo + (hi - lo) * (k as f32 / steps as f32)));
        values.extend((0..=steps).map(|k| hi - (hi - lo) * (k as f32 / steps as f32)));
        for_each_instruction_set(
            |like| check_with(like, function, scalar, &values),
            |like| check_with(like, function, scalar, &values),
        );
    }

    fn check_with<V: ThroughMemory>(
        like: V,
        function: ChainFunction,
        scalar: fn(f32) -> f32,
        values: &[f32],
    ) {
        let lanes = REGISTERS * V::WIDTH;
        let sign = like.splat_like(-0.0);
        let mut out = vec![0.0f32; lanes];
        // The last block ends at the values' end, overlapping the one before.
        let starts = (0..values.len()).step_by(lanes).map(|start| start.min(values.len() - lanes));
        for block in starts.map(|start| &values[start..start + lanes]) {
            let registers: Block<V> = std::array::from_fn(|r| like.load_like(&block[r * V::WIDTH..]));
            store(&apply(registers, function, sign), &mut out);
            for (&x, &got) in block.iter().zip(&out) {
                let want = scalar(x);
                let same = got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan());
                assert!(same, "{function:?}({x:e}) = {got:e} in registers, {want:e} in a pass");
            }
        }
    }

    #[test]
    fn exp_in_registers_is_the_pass_to_the_bit() {
        check(ChainFunction::Exp, exp::<f32, Fused>, EXP_FAST);
    }

    #[test]
    fn tanh_in_registers_is_the_pass_to_the_bit() {
        check(ChainFunction::Tanh, scalar_tanh::<f32, Fused>, [-10.0, 10.0]);
    }

    #[test]
    fn logistic_in_registers_is_the_pass_to_the_bit() {
        check(ChainFunction::Logistic, scalar_logistic::<f32, Fused>, LOGISTIC_FAST);
    }

    /// A block with one lane beyond `exp`'s fast part (for `logistic`, of `exp(−x)`'s) goes
    /// through memory: every lane, the fast ones included, is still the pass's value.
    #[test]
    fn one_lane_beyond_the_fast_part_sends_the_block_through_memory() {
        for_each_instruction_set(beyond::<_>, beyond::<_>);
        fn beyond<V: ThroughMemory>(like: V) {
            let lanes = REGISTERS * V::WIDTH;
            let mut values: Vec<f32> = (0..lanes).map(|i| i as f32 * 0.37 - 20.0).collect();
            values[lanes - 1] = -100.0;
            check_with(like, ChainFunction::Exp, exp::<f32, Fused>, &values);
            values[lanes - 1] = 100.0;
            check_with(like, ChainFunction::Logistic, scalar_logistic::<f32, Fused>, &values);
            let splat = |v: f32| [like.splat_like(v); REGISTERS];
            assert!(!all_within(&splat(-100.0), EXP_FAST, like));
            assert!(!all_within(&splat(f32::NAN), EXP_FAST, like));
            assert!(all_within(&splat(f32::EXP_FAST_MIN), EXP_FAST, like));
        }
    }
}
