//! The chain kernel on x86-64 with AVX2: 64 `f32` lanes held in eight `__m256` registers from
//! a chain's first link to its last, each link one or a few vector instructions per register.
//!
//! The block is explicit vectors: LLVM kept a plain `[f32; 64]` in registers across the links
//! only while no link needed many registers of its own. The links are resolved once per chunk
//! ([`Step`]), so each link of each block costs a jump and its instructions: about 20
//! instructions per 64 lanes for an add, against about 27 for a pass over the chunk.

use std::arch::x86_64::{
    __m256, _mm256_add_ps, _mm256_and_ps, _mm256_andnot_ps, _mm256_blendv_ps, _mm256_cmp_ps,
    _mm256_cvtss_f32, _mm256_div_ps, _mm256_loadu_ps, _mm256_mul_ps, _mm256_or_ps, _mm256_set1_ps,
    _mm256_storeu_ps, _mm256_sub_ps, _mm256_xor_ps, _CMP_EQ_OQ, _CMP_GT_OQ, _CMP_LT_OQ, _CMP_UNORD_Q,
};

use super::{ChainOperands, Operand};
use crate::exec::loop_program::chains::{ChainOp, Link};

/// The registers of a block.
const REGISTERS: usize = 8;

/// The lanes of a register.
const WIDTH: usize = 8;

/// The lanes of a block: eight of AVX2's sixteen registers, so the links have eight left for
/// their temporaries (maximum and minimum use four).
pub(super) const LANES: usize = REGISTERS * WIDTH;

/// A block of lanes in registers.
type Block = [__m256; REGISTERS];

/// The links of a chain resolved on the stack; a longer chain's are allocated.
const STACK_STEPS: usize = 24;

/// Defines [`Step`], a link resolved for one chunk, with one variant per op, side and kind of
/// other operand (so the block loop dispatches on one jump table), how a link becomes one
/// ([`step`]), whether it reads values, and what each does to a block ([`apply`]).
macro_rules! steps {
    ($($op:ident => $f:expr, $splat:ident, $splat_right:ident, $values:ident, $values_right:ident;)*) => {
        /// A link resolved for one chunk: its op, the side the running value is on (`…Right`:
        /// the right), and its other operand: one value for the chunk (`…Splat…`), or the
        /// chunk's values (`…Values…`, at least the chunk's length).
        #[derive(Clone, Copy)]
        enum Step<'a> {
            Neg,
            Abs,
            $($splat(f32), $splat_right(f32), $values(&'a [f32]), $values_right(&'a [f32]),)*
        }

        /// `link` resolved for a chunk of `len` elements.
        #[target_feature(enable = "avx2")]
        fn step<'a>(link: Link, operands: &'a impl ChainOperands<f32>, len: usize) -> Step<'a> {
            let Link::Binary { op, other, running_left } = link else {
                return if link == Link::Neg { Step::Neg } else { Step::Abs };
            };
            match (op, operands.operand(other), running_left) {
                $(
                    (ChainOp::$op, Operand::Splat(v), true) => Step::$splat(v),
                    (ChainOp::$op, Operand::Splat(v), false) => Step::$splat_right(v),
                    (ChainOp::$op, Operand::Values(v), true) => Step::$values(&v[..len]),
                    (ChainOp::$op, Operand::Values(v), false) => Step::$values_right(&v[..len]),
                )*
            }
        }

        impl Step<'_> {
            /// Whether the step reads no values of another operand (only splats).
            fn reads_no_values(&self) -> bool {
                !matches!(self, $(Step::$values(_) | Step::$values_right(_))|*)
            }
        }

        /// `step` on the block of lanes `first..first + LANES`.
        #[target_feature(enable = "avx2")]
        #[inline]
        fn apply(step: Step<'_>, block: &mut Block, first: usize, sign: __m256) {
            match step {
                Step::Neg => each(block, |a| _mm256_xor_ps(a, sign)),
                Step::Abs => each(block, |a| _mm256_andnot_ps(sign, a)),
                $(
                    Step::$splat(b) => each(block, |a| $f(a, _mm256_set1_ps(b))),
                    Step::$splat_right(b) => each(block, |a| $f(_mm256_set1_ps(b), a)),
                    Step::$values(values) => each_with(block, values, first, |a, b| $f(a, b)),
                    Step::$values_right(values) => each_with(block, values, first, |a, b| $f(b, a)),
                )*
            }
        }
    };
}

steps! {
    Add => |a, b| _mm256_add_ps(a, b), AddSplat, AddSplatRight, AddValues, AddValuesRight;
    Sub => |a, b| _mm256_sub_ps(a, b), SubSplat, SubSplatRight, SubValues, SubValuesRight;
    Mul => |a, b| _mm256_mul_ps(a, b), MulSplat, MulSplatRight, MulValues, MulValuesRight;
    Div => |a, b| _mm256_div_ps(a, b), DivSplat, DivSplatRight, DivValues, DivValuesRight;
    Max => |a, b| maximum(a, b), MaxSplat, MaxSplatRight, MaxValues, MaxValuesRight;
    Min => |a, b| minimum(a, b), MinSplat, MinSplatRight, MinValues, MinValuesRight;
}

