//! XLA's messages to the IR: computations in the module's order (each may call only those
//! before it, as XLA writes them), instructions in theirs (each reads only those before it),
//! every opcode's attributes read from its fields; then the whole entry is verified as an
//! imported text is (`hlo::verify`: every shape checked by shape inference). Whatever the
//! bytes hold, the answer is a computation or an [`Error::HloProto`] saying what is wrong.

use std::collections::HashMap;
use std::sync::Arc;

use crate::attributes::{
    BinaryOp, ComparisonDirection, ConvolutionDimensionNumbers, DotDimensionNumbers, GatherDimensionNumbers,
    PaddingConfig, PaddingConfigDimension, Precision, PrecisionConfig, RandomAlgorithm,
    ScatterDimensionNumbers, UnaryOp, Window, WindowDimension,
};
use crate::element_type::ElementType;
use crate::error::{Error, Result};
use crate::hlo::ir::{FusionKind, HloComputation, Instruction, InstructionId, Opcode};
use crate::hlo::proto::encode::TUPLE;
use crate::hlo::proto::messages::*;
use crate::literal::Literal;
use crate::shape::Shape;

/// Tuples nest at most this deep in a shape or a literal (a bound on recursion; prost bounds
/// message nesting too).
const MAX_TUPLE_DEPTH: usize = 64;

/// An [`Error::HloProto`] from anything printable.
fn error(message: impl Into<String>) -> Error {
    Error::HloProto(message.into())
}

/// The entry computation of the serialized `HloModuleProto` in `bytes`.
pub(crate) fn module(bytes: &[u8]) -> Result<HloComputation> {
    let module = <HloModuleProto as prost::Message>::decode(bytes)
        .map_err(|e| error(format!("the bytes are not a serialized HloModuleProto: {e}")))?;
    if module.computations.is_empty() {
        return Err(error(format!("module {:?} has no computations", module.name)));
    }
    let mut built: HashMap<i64, Arc<HloComputation>> = HashMap::new();
    let mut order = Vec::with_capacity(module.computations.len());
    for proto in &module.computations {
        let computation = Arc::new(computation(proto, &built)?);
        if built.insert(proto.id, computation).is_some() {
            return Err(error(format!(
                "computation id {} is used twice (computation {})",
                proto.id, proto.name
            )));
        }
        order.push(proto.id);
    }
    let by_id = built
        .get(&module.entry_computation_id)
        .filter(|c| module.entry_computation_name.is_empty() || c.name == module.entry_computation_name);
    let by_name = || {
        let named = module.computations.iter().find(|c| c.name == module.entry_computation_name);
        named.and_then(|c| built.get(&c.id))
    };
    let last = order.last().and_then(|id| built.get(id));
    let entry = by_id.or_else(by_name).or(last).cloned().ok_or_else(|| error("the module has no entry"))?;
    drop(built);
    let entry = Arc::unwrap_or_clone(entry);
    crate::hlo::verify::verify(&entry, "proto import")?;
    Ok(entry)
}

fn computation(
    proto: &HloComputationProto,
    built: &HashMap<i64, Arc<HloComputation>>,
) -> Result<HloComputation> {
    let mut ids: HashMap<i64, InstructionId> = HashMap::new();
    let mut instructions = Vec::with_capacity(proto.instructions.len());
    for ip in &proto.instructions {
        let context = || format!("instruction {} (id {}) of computation {}", ip.name, ip.id, proto.name);
        let at = |e: Error| match e {
            Error::HloProto(message) => error(format!("{message}, in {}", context())),
            other => error(format!("{other}, in {}", context())),
        };
        let shape = shape(ip.shape.as_ref().ok_or_else(|| error("no shape")).map_err(at)?, 0).map_err(at)?;
        let operands = ip
            .operand_ids
            .iter()
            .map(|id| {
                ids.get(id)
                    .copied()
                    .ok_or_else(|| error(format!("operand id {id} is not an instruction before it")))
            })
            .collect::<Result<Vec<_>>>()
            .map_err(at)?;
        let called = ip
            .called_computation_ids
            .iter()
            .map(|id| {
                built.get(id).cloned().ok_or_else(|| {
                    error(format!("called computation id {id} is not a computation before it"))
                })
            })
            .collect::<Result<Vec<_>>>()
            .map_err(at)?;
        let opcode = opcode(ip, called, &shape).map_err(at)?;
        if ids.insert(ip.id, instructions.len()).is_some() {
            return Err(at(error("its id is used twice")));
        }
        instructions.push(Instruction { opcode, operands, shape, name: ip.name.clone() });
    }
    let root = *ids.get(&proto.root_id).ok_or_else(|| {
        error(format!("computation {}: root id {} is not one of its instructions", proto.name, proto.root_id))
    })?;
    Ok(HloComputation { name: proto.name.clone(), instructions, root })
}

