//! Ops that run other computations: `while_loop`, `conditional`, `conditional_indexed`, `call`
//! and `map`. Each computation is built by another builder (parameters in order) and embedded
//! into this one, as XlaBuilder embeds it; its signature is checked with XLA's sentences.

use crate::builder::builder::{XlaBuilder, XlaOp};
use crate::hlo::computation::XlaComputation;
use crate::hlo::infer::branch_selector;
use crate::hlo::ir::Opcode;
use crate::shape::Shape;
use crate::shape_inference::control::{call_shape, conditional_shape, map_shape, while_shape};

/// XLA's `While`: `body` applied to `init` for as long as `condition` (a computation of the
/// same shape returning `pred[]`) holds; a condition false at once returns `init`. The result
/// has `init`'s shape, layout included. Carry several values in a tuple.
///
/// ```
/// use lazy_xla::*;
/// let c = XlaBuilder::new("below_10");
/// let x = c.parameter(0, &shape!(f32[]), "x");
/// let condition = c.build(lt(x, c.constant_r0(10.0f32), &[]))?;
/// let d = XlaBuilder::new("twice");
/// let x = d.parameter(0, &shape!(f32[]), "x");
/// let body = d.build(x * d.constant_r0(2.0f32))?;
///
/// let b = XlaBuilder::new("loop");
/// let doubled = while_loop(&condition, &body, b.constant_r0(1.0f32));
/// let exe = b.build(doubled)?.compile(&CompileOptions::default())?;
/// assert_eq!(exe.execute(&[])?.to_vec::<f32>()?, vec![16.0]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn while_loop<'b>(condition: &XlaComputation, body: &XlaComputation, init: XlaOp<'b>) -> XlaOp<'b> {
    init.builder().record("while", &[init], |emit, operands| {
        let result = while_shape(&condition.program_shape(), &body.program_shape(), &operands[0].shape)?;
        // XlaBuilder embeds the body before the condition.
        let body = emit.embed(&body.entry);
        let condition = emit.embed(&condition.entry);
        Ok(emit.emit(Opcode::While { condition, body }, &[operands[0].id], result))
    })
}

/// XLA's predicated `Conditional`: `true_computation` on `true_operand` if `predicate` (a
/// `pred[]`) holds, else `false_computation` on `false_operand`. Both return one shape.
///
/// ```
/// use lazy_xla::*;
/// let negate = { let n = XlaBuilder::new("negate"); let v = n.parameter(0, &shape!(f32[2]), "v"); n.build(-v)? };
/// let keep = { let k = XlaBuilder::new("keep"); let v = k.parameter(0, &shape!(f32[2]), "v"); k.build(v)? };
/// let b = XlaBuilder::new("abs_if");
/// let p = b.parameter(0, &shape!(pred[]), "p");
/// let x = b.parameter(1, &shape!(f32[2]), "x");
/// let y = conditional(p, x, &negate, x, &keep);
/// let exe = b.build(y)?.compile(&CompileOptions::default())?;
/// let out = exe.execute(&[&Literal::scalar(true), &Literal::vec1(&[1.0f32, -2.0])])?;
/// assert_eq!(out.to_vec::<f32>()?, vec![-1.0, 2.0]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn conditional<'b>(
    predicate: XlaOp<'b>,
    true_operand: XlaOp<'b>,
    true_computation: &XlaComputation,
    false_operand: XlaOp<'b>,
    false_computation: &XlaComputation,
) -> XlaOp<'b> {
    record_conditional(
        predicate,
        true,
        &[true_computation, false_computation],
        &[true_operand, false_operand],
    )
}

/// XLA's indexed `Conditional`: branch `branch_index` (an `s32[]`) of `branch_computations`
/// on its operand; an index out of range runs the last branch, as XLA does.
///
/// ```
/// use lazy_xla::*;
/// let scale = |name: &str, k: f32| -> Result<XlaComputation> {
///     let c = XlaBuilder::new(name);
///     let v = c.parameter(0, &shape!(f32[]), "v");
///     c.build(v * c.constant_r0(k))
/// };
/// let (double, triple) = (scale("double", 2.0)?, scale("triple", 3.0)?);
/// let b = XlaBuilder::new("pick");
/// let i = b.parameter(0, &shape!(s32[]), "i");
/// let x = b.constant_r0(5.0f32);
/// let y = conditional_indexed(i, &[&double, &triple], &[x, x]);
/// let exe = b.build(y)?.compile(&CompileOptions::default())?;
/// assert_eq!(exe.execute(&[&Literal::scalar(0i32)])?.to_vec::<f32>()?, vec![10.0]);
/// assert_eq!(exe.execute(&[&Literal::scalar(7i32)])?.to_vec::<f32>()?, vec![15.0]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn conditional_indexed<'b>(
    branch_index: XlaOp<'b>,
    branch_computations: &[&XlaComputation],
    branch_operands: &[XlaOp<'b>],
) -> XlaOp<'b> {
    record_conditional(branch_index, false, branch_computations, branch_operands)
}

