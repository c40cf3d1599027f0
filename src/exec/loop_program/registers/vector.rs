//! The vector registers the chain kernel computes in, one type per instruction set: AVX2's
//! eight `f32` lanes and AVX-512's sixteen. A value of either is proof that the CPU has its
//! instruction set (only the unsafe [`Vector::splat`] and [`Vector::load`] make one), so the
//! arithmetic on it is safe. Each method is an instruction or two (AVX-512's `unordered`
//! compares into a mask, then widens it), inlined into the kernel's instance compiled for the
//! same instruction set. Besides the links' ops it has the few that the functions computed in
//! registers need (`functions.rs`): a fused multiply-add, a select, an exponent
//! scaling and a range test.

use std::arch::x86_64::{
    __m256, __m512, _mm256_add_epi32, _mm256_add_ps, _mm256_and_ps, _mm256_andnot_ps, _mm256_blendv_ps,
    _mm256_castps_si256, _mm256_castsi256_ps, _mm256_cmp_ps, _mm256_cvtss_f32, _mm256_div_ps,
    _mm256_fmadd_ps, _mm256_loadu_ps, _mm256_max_ps, _mm256_min_ps, _mm256_movemask_ps, _mm256_mul_ps,
    _mm256_or_ps, _mm256_set1_ps, _mm256_slli_epi32, _mm256_storeu_ps, _mm256_sub_ps, _mm256_xor_ps,
    _mm512_add_epi32, _mm512_add_ps, _mm512_and_ps, _mm512_andnot_ps, _mm512_castps_si512,
    _mm512_castsi512_ps, _mm512_cmp_ps_mask, _mm512_cvtss_f32, _mm512_div_ps, _mm512_fmadd_ps,
    _mm512_loadu_ps, _mm512_mask_blend_ps, _mm512_max_ps, _mm512_min_ps, _mm512_movm_epi32, _mm512_mul_ps,
    _mm512_or_ps, _mm512_set1_ps, _mm512_slli_epi32, _mm512_storeu_ps, _mm512_sub_ps, _mm512_xor_ps,
    _CMP_GE_OQ, _CMP_LE_OQ, _CMP_UNORD_Q,
};

/// The registers of a block: eight of AVX2's sixteen (of AVX-512's 32), so the links have
/// eight left for their temporaries (maximum and minimum use three). A block of sixteen of
/// AVX-512's registers runs GELU slower, however its operands are loaded.
pub(super) const REGISTERS: usize = 8;

/// A block of lanes in registers.
pub(super) type Block<V> = [V; REGISTERS];

/// The lanes of a block of `V`.
pub(super) const fn lanes<V: Vector>() -> usize {
    REGISTERS * V::WIDTH
}

/// The lanes a block holds under AVX2.
pub(super) const AVX2_LANES: usize = lanes::<Avx2>();

/// The lanes a block holds under AVX-512.
pub(super) const AVX512_LANES: usize = lanes::<Avx512>();

/// `$m!(Vector, "features")` for each instruction set's vector type and its
/// `#[target_feature]` list (a literal there), for code compiled once per instruction set.
macro_rules! for_each_vector {
    ($m:ident) => {
        $m!(Avx2, "avx2,fma");
        $m!(Avx512, "avx512f,avx512vl,avx512bw,avx512dq,fma");
    };
}
pub(super) use for_each_vector;

/// A vector of `f32` lanes and the instructions the chain kernel computes with.
pub(super) trait Vector: Copy {
    /// Its lanes.
    const WIDTH: usize;

    /// A block's lanes in memory (`REGISTERS · WIDTH` of them).
    type Lanes: Copy + AsRef<[f32]> + AsMut<[f32]>;

    /// A block's lanes, zeroed.
    const ZEROED: Self::Lanes;

    /// `value` in every lane.
    ///
    /// # Safety
    /// The CPU has the instruction set of `Self`.
    unsafe fn splat(value: f32) -> Self;

    /// The first [`Vector::WIDTH`] of `values`.
    ///
    /// # Safety
    /// The CPU has the instruction set of `Self`.
    unsafe fn load(values: &[f32]) -> Self;

    /// `value` in every lane, safely: `self` is proof of the instruction set.
    #[inline(always)]
    fn splat_like(self, value: f32) -> Self {
        // SAFETY: `self` exists, so the CPU has the instruction set.
        unsafe { Self::splat(value) }
    }

    /// The first [`Vector::WIDTH`] of `values`, safely: `self` is proof of the instruction set.
    #[inline(always)]
    fn load_like(self, values: &[f32]) -> Self {
        // SAFETY: `self` exists, so the CPU has the instruction set.
        unsafe { Self::load(values) }
    }

    /// The lanes stored to the first [`Vector::WIDTH`] of `out`.
    fn store(self, out: &mut [f32]);

    /// The first lane.
    fn first(self) -> f32;

