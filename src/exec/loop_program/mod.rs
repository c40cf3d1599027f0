//! Loop programs: a chain of broadcasts, data movement and element-wise ops (one instruction or
//! a whole loop fusion) compiled into one strided loop over the output.
//!
//! Compiling pushes every movement op (broadcast, transpose, reverse, slice, a reshape that
//! only splits dimensions or adds or drops size-1 ones) down to the leaves as an affine *index map* from the
//! output's index space, so each parameter is read through strides and each iota is an affine
//! function of the index: nothing between the inputs and the output is ever materialized.
//! What remains is an expression DAG of element-wise ops ([`Node`]s), evaluated a
//! cache-resident chunk at a time (see `run.rs`), its runs of cheap `f32` ops in vector
//! registers (see `chains.rs`).
//!
//! A plain loop may also hold *row reductions*: a reduce over one dimension whose result the
//! loop reads broadcast along its row (softmax's max and sum, layer norm's mean). The walk then
//! takes whole rows per chunk (a tile of several when rows are whole blocks of a chain's
//! lanes), so the reduce folds each row's values as they are computed and every element of
//! the row reads the result, one value per row: the reduced operand is read once and never
//! materialized. A row sum of a register chain's values is summed by the chain itself as it
//! stores them (`chains::Fold`), rather than in a pass over them.

mod chains;
mod chunk_ops;
mod prefetch;
mod run;
mod slots;

pub(crate) use run::SharedOutput;

use std::collections::HashMap;

use crate::attributes::{BinaryOp, ComparisonDirection, UnaryOp};
use crate::element_type::ElementType;
use crate::hlo::ir::{HloComputation, InstructionId, Opcode};
use crate::literal::Literal;
use crate::shape::reshape::splitting_reshape;
use crate::shape::Shape;

/// One strided loop: the index space it walks (its *domain*), the expression evaluated per
/// element, and what it does with each value (its [`Sink`]).
#[derive(Debug)]
pub(crate) struct LoopProgram {
    /// The buffer written: the domain itself for a plain loop, the reduced result for a
    /// reduction.
    out_shape: Shape,
    /// The walk, in the domain's memory order (major first) after dropping size-1 dimensions
    /// and coalescing: sizes, and the strides at which values land in the output (0 along a
    /// reduced dimension). The last dimension is the row.
    sizes: Vec<usize>,
    out_strides: Vec<isize>,
    /// The expression, operands before users; the last node is the result.
    nodes: Vec<Node>,
    sink: Sink,
    /// The chunk buffers the nodes share (see `slots.rs`).
    slots: slots::Slots,
    /// Each node's place in the chains computed in registers (see `chains.rs`).
    chains: Vec<chains::Role>,
    /// Whether each node is read only by chain links, as their other operand.
    read_by_links_only: Vec<bool>,
    /// Whether each node is read, and only by the result (the last node) as its operand.
    read_by_result_only: Vec<bool>,
    /// Whether a node is a row reduction: each chunk is then whole rows.
    row_reductions: bool,
    /// Whether an input is read transposed, a page per element of the row: the work items
    /// are then short tiles, their output's lines prefetched one ahead, walked in square
    /// blocks of the two innermost outer dimensions (see `reorder_for_gathers`).
    blocked_items: bool,
    /// Whether the nodes passed [`nodes_agree`], which running them relies on.
    nodes_agree: bool,
    /// Whether a reduction folds its values as the reduce of its operand materialized would
    /// (see [`LoopProgram::folds_as_unfused`]); always true of a plain loop.
    folds_as_unfused: bool,
    /// Register files kept between runs (see `run.rs`).
    registers: std::sync::Mutex<Vec<run::RegisterFile>>,
}

/// What a loop does with each value it computes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Sink {
    /// Stores it at its place in the output.
    Store,
    /// Combines it into its output element with `op`; the output starts as the scalar input
    /// `init` (a reduce, possibly of a fused producer).
    Accumulate { op: BinaryOp, init: usize },
}

/// One node of the expression.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    kind: NodeKind,
    element_type: ElementType,
    operands: Vec<usize>,
}

