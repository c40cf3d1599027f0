//! `XlaBuilder` and `XlaOp`: recording ops into a graph, with eager shape inference and
//! deferred errors (the first error fails the builder, as in XLA).

use std::cell::RefCell;
use std::fmt;
use std::panic::Location;
use std::sync::Arc;

use crate::attributes::{BinaryOp, UnaryOp};
use crate::error::{invalid_argument, Error, Result};
use crate::hlo::computation::XlaComputation;
use crate::hlo::ir::{base_name, HloComputation, Instruction, InstructionId, Opcode};
use crate::literal::Literal;
use crate::shape::Shape;
use crate::storage::NativeType;

/// Records ops into a computation graph, inferring every op's shape the moment it is made.
///
/// Its methods take `&self`, so ops made from it ([`XlaOp`]) are `Copy` handles that borrow
/// it. A bad op does not panic: it records an error, and from then on [`XlaBuilder::get_shape`]
/// and [`XlaBuilder::build`] return that first error.
///
/// ```
/// use lazy_xla::{add, shape, XlaBuilder};
/// let b = XlaBuilder::new("example");
/// let x = b.parameter(0, &shape!(f32[2, 3]), "x");
/// let v = b.parameter(1, &shape!(f32[3]), "v");
/// let y = add(x, v, &[1]);
/// assert_eq!(b.get_shape(y)?, shape!(f32[2, 3]));
/// let computation = b.build(y)?;
/// assert!(computation.to_hlo_text().contains("broadcast("));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
pub struct XlaBuilder {
    name: String,
    state: RefCell<State>,
}

/// What a builder has recorded so far.
struct State {
    instructions: Vec<Instruction>,
    first_error: Option<Error>,
    /// XLA's per-builder id counter: every instruction (and every imported computation) takes
    /// the next one, and its name is `opcode.id`.
    next_id: usize,
}

impl Default for State {
    fn default() -> Self {
        State { instructions: Vec::new(), first_error: None, next_id: 1 }
    }
}

/// A handle to an op recorded in an [`XlaBuilder`]: the builder and the op's position. It is
/// `Copy`, so XLA's free-function style works (`add(x, y, &[1])`), and so do operators.
///
/// ```
/// use lazy_xla::{shape, XlaBuilder, XlaOp};
/// fn double<'b>(x: XlaOp<'b>) -> XlaOp<'b> {
///     x + x
/// }
/// let b = XlaBuilder::new("double");
/// let x = b.parameter(0, &shape!(f32[4]), "x");
/// assert_eq!(b.get_shape(double(x))?, shape!(f32[4]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct XlaOp<'b> {
    builder: &'b XlaBuilder,
    /// `None` for an op that failed (a "poisoned" handle).
    id: Option<InstructionId>,
}

/// An operand as a lowering sees it: its position and shape.
pub(crate) struct Operand {
    pub(crate) id: InstructionId,
    pub(crate) shape: Shape,
}

/// Appends instructions to a builder while an op is lowered.
pub(crate) struct Emitter<'s> {
    state: &'s mut State,
}

