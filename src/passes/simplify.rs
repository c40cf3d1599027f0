//! The algebraic simplifier: local rewrites that make a graph smaller without changing what it
//! computes, in one forward sweep (the pipeline repeats it to a fixed point).
//!
//! The rules are the table [`RULES`], tried in order on each instruction (parameters aside);
//! the first that applies wins and the instruction is tried again. A rule either forwards the
//! instruction's users to an earlier instruction of exactly the same shape (layout included:
//! no rewrite ever changes a shape, the root's included), or rewrites the instruction in place
//! (same shape, same name).

use std::sync::Arc;

use crate::attributes::BinaryOp;
use crate::hlo::ir::{HloComputation, Instruction, InstructionId, Opcode};
use crate::hlo::rewrite::Rewrite;
use crate::passes::backend::Evaluator;
use crate::passes::pass::Pass;
use crate::storage::{with_native_type, NativeType};

/// Simplifies the graph by the rules of [`RULES`], folding constants with `evaluate`.
pub(crate) struct AlgebraicSimplifier<'a> {
    pub(crate) evaluate: Evaluator<'a>,
}

impl Pass for AlgebraicSimplifier<'_> {
    fn name(&self) -> &'static str {
        "simplify"
    }

    fn run(&self, computation: &mut HloComputation) -> bool {
        // Counted here rather than taken from `rewrite_forward`, which compares instructions
        // with `==`, and a NaN constant is never `==` to itself.
        let mut changed = false;
        computation.rewrite_forward(|before, instruction| {
            if matches!(instruction.opcode, Opcode::Parameter { .. }) {
                return Rewrite::Keep;
            }
            for _ in 0..MAX_STEPS {
                let Some(action) = first_applicable(before, instruction, self.evaluate) else { break };
                changed = true;
                match action {
                    Action::Forward(target) => return Rewrite::Forward(target),
                    Action::Replace(opcode, operands) => {
                        instruction.opcode = opcode;
                        instruction.operands = operands;
                    }
                }
            }
            Rewrite::Keep
        });
        changed
    }
}

/// What a rule does with an instruction.
enum Action {
    /// Its users read this earlier instruction (of the same shape, layout included) instead.
    Forward(InstructionId),
    /// It becomes this opcode over these operands (keeping its shape and name).
    Replace(Opcode, Vec<InstructionId>),
}

