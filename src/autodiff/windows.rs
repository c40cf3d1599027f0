//! `reduce_window` with an add, max or min reducer: the padded (and base-dilated) operand read
//! at each offset of the window is a strided slice of the output's shape, so the tangent of a
//! sum is the sum of the tangent's slices, and that of a max or min the tangent's slice at the
//! first offset where the operand equals the result (what `select_and_scatter` with `ge`
//! gives jax's max pooling). Both are made of pads, slices, sums and selects, whose transposes
//! `movement.rs` and `elementwise.rs` have.

use crate::attributes::{BinaryOp, PaddingConfig, Window};
use crate::autodiff::elementwise::{choose, sum};
use crate::autodiff::movement::moved;
use crate::autodiff::tape::{Tan, Tape};
use crate::builder::{eq, pad, slice, XlaOp};
use crate::error::Result;
use crate::hlo::ir::Opcode;
use crate::shape::Shape;

/// The tangent of `y = reduce_window(x, init)` by the reducer `op`.
#[allow(clippy::too_many_arguments)]
pub(super) fn reduce_window<'b>(
    tape: &mut Tape<'b>,
    op: Option<BinaryOp>,
    window: &Window,
    x: [XlaOp<'b>; 2],
    y: XlaOp<'b>,
    t: [&Tan; 2],
    operand: &Shape,
    shape: &Shape,
) -> Result<Tan> {
    if t[1].array().is_some() {
        return Err(tape.not_implemented("reduce-window", " for an init value with a tangent"));
    }
    if !matches!(op, Some(BinaryOp::Add | BinaryOp::Max | BinaryOp::Min)) {
        return Err(tape.not_implemented("reduce-window", " for a reducer other than add, max or min"));
    }
    let Some(tangent) = t[0].array() else { return Ok(Tan::Zero) };
    let config = PaddingConfig::new(
        &window
            .dimensions
            .iter()
            .map(|d| (d.padding_low, d.padding_high, d.base_dilation - 1))
            .collect::<Vec<_>>(),
    );
    let padded_dimensions: Vec<i64> = window
        .dimensions
        .iter()
        .zip(operand.dimensions())
        .map(|(d, &n)| {
            d.padding_low + d.padding_high + if n == 0 { 0 } else { (n - 1) * d.base_dilation + 1 }
        })
        .collect();
    let padded = Shape::new(operand.element_type(), &padded_dimensions);
    let scalar = Shape::scalar(operand.element_type());
    let padded_tangent = moved(
        tape,
        &Opcode::Pad(config.clone()),
        &[x[0], x[1]],
        &[operand.clone(), scalar],
        &[Tan::Array(tangent), Tan::Zero],
        &padded,
    )?;
    let padded_operand = (op != Some(BinaryOp::Add)).then(|| pad(x[0], x[1], &config));
    // Every offset of the window, the first dimension slowest.
    let sizes: Vec<i64> = window.dimensions.iter().map(|d| d.size).collect();
    let mut offsets: Vec<Vec<i64>> = vec![Vec::new()];
    for &size in &sizes {
        offsets =
            offsets.into_iter().flat_map(|o| (0..size).map(move |k| [o.clone(), vec![k]].concat())).collect();
    }
    let mut total = Tan::Zero;
    for offset in offsets.iter().rev() {
        let (mut starts, mut limits, mut strides) = (Vec::new(), Vec::new(), Vec::new());
        for ((d, &k), &out) in window.dimensions.iter().zip(offset).zip(shape.dimensions()) {
            let start = k * d.window_dilation;
            starts.push(start);
            limits.push(if out == 0 { start } else { start + (out - 1) * d.stride + 1 });
            strides.push(d.stride);
        }
        let opcode =
            Opcode::Slice { starts: starts.clone(), limits: limits.clone(), strides: strides.clone() };
        let part = moved(
            tape,
            &opcode,
            &[y],
            std::slice::from_ref(&padded),
            std::slice::from_ref(&padded_tangent),
            shape,
        )?;
        total = match padded_operand {
            None => sum(tape, &total, &part, false, shape),
            Some(padded_operand) => {
                let at = eq(slice(padded_operand, &starts, &limits, &strides), y, &[]);
                choose(tape, at, part.array(), total.array(), shape)
            }
        };
    }
    Ok(total)
}
