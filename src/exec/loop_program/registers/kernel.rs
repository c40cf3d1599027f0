//! The chain kernel on x86-64, generic over its vector registers ([`Vector`]): AVX2's with FMA,
//! or AVX-512's. A block of eight registers (64 `f32` lanes under AVX2, 128 under AVX-512) is
//! held from a chain's first link to its last, each link one or a few vector instructions per
//! register, or an elementary function: `exp`, `tanh` and `logistic` in the registers
//! (`functions.rs`), `log` over the lanes through memory (`functions::map_function`).
//! The chain's side runs are computed first for each block, each stored to a block on the
//! stack that the link reading it loads. A chain that folds a row sum adds each stored block
//! to the sums of its piece of the row ([`fold_block`]).
//!
//! The block is explicit vectors: LLVM kept a plain `[f32; 64]` in registers across the links
//! only while no link needed many registers of its own. The links are resolved once per chunk
//! ([`Step`]), so each link of each block costs a jump and its instructions: about 20
//! instructions per 64 lanes for an add under AVX2, against about 27 for a pass over the chunk.
//! AVX-512 halves both per lane: the jump is shared by twice the lanes.
//!
//! A link reading the chunk's values loads a register's worth per register of the block. The
//! buffers start on cache lines (`storage/buffer.rs`), so in rows of a multiple of 16 `f32`
//! each such load reads one line; a load across two lines costs more, once per link. (What was
//! measured and dropped, prefetches and other block shapes among it: `docs/performance.md`.)

use super::functions::{self, ThroughMemory};
use super::vector::{
    each, for_each_vector, lanes, load, store, Avx2, Avx512, Block, Vector, AVX2_LANES, AVX512_LANES,
    REGISTERS,
};
use crate::exec::loop_program::chain::{Chain, ChainFunction, ChainOp, Link, MAX_SIDES};
use crate::exec::loop_program::chunk::{ChainOperand, ChainOperands, Operand, RowFold, CHUNK, FOLD_LANES};
use crate::exec::loop_program::prefetch::Ahead;

/// The current block of each side run, stored for the links that read it.
type SideLanes<V> = [<V as Vector>::Lanes; MAX_SIDES];

/// The links of a chain resolved on the stack; a longer chain's are allocated.
const STACK_STEPS: usize = 24;