/// An element type lazy-xla has.
fn element_type(number: i32) -> Result<ElementType> {
    Ok(match number {
        1 => ElementType::Pred,
        2 => ElementType::S8,
        3 => ElementType::S16,
        4 => ElementType::S32,
        5 => ElementType::S64,
        6 => ElementType::U8,
        7 => ElementType::U16,
        8 => ElementType::U32,
        9 => ElementType::U64,
        10 => ElementType::F16,
        11 => ElementType::F32,
        12 => ElementType::F64,
        16 => ElementType::Bf16,
        15 | 18 => {
            return Err(error("complex numbers are out of scope for lazy-xla (element type C64 or C128)"))
        }
        14 | 17 => return Err(error("token and opaque shapes are out of scope for lazy-xla")),
        other => return Err(error(format!("element type {other} is not one lazy-xla has"))),
    })
}

fn shape(proto: &ShapeProto, depth: usize) -> Result<Shape> {
    if proto.element_type == TUPLE {
        if depth >= MAX_TUPLE_DEPTH {
            return Err(error(format!("tuples nest more than {MAX_TUPLE_DEPTH} deep")));
        }
        let elements = proto.tuple_shapes.iter().map(|s| shape(s, depth + 1)).collect::<Result<Vec<_>>>()?;
        return Ok(Shape::tuple(&elements));
    }
    let element_type = element_type(proto.element_type)?;
    if proto.is_dynamic_dimension.iter().any(|&d| d) {
        return Err(error("dynamic dimensions are out of scope for lazy-xla"));
    }
    match &proto.layout {
        Some(layout) if !layout.tiles.is_empty() => Err(error("tiled layouts are out of scope for lazy-xla")),
        Some(layout) if layout.minor_to_major.len() == proto.dimensions.len() => {
            Shape::with_layout(element_type, &proto.dimensions, &layout.minor_to_major)
        }
        Some(layout) if !layout.minor_to_major.is_empty() => Err(error(format!(
            "layout {{{:?}}} has {} entries for a shape of rank {}",
            layout.minor_to_major,
            layout.minor_to_major.len(),
            proto.dimensions.len()
        ))),
        _ => Shape::try_new(element_type, &proto.dimensions),
    }
}

/// The one called computation `opcode` takes.
fn one(called: Vec<Arc<HloComputation>>, opcode: &str) -> Result<Arc<HloComputation>> {
    let count = called.len();
    let mut called = called.into_iter();
    match (called.next(), called.next()) {
        (Some(c), None) => Ok(c),
        _ => Err(error(format!("{opcode} calls one computation, not {count}"))),
    }
}

/// The one entry of `dimensions` that `opcode` takes.
fn single(dimensions: &[i64], opcode: &str) -> Result<i64> {
    match dimensions {
        [d] => Ok(*d),
        _ => Err(error(format!("{opcode} takes one dimension, not {}", dimensions.len()))),
    }
}

fn required<'a, T>(field: &'a Option<T>, name: &str, opcode: &str) -> Result<&'a T> {
    field.as_ref().ok_or_else(|| error(format!("{opcode} needs its {name}")))
}

