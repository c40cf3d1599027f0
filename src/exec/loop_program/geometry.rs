//! How a run cuts the walk into work items (a segment of one row, or of a tile of consecutive
//! rows) and shares them among threads: plain loops by any ranges, reductions so that no two
//! threads write one output, large sums into few elements in partial sums whose bands do not
//! depend on the number of threads.

use super::chain::Role;
use super::chunk::{Chunk, CHUNK};
use super::program::{LoopProgram, Sink};
use super::registers;
use crate::attributes::BinaryOp;

/// Elements per work item of a plain loop: its segment of a long row (or of a walk that
/// coalesced into one), and the most a tile of rows holds. A reduction's segments stay
/// `CHUNK` and its tiles `REDUCTION_TILE` (row reductions take `ROW_REDUCTION_TILE`), except
/// for a sum of fewer rows than `PARTIALS` (see `LoopProgram::geometry`).
///
/// Large items stream memory better, up to where a long chain's slots outgrow the cache
/// (GELU's fourteen take 56 bytes per element: 896 KiB a thread here). A tile of short rows is
/// tall enough to read a transposed input's columns 256 bytes of f32 at a time or more.
const PLAIN_CHUNK: usize = 16 * CHUNK;

/// The most elements a plain loop's tile holds when it reads a transposed input (its items
/// walk in blocks: see `reorder_for_gathers`; their output lines prefetched: `prefetch.rs`),
/// sized for transposed columns read through registers (`chunk_ops/transpose.rs`).
const BLOCKED_CHUNK: usize = 4 * CHUNK;

/// The longest segment of such a loop's rows, so that its tiles are tall enough for each line
/// of the transposed input to be read whole in one item, not fetched again by later items.
const BLOCKED_SEGMENT: usize = 64;

/// The most elements a tile of a reduction's rows holds (each row still folded on its own, in
/// order), unless it takes [`INPUT_REDUCTION_TILE`].
const REDUCTION_TILE: usize = 4 * CHUNK;

/// The most elements a tile holds of a reduction of an input itself along its rows (a program
/// of one node, one slot at most), whose per-item work is then paid once per 256 KiB of f32;
/// also of a large sum into few elements, whose partial sums' [`Bands`] no tile changes. Other
/// column reductions keep short tiles, whose outputs `accumulate` holds in registers.
const INPUT_REDUCTION_TILE: usize = 64 * CHUNK;

/// The most elements a tile of rows with row reductions holds: its per-node work is paid once
/// per tile, so tall tiles amortize it, though the tile's slots then outgrow L1 (16 rows of
/// 1024 `f32` are 64 KiB a slot).
const ROW_REDUCTION_TILE: usize = 16 * CHUNK;

/// Below this many output elements a program runs on the calling thread: a rayon call costs
/// more than such work.
pub(super) const PARALLEL_THRESHOLD: usize = 1 << 17;

/// The ranges of items (or segments) a parallel run is cut into, per thread: the more there
/// are, the fewer a thread slowed by other work on the machine leaves for the others to take
/// over. Items stay the unit, so a small run is still cut into no more ranges than it has
/// items.
pub(super) const BLOCKS_PER_THREAD: usize = 16;

/// The partial sums of a large sum into few elements (see [`Bands`]): enough bands for the
/// threads to share such a sum; more gain nothing.
pub(super) const PARTIALS: usize = 16;

/// The most output elements a sum is computed in partial sums for (each partial a copy of
/// the output).
const PARTIALS_MAX_OUTPUT: usize = 1 << 14;

/// How a run's work items are shared among threads.
pub(super) enum Partition {
    Sequential,
    /// Contiguous ranges of items, cut at multiples of the given number of items.
    ItemRanges(usize),
    /// Ranges of segments (column chunks), each over every row.
    Segments,
    /// Bands of items, each summed into a partial output of its own, the partials then added
    /// in order: a sum into few elements (reassociated, as XLA does), its input read in order.
    Partials(Bands),
}

