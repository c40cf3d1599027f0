//! Register allocation for a loop program: the nodes of an expression share a few chunk
//! buffers (*slots*), a node taking a slot of its element type that no live node holds, so a
//! long chain touches two or three cache-resident buffers instead of one per node.

use super::nodes::Node;
use crate::element_type::ElementType;

/// Which slot holds each node's values (`of_node`), and each slot's element type.
#[derive(Debug, Default)]
pub(super) struct Slots {
    pub(super) of_node: Vec<usize>,
    pub(super) types: Vec<ElementType>,
}

/// Assigns slots to `nodes` (operands before users, the last node the result), whose operands
/// node `k` reads when node `read_at[k]` is evaluated (itself, or for a node inside a chain the
/// chain's last node: `chains.rs`). A node's slot is never one of the slots it reads (a chunk
/// op writes its output while it reads its operands), and a slot is free again after its
/// node's last reader.
pub(super) fn assign(nodes: &[Node], read_at: &[usize]) -> Slots {
    let mut last_read: Vec<usize> = (0..nodes.len()).collect();
    for (k, node) in nodes.iter().enumerate() {
        for &operand in &node.operands {
            last_read[operand] = last_read[operand].max(read_at[k]);
        }
    }
    let mut freed_at: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (k, &last) in last_read.iter().enumerate() {
        freed_at[last].push(k);
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
        // Nodes read for the last time by this node (and a node nothing reads) free their
        // slots once this node's is taken.
        for &done in &freed_at[k] {
            let slot = slots.of_node[done];
            if !free.contains(&slot) && k + 1 != nodes.len() {
                free.push(slot);
            }
        }
    }
    slots
}