/// The chain over the chunk (see `chunk_ops::chain`): needs `out.len() ≥ LANES` unless every
/// operand is a splat; returns whether the result is a splat.
///
/// # Safety
/// The CPU has AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn chain(
    start: Operand<'_, f32>,
    links: &[Link],
    operands: &impl ChainOperands<f32>,
    out: &mut [f32],
) -> bool {
    let len = out.len();
    // Resolved on the stack: an allocation per chunk cost layer norm about 700 instructions
    // per row.
    let mut on_stack = [Step::Neg; STACK_STEPS];
    let on_heap: Vec<Step<'_>>;
    let steps = if links.len() <= STACK_STEPS {
        for (slot, &link) in on_stack.iter_mut().zip(links) {
            *slot = step(link, operands, len);
        }
        &on_stack[..links.len()]
    } else {
        on_heap = links.iter().map(|&link| step(link, operands, len)).collect();
        &on_heap[..]
    };
    let splat = matches!(start, Operand::Splat(_)) && steps.iter().all(|step| step.reads_no_values());
    // One block when every operand is a splat (its first lane is the value); otherwise the
    // last block ends at the chunk's end, overlapping the one before: its lanes are computed
    // again, to the same values.
    let last = if splat { 0 } else { len - LANES };
    let sign = _mm256_set1_ps(-0.0);
    let mut next = 0;
    loop {
        let first = next.min(last);
        let mut block = match start {
            Operand::Splat(v) => [_mm256_set1_ps(v); REGISTERS],
            Operand::Values(values) => load(&values[first..]),
        };
        for &step in steps {
            apply(step, &mut block, first, sign);
        }
        if splat {
            out[0] = _mm256_cvtss_f32(block[0]);
            return true;
        }
        store(&block, &mut out[first..]);
        if first == last {
            return false;
        }
        next = first + LANES;
    }
}

/// `f(running, other)` on every register of the block, the other operand's lanes `first..`
/// from `values`.
#[target_feature(enable = "avx2")]
#[inline]
fn each_with(block: &mut Block, values: &[f32], first: usize, f: impl Fn(__m256, __m256) -> __m256) {
    let lanes = lanes_of(&values[first..]);
    for (a, lanes) in block.iter_mut().zip(lanes.chunks_exact(WIDTH)) {
        *a = f(*a, load_register(lanes));
    }
}

/// `f` on every register of the block.
#[target_feature(enable = "avx2")]
#[inline]
fn each(block: &mut Block, f: impl Fn(__m256) -> __m256) {
    block.iter_mut().for_each(|a| *a = f(*a));
}

/// IEEE 754-2019 maximum, as `math::maximum`: NaN if either is, +0 for ±0.
#[target_feature(enable = "avx2")]
#[inline]
fn maximum(a: __m256, b: __m256) -> __m256 {
    let larger = _mm256_blendv_ps(b, a, _mm256_cmp_ps::<_CMP_GT_OQ>(a, b));
    let larger = _mm256_blendv_ps(larger, _mm256_and_ps(a, b), _mm256_cmp_ps::<_CMP_EQ_OQ>(a, b));
    _mm256_blendv_ps(larger, _mm256_set1_ps(f32::NAN), _mm256_cmp_ps::<_CMP_UNORD_Q>(a, b))
}

/// IEEE 754-2019 minimum, as `math::minimum`: NaN if either is, −0 for ±0.
#[target_feature(enable = "avx2")]
#[inline]
fn minimum(a: __m256, b: __m256) -> __m256 {
    let smaller = _mm256_blendv_ps(b, a, _mm256_cmp_ps::<_CMP_LT_OQ>(a, b));
    let smaller = _mm256_blendv_ps(smaller, _mm256_or_ps(a, b), _mm256_cmp_ps::<_CMP_EQ_OQ>(a, b));
    _mm256_blendv_ps(smaller, _mm256_set1_ps(f32::NAN), _mm256_cmp_ps::<_CMP_UNORD_Q>(a, b))
}

/// The first `LANES` of `values`, as an array (a chain's operands hold every block of its
/// chunk).
#[inline(always)]
fn lanes_of(values: &[f32]) -> &[f32; LANES] {
    values.first_chunk().expect("a chain's operands hold every block of its chunk")
}

/// A block of the first `LANES` of `values`.
#[target_feature(enable = "avx2")]
#[inline]
fn load(values: &[f32]) -> Block {
    let lanes = lanes_of(values);
    std::array::from_fn(|r| load_register(&lanes[r * WIDTH..]))
}

/// A register of the first `WIDTH` of `values`.
#[target_feature(enable = "avx2")]
#[inline]
fn load_register(values: &[f32]) -> __m256 {
    let lanes: &[f32; WIDTH] = values.first_chunk().expect("a register's lanes are in the block");
    // SAFETY: `lanes` is `WIDTH` (8) readable `f32`s, what an unaligned 256-bit load reads.
    unsafe { _mm256_loadu_ps(lanes.as_ptr()) }
}

/// The block stored to the first `LANES` of `out`.
#[target_feature(enable = "avx2")]
#[inline]
fn store(block: &Block, out: &mut [f32]) {
    let lanes: &mut [f32; LANES] = out.first_chunk_mut().expect("a chain's output holds every block");
    for (register, lanes) in block.iter().zip(lanes.chunks_exact_mut(WIDTH)) {
        // SAFETY: `lanes` is `WIDTH` (8) writable `f32`s (`chunks_exact_mut`), what an
        // unaligned 256-bit store writes.
        unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), *register) };
    }
}
