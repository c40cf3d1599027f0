//! Scalar programs: a computation of scalars (a reducer, a mapped function, a comparator)
//! compiled once into a list of operations on typed scalar registers, then run again and again
//! without allocating, with the same per-type arithmetic as the loop engine.

use crate::attributes::{BinaryOp, ComparisonDirection, UnaryOp};
use crate::element_type::ElementType;
use crate::error::Result;
use crate::exec::element::{convert, with_binary_fn, Element};
use crate::exec::math::{chunk_loops_fuse, Fused, MulAdd, Separate};
use crate::hlo::ir::{HloComputation, Opcode};
use crate::literal::Literal;
use crate::shape::Shape;
use crate::storage::with_native_type;

/// One value of any element type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Scalar {
    Pred(bool),
    S8(i8),
    S16(i16),
    S32(i32),
    S64(i64),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    F16(half::f16),
    Bf16(half::bf16),
    F32(f32),
    F64(f64),
}

/// Runs `$body` with `$v` bound to the scalar's value (of its native type).
macro_rules! with_scalar {
    ($scalar:expr, $v:ident => $body:expr) => {
        match $scalar {
            Scalar::Pred($v) => $body,
            Scalar::S8($v) => $body,
            Scalar::S16($v) => $body,
            Scalar::S32($v) => $body,
            Scalar::S64($v) => $body,
            Scalar::U8($v) => $body,
            Scalar::U16($v) => $body,
            Scalar::U32($v) => $body,
            Scalar::U64($v) => $body,
            Scalar::F16($v) => $body,
            Scalar::Bf16($v) => $body,
            Scalar::F32($v) => $body,
            Scalar::F64($v) => $body,
        }
    };
}

/// Runs `$body` on the values of two scalars of one type (`$a`, `$b`), wrapping the result
/// with `$wrap` (`Scalar::same` for the operands' type, or a fixed variant); `$mismatch` when
/// the types differ (the verifier rules it out).
macro_rules! with_scalar_pair {
    ($x:expr, $y:expr, |$a:ident, $b:ident| $body:expr, $mismatch:expr) => {
        match ($x, $y) {
            (Scalar::Pred($a), Scalar::Pred($b)) => $body,
            (Scalar::S8($a), Scalar::S8($b)) => $body,
            (Scalar::S16($a), Scalar::S16($b)) => $body,
            (Scalar::S32($a), Scalar::S32($b)) => $body,
            (Scalar::S64($a), Scalar::S64($b)) => $body,
            (Scalar::U8($a), Scalar::U8($b)) => $body,
            (Scalar::U16($a), Scalar::U16($b)) => $body,
            (Scalar::U32($a), Scalar::U32($b)) => $body,
            (Scalar::U64($a), Scalar::U64($b)) => $body,
            (Scalar::F16($a), Scalar::F16($b)) => $body,
            (Scalar::Bf16($a), Scalar::Bf16($b)) => $body,
            (Scalar::F32($a), Scalar::F32($b)) => $body,
            (Scalar::F64($a), Scalar::F64($b)) => $body,
            _ => $mismatch,
        }
    };
}

/// The Rust types of scalars, and how to make one.
pub(crate) trait ScalarValue: Element {
    fn scalar(self) -> Scalar;
}

macro_rules! scalar_value {
    ($($t:ty => $variant:ident),*) => {$(
        impl ScalarValue for $t {
            fn scalar(self) -> Scalar { Scalar::$variant(self) }
        }
    )*};
}
scalar_value!(bool => Pred, i8 => S8, i16 => S16, i32 => S32, i64 => S64, u8 => U8, u16 => U16, u32 => U32,
    u64 => U64, half::f16 => F16, half::bf16 => Bf16, f32 => F32, f64 => F64);

impl Scalar {
    /// Element `position` (in memory order) of an array literal.
    pub(crate) fn read(literal: &Literal, position: usize) -> Scalar {
        with_native_type!(literal.element_type(), T => {
            literal.memory::<T>().map_or(Scalar::Pred(false), |memory| memory[position].scalar())
        })
    }

    /// Stores this scalar, converted to `out`'s element type (the same type, in a verified
    /// computation), at `position` (memory order) of `out`.
    pub(crate) fn store(self, out: &mut Literal, position: usize) -> Result<()> {
        with_native_type!(out.element_type(), T => {
            let memory = out.storage_mut()?.as_mut_slice::<T>()?;
            memory[position] = with_scalar!(self, v => convert::<_, T>(v));
        });
        Ok(())
    }

