//! Kernels that combine many elements into one: `reduce` and `dot`.

use crate::exec::element::Element;
use crate::exec::strided::View;
use crate::hlo::DotDimensionNumbers;
use crate::shape::element_type::with_native_type;
use crate::shape::index::RowMajorOffsets;
use crate::{Literal, NativeType, Result, Shape};

/// `reduce` of `inputs[0]` over `dimensions` from the scalar `inputs[1]`, with any scalar
/// computation as the reducer (`combine(accumulator, value)`, interpreted per element; simple
/// reducers run as loop programs instead).
pub(crate) fn reduce_interpreted(
    inputs: [&Literal; 2],
    dimensions: &[i64],
    combine: &dyn Fn(&Literal, &Literal) -> Result<Literal>,
    out: &mut Literal,
) -> Result<()> {
    let (operand, init) = (inputs[0], inputs[1]);
    if dimensions.is_empty() {
        // XLA returns the operand unchanged: the init value is not applied.
        return crate::exec::kernels::data_movement::copy_through_view(
            operand,
            View::of(operand.shape()),
            out,
            false,
        );
    }
    let shape = out.shape().clone();
    let strides = operand.shape().strides();
    let (mut kept_sizes, mut kept_strides) = (Vec::new(), Vec::new());
    let (mut reduced_sizes, mut reduced_strides) = (Vec::new(), Vec::new());
    for (d, (&size, &stride)) in operand.shape().dimensions().iter().zip(&strides).enumerate() {
        if dimensions.contains(&(d as i64)) {
            reduced_sizes.push(size);
            reduced_strides.push(stride);
        } else {
            kept_sizes.push(size);
            kept_strides.push(stride);
        }
    }
    let inner: Vec<usize> = RowMajorOffsets::new(&reduced_sizes, &reduced_strides).collect();
    with_native_type!(shape.element_type(), T => {
        let x = operand.memory::<T>()?;
        let start = init.memory::<T>()?[0];
        let out_memory = out.storage_mut().as_mut_slice::<T>()?;
        let bases = RowMajorOffsets::new(&kept_sizes, &kept_strides);
        for (position, base) in shape.row_major_offsets().zip(bases) {
            let mut acc = Literal::scalar(start);
            for &i in &inner {
                acc = combine(&acc, &Literal::scalar(x[base + i]))?;
            }
            out_memory[position] = acc.memory::<T>()?[0];
        }
    });
    Ok(())
}

/// A group of dimensions of one operand of a dot, read as one: its element count and, if the
/// dimensions collapse into one stride, that stride.
struct Group {
    size: usize,
    stride: Option<isize>,
    /// (size, stride) of each dimension, outermost first.
    dims: Vec<(usize, isize)>,
}

impl Group {
    fn new(shape: &Shape, dimensions: &[i64]) -> Group {
        let strides = shape.strides();
        let dims: Vec<(usize, isize)> = dimensions
            .iter()
            .map(|&d| (shape.dimensions()[d as usize] as usize, strides[d as usize] as isize))
            .filter(|&(size, _)| size != 1)
            .collect();
        let size = dimensions.iter().map(|&d| shape.dimensions()[d as usize] as usize).product();
        let collapses = dims.windows(2).all(|w| w[0].1 == w[1].1 * w[1].0 as isize);
        let stride = match dims.last() {
            None => Some(1),
            Some(&(_, innermost)) if collapses => Some(innermost),
            _ => None,
        };
        Group { size, stride, dims }
    }

    /// The offset of flat index `i` of the group (row-major over its dimensions).
    fn offset(&self, mut i: usize) -> isize {
        if let Some(stride) = self.stride {
            return i as isize * stride;
        }
        let mut offset = 0;
        for &(size, stride) in self.dims.iter().rev() {
            offset += (i % size) as isize * stride;
            i /= size;
        }
        offset
    }
}