fn opcode(ip: &HloInstructionProto, called: Vec<Arc<HloComputation>>, result: &Shape) -> Result<Opcode> {
    let name = ip.opcode.as_str();
    let takes_none = |opcode: Opcode| match called.is_empty() {
        true => Ok(opcode),
        false => Err(error(format!("{name} calls no computation, not {}", called.len()))),
    };
    let opcode = match name {
        "parameter" => Opcode::Parameter { number: ip.parameter_number },
        "constant" => {
            let literal = literal(required(&ip.literal, "literal", name)?, 0)?;
            let literal = match literal.shape().is_tuple() || result.is_tuple() {
                false if literal.shape().dimensions() == result.dimensions() && literal.shape() != result => {
                    literal.relayout(&result.layout().without_padding())?
                }
                _ => literal,
            };
            Opcode::Constant(Arc::new(literal))
        }
        "iota" => Opcode::Iota { dimension: single(&ip.dimensions, name)? },
        "compare" => Opcode::Compare(direction(&ip.comparison_direction)?),
        "select" => Opcode::Select,
        "clamp" => Opcode::Clamp,
        "convert" => Opcode::Convert,
        "reshape" => Opcode::Reshape,
        "tuple" => Opcode::Tuple,
        "bitcast-convert" => Opcode::BitcastConvert,
        "dynamic-update-slice" => Opcode::DynamicUpdateSlice,
        "broadcast" => Opcode::Broadcast { dimensions: ip.dimensions.clone() },
        "transpose" => Opcode::Transpose { permutation: ip.dimensions.clone() },
        "reverse" => Opcode::Reverse { dimensions: ip.dimensions.clone() },
        "concatenate" => Opcode::Concatenate { dimension: single(&ip.dimensions, name)? },
        "get-tuple-element" => Opcode::GetTupleElement { index: ip.tuple_index },
        "slice" => Opcode::Slice {
            starts: ip.slice_dimensions.iter().map(|d| d.start).collect(),
            limits: ip.slice_dimensions.iter().map(|d| d.limit).collect(),
            strides: ip.slice_dimensions.iter().map(|d| d.stride).collect(),
        },
        "pad" => Opcode::Pad(padding(required(&ip.padding_config, "padding_config", name)?)),
        "topk" => Opcode::TopK { k: ip.k, largest: ip.largest },
        "rng-bit-generator" => Opcode::RngBitGenerator {
            algorithm: match ip.rng_algorithm {
                0 => RandomAlgorithm::Default,
                1 => RandomAlgorithm::ThreeFry,
                2 => RandomAlgorithm::Philox,
                other => return Err(error(format!("rng_algorithm {other} is not one XLA has"))),
            },
        },
        "dot" => Opcode::Dot {
            numbers: ip.dot_dimension_numbers.as_ref().map(dot).unwrap_or_default(),
            precision: precision(ip.precision_config.as_ref())?,
        },
        "reduce-precision" => Opcode::Unary(UnaryOp::ReducePrecision {
            exponent_bits: ip.exponent_bits,
            mantissa_bits: ip.mantissa_bits,
        }),
        "gather" => Opcode::Gather {
            numbers: gather(required(&ip.gather_dimension_numbers, "gather_dimension_numbers", name)?),
            slice_sizes: ip.gather_slice_sizes.clone(),
            indices_are_sorted: ip.indices_are_sorted,
        },
        "dynamic-slice" => Opcode::DynamicSlice { slice_sizes: ip.dynamic_slice_sizes.clone() },
        "convolution" => Opcode::Convolution {
            window: window(required(&ip.window, "window", name)?)?,
            numbers: convolution(required(
                &ip.convolution_dimension_numbers,
                "convolution_dimension_numbers",
                name,
            )?),
            feature_group_count: ip.feature_group_count.max(1),
            batch_group_count: ip.batch_group_count.max(1),
            precision: precision(ip.precision_config.as_ref())?,
        },
        // The opcodes that call computations.
        "fusion" => {
            let kind = match ip.fusion_kind.as_str() {
                "kLoop" => FusionKind::Loop,
                "kInput" => FusionKind::Input,
                "kOutput" => FusionKind::Output,
                other => return Err(error(format!("fusion kind {other:?} is not one lazy-xla has"))),
            };
            return Ok(Opcode::Fusion { kind, computation: one(called, name)? });
        }
        "reduce" => {
            return Ok(Opcode::Reduce { dimensions: ip.dimensions.clone(), reducer: one(called, name)? })
        }
        "map" => {
            return Ok(Opcode::Map { dimensions: ip.dimensions.clone(), computation: one(called, name)? })
        }
        "call" => return Ok(Opcode::Call { computation: one(called, name)? }),
        "sort" => {
            let dimension = single(&ip.dimensions, name)?;
            return Ok(Opcode::Sort { dimension, is_stable: ip.is_stable, comparator: one(called, name)? });
        }
        "scatter" => {
            let numbers =
                scatter(required(&ip.scatter_dimension_numbers, "scatter_dimension_numbers", name)?);
            return Ok(Opcode::Scatter {
                numbers,
                indices_are_sorted: ip.indices_are_sorted,
                unique_indices: ip.unique_indices,
                update: one(called, name)?,
            });
        }
        "reduce-window" => {
            let window = window(required(&ip.window, "window", name)?)?;
            return Ok(Opcode::ReduceWindow { window, reducer: one(called, name)? });
        }
        "select-and-scatter" => {
            let window = window(required(&ip.window, "window", name)?)?;
            let [select, scatter] = <[_; 2]>::try_from(called)
                .map_err(|c| error(format!("{name} calls two computations, not {}", c.len())))?;
            return Ok(Opcode::SelectAndScatter { window, select, scatter });
        }
        "while" => {
            // XLA lists a loop's body before its condition.
            let [body, condition] = <[_; 2]>::try_from(called)
                .map_err(|c| error(format!("{name} calls two computations, not {}", c.len())))?;
            return Ok(Opcode::While { condition, body });
        }
        "conditional" => {
            if called.is_empty() {
                return Err(error("conditional calls no computation"));
            }
            return Ok(Opcode::Conditional { branches: called });
        }
        other => {
            if let Some(op) = UnaryOp::ALL.into_iter().find(|op| op.hlo_name() == other) {
                Opcode::Unary(op)
            } else if let Some(op) = BinaryOp::ALL.into_iter().find(|op| op.hlo_name() == other) {
                Opcode::Binary(op)
            } else {
                return Err(error(format!("opcode {other:?} is not one lazy-xla has")));
            }
        }
    };
    takes_none(opcode)
}

