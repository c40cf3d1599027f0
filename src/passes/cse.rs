//! Common-subexpression elimination: an instruction identical to an earlier one (same opcode
//! and attributes, same operands, same shape, layout included) is replaced by it, in one
//! forward sweep with a hash map, O(size of the graph).
//!
//! What "identical" means, per opcode:
//!
//! | opcode        | merged with an earlier one when                                          |
//! |---------------|--------------------------------------------------------------------------|
//! | `parameter`   | never (each parameter is an input of its own)                            |
//! | `constant`    | the literals have the same shape and the same bits (so `0.0` and `-0.0`  |
//! |               | stay apart, and NaNs merge only with the very same NaN)                  |
//! | `reduce`      | same dimensions and reducers equal up to instruction names               |
//! | `fusion`      | fused computations equal up to instruction names                         |
//! | anything else | the attributes are equal (`iota` by its dimension, `slice` by its bounds…) |
//!
//! and, for all of them, the same operands (after earlier merges) and the same shape.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher, RandomState};
use std::mem::discriminant;
use std::sync::Arc;

use crate::hlo::ir::{HloComputation, Instruction, InstructionId, Opcode};

use crate::hlo::rewrite::Rewrite;
use crate::literal::Literal;
use crate::passes::pass::Pass;
use crate::storage::with_native_type;

/// Replaces each instruction by an earlier identical one, if there is one.
pub(crate) struct CommonSubexpressions;

impl Pass for CommonSubexpressions {
    fn name(&self) -> &'static str {
        "cse"
    }

    fn run(&self, computation: &mut HloComputation) -> bool {
        let count = computation.instructions.len();
        // The kept instructions by their key's hash: the latest one with each hash, and
        // before each kept instruction the previous one with its hash (`NONE`: no other).
        // Instructions are compared where they stand, never copied.
        const NONE: InstructionId = InstructionId::MAX;
        let mut latest_with_hash: HashMap<u64, InstructionId> = HashMap::with_capacity(count);
        let mut previous_with_hash = vec![NONE; count];
        let hasher = RandomState::new();
        // Counted here rather than taken from `rewrite_forward`, which compares instructions
        // with `==`, and a NaN constant is never `==` to itself.
        let mut changed = false;
        computation.rewrite_forward(|before, instruction| {
            if matches!(instruction.opcode, Opcode::Parameter { .. }) {
                return Rewrite::Keep;
            }
            let hash = hasher.hash_one(Key(instruction));
            let mut candidate = latest_with_hash.get(&hash).copied().unwrap_or(NONE);
            while candidate != NONE {
                if same_instruction(&before[candidate], instruction) {
                    changed = true;
                    return Rewrite::Forward(candidate);
                }
                candidate = previous_with_hash[candidate];
            }
            let id = before.len();
            previous_with_hash[id] = latest_with_hash.insert(hash, id).unwrap_or(NONE);
            Rewrite::Keep
        });
        changed
    }
}

/// An instruction, names aside, hashed as the table in the module docs says (equal
/// instructions by [`same_instruction`] hash equally).
struct Key<'a>(&'a Instruction);

impl Hash for Key<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let Instruction { opcode, operands, shape, .. } = self.0;
        operands.hash(state);
        // Equal shapes have equal dimensions; the rest of a shape is compared, not hashed.
        shape.dimensions().hash(state);
        discriminant(opcode).hash(state);
        match opcode {
            Opcode::Parameter { number } => number.hash(state),
            // A prefix of the bits is enough for a hash: equal literals have equal prefixes.
            Opcode::Constant(literal) => literal_bits(literal, 16).hash(state),
            Opcode::Iota { dimension } | Opcode::Concatenate { dimension } => dimension.hash(state),
            Opcode::GetTupleElement { index } => index.hash(state),
            Opcode::Unary(op) => op.hash(state),
            Opcode::Binary(op) => op.hash(state),
            Opcode::Compare(direction) => direction.hash(state),
            Opcode::Broadcast { dimensions } | Opcode::Reverse { dimensions } => dimensions.hash(state),
            Opcode::Transpose { permutation } => permutation.hash(state),
            Opcode::Slice { starts, limits, strides } => (starts, limits, strides).hash(state),
            Opcode::Pad(config) => config.hash(state),
            Opcode::Dot { numbers, precision } => {
                numbers.hash(state);
                precision.hash(state);
            }
            Opcode::Reduce { dimensions, .. } | Opcode::Map { dimensions, .. } => dimensions.hash(state),
            Opcode::Fusion { kind, .. } => kind.hash(state),
            Opcode::Sort { dimension, is_stable, .. } => (dimension, is_stable).hash(state),
            Opcode::TopK { k, largest } => (k, largest).hash(state),
            Opcode::RngBitGenerator { algorithm } => algorithm.hash(state),
            Opcode::Gather { slice_sizes, .. } | Opcode::DynamicSlice { slice_sizes } => {
                slice_sizes.hash(state)
            }
            Opcode::Scatter { numbers, .. } => numbers.hash(state),
            Opcode::ReduceWindow { window, .. }
            | Opcode::SelectAndScatter { window, .. }
            | Opcode::Convolution { window, .. } => window.hash(state),
            Opcode::DynamicUpdateSlice
            | Opcode::BitcastConvert
            | Opcode::While { .. }
            | Opcode::Conditional { .. }
            | Opcode::Call { .. }
            | Opcode::Select
            | Opcode::Clamp
            | Opcode::Convert
            | Opcode::Reshape
            | Opcode::Tuple => {}
        }
        for called in opcode.called_computations() {
            called.instructions.len().hash(state);
        }
    }
}

