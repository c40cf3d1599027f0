//! f32 matrix products on a register tile (AVX-512 F, or AVX2 with FMA): the rhs packed a
//! column panel and a block of its rows at a time, the lhs read in place. A product's depth is
//! a list of segments, each a run of the lhs rows' elements from an offset against a run of the
//! packed rhs rows, so one tile sums a plain product (one segment) or a convolution's window
//! taps (a segment per tap, each reading its input rows at the tap's offset) without leaving
//! registers.

use std::ops::Range;

use crate::exec::loop_program::copy_matrix;

/// Columns of one packed panel: four vectors of 16 lanes.
pub(crate) const PANEL: usize = 64;

/// A register tile's instruction set. An AVX-512 tile spans up to a whole panel (four vectors
/// of 16 lanes by 6 rows); an AVX2 tile, with half as many registers of half the width,
/// sixteen columns of the panel at a time (two vectors of 8 lanes by 6 rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tile {
    Avx512,
    Avx2,
}

impl Tile {
    /// Every tile this machine runs, the widest first.
    pub(crate) fn detected() -> Vec<Tile> {
        let mut tiles = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512f") {
                tiles.push(Tile::Avx512);
            }
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                tiles.push(Tile::Avx2);
            }
        }
        tiles
    }

    /// The widest tile this machine runs.
    fn best() -> Option<Tile> {
        static BEST: std::sync::OnceLock<Option<Tile>> = std::sync::OnceLock::new();
        *BEST.get_or_init(|| Tile::detected().first().copied())
    }
}

/// Whether this machine runs a tile (AVX-512 F, or AVX2 with FMA); where it does not, callers
/// use another kernel.
pub(crate) fn available() -> bool {
    Tile::best().is_some()
}

/// Whether the tile is also the faster kernel for a plain matrix product, against
/// `matrixmultiply`'s, which packs the lhs as well: on AVX-512, yes; on AVX2, whose tile holds
/// half as many sums, no (docs/performance.md), so there the tile runs only the products that
/// have no packed alternative but a copy: a convolution's taps and gathered lhs rows.
pub(crate) fn leads_plain_products() -> bool {
    Tile::best() == Some(Tile::Avx512)
}

/// The most bytes a [`Packed`] holds for a rhs of `depth × columns` packed in runs of at most
/// `block_rows` rows: the blocks it keeps (no more than the rhs has, within [`KEPT_BYTES`])
/// and the one it packs. Runs that are not all full (a convolution's, cut at its taps) are
/// at least half full two by two, so a panel has fewer than twice `depth / block_rows` + 1.
pub(crate) fn packed_bytes(depth: usize, columns: usize, block_rows: usize) -> u64 {
    let block = ((block_rows.min(depth) * PANEL + LINE - 1) * std::mem::size_of::<f32>()) as u64;
    let blocks = (2 * depth.div_ceil(block_rows.max(1)) * columns.div_ceil(PANEL)) as u64;
    block.saturating_mul(blocks).min(KEPT_BYTES as u64).saturating_add(block)
}

/// The rhs of a product, `depth × columns`, read at `data[base + k·row + j·col]`: checked
/// once to lie inside `data`, then packed a panel of [`PANEL`] columns and a block of rows at a
/// time into a buffer that stays in cache while every lhs row passes it.
#[derive(Clone, Copy)]
pub(crate) struct Rhs<'a> {
    data: &'a [f32],
    base: usize,
    strides: [usize; 2],
    depth: usize,
    columns: usize,
}

impl<'a> Rhs<'a> {
    /// The rhs `b[base + k·row + j·col]` for `k < depth`, `j < columns`, or `None` if a read
    /// would leave `b`.
    pub(crate) fn new(
        b: &'a [f32],
        base: usize,
        [row, col]: [usize; 2],
        depth: usize,
        columns: usize,
    ) -> Option<Self> {
        let last =
            (depth.max(1) - 1).checked_mul(row)?.checked_add((columns.max(1) - 1).checked_mul(col)?)?;
        if depth > 0 && columns > 0 && base.checked_add(last)? >= b.len() {
            return None;
        }
        Some(Rhs { data: b, base, strides: [row, col], depth, columns })
    }

    /// The number of panels.
    pub(crate) fn panels(&self) -> usize {
        self.columns.div_ceil(PANEL)
    }
}

/// Packed blocks of rhs panels, the most recently used kept up to [`KEPT_BYTES`]: rows of a
/// panel's columns rounded up to whole vectors with zeros, each block from a cache-line
/// boundary, so that no vector load of it spans two lines. It remembers which blocks it holds,
/// so tasks that pass the same blocks in turn (a product's blocks of rows, a convolution's
/// tasks over one kernel matrix) pack each once: it must not outlive the product whose rhs it
/// packs, since another rhs could come to lie at the same address.
#[derive(Default)]
pub(crate) struct Packed {
    /// Oldest first.
    blocks: Vec<PackedBlock>,
}

