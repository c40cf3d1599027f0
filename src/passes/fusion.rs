//! Loop fusion: chains of element-wise ops, broadcasts, movement ops and converts become one
//! `fusion` instruction (XLA's `kLoop`), computed by one strided loop that materializes
//! nothing in between.
//!
//! Greedy producer–consumer fusion, consumers first: an instruction joins its users' fusion
//! when all its users are in that one fusion (a reduce too, as a row reduction, when that loop
//! reads it broadcast along its row: softmax and layer norm become one loop); a cheap
//! instruction (broadcast, iota, scalar constant) whose users are in several fusions is
//! duplicated into each; anything else with users outside starts a fusion of its own, so an
//! expensive result is computed once and a big operand is never read twice on its behalf. A
//! reduce keeps its producers only where its loop folds their values as the reduce of their
//! result would, so fused and unfused float sums agree bit for bit.

use std::sync::Arc;

use crate::hlo::ir::{FusionKind, HloComputation, Instruction, InstructionId, Opcode};
use crate::hlo::loop_part::LoopPart;
use crate::passes::backend::LoopCompiles;
use crate::passes::pass::Pass;
use crate::shape::Shape;

/// Groups loop-fusible instructions into `fusion` instructions; `loop_compiles` is the loop
/// compiler's verdict on a row reduction.
pub(crate) struct LoopFusion<'a> {
    pub(crate) loop_compiles: LoopCompiles<'a>,
}

impl Pass for LoopFusion<'_> {
    fn name(&self) -> &'static str {
        "loop-fusion"
    }

    fn run(&self, computation: &mut HloComputation) -> bool {
        let Groups { groups, exclusive } = group(computation, self.loop_compiles);
        let mut counter = 0;
        let mut changed = false;
        for members in groups.into_iter().filter(|members| members.len() > 1) {
            let root = *members.last().expect("a group has a root");
            // A member only its own fusion reads dies with it: it moves into the fusion (what
            // stays is unread and removed below) instead of being copied.
            let originals = members
                .iter()
                .map(|&member| {
                    if exclusive[member] && member != root {
                        std::mem::replace(&mut computation.instructions[member], unread_placeholder())
                    } else {
                        computation.instructions[member].clone()
                    }
                })
                .collect();
            let fused = fused_computation(computation, &members, originals, &mut counter);
            let inputs = fused.1;
            let name = computation.fresh_name("fusion", &mut counter);
            let instruction = &mut computation.instructions[root];
            let kind = match instruction.opcode {
                Opcode::Reduce { .. } => FusionKind::Input,
                _ => FusionKind::Loop,
            };
            *instruction = Instruction {
                opcode: Opcode::Fusion { kind, computation: Arc::new(fused.0) },
                operands: inputs,
                shape: instruction.shape.clone(),
                name,
            };
            changed = true;
        }
        computation.remove_dead();
        changed
    }
}

/// How an instruction takes part in fusion.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A loop computes it element by element from its operands: it may join its users' fusion.
    Member,
    /// A reduce with a simple reducer: it may root an input fusion, its operand computed in it,
    /// or join its users' plain loop as a row reduction.
    ReduceRoot,
    /// Anything else (dot, concatenate, a general reshape, …): never fused.
    Outside,
}

/// The role of instruction `id`, by the IR's one predicate of what a loop computes.
fn role(computation: &HloComputation, id: InstructionId) -> Role {
    if computation.loop_part(id).is_some() {
        Role::Member
    } else if computation.instructions[id].folds_in_loop() {
        Role::ReduceRoot
    } else {
        Role::Outside
    }
}

/// An instruction that reads nothing and costs nothing, left where a member moved into its
/// fusion.
fn unread_placeholder() -> Instruction {
    Instruction { opcode: Opcode::Tuple, operands: Vec::new(), shape: Shape::tuple(&[]), name: String::new() }
}

/// The fusion groups and who reads their members.
struct Groups {
    /// Each group's instruction ids in topological order, its root last.
    groups: Vec<Vec<InstructionId>>,
    /// Per instruction: whether it is a member of one group that all its users are in.
    exclusive: Vec<bool>,
}

