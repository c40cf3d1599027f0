//! The shape each instruction must have, given its operands: shape inference applied to the IR,
//! as XLA's `HloVerifier` applies it, for the verifier and for anything that makes
//! instructions without the builder.
//!
//! At the IR level the builder's lowering has already happened: element-wise operands have
//! the result's dimensions and one element type (broadcasts and converts are explicit), so
//! these rules are stricter than the builder's; the executor relies on them.

use crate::element_type::ElementType;
use crate::error::{invalid_argument, Result};
use crate::hlo::ir::Opcode;
use crate::shape::Shape;
use crate::shape_inference::bitcast::bitcast_convert_shape;
use crate::shape_inference::broadcast::hlo_broadcast_shape;
use crate::shape_inference::control::{call_shape, conditional_shape, map_shape, while_shape};
use crate::shape_inference::convolution::convolve_shape;
use crate::shape_inference::dot::dot_shape;
use crate::shape_inference::dynamic_slice::{dynamic_slice_shape, dynamic_update_slice_shape};
use crate::shape_inference::elementwise::{
    binary_shape, clamp_shape, compare_shape, select_shape, unary_shape,
};
use crate::shape_inference::gather::{gather_shape, scatter_shape};
use crate::shape_inference::random::rng_bit_generator_shape;
use crate::shape_inference::reduce::reduce_shape;
use crate::shape_inference::shape_ops::{
    concatenate_shape, iota_shape, pad_shape, reshape_shape, reverse_shape, slice_shape, transpose_shape,
};
use crate::shape_inference::sort::{sort_shape, top_k_shape};
use crate::shape_inference::tuple::get_tuple_element_shape;
use crate::shape_inference::window::{reduce_window_shape, select_and_scatter_shape};

