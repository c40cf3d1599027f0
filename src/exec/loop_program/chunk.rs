//! The plain data every part of the loop engine shares: a work item's chunk, the operands
//! chunk ops and chains read, and where a chain keeps the sums it folds.

/// The longest row segment of a reduction, and the pieces every fold adds in (so a fused
/// reduce adds in the order of its own loop).
pub(super) const CHUNK: usize = 1024;

/// One work item's chunk: `rows` rows of `len` elements, row after row in the registers.
#[derive(Clone, Copy, PartialEq)]
pub(super) struct Chunk {
    pub(super) rows: usize,
    pub(super) len: usize,
}

impl Chunk {
    pub(super) fn count(self) -> usize {
        self.rows * self.len
    }
}

/// An operand of a chunk op: one value for every element, or a slice of the chunk's length.
#[derive(Clone, Copy)]
pub(super) enum Operand<'a, T> {
    Splat(T),
    Values(&'a [T]),
}

impl<T: Copy> Operand<'_, T> {
    /// Element `i` of the chunk.
    #[inline(always)]
    pub(super) fn get(&self, i: usize) -> T {
        match self {
            Operand::Splat(v) => *v,
            Operand::Values(values) => values[i],
        }
    }
}

/// An operand of a binary op computed over a tile's rows one after another (`chunk_ops::Rows`): one
/// value for every element, row `r`'s values at `values[r·pitch..]` (a chunk's rows with a
/// pitch of their length, one row for all with 0, or an input's rows where they lie), or one
/// value per row.
#[derive(Clone, Copy)]
pub(super) enum RowOperand<'a, T> {
    Splat(T),
    Rows { values: &'a [T], pitch: usize },
    PerRow(&'a [T]),
}

impl<'a, T: Copy> RowOperand<'a, T> {
    /// Whether it holds `rows` rows of `len` values.
    pub(super) fn holds(&self, rows: usize, len: usize) -> bool {
        match self {
            RowOperand::Splat(_) => true,
            RowOperand::Rows { values, pitch } => rows == 0 || (rows - 1) * pitch + len <= values.len(),
            RowOperand::PerRow(values) => rows <= values.len(),
        }
    }

    /// Row `r`'s `len` values.
    #[inline(always)]
    pub(super) fn row(self, r: usize, len: usize) -> Operand<'a, T> {
        match self {
            RowOperand::Splat(value) => Operand::Splat(value),
            RowOperand::Rows { values, pitch } => Operand::Values(&values[r * pitch..r * pitch + len]),
            RowOperand::PerRow(values) => Operand::Splat(values[r]),
        }
    }
}

/// Lanes of independent accumulators when folding a chunk: they break the dependency chain so
/// the fold vectorizes (for the associative ops). More gain nothing: the fold waits on its
/// values, not on its adds.
pub(super) const FOLD_LANES: usize = 16;

/// The operands a chain's links read besides the running value, by node.
pub(super) trait ChainOperands<T> {
    /// The chunk's values of node `node`.
    fn operand(&self, node: usize) -> ChainOperand<'_, T>;
}

/// A chain link's other operand over a chunk: any chunk op's, or one of two broadcasts along
/// the chunk's rows read where they lie rather than copied into every row (only when each row
/// is whole blocks of a chain's lanes).
#[derive(Clone, Copy)]
pub(super) enum ChainOperand<'a, T> {
    Chunk(Operand<'a, T>),
    /// The same values along every row (a row vector broadcast down a tile of rows).
    Row(&'a [T]),
    /// One value per row: row `r`'s is `values[r]` (a column broadcast along the rows).
    PerRow(&'a [T]),
}

/// Where a chain sums its values as it computes them (`chain::Fold`): each row cut into
/// pieces of [`CHUNK`], piece `p` of row `r` summed into `pieces[r·n + p]` for rows
/// of `n` pieces, as `fold` sums a piece in memory; the reduce then adds the pieces' sums to
/// its initial value in order.
pub(super) struct RowFold<'a> {
    pub(super) pieces: &'a mut [f32],
}

impl RowFold<'_> {
    /// The pieces of a row of `row_len` (`n` above).
    pub(super) fn pieces_per_row(row_len: usize) -> usize {
        row_len.div_ceil(CHUNK)
    }
}