/// What a node computes. `Load` and `Index` carry strides over the walk's dimensions.
#[derive(Clone, Debug)]
enum NodeKind {
    /// Input `input` read at `offset + Σ index·strides`.
    Load {
        input: usize,
        offset: isize,
        strides: Vec<isize>,
    },
    /// The value `offset + Σ index·strides` (an iota seen through the movement ops above it).
    Index {
        offset: isize,
        strides: Vec<isize>,
    },
    /// A scalar constant.
    Constant(Literal),
    /// A row reduction: operand 0's values over the row folded with the op, starting from
    /// operand 1 (a scalar); one value for each row of the chunk.
    Reduce(BinaryOp),
    Unary(UnaryOp),
    Binary(BinaryOp),
    Compare(ComparisonDirection),
    Select,
    Clamp,
    Convert,
}

/// The rows a loop may reduce along: at most what its few slots keep in L2 as one chunk (64
/// KiB of f32 each), and at least 256 elements, shorter rows gaining too little from the fused
/// loop (`docs/performance.md`). Other rows are reduced by a loop of their own.
const ROW_REDUCTION_LENGTHS: std::ops::RangeInclusive<i64> = 256..=(1 << 14);

/// An affine map from the output's index space to an instruction's:
/// `index[d] = offset[d] + Σ_k matrix[d][k] · out[k]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct IndexMap {
    offset: Vec<i64>,
    matrix: Vec<Vec<i64>>,
    /// The output's rank (the length of every row, also when there are no rows).
    out_rank: usize,
}

impl IndexMap {
    fn identity(rank: usize) -> IndexMap {
        let matrix = (0..rank).map(|d| (0..rank).map(|k| i64::from(d == k)).collect()).collect();
        IndexMap { offset: vec![0; rank], matrix, out_rank: rank }
    }

    /// The map of an operand whose dimension `d` is this map's dimension `rows[d]` (`None`:
    /// a size-1 dimension, always index 0).
    fn select_rows(&self, rows: &[Option<usize>]) -> IndexMap {
        let rows: Vec<Vec<(usize, i64)>> =
            rows.iter().map(|row| row.map(|r| vec![(r, 1)]).unwrap_or_default()).collect();
        self.combine_rows(&rows)
    }

    /// The map of an operand whose dimension `d`'s index is `Σ weight · index[r]` over the
    /// `(r, weight)` of `rows[d]`, `index` this map's (empty: a size-1 dimension).
    fn combine_rows(&self, rows: &[Vec<(usize, i64)>]) -> IndexMap {
        let out_rank = self.out_rank;
        let (offset, matrix) = rows
            .iter()
            .map(|row| {
                let offset: i64 = row.iter().map(|&(r, w)| w * self.offset[r]).sum();
                let matrix =
                    (0..out_rank).map(|k| row.iter().map(|&(r, w)| w * self.matrix[r][k]).sum()).collect();
                (offset, matrix)
            })
            .unzip();
        IndexMap { offset, matrix, out_rank }
    }

    /// The flat offset and per-output-dimension strides of reading a buffer with `strides`
    /// through this map.
    fn through_strides(&self, strides: &[i64]) -> (isize, Vec<isize>) {
        let offset = self.offset.iter().zip(strides).map(|(o, s)| o * s).sum::<i64>() as isize;
        let per_dim = (0..self.out_rank)
            .map(|k| self.matrix.iter().zip(strides).map(|(row, s)| row[k] * s).sum::<i64>() as isize)
            .collect();
        (offset, per_dim)
    }
}

impl LoopProgram {
    /// Compiles `computation` (parameters are the inputs, of `input_shapes`) into one loop
    /// writing `out_shape` (the result's element type and dimensions, in any layout, walked in
    /// its memory order), or `None` if it holds an instruction a loop cannot compute (dot,
    /// reduce, a general reshape, …).
    pub(crate) fn compile(
        computation: &HloComputation,
        input_shapes: &[Shape],
        out_shape: &Shape,
    ) -> Option<LoopProgram> {
        let out_shape = out_shape.clone();
        let target = strides_of(&out_shape);
        if out_shape.element_count() == 0 {
            return Some(LoopProgram::empty(out_shape, Sink::Store));
        }
        let nodes = expression(computation, computation.root, input_shapes, fastest_dimension(&out_shape))?;
        Some(LoopProgram::coalesced(out_shape.clone(), &out_shape, target, nodes, Sink::Store))
    }

