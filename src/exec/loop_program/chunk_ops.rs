//! The ops of a loop program over one chunk: reading an input's chunk ([`load`]), and the
//! element-wise ops, a tight loop per op and element type (the op is matched once per chunk,
//! never per element), with splats (one value for the whole chunk) kept as scalars so
//! broadcasts cost nothing.

use crate::attributes::{BinaryOp, ComparisonDirection, UnaryOp};
use crate::exec::element::{convert as convert_element, with_binary_fn, Element};
use crate::exec::math::{FastPath, Fused, MulAdd, Separate};

use super::chunk::{Chunk, Operand, RowOperand, CHUNK, FOLD_LANES};
use super::isa::{level, Level};

/// `out = f(x)`; returns whether the result is a splat (written to `out[0]` only).
#[inline(always)]
pub(super) fn map1<T: Copy, U>(x: Operand<'_, T>, out: &mut [U], f: impl Fn(T) -> U) -> bool {
    match x {
        Operand::Splat(a) => {
            out[0] = f(a);
            true
        }
        Operand::Values(xs) => {
            for (o, &a) in out.iter_mut().zip(xs) {
                *o = f(a);
            }
            false
        }
    }
}

/// `out = fast(x)` over the whole chunk (vectorized), then `complete(x)` again for the rare
/// lanes beyond the fast path ([`Element::beyond_fast`]: huge arguments of sin and cos,
/// results of exp that are not normal); returns whether the result is a splat.
#[inline(always)]
pub(super) fn map1_fast<T: Element>(
    x: Operand<'_, T>,
    out: &mut [T],
    fast: impl Fn(T) -> T,
    path: FastPath,
    complete: impl Fn(T) -> T,
) -> bool {
    match x {
        Operand::Splat(_) => map1(x, out, complete),
        Operand::Values(xs) => {
            // An or-reduction in the same loop (it vectorizes; in 32-bit lanes, as wide as
            // an f32's, so no packing) finds whether any lane needs the second pass.
            let mut beyond = 0u32;
            for (o, &a) in out.iter_mut().zip(xs) {
                *o = fast(a);
                beyond |= u32::from(a.beyond_fast(path));
            }
            if beyond != 0 {
                for (o, &a) in out.iter_mut().zip(xs) {
                    if a.beyond_fast(path) {
                        *o = complete(a);
                    }
                }
            }
            false
        }
    }
}

/// What a binary op maps: its operands and where its values go.
pub(super) trait BinaryValues<T> {
    /// Writes `f(a, b)` for each element; returns whether the result is a splat (written to
    /// the first element only).
    fn map(self, f: impl Fn(T, T) -> T) -> bool;
}

/// A chunk's operands and its output.
impl<T: Copy> BinaryValues<T> for (Operand<'_, T>, Operand<'_, T>, &mut [T]) {
    #[inline(always)]
    fn map(self, f: impl Fn(T, T) -> T) -> bool {
        map2(self.0, self.1, self.2, f)
    }
}

/// A tile's `rows` rows of `len` values of two operands, each pair of rows mapped into the
/// row `out` gives for it: rows that lie apart in the output, written in place. Both operands
/// hold the rows ([`RowOperand::holds`]); `out(r)` is `len` elements. Rows whose operands are
/// splats are filled with their one value; the result is never a splat.
pub(super) struct Rows<'a, T, O> {
    pub(super) a: RowOperand<'a, T>,
    pub(super) b: RowOperand<'a, T>,
    pub(super) rows: usize,
    pub(super) len: usize,
    pub(super) out: O,
}

impl<'o, T: Copy + 'o, O: FnMut(usize) -> &'o mut [T]> BinaryValues<T> for Rows<'_, T, O> {
    #[inline(always)]
    fn map(mut self, f: impl Fn(T, T) -> T) -> bool {
        for r in 0..self.rows {
            let out = (self.out)(r);
            if map2(self.a.row(r, self.len), self.b.row(r, self.len), out, &f) {
                let value = out[0];
                out.fill(value);
            }
        }
        false
    }
}

