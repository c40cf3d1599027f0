//! `dot`: the kernel that combines many elements into one by products.

use std::ops::Range;

use rayon::prelude::*;

use crate::attributes::DotDimensionNumbers;
use crate::element_type::ElementType;
use crate::error::{invalid_argument, Result};
use crate::exec::element::Element;
use crate::exec::half_convert::{bf16_from_f32, bf16_to_f32, f16_from_f32, f16_to_f32};
use crate::exec::kernels::disjoint::DisjointWrites;
use crate::exec::kernels::gemm::{self, LhsRows, OutRows, Packed, Rhs, RowStarts, Segment, PANEL};
use crate::literal::Literal;
use crate::shape::Shape;
use crate::storage::{with_native_type, NativeType};

/// A group of dimensions of one operand of a dot, read as one: its element count and, if the
/// dimensions collapse into one stride, that stride.
struct Group {
    size: usize,
    stride: Option<isize>,
    /// (size, stride) of each dimension, outermost first.
    dims: Vec<(usize, isize)>,
}

impl Group {
    fn new(shape: &Shape, dimensions: &[i64]) -> Group {
        let strides = shape.strides();
        let dims: Vec<(usize, isize)> = dimensions
            .iter()
            .map(|&d| (shape.dimensions()[d as usize] as usize, strides[d as usize] as isize))
            .filter(|&(size, _)| size != 1)
            .collect();
        let size = dimensions.iter().map(|&d| shape.dimensions()[d as usize] as usize).product();
        let collapses = dims.windows(2).all(|w| w[0].1 == w[1].1 * w[1].0 as isize);
        let stride = match dims.last() {
            None => Some(1),
            Some(&(_, innermost)) if collapses => Some(innermost),
            _ => None,
        };
        Group { size, stride, dims }
    }

    /// The offset of flat index `i` of the group (row-major over its dimensions).
    fn offset(&self, mut i: usize) -> isize {
        if let Some(stride) = self.stride {
            return i as isize * stride;
        }
        let mut offset = 0;
        for &(size, stride) in self.dims.iter().rev() {
            offset += (i % size) as isize * stride;
            i /= size;
        }
        offset
    }
}

/// `dot_general`: for each batch index, `out[m, n] = Σ_k lhs[m, k] · rhs[k, n]`, with m, n and
/// k the flattened free and contracting dimension groups. f32 and f64 run on
/// `matrixmultiply` with the operands' own strides (a transposed layout costs no copy)
/// wherever the groups collapse to single strides; everything else runs a plain loop. `out`
/// has the default (row-major) layout: the plan lays the product out afterwards if the dot's
/// layout is another.
pub(crate) fn dot(
    inputs: [&Literal; 2],
    numbers: &DotDimensionNumbers,
    out: &mut Literal,
    parallel: bool,
) -> Result<()> {
    if !out.shape().layout().is_default() {
        invalid_argument!("dot computes into a row-major output, not {}", out.shape());
    }
    DotGeometry::new([inputs[0].shape(), inputs[1].shape()], numbers).compute(inputs, out, parallel)
}

/// A block of a product, handed to an epilogue: its elements (a range of the row-major
/// product's) and an `f32` literal that holds them from its start (the rest is not theirs).
pub(crate) type BlockConsumer<'c> = dyn Fn(Range<usize>, &Literal) -> Result<()> + Sync + 'c;

/// A dot's lhs looked up in a table (a gathered lhs: an embedding's rows): the row-major matrix
/// of `shape` whose row `m` is the lhs operand's elements from `starts[m]` on.
#[derive(Clone, Copy)]
pub(crate) struct GatheredRows<'a> {
    pub(crate) shape: &'a Shape,
    pub(crate) starts: &'a [usize],
}