/// The shape an instruction of `opcode` over operands of `operands` shapes must have, or
/// shape inference's rejection. Opcodes whose shape is an attribute of their own (parameter,
/// iota, broadcast, reshape, convert) check `declared` for consistency and return it. Only
/// dimensions and element type are meaningful: a layout is the instruction's own choice.
pub(crate) fn infer_shape(opcode: &Opcode, operands: &[&Shape], declared: &Shape) -> Result<Shape> {
    check_operand_count(opcode, operands.len())?;
    let may_make_tuples = matches!(
        opcode,
        Opcode::Parameter { .. }
            | Opcode::Constant(_)
            | Opcode::Tuple
            | Opcode::GetTupleElement { .. }
            | Opcode::Reduce { .. }
            | Opcode::Sort { .. }
            | Opcode::TopK { .. }
            | Opcode::RngBitGenerator { .. }
            | Opcode::While { .. }
            | Opcode::Conditional { .. }
            | Opcode::Call { .. }
            | Opcode::Fusion { .. }
    );
    if declared.is_tuple() && !may_make_tuples {
        invalid_argument!("{} makes an array, not {}", opcode.name(), declared.human_string());
    }
    if !opcode.takes_tuples() {
        if let Some(tuple) = operands.iter().find(|s| s.is_tuple()) {
            invalid_argument!(
                "Expected array argument for operand of {}, but got {}.",
                opcode.name(),
                tuple.human_string()
            );
        }
    }
    let first = operands.first().copied();
    let operand = || first.expect("the count was checked");
    match opcode {
        Opcode::Parameter { number } if *number < 0 => {
            invalid_argument!("parameter number {number} is negative")
        }
        Opcode::Parameter { .. } => Ok(declared.clone()),
        Opcode::Constant(literal) => Ok(literal.shape().clone()),
        Opcode::Iota { dimension } => iota_shape(declared, *dimension),
        Opcode::Unary(op) => unary_shape(*op, operand()),
        // XLA's rejection first (what an imported module that lies meets), then the IR's
        // stricter rule.
        Opcode::Binary(op) => {
            let shape = binary_shape(*op, operands[0], operands[1], &[])?;
            same_operands(opcode, operands).map(|()| shape)
        }
        Opcode::Compare(_) => {
            let shape = compare_shape(operands[0], operands[1], &[])?;
            same_operands(opcode, operands).map(|()| shape)
        }
        Opcode::Select => {
            same_operands(opcode, &operands[1..])?;
            select_shape(operands[0], operands[1], operands[2])
        }
        Opcode::Clamp => {
            same_operands(opcode, operands)?;
            clamp_shape(operands[0], operands[1], operands[2])
        }
        Opcode::Convert => {
            if !same_dimensions(operand(), declared) {
                invalid_argument!(
                    "convert changes dimensions: {} to {}",
                    operand().human_string(),
                    declared.human_string()
                );
            }
            Ok(declared.clone())
        }
        Opcode::Broadcast { dimensions } => hlo_broadcast_shape(operand(), declared, dimensions),
        Opcode::Reshape => reshape_shape(operand(), declared.dimensions()),
        Opcode::Transpose { permutation } => transpose_shape(operand(), permutation),
        Opcode::Slice { starts, limits, strides } => slice_shape(operand(), starts, limits, strides),
        Opcode::Tuple => Ok(Shape::tuple(&operands.iter().map(|&s| s.clone()).collect::<Vec<_>>())),
        Opcode::GetTupleElement { index } => get_tuple_element_shape(operand(), *index),
        Opcode::Concatenate { dimension } => {
            same_element_type(opcode, operands)?;
            concatenate_shape(operands, *dimension)
        }
        Opcode::Pad(config) => {
            same_element_type(opcode, operands)?;
            pad_shape(operands[0], operands[1], config)
        }
        Opcode::Reverse { dimensions } => reverse_shape(operand(), dimensions),
        Opcode::Reduce { dimensions, reducer } => {
            let (inputs, inits) = operands.split_at(operands.len() / 2);
            let shape = reduce_shape(inputs, inits, &reducer.program_shape(), dimensions)?;
            // XLA's builder lets float precisions differ; its verifier then refuses them.
            let parameters = reducer.parameters();
            let types = inputs.iter().chain(inits).map(|s| s.element_type());
            let expected =
                parameters.iter().skip(inits.len()).chain(&parameters).map(|p| p.shape.element_type());
            if types.zip(expected).any(|(given, wanted)| given != wanted) {
                invalid_argument!(
                    "Seen floating point types of different precisions in reduce, but mixed precision is disallowed."
                );
            }
            Ok(shape)
        }
        Opcode::While { condition, body } => {
            while_shape(&condition.program_shape(), &body.program_shape(), operand())
        }
        Opcode::Conditional { branches } => {
            let predicated =
                branches.len() == 2 && operand().is_scalar() && operand().element_type() == ElementType::Pred;
            branch_selector(operand(), predicated)?;
            let signatures: Vec<_> = branches.iter().map(|b| b.program_shape()).collect();
            conditional_shape(&signatures.iter().collect::<Vec<_>>(), &operands[1..])
        }
        Opcode::Call { computation } => call_shape(&computation.program_shape(), operands),
        Opcode::Sort { dimension, comparator, .. } => {
            let (shape, resolved) = sort_shape(operands, &comparator.program_shape(), *dimension)?;
            if resolved != *dimension {
                invalid_argument!("sort dimension {dimension} must be resolved to {resolved}");
            }
            Ok(shape)
        }
        Opcode::TopK { k, .. } => top_k_shape(operand(), *k),
        Opcode::RngBitGenerator { algorithm } => {
            rng_bit_generator_shape(*algorithm, operand(), declared.tuple_shapes().get(1).unwrap_or(declared))
        }
        Opcode::BitcastConvert => bitcast_convert_shape(operand(), declared.element_type()),
        Opcode::Map { dimensions, computation } => {
            let signature = computation.program_shape();
            if let Some(operand) = operands.iter().find(|s| s.dimensions() != operands[0].dimensions()) {
                invalid_argument!(
                    "map operands must have equal dimensions: {} and {}",
                    operands[0].human_string(),
                    operand.human_string()
                );
            }
            for ((_, parameter), operand) in signature.parameters.iter().zip(operands) {
                if parameter.is_scalar() && parameter.element_type() != operand.element_type() {
                    invalid_argument!(
                        "map operand {} does not have its parameter's element type {}",
                        operand.human_string(),
                        parameter.element_type()
                    );
                }
            }
            map_shape(operands, &signature, dimensions)
        }
        Opcode::Dot { numbers, .. } => {
            dot_shape(operands[0], operands[1], numbers, Some(declared.element_type()))
        }
        Opcode::Gather { numbers, slice_sizes, .. } => {
            gather_shape(operands[0], operands[1], numbers, slice_sizes)
        }
        Opcode::Scatter { numbers, update, .. } => {
            same_element_type(opcode, &[operands[0], operands[2]])?;
            scatter_shape(operands[0], operands[1], operands[2], &update.program_shape(), numbers)
        }
        Opcode::DynamicSlice { slice_sizes } => dynamic_slice_shape(operand(), &operands[1..], slice_sizes),
        Opcode::DynamicUpdateSlice => {
            same_element_type(opcode, &operands[..2])?;
            dynamic_update_slice_shape(operands[0], operands[1], &operands[2..])
        }
        Opcode::ReduceWindow { window, reducer } => {
            reduce_window_shape(operands[0], operands[1], window, &reducer.program_shape())
        }
        Opcode::SelectAndScatter { window, select, scatter } => select_and_scatter_shape(
            operands[0],
            &select.program_shape(),
            window,
            operands[1],
            operands[2],
            &scatter.program_shape(),
        ),
        Opcode::Convolution { window, numbers, feature_group_count, batch_group_count, .. } => {
            let shape = convolve_shape(
                operands[0],
                operands[1],
                *feature_group_count,
                *batch_group_count,
                window,
                numbers,
            )?;
            // The preferred element type, if any, is the result's own.
            Ok(shape.with_element_type(declared.element_type()))
        }
        Opcode::Fusion { computation, .. } => {
            let parameters = computation.parameters();
            for (number, (parameter, operand)) in parameters.iter().zip(operands).enumerate() {
                if !parameter.shape.same_dimensions_and_type(operand) {
                    invalid_argument!(
                        "fusion operand {number} has shape {} but its fused parameter {} is {}",
                        operand.human_string(),
                        parameter.name,
                        parameter.shape.human_string()
                    );
                }
            }
            Ok(computation.result_shape().clone())
        }
    }
}