/// `out = f(a, b)`; returns whether the result is a splat.
#[inline(always)]
fn map2<T: Copy, U>(a: Operand<'_, T>, b: Operand<'_, T>, out: &mut [U], f: impl Fn(T, T) -> U) -> bool {
    match (a, b) {
        (Operand::Splat(x), Operand::Splat(y)) => {
            out[0] = f(x, y);
            true
        }
        (Operand::Values(xs), Operand::Splat(y)) => {
            for (o, &x) in out.iter_mut().zip(xs) {
                *o = f(x, y);
            }
            false
        }
        (Operand::Splat(x), Operand::Values(ys)) => {
            for (o, &y) in out.iter_mut().zip(ys) {
                *o = f(x, y);
            }
            false
        }
        (Operand::Values(xs), Operand::Values(ys)) => {
            for ((o, &x), &y) in out.iter_mut().zip(xs).zip(ys) {
                *o = f(x, y);
            }
            false
        }
    }
}

/// `out = f(a, b, c)`; returns whether the result is a splat.
#[inline(always)]
fn map3<A: Copy, T: Copy, U>(
    a: Operand<'_, A>,
    b: Operand<'_, T>,
    c: Operand<'_, T>,
    out: &mut [U],
    f: impl Fn(A, T, T) -> U,
) -> bool {
    if let (Operand::Splat(x), Operand::Splat(y), Operand::Splat(z)) = (a, b, c) {
        out[0] = f(x, y, z);
        return true;
    }
    for (i, o) in out.iter_mut().enumerate() {
        *o = f(a.get(i), b.get(i), c.get(i));
    }
    false
}

/// `inlined!(f::<M>(x, …))`: `Element::f::<M>` as a closure that LLVM must inline into the
/// loop that calls it, inside each instruction set's code. Left to its choice, LLVM calls the
/// largest bodies once per element outside that code, each FMA a libm call.
macro_rules! inlined {
    ($f:ident::<$m:ty>($($arg:ident),+)) => {
        #[inline(always)]
        |$($arg),+| Element::$f::<$m>($($arg),+)
    };
}

pub(super) use inlined;

#[cfg(target_arch = "x86_64")]
mod transpose;

