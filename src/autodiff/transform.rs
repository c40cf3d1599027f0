//! The four transformations: `jvp` (forward mode: the walk with tangents applied as recorded)
//! and `vjp`, `grad`, `value_and_grad` (reverse mode: the walk, then the tape transposed from
//! the result's cotangent).

use std::panic::Location;

use crate::autodiff::tape::{scalar, zeros, Tan, Tape, Tid};
use crate::autodiff::walk::walk;
use crate::builder::{get_tuple_element, tuple, XlaBuilder, XlaOp};
use crate::error::{Error, Result};
use crate::hlo::computation::XlaComputation;
use crate::hlo::ir::{base_name, HloComputation, Opcode};
use crate::shape::Shape;

/// Checks the parameters listed: in range, listed once, floating-point arrays.
fn check_listed(computation: &HloComputation, listed: &[i64], location: &Location<'_>) -> Result<()> {
    let parameters = computation.parameters();
    let name = base_name(&computation.name);
    for (position, &number) in listed.iter().enumerate() {
        let refuse = |message: String| Err(Error::invalid(format!("{message}, at {location}")));
        if number < 0 || number as usize >= parameters.len() {
            return refuse(format!(
                "parameter number {number} is out of range: computation {name} has {} parameters",
                parameters.len()
            ));
        }
        if listed[..position].contains(&number) {
            return refuse(format!("parameter {number} is listed twice"));
        }
        let shape = &parameters[number as usize].shape;
        if shape.is_tuple() || !shape.element_type().is_float() {
            return refuse(format!(
                "parameter {number} of computation {name} is {shape}, not a floating-point array, so it has no \
                 derivative (jax's float0)"
            ));
        }
    }
    Ok(())
}

/// The new builder's copies of the parameters, and their tangents: a tape input for each
/// listed one (forward mode: the tangent parameter that follows the copies).
fn parameters<'b>(
    builder: &'b XlaBuilder,
    tape: &mut Tape<'b>,
    computation: &HloComputation,
    listed: &[i64],
    forward: bool,
) -> (Vec<(XlaOp<'b>, Tan)>, Vec<Tid>) {
    let parameters = computation.parameters();
    let count = parameters.len() as i64;
    let mut inputs = vec![0; listed.len()];
    let copies = parameters
        .iter()
        .enumerate()
        .map(|(number, p)| {
            let copy = builder.parameter(number as i64, &p.shape, base_name(&p.name));
            let tangent = match listed.iter().position(|&l| l == number as i64) {
                Some(position) => {
                    let value = forward.then(|| {
                        let name = format!("tangent_{}", base_name(&p.name));
                        builder.parameter(count + position as i64, &p.shape, &name)
                    });
                    inputs[position] = tape.input(&p.shape, value);
                    Tan::Array(inputs[position])
                }
                None => Tan::Zero,
            };
            (copy, tangent)
        })
        .collect();
    (copies, inputs)
}

/// The result's arrays (a tuple's elements in order, nested ones flattened) with their
/// tangents.
fn leaves<'b>(
    value: XlaOp<'b>,
    tangent: &Tan,
    shape: &Shape,
    out: &mut Vec<(XlaOp<'b>, Option<Tid>, Shape)>,
) {
    if shape.is_tuple() {
        for (index, element) in shape.tuple_shapes().iter().enumerate() {
            leaves(get_tuple_element(value, index as i64), &tangent.element(index), element, out);
        }
    } else {
        out.push((value, tangent.array(), shape.clone()));
    }
}

/// `array` in `shape`'s layout (padding included): itself where it has it, else a copy. A
/// derivative's ops give their results XLA's layouts (mostly the default one), where a
/// gradient or tangent is to come back in the shape of its parameter or result.
fn laid_out<'b>(builder: &'b XlaBuilder, array: XlaOp<'b>, shape: &Shape) -> XlaOp<'b> {
    match builder.get_shape(array) {
        Ok(current) if current != *shape => builder.record_opcode(&Opcode::Reshape, &[array], shape),
        _ => array,
    }
}

/// What reverse mode returns.
#[derive(Clone, Copy, PartialEq)]
enum Reverse {
    Grad,
    ValueAndGrad,
    Vjp,
}

fn reverse(
    computation: &XlaComputation,
    listed: &[i64],
    kind: Reverse,
    location: &'static Location<'static>,
) -> Result<XlaComputation> {
    let entry = &computation.entry;
    check_listed(entry, listed, location)?;
    let result = entry.result_shape();
    let name = base_name(&entry.name);
    if kind != Reverse::Vjp && (result.is_tuple() || !result.is_scalar() || !result.element_type().is_float())
    {
        return Err(Error::invalid(format!(
            "grad requires a floating-point scalar result, but computation {name} returns {result}; use vjp for \
             any other result, at {location}"
        )));
    }
    let prefix = match kind {
        Reverse::Grad => "grad",
        Reverse::ValueAndGrad => "value_and_grad",
        Reverse::Vjp => "vjp",
    };
    let builder = XlaBuilder::new(&format!("{prefix}_{name}"));
    let mut tape = Tape::new(&builder, false, location);
    let (copies, inputs) = parameters(&builder, &mut tape, entry, listed, false);
    let (value, tangent) = walk(&mut tape, entry, &copies)?;
    let cotangent = match kind {
        Reverse::Vjp => builder.parameter(copies.len() as i64, result, "cotangent"),
        _ => scalar(&builder, result.element_type(), 1.0),
    };
    let mut seeds = Vec::new();
    let mut found = Vec::new();
    leaves(cotangent, &tangent, result, &mut found);
    for (cotangent, tangent, _) in found {
        if let Some(id) = tangent {
            seeds.push((id, cotangent));
        }
    }
    let cotangents = tape.transpose(seeds);
    let shapes = entry.parameters();
    let mut outputs: Vec<XlaOp<'_>> = if kind == Reverse::ValueAndGrad { vec![value] } else { Vec::new() };
    for (&number, &input) in listed.iter().zip(&inputs) {
        let shape = &shapes[number as usize].shape;
        let gradient = cotangents[input].unwrap_or_else(|| zeros(&builder, shape));
        outputs.push(laid_out(&builder, gradient, shape));
    }
    builder.build(tuple(&builder, &outputs))
}

/// Forward mode: the computation's parameters, then a tangent per listed parameter; the
/// result's arrays, then their tangents.
fn forward(
    computation: &XlaComputation,
    listed: &[i64],
    location: &'static Location<'static>,
) -> Result<XlaComputation> {
    let entry = &computation.entry;
    check_listed(entry, listed, location)?;
    let builder = XlaBuilder::new(&format!("jvp_{}", base_name(&entry.name)));
    let mut tape = Tape::new(&builder, true, location);
    let (copies, _) = parameters(&builder, &mut tape, entry, listed, true);
    let (value, tangent) = walk(&mut tape, entry, &copies)?;
    let mut found = Vec::new();
    leaves(value, &tangent, entry.result_shape(), &mut found);
    let values = found.iter().map(|(value, _, _)| *value);
    let tangents: Vec<XlaOp<'_>> = (found.iter())
        .map(|(_, tangent, shape)| laid_out(&builder, tape.value(*tangent, shape), shape))
        .collect();
    let outputs: Vec<XlaOp<'_>> = values.chain(tangents).collect();
    builder.build(tuple(&builder, &outputs))
}

/// jax's `grad(f, argnums)`: a computation of `computation`'s parameters returning the tuple of
/// the gradients of its result (a floating-point scalar) with respect to the parameters
/// `wrt`, in that order, each in its parameter's shape.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("square");
/// let x = b.parameter(0, &shape!(f32[]), "x");
/// let g = grad(&b.build(x * x)?, &[0])?;
/// let out = g.compile(&CompileOptions::default())?.execute(&[&Literal::scalar(3.0f32)])?;
/// assert_eq!(out.decompose_tuple()?[0].to_vec::<f32>()?, [6.0]);
/// assert!(grad(&b.build(x * x)?, &[1]).unwrap_err().to_string().contains("out of range"));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn grad(computation: &XlaComputation, wrt: &[i64]) -> Result<XlaComputation> {
    reverse(computation, wrt, Reverse::Grad, Location::caller())
}