/// How a large sum into few elements is cut into its `PARTIALS` partial sums: by the walk's
/// sizes alone, whatever the program that computes the summed values, so that a fused sum
/// adds in the same order as the unfused one that reads them from memory (whose tiles
/// differ).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Bands {
    /// Partial `b` sums band `b` of the walk's rows (the outer and tile dimensions as one,
    /// cut into even bands), in tiles cut at the band's edges.
    Rows,
    /// Fewer rows than `PARTIALS` (a walk coalesced into one long row, say): tiles of one row
    /// (segments as long as a plain loop's), and partial `b` sums range `b` of the items.
    Items,
}

/// One work item: segment `segment` of rows `first_row..first_row + rows` of the tile
/// dimension (row 0 alone without one), at index `outer` of the outer dimensions (row-major).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Item {
    segment: usize,
    outer: usize,
    first_row: usize,
    rows: usize,
}

impl LoopProgram {
    /// How the work items may be split across threads so that no two threads write one output
    /// element: any items for a plain loop; for a reduction, whole slices of the outermost
    /// walk dimension if it is kept, or column ranges (segments of every row) if the row is;
    /// a large sum into few elements (a full sum, column sums) is cut into the geometry's
    /// bands, summed apart on any number of threads, so its value does not depend on how many
    /// there are.
    pub(super) fn partition(&self, parallel: bool, geometry: &Geometry) -> Partition {
        let (items, segments) = (geometry.items, geometry.segments);
        if let Some(bands) = geometry.bands {
            return Partition::Partials(bands);
        }
        if !parallel || items < 2 {
            return Partition::Sequential;
        }
        match self.sink {
            Sink::Store => Partition::ItemRanges(1),
            Sink::Accumulate { .. } if self.outer_kept() => {
                // The items of one index of the outermost dimension (of one tile of it, when
                // it is the tile dimension) write the same outputs.
                let groups = if geometry.tile_dim == Some(0) { geometry.tile_blocks } else { self.sizes[0] };
                Partition::ItemRanges(items / groups)
            }
            Sink::Accumulate { .. } if self.row_kept() && segments > 1 => Partition::Segments,
            Sink::Accumulate { .. } => Partition::Sequential,
        }
    }

    /// Whether a run adds in `PARTIALS` partial sums: a large sum into few elements (on any
    /// number of threads, so that its value does not depend on how many there are).
    pub(super) fn sums_in_partials(&self) -> bool {
        self.sizes.iter().product::<usize>() >= PARALLEL_THRESHOLD && self.sums_into_few()
    }

    /// Whether this reduction folds each output's values in the same pieces and partial sums
    /// as `other`, a reduction over the same domain walked in the same order (the reduce of
    /// this one's operand materialized), so the two give the same bits. Walks of the same
    /// sizes do. Where this one's walk keeps more dimensions apart, a row it reduces to one
    /// value must be whole pieces of `CHUNK` (the other's longer rows fold in pieces of
    /// `CHUNK` from their start, so its row boundaries are then theirs too), and both must
    /// add in partial sums that start at the same elements, or neither in partial sums. A
    /// reduction that keeps the row folds each output's values one by one, in order, however
    /// the rows are cut.
    pub(super) fn folds_like(&self, other: &LoopProgram) -> bool {
        if self.sizes == other.sizes {
            return true;
        }
        let whole_pieces = self.row_kept() || self.sizes[self.sizes.len() - 1].is_multiple_of(CHUNK);
        whole_pieces && self.band_starts() == other.band_starts()
    }

    /// Where each partial sum's elements start in the walk's order (`None` for a run without
    /// partial sums).
    fn band_starts(&self) -> Option<Vec<usize>> {
        if !self.sums_in_partials() {
            return None;
        }
        let geometry = self.geometry(1, true);
        let row_len = self.sizes[self.sizes.len() - 1];
        let start = |band: usize| match geometry.bands {
            Some(Bands::Rows) => geometry.band_rows(band, PARTIALS).start * row_len,
            _ => {
                let item = geometry.item(geometry.band_numbers(band).start);
                (item.outer * geometry.tile_len + item.first_row) * row_len
                    + item.segment * geometry.segment_len
            }
        };
        Some((0..PARTIALS).map(start).collect())
    }

