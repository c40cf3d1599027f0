//! Sorting: `sort` (any number of operands, any comparator) and `top_k`.

use crate::builder::builder::XlaOp;
use crate::hlo::computation::XlaComputation;
use crate::hlo::ir::Opcode;
use crate::shape::Shape;
use crate::shape_inference::sort::{sort_shape, top_k_shape};

/// XLA's `Sort`: `operands` (one set of dimensions) sorted together along `dimension` (`-1`
/// is the last) by `comparator`, which takes two scalars per operand, `(lhs0, rhs0, lhs1,
/// rhs1, …)`, and says whether `lhs` goes before `rhs`. With `is_stable`, equal elements keep
/// their order. One operand gives an array, several a tuple.
///
/// # Panics
/// On an empty `operands` list (it names no builder), like slice indexing.
///
/// ```
/// use lazy_xla::*;
/// let k = XlaBuilder::new("less");
/// let (a, b) = (k.parameter(0, &shape!(f32[]), "a"), k.parameter(1, &shape!(f32[]), "b"));
/// let less = k.build(lt(a, b, &[]))?;
/// let s = XlaBuilder::new("sorted");
/// let x = s.parameter(0, &shape!(f32[4]), "x");
/// let exe = s.build(sort(&[x], &less, -1, true))?.compile(&CompileOptions::default())?;
/// let out = exe.execute(&[&Literal::vec1(&[3.0f32, -1.0, 2.0, 0.5])])?;
/// assert_eq!(out.to_vec::<f32>()?, vec![-1.0, 0.5, 2.0, 3.0]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn sort<'b>(
    operands: &[XlaOp<'b>],
    comparator: &XlaComputation,
    dimension: i64,
    is_stable: bool,
) -> XlaOp<'b> {
    operands[0].builder().record("sort", operands, |emit, operands| {
        let shapes: Vec<&Shape> = operands.iter().map(|o| &o.shape).collect();
        let (result, dimension) = sort_shape(&shapes, &comparator.program_shape(), dimension)?;
        let comparator = emit.embed(&comparator.entry);
        let ids: Vec<_> = operands.iter().map(|o| o.id).collect();
        Ok(emit.emit(Opcode::Sort { dimension, is_stable, comparator }, &ids, result))
    })
}

/// XLA's `TopK`: along the last dimension, the `k` largest elements (`largest`; else the
/// smallest) in XLA's total order (NaN above infinity, -0 below +0), ties to the lower index;
/// a tuple of the values and their `s32` indices.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("best");
/// let x = b.parameter(0, &shape!(f32[5]), "x");
/// let exe = b.build(top_k(x, 2, true))?.compile(&CompileOptions::default())?;
/// let out = exe.execute(&[&Literal::vec1(&[1.0f32, 9.0, 3.0, 9.0, 2.0])])?;
/// assert_eq!(out.tuple_element(0)?.to_vec::<f32>()?, vec![9.0, 9.0]);
/// assert_eq!(out.tuple_element(1)?.to_vec::<i32>()?, vec![1, 3]);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[track_caller]
pub fn top_k(operand: XlaOp<'_>, k: i64, largest: bool) -> XlaOp<'_> {
    operand.builder().record("topk", &[operand], |emit, operands| {
        let result = top_k_shape(&operands[0].shape, k)?;
        Ok(emit.emit(Opcode::TopK { k, largest }, &[operands[0].id], result))
    })
}