/// The `f32` dot of `inputs` on the register tile a block of rows at a time, each block handed
/// to `consume` as soon as it is computed, on the thread that computed it, so that what
/// follows the product reads it while it is in cache (an output fusion's epilogue). With
/// `gathered`, the lhs is the matrix whose rows it lists in `inputs[0]`. Returns false,
/// computing nothing, where the tile cannot run (no AVX-512, a strided lhs depth, other types)
/// or the threads' share of rows would make blocks shorter than [`MIN_BLOCK_ROWS`].
pub(crate) fn dot_by_blocks(
    inputs: [&Literal; 2],
    numbers: &DotDimensionNumbers,
    gathered: Option<GatheredRows<'_>>,
    consume: &BlockConsumer<'_>,
    parallel: bool,
) -> Result<bool> {
    let lhs_shape = gathered.map_or(inputs[0].shape(), |g| g.shape);
    let geometry = DotGeometry::new([lhs_shape, inputs[1].shape()], numbers);
    let (Some(a), Some(b)) = (inputs[0].memory::<f32>().ok(), inputs[1].memory::<f32>().ok()) else {
        return Ok(false);
    };
    let Some(tile) = TileRun::new(&geometry, a, b, gathered.map(|g| g.starts)) else { return Ok(false) };
    let (batches, rows, columns) = (geometry.batches.0.size, geometry.m.size, geometry.n.size);
    let work = batches * rows * columns * geometry.k.0.size;
    let threads = if parallel && work >= PARALLEL_DOT_WORK { rayon::current_num_threads() } else { 1 };
    // Each block packs the whole rhs, which blocks shorter than the tile's own would pay for
    // more often than a product split by panels does (`docs/performance.md`).
    let block_rows = ROW_BLOCK.min(rows.div_ceil(threads.div_ceil(batches)));
    if block_rows < MIN_BLOCK_ROWS.min(rows) {
        return Ok(false);
    }
    let per_batch = rows.div_ceil(block_rows);
    let block_shape = Shape::new(ElementType::F32, &[block_rows as i64, columns as i64]);
    let task = |(buffer, block): &mut (Packed, Option<Literal>), i: usize| -> Result<()> {
        let (batch, first) = (i / per_batch, (i % per_batch) * block_rows);
        let block_len = block_rows.min(rows - first);
        if block.is_none() {
            *block = Some(Literal::for_overwrite(&block_shape)?);
        }
        let Some(block) = block.as_mut() else { return Ok(()) };
        let c = block.storage_mut()?.as_mut_slice::<f32>()?;
        // SAFETY: `c` holds `block_rows ≥ block_len` rows of `columns`, this task's alone.
        unsafe {
            let (panels, depth) = (0..columns.div_ceil(PANEL), 0..tile.blocks.len());
            tile.rows(batch, first..first + block_len, panels, depth, c.as_mut_ptr(), buffer)
        };
        let first_element = (batch * rows + first) * columns;
        consume(first_element..first_element + block_len * columns, block)
    };
    let tasks = batches * per_batch;
    if threads > 1 && tasks > 1 {
        (0..tasks).into_par_iter().try_for_each_init(|| (Packed::default(), None), task)?;
    } else {
        let mut state = (Packed::default(), None);
        (0..tasks).try_for_each(|i| task(&mut state, i))?;
    }
    Ok(true)
}

/// The dimension groups of a dot: batch (lhs, rhs), the free rows `m` of the lhs, the free
/// columns `n` of the rhs, and the contracted `k` (lhs, rhs).
struct DotGeometry {
    batches: (Group, Group),
    m: Group,
    n: Group,
    k: (Group, Group),
}

/// Below this many multiply-adds a dot runs on the calling thread.
const PARALLEL_DOT_WORK: usize = 1 << 18;

/// Below this many rows in each thread's share, a dot too narrow to share by panels shares its
/// depth instead: a row share would be a few tiles that each pass the whole packed rhs.
const DEPTH_SHARE_ROWS: usize = 48;

/// The most product elements a dot shared by depth keeps a partial of per task.
const DEPTH_SHARE_ELEMENTS: usize = 1 << 16;

/// The lhs rows one pass of the register tile covers: their block of the depth stays in the
/// second-level cache while every panel passes them, and each panel is packed once for them.
const ROW_BLOCK: usize = 512;

/// The fewest rows a block of [`dot_by_blocks`] holds (fewer: a product too short to share by
/// blocks of rows, each packing the whole rhs).
const MIN_BLOCK_ROWS: usize = 256;

/// The most rhs rows one depth block packs: a panel's block (`DEPTH_BLOCK · PANEL` f32, 128
/// KiB) stays in the second-level cache beside the lhs rows' block, and the product's partial
/// sums are read and written once per block, which costs more than reading the rhs from there.
pub(crate) const DEPTH_BLOCK: usize = 512;

/// A dot the register tile computes: its lhs and rhs, the lhs's row stride, the rhs's strides
/// and the depth cut into blocks of at most [`DEPTH_BLOCK`], every read checked once.
struct TileRun<'a> {
    geometry: &'a DotGeometry,
    a: &'a [f32],
    b: &'a [f32],
    lhs_row_stride: usize,
    /// Where each lhs row starts, where they are looked up rather than strided (one batch).
    listed_rows: Option<&'a [usize]>,
    rhs_strides: [usize; 2],
    blocks: Vec<Vec<Segment>>,
}