/// Records either form of conditional: the selector's check (a `pred` for the predicated
/// form, an `s32` for the indexed one), shape inference, the branches embedded in order.
#[track_caller]
fn record_conditional<'b>(
    selector: XlaOp<'b>,
    predicated: bool,
    branches: &[&XlaComputation],
    operands: &[XlaOp<'b>],
) -> XlaOp<'b> {
    let all: Vec<XlaOp<'b>> = std::iter::once(selector).chain(operands.iter().copied()).collect();
    selector.builder().record("conditional", &all, |emit, all| {
        branch_selector(&all[0].shape, predicated)?;
        let signatures: Vec<_> = branches.iter().map(|b| b.program_shape()).collect();
        let operand_shapes: Vec<&Shape> = all[1..].iter().map(|o| &o.shape).collect();
        let result = conditional_shape(&signatures.iter().collect::<Vec<_>>(), &operand_shapes)?;
        let branches = branches.iter().map(|b| emit.embed(&b.entry)).collect();
        let ids: Vec<_> = all.iter().map(|o| o.id).collect();
        Ok(emit.emit(Opcode::Conditional { branches }, &ids, result))
    })
}

/// XLA's `Call`: `computation` on `operands` (one per parameter, of its shape); the result
/// has the computation's result shape.
///
/// ```
/// use lazy_xla::*;
/// let m = XlaBuilder::new("max");
/// let (a, c) = (m.parameter(0, &shape!(f32[]), "a"), m.parameter(1, &shape!(f32[]), "b"));
/// let maximum = m.build(max(a, c, &[]))?;
/// let b = XlaBuilder::new("f");
/// let y = call(&b, &maximum, &[b.constant_r0(2.0f32), b.constant_r0(-1.0f32)]);
/// assert_eq!(b.build(y)?.compile(&CompileOptions::default())?.execute(&[])?.to_vec::<f32>()?, vec![2.0]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn call<'b>(builder: &'b XlaBuilder, computation: &XlaComputation, operands: &[XlaOp<'b>]) -> XlaOp<'b> {
    builder.record("call", operands, |emit, operands| {
        let shapes: Vec<&Shape> = operands.iter().map(|o| &o.shape).collect();
        let result = call_shape(&computation.program_shape(), &shapes)?;
        let computation = emit.embed(&computation.entry);
        let ids: Vec<_> = operands.iter().map(|o| o.id).collect();
        Ok(emit.emit(Opcode::Call { computation }, &ids, result))
    })
}

/// XLA's `Map`: the scalar `computation` (one parameter per operand) applied element by
/// element to `operands` of one shape (a scalar operand is broadcast to it), over all
/// `dimensions` in order. The result has the operands' dimensions and the default layout.
///
/// ```
/// use lazy_xla::*;
/// let m = XlaBuilder::new("max");
/// let (a, c) = (m.parameter(0, &shape!(f32[]), "a"), m.parameter(1, &shape!(f32[]), "b"));
/// let maximum = m.build(max(a, c, &[]))?;
/// let b = XlaBuilder::new("f");
/// let x = b.parameter(0, &shape!(f32[3]), "x");
/// let y = map(&b, &[x, b.constant_r0(2.0f32)], &maximum, &[0]);
/// let exe = b.build(y)?.compile(&CompileOptions::default())?;
/// assert_eq!(exe.execute(&[&Literal::vec1(&[1.0f32, 3.0, 2.5])])?.to_vec::<f32>()?, vec![2.0, 3.0, 2.5]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn map<'b>(
    builder: &'b XlaBuilder,
    operands: &[XlaOp<'b>],
    computation: &XlaComputation,
    dimensions: &[i64],
) -> XlaOp<'b> {
    builder.record("map", operands, |emit, operands| {
        let shapes: Vec<&Shape> = operands.iter().map(|o| &o.shape).collect();
        let result = map_shape(&shapes, &computation.program_shape(), dimensions)?;
        let signature = computation.program_shape();
        let computation = emit.embed(&computation.entry);
        // As XlaBuilder does, scalar operands are broadcast to the result's dimensions first;
        // then each is converted to its parameter's type where only the float precision differs.
        let mut ids = Vec::with_capacity(operands.len());
        for (operand, (_, parameter)) in operands.iter().zip(&signature.parameters) {
            let id = match operand.shape.dimensions() == result.dimensions() {
                true => operand.id,
                false => emit.broadcast_sequence(&result, operand.id)?,
            };
            ids.push(emit.convert_if_needed(id, parameter.element_type()));
        }
        let dimensions = dimensions.to_vec();
        Ok(emit.emit(Opcode::Map { dimensions, computation }, &ids, result))
    })
}
