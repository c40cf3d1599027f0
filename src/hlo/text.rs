//! HLO text: the `HloModule` syntax that XLA's parser reads.

use std::fmt::Write;
use std::sync::Arc;

use crate::attributes::{UnaryOp, Window};
use crate::element_type::ElementType;
use crate::hlo::ir::{HloComputation, Instruction, InstructionId, Opcode};
use crate::literal::display::values_text;
use crate::shape::layout::join;
use crate::shape::shape::tuple_text;
use crate::shape::Shape;

/// The whole module as jaxlib 0.6.0's `as_hlo_text()` prints it: a header with the entry
/// computation's layout, every called computation (callees first), then the `ENTRY`
/// computation; instructions in XLA's post order, named as the builder named them. A fused
/// computation lists its parameters first, in number order, as XLA's fusion dumps do.
pub(crate) fn module_text(entry: &Arc<HloComputation>) -> String {
    let mut body = String::new();
    let fused = entry.fused_computations();
    let mut callees = Vec::new();
    called_in_post_order(entry, &mut callees);
    for callee in callees {
        let parameters_first = fused.iter().any(|f| Arc::ptr_eq(f, &callee));
        computation_text(&mut body, &callee, "", parameters_first);
    }
    computation_text(&mut body, entry, "ENTRY ", false);
    // The parameter list prints as a tuple does, `/*index=5*/` comments included.
    let parameters = tuple_text(&entry.parameters(), |p| hlo_shape(&p.shape));
    format!(
        "HloModule {}, entry_computation_layout={{{parameters}->{}}}\n\n{body}",
        entry.name,
        hlo_shape(entry.result_shape())
    )
}

/// The computations `computation` calls, each once, callees first, found in the order its
/// instructions print (so the text does not depend on the order they were made in: an
/// imported module prints as it was read).
fn called_in_post_order(computation: &HloComputation, found: &mut Vec<Arc<HloComputation>>) {
    let mut visited = vec![false; computation.instructions.len()];
    let mut order = Vec::with_capacity(computation.instructions.len());
    post_order(computation, &mut visited, &mut order);
    for id in order {
        for called in computation.instructions[id].opcode.called_computations() {
            if !found.iter().any(|known| Arc::ptr_eq(known, called)) {
                called_in_post_order(called, found);
                found.push(called.clone());
            }
        }
    }
}

/// Appends one computation: `name {`, one line per instruction, `}` and a blank line.
fn computation_text(out: &mut String, computation: &HloComputation, prefix: &str, parameters_first: bool) {
    let _ = writeln!(out, "{prefix}{} {{", computation.name);
    let mut visited = vec![false; computation.instructions.len()];
    let mut order = Vec::with_capacity(computation.instructions.len());
    if parameters_first {
        for parameter in computation.parameter_ids() {
            visited[parameter] = true;
            order.push(parameter);
        }
    }
    post_order(computation, &mut visited, &mut order);
    for id in order {
        let _ = writeln!(out, "  {}", instruction_text(computation, id));
    }
    out.push_str("}\n\n");
}

/// One instruction's line as HLO text prints it (without indentation):
/// `ROOT name = shape opcode(operands), attributes`.
pub(crate) fn instruction_text(computation: &HloComputation, id: InstructionId) -> String {
    let instruction = &computation.instructions[id];
    let root = if id == computation.root { "ROOT " } else { "" };
    let operands: Vec<&str> = instruction
        .operands
        .iter()
        .map(|&o| computation.instructions.get(o).map_or("<missing>", |i| i.name.as_str()))
        .collect();
    format!(
        "{root}{} = {} {}",
        instruction.name,
        hlo_shape(&instruction.shape),
        instruction_body(instruction, &operands, predicated(computation, instruction))
    )
}