/// One packed block of a [`Packed`].
struct PackedBlock {
    data: Vec<f32>,
    /// Where the block starts in `data`: its first element on a cache line's first byte.
    start: usize,
    key: BlockKey,
}

/// The packed bytes a [`Packed`] keeps besides the block it packs last: a whole rhs of up to
/// a 1024 × 1024 f32 matrix, so the blocks of rows of a product pack its rhs once per thread,
/// not once per block.
const KEPT_BYTES: usize = 4 << 20;

/// The most blocks a [`Packed`] keeps: a thin product's many small blocks cost little to pack
/// again, and finding a block among the kept ones is a linear search.
const KEPT_BLOCKS: usize = 64;

/// The f32 elements of a cache line.
const LINE: usize = 64 / std::mem::size_of::<f32>();

/// Which block a [`PackedBlock`] holds: the rhs's address, base, strides and columns, the
/// panel and the rows.
type BlockKey = (usize, usize, [usize; 2], usize, usize, Range<usize>);

impl PackedBlock {
    /// The packed block's first element.
    fn first(&self) -> *const f32 {
        self.data[self.start..].as_ptr()
    }

    /// The bytes it holds.
    fn bytes(&self) -> usize {
        self.data.capacity() * std::mem::size_of::<f32>()
    }
}

impl Packed {
    /// Packs rows `rows` of panel `p` of `rhs` unless held already; returns the packed block's
    /// first element, the panel's first column, its columns and the packed width.
    fn pack(&mut self, rhs: &Rhs<'_>, p: usize, rows: Range<usize>) -> (*const f32, usize, usize, usize) {
        let [row, col] = rhs.strides;
        let first = p * PANEL;
        let used = (rhs.columns - first).min(PANEL);
        let width = used.div_ceil(16) * 16;
        let key = (rhs.data.as_ptr() as usize, rhs.base, rhs.strides, rhs.columns, p, rows.clone());
        if let Some(held) = self.blocks.iter().position(|block| block.key == key) {
            let block = self.blocks.remove(held);
            self.blocks.push(block);
        } else {
            let len = rows.len() * width + LINE - 1;
            // The oldest blocks make room (the last of them lends its memory).
            let mut reused = Vec::new();
            while self.blocks.len() >= KEPT_BLOCKS
                || !self.blocks.is_empty()
                    && self.blocks.iter().map(PackedBlock::bytes).sum::<usize>() + len * 4 > KEPT_BYTES
            {
                reused = self.blocks.remove(0).data;
            }
            // Zeroed once as a whole (the columns past `used`), then each row's columns copied
            // in: a call per row to fill a few lanes would cost more than the copy. A panel of
            // whole vectors is copied as one matrix, a transposed rhs's through registers.
            reused.clear();
            reused.reserve_exact(len);
            reused.resize(len, 0.0);
            let start = reused.as_ptr().align_offset(64).min(LINE - 1);
            if used == width {
                let from = rhs.base + rows.start * row + first * col;
                copy_matrix(rhs.data, from, [row, col], [rows.len(), used], &mut reused[start..]);
            } else {
                for (packed, k) in reused[start..].chunks_exact_mut(width).zip(rows) {
                    let from = rhs.base + k * row + first * col;
                    if col == 1 {
                        packed[..used].copy_from_slice(&rhs.data[from..from + used]);
                    } else {
                        packed[..used]
                            .iter_mut()
                            .enumerate()
                            .for_each(|(j, to)| *to = rhs.data[from + j * col]);
                    }
                }
            }
            self.blocks.push(PackedBlock { data: reused, start, key });
        }
        let block = self.blocks.last().map_or(std::ptr::null(), PackedBlock::first);
        (block, first, used, width)
    }
}

/// A run of the depth: the lhs rows' elements `a_offset..a_offset + len` (from each row's
/// start) against the packed rhs rows `k_start..k_start + len`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Segment {
    pub(crate) a_offset: usize,
    pub(crate) k_start: usize,
    pub(crate) len: usize,
}

/// The lhs of a product: `rows` rows of `data`, each read with unit stride along the depth.
#[derive(Clone, Copy)]
pub(crate) struct LhsRows<'a> {
    pub(crate) data: &'a [f32],
    pub(crate) starts: RowStarts<'a>,
    pub(crate) rows: usize,
}

/// Where the rows of a product's lhs start in its data.
#[derive(Clone, Copy)]
pub(crate) enum RowStarts<'a> {
    /// Row `i` at `base + i · stride`: a matrix, or a convolution's input lines.
    Strided { base: usize, stride: usize },
    /// Row `i` at `starts[i]`: rows looked up in a table (a gathered lhs).
    Listed(&'a [usize]),
}

