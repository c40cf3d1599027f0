//! From a computation to a loop's expression: every movement op (broadcast, transpose,
//! reverse, slice, a reshape that only splits dimensions or adds or drops size-1 ones) is
//! pushed down to the leaves as an affine index map from the output's index space, so each
//! parameter becomes a strided load and each iota an affine index; what remains are the
//! element-wise [`Node`]s.

use std::collections::HashMap;

use super::nodes::{Node, NodeKind};
use crate::hlo::ir::{HloComputation, InstructionId, Opcode};
use crate::shape::reshape::splitting_reshape;
use crate::shape::Shape;

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

/// The expression computing instruction `result` of `computation` over that instruction's
/// index space, its last node the result; `None` if a loop cannot compute it. `row` is the
/// dimension of that space walked fastest, if reduces read along it may be row reductions.
pub(super) fn expression(
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

/// The dimension of `shape` a walk in its memory order visits fastest: the minor-most one
/// longer than 1 (the row of a loop over it; `None` if there is none).
pub(super) fn fastest_dimension(shape: &Shape) -> Option<usize> {
    shape.layout().minor_to_major().iter().map(|&d| d as usize).find(|&d| shape.dimensions()[d] != 1)
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
