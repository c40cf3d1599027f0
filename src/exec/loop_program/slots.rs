//! Register allocation for a loop program: the nodes of an expression share a few chunk
//! buffers (*slots*), a node taking a slot of its element type that no live node holds, so a
//! long chain touches two or three cache-resident buffers instead of one per node.

use super::Node;
use crate::element_type::ElementType;

/// Which slot holds each node's values (`of_node`), and each slot's element type.
#[derive(Debug, Default)]
pub(super) struct Slots {
    pub(super) of_node: Vec<usize>,
    pub(super) types: Vec<ElementType>,
}

/// Assigns slots to `nodes` (operands before users, the last node the result): a node's slot
/// is never one of its operands' (a chunk op writes its output while it reads its operands),
/// and a slot is free again after its node's last reader.
pub(super) fn assign(nodes: &[Node]) -> Slots {
    let mut last_read: Vec<usize> = (0..nodes.len()).collect();
    for (k, node) in nodes.iter().enumerate() {
        for &operand in &node.operands {
            last_read[operand] = k;
        }
    }
    let mut slots = Slots::default();
    let mut free: Vec<usize> = Vec::new();
    for (k, node) in nodes.iter().enumerate() {
        let reusable = free.iter().rposition(|&s| slots.types[s] == node.element_type);
        let slot = match reusable {
            Some(position) => free.swap_remove(position),
            None => {
                slots.types.push(node.element_type);
                slots.types.len() - 1
            }
        };
        slots.of_node.push(slot);
        // Operands read for the last time by this node (and a node nothing reads) free their
        // slots once this node's is taken.
        let done = node.operands.iter().copied().chain(std::iter::once(k)).filter(|&o| last_read[o] == k);
        for operand in done {
            let slot = slots.of_node[operand];
            if !free.contains(&slot) && k + 1 != nodes.len() {
                free.push(slot);
            }
        }
    }
    slots
}