    fn add(self, other: Self) -> Self;
    fn sub(self, other: Self) -> Self;
    fn mul(self, other: Self) -> Self;
    fn div(self, other: Self) -> Self;

    /// `maxps`: `other` where either is NaN or they are equal (so ±0 takes `other`).
    fn max_or_second(self, other: Self) -> Self;

    /// `minps`: as [`Vector::max_or_second`].
    fn min_or_second(self, other: Self) -> Self;

    fn and(self, other: Self) -> Self;
    fn or(self, other: Self) -> Self;
    fn xor(self, other: Self) -> Self;

    /// `!self & other`, bitwise.
    fn and_not(self, other: Self) -> Self;

    /// All bits set in the lanes where either is NaN, else 0.
    fn unordered(self, other: Self) -> Self;

    /// `self·b + c` with one rounding (`vfmadd`).
    fn mul_add(self, b: Self, c: Self) -> Self;

    /// `then` in the lanes where `self ≥ bound` (false for NaN), `otherwise` in the others.
    fn select_at_least(self, bound: Self, then: Self, otherwise: Self) -> Self;

    /// `self · 2ⁿ` where `t`'s low bits hold `n`, by adding `n` to the exponent field: as
    /// `Real::scale_by`, right where the result is normal.
    fn scale_by(self, t: Self) -> Self;

    /// Whether every lane lies in `[lo, hi]` (none is NaN).
    fn all_within(self, lo: Self, hi: Self) -> bool;
}

/// Implements [`Vector`] for an instruction set's register type from its intrinsics.
macro_rules! vector {
    ($name:ident, $register:ty, $width:literal, $features:literal, $splat:ident, $load:ident, $store:ident,
        $first:ident, $add:ident, $sub:ident, $mul:ident, $div:ident, $max:ident, $min:ident, $and:ident,
        $or:ident, $xor:ident, $and_not:ident, |$a:ident, $b:ident| $unordered:expr, $mul_add:ident,
        |$x:ident, $bound:ident, $then:ident, $otherwise:ident| $select_at_least:expr,
        |$scaled:ident, $t:ident| $scale_by:expr, |$lanes:ident, $lo:ident, $hi:ident| $all_within:expr) => {
        #[doc = concat!("A register of ", stringify!($width), " `f32` lanes (", $features, ").")]
        #[derive(Clone, Copy)]
        pub(super) struct $name($register);

        impl Vector for $name {
            const WIDTH: usize = $width;

            type Lanes = [f32; REGISTERS * $width];

            const ZEROED: Self::Lanes = [0.0; REGISTERS * $width];

            #[inline(always)]
            unsafe fn splat(value: f32) -> Self {
                // SAFETY: the caller's CPU has the instruction set.
                Self(unsafe { $splat(value) })
            }

            #[inline(always)]
            unsafe fn load(values: &[f32]) -> Self {
                let lanes: &[f32; $width] = values.first_chunk().expect("a register's lanes are in the values");
                // SAFETY: `lanes` is a register's readable `f32`s, what an unaligned load
                // reads; the caller's CPU has the instruction set.
                Self(unsafe { $load(lanes.as_ptr()) })
            }

            #[inline(always)]
            fn store(self, out: &mut [f32]) {
                let lanes: &mut [f32; $width] = out.first_chunk_mut().expect("a register's lanes are in `out`");
                // SAFETY: `lanes` is a register's writable `f32`s, what an unaligned store
                // writes; `self` exists, so the CPU has the instruction set.
                unsafe { $store(lanes.as_mut_ptr(), self.0) }
            }

            #[inline(always)]
            fn first(self) -> f32 {
                // SAFETY: `self` exists, so the CPU has the instruction set (as in every
                // method below).
                unsafe { $first(self.0) }
            }

            vector!(@binary $add add, $sub sub, $mul mul, $div div, $max max_or_second, $min min_or_second,
                $and and, $or or, $xor xor, $and_not and_not);

            #[inline(always)]
            fn unordered(self, other: Self) -> Self {
                let ($a, $b) = (self.0, other.0);
                // SAFETY: as above.
                Self(unsafe { $unordered })
            }

            #[inline(always)]
            fn mul_add(self, b: Self, c: Self) -> Self {
                // SAFETY: as above.
                Self(unsafe { $mul_add(self.0, b.0, c.0) })
            }

            #[inline(always)]
            fn select_at_least(self, bound: Self, then: Self, otherwise: Self) -> Self {
                let ($x, $bound, $then, $otherwise) = (self.0, bound.0, then.0, otherwise.0);
                // SAFETY: as above.
                Self(unsafe { $select_at_least })
            }

            #[inline(always)]
            fn scale_by(self, t: Self) -> Self {
                let ($scaled, $t) = (self.0, t.0);
                // SAFETY: as above.
                Self(unsafe { $scale_by })
            }

            #[inline(always)]
            fn all_within(self, lo: Self, hi: Self) -> bool {
                let ($lanes, $lo, $hi) = (self.0, lo.0, hi.0);
                // SAFETY: as above.
                unsafe { $all_within }
            }
        }
    };
    (@binary $($intrinsic:ident $method:ident),*) => {$(
        #[inline(always)]
        fn $method(self, other: Self) -> Self {
            // SAFETY: `self` exists, so the CPU has the instruction set.
            Self(unsafe { $intrinsic(self.0, other.0) })
        }
    )*};
}

