//! Window ops: `reduce_window` and `select_and_scatter`, with XLA's window arithmetic: the base
//! dilated (`(n − 1)·base_dilation + 1`) and padded, the window dilated likewise, one window
//! per stride that fits; `Padding::Same` pads as XLA's `MakePadding` (output `⌈n / stride⌉`,
//! the padding needed split low-first), `Valid` not at all. Padding and the holes of a dilated
//! base are never reduced nor selected: a window of nothing but them gives the init value.
//!
//! select_and_scatter walks each window in row-major order, keeping the first element and
//! replacing it with each next one the selection does not keep it over, as XLA's evaluator
//! does; where an inexact value makes a selection unknown, every element of that window is
//! unknown. The sources scattered to one element are summed in any order.

use crate::common::recipe::computations::Reducer;
use crate::common::recipe::{Window, WindowPadding};
use crate::common::reference::indices;
use crate::common::reference::reduction::fold;
use crate::common::semantics::{self, CompareKind};
use crate::common::values::{Array, Elem};
use lazy_xla::Padding;

/// One dimension of a window, every attribute explicit.
struct Dimension {
    size: i64,
    stride: i64,
    low: i64,
    high: i64,
    base_dilation: i64,
    window_dilation: i64,
}

impl Dimension {
    /// The base dimension `n`, dilated.
    fn dilated_base(&self, n: i64) -> i64 {
        if n == 0 {
            0
        } else {
            (n - 1) * self.base_dilation + 1
        }
    }

    /// The number of windows over a base dimension of `n`.
    fn outputs(&self, n: i64) -> i64 {
        let padded = self.dilated_base(n) + self.low + self.high;
        let window = (self.size - 1) * self.window_dilation + 1;
        if window > padded {
            0
        } else {
            (padded - window) / self.stride + 1
        }
    }

    /// The base index that position `k` of window `o` reads over a base of `n`, if it reads
    /// one (not padding nor a hole).
    fn source(&self, n: i64, o: i64, k: i64) -> Option<i64> {
        let p = o * self.stride + k * self.window_dilation - self.low;
        (p >= 0 && p < self.dilated_base(n) && p % self.base_dilation == 0).then(|| p / self.base_dilation)
    }
}

/// The `(low, high)` padding XLA's `MakePadding` gives a base dimension of `n` for a window of
/// `size` and `stride`: none for `Valid`; for `Same`, what makes `⌈n / stride⌉` windows fit,
/// split low-first.
pub fn enum_padding(padding: Padding, n: i64, size: i64, stride: i64) -> (i64, i64) {
    match padding {
        Padding::Valid => (0, 0),
        Padding::Same => {
            let outputs = (n + stride - 1) / stride;
            let needed = ((outputs - 1) * stride + size - n).max(0);
            (needed / 2, needed - needed / 2)
        }
    }
}

/// The window's dimensions over an operand of `dims`.
fn dimensions(window: &Window, dims: &[i64]) -> Vec<Dimension> {
    let or = |list: &[i64], d: usize| list.get(d).copied().unwrap_or(1);
    (0..dims.len())
        .map(|d| {
            let (size, stride) = (window.dimensions[d], or(&window.strides, d));
            let (low, high, base_dilation, window_dilation) = match &window.padding {
                WindowPadding::Enum(padding) => {
                    let (low, high) = enum_padding(*padding, dims[d], size, stride);
                    (low, high, 1, 1)
                }
                WindowPadding::General { padding, base_dilations, window_dilations } => {
                    let (low, high) = padding.get(d).copied().unwrap_or((0, 0));
                    (low, high, or(base_dilations, d), or(window_dilations, d))
                }
            };
            Dimension { size, stride, low, high, base_dilation, window_dilation }
        })
        .collect()
}

/// The operand indices window `out` reads, in row-major window order.
fn window_elements(window: &[Dimension], dims: &[i64], out: &[i64]) -> Vec<Vec<i64>> {
    let sizes: Vec<i64> = window.iter().map(|d| d.size).collect();
    indices(&sizes)
        .into_iter()
        .filter_map(|k| (0..dims.len()).map(|d| window[d].source(dims[d], out[d], k[d])).collect())
        .collect()
}

/// The dimensions of the windows' results over an operand of `dims` (a reduce_window's result,
/// a select_and_scatter's source).
pub fn window_output_dims(window: &Window, dims: &[i64]) -> Vec<i64> {
    dimensions(window, dims).iter().zip(dims).map(|(d, &n)| d.outputs(n)).collect()
}

/// `reduce_window(x, init, reducer, window)`.
pub fn reduce_window(x: &Array, init: Elem, reducer: Reducer, window: &Window) -> Array {
    let resolved = dimensions(window, &x.dims);
    let dims = window_output_dims(window, &x.dims);
    Array::from_fn(x.ty, &dims, |out| {
        let terms: Vec<Elem> = window_elements(&resolved, &x.dims, out).iter().map(|i| x.at(i)).collect();
        fold(reducer, x.ty, init, &terms)
    })
}

/// `select_and_scatter(x, select, window, source, init)` with an `add` scatter.
pub fn select_and_scatter(
    x: &Array,
    select: CompareKind,
    window: &Window,
    source: &Array,
    init: Elem,
) -> Array {
    let resolved = dimensions(window, &x.dims);
    let position = |i: &[i64]| i.iter().zip(&x.dims).fold(0, |acc, (&i, &n)| acc * n + i) as usize;
    let mut received: Vec<Vec<Elem>> = vec![Vec::new(); x.elems.len()];
    let mut uncertain = vec![false; x.elems.len()];
    for (s, out) in indices(&source.dims).iter().enumerate() {
        let candidates = window_elements(&resolved, &x.dims, out);
        let Some(first) = candidates.first() else { continue };
        let mut selected = first;
        let mut decided = true;
        for candidate in &candidates[1..] {
            let keep = semantics::compare(select, x.ty, x.at(selected), x.at(candidate));
            if keep.is_unknown() {
                decided = false;
                break;
            }
            if keep.value.int() == 0 {
                selected = candidate;
            }
        }
        match decided {
            true => received[position(selected)].push(source.elems[s]),
            false => candidates.iter().for_each(|c| uncertain[position(c)] = true),
        }
    }
    let elems = (received.iter().zip(&uncertain))
        .map(|(terms, &uncertain)| match uncertain {
            true => Elem::unknown_of(x.ty),
            false => fold(Reducer::Add, source.ty, init, terms),
        })
        .collect();
    Array { ty: x.ty, dims: x.dims.clone(), elems }
}
