//! The messages of XLA's `xla/service/hlo.proto` and `xla/xla_data.proto` that a module of
//! lazy-xla's IR needs, with XLA's field numbers (so the bytes are XLA's `HloModuleProto`);
//! every other field of XLA's messages is skipped when read. Enums are kept as their `i32`
//! values (`primitive_type`, `precision`, `rng_algorithm` below).

/// `xla.HloModuleProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct HloModuleProto {
    #[prost(string, tag = "1")]
    pub(crate) name: String,
    #[prost(string, tag = "2")]
    pub(crate) entry_computation_name: String,
    #[prost(int64, tag = "6")]
    pub(crate) entry_computation_id: i64,
    /// Callees before their callers.
    #[prost(message, repeated, tag = "3")]
    pub(crate) computations: Vec<HloComputationProto>,
    #[prost(message, optional, tag = "4")]
    pub(crate) host_program_shape: Option<ProgramShapeProto>,
    #[prost(int64, tag = "5")]
    pub(crate) id: i64,
}

/// `xla.HloComputationProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct HloComputationProto {
    #[prost(string, tag = "1")]
    pub(crate) name: String,
    /// Operands before their users.
    #[prost(message, repeated, tag = "2")]
    pub(crate) instructions: Vec<HloInstructionProto>,
    #[prost(message, optional, tag = "4")]
    pub(crate) program_shape: Option<ProgramShapeProto>,
    #[prost(int64, tag = "5")]
    pub(crate) id: i64,
    #[prost(int64, tag = "6")]
    pub(crate) root_id: i64,
    #[prost(bool, tag = "7")]
    pub(crate) is_fusion_computation: bool,
}

/// `xla.HloInstructionProto.SliceDimensions`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct SliceDimensions {
    #[prost(int64, tag = "1")]
    pub(crate) start: i64,
    #[prost(int64, tag = "2")]
    pub(crate) limit: i64,
    #[prost(int64, tag = "3")]
    pub(crate) stride: i64,
}

/// `xla.HloInstructionProto`: the fields of the opcodes lazy-xla has.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct HloInstructionProto {
    #[prost(string, tag = "1")]
    pub(crate) name: String,
    #[prost(string, tag = "2")]
    pub(crate) opcode: String,
    #[prost(message, optional, tag = "3")]
    pub(crate) shape: Option<ShapeProto>,
    #[prost(message, optional, tag = "8")]
    pub(crate) literal: Option<LiteralProto>,
    #[prost(int64, tag = "9")]
    pub(crate) parameter_number: i64,
    #[prost(string, tag = "11")]
    pub(crate) fusion_kind: String,
    #[prost(int64, tag = "13")]
    pub(crate) tuple_index: i64,
    #[prost(int64, repeated, tag = "14")]
    pub(crate) dimensions: Vec<i64>,
    #[prost(message, optional, tag = "15")]
    pub(crate) window: Option<WindowProto>,
    #[prost(message, optional, tag = "16")]
    pub(crate) convolution_dimension_numbers: Option<ConvolutionDimensionNumbersProto>,
    #[prost(int64, tag = "50")]
    pub(crate) feature_group_count: i64,
    #[prost(int64, tag = "58")]
    pub(crate) batch_group_count: i64,
    #[prost(message, repeated, tag = "17")]
    pub(crate) slice_dimensions: Vec<SliceDimensions>,
    #[prost(int32, tag = "18")]
    pub(crate) exponent_bits: i32,
    #[prost(int32, tag = "19")]
    pub(crate) mantissa_bits: i32,
    #[prost(int64, repeated, tag = "20")]
    pub(crate) dynamic_slice_sizes: Vec<i64>,
    #[prost(message, optional, tag = "21")]
    pub(crate) padding_config: Option<PaddingConfigProto>,
    #[prost(message, optional, tag = "30")]
    pub(crate) dot_dimension_numbers: Option<DotDimensionNumbersProto>,
    #[prost(string, tag = "63")]
    pub(crate) comparison_direction: String,
    #[prost(message, optional, tag = "33")]
    pub(crate) gather_dimension_numbers: Option<GatherDimensionNumbersProto>,
    #[prost(int64, repeated, tag = "34")]
    pub(crate) gather_slice_sizes: Vec<i64>,
    #[prost(int64, tag = "35")]
    pub(crate) id: i64,
    #[prost(int64, repeated, tag = "36")]
    pub(crate) operand_ids: Vec<i64>,
    #[prost(int64, repeated, tag = "37")]
    pub(crate) control_predecessor_ids: Vec<i64>,
    #[prost(int64, repeated, tag = "38")]
    pub(crate) called_computation_ids: Vec<i64>,
    #[prost(bool, tag = "60")]
    pub(crate) is_stable: bool,
    #[prost(message, optional, tag = "48")]
    pub(crate) scatter_dimension_numbers: Option<ScatterDimensionNumbersProto>,
    #[prost(message, optional, tag = "51")]
    pub(crate) precision_config: Option<PrecisionConfigProto>,
    #[prost(bool, tag = "67")]
    pub(crate) indices_are_sorted: bool,
    #[prost(bool, tag = "69")]
    pub(crate) unique_indices: bool,
    /// `xla.RandomAlgorithm`: 0 default, 1 three-fry, 2 philox.
    #[prost(int32, tag = "70")]
    pub(crate) rng_algorithm: i32,
    #[prost(int64, tag = "81")]
    pub(crate) k: i64,
    #[prost(bool, tag = "85")]
    pub(crate) largest: bool,
}

