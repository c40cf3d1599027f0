//! The linear part of a derivative: every tangent is an entry of a `Tape`, made by a `Linear`
//! op from earlier entries (or a parameter's tangent, an input). Forward mode applies each op as
//! it is recorded; reverse mode walks the entries backwards, each op's `transpose` turning the
//! cotangent of its result into cotangents of its inputs. An op's other operands are primal
//! values, constants of the linear map.

use std::panic::Location;

use crate::builder::{broadcast, get_tuple_element, reduce, tuple, XlaBuilder, XlaOp};
use crate::element_type::ElementType;
use crate::error::Error;
use crate::hlo::computation::XlaComputation;
use crate::literal::Literal;
use crate::shape::Shape;

/// The position of a tangent on its tape.
pub(super) type Tid = usize;

/// A value's tangent: symbolically zero, an array on the tape, or a tuple's elements' tangents.
#[derive(Clone, Debug)]
pub(super) enum Tan {
    Zero,
    Array(Tid),
    Tuple(Vec<Tan>),
}

impl Tan {
    /// The array's tangent, `None` when it is zero.
    pub(super) fn array(&self) -> Option<Tid> {
        match self {
            Tan::Array(id) => Some(*id),
            _ => None,
        }
    }

    /// Element `index` of a tuple's tangent.
    pub(super) fn element(&self, index: usize) -> Tan {
        match self {
            Tan::Tuple(elements) => elements[index].clone(),
            _ => Tan::Zero,
        }
    }
}

