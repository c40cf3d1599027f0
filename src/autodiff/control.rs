//! `while` and `conditional` (jax's `control_flow/loops.py` and `conditionals.py`). Their
//! bodies and branches are differentiated by walks of their own, in builders of their own, and
//! the derivative is again a while or a conditional:
//!
//! - forward mode, any while: a while carrying the carry's arrays and the tangents of those
//!   that have one (a fixed point: an array has a tangent if its initial value has one or the
//!   body gives it one), whose body is the body's JVP;
//! - reverse mode, a while whose trip count `T` is fixed at compile time (a counter in the
//!   carried tuple, initialized by a constant, stepped by a constant in the body, compared with a
//!   constant: jax's `scan` and `fori_loop` with static bounds): the body's VJP split into a
//!   forward and a backward part (`residuals.rs`); a forward while running the first, which
//!   also writes the carry's arrays that the second reads and the body changes, and the
//!   trip's residuals, into stacks of `T` (`dynamic_update_slice` at the trip), then, as the
//!   transpose, a backward while of `T` trips that reads trip `T - 1 - i`'s state and
//!   residuals (`dynamic_slice`) and runs the second; integer arrays (counters) get no
//!   cotangent. Any other while is
//!   refused in reverse mode with an error naming it (jax refuses it too);
//! - conditionals, predicated and indexed: forward mode, the conditional of the branches'
//!   JVPs; reverse mode, the conditional of the branches' VJPs, each recomputing its branch's
//!   primal from its operand and returning zeros for the other branches' operands.
//!
//! Values are handled as their arrays (a tuple's leaves, in order), so carries and operands may
//! be nested tuples. The walk is handed in (`Walk`), so this file does not import `walk.rs`.

use std::panic::Location;

use crate::attributes::{BinaryOp, ComparisonDirection};
use crate::autodiff::residuals::SplitVjp;
use crate::autodiff::tape::{zeros, Tan, Tape, Tid, Transpose};
use crate::builder::{
    conditional as predicated_conditional, conditional_indexed, dynamic_slice, dynamic_update_slice,
    get_tuple_element, lt, reshape, tuple, while_loop as record_while, XlaBuilder, XlaOp,
};
use crate::element_type::ElementType;
use crate::error::{Error, Result};
use crate::hlo::computation::XlaComputation;
use crate::hlo::ir::{base_name, HloComputation, Instruction, InstructionId, Opcode};
use crate::shape::Shape;

/// `walk.rs`'s walk: the primal value and tangent of a computation's root from its parameters'.
pub(super) type Walk =
    for<'c> fn(&mut Tape<'c>, &HloComputation, &[(XlaOp<'c>, Tan)]) -> Result<(XlaOp<'c>, Tan)>;

// ---- values as their arrays ----

/// The arrays a value of `shape` holds, in order.
fn leaf_shapes(shape: &Shape) -> Vec<Shape> {
    if shape.is_tuple() {
        shape.tuple_shapes().iter().flat_map(leaf_shapes).collect()
    } else {
        vec![shape.clone()]
    }
}

/// The arrays of `value` (of `shape`).
fn flatten<'b>(value: XlaOp<'b>, shape: &Shape) -> Vec<XlaOp<'b>> {
    if !shape.is_tuple() {
        return vec![value];
    }
    let elements = shape.tuple_shapes().iter().enumerate();
    elements.flat_map(|(i, s)| flatten(get_tuple_element(value, i as i64), s)).collect()
}

/// The value of `shape` made of the next arrays of `leaves`.
fn rebuild<'b>(
    builder: &'b XlaBuilder,
    leaves: &mut impl Iterator<Item = XlaOp<'b>>,
    shape: &Shape,
) -> XlaOp<'b> {
    if !shape.is_tuple() {
        return leaves.next().unwrap_or_else(|| zeros(builder, shape));
    }
    let elements: Vec<XlaOp<'b>> = shape.tuple_shapes().iter().map(|s| rebuild(builder, leaves, s)).collect();
    tuple(builder, &elements)
}

/// The tangents of the arrays of a value of `shape`.
fn flatten_tangent(tangent: &Tan, shape: &Shape) -> Vec<Option<Tid>> {
    if !shape.is_tuple() {
        return vec![tangent.array()];
    }
    let elements = shape.tuple_shapes().iter().enumerate();
    elements.flat_map(|(i, s)| flatten_tangent(&tangent.element(i), s)).collect()
}

/// The tangent of a value of `shape` from its arrays' tangents.
fn rebuild_tangent(leaves: &mut impl Iterator<Item = Option<Tid>>, shape: &Shape) -> Tan {
    if !shape.is_tuple() {
        return leaves.next().flatten().map_or(Tan::Zero, Tan::Array);
    }
    Tan::Tuple(shape.tuple_shapes().iter().map(|s| rebuild_tangent(leaves, s)).collect())
}

/// Parameter 0 of `builder`, a tuple of the arrays `shapes`, as its elements.
fn flat_parameter<'c>(builder: &'c XlaBuilder, shapes: &[Shape], name: &str) -> Vec<XlaOp<'c>> {
    let parameter = builder.parameter(0, &Shape::tuple(shapes), name);
    (0..shapes.len()).map(|i| get_tuple_element(parameter, i as i64)).collect()
}

/// The shapes of the arrays `shapes` where `mask` holds.
fn masked(shapes: &[Shape], mask: &[bool]) -> Vec<Shape> {
    shapes.iter().zip(mask).filter(|(_, &m)| m).map(|(s, _)| s.clone()).collect()
}