/// Defines each chunk op three times — for the baseline, AVX2 and AVX-512 — and a public
/// entry that runs the widest the CPU supports. Each body sees a type `M`, how polynomial
/// steps of the math functions are computed: [`Fused`] where the build has FMA (AVX2,
/// AVX-512), [`Separate`] in the baseline.
macro_rules! dispatched {
    ($($(#[$doc:meta])* fn $name:ident<$($g:ident: $bound:path),*>($($arg:ident: $ty:ty),* $(,)?) -> bool $body:block)*) => {$(
        $(#[$doc])*
        pub(super) fn $name<$($g: $bound),*>($($arg: $ty),*) -> bool {
            #[inline(always)]
            fn generic<M: MulAdd, $($g: $bound),*>($($arg: $ty),*) -> bool $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq")]
                unsafe fn avx512<$($g: $bound),*>($($arg: $ty),*) -> bool {
                    generic::<Fused, $($g),*>($($arg),*)
                }
                #[target_feature(enable = "avx2,fma")]
                unsafe fn avx2<$($g: $bound),*>($($arg: $ty),*) -> bool {
                    generic::<Fused, $($g),*>($($arg),*)
                }
                match level() {
                    // SAFETY: `level()` found the CPU supports every feature these enable.
                    Level::Avx512 => return unsafe { avx512($($arg),*) },
                    // SAFETY: as above, for AVX2 and FMA.
                    Level::Avx2 => return unsafe { avx2($($arg),*) },
                    Level::Baseline => {}
                }
            }
            generic::<Separate, $($g),*>($($arg),*)
        }
    )*};
}

dispatched! {
/// A unary op other than `is-finite` (which changes the type; see [`is_finite`]).
fn unary<T: Element>(op: UnaryOp, x: Operand<'_, T>, out: &mut [T]) -> bool {
    use UnaryOp::*;
    match op {
        Neg => map1(x, out, Element::neg),
        Abs => map1(x, out, Element::abs),
        Exp => map1_fast(x, out, inlined!(exp_fast::<M>(x)), FastPath::Exp, inlined!(exp::<M>(x))),
        Log => map1(x, out, inlined!(log::<M>(x))),
        Log1p => map1(x, out, inlined!(log1p::<M>(x))),
        Expm1 => map1(x, out, inlined!(expm1::<M>(x))),
        Tanh => map1(x, out, inlined!(tanh::<M>(x))),
        Logistic => map1(x, out, inlined!(logistic::<M>(x))),
        Sqrt => map1(x, out, Element::sqrt),
        Rsqrt => map1(x, out, Element::rsqrt),
        Sign => map1(x, out, Element::sign),
        Floor => map1(x, out, Element::floor),
        Ceil => map1(x, out, Element::ceil),
        Round => map1(x, out, Element::round),
        RoundNearestEven => map1(x, out, Element::round_nearest_even),
        Sin => map1_fast(x, out, inlined!(sin_fast::<M>(x)), FastPath::Trig, inlined!(sin::<M>(x))),
        Cos => map1_fast(x, out, inlined!(cos_fast::<M>(x)), FastPath::Trig, inlined!(cos::<M>(x))),
        Tan => map1_fast(x, out, inlined!(tan_fast::<M>(x)), FastPath::Trig, inlined!(tan::<M>(x))),
        Erf => map1(x, out, inlined!(erf::<M>(x))),
        Cbrt => map1(x, out, inlined!(cbrt::<M>(x))),
        Clz => map1(x, out, Element::clz),
        PopulationCount => map1(x, out, Element::population_count),
        ReducePrecision { exponent_bits, mantissa_bits } => {
            map1(x, out, |v| v.reduce_precision(exponent_bits, mantissa_bits))
        }
        Not => map1(x, out, Element::not),
        IsFinite => map1(x, out, |v| v),
    }
}

/// `is-finite`, into `pred`.
fn is_finite<T: Element>(x: Operand<'_, T>, out: &mut [bool]) -> bool {
    map1(x, out, Element::is_finite)
}

/// A binary op over `values`: a chunk's, or a tile's rows ([`Rows`]), whose loop over the rows
/// is then inside the op's code (a call of the op per row costs more than copying the rows in
/// and out of a chunk).
fn binary<T: Element, V: BinaryValues<T>>(op: BinaryOp, values: V) -> bool {
    use BinaryOp::*;
    match op {
        Add => values.map(Element::add),
        Sub => values.map(Element::sub),
        Mul => values.map(Element::mul),
        // By one value too: a reciprocal with two Markstein corrections (the correctly rounded
        // quotient in a multiply and four FMAs) gains nothing beyond the noise.
        Div => values.map(Element::div),
        Rem => values.map(Element::rem),
        Max => values.map(Element::maximum),
        Min => values.map(Element::minimum),
        Pow => values.map(inlined!(pow::<M>(x, y))),
        Atan2 => values.map(inlined!(atan2::<M>(x, y))),
        And => values.map(Element::and),
        Or => values.map(Element::or),
        Xor => values.map(Element::xor),
        ShiftLeft => values.map(Element::shift_left),
        ShiftRightArithmetic => values.map(Element::shift_right_arithmetic),
        ShiftRightLogical => values.map(Element::shift_right_logical),
    }
}

/// A comparison, into `pred`.
fn compare<T: Element>(
    direction: ComparisonDirection,
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    out: &mut [bool],
) -> bool {
    use ComparisonDirection::*;
    match direction {
        Eq => map2(a, b, out, |x, y| x == y),
        Ne => map2(a, b, out, |x, y| x != y),
        Ge => map2(a, b, out, |x, y| x >= y),
        Gt => map2(a, b, out, |x, y| x > y),
        Le => map2(a, b, out, |x, y| x <= y),
        Lt => map2(a, b, out, |x, y| x < y),
    }
}

/// `pred ? on_true : on_false`.
fn select<T: Element>(
    pred: Operand<'_, bool>,
    on_true: Operand<'_, T>,
    on_false: Operand<'_, T>,
    out: &mut [T],
) -> bool {
    map3(pred, on_true, on_false, out, |p, t, f| if p { t } else { f })
}

/// `min(max(x, lo), hi)`: `hi` wins where `lo > hi`.
fn clamp<T: Element>(
    lo: Operand<'_, T>,
    x: Operand<'_, T>,
    hi: Operand<'_, T>,
    out: &mut [T],
) -> bool {
    map3(lo, x, hi, out, |l, v, h| Element::minimum(Element::maximum(v, l), h))
}

/// `convert` from `S` to `D`.
fn convert<S: Element, D: Element>(x: Operand<'_, S>, out: &mut [D]) -> bool {
    map1(x, out, convert_element::<S, D>)
}

/// `acc[i] = op(…op(op(acc[i], row₀[i]), row₁[i])…, row_last[i])` for `rows` rows of
/// `acc.len()` values, one after another in `values`: a reduction's partial results for a run
/// of outputs (a column sum folds each row of a tile into them). Each output takes its rows in
/// order, as one row at a time would. Up to [`ROWS_HELD`] rows, the outputs stay in registers
/// across them (a vector load and store per tile instead of per row); a taller tile (an
/// input's, read where it lies) is folded row after row, read in order, its outputs (at most
/// `CHUNK`) in L1.
fn accumulate<T: Element>(op: BinaryOp, acc: &mut [T], values: Operand<'_, T>, rows: usize) -> bool {
    let len = acc.len();
    with_binary_fn!(T, op, f => match values {
        Operand::Splat(v) => acc.iter_mut().for_each(|a| *a = (0..rows).fold(*a, |a, _| f(a, v))),
        Operand::Values(_) if len == 0 => {}
        Operand::Values(values) if rows > ROWS_HELD => {
            for row in values.chunks_exact(len).take(rows) {
                acc.iter_mut().zip(row).for_each(|(a, &v)| *a = f(*a, v));
            }
        }
        Operand::Values(values) => {
            let mut blocks = acc.chunks_exact_mut(ACCUMULATED_LANES);
            for (b, block) in (&mut blocks).enumerate() {
                let mut lanes: [T; ACCUMULATED_LANES] = std::array::from_fn(|i| block[i]);
                for row in values.chunks_exact(len).take(rows) {
                    let row = &row[b * ACCUMULATED_LANES..][..ACCUMULATED_LANES];
                    lanes.iter_mut().zip(row).for_each(|(a, &v)| *a = f(*a, v));
                }
                block.copy_from_slice(&lanes);
            }
            let done = len - blocks.into_remainder().len();
            for row in values.chunks_exact(len).take(rows) {
                acc[done..].iter_mut().zip(&row[done..]).for_each(|(a, &v)| *a = f(*a, v));
            }
        }
    });
    false
}

/// `values` folded into `acc` with `op`: in `FOLD_LANES` interleaved partial results for the
/// associative ops (add, multiply, max, min, and, or, xor; float sums are reassociated, as XLA
/// may), in order for any other op. Max and min fold by plain comparisons where that is
/// exact (see `plain_extremum`).
fn fold<T: Element>(op: BinaryOp, acc: &mut T, values: &[T]) -> bool {
    let associative = matches!(
        op,
        BinaryOp::Add | BinaryOp::Mul | BinaryOp::Max | BinaryOp::Min | BinaryOp::And | BinaryOp::Or | BinaryOp::Xor
    );
    let plain = match op {
        _ if values.len() < 2 * FOLD_LANES => None,
        BinaryOp::Max => plain_extremum(values, |lane, v| if v > lane { v } else { lane }),
        BinaryOp::Min => plain_extremum(values, |lane, v| if v < lane { v } else { lane }),
        _ => None,
    };
    with_binary_fn!(T, op, f => {
        if let Some(extremum) = plain {
            *acc = f(*acc, extremum);
        } else if !associative || values.len() < 2 * FOLD_LANES {
            *acc = values.iter().fold(*acc, |acc, &v| f(acc, v));
        } else {
            let mut lanes: [T; FOLD_LANES] = std::array::from_fn(|i| values[i]);
            let mut chunks = values[FOLD_LANES..].chunks_exact(FOLD_LANES);
            for chunk in &mut chunks {
                for (lane, &v) in lanes.iter_mut().zip(chunk) {
                    *lane = f(*lane, v);
                }
            }
            let partial = chunks.remainder().iter().fold(lanes[0], |acc, &v| f(acc, v));
            *acc = f(*acc, lanes[1..].iter().fold(partial, |acc, &v| f(acc, v)));
        }
    });
    false
}
}

/// The outputs [`accumulate`] keeps in registers across a tile's rows: four AVX2 registers of
/// `f32`.
const ACCUMULATED_LANES: usize = 32;

/// The most rows [`accumulate`] folds with the outputs held in registers, its rows read side
/// by side. That suits a short tile in L1 (a computed column sum's), but a tall tile's rows
/// read from memory so outrun the prefetcher; they are folded row after row.
const ROWS_HELD: usize = 4;

/// The columns of a transposed input read side by side (see `load`), so that the reads of
/// several columns' lines are in flight at once.
const COLUMNS_IN_FLIGHT: usize = 8;

dispatched! {
/// Reads a chunk of `source`: element (r, i) from `start + r·tile_step + i·step`. A splat
/// when it is one value (both steps 0, or one row with step 0: `evaluate` reads those itself,
/// cheaper than this call); rows copied when contiguous (a row broadcast down the tile read
/// once); otherwise gathered, column by column when the rows are the contiguous direction (a
/// transposed input). Returns whether it is a splat.
fn load<T: Element>(source: &[T], start: isize, steps: [isize; 2], chunk: Chunk, out: &mut [T]) -> bool {
    let [tile_step, step] = steps;
    let at = |r: usize, i: usize| (start + r as isize * tile_step + i as isize * step) as usize;
    if step == 0 && (tile_step == 0 || chunk.rows == 1) {
        out[0] = source[start as usize];
        return true;
    }
    match (tile_step, step) {
        (0, 1) => {
            // A row vector broadcast down the tile: its row is read once, then the rows so
            // far are copied after themselves (W5's 32 rows of 64: 6 copies rather than 32).
            let from = at(0, 0);
            out[..chunk.len].copy_from_slice(&source[from..from + chunk.len]);
            let mut filled = chunk.len;
            while filled < chunk.count() {
                let more = filled.min(chunk.count() - filled);
                out.copy_within(..more, filled);
                filled += more;
            }
        }
        (_, 1) => {
            for (r, row) in out.chunks_exact_mut(chunk.len).enumerate() {
                let from = at(r, 0);
                row.copy_from_slice(&source[from..from + chunk.len]);
            }
        }
        (_, 0) => {
            for (r, row) in out.chunks_exact_mut(chunk.len).enumerate() {
                row.fill(source[at(r, 0)]);
            }
        }
        (1, _) if chunk.rows > 1 => {
            // A transposed input: each column of the chunk is contiguous in the source. Tiles
            // of columns go through registers where they can (`transpose.rs`); otherwise a few
            // columns are read side by side, row by row, so that as many streams of cache
            // lines are in flight at once (one column at a time waits on each line in turn).
            #[cfg(target_arch = "x86_64")]
            if transpose::through_registers(source, start, step, chunk, out) {
                return false;
            }
            for first in (0..chunk.len).step_by(COLUMNS_IN_FLIGHT) {
                let width = COLUMNS_IN_FLIGHT.min(chunk.len - first);
                let columns: [&[T]; COLUMNS_IN_FLIGHT] = std::array::from_fn(|k| {
                    let from = at(0, first + k.min(width - 1));
                    &source[from..from + chunk.rows]
                });
                for (r, row) in out.chunks_exact_mut(chunk.len).enumerate() {
                    for (value, column) in row[first..first + width].iter_mut().zip(&columns) {
                        *value = column[r];
                    }
                }
            }
        }
        _ => {
            for (r, row) in out.chunks_exact_mut(chunk.len).enumerate() {
                row.iter_mut().enumerate().for_each(|(i, o)| *o = source[at(r, i)]);
            }
        }
    }
    false
}
}

/// `len` values folded into `acc` with `op` a CHUNK at a time, in order: as a reduce's own loop
/// folds a row, so a row reduction inside a wider loop rounds as that loop does. One value for
/// all is folded as a buffer of it would be (an unfused reduce reads a materialized broadcast),
/// from one CHUNK of it on the stack.
pub(super) fn fold_in_chunks<T: Element>(op: BinaryOp, acc: &mut T, values: Operand<'_, T>, len: usize) {
    match values {
        Operand::Values(values) => values[..len].chunks(CHUNK).for_each(|piece| {
            fold(op, acc, piece);
        }),
        Operand::Splat(value) => {
            let piece = [value; CHUNK];
            (0..len).step_by(CHUNK).for_each(|first| {
                fold(op, acc, &piece[..CHUNK.min(len - first)]);
            });
        }
    }
}

/// The largest (or smallest) of `values` (at least `FOLD_LANES`) by plain comparisons, `pick(lane,
/// v)` being `v` where it compares greater (or smaller): one `maxps` or `minps` per vector of
/// lanes (and two to track NaNs), where `maximum` and `minimum` take five. `None` where that
/// may differ from them: a NaN among `values` (a plain comparison drops it) or a zero result
/// (−0 and +0 compare equal).
#[inline(always)]
fn plain_extremum<T: Element>(values: &[T], pick: impl Fn(T, T) -> T) -> Option<T> {
    let mut lanes: [T; FOLD_LANES] = std::array::from_fn(|i| values[i]);
    // A NaN is the one value unequal to itself (for any element type).
    #[allow(clippy::eq_op)]
    let is_nan = |v: T| v != v;
    // Each lane becomes a NaN once one of its values is.
    let mut nans = lanes;
    let mut chunks = values[FOLD_LANES..].chunks_exact(FOLD_LANES);
    for chunk in &mut chunks {
        for ((lane, nan), &v) in lanes.iter_mut().zip(&mut nans).zip(chunk) {
            *lane = pick(*lane, v);
            *nan = if is_nan(v) { v } else { *nan };
        }
    }
    let rest = chunks.remainder();
    let extremum = lanes.into_iter().chain(rest.iter().copied()).fold(lanes[0], &pick);
    let nan = nans.into_iter().chain(rest.iter().copied()).any(is_nan);
    (!nan && extremum != T::ZERO).then_some(extremum)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `fold`'s max and min against `maximum` and `minimum` folded in order, from several
    /// starting values, over rows (shorter than, as long as and longer than its lanes, and
    /// with a remainder) mixing ordinary values with NaN, −0 and +0, infinities and denormals
    /// at random places, each special value alone or never: a NaN only in the remainder,
    /// only among the first lanes, a zero extremum of either sign. The same rows in `f64`
    /// and (rounded) in `i32` too.
    #[test]
    fn extremum_folds_match_the_ordered_ones() {
        fn check<T: Element>(values: &[T], inits: [T; 5]) {
            let same = |a: T, b: T| a == b && a.to_f64().to_bits() == b.to_f64().to_bits();
            let both_nan = |a: T, b: T| a.to_f64().is_nan() && b.to_f64().is_nan();
            for init in inits {
                for (op, exact) in [(BinaryOp::Max, T::maximum as fn(T, T) -> T), (BinaryOp::Min, T::minimum)]
                {
                    let expected = values.iter().fold(init, |acc, &v| exact(acc, v));
                    let mut acc = init;
                    fold(op, &mut acc, values);
                    assert!(
                        same(acc, expected) || both_nan(acc, expected),
                        "{op:?} from {init:?} of {values:?}: {acc:?} against {expected:?}"
                    );
                }
            }
        }
        let specials = [f32::NAN, -0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY, 1e-40, -1e-40];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        for len in [16, 31, 32, 33, 47, 64, 100] {
            for _ in 0..300 {
                // Each row draws from a few of the specials, one in 8 values a special.
                let allowed: Vec<f32> = specials.iter().copied().filter(|_| next(3) == 0).collect();
                let all_negative = next(4) == 0;
                let values: Vec<f32> = (0..len)
                    .map(|_| match next(8) {
                        0 if !allowed.is_empty() => allowed[next(allowed.len() as u64) as usize],
                        _ if all_negative => -(next(1000) as f32) / 7.0 - 0.5,
                        _ => (next(2000) as f32 - 1000.0) / 7.0,
                    })
                    .collect();
                let inits = [f32::NEG_INFINITY, f32::INFINITY, -0.0, 0.0, -5.0];
                check(&values, inits);
                check(&values.iter().map(|&v| f64::from(v)).collect::<Vec<_>>(), inits.map(f64::from));
                check(&values.iter().map(|&v| v as i32).collect::<Vec<_>>(), [i32::MIN, i32::MAX, 0, 0, -5]);
            }
        }
    }

    /// A binary op over a tile's rows ([`Rows`]) writes each row where `out` puts it, from
    /// each operand's row: rows a pitch apart (longer than a row, as long, or 0 for one row
    /// for all), one value per row, or one for all; rows whose operands are both one value are
    /// filled with it. Elements between the output's rows are left as they were. Rows shorter
    /// than, as long as and longer than the vector lanes, in `f32`, `f64` and `i32`.
    #[test]
    fn binary_rows_write_each_row_where_it_lies() {
        fn check<T: Element + std::fmt::Debug>(op: BinaryOp, f: fn(T, T) -> T, value: fn(usize) -> T) {
            for (rows, len) in [(1, 1), (3, 5), (7, 16), (4, 33), (2, 64), (5, 70)] {
                let pitch = len + 3;
                let values: Vec<T> = (0..rows * pitch + len).map(value).collect();
                let per_row: Vec<T> = (0..rows).map(|r| value(1000 + r)).collect();
                let forms = |k: usize| match k {
                    0 => RowOperand::Rows { values: &values[..], pitch },
                    1 => RowOperand::Rows { values: &values[len..], pitch: len },
                    2 => RowOperand::Rows { values: &values[1..], pitch: 0 },
                    3 => RowOperand::PerRow(&per_row[..]),
                    _ => RowOperand::Splat(value(7)),
                };
                let element = |operand: RowOperand<'_, T>, r: usize, i: usize| match operand {
                    RowOperand::Splat(v) => v,
                    RowOperand::Rows { values, pitch } => values[r * pitch + i],
                    RowOperand::PerRow(values) => values[r],
                };
                for (ka, kb) in (0..5).flat_map(|a| (0..5).map(move |b| (a, b))) {
                    let (a, b) = (forms(ka), forms(kb));
                    assert!(a.holds(rows, len) && b.holds(rows, len));
                    let out_pitch = len + 2;
                    let untouched = value(9);
                    let mut out = vec![untouched; rows * out_pitch];
                    let base = out.as_mut_ptr();
                    // Each row handed out once, as the loop engine hands out its output's rows.
                    let rows_of = |r: usize| {
                        assert!(r < rows);
                        // SAFETY: row `r` of `out` (`r·out_pitch..+len` lies in it), asked once.
                        unsafe { std::slice::from_raw_parts_mut(base.add(r * out_pitch), len) }
                    };
                    let splat = binary(op, Rows { a, b, rows, len, out: rows_of });
                    assert!(!splat);
                    for r in 0..rows {
                        for i in 0..out_pitch {
                            let expected = match i < len {
                                true => f(element(a, r, i), element(b, r, i)),
                                false => untouched,
                            };
                            let got = out[r * out_pitch + i];
                            assert!(
                                got == expected,
                                "{op:?} {ka}·{kb} {rows}×{len}: row {r} [{i}] {got:?} against {expected:?}"
                            );
                        }
                    }
                }
            }
        }
        check::<f32>(BinaryOp::Sub, |a, b| a - b, |k| (k % 97) as f32 * 0.75 - 30.0);
        check::<f64>(BinaryOp::Max, f64::max, |k| (k % 89) as f64 * 1.5 - 60.0);
        check::<i32>(BinaryOp::Mul, |a, b| a.wrapping_mul(b), |k| (k % 101) as i32 - 50);
    }

    /// `accumulate` over several rows folds each output's rows in order, as a row at a time
    /// would, bit for bit: row lengths below, at, past and several times its lanes, with a
    /// remainder; tiles of rows held in registers and taller ones folded row after row; sums
    /// whose order shows in their roundings, and a splat.
    #[test]
    fn accumulating_rows_folds_each_output_in_row_order() {
        for len in [0, 1, 5, 31, 32, 33, 64, 100] {
            for rows in 1..=ROWS_HELD + 3 {
                let values: Vec<f32> = (0..rows * len)
                    .map(|k| ((k * 7919) % 1013) as f32 * 1.3e-3 + (k % 3) as f32 * 1e4)
                    .collect();
                let mut expected: Vec<f32> = (0..len).map(|i| i as f32 * 0.1 - 1e4).collect();
                let mut acc = expected.clone();
                for row in values.chunks(len.max(1)).take(rows) {
                    expected.iter_mut().zip(row).for_each(|(e, &v)| *e += v);
                }
                accumulate(BinaryOp::Add, &mut acc, Operand::Values(&values), rows);
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&acc), bits(&expected), "{rows} rows of {len}");
                let mut splat = vec![1.0f32; len];
                accumulate(BinaryOp::Mul, &mut splat, Operand::Splat(3.0), rows);
                assert!(splat.iter().all(|&v| v == 3f32.powi(rows as i32)), "{rows} rows of {len}");
            }
        }
    }

    /// Every arm of `load` against its definition, element (r, i) from
    /// `start + r·tile_step + i·step`: contiguous rows, one row for the whole tile (at 3 rows
    /// the last copy is part of the rows so far), one value per row, a transposed input read
    /// several columns at a time (widths below, at and past `COLUMNS_IN_FLIGHT`, forwards and
    /// reversed), and a general gather. In `i32` (whose transposed tiles go through registers
    /// where the CPU can: `transpose.rs`) and in `i64` (read a few columns at a time).
    #[test]
    fn load_reads_every_element_from_its_place() {
        fn check<T: Element>(source: &[T], rows: usize, len: usize, start: isize, steps: [isize; 2]) {
            let chunk = Chunk { rows, len };
            let mut out = vec![T::ZERO; chunk.count()];
            let splat = load(source, start, steps, chunk, &mut out);
            assert!(!splat);
            for (k, &value) in out.iter().enumerate() {
                let (r, i) = ((k / len) as isize, (k % len) as isize);
                assert_eq!(
                    value.to_f64() as isize,
                    start + r * steps[0] + i * steps[1],
                    "{:?} {rows}×{len} {steps:?} ({r},{i})",
                    T::ELEMENT_TYPE
                );
            }
        }
        let source: Vec<i32> = (0..10_000).collect();
        let wide: Vec<i64> = (0..10_000).collect();
        let widths = [1, 2, 7, 8, 9, 16, 17, 64];
        for (rows, len) in [2, 3, 64].into_iter().flat_map(|rows| widths.map(|len| (rows, len))) {
            for (start, steps) in [
                (0, [len as isize, 1]),
                (3, [0, 1]),
                (5, [3, 0]),
                (0, [1, rows as isize]),
                (9_000, [1, -(rows as isize) - 3]),
                (7, [2 * len as isize + 1, 2]),
            ] {
                check(&source, rows, len, start, steps);
                check(&wide, rows, len, start, steps);
            }
        }
    }
}