/// `xla.LayoutProto` (dense layouts: the dimension order only).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct LayoutProto {
    #[prost(int64, repeated, tag = "1")]
    pub(crate) minor_to_major: Vec<i64>,
    /// `TileProto`s; lazy-xla has no tiled layouts, so a module with tiles is refused.
    #[prost(message, repeated, tag = "6")]
    pub(crate) tiles: Vec<TileProto>,
}

/// `xla.TileProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TileProto {
    #[prost(int64, repeated, tag = "1")]
    pub(crate) dimensions: Vec<i64>,
}

/// `xla.ShapeProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ShapeProto {
    /// `xla.PrimitiveType`.
    #[prost(int32, tag = "2")]
    pub(crate) element_type: i32,
    #[prost(int64, repeated, tag = "3")]
    pub(crate) dimensions: Vec<i64>,
    #[prost(bool, repeated, tag = "6")]
    pub(crate) is_dynamic_dimension: Vec<bool>,
    #[prost(message, repeated, tag = "4")]
    pub(crate) tuple_shapes: Vec<ShapeProto>,
    #[prost(message, optional, tag = "5")]
    pub(crate) layout: Option<LayoutProto>,
}

/// `xla.ProgramShapeProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ProgramShapeProto {
    #[prost(message, repeated, tag = "1")]
    pub(crate) parameters: Vec<ShapeProto>,
    #[prost(message, optional, tag = "2")]
    pub(crate) result: Option<ShapeProto>,
    #[prost(string, repeated, tag = "3")]
    pub(crate) parameter_names: Vec<String>,
}

/// `xla.LiteralProto`: values in the physical order of the shape's layout; 8- and 16-bit
/// types as little-endian bytes.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct LiteralProto {
    #[prost(message, optional, tag = "1")]
    pub(crate) shape: Option<ShapeProto>,
    #[prost(bool, repeated, tag = "2")]
    pub(crate) preds: Vec<bool>,
    #[prost(bytes = "vec", tag = "15")]
    pub(crate) s8s: Vec<u8>,
    #[prost(bytes = "vec", tag = "3")]
    pub(crate) u8s: Vec<u8>,
    #[prost(int32, repeated, tag = "4")]
    pub(crate) s32s: Vec<i32>,
    #[prost(int64, repeated, tag = "5")]
    pub(crate) s64s: Vec<i64>,
    #[prost(uint32, repeated, tag = "6")]
    pub(crate) u32s: Vec<u32>,
    #[prost(uint64, repeated, tag = "7")]
    pub(crate) u64s: Vec<u64>,
    #[prost(float, repeated, tag = "8")]
    pub(crate) f32s: Vec<f32>,
    #[prost(double, repeated, tag = "9")]
    pub(crate) f64s: Vec<f64>,
    #[prost(message, repeated, tag = "10")]
    pub(crate) tuple_literals: Vec<LiteralProto>,
    #[prost(bytes = "vec", tag = "11")]
    pub(crate) f16s: Vec<u8>,
    #[prost(bytes = "vec", tag = "13")]
    pub(crate) bf16s: Vec<u8>,
    #[prost(bytes = "vec", tag = "16")]
    pub(crate) u16s: Vec<u8>,
    #[prost(bytes = "vec", tag = "17")]
    pub(crate) s16s: Vec<u8>,
}