/// The shape of a computation's only parameter.
fn parameter_shape(computation: &HloComputation) -> Shape {
    computation.parameters().first().map_or_else(|| Shape::tuple(&[]), |p| p.shape.clone())
}

// ---- walks of a body or branch ----

/// `computation` (of one parameter) walked on a value given as its arrays and their tangents:
/// the result's arrays and their tangents.
fn walk_arrays<'c>(
    walk: Walk,
    tape: &mut Tape<'c>,
    computation: &HloComputation,
    arrays: Vec<XlaOp<'c>>,
    tangents: Vec<Option<Tid>>,
) -> Result<(Vec<XlaOp<'c>>, Vec<Option<Tid>>)> {
    let shape = parameter_shape(computation);
    let value = rebuild(tape.builder, &mut arrays.into_iter(), &shape);
    let tangent = rebuild_tangent(&mut tangents.into_iter(), &shape);
    let (result, result_tangent) = walk(tape, computation, &[(value, tangent)])?;
    let result_shape = computation.result_shape();
    Ok((flatten(result, result_shape), flatten_tangent(&result_tangent, result_shape)))
}

/// `computation`'s instructions copied onto `value` (no derivative).
fn copy<'c>(
    walk: Walk,
    builder: &'c XlaBuilder,
    location: &'static Location<'static>,
    computation: &HloComputation,
    value: XlaOp<'c>,
) -> Result<XlaOp<'c>> {
    let mut tape = Tape::new(builder, false, location);
    Ok(walk(&mut tape, computation, &[(value, Tan::Zero)])?.0)
}

/// Which of `computation`'s result arrays have a tangent when the arrays `active` of its
/// parameter have one, in the mode `forward` (a walk in a builder of its own, then dropped).
fn active_outputs(
    walk: Walk,
    location: &'static Location<'static>,
    forward: bool,
    computation: &HloComputation,
    active: &[bool],
) -> Result<Vec<bool>> {
    let shapes = leaf_shapes(&parameter_shape(computation));
    let builder = XlaBuilder::new("probe");
    let arrays = flat_parameter(&builder, &shapes, "value");
    let mut tape = Tape::new(&builder, forward, location);
    let mut tangents = Vec::new();
    for ((shape, &on), &array) in shapes.iter().zip(active).zip(&arrays) {
        tangents.push(on.then(|| tape.input(shape, Some(array))));
    }
    let (_, out) = walk_arrays(walk, &mut tape, computation, arrays, tangents)?;
    Ok(out.iter().map(Option::is_some).collect())
}

/// `computation`'s result arrays from `primal` in `builder`, and the cotangents of its
/// parameter arrays `active` (`None`: zero) from those of its result arrays (`cotangents`, one
/// per array).
fn vjp_arrays<'c>(
    walk: Walk,
    builder: &'c XlaBuilder,
    location: &'static Location<'static>,
    computation: &HloComputation,
    primal: Vec<XlaOp<'c>>,
    active: &[bool],
    cotangents: &[Option<XlaOp<'c>>],
) -> Result<(Vec<XlaOp<'c>>, Vec<Option<XlaOp<'c>>>)> {
    let shapes = leaf_shapes(&parameter_shape(computation));
    let mut tape = Tape::new(builder, false, location);
    let mut inputs = Vec::new();
    for (shape, &on) in shapes.iter().zip(active) {
        inputs.push(on.then(|| tape.input(shape, None)));
    }
    let (results, out) = walk_arrays(walk, &mut tape, computation, primal, inputs.clone())?;
    let seeds = out.iter().zip(cotangents).filter_map(|(t, c)| Some(((*t)?, (*c)?))).collect();
    let all = tape.transpose(seeds);
    Ok((results, inputs.iter().map(|input| input.and_then(|id| all[id])).collect()))
}

/// The VJP of a loop body (from the result arrays `active` to the parameter arrays `active`),
/// built on a probe of its own and split into the part that runs forward, computing the
/// body's result and the residuals, and the part that runs backward from them
/// (`residuals.rs`).
fn split_vjp(
    walk: Walk,
    location: &'static Location<'static>,
    body: &HloComputation,
    active: &[bool],
) -> Result<SplitVjp> {
    let shapes = leaf_shapes(&parameter_shape(body));
    let builder = XlaBuilder::new(&format!("vjp_{}", base_name(&body.name)));
    let primal: Vec<XlaOp<'_>> =
        shapes.iter().enumerate().map(|(k, s)| builder.parameter(k as i64, s, "primal")).collect();
    let mut number = shapes.len() as i64;
    let cotangents: Vec<Option<XlaOp<'_>>> = leaf_shapes(body.result_shape())
        .iter()
        .zip(active)
        .map(|(shape, &on)| {
            on.then(|| {
                number += 1;
                builder.parameter(number - 1, shape, "cotangent")
            })
        })
        .collect();
    let (results, parts) = vjp_arrays(walk, &builder, location, body, primal, active, &cotangents)?;
    let parts = (parts.into_iter().zip(&shapes).zip(active).filter(|(_, &on)| on))
        .map(|((part, shape), _)| part.unwrap_or_else(|| zeros(&builder, shape)));
    let root: Vec<XlaOp<'_>> = results.iter().copied().chain(parts).collect();
    Ok(SplitVjp::new(builder.build(tuple(&builder, &root))?, shapes.len(), results.len()))
}

