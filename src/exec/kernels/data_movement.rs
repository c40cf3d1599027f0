//! Kernels that move data in ways a strided loop cannot express: a reshape that reorders
//! memory, concatenate, pad.

use crate::attributes::PaddingConfig;
use crate::error::Result;
use crate::literal::Literal;
use crate::storage::with_native_type;

/// `reshape`: the operand's elements in logical row-major order, into the output's.
pub(crate) fn reshape(input: &Literal, out: &mut Literal) -> Result<()> {
    let (from, to) = (input.shape().clone(), out.shape().clone());
    with_native_type!(to.element_type(), T => {
        let x = input.memory::<T>()?;
        let out = out.storage_mut()?.as_mut_slice::<T>()?;
        if from.layout().is_default() && to.layout().is_default() {
            out.copy_from_slice(x);
        } else {
            for (o, i) in to.row_major_offsets().zip(from.row_major_offsets()) {
                out[o] = x[i];
            }
        }
    });
    Ok(())
}

/// Where a box of elements lies in a buffer: element `i` (a multidimensional index) is at
/// `offset + Σ i[d]·strides[d]`.
struct View {
    offset: isize,
    strides: Vec<isize>,
}

impl View {
    /// An array's own elements, through its layout.
    fn of(shape: &crate::shape::Shape) -> View {
        View { offset: 0, strides: shape.strides().iter().map(|&s| s as isize).collect() }
    }
}

/// Copies the box `sizes` of `src` (from `src_view`) into `dst` (at `dst_view`).
fn copy_box<T: Copy>(dst: &mut [T], dst_view: &View, src: &[T], src_view: &View, sizes: &[i64]) {
    if sizes.iter().any(|&s| s <= 0) {
        return;
    }
    let rank = sizes.len();
    let mut index = vec![0i64; rank];
    let (mut d_off, mut s_off) = (dst_view.offset, src_view.offset);
    loop {
        dst[d_off as usize] = src[s_off as usize];
        let mut d = rank;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            d_off += dst_view.strides[d];
            s_off += src_view.strides[d];
            if index[d] < sizes[d] {
                break;
            }
            d_off -= dst_view.strides[d] * sizes[d] as isize;
            s_off -= src_view.strides[d] * sizes[d] as isize;
            index[d] = 0;
        }
    }
}

/// `concatenate` along `dimension`.
pub(crate) fn concatenate(inputs: &[&Literal], dimension: i64, out: &mut Literal) -> Result<()> {
    let shape = out.shape().clone();
    let out_view = View::of(&shape);
    let d = dimension as usize;
    with_native_type!(shape.element_type(), T => {
        let out = out.storage_mut()?.as_mut_slice::<T>()?;
        let mut start = 0isize;
        for input in inputs {
            let view = View { offset: start * out_view.strides[d], strides: out_view.strides.clone() };
            copy_box(out, &view, input.memory::<T>()?, &View::of(input.shape()), input.shape().dimensions());
            start += input.shape().dimensions()[d] as isize;
        }
    });
    Ok(())
}

/// `pad`: the padding value everywhere, then each operand element `i` at `low + i·(interior+1)`
/// where that lies inside the output (negative edge padding cuts elements off).
pub(crate) fn pad(inputs: [&Literal; 2], config: &PaddingConfig, out: &mut Literal) -> Result<()> {
    let shape = out.shape().clone();
    let (operand, value) = (inputs[0], inputs[1]);
    let out_strides = View::of(&shape).strides;
    let in_view = View::of(operand.shape());
    let mut dst = View { offset: 0, strides: vec![0; shape.rank()] };
    let mut src = View { offset: 0, strides: in_view.strides.clone() };
    let mut sizes = Vec::with_capacity(shape.rank());
    for (d, p) in config.dimensions.iter().enumerate() {
        let step = p.interior_padding + 1;
        let (n, out_size) = (operand.shape().dimensions()[d], shape.dimensions()[d]);
        // First operand index whose position `low + i·step` is ≥ 0, and how many fit below out_size.
        let first = if p.edge_padding_low >= 0 { 0 } else { (-p.edge_padding_low + step - 1) / step };
        let position = p.edge_padding_low + first * step;
        let fitting =
            if position >= out_size { 0 } else { ((out_size - 1 - position) / step + 1).min(n - first) };
        sizes.push(fitting.max(0));
        dst.offset += position.max(0) as isize * out_strides[d];
        dst.strides[d] = step as isize * out_strides[d];
        src.offset += first as isize * in_view.strides[d];
    }
    with_native_type!(shape.element_type(), T => {
        let fill = value.memory::<T>()?[0];
        let out = out.storage_mut()?.as_mut_slice::<T>()?;
        out.fill(fill);
        copy_box(out, &dst, operand.memory::<T>()?, &src, &sizes);
    });
    Ok(())
}
