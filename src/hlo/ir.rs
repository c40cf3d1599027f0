//! The IR's data: an instruction (opcode and attributes, operands, shape, name) and a
//! computation (an arena of instructions in topological order, and a root). Opcodes that call
//! computations hold them, so these types are defined together.

use std::sync::Arc;

use crate::attributes::{
    BinaryOp, ComparisonDirection, DotDimensionNumbers, PaddingConfig, PrecisionConfig, RandomAlgorithm,
    UnaryOp,
};
use crate::attributes::{
    ConvolutionDimensionNumbers, GatherDimensionNumbers, ScatterDimensionNumbers, Window,
};
use crate::element_type::ElementType;
use crate::literal::Literal;
use crate::shape::program_shape::ProgramShape;
use crate::shape::Shape;

/// The position of an instruction in its computation's arena.
pub(crate) type InstructionId = usize;

/// One HLO instruction: what it does, what it reads, and the shape it makes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Instruction {
    pub(crate) opcode: Opcode,
    pub(crate) operands: Vec<InstructionId>,
    pub(crate) shape: Shape,
    /// Unique within the computation, as HLO text names it (`add.3`, `x.1`).
    pub(crate) name: String,
}

/// A computation: instructions in topological order (operands before users) and a root.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct HloComputation {
    pub(crate) name: String,
    pub(crate) instructions: Vec<Instruction>,
    pub(crate) root: InstructionId,
}

impl HloComputation {
    /// The computation of one instruction alone: its operands become parameters of
    /// `operand_shapes`, in order, and it is the root.
    pub(crate) fn single(instruction: &Instruction, operand_shapes: &[Shape]) -> HloComputation {
        let mut instructions: Vec<Instruction> = operand_shapes
            .iter()
            .enumerate()
            .map(|(number, shape)| Instruction {
                opcode: Opcode::Parameter { number: number as i64 },
                operands: vec![],
                shape: shape.clone(),
                name: format!("p{number}"),
            })
            .collect();
        let mut single = instruction.clone();
        single.operands = (0..operand_shapes.len()).collect();
        instructions.push(single);
        let root = instructions.len() - 1;
        HloComputation { name: "single".into(), instructions, root }
    }

    /// The parameters, ordered by parameter number.
    pub(crate) fn parameters(&self) -> Vec<&Instruction> {
        self.parameter_ids().into_iter().map(|id| &self.instructions[id]).collect()
    }

    /// The positions of the parameters, ordered by parameter number.
    pub(crate) fn parameter_ids(&self) -> Vec<InstructionId> {
        let mut parameters: Vec<(i64, InstructionId)> = self
            .instructions
            .iter()
            .enumerate()
            .filter_map(|(id, instruction)| match instruction.opcode {
                Opcode::Parameter { number } => Some((number, id)),
                _ => None,
            })
            .collect();
        parameters.sort_by_key(|(number, _)| *number);
        parameters.into_iter().map(|(_, id)| id).collect()
    }

    /// The signature: the parameters' names (without the builder's id suffix) and shapes, by
    /// number, and the result's shape.
    pub(crate) fn program_shape(&self) -> ProgramShape {
        let parameters = self
            .parameters()
            .into_iter()
            .map(|p| (base_name(&p.name).to_string(), p.shape.clone()))
            .collect();
        ProgramShape { parameters, result: self.result_shape().clone() }
    }

    /// The shape of the root.
    pub(crate) fn result_shape(&self) -> &Shape {
        &self.instructions[self.root].shape
    }