/// `builder`'s conditional on `selector` (a `pred`: branches true, false; an `s32`: indexed).
fn record_conditional<'b>(
    selector: XlaOp<'b>,
    predicated: bool,
    branches: &[XlaComputation],
    operands: &[XlaOp<'b>],
) -> XlaOp<'b> {
    if predicated && branches.len() == 2 && operands.len() == 2 {
        predicated_conditional(selector, operands[0], &branches[0], operands[1], &branches[1])
    } else {
        let branches: Vec<&XlaComputation> = branches.iter().collect();
        conditional_indexed(selector, &branches, operands)
    }
}

// ---- while ----

/// The integer value of a scalar integer constant.
fn integer(instruction: &Instruction) -> Option<i64> {
    let Opcode::Constant(literal) = &instruction.opcode else { return None };
    if !instruction.shape.dimensions().is_empty() {
        return None;
    }
    match literal.element_type() {
        ElementType::S8 => literal.get::<i8>(&[]).ok().map(i64::from),
        ElementType::S16 => literal.get::<i16>(&[]).ok().map(i64::from),
        ElementType::S32 => literal.get::<i32>(&[]).ok().map(i64::from),
        ElementType::S64 => literal.get::<i64>(&[]).ok(),
        ElementType::U8 => literal.get::<u8>(&[]).ok().map(i64::from),
        ElementType::U16 => literal.get::<u16>(&[]).ok().map(i64::from),
        ElementType::U32 => literal.get::<u32>(&[]).ok().map(i64::from),
        _ => None,
    }
}

/// What `id` (of `computation`) is, seen through elements of tuples made in `computation`.
fn resolved(computation: &HloComputation, mut id: InstructionId) -> &Instruction {
    loop {
        let instruction = &computation.instructions[id];
        let Opcode::GetTupleElement { index } = instruction.opcode else { return instruction };
        let Some(&tuple) = instruction.operands.first() else { return instruction };
        let tuple = &computation.instructions[tuple];
        match (&tuple.opcode, tuple.operands.get(index as usize)) {
            (Opcode::Tuple, Some(&element)) => id = element,
            _ => return instruction,
        }
    }
}

/// The element `index` of parameter 0 that `id` (of `computation`) reads, if it is one.
fn carried_element(computation: &HloComputation, id: InstructionId) -> Option<usize> {
    let instruction = resolved(computation, id);
    let Opcode::GetTupleElement { index } = instruction.opcode else { return None };
    let tuple = &computation.instructions[*instruction.operands.first()?];
    matches!(tuple.opcode, Opcode::Parameter { number: 0 }).then_some(index as usize)
}

/// The instruction of `computation` that element `k` of the tuple `id` is.
fn tuple_element(computation: &HloComputation, id: InstructionId, k: usize) -> Option<&Instruction> {
    let tuple = resolved(computation, id);
    match tuple.opcode {
        Opcode::Tuple => tuple.operands.get(k).map(|&element| resolved(computation, element)),
        _ => None,
    }
}

/// The instruction a while body's result tuple has as element `k`.
fn body_element(body: &HloComputation, k: usize) -> Option<&Instruction> {
    tuple_element(body, body.root, k)
}

/// Whether the body passes element `k` of its carry through unchanged.
fn passed_through(body: &HloComputation, k: usize) -> bool {
    let root = resolved(body, body.root);
    matches!(root.opcode, Opcode::Tuple)
        && root.operands.get(k).is_some_and(|&id| carried_element(body, id) == Some(k))
}

/// The constant the body adds to element `k` of its carry, if that is what it does.
fn increment(body: &HloComputation, k: usize) -> Option<i64> {
    let element = body_element(body, k)?;
    let [p, q] = element.operands[..] else { return None };
    let of = |id: InstructionId| carried_element(body, id) == Some(k);
    let constant = |id: InstructionId| integer(resolved(body, id));
    match element.opcode {
        Opcode::Binary(BinaryOp::Add) if of(p) => constant(q),
        Opcode::Binary(BinaryOp::Add) if of(q) => constant(p),
        Opcode::Binary(BinaryOp::Sub) if of(p) => constant(q).map(|c| -c),
        _ => None,
    }
}

/// The comparison `b ? a` that `a ? b` is.
fn flipped(direction: ComparisonDirection) -> ComparisonDirection {
    use ComparisonDirection::*;
    match direction {
        Lt => Gt,
        Le => Ge,
        Gt => Lt,
        Ge => Le,
        other => other,
    }
}

/// How many times `counter direction bound` holds for `counter = start, start + step, …`
/// before it first fails (`None`: never fails).
fn trips(start: i64, step: i64, bound: i64, direction: ComparisonDirection) -> Option<i64> {
    use ComparisonDirection::*;
    let ceil = |a: i64, b: i64| (a + b - 1) / b;
    Some(match direction {
        Lt if start >= bound => 0,
        Lt if step > 0 => ceil(bound - start, step),
        Le if start > bound => 0,
        Le if step > 0 => (bound - start) / step + 1,
        Gt if start <= bound => 0,
        Gt if step < 0 => ceil(start - bound, -step),
        Ge if start < bound => 0,
        Ge if step < 0 => (start - bound) / (-step) + 1,
        Ne if start == bound => 0,
        Ne if step != 0 && (bound - start) % step == 0 && (bound - start) / step > 0 => {
            (bound - start) / step
        }
        Eq if start != bound => 0,
        Eq if step != 0 => 1,
        _ => return None,
    })
}