    /// Whether this is a sum into an output small enough to keep `PARTIALS` copies of, whose
    /// outermost walk dimension is reduced (so ranges of items share outputs).
    fn sums_into_few(&self) -> bool {
        matches!(self.sink, Sink::Accumulate { op: BinaryOp::Add, .. })
            && !self.outer_kept()
            && self.out_shape.element_count() <= PARTIALS_MAX_OUTPUT as i64
    }

    /// Whether a reduction keeps its outermost walk dimension (so slices of it are disjoint).
    fn outer_kept(&self) -> bool {
        self.sizes.len() > 1 && self.out_strides[0] != 0 && self.sizes[0] > 1
    }

    /// Whether a reduction keeps the row (the walk's last dimension): column sums.
    fn row_kept(&self) -> bool {
        self.out_strides[self.sizes.len() - 1] != 0
    }

    /// The chunk `item` computes: its rows, and its segment's length.
    pub(super) fn chunk_of(&self, item: Item, geometry: &Geometry) -> Chunk {
        let first = item.segment * geometry.segment_len;
        Chunk { rows: item.rows, len: geometry.segment_len.min(self.sizes[self.sizes.len() - 1] - first) }
    }

    /// The offset of `item`'s first element in a buffer walked with `strides` from `base`:
    /// its segment, its tile's first row, then the outer dimensions decoded from its outer
    /// index.
    pub(super) fn offset_of(&self, item: Item, geometry: &Geometry, strides: &[isize], base: isize) -> isize {
        let last = self.sizes.len() - 1;
        let mut offset = base + (item.segment * geometry.segment_len) as isize * strides[last];
        if let Some(tile_dim) = geometry.tile_dim {
            offset += item.first_row as isize * strides[tile_dim];
        }
        let mut rest = item.outer;
        for d in (0..geometry.outer_dims).rev() {
            offset += (rest % self.sizes[d]) as isize * strides[d];
            rest /= self.sizes[d];
        }
        offset
    }

    /// The steps, in a buffer walked with `strides`, between a chunk's rows (0 without a tile)
    /// and between the elements of a row.
    pub(super) fn chunk_steps(&self, geometry: &Geometry, strides: &[isize]) -> [isize; 2] {
        [geometry.tile_dim.map_or(0, |d| strides[d]), strides[self.sizes.len() - 1]]
    }

    /// Whether chains compute runs of this program and read a tile's broadcast rows in place:
    /// rows of `row_len` are whole blocks of their lanes (see `evaluate::broadcast_rows`).
    fn chains_read_rows(&self, row_len: usize) -> bool {
        registers::lanes().is_some_and(|lanes| row_len.is_multiple_of(lanes))
            && self.chains.iter().any(|role| matches!(role, Role::End(_)))
    }