    /// The binary op this computation is, if it is one element-wise op of its two scalar
    /// parameters in order (`add(p0, p1)`, `max(p0, p1)`, …; either order for commutative
    /// ops): a reducer that runs as a vectorized fold instead of being interpreted.
    pub(crate) fn simple_reducer(&self) -> Option<BinaryOp> {
        let root = &self.instructions[self.root];
        let Opcode::Binary(op) = root.opcode else { return None };
        let parameter = |id: usize| match self.instructions[id].opcode {
            Opcode::Parameter { number } => Some(number),
            _ => None,
        };
        let commutative = matches!(
            op,
            BinaryOp::Add
                | BinaryOp::Mul
                | BinaryOp::Max
                | BinaryOp::Min
                | BinaryOp::And
                | BinaryOp::Or
                | BinaryOp::Xor
        );
        match (parameter(root.operands[0]), parameter(root.operands[1])) {
            (Some(0), Some(1)) => Some(op),
            (Some(1), Some(0)) if commutative => Some(op),
            _ => None,
        }
    }

    /// The comparison this computation is, if it is one `compare(p0, p1)` of its two scalar
    /// parameters of `element_type`: a select that runs natively instead of being interpreted.
    pub(crate) fn simple_comparison(&self, element_type: ElementType) -> Option<ComparisonDirection> {
        let root = &self.instructions[self.root];
        let Opcode::Compare(direction) = root.opcode else { return None };
        let parameter = |id: usize| match self.instructions[id].opcode {
            Opcode::Parameter { number } if self.instructions[id].shape.element_type() == element_type => {
                Some(number)
            }
            _ => None,
        };
        match (parameter(root.operands[0]), parameter(root.operands[1])) {
            (Some(0), Some(1)) => Some(direction),
            _ => None,
        }
    }

    /// The computations this one calls (reducers, fused computations), each once, callees
    /// first.
    pub(crate) fn called_computations(&self) -> Vec<Arc<HloComputation>> {
        let mut found: Vec<Arc<HloComputation>> = Vec::new();
        for called in self.instructions.iter().flat_map(|i| i.opcode.called_computations()) {
            for nested in called.called_computations().into_iter().chain([called.clone()]) {
                if !found.iter().any(|known| Arc::ptr_eq(known, &nested)) {
                    found.push(nested);
                }
            }
        }
        found
    }

    /// The computations of this one's fusions, and of fusions inside what it calls.
    pub(crate) fn fused_computations(&self) -> Vec<Arc<HloComputation>> {
        let fused_by = |computation: &HloComputation| -> Vec<Arc<HloComputation>> {
            computation
                .instructions
                .iter()
                .filter_map(|i| match &i.opcode {
                    Opcode::Fusion { computation, .. } => Some(computation.clone()),
                    _ => None,
                })
                .collect()
        };
        let mut found = fused_by(self);
        for called in self.called_computations() {
            found.extend(fused_by(&called));
        }
        found
    }
}

/// What a fusion computes (XLA's fusion kinds).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, derive_more::Display)]
pub(crate) enum FusionKind {
    /// An element-wise loop over the output.
    #[display("kLoop")]
    Loop,
    /// A reduction whose input is computed on the fly.
    #[display("kInput")]
    Input,
    /// A dot and the element-wise ops over its result, computed on each block of the
    /// product while it is in cache (see `output_fusion.rs`).
    #[display("kOutput")]
    Output,
}

