//! A loop program and how it is compiled: the expression ([`Node`]s) over a walk of the
//! output's index space in its memory order, coalesced so rows are as long as possible, with
//! its register chains found and its chunk buffers assigned once.

use super::chain::Role;
use super::chains;
use super::expression::{expression, fastest_dimension};
use super::frame::RegisterFile;
use super::nodes::{Node, NodeKind};
use super::slots;
use crate::attributes::{BinaryOp, UnaryOp};
use crate::element_type::ElementType;
use crate::hlo::ir::{HloComputation, InstructionId};
use crate::shape::Shape;

/// One strided loop: the index space it walks (its *domain*), the expression evaluated per
/// element, and what it does with each value (its [`Sink`]).
#[derive(Debug)]
pub(crate) struct LoopProgram {
    /// The buffer written: the domain itself for a plain loop, the reduced result for a
    /// reduction.
    pub(super) out_shape: Shape,
    /// The walk, in the domain's memory order (major first) after dropping size-1 dimensions
    /// and coalescing: sizes, and the strides at which values land in the output (0 along a
    /// reduced dimension). The last dimension is the row.
    pub(super) sizes: Vec<usize>,
    pub(super) out_strides: Vec<isize>,
    /// The expression, operands before users; the last node is the result.
    pub(super) nodes: Vec<Node>,
    pub(super) sink: Sink,
    /// The chunk buffers the nodes share (see `slots.rs`).
    pub(super) slots: slots::Slots,
    /// Each node's place in the chains computed in registers (see `chains.rs`).
    pub(super) chains: Vec<Role>,
    /// Whether each node is read only by chain links, as their other operand.
    pub(super) read_by_links_only: Vec<bool>,
    /// Whether each node is read, and only by the result (the last node) as its operand.
    pub(super) read_by_result_only: Vec<bool>,
    /// Whether a node is a row reduction: each chunk is then whole rows.
    pub(super) row_reductions: bool,
    /// Whether an input is read transposed, a page per element of the row: the work items
    /// are then short tiles, their output's lines prefetched one ahead, walked in square
    /// blocks of the two innermost outer dimensions (see `reorder_for_gathers`).
    pub(super) blocked_items: bool,
    /// Whether the nodes passed [`nodes_agree`], which running them relies on.
    pub(super) nodes_agree: bool,
    /// Whether a reduction folds its values as the reduce of its operand materialized would
    /// (see [`LoopProgram::folds_as_unfused`]); always true of a plain loop.
    pub(super) folds_as_unfused: bool,
    /// Register files kept between runs (see `run.rs`).
    pub(super) registers: std::sync::Mutex<Vec<RegisterFile>>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attributes::ComparisonDirection;
    use crate::exec::loop_program::nodes::{load, node};

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