/// `dot_general`: for each batch index, `out[m, n] = Σ_k lhs[m, k] · rhs[k, n]`, with m, n and
/// k the flattened free and contracting dimension groups. f32 and f64 run on
/// `matrixmultiply` with the operands' own strides (a transposed layout costs no copy)
/// wherever the groups collapse to single strides; everything else runs a plain loop.
pub(crate) fn dot(inputs: [&Literal; 2], numbers: &DotDimensionNumbers, out: &mut Literal) -> Result<()> {
    let (lhs, rhs) = (inputs[0], inputs[1]);
    let free = |shape: &Shape, contracting: &[i64], batch: &[i64]| -> Vec<i64> {
        (0..shape.rank() as i64).filter(|d| !contracting.contains(d) && !batch.contains(d)).collect()
    };
    let lhs_free = free(lhs.shape(), &numbers.lhs_contracting_dimensions, &numbers.lhs_batch_dimensions);
    let rhs_free = free(rhs.shape(), &numbers.rhs_contracting_dimensions, &numbers.rhs_batch_dimensions);
    let (lb, rb) = (
        Group::new(lhs.shape(), &numbers.lhs_batch_dimensions),
        Group::new(rhs.shape(), &numbers.rhs_batch_dimensions),
    );
    let (m, n) = (Group::new(lhs.shape(), &lhs_free), Group::new(rhs.shape(), &rhs_free));
    let (lk, rk) = (
        Group::new(lhs.shape(), &numbers.lhs_contracting_dimensions),
        Group::new(rhs.shape(), &numbers.rhs_contracting_dimensions),
    );
    // The result is made row-major [batch, m, n] and then laid out as the output's layout.
    let row_major = out.shape().with_default_layout();
    let mut result = Literal::zeros(&row_major)?;
    let (batches, rows, columns, depth) = (lb.size, m.size, n.size, lk.size);
    with_native_type!(row_major.element_type(), T => {
        let (a, b) = (lhs.memory::<T>()?, rhs.memory::<T>()?);
        let c = result.storage_mut().as_mut_slice::<T>()?;
        for batch in 0..batches {
            let (a_base, b_base) = (lb.offset(batch), rb.offset(batch));
            let c_batch = &mut c[batch * rows * columns..(batch + 1) * rows * columns];
            if let [Some(am), Some(ak), Some(bk), Some(bn)] = [m.stride, lk.stride, rk.stride, n.stride] {
                if T::gemm((a, a_base, [am, ak]), (b, b_base, [bk, bn]), c_batch, [rows, depth, columns]) {
                    continue;
                }
            }
            for i in 0..rows {
                for j in 0..columns {
                    let mut acc = T::ZERO;
                    for k in 0..depth {
                        let x = a[(a_base + m.offset(i) + lk.offset(k)) as usize];
                        let y = b[(b_base + rk.offset(k) + n.offset(j)) as usize];
                        acc = Element::add(acc, Element::mul(x, y));
                    }
                    c_batch[i * columns + j] = acc;
                }
            }
        }
    });
    let view = View::of(&row_major);
    crate::exec::kernels::data_movement::copy_through_view(&result, view, out, false)
}

/// A matrix product `c = a·b` (c row-major `m×n`, `a` and `b` read through strides from a
/// base offset), on `matrixmultiply` where the element type has a kernel there.
trait MatMul: Element {
    /// Computes the product and returns true, or returns false for the plain loop to do it.
    fn gemm(
        _a: (&[Self], isize, [isize; 2]),
        _b: (&[Self], isize, [isize; 2]),
        _c: &mut [Self],
        _mkn: [usize; 3],
    ) -> bool {
        false
    }
}

macro_rules! matmul_by_loop {
    ($($t:ty),*) => {$( impl MatMul for $t {} )*};
}
matmul_by_loop!(bool, i8, i16, i32, i64, u8, u16, u32, u64, half::f16, half::bf16);

macro_rules! matmul_by_matrixmultiply {
    ($($t:ty => $gemm:path),*) => {$(
        impl MatMul for $t {
            fn gemm(a: (&[Self], isize, [isize; 2]), b: (&[Self], isize, [isize; 2]), c: &mut [Self], [m, k, n]: [usize; 3]) -> bool {
                if m == 0 || n == 0 {
                    return true;
                }
                // The last element either operand reads must lie inside its buffer; the
                // strides are non-negative (they come from layouts), so checking the extremes
                // bounds every read.
                let last = |(data, base, [row, col]): (&[Self], isize, [isize; 2]), rows: usize, cols: usize| {
                    base >= 0 && row >= 0 && col >= 0
                        && (base + (rows.max(1) - 1) as isize * row + (cols.max(1) - 1) as isize * col) < data.len() as isize
                };
                if !last(a, m, k) || !last(b, k, n) || c.len() < m * n {
                    return false;
                }
                // SAFETY: every element read is `base + i·row + j·col` with i, j below the
                // checked extremes, so inside `a.0` / `b.0`; `c` holds `m·n` elements written
                // row-major with strides (n, 1). matrixmultiply reads and writes nothing else.
                unsafe {
                    $gemm(
                        m, k, n, 1.0,
                        a.0.as_ptr().offset(a.1), a.2[0], a.2[1],
                        b.0.as_ptr().offset(b.1), b.2[0], b.2[1],
                        0.0, c.as_mut_ptr(), n as isize, 1,
                    );
                }
                true
            }
        }
    )*};
}
matmul_by_matrixmultiply!(f32 => matrixmultiply::sgemm, f64 => matrixmultiply::dgemm);