/// A rule: given the instructions before it, an instruction, and how to evaluate a
/// computation (for folding), what to do, if anything.
type Rule = fn(&[Instruction], &Instruction, Evaluator<'_>) -> Option<Action>;

/// The rewrite rules, in the order they are tried: `pattern → replacement`.
const RULES: &[(&str, Rule)] = &[
    ("transpose(x), dimensions={0,1,…}  → x  (same shape)", identity_transpose),
    ("reshape(x)                        → x  (same shape)", identity_reshape),
    ("broadcast(x), dimensions={0,1,…}  → x  (same shape)", identity_broadcast),
    ("convert(x)                        → x  (same shape)", identity_convert),
    ("x * 1, 1 * x                      → x  (integers, floats)", multiply_by_one),
    ("x + 0, 0 + x                      → x  (integers)", add_zero),
    ("broadcast(broadcast(x))           → broadcast(x)", merge_broadcasts),
    ("reshape(reshape(x))               → reshape(x)", merge_reshapes),
    ("transpose(transpose(x))           → transpose(x)", merge_transposes),
    ("op(constants…)                    → constant  (≤ 64 elements)", fold_constants),
];

/// How many rules may rewrite one instruction in place in one sweep (each makes it simpler,
/// so this only guards against a rule that would not).
const MAX_STEPS: usize = 8;

/// The largest result, in elements, that constant folding makes.
const MAX_FOLDED_ELEMENTS: i64 = 64;

/// The first rule that applies to `instruction`; a forward to an instruction of another shape
/// (layout included) does not count.
fn first_applicable(
    before: &[Instruction],
    instruction: &Instruction,
    evaluate: Evaluator<'_>,
) -> Option<Action> {
    RULES.iter().find_map(|(_, rule)| {
        rule(before, instruction, evaluate).filter(|action| match action {
            Action::Forward(target) => before[*target].shape == instruction.shape,
            Action::Replace(..) => true,
        })
    })
}

/// A forward to the first operand: for ops that are the identity when the shape does not
/// change (the forward only counts if it does not).
fn to_operand(instruction: &Instruction) -> Action {
    Action::Forward(instruction.operands[0])
}

/// Whether `dimensions` is `0, 1, …, n-1`.
fn is_identity(dimensions: &[i64]) -> bool {
    dimensions.iter().enumerate().all(|(i, &d)| d == i as i64)
}

/// `transpose(x), dimensions={0,1,…}` → `x`.
fn identity_transpose(_: &[Instruction], instruction: &Instruction, _: Evaluator<'_>) -> Option<Action> {
    match &instruction.opcode {
        Opcode::Transpose { permutation } if is_identity(permutation) => Some(to_operand(instruction)),
        _ => None,
    }
}

/// `reshape(x)` → `x` when the shape is `x`'s.
fn identity_reshape(_: &[Instruction], instruction: &Instruction, _: Evaluator<'_>) -> Option<Action> {
    matches!(instruction.opcode, Opcode::Reshape).then(|| to_operand(instruction))
}

/// `broadcast(x), dimensions={0,1,…}` → `x` when the shape is `x`'s.
fn identity_broadcast(_: &[Instruction], instruction: &Instruction, _: Evaluator<'_>) -> Option<Action> {
    match &instruction.opcode {
        Opcode::Broadcast { dimensions } if is_identity(dimensions) => Some(to_operand(instruction)),
        _ => None,
    }
}

/// `convert(x)` → `x` when the shape (so the element type) is `x`'s.
fn identity_convert(_: &[Instruction], instruction: &Instruction, _: Evaluator<'_>) -> Option<Action> {
    matches!(instruction.opcode, Opcode::Convert).then(|| to_operand(instruction))
}

/// `x * 1`, `1 * x` → `x`, for integers and floats (`x * 1.0` is exact, `-0.0` and NaN
/// included).
fn multiply_by_one(before: &[Instruction], instruction: &Instruction, _: Evaluator<'_>) -> Option<Action> {
    if instruction.opcode != Opcode::Binary(BinaryOp::Mul) {
        return None;
    }
    let element_type = instruction.shape.element_type();
    if !(element_type.is_integral() || element_type.is_float()) {
        return None;
    }
    other_than_splat(before, instruction, 1.0)
}

/// `x + 0`, `0 + x` → `x`, for integers only: for floats `-0.0 + 0.0` is `+0.0`.
fn add_zero(before: &[Instruction], instruction: &Instruction, _: Evaluator<'_>) -> Option<Action> {
    if instruction.opcode != Opcode::Binary(BinaryOp::Add) || !instruction.shape.element_type().is_integral()
    {
        return None;
    }
    other_than_splat(before, instruction, 0.0)
}

/// For a binary op with one operand all `value`, a forward to the other operand.
fn other_than_splat(before: &[Instruction], instruction: &Instruction, value: f64) -> Option<Action> {
    let [lhs, rhs] = instruction.operands[..] else { return None };
    if is_splat(before, rhs, value) {
        Some(Action::Forward(lhs))
    } else if is_splat(before, lhs, value) {
        Some(Action::Forward(rhs))
    } else {
        None
    }
}

/// Whether instruction `id` is a constant all of whose elements are `value`, or a broadcast
/// of a scalar one.
fn is_splat(before: &[Instruction], id: InstructionId, value: f64) -> bool {
    let instruction = &before[id];
    let operand = instruction.operands.first().map(|&o| &before[o].opcode);
    let literal = match (&instruction.opcode, operand) {
        (Opcode::Constant(literal), _) if !literal.is_tuple() => literal,
        (Opcode::Broadcast { .. }, Some(Opcode::Constant(literal))) if literal.shape().is_scalar() => literal,
        _ => return false,
    };
    with_native_type!(literal.element_type(), T => literal
        .to_vec::<T>()
        .is_ok_and(|values| values.iter().all(|v| v.to_f64() == value)))
}

/// `broadcast(broadcast(x), outer)` → `broadcast(x)`: operand dimension `i` lands on
/// `outer[inner[i]]`.
fn merge_broadcasts(before: &[Instruction], instruction: &Instruction, _: Evaluator<'_>) -> Option<Action> {
    let Opcode::Broadcast { dimensions: outer } = &instruction.opcode else { return None };
    let operand = &before[instruction.operands[0]];
    let Opcode::Broadcast { dimensions: inner } = &operand.opcode else { return None };
    let dimensions = inner.iter().map(|&d| outer[d as usize]).collect();
    Some(Action::Replace(Opcode::Broadcast { dimensions }, operand.operands.clone()))
}

/// `reshape(reshape(x))` → `reshape(x)` (reshape reads elements in logical order, whatever
/// the layouts).
fn merge_reshapes(before: &[Instruction], instruction: &Instruction, _: Evaluator<'_>) -> Option<Action> {
    let Opcode::Reshape = instruction.opcode else { return None };
    let operand = &before[instruction.operands[0]];
    let Opcode::Reshape = operand.opcode else { return None };
    Some(Action::Replace(Opcode::Reshape, operand.operands.clone()))
}

/// `transpose(transpose(x, inner), outer)` → `transpose(x)`: output dimension `k` is operand
/// dimension `inner[outer[k]]`.
fn merge_transposes(before: &[Instruction], instruction: &Instruction, _: Evaluator<'_>) -> Option<Action> {
    let Opcode::Transpose { permutation: outer } = &instruction.opcode else { return None };
    let operand = &before[instruction.operands[0]];
    let Opcode::Transpose { permutation: inner } = &operand.opcode else { return None };
    let permutation = outer.iter().map(|&k| inner[k as usize]).collect();
    Some(Action::Replace(Opcode::Transpose { permutation }, operand.operands.clone()))
}

/// An op whose operands are all constants and whose result has at most
/// [`MAX_FOLDED_ELEMENTS`] elements → a constant holding its value (in its shape, layout
/// included), computed by `evaluate`. What costs nothing in a loop (broadcasts, iotas) is never
/// folded, as in XLA: inside a fusion it is a stride-0 read or an index, while a folded array
/// is a buffer to read.
fn fold_constants(
    before: &[Instruction],
    instruction: &Instruction,
    evaluate: Evaluator<'_>,
) -> Option<Action> {
    let foldable =
        !matches!(instruction.opcode, Opcode::Parameter { .. } | Opcode::Constant(_) | Opcode::Fusion { .. })
            && !instruction.free_in_loop(before);
    let constant_operands =
        instruction.operands.iter().all(|&o| matches!(before[o].opcode, Opcode::Constant(_)));
    if !foldable || !constant_operands || instruction.shape.element_count() > MAX_FOLDED_ELEMENTS {
        return None;
    }
    // A computation of the constant operands and the instruction alone.
    let mut instructions: Vec<Instruction> =
        instruction.operands.iter().map(|&o| Instruction { operands: vec![], ..before[o].clone() }).collect();
    let operands = (0..instructions.len()).collect();
    instructions.push(Instruction { operands, ..instruction.clone() });
    let root = instructions.len() - 1;
    let tiny = HloComputation { name: "fold".to_string(), instructions, root };
    let value = evaluate(&tiny, &[]).ok()?;
    (value.shape() == &instruction.shape).then(|| Action::Replace(Opcode::Constant(Arc::new(value)), vec![]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::plan::evaluate;
    use crate::hlo::text::module_text;
    use crate::passes::cse::CommonSubexpressions;
    use crate::passes::dce::DeadCode;
    use crate::*;

    /// The simplifier as the pipeline runs it, folding with the executor's evaluator.
    const SIMPLIFIER: AlgebraicSimplifier<'static> = AlgebraicSimplifier { evaluate: &evaluate };

    /// `computation`'s entry after one sweep of the simplifier and dead-code removal, and
    /// whether the simplifier changed anything.
    fn simplify(computation: &XlaComputation) -> (HloComputation, bool) {
        let mut c = (*computation.entry).clone();
        let changed = SIMPLIFIER.run(&mut c);
        c.remove_dead();
        (c, changed)
    }

    /// The instructions of `c` as HLO text lines (without the module header).
    fn text(c: &HloComputation) -> String {
        let module = module_text(&Arc::new(c.clone()));
        let body = module.split_once("\n\n").map_or("", |(_, body)| body);
        body.lines().filter(|l| l.starts_with("  ")).map(|l| l.trim()).collect::<Vec<_>>().join("\n")
    }

    /// Checks that `after` computes what `before` does on `arguments`, bit for bit (compared
    /// as text, so NaNs compare too), shape and layout included: both evaluated as they are
    /// (no optimizer), and `before` also compiled (unfused) and executed.
    fn assert_same_results(before: &XlaComputation, after: &HloComputation, arguments: &[&Literal]) {
        let expected = evaluate(&before.entry, arguments).unwrap();
        let actual = evaluate(after, arguments).unwrap();
        let options = CompileOptions { fusion: false, ..Default::default() };
        let compiled = before.compile(&options).unwrap().execute(arguments).unwrap();
        assert_eq!(expected.shape(), actual.shape());
        assert_eq!(format!("{expected:?}"), format!("{actual:?}"));
        assert_eq!(format!("{expected:?}"), format!("{compiled:?}"));
    }

    /// `[0, 1, 2, …]` in `shape`, as f32.
    fn counting(shape: &Shape) -> Literal {
        let values = (0..shape.element_count()).map(|v| v as f32 - 3.5).collect();
        Literal::from_vec(shape, values).unwrap()
    }

    #[test]
    fn broadcast_of_broadcast_becomes_one_broadcast() -> Result<()> {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(f32[3]), "x");
        let computation = b.build(broadcast(broadcast_in_dim(x, &[2, 3], &[1]), &[4]))?;
        let (c, changed) = simplify(&computation);
        assert!(changed);
        assert_eq!(
            text(&c),
            "x.1 = f32[3]{0} parameter(0)\nROOT broadcast.3 = f32[4,2,3]{2,1,0} broadcast(x.1), dimensions={2}"
        );
        assert_same_results(&computation, &c, &[&Literal::vec1(&[1.0f32, 2.0, 3.0])]);
        Ok(())
    }

    #[test]
    fn broadcast_of_something_else_is_kept() -> Result<()> {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(f32[3]), "x");
        let computation = b.build(broadcast(exp(x), &[4]))?;
        assert!(!simplify(&computation).1);
        Ok(())
    }

    #[test]
    fn reshape_of_reshape_becomes_one_reshape() -> Result<()> {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(f32[2, 3]{0, 1}), "x");
        let computation = b.build(reshape(reshape(x, &[6]), &[3, 2]))?;
        let (c, changed) = simplify(&computation);
        assert!(changed);
        assert_eq!(text(&c), "x.1 = f32[2,3]{0,1} parameter(0)\nROOT reshape.3 = f32[3,2]{1,0} reshape(x.1)");
        assert_same_results(&computation, &c, &[&counting(&shape!(f32[2, 3]{0, 1}))]);
        Ok(())
    }

    #[test]
    fn reshape_of_transpose_is_kept() -> Result<()> {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(f32[2, 3]), "x");
        let computation = b.build(reshape(transpose(x, &[1, 0]), &[6]))?;
        assert!(!simplify(&computation).1);
        Ok(())
    }

    #[test]
    fn transpose_of_transpose_composes_permutations() -> Result<()> {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(f32[2, 3, 4]), "x");
        let computation = b.build(transpose(transpose(x, &[1, 2, 0]), &[1, 0, 2]))?;
        let (c, changed) = simplify(&computation);
        assert!(changed);
        let root = &c.instructions[c.root];
        assert_eq!(root.opcode, Opcode::Transpose { permutation: vec![2, 1, 0] });
        assert_eq!((root.name.as_str(), c.instructions.len()), ("transpose.3", 2));
        assert_same_results(&computation, &c, &[&counting(&shape!(f32[2, 3, 4]))]);
        Ok(())
    }

    #[test]
    fn transposes_that_cancel_disappear() -> Result<()> {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(f32[2, 3]), "x");
        let computation = b.build(neg(transpose(transpose(x, &[1, 0]), &[1, 0])))?;
        let (c, changed) = simplify(&computation);
        assert!(changed);
        assert_eq!(text(&c), "x.1 = f32[2,3]{1,0} parameter(0)\nROOT negate.4 = f32[2,3]{1,0} negate(x.1)");
        assert_same_results(&computation, &c, &[&counting(&shape!(f32[2, 3]))]);
        Ok(())
    }

    #[test]
    fn a_transpose_that_moves_data_is_kept() -> Result<()> {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(f32[2, 3]), "x");
        let computation = b.build(transpose(x, &[1, 0]))?;
        assert!(!simplify(&computation).1);
        // An identity permutation into another layout is a copy: it stays too.
        let mut c = (*b.build(transpose(x, &[0, 1]))?.entry).clone();
        c.instructions[c.root].shape = shape!(f32[2, 3]{0, 1});
        let relayout = XlaComputation { entry: Arc::new(c.clone()) };
        assert!(!SIMPLIFIER.run(&mut c));
        assert_same_results(&relayout, &c, &[&counting(&shape!(f32[2, 3]))]);
        Ok(())
    }

    #[test]
    fn identity_reshape_broadcast_transpose_and_convert_disappear() -> Result<()> {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(f32[2, 3]), "x");
        let same = transpose(broadcast_in_dim(reshape(x, &[2, 3]), &[2, 3], &[0, 1]), &[0, 1]);
        let computation = b.build(exp(convert_element_type(same, ElementType::F32)))?;
        let (c, changed) = simplify(&computation);
        assert!(changed);
        assert_eq!(
            text(&c),
            "x.1 = f32[2,3]{1,0} parameter(0)\nROOT exponential.6 = f32[2,3]{1,0} exponential(x.1)"
        );
        assert_same_results(&computation, &c, &[&counting(&shape!(f32[2, 3]))]);
        Ok(())
    }

    #[test]
    fn a_reshape_into_another_layout_is_kept() -> Result<()> {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(f32[2, 3]{0, 1}), "x");
        let computation = b.build(exp(convert_element_type(reshape(x, &[2, 3]), ElementType::F32)))?;
        let (c, changed) = simplify(&computation);
        assert!(changed);
        assert_eq!(
            text(&c),
            "x.1 = f32[2,3]{0,1} parameter(0)\n\
             reshape.2 = f32[2,3]{1,0} reshape(x.1)\n\
             ROOT exponential.4 = f32[2,3]{1,0} exponential(reshape.2)"
        );
        assert_same_results(&computation, &c, &[&counting(&shape!(f32[2, 3]{0, 1}))]);
        Ok(())
    }

    #[test]
    fn the_root_keeps_its_layout() -> Result<()> {
        // A reshape into another layout is the root's only copy into that layout: it stays.
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(s32[2, 3]), "x");
        let mut c = (*b.build(reshape(x, &[2, 3]))?.entry).clone();
        c.instructions[c.root].shape = shape!(s32[2, 3]{0, 1});
        let before = XlaComputation { entry: Arc::new(c.clone()) };
        assert!(!SIMPLIFIER.run(&mut c));
        assert_eq!(c.result_shape(), &shape!(s32[2, 3]{0, 1}));
        let x_value = Literal::from_vec(&shape!(s32[2, 3]), vec![1, 2, 3, 4, 5, 6])?;
        assert_same_results(&before, &c, &[&x_value]);
        Ok(())
    }

    #[test]
    fn multiplying_by_one_and_adding_zero_disappear_for_integers() -> Result<()> {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(s32[70]), "x");
        let one = b.constant_r0(1i32);
        let zero = b.constant_r0(0i32);
        let ones = b.constant_literal(&Literal::vec1(&[1i32; 70]));
        let y = add(zero, add(mul(one, mul(x, one, &[]), &[]), zero, &[]), &[]);
        let computation = b.build(mul(ones, y, &[]))?;
        let (c, changed) = simplify(&computation);
        assert!(changed);
        assert_eq!(c.root, 0, "{}", text(&c));
        let x_value = Literal::vec1(&(0..70).map(|v| v * 7 - 100).collect::<Vec<i32>>());
        assert_same_results(&computation, &c, &[&x_value]);
        Ok(())
    }

    #[test]
    fn floats_drop_times_one_but_keep_plus_zero() -> Result<()> {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(f32[70]), "x");
        let y = mul(b.constant_r0(1.0f32), x, &[]);
        let computation = b.build(add(y, b.constant_r0(0.0f32), &[]))?;
        let (c, changed) = simplify(&computation);
        assert!(changed);
        let root = &c.instructions[c.root];
        assert_eq!(root.opcode, Opcode::Binary(BinaryOp::Add));
        assert_eq!(root.operands[0], 0, "{}", text(&c));
        let mut values = vec![-0.0f32, f32::NAN, f32::INFINITY, -1.5];
        values.resize(70, 2.0);
        assert_same_results(&computation, &c, &[&Literal::vec1(&values)]);
        Ok(())
    }

    #[test]
    fn other_constants_and_relayouts_are_kept() -> Result<()> {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(s32[3]), "x");
        let two = b.constant_r0(2i32);
        let mixed = b.constant_r1(&[1i32, 1, 0]);
        let computation = b.build(add(mul(x, two, &[]), add(mul(x, mixed, &[]), x, &[]), &[]))?;
        let (c, _) = simplify(&computation);
        assert_eq!(c.instructions.iter().filter(|i| matches!(i.opcode, Opcode::Binary(_))).count(), 4);
        // `x * 1` whose result has another layout than `x` is a copy into that layout.
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(s32[2, 2]), "x");
        let mut c = (*b.build(mul(x, b.constant_r0(1i32), &[]))?.entry).clone();
        c.instructions[c.root].shape = shape!(s32[2, 2]{0, 1});
        let broadcast = c.instructions[c.root].operands[1];
        c.instructions[broadcast].shape = shape!(s32[2, 2]{0, 1});
        let before = XlaComputation { entry: Arc::new(c.clone()) };
        while SIMPLIFIER.run(&mut c) {}
        assert_eq!(c.instructions[c.root].opcode, Opcode::Binary(BinaryOp::Mul), "{}", text(&c));
        let x_value = Literal::from_vec(&shape!(s32[2, 2]), vec![1, 2, 3, 4])?;
        assert_same_results(&before, &c, &[&x_value]);
        Ok(())
    }

    #[test]
    fn constants_fold_into_one_keeping_names_and_layouts() -> Result<()> {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(f32[2, 3]), "x");
        let m = b
            .constant_literal(&Literal::from_vec(&shape!(f32[3, 2]), vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?);
        let t = transpose(m, &[1, 0]);
        let full = |value: f32| -> Result<XlaOp<'_>> {
            Ok(b.constant_literal(&Literal::from_vec(&shape!(f32[2, 3]), vec![value; 6])?))
        };
        let row = b
            .constant_literal(&Literal::from_vec(&shape!(f32[2, 3]), vec![0.0f32, 1.0, 2.0, 0.0, 1.0, 2.0])?);
        let shifted = add(t, row, &[]);
        let padded = pad(
            slice(rev(shifted, &[1]), &[0, 1], &[2, 3], &[1, 1]),
            b.constant_r0(-1.0f32),
            &PaddingConfig {
                dimensions: vec![
                    PaddingConfigDimension::default(),
                    PaddingConfigDimension { edge_padding_low: 1, ..Default::default() },
                ],
            },
        );
        // No implicit broadcasts: a broadcast is never folded (it is free in a fusion).
        let chosen = select(gt(padded, full(3.0)?, &[]), padded, neg(padded));
        let clamped = clamp(full(-4.0)?, chosen, full(6.0)?);
        let joined = concat_in_dim(
            &b,
            &[
                clamped,
                convert_element_type(
                    b.constant_literal(&Literal::from_vec(&shape!(s32[2, 1]), vec![0, 1])?),
                    ElementType::F32,
                ),
            ],
            1,
        );
        let folded = reshape(reshape(joined, &[1, 2, 4]), &[2, 4]);
        let computation = b.build(mul(x, slice(folded, &[0, 0], &[2, 3], &[1, 1]), &[]))?;
        let mut c = (*computation.entry).clone();
        for round in 0.. {
            if !SIMPLIFIER.run(&mut c) {
                break;
            }
            assert!(round < 10, "no fixed point: {}", text(&c));
        }
        c.remove_dead();
        assert_eq!(c.instructions.len(), 3, "{}", text(&c));
        let constant = &c.instructions[c.instructions[c.root].operands[1]];
        let Opcode::Constant(literal) = &constant.opcode else { panic!("{}", text(&c)) };
        assert!(constant.name.starts_with("slice."), "{}", constant.name);
        assert_eq!(literal.shape(), &constant.shape);
        assert_same_results(&computation, &c, &[&counting(&shape!(f32[2, 3]))]);
        Ok(())
    }

    #[test]
    fn a_fold_keeps_a_column_major_result_layout() -> Result<()> {
        let b = XlaBuilder::new("f");
        let m = b.constant_literal(&Literal::from_vec(&shape!(s32[2, 3]), vec![1, 2, 3, 4, 5, 6])?);
        let computation = b.build(transpose(m, &[1, 0]))?;
        let (c, changed) = simplify(&computation);
        assert!(changed);
        assert_eq!(text(&c), "ROOT transpose.2 = s32[3,2]{0,1} constant({ { 1, 4 }, { 2, 5 }, { 3, 6 } })");
        assert_same_results(&computation, &c, &[]);
        Ok(())
    }

    #[test]
    fn folds_over_64_elements_and_ops_with_parameters_are_kept() -> Result<()> {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(f32[65]), "x");
        // A NaN constant must not make the sweep look changed (NaN is not `==` to itself).
        let wide = broadcast(b.constant_r0(f32::NAN), &[65]);
        let computation = b.build(mul(add(x, iota(&b, &shape!(f32[65]), 0), &[]), wide, &[]))?;
        assert!(!simplify(&computation).1, "{}", module_text(&computation.entry));
        // A broadcast or an iota never folds (free inside a fusion), even when small.
        let b = XlaBuilder::new("f");
        let computation =
            b.build(add(broadcast(b.constant_r0(1.0f32), &[4]), iota(&b, &shape!(f32[4]), 0), &[]))?;
        assert!(!simplify(&computation).1, "{}", module_text(&computation.entry));
        // At 64 elements an op of constants folds; at 65 it does not.
        for (count, folds) in [(64usize, true), (65, false)] {
            let b = XlaBuilder::new("f");
            let computation = b.build(neg(b.constant_r1(&vec![f32::NAN; count])))?;
            let (c, changed) = simplify(&computation);
            assert_eq!(changed, folds, "{count}");
            assert_eq!(matches!(c.instructions[c.root].opcode, Opcode::Constant(_)), folds, "{}", text(&c));
            assert_same_results(&computation, &c, &[]);
        }
        Ok(())
    }

    #[test]
    fn a_constant_root_folds() -> Result<()> {
        let b = XlaBuilder::new("f");
        let computation = b.build(add(b.constant_r0(2u8), b.constant_r0(250u8), &[]))?;
        let (c, changed) = simplify(&computation);
        assert!(changed);
        assert_eq!(text(&c), "ROOT add.3 = u8[] constant(252)");
        assert_same_results(&computation, &c, &[]);
        Ok(())
    }

    #[test]
    fn the_pipeline_reaches_a_fixed_point() -> Result<()> {
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(s32[4, 3]), "x");
        let v = b.parameter(1, &shape!(s32[3]), "v");
        let bias = add(v, b.constant_r0(0i32), &[]);
        let left = mul(add(x, bias, &[1]), b.constant_r0(1i32), &[]);
        let right = transpose(transpose(add(x, bias, &[1]), &[1, 0]), &[1, 0]);
        let computation = b.build(sub(left, right, &[]))?;
        let mut c = (*computation.entry).clone();
        let passes: [&dyn Pass; 3] = [&SIMPLIFIER, &CommonSubexpressions, &DeadCode];
        for _ in 0..8 {
            if !passes.iter().fold(false, |changed, pass| pass.run(&mut c) | changed) {
                break;
            }
        }
        let root = &c.instructions[c.root];
        assert_eq!(root.operands[0], root.operands[1], "{}", text(&c));
        assert!(!passes.iter().any(|pass| pass.run(&mut c)));
        let x_value = Literal::from_vec(&shape!(s32[4, 3]), (0..12).collect())?;
        assert_same_results(&computation, &c, &[&x_value, &Literal::vec1(&[10, 20, 30])]);
        Ok(())
    }
}
