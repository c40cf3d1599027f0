//! Ops that run other computations: XLA's `InferWhileShape`, `InferConditionalShape`,
//! `InferCallShape` and `InferMapShape`, with XLA's checks in XLA's order and its sentences.

use crate::element_type::ElementType;
use crate::error::{invalid_argument, Result};
use crate::shape::program_shape::ProgramShape;
use crate::shape::Shape;
use crate::shape_inference::{make_shape, same_type_ignoring_fp_precision};

/// `While`: the condition and the body take one parameter each, the condition returns
/// `pred[]`, and the body's parameter and result, the condition's parameter and the init value
/// all have one shape (layouts and nothing else aside). The result is the init's shape, its
/// layout included.
pub(crate) fn while_shape(condition: &ProgramShape, body: &ProgramShape, init: &Shape) -> Result<Shape> {
    if condition.parameters.len() != 1 {
        invalid_argument!("Condition must take 1 arguments; got {}.", condition.parameters.len());
    }
    if body.parameters.len() != 1 {
        invalid_argument!("Body must take 1 arguments; got {}.", body.parameters.len());
    }
    let shapes = || format!("Condition: {condition}; body: {body}; init: {}.", init.human_string());
    if !condition.result.same_dimensions_and_type(&Shape::scalar(ElementType::Pred)) {
        invalid_argument!("Condition must return a boolean; got {}.", shapes());
    }
    let same = [&condition.parameters[0].1, &body.parameters[0].1, init]
        .iter()
        .all(|shape| shape.same_dimensions_and_type(&body.result));
    if !same {
        invalid_argument!(
            "The parameter of condition and body, the result of the body, and init must all have the \
             same shape; got {}.",
            shapes()
        );
    }
    Ok(init.clone())
}

/// `Conditional` (both forms, after the builder checked the predicate or index): one branch per
/// operand, each taking one parameter of its operand's shape and returning branch 0's result
/// shape, which is the result (its layout included).
pub(crate) fn conditional_shape(branches: &[&ProgramShape], operands: &[&Shape]) -> Result<Shape> {
    if branches.is_empty() {
        invalid_argument!(
            "RET_CHECK failure (external/xla/xla/service/shape_inference.cc:3582) !branch_computations.empty() "
        );
    }
    if branches.len() != operands.len() {
        invalid_argument!(
            "RET_CHECK failure (external/xla/xla/service/shape_inference.cc:3584) \
             branch_computations.size() == branch_operands.size() "
        );
    }
    for (j, (branch, operand)) in branches.iter().zip(operands).enumerate() {
        if branch.parameters.len() != 1 {
            invalid_argument!(
                "branch computation {j} must take 1 argument; got {}.",
                branch.parameters.len()
            );
        }
        if !branch.parameters[0].1.same_dimensions_and_type(operand) {
            invalid_argument!(
                "branch operand {j} must match the shape of the only parameter of branch computation {j}: \
                 got operand: {}; computation: {branch}.",
                operand.human_string()
            );
        }
        if !branch.result.same_dimensions_and_type(&branches[0].result) {
            invalid_argument!(
                "the result of branch 0 computation and branch {j} computation must have the same shape: \
                 got branch 0 computation result: {}; branch {j} computation result: {}.",
                branches[0].result.human_string(),
                branch.result.human_string()
            );
        }
    }
    Ok(branches[0].result.clone())
}

/// `Call`: one argument per parameter, each of its parameter's shape (layouts aside); the
/// result is the computation's result shape.
pub(crate) fn call_shape(computation: &ProgramShape, arguments: &[&Shape]) -> Result<Shape> {
    if computation.parameters.len() != arguments.len() {
        let shapes: Vec<String> = arguments.iter().map(|s| s.human_string()).collect();
        invalid_argument!(
            "Call applied function arity must match number of arguments; got: arity: {}, arguments: {}; \
             computation signature: {computation}; argument shapes: [{}].",
            computation.parameters.len(),
            arguments.len(),
            shapes.join(", ")
        );
    }
    for (i, ((_, parameter), argument)) in computation.parameters.iter().zip(arguments).enumerate() {
        if !parameter.same_dimensions_and_type(argument) {
            invalid_argument!(
                "Call parameter must match argument; got parameter {i} shape: {}, argument shape: {}.",
                parameter.human_string(),
                argument.human_string()
            );
        }
    }
    Ok(computation.result.clone())
}

/// `Map`: operands of one shape (a scalar of the same element type may stand for any), mapped
/// over all their dimensions in order by a scalar computation taking one scalar per operand.
/// The result has the operands' dimensions, the computation's element type and the default
/// layout.
pub(crate) fn map_shape(
    operands: &[&Shape],
    computation: &ProgramShape,
    dimensions: &[i64],
) -> Result<Shape> {
    let Some(&first) = operands.first() else {
        invalid_argument!("Map expects at least one argument.");
    };
    let mut arg_shape = first;
    for &operand in &operands[1..] {
        if operand.is_tuple() {
            invalid_argument!(
                "Expected array argument for operand of map, but got {}.",
                operand.human_string()
            );
        }
        if operand.dimensions() == arg_shape.dimensions() {
            continue;
        }
        let same_type = same_type_ignoring_fp_precision(operand.element_type(), arg_shape.element_type());
        if same_type && operand.is_scalar() {
            continue;
        }
        if same_type && arg_shape.is_scalar() {
            arg_shape = operand;
            continue;
        }
        let shapes: Vec<String> = operands.iter().map(|s| s.human_string()).collect();
        invalid_argument!(
            "Map operation requires all operands to have the same shape; got: {}.",
            shapes.join(", ")
        );
    }
    if dimensions.len() != arg_shape.rank() {
        invalid_argument!(
            "Map applied to a subset of dimensions currently not supported: arg_dimension_size: {}, \
             requested_map_dimensions_size: {}.",
            arg_shape.rank(),
            dimensions.len()
        );
    }
    if dimensions.iter().enumerate().any(|(i, &d)| d != i as i64) {
        let listed: Vec<String> = dimensions.iter().map(i64::to_string).collect();
        invalid_argument!(
            "Map requires monotonically increasing dimension numbers; got: {}.",
            listed.join(", ")
        );
    }
    if computation.parameters.len() != operands.len() {
        invalid_argument!(
            "Map applied function arity must match number of arguments; got: arity: {}, arguments: {}.",
            computation.parameters.len(),
            operands.len()
        );
    }
    if !computation.result.is_scalar() {
        invalid_argument!(
            "Mapped computation's result has to be a scalar; got: {}.",
            computation.result.human_string()
        );
    }
    for (i, ((_, parameter), operand)) in computation.parameters.iter().zip(operands).enumerate() {
        if !parameter.is_scalar() {
            invalid_argument!(
                "Mapped computation's parameter has to be a scalar; got parameter {i} shape: {}.",
                parameter.human_string()
            );
        }
        if !same_type_ignoring_fp_precision(parameter.element_type(), operand.element_type()) {
            invalid_argument!(
                "Mapped computation's parameter type has to match argument element type; got parameter {i} \
                 shape: {}, argument shape: {}.",
                parameter.human_string(),
                arg_shape.human_string()
            );
        }
    }
    make_shape(computation.result.element_type(), arg_shape.dimensions())
}
