//! Layouts at computation boundaries. XLA compares the shapes a `call`, a `while` and a
//! `conditional` exchange with their computations without layouts (its layout assignment
//! then copies between them): a loop's state may be `f32[2,2]{0,1}` while its body reads
//! `f32[2,2]{1,0}`. This pass makes every such pair equal, layouts and padding included, with
//! relayouts (a `reshape` to the same dimensions, as the importer's `copy`), so that inlining,
//! fusion and the executor may take a computation's parameter and root shapes as the shapes
//! of the values that cross its boundary.

use std::sync::Arc;

use crate::hlo::ir::{HloComputation, Instruction, InstructionId, Opcode};
use crate::passes::pass::Pass;
use crate::shape::Shape;

/// Relayouts the operands and results of every `call`, `while` and `conditional` of the
/// computation (not of the computations they call: the pipeline reaches those itself) to
/// their computations' own layouts.
pub(crate) struct BoundaryLayouts;

impl Pass for BoundaryLayouts {
    fn name(&self) -> &'static str {
        "boundary-layouts"
    }

    fn run(&self, computation: &mut HloComputation) -> bool {
        let crosses = |i: &Instruction| {
            matches!(i.opcode, Opcode::Call { .. } | Opcode::While { .. } | Opcode::Conditional { .. })
        };
        if !computation.instructions.iter().any(crosses) {
            return false;
        }
        let mut arena = Arena::for_computation(computation);
        let old = std::mem::take(&mut computation.instructions);
        let mut moved: Vec<InstructionId> = Vec::with_capacity(old.len());
        for instruction in &old {
            let mut operands: Vec<InstructionId> = instruction.operands.iter().map(|&o| moved[o]).collect();
            let (opcode, inner_shape) = match &instruction.opcode {
                Opcode::Call { computation: called } => {
                    for (operand, parameter) in operands.iter_mut().zip(called.parameters()) {
                        *operand = arena.relayout(*operand, &parameter.shape);
                    }
                    (instruction.opcode.clone(), called.result_shape().clone())
                }
                Opcode::While { condition, body } => {
                    let Some(state) = body.parameters().first().map(|p| p.shape.clone()) else {
                        arena.keep(instruction, operands, &mut moved);
                        continue;
                    };
                    operands[0] = arena.relayout(operands[0], &state);
                    let body = arena.with_root(body, &state);
                    let condition = arena.with_parameters(condition, std::slice::from_ref(&state));
                    (Opcode::While { condition, body }, state)
                }
                Opcode::Conditional { branches } => {
                    for (operand, branch) in operands[1..].iter_mut().zip(branches) {
                        if let Some(parameter) = branch.parameters().first() {
                            *operand = arena.relayout(*operand, &parameter.shape);
                        }
                    }
                    let branches = branches.iter().map(|b| arena.with_root(b, &instruction.shape)).collect();
                    (Opcode::Conditional { branches }, instruction.shape.clone())
                }
                _ => {
                    arena.keep(instruction, operands, &mut moved);
                    continue;
                }
            };
            let id = arena.push(opcode, operands, inner_shape, instruction.name.clone());
            moved.push(arena.relayout(id, &instruction.shape));
        }
        computation.root = moved[computation.root];
        computation.instructions = arena.instructions;
        arena.changed
    }
}

/// The rewritten computation's instructions, with what a relayout needs: fresh names and a
/// record of whether any was inserted.
struct Arena {
    instructions: Vec<Instruction>,
    /// Names new instructions `copy.N` (and so on) with N above every id of the computation.
    names: HloComputation,
    counter: usize,
    changed: bool,
}

impl Arena {
    fn for_computation(computation: &HloComputation) -> Arena {
        let mut counter = 0;
        // The first fresh name scans the computation for its highest id; later ones count on.
        let _ = computation.fresh_name("copy", &mut counter);
        let names = HloComputation { name: computation.name.clone(), instructions: vec![], root: 0 };
        Arena {
            instructions: Vec::with_capacity(computation.instructions.len()),
            names,
            counter,
            changed: false,
        }
    }

    fn push(
        &mut self,
        opcode: Opcode,
        operands: Vec<InstructionId>,
        shape: Shape,
        name: String,
    ) -> InstructionId {
        self.instructions.push(Instruction { opcode, operands, shape, name });
        self.instructions.len() - 1
    }

    fn keep(
        &mut self,
        instruction: &Instruction,
        operands: Vec<InstructionId>,
        moved: &mut Vec<InstructionId>,
    ) {
        self.instructions.push(Instruction { operands, ..instruction.clone() });
        moved.push(self.instructions.len() - 1);
    }

    /// `id`'s value in `shape` (the same dimensions and types, any layout): `id` itself if its
    /// shape is `shape`, else a relayout (element by element for a tuple).
    fn relayout(&mut self, id: InstructionId, shape: &Shape) -> InstructionId {
        let from = self.instructions[id].shape.clone();
        if &from == shape || !from.same_dimensions_and_type(shape) {
            return id;
        }
        self.changed = true;
        if !shape.is_tuple() {
            let name = self.names.fresh_name("copy", &mut self.counter);
            return self.push(Opcode::Reshape, vec![id], shape.clone(), name);
        }
        let parts = (from.tuple_shapes().iter().zip(shape.tuple_shapes()).enumerate())
            .map(|(index, (part, to))| {
                let name = self.names.fresh_name("get-tuple-element", &mut self.counter);
                let element =
                    self.push(Opcode::GetTupleElement { index: index as i64 }, vec![id], part.clone(), name);
                self.relayout(element, to)
            })
            .collect();
        let name = self.names.fresh_name("tuple", &mut self.counter);
        self.push(Opcode::Tuple, parts, shape.clone(), name)
    }