impl Emitter<'_> {
    /// Appends an instruction and returns its position.
    pub(crate) fn emit(&mut self, opcode: Opcode, operands: &[InstructionId], shape: Shape) -> InstructionId {
        let name = self.unique_name(opcode.name());
        self.emit_named(opcode, operands, shape, name)
    }

    /// Appends an instruction with a name already made unique by [`Emitter::unique_name`].
    pub(crate) fn emit_named(
        &mut self,
        opcode: Opcode,
        operands: &[InstructionId],
        shape: Shape,
        name: String,
    ) -> InstructionId {
        self.state.instructions.push(Instruction { opcode, operands: operands.to_vec(), shape, name });
        self.state.instructions.len() - 1
    }

    /// `base.N`, taking the builder's next id (as XLA names instructions and imported
    /// computations).
    pub(crate) fn unique_name(&mut self, base: &str) -> String {
        let id = self.state.next_id;
        self.state.next_id += 1;
        format!("{base}.{id}")
    }

    /// `computation` embedded into this builder as XlaBuilder embeds a computation an op calls:
    /// a fresh copy whose computations are embedded first (in the order the ops call them),
    /// then the computation and each instruction renamed with this builder's next ids.
    pub(crate) fn embed(&mut self, computation: &HloComputation) -> Arc<HloComputation> {
        let mut copy = computation.clone();
        for instruction in &mut copy.instructions {
            for called in instruction.opcode.called_computations_mut() {
                *called = self.embed(called);
            }
        }
        copy.name = self.unique_name(base_name(&computation.name));
        for instruction in &mut copy.instructions {
            instruction.name = self.unique_name(base_name(&instruction.name));
        }
        Arc::new(copy)
    }

    /// The shape of a recorded instruction.
    pub(crate) fn shape(&self, id: InstructionId) -> &Shape {
        &self.state.instructions[id].shape
    }
}

impl XlaBuilder {
    /// A new, empty builder; `name` names the computation it builds.
    ///
    /// ```
    /// let b = lazy_xla::XlaBuilder::new("my_model");
    /// assert_eq!(b.name(), "my_model");
    /// ```
    pub fn new(name: &str) -> XlaBuilder {
        XlaBuilder { name: name.to_string(), state: RefCell::new(State::default()) }
    }

    /// The name given to [`XlaBuilder::new`].
    ///
    /// ```
    /// assert_eq!(lazy_xla::XlaBuilder::new("f").name(), "f");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The first error recorded, if any.
    ///
    /// ```
    /// use lazy_xla::{add, shape, XlaBuilder};
    /// let b = XlaBuilder::new("f");
    /// assert!(b.first_error().is_none());
    /// let _ = add(b.parameter(0, &shape!(f32[2]), "x"), b.parameter(1, &shape!(f32[3]), "y"), &[]);
    /// assert!(b.first_error().unwrap().to_string().starts_with("Binary op with incompatible shapes"));
    /// ```
    pub fn first_error(&self) -> Option<Error> {
        self.state.borrow().first_error.clone()
    }