impl<'a> LhsRows<'a> {
    /// `rows` rows of `data`, row `i` at `base + i · row_stride`.
    pub(crate) fn strided(data: &'a [f32], base: usize, row_stride: usize, rows: usize) -> LhsRows<'a> {
        LhsRows { data, starts: RowStarts::Strided { base, stride: row_stride }, rows }
    }

    /// Where row `i` starts.
    fn start(&self, i: usize) -> usize {
        match self.starts {
            RowStarts::Strided { base, stride } => base + i * stride,
            RowStarts::Listed(starts) => starts[i],
        }
    }

    /// The latest start of a row, or `None` where a listed row has no start.
    fn last_start(&self) -> Option<usize> {
        match self.starts {
            RowStarts::Strided { .. } => Some(self.start(self.rows - 1)),
            RowStarts::Listed(starts) => starts.get(..self.rows)?.iter().copied().max(),
        }
    }
}

/// Where a product's rows go: row `i = line · pitch + r` (`r < pitch`) at
/// `line · line_stride + r · row_stride` from the output's start, rows with `r ≥ len` dropped.
/// Where a convolution's rows run over whole lines of its padded input, the rows over the
/// padding are dropped so; a plain matrix has one line.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OutRows {
    pub(crate) row_stride: usize,
    pub(crate) pitch: usize,
    pub(crate) len: usize,
    pub(crate) line_stride: usize,
}

impl OutRows {
    /// The rows of a matrix `row_stride` apart.
    pub(crate) fn matrix(row_stride: usize) -> OutRows {
        OutRows { row_stride, pitch: usize::MAX, len: usize::MAX, line_stride: 0 }
    }

    /// Where row `i` starts, or `None` for a dropped row.
    fn start(&self, i: usize) -> Option<usize> {
        let (line, r) = (i / self.pitch, i % self.pitch);
        (r < self.len).then(|| line * self.line_stride + r * self.row_stride)
    }

    /// The elements from the output's start that `rows` rows of `columns` reach. The strides
    /// are non-negative, so the farthest row is the last line's last kept row or, where that
    /// line ends early, the line before's last kept row.
    pub(crate) fn extent(&self, rows: usize, columns: usize) -> usize {
        let Some(last) = rows.checked_sub(1) else { return 0 };
        let last_line = last / self.pitch;
        let in_last_line = last_line * self.pitch + (last % self.pitch).min(self.len.saturating_sub(1));
        let line_before = last_line.checked_sub(1).map(|line| line * self.pitch + self.len.saturating_sub(1));
        [Some(in_last_line), line_before]
            .into_iter()
            .flatten()
            .filter_map(|i| self.start(i))
            .max()
            .map_or(0, |start| start + columns)
    }
}

/// `out[i][j] (+)= Σ_segment Σ_p lhs[i][a_offset + p] · rhs[k_start + p][j]` for every row
/// `i` of `lhs` and every column `j` of `panels`, the depth in blocks (a block's segments
/// summed in registers, blocks added to `c`), added to `c` from the first block if
/// `accumulate`. A block's segments must cover one run of rhs rows, which is packed per panel
/// into `buffer`. Returns false (computing nothing) where the tile cannot run or a read would
/// leave the lhs or the rhs.
///
/// # Safety
/// `c` must be valid for reads and writes of every element `j` (a column of `panels`, counted
/// from the rhs's first column) of every kept row of `out` (`i < lhs.rows`), and no other
/// thread may access them during the call.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn product(
    lhs: LhsRows<'_>,
    blocks: &[Vec<Segment>],
    rhs: Rhs<'_>,
    panels: Range<usize>,
    c: *mut f32,
    out: OutRows,
    accumulate: bool,
    buffer: &mut Packed,
) -> bool {
    let Some(tile) = Tile::best() else { return false };
    // SAFETY: forwarded from the caller; the tile was detected.
    unsafe { product_on(tile, lhs, blocks, rhs, panels, c, out, accumulate, buffer) }
}