fn direction(text: &str) -> Result<ComparisonDirection> {
    Ok(match text {
        "EQ" => ComparisonDirection::Eq,
        "NE" => ComparisonDirection::Ne,
        "GE" => ComparisonDirection::Ge,
        "GT" => ComparisonDirection::Gt,
        "LE" => ComparisonDirection::Le,
        "LT" => ComparisonDirection::Lt,
        other => return Err(error(format!("comparison direction {other:?} is not one XLA has"))),
    })
}

fn padding(proto: &PaddingConfigProto) -> PaddingConfig {
    PaddingConfig {
        dimensions: proto
            .dimensions
            .iter()
            .map(|d| PaddingConfigDimension {
                edge_padding_low: d.edge_padding_low,
                edge_padding_high: d.edge_padding_high,
                interior_padding: d.interior_padding,
            })
            .collect(),
    }
}

fn dot(proto: &DotDimensionNumbersProto) -> DotDimensionNumbers {
    DotDimensionNumbers {
        lhs_contracting_dimensions: proto.lhs_contracting_dimensions.clone(),
        rhs_contracting_dimensions: proto.rhs_contracting_dimensions.clone(),
        lhs_batch_dimensions: proto.lhs_batch_dimensions.clone(),
        rhs_batch_dimensions: proto.rhs_batch_dimensions.clone(),
    }
}

/// A precision config; one that is all `Default` reads as the empty one (XLA writes two).
fn precision(proto: Option<&PrecisionConfigProto>) -> Result<PrecisionConfig> {
    let Some(proto) = proto else { return Ok(PrecisionConfig::default()) };
    if proto.algorithm != 0 {
        return Err(error(format!("precision algorithm {} is out of scope for lazy-xla", proto.algorithm)));
    }
    let operand_precision = proto
        .operand_precision
        .iter()
        .map(|&p| match p {
            0 => Ok(Precision::Default),
            1 => Ok(Precision::High),
            2 => Ok(Precision::Highest),
            other => Err(error(format!("operand precision {other} is not one XLA has"))),
        })
        .collect::<Result<Vec<_>>>()?;
    let all_default = operand_precision.iter().all(|&p| p == Precision::Default);
    Ok(PrecisionConfig { operand_precision: if all_default { Vec::new() } else { operand_precision } })
}

