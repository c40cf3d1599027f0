//! The IR to XLA's messages: every computation of the module once (callees first, the entry
//! last), instruction and computation ids from one counter (unique in the module, as XLA's
//! loader asks), shapes with their dense layouts (lazy-xla's padding left out, as HLO text
//! leaves it out), constants in the physical order of their shape's layout.

use std::sync::Arc;

use crate::attributes::{
    ConvolutionDimensionNumbers, DotDimensionNumbers, GatherDimensionNumbers, PaddingConfig, Precision,
    PrecisionConfig, RandomAlgorithm, ScatterDimensionNumbers, UnaryOp, Window,
};
use crate::element_type::ElementType;
use crate::hlo::ir::{HloComputation, Instruction, Opcode};
use crate::hlo::proto::messages::*;
use crate::literal::Literal;
use crate::shape::Shape;

/// `xla.PrimitiveType`'s number for a tuple.
pub(crate) const TUPLE: i32 = 13;

/// `xla.PrimitiveType`'s number for `element_type`.
pub(crate) fn primitive_type(element_type: ElementType) -> i32 {
    match element_type {
        ElementType::Pred => 1,
        ElementType::S8 => 2,
        ElementType::S16 => 3,
        ElementType::S32 => 4,
        ElementType::S64 => 5,
        ElementType::U8 => 6,
        ElementType::U16 => 7,
        ElementType::U32 => 8,
        ElementType::U64 => 9,
        ElementType::F16 => 10,
        ElementType::F32 => 11,
        ElementType::F64 => 12,
        ElementType::Bf16 => 16,
    }
}

/// The module whose entry computation is `entry`.
pub(crate) fn module_proto(entry: &Arc<HloComputation>) -> HloModuleProto {
    let fused = entry.fused_computations();
    let mut module = Encoder { next_id: 1, fused, done: Vec::new(), computations: Vec::new() };
    for callee in entry.called_computations() {
        module.computation(&callee);
    }
    let entry_id = module.computation(entry);
    HloModuleProto {
        name: entry.name.clone(),
        entry_computation_name: entry.name.clone(),
        entry_computation_id: entry_id,
        host_program_shape: Some(program_shape(entry)),
        computations: module.computations,
        id: 1,
    }
}

struct Encoder {
    next_id: i64,
    /// The computations of fusions (XLA marks them `is_fusion_computation`).
    fused: Vec<Arc<HloComputation>>,
    /// The computations written so far, with their ids.
    done: Vec<(Arc<HloComputation>, i64)>,
    computations: Vec<HloComputationProto>,
}

impl Encoder {
    fn id_of(&self, computation: &Arc<HloComputation>) -> Option<i64> {
        self.done.iter().find(|(c, _)| Arc::ptr_eq(c, computation)).map(|(_, id)| *id)
    }