/// A map linear in its tangent inputs (those that are not zero, in the order the op lists them).
pub(super) trait Linear<'b> {
    /// The op applied to the inputs' tangents (forward mode).
    fn apply(&self, inputs: &[XlaOp<'b>]) -> XlaOp<'b>;
    /// The inputs' cotangents from the result's (`None`: zero), `inputs` their shapes.
    fn transpose(&self, cotangent: XlaOp<'b>, inputs: &[Shape]) -> Vec<Option<XlaOp<'b>>>;
}

/// A map linear in its tangent inputs that only reverse mode records: it has a transpose, and
/// forward mode computes its result another way (a loop's tangents by the loop's JVP).
pub(super) trait Transpose<'b> {
    /// The inputs' cotangents from the result's (`None`: zero), `inputs` their shapes.
    fn transpose(&self, cotangent: XlaOp<'b>, inputs: &[Shape]) -> Vec<Option<XlaOp<'b>>>;
}

/// An entry's op.
enum Op<'b> {
    Linear(Box<dyn Linear<'b> + 'b>),
    Reverse(Box<dyn Transpose<'b> + 'b>),
}

/// Element `index` of a tuple-valued entry (of `shapes`); its transpose puts the cotangent there
/// and zeros in the other elements.
struct Element {
    index: usize,
    shapes: Vec<Shape>,
}

impl<'b> Linear<'b> for Element {
    fn apply(&self, inputs: &[XlaOp<'b>]) -> XlaOp<'b> {
        get_tuple_element(inputs[0], self.index as i64)
    }
    fn transpose(&self, cotangent: XlaOp<'b>, _: &[Shape]) -> Vec<Option<XlaOp<'b>>> {
        let builder = cotangent.builder();
        let parts: Vec<XlaOp<'b>> = self
            .shapes
            .iter()
            .enumerate()
            .map(|(i, shape)| if i == self.index { cotangent } else { zeros(builder, shape) })
            .collect();
        vec![Some(tuple(builder, &parts))]
    }
}

struct Entry<'b> {
    /// `None` for an input: a parameter's tangent.
    op: Option<Op<'b>>,
    inputs: Vec<Tid>,
    shape: Shape,
    /// The tangent's value, in forward mode.
    value: Option<XlaOp<'b>>,
}

/// The tangents of one transformation, recorded while the primal computation is copied.
pub(super) struct Tape<'b> {
    pub(super) builder: &'b XlaBuilder,
    /// Whether ops are applied as they are recorded (forward mode).
    forward: bool,
    /// The caller of the transformation, named by its refusals.
    pub(super) location: &'static Location<'static>,
    entries: Vec<Entry<'b>>,
}

impl<'b> Tape<'b> {
    pub(super) fn new(
        builder: &'b XlaBuilder,
        forward: bool,
        location: &'static Location<'static>,
    ) -> Tape<'b> {
        Tape { builder, forward, location, entries: Vec::new() }
    }

    /// Whether ops are applied as they are recorded (forward mode).
    pub(super) fn is_forward(&self) -> bool {
        self.forward
    }

    /// The refusal of an op with no derivative here, in this tape's mode.
    pub(super) fn not_implemented(&self, op: &str, why: &str) -> Error {
        let mode = if self.forward { "forward" } else { "reverse" };
        Error::Unimplemented(format!(
            "{mode}-mode derivative of `{op}` is not implemented{why}, at {}",
            self.location
        ))
    }

    /// A parameter's tangent: in forward mode `value`, the tangent parameter.
    pub(super) fn input(&mut self, shape: &Shape, value: Option<XlaOp<'b>>) -> Tid {
        self.entries.push(Entry { op: None, inputs: Vec::new(), shape: shape.clone(), value });
        self.entries.len() - 1
    }

    /// The tangent `op(inputs)` of `shape`.
    pub(super) fn push(&mut self, op: impl Linear<'b> + 'b, inputs: &[Tid], shape: &Shape) -> Tan {
        let value = if self.forward {
            let values: Vec<XlaOp<'b>> =
                inputs.iter().map(|&i| self.entries[i].value.expect("forward value")).collect();
            Some(op.apply(&values))
        } else {
            None
        };
        self.entries.push(Entry {
            op: Some(Op::Linear(Box::new(op))),
            inputs: inputs.to_vec(),
            shape: shape.clone(),
            value,
        });
        Tan::Array(self.entries.len() - 1)
    }

    /// The tangents of the arrays `shapes`, the elements of the tuple `op(inputs)`, an op only
    /// reverse mode records (`None` on a forward tape).
    pub(super) fn push_reverse(
        &mut self,
        op: impl Transpose<'b> + 'b,
        inputs: &[Tid],
        shapes: &[Shape],
    ) -> Option<Vec<Tan>> {
        if self.forward {
            return None;
        }
        self.entries.push(Entry {
            op: Some(Op::Reverse(Box::new(op))),
            inputs: inputs.to_vec(),
            shape: Shape::tuple(shapes),
            value: None,
        });
        let whole = self.entries.len() - 1;
        let elements = (0..shapes.len())
            .map(|index| self.push(Element { index, shapes: shapes.to_vec() }, &[whole], &shapes[index]))
            .collect();
        Some(elements)
    }

    /// The forward value of a tangent of `shape`: zeros when it is zero.
    pub(super) fn value(&self, tangent: Option<Tid>, shape: &Shape) -> XlaOp<'b> {
        match tangent {
            Some(id) => self.entries[id].value.expect("forward value"),
            None => zeros(self.builder, shape),
        }
    }

    /// Reverse mode: the cotangents of every entry, from those of `seeds`, walking the tape
    /// backwards and summing what each entry's users give it.
    pub(super) fn transpose(&self, seeds: Vec<(Tid, XlaOp<'b>)>) -> Vec<Option<XlaOp<'b>>> {
        let mut cotangents: Vec<Option<XlaOp<'b>>> = vec![None; self.entries.len()];
        for (id, cotangent) in seeds {
            accumulate(&mut cotangents[id], cotangent, &self.entries[id].shape);
        }
        for id in (0..self.entries.len()).rev() {
            let (Some(op), Some(cotangent)) = (&self.entries[id].op, cotangents[id]) else { continue };
            let entry = &self.entries[id];
            let shapes: Vec<Shape> = entry.inputs.iter().map(|&i| self.entries[i].shape.clone()).collect();
            let parts = match op {
                Op::Linear(op) => op.transpose(cotangent, &shapes),
                Op::Reverse(op) => op.transpose(cotangent, &shapes),
            };
            for (&input, part) in entry.inputs.iter().zip(parts) {
                if let Some(part) = part {
                    accumulate(&mut cotangents[input], part, &self.entries[input].shape);
                }
            }
        }
        cotangents
    }
}

/// Adds `part` to the cotangent `sum` of `shape` (a tuple's element by element).
fn accumulate<'b>(sum: &mut Option<XlaOp<'b>>, part: XlaOp<'b>, shape: &Shape) {
    *sum = Some(match *sum {
        Some(before) => added(before, part, shape),
        None => part,
    });
}

fn added<'b>(a: XlaOp<'b>, b: XlaOp<'b>, shape: &Shape) -> XlaOp<'b> {
    if !shape.is_tuple() {
        return a + b;
    }
    let elements: Vec<XlaOp<'b>> = shape
        .tuple_shapes()
        .iter()
        .enumerate()
        .map(|(i, s)| added(get_tuple_element(a, i as i64), get_tuple_element(b, i as i64), s))
        .collect();
    tuple(a.builder(), &elements)
}

/// A scalar constant `value` of the float type `element_type`.
pub(super) fn scalar<'b>(builder: &'b XlaBuilder, element_type: ElementType, value: f64) -> XlaOp<'b> {
    let literal = match element_type {
        ElementType::F64 => Literal::scalar(value),
        ElementType::F32 => Literal::scalar(value as f32),
        ElementType::F16 => Literal::scalar(half::f16::from_f64(value)),
        ElementType::Bf16 => Literal::scalar(half::bf16::from_f64(value)),
        // Only zeros are asked of other types (the zero tangent of an array).
        other => {
            return builder
                .constant_literal(&Literal::zeros(&Shape::scalar(other)).unwrap_or(Literal::scalar(0u8)))
        }
    };
    builder.constant_literal(&literal)
}

/// `value` in every element of an array of `shape`'s type and dimensions.
pub(super) fn filled<'b>(builder: &'b XlaBuilder, shape: &Shape, value: f64) -> XlaOp<'b> {
    broadcast(scalar(builder, shape.element_type(), value), shape.dimensions())
}

/// Zeros of `shape`'s type and dimensions.
pub(super) fn zeros<'b>(builder: &'b XlaBuilder, shape: &Shape) -> XlaOp<'b> {
    filled(builder, shape, 0.0)
}

/// The scalar computation `p + q` of `element_type`.
pub(super) fn adder(element_type: ElementType) -> XlaComputation {
    let adder = XlaBuilder::new("add");
    let scalar_shape = Shape::scalar(element_type);
    let (p, q) = (adder.parameter(0, &scalar_shape, "p"), adder.parameter(1, &scalar_shape, "q"));
    // Two scalar parameters of a float type (the only type tangents have) always add.
    adder.build(p + q).expect("scalar floats add")
}

/// `x` summed over `dimensions`.
pub(super) fn sum_over<'b>(x: XlaOp<'b>, element_type: ElementType, dimensions: &[i64]) -> XlaOp<'b> {
    reduce(x, scalar(x.builder(), element_type, 0.0), &adder(element_type), dimensions)
}