/// [`product`] on `tile`, which must be one of [`Tile::detected`].
///
/// # Safety
/// As [`product`]'s.
#[allow(clippy::too_many_arguments)]
unsafe fn product_on(
    tile: Tile,
    lhs: LhsRows<'_>,
    blocks: &[Vec<Segment>],
    rhs: Rhs<'_>,
    panels: Range<usize>,
    c: *mut f32,
    out: OutRows,
    accumulate: bool,
    buffer: &mut Packed,
) -> bool {
    if panels.end > rhs.panels() {
        return false;
    }
    if lhs.rows == 0 || panels.is_empty() {
        return true;
    }
    let Some(last_row) = lhs.last_start() else { return false };
    let reads_inside = blocks.iter().flatten().all(|s| {
        s.len == 0 || (s.k_start + s.len <= rhs.depth && last_row + s.a_offset + s.len <= lhs.data.len())
    });
    if !reads_inside {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    for (b, block) in blocks.iter().enumerate() {
        let start = block.iter().map(|s| s.k_start).min().unwrap_or(0);
        let end = block.iter().map(|s| s.k_start + s.len).max().unwrap_or(0);
        for p in panels.clone() {
            let (packed, first, columns, width) = buffer.pack(&rhs, p, start..end);
            let accumulate = accumulate || b > 0;
            let panel = packed.wrapping_sub(start * width);
            let tiles = Tiles { tile, lhs, segments: block, panel, width, columns, accumulate };
            // SAFETY: the tile was detected (the caller's guarantee); the reads lie inside the
            // lhs (checked above for every row) and inside the packed rows `start..end` of the
            // panel; the caller guarantees the writes.
            unsafe { tiles.run(c.add(first), out) };
        }
    }
    true
}

/// Every tile of one panel and one depth block, top to bottom.
#[cfg(target_arch = "x86_64")]
struct Tiles<'a> {
    tile: Tile,
    lhs: LhsRows<'a>,
    segments: &'a [Segment],
    /// Where packed rhs row 0 would start (rows before the block's are not there), and the
    /// packed rows' width.
    panel: *const f32,
    width: usize,
    columns: usize,
    accumulate: bool,
}

