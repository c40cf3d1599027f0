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
