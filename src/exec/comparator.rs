//! Sort comparators read as orders of keys, so a sort compares native keys rather than
//! running its comparator per comparison.
//!
//! A comparator is recognized when it is a lexicographic "less" over pairs of its parameters
//! (`2i`, `2i + 1`: operand `i` of the sort, left and right), each pair seen through the same
//! map: `compare(k(p2i), k(p2i+1), LT or GT)`, or
//! `or(compare(.., LT), and(compare(.., EQ), rest))` for a further key. The maps are the ones
//! jax and XLA write: none, XLA's total order (`type=TOTALORDER`, which the importer lowers to
//! a select over the bits), and jax's NaN and zero canonicalization before the total order
//! (`jnp.sort`, `jnp.argsort`, `lax.sort`). Anything else is not recognized, and runs as the
//! compiled scalar program of the comparator.

use crate::attributes::{BinaryOp, ComparisonDirection};
use crate::hlo::ir::{HloComputation, InstructionId, Opcode};
use crate::storage::{with_native_type, NativeType};

/// How a key's values are mapped before they are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyMap {
    /// The values as `compare` orders them (floats by IEEE comparison, NaN unordered).
    Plain,
    /// XLA's total order of the values' bits: `-NaN < -∞ < … < -0 < +0 < … < ∞ < +NaN`.
    TotalOrder,
    /// jax's canonicalization (every NaN the positive quiet NaN, -0 as +0), then the total
    /// order: NaNs last and equal, zeros equal.
    Canonical,
}

/// One key of a recognized comparator: the sort operand it reads, its map, its direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Key {
    pub(crate) operand: usize,
    pub(crate) map: KeyMap,
    pub(crate) descending: bool,
}

/// The keys of a comparator that orders lexicographically by them (ties keep their order,
/// when the sort is stable).
pub(crate) fn key_order(comparator: &HloComputation) -> Option<Vec<Key>> {
    let keys = less(comparator, comparator.root)?;
    let parameters = comparator.parameters().len();
    (!keys.is_empty() && keys.iter().all(|k| 2 * k.operand + 1 < parameters)).then_some(keys)
}

/// The keys of the "less" expression `id`.
fn less(c: &HloComputation, id: InstructionId) -> Option<Vec<Key>> {
    let id = through(c, id);
    let instruction = &c.instructions[id];
    match instruction.opcode {
        Opcode::Compare(direction @ (ComparisonDirection::Lt | ComparisonDirection::Gt)) => {
            Some(vec![key(c, instruction.operands[0], instruction.operands[1], direction)?])
        }
        Opcode::Binary(BinaryOp::Or) => {
            let [a, b] = instruction.operands[..] else { return None };
            [(a, b), (b, a)].into_iter().find_map(|(first, tie)| {
                let first = through(c, first);
                let Opcode::Compare(direction @ (ComparisonDirection::Lt | ComparisonDirection::Gt)) =
                    c.instructions[first].opcode
                else {
                    return None;
                };
                let (left, right) = (c.instructions[first].operands[0], c.instructions[first].operands[1]);
                let head = key(c, left, right, direction)?;
                let rest = broken_tie(c, tie, (left, right))?;
                Some([vec![head], less(c, rest)?].concat())
            })
        }
        _ => None,
    }
}

/// For `and(compare(l, r, EQ), rest)` (in either order), where `l` and `r` map the same
/// parameters by the same map as `left` and `right`, `rest`.
fn broken_tie(
    c: &HloComputation,
    id: InstructionId,
    (left, right): (InstructionId, InstructionId),
) -> Option<InstructionId> {
    let id = through(c, id);
    let instruction = &c.instructions[id];
    let Opcode::Binary(BinaryOp::And) = instruction.opcode else { return None };
    let [a, b] = instruction.operands[..] else { return None };
    let equal = |e: InstructionId| {
        let e = through(c, e);
        let operands = &c.instructions[e].operands;
        let same_key =
            |a: InstructionId, b: InstructionId| mapped(c, a).is_some() && mapped(c, a) == mapped(c, b);
        matches!(c.instructions[e].opcode, Opcode::Compare(ComparisonDirection::Eq))
            && same_key(operands[0], left)
            && same_key(operands[1], right)
    };
    match (equal(a), equal(b)) {
        (true, _) => Some(b),
        (_, true) => Some(a),
        _ => None,
    }
}

/// The key `compare(left, right, direction)` orders by: the same map of parameters `2i` (left)
/// and `2i + 1` (right), or the other way round (a descending key).
fn key(
    c: &HloComputation,
    left: InstructionId,
    right: InstructionId,
    direction: ComparisonDirection,
) -> Option<Key> {
    let ((a, map), (b, other)) = (mapped(c, left)?, mapped(c, right)?);
    if map != other || a / 2 != b / 2 || a == b {
        return None;
    }
    // compare(k(p2i), k(p2i+1), LT) is ascending; with the parameters swapped, or GT, it is
    // descending (both: ascending).
    let swapped = a % 2 == 1;
    let descending = swapped != (direction == ComparisonDirection::Gt);
    Some(Key { operand: (a / 2) as usize, map, descending })
}