impl<'a> TileRun<'a> {
    /// The tile's run of `geometry` over `a` and `b` (the lhs rows starting where
    /// `listed_rows` says, if given), or `None` where the tile cannot run (no AVX-512, no
    /// depth, a strided lhs depth, groups that do not collapse, reads outside the operands).
    fn new(
        geometry: &'a DotGeometry,
        a: &'a [f32],
        b: &'a [f32],
        listed_rows: Option<&'a [usize]>,
    ) -> Option<TileRun<'a>> {
        let [Some(am), Some(1), Some(bk), Some(bn)] =
            [geometry.m.stride, geometry.k.0.stride, geometry.k.1.stride, geometry.n.stride]
        else {
            return None;
        };
        let (batches, rows, depth) = (geometry.batches.0.size, geometry.m.size, geometry.k.0.size);
        let tile_leads = gemm::leads_plain_products() || listed_rows.is_some() && gemm::available();
        if !tile_leads || depth == 0 || batches * rows * geometry.n.size == 0 {
            return None;
        }
        let depth_blocks = depth.div_ceil(DEPTH_BLOCK);
        let block_depth = depth.div_ceil(depth_blocks);
        let blocks = (0..depth)
            .step_by(block_depth)
            .map(|k| vec![Segment { a_offset: k, k_start: k, len: block_depth.min(depth - k) }])
            .collect();
        let run = TileRun {
            geometry,
            a,
            b,
            lhs_row_stride: usize::try_from(am).ok()?,
            listed_rows,
            rhs_strides: [usize::try_from(bk).ok()?, usize::try_from(bn).ok()?],
            blocks,
        };
        let last_lhs_row = match listed_rows {
            Some(starts) if batches == 1 && starts.len() == rows => starts.iter().copied().max()?,
            Some(_) => return None,
            None => geometry.batches.0.offset(batches - 1) as usize + (rows - 1) * run.lhs_row_stride,
        };
        (run.rhs(batches - 1).is_some() && last_lhs_row + depth <= a.len()).then_some(run)
    }

    /// Batch `batch`'s rhs.
    fn rhs(&self, batch: usize) -> Option<Rhs<'a>> {
        let (depth, columns) = (self.geometry.k.0.size, self.geometry.n.size);
        Rhs::new(self.b, self.geometry.batches.1.offset(batch) as usize, self.rhs_strides, depth, columns)
    }

    /// Rows `rows` of batch `batch`'s product, the columns of `panels`, into `c` (the first
    /// row's start, rows `columns` apart), [`ROW_BLOCK`] rows at a time: the sum over the
    /// depth blocks `depth` (all of them for the product itself).
    ///
    /// # Safety
    /// `c` must be valid for writes of those rows' columns, and no other thread may access
    /// them during the call.
    unsafe fn rows(
        &self,
        batch: usize,
        rows: Range<usize>,
        panels: Range<usize>,
        depth: Range<usize>,
        c: *mut f32,
        buffer: &mut Packed,
    ) {
        let Some(rhs) = self.rhs(batch) else { return };
        let columns = self.geometry.n.size;
        for first in rows.clone().step_by(ROW_BLOCK) {
            let lhs_rows = ROW_BLOCK.min(rows.end - first);
            let starts = match self.listed_rows {
                Some(starts) => RowStarts::Listed(&starts[first..first + lhs_rows]),
                None => RowStarts::Strided {
                    base: self.geometry.batches.0.offset(batch) as usize + first * self.lhs_row_stride,
                    stride: self.lhs_row_stride,
                },
            };
            let lhs = LhsRows { data: self.a, starts, rows: lhs_rows };
            let c_rows = c.wrapping_add((first - rows.start) * columns);
            // SAFETY: the caller's guarantee, for rows `first..first + lhs_rows`.
            let computed = unsafe {
                gemm::product(
                    lhs,
                    &self.blocks[depth.clone()],
                    rhs,
                    panels.clone(),
                    c_rows,
                    OutRows::matrix(columns),
                    false,
                    buffer,
                )
            };
            // The reads were checked by `new`, so the tile refuses nothing.
            debug_assert!(computed, "the register tile refused a checked product");
        }
    }
}