/// Defines [`Step`], a link resolved for one chunk, with one variant per op, side and kind of
/// other operand (so the block loop dispatches on one jump table), how a link becomes one
/// ([`step`]), whether it reads values, and what each does to a block ([`apply`]).
macro_rules! steps {
    ($($op:ident => $f:expr, $splat:ident, $splat_right:ident, $values:ident, $values_right:ident,
        $row:ident, $row_right:ident, $per_row:ident, $per_row_right:ident,
        $side:ident, $side_right:ident;)*) => {
        /// A link resolved for one chunk: its op, the side the running value is on (`…Right`:
        /// the right), and its other operand: one value for the chunk (`…Splat…`), the
        /// chunk's values (`…Values…`, at least the chunk's length), one row's for every row
        /// (`…Row…`), one value per row (`…PerRow…`: row `r`'s at `r`), or the block of a
        /// side run (`…Side…`, by its place among the chain's sides).
        #[derive(Clone, Copy)]
        enum Step<'a> {
            Neg,
            Abs,
            Function(ChainFunction),
            /// Maximum with a splat that is not NaN (see [`maximum_ordered`]).
            MaxOrdered(f32),
            /// Minimum with a splat that is not NaN (see [`minimum_ordered`]).
            MinOrdered(f32),
            $(
                $splat(f32), $splat_right(f32), $values(&'a [f32]), $values_right(&'a [f32]),
                $row(&'a [f32]), $row_right(&'a [f32]), $per_row(&'a [f32]), $per_row_right(&'a [f32]),
                $side(usize), $side_right(usize),
            )*
        }

        /// `link` resolved for a chunk of `len` elements, the chain's side runs ending at the
        /// nodes `sides`.
        #[inline]
        fn step<'a>(link: Link, operands: &'a impl ChainOperands<f32>, len: usize, sides: &[usize]) -> Step<'a> {
            let (op, other, running_left) = match link {
                Link::Neg => return Step::Neg,
                Link::Abs => return Step::Abs,
                Link::Function(function) => return Step::Function(function),
                Link::Binary { op, other, running_left } => (op, other, running_left),
            };
            if let Some(side) = sides.iter().position(|&node| node == other) {
                return match (op, running_left) {
                    $(
                        (ChainOp::$op, true) => Step::$side(side),
                        (ChainOp::$op, false) => Step::$side_right(side),
                    )*
                };
            }
            let other = match operands.operand(other) {
                ChainOperand::Chunk(other) => other,
                ChainOperand::Row(values) => return match (op, running_left) {
                    $(
                        (ChainOp::$op, true) => Step::$row(values),
                        (ChainOp::$op, false) => Step::$row_right(values),
                    )*
                },
                ChainOperand::PerRow(values) => return match (op, running_left) {
                    $(
                        (ChainOp::$op, true) => Step::$per_row(values),
                        (ChainOp::$op, false) => Step::$per_row_right(values),
                    )*
                },
            };
            match (op, other, running_left) {
                // Maximum and minimum are commutative (up to which NaN results).
                (ChainOp::Max, Operand::Splat(v), _) if !v.is_nan() => Step::MaxOrdered(v),
                (ChainOp::Min, Operand::Splat(v), _) if !v.is_nan() => Step::MinOrdered(v),
                $(
                    (ChainOp::$op, Operand::Splat(v), true) => Step::$splat(v),
                    (ChainOp::$op, Operand::Splat(v), false) => Step::$splat_right(v),
                    (ChainOp::$op, Operand::Values(v), true) => Step::$values(&v[..len]),
                    (ChainOp::$op, Operand::Values(v), false) => Step::$values_right(&v[..len]),
                )*
            }
        }

        impl Step<'_> {
            /// Whether the step reads an operand of a row form.
            fn reads_rows(&self) -> bool {
                matches!(self, $(Step::$row(_) | Step::$row_right(_) | Step::$per_row(_)
                    | Step::$per_row_right(_))|*)
            }

            /// Whether the step reads one value for the whole chunk (a splat).
            fn reads_one_value(&self) -> bool {
                matches!(self, Step::Neg | Step::Abs | Step::Function(_) | Step::MaxOrdered(_)
                    | Step::MinOrdered(_)
                    $(| Step::$splat(_) | Step::$splat_right(_))*)
            }
        }

        /// `step` on `block`, the lanes `first..first + lanes` of the chunk, the lanes
        /// `lane..lane + lanes` of row `row`, whose side runs' blocks are `sides`; `sign` is
        /// −0 in every lane.
        #[inline(always)]
        fn apply<V: ThroughMemory>(
            step: Step<'_>,
            block: &mut Block<V>,
            [first, lane, row]: [usize; 3],
            sign: V,
            sides: &SideLanes<V>,
        ) {
            match step {
                Step::Neg => each(block, |a| a.xor(sign)),
                Step::Abs => each(block, |a| sign.and_not(a)),
                Step::Function(function) => *block = functions::apply(*block, function, sign),
                Step::MaxOrdered(b) => {
                    let (b, keep) = (sign.splat_like(b), ordered_mask(b.is_sign_positive(), sign));
                    each(block, |a| maximum_ordered(a, b, keep))
                }
                Step::MinOrdered(b) => {
                    let (b, set) = (sign.splat_like(b), ordered_mask(b.is_sign_negative(), sign));
                    each(block, |a| minimum_ordered(a, b, set))
                }
                $(
                    Step::$splat(b) => each_splat(block, b, |a, b| $f(a, b)),
                    Step::$splat_right(b) => each_splat(block, b, |a, b| $f(b, a)),
                    Step::$values(values) => each_with(block, values, first, |a, b| $f(a, b)),
                    Step::$values_right(values) => each_with(block, values, first, |a, b| $f(b, a)),
                    Step::$row(values) => each_with(block, values, lane, |a, b| $f(a, b)),
                    Step::$row_right(values) => each_with(block, values, lane, |a, b| $f(b, a)),
                    Step::$per_row(values) => each_splat(block, values[row], |a, b| $f(a, b)),
                    Step::$per_row_right(values) => each_splat(block, values[row], |a, b| $f(b, a)),
                    Step::$side(side) => each_with(block, sides[side].as_ref(), 0, |a, b| $f(a, b)),
                    Step::$side_right(side) => each_with(block, sides[side].as_ref(), 0, |a, b| $f(b, a)),
                )*
            }
        }
    };
}

