//! Buffer assignment: where every array a plan computes lives during a run, decided once when
//! the plan is made, as XLA's `BufferAssignment` decides it.
//!
//! Each array an instruction computes is a *buffer*. A buffer is live from the step that
//! computes it to the last step that reads a value holding it: the instruction itself, or a
//! tuple, tuple element, loop, branch or call whose value may hold it (liveness runs through
//! these aliases). The buffers the result holds are the run's *outputs*, allocated on their
//! own (the caller keeps them). Every other buffer has an offset in one heap: buffers whose
//! live ranges overlap never share bytes, and the others may (placed largest first, each in the
//! smallest gap that fits among the buffers live at the same time: XLA's global decreasing-size
//! best-fit heap). An update written over its operand (a dynamic update slice, a scatter) takes
//! the operand's place when the operand's buffer dies at its step (the caller says which:
//! [`Instruction::reuses`]), the two then one buffer and no copy made.
//!
//! The heap is one allocation per run (reused from one run to the next), so a run allocates
//! nothing else for its temporaries. [`MemoryStats`] reports the plan: the bytes of the
//! arguments, the outputs, the heap, and the most live at any step, kernels' own scratch and
//! the plans of loop bodies and branches included.

use crate::exec::memory::MemoryStats;

/// The alignment of every buffer in the heap: a cache line, as every buffer lazy-xla
/// allocates (`storage::buffer`).
pub(crate) const HEAP_ALIGNMENT: u64 = 64;

/// What buffer assignment needs to know of one instruction.
#[derive(Clone, Debug, Default)]
pub(crate) struct Instruction {
    /// The bytes of each array it computes into buffers of its own (none for a parameter, a
    /// constant, a tuple, a loop or a call: their values are other buffers, or the plans of
    /// their own computations).
    pub(crate) defines: Vec<u64>,
    /// The instructions it reads.
    pub(crate) operands: Vec<usize>,
    /// Which buffers its value may hold.
    pub(crate) holds: Holds,
    /// Bytes it needs besides its inputs and outputs while it runs: a kernel's scratch, a
    /// loop's or branch's own plan.
    pub(crate) scratch: u64,
    /// An operand (by position) whose buffer this instruction's only array may take when the
    /// operand's buffer dies here and no other operand holds it: an update written over its
    /// operand in place (a dynamic update slice, a scatter).
    pub(crate) reuses: Option<usize>,
}

/// Which buffers an instruction's value may hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Holds {
    /// The buffers it defines (an array, or a tuple of arrays in order).
    #[default]
    Defined,
    /// None of the plan's: an argument or a constant.
    Nothing,
    /// Its operands' values, as the elements of a tuple.
    Tuple,
    /// Element `index` of its one operand's tuple.
    Element(usize),
    /// Any of its operands' buffers: a loop, a branch or a call may return what it is given.
    AnyOperand,
}

/// Where one buffer lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Placement {
    /// At this byte offset in the run's heap.
    Heap(u64),
    /// In memory of its own: an output of the run.
    Output,
}

/// The buffers of a plan: each instruction's placements (one per array it defines) and the
/// heap they share.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BufferAssignment {
    /// For each instruction, where each array it defines lives.
    pub(crate) placements: Vec<Vec<Placement>>,
    /// The bytes of the heap.
    pub(crate) heap_bytes: u64,
    /// The memory the plan uses.
    pub(crate) stats: MemoryStats,
}

/// One buffer: its bytes (in the heap, rounded up to [`HEAP_ALIGNMENT`]), the steps it is live
/// over, and whether it is an output.
#[derive(Clone, Copy, Debug)]
struct Buffer {
    bytes: u64,
    first: usize,
    last: usize,
    output: bool,
}

/// The buffers a value may hold: as a tuple's elements where that is known, else as one set.
#[derive(Clone, Debug)]
enum Held {
    Arrays(Vec<usize>),
    Tuple(Vec<Held>),
}

impl Held {
    fn flatten(&self, into: &mut Vec<usize>) {
        match self {
            Held::Arrays(buffers) => into.extend(buffers),
            Held::Tuple(elements) => elements.iter().for_each(|e| e.flatten(into)),
        }
    }

    fn all(&self) -> Vec<usize> {
        let mut all = Vec::new();
        self.flatten(&mut all);
        all
    }
}