    /// Compiles `computation` as [`LoopProgram::compile`] does, but with the output's minor
    /// dimension kept as the walk's row, never merged with the ones before it: each row of the
    /// walk is then one row of a row-major output, so [`LoopProgram::run_rows`] can compute
    /// any range of them (a product's epilogue, block by block).
    pub(crate) fn compile_by_rows(
        computation: &HloComputation,
        input_shapes: &[Shape],
        out_shape: &Shape,
    ) -> Option<LoopProgram> {
        let row = out_shape.dimensions().last().copied().unwrap_or(1);
        if out_shape.is_padded()
            || !out_shape.layout().is_default()
            || row < 2
            || out_shape.element_count() == 0
        {
            return None;
        }
        let nodes = expression(computation, computation.root, input_shapes, fastest_dimension(out_shape))?;
        let program = LoopProgram::walked(
            out_shape.clone(),
            out_shape,
            strides_of(out_shape),
            nodes,
            Sink::Store,
            true,
        );
        (program.sizes.last() == Some(&(row as usize))).then_some(program)
    }

    /// Compiles a reduction of instruction `operand` of `computation` over `dimensions` with
    /// `op` into `out_shape` (the reduce's result, default layout), starting from input
    /// `init`: the operand's expression is evaluated a chunk at a time and folded in, never
    /// materialized.
    pub(crate) fn compile_reduction(
        computation: &HloComputation,
        operand: InstructionId,
        input_shapes: &[Shape],
        dimensions: &[i64],
        (op, init): (BinaryOp, usize),
        out_shape: &Shape,
    ) -> Option<LoopProgram> {
        let domain = computation.instructions[operand].shape.clone();
        let out_strides = out_shape.strides();
        let mut kept = out_strides.iter();
        let target: Vec<isize> = (0..domain.rank() as i64)
            .map(|d| if dimensions.contains(&d) { 0 } else { kept.next().map_or(0, |&s| s as isize) })
            .collect();
        // XLA's reduce over no dimension is the operand itself: the init value is not applied.
        let sink = if dimensions.is_empty() { Sink::Store } else { Sink::Accumulate { op, init } };
        if domain.element_count() == 0 {
            return Some(LoopProgram::empty(out_shape.clone(), sink));
        }
        let nodes = expression(computation, operand, input_shapes, None)?;
        // The reduce of the operand materialized: its walk first (enough when the sizes are
        // the same), its whole program only when they are not.
        let materialized = Node::read_of_input_0(&domain, domain.element_type());
        let (unfused_sizes, _) = walk(&domain, &target, &mut [materialized.clone()], false);
        let mut program =
            LoopProgram::coalesced(out_shape.clone(), &domain, target.clone(), nodes, sink.clone());
        program.folds_as_unfused = unfused_sizes == program.sizes || unfused_sizes.is_empty() || {
            let unfused =
                LoopProgram::coalesced(out_shape.clone(), &domain, target, vec![materialized], sink);
            program.folds_like(&unfused)
        };
        Some(program)
    }

    /// A copy of an array of shape `from` into one of shape `to` (the same element type and
    /// dimensions, another layout or padding): a loop whose one input is read through
    /// `from`'s strides and written in `to`'s order.
    pub(crate) fn copy(from: &Shape, to: &Shape) -> LoopProgram {
        let load = Node::read_of_input_0(from, to.element_type());
        if to.element_count() == 0 {
            return LoopProgram::empty(to.clone(), Sink::Store);
        }
        LoopProgram::coalesced(to.clone(), to, strides_of(to), vec![load], Sink::Store)
    }

    /// A program over an empty domain: it computes nothing (a reduction still fills its output
    /// with the init value), and its index maps are never made, so huge sizes beside a zero
    /// cannot overflow them.
    fn empty(out_shape: Shape, sink: Sink) -> LoopProgram {
        let (sizes, out_strides) = (vec![0], vec![0]);
        let slots = slots::Slots::default();
        LoopProgram {
            out_shape,
            sizes,
            out_strides,
            nodes: Vec::new(),
            sink,
            slots,
            chains: Vec::new(),
            read_by_links_only: Vec::new(),
            read_by_result_only: Vec::new(),
            row_reductions: false,
            blocked_items: false,
            nodes_agree: true,
            folds_as_unfused: true,
            registers: Default::default(),
        }
    }

    /// Orders the walk by the domain's memory order, drops size-1 dimensions, and merges
    /// neighbours that every stride allows to merge, so rows are as long as possible.
    fn coalesced(
        out_shape: Shape,
        domain: &Shape,
        target: Vec<isize>,
        nodes: Vec<Node>,
        sink: Sink,
    ) -> LoopProgram {
        LoopProgram::walked(out_shape, domain, target, nodes, sink, false)
    }