/// The trip count of `instruction`, a while of `computation`, when it is fixed at compile
/// time: its condition compares a carried counter with a constant (or with a carried element
/// the body passes through, initialized by a constant), the counter is initialized by a
/// constant in the tuple the while starts from, and the body adds a constant to it. An
/// element of that tuple is a constant where `computation` makes it one, or where `recorded`
/// (the value of the while's top-level element `k` as the derivative recorded it) is one: a
/// start that came in through a call's parameter.
fn trip_count(
    computation: &HloComputation,
    instruction: &Instruction,
    recorded: impl Fn(usize) -> Option<i64>,
) -> Option<i64> {
    let Opcode::While { condition, body } = &instruction.opcode else { return None };
    let init = *instruction.operands.first()?;
    let initial = |k: usize| tuple_element(computation, init, k).and_then(integer).or_else(|| recorded(k));
    let root = resolved(condition, condition.root);
    let Opcode::Compare(direction) = root.opcode else { return None };
    let [a, b] = root.operands[..] else { return None };
    for (counter, bound, direction) in [(a, b, direction), (b, a, flipped(direction))] {
        let Some(k) = carried_element(condition, counter) else { continue };
        let (Some(step), Some(start)) = (increment(body, k), initial(k)) else { continue };
        let bound = integer(resolved(condition, bound)).or_else(|| {
            let m = carried_element(condition, bound)?;
            if passed_through(body, m) {
                initial(m)
            } else {
                None
            }
        });
        if let Some(bound) = bound {
            return trips(start, step, bound, direction);
        }
    }
    None
}

/// Which arrays of the carry the body may change (not passed through).
fn varying_arrays(body: &HloComputation) -> Vec<bool> {
    let carry = parameter_shape(body);
    if !carry.is_tuple() {
        return vec![true; leaf_shapes(&carry).len()];
    }
    let elements = carry.tuple_shapes().iter().enumerate();
    elements.flat_map(|(k, s)| vec![!passed_through(body, k); leaf_shapes(s).len()]).collect()
}

/// The arrays a loop carries where `mask` holds, in order.
fn picked<T: Copy>(values: &[T], mask: &[bool]) -> Vec<T> {
    values.iter().zip(mask).filter(|(_, &m)| m).map(|(v, _)| *v).collect()
}

/// The arrays of a while's carry that have a tangent: those given one at the start and, to a
/// fixed point, those the body gives one.
fn loop_active(
    walk: Walk,
    location: &'static Location<'static>,
    forward: bool,
    body: &HloComputation,
    mut active: Vec<bool>,
) -> Result<Vec<bool>> {
    loop {
        let out = active_outputs(walk, location, forward, body, &active)?;
        let next: Vec<bool> = active.iter().zip(&out).map(|(a, o)| *a || *o).collect();
        if next == active {
            return Ok(active);
        }
        active = next;
    }
}

/// A while's condition over a flat tuple (`flat`) whose first `count` arrays are the carry of
/// `condition`.
fn condition_on(
    walk: Walk,
    location: &'static Location<'static>,
    condition: &HloComputation,
    flat: &[Shape],
    count: usize,
) -> Result<XlaComputation> {
    let builder = XlaBuilder::new(&format!("{}_on", base_name(&condition.name)));
    let arrays = flat_parameter(&builder, flat, "carry");
    let carry = rebuild(&builder, &mut arrays[..count].iter().copied(), &parameter_shape(condition));
    let root = copy(walk, &builder, location, condition, carry)?;
    builder.build(root)
}

/// Forward mode: a while over the carry's arrays `init`, then the tangents of those `active`
/// (`tangents`), whose body is the body's JVP. Returns the carry's arrays after it, then the
/// tangents.
#[allow(clippy::too_many_arguments)]
fn jvp_loop<'b>(
    walk: Walk,
    builder: &'b XlaBuilder,
    location: &'static Location<'static>,
    condition: &HloComputation,
    body: &HloComputation,
    init: Vec<XlaOp<'b>>,
    tangents: Vec<XlaOp<'b>>,
    active: &[bool],
) -> Result<(Vec<XlaOp<'b>>, Vec<XlaOp<'b>>)> {
    let shapes = leaf_shapes(&parameter_shape(body));
    let count = shapes.len();
    let flat: Vec<Shape> = shapes.iter().cloned().chain(masked(&shapes, active)).collect();
    let body_builder = XlaBuilder::new(&format!("jvp_{}", base_name(&body.name)));
    let arrays = flat_parameter(&body_builder, &flat, "carry");
    let mut tape = Tape::new(&body_builder, true, location);
    let mut given = arrays[count..].iter();
    let mut inputs = Vec::new();
    for (shape, &on) in shapes.iter().zip(active) {
        inputs.push(if on { given.next().map(|&value| tape.input(shape, Some(value))) } else { None });
    }
    let (out, out_tangents) = walk_arrays(walk, &mut tape, body, arrays[..count].to_vec(), inputs)?;
    let out_tangents = shapes.iter().zip(active).zip(&out_tangents).filter(|((_, &on), _)| on);
    let out_tangents: Vec<XlaOp<'_>> = out_tangents.map(|((shape, _), t)| tape.value(*t, shape)).collect();
    let root = tuple(&body_builder, &[out, out_tangents].concat());
    let new_body = body_builder.build(root)?;
    let new_condition = condition_on(walk, location, condition, &flat, count)?;
    let state = record_while(&new_condition, &new_body, tuple(builder, &[init, tangents].concat()));
    let all: Vec<XlaOp<'b>> = (0..flat.len()).map(|i| get_tuple_element(state, i as i64)).collect();
    Ok((all[..count].to_vec(), all[count..].to_vec()))
}