/// Assigns the buffers of `instructions` (in the order they run; operands before users) whose
/// result is instruction `root`, taking `argument_bytes` of arguments and returning
/// `output_bytes`.
pub(crate) fn assign(
    instructions: &[Instruction],
    root: usize,
    argument_bytes: u64,
    output_bytes: u64,
) -> BufferAssignment {
    let steps = instructions.len();
    // Each defined array's buffer, by instruction.
    let mut buffers: Vec<Buffer> = Vec::new();
    let mut defined: Vec<Vec<usize>> = Vec::with_capacity(steps);
    for (step, instruction) in instructions.iter().enumerate() {
        let ids = instruction
            .defines
            .iter()
            .map(|&bytes| {
                buffers.push(Buffer { bytes, first: step, last: step, output: false });
                buffers.len() - 1
            })
            .collect();
        defined.push(ids);
    }
    // What each value may hold.
    let mut held: Vec<Held> = Vec::with_capacity(steps);
    for (step, instruction) in instructions.iter().enumerate() {
        let operand = |k: usize| instruction.operands.get(k).map(|&o| held[o].clone());
        let value = match instruction.holds {
            Holds::Defined if defined[step].len() == 1 => Held::Arrays(defined[step].clone()),
            Holds::Defined => Held::Tuple(defined[step].iter().map(|&b| Held::Arrays(vec![b])).collect()),
            Holds::Nothing => Held::Arrays(Vec::new()),
            Holds::Tuple => Held::Tuple(instruction.operands.iter().map(|&o| held[o].clone()).collect()),
            Holds::Element(index) => match operand(0) {
                Some(Held::Tuple(elements)) => {
                    elements.get(index).cloned().unwrap_or(Held::Arrays(Vec::new()))
                }
                Some(arrays) => arrays,
                None => Held::Arrays(Vec::new()),
            },
            Holds::AnyOperand => {
                let mut all = Vec::new();
                instruction.operands.iter().for_each(|&o| held[o].flatten(&mut all));
                Held::Arrays(all)
            }
        };
        held.push(value);
    }
    // The last step that reads each value (the root's is read after the last step).
    let mut last_read: Vec<usize> = (0..steps).collect();
    for (step, instruction) in instructions.iter().enumerate() {
        for &operand in &instruction.operands {
            last_read[operand] = last_read[operand].max(step);
        }
    }
    if root < steps {
        last_read[root] = steps;
        for b in held[root].all() {
            buffers[b].output = true;
        }
    }
    for (step, value) in held.iter().enumerate() {
        for b in value.all() {
            buffers[b].last = buffers[b].last.max(last_read[step]);
        }
    }
    // A reusing result takes its operand's buffer where that buffer dies at this step (and is
    // of the same size, in the heap): the two become one buffer, `owner`.
    let mut owner: Vec<usize> = (0..buffers.len()).collect();
    for (step, instruction) in instructions.iter().enumerate() {
        let (Some(position), [result]) = (instruction.reuses, &defined[step][..]) else { continue };
        let Some(&operand) = instruction.operands.get(position) else { continue };
        let [from] = defined.get(operand).map(Vec::as_slice).unwrap_or_default() else { continue };
        let read_otherwise = instruction
            .operands
            .iter()
            .enumerate()
            .any(|(k, &o)| k != position && held[o].all().iter().any(|&b| owner[b] == owner[*from]));
        if read_otherwise {
            continue;
        }
        let (from, result) = (owner[*from], *result);
        let dies_here = buffers[from].last == step;
        let fits = aligned(buffers[from].bytes) == aligned(buffers[result].bytes);
        if dies_here && fits && !buffers[from].output && !buffers[result].output {
            buffers[from].last = buffers[result].last;
            owner[result] = from;
        }
    }
    let offsets = place(&buffers, &owner);
    let heap_bytes = buffers
        .iter()
        .enumerate()
        .filter(|&(b, buffer)| owner[b] == b && !buffer.output)
        .map(|(b, buffer)| offsets[b].saturating_add(aligned(buffer.bytes)))
        .max()
        .unwrap_or(0);
    let placements = defined
        .iter()
        .map(|ids| {
            ids.iter()
                .map(|&b| match buffers[b].output {
                    true => Placement::Output,
                    false => Placement::Heap(offsets[owner[b]]),
                })
                .collect()
        })
        .collect();
    // The bytes live at each step: the buffers live then (a shared one once) and the step's
    // scratch; at the end, the outputs.
    let mut live = vec![0u64; steps];
    for (b, buffer) in buffers.iter().enumerate() {
        if owner[b] != b {
            continue;
        }
        // A heap buffer takes its bytes rounded up to the heap's alignment; an output its own.
        let bytes = if buffer.output { buffer.bytes } else { aligned(buffer.bytes) };
        for step in &mut live[buffer.first..=buffer.last.min(steps.saturating_sub(1))] {
            *step = step.saturating_add(bytes);
        }
    }
    for (step, instruction) in instructions.iter().enumerate() {
        live[step] = live[step].saturating_add(instruction.scratch);
    }
    let most = live.iter().copied().max().unwrap_or(0).max(output_bytes);
    let computed = buffers
        .iter()
        .map(|b| b.bytes)
        .chain(instructions.iter().map(|i| i.scratch))
        .fold(0u64, u64::saturating_add);
    let stats = MemoryStats {
        argument_bytes,
        output_bytes,
        temp_bytes: heap_bytes,
        peak_bytes: argument_bytes.saturating_add(most),
        unplanned_bytes: argument_bytes.saturating_add(computed),
    };
    BufferAssignment { placements, heap_bytes, stats }
}