    /// [`LoopProgram::coalesced`], with the domain's minor dimension kept a row of its own if
    /// `keep_row` (and then walked in plain order, never in blocks).
    fn walked(
        out_shape: Shape,
        domain: &Shape,
        target: Vec<isize>,
        mut nodes: Vec<Node>,
        sink: Sink,
        keep_row: bool,
    ) -> LoopProgram {
        let (mut sizes, mut out_strides) = walk(domain, &target, &mut nodes, keep_row);
        let row_reductions = nodes.iter().any(|n| matches!(n.kind, NodeKind::Reduce(_)));
        let blocked_items =
            sink == Sink::Store && !keep_row && reorder_for_gathers(&mut sizes, &mut out_strides, &mut nodes);
        if sizes.is_empty() {
            // A scalar (or all size-1) output: one row of one element.
            sizes.push(1);
            out_strides.push(1);
            for node in &mut nodes {
                if let NodeKind::Load { strides, .. } | NodeKind::Index { strides, .. } = &mut node.kind {
                    strides.push(0);
                }
            }
        }
        let chains = chains::find(&nodes);
        let slots = slots::assign(&nodes, &chains::read_at(&chains));
        let read_by_links_only = chains::read_by_links_only(&nodes, &chains);
        let read_by_result_only = read_by_result_only(&nodes);
        let nodes_agree = nodes_agree(&nodes, out_shape.element_type());
        LoopProgram {
            out_shape,
            sizes,
            out_strides,
            nodes,
            sink,
            slots,
            chains,
            read_by_links_only,
            read_by_result_only,
            row_reductions,
            blocked_items,
            nodes_agree,
            folds_as_unfused: true,
            registers: Default::default(),
        }
    }

    /// Whether a reduction folds each output's values as the reduce of its operand
    /// materialized (a contiguous array in the domain's layout) would: in the same pieces and
    /// partial sums, so fused and unfused results agree bit for bit (see
    /// [`LoopProgram::folds_like`]). A fused producer's strides may keep apart dimensions the
    /// contiguous array merges (a transposed input summed over two dimensions, a row vector
    /// broadcast down a full sum): each row is then folded on its own, and unless rows are
    /// whole pieces a float sum rounds otherwise. Always true of a plain loop.
    pub(crate) fn folds_as_unfused(&self) -> bool {
        self.folds_as_unfused
    }
}

impl Node {
    /// A read of input 0, an array of shape `shape`, as `element_type`.
    fn read_of_input_0(shape: &Shape, element_type: ElementType) -> Node {
        let kind = NodeKind::Load { input: 0, offset: 0, strides: strides_of(shape) };
        Node { kind, element_type, operands: vec![] }
    }
}

/// The strides of `shape`'s elements in memory, per dimension.
fn strides_of(shape: &Shape) -> Vec<isize> {
    shape.strides().iter().map(|&s| s as isize).collect()
}

/// The walk of a loop over `domain` writing at `target` (a stride per domain dimension) and
/// reading through `nodes`' strides: the domain's dimensions in its memory order (major
/// first), size-1 dimensions dropped, neighbours merged where every stride allows, so rows are
/// as long as possible (the minor one kept apart if `keep_row`). Returns its sizes and output
/// strides and leaves each node's strides over the walk's dimensions.
fn walk(domain: &Shape, target: &[isize], nodes: &mut [Node], keep_row: bool) -> (Vec<usize>, Vec<isize>) {
    let order: Vec<usize> = domain
        .layout()
        .minor_to_major()
        .iter()
        .rev()
        .map(|&d| d as usize)
        .filter(|&d| domain.dimensions()[d] != 1)
        .collect();
    let pick = |strides: &[isize]| order.iter().map(|&d| strides[d]).collect::<Vec<_>>();
    let mut sizes: Vec<usize> = order.iter().map(|&d| domain.dimensions()[d] as usize).collect();
    let mut out_strides = pick(target);
    for node in nodes.iter_mut() {
        if let NodeKind::Load { strides, .. } | NodeKind::Index { strides, .. } = &mut node.kind {
            *strides = pick(strides);
        }
    }
    // Merge dimension i into i + 1 (its inner neighbour) where every stride agrees; a row
    // that is reduced stays a row of its own.
    let row_reductions = nodes.iter().any(|n| matches!(n.kind, NodeKind::Reduce(_)));
    let mut i = sizes.len().saturating_sub(1);
    if row_reductions || keep_row {
        i = i.saturating_sub(1);
    }
    while i > 0 {
        let (outer, inner) = (i - 1, i);
        let mergeable = |s: &[isize]| s[inner].checked_mul(sizes[inner] as isize) == Some(s[outer]);
        let all = mergeable(&out_strides)
            && nodes.iter().all(|n| match &n.kind {
                NodeKind::Load { strides, .. } | NodeKind::Index { strides, .. } => mergeable(strides),
                _ => true,
            });
        if all {
            sizes[inner] = sizes[inner].saturating_mul(sizes[outer]);
            sizes.remove(outer);
            out_strides.remove(outer);
            for node in nodes.iter_mut() {
                if let NodeKind::Load { strides, .. } | NodeKind::Index { strides, .. } = &mut node.kind {
                    strides.remove(outer);
                }
            }
        }
        i -= 1;
    }
    (sizes, out_strides)
}