    fn fresh(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Writes `computation` (its callees are written already) and returns its id.
    fn computation(&mut self, computation: &Arc<HloComputation>) -> i64 {
        if let Some(id) = self.id_of(computation) {
            return id;
        }
        let ids: Vec<i64> = computation.instructions.iter().map(|_| self.fresh()).collect();
        let instructions = computation
            .instructions
            .iter()
            .zip(&ids)
            .map(|(instruction, &id)| {
                let called = instruction
                    .opcode
                    .called_computations()
                    .into_iter()
                    .map(|c| self.computation(c))
                    .collect();
                instruction_proto(
                    instruction,
                    id,
                    instruction.operands.iter().map(|&o| ids[o]).collect(),
                    called,
                )
            })
            .collect();
        let id = self.fresh();
        self.computations.push(HloComputationProto {
            name: computation.name.clone(),
            instructions,
            program_shape: Some(program_shape(computation)),
            id,
            root_id: ids[computation.root],
            is_fusion_computation: self.fused.iter().any(|f| Arc::ptr_eq(f, computation)),
        });
        self.done.push((computation.clone(), id));
        id
    }
}

fn program_shape(computation: &HloComputation) -> ProgramShapeProto {
    let parameters = computation.parameters();
    ProgramShapeProto {
        parameters: parameters.iter().map(|p| shape_proto(&p.shape)).collect(),
        result: Some(shape_proto(computation.result_shape())),
        parameter_names: parameters.iter().map(|p| p.name.clone()).collect(),
    }
}

/// A shape with its dense layout (padding, which XLA has not, left out).
pub(crate) fn shape_proto(shape: &Shape) -> ShapeProto {
    if shape.is_tuple() {
        return ShapeProto {
            element_type: TUPLE,
            tuple_shapes: shape.tuple_shapes().iter().map(shape_proto).collect(),
            ..Default::default()
        };
    }
    ShapeProto {
        element_type: primitive_type(shape.element_type()),
        dimensions: shape.dimensions().to_vec(),
        is_dynamic_dimension: Vec::new(),
        tuple_shapes: Vec::new(),
        layout: Some(LayoutProto {
            minor_to_major: shape.layout().minor_to_major().to_vec(),
            tiles: Vec::new(),
        }),
    }
}

fn instruction_proto(
    instruction: &Instruction,
    id: i64,
    operand_ids: Vec<i64>,
    called: Vec<i64>,
) -> HloInstructionProto {
    let mut proto = HloInstructionProto {
        name: instruction.name.clone(),
        opcode: instruction.opcode.name().to_string(),
        shape: Some(shape_proto(&instruction.shape)),
        id,
        operand_ids,
        called_computation_ids: called,
        ..Default::default()
    };
    match &instruction.opcode {
        Opcode::Parameter { number } => proto.parameter_number = *number,
        Opcode::Constant(literal) => proto.literal = Some(literal_proto(literal, &instruction.shape)),
        Opcode::Iota { dimension } => proto.dimensions = vec![*dimension],
        Opcode::Compare(direction) => proto.comparison_direction = direction.to_string(),
        Opcode::Broadcast { dimensions } | Opcode::Reverse { dimensions } => {
            proto.dimensions = dimensions.clone()
        }
        Opcode::Transpose { permutation } => proto.dimensions = permutation.clone(),
        Opcode::Concatenate { dimension } => proto.dimensions = vec![*dimension],
        Opcode::GetTupleElement { index } => proto.tuple_index = *index,
        Opcode::Slice { starts, limits, strides } => {
            proto.slice_dimensions = (0..starts.len())
                .map(|d| SliceDimensions { start: starts[d], limit: limits[d], stride: strides[d] })
                .collect()
        }
        Opcode::Pad(config) => proto.padding_config = Some(padding_proto(config)),
        Opcode::Fusion { kind, .. } => proto.fusion_kind = kind.to_string(),
        Opcode::Reduce { dimensions, .. } | Opcode::Map { dimensions, .. } => {
            proto.dimensions = dimensions.clone()
        }
        Opcode::Sort { dimension, is_stable, .. } => {
            proto.dimensions = vec![*dimension];
            proto.is_stable = *is_stable;
        }
        Opcode::TopK { k, largest } => {
            proto.k = *k;
            proto.largest = *largest;
        }
        Opcode::RngBitGenerator { algorithm } => {
            proto.rng_algorithm = match algorithm {
                RandomAlgorithm::Default => 0,
                RandomAlgorithm::ThreeFry => 1,
                RandomAlgorithm::Philox => 2,
            }
        }
        Opcode::Dot { numbers, precision } => {
            proto.dot_dimension_numbers = Some(dot_proto(numbers));
            proto.precision_config = Some(precision_proto(precision));
        }
        Opcode::Unary(UnaryOp::ReducePrecision { exponent_bits, mantissa_bits }) => {
            proto.exponent_bits = *exponent_bits;
            proto.mantissa_bits = *mantissa_bits;
        }
        Opcode::Gather { numbers, slice_sizes, indices_are_sorted } => {
            proto.gather_dimension_numbers = Some(gather_proto(numbers));
            proto.gather_slice_sizes = slice_sizes.clone();
            proto.indices_are_sorted = *indices_are_sorted;
        }
        Opcode::Scatter { numbers, indices_are_sorted, unique_indices, .. } => {
            proto.scatter_dimension_numbers = Some(scatter_proto(numbers));
            proto.indices_are_sorted = *indices_are_sorted;
            proto.unique_indices = *unique_indices;
        }
        Opcode::DynamicSlice { slice_sizes } => proto.dynamic_slice_sizes = slice_sizes.clone(),
        Opcode::ReduceWindow { window, .. } | Opcode::SelectAndScatter { window, .. } => {
            proto.window = Some(window_proto(window))
        }
        Opcode::Convolution { window, numbers, feature_group_count, batch_group_count, precision } => {
            proto.window = Some(window_proto(window));
            proto.convolution_dimension_numbers = Some(convolution_proto(numbers));
            proto.feature_group_count = *feature_group_count;
            proto.batch_group_count = *batch_group_count;
            proto.precision_config = Some(precision_proto(precision));
        }
        Opcode::Unary(_)
        | Opcode::Binary(_)
        | Opcode::Select
        | Opcode::Clamp
        | Opcode::Convert
        | Opcode::Reshape
        | Opcode::Tuple
        | Opcode::BitcastConvert
        | Opcode::While { .. }
        | Opcode::Conditional { .. }
        | Opcode::Call { .. }
        | Opcode::DynamicUpdateSlice => {}
    }
    proto
}

/// A literal in the dense layout of `shape` (the instruction's: XLA asks the two to agree).
fn literal_proto(literal: &Literal, shape: &Shape) -> LiteralProto {
    if literal.is_tuple() {
        let elements = (0..literal.shape().tuple_shapes().len())
            .filter_map(|i| literal.tuple_element(i).ok())
            .zip(shape.tuple_shapes().iter().chain(std::iter::repeat(shape)))
            .map(|(element, element_shape)| {
                let element_shape = if element_shape.is_tuple() == element.is_tuple() {
                    element_shape
                } else {
                    element.shape()
                };
                literal_proto(element, element_shape)
            })
            .collect();
        return LiteralProto {
            shape: Some(shape_proto(literal.shape())),
            tuple_literals: elements,
            ..Default::default()
        };
    }
    let dense = shape.layout().without_padding();
    let laid_out = if shape.is_tuple() || shape.dimensions() != literal.shape().dimensions() {
        literal.relayout(&literal.shape().layout().without_padding())
    } else {
        literal.relayout(&dense)
    };
    let literal = laid_out.unwrap_or_else(|_| literal.clone());
    let mut proto = LiteralProto { shape: Some(shape_proto(literal.shape())), ..Default::default() };
    fn values<T: crate::storage::NativeType>(literal: &Literal) -> Vec<T> {
        literal.memory::<T>().map(<[T]>::to_vec).unwrap_or_default()
    }
    fn bytes<T: crate::storage::NativeType>(literal: &Literal, le: impl Fn(T) -> [u8; 2]) -> Vec<u8> {
        values::<T>(literal).into_iter().flat_map(le).collect()
    }
    match literal.element_type() {
        ElementType::Pred => proto.preds = values(&literal),
        ElementType::S8 => proto.s8s = values::<i8>(&literal).into_iter().map(|v| v as u8).collect(),
        ElementType::U8 => proto.u8s = values(&literal),
        ElementType::S16 => proto.s16s = bytes::<i16>(&literal, i16::to_le_bytes),
        ElementType::U16 => proto.u16s = bytes::<u16>(&literal, u16::to_le_bytes),
        ElementType::F16 => proto.f16s = bytes::<half::f16>(&literal, half::f16::to_le_bytes),
        ElementType::Bf16 => proto.bf16s = bytes::<half::bf16>(&literal, half::bf16::to_le_bytes),
        ElementType::S32 => proto.s32s = values(&literal),
        ElementType::S64 => proto.s64s = values(&literal),
        ElementType::U32 => proto.u32s = values(&literal),
        ElementType::U64 => proto.u64s = values(&literal),
        ElementType::F32 => proto.f32s = values(&literal),
        ElementType::F64 => proto.f64s = values(&literal),
    }
    proto
}

fn padding_proto(config: &PaddingConfig) -> PaddingConfigProto {
    PaddingConfigProto {
        dimensions: config
            .dimensions
            .iter()
            .map(|d| PaddingConfigDimensionProto {
                edge_padding_low: d.edge_padding_low,
                edge_padding_high: d.edge_padding_high,
                interior_padding: d.interior_padding,
            })
            .collect(),
    }
}

fn dot_proto(numbers: &DotDimensionNumbers) -> DotDimensionNumbersProto {
    DotDimensionNumbersProto {
        lhs_contracting_dimensions: numbers.lhs_contracting_dimensions.clone(),
        rhs_contracting_dimensions: numbers.rhs_contracting_dimensions.clone(),
        lhs_batch_dimensions: numbers.lhs_batch_dimensions.clone(),
        rhs_batch_dimensions: numbers.rhs_batch_dimensions.clone(),
    }
}

/// Two entries at least (XLA's dots and convolutions have one per operand); a config that is
/// all `Default`, however long, is written as two, as the decoder reads any such config as
/// the empty one, so that a proto read back writes the same bytes.
fn precision_proto(config: &PrecisionConfig) -> PrecisionConfigProto {
    if config.operand_precision.iter().all(|&p| p == Precision::Default) {
        return PrecisionConfigProto { operand_precision: vec![0, 0], algorithm: 0 };
    }
    let mut operand_precision: Vec<i32> = config
        .operand_precision
        .iter()
        .map(|p| match p {
            Precision::Default => 0,
            Precision::High => 1,
            Precision::Highest => 2,
        })
        .collect();
    operand_precision.resize(operand_precision.len().max(2), 0);
    PrecisionConfigProto { operand_precision, algorithm: 0 }
}

fn gather_proto(numbers: &GatherDimensionNumbers) -> GatherDimensionNumbersProto {
    GatherDimensionNumbersProto {
        offset_dims: numbers.offset_dims.clone(),
        collapsed_slice_dims: numbers.collapsed_slice_dims.clone(),
        start_index_map: numbers.start_index_map.clone(),
        index_vector_dim: numbers.index_vector_dim,
        operand_batching_dims: numbers.operand_batching_dims.clone(),
        start_indices_batching_dims: numbers.start_indices_batching_dims.clone(),
    }
}

fn scatter_proto(numbers: &ScatterDimensionNumbers) -> ScatterDimensionNumbersProto {
    ScatterDimensionNumbersProto {
        update_window_dims: numbers.update_window_dims.clone(),
        inserted_window_dims: numbers.inserted_window_dims.clone(),
        scatter_dims_to_operand_dims: numbers.scatter_dims_to_operand_dims.clone(),
        index_vector_dim: numbers.index_vector_dim,
        input_batching_dims: numbers.input_batching_dims.clone(),
        scatter_indices_batching_dims: numbers.scatter_indices_batching_dims.clone(),
    }
}

fn window_proto(window: &Window) -> WindowProto {
    WindowProto {
        dimensions: window
            .dimensions
            .iter()
            .map(|d| WindowDimensionProto {
                size: d.size,
                stride: d.stride,
                padding_low: d.padding_low,
                padding_high: d.padding_high,
                window_dilation: d.window_dilation,
                base_dilation: d.base_dilation,
                window_reversal: false,
            })
            .collect(),
    }
}

fn convolution_proto(numbers: &ConvolutionDimensionNumbers) -> ConvolutionDimensionNumbersProto {
    ConvolutionDimensionNumbersProto {
        input_batch_dimension: numbers.input_batch_dimension,
        input_feature_dimension: numbers.input_feature_dimension,
        input_spatial_dimensions: numbers.input_spatial_dimensions.clone(),
        kernel_input_feature_dimension: numbers.kernel_input_feature_dimension,
        kernel_output_feature_dimension: numbers.kernel_output_feature_dimension,
        kernel_spatial_dimensions: numbers.kernel_spatial_dimensions.clone(),
        output_batch_dimension: numbers.output_batch_dimension,
        output_feature_dimension: numbers.output_feature_dimension,
        output_spatial_dimensions: numbers.output_spatial_dimensions.clone(),
    }
}