impl TileRun<'_> {
    /// The whole product into `c` (row-major `[batch, m, n]`) in `shares` parallel tasks, each
    /// summing its share of the depth blocks into a partial product of its own; the partials
    /// are then added in task order.
    fn by_depth(&self, c: &mut [f32], shares: usize) {
        let (batches, rows, columns) =
            (self.geometry.batches.0.size, self.geometry.m.size, self.geometry.n.size);
        let per_share = self.blocks.len().div_ceil(shares);
        let matrix = rows * columns;
        let partial = |buffer: &mut Packed, s: usize| -> Vec<f32> {
            let mut partial = vec![0.0; batches * matrix];
            let depth = s * per_share..self.blocks.len().min((s + 1) * per_share);
            for batch in 0..batches {
                let panels = 0..columns.div_ceil(PANEL);
                // SAFETY: `partial` holds batch `batch`'s `rows × columns` product, this
                // task's alone.
                unsafe {
                    let c = partial.as_mut_ptr().add(batch * matrix);
                    self.rows(batch, 0..rows, panels, depth.clone(), c, buffer)
                };
            }
            partial
        };
        let partials: Vec<Vec<f32>> =
            (0..shares).into_par_iter().map_init(Packed::default, partial).collect();
        let Some((first, rest)) = partials.split_first() else { return };
        c.copy_from_slice(first);
        for partial in rest {
            c.iter_mut().zip(partial).for_each(|(sum, &x)| *sum += x);
        }
    }
}

impl DotGeometry {
    /// The groups of a dot of operands of shapes `lhs` and `rhs` by `numbers`.
    fn new([lhs, rhs]: [&Shape; 2], numbers: &DotDimensionNumbers) -> DotGeometry {
        let free = |shape: &Shape, contracting: &[i64], batch: &[i64]| -> Vec<i64> {
            (0..shape.rank() as i64).filter(|d| !contracting.contains(d) && !batch.contains(d)).collect()
        };
        let lhs_free = free(lhs, &numbers.lhs_contracting_dimensions, &numbers.lhs_batch_dimensions);
        let rhs_free = free(rhs, &numbers.rhs_contracting_dimensions, &numbers.rhs_batch_dimensions);
        DotGeometry {
            batches: (
                Group::new(lhs, &numbers.lhs_batch_dimensions),
                Group::new(rhs, &numbers.rhs_batch_dimensions),
            ),
            m: Group::new(lhs, &lhs_free),
            n: Group::new(rhs, &rhs_free),
            k: (
                Group::new(lhs, &numbers.lhs_contracting_dimensions),
                Group::new(rhs, &numbers.rhs_contracting_dimensions),
            ),
        }
    }

    /// Computes the product into `out` (row-major `[batch, m, n]`). Batches, and blocks of
    /// a batch when there are fewer batches than threads, run in parallel, each a
    /// single-threaded gemm: blocks of rows where the lhs is at least as tall as the rhs is
    /// wide, else blocks of columns (each thread then packs its part of the larger operand).
    fn compute(&self, [lhs, rhs]: [&Literal; 2], out: &mut Literal, parallel: bool) -> Result<()> {
        let (batches, rows, columns) = (self.batches.0.size, self.m.size, self.n.size);
        if batches * rows * columns == 0 {
            return Ok(());
        }
        let work = batches * rows * columns * self.k.0.size.max(1);
        let threads = if parallel && work >= PARALLEL_DOT_WORK { rayon::current_num_threads() } else { 1 };
        let blocks_per_batch = (threads / batches).max(1);
        let block_rows = rows.div_ceil(blocks_per_batch);
        with_native_type!(out.element_type(), T => {
            let (a, b) = (lhs.memory::<T>()?, rhs.memory::<T>()?);
            let c = out.storage_mut()?.as_mut_slice::<T>()?;
            if let (Some(a), Some(b), Some(c)) = (T::as_f32(a), T::as_f32(b), T::as_f32_mut(c)) {
                if self.tiled(a, b, c, threads) {
                    return Ok(());
                }
            }
            let block = |(batch, first_row, c_block): (usize, usize, &mut [T])| self.block::<T>(a, b, batch, first_row, c_block);
            if threads > 1 && blocks_per_batch > 1 && rows < columns && self.column_blocks::<T>(a, b, c, blocks_per_batch) {
                return Ok(());
            }
            if threads > 1 {
                c.par_chunks_mut(rows * columns).enumerate().for_each(|(batch, c_batch)| {
                    c_batch
                        .par_chunks_mut(block_rows * columns)
                        .enumerate()
                        .for_each(|(i, c_block)| block((batch, i * block_rows, c_block)));
                });
            } else {
                c.chunks_mut(rows * columns).enumerate().for_each(|(batch, c_batch)| block((batch, 0, c_batch)));
            }
        });
        Ok(())
    }