/// `bytes` rounded up to the heap's alignment.
fn aligned(bytes: u64) -> u64 {
    bytes.div_ceil(HEAP_ALIGNMENT).saturating_mul(HEAP_ALIGNMENT)
}

/// The heap offset of every buffer that owns its place (`owner[b] == b`) and is not an output:
/// largest first, each at the start of the smallest gap that holds it among the buffers placed
/// before it whose live ranges overlap its own (or after the last of them).
fn place(buffers: &[Buffer], owner: &[usize]) -> Vec<u64> {
    let mut order: Vec<usize> = (0..buffers.len()).filter(|&b| owner[b] == b && !buffers[b].output).collect();
    order.sort_by_key(|&b| (std::cmp::Reverse(buffers[b].bytes), buffers[b].first, b));
    let mut offsets = vec![0u64; buffers.len()];
    let mut placed: Vec<usize> = Vec::new();
    for b in order {
        let buffer = buffers[b];
        let mut taken: Vec<(u64, u64)> = placed
            .iter()
            .filter(|&&p| buffers[p].first <= buffer.last && buffer.first <= buffers[p].last)
            .map(|&p| (offsets[p], offsets[p].saturating_add(aligned(buffers[p].bytes))))
            .collect();
        taken.sort_unstable();
        let (mut best, mut best_gap, mut end) = (None, u64::MAX, 0u64);
        for &(start, stop) in &taken {
            let gap = start.saturating_sub(end);
            if gap >= aligned(buffer.bytes) && gap < best_gap {
                (best, best_gap) = (Some(end), gap);
            }
            end = end.max(stop);
        }
        offsets[b] = best.unwrap_or(end);
        placed.push(b);
    }
    offsets
}

#[cfg(test)]
mod tests {
    use super::*;

    fn array(bytes: u64, operands: &[usize]) -> Instruction {
        Instruction { defines: vec![bytes], operands: operands.to_vec(), ..Default::default() }
    }

    fn parameter() -> Instruction {
        Instruction { holds: Holds::Nothing, ..Default::default() }
    }

    /// Two buffers live at the same step never share a byte; checked for every pair.
    fn assert_disjoint(
        instructions: &[Instruction],
        assignment: &BufferAssignment,
        lives: &[(usize, usize)],
    ) {
        let heap: Vec<(u64, u64, usize, usize)> = assignment
            .placements
            .iter()
            .flatten()
            .zip(instructions.iter().flat_map(|i| i.defines.iter()))
            .zip(lives)
            .filter_map(|((placement, &bytes), &(first, last))| match placement {
                Placement::Heap(offset) => Some((*offset, *offset + aligned(bytes), first, last)),
                Placement::Output => None,
            })
            .collect();
        for (i, a) in heap.iter().enumerate() {
            for b in &heap[i + 1..] {
                let live_together = a.2 <= b.3 && b.2 <= a.3;
                let overlap = a.0 < b.1 && b.0 < a.1;
                assert!(!(live_together && overlap), "{a:?} and {b:?} share memory while both are live");
                assert!(a.1 <= assignment.heap_bytes && b.1 <= assignment.heap_bytes);
            }
        }
    }

    #[test]
    fn a_chain_reuses_the_memory_of_what_died() {
        // p -> a -> b -> c -> d (root): a and c may share, as may b and d's predecessors.
        let mb = 1 << 20;
        let instructions =
            vec![parameter(), array(mb, &[0]), array(mb, &[1]), array(mb, &[2]), array(mb, &[3])];
        let assignment = assign(&instructions, 4, mb, mb);
        assert_eq!(assignment.placements[4], vec![Placement::Output]);
        assert_eq!(assignment.heap_bytes, 2 * mb, "{assignment:?}");
        // At step 2: the argument, a and b live.
        assert_eq!(assignment.stats.peak_bytes, 3 * mb);
        let expected = MemoryStats {
            argument_bytes: mb,
            output_bytes: mb,
            temp_bytes: 2 * mb,
            peak_bytes: 3 * mb,
            unplanned_bytes: 5 * mb,
        };
        assert_eq!(assignment.stats, expected);
        assert_disjoint(&instructions, &assignment, &[(1, 2), (2, 3), (3, 4), (4, 5)]);
    }