    /// Parameter `number` of the computation: an input of `shape` (layout included) supplied at
    /// execution. Numbers must be unique and, by [`XlaBuilder::build`], run from 0 without gaps.
    ///
    /// ```
    /// use lazy_xla::{shape, XlaBuilder};
    /// let b = XlaBuilder::new("f");
    /// let x = b.parameter(0, &shape!(f32[2, 3]{0, 1}), "x");
    /// assert_eq!(b.get_shape(x)?.to_string(), "f32[2,3]{0,1}");
    /// let again = b.parameter(0, &shape!(f32[2]), "y");
    /// assert!(b.get_shape(again).unwrap_err().to_string().starts_with("parameter 0 already registered"));
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    #[track_caller]
    pub fn parameter(&self, number: i64, shape: &Shape, name: &str) -> XlaOp<'_> {
        let name = hlo_identifier(name);
        self.record("parameter", &[], |emit, _| {
            let taken = emit.state.instructions.iter().any(|i| i.opcode == Opcode::Parameter { number });
            if taken {
                crate::error::invalid_argument!("parameter {number} already registered");
            }
            let name = emit.unique_name(&name);
            Ok(emit.emit_named(Opcode::Parameter { number }, &[], shape.clone(), name))
        })
    }

    /// A constant holding `literal` (its shape and layout included).
    ///
    /// ```
    /// use lazy_xla::{Literal, XlaBuilder};
    /// let b = XlaBuilder::new("f");
    /// let c = b.constant_literal(&Literal::vec1(&[7.0f32, 8.0, 9.0]));
    /// assert_eq!(b.get_shape(c)?.to_string(), "f32[3]{0}");
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    #[track_caller]
    pub fn constant_literal(&self, literal: &Literal) -> XlaOp<'_> {
        self.record("constant", &[], |emit, _| {
            Ok(emit.emit(Opcode::Constant(Arc::new(literal.clone())), &[], literal.shape().clone()))
        })
    }

    /// A scalar constant.
    ///
    /// ```
    /// let b = lazy_xla::XlaBuilder::new("f");
    /// let one = b.constant_r0(1i32);
    /// assert_eq!(b.get_shape(one)?.to_string(), "s32[]");
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    #[track_caller]
    pub fn constant_r0<T: NativeType>(&self, value: T) -> XlaOp<'_> {
        self.constant_literal(&Literal::scalar(value))
    }

    /// A rank-1 constant.
    ///
    /// ```
    /// let b = lazy_xla::XlaBuilder::new("f");
    /// let v = b.constant_r1(&[1.0f64, 2.0]);
    /// assert_eq!(b.get_shape(v)?.to_string(), "f64[2]{0}");
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    #[track_caller]
    pub fn constant_r1<T: NativeType>(&self, values: &[T]) -> XlaOp<'_> {
        self.constant_literal(&Literal::vec1(values))
    }

    /// The shape of `op`, known since the op was made; or the builder's first error.
    ///
    /// ```
    /// use lazy_xla::{reshape, shape, XlaBuilder};
    /// let b = XlaBuilder::new("f");
    /// let x = b.parameter(0, &shape!(f32[2, 3]), "x");
    /// assert_eq!(b.get_shape(reshape(x, &[3, 2]))?, shape!(f32[3, 2]));
    /// assert!(b.get_shape(reshape(x, &[4, 2])).is_err());
    /// assert!(b.get_shape(x).is_err()); // the builder has failed
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn get_shape(&self, op: XlaOp<'_>) -> Result<Shape> {
        let state = self.state.borrow();
        if let Some(error) = &state.first_error {
            return Err(error.clone());
        }
        let id = self.own_id(op)?;
        Ok(state.instructions[id].shape.clone())
    }

    /// The instruction `op` is, seen through elements of tuples recorded here (an element of
    /// a recorded tuple is that element), or `None` for a poisoned or foreign handle: what a
    /// transformation asks of values it has recorded, such as whether a loop's counter starts
    /// at a constant that came in through a call.
    pub(crate) fn resolved_instruction(&self, op: XlaOp<'_>) -> Option<Instruction> {
        let state = self.state.borrow();
        let mut id = self.own_id(op).ok()?;
        loop {
            let instruction = state.instructions.get(id)?;
            let element = match (&instruction.opcode, instruction.operands.first()) {
                (Opcode::GetTupleElement { index }, Some(&tuple)) => {
                    let tuple = state.instructions.get(tuple)?;
                    let is_tuple = matches!(tuple.opcode, Opcode::Tuple);
                    is_tuple.then(|| tuple.operands.get(*index as usize)).flatten()
                }
                _ => None,
            };
            match element {
                Some(&element) => id = element,
                None => return Some(instruction.clone()),
            }
        }
    }

    /// The computation whose result is `root`: every op recorded so far, with `root` as its
    /// root; or the first error recorded. Parameters must be numbered 0, 1, … without gaps.
    /// The builder stays usable.
    ///
    /// ```
    /// use lazy_xla::{shape, XlaBuilder};
    /// let b = XlaBuilder::new("f");
    /// let x = b.parameter(0, &shape!(f32[2]), "x");
    /// let computation = b.build(-x)?;
    /// assert_eq!(computation.program_shape().result, shape!(f32[2]));
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    #[track_caller]
    pub fn build(&self, root: XlaOp<'_>) -> Result<XlaComputation> {
        let location = Location::caller();
        let state = self.state.borrow();
        if let Some(error) = &state.first_error {
            return Err(error.clone());
        }
        let root = self.own_id(root)?;
        let mut numbers: Vec<i64> = state
            .instructions
            .iter()
            .filter_map(|i| match i.opcode {
                Opcode::Parameter { number } => Some(number),
                _ => None,
            })
            .collect();
        numbers.sort_unstable();
        if let Some(&invalid) = numbers.iter().find(|&&n| !(0..numbers.len() as i64).contains(&n)) {
            let listed: Vec<String> = numbers.iter().map(i64::to_string).collect();
            return Err(Error::invalid(format!(
                "invalid parameter number: {invalid} (parameters must be numbered 0..{} without gaps; \
                 computation {} has {}) at {location}",
                numbers.len(),
                self.name,
                listed.join(", ")
            )));
        }
        let name = format!("{}.{}", hlo_identifier(&self.name), state.next_id);
        let computation = HloComputation { name, instructions: state.instructions.clone(), root };
        Ok(XlaComputation::new(computation))
    }

    /// An instruction recorded as it is given, on `operands`, its called computations
    /// embedded: what a transformation of a computation (`autodiff`) copies, or makes with
    /// attributes it already holds. The shape is not inferred here; the verifier checks it when
    /// the computation compiles.
    #[track_caller]
    pub(crate) fn record_opcode<'b>(
        &'b self,
        opcode: &Opcode,
        operands: &[XlaOp<'b>],
        shape: &Shape,
    ) -> XlaOp<'b> {
        self.record(opcode.name(), operands, |emit, operands| {
            let mut opcode = opcode.clone();
            for called in opcode.called_computations_mut() {
                *called = emit.embed(called);
            }
            let ids: Vec<InstructionId> = operands.iter().map(|o| o.id).collect();
            Ok(emit.emit(opcode, &ids, shape.clone()))
        })
    }

    /// The position of `op` in this builder, or an error if another builder made it.
    fn own_id(&self, op: XlaOp<'_>) -> Result<InstructionId> {
        if !std::ptr::eq(op.builder, self) {
            return Err(Error::invalid(format!(
                "XlaOp with handle {} is built by builder '{}', but is trying to use it in builder '{}'",
                op.id.map_or(-1, |id| id as i64),
                op.builder.name,
                self.name
            )));
        }
        // A poisoned handle exists only once the builder has an error, which callers check first.
        op.id.ok_or_else(|| Error::invalid("use of a failed op"))
    }

    /// Records one user-level op: checks that the operands are this builder's and healthy,
    /// then lets `lower` infer the shape and append the instructions. A rejection is recorded
    /// as the builder's error (if it is the first), with the op's name, its operands' shapes
    /// and the caller's location, and a poisoned handle is returned.
    #[track_caller]
    pub(crate) fn record<'b>(
        &'b self,
        op: &str,
        operands: &[XlaOp<'b>],
        lower: impl FnOnce(&mut Emitter<'_>, &[Operand]) -> Result<InstructionId>,
    ) -> XlaOp<'b> {
        let location = Location::caller();
        let mut state = self.state.borrow_mut();
        if state.first_error.is_some() {
            return XlaOp { builder: self, id: None };
        }
        let resolved: Result<Vec<Operand>> = operands
            .iter()
            .map(|&operand| {
                let id = self.own_id(operand)?;
                Ok(Operand { id, shape: state.instructions[id].shape.clone() })
            })
            .collect();
        let outcome = resolved.and_then(|resolved| {
            let shapes: Vec<String> = resolved.iter().map(|o| o.shape.to_string()).collect();
            let context = |source: Error| Error::Op {
                op: op.to_string(),
                operands: shapes.clone(),
                location,
                source: Box::new(source),
            };
            expect_arrays(op, &resolved).map_err(context)?;
            lower(&mut Emitter { state: &mut state }, &resolved).map_err(context)
        });
        match outcome {
            Ok(id) => XlaOp { builder: self, id: Some(id) },
            Err(error) => {
                let error = match error {
                    Error::Op { .. } => error,
                    other => Error::Op {
                        op: op.to_string(),
                        operands: Vec::new(),
                        location,
                        source: Box::new(other),
                    },
                };
                state.first_error = Some(error);
                XlaOp { builder: self, id: None }
            }
        }
    }
}