fn gather(proto: &GatherDimensionNumbersProto) -> GatherDimensionNumbers {
    GatherDimensionNumbers {
        offset_dims: proto.offset_dims.clone(),
        collapsed_slice_dims: proto.collapsed_slice_dims.clone(),
        start_index_map: proto.start_index_map.clone(),
        index_vector_dim: proto.index_vector_dim,
        operand_batching_dims: proto.operand_batching_dims.clone(),
        start_indices_batching_dims: proto.start_indices_batching_dims.clone(),
    }
}

fn scatter(proto: &ScatterDimensionNumbersProto) -> ScatterDimensionNumbers {
    ScatterDimensionNumbers {
        update_window_dims: proto.update_window_dims.clone(),
        inserted_window_dims: proto.inserted_window_dims.clone(),
        scatter_dims_to_operand_dims: proto.scatter_dims_to_operand_dims.clone(),
        index_vector_dim: proto.index_vector_dim,
        input_batching_dims: proto.input_batching_dims.clone(),
        scatter_indices_batching_dims: proto.scatter_indices_batching_dims.clone(),
    }
}

fn window(proto: &WindowProto) -> Result<Window> {
    let dimensions = proto
        .dimensions
        .iter()
        .map(|d| match d.window_reversal {
            true => Err(error("window reversal is out of scope for lazy-xla")),
            false => Ok(WindowDimension {
                size: d.size,
                stride: d.stride,
                padding_low: d.padding_low,
                padding_high: d.padding_high,
                window_dilation: d.window_dilation,
                base_dilation: d.base_dilation,
            }),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Window { dimensions })
}

fn convolution(proto: &ConvolutionDimensionNumbersProto) -> ConvolutionDimensionNumbers {
    ConvolutionDimensionNumbers {
        input_batch_dimension: proto.input_batch_dimension,
        input_feature_dimension: proto.input_feature_dimension,
        input_spatial_dimensions: proto.input_spatial_dimensions.clone(),
        kernel_input_feature_dimension: proto.kernel_input_feature_dimension,
        kernel_output_feature_dimension: proto.kernel_output_feature_dimension,
        kernel_spatial_dimensions: proto.kernel_spatial_dimensions.clone(),
        output_batch_dimension: proto.output_batch_dimension,
        output_feature_dimension: proto.output_feature_dimension,
        output_spatial_dimensions: proto.output_spatial_dimensions.clone(),
    }
}

/// A literal; its values, in the physical order of its shape's layout, must be exactly as
/// many as its shape has elements (checked before anything is allocated).
fn literal(proto: &LiteralProto, depth: usize) -> Result<Literal> {
    let shape = shape(required(&proto.shape, "shape", "a literal")?, depth)?;
    if shape.is_tuple() {
        if proto.tuple_literals.len() != shape.tuple_shapes().len() {
            return Err(error(format!(
                "a literal of shape {shape} has {} tuple elements",
                proto.tuple_literals.len()
            )));
        }
        let elements =
            proto.tuple_literals.iter().map(|l| literal(l, depth + 1)).collect::<Result<Vec<_>>>()?;
        for (element, expected) in elements.iter().zip(shape.tuple_shapes()) {
            if !element.shape().same_dimensions_and_type(expected) {
                return Err(error(format!(
                    "a tuple literal's element {} is not of shape {expected}",
                    element.shape()
                )));
            }
        }
        return Ok(Literal::tuple(elements));
    }
    let count = shape.element_count();
    let check = |len: usize, bytes: usize, field: &str| match (len / bytes) as i64 == count
        && len.is_multiple_of(bytes)
    {
        true => Ok(()),
        false => Err(error(format!(
            "a literal of shape {shape} needs {count} values, its {field} field holds {}",
            len as f64 / bytes as f64
        ))),
    };
    fn pairs(bytes: &[u8]) -> impl Iterator<Item = [u8; 2]> + '_ {
        bytes.chunks_exact(2).map(|c| [c[0], c[1]])
    }
    let dense = shape.layout().without_padding();
    let shape = shape.relayout(&dense)?;
    match shape.element_type() {
        ElementType::Pred => {
            check(proto.preds.len(), 1, "preds").and_then(|()| physical(&shape, proto.preds.clone()))
        }
        ElementType::S8 => check(proto.s8s.len(), 1, "s8s")
            .and_then(|()| physical(&shape, proto.s8s.iter().map(|&b| b as i8).collect())),
        ElementType::U8 => {
            check(proto.u8s.len(), 1, "u8s").and_then(|()| physical(&shape, proto.u8s.clone()))
        }
        ElementType::S16 => check(proto.s16s.len(), 2, "s16s")
            .and_then(|()| physical(&shape, pairs(&proto.s16s).map(i16::from_le_bytes).collect())),
        ElementType::U16 => check(proto.u16s.len(), 2, "u16s")
            .and_then(|()| physical(&shape, pairs(&proto.u16s).map(u16::from_le_bytes).collect())),
        ElementType::F16 => check(proto.f16s.len(), 2, "f16s")
            .and_then(|()| physical(&shape, pairs(&proto.f16s).map(half::f16::from_le_bytes).collect())),
        ElementType::Bf16 => check(proto.bf16s.len(), 2, "bf16s")
            .and_then(|()| physical(&shape, pairs(&proto.bf16s).map(half::bf16::from_le_bytes).collect())),
        ElementType::S32 => {
            check(proto.s32s.len(), 1, "s32s").and_then(|()| physical(&shape, proto.s32s.clone()))
        }
        ElementType::S64 => {
            check(proto.s64s.len(), 1, "s64s").and_then(|()| physical(&shape, proto.s64s.clone()))
        }
        ElementType::U32 => {
            check(proto.u32s.len(), 1, "u32s").and_then(|()| physical(&shape, proto.u32s.clone()))
        }
        ElementType::U64 => {
            check(proto.u64s.len(), 1, "u64s").and_then(|()| physical(&shape, proto.u64s.clone()))
        }
        ElementType::F32 => {
            check(proto.f32s.len(), 1, "f32s").and_then(|()| physical(&shape, proto.f32s.clone()))
        }
        ElementType::F64 => {
            check(proto.f64s.len(), 1, "f64s").and_then(|()| physical(&shape, proto.f64s.clone()))
        }
    }
}