/// The fusion groups of `computation`.
fn group(computation: &HloComputation, loop_compiles: LoopCompiles<'_>) -> Groups {
    let users = computation.users();
    let count = computation.instructions.len();
    // The groups each instruction is computed in, and whether that covers all its users (a
    // duplicated broadcast may also stay standalone for users outside any fusion).
    let mut member_of: Vec<Vec<usize>> = vec![Vec::new(); count];
    let mut only_fused = vec![false; count];
    let mut groups: Vec<Vec<InstructionId>> = Vec::new();
    // The name counter of trial fusions (see `reduces_along_rows`), whose names are dropped.
    let mut names = 0;
    for id in (0..count).rev() {
        let role = role(computation, id);
        if role == Role::Outside {
            continue;
        }
        // A reduce's init value stays an input of its fusion (the loop starts from it).
        let fused_into = |u: InstructionId| {
            let user = &computation.instructions[u];
            let is_init = matches!(user.opcode, Opcode::Reduce { .. }) && user.operands[1] == id;
            !is_init && only_fused[u] && !member_of[u].is_empty()
        };
        let mut user_groups: Vec<usize> = users[id]
            .iter()
            .filter(|&&u| fused_into(u))
            .flat_map(|&u| member_of[u].iter().copied())
            .collect();
        user_groups.sort_unstable();
        user_groups.dedup();
        let all_users_fused =
            id != computation.root && !users[id].is_empty() && users[id].iter().all(|&u| fused_into(u));
        let sole_group = user_groups.first().copied().filter(|_| all_users_fused && user_groups.len() == 1);
        let joins = match role {
            Role::ReduceRoot => sole_group
                .filter(|&g| reduces_along_rows(computation, &groups[g], id, loop_compiles, &mut names)),
            _ => sole_group,
        };
        if let Some(g) = joins {
            groups[g].push(id);
            member_of[id] = vec![g];
            only_fused[id] = true;
        } else if role == Role::Member
            && computation.instructions[id].free_in_loop(&computation.instructions)
            && !user_groups.is_empty()
        {
            for &g in &user_groups {
                groups[g].push(id);
            }
            member_of[id] = user_groups;
            only_fused[id] = all_users_fused;
        } else {
            member_of[id] = vec![groups.len()];
            only_fused[id] = true;
            groups.push(vec![id]);
        }
    }
    // A reduce keeps the producers fused into it only where its loop folds their values in
    // the pieces and partial sums a reduce of them materialized would (a transposed producer
    // summed over two dimensions does not): else it reduces their fusion's result on its own,
    // as unfused, so a float sum rounds alike either way.
    for g in 0..groups.len() {
        let root = groups[g][0];
        let reduce_root = matches!(computation.instructions[root].opcode, Opcode::Reduce { .. });
        let unfusing = reduce_root
            && groups[g].len() > 1
            && !reads_like_its_operand(computation, &groups[g])
            && !compiles(computation, &groups[g], loop_compiles, &mut names);
        if unfusing {
            groups[g].remove(0);
            member_of[root] = vec![groups.len()];
            groups.push(vec![root]);
        }
    }
    for members in &mut groups {
        members.sort_unstable();
    }
    let exclusive = (0..count).map(|id| only_fused[id] && member_of[id].len() == 1).collect();
    Groups { groups, exclusive }
}

/// Whether the producers in reduce-rooted `group` (its root first) read every array as the
/// reduce of their result would read that result: they are element-wise ops, scalar
/// constants and broadcasts of scalars, and each array they read from outside (one at least)
/// has the reduced operand's dimensions and layout. Their loop then walks the same rows as
/// the loop over their result, so it folds alike without a trial compile (which cost a graph
/// of 1,000 small reduces a fifth of its compile time).
fn reads_like_its_operand(computation: &HloComputation, group: &[InstructionId]) -> bool {
    let instructions = &computation.instructions;
    let Some((&root, producers)) = group.split_first() else { return false };
    let mut members = group.to_vec();
    members.sort_unstable();
    let operand = &instructions[instructions[root].operands[0]].shape;
    let like_operand =
        |shape: &Shape| shape.dimensions() == operand.dimensions() && shape.layout() == operand.layout();
    // At least one such array: a loop over a broadcast scalar alone folds it as a case of its
    // own (`fold_in_chunks`), so that sum is tried.
    let mut reads_an_array = false;
    let all_read_alike = producers.iter().all(|&id| {
        let instruction = &instructions[id];
        match instruction.opcode {
            // A scalar one (an array constant is no loop part).
            Opcode::Constant(_) => computation.loop_part(id).is_some(),
            Opcode::Broadcast { .. } => {
                instruction.operands.iter().all(|&o| instructions[o].shape.is_scalar())
            }
            _ => {
                computation.loop_part(id) == Some(LoopPart::Elementwise)
                    && instruction.operands.iter().all(|&o| {
                        let array = members.binary_search(&o).is_err();
                        reads_an_array |= array;
                        !array || like_operand(&instructions[o].shape)
                    })
            }
        }
    });
    all_read_alike && reads_an_array
}