/// An instruction's operation and attributes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Opcode {
    Parameter {
        number: i64,
    },
    Constant(Arc<Literal>),
    Iota {
        dimension: i64,
    },
    Unary(UnaryOp),
    Binary(BinaryOp),
    Compare(ComparisonDirection),
    Select,
    Clamp,
    Convert,
    /// XLA's HLO broadcast: operand dimension `i` becomes output dimension `dimensions[i]`.
    Broadcast {
        dimensions: Vec<i64>,
    },
    Reshape,
    Transpose {
        permutation: Vec<i64>,
    },
    Slice {
        starts: Vec<i64>,
        limits: Vec<i64>,
        strides: Vec<i64>,
    },
    /// XLA's `Tuple`: its operands, as one tuple value.
    Tuple,
    /// XLA's `GetTupleElement`: element `index` of its tuple operand.
    GetTupleElement {
        index: i64,
    },
    Concatenate {
        dimension: i64,
    },
    Pad(PaddingConfig),
    Reverse {
        dimensions: Vec<i64>,
    },
    /// XLA's (variadic) `Reduce`: operands `[inputs…, inits…]`, N of each; the reducer takes
    /// N accumulators then N values.
    Reduce {
        dimensions: Vec<i64>,
        reducer: Arc<HloComputation>,
    },
    /// XLA's `Sort` along `dimension` (resolved, never -1) by `comparator`.
    Sort {
        dimension: i64,
        is_stable: bool,
        comparator: Arc<HloComputation>,
    },
    /// XLA's `TopK` along the last dimension: a tuple of values and s32 indices.
    TopK {
        k: i64,
        largest: bool,
    },
    /// XLA's `RngBitGenerator`: a tuple of the new state and the bits.
    RngBitGenerator {
        algorithm: RandomAlgorithm,
    },
    /// XLA's `BitcastConvert`: the operand's bits reinterpreted (dimensions as
    /// `bitcast_convert_shape` gives them).
    BitcastConvert,
    /// XLA's `While`: runs `body` on its operand while `condition` holds.
    While {
        condition: Arc<HloComputation>,
        body: Arc<HloComputation>,
    },
    /// XLA's `Conditional`: operand 0 picks a branch (a `pred`: true is branch 0; an `s32`: that
    /// branch, the last one when out of range), which runs on operand `1 + branch`.
    Conditional {
        branches: Vec<Arc<HloComputation>>,
    },
    /// XLA's `Call`: the computation on the operands.
    Call {
        computation: Arc<HloComputation>,
    },
    /// XLA's `Map`: a scalar computation applied element by element to operands of one shape.
    Map {
        dimensions: Vec<i64>,
        computation: Arc<HloComputation>,
    },
    /// XLA's `Dot`: its dimension numbers and precision config; the result's element type
    /// is the preferred element type (the accumulator), which may differ from the operands'.
    Dot {
        numbers: DotDimensionNumbers,
        precision: PrecisionConfig,
    },
    /// XLA's `Gather`: operands `[operand, start_indices]`.
    Gather {
        numbers: GatherDimensionNumbers,
        slice_sizes: Vec<i64>,
        indices_are_sorted: bool,
    },
    /// XLA's `Scatter` of one operand: operands `[operand, scatter_indices, updates]`, each
    /// update combined with its operand element by `update`.
    Scatter {
        numbers: ScatterDimensionNumbers,
        indices_are_sorted: bool,
        unique_indices: bool,
        update: Arc<HloComputation>,
    },
    /// XLA's `DynamicSlice`: operands `[operand, start indices…]` (one scalar per dimension).
    DynamicSlice {
        slice_sizes: Vec<i64>,
    },
    /// XLA's `DynamicUpdateSlice`: operands `[operand, update, start indices…]`.
    DynamicUpdateSlice,
    /// XLA's `ReduceWindow` of one operand: operands `[operand, init]`.
    ReduceWindow {
        window: Window,
        reducer: Arc<HloComputation>,
    },
    /// XLA's `SelectAndScatter`: operands `[operand, source, init]`.
    SelectAndScatter {
        window: Window,
        select: Arc<HloComputation>,
        scatter: Arc<HloComputation>,
    },
    /// XLA's `Convolution`: operands `[lhs, rhs]` (the window's sizes are the kernel's).
    Convolution {
        window: Window,
        numbers: ConvolutionDimensionNumbers,
        feature_group_count: i64,
        batch_group_count: i64,
        precision: PrecisionConfig,
    },
    /// A fusion: the called computation's parameters are this instruction's operands.
    Fusion {
        kind: FusionKind,
        computation: Arc<HloComputation>,
    },
}

impl Opcode {
    /// Whether the operands may be tuples (for every other opcode they are arrays).
    pub(crate) fn takes_tuples(&self) -> bool {
        matches!(
            self,
            Opcode::Tuple
                | Opcode::GetTupleElement { .. }
                | Opcode::While { .. }
                | Opcode::Conditional { .. }
                | Opcode::Call { .. }
        )
    }