/// A literal of the dense `shape` whose memory is `values` (as many as its elements).
fn physical<T: crate::storage::NativeType>(shape: &Shape, values: Vec<T>) -> Result<Literal> {
    if shape.layout().is_default() {
        return Literal::from_vec(shape, values);
    }
    let mut literal = Literal::zeros(shape)?;
    literal.storage_mut()?.as_mut_slice::<T>()?.copy_from_slice(&values);
    Ok(literal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::proto::encode::{primitive_type, shape_proto};

    fn parameter(id: i64, shape: &Shape) -> HloInstructionProto {
        HloInstructionProto {
            name: format!("p{id}"),
            opcode: "parameter".into(),
            shape: Some(shape_proto(shape)),
            id,
            ..Default::default()
        }
    }

    /// A module of one computation of `instructions`, its root the last.
    fn module_of(instructions: Vec<HloInstructionProto>) -> Vec<u8> {
        let root_id = instructions.last().map_or(0, |i| i.id);
        let computation =
            HloComputationProto { name: "main".into(), instructions, id: 100, root_id, ..Default::default() };
        let module = HloModuleProto {
            name: "m".into(),
            entry_computation_name: "main".into(),
            entry_computation_id: 100,
            computations: vec![computation],
            ..Default::default()
        };
        prost::Message::encode_to_vec(&module)
    }

    fn refusal(bytes: &[u8]) -> String {
        match module(bytes) {
            Err(Error::HloProto(message)) => message,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn a_well_formed_module_is_read() {
        let f32_2 = Shape::new(ElementType::F32, &[2]);
        let mut add = parameter(2, &f32_2);
        (add.opcode, add.name, add.operand_ids) = ("add".into(), "add".into(), vec![1, 1]);
        let entry = module(&module_of(vec![parameter(1, &f32_2), add])).unwrap();
        assert_eq!(entry.instructions.len(), 2);
        assert_eq!(entry.instructions[1].opcode, Opcode::Binary(BinaryOp::Add));
    }

    #[test]
    fn unknown_opcodes_and_missing_fields_are_refused() {
        let f32_2 = Shape::new(ElementType::F32, &[2]);
        let mut fft = parameter(1, &f32_2);
        fft.opcode = "fft".into();
        assert_eq!(
            refusal(&module_of(vec![fft])),
            "opcode \"fft\" is not one lazy-xla has, in instruction p1 (id 1) of computation main"
        );
        let mut no_shape = parameter(1, &f32_2);
        no_shape.shape = None;
        assert!(refusal(&module_of(vec![no_shape])).starts_with("no shape, in instruction p1"));
        let mut pad = parameter(1, &f32_2);
        pad.opcode = "pad".into();
        assert!(refusal(&module_of(vec![pad])).starts_with("pad needs its padding_config"));
        let mut reduce = parameter(1, &f32_2);
        (reduce.opcode, reduce.called_computation_ids) = ("reduce".into(), vec![7]);
        assert!(refusal(&module_of(vec![reduce]))
            .starts_with("called computation id 7 is not a computation before it"));
    }

    #[test]
    fn ids_must_name_what_comes_before() {
        let f32_2 = Shape::new(ElementType::F32, &[2]);
        let mut negate = parameter(2, &f32_2);
        (negate.opcode, negate.operand_ids) = ("negate".into(), vec![3]);
        assert!(refusal(&module_of(vec![negate, parameter(3, &f32_2)]))
            .starts_with("operand id 3 is not an instruction before it"));
        assert!(refusal(&module_of(vec![parameter(1, &f32_2), parameter(1, &f32_2)]))
            .starts_with("its id is used twice"));
    }

    #[test]
    fn shapes_lazy_xla_lacks_are_refused() {
        let mut complex = parameter(1, &Shape::new(ElementType::F32, &[2]));
        complex.shape.as_mut().unwrap().element_type = 15;
        assert!(refusal(&module_of(vec![complex])).starts_with("complex numbers are out of scope"));
        let mut tiled = parameter(1, &Shape::new(ElementType::F32, &[2]));
        tiled.shape.as_mut().unwrap().layout.as_mut().unwrap().tiles =
            vec![TileProto { dimensions: vec![8] }];
        assert!(refusal(&module_of(vec![tiled])).starts_with("tiled layouts are out of scope"));
        let mut dynamic = parameter(1, &Shape::new(ElementType::F32, &[2]));
        dynamic.shape.as_mut().unwrap().is_dynamic_dimension = vec![true];
        assert!(refusal(&module_of(vec![dynamic])).starts_with("dynamic dimensions are out of scope"));
    }

    #[test]
    fn a_literal_must_hold_its_shapes_values_and_nothing_is_allocated_first() {
        // A constant claiming 2^40 elements with 3 values: refused before any allocation.
        let huge = ShapeProto {
            element_type: primitive_type(ElementType::F32),
            dimensions: vec![1 << 20, 1 << 20],
            layout: Some(LayoutProto { minor_to_major: vec![1, 0], tiles: Vec::new() }),
            ..Default::default()
        };
        let constant = HloInstructionProto {
            name: "c".into(),
            opcode: "constant".into(),
            shape: Some(huge.clone()),
            literal: Some(LiteralProto {
                shape: Some(huge),
                f32s: vec![1.0, 2.0, 3.0],
                ..Default::default()
            }),
            id: 1,
            ..Default::default()
        };
        assert_eq!(
            refusal(&module_of(vec![constant])),
            "a literal of shape f32[1048576,1048576]{1,0} needs 1099511627776 values, its f32s field holds 3, \
             in instruction c (id 1) of computation main"
        );
    }

    #[test]
    fn constants_in_other_layouts_keep_their_values() {
        let shape: Shape = "s32[2,3]{0,1}".parse().unwrap();
        let literal = Literal::from_vec(&shape, vec![1, 2, 3, 4, 5, 6]).unwrap();
        let computation = Arc::new(HloComputation {
            name: "main".into(),
            instructions: vec![Instruction {
                opcode: Opcode::Constant(Arc::new(literal.clone())),
                operands: vec![],
                shape: shape.clone(),
                name: "c".into(),
            }],
            root: 0,
        });
        let bytes = crate::hlo::proto::module_to_proto(&computation);
        let back = module(&bytes).unwrap();
        let Opcode::Constant(read) = &back.instructions[0].opcode else { panic!("a constant") };
        assert_eq!(read.to_vec::<i32>().unwrap(), [1, 2, 3, 4, 5, 6]);
        assert_eq!(read.shape(), &shape);
    }
}