    /// How the walk is cut into work items, for a run on `threads` threads (of a large sum into
    /// few elements in partial sums when `partials`).
    pub(super) fn geometry(&self, threads: usize, partials: bool) -> Geometry {
        let last = self.sizes.len() - 1;
        let row_len = self.sizes[last];
        let tile_dim = (last >= 1).then(|| last - 1);
        let tile_len = tile_dim.map_or(1, |d| self.sizes[d]);
        let outer_dims = tile_dim.unwrap_or(last);
        let outer: usize = self.sizes[..outer_dims].iter().product();
        let bands = partials.then(|| match outer * tile_len {
            rows if rows >= PARTIALS => Bands::Rows,
            _ => Bands::Items,
        });
        // A loop with row reductions takes each row whole (the compiler bounds its length). A
        // sum into few elements of fewer rows than `PARTIALS` (a walk coalesced into one long
        // row, say) takes items of one segment each, as long as a plain loop's, so that its
        // per-item work is paid less often than in segments of `CHUNK`.
        let items_banded = bands == Some(Bands::Items);
        let chunk = if self.sink == Sink::Store || items_banded { PLAIN_CHUNK } else { CHUNK };
        let mut segment_len = if self.row_reductions { row_len.max(1) } else { row_len.clamp(1, chunk) };
        if self.blocked_items && !self.row_reductions {
            segment_len = row_len.clamp(1, BLOCKED_SEGMENT);
        }
        // A reduction that keeps the row (a column sum) is shared by column ranges: short rows
        // are cut so that every thread has some (in whole cache lines).
        let by_columns =
            matches!(self.sink, Sink::Accumulate { .. }) && !self.outer_kept() && self.row_kept();
        if by_columns && threads > 1 && row_len < CHUNK * threads {
            segment_len = row_len.div_ceil(threads).next_multiple_of(64).clamp(1, CHUNK);
        }
        let segments = row_len.div_ceil(segment_len).max(1);
        // Rows are computed several at a time (a tile of consecutive rows along the fastest outer
        // dimension), so per-item work is amortized and a gathered input is read along its
        // contiguous dimension. A plain loop's rows of `CHUNK` or more stay one per item (a tile of
        // them would copy every vector broadcast along the row, where one row reads it in place)
        // unless chains read such vectors in place ([`Self::chains_read_rows`]), as W1's chain
        // does. A reduction's rows (a segment each, at most `CHUNK`) are tiled up to
        // `REDUCTION_TILE` elements (`INPUT_REDUCTION_TILE` for a reduction of an input itself
        // along its rows, or a large sum of it into few elements): each row is still folded on its
        // own, in order (a sum's partial sums take bands of rows that no tile changes), so tiling
        // changes no sum, and a row sum's per-item work, more than its adds, is paid per tile. Row
        // reductions take each row whole, in tiles of up to `ROW_REDUCTION_TILE` elements when rows
        // are whole blocks of a chain's lanes, so that chains read the rows' reduced values in
        // place (one per row: `Form::PerRow`).
        let rows_per_tile = match self.sink {
            _ if self.row_reductions => {
                let whole_blocks = registers::lanes().is_none_or(|lanes| row_len.is_multiple_of(lanes));
                if whole_blocks {
                    (ROW_REDUCTION_TILE / segment_len).max(1)
                } else {
                    1
                }
            }
            Sink::Store if segment_len >= CHUNK && !self.chains_read_rows(row_len) => 1,
            Sink::Store if self.blocked_items => BLOCKED_CHUNK / segment_len,
            Sink::Store => PLAIN_CHUNK / segment_len,
            Sink::Accumulate { .. } if items_banded => 1,
            Sink::Accumulate { .. } if self.nodes.len() == 1 && (bands.is_some() || !self.row_kept()) => {
                INPUT_REDUCTION_TILE / segment_len
            }
            Sink::Accumulate { .. } => REDUCTION_TILE / segment_len,
        };
        let tile = tile_len.clamp(1, rows_per_tile);
        let tile_blocks = tile_len.div_ceil(tile);
        let blocked_plane = (self.blocked_items && outer_dims >= 2)
            .then(|| [outer_dims - 2, outer_dims - 1].map(|d| self.sizes[d]));
        Geometry {
            segments,
            segment_len,
            tile_dim,
            tile,
            tile_blocks,
            tile_len,
            outer_dims,
            outer,
            blocked_plane,
            items: outer * tile_blocks * segments,
            bands,
        }
    }
}

/// The side of the blocks in which the work items of a program with `blocked_items` walk its
/// two innermost outer dimensions.
const ITEM_BLOCK: usize = 16;

/// The outer index (row-major over the outer dimensions) of the `n`th work item when the two
/// innermost outer dimensions, of sizes `rows` and `columns`, are walked in blocks of
/// `ITEM_BLOCK` × `ITEM_BLOCK` (those at the ends cut short), each block row by row, the
/// blocks of a band of rows one after another; the dimensions before them as before.
fn blocked_outer_index(n: usize, rows: usize, columns: usize) -> usize {
    let plane = rows * columns;
    let (before, n) = (n / plane, n % plane);
    let band = n / (ITEM_BLOCK * columns);
    let band_rows = ITEM_BLOCK.min(rows - band * ITEM_BLOCK);
    let in_band = n - band * ITEM_BLOCK * columns;
    let block = in_band / (band_rows * ITEM_BLOCK);
    let block_columns = ITEM_BLOCK.min(columns - block * ITEM_BLOCK);
    let in_block = in_band - block * band_rows * ITEM_BLOCK;
    let (row, column) = (in_block / block_columns, in_block % block_columns);
    before * plane + (band * ITEM_BLOCK + row) * columns + block * ITEM_BLOCK + column
}