    /// The scalar as a rank-0 literal.
    pub(crate) fn literal(self) -> Literal {
        with_scalar!(self, v => Literal::scalar(v))
    }
}

impl Scalar {
    /// The scalar's bits, zero-extended.
    fn bits(self) -> u64 {
        match self {
            Scalar::Pred(v) => u64::from(v),
            Scalar::S8(v) => u64::from(v as u8),
            Scalar::S16(v) => u64::from(v as u16),
            Scalar::S32(v) => u64::from(v as u32),
            Scalar::S64(v) => v as u64,
            Scalar::U8(v) => u64::from(v),
            Scalar::U16(v) => u64::from(v),
            Scalar::U32(v) => u64::from(v),
            Scalar::U64(v) => v,
            Scalar::F16(v) => u64::from(v.to_bits()),
            Scalar::Bf16(v) => u64::from(v.to_bits()),
            Scalar::F32(v) => u64::from(v.to_bits()),
            Scalar::F64(v) => v.to_bits(),
        }
    }

    /// The scalar of `element_type` whose bits are the low bits of `bits`.
    fn from_bits(element_type: ElementType, bits: u64) -> Scalar {
        match element_type {
            ElementType::Pred => Scalar::Pred(bits & 1 == 1),
            ElementType::S8 => Scalar::S8(bits as u8 as i8),
            ElementType::S16 => Scalar::S16(bits as u16 as i16),
            ElementType::S32 => Scalar::S32(bits as u32 as i32),
            ElementType::S64 => Scalar::S64(bits as i64),
            ElementType::U8 => Scalar::U8(bits as u8),
            ElementType::U16 => Scalar::U16(bits as u16),
            ElementType::U32 => Scalar::U32(bits as u32),
            ElementType::U64 => Scalar::U64(bits),
            ElementType::F16 => Scalar::F16(half::f16::from_bits(bits as u16)),
            ElementType::Bf16 => Scalar::Bf16(half::bf16::from_bits(bits as u16)),
            ElementType::F32 => Scalar::F32(f32::from_bits(bits as u32)),
            ElementType::F64 => Scalar::F64(f64::from_bits(bits)),
        }
    }
}

/// One operation of a scalar program, over register numbers.
#[derive(Clone, Debug)]
enum Op {
    Parameter(usize),
    Constant(Scalar),
    Unary(UnaryOp, usize),
    Binary(BinaryOp, usize, usize),
    Compare(ComparisonDirection, usize, usize),
    Select(usize, usize, usize),
    Clamp(usize, usize, usize),
    Convert(ElementType, usize),
    /// The bits of a register as another type of the same size.
    Bitcast(ElementType, usize),
}

/// A computation of scalars, ready to run.
#[derive(Clone, Debug)]
pub(crate) struct ScalarProgram {
    /// One operation per register, operands before users.
    ops: Vec<Op>,
    /// The registers holding the results: the root, or the elements of a root tuple.
    outputs: Vec<usize>,
    /// Whether polynomials step with fused multiply-adds, as the chunk loops do on this CPU.
    fused: bool,
}

impl ScalarProgram {
    /// Compiles `computation`, or `None` if it is not a function of scalars: made of scalar
    /// element-wise ops, conversions and bitcasts, no-op broadcasts and reshapes of scalars,
    /// tuples of scalars taken apart again, and calls of such computations (inlined). A
    /// computation that is not runs as a plan instead.
    pub(crate) fn compile(computation: &HloComputation) -> Option<ScalarProgram> {
        let mut ops = Vec::with_capacity(computation.instructions.len());
        let parameters = computation.parameters().len();
        let arguments: Vec<usize> = (0..parameters)
            .map(|number| {
                ops.push(Op::Parameter(number));
                ops.len() - 1
            })
            .collect();
        let outputs = inline(computation, &arguments, &mut ops)?;
        Some(ScalarProgram { ops, outputs, fused: chunk_loops_fuse() })
    }