    /// `computation` returning its result in `shape` (a relayout appended to its root).
    fn with_root(&mut self, computation: &Arc<HloComputation>, shape: &Shape) -> Arc<HloComputation> {
        if computation.result_shape() == shape {
            return computation.clone();
        }
        let mut inner = Arena::for_computation(computation);
        inner.instructions = computation.instructions.clone();
        let root = inner.relayout(computation.root, shape);
        self.changed |= inner.changed;
        Arc::new(HloComputation { name: computation.name.clone(), instructions: inner.instructions, root })
    }

    /// `computation` taking its parameters in `shapes` (each relayouted to its old shape
    /// before anything reads it).
    fn with_parameters(
        &mut self,
        computation: &Arc<HloComputation>,
        shapes: &[Shape],
    ) -> Arc<HloComputation> {
        let same = |(p, s): (&&Instruction, &Shape)| &p.shape == s || !p.shape.same_dimensions_and_type(s);
        if computation.parameters().iter().zip(shapes).all(same) {
            return computation.clone();
        }
        let mut inner = Arena::for_computation(computation);
        let mut moved: Vec<InstructionId> = Vec::with_capacity(computation.instructions.len());
        for instruction in &computation.instructions {
            let operands: Vec<InstructionId> = instruction.operands.iter().map(|&o| moved[o]).collect();
            let new_shape = match instruction.opcode {
                Opcode::Parameter { number } => shapes.get(number as usize),
                _ => None,
            };
            match new_shape {
                Some(shape) if shape.same_dimensions_and_type(&instruction.shape) => {
                    let id = inner.push(
                        instruction.opcode.clone(),
                        operands,
                        shape.clone(),
                        instruction.name.clone(),
                    );
                    moved.push(inner.relayout(id, &instruction.shape));
                }
                _ => inner.keep(instruction, operands, &mut moved),
            }
        }
        self.changed |= inner.changed;
        let root = moved[computation.root];
        Arc::new(HloComputation { name: computation.name.clone(), instructions: inner.instructions, root })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::*;

    /// The pass over the entry of `computation`, as HLO text of the entry alone.
    fn rewritten(computation: &XlaComputation) -> (bool, HloComputation) {
        let mut entry = (*computation.entry).clone();
        let changed = BoundaryLayouts.run(&mut entry);
        crate::hlo::verify::verify(&entry, "test").expect("verifies");
        (changed, entry)
    }

    #[test]
    fn a_call_on_an_operand_in_another_layout_gets_it_in_its_parameter_layout() -> Result<()> {
        let c = XlaBuilder::new("identity");
        let p = c.parameter(0, &shape!(f32[2, 2]), "p");
        let identity = c.build(p)?;
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(f32[2, 2]{0, 1}), "x");
        let (changed, entry) = rewritten(&b.build(call(&b, &identity, &[x]))?);
        assert!(changed);
        let shapes: Vec<String> = entry.instructions.iter().map(|i| i.shape.to_string()).collect();
        // x, its relayout for the callee, and the call (in the callee's result layout, as built).
        assert_eq!(shapes, ["f32[2,2]{0,1}", "f32[2,2]{1,0}", "f32[2,2]{1,0}"]);
        assert!(matches!(entry.instructions[1].opcode, Opcode::Reshape));
        Ok(())
    }

    #[test]
    fn a_loop_state_takes_its_body_layout_and_the_condition_follows() -> Result<()> {
        let state = "(s32[], u8[2,2]{1,0})".parse::<Shape>()?;
        let c = XlaBuilder::new("condition");
        let p = c.parameter(0, &"(s32[], u8[2,2]{0,1})".parse::<Shape>()?, "p");
        let condition = c.build(lt(get_tuple_element(p, 0), c.constant_r0(1i32), &[]))?;
        let d = XlaBuilder::new("body");
        let p = d.parameter(0, &state, "p");
        let body = d.build(tuple(&d, &[get_tuple_element(p, 0), neg(get_tuple_element(p, 1))]))?;
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(u8[2, 2]{0, 1}), "x");
        let looped = while_loop(&condition, &body, tuple(&b, &[b.constant_r0(0i32), x]));
        let (changed, entry) = rewritten(&b.build(looped)?);
        assert!(changed);
        let Some(w) = entry.instructions.iter().find(|i| matches!(i.opcode, Opcode::While { .. })) else {
            panic!("no while");
        };
        let Opcode::While { condition, body } = &w.opcode else { unreachable!() };
        assert_eq!(w.shape, state);
        assert_eq!(entry.instructions[w.operands[0]].shape, state);
        assert_eq!(condition.parameters()[0].shape, state);
        assert_eq!(body.result_shape(), &state);
        assert_eq!(entry.result_shape().to_string(), "(s32[], u8[2,2]{0,1})");
        Ok(())
    }

    #[test]
    fn matching_layouts_are_left_alone() -> Result<()> {
        let c = XlaBuilder::new("identity");
        let p = c.parameter(0, &shape!(f32[2, 2]), "p");
        let identity = c.build(p)?;
        let b = XlaBuilder::new("f");
        let x = b.parameter(0, &shape!(f32[2, 2]), "x");
        let computation = b.build(call(&b, &identity, &[x]))?;
        let (changed, entry) = rewritten(&computation);
        assert!(!changed);
        assert_eq!(&entry, &*computation.entry);
        Ok(())
    }
}