/// How a run cuts the walk into work items: each item is one segment (up to `PLAIN_CHUNK`
/// elements, `CHUNK` for a reduction, a whole row with row reductions) of `tile` consecutive
/// rows. A plain loop's rows of `CHUNK` elements or more are one row per item, so a value
/// broadcast along the row is one splat.
pub(super) struct Geometry {
    pub(super) segments: usize,
    pub(super) segment_len: usize,
    /// The walk dimension whose consecutive indices form a tile (the fastest outer one).
    tile_dim: Option<usize>,
    pub(super) tile: usize,
    tile_blocks: usize,
    /// The size of the tile dimension (1 without one).
    pub(super) tile_len: usize,
    /// The walk dimensions before the tile dimension, decoded from an item's number.
    outer_dims: usize,
    /// The product of their sizes.
    pub(super) outer: usize,
    /// The sizes of the two innermost outer dimensions when the items walk them in blocks
    /// (see [`blocked_outer_index`]).
    blocked_plane: Option<[usize; 2]>,
    pub(super) items: usize,
    /// How a large sum into few elements is cut into partial sums.
    bands: Option<Bands>,
}

impl Geometry {
    /// The `n`th work item: segment `n % segments` of tile `n / segments` (tiles numbered
    /// along the tile dimension, then the outer dimensions).
    pub(super) fn item(&self, n: usize) -> Item {
        let segment = n % self.segments;
        let rest = n / self.segments;
        let block = rest % self.tile_blocks;
        let mut outer = rest / self.tile_blocks;
        if let Some([rows, columns]) = self.blocked_plane {
            outer = blocked_outer_index(outer, rows, columns);
        }
        let first_row = block * self.tile;
        Item { segment, outer, first_row, rows: self.tile.min(self.tile_len - first_row) }
    }

    /// The rows of the walk (its outer and tile dimensions as one, row-major) that band `band`
    /// of `bands` even bands takes (see [`Bands::Rows`]).
    fn band_rows(&self, band: usize, bands: usize) -> std::ops::Range<usize> {
        let all_rows = self.outer * self.tile_len;
        band * all_rows / bands..(band + 1) * all_rows / bands
    }

    /// The numbers of the items (see [`Geometry::item`]) that partial sum `band` takes when
    /// they are cut by [`Bands::Items`].
    pub(super) fn band_numbers(&self, band: usize) -> std::ops::Range<usize> {
        band * self.items / PARTIALS..(band + 1) * self.items / PARTIALS
    }