/// The dimension of `shape` a walk in its memory order visits fastest: the minor-most one
/// longer than 1 (the row of a loop over it; `None` if there is none).
fn fastest_dimension(shape: &Shape) -> Option<usize> {
    shape.layout().minor_to_major().iter().map(|&d| d as usize).find(|&d| shape.dimensions()[d] != 1)
}

/// Whether each of `nodes` is read, and only by the result (the last node) as its operand: a
/// result computed row by row straight into the output may read such a load's rows where
/// they lie (`run.rs`).
fn read_by_result_only(nodes: &[Node]) -> Vec<bool> {
    let mut reads = vec![(0usize, 0usize); nodes.len()];
    for (k, node) in nodes.iter().enumerate() {
        for &operand in &node.operands {
            reads[operand].0 += 1;
            reads[operand].1 += usize::from(k + 1 == nodes.len());
        }
    }
    reads.iter().map(|&(all, by_result)| all > 0 && all == by_result).collect()
}

/// Whether `nodes` is an expression the runner may evaluate without checking each read (its
/// `unsafe` blocks rely on this): each node's operands come before it, with the element types
/// it reads, and the last node, the result, is of `result_type`. Loads and constants are
/// checked against their literals as they are read.
fn nodes_agree(nodes: &[Node], result_type: ElementType) -> bool {
    let agrees = |(k, node): (usize, &Node)| {
        if node.operands.iter().any(|&o| o >= k) {
            return false;
        }
        let types: Vec<ElementType> = node.operands.iter().map(|&o| nodes[o].element_type).collect();
        let own = node.element_type;
        match (&node.kind, types.as_slice()) {
            (NodeKind::Load { .. } | NodeKind::Index { .. } | NodeKind::Constant(_), []) => true,
            (NodeKind::Unary(UnaryOp::IsFinite), [_]) | (NodeKind::Compare(_), [_, _]) => {
                own == ElementType::Pred && types.iter().all(|&t| t == types[0])
            }
            (NodeKind::Convert, [_]) => true,
            (NodeKind::Select, [ElementType::Pred, t, f]) => *t == own && *f == own,
            (NodeKind::Unary(_), [_])
            | (NodeKind::Binary(_) | NodeKind::Reduce(_), [_, _])
            | (NodeKind::Clamp, [_, _, _]) => types.iter().all(|&t| t == own),
            _ => false,
        }
    };
    nodes.iter().enumerate().all(agrees) && nodes.last().is_none_or(|n| n.element_type == result_type)
}