/// Whether reduce `reduce` can join `group` (a fusion under construction, its root first) as a
/// row reduction: the group is a plain loop (not rooted at a reduce) and, with the reduce in
/// it, the loop compiler computes it, i.e. the loop reads the reduce broadcast along its row
/// (softmax's max and sum, layer norm's mean). The reduced operand is then read once, in the
/// same loop as its consumers, instead of by a reduce loop of its own.
fn reduces_along_rows(
    computation: &HloComputation,
    group: &[InstructionId],
    reduce: InstructionId,
    loop_compiles: LoopCompiles<'_>,
    names: &mut usize,
) -> bool {
    let plain_loop = group
        .first()
        .is_some_and(|&root| !matches!(computation.instructions[root].opcode, Opcode::Reduce { .. }));
    if !plain_loop {
        return false;
    }
    let members: Vec<InstructionId> = group.iter().copied().chain([reduce]).collect();
    compiles(computation, &members, loop_compiles, names)
}

/// The loop compiler's verdict (see [`LoopCompiles`]) on the fusion of `members` (in any
/// order), built on trial.
fn compiles(
    computation: &HloComputation,
    members: &[InstructionId],
    loop_compiles: LoopCompiles<'_>,
    names: &mut usize,
) -> bool {
    let mut members = members.to_vec();
    members.sort_unstable();
    let originals = members.iter().map(|&member| computation.instructions[member].clone()).collect();
    let (fused, inputs) = fused_computation(computation, &members, originals, names);
    let input_shapes: Vec<Shape> =
        inputs.iter().map(|&i| computation.instructions[i].shape.clone()).collect();
    loop_compiles(&fused, &input_shapes)
}