/// `xla.WindowDimension`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct WindowDimensionProto {
    #[prost(int64, tag = "1")]
    pub(crate) size: i64,
    #[prost(int64, tag = "2")]
    pub(crate) stride: i64,
    #[prost(int64, tag = "3")]
    pub(crate) padding_low: i64,
    #[prost(int64, tag = "4")]
    pub(crate) padding_high: i64,
    #[prost(int64, tag = "5")]
    pub(crate) window_dilation: i64,
    #[prost(int64, tag = "6")]
    pub(crate) base_dilation: i64,
    #[prost(bool, tag = "7")]
    pub(crate) window_reversal: bool,
}

/// `xla.Window`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct WindowProto {
    #[prost(message, repeated, tag = "1")]
    pub(crate) dimensions: Vec<WindowDimensionProto>,
}

/// `xla.PaddingConfig.PaddingConfigDimension`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct PaddingConfigDimensionProto {
    #[prost(int64, tag = "1")]
    pub(crate) edge_padding_low: i64,
    #[prost(int64, tag = "2")]
    pub(crate) edge_padding_high: i64,
    #[prost(int64, tag = "3")]
    pub(crate) interior_padding: i64,
}

/// `xla.PaddingConfig`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct PaddingConfigProto {
    #[prost(message, repeated, tag = "1")]
    pub(crate) dimensions: Vec<PaddingConfigDimensionProto>,
}

/// `xla.DotDimensionNumbers`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct DotDimensionNumbersProto {
    #[prost(int64, repeated, tag = "1")]
    pub(crate) lhs_contracting_dimensions: Vec<i64>,
    #[prost(int64, repeated, tag = "2")]
    pub(crate) rhs_contracting_dimensions: Vec<i64>,
    #[prost(int64, repeated, tag = "3")]
    pub(crate) lhs_batch_dimensions: Vec<i64>,
    #[prost(int64, repeated, tag = "4")]
    pub(crate) rhs_batch_dimensions: Vec<i64>,
}

/// `xla.GatherDimensionNumbers`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct GatherDimensionNumbersProto {
    #[prost(int64, repeated, tag = "1")]
    pub(crate) offset_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "2")]
    pub(crate) collapsed_slice_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "3")]
    pub(crate) start_index_map: Vec<i64>,
    #[prost(int64, tag = "4")]
    pub(crate) index_vector_dim: i64,
    #[prost(int64, repeated, tag = "5")]
    pub(crate) operand_batching_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "6")]
    pub(crate) start_indices_batching_dims: Vec<i64>,
}

/// `xla.ScatterDimensionNumbers`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ScatterDimensionNumbersProto {
    #[prost(int64, repeated, tag = "1")]
    pub(crate) update_window_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "2")]
    pub(crate) inserted_window_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "3")]
    pub(crate) scatter_dims_to_operand_dims: Vec<i64>,
    #[prost(int64, tag = "4")]
    pub(crate) index_vector_dim: i64,
    #[prost(int64, repeated, tag = "5")]
    pub(crate) input_batching_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "6")]
    pub(crate) scatter_indices_batching_dims: Vec<i64>,
}

/// `xla.ConvolutionDimensionNumbers`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ConvolutionDimensionNumbersProto {
    #[prost(int64, tag = "7")]
    pub(crate) input_batch_dimension: i64,
    #[prost(int64, tag = "8")]
    pub(crate) input_feature_dimension: i64,
    #[prost(int64, repeated, tag = "11")]
    pub(crate) input_spatial_dimensions: Vec<i64>,
    #[prost(int64, tag = "3")]
    pub(crate) kernel_input_feature_dimension: i64,
    #[prost(int64, tag = "4")]
    pub(crate) kernel_output_feature_dimension: i64,
    #[prost(int64, repeated, tag = "6")]
    pub(crate) kernel_spatial_dimensions: Vec<i64>,
    #[prost(int64, tag = "9")]
    pub(crate) output_batch_dimension: i64,
    #[prost(int64, tag = "10")]
    pub(crate) output_feature_dimension: i64,
    #[prost(int64, repeated, tag = "12")]
    pub(crate) output_spatial_dimensions: Vec<i64>,
}

/// `xla.PrecisionConfig`: `operand_precision` as `Precision` values (0 default, 1 high,
/// 2 highest).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct PrecisionConfigProto {
    #[prost(int32, repeated, tag = "1")]
    pub(crate) operand_precision: Vec<i32>,
    /// `Algorithm`; lazy-xla has none but `ALG_UNSET` (0).
    #[prost(int32, tag = "2")]
    pub(crate) algorithm: i32,
}