/// When an input is gathered along the row (a transposed or column-major operand read
/// against the output's order), makes the outer dimension along which that input is most
/// nearly contiguous the one enumerated fastest: consecutive rows then read neighbouring
/// elements of the same cache lines, instead of each row touching lines the next rows will
/// not reuse before they are evicted. A reduction keeps its walk (its partition depends on
/// it).
///
/// Returns whether each element of the input's row is on a page of its own. The work items
/// are then short tiles (`BLOCKED_SEGMENT` and `BLOCKED_CHUNK` in `run.rs`), each item's
/// output lines prefetched while the one before it computes, and where there are two outer
/// dimensions the items walk them in blocks: each item reads its rows of the input from
/// pages other than those of its output's rows, so a block of items that together read whole
/// pages of both keeps each page's use close in time.
fn reorder_for_gathers(sizes: &mut [usize], out_strides: &mut [isize], nodes: &mut [Node]) -> bool {
    let Some(last) = sizes.len().checked_sub(1) else { return false };
    if last < 1 {
        return false;
    }
    let first_gather = nodes.iter().find_map(|node| match &node.kind {
        NodeKind::Load { strides, .. } if strides[last].abs() > 1 => Some((strides, node.element_type)),
        _ => None,
    });
    let Some((gathered, element_type)) = first_gather else { return false };
    // Blocks pay where each element of the gathered row is on a page of its own.
    let blocked = gathered[last].unsigned_abs() * element_type.byte_size() >= PAGE_BYTES;
    let best = (0..last).filter(|&d| gathered[d] != 0).min_by_key(|&d| gathered[d].abs()).unwrap_or(last - 1);
    if best == last - 1 {
        return blocked;
    }
    let move_to_inner = |values: &mut [isize]| values[best..last].rotate_left(1);
    sizes[best..last].rotate_left(1);
    move_to_inner(out_strides);
    for node in nodes {
        if let NodeKind::Load { strides, .. } | NodeKind::Index { strides, .. } = &mut node.kind {
            move_to_inner(strides);
        }
    }
    blocked
}

/// The bytes of a memory page, as the TLB maps them (the common 4 KiB).
const PAGE_BYTES: usize = 4096;

/// The expression computing instruction `result` of `computation` over that instruction's
/// index space, its last node the result; `None` if a loop cannot compute it. `row` is the
/// dimension of that space walked fastest, if reduces read along it may be row reductions.
fn expression(
    computation: &HloComputation,
    result: InstructionId,
    input_shapes: &[Shape],
    row: Option<usize>,
) -> Option<Vec<Node>> {
    let result_shape = &computation.instructions[result].shape;
    let rank = result_shape.rank();
    let row = row.map(|d| (d, result_shape.dimensions()[d]));
    let mut compiler = Compiler {
        computation,
        input_shapes,
        row,
        nodes: Vec::new(),
        maps: Vec::new(),
        map_ids: HashMap::new(),
        memo: vec![Vec::new(); computation.instructions.len()],
    };
    let identity = compiler.intern(IndexMap::identity(rank));
    let root = compiler.node(result, identity)?;
    let mut nodes = compiler.nodes;
    // The evaluator reads the result from the last node.
    if root + 1 != nodes.len() {
        let element_type = nodes[root].element_type;
        nodes.push(Node { kind: NodeKind::Convert, element_type, operands: vec![root] });
    }
    Some(nodes)
}

/// Builds the expression by walking from the root towards the parameters.
struct Compiler<'a> {
    computation: &'a HloComputation,
    input_shapes: &'a [Shape],
    /// The output dimension walked fastest and its size (`None`: no row reductions).
    row: Option<(usize, i64)>,
    nodes: Vec<Node>,
    /// Every map an instruction is read through, once each (a [`MapId`] indexes it), so that
    /// the walk copies and hashes two numbers per read, not a matrix.
    maps: Vec<IndexMap>,
    map_ids: HashMap<IndexMap, MapId>,
    /// The nodes of each instruction, by the map it is read through (mostly one).
    memo: Vec<Vec<(MapId, usize)>>,
}

/// An [`IndexMap`] of a [`Compiler`], by its place in `maps`.
type MapId = usize;

