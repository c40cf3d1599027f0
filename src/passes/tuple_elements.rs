//! Parameter elements first: every `get-tuple-element` of a parameter moves to just after the
//! parameters, the other instructions keeping their order. The parameter's tuple is then read
//! for the last time before anything computes, so each element is held by its
//! `get-tuple-element` alone, and a `dynamic_update_slice` of one (a loop body stacking a
//! scan's outputs or residuals into its state) can write into it instead of copying it.

use crate::hlo::ir::{HloComputation, InstructionId, Opcode};
use crate::passes::pass::Pass;

/// Moves the elements of parameters ahead of the rest.
pub(crate) struct ParameterElementsFirst;

impl Pass for ParameterElementsFirst {
    fn name(&self) -> &'static str {
        "parameter-elements-first"
    }

    fn run(&self, computation: &mut HloComputation) -> bool {
        let instructions = &computation.instructions;
        let is_parameter = |id: InstructionId| matches!(instructions[id].opcode, Opcode::Parameter { .. });
        let is_element = |id: InstructionId| {
            matches!(instructions[id].opcode, Opcode::GetTupleElement { .. })
                && instructions[id].operands.first().is_some_and(|&o| is_parameter(o))
        };
        let ids = 0..instructions.len();
        let order: Vec<InstructionId> = ids
            .clone()
            .filter(|&id| is_parameter(id))
            .chain(ids.clone().filter(|&id| is_element(id)))
            .chain(ids.filter(|&id| !is_parameter(id) && !is_element(id)))
            .collect();
        if order.iter().enumerate().all(|(position, &id)| position == id) {
            return false;
        }
        let mut new_id = vec![0; order.len()];
        for (position, &id) in order.iter().enumerate() {
            new_id[id] = position;
        }
        let mut reordered: Vec<_> = order.iter().map(|&id| computation.instructions[id].clone()).collect();
        for instruction in &mut reordered {
            instruction.operands.iter_mut().for_each(|o| *o = new_id[*o]);
        }
        computation.instructions = reordered;
        computation.root = new_id[computation.root];
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::*;

    #[test]
    fn elements_of_a_parameter_come_right_after_the_parameters_and_the_rest_keeps_its_order() {
        let b = XlaBuilder::new("state");
        let state = b.parameter(0, &Shape::tuple(&[shape!(f32[4]), shape!(f32[4]), shape!(f32[4])]), "state");
        let x = b.parameter(1, &shape!(f32[4]), "x");
        let first = get_tuple_element(state, 0);
        let sum = add(first, x, &[]);
        let second = get_tuple_element(state, 1);
        let product = mul(sum, second, &[]);
        let third = get_tuple_element(state, 2);
        let computation = b.build(tuple(&b, &[product, third])).unwrap();
        let mut ordered = (*computation.entry).clone();
        assert!(ParameterElementsFirst.run(&mut ordered));
        let opcodes: Vec<&str> = ordered.instructions.iter().map(|i| i.opcode.name()).collect();
        let expected =
            ["parameter", "parameter", "get-tuple-element", "get-tuple-element", "get-tuple-element"];
        assert_eq!(opcodes[..5], expected);
        assert_eq!(opcodes[5..], ["add", "multiply", "tuple"]);
        assert_eq!(ordered.instructions[ordered.root].opcode.name(), "tuple");
        let indices: Vec<i64> = (ordered.instructions[2..5].iter())
            .filter_map(|i| match i.opcode {
                Opcode::GetTupleElement { index } => Some(index),
                _ => None,
            })
            .collect();
        assert_eq!(indices, [0, 1, 2]);
        let reads = |id: usize| ordered.instructions[id].operands.clone();
        assert_eq!((reads(5), reads(6)), (vec![2, 1], vec![5, 3]), "operands follow their instructions");
        assert!(!ParameterElementsFirst.run(&mut ordered), "a second run finds nothing to move");
    }
}