impl fmt::Debug for XlaBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.borrow();
        f.debug_struct("XlaBuilder")
            .field("name", &self.name)
            .field("ops", &state.instructions.len())
            .field("first_error", &state.first_error)
            .finish()
    }
}

impl<'b> XlaOp<'b> {
    /// The builder that made this op.
    ///
    /// ```
    /// let b = lazy_xla::XlaBuilder::new("f");
    /// let x = b.constant_r0(1.0f32);
    /// assert_eq!(x.builder().name(), "f");
    /// ```
    pub fn builder(&self) -> &'b XlaBuilder {
        self.builder
    }

    /// Whether this handle stands for an op that was recorded (not a rejected one).
    ///
    /// ```
    /// use lazy_xla::{reshape, XlaBuilder};
    /// let b = XlaBuilder::new("f");
    /// let x = b.constant_r1(&[1.0f32, 2.0]);
    /// assert!(x.is_valid());
    /// assert!(!reshape(x, &[3]).is_valid());
    /// ```
    pub fn is_valid(&self) -> bool {
        self.id.is_some()
    }
}

impl fmt::Debug for XlaOp<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.id {
            Some(id) => write!(f, "XlaOp({}#{id})", self.builder.name),
            None => write!(f, "XlaOp({}#failed)", self.builder.name),
        }
    }
}