/// The start indices `[at, 0, …]` of one trip's slice of a stack of `rank` dimensions.
fn trip_start<'c>(builder: &'c XlaBuilder, at: XlaOp<'c>, rank: usize) -> Vec<XlaOp<'c>> {
    std::iter::once(at).chain((1..rank).map(|_| builder.constant_r0(0i32))).collect()
}

/// The stack of `trips` arrays of `shape`.
fn stack_shape(shape: &Shape, trips: i64) -> Shape {
    let dimensions: Vec<i64> = std::iter::once(trips).chain(shape.dimensions().iter().copied()).collect();
    Shape::new(shape.element_type(), &dimensions)
}

/// Trip `at`'s array of `shape` in `stack` (a stack of such arrays), in `shape`'s layout.
fn trip_slice<'c>(builder: &'c XlaBuilder, stack: XlaOp<'c>, at: XlaOp<'c>, shape: &Shape) -> XlaOp<'c> {
    let sizes = [&[1], shape.dimensions()].concat();
    let slice = dynamic_slice(stack, &trip_start(builder, at, sizes.len()), &sizes);
    builder.record_opcode(&Opcode::Reshape, &[slice], shape)
}

/// The primal while, its body the forward part of the body's split VJP, also writing the
/// carry's arrays `saved` as they enter each trip and the trip's residuals into stacks of
/// `trips`: the carry's arrays after it, and the stacks (the arrays', then the residuals').
#[allow(clippy::too_many_arguments)]
fn saving_loop<'b>(
    walk: Walk,
    builder: &'b XlaBuilder,
    location: &'static Location<'static>,
    condition: &HloComputation,
    body: &HloComputation,
    split: &SplitVjp,
    init: Vec<XlaOp<'b>>,
    saved: &[bool],
    trips: i64,
) -> Result<(Vec<XlaOp<'b>>, Vec<XlaOp<'b>>)> {
    let shapes = leaf_shapes(&parameter_shape(body));
    let count = shapes.len();
    let stacked = [masked(&shapes, saved), split.residual_shapes()].concat();
    let stacks: Vec<Shape> = stacked.iter().map(|s| stack_shape(s, trips)).collect();
    let flat: Vec<Shape> = shapes
        .iter()
        .cloned()
        .chain([Shape::scalar(ElementType::S32)])
        .chain(stacks.iter().cloned())
        .collect();
    let body_builder = XlaBuilder::new(&format!("saving_{}", base_name(&body.name)));
    let arrays = flat_parameter(&body_builder, &flat, "carry");
    let trip = arrays[count];
    let (mut out, residuals) = split.forward(&body_builder, &arrays[..count])?;
    out.push(trip + body_builder.constant_r0(1i32));
    let entering = picked(&arrays[..count], saved).into_iter().chain(residuals);
    for ((stack, array), shape) in arrays[count + 1..].iter().zip(entering).zip(&stacks) {
        let update = reshape(array, &[&[1], &shape.dimensions()[1..]].concat());
        out.push(dynamic_update_slice(*stack, update, &trip_start(&body_builder, trip, shape.rank())));
    }
    let new_body = body_builder.build(tuple(&body_builder, &out))?;
    let new_condition = condition_on(walk, location, condition, &flat, count)?;
    let start =
        [vec![builder.constant_r0(0i32)], stacks.iter().map(|s| zeros(builder, s)).collect()].concat();
    let state = record_while(&new_condition, &new_body, tuple(builder, &[init, start].concat()));
    let all: Vec<XlaOp<'b>> = (0..flat.len()).map(|i| get_tuple_element(state, i as i64)).collect();
    Ok((all[..count].to_vec(), all[count + 1..].to_vec()))
}

/// The condition `counter < trips` of a while over `flat`, its counter the first array.
fn counter_below(flat: &[Shape], trips: i64) -> Result<XlaComputation> {
    let builder = XlaBuilder::new("trips_left");
    let arrays = flat_parameter(&builder, flat, "carry");
    builder.build(lt(arrays[0], builder.constant_r0(trips as i32), &[]))
}

/// The transpose of a while of a fixed trip count: the backward while from the cotangents of
/// the carry's arrays that have tangents, over the saved stacks and the invariant arrays.
struct ReversedLoop<'b> {
    condition: XlaComputation,
    body: XlaComputation,
    /// The stacks, then the arrays passed through that the body's VJP reads.
    saved: Vec<XlaOp<'b>>,
    /// How many arrays of the carry have tangents.
    active: usize,
    /// Which of them have a tangent at the start (the op's inputs).
    present: Vec<bool>,
}

impl<'b> Transpose<'b> for ReversedLoop<'b> {
    fn transpose(&self, cotangent: XlaOp<'b>, _: &[Shape]) -> Vec<Option<XlaOp<'b>>> {
        let builder = cotangent.builder();
        let cotangents = (0..self.active).map(|j| get_tuple_element(cotangent, j as i64));
        let init: Vec<XlaOp<'b>> = std::iter::once(builder.constant_r0(0i32))
            .chain(cotangents)
            .chain(self.saved.iter().copied())
            .collect();
        let state = record_while(&self.condition, &self.body, tuple(builder, &init));
        let parts = (0..self.active).filter(|&j| self.present[j]);
        parts.map(|j| Some(get_tuple_element(state, 1 + j as i64))).collect()
    }
}

