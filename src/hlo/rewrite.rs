//! Rewriting a computation in one forward sweep, the way every pass works: because the arena
//! is in topological order, each instruction sees its operands already rewritten, and may be
//! replaced in place or forwarded to an earlier instruction, in O(size of the graph).

use crate::hlo::ir::{HloComputation, Instruction, InstructionId, Opcode};

/// What a rewrite does with one instruction.
pub(crate) enum Rewrite {
    /// Keep it (possibly changed in place by the visitor).
    Keep,
    /// Its users read this earlier instruction instead.
    Forward(InstructionId),
}

impl HloComputation {
    /// Visits every instruction that something reads (or the root) in order, its operands
    /// already redirected by earlier forwards; `visit` sees the instructions before it and may change it in place (keeping
    /// operands earlier than itself) or forward it. Returns whether anything was forwarded (a
    /// visitor that changes an instruction in place keeps its own count). Forwarded
    /// instructions stay in the arena until [`HloComputation::remove_dead`].
    pub(crate) fn rewrite_forward(
        &mut self,
        mut visit: impl FnMut(&[Instruction], &mut Instruction) -> Rewrite,
    ) -> bool {
        let mut forward: Vec<InstructionId> = (0..self.instructions.len()).collect();
        // Instructions nothing reads are dead (DCE removes them): visiting them would only
        // report the same rewrite again and again.
        let mut read = vec![false; self.instructions.len()];
        read[self.root] = true;
        for instruction in &self.instructions {
            for &operand in &instruction.operands {
                read[operand] = true;
            }
        }
        let mut changed = false;
        for id in (0..self.instructions.len()).filter(|&id| read[id]) {
            let (before, rest) = self.instructions.split_at_mut(id);
            let instruction = &mut rest[0];
            for operand in &mut instruction.operands {
                *operand = forward[*operand];
            }
            match visit(before, instruction) {
                Rewrite::Keep => {}
                Rewrite::Forward(target) => {
                    debug_assert!(target < id, "forwarding must go to an earlier instruction");
                    forward[id] = target;
                    changed = true;
                }
            }
        }
        self.root = forward[self.root];
        changed
    }

    /// Which instructions the root depends on (itself included).
    pub(crate) fn live(&self) -> Vec<bool> {
        let mut live = vec![false; self.instructions.len()];
        live[self.root] = true;
        for id in (0..live.len()).rev() {
            if live[id] {
                for &operand in &self.instructions[id].operands {
                    live[operand] = true;
                }
            }
        }
        live
    }

    /// Removes every instruction the root does not depend on, except parameters (XLA's DCE
    /// keeps them: they are the signature), renumbering the arena. Returns whether anything
    /// was removed.
    pub(crate) fn remove_dead(&mut self) -> bool {
        let count = self.instructions.len();
        let mut live = self.live();
        for (id, instruction) in self.instructions.iter().enumerate() {
            if matches!(instruction.opcode, Opcode::Parameter { .. }) {
                live[id] = true;
            }
        }
        if live.iter().all(|&l| l) {
            return false;
        }
        let mut new_id = vec![usize::MAX; count];
        let mut kept = Vec::with_capacity(count);
        for (id, instruction) in std::mem::take(&mut self.instructions).into_iter().enumerate() {
            if live[id] {
                new_id[id] = kept.len();
                let mut instruction = instruction;
                for operand in &mut instruction.operands {
                    *operand = new_id[*operand];
                }
                kept.push(instruction);
            }
        }
        self.instructions = kept;
        self.root = new_id[self.root];
        true
    }

    /// For each instruction, the instructions that read it (in order, once per read).
    pub(crate) fn users(&self) -> Vec<Vec<InstructionId>> {
        let mut users = vec![Vec::new(); self.instructions.len()];
        for (id, instruction) in self.instructions.iter().enumerate() {
            for &operand in &instruction.operands {
                users[operand].push(id);
            }
        }
        users
    }

    /// A name for a new instruction: `base.N` with N above every id used in the computation.
    pub(crate) fn fresh_name(&self, base: &str, counter: &mut usize) -> String {
        if *counter == 0 {
            *counter = self
                .instructions
                .iter()
                .filter_map(|i| i.name.rsplit_once('.').and_then(|(_, n)| n.parse::<usize>().ok()))
                .max()
                .unwrap_or(0)
                .max(self.name.rsplit_once('.').and_then(|(_, n)| n.parse().ok()).unwrap_or(0));
        }
        *counter += 1;
        format!("{base}.{counter}")
    }
}