    /// Runs the program on `arguments` (one per parameter), using `registers` as scratch (it
    /// keeps its capacity between runs), and returns the results.
    pub(crate) fn run<'r>(
        &'r self,
        arguments: &[Scalar],
        registers: &'r mut Vec<Scalar>,
    ) -> impl Iterator<Item = Scalar> + 'r {
        match self.fused {
            true => self.run_with::<Fused>(arguments, registers),
            false => self.run_with::<Separate>(arguments, registers),
        }
        self.outputs.iter().map(move |&o| registers[o])
    }

    /// Runs the operations into `registers`, polynomials stepping with `M`.
    fn run_with<M: MulAdd>(&self, arguments: &[Scalar], registers: &mut Vec<Scalar>) {
        registers.clear();
        for op in &self.ops {
            let r = |k: usize| registers[k];
            let value = match *op {
                Op::Parameter(number) => arguments.get(number).copied().unwrap_or(Scalar::Pred(false)),
                Op::Constant(value) => value,
                Op::Bitcast(to, a) => Scalar::from_bits(to, r(a).bits()),
                Op::Unary(op, a) => unary::<M>(op, r(a)),
                Op::Binary(op, a, b) => binary(op, r(a), r(b)),
                Op::Compare(direction, a, b) => Scalar::Pred(compare(direction, r(a), r(b))),
                Op::Select(p, a, b) => match r(p) {
                    Scalar::Pred(true) => r(a),
                    _ => r(b),
                },
                Op::Clamp(lo, x, hi) => binary(BinaryOp::Min, binary(BinaryOp::Max, r(x), r(lo)), r(hi)),
                Op::Convert(to, a) => convert_to(to, r(a)),
            };
            registers.push(value);
        }
    }
}

/// Appends the operations of `computation`, its parameters in the registers `arguments`, and
/// returns the registers of its results (the root, or the elements of a root tuple); `None`
/// if it is not a function of scalars (see [`ScalarProgram::compile`]). An instruction that
/// leaves a scalar as it is (a broadcast, reshape or transpose of one) takes its operand's
/// register; a tuple of scalars is the list of its elements' registers.
fn inline(computation: &HloComputation, arguments: &[usize], ops: &mut Vec<Op>) -> Option<Vec<usize>> {
    let mut registers: Vec<Vec<usize>> = Vec::with_capacity(computation.instructions.len());
    for instruction in &computation.instructions {
        let single = |k: usize| -> Option<usize> {
            let id = *instruction.operands.get(k)?;
            match registers.get(id)?.as_slice() {
                [register] if !computation.instructions[id].shape.is_tuple() => Some(*register),
                _ => None,
            }
        };
        let all = || (0..instruction.operands.len()).map(single).collect::<Option<Vec<usize>>>();
        let scalar = instruction.shape.is_scalar();
        let op = match &instruction.opcode {
            Opcode::Parameter { number } if scalar => {
                registers.push(vec![*arguments.get(usize::try_from(*number).ok()?)?]);
                continue;
            }
            Opcode::Tuple if instruction.shape.tuple_shapes().iter().all(Shape::is_scalar) => {
                registers.push(all()?);
                continue;
            }
            Opcode::GetTupleElement { index } => {
                let tuple = registers.get(*instruction.operands.first()?)?;
                registers.push(vec![*tuple.get(usize::try_from(*index).ok()?)?]);
                continue;
            }
            Opcode::Call { computation: called } => {
                registers.push(inline(called, &all()?, ops)?);
                continue;
            }
            _ if !scalar => return None,
            Opcode::Broadcast { .. } | Opcode::Reshape | Opcode::Transpose { .. } => {
                registers.push(vec![single(0)?]);
                continue;
            }
            Opcode::Constant(literal) => Op::Constant(Scalar::read(literal, 0)),
            Opcode::Unary(op) => Op::Unary(*op, single(0)?),
            Opcode::Binary(op) => Op::Binary(*op, single(0)?, single(1)?),
            Opcode::Compare(direction) => Op::Compare(*direction, single(0)?, single(1)?),
            Opcode::Select => Op::Select(single(0)?, single(1)?, single(2)?),
            Opcode::Clamp => Op::Clamp(single(0)?, single(1)?, single(2)?),
            Opcode::Convert => Op::Convert(instruction.shape.element_type(), single(0)?),
            Opcode::BitcastConvert => Op::Bitcast(instruction.shape.element_type(), single(0)?),
            _ => return None,
        };
        ops.push(op);
        registers.push(vec![ops.len() - 1]);
    }
    let root_shape = &computation.instructions[computation.root].shape;
    let scalars = match root_shape.is_tuple() {
        true => root_shape.tuple_shapes().iter().all(Shape::is_scalar),
        false => root_shape.is_scalar(),
    };
    scalars.then(|| registers.get(computation.root).cloned()).flatten()
}