/// The backward body: trip `i` of `trips` runs the backward part of the body's split VJP at
/// the state trip `trips - 1 - i` entered (the arrays `saved` read from their stacks, those
/// `kept` carried, the others unread) and on that trip's residuals.
#[allow(clippy::too_many_arguments)]
fn backward_body(
    body: &HloComputation,
    split: &SplitVjp,
    active: &[bool],
    saved: &[bool],
    kept: &[bool],
    trips: i64,
    flat: &[Shape],
) -> Result<XlaComputation> {
    let shapes = leaf_shapes(&parameter_shape(body));
    let builder = XlaBuilder::new(&format!("backward_{}", base_name(&body.name)));
    let arrays = flat_parameter(&builder, flat, "carry");
    let trip = arrays[0];
    let at = builder.constant_r0(trips as i32 - 1) - trip;
    let active_count = active.iter().filter(|&&a| a).count();
    let residual_shapes = split.residual_shapes();
    let cotangents = &arrays[1..1 + active_count];
    let mut stacks = arrays[1 + active_count..].iter();
    let stacked = saved.iter().filter(|&&s| s).count() + residual_shapes.len();
    let mut carried = arrays[1 + active_count + stacked..].iter();
    let mut primal = Vec::new();
    for (k, shape) in shapes.iter().enumerate() {
        primal.push(if saved[k] {
            trip_slice(&builder, *stacks.next().unwrap_or(&trip), at, shape)
        } else if kept[k] {
            *carried.next().unwrap_or(&trip)
        } else {
            zeros(&builder, shape)
        });
    }
    let residuals: Vec<XlaOp<'_>> = residual_shapes
        .iter()
        .map(|shape| trip_slice(&builder, *stacks.next().unwrap_or(&trip), at, shape))
        .collect();
    let parts = split.backward(&builder, &primal, cotangents, &residuals)?;
    let mut out = vec![trip + builder.constant_r0(1i32)];
    out.extend(parts);
    out.extend_from_slice(&arrays[1 + active_count..]);
    builder.build(tuple(&builder, &out))
}

/// Reverse mode through a while of `trips` trips.
#[allow(clippy::too_many_arguments)]
fn reverse_loop<'b>(
    walk: Walk,
    tape: &mut Tape<'b>,
    instruction: &Instruction,
    condition: &HloComputation,
    body: &HloComputation,
    trips: i64,
    init: Vec<XlaOp<'b>>,
    init_tangents: Vec<Option<Tid>>,
    active: &[bool],
) -> Result<(XlaOp<'b>, Tan)> {
    let (builder, location) = (tape.builder, tape.location);
    let shape = &instruction.shape;
    if trips == 0 {
        let start = rebuild(builder, &mut init.into_iter(), shape);
        let y = builder.record_opcode(&instruction.opcode, &[start], shape);
        return Ok((y, rebuild_tangent(&mut init_tangents.into_iter(), shape)));
    }
    if trips > i32::MAX as i64 {
        return Err(Error::Unimplemented(format!(
            "reverse-mode derivative of `while` {} is not implemented for {trips} trips (at most 2^31 - 1), at \
             {location}",
            instruction.name
        )));
    }
    let shapes = leaf_shapes(&parameter_shape(body));
    let split = split_vjp(walk, location, body, active)?;
    let reads = split.reads();
    let varying = varying_arrays(body);
    let saved: Vec<bool> = reads.iter().zip(&varying).map(|(r, v)| *r && *v).collect();
    let kept: Vec<bool> = reads.iter().zip(&varying).map(|(r, v)| *r && !*v).collect();
    let (result, stacks) =
        saving_loop(walk, builder, location, condition, body, &split, init.clone(), &saved, trips)?;
    let y = rebuild(builder, &mut result.into_iter(), shape);

    let stacked = [masked(&shapes, &saved), split.residual_shapes()].concat();
    let stack_shapes: Vec<Shape> = stacked.iter().map(|s| stack_shape(s, trips)).collect();
    let flat: Vec<Shape> = [
        vec![Shape::scalar(ElementType::S32)],
        masked(&shapes, active),
        stack_shapes,
        masked(&shapes, &kept),
    ]
    .concat();
    let backward = backward_body(body, &split, active, &saved, &kept, trips, &flat)?;
    let present: Vec<bool> = picked(&init_tangents, active).iter().map(Option::is_some).collect();
    let inputs: Vec<Tid> = picked(&init_tangents, active).into_iter().flatten().collect();
    let reversed = ReversedLoop {
        condition: counter_below(&flat, trips)?,
        body: backward,
        saved: [stacks, picked(&init, &kept)].concat(),
        active: present.len(),
        present,
    };
    let Some(elements) = tape.push_reverse(reversed, &inputs, &masked(&shapes, active)) else {
        return Err(tape.not_implemented("while", " by the saving loop in forward mode"));
    };
    let mut elements = elements.into_iter();
    let tangents = active.iter().map(|&on| if on { elements.next().and_then(|t| t.array()) } else { None });
    Ok((y, rebuild_tangent(&mut tangents.collect::<Vec<_>>().into_iter(), shape)))
}