/// Whether two instructions compute the same value, names aside.
fn same_instruction(a: &Instruction, b: &Instruction) -> bool {
    a.operands == b.operands && a.shape == b.shape && same_opcode(&a.opcode, &b.opcode)
}

/// Whether two opcodes are the same operation with the same attributes: literals by their
/// bits, called computations (reducers, fusions, loop bodies, …) by their structure (not their
/// names),
/// everything else by `==`.
fn same_opcode(a: &Opcode, b: &Opcode) -> bool {
    match (a, b) {
        (Opcode::Constant(x), Opcode::Constant(y)) => {
            Arc::ptr_eq(x, y)
                || (x.shape() == y.shape() && literal_bits(x, usize::MAX) == literal_bits(y, usize::MAX))
        }
        _ if !a.called_computations().is_empty() => {
            let (called_a, called_b) = (a.called_computations(), b.called_computations());
            without_computations(a) == without_computations(b)
                && called_a.len() == called_b.len()
                && called_a.iter().zip(&called_b).all(|(x, y)| same_computation(x, y))
        }
        _ => a == b,
    }
}

/// `opcode` with every computation it calls replaced by one empty placeholder, so that `==`
/// compares its other attributes only.
fn without_computations(opcode: &Opcode) -> Opcode {
    let placeholder = Arc::new(HloComputation { name: String::new(), instructions: Vec::new(), root: 0 });
    let mut opcode = opcode.clone();
    for called in opcode.called_computations_mut() {
        *called = placeholder.clone();
    }
    opcode
}

/// Whether two computations are the same graph, names aside.
fn same_computation(a: &HloComputation, b: &HloComputation) -> bool {
    a.root == b.root
        && a.instructions.len() == b.instructions.len()
        && a.instructions.iter().zip(&b.instructions).all(|(x, y)| same_instruction(x, y))
}

/// The first `limit` elements of a literal's buffer (padding included), as exact bits; a
/// tuple's elements' one after the other.
fn literal_bits(literal: &Literal, limit: usize) -> Vec<u64> {
    if literal.is_tuple() {
        let elements =
            (0..literal.shape().tuple_shapes().len()).filter_map(|i| literal.tuple_element(i).ok());
        return elements.flat_map(|e| literal_bits(e, limit)).take(limit).collect();
    }
    with_native_type!(literal.element_type(), T => literal
        .memory::<T>()
        .map(|memory| memory.iter().take(limit).map(|&v| v.bits()).collect())
        .unwrap_or_default())
}

/// An element's exact bit pattern (floats by `to_bits`, so `-0.0 != 0.0` and NaNs keep their
/// payloads).
trait Bits {
    /// The bits, zero-extended to 64.
    fn bits(self) -> u64;
}

/// Implements [`Bits`] for types whose value converts to `u64` with `$how`.
macro_rules! bits {
    ($($t:ty => |$v:ident| $how:expr;)*) => {$(
        impl Bits for $t {
            fn bits(self) -> u64 {
                let $v = self;
                $how
            }
        }
    )*};
}