/// XLA's `MakeInstructionPostOrder`: for each instruction without users, in creation order,
/// its operands depth-first (in operand order), then itself; appended to `order`, skipping
/// what is already `visited`.
fn post_order(computation: &HloComputation, visited: &mut [bool], order: &mut Vec<InstructionId>) {
    let count = computation.instructions.len();
    let mut has_users = vec![false; count];
    for instruction in &computation.instructions {
        for &operand in instruction.operands.iter().filter(|&&o| o < count) {
            has_users[operand] = true;
        }
    }
    for start in (0..count).filter(|&i| !has_users[i]) {
        // An explicit stack: (instruction, operands already pushed).
        let mut stack = vec![(start, false)];
        while let Some((id, expanded)) = stack.pop() {
            if visited[id] {
                continue;
            }
            if expanded {
                visited[id] = true;
                order.push(id);
            } else {
                stack.push((id, true));
                for &operand in computation.instructions[id].operands.iter().rev() {
                    if operand < count && !visited[operand] {
                        stack.push((operand, false));
                    }
                }
            }
        }
    }
}

/// Whether `instruction` is a conditional whose branch is chosen by a `pred` (printed with
/// `true_computation` and `false_computation`, as XLA prints it).
fn predicated(computation: &HloComputation, instruction: &Instruction) -> bool {
    let selector = instruction.operands.first().and_then(|&o| computation.instructions.get(o));
    matches!(instruction.opcode, Opcode::Conditional { .. })
        && selector.is_some_and(|s| s.shape.is_scalar() && s.shape.element_type() == ElementType::Pred)
}

