//! Register chains' kernel entry: a chain's value over a chunk computed a block of lanes at a
//! time in vector registers (see `chains.rs` for what a chain is), in the registers of the
//! widest instruction set the CPU has.

#[cfg(target_arch = "x86_64")]
mod functions;
#[cfg(target_arch = "x86_64")]
mod kernel;
#[cfg(target_arch = "x86_64")]
mod vector;

use super::chain::Chain;
use super::chunk::{ChainOperands, RowFold};
use super::isa::{level, Level};
use super::prefetch::Ahead;
#[cfg(target_arch = "x86_64")]
use kernel::Compiled;
#[cfg(target_arch = "x86_64")]
use vector::{Avx2, Avx512};

/// The lanes [`chain`] computes at once; `None` where this CPU computes no chains (without
/// AVX2 and FMA: a chain's nodes are then evaluated one by one).
pub(super) fn lanes() -> Option<usize> {
    match level() {
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => Some(vector::AVX512_LANES),
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => Some(vector::AVX2_LANES),
        Level::Baseline => None,
    }
}

/// A chain's value over the chunk (see `chains.rs`): its start (`operands`' values of that
/// node) taken through every link in order, a block of [`lanes`] lanes at a time, each
/// block kept in vector registers from the first link to the last, each side run's block
/// computed before it. The chunk is rows of `row_len`; it needs `out.len()` of at least a
/// block unless every operand is a splat, and rows of whole blocks if an operand (the start
/// among them) is of a row form. Returns whether the result is a splat, or `None` where this
/// CPU computes no chains (or no such sides). With `fold`, the chain also sums each piece of
/// each row of its values, unless they are a splat (then `fold` is left as it was); its rows
/// must then be whole blocks. With `ahead`, it asks for the lines that far past each block of
/// its start's values as it reads them (see `prefetch.rs`).
pub(super) fn chain(
    chain: &Chain,
    operands: &impl ChainOperands<f32>,
    out: &mut [f32],
    row_len: usize,
    fold: Option<RowFold<'_>>,
    ahead: Option<Ahead>,
) -> Option<bool> {
    match level() {
        // SAFETY: `level()` found the CPU supports AVX-512 and FMA.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { <Avx512 as Compiled>::chain(chain, operands, out, row_len, fold, ahead) },
        // SAFETY: `level()` found the CPU supports AVX2 and FMA.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { <Avx2 as Compiled>::chain(chain, operands, out, row_len, fold, ahead) },
        Level::Baseline => {
            let _ = (chain, operands, out, row_len, fold, ahead);
            None
        }
    }
}