steps! {
    Add => Vector::add, AddSplat, AddSplatRight, AddValues, AddValuesRight,
        AddRow, AddRowRight, AddPerRow, AddPerRowRight, AddSide, AddSideRight;
    Sub => Vector::sub, SubSplat, SubSplatRight, SubValues, SubValuesRight,
        SubRow, SubRowRight, SubPerRow, SubPerRowRight, SubSide, SubSideRight;
    Mul => Vector::mul, MulSplat, MulSplatRight, MulValues, MulValuesRight,
        MulRow, MulRowRight, MulPerRow, MulPerRowRight, MulSide, MulSideRight;
    Div => Vector::div, DivSplat, DivSplatRight, DivValues, DivValuesRight,
        DivRow, DivRowRight, DivPerRow, DivPerRowRight, DivSide, DivSideRight;
    Max => maximum, MaxSplat, MaxSplatRight, MaxValues, MaxValuesRight,
        MaxRow, MaxRowRight, MaxPerRow, MaxPerRowRight, MaxSide, MaxSideRight;
    Min => minimum, MinSplat, MinSplatRight, MinValues, MinValuesRight,
        MinRow, MinRowRight, MinPerRow, MinPerRowRight, MinSide, MinSideRight;
}

/// The chain over the chunk of rows of `row_len` (see `registers::chain`), with its `sides`:
/// needs `out` to hold a block unless every operand is a splat, and rows of whole blocks if an
/// operand is of a row form; returns whether the result is a splat (`None` for more than
/// [`MAX_SIDES`] sides, or one starting from values of a row form). With `fold`, each row's
/// values are summed as they are stored (see [`fold_block`]; not when they are a splat), and
/// rows must be whole blocks (`None` otherwise). With `ahead`, each block of the start's
/// values asks for the lines that far past it ([`Ahead::request`]).
///
/// # Safety
/// The CPU has the instruction set of `V`. (Each vector type compiles it for its instruction
/// set: [`Compiled::chain`].)
#[inline(always)]
unsafe fn chain<V: ThroughMemory>(
    chain: &Chain,
    operands: &impl ChainOperands<f32>,
    out: &mut [f32],
    row_len: usize,
    mut fold: Option<RowFold<'_>>,
    ahead: Option<Ahead>,
) -> Option<bool> {
    let (start, links, sides) = (operands.operand(chain.start), &chain.links[..], &chain.sides[..]);
    let len = out.len();
    let lanes = lanes::<V>();
    if sides.len() > MAX_SIDES || (fold.is_some() && !row_len.is_multiple_of(lanes)) {
        return None;
    }
    let side_nodes: [usize; MAX_SIDES] =
        std::array::from_fn(|k| sides.get(k).map_or(usize::MAX, |side| side.node));
    // The chain's links, then each side's, resolved on the stack: an allocation per chunk cost
    // layer norm about 700 instructions per row.
    let all_links = || links.iter().chain(sides.iter().flat_map(|side| &side.links));
    let count = all_links().count();
    let mut on_stack = [Step::Neg; STACK_STEPS];
    let on_heap: Vec<Step<'_>>;
    let resolve = |&link: &Link| step(link, operands, len, &side_nodes[..sides.len()]);
    let all_steps = if count <= STACK_STEPS {
        for (slot, link) in on_stack.iter_mut().zip(all_links()) {
            *slot = resolve(link);
        }
        &on_stack[..count]
    } else {
        on_heap = all_links().map(resolve).collect();
        &on_heap[..]
    };
    // The runs of a block: each side's, stored for the links that read it, then the chain's,
    // stored to `out`. (One call of `apply` in the block loop, so that it is inlined there:
    // with a call per kind of run, it is not.)
    // Every run starts as the chain's; the sides take the first places.
    let (steps, mut side_steps) = all_steps.split_at(links.len());
    let mut runs = [(start, steps, None); MAX_SIDES + 1];
    for (k, side) in sides.iter().enumerate() {
        let ChainOperand::Chunk(side_start) = operands.operand(side.start) else { return None };
        let own;
        (own, side_steps) = side_steps.split_at(side.links.len());
        runs[k] = (ChainOperand::Chunk(side_start), own, Some(k));
    }
    let runs = &runs[..=sides.len()];
    let splat = matches!(start, ChainOperand::Chunk(Operand::Splat(_)))
        && steps.iter().all(|step| step.reads_one_value());
    // One block when every operand is a splat (its first lane is the value); otherwise the
    // last block ends at the chunk's end, overlapping the one before: its lanes are computed
    // again, to the same values. (With an operand of a row form, rows are whole blocks: no
    // block overlaps, and each lies in one row.)
    let last = if splat { 0 } else { len - lanes };
    // Rows are tracked only for operands of a row form, and for a fold.
    let rows = fold.is_some()
        || !matches!(start, ChainOperand::Chunk(_))
        || all_steps.iter().any(|step| step.reads_rows());
    // SAFETY: the caller's CPU has the instruction set; every vector is made from this one.
    let sign = unsafe { V::splat(-0.0) };
    let mut side_lanes: SideLanes<V> = [V::ZEROED; MAX_SIDES];
    let mut partial_sums = [sign; 2];
    let (mut next, mut lane, mut row) = (0, 0, 0);
    // The start's values whose later lines the chain asks for, block by block.
    let ahead = ahead.zip(match start {
        ChainOperand::Chunk(Operand::Values(values)) => Some(values),
        _ => None,
    });
    loop {
        let first = next.min(last);
        if let Some((ahead, values)) = ahead {
            ahead.request(values[first..].as_ptr().cast(), lanes * size_of::<f32>());
        }
        for &(start, steps, side) in runs {
            let mut block = start_block(sign, start, [first, lane, row]);
            for &step in steps {
                apply(step, &mut block, [first, lane, row], sign, &side_lanes);
            }
            match side {
                Some(side) => store(&block, side_lanes[side].as_mut()),
                None if splat => {
                    out[0] = block[0].first();
                    return Some(true);
                }
                None => {
                    store(&block, &mut out[first..]);
                    if let Some(fold) = &mut fold {
                        fold_block(fold, &mut partial_sums, &block, [lane, row, row_len]);
                    }
                }
            }
        }
        if first == last {
            return Some(false);
        }
        next = first + lanes;
        if rows {
            lane += lanes;
            if lane == row_len {
                (lane, row) = (0, row + 1);
            }
        }
    }
}