/// The fused computation of `members` (topological, root last; `originals` are their
/// instructions, in the same order) and its inputs: the operands read from outside, in order
/// of first use. A reduce root's init value is always an input (the loop starts each output
/// element from it), even when it is also computed inside (a scalar constant the reduced
/// expression uses too).
fn fused_computation(
    computation: &HloComputation,
    members: &[InstructionId],
    originals: Vec<Instruction>,
    counter: &mut usize,
) -> (HloComputation, Vec<InstructionId>) {
    let root = *members.last().expect("a group has a root");
    let root_instruction = originals.last().expect("a group has a root");
    let init = match root_instruction.opcode {
        Opcode::Reduce { .. } => Some(root_instruction.operands[1]),
        _ => None,
    };
    let mut inputs: Vec<InstructionId> = Vec::new();
    for original in &originals {
        for &operand in &original.operands {
            let outside = members.binary_search(&operand).is_err() || Some(operand) == init;
            if outside && !inputs.contains(&operand) {
                inputs.push(operand);
            }
        }
    }
    let mut instructions: Vec<Instruction> = inputs
        .iter()
        .enumerate()
        .map(|(number, &input)| Instruction {
            opcode: Opcode::Parameter { number: number as i64 },
            operands: vec![],
            shape: computation.instructions[input].shape.clone(),
            name: computation.fresh_name(&format!("param_{number}"), counter),
        })
        .collect();
    // Parameters first, then the members in order; a member reads another member where it can.
    let input = |id: InstructionId| inputs.iter().position(|&i| i == id).expect("an operand is an input");
    let position = |id: InstructionId| match members.binary_search(&id) {
        Ok(index) => inputs.len() + index,
        Err(_) => input(id),
    };
    for (&member, original) in members.iter().zip(originals) {
        let mut operands: Vec<InstructionId> = original.operands.iter().map(|&o| position(o)).collect();
        if let (true, Some(init)) = (member == root, init) {
            operands[1] = input(init);
        }
        instructions.push(Instruction { operands, ..original });
    }
    let root = instructions.len() - 1;
    let name = computation.fresh_name("fused_computation", counter);
    (HloComputation { name, instructions, root }, inputs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::parse::parse_module;

    /// Whether the producers of the entry's root reduce (the instructions named `producers`)
    /// read like its operand, the entry's lines being `lines` (beside a sum reducer `add`, an
    /// f32[4,3]{1,0} `x` and a scalar `zero`).
    fn reads_like(lines: &str, producers: &[&str]) -> bool {
        let text = format!(
            "HloModule m\n\nadd {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
             ROOT s = f32[] add(a, b)\n}}\n\nENTRY main {{\n  x = f32[4,3]{{1,0}} parameter(0)\n  \
             zero = f32[] constant(0)\n{lines}\n}}\n"
        );
        let computation = parse_module(&text).expect("the test module parses");
        let id = |name: &str| computation.instructions.iter().position(|i| i.name == name).expect("named");
        let group: Vec<InstructionId> =
            [computation.root].into_iter().chain(producers.iter().map(|name| id(name))).collect();
        reads_like_its_operand(&computation, &group)
    }

    /// Element-wise producers of arrays laid out as their result, with scalar constants and
    /// broadcast scalars, fold alike untried; a transpose, a broadcast row, an iota or an
    /// input in another layout need the trial compile.
    #[test]
    fn only_element_wise_producers_of_like_arrays_skip_the_trial() {
        let elementwise = "  c = f32[] constant(2)\n  cb = f32[4,3]{1,0} broadcast(c), dimensions={}\n  \
            m = f32[4,3]{1,0} multiply(x, cb)\n  e = f32[4,3]{1,0} exponential(m)\n  \
            ROOT r = f32[4] reduce(e, zero), dimensions={1}, to_apply=add";
        assert!(reads_like(elementwise, &["e", "m", "cb", "c"]));
        let transposed =
            "  y = f32[3,4]{1,0} parameter(1)\n  t = f32[4,3]{1,0} transpose(y), dimensions={1,0}\n  \
            s = f32[4,3]{1,0} add(x, t)\n  ROOT r = f32[] reduce(s, zero), dimensions={0,1}, to_apply=add";
        assert!(!reads_like(transposed, &["s", "t"]));
        let row = "  w = f32[3]{0} parameter(1)\n  wb = f32[4,3]{1,0} broadcast(w), dimensions={1}\n  \
            s = f32[4,3]{1,0} multiply(x, wb)\n  ROOT r = f32[] reduce(s, zero), dimensions={0,1}, to_apply=add";
        assert!(!reads_like(row, &["s", "wb"]));
        let iota = "  i = f32[4,3]{1,0} iota(), iota_dimension=1\n  s = f32[4,3]{1,0} add(x, i)\n  \
            ROOT r = f32[] reduce(s, zero), dimensions={0,1}, to_apply=add";
        assert!(!reads_like(iota, &["s", "i"]));
        let other_layout = "  y = f32[4,3]{0,1} parameter(1)\n  s = f32[4,3]{1,0} add(x, y)\n  \
            ROOT r = f32[] reduce(s, zero), dimensions={0,1}, to_apply=add";
        assert!(!reads_like(other_layout, &["s"]));
        // The same sum of an input laid out as the result needs no trial.
        let same_layout = other_layout.replace("{0,1}", "{1,0}");
        assert!(reads_like(&same_layout, &["s"]));
        // A sum of a broadcast scalar alone is tried.
        let splat = "  c = f32[] constant(2)\n  cb = f32[4,3]{1,0} broadcast(c), dimensions={}\n  \
            e = f32[4,3]{1,0} exponential(cb)\n  ROOT r = f32[] reduce(e, zero), dimensions={0,1}, to_apply=add";
        assert!(!reads_like(splat, &["e", "cb", "c"]));
    }
}