/// The parameter and map of a key expression.
fn mapped(c: &HloComputation, id: InstructionId) -> Option<(i64, KeyMap)> {
    let id = through(c, id);
    if let Opcode::Parameter { number } = c.instructions[id].opcode {
        return Some((number, KeyMap::Plain));
    }
    let inner = total_order_key(c, id)?;
    if let Opcode::Parameter { number } = c.instructions[inner].opcode {
        return Some((number, KeyMap::TotalOrder));
    }
    let value = canonicalized(c, inner)?;
    match c.instructions[value].opcode {
        Opcode::Parameter { number } => Some((number, KeyMap::Canonical)),
        _ => None,
    }
}

/// For the importer's lowering of a total-order comparison's key,
/// `select(lt(bits, 0), xor(bits, MAX), bits)` with `bits = bitcast-convert(e)`, `e`.
fn total_order_key(c: &HloComputation, id: InstructionId) -> Option<InstructionId> {
    let (pred, flipped, bits) = select_of(c, id)?;
    let bits = through(c, bits);
    let Opcode::BitcastConvert = c.instructions[bits].opcode else { return None };
    let value = through(c, c.instructions[bits].operands[0]);
    let pred = through(c, pred);
    let negative = matches!(c.instructions[pred].opcode, Opcode::Compare(ComparisonDirection::Lt))
        && same(c, c.instructions[pred].operands[0], bits)
        && constant_is(c, c.instructions[pred].operands[1], |v| v == 0.0);
    let flipped = through(c, flipped);
    let xor = matches!(c.instructions[flipped].opcode, Opcode::Binary(BinaryOp::Xor));
    let magnitude_bits = xor && {
        let operands = &c.instructions[flipped].operands;
        let bits_type = c.instructions[bits].shape.element_type();
        let max = match bits_type.byte_size() {
            2 => f64::from(i16::MAX),
            4 => f64::from(i32::MAX),
            _ => i64::MAX as f64,
        };
        same(c, operands[0], bits) && constant_is(c, operands[1], |v| v == max)
    };
    (negative && magnitude_bits).then_some(value)
}

/// For jax's canonicalization `select(ne(x, x), NaN, select(eq(x, 0), 0, x))`, `x`.
fn canonicalized(c: &HloComputation, id: InstructionId) -> Option<InstructionId> {
    let (is_nan, nan, rest) = select_of(c, id)?;
    let (is_zero, zero, x) = select_of(c, rest)?;
    let x = through(c, x);
    let compare_of_x =
        |pred: InstructionId, direction: ComparisonDirection, other: &dyn Fn(InstructionId) -> bool| {
            let pred = through(c, pred);
            let operands = &c.instructions[pred].opcode;
            matches!(operands, Opcode::Compare(d) if *d == direction)
                && same(c, c.instructions[pred].operands[0], x)
                && other(c.instructions[pred].operands[1])
        };
    let nan_test = compare_of_x(is_nan, ComparisonDirection::Ne, &|o| same(c, o, x));
    let zero_test = compare_of_x(is_zero, ComparisonDirection::Eq, &|o| constant_is(c, o, |v| v == 0.0));
    let constants =
        constant_is(c, nan, f64::is_nan) && constant_is(c, zero, |v| v == 0.0 && v.is_sign_positive());
    (nan_test && zero_test && constants).then_some(x)
}

/// The operands of a select.
fn select_of(c: &HloComputation, id: InstructionId) -> Option<(InstructionId, InstructionId, InstructionId)> {
    let id = through(c, id);
    match (&c.instructions[id].opcode, &c.instructions[id].operands[..]) {
        (Opcode::Select, &[p, a, b]) => Some((p, a, b)),
        _ => None,
    }
}

/// Whether `id` is a scalar constant whose value (as an `f64`) passes `test`.
fn constant_is(c: &HloComputation, id: InstructionId, test: impl Fn(f64) -> bool) -> bool {
    let id = through(c, id);
    match &c.instructions[id].opcode {
        Opcode::Constant(literal) if literal.shape().is_scalar() => {
            with_native_type!(literal.element_type(), T => {
                literal.memory::<T>().ok().and_then(|m| m.first().copied()).is_some_and(|v| test(NativeType::to_f64(v)))
            })
        }
        _ => false,
    }
}

/// Whether `a` and `b` are the same value (the same instruction, seen through no-ops).
fn same(c: &HloComputation, a: InstructionId, b: InstructionId) -> bool {
    through(c, a) == through(c, b)
}

/// `id` seen through instructions that leave a scalar as it is: a broadcast, reshape or copy
/// of a scalar to a scalar.
fn through(c: &HloComputation, mut id: InstructionId) -> InstructionId {
    loop {
        let instruction = &c.instructions[id];
        let no_op = matches!(
            instruction.opcode,
            Opcode::Broadcast { .. } | Opcode::Reshape | Opcode::Transpose { .. }
        ) && instruction.shape.is_scalar()
            && instruction.operands.len() == 1
            && c.instructions[instruction.operands[0]].shape == instruction.shape;
        if !no_op {
            return id;
        }
        id = instruction.operands[0];
    }
}
