//! Pictures: a computation as a Graphviz `digraph`, one node per instruction (name, opcode,
//! shape), an edge from each operand to its user, parameters and constants shaded, the root
//! outlined twice, and each fusion a coloured cluster holding its fused instructions (its
//! parameters are the edges that enter the cluster).

use std::fmt::Write;

use crate::hlo::ir::{HloComputation, Instruction, InstructionId, Opcode};

/// Cluster fill colours, one per fusion in turn (light, so black text reads on them).
const PALETTE: &[&str] =
    &["#fde2b3", "#c9e7f5", "#d5f0c4", "#f6cfe0", "#e3d7f4", "#fff3b0", "#cdeee9", "#f9d6c4"];

/// The computation as Graphviz's `dot` language.
pub(crate) fn computation_dot(computation: &HloComputation) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph {} {{", quote(&computation.name));
    out.push_str("  rankdir=TB;\n");
    out.push_str("  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"monospace\", fontsize=10];\n");
    out.push_str("  edge [color=\"#555555\"];\n");
    let mut fusions = 0;
    for (id, instruction) in computation.instructions.iter().enumerate() {
        let root = id == computation.root;
        let Opcode::Fusion { kind, computation: fused } = &instruction.opcode else {
            node(&mut out, "  ", &format!("n{id}"), instruction, root);
            for &operand in &instruction.operands {
                edge(&mut out, "  ", &source(computation, operand), &format!("n{id}"));
            }
            continue;
        };
        let colour = PALETTE[fusions % PALETTE.len()];
        fusions += 1;
        let _ = writeln!(out, "  subgraph cluster_{id} {{");
        let label = format!("{} ({kind}, {} instructions)", instruction.name, fused.instructions.len());
        let _ = writeln!(
            out,
            "    label={}; style=\"rounded,filled\"; fillcolor=\"{colour}\"; color=\"#888888\";",
            quote(&label)
        );
        for (inner_id, inner) in fused.instructions.iter().enumerate() {
            if matches!(inner.opcode, Opcode::Parameter { .. }) {
                continue;
            }
            let name = format!("f{id}_{inner_id}");
            node(&mut out, "    ", &name, inner, root && inner_id == fused.root);
            for &operand in &inner.operands {
                let from = match fused.instructions[operand].opcode {
                    Opcode::Parameter { number } => {
                        instruction.operands.get(number as usize).map(|&outer| source(computation, outer))
                    }
                    _ => Some(format!("f{id}_{operand}")),
                };
                if let Some(from) = from {
                    edge(&mut out, "    ", &from, &name);
                }
            }
        }
        out.push_str("  }\n");
    }
    out.push_str("}\n");
    out
}

/// The node that holds instruction `id`'s value: itself, or a fusion's root.
fn source(computation: &HloComputation, id: InstructionId) -> String {
    match &computation.instructions[id].opcode {
        Opcode::Fusion { computation: fused, .. }
            if !matches!(fused.instructions[fused.root].opcode, Opcode::Parameter { .. }) =>
        {
            format!("f{id}_{}", fused.root)
        }
        _ => format!("n{id}"),
    }
}

fn node(out: &mut String, indent: &str, name: &str, instruction: &Instruction, root: bool) {
    let fill = match instruction.opcode {
        Opcode::Parameter { .. } => "#dddddd",
        Opcode::Constant(_) => "#eeeeee",
        _ => "white",
    };
    let label =
        format!("{}\n{} {}", instruction.name, instruction.opcode.name(), instruction.shape.human_string());
    let peripheries = if root { ", peripheries=2" } else { "" };
    let _ = writeln!(out, "{indent}{name} [label={}, fillcolor=\"{fill}\"{peripheries}];", quote(&label));
}

fn edge(out: &mut String, indent: &str, from: &str, to: &str) {
    let _ = writeln!(out, "{indent}{from} -> {to};");
}

/// A Graphviz string: quoted, with quotes and backslashes escaped and newlines as `\n`.
fn quote(text: &str) -> String {
    let escaped = text.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n");
    format!("\"{escaped}\"")
}