/// Adds `block`, the lanes `lane..` of row `row` (of `row_len`, whole blocks), to the sum of
/// its piece of the row (see [`RowFold`]), in the order `chunk_ops::fold` adds a piece in
/// memory: in [`FOLD_LANES`] interleaved `partial_sums` (one register of them under AVX-512,
/// two under AVX2), which the piece's first lanes start and each later group of lanes adds
/// to, then added in order once the piece ends.
#[inline(always)]
fn fold_block<V: Vector>(
    fold: &mut RowFold<'_>,
    partial_sums: &mut [V; 2],
    block: &Block<V>,
    [lane, row, row_len]: [usize; 3],
) {
    let group = FOLD_LANES / V::WIDTH;
    // A block lies in one piece: pieces are whole blocks, and so are rows.
    let starts_piece = lane.is_multiple_of(CHUNK);
    for (r, &register) in block.iter().enumerate() {
        let partial = &mut partial_sums[r % group];
        *partial = if starts_piece && r < group { register } else { partial.add(register) };
    }
    let end = lane + lanes::<V>();
    if end.is_multiple_of(CHUNK) || end == row_len {
        let mut lanes = [0.0; FOLD_LANES];
        for (partial, lanes) in partial_sums.iter().zip(lanes.chunks_exact_mut(V::WIDTH)) {
            partial.store(lanes);
        }
        let piece = lane / CHUNK;
        fold.pieces[row * RowFold::pieces_per_row(row_len) + piece] =
            lanes[1..].iter().fold(lanes[0], |sum, &lane| sum + lane);
    }
}