    /// The work items of band `band` of `bands` even bands (see [`Bands::Rows`]): its rows in
    /// order, in tiles cut at its edges and at each outer index's, each tile's segments in
    /// order.
    pub(super) fn band_items(&self, band: usize, bands: usize) -> impl Iterator<Item = Item> + '_ {
        self.row_items(self.band_rows(band, bands))
    }

    /// The work items of the walk's rows `rows` (its outer and tile dimensions as one,
    /// row-major), in order, in tiles cut at the range's edges and at each outer index's, each
    /// tile's segments in order.
    pub(super) fn row_items(&self, rows: std::ops::Range<usize>) -> impl Iterator<Item = Item> + '_ {
        let std::ops::Range { start: mut row, end } = rows;
        std::iter::from_fn(move || {
            (row < end).then(|| {
                let (outer, first_row) = (row / self.tile_len, row % self.tile_len);
                let rows = self.tile.min(self.tile_len - first_row).min(end - row);
                row += rows;
                Item { segment: 0, outer, first_row, rows }
            })
        })
        .flat_map(|tile| (0..self.segments).map(move |segment| Item { segment, ..tile }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The blocked order visits every outer index once, for planes of whole blocks, cut
    /// blocks at either end, a single row or column, and dimensions before the plane; the
    /// first block of a large plane is its first `ITEM_BLOCK` rows and columns.
    #[test]
    fn blocked_items_visit_every_outer_index_once_block_by_block() {
        for (rows, columns) in [(1, 1), (1, 40), (40, 1), (16, 16), (17, 33), (64, 64), (5, 40), (33, 7)] {
            for before in 1..=3 {
                let total = before * rows * columns;
                let mut seen: Vec<usize> =
                    (0..total).map(|n| blocked_outer_index(n, rows, columns)).collect();
                seen.sort_unstable();
                assert_eq!(seen, (0..total).collect::<Vec<_>>(), "{before}×{rows}×{columns}");
            }
        }
        let first_block: Vec<(usize, usize)> = (0..ITEM_BLOCK * ITEM_BLOCK)
            .map(|n| blocked_outer_index(n, 64, 64))
            .map(|i| (i / 64, i % 64))
            .collect();
        let square = (0..ITEM_BLOCK).flat_map(|r| (0..ITEM_BLOCK).map(move |c| (r, c)));
        assert_eq!(first_block, square.collect::<Vec<_>>());
        assert_eq!(blocked_outer_index(ITEM_BLOCK * ITEM_BLOCK, 64, 64), ITEM_BLOCK);
        assert_eq!(blocked_outer_index(64 * 64 + 1, 64, 64), 64 * 64 + 1);
    }

    /// A sum's bands take the same rows whatever its tile: each band's items, in order, are
    /// its rows in order (every segment of each), in tiles of at most `tile` rows that keep
    /// within one outer index, for tiles of 1, 4, 7 and 64 rows, outer dimensions of 1 to 3
    /// indices, and row counts that no band count divides.
    #[test]
    fn bands_take_the_same_rows_in_order_whatever_the_tile() {
        let cases: [(usize, usize, usize); 5] = [(1, 700, 1), (3, 333, 2), (2, 17, 3), (1, 16, 1), (5, 4, 1)];
        for (outer, tile_len, segments) in cases {
            let bands = PARTIALS;
            let rows_of_bands = |tile: usize| -> Vec<Vec<(usize, usize)>> {
                let geometry = Geometry {
                    segments,
                    segment_len: CHUNK,
                    tile_dim: Some(1),
                    tile,
                    tile_blocks: tile_len.div_ceil(tile),
                    tile_len,
                    outer_dims: 1,
                    outer,
                    blocked_plane: None,
                    items: outer * tile_len.div_ceil(tile) * segments,
                    bands: Some(Bands::Rows),
                };
                (0..bands)
                    .map(|b| {
                        let items: Vec<Item> = geometry.band_items(b, bands).collect();
                        let mut rows = Vec::new();
                        for tile_items in items.chunks(segments) {
                            let first = tile_items[0];
                            assert!(
                                first.rows >= 1
                                    && first.rows <= tile
                                    && first.first_row + first.rows <= tile_len
                            );
                            let segments_seen: Vec<usize> = tile_items.iter().map(|i| i.segment).collect();
                            assert_eq!(segments_seen, (0..segments).collect::<Vec<_>>());
                            assert!(tile_items
                                .iter()
                                .all(|i| Item { segment: 0, ..*i } == Item { segment: 0, ..first }));
                            rows.extend(
                                (first.first_row..first.first_row + first.rows).map(|r| (first.outer, r)),
                            );
                        }
                        rows
                    })
                    .collect()
            };
            let one_row_tiles = rows_of_bands(1);
            let every_row: Vec<(usize, usize)> = one_row_tiles.concat();
            let expected: Vec<(usize, usize)> =
                (0..outer).flat_map(|o| (0..tile_len).map(move |r| (o, r))).collect();
            assert_eq!(every_row, expected, "{outer}×{tile_len}");
            for tile in [4, 7, 64] {
                assert_eq!(rows_of_bands(tile), one_row_tiles, "{outer}×{tile_len} in tiles of {tile}");
            }
        }
    }
}