    /// Computes the f32 product on the register tile ([`gemm`]) and returns true, or returns
    /// false (computing nothing) where the tile cannot run or the lhs's depth is not
    /// contiguous. Each of `threads` tasks takes a share of a batch's column panels (it packs
    /// only its own panels), or of its rows where there are fewer panels than threads.
    fn tiled(&self, a: &[f32], b: &[f32], c: &mut [f32], threads: usize) -> bool {
        let Some(tile) = TileRun::new(self, a, b, None) else { return false };
        let (batches, rows, columns) = (self.batches.0.size, self.m.size, self.n.size);
        if c.len() < batches * rows * columns {
            return false;
        }
        let panels = columns.div_ceil(PANEL);
        // Each batch in `shares` tasks: of its panels where there are enough, else of its rows
        // where each share keeps a few tiles of them, else (few rows and columns, as a
        // classifier's last layer) of its depth.
        let shares = threads.div_ceil(batches).max(1);
        let by_panels = panels >= shares;
        let few_rows = rows.div_ceil(shares) < DEPTH_SHARE_ROWS;
        if !by_panels
            && few_rows
            && tile.blocks.len() >= shares
            && batches * rows * columns <= DEPTH_SHARE_ELEMENTS
        {
            tile.by_depth(&mut c[..batches * rows * columns], shares);
            return true;
        }
        let share = if by_panels { panels.div_ceil(shares) } else { rows.div_ceil(shares) };
        let shares = if by_panels { panels.div_ceil(share) } else { rows.div_ceil(share) };
        let out = DisjointWrites::new(c);
        let task = |buffer: &mut Packed, i: usize| {
            let (batch, s) = (i / shares, i % shares);
            let (panel_range, row_range) = match by_panels {
                true => (s * share..panels.min((s + 1) * share), 0..rows),
                false => (0..panels, s * share..rows.min((s + 1) * share)),
            };
            // SAFETY: the task writes rows `row_range` and the columns of its panels of batch
            // `batch`'s row-major `rows × columns` product, inside `c` (checked above); tasks'
            // batches, rows or panels are disjoint.
            unsafe {
                if let Some(c_rows) = out.pointer((batch * rows + row_range.start) * columns) {
                    tile.rows(batch, row_range, panel_range, 0..tile.blocks.len(), c_rows, buffer);
                }
            }
        };
        if threads > 1 && batches * shares > 1 {
            (0..batches * shares).into_par_iter().for_each_init(Packed::default, task);
        } else {
            let mut buffer = Packed::default();
            (0..batches * shares).for_each(|i| task(&mut buffer, i));
        }
        true
    }

    /// Computes every batch of the product in `blocks` blocks of columns in parallel and
    /// returns true, or returns false (computing nothing) where `T` has no strided gemm or
    /// the groups do not collapse to single strides.
    fn column_blocks<T: MatMul>(&self, a: &[T], b: &[T], c: &mut [T], blocks: usize) -> bool {
        let [Some(am), Some(ak), Some(bk), Some(bn)] =
            [self.m.stride, self.k.0.stride, self.k.1.stride, self.n.stride]
        else {
            return false;
        };
        let (rows, columns, depth) = (self.m.size, self.n.size, self.k.0.size);
        // Blocks of whole vectors of 16 lanes.
        let width = columns.div_ceil(blocks).div_ceil(16) * 16;
        let (batches, column_blocks) = (self.batches.0.size, columns.div_ceil(width));
        // Strides are non-negative, so the last batch's full operands bound every block's reads.
        let last = batches - 1;
        let a_last = (a, self.batches.0.offset(last), [am, ak]);
        let b_last = (b, self.batches.1.offset(last), [bk, bn]);
        let inside = reads_inside(a_last, rows, depth) && reads_inside(b_last, depth, columns);
        if c.len() < batches * rows * columns || !T::HAS_GEMM || !inside {
            return false;
        }
        let out = DisjointWrites::new(c);
        (0..batches * column_blocks).into_par_iter().for_each(|i| {
            let (batch, first) = (i / column_blocks, (i % column_blocks) * width);
            let n = width.min(columns - first);
            let a_base = self.batches.0.offset(batch);
            let b_base = self.batches.1.offset(batch) + first as isize * bn;
            // SAFETY: the block writes rows × n elements from `batch · rows · columns + first`
            // at row stride `columns`, inside `c` (checked above); blocks' columns and batches
            // are disjoint, so no two blocks write one element.
            unsafe {
                if let Some(c_block) = out.pointer(batch * rows * columns + first) {
                    let a = (a, a_base, [am, ak]);
                    T::gemm_strided(a, (b, b_base, [bk, bn]), c_block, columns, [rows, depth, n], false);
                }
            }
        });
        true
    }