/// `opcode(operands), attributes`.
fn instruction_body(instruction: &Instruction, operands: &[&str], predicated: bool) -> String {
    let operands = operands.join(", ");
    let opcode = instruction.opcode.name();
    let attributes = match &instruction.opcode {
        Opcode::Parameter { number } => return format!("parameter({number})"),
        Opcode::Constant(literal) => return format!("constant({})", values_text(literal, " ")),
        Opcode::Iota { dimension } => format!("iota_dimension={dimension}"),
        Opcode::Compare(direction) => format!("direction={direction}"),
        Opcode::Broadcast { dimensions } => format!("dimensions={{{}}}", join(dimensions)),
        Opcode::Transpose { permutation } => format!("dimensions={{{}}}", join(permutation)),
        Opcode::Reverse { dimensions } => format!("dimensions={{{}}}", join(dimensions)),
        Opcode::Concatenate { dimension } => format!("dimensions={{{dimension}}}"),
        Opcode::GetTupleElement { index } => format!("index={index}"),
        Opcode::Slice { starts, limits, strides } => {
            let strided = strides.iter().any(|&s| s != 1);
            let bounds: Vec<String> = (0..starts.len())
                .map(|d| match strided {
                    false => format!("[{}:{}]", starts[d], limits[d]),
                    true => format!("[{}:{}:{}]", starts[d], limits[d], strides[d]),
                })
                .collect();
            format!("slice={{{}}}", bounds.join(", "))
        }
        Opcode::Pad(config) => return format!("{opcode}({operands}), padding={config}"),
        Opcode::Fusion { kind, computation } => format!("kind={kind}, calls={}", computation.name),
        Opcode::Reduce { dimensions, reducer } => {
            format!("dimensions={{{}}}, to_apply={}", join(dimensions), reducer.name)
        }
        Opcode::Map { dimensions, computation } => {
            format!("dimensions={{{}}}, to_apply={}", join(dimensions), computation.name)
        }
        Opcode::Call { computation } => format!("to_apply={}", computation.name),
        Opcode::Sort { dimension, is_stable, comparator } => {
            let stable = if *is_stable { ", is_stable=true" } else { "" };
            format!("dimensions={{{dimension}}}{stable}, to_apply={}", comparator.name)
        }
        Opcode::TopK { k, largest } => format!("k={k}, largest={largest}"),
        Opcode::RngBitGenerator { algorithm } => format!("algorithm={}", algorithm.hlo_name()),
        Opcode::While { condition, body } => format!("condition={}, body={}", condition.name, body.name),
        Opcode::Conditional { branches } => match (predicated, &branches[..]) {
            (true, [on_true, on_false]) => {
                format!("true_computation={}, false_computation={}", on_true.name, on_false.name)
            }
            _ => {
                let names: Vec<&str> = branches.iter().map(|b| b.name.as_str()).collect();
                format!("branch_computations={{{}}}", names.join(", "))
            }
        },
        Opcode::Dot { numbers, precision } => {
            let mut parts = Vec::new();
            for (label, dims) in [
                ("lhs_batch_dims", &numbers.lhs_batch_dimensions),
                ("lhs_contracting_dims", &numbers.lhs_contracting_dimensions),
                ("rhs_batch_dims", &numbers.rhs_batch_dimensions),
                ("rhs_contracting_dims", &numbers.rhs_contracting_dimensions),
            ] {
                if !dims.is_empty() || label.contains("contracting") {
                    parts.push(format!("{label}={{{}}}", join(dims)));
                }
            }
            parts.extend(precision.hlo_attribute());
            parts.join(", ")
        }
        Opcode::Unary(UnaryOp::ReducePrecision { exponent_bits, mantissa_bits }) => {
            format!("exponent_bits={exponent_bits}, mantissa_bits={mantissa_bits}")
        }
        Opcode::Gather { numbers, slice_sizes, indices_are_sorted } => {
            let sorted = if *indices_are_sorted { ", indices_are_sorted=true" } else { "" };
            format!("{}, slice_sizes={{{}}}{sorted}", numbers.hlo_text(), join(slice_sizes))
        }
        Opcode::Scatter { numbers, indices_are_sorted, unique_indices, update } => {
            let sorted = if *indices_are_sorted { ", indices_are_sorted=true" } else { "" };
            let unique = if *unique_indices { ", unique_indices=true" } else { "" };
            format!("{}{sorted}{unique}, to_apply={}", numbers.hlo_text(), update.name)
        }
        Opcode::DynamicSlice { slice_sizes } => format!("dynamic_slice_sizes={{{}}}", join(slice_sizes)),
        Opcode::ReduceWindow { window, reducer } => {
            with_window(window, vec![format!("to_apply={}", reducer.name)])
        }
        Opcode::SelectAndScatter { window, select, scatter } => {
            with_window(window, vec![format!("select={}", select.name), format!("scatter={}", scatter.name)])
        }
        Opcode::Convolution { window, numbers, feature_group_count, batch_group_count, precision } => {
            let mut parts = vec![format!("dim_labels={}", numbers.dim_labels())];
            if *feature_group_count != 1 {
                parts.push(format!("feature_group_count={feature_group_count}"));
            }
            if *batch_group_count != 1 {
                parts.push(format!("batch_group_count={batch_group_count}"));
            }
            parts.extend(precision.hlo_attribute());
            with_window(window, parts)
        }
        Opcode::Unary(_)
        | Opcode::DynamicUpdateSlice
        | Opcode::Binary(_)
        | Opcode::Select
        | Opcode::Clamp
        | Opcode::Convert
        | Opcode::Reshape
        | Opcode::BitcastConvert
        | Opcode::Tuple => String::new(),
    };
    if attributes.is_empty() {
        format!("{opcode}({operands})")
    } else {
        format!("{opcode}({operands}), {attributes}")
    }
}

/// `window={…}` (left out for a window of no dimensions, as XLA does) before `rest`, joined.
fn with_window(window: &Window, rest: Vec<String>) -> String {
    let window = (!window.dimensions.is_empty()).then(|| format!("window={{{window}}}"));
    window.into_iter().chain(rest).collect::<Vec<_>>().join(", ")
}

/// A shape as HLO text writes it: XLA's notation, without lazy-xla's padding extension
/// (XLA's parser has no padding; the executor honours it, the text does not show it).
fn hlo_shape(shape: &Shape) -> String {
    if shape.is_tuple() {
        tuple_text(shape.tuple_shapes(), hlo_shape)
    } else if shape.layout().padded_dimensions().is_some() {
        shape
            .relayout(&shape.layout().without_padding())
            .map_or_else(|_| shape.to_string(), |s| s.to_string())
    } else {
        shape.to_string()
    }
}
