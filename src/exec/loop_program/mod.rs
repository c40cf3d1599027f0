//! Loop programs: a chain of broadcasts, data movement and element-wise ops (one instruction or
//! a whole loop fusion) compiled into one strided loop over the output.
//!
//! Compiling pushes every movement op (broadcast, transpose, reverse, slice, a reshape that
//! only splits dimensions or adds or drops size-1 ones) down to the leaves as an affine *index map* from the
//! output's index space, so each parameter is read through strides and each iota is an affine
//! function of the index: nothing between the inputs and the output is ever materialized.
//! What remains is an expression DAG of element-wise ops ([`nodes::Node`]s), evaluated a
//! cache-resident chunk at a time (see `run.rs`), its runs of cheap `f32` ops in vector
//! registers (see `chains.rs`).
//!
//! A plain loop may also hold *row reductions*: a reduce over one dimension whose result the
//! loop reads broadcast along its row (softmax's max and sum, layer norm's mean). The walk then
//! takes whole rows per chunk (a tile of several when rows are whole blocks of a chain's
//! lanes), so the reduce folds each row's values as they are computed and every element of
//! the row reads the result, one value per row: the reduced operand is read once and never
//! materialized. A row sum of a register chain's values is summed by the chain itself as it
//! stores them (`chain::Fold`), rather than in a pass over them.
//!
//! The files, each importing only those listed before it:
//!
//! - `nodes.rs`, `chunk.rs`, `isa.rs`, `chain.rs`: plain data (the expression's nodes, a work
//!   item's chunk and the operands chunk ops read, the instruction set, what a chain is);
//! - `expression.rs` (HLO to nodes), `chains.rs` (finding chains), `slots.rs` (chunk buffers),
//!   `program.rs` (a [`LoopProgram`] and its compilation);
//! - `chunk_ops.rs` (element-wise ops over a chunk, per instruction set), `prefetch.rs`,
//!   `registers.rs` (the chain kernel: `registers/vector.rs`, `functions.rs`, `kernel.rs`);
//! - `frame.rs` (where each node's values are), `target.rs` (the output), `geometry.rs`
//!   (work items and threads), `evaluate.rs` (one node over a chunk), `item.rs` (one work
//!   item), `run.rs` (a run).

mod chain;
mod chains;
mod chunk;
mod chunk_ops;
mod evaluate;
mod expression;
mod frame;
mod geometry;
mod isa;
mod item;
mod nodes;
mod prefetch;
mod program;
mod registers;
mod run;
mod slots;
mod target;

pub(crate) use program::LoopProgram;
pub(crate) use target::SharedOutput;

/// Copies the `rows × columns` matrix whose element (r, c) is `source[start + r·row_step +
/// c·column_step]` into `out`, row-major, by the loop engine's strided load: contiguous rows
/// copied, a transposed matrix (`row_step` 1) moved in 16×16 tiles through vector registers,
/// any other one gathered. Kernels that need an operand in another order (the register tile,
/// packing a transposed rhs) use it, so every such copy is as fast as a fused loop's.
///
/// # Panics
/// If a read would leave `source` or `out` holds fewer than `rows · columns` elements: the
/// caller checks both.
pub(crate) fn copy_matrix(
    source: &[f32],
    start: usize,
    [row_step, column_step]: [usize; 2],
    [rows, columns]: [usize; 2],
    out: &mut [f32],
) {
    if rows == 0 || columns == 0 {
        return;
    }
    let out = &mut out[..rows * columns];
    let (start, steps) = (start as isize, [row_step as isize, column_step as isize]);
    if chunk_ops::load(source, start, steps, chunk::Chunk { rows, len: columns }, out) {
        // One value (both steps 0): `load` wrote it once.
        let value = out[0];
        out.fill(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every form of matrix [`copy_matrix`] reads, against the definition: rows contiguous,
    /// transposed (whole 16×16 tiles and the rest), strided both ways, one value broadcast
    /// (both steps 0), and no elements at all (which writes nothing).
    #[test]
    fn copy_matrix_reads_every_element_from_its_place() {
        let source: Vec<f32> = (0..4000).map(|i| i as f32 * 0.5 - 7.0).collect();
        for (start, steps, [rows, columns]) in [
            (5, [40, 1], [7, 33]),
            (2, [1, 50], [37, 21]),
            (0, [1, 64], [32, 48]),
            (9, [3, 70], [11, 13]),
            (17, [0, 0], [4, 5]),
            (0, [1, 50], [1, 9]),
            (3, [1, 50], [0, 9]),
        ] {
            let mut out = vec![f32::NAN; rows * columns + 3];
            copy_matrix(&source, start, steps, [rows, columns], &mut out);
            for r in 0..rows {
                for c in 0..columns {
                    let want = source[start + r * steps[0] + c * steps[1]];
                    assert_eq!(out[r * columns + c], want, "({r}, {c}) of {steps:?} from {start}");
                }
            }
            assert!(out[rows * columns..].iter().all(|x| x.is_nan()), "nothing past the matrix");
        }
    }
}