/// The primal value and tangent of `instruction`, a while of `computation` starting from
/// `init` (whose tangent is `tangent`).
pub(super) fn while_loop<'b>(
    walk: Walk,
    tape: &mut Tape<'b>,
    computation: &HloComputation,
    instruction: &Instruction,
    init: XlaOp<'b>,
    tangent: &Tan,
) -> Result<(XlaOp<'b>, Tan)> {
    let Opcode::While { condition, body } = &instruction.opcode else {
        return Err(tape.not_implemented(instruction.opcode.name(), ""));
    };
    let (builder, location, forward) = (tape.builder, tape.location, tape.is_forward());
    let shape = &instruction.shape;
    let shapes = leaf_shapes(shape);
    let arrays = flatten(init, shape);
    let tangents = flatten_tangent(tangent, shape);
    let given: Vec<bool> = tangents.iter().map(Option::is_some).collect();
    let active = loop_active(walk, location, forward, body, given)?;
    if !active.contains(&true) {
        return Ok((builder.record_opcode(&instruction.opcode, &[init], shape), Tan::Zero));
    }
    if !forward {
        // The first leaf of top-level element `k` of the carry, if that element is an array.
        let recorded = |k: usize| {
            let elements = shape.tuple_shapes();
            let leaf = elements.get(..k)?.iter().map(|element| leaf_shapes(element).len()).sum::<usize>();
            let element = elements.get(k).filter(|element| !element.is_tuple())?;
            let array = arrays.get(leaf).filter(|_| element.element_type().is_integral())?;
            integer(&builder.resolved_instruction(*array)?)
        };
        let Some(trips) = trip_count(computation, instruction, recorded) else {
            return Err(Error::Unimplemented(format!(
                "reverse-mode derivative of `while` {} is not implemented: its trip count is not fixed at compile \
                 time (a counter in its carried tuple, initialized by a constant, stepped by a constant in the \
                 body, compared with a constant), and reverse mode saves each trip's state; jax refuses such a \
                 loop too (forward mode, jvp, differentiates it), at {location}",
                instruction.name
            )));
        };
        return reverse_loop(walk, tape, instruction, condition, body, trips, arrays, tangents, &active);
    }
    let mut values = Vec::new();
    for ((shape, t), _) in shapes.iter().zip(&tangents).zip(&active).filter(|(_, &on)| on) {
        values.push(tape.value(*t, shape));
    }
    let (primal, out_tangents) = jvp_loop(walk, builder, location, condition, body, arrays, values, &active)?;
    let y = rebuild(builder, &mut primal.into_iter(), shape);
    let mut out_tangents = out_tangents.into_iter();
    let mut ids = Vec::new();
    for (shape, &on) in shapes.iter().zip(&active) {
        ids.push(if on { out_tangents.next().map(|value| tape.input(shape, Some(value))) } else { None });
    }
    Ok((y, rebuild_tangent(&mut ids.into_iter(), shape)))
}

// ---- conditional ----

/// The transpose of a conditional: the conditional of the branches' VJPs, each on its primal
/// operand and the result's cotangents, returning the cotangents of every branch's operand
/// arrays that have tangents (zeros for the branches not taken).
struct ReversedBranches<'b> {
    selector: XlaOp<'b>,
    predicated: bool,
    branches: Vec<XlaComputation>,
    /// Each branch's operand, as its arrays.
    primals: Vec<Vec<XlaOp<'b>>>,
    /// How many result arrays have tangents.
    active_out: usize,
    /// Which operand arrays with tangents (all branches', in order) are the op's inputs.
    present: Vec<bool>,
}

impl<'b> Transpose<'b> for ReversedBranches<'b> {
    fn transpose(&self, cotangent: XlaOp<'b>, _: &[Shape]) -> Vec<Option<XlaOp<'b>>> {
        let builder = cotangent.builder();
        let cotangents: Vec<XlaOp<'b>> =
            (0..self.active_out).map(|j| get_tuple_element(cotangent, j as i64)).collect();
        let operands: Vec<XlaOp<'b>> = self
            .primals
            .iter()
            .map(|primal| tuple(builder, &[primal.clone(), cotangents.clone()].concat()))
            .collect();
        let result = record_conditional(self.selector, self.predicated, &self.branches, &operands);
        let parts = (0..self.present.len()).filter(|&j| self.present[j]);
        parts.map(|j| Some(get_tuple_element(result, j as i64))).collect()
    }
}

