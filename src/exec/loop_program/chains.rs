//! Register chains: runs of element-wise nodes, each read only by the next, computed a block
//! of lanes at a time through every node while the block stays in vector registers, instead
//! of one pass over the chunk per node (a load and a store per vector, for an add). The nodes
//! inside a chain are never materialized; its last node is. Besides the cheap ops, a chain
//! runs exp, log, tanh and logistic over its block ([`ChainFunction`]), so that GELU's or a
//! sigmoid gate's arithmetic around the function stays in the one pass that writes the output.
//! A short run that only one link reads is computed beside the chain ([`Side`]), and a row
//! sum of the chain's values is summed as the chain computes them ([`Fold`]).
//!
//! Each lane still goes through the same functions in the same order, so a chain's values are
//! its nodes' values to the bit. A chunk shorter than a block, or a CPU the chain kernel is not
//! built for, evaluates the nodes one by one.

use super::chain::{
    Chain, ChainFunction, ChainOp, Fold, Link, Role, Side, CHAINED_TYPE, MAX_SIDES, MAX_SIDE_LINKS,
};
use super::nodes::{Node, NodeKind};
use crate::attributes::{BinaryOp, UnaryOp};

/// The fewest links a chain has. Node by node, a run is a pass per node, and the later passes
/// cannot overlap the first's wait on memory, where a chain reads while it computes: two links
/// already pay, through an elementary function too.
const MIN_LINKS: usize = 2;

/// The link `node` would be if its running value were operand `running`; `None` if it cannot
/// be a link: not one of the ops a chain computes, or not of the type chains are computed for.
fn link(node: &Node, running: usize) -> Option<Link> {
    if node.element_type != CHAINED_TYPE {
        return None;
    }
    match (&node.kind, node.operands.as_slice()) {
        (NodeKind::Unary(UnaryOp::Neg), _) => Some(Link::Neg),
        (NodeKind::Unary(UnaryOp::Abs), _) => Some(Link::Abs),
        (NodeKind::Unary(UnaryOp::Exp), _) => Some(Link::Function(ChainFunction::Exp)),
        (NodeKind::Unary(UnaryOp::Log), _) => Some(Link::Function(ChainFunction::Log)),
        (NodeKind::Unary(UnaryOp::Tanh), _) => Some(Link::Function(ChainFunction::Tanh)),
        (NodeKind::Unary(UnaryOp::Logistic), _) => Some(Link::Function(ChainFunction::Logistic)),
        (NodeKind::Binary(op), &[a, b]) => {
            let op = match op {
                BinaryOp::Add => ChainOp::Add,
                BinaryOp::Sub => ChainOp::Sub,
                BinaryOp::Mul => ChainOp::Mul,
                BinaryOp::Div => ChainOp::Div,
                BinaryOp::Max => ChainOp::Max,
                BinaryOp::Min => ChainOp::Min,
                _ => return None,
            };
            let running_left = a == running;
            Some(Link::Binary { op, other: if running_left { b } else { a }, running_left })
        }
        _ => None,
    }
}

/// Whether `node` may be a link.
fn linkable(node: &Node) -> bool {
    node.operands.first().is_some_and(|&first| link(node, first).is_some())
}