bits! {
    bool => |v| u64::from(v);
    i8 => |v| u64::from(v as u8);
    i16 => |v| u64::from(v as u16);
    i32 => |v| u64::from(v as u32);
    i64 => |v| v as u64;
    u8 => |v| u64::from(v);
    u16 => |v| u64::from(v);
    u32 => |v| u64::from(v);
    u64 => |v| v;
    half::f16 => |v| u64::from(v.to_bits());
    half::bf16 => |v| u64::from(v.to_bits());
    f32 => |v| u64::from(v.to_bits());
    f64 => |v| v.to_bits();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::plan::evaluate;
    use crate::hlo::text::module_text;
    use crate::*;

    /// `computation`'s entry after the pass, and whether the pass changed it.
    fn cse(computation: &XlaComputation) -> (HloComputation, bool) {
        let mut c = (*computation.entry).clone();
        let changed = CommonSubexpressions.run(&mut c);
        c.remove_dead();
        (c, changed)
    }

    /// How many instructions of each opcode name the computation holds, as `name×count`.
    fn count(c: &HloComputation, opcode: &str) -> usize {
        c.instructions.iter().filter(|i| i.opcode.name() == opcode).count()
    }

    /// The results of `before` and `after` on `arguments`, each evaluated as it is (no
    /// optimizer); `before`'s also checked against its compiled (unfused) execution.
    fn run_both(
        before: &XlaComputation,
        after: HloComputation,
        arguments: &[&Literal],
    ) -> (Literal, Literal) {
        let expected = evaluate(&before.entry, arguments).unwrap();
        let actual = evaluate(&after, arguments).unwrap();
        let options = CompileOptions { fusion: false, ..Default::default() };
        let compiled = before.compile(&options).unwrap().execute(arguments).unwrap();
        assert_eq!(format!("{expected:?}"), format!("{compiled:?}"));
        (expected, actual)
    }

    #[test]
    fn identical_instructions_merge_and_users_follow() -> Result<()> {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(f32[2, 3]), "x");
        let y = b.parameter(1, &shape!(f32[2, 3]), "y");
        let (s1, s2) = (add(x, y, &[]), add(x, y, &[]));
        let (e1, e2) = (exp(s1), exp(s2));
        let computation = b.build(mul(e1, e2, &[]))?;
        let (c, changed) = cse(&computation);
        assert!(changed);
        assert_eq!(
            module_text(&Arc::new(c.clone())),
            "HloModule f.8, entry_computation_layout={(f32[2,3]{1,0}, f32[2,3]{1,0})->f32[2,3]{1,0}}\n\n\
             ENTRY f.8 {\n  \
             x.1 = f32[2,3]{1,0} parameter(0)\n  \
             y.2 = f32[2,3]{1,0} parameter(1)\n  \
             add.3 = f32[2,3]{1,0} add(x.1, y.2)\n  \
             exponential.5 = f32[2,3]{1,0} exponential(add.3)\n  \
             ROOT multiply.7 = f32[2,3]{1,0} multiply(exponential.5, exponential.5)\n\
             }\n\n"
        );
        let x_value = Literal::from_vec(&shape!(f32[2, 3]), vec![0.5f32, -1.0, 2.0, 0.0, 1.5, -3.0])?;
        let y_value = Literal::from_vec(&shape!(f32[2, 3]), vec![1.0f32, 2.0, -2.0, 0.25, 0.0, 1.0])?;
        let (before, after) = run_both(&computation, c, &[&x_value, &y_value]);
        assert_eq!(before, after);
        Ok(())
    }

    #[test]
    fn different_operands_attributes_or_shapes_stay_apart() -> Result<()> {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(f32[2, 3]), "x");
        let y = b.parameter(1, &shape!(f32[2, 3]), "y");
        let values = [
            add(x, y, &[]),
            add(y, x, &[]),
            slice(x, &[0, 0], &[2, 2], &[1, 1]),
            slice(x, &[0, 1], &[2, 3], &[1, 1]),
            rev(x, &[0]),
            rev(x, &[1]),
            transpose(x, &[1, 0]),
            reshape(x, &[3, 2]),
            reshape(x, &[6]),
            convert_element_type(x, ElementType::F64),
            convert_element_type(x, ElementType::S32),
        ];
        let flat: Vec<XlaOp> = values
            .iter()
            .map(|&v| {
                let count = b.get_shape(v).map_or(0, |s| s.element_count());
                convert_element_type(reshape(v, &[count]), ElementType::F32)
            })
            .collect();
        let computation = b.build(concat_in_dim(&b, &flat, 0))?;
        let (c, changed) = cse(&computation);
        assert!(!changed, "{}", module_text(&Arc::new(c)));
        Ok(())
    }

    #[test]
    fn a_merge_looks_past_other_instructions_of_the_same_hash() -> Result<()> {
        // Same opcode, operands and dimensions: the same hash, told apart by the element type.
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(f32[2, 3]), "x");
        let first = convert_element_type(x, ElementType::S32);
        let other = convert_element_type(x, ElementType::U32);
        let again = convert_element_type(x, ElementType::S32);
        let computation = b.build(tuple(&b, &[first, other, again]))?;
        let (c, changed) = cse(&computation);
        assert!(changed);
        assert_eq!(count(&c, "convert"), 2);
        let root = &c.instructions[c.root];
        assert_eq!(root.operands[0], root.operands[2]);
        assert_ne!(root.operands[0], root.operands[1]);
        Ok(())
    }

    #[test]
    fn parameters_never_merge() -> Result<()> {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(f32[2]), "x");
        let y = b.parameter(1, &shape!(f32[2]), "x");
        let computation = b.build(add(x, y, &[]))?;
        let (c, changed) = cse(&computation);
        assert!(!changed);
        assert_eq!(count(&c, "parameter"), 2);
        Ok(())
    }

    #[test]
    fn equal_constants_merge_by_bits() -> Result<()> {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(f32[3]), "x");
        let ones = [b.constant_r1(&[1.0f32, 2.0, 3.0]), b.constant_r1(&[1.0f32, 2.0, 3.0])];
        let nans = [b.constant_r1(&[f32::NAN; 3]), b.constant_r1(&[f32::NAN; 3])];
        let computation =
            b.build(add(add(x, ones[0], &[]), add(ones[1], add(nans[0], nans[1], &[]), &[]), &[]))?;
        let (c, changed) = cse(&computation);
        assert!(changed);
        assert_eq!(count(&c, "constant"), 2);
        let x_value = Literal::vec1(&[1.0f32, 2.0, 3.0]);
        let (before, after) = run_both(&computation, c, &[&x_value]);
        assert_eq!(before.to_string(), after.to_string());
        Ok(())
    }

    #[test]
    fn constants_that_differ_in_bits_type_or_layout_stay_apart() -> Result<()> {
        let b = XlaBuilder::new("f");
        let zero = b.constant_r0(0.0f32);
        let negative_zero = b.constant_r0(-0.0f32);
        let other_nan = b.constant_r0(f32::from_bits(f32::NAN.to_bits() | 1));
        let nan = b.constant_r0(f32::NAN);
        let row_major = Literal::from_vec(&shape!(s32[2, 2]), vec![1, 2, 3, 4])?;
        let column_major = row_major.relayout(&Layout::new(&[0, 1]))?;
        let m = add(b.constant_literal(&row_major), b.constant_literal(&column_major), &[]);
        let i = b.constant_r0(0i32);
        let sums = add(add(zero, negative_zero, &[]), add(other_nan, nan, &[]), &[]);
        let computation = b.build(add(sums, convert_element_type(add(m, i, &[]), ElementType::F32), &[]))?;
        let (c, changed) = cse(&computation);
        assert!(!changed, "{}\n{}", module_text(&computation.entry), module_text(&Arc::new(c)));
        Ok(())
    }

    #[test]
    fn iotas_merge_by_dimension_and_shape() -> Result<()> {
        let b = XlaBuilder::new("f");
        let rows = [iota(&b, &shape!(s32[2, 3]), 0), iota(&b, &shape!(s32[2, 3]), 0)];
        let columns = iota(&b, &shape!(s32[2, 3]), 1);
        let computation = b.build(add(add(rows[0], rows[1], &[]), columns, &[]))?;
        let (c, changed) = cse(&computation);
        assert!(changed);
        assert_eq!(count(&c, "iota"), 2);
        let (before, after) = run_both(&computation, c, &[]);
        assert_eq!(before, after);
        Ok(())
    }

    #[test]
    fn reduces_merge_when_their_reducers_match_up_to_names() -> Result<()> {
        let sum = {
            let b = XlaBuilder::new("sum");
            let p = b.parameter(0, &shape!(f32[]), "p");
            let q = b.parameter(1, &shape!(f32[]), "q");
            b.build(add(p, q, &[]))?
        };
        let maximum = {
            let b = XlaBuilder::new("maximum");
            let p = b.parameter(0, &shape!(f32[]), "p");
            let q = b.parameter(1, &shape!(f32[]), "q");
            b.build(max(p, q, &[]))?
        };
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(f32[2, 3]), "x");
        let zero = b.constant_r0(0.0f32);
        let sums = [reduce(x, zero, &sum, &[1]), reduce(x, zero, &sum, &[1])];
        let maxima = reduce(x, zero, &maximum, &[1]);
        let columns = reduce(x, zero, &sum, &[0]);
        let rows = add(add(sums[0], sums[1], &[]), maxima, &[]);
        let computation = b.build(concat_in_dim(&b, &[rows, columns], 0))?;
        let (c, changed) = cse(&computation);
        assert!(changed);
        assert_eq!(count(&c, "reduce"), 3);
        let x_value = Literal::from_vec(&shape!(f32[2, 3]), vec![0.5f32, -1.0, 2.0, 0.0, 1.5, -3.0])?;
        let (before, after) = run_both(&computation, c, &[&x_value]);
        assert_eq!(before, after);
        Ok(())
    }

    #[test]
    fn merges_cascade_in_one_sweep() -> Result<()> {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(s32[4]), "x");
        let chain = |x| neg(abs(neg(x)));
        let computation = b.build(sub(chain(x), chain(x), &[]))?;
        let (c, changed) = cse(&computation);
        assert!(changed);
        assert_eq!((count(&c, "negate"), count(&c, "abs"), c.instructions.len()), (2, 1, 5));
        Ok(())
    }
}