    /// Rows `first_row..` (as many as `c` holds) of one batch's product.
    fn block<T: MatMul>(&self, a: &[T], b: &[T], batch: usize, first_row: usize, c: &mut [T]) {
        let (columns, depth) = (self.n.size, self.k.0.size);
        let rows = c.len() / columns;
        let a_base = self.batches.0.offset(batch) + self.m.offset(first_row);
        let b_base = self.batches.1.offset(batch);
        if let [Some(am), Some(ak), Some(bk), Some(bn)] =
            [self.m.stride, self.k.0.stride, self.k.1.stride, self.n.stride]
        {
            if T::gemm((a, a_base, [am, ak]), (b, b_base, [bk, bn]), c, [rows, depth, columns], false) {
                return;
            }
        }
        let a_batch = self.batches.0.offset(batch);
        for i in 0..rows {
            let a_row = a_batch + self.m.offset(first_row + i);
            for j in 0..columns {
                let b_column = b_base + self.n.offset(j);
                let mut acc = <T::Sum as NativeType>::ZERO;
                for k in 0..depth {
                    let x = a[(a_row + self.k.0.offset(k)) as usize].to_sum();
                    let y = b[(b_column + self.k.1.offset(k)) as usize].to_sum();
                    acc = Element::add(acc, Element::mul(x, y));
                }
                c[i * columns + j] = T::narrow_sum(acc);
            }
        }
    }
}

/// A matrix product `c = a·b` or `c += a·b` (c row-major `m×n`, `a` and `b` read through
/// strides from a base offset), on `matrixmultiply` where the element type has a kernel there.
pub(crate) trait MatMul: Element {
    /// The type products are summed in: the element type itself, but `f32` for `f16` and
    /// `bf16`, whose products XLA's CPU backend sums in f32 and rounds once.
    type Sum: MatMul;
    fn to_sum(self) -> Self::Sum;
    fn narrow_sum(sum: Self::Sum) -> Self;
    /// Whether [`MatMul::gemm_strided`] computes products (else a plain loop must).
    const HAS_GEMM: bool = false;

    /// Whether `Self` is `f32`, the type the register tile computes in.
    const IS_F32: bool = false;

    /// The values as `f32`, where `Self` is `f32`.
    fn as_f32(_values: &[Self]) -> Option<&[f32]> {
        None
    }

    /// The values as `f32`, where `Self` is `f32`.
    fn as_f32_mut(_values: &mut [Self]) -> Option<&mut [f32]> {
        None
    }

    /// Computes `c = a·b` (`c += a·b` if `accumulate`) with `c` row-major `m×n` at row stride
    /// `row_stride` from the pointer and returns true, or returns false (computing nothing)
    /// where `T` has no kernel or a read would leave `a` or `b`.
    ///
    /// # Safety
    /// `c` must be valid for reads and writes of every element `i · row_stride + j` (i < m,
    /// j < n), and no other thread may access them during the call.
    unsafe fn gemm_strided(
        _a: (&[Self], isize, [isize; 2]),
        _b: (&[Self], isize, [isize; 2]),
        _c: *mut Self,
        _row_stride: usize,
        _mkn: [usize; 3],
        _accumulate: bool,
    ) -> bool {
        false
    }

    /// Computes the product into `c` (added to it if `accumulate`) and returns true, or
    /// returns false for a plain loop to do it.
    fn gemm(
        _a: (&[Self], isize, [isize; 2]),
        _b: (&[Self], isize, [isize; 2]),
        _c: &mut [Self],
        _mkn: [usize; 3],
        _accumulate: bool,
    ) -> bool {
        false
    }
}