/// The role of each of `nodes` (operands before users, the last the result): a linkable node
/// that varies along the row continues the chain of one of its operands if that operand is
/// such a node too and read by nothing else (of two, the one with the longer chain); a chain
/// has at least [`MIN_LINKS`] links.
pub(super) fn find(nodes: &[Node]) -> Vec<Role> {
    let reads = reads(nodes);
    // Whether a node is one value for every element of a row (computed from constants and
    // row reductions): such a node is one scalar op per row on its own, and a block of lanes
    // per 64 elements in a chain.
    let mut uniform = vec![false; nodes.len()];
    // Whether a uniform node is computed from a row reduction: in a tile of rows, one value per
    // row rather than one for all.
    let mut per_row = vec![false; nodes.len()];
    for (k, node) in nodes.iter().enumerate() {
        uniform[k] = match node.kind {
            NodeKind::Constant(_) | NodeKind::Reduce(_) => true,
            NodeKind::Load { .. } | NodeKind::Index { .. } => false,
            _ => node.operands.iter().all(|&o| uniform[o]),
        };
        per_row[k] = uniform[k]
            && (matches!(node.kind, NodeKind::Reduce(_)) || node.operands.iter().any(|&o| per_row[o]));
    }
    let linkable = |k: usize| !uniform[k] && linkable(&nodes[k]);
    // The operand each node continues the chain of, and the links of the chain it ends.
    let mut continued: Vec<Option<usize>> = vec![None; nodes.len()];
    let mut length = vec![0usize; nodes.len()];
    for (k, node) in nodes.iter().enumerate() {
        if !linkable(k) {
            continue;
        }
        let continues = |&p: &usize| reads[p] == 1 && linkable(p);
        continued[k] =
            node.operands.iter().copied().filter(continues).max_by_key(|&p| (length[p], usize::MAX - p));
        length[k] = 1 + continued[k].map_or(0, |p| length[p]);
    }
    let mut continues_to = vec![false; nodes.len()];
    for &p in continued.iter().flatten() {
        continues_to[p] = true;
    }
    // The run ending at `last` (its nodes, first to last), its start and its links.
    let run = |last: usize| {
        let mut members = vec![last];
        while let Some(p) = continued[members[members.len() - 1]] {
            members.push(p);
        }
        members.reverse();
        // The first node's first operand (a splat is the cheapest start), unless it has one
        // value per row: then its operand that varies along the row (there is one, as the node
        // does), whose values are the chunk's; the kernel reads the per-row values as the
        // node's other operand.
        let operands = &nodes[members[0]].operands;
        let start = match per_row[operands[0]] {
            true => operands.iter().copied().find(|&o| !uniform[o]).unwrap_or(operands[0]),
            false => operands[0],
        };
        let mut running = start;
        let links: Vec<Link> = members
            .iter()
            .filter_map(|&k| {
                let link = link(&nodes[k], running);
                running = k;
                link
            })
            .collect();
        (members, start, links)
    };
    let mut roles = vec![Role::Alone; nodes.len()];
    // Last chain first, so that a short run a later chain reads is its side rather than a
    // chain of its own (a side writes no slot).
    for end in (0..nodes.len()).rev() {
        if continues_to[end] || length[end] < MIN_LINKS || roles[end] != Role::Alone {
            continue;
        }
        let (members, start, links) = run(end);
        for &member in &members[..members.len() - 1] {
            roles[member] = Role::Inside(end);
        }
        // Other operands of links that are the last node of a run of at most
        // `MAX_SIDE_LINKS` read by nothing else are computed beside the chain.
        let mut sides = Vec::new();
        for link in &links {
            let Link::Binary { other, .. } = *link else { continue };
            let lone = reads[other] == 1 && length[other] <= MAX_SIDE_LINKS;
            if sides.len() == MAX_SIDES || !linkable(other) || !lone {
                continue;
            }
            let (members, start, links) = run(other);
            for &member in &members {
                roles[member] = Role::Inside(end);
            }
            sides.push(Side { node: other, start, links });
        }
        roles[end] = Role::End(Chain { start, links, sides, fold: None });
    }
    fold_sums(nodes, &mut roles);
    roles
}

/// Gives each chain the first row sum of its values that is evaluated on its own (an `f32`
/// add reduce, not the result: see [`Fold`]), to fold as it runs.
fn fold_sums(nodes: &[Node], roles: &mut [Role]) {
    let mut index = 0;
    for end in 0..nodes.len() {
        if !matches!(roles[end], Role::End(_)) {
            continue;
        }
        let sums_end = |k: &usize| {
            let node = &nodes[*k];
            matches!(node.kind, NodeKind::Reduce(BinaryOp::Add))
                && node.element_type == CHAINED_TYPE
                && node.operands.first() == Some(&end)
                && roles[*k] == Role::Alone
        };
        let Some(node) = (end + 1..nodes.len() - 1).find(sums_end) else { continue };
        if let Role::End(chain) = &mut roles[end] {
            chain.fold = Some(Fold { node, index });
        }
        roles[node] = Role::Folded(end);
        index += 1;
    }
}