// A block lies in one piece of a row, and a fold's lanes are one AVX-512 register or two of
// AVX2's (`fold_block`'s two partial sums; a block's eight registers are whole groups).
const _: () = assert!(
    CHUNK.is_multiple_of(AVX512_LANES)
        && CHUNK.is_multiple_of(AVX2_LANES)
        && FOLD_LANES == <Avx512 as Vector>::WIDTH
        && FOLD_LANES == 2 * <Avx2 as Vector>::WIDTH
);

/// The block a run starting from `start` begins with: the lanes `first..` of its values, the
/// lanes `lane..` of its row, or one value (its splat, or row `row`'s) in every lane (`like`
/// is any vector: proof of the instruction set).
#[inline(always)]
fn start_block<V: Vector>(like: V, start: ChainOperand<'_, f32>, [first, lane, row]: [usize; 3]) -> Block<V> {
    match start {
        ChainOperand::Chunk(Operand::Splat(v)) => [like.splat_like(v); REGISTERS],
        ChainOperand::Chunk(Operand::Values(values)) => load(like, &values[first..]),
        ChainOperand::Row(values) => load(like, &values[lane..]),
        ChainOperand::PerRow(values) => [like.splat_like(values[row]); REGISTERS],
    }
}

/// `f(running, other)` on every register of the block, the other operand's lanes `first..`
/// from `values`.
#[inline(always)]
fn each_with<V: Vector>(block: &mut Block<V>, values: &[f32], first: usize, f: impl Fn(V, V) -> V) {
    let other = load(block[0], &values[first..]);
    for (a, b) in block.iter_mut().zip(other) {
        *a = f(*a, b);
    }
}

/// `f(running, value)` on every register of the block.
#[inline(always)]
fn each_splat<V: Vector>(block: &mut Block<V>, value: f32, f: impl Fn(V, V) -> V) {
    let value = block[0].splat_like(value);
    each(block, |a| f(a, value));
}

/// IEEE 754-2019 maximum, as `math::maximum`: NaN if either is, +0 for ±0. `maxps` returns
/// its second operand when either is NaN or they are equal, so the two orders agree unless
/// one is NaN (then the unordered mask, all ones, is a NaN) or they are zeros of both signs
/// (then their `and` is +0).
#[inline(always)]
fn maximum<V: Vector>(a: V, b: V) -> V {
    let both = a.max_or_second(b).and(b.max_or_second(a));
    both.or(a.unordered(b))
}

/// IEEE 754-2019 minimum, as `math::minimum`: NaN if either is, −0 for ±0 (as `maximum`,
/// with `or` making −0 of zeros of both signs).
#[inline(always)]
fn minimum<V: Vector>(a: V, b: V) -> V {
    let both = a.min_or_second(b).or(b.min_or_second(a));
    both.or(a.unordered(b))
}

/// The sign mask when `sign_bit` holds, else 0: what `maximum_ordered` keeps of a result and
/// `minimum_ordered` sets in one.
#[inline(always)]
fn ordered_mask<V: Vector>(sign_bit: bool, sign: V) -> V {
    if sign_bit {
        sign
    } else {
        sign.splat_like(0.0)
    }
}

/// `maximum(a, b)` for a `b` that is not NaN, in two instructions: `maxps(b, a)` is `a` when
/// `a` is NaN, and is only wrong for `a` = −0, `b` = +0; a `b` of positive sign makes the
/// result positive, so its sign bit is then cleared (`clear` is the sign mask; else 0).
#[inline(always)]
fn maximum_ordered<V: Vector>(a: V, b: V, clear: V) -> V {
    clear.and_not(b.max_or_second(a))
}