/// How many operands an opcode takes.
enum OperandCount {
    Exactly(usize),
    AtLeastOne,
    AtLeastTwo,
    Any,
}

fn operand_count(opcode: &Opcode) -> OperandCount {
    OperandCount::Exactly(match opcode {
        Opcode::Parameter { .. } | Opcode::Constant(_) | Opcode::Iota { .. } => 0,
        Opcode::Unary(_)
        | Opcode::Convert
        | Opcode::Broadcast { .. }
        | Opcode::Reshape
        | Opcode::Transpose { .. }
        | Opcode::Slice { .. }
        | Opcode::Reverse { .. }
        | Opcode::GetTupleElement { .. }
        | Opcode::TopK { .. }
        | Opcode::RngBitGenerator { .. }
        | Opcode::BitcastConvert => 1,
        Opcode::Binary(_)
        | Opcode::Compare(_)
        | Opcode::Pad(_)
        | Opcode::Dot { .. }
        | Opcode::Gather { .. }
        | Opcode::ReduceWindow { .. }
        | Opcode::Convolution { .. } => 2,
        Opcode::Scatter { .. } | Opcode::SelectAndScatter { .. } => 3,
        Opcode::Select | Opcode::Clamp => 3,
        Opcode::While { .. } => 1,
        Opcode::Conditional { branches } => 1 + branches.len(),
        Opcode::Fusion { computation, .. }
        | Opcode::Call { computation }
        | Opcode::Map { computation, .. } => computation.parameters().len(),
        Opcode::Concatenate { .. } | Opcode::Reduce { .. } | Opcode::Sort { .. } => {
            return OperandCount::AtLeastOne
        }
        Opcode::DynamicSlice { .. } => return OperandCount::AtLeastOne,
        Opcode::DynamicUpdateSlice => return OperandCount::AtLeastTwo,
        Opcode::Tuple => return OperandCount::Any,
    })
}

fn check_operand_count(opcode: &Opcode, count: usize) -> Result<()> {
    match operand_count(opcode) {
        OperandCount::Exactly(expected) if expected != count => {
            invalid_argument!("{} takes {expected} operand(s) but has {count}", opcode.name())
        }
        OperandCount::AtLeastOne if count == 0 => {
            invalid_argument!("{} takes at least one operand but has none", opcode.name())
        }
        OperandCount::AtLeastTwo if count < 2 => {
            invalid_argument!("{} takes at least two operands but has {count}", opcode.name())
        }
        _ => Ok(()),
    }
}

/// A conditional's operand 0: a `pred` scalar for the predicated form (two branches), an
/// `s32` scalar for the indexed form (the builder's checks, with XLA's sentences).
pub(crate) fn branch_selector(selector: &Shape, predicated: bool) -> Result<()> {
    let wanted = if predicated { ElementType::Pred } else { ElementType::S32 };
    if selector.is_scalar() && selector.element_type() == wanted {
        return Ok(());
    }
    match predicated {
        true => invalid_argument!(
            "Argument to predicated-Conditional is not a scalar of PRED type ({}).",
            selector.human_string()
        ),
        false => invalid_argument!(
            "Argument to indexed-Conditional is not a scalar of S32 type ({}).",
            selector.human_string()
        ),
    }
}

/// An element-wise instruction's operands: equal dimensions and element types (the builder
/// makes broadcasts and promotions explicit; the loop engine computes in one type).
fn same_operands(opcode: &Opcode, operands: &[&Shape]) -> Result<()> {
    same_element_type(opcode, operands)?;
    if let Some(other) = operands.iter().find(|s| !same_dimensions(s, operands[0])) {
        invalid_argument!(
            "{} operands must have equal dimensions: {} and {}",
            opcode.name(),
            operands[0].human_string(),
            other.human_string()
        );
    }
    Ok(())
}

/// Operands of one element type (concatenate, pad, dot: the builder converts them).
fn same_element_type(opcode: &Opcode, operands: &[&Shape]) -> Result<()> {
    if let Some(other) = operands.iter().find(|s| s.element_type() != operands[0].element_type()) {
        invalid_argument!(
            "{} operands must have one element type: {} and {}",
            opcode.name(),
            operands[0].human_string(),
            other.human_string()
        );
    }
    Ok(())
}

fn same_dimensions(a: &Shape, b: &Shape) -> bool {
    a.dimensions() == b.dimensions()
}