impl Compiler<'_> {
    /// The id of `map`, added to the maps if it is new.
    fn intern(&mut self, map: IndexMap) -> MapId {
        let next = self.maps.len();
        *self.map_ids.entry(map).or_insert_with_key(|map| {
            self.maps.push(map.clone());
            next
        })
    }

    /// The node computing instruction `id` read through `map`. The walk keeps its own stack
    /// (a graph may be 10,000 ops deep): each request first asks for what it reads, then
    /// builds its node once those are known.
    fn node(&mut self, id: InstructionId, map: MapId) -> Option<usize> {
        let mut stack = vec![(id, map, false)];
        while let Some((id, map, ready)) = stack.pop() {
            if self.memoized(id, map).is_some() {
                continue;
            }
            let reads = self.reads(id, map)?;
            if ready {
                let node = self.build(id, map, &reads)?;
                self.memo[id].push((map, node));
            } else {
                stack.push((id, map, true));
                stack.extend(
                    reads.into_iter().rev().map(|(operand, operand_map)| (operand, operand_map, false)),
                );
            }
        }
        self.memoized(id, map)
    }

    /// The node of instruction `id` read through `map`, if it is built.
    fn memoized(&self, id: InstructionId, map: MapId) -> Option<usize> {
        self.memo[id].iter().find(|&&(m, _)| m == map).map(|&(_, node)| node)
    }

    /// What instruction `id` read through `map` needs first: each operand with the map it is
    /// read through (the same map for element-wise ops; a changed one for movement ops).
    /// `None` if a loop cannot compute the instruction.
    fn reads(&mut self, id: InstructionId, map: MapId) -> Option<Vec<(InstructionId, MapId)>> {
        let computation = self.computation;
        let instruction = &computation.instructions[id];
        if let Opcode::Reduce { dimensions, .. } = &instruction.opcode {
            return self.row_reduction_reads(id, dimensions, map);
        }
        let is_input = matches!(instruction.opcode, Opcode::Parameter { .. });
        if !is_input && computation.loop_part(id).is_none() {
            return None;
        }
        match &instruction.opcode {
            Opcode::Parameter { .. } | Opcode::Iota { .. } => Some(vec![]),
            Opcode::Constant(literal) if literal.shape().is_scalar() => Some(vec![]),
            Opcode::Unary(_)
            | Opcode::Binary(_)
            | Opcode::Compare(_)
            | Opcode::Select
            | Opcode::Clamp
            | Opcode::Convert => Some(instruction.operands.iter().map(|&o| (o, map)).collect()),
            _ => {
                let operand = *instruction.operands.first()?;
                let operand_map = self.movement_map(id, &self.maps[map])?;
                Some(vec![(operand, self.intern(operand_map))])
            }
        }
    }

    /// The map movement op `id`'s operand is read through when `id` is read through `map`
    /// (movement ops are not nodes: they change the map their operand is read through);
    /// `None` for any other op.
    fn movement_map(&self, id: InstructionId, map: &IndexMap) -> Option<IndexMap> {
        let instruction = &self.computation.instructions[id];
        let shape = &instruction.shape;
        match &instruction.opcode {
            Opcode::Broadcast { dimensions } => {
                let rows: Vec<Option<usize>> = dimensions.iter().map(|&d| Some(d as usize)).collect();
                Some(map.select_rows(&rows))
            }
            Opcode::Transpose { permutation } => {
                let mut rows = vec![None; permutation.len()];
                for (i, &p) in permutation.iter().enumerate() {
                    rows[p as usize] = Some(i);
                }
                Some(map.select_rows(&rows))
            }
            Opcode::Reverse { dimensions } => {
                let mut reversed = map.clone();
                for &d in dimensions {
                    let d = d as usize;
                    reversed.offset[d] = (shape.dimensions()[d] - 1).max(0) - reversed.offset[d];
                    reversed.matrix[d].iter_mut().for_each(|m| *m = -*m);
                }
                Some(reversed)
            }
            Opcode::Slice { starts, strides, .. } => {
                let mut sliced = map.clone();
                for (d, (&start, &stride)) in starts.iter().zip(strides).enumerate() {
                    sliced.offset[d] = start + stride * sliced.offset[d];
                    sliced.matrix[d].iter_mut().for_each(|m| *m *= stride);
                }
                Some(sliced)
            }
            Opcode::Reshape => {
                let from = &self.computation.instructions[*instruction.operands.first()?].shape;
                Some(map.combine_rows(&splitting_reshape(from, shape)?))
            }
            _ => None,
        }
    }

    /// What reduce `id` over `dimensions`, read through `map`, reads as a row reduction: its
    /// operand with the reduced dimension walked along the loop's row, and its init value.
    /// `None` unless the reduce folds in a loop, reduces one dimension, is read the same along
    /// the whole row (broadcast back along it), and its operand's own layout has that
    /// dimension minor-most (so the fold visits the values in the order a reduce of its own
    /// would, and fused equals unfused to the bit).
    fn row_reduction_reads(
        &mut self,
        id: InstructionId,
        dimensions: &[i64],
        map_id: MapId,
    ) -> Option<Vec<(InstructionId, MapId)>> {
        let map = &self.maps[map_id];
        let instruction = &self.computation.instructions[id];
        let (row, row_size) = self.row?;
        let [reduced] = *dimensions else { return None };
        let [operand, init] = *instruction.operands.as_slice() else { return None };
        let operand_shape = &self.computation.instructions[operand].shape;
        let fits = instruction.folds_in_loop()
            && fastest_dimension(operand_shape) == Some(reduced as usize)
            && operand_shape.dimensions()[reduced as usize] == row_size
            && ROW_REDUCTION_LENGTHS.contains(&row_size)
            && map.matrix.iter().all(|m| m[row] == 0);
        if !fits {
            return None;
        }
        let reduced = reduced as usize;
        let mut along_row = vec![0; map.out_rank];
        along_row[row] = 1;
        let mut operand_map = map.clone();
        operand_map.offset.insert(reduced, 0);
        operand_map.matrix.insert(reduced, along_row);
        let init_map = map.select_rows(&[]);
        Some(vec![(operand, self.intern(operand_map)), (init, self.intern(init_map))])
    }

    /// The node of instruction `id` read through `map`, once what it `reads` has nodes: a new
    /// node, or (for a movement op) its operand's node.
    fn build(&mut self, id: InstructionId, map: MapId, reads: &[(InstructionId, MapId)]) -> Option<usize> {
        let instruction = &self.computation.instructions[id];
        let shape = &instruction.shape;
        let operands: Vec<usize> =
            reads.iter().map(|&(operand, map)| self.memoized(operand, map)).collect::<Option<_>>()?;
        let map = &self.maps[map];
        let kind = match &instruction.opcode {
            Opcode::Parameter { number } => {
                let input = *number as usize;
                let (offset, strides) = map.through_strides(&self.input_shapes.get(input)?.strides());
                NodeKind::Load { input, offset, strides }
            }
            Opcode::Constant(literal) => NodeKind::Constant((**literal).clone()),
            Opcode::Iota { dimension } => {
                let mut unit = vec![0; shape.rank()];
                unit[*dimension as usize] = 1;
                let (offset, strides) = map.through_strides(&unit);
                NodeKind::Index { offset, strides }
            }
            Opcode::Unary(op) => NodeKind::Unary(*op),
            Opcode::Binary(op) => NodeKind::Binary(*op),
            Opcode::Compare(direction) => NodeKind::Compare(*direction),
            Opcode::Select => NodeKind::Select,
            Opcode::Clamp => NodeKind::Clamp,
            Opcode::Convert => NodeKind::Convert,
            Opcode::Reduce { reducer, .. } => NodeKind::Reduce(reducer.simple_reducer()?),
            // A movement op is its operand's node.
            _ => return operands.first().copied(),
        };
        self.nodes.push(Node { kind, element_type: shape.element_type(), operands });
        Some(self.nodes.len() - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node of `kind` (for the tests here and in `chains.rs`).
    pub(super) fn node(kind: NodeKind, element_type: ElementType, operands: &[usize]) -> Node {
        Node { kind, element_type, operands: operands.to_vec() }
    }

    /// A load of input 0 along the row.
    pub(super) fn load(element_type: ElementType) -> Node {
        node(NodeKind::Load { input: 0, offset: 0, strides: vec![1] }, element_type, &[])
    }

    #[test]
    fn nodes_agree_only_when_every_read_has_its_type_and_comes_first() {
        use ElementType::{Pred, F32, S32};
        let add = |t, operands: &[usize]| node(NodeKind::Binary(BinaryOp::Add), t, operands);
        let less = node(NodeKind::Compare(ComparisonDirection::Lt), Pred, &[0, 1]);
        let select = |operands: &[usize]| node(NodeKind::Select, F32, operands);
        assert!(nodes_agree(&[load(F32), load(F32), add(F32, &[0, 1])], F32));
        assert!(nodes_agree(&[load(F32), load(F32), less.clone(), select(&[2, 0, 1])], F32));
        assert!(nodes_agree(&[load(S32), node(NodeKind::Convert, F32, &[0])], F32));
        // An operand of another type, a compare into a non-pred, a select on a non-pred.
        assert!(!nodes_agree(&[load(F32), load(S32), add(F32, &[0, 1])], F32));
        assert!(!nodes_agree(&[load(F32), load(F32), node(less.kind.clone(), F32, &[0, 1])], F32));
        assert!(!nodes_agree(&[load(F32), load(F32), select(&[0, 0, 1])], F32));
        // An operand that is not computed yet (or the node itself), a wrong arity.
        assert!(!nodes_agree(&[load(F32), add(F32, &[0, 2]), load(F32)], F32));
        assert!(!nodes_agree(&[load(F32), add(F32, &[1, 0])], F32));
        assert!(!nodes_agree(&[load(F32), add(F32, &[0])], F32));
        // A result of another type than the output's.
        assert!(!nodes_agree(&[load(F32), load(F32), less], F32));
    }
}