/// How many times each of `nodes` is read as an operand.
fn reads(nodes: &[Node]) -> Vec<usize> {
    let mut reads = vec![0usize; nodes.len()];
    for &operand in nodes.iter().flat_map(|node| &node.operands) {
        reads[operand] += 1;
    }
    reads
}

/// Where each node's operands are read, given the nodes' `roles`: at the node itself, or for a
/// node inside a chain at the chain's last node (so the slots of what a chain reads stay
/// theirs until it has run).
pub(super) fn read_at(roles: &[Role]) -> Vec<usize> {
    let at = |(k, role): (usize, &Role)| match role {
        Role::Inside(end) => *end,
        Role::Alone | Role::End(_) | Role::Folded(_) => k,
    };
    roles.iter().enumerate().map(at).collect()
}

/// Whether each of `nodes` is read, and only by chains (given the nodes' `roles`): as their
/// links' other operand or as a chain's start, never as a side run's start nor by a node
/// evaluated on its own. When chains run, such a node's values may be in a form only the
/// chain kernel reads.
pub(super) fn read_by_links_only(nodes: &[Node], roles: &[Role]) -> Vec<bool> {
    let reads = reads(nodes);
    let mut link_reads = vec![0usize; nodes.len()];
    for role in roles {
        if let Role::End(chain) = role {
            // The chain's start is read as its links' other operands are (not a side's).
            link_reads[chain.start] += 1;
            let side_links = chain.sides.iter().flat_map(|side| &side.links);
            for link in chain.links.iter().chain(side_links) {
                if let Link::Binary { other, .. } = link {
                    link_reads[*other] += 1;
                }
            }
        }
    }
    reads.iter().zip(&link_reads).map(|(&reads, &link_reads)| reads > 0 && reads == link_reads).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attributes::BinaryOp::{Add, Mul, Sub};
    use crate::element_type::ElementType::{F32, S32};
    use crate::exec::loop_program::nodes::{load, node};
    use crate::literal::Literal;

    /// An `f32` binary node.
    fn binary(op: BinaryOp, operands: &[usize]) -> Node {
        node(NodeKind::Binary(op), F32, operands)
    }

    /// An `f32` unary node.
    fn unary(op: UnaryOp, operand: usize) -> Node {
        node(NodeKind::Unary(op), F32, &[operand])
    }

    #[test]
    fn a_chain_runs_through_nodes_read_once_and_ends_where_a_value_is_read_twice() {
        // |x + (c·x)·x|, then squared: the chain ends at the abs, read twice.
        let nodes = vec![
            load(F32),                                                   // 0: x
            node(NodeKind::Constant(Literal::scalar(0.5f32)), F32, &[]), // 1: c
            node(NodeKind::Binary(Mul), F32, &[1, 0]),                   // 2: c·x
            node(NodeKind::Binary(Mul), F32, &[2, 0]),                   // 3: ·x
            node(NodeKind::Binary(Add), F32, &[0, 3]),                   // 4: x + ·
            node(NodeKind::Unary(UnaryOp::Abs), F32, &[4]),              // 5: |·|, read twice
            node(NodeKind::Binary(Mul), F32, &[5, 5]),                   // 6: squared
        ];
        let links = vec![
            Link::Binary { op: ChainOp::Mul, other: 0, running_left: true },
            Link::Binary { op: ChainOp::Mul, other: 0, running_left: true },
            Link::Binary { op: ChainOp::Add, other: 0, running_left: false },
            Link::Abs,
        ];
        let expected = [
            Role::Alone,
            Role::Alone,
            Role::Inside(5),
            Role::Inside(5),
            Role::Inside(5),
            Role::End(Chain { start: 1, links, sides: vec![], fold: None }),
            Role::Alone,
        ];
        let roles = find(&nodes);
        assert_eq!(roles, expected);
        assert_eq!(read_at(&roles), [0, 1, 5, 5, 5, 5, 6]);
    }

    #[test]
    fn a_chain_whose_first_node_reads_a_row_reduction_first_starts_from_its_other_operand() {
        // ((s - x)·x + x)·x with s = Σ x along the row (one value per row in a tile of rows).
        let nodes = vec![
            load(F32),                                                 // 0: x
            node(NodeKind::Constant(Literal::scalar(0f32)), F32, &[]), // 1: init
            node(NodeKind::Reduce(Add), F32, &[0, 1]),                 // 2: s
            node(NodeKind::Binary(Sub), F32, &[2, 0]),                 // 3: s - x
            node(NodeKind::Binary(Mul), F32, &[3, 0]),                 // 4
            node(NodeKind::Binary(Add), F32, &[4, 0]),                 // 5
            node(NodeKind::Binary(Mul), F32, &[5, 0]),                 // 6
        ];
        let Role::End(chain) = &find(&nodes)[6] else { panic!("a chain ends at the last node") };
        assert_eq!(chain.start, 0);
        assert_eq!(chain.links[0], Link::Binary { op: ChainOp::Sub, other: 2, running_left: false });
    }

    #[test]
    fn of_two_operands_read_once_the_longer_chain_continues_and_the_other_runs_beside_it() {
        // (0.5·x) · (0.5 + |-x|): the right operand's chain is the longer one; 0.5·x, read
        // only by its last link, is computed beside it (GELU's shape).
        let nodes = vec![
            load(F32),                                                   // 0: x
            node(NodeKind::Constant(Literal::scalar(0.5f32)), F32, &[]), // 1
            node(NodeKind::Binary(Mul), F32, &[1, 0]),                   // 2: 0.5·x
            node(NodeKind::Unary(UnaryOp::Neg), F32, &[0]),              // 3: -x
            node(NodeKind::Unary(UnaryOp::Abs), F32, &[3]),              // 4: |-x|
            node(NodeKind::Binary(Add), F32, &[1, 4]),                   // 5: 0.5 + ·
            node(NodeKind::Binary(Mul), F32, &[2, 5]),                   // 6
        ];
        let links = vec![
            Link::Neg,
            Link::Abs,
            Link::Binary { op: ChainOp::Add, other: 1, running_left: false },
            Link::Binary { op: ChainOp::Mul, other: 2, running_left: false },
        ];
        let side = Side {
            node: 2,
            start: 1,
            links: vec![Link::Binary { op: ChainOp::Mul, other: 0, running_left: true }],
        };
        let roles = find(&nodes);
        assert_eq!(roles[2..6], [Role::Inside(6), Role::Inside(6), Role::Inside(6), Role::Inside(6)]);
        assert_eq!(roles[6], Role::End(Chain { start: 0, links, sides: vec![side], fold: None }));
        assert_eq!(read_at(&roles), [0, 1, 6, 6, 6, 6, 6]);
    }

    #[test]
    fn short_runs_read_once_by_a_link_run_beside_the_chain_up_to_its_limit() {
        // ((|−(y − 2)|·|−x| + y·2) max x·2)·(x + 2) + x·2: |−x| and y·2 run beside the chain;
        // x·2 is read twice, and x + 2 would be a third side.
        let nodes = vec![
            load(F32),                                                   // 0: x
            load(F32),                                                   // 1: y
            node(NodeKind::Constant(Literal::scalar(2.0f32)), F32, &[]), // 2
            unary(UnaryOp::Neg, 0),                                      // 3: −x
            unary(UnaryOp::Abs, 3),                                      // 4: |−x|, a side
            binary(Mul, &[1, 2]),                                        // 5: y·2, a side
            binary(Mul, &[0, 2]),                                        // 6: x·2, read twice
            binary(Sub, &[1, 2]),                                        // 7: the chain's first
            unary(UnaryOp::Neg, 7),                                      // 8
            unary(UnaryOp::Abs, 8),                                      // 9
            binary(Mul, &[9, 4]),                                        // 10
            binary(Add, &[10, 5]),                                       // 11
            binary(BinaryOp::Max, &[11, 6]),                             // 12
            binary(Add, &[0, 2]),                                        // 13: x + 2
            binary(Mul, &[12, 13]),                                      // 14
            binary(Add, &[14, 6]),                                       // 15: the chain's end
        ];
        let link = |op, other| Link::Binary { op, other, running_left: true };
        let links = vec![
            link(ChainOp::Sub, 2),
            Link::Neg,
            Link::Abs,
            link(ChainOp::Mul, 4),
            link(ChainOp::Add, 5),
            link(ChainOp::Max, 6),
            link(ChainOp::Mul, 13),
            link(ChainOp::Add, 6),
        ];
        let sides = vec![
            Side { node: 4, start: 0, links: vec![Link::Neg, Link::Abs] },
            Side { node: 5, start: 1, links: vec![link(ChainOp::Mul, 2)] },
        ];
        let roles = find(&nodes);
        assert_eq!(roles[15], Role::End(Chain { start: 1, links, sides, fold: None }));
        let inside = [3, 4, 5, 7, 8, 9, 10, 11, 12, 14];
        for (k, role) in roles[..15].iter().enumerate() {
            let expected = if inside.contains(&k) { Role::Inside(15) } else { Role::Alone };
            assert_eq!(*role, expected, "node {k}");
        }
        assert_eq!(read_at(&roles), [0, 1, 2, 15, 15, 15, 6, 15, 15, 15, 15, 15, 15, 13, 15, 15]);
    }

    #[test]
    fn only_operands_read_by_links_alone_are_read_by_links_only() {
        // ((x + b) · s − b) · b, then + x: b is read by three links only; s by one; x is the
        // start and read by the last add (which continues the chain): by the chain only.
        let nodes = vec![
            load(F32),                      // 0: x
            load(F32),                      // 1: b
            load(F32),                      // 2: s
            binary(Add, &[0, 1]),           // 3
            binary(Mul, &[3, 2]),           // 4
            binary(BinaryOp::Sub, &[4, 1]), // 5
            binary(Mul, &[5, 1]),           // 6
            binary(Add, &[6, 0]),           // 7: ends the chain
        ];
        let roles = find(&nodes);
        assert!(matches!(&roles[7], Role::End(chain) if chain.start == 0 && chain.links.len() == 5));
        assert_eq!(read_by_links_only(&nodes, &roles), [true, true, true, false, false, false, false, false]);
        // Without chains, nothing is read by links.
        let alone = vec![Role::Alone; nodes.len()];
        assert_eq!(read_by_links_only(&nodes, &alone), [false; 8]);
    }

    #[test]
    fn interleaved_chains_read_their_operands_at_their_own_ends() {
        // |-|-x|| + |-|-y||: two chains side by side; the sum continues the first.
        let (neg, abs) = (UnaryOp::Neg, UnaryOp::Abs);
        let nodes = vec![
            load(F32),                                 // 0: x
            load(F32),                                 // 1: y
            unary(neg, 0),                             // 2
            unary(neg, 1),                             // 3
            unary(abs, 2),                             // 4
            unary(abs, 3),                             // 5
            unary(neg, 4),                             // 6
            unary(neg, 5),                             // 7
            unary(abs, 6),                             // 8
            unary(abs, 7),                             // 9: ends the second chain
            node(NodeKind::Binary(Add), F32, &[8, 9]), // 10: ends the first
        ];
        let roles = find(&nodes);
        let four = vec![Link::Neg, Link::Abs, Link::Neg, Link::Abs];
        let mut five = four.clone();
        five.push(Link::Binary { op: ChainOp::Add, other: 9, running_left: true });
        assert_eq!(roles[10], Role::End(Chain { start: 0, links: five, sides: vec![], fold: None }));
        assert_eq!(roles[9], Role::End(Chain { start: 1, links: four, sides: vec![], fold: None }));
        assert_eq!(read_at(&roles), [0, 1, 10, 9, 10, 9, 10, 9, 10, 9, 10]);
    }

    #[test]
    fn other_ops_values_uniform_along_the_row_and_short_runs_end_chains() {
        // sin(x·2), then ·2, negated, abs, plus a row reduction's (r + 2)·2: neither sin nor
        // the uniform nodes are links, and x·2 alone is too short a run.
        let nodes = vec![
            load(F32),                                                   // 0: x
            node(NodeKind::Constant(Literal::scalar(2.0f32)), F32, &[]), // 1
            node(NodeKind::Binary(Mul), F32, &[0, 1]),                   // 2: x·2
            node(NodeKind::Unary(UnaryOp::Sin), F32, &[2]),              // 3
            node(NodeKind::Binary(Mul), F32, &[3, 1]),                   // 4: ·2
            node(NodeKind::Unary(UnaryOp::Neg), F32, &[4]),              // 5
            node(NodeKind::Unary(UnaryOp::Abs), F32, &[5]),              // 6
            node(NodeKind::Reduce(Add), F32, &[0, 1]),                   // 7: r
            node(NodeKind::Binary(Add), F32, &[7, 1]),                   // 8: r + 2
            node(NodeKind::Binary(Mul), F32, &[8, 1]),                   // 9: ·2
            node(NodeKind::Binary(Add), F32, &[6, 9]),                   // 10
        ];
        let links = vec![
            Link::Binary { op: ChainOp::Mul, other: 1, running_left: true },
            Link::Neg,
            Link::Abs,
            Link::Binary { op: ChainOp::Add, other: 9, running_left: true },
        ];
        let roles = find(&nodes);
        let inside = |k: usize| (4..7).contains(&k);
        let expected = |k: usize| if inside(k) { Role::Inside(10) } else { Role::Alone };
        assert!(roles[..10].iter().enumerate().all(|(k, role)| *role == expected(k)), "{roles:?}");
        assert_eq!(roles[10], Role::End(Chain { start: 3, links, sides: vec![], fold: None }));
    }

    #[test]
    fn two_links_are_a_chain_through_a_function_too_and_a_short_run_a_link_reads_is_a_side() {
        // sin(x·3 + 3) and exp(· − 3): a chain of two cheap links, sin alone, then a chain of
        // two links through exp. Then |−(x − 3)|·3·|−(y·3)| + 3, whose three-link run from y
        // would be a chain of its own were it not read by a link of a later chain: it is that
        // chain's side.
        let nodes = vec![
            load(F32),                                                   // 0: x
            node(NodeKind::Constant(Literal::scalar(3.0f32)), F32, &[]), // 1
            binary(Mul, &[0, 1]),                                        // 2: x·3
            binary(Add, &[2, 1]),                                        // 3: + 3, read by sin
            unary(UnaryOp::Sin, 3),                                      // 4
            binary(Sub, &[4, 1]),                                        // 5
            unary(UnaryOp::Exp, 5),                                      // 6
            load(F32),                                                   // 7: y
            binary(Mul, &[7, 1]),                                        // 8: y·3
            unary(UnaryOp::Neg, 8),                                      // 9
            unary(UnaryOp::Abs, 9),                                      // 10: the side
            binary(Sub, &[0, 1]),                                        // 11: the chain's first
            unary(UnaryOp::Neg, 11),                                     // 12
            unary(UnaryOp::Abs, 12),                                     // 13
            binary(Mul, &[13, 1]),                                       // 14
            binary(Mul, &[14, 10]),                                      // 15
            binary(Add, &[15, 1]),                                       // 16: the chain's end
        ];
        let link = |op, other| Link::Binary { op, other, running_left: true };
        let roles = find(&nodes);
        let short = Chain {
            start: 0,
            links: vec![link(ChainOp::Mul, 1), link(ChainOp::Add, 1)],
            sides: vec![],
            fold: None,
        };
        assert_eq!(roles[2..4], [Role::Inside(3), Role::End(short)]);
        let through_exp = Chain {
            start: 4,
            links: vec![link(ChainOp::Sub, 1), Link::Function(ChainFunction::Exp)],
            sides: vec![],
            fold: None,
        };
        assert_eq!(roles[5..7], [Role::Inside(6), Role::End(through_exp)]);
        assert!([0, 1, 4, 7].iter().all(|&k| roles[k] == Role::Alone), "{roles:?}");
        let side = Side { node: 10, start: 7, links: vec![link(ChainOp::Mul, 1), Link::Neg, Link::Abs] };
        let links = vec![
            link(ChainOp::Sub, 1),
            Link::Neg,
            Link::Abs,
            link(ChainOp::Mul, 1),
            link(ChainOp::Mul, 10),
            link(ChainOp::Add, 1),
        ];
        assert!(roles[8..16].iter().all(|role| *role == Role::Inside(16)), "{roles:?}");
        assert_eq!(roles[16], Role::End(Chain { start: 0, links, sides: vec![side], fold: None }));
    }

    #[test]
    fn exp_log_tanh_and_logistic_are_links() {
        // logistic(log(tanh(exp(x)·2))): one chain of five links from x.
        let nodes = vec![
            load(F32),                                                   // 0: x
            node(NodeKind::Constant(Literal::scalar(2.0f32)), F32, &[]), // 1
            node(NodeKind::Unary(UnaryOp::Exp), F32, &[0]),              // 2
            node(NodeKind::Binary(Mul), F32, &[2, 1]),                   // 3
            node(NodeKind::Unary(UnaryOp::Tanh), F32, &[3]),             // 4
            node(NodeKind::Unary(UnaryOp::Log), F32, &[4]),              // 5
            node(NodeKind::Unary(UnaryOp::Logistic), F32, &[5]),         // 6
        ];
        let links = vec![
            Link::Function(ChainFunction::Exp),
            Link::Binary { op: ChainOp::Mul, other: 1, running_left: true },
            Link::Function(ChainFunction::Tanh),
            Link::Function(ChainFunction::Log),
            Link::Function(ChainFunction::Logistic),
        ];
        let roles = find(&nodes);
        assert!((2..6).all(|k| roles[k] == Role::Inside(6)), "{roles:?}");
        assert_eq!(roles[6], Role::End(Chain { start: 0, links, sides: vec![], fold: None }));
    }

    #[test]
    fn other_types_and_lone_nodes_are_never_chained() {
        let nodes = vec![
            load(S32),
            node(NodeKind::Unary(UnaryOp::Neg), S32, &[0]),
            node(NodeKind::Unary(UnaryOp::Abs), S32, &[1]),
            node(NodeKind::Convert, F32, &[2]),
            node(NodeKind::Unary(UnaryOp::Neg), F32, &[3]),
        ];
        assert!(find(&nodes).iter().all(|role| *role == Role::Alone));
    }

    #[test]
    fn a_chain_folds_the_first_row_sum_of_its_values_but_not_a_maximum_nor_the_result() {
        // Softmax: m = max(x), e = exp(x − m), s = Σ e (folded by e's chain), e / s. Then
        // Σ (e / s) is the result: not folded, nor is the maximum of e.
        let add_reduce = |operands: &[usize]| node(NodeKind::Reduce(Add), F32, operands);
        let nodes = vec![
            load(F32),                                                                // 0: x
            node(NodeKind::Constant(Literal::scalar(f32::NEG_INFINITY)), F32, &[]),   // 1
            node(NodeKind::Reduce(BinaryOp::Max), F32, &[0, 1]),                      // 2: m
            binary(Sub, &[0, 2]),                                                     // 3
            unary(UnaryOp::Exp, 3),                                                   // 4: e
            node(NodeKind::Reduce(BinaryOp::Max), F32, &[4, 1]),                      // 5
            node(NodeKind::Load { input: 1, offset: 0, strides: vec![0] }, F32, &[]), // 6: 0
            add_reduce(&[4, 6]),                                                      // 7: s
            add_reduce(&[4, 6]),                                                      // 8
            binary(BinaryOp::Div, &[4, 7]),                                           // 9
            binary(Add, &[9, 5]),                                                     // 10
            binary(Add, &[10, 8]),                                                    // 11
            add_reduce(&[11, 6]),                                                     // 12
        ];
        let roles = find(&nodes);
        let Role::End(chain) = &roles[4] else { panic!("{roles:?}") };
        assert_eq!(chain.fold, Some(Fold { node: 7, index: 0 }));
        assert_eq!(roles[7], Role::Folded(4));
        assert!([2, 5, 8].iter().all(|&k| roles[k] == Role::Alone), "{roles:?}");
        let Role::End(chain) = &roles[11] else { panic!("{roles:?}") };
        assert_eq!(chain.fold, None, "the result is not folded");
        assert_eq!(read_at(&roles)[7], 7, "its operands stay read where it is");
    }
}