/// `minimum(a, b)` for a `b` that is not NaN: `minps(b, a)`, whose sign bit is set when `b`
/// is negative (`set` is then the sign mask; else 0), which only changes `a` = +0, `b` = −0.
#[inline(always)]
fn minimum_ordered<V: Vector>(a: V, b: V, set: V) -> V {
    set.or(b.min_or_second(a))
}

/// The chain kernel compiled for the instruction set of a vector type.
pub(super) trait Compiled: ThroughMemory {
    /// [`chain`] in registers of `Self`, compiled for its instruction set.
    ///
    /// # Safety
    /// The CPU has the instruction set of `Self`.
    unsafe fn chain(
        chain: &Chain,
        operands: &impl ChainOperands<f32>,
        out: &mut [f32],
        row_len: usize,
        fold: Option<RowFold<'_>>,
        ahead: Option<Ahead>,
    ) -> Option<bool>;
}

/// Implements [`Compiled`] for a vector type with its instruction set's features.
macro_rules! compiled {
    ($name:ident, $features:literal) => {
        impl Compiled for $name {
            #[target_feature(enable = $features)]
            unsafe fn chain(
                chain: &Chain,
                operands: &impl ChainOperands<f32>,
                out: &mut [f32],
                row_len: usize,
                fold: Option<RowFold<'_>>,
                ahead: Option<Ahead>,
            ) -> Option<bool> {
                // SAFETY: the caller's CPU has the instruction set.
                unsafe { self::chain::<$name>(chain, operands, out, row_len, fold, ahead) }
            }
        }
    };
}
for_each_vector!(compiled);

#[cfg(test)]
mod tests {
    use super::super::vector::for_each_instruction_set;
    use super::*;
    use crate::attributes::BinaryOp;
    use crate::exec::element::Element;
    use crate::exec::loop_program::chain::Side;
    use crate::exec::math::Fused;
    use crate::exec::math::{maximum as scalar_maximum, minimum as scalar_minimum};

    /// Every kind of `f32` that maximum and minimum treat apart.
    const SPECIALS: [f32; 11] =
        [f32::NAN, -f32::NAN, 0.0, -0.0, 1.0, -1.0, 2.5, f32::INFINITY, f32::NEG_INFINITY, 1e-40, -1e-40];

    /// Whether `got` is `want` to the bit, or both are NaN.
    fn same(got: f32, want: f32) -> bool {
        got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
    }

    /// The vector extrema, general and against a splat that is not NaN, match the scalar ones
    /// (IEEE 754-2019: NaN wins, −0 below +0) on every pair of special values, either way
    /// round, under each instruction set.
    #[test]
    fn extrema_match_the_scalar_ones_on_every_special_pair() {
        fn check<V: Vector>(like: V) {
            for a in SPECIALS {
                for b in SPECIALS {
                    let (va, vb, sign) = (like.splat_like(a), like.splat_like(b), like.splat_like(-0.0));
                    let (max, min) = (scalar_maximum(a, b), scalar_minimum(a, b));
                    assert!(same(maximum(va, vb).first(), max), "maximum({a:?}, {b:?})");
                    assert!(same(minimum(va, vb).first(), min), "minimum({a:?}, {b:?})");
                    if b.is_nan() {
                        continue;
                    }
                    let ordered_max = maximum_ordered(va, vb, ordered_mask(b.is_sign_positive(), sign));
                    let ordered_min = minimum_ordered(va, vb, ordered_mask(b.is_sign_negative(), sign));
                    assert!(same(ordered_max.first(), max), "maximum_ordered({a:?}, {b:?})");
                    assert!(same(ordered_min.first(), min), "minimum_ordered({a:?}, {b:?})");
                }
            }
        }
        for_each_instruction_set(check, check);
    }