/// `c += a·b` (or `c = a·b` unless `accumulate`) for any element type: [`MatMul::gemm`] where
/// it has a kernel, else a plain loop. `a` and `b` are read through strides from a base
/// offset that keep every read inside them; `c` is row-major `m×n`.
pub(crate) fn product_into<T: MatMul>(
    a: (&[T], isize, [isize; 2]),
    b: (&[T], isize, [isize; 2]),
    c: &mut [T],
    [m, k, n]: [usize; 3],
    accumulate: bool,
) {
    if T::gemm(a, b, c, [m, k, n], accumulate) {
        return;
    }
    let at = |(data, base, [row, col]): (&[T], isize, [isize; 2]), i: usize, j: usize| {
        data[(base + i as isize * row + j as isize * col) as usize]
    };
    for i in 0..m {
        for j in 0..n {
            let mut sum = if accumulate { c[i * n + j] } else { T::ZERO };
            for p in 0..k {
                sum = Element::add(sum, Element::mul(at(a, i, p), at(b, p, j)));
            }
            c[i * n + j] = sum;
        }
    }
}

macro_rules! matmul_by_loop {
    ($($t:ty),*) => {$(
        impl MatMul for $t {
            type Sum = $t;
            fn to_sum(self) -> $t { self }
            fn narrow_sum(sum: $t) -> $t { sum }
        }
    )*};
}
matmul_by_loop!(bool, i8, i16, i32, i64, u8, u16, u32, u64);

/// Half-precision products through `sgemm`: the panels converted to f32 (exactly), summed in
/// f32, each result rounded once, as XLA's CPU backend computes them.
macro_rules! matmul_in_f32 {
    ($($t:ty: $to:ident, $from:ident;)*) => {$(
        impl MatMul for $t {
            type Sum = f32;
            fn to_sum(self) -> f32 { $to(self) }
            fn narrow_sum(sum: f32) -> $t { $from(sum) }
            fn gemm(a: (&[Self], isize, [isize; 2]), b: (&[Self], isize, [isize; 2]), c: &mut [Self], [m, k, n]: [usize; 3], accumulate: bool) -> bool {
                if accumulate {
                    return false;
                }
                let panel = |(data, base, [row, col]): (&[Self], isize, [isize; 2]), rows: usize, cols: usize| {
                    (0..rows * cols)
                        .map(|e| {
                            let at = base + (e / cols) as isize * row + (e % cols) as isize * col;
                            usize::try_from(at).ok().and_then(|at| data.get(at)).map(|v| v.to_sum())
                        })
                        .collect::<Option<Vec<f32>>>()
                };
                let (Some(a), Some(b)) = (panel(a, m, k), panel(b, k, n)) else { return false };
                let mut sums = vec![0.0f32; m * n];
                if !f32::gemm((&a, 0, [k as isize, 1]), (&b, 0, [n as isize, 1]), &mut sums, [m, k, n], false) {
                    return false;
                }
                c.iter_mut().zip(sums).for_each(|(c, sum)| *c = Self::narrow_sum(sum));
                true
            }
        }
    )*};
}
matmul_in_f32! {
    half::f16: f16_to_f32, f16_from_f32;
    half::bf16: bf16_to_f32, bf16_from_f32;
}

macro_rules! matmul_by_matrixmultiply {
    ($($t:ty => $gemm:path, $f32_view:expr, $is_f32:expr),*) => {$(
        impl MatMul for $t {
            type Sum = $t;
            const HAS_GEMM: bool = true;
            const IS_F32: bool = $is_f32;
            fn as_f32(values: &[Self]) -> Option<&[f32]> { $f32_view(values) }
            fn as_f32_mut(values: &mut [Self]) -> Option<&mut [f32]> { $f32_view(values) }
            fn to_sum(self) -> $t { self }
            fn narrow_sum(sum: $t) -> $t { sum }
            unsafe fn gemm_strided(a: (&[Self], isize, [isize; 2]), b: (&[Self], isize, [isize; 2]), c: *mut Self, row_stride: usize, [m, k, n]: [usize; 3], accumulate: bool) -> bool {
                if m == 0 || n == 0 {
                    return true;
                }
                if !reads_inside(a, m, k) || !reads_inside(b, k, n) {
                    return false;
                }
                // SAFETY: every element read is `base + i·row + j·col` with i, j below the
                // checked extremes, so inside `a.0` / `b.0`; the caller guarantees `c`'s
                // elements. matrixmultiply reads and writes nothing else.
                unsafe {
                    $gemm(
                        m, k, n, 1.0,
                        a.0.as_ptr().offset(a.1), a.2[0], a.2[1],
                        b.0.as_ptr().offset(b.1), b.2[0], b.2[1],
                        if accumulate { 1.0 } else { 0.0 }, c, row_stride as isize, 1,
                    );
                }
                true
            }
            fn gemm(a: (&[Self], isize, [isize; 2]), b: (&[Self], isize, [isize; 2]), c: &mut [Self], [m, k, n]: [usize; 3], accumulate: bool) -> bool {
                // SAFETY: `c` holds the `m·n` elements written row-major at row stride `n`.
                c.len() >= m * n && unsafe { Self::gemm_strided(a, b, c.as_mut_ptr(), n, [m, k, n], accumulate) }
            }
        }
    )*};
}
matmul_by_matrixmultiply!(f32 => matrixmultiply::sgemm, Some, true, f64 => matrixmultiply::dgemm, |_| None, false);