/// jax's `value_and_grad`: as [`grad`], returning the tuple (value, gradients…).
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("cube");
/// let x = b.parameter(0, &shape!(f64[]), "x");
/// let vg = value_and_grad(&b.build(x * x * x)?, &[0])?;
/// let out = vg.compile(&CompileOptions::default())?.execute(&[&Literal::scalar(2.0f64)])?.decompose_tuple()?;
/// assert_eq!((out[0].to_vec::<f64>()?, out[1].to_vec::<f64>()?), (vec![8.0], vec![12.0]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn value_and_grad(computation: &XlaComputation, wrt: &[i64]) -> Result<XlaComputation> {
    reverse(computation, wrt, Reverse::ValueAndGrad, Location::caller())
}

/// Reverse mode for any result: `computation`'s parameters, then the cotangent of the result
/// (of its shape; one tuple parameter for a tuple result); returns the tuple of the cotangents
/// of the parameters `wrt`.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("double");
/// let x = b.parameter(0, &shape!(f32[2]), "x");
/// let v = vjp(&b.build(x + x)?, &[0])?;
/// let ct = Literal::vec1(&[1.0f32, 10.0]);
/// let out = v.compile(&CompileOptions::default())?.execute(&[&Literal::vec1(&[5.0f32, 6.0]), &ct])?;
/// assert_eq!(out.decompose_tuple()?[0].to_vec::<f32>()?, [2.0, 20.0]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn vjp(computation: &XlaComputation, wrt: &[i64]) -> Result<XlaComputation> {
    reverse(computation, wrt, Reverse::Vjp, Location::caller())
}

/// Forward mode: `computation`'s parameters, then one tangent per parameter in `wrt` (its
/// shape), in that order; returns a flat tuple of the result's arrays, then their tangents.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("sine");
/// let x = b.parameter(0, &shape!(f64[]), "x");
/// let j = jvp(&b.build(sin(x))?, &[0])?;
/// let args = [&Literal::scalar(0.0f64), &Literal::scalar(2.0f64)];
/// let out = j.compile(&CompileOptions::default())?.execute(&args)?.decompose_tuple()?;
/// assert_eq!(out[1].to_vec::<f64>()?, [2.0]); // cos(0) · 2
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn jvp(computation: &XlaComputation, wrt: &[i64]) -> Result<XlaComputation> {
    forward(computation, wrt, Location::caller())
}