fn unary<M: MulAdd>(op: UnaryOp, x: Scalar) -> Scalar {
    use UnaryOp::*;
    match op {
        IsFinite => return Scalar::Pred(with_scalar!(x, v => v.is_finite())),
        ReducePrecision { exponent_bits, mantissa_bits } => {
            return with_scalar!(x, v => v.reduce_precision(exponent_bits, mantissa_bits).scalar())
        }
        _ => {}
    }
    with_scalar!(x, v => {
        let f = match op {
            Neg => Element::neg,
            Abs => Element::abs,
            Exp => Element::exp::<M>,
            Log => Element::log::<M>,
            Log1p => Element::log1p::<M>,
            Expm1 => Element::expm1::<M>,
            Tanh => Element::tanh::<M>,
            Logistic => Element::logistic::<M>,
            Sqrt => Element::sqrt,
            Rsqrt => Element::rsqrt,
            Sign => Element::sign,
            Floor => Element::floor,
            Ceil => Element::ceil,
            Round => Element::round,
            RoundNearestEven => Element::round_nearest_even,
            Sin => Element::sin::<M>,
            Cos => Element::cos::<M>,
            Tan => Element::tan::<M>,
            Erf => Element::erf::<M>,
            Cbrt => Element::cbrt::<M>,
            Clz => Element::clz,
            PopulationCount => Element::population_count,
            Not | IsFinite | ReducePrecision { .. } => Element::not,
        };
        f(v).scalar()
    })
}

fn binary(op: BinaryOp, x: Scalar, y: Scalar) -> Scalar {
    with_scalar_pair!(x, y, |a, b| with_binary_fn!(_, op, f => f(a, b).scalar()), x)
}

fn compare(direction: ComparisonDirection, x: Scalar, y: Scalar) -> bool {
    with_scalar_pair!(x, y, |a, b| direction.holds(a, b), false)
}

fn convert_to(to: ElementType, x: Scalar) -> Scalar {
    with_scalar!(x, v => with_native_type!(to, D => convert::<_, D>(v).scalar()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{add, and, eq, gt, lt, or, select, tuple, XlaBuilder};

    #[test]
    fn an_argmax_reducer_runs_on_scalars() {
        let r = XlaBuilder::new("argmax");
        let (f, s) = (Shape::scalar(ElementType::F32), Shape::scalar(ElementType::S32));
        let (av, ai) = (r.parameter(0, &f, "av"), r.parameter(1, &s, "ai"));
        let (bv, bi) = (r.parameter(2, &f, "bv"), r.parameter(3, &s, "bi"));
        let a_wins = or(gt(av, bv, &[]), and(eq(av, bv, &[]), lt(ai, bi, &[]), &[]), &[]);
        let computation = r.build(tuple(&r, &[select(a_wins, av, bv), select(a_wins, ai, bi)])).unwrap();
        let program = ScalarProgram::compile(&computation.entry).expect("scalar");
        let mut registers = Vec::new();
        let run = |args: [Scalar; 4], registers: &mut Vec<Scalar>| {
            program.run(&args, registers).collect::<Vec<_>>()
        };
        let (v, i) = (Scalar::F32, Scalar::S32);
        assert_eq!(run([v(1.0), i(0), v(5.0), i(1)], &mut registers), [v(5.0), i(1)]);
        assert_eq!(run([v(5.0), i(1), v(5.0), i(2)], &mut registers), [v(5.0), i(1)]);
        assert_eq!(run([v(7.0), i(0), v(0.0), i(1)], &mut registers), [v(7.0), i(0)]);
    }

    #[test]
    fn arithmetic_is_the_loop_engines() {
        let r = XlaBuilder::new("sum");
        let s = Shape::scalar(ElementType::S8);
        let sum = r.build(add(r.parameter(0, &s, "a"), r.parameter(1, &s, "b"), &[])).unwrap();
        let program = ScalarProgram::compile(&sum.entry).expect("scalar");
        let mut registers = Vec::new();
        let out: Vec<Scalar> = program.run(&[Scalar::S8(100), Scalar::S8(100)], &mut registers).collect();
        assert_eq!(out, [Scalar::S8(-56)], "wraps");
        assert_eq!(convert_to(ElementType::S32, Scalar::F32(f32::NAN)), Scalar::S32(0));
    }
}