/// Whether a `rows × cols` matrix read at `base + i·row + j·col` lies inside `data`: the
/// strides are non-negative (they come from layouts), so checking the extremes bounds every
/// read.
fn reads_inside<T>((data, base, [row, col]): (&[T], isize, [isize; 2]), rows: usize, cols: usize) -> bool {
    base >= 0
        && row >= 0
        && col >= 0
        && (base + (rows.max(1) - 1) as isize * row + (cols.max(1) - 1) as isize * col) < data.len() as isize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `[batch, m, k] · [batch, k, n]` by `dot` (in parallel) against a naive loop in f64.
    fn check_batched(batch: usize, [m, k, n]: [usize; 3]) {
        let values = |count: usize, seed: usize| -> Vec<f32> {
            (0..count).map(|i| ((i * 7919 + seed * 104729) % 2001) as f32 / 1000.0 - 1.0).collect()
        };
        let (a, b) = (values(batch * m * k, 1), values(batch * k * n, 2));
        let shape = |d: [usize; 3]| Shape::new(ElementType::F32, &d.map(|x| x as i64));
        let lhs = Literal::from_vec(&shape([batch, m, k]), a.clone()).unwrap();
        let rhs = Literal::from_vec(&shape([batch, k, n]), b.clone()).unwrap();
        let mut out = Literal::for_overwrite(&shape([batch, m, n])).unwrap();
        let numbers = DotDimensionNumbers {
            lhs_contracting_dimensions: vec![2],
            rhs_contracting_dimensions: vec![1],
            lhs_batch_dimensions: vec![0],
            rhs_batch_dimensions: vec![0],
        };
        dot([&lhs, &rhs], &numbers, &mut out, true).unwrap();
        let got = out.to_vec::<f32>().unwrap();
        for (g, (batch, i, j)) in
            got.iter().zip((0..batch).flat_map(|s| (0..m).flat_map(move |i| (0..n).map(move |j| (s, i, j)))))
        {
            let expected: f64 = (0..k)
                .map(|p| f64::from(a[(batch * m + i) * k + p]) * f64::from(b[(batch * k + p) * n + j]))
                .sum();
            assert!(
                (f64::from(*g) - expected).abs() <= 1e-4 * (1.0 + expected.abs()),
                "{g} against {expected}"
            );
        }
    }

    #[test]
    fn few_rows_and_columns_over_a_long_depth_share_the_depth_and_hold_a_naive_loops_values() {
        // A classifier's last layer: 32 rows, 10 columns, a depth of many blocks (each product
        // is large enough to run on every thread).
        check_batched(1, [32, 16384, 10]);
        // Two rows; a depth that is not a whole number of blocks.
        check_batched(1, [2, 40000 + 7, 5]);
        check_batched(1, [7, 5 * DEPTH_BLOCK + 3, 40]);
        // Batches, each on a thread of its own.
        check_batched(3, [5, 20 * DEPTH_BLOCK + 7, 17]);
        // Too few depth blocks to share: rows instead.
        check_batched(1, [20, DEPTH_BLOCK, 10]);
    }

    #[test]
    fn rows_beyond_one_pass_of_the_tile_and_panels_cut_short_hold_a_naive_loops_values() {
        // Shared by panels, each task's rows in passes of `ROW_BLOCK` (the last one short).
        check_batched(1, [2 * ROW_BLOCK + 37, 2 * DEPTH_BLOCK + 5, 3 * PANEL + 9]);
        // Shared by rows: fewer panels than threads.
        check_batched(1, [ROW_BLOCK + 3, 70, 20]);
        check_batched(2, [ROW_BLOCK + 1, 33, PANEL + 1]);
    }
}