/// The primal value and tangent of `instruction`, a conditional on `x` (the selector, then the
/// branches' operands) with tangents `t`.
pub(super) fn conditional<'b>(
    walk: Walk,
    tape: &mut Tape<'b>,
    instruction: &Instruction,
    x: &[XlaOp<'b>],
    t: &[&Tan],
    shapes: &[&Shape],
) -> Result<(XlaOp<'b>, Tan)> {
    let Opcode::Conditional { branches } = &instruction.opcode else {
        return Err(tape.not_implemented(instruction.opcode.name(), ""));
    };
    let (builder, location, forward) = (tape.builder, tape.location, tape.is_forward());
    let shape = &instruction.shape;
    let out_shapes = leaf_shapes(shape);
    let predicated = shapes[0].element_type() == ElementType::Pred;
    let operand_shapes: Vec<Vec<Shape>> = branches.iter().map(|b| leaf_shapes(&parameter_shape(b))).collect();
    let tangents: Vec<Vec<Option<Tid>>> =
        (0..branches.len()).map(|b| flatten_tangent(t[1 + b], shapes[1 + b])).collect();
    let active: Vec<Vec<bool>> = tangents.iter().map(|ts| ts.iter().map(Option::is_some).collect()).collect();
    let mut active_out = vec![false; out_shapes.len()];
    for (branch, active) in branches.iter().zip(&active) {
        let out = active_outputs(walk, location, forward, branch, active)?;
        for (a, o) in active_out.iter_mut().zip(out) {
            *a |= o;
        }
    }
    if !active_out.contains(&true) {
        return Ok((builder.record_opcode(&instruction.opcode, x, shape), Tan::Zero));
    }
    let primals: Vec<Vec<XlaOp<'b>>> =
        (0..branches.len()).map(|b| flatten(x[1 + b], &parameter_shape(&branches[b]))).collect();
    let out_active_shapes = masked(&out_shapes, &active_out);
    if forward {
        let mut jvps = Vec::new();
        let mut operands = Vec::new();
        for (b, branch) in branches.iter().enumerate() {
            let flat: Vec<Shape> =
                operand_shapes[b].iter().cloned().chain(masked(&operand_shapes[b], &active[b])).collect();
            let count = operand_shapes[b].len();
            let branch_builder = XlaBuilder::new(&format!("jvp_{}", base_name(&branch.name)));
            let arrays = flat_parameter(&branch_builder, &flat, "operand");
            let mut branch_tape = Tape::new(&branch_builder, true, location);
            let mut given = arrays[count..].iter();
            let mut inputs = Vec::new();
            for (s, &on) in operand_shapes[b].iter().zip(&active[b]) {
                inputs.push(if on { given.next().map(|&v| branch_tape.input(s, Some(v))) } else { None });
            }
            let (out, out_t) = walk_arrays(walk, &mut branch_tape, branch, arrays[..count].to_vec(), inputs)?;
            let mut root = out;
            for ((s, t), _) in out_shapes.iter().zip(&out_t).zip(&active_out).filter(|(_, &on)| on) {
                root.push(branch_tape.value(*t, s));
            }
            jvps.push(branch_builder.build(tuple(&branch_builder, &root))?);
            let mut operand = primals[b].clone();
            for ((s, t), _) in
                operand_shapes[b].iter().zip(&tangents[b]).zip(&active[b]).filter(|(_, &on)| on)
            {
                operand.push(tape.value(*t, s));
            }
            operands.push(tuple(builder, &operand));
        }
        let result = record_conditional(x[0], predicated, &jvps, &operands);
        let count = out_shapes.len();
        let all: Vec<XlaOp<'b>> =
            (0..count + out_active_shapes.len()).map(|i| get_tuple_element(result, i as i64)).collect();
        let y = rebuild(builder, &mut all[..count].iter().copied(), shape);
        let mut given = all[count..].iter();
        let mut ids = Vec::new();
        for (s, &on) in out_shapes.iter().zip(&active_out) {
            ids.push(if on { given.next().map(|&v| tape.input(s, Some(v))) } else { None });
        }
        return Ok((y, rebuild_tangent(&mut ids.into_iter(), shape)));
    }
    let y = builder.record_opcode(&instruction.opcode, x, shape);
    // Every branch returns the cotangents of all branches' operand arrays with tangents.
    let all_active: Vec<Shape> =
        (0..branches.len()).flat_map(|b| masked(&operand_shapes[b], &active[b])).collect();
    let mut vjps = Vec::new();
    for (b, branch) in branches.iter().enumerate() {
        let flat: Vec<Shape> =
            operand_shapes[b].iter().cloned().chain(out_active_shapes.iter().cloned()).collect();
        let count = operand_shapes[b].len();
        let branch_builder = XlaBuilder::new(&format!("vjp_{}", base_name(&branch.name)));
        let arrays = flat_parameter(&branch_builder, &flat, "operand");
        let mut given = arrays[count..].iter();
        let cotangents: Vec<Option<XlaOp<'_>>> =
            active_out.iter().map(|&on| if on { given.next().copied() } else { None }).collect();
        let (_, parts) = vjp_arrays(
            walk,
            &branch_builder,
            location,
            branch,
            arrays[..count].to_vec(),
            &active[b],
            &cotangents,
        )?;
        let mut root = Vec::new();
        for (other, shapes) in operand_shapes.iter().enumerate() {
            for (k, s) in shapes.iter().enumerate().filter(|&(k, _)| active[other][k]) {
                root.push(match parts.get(k) {
                    Some(Some(part)) if other == b => *part,
                    _ => zeros(&branch_builder, s),
                });
            }
        }
        vjps.push(branch_builder.build(tuple(&branch_builder, &root))?);
    }
    let all_tangents: Vec<Option<Tid>> =
        (0..branches.len()).flat_map(|b| picked(&tangents[b], &active[b])).collect();
    debug_assert_eq!(all_tangents.len(), all_active.len());
    let reversed = ReversedBranches {
        selector: x[0],
        predicated,
        branches: vjps,
        primals,
        active_out: out_active_shapes.len(),
        present: all_tangents.iter().map(Option::is_some).collect(),
    };
    let inputs: Vec<Tid> = all_tangents.into_iter().flatten().collect();
    let Some(elements) = tape.push_reverse(reversed, &inputs, &out_active_shapes) else {
        return Err(tape.not_implemented("conditional", " by its branches' VJPs in forward mode"));
    };
    let mut elements = elements.into_iter();
    let ids: Vec<Option<Tid>> = active_out
        .iter()
        .map(|&on| if on { elements.next().and_then(|t| t.array()) } else { None })
        .collect();
    Ok((y, rebuild_tangent(&mut ids.into_iter(), shape)))
}