#[cfg(target_arch = "x86_64")]
impl Tiles<'_> {
    /// # Safety
    /// As [`product`]'s, with `self.tile` detected and `c` at the panel's first column.
    unsafe fn run(&self, c: *mut f32, out: OutRows) {
        // SAFETY (all arms): forwarded from the caller.
        unsafe {
            match (self.tile, self.columns.div_ceil(16)) {
                (Tile::Avx512, 4) => self.rows::<6, 4>(c, out),
                (Tile::Avx512, 3) => self.rows::<8, 3>(c, out),
                (Tile::Avx512, 2) => self.rows::<12, 2>(c, out),
                (Tile::Avx512, _) => self.rows::<12, 1>(c, out),
                (Tile::Avx2, _) => self.rows_avx2(c, out),
            }
        }
    }

    /// Every AVX2 tile of the panel: six rows at a time, sixteen columns after sixteen, so the
    /// rows' depth stays in the first-level cache while the packed panel streams past.
    ///
    /// # Safety
    /// As [`Tiles::run`]'s, with avx2 and fma detected.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn rows_avx2(&self, c: *mut f32, out: OutRows) {
        let rows = self.lhs.rows;
        for first in (0..rows).step_by(6) {
            let tile_rows = (rows - first).min(6);
            for column0 in (0..self.columns).step_by(16) {
                // SAFETY: forwarded; the tile's rows are `first..first + 6` clamped to
                // `rows`, its columns a strip of sixteen from a multiple of sixteen.
                unsafe {
                    if self.columns - column0 > 8 {
                        self.tile_avx2::<6, 2>(first, tile_rows, column0, c, out);
                    } else {
                        self.tile_avx2::<6, 1>(first, tile_rows, column0, c, out);
                    }
                }
            }
        }
    }

    /// The AVX2 tile of rows `first..first + rows` (`rows ≤ MR`) and the panel's columns
    /// `column0..column0 + 8·NV` (those of them under `self.columns`): rows past the end read
    /// the last row again and are not stored.
    ///
    /// # Safety
    /// As [`Tiles::run`]'s, with avx2 and fma detected and `column0 < self.columns` a multiple
    /// of 16, so that the tile's vectors lie inside the packed width.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn tile_avx2<const MR: usize, const NV: usize>(
        &self,
        first: usize,
        rows: usize,
        column0: usize,
        c: *mut f32,
        out: OutRows,
    ) {
        use std::arch::x86_64::*;
        let width = self.width;
        let mut sums = [[_mm256_setzero_ps(); NV]; MR];
        let data = self.lhs.data.as_ptr();
        let mut row_starts = [0usize; MR];
        for (i, start) in row_starts.iter_mut().enumerate() {
            *start = self.lhs.start(first + i.min(rows - 1));
        }
        for segment in self.segments {
            // SAFETY: every row start plus `a_offset + len` is inside the lhs, and rows
            // `k_start..k_start + len` of `width` elements inside the panel (checked by
            // `product`), `column0 + 8·NV ≤ width` (`width` is a multiple of 16 above
            // `column0`).
            unsafe {
                let b = self.panel.wrapping_add(segment.k_start * width + column0);
                let a: [*const f32; MR] = std::array::from_fn(|i| data.add(row_starts[i] + segment.a_offset));
                for p in 0..segment.len {
                    let mut columns = [_mm256_setzero_ps(); NV];
                    for (v, column) in columns.iter_mut().enumerate() {
                        *column = _mm256_loadu_ps(b.add(p * width + v * 8));
                    }
                    for i in 0..MR {
                        let x = _mm256_broadcast_ss(&*a[i].add(p));
                        for v in 0..NV {
                            sums[i][v] = _mm256_fmadd_ps(x, columns[v], sums[i][v]);
                        }
                    }
                }
            }
        }
        let lane_numbers = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        for (i, row) in sums.iter().enumerate().take(rows) {
            let Some(start) = out.start(first + i) else { continue };
            for (v, &sum) in row.iter().enumerate() {
                let lanes = self.columns.saturating_sub(column0 + v * 8).min(8);
                if lanes == 0 {
                    continue;
                }
                let mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(lanes as i32), lane_numbers);
                // SAFETY: the masked lanes are the tile's columns of row `first + i`, which
                // the caller guarantees.
                unsafe {
                    let at = c.add(start + column0 + v * 8);
                    let value =
                        if self.accumulate { _mm256_add_ps(_mm256_maskload_ps(at, mask), sum) } else { sum };
                    _mm256_maskstore_ps(at, mask, value);
                }
            }
        }
    }

    /// # Safety
    /// As [`Tiles::run`]'s, with avx512f detected.
    #[target_feature(enable = "avx512f")]
    unsafe fn rows<const MR: usize, const NV: usize>(&self, c: *mut f32, out: OutRows) {
        let rows = self.lhs.rows;
        for first in (0..rows).step_by(MR) {
            // SAFETY: forwarded; the tile's rows are `first..first + MR` clamped to `rows`.
            unsafe { self.tile::<MR, NV>(first, (rows - first).min(MR), c, out) };
        }
    }

    /// The tile of rows `first..first + rows` (`rows ≤ MR`): rows past the end read the last
    /// row again and are not stored.
    ///
    /// # Safety
    /// As [`Tiles::run`]'s, with avx512f detected.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn tile<const MR: usize, const NV: usize>(
        &self,
        first: usize,
        rows: usize,
        c: *mut f32,
        out: OutRows,
    ) {
        use std::arch::x86_64::*;
        let width = self.width;
        let mut sums = [[_mm512_setzero_ps(); NV]; MR];
        let data = self.lhs.data.as_ptr();
        let mut row_starts = [0usize; MR];
        for (i, start) in row_starts.iter_mut().enumerate() {
            *start = self.lhs.start(first + i.min(rows - 1));
        }
        for segment in self.segments {
            // SAFETY: every row start plus `a_offset + len` is inside the lhs, and rows
            // `k_start..k_start + len` of `width` elements inside the panel (checked by
            // `product`).
            unsafe {
                let b = self.panel.wrapping_add(segment.k_start * width);
                let a: [*const f32; MR] = std::array::from_fn(|i| data.add(row_starts[i] + segment.a_offset));
                for p in 0..segment.len {
                    let mut columns = [_mm512_setzero_ps(); NV];
                    for (v, column) in columns.iter_mut().enumerate() {
                        *column = _mm512_loadu_ps(b.add(p * width + v * 16));
                    }
                    for i in 0..MR {
                        let x = _mm512_set1_ps(*a[i].add(p));
                        for v in 0..NV {
                            sums[i][v] = _mm512_fmadd_ps(x, columns[v], sums[i][v]);
                        }
                    }
                }
            }
        }
        for (i, row) in sums.iter().enumerate().take(rows) {
            let Some(start) = out.start(first + i) else { continue };
            for (v, &sum) in row.iter().enumerate() {
                let lanes = self.columns.saturating_sub(v * 16).min(16);
                let mask: __mmask16 = ((1u32 << lanes) - 1) as __mmask16;
                // SAFETY: the masked lanes are the tile's columns of row `first + i`, which
                // the caller guarantees.
                unsafe {
                    let at = c.add(start + v * 16);
                    let value = if self.accumulate {
                        _mm512_add_ps(_mm512_maskz_loadu_ps(mask, at), sum)
                    } else {
                        sum
                    };
                    _mm512_mask_storeu_ps(at, mask, value);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Σ_segment Σ_p a[base + i·rs + a_offset + p] · b[(k_start + p)·ldb + j]` by a loop.
    fn naive(lhs: LhsRows<'_>, blocks: &[Vec<Segment>], b: &[f32], ldb: usize, columns: usize) -> Vec<f64> {
        let mut c = vec![0.0f64; lhs.rows * columns];
        for i in 0..lhs.rows {
            for s in blocks.iter().flatten() {
                for p in 0..s.len {
                    let x = lhs.data[lhs.start(i) + s.a_offset + p] as f64;
                    for j in 0..columns {
                        c[i * columns + j] += x * b[(s.k_start + p) * ldb + j] as f64;
                    }
                }
            }
        }
        c
    }

    fn values(n: usize, seed: u32) -> Vec<f32> {
        (0..n)
            .map(|i| ((i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 22) as f32 / 512.0 - 1.0)
            .collect()
    }

    /// Two blocks; the second with two segments at other offsets (a convolution's taps).
    fn two_blocks() -> Vec<Vec<Segment>> {
        vec![
            vec![Segment { a_offset: 0, k_start: 0, len: 4 }],
            vec![Segment { a_offset: 1, k_start: 4, len: 3 }, Segment { a_offset: 6, k_start: 7, len: 2 }],
        ]
    }

    #[test]
    fn tiles_of_every_width_and_height_are_the_naive_sums() {
        if !available() {
            return;
        }
        for tile in Tile::detected() {
            // Rows 0, 1, a partial tile and several tiles; columns from one lane to past a panel.
            for rows in [0usize, 1, 5, 7, 13, 25] {
                for columns in [1usize, 15, 16, 17, 33, 48, 64, 65, 130] {
                    let (depth, row_stride, ldb) = (9, 11, columns + 5);
                    let a = values(rows.max(1) * row_stride + 8, 1);
                    let b = values(depth * ldb, 2);
                    let lhs = LhsRows::strided(&a, 2, row_stride, rows);
                    let blocks = two_blocks();
                    let rhs = Rhs::new(&b, 0, [ldb, 1], depth, columns).unwrap();
                    let ldc = columns + 3;
                    let mut c = vec![7.0f32; rows * ldc + 3];
                    let mut packed = Packed::default();
                    // SAFETY: `c` holds `rows` rows of `ldc ≥ columns` elements.
                    let out = OutRows::matrix(ldc);
                    assert!(unsafe {
                        product_on(
                            tile,
                            lhs,
                            &blocks,
                            rhs,
                            0..rhs.panels(),
                            c.as_mut_ptr(),
                            out,
                            false,
                            &mut packed,
                        )
                    });
                    let expected = naive(lhs, &blocks, &b, ldb, columns);
                    for i in 0..rows {
                        for j in 0..ldc {
                            let got = c[i * ldc + j];
                            if j < columns {
                                let want = expected[i * columns + j];
                                assert!(
                                    (got as f64 - want).abs() < 1e-4,
                                    "{rows}x{columns} at {i},{j}: {got} vs {want}"
                                );
                            } else {
                                assert_eq!(
                                    got, 7.0,
                                    "{rows}x{columns}: column {j} past the product was written"
                                );
                            }
                        }
                    }
                    assert!(c[rows * ldc..].iter().all(|&v| v == 7.0), "a row past the product was written");
                }
            }
        }
    }

    #[test]
    fn rows_over_a_lines_padding_are_dropped_and_lines_land_at_their_stride() {
        if !available() {
            return;
        }
        for tile in Tile::detected() {
            // 3 lines of pitch 5, 3 kept rows each (rows 3 and 4 of a line dropped), lines 20 apart.
            let (rows, depth, columns) = (13, 6, 20);
            let out = OutRows { row_stride: columns, pitch: 5, len: 3, line_stride: 20 * columns };
            let a = values(rows * depth, 5);
            let b = values(depth * columns, 6);
            let lhs = LhsRows::strided(&a, 0, depth, rows);
            let blocks = vec![vec![Segment { a_offset: 0, k_start: 0, len: depth }]];
            let rhs = Rhs::new(&b, 0, [columns, 1], depth, columns).unwrap();
            assert_eq!(out.extent(rows, columns), 2 * 20 * columns + 2 * columns + columns);
            let mut c = vec![f32::NAN; out.extent(rows, columns)];
            let mut packed = Packed::default();
            // SAFETY: `c` reaches every kept row's columns.
            assert!(unsafe {
                product_on(tile, lhs, &blocks, rhs, 0..1, c.as_mut_ptr(), out, false, &mut packed)
            });
            let expected = naive(lhs, &blocks, &b, columns, columns);
            let mut kept = vec![false; c.len()];
            for i in 0..rows {
                if i % 5 >= 3 {
                    continue;
                }
                let start = (i / 5) * 20 * columns + (i % 5) * columns;
                for j in 0..columns {
                    assert!(
                        (c[start + j] as f64 - expected[i * columns + j]).abs() < 1e-4,
                        "row {i} column {j}"
                    );
                    kept[start + j] = true;
                }
            }
            assert!(c.iter().zip(kept).all(|(v, kept)| kept || v.is_nan()), "a dropped row was written");
        }
    }

    #[test]
    fn listed_rows_are_read_where_they_start_repeated_and_out_of_order() {
        if !available() {
            return;
        }
        for tile in Tile::detected() {
            // 11 rows (a whole tile of 6 and a part) looked up among 5 of a table, one twice in a
            // tile, the last table row among them (its reads end at the table's end).
            let (table_rows, depth, columns) = (5, 7, 33);
            let a = values(table_rows * depth, 9);
            let b = values(depth * columns, 10);
            let starts: Vec<usize> = [4, 0, 2, 2, 1, 3, 0, 4, 4, 1, 3].iter().map(|r| r * depth).collect();
            let lhs = LhsRows { data: &a, starts: RowStarts::Listed(&starts), rows: starts.len() };
            let blocks = vec![vec![Segment { a_offset: 0, k_start: 0, len: depth }]];
            let rhs = Rhs::new(&b, 0, [columns, 1], depth, columns).unwrap();
            let mut c = vec![f32::NAN; starts.len() * columns];
            let mut packed = Packed::default();
            // SAFETY: `c` holds every row's columns.
            let panels = 0..columns.div_ceil(PANEL);
            let out = OutRows::matrix(columns);
            assert!(unsafe {
                product_on(tile, lhs, &blocks, rhs, panels.clone(), c.as_mut_ptr(), out, false, &mut packed)
            });
            let expected = naive(lhs, &blocks, &b, columns, columns);
            for (i, (got, want)) in c.iter().zip(&expected).enumerate() {
                assert!((*got as f64 - want).abs() < 1e-4, "element {i}: {got} against {want}");
            }
            // A listed row whose reads would leave the table, or a list shorter than the rows,
            // is refused.
            let beyond: Vec<usize> = [0, table_rows * depth - depth + 1].to_vec();
            let outside = LhsRows { data: &a, starts: RowStarts::Listed(&beyond), rows: 2 };
            let short = LhsRows { data: &a, starts: RowStarts::Listed(&starts[..3]), rows: 4 };
            for lhs in [outside, short] {
                // SAFETY: nothing is written where the product is refused, and `c` holds 4 rows.
                assert!(!unsafe {
                    product_on(
                        tile,
                        lhs,
                        &blocks,
                        rhs,
                        panels.clone(),
                        c.as_mut_ptr(),
                        out,
                        false,
                        &mut packed,
                    )
                });
            }
        }
    }

    #[test]
    fn the_extent_reaches_the_farthest_kept_row_whichever_stride_is_larger() {
        // Lines 1 apart, rows 10 apart, pitch 4, 3 kept: row 6 (line 1, r 2) is last kept and
        // farthest; with 5 rows the last line ends at r 0, and line 0's r 2 is farther.
        let out = OutRows { row_stride: 10, pitch: 4, len: 3, line_stride: 1 };
        assert_eq!(out.extent(7, 2), 1 + 20 + 2);
        assert_eq!(out.extent(5, 2), 20 + 2);
        assert_eq!(out.extent(4, 2), 20 + 2);
        assert_eq!(out.extent(0, 2), 0);
        assert_eq!(OutRows::matrix(8).extent(3, 5), 16 + 5);
    }

    #[test]
    fn accumulating_adds_to_the_output_and_a_transposed_rhs_packs_alike() {
        if !available() {
            return;
        }
        for tile in Tile::detected() {
            let (rows, depth, columns) = (7, 9, 20);
            let a = values(rows * depth + 8, 3);
            let b = values(depth * columns, 4);
            // The rhs transposed: element (k, j) at j·depth + k.
            let bt: Vec<f32> = (0..depth * columns).map(|e| b[(e % depth) * columns + e / depth]).collect();
            let rhs = Rhs::new(&bt, 0, [1, depth], depth, columns).unwrap();
            let lhs = LhsRows::strided(&a, 0, depth, rows);
            let blocks = two_blocks();
            let mut c = vec![1.5f32; rows * columns];
            // The same packing buffer twice: the second product reuses what the first packed.
            let mut packed = Packed::default();
            for _ in 0..2 {
                // SAFETY: `c` holds the row-major product.
                let out = OutRows::matrix(columns);
                assert!(unsafe {
                    product_on(tile, lhs, &blocks, rhs, 0..1, c.as_mut_ptr(), out, true, &mut packed)
                });
            }
            let expected = naive(lhs, &blocks, &b, columns, columns);
            for (got, want) in c.iter().zip(expected) {
                assert!((*got as f64 - (2.0 * want + 1.5)).abs() < 1e-4);
            }
        }
    }

    #[test]
    fn a_transposed_rhs_packs_its_whole_panels_through_registers_and_its_last_one_alike() {
        // Element (k, j) at base + k + j·stride: a transposed rhs with room around it.
        let (depth, columns, stride, base) = (37, PANEL + 20, 41, 3);
        let data = values(base + columns * stride, 6);
        let rhs = Rhs::new(&data, base, [1, stride], depth, columns).unwrap();
        let mut packed = Packed::default();
        // Blocks from the first row and from inside, whole tiles of 16 rows and not, each
        // panel: the first of whole vectors, the last 20 columns wide.
        for rows in [0..depth, 3..depth, 5..21, 36..37] {
            for p in 0..rhs.panels() {
                let (block, first, used, width) = packed.pack(&rhs, p, rows.clone());
                // SAFETY: a packed block holds `rows.len()` rows of `width` from `block`.
                let block = unsafe { std::slice::from_raw_parts(block, rows.len() * width) };
                for (r, k) in rows.clone().enumerate() {
                    let row = &block[r * width..(r + 1) * width];
                    for (j, &x) in row.iter().enumerate() {
                        let want = if j < used { data[base + k + (first + j) * stride] } else { 0.0 };
                        assert_eq!(x.to_bits(), want.to_bits(), "row {k}, column {}", first + j);
                    }
                }
            }
        }
    }

    #[test]
    fn packed_blocks_start_on_a_cache_line_hold_the_rhs_rows_and_are_kept_within_the_budget() {
        let (depth, columns) = (5, PANEL + 3);
        let b = values(depth * columns, 5);
        let rhs = Rhs::new(&b, 0, [columns, 1], depth, columns).unwrap();
        let mut packed = Packed::default();
        // Blocks of every height, the last panel 3 wide, each packed twice: the second time
        // it is held already, and what it holds is still the rhs's.
        for rows in [1..2, 0..5, 2..5, 1..2] {
            for p in [0, 1, 0, 1] {
                let (block, first, used, width) = packed.pack(&rhs, p, rows.clone());
                assert_eq!(block as usize % 64, 0);
                // SAFETY: a packed block holds `rows.len()` rows of `width` from `block`.
                let block = unsafe { std::slice::from_raw_parts(block, rows.len() * width) };
                for (r, k) in rows.clone().enumerate() {
                    let row = &block[r * width..(r + 1) * width];
                    assert_eq!(&row[..used], &b[k * columns + first..k * columns + first + used]);
                    assert!(row[used..].iter().all(|&x| x == 0.0));
                }
            }
        }
        assert_eq!(packed.blocks.len(), 6, "each block packed once");
        // A rhs whose blocks outgrow the budget: the oldest go, the kept bytes stay bounded.
        let (depth, columns) = (4096, 8 * PANEL);
        let big = vec![1.0f32; depth * columns];
        let rhs = Rhs::new(&big, 0, [columns, 1], depth, columns).unwrap();
        for p in 0..8 {
            packed.pack(&rhs, p, 0..depth);
            let kept: usize = packed.blocks.iter().map(PackedBlock::bytes).sum();
            assert!(kept as u64 <= packed_bytes(depth, columns, depth), "{kept} bytes kept");
        }
        assert!(packed.blocks.len() < 8);
        // A thin rhs of many small blocks: no more than `KEPT_BLOCKS` are kept.
        let (depth, columns) = (1, 2 * KEPT_BLOCKS * PANEL);
        let thin = vec![2.0f32; depth * columns];
        let rhs = Rhs::new(&thin, 0, [columns, 1], depth, columns).unwrap();
        for p in 0..rhs.panels() {
            let (block, ..) = packed.pack(&rhs, p, 0..depth);
            // SAFETY: the block holds one row of a whole panel.
            assert_eq!(unsafe { *block.add(PANEL - 1) }, 2.0);
        }
        assert_eq!(packed.blocks.len(), KEPT_BLOCKS);
    }

    #[test]
    fn reads_past_an_operand_are_refused() {
        for tile in Tile::detected() {
            let a = vec![0.0f32; 10];
            let b = vec![0.0f32; 12];
            assert!(Rhs::new(&b, 1, [4, 1], 3, 4).is_none());
            let rhs = Rhs::new(&b, 0, [4, 1], 3, 4).unwrap();
            let lhs = LhsRows::strided(&a, 0, 4, 3);
            let blocks = vec![vec![Segment { a_offset: 0, k_start: 0, len: 3 }]];
            let mut c = vec![0.0f32; 12];
            let mut packed = Packed::default();
            let out = OutRows::matrix(4);
            // SAFETY: `c` holds 3 rows of 4; the calls must refuse before writing.
            assert!(!unsafe {
                product_on(tile, lhs, &blocks, rhs, 0..1, c.as_mut_ptr(), out, false, &mut packed)
            });
            let past_depth = vec![vec![Segment { a_offset: 0, k_start: 2, len: 2 }]];
            let lhs = LhsRows { rows: 2, ..lhs };
            assert!(!unsafe {
                product_on(tile, lhs, &past_depth, rhs, 0..1, c.as_mut_ptr(), out, false, &mut packed)
            });
            assert!(!unsafe {
                product_on(tile, lhs, &blocks, rhs, 0..2, c.as_mut_ptr(), out, false, &mut packed)
            });
        }
    }
}