    /// The nodes a test chain reads: `x` and `y` (node 0 and 1), a splat (2), a row vector
    /// (3), one value per row (4); its sides end at nodes 5 and 6.
    struct Nodes<'a>([ChainOperand<'a, f32>; 5]);

    impl ChainOperands<f32> for Nodes<'_> {
        fn operand(&self, node: usize) -> ChainOperand<'_, f32> {
            self.0[node]
        }
    }

    /// `link` on `running` by plain scalar code, its other operand `other(node)`.
    fn scalar_link(link: Link, running: f32, other: impl Fn(usize) -> f32) -> f32 {
        let (op, b, running_left) = match link {
            Link::Neg => return -running,
            Link::Abs => return running.abs(),
            Link::Function(ChainFunction::Exp) => return Element::exp::<Fused>(running),
            Link::Function(ChainFunction::Log) => return Element::log::<Fused>(running),
            Link::Function(ChainFunction::Tanh) => return Element::tanh::<Fused>(running),
            Link::Function(ChainFunction::Logistic) => return Element::logistic::<Fused>(running),
            Link::Binary { op, other: node, running_left } => (op, other(node), running_left),
        };
        let (a, b) = if running_left { (running, b) } else { (b, running) };
        match op {
            ChainOp::Add => a + b,
            ChainOp::Sub => a - b,
            ChainOp::Mul => a * b,
            ChainOp::Div => a / b,
            ChainOp::Max => scalar_maximum(a, b),
            ChainOp::Min => scalar_minimum(a, b),
        }
    }

    /// The kernel computes random chains as plain scalar code does, to the bit (any NaN for
    /// any NaN): every link and kind of operand (on either side of the op; a side run's
    /// block; a NaN splat; rows of whole blocks reading row and per-row operands, and starting
    /// from them), chains longer than the steps kept on the stack, chunks of one block, of
    /// whole blocks and with a last block that overlaps the one before, on values with NaN,
    /// ±0, ±∞, denormals and arguments that overflow; under each instruction set. On rows of
    /// whole blocks (of one piece of `CHUNK` lanes and of two), it also sums each piece of
    /// each row as `chunk_ops::fold` sums the piece's values in memory. Each block asks for the
    /// lines a gibibyte past its start's values, where nothing may be mapped: a hint, which
    /// changes nothing.
    #[test]
    fn random_chains_match_scalar_code() {
        let ahead = Some(Ahead { distance: 1 << 30 });
        for_each_instruction_set(
            // SAFETY (both): a vector of the instruction set exists, so the CPU has it.
            |_| {
                random_chains(AVX2_LANES, |chain, nodes, out, row_len, fold| unsafe {
                    <Avx2 as Compiled>::chain(chain, nodes, out, row_len, fold, ahead)
                })
            },
            |_| {
                random_chains(AVX512_LANES, |chain, nodes, out, row_len, fold| unsafe {
                    <Avx512 as Compiled>::chain(chain, nodes, out, row_len, fold, ahead)
                })
            },
        );
    }

    /// The chains of `random_chains_match_scalar_code` through `kernel`, which computes
    /// `lanes` at once.
    fn random_chains(
        lanes: usize,
        kernel: impl Fn(&Chain, &Nodes<'_>, &mut [f32], usize, Option<RowFold<'_>>) -> Option<bool>,
    ) {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |below: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % below as u64) as usize
        };
        let specials = [f32::NAN, -0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY, 1e-40, -3e-39, 100.0, -100.0];
        let value = |next: &mut dyn FnMut(usize) -> usize| match next(10) {
            0 => specials[next(specials.len())],
            _ => (next(4000) as f32 - 2000.0) / 300.0,
        };
        let ops = [ChainOp::Add, ChainOp::Sub, ChainOp::Mul, ChainOp::Div, ChainOp::Max, ChainOp::Min];
        let functions =
            [ChainFunction::Exp, ChainFunction::Log, ChainFunction::Tanh, ChainFunction::Logistic];
        let random_link = |next: &mut dyn FnMut(usize) -> usize, readable: usize| match next(10) {
            0 => Link::Neg,
            1 => Link::Abs,
            2 => Link::Function(functions[next(4)]),
            _ => Link::Binary { op: ops[next(6)], other: next(readable), running_left: next(2) == 0 },
        };
        for case in 0..480 {
            let (rows, row_len) =
                [(1, lanes), (1, lanes + 36), (1, 1000), (2, lanes), (3, 2 * lanes), (2, CHUNK + lanes)]
                    [case % 6];
            let len = rows * row_len;
            let x: Vec<f32> = (0..len).map(|_| value(&mut next)).collect();
            let y: Vec<f32> = (0..len).map(|_| value(&mut next)).collect();
            let v: Vec<f32> = (0..row_len).map(|_| value(&mut next)).collect();
            let w: Vec<f32> = (0..rows).map(|_| value(&mut next)).collect();
            let splat = if next(8) == 0 { f32::NAN } else { value(&mut next) };
            let row_forms = row_len % lanes == 0;
            let nodes = Nodes([
                ChainOperand::Chunk(Operand::Values(&x)),
                ChainOperand::Chunk(Operand::Values(&y)),
                ChainOperand::Chunk(Operand::Splat(splat)),
                if row_forms { ChainOperand::Row(&v) } else { ChainOperand::Chunk(Operand::Values(&y)) },
                if row_forms { ChainOperand::PerRow(&w) } else { ChainOperand::Chunk(Operand::Splat(splat)) },
            ]);
            let side_count = next(MAX_SIDES + 1);
            let sides: Vec<Side> = (0..side_count)
                .map(|k| {
                    let (start, count) = (next(2), 1 + next(3));
                    Side {
                        node: 5 + k,
                        start,
                        links: (0..count).map(|_| random_link(&mut next, 5)).collect(),
                    }
                })
                .collect();
            // Mostly short chains, whose values stay finite more often; some past the stack's steps.
            let count = if next(8) == 0 { STACK_STEPS + 1 + next(6) } else { 1 + next(8) };
            let links: Vec<Link> = (0..count).map(|_| random_link(&mut next, 5 + side_count)).collect();
            // Mostly from x; with rows of whole blocks, sometimes from the row or per-row values.
            let start = if row_forms && next(3) == 0 { 3 + next(2) } else { 0 };
            let chain = Chain { start, links, sides, fold: None };
            let (links, sides) = (&chain.links, &chain.sides);
            let mut out = vec![0.0; len];
            let per_row = RowFold::pieces_per_row(row_len);
            let mut pieces = vec![0.0; rows * per_row];
            let fold = row_forms.then_some(RowFold { pieces: &mut pieces });
            let splat_result = kernel(&chain, &nodes, &mut out, row_len, fold);
            assert_eq!(splat_result, Some(false), "case {case}");
            if row_forms {
                for (k, piece) in out.chunks(row_len).flat_map(|row| row.chunks(CHUNK)).enumerate() {
                    // −0 + x is x, for every x: the piece's sum alone.
                    let mut want = -0.0;
                    crate::exec::loop_program::chunk_ops::fold(BinaryOp::Add, &mut want, piece);
                    assert!(same(pieces[k], want), "case {case}, piece {k}: {} against {want}", pieces[k]);
                }
            }
            for (k, &got) in out.iter().enumerate() {
                let (r, i) = (k / row_len, k % row_len);
                let operand = |node: usize| match node {
                    0 => x[k],
                    1 => y[k],
                    2 => splat,
                    3 if row_forms => v[i],
                    3 => y[k],
                    _ if row_forms => w[r],
                    _ => splat,
                };
                let side_values: Vec<f32> = sides
                    .iter()
                    .map(|side| {
                        side.links.iter().fold(operand(side.start), |a, &link| scalar_link(link, a, operand))
                    })
                    .collect();
                let other = |node: usize| if node >= 5 { side_values[node - 5] } else { operand(node) };
                let want = links.iter().fold(operand(start), |a, &link| scalar_link(link, a, other));
                assert!(
                    same(got, want),
                    "case {case}, lane {k}: {got:?} against {want:?}, {links:?}, {sides:?}"
                );
            }
        }
    }
}