vector!(
    Avx2,
    __m256,
    8,
    "avx2,fma",
    _mm256_set1_ps,
    _mm256_loadu_ps,
    _mm256_storeu_ps,
    _mm256_cvtss_f32,
    _mm256_add_ps,
    _mm256_sub_ps,
    _mm256_mul_ps,
    _mm256_div_ps,
    _mm256_max_ps,
    _mm256_min_ps,
    _mm256_and_ps,
    _mm256_or_ps,
    _mm256_xor_ps,
    _mm256_andnot_ps,
    |a, b| _mm256_cmp_ps::<_CMP_UNORD_Q>(a, b),
    _mm256_fmadd_ps,
    |x, bound, then, otherwise| _mm256_blendv_ps(otherwise, then, _mm256_cmp_ps::<_CMP_GE_OQ>(x, bound)),
    |x, t| _mm256_castsi256_ps(_mm256_add_epi32(
        _mm256_castps_si256(x),
        _mm256_slli_epi32::<23>(_mm256_castps_si256(t))
    )),
    |x, lo, hi| {
        let within = _mm256_and_ps(_mm256_cmp_ps::<_CMP_GE_OQ>(x, lo), _mm256_cmp_ps::<_CMP_LE_OQ>(x, hi));
        _mm256_movemask_ps(within) == 0xff
    }
);

vector!(
    Avx512,
    __m512,
    16,
    "avx512f,avx512vl,avx512bw,avx512dq,fma",
    _mm512_set1_ps,
    _mm512_loadu_ps,
    _mm512_storeu_ps,
    _mm512_cvtss_f32,
    _mm512_add_ps,
    _mm512_sub_ps,
    _mm512_mul_ps,
    _mm512_div_ps,
    _mm512_max_ps,
    _mm512_min_ps,
    _mm512_and_ps,
    _mm512_or_ps,
    _mm512_xor_ps,
    _mm512_andnot_ps,
    |a, b| _mm512_castsi512_ps(_mm512_movm_epi32(_mm512_cmp_ps_mask::<_CMP_UNORD_Q>(a, b))),
    _mm512_fmadd_ps,
    |x, bound, then, otherwise| _mm512_mask_blend_ps(
        _mm512_cmp_ps_mask::<_CMP_GE_OQ>(x, bound),
        otherwise,
        then
    ),
    |x, t| _mm512_castsi512_ps(_mm512_add_epi32(
        _mm512_castps_si512(x),
        _mm512_slli_epi32::<23>(_mm512_castps_si512(t))
    )),
    |x, lo, hi| _mm512_cmp_ps_mask::<_CMP_GE_OQ>(x, lo) & _mm512_cmp_ps_mask::<_CMP_LE_OQ>(x, hi) == 0xffff
);

/// `f` on every register of the block.
#[inline(always)]
pub(super) fn each<V: Vector>(block: &mut Block<V>, f: impl Fn(V) -> V) {
    block.iter_mut().for_each(|a| *a = f(*a));
}

/// A block of the first lanes of `values` (a chain's operands hold every block of its chunk;
/// `like` is any vector: proof of the instruction set).
#[inline(always)]
pub(super) fn load<V: Vector>(like: V, values: &[f32]) -> Block<V> {
    let lanes = values.get(..lanes::<V>()).expect("a chain's operands hold every block of its chunk");
    std::array::from_fn(|r| like.load_like(&lanes[r * V::WIDTH..]))
}

/// The block stored to the first lanes of `out`.
#[inline(always)]
pub(super) fn store<V: Vector>(block: &Block<V>, out: &mut [f32]) {
    let lanes = out.get_mut(..lanes::<V>()).expect("a chain's output holds every block");
    for (register, lanes) in block.iter().zip(lanes.chunks_exact_mut(V::WIDTH)) {
        register.store(lanes);
    }
}

/// A vector of each instruction set this CPU has, `f(vector)` for each: AVX2's, then
/// AVX-512's.
#[cfg(test)]
pub(super) fn for_each_instruction_set(mut avx2: impl FnMut(Avx2), mut avx512: impl FnMut(Avx512)) {
    use crate::exec::loop_program::isa::{detect_level, Level};
    let level = detect_level();
    if matches!(level, Level::Avx2 | Level::Avx512) {
        // SAFETY: the CPU has AVX2 and FMA (every level above the baseline has them).
        avx2(unsafe { Avx2::splat(0.0) });
    }
    if level == Level::Avx512 {
        // SAFETY: the CPU has AVX-512.
        avx512(unsafe { Avx512::splat(0.0) });
    }
}