    /// The computations this instruction calls, in the order XLA's builder embeds them (a
    /// while loop's body before its condition).
    pub(crate) fn called_computations(&self) -> Vec<&Arc<HloComputation>> {
        match self {
            Opcode::Reduce { reducer, .. } => vec![reducer],
            Opcode::Sort { comparator, .. } => vec![comparator],
            Opcode::Fusion { computation, .. }
            | Opcode::Call { computation }
            | Opcode::Map { computation, .. } => {
                vec![computation]
            }
            Opcode::While { condition, body } => vec![body, condition],
            Opcode::Conditional { branches } => branches.iter().collect(),
            Opcode::Scatter { update, .. } => vec![update],
            Opcode::ReduceWindow { reducer, .. } => vec![reducer],
            Opcode::SelectAndScatter { select, scatter, .. } => vec![select, scatter],
            _ => Vec::new(),
        }
    }

    /// The same, mutable (to replace them: import, optimization).
    pub(crate) fn called_computations_mut(&mut self) -> Vec<&mut Arc<HloComputation>> {
        match self {
            Opcode::Reduce { reducer, .. } => vec![reducer],
            Opcode::Sort { comparator, .. } => vec![comparator],
            Opcode::Fusion { computation, .. }
            | Opcode::Call { computation }
            | Opcode::Map { computation, .. } => {
                vec![computation]
            }
            Opcode::While { condition, body } => vec![body, condition],
            Opcode::Conditional { branches } => branches.iter_mut().collect(),
            Opcode::Scatter { update, .. } => vec![update],
            Opcode::ReduceWindow { reducer, .. } => vec![reducer],
            Opcode::SelectAndScatter { select, scatter, .. } => vec![select, scatter],
            _ => Vec::new(),
        }
    }

    /// The opcode's name in HLO text.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Opcode::Parameter { .. } => "parameter",
            Opcode::Constant(_) => "constant",
            Opcode::Iota { .. } => "iota",
            Opcode::Unary(op) => op.hlo_name(),
            Opcode::Binary(op) => op.hlo_name(),
            Opcode::Compare(_) => "compare",
            Opcode::Select => "select",
            Opcode::Clamp => "clamp",
            Opcode::Convert => "convert",
            Opcode::Broadcast { .. } => "broadcast",
            Opcode::Reshape => "reshape",
            Opcode::Transpose { .. } => "transpose",
            Opcode::Slice { .. } => "slice",
            Opcode::Concatenate { .. } => "concatenate",
            Opcode::Tuple => "tuple",
            Opcode::Sort { .. } => "sort",
            Opcode::TopK { .. } => "topk",
            Opcode::RngBitGenerator { .. } => "rng-bit-generator",
            Opcode::BitcastConvert => "bitcast-convert",
            Opcode::While { .. } => "while",
            Opcode::Conditional { .. } => "conditional",
            Opcode::Call { .. } => "call",
            Opcode::Map { .. } => "map",
            Opcode::GetTupleElement { .. } => "get-tuple-element",
            Opcode::Pad(_) => "pad",
            Opcode::Reverse { .. } => "reverse",
            Opcode::Reduce { .. } => "reduce",
            Opcode::Dot { .. } => "dot",
            Opcode::Gather { .. } => "gather",
            Opcode::Scatter { .. } => "scatter",
            Opcode::DynamicSlice { .. } => "dynamic-slice",
            Opcode::DynamicUpdateSlice => "dynamic-update-slice",
            Opcode::ReduceWindow { .. } => "reduce-window",
            Opcode::SelectAndScatter { .. } => "select-and-scatter",
            Opcode::Convolution { .. } => "convolution",
            Opcode::Fusion { .. } => "fusion",
        }
    }
}

/// `add.3` → `add`: a name without the builder's id suffix.
pub(crate) fn base_name(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((base, id)) if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => name,
    }
}