    #[test]
    fn an_update_takes_the_buffer_of_an_operand_that_dies_at_its_step() {
        let mb = 1 << 20;
        let reusing = |operand| Instruction { reuses: Some(0), ..array(mb, &[operand]) };
        let instructions = vec![parameter(), array(mb, &[0]), reusing(1), reusing(2), array(mb, &[3])];
        let assignment = assign(&instructions, 4, mb, mb);
        assert_eq!(assignment.heap_bytes, mb);
        assert_eq!(assignment.placements[1], assignment.placements[3]);
        assert_eq!(
            assignment.stats.peak_bytes,
            3 * mb,
            "the argument, the heap and the output at the last step"
        );
        // An operand read later keeps its own buffer.
        let instructions = vec![parameter(), array(mb, &[0]), reusing(1), array(mb, &[1, 2])];
        let assignment = assign(&instructions, 3, mb, mb);
        assert_ne!(assignment.placements[1], assignment.placements[2]);
    }

    #[test]
    fn liveness_runs_through_tuples_elements_and_loops() {
        let kb = 1024;
        let tuple = |operands: &[usize]| Instruction {
            holds: Holds::Tuple,
            operands: operands.to_vec(),
            ..Default::default()
        };
        let element = |operand, index| Instruction {
            holds: Holds::Element(index),
            operands: vec![operand],
            ..Default::default()
        };
        let looping = |operand| Instruction {
            holds: Holds::AnyOperand,
            operands: vec![operand],
            scratch: 7 * kb,
            ..Default::default()
        };
        // 0 p, 1 a, 2 b, 3 (a, b), 4 while(3), 5 gte(4, 0), 6 c = f(5), 7 d = f(6), 8 e = f(b via 2? no: 7)
        let instructions = vec![
            parameter(),
            array(kb, &[0]),
            array(kb, &[0]),
            tuple(&[1, 2]),
            looping(3),
            element(4, 0),
            array(kb, &[5]),
            array(kb, &[6]),
            array(kb, &[7]),
        ];
        let assignment = assign(&instructions, 8, 0, kb);
        // a and b are live until the loop's result is last read, at step 6.
        let lives = [(1, 6), (2, 6), (6, 7), (7, 8), (8, 9)];
        assert_disjoint(&instructions, &assignment, &lives);
        assert_eq!(assignment.stats.peak_bytes, 2 * kb + 7 * kb, "a, b and the loop's own plan");
        // The root's buffers, through a tuple's element, are outputs.
        let instructions = vec![parameter(), array(kb, &[0]), array(kb, &[0]), tuple(&[1, 2]), element(3, 1)];
        let assignment = assign(&instructions, 4, 0, kb);
        assert_eq!(assignment.placements[2], vec![Placement::Output]);
        assert!(matches!(assignment.placements[1][..], [Placement::Heap(_)]));
    }

    #[test]
    fn random_plans_never_share_memory_between_live_buffers() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for _ in 0..300 {
            let steps = 2 + next(30) as usize;
            let mut instructions = vec![parameter()];
            for step in 1..steps {
                let operands: Vec<usize> = (0..1 + next(3)).map(|_| next(step as u64) as usize).collect();
                let reuses = (next(2) == 0).then_some(0);
                instructions.push(Instruction { reuses, ..array(1 + next(3000), &operands) });
            }
            let assignment = assign(&instructions, steps - 1, 0, 0);
            let mut last: Vec<usize> = (0..steps).collect();
            for (step, instruction) in instructions.iter().enumerate() {
                instruction.operands.iter().for_each(|&o| last[o] = last[o].max(step));
            }
            let heap: Vec<(usize, u64, u64)> = (1..steps)
                .filter_map(|s| match assignment.placements[s][..] {
                    [Placement::Heap(offset)] => {
                        Some((s, offset, offset + aligned(instructions[s].defines[0])))
                    }
                    _ => None,
                })
                .collect();
            // Buffers that share memory while both live must be a result and the operand it
            // took the place of, which dies at the result's step.
            let took_place = |result: usize, operand: usize| {
                instructions[result].reuses.is_some()
                    && instructions[result].operands[0] == operand
                    && last[operand] == result
            };
            for (i, &(a, a_start, a_end)) in heap.iter().enumerate() {
                assert!(a_end <= assignment.heap_bytes);
                for &(b, b_start, b_end) in &heap[i + 1..] {
                    let live_together = a <= last[b] && b <= last[a];
                    let overlap = a_start < b_end && b_start < a_end;
                    assert!(
                        !(live_together && overlap) || took_place(b, a),
                        "v{a} and v{b} share memory while both are live: {instructions:?} {assignment:?}"
                    );
                }
            }
        }
    }
}