/// The ops whose operands may be tuples; every other op takes arrays.
const TAKES_TUPLES: &[&str] = &["tuple", "get-tuple-element", "while", "conditional", "call"];

/// XLA's `ExpectArray` for every operand of an op that takes arrays: a tuple operand is
/// rejected with XLA's sentence, which names the operand its own way for each op.
fn expect_arrays(op: &str, operands: &[Operand]) -> Result<()> {
    if TAKES_TUPLES.contains(&op) {
        return Ok(());
    }
    let Some((position, tuple)) = operands.iter().enumerate().find(|(_, o)| o.shape.is_tuple()) else {
        return Ok(());
    };
    let shape = tuple.shape.human_string();
    let side = if position == 0 { "lhs" } else { "rhs" };
    let what = match op {
        "pad" if position == 0 => invalid_argument!("Pad operation does not support tuple-shape operands."),
        "pad" => invalid_argument!("Pad operation does not support non-scalar padding values."),
        // The reducer check names a tuple init value, convert names its target (XLA's order).
        "reduce" if position == 1 => return Ok(()),
        "convert" | "bitcast-convert" | "topk" => return Ok(()),
        "clamp" => ["clamp min", "clamp operand", "clamp max"][position.min(2)].to_string(),
        "select" => ["select pred", "select on_true", "select on_false"][position.min(2)].to_string(),
        "reshape" | "transpose" => op.to_string(),
        "broadcast" | "broadcast_in_dim" => "operand of broadcast".to_string(),
        "concatenate" => "operand of concatenation".to_string(),
        "dot" => format!("{side} of dot"),
        _ if operands.len() == 1 && is_elementwise(op) => "operand of unary operation".to_string(),
        _ if operands.len() == 2 && is_elementwise(op) => format!("{side} of binary operation {op}"),
        _ => format!("operand of {op}"),
    };
    invalid_argument!("Expected array argument for {what}, but got {shape}.")
}

/// Whether `op` (an HLO name) is an element-wise unary or binary op or a comparison.
fn is_elementwise(op: &str) -> bool {
    op == "compare"
        || op == "reduce-precision"
        || UnaryOp::ALL.iter().any(|u| u.hlo_name() == op)
        || BinaryOp::ALL.iter().any(|b| b.hlo_name() == op)
}

/// `name` made into a valid HLO identifier (`[A-Za-z_][A-Za-z0-9_.-]*`).
fn hlo_identifier(name: &str) -> String {
    let mut identifier: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || "_.-".contains(c) { c } else { '_' }).collect();
    if !identifier.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        identifier.insert(0, '_');
    }
    identifier
}
