//! Kernels that apply a scalar function element by element: `reduce` with any reducer (any
//! number of operands), and `map`. The function comes compiled ([`ScalarProgram`] or a plan);
//! these kernels only walk the arrays.
//!
//! [`ScalarProgram`]: crate::exec::scalar_program::ScalarProgram

use crate::attributes::BinaryOp;
use crate::error::Result;
use crate::exec::scalar_program::Scalar;
use crate::literal::Literal;
use crate::shape::index::RowMajorOffsets;

/// A scalar function: its results for `arguments`, pushed onto the (cleared) vector given.
pub(crate) type Apply<'f> = &'f mut dyn FnMut(&[Scalar], &mut Vec<Scalar>) -> Result<()>;

/// How a kernel combines an accumulator with a value (a reduce window, a scatter): by a native
/// binary op on typed slices, or by an interpreted scalar function.
pub(crate) enum Combine<'a> {
    Native(BinaryOp),
    Interpreted(Apply<'a>),
}

/// XLA's reduce of `operands` (one set of dimensions) over `dimensions`, each output element
/// folded sequentially from `inits` with `apply(accumulators…, values…)`, the reduced
/// dimensions walked as nested loops in the order listed (the first outermost), as XLA's CPU
/// backend does; results into `outs` (one per operand, of the kept dimensions). Over no
/// dimension the operands come back unchanged.
pub(crate) fn reduce(
    operands: &[&Literal],
    inits: &[&Literal],
    dimensions: &[i64],
    apply: Apply<'_>,
    outs: &mut [&mut Literal],
) -> Result<()> {
    let Some(first) = operands.first() else { return Ok(()) };
    let shape = first.shape();
    let n = operands.len();
    // Every operand has the same dimensions; their layouts (so strides) may differ.
    let strides: Vec<Vec<i64>> = operands.iter().map(|o| o.shape().strides()).collect();
    let kept: Vec<usize> = (0..shape.rank()).filter(|d| !dimensions.contains(&(*d as i64))).collect();
    let pick = |dims: &[usize], s: &[i64]| -> (Vec<i64>, Vec<i64>) {
        (dims.iter().map(|&d| shape.dimensions()[d]).collect(), dims.iter().map(|&d| s[d]).collect())
    };
    let reduced: Vec<usize> = dimensions.iter().map(|&d| d as usize).collect();
    let inner: Vec<Vec<usize>> = strides
        .iter()
        .map(|s| {
            let (sizes, strides) = pick(&reduced, s);
            RowMajorOffsets::new(&sizes, &strides).collect()
        })
        .collect();
    let mut bases: Vec<RowMajorOffsets> = strides
        .iter()
        .map(|s| {
            let (sizes, strides) = pick(&kept, s);
            RowMajorOffsets::new(&sizes, &strides)
        })
        .collect();
    let out_positions: Vec<Vec<usize>> =
        outs.iter().map(|o| o.shape().row_major_offsets().collect()).collect();
    let initial: Vec<Scalar> = inits.iter().map(|i| Scalar::read(i, 0)).collect();
    let (mut arguments, mut results) = (Vec::with_capacity(2 * n), Vec::with_capacity(n));
    for output in 0..out_positions.first().map_or(0, Vec::len) {
        let base: Vec<usize> = bases.iter_mut().map(|b| b.next().unwrap_or(0)).collect();
        let mut accumulators = initial.clone();
        if reduced.is_empty() {
            // XLA returns the operands of a reduce over no dimension unchanged, the inits unused.
            accumulators.clear();
            accumulators.extend(operands.iter().zip(&base).map(|(o, &b)| Scalar::read(o, b)));
        }
        let steps = if reduced.is_empty() { 0 } else { inner.first().map_or(0, Vec::len) };
        for step in 0..steps {
            arguments.clear();
            arguments.extend_from_slice(&accumulators);
            arguments.extend(
                operands.iter().zip(&base).zip(&inner).map(|((o, b), i)| Scalar::read(o, b + i[step])),
            );
            results.clear();
            apply(&arguments, &mut results)?;
            accumulators.clear();
            accumulators.extend_from_slice(&results);
        }
        for ((out, positions), value) in outs.iter_mut().zip(&out_positions).zip(&accumulators) {
            value.store(out, positions[output])?;
        }
    }
    Ok(())
}

/// XLA's map: `out[i] = apply(operands[0][i], operands[1][i], …)` for every element (the
/// operands and `out` of one set of dimensions, any layouts).
pub(crate) fn map(operands: &[&Literal], apply: Apply<'_>, out: &mut Literal) -> Result<()> {
    let positions: Vec<Vec<usize>> =
        operands.iter().map(|o| o.shape().row_major_offsets().collect()).collect();
    let out_positions: Vec<usize> = out.shape().row_major_offsets().collect();
    let (mut arguments, mut results) = (Vec::with_capacity(operands.len()), Vec::with_capacity(1));
    for (element, &position) in out_positions.iter().enumerate() {
        arguments.clear();
        arguments.extend(operands.iter().zip(&positions).map(|(o, p)| Scalar::read(o, p[element])));
        results.clear();
        apply(&arguments, &mut results)?;
        if let Some(value) = results.first() {
            value.store(out, position)?;
        }
    }
    Ok(())
}
