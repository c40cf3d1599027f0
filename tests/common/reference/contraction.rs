//! Sums of products: `dot`, `dot_general` and `conv_general_dilated`, with or without a
//! preferred element type, and the types XLA's CPU backend computes them in (API.md,
//! `precision`): the result type is the preferred type if given, else the operands' higher
//! type; where the result type is at least as precise as that, the operands are converted to
//! it first, else the products are summed in the operands' type and the result converted.
//! Integer products wrap in the type they are summed in; bf16 and f16 products are summed in
//! f32 and rounded once; float sums carry the bound of `reduction::float_sum` (a sum with at
//! most one nonzero product is exact). The precision config does not change values.

use crate::common::recipe::{ConvPadding, Convolution, DotOptions};
use crate::common::reference::indices;
use crate::common::reference::reduction::float_sum;
use crate::common::reference::windows::enum_padding;
use crate::common::semantics::{self, BinaryKind};
use crate::common::values::{min_subnormal, Array, Elem, Value};
use lazy_xla::{DotDimensionNumbers, ElementType};

/// XLA's `primitive_util::HigherPrecisionType`: floats above integers, then by exponent range,
/// then by precision; integers by width, then signed above unsigned; `pred` lowest.
fn higher(a: ElementType, b: ElementType) -> ElementType {
    let rank = |t: ElementType| -> (i32, i32, usize, bool) {
        let (range, precision) = match t {
            ElementType::F16 => (5, 11),
            ElementType::Bf16 => (8, 8),
            ElementType::F32 => (8, 24),
            ElementType::F64 => (11, 53),
            _ => (-1, -1),
        };
        (range, precision, if t == ElementType::Pred { 0 } else { t.byte_size() }, t.is_signed_integral())
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

/// The type the products are summed in and the result type, for operands of `lhs` and `rhs`.
fn product_types(
    lhs: ElementType,
    rhs: ElementType,
    options: Option<&DotOptions>,
) -> (ElementType, ElementType) {
    let inferred = higher(lhs, rhs);
    let result = options.and_then(|o| o.preferred).unwrap_or(inferred);
    let computing = if higher(inferred, result) == result { result } else { inferred };
    (computing, result)
}

/// One element of a product: the sum of the products of `pairs` (already of the computing
/// type `ty`).
fn sum_of_products(ty: ElementType, pairs: &[(Elem, Elem)]) -> Elem {
    if !ty.is_float() {
        let (add, mul) = (BinaryKind::Add, BinaryKind::Mul);
        return (pairs.iter()).fold(Elem::int(0), |acc, &(a, b)| {
            semantics::binary(add, ty, acc, semantics::binary(mul, ty, a, b))
        });
    }
    let products: Vec<Elem> = pairs
        .iter()
        .map(|&(a, b)| {
            let (x, y) = (a.value.float(), b.value.float());
            // An f64 product of finite factors that overflows is infinite only if it is rounded
            // on its own: a fused multiply-add keeps it finite. Likewise one of nonzero factors
            // that underflows is a zero (of the product's sign) only if it is rounded on its
            // own: a fused multiply-add adds it exactly, so `0·2 + 1e-323·(−0.25)` is +0 by
            // separate roundings (as XLA's batched f64 dot computes it) and −0 by an FMA.
            let overflow = x.is_finite() && y.is_finite() && !(x * y).is_finite();
            let underflow = x != 0.0 && y != 0.0 && x * y == 0.0;
            let err = match (a.is_exact() && b.is_exact(), a.is_unknown() || b.is_unknown() || overflow) {
                (_, true) => f64::INFINITY,
                (true, _) if underflow => min_subnormal(ty),
                (true, _) => 0.0,
                _ => x.abs() * b.err + y.abs() * a.err + a.err * b.err,
            };
            Elem { value: Value::Float(x * y), err }
        })
        .collect();
    match ty {
        ElementType::F16 | ElementType::Bf16 => {
            semantics::convert(ElementType::F32, ty, float_sum(ElementType::F32, &products, 1))
        }
        _ => float_sum(ty, &products, 1),
    }
}

/// The products' types for `l` and `r`, and the operands' elements converted to the computing
/// type.
fn converted(l: &Array, r: &Array, options: Option<&DotOptions>) -> (ElementType, ElementType, Array, Array) {
    let (computing, result) = product_types(l.ty, r.ty, options);
    let to = |a: &Array| Array {
        ty: computing,
        dims: a.dims.clone(),
        elems: a.elems.iter().map(|&e| semantics::convert(a.ty, computing, e)).collect(),
    };
    (computing, result, to(l), to(r))
}

/// An array of the computing type converted to the result type.
fn finished(product: Array, result: ElementType) -> Array {
    let elems = product.elems.iter().map(|&e| semantics::convert(product.ty, result, e)).collect();
    Array { ty: result, dims: product.dims, elems }
}

/// `dot(l, r)`: a vector or matrix times a vector or matrix.
pub fn dot(l: &Array, r: &Array, options: Option<&DotOptions>) -> Array {
    let numbers = DotDimensionNumbers {
        lhs_contracting_dimensions: vec![if l.dims.len() == 1 { 0 } else { 1 }],
        rhs_contracting_dimensions: vec![0],
        lhs_batch_dimensions: vec![],
        rhs_batch_dimensions: vec![],
    };
    dot_general(l, r, &numbers, options)
}

/// XLA's DotGeneral: output dimensions are the batch dimensions, then the lhs's free
/// dimensions, then the rhs's, each in operand order.
pub fn dot_general(
    l: &Array,
    r: &Array,
    numbers: &DotDimensionNumbers,
    options: Option<&DotOptions>,
) -> Array {
    let (computing, result, l, r) = converted(l, r, options);
    let free = |rank: usize, batch: &[i64], contracting: &[i64]| -> Vec<usize> {
        (0..rank).filter(|&d| !batch.contains(&(d as i64)) && !contracting.contains(&(d as i64))).collect()
    };
    let (lb, rb) = (&numbers.lhs_batch_dimensions, &numbers.rhs_batch_dimensions);
    let (lc, rc) = (&numbers.lhs_contracting_dimensions, &numbers.rhs_contracting_dimensions);
    let lf = free(l.dims.len(), lb, lc);
    let rf = free(r.dims.len(), rb, rc);
    let dims: Vec<i64> = (lb.iter().map(|&d| l.dims[d as usize]))
        .chain(lf.iter().map(|&d| l.dims[d]))
        .chain(rf.iter().map(|&d| r.dims[d]))
        .collect();
    let contracted: Vec<i64> = lc.iter().map(|&d| l.dims[d as usize]).collect();
    let product = Array::from_fn(computing, &dims, |out| {
        let (batch, rest) = out.split_at(lb.len());
        let (lfree, rfree) = rest.split_at(lf.len());
        let mut li = vec![0i64; l.dims.len()];
        let mut ri = vec![0i64; r.dims.len()];
        for (k, &i) in batch.iter().enumerate() {
            li[lb[k] as usize] = i;
            ri[rb[k] as usize] = i;
        }
        for (k, &i) in lfree.iter().enumerate() {
            li[lf[k]] = i;
        }
        for (k, &i) in rfree.iter().enumerate() {
            ri[rf[k]] = i;
        }
        let pairs: Vec<(Elem, Elem)> = indices(&contracted)
            .iter()
            .map(|c| {
                for (k, &i) in c.iter().enumerate() {
                    li[lc[k] as usize] = i;
                    ri[rc[k] as usize] = i;
                }
                (l.at(&li), r.at(&ri))
            })
            .collect();
        sum_of_products(computing, &pairs)
    });
    finished(product, result)
}

/// `conv_general_dilated`: for each output element (batch `b`, feature `o`, spatial position
/// `s`), the sum over the kernel's input features `i` and window positions `w` of
/// `lhs[batch, feature, p] · rhs[i, o, w]`, where the lhs position `p = s·stride + w·rhs_dilation
/// − low padding` in the lhs dilated by `lhs_dilation`. With feature groups, output feature `o`
/// reads input features `g·C/G + i` of its group `g = o / (O/G)`; with batch groups, input batch
/// `g·N/B + b` of its group `g = o / (O/B)`. Positions in the padding or the dilation's holes
/// add nothing where the kernel is finite; XLA's CPU backend multiplies them by the kernel on
/// some paths and skips them on others (asked jaxlib 0.6.0: a NaN kernel element over padding
/// gives NaN in a 2-d f32 convolution, nothing in a 3-d f16 one), so an output with a
/// non-finite kernel element over padding or a hole is unknown. The plain `conv` pads as
/// `reduce_window` does with the same `Padding`.
pub fn conv(l: &Array, r: &Array, c: &Convolution, options: Option<&DotOptions>) -> Array {
    let (computing, result, l, r) = converted(l, r, options);
    let n = &c.numbers;
    let spatial = n.input_spatial_dimensions.len();
    let or = |list: &[i64], k: usize, default: i64| list.get(k).copied().unwrap_or(default);
    let (lhs_dim, rhs_dim) = (|d: i64| l.dims[d as usize], |d: i64| r.dims[d as usize]);
    let pads: Vec<(i64, i64)> = (0..spatial)
        .map(|k| match &c.padding {
            ConvPadding::Explicit(padding) => padding.get(k).copied().unwrap_or((0, 0)),
            ConvPadding::Enum(padding) => enum_padding(
                *padding,
                lhs_dim(n.input_spatial_dimensions[k]),
                rhs_dim(n.kernel_spatial_dimensions[k]),
                or(&c.strides, k, 1),
            ),
        })
        .collect();
    let (batch, features) = (lhs_dim(n.input_batch_dimension), lhs_dim(n.input_feature_dimension));
    let outputs = rhs_dim(n.kernel_output_feature_dimension);
    let kernel_features = rhs_dim(n.kernel_input_feature_dimension);
    let window: Vec<i64> = n.kernel_spatial_dimensions.iter().map(|&d| rhs_dim(d)).collect();
    let mut dims = vec![0i64; spatial + 2];
    dims[n.output_batch_dimension as usize] = batch / c.batch_group_count;
    dims[n.output_feature_dimension as usize] = outputs;
    for k in 0..spatial {
        let base = lhs_dim(n.input_spatial_dimensions[k]);
        let dilated_base = if base == 0 { 0 } else { (base - 1) * or(&c.lhs_dilation, k, 1) + 1 };
        let padded = dilated_base + pads[k].0 + pads[k].1;
        let dilated_window = (window[k] - 1) * or(&c.rhs_dilation, k, 1) + 1;
        dims[n.output_spatial_dimensions[k] as usize] =
            if dilated_window > padded { 0 } else { (padded - dilated_window) / or(&c.strides, k, 1) + 1 };
    }
    let product = Array::from_fn(computing, &dims, |out| {
        let (b, o) = (out[n.output_batch_dimension as usize], out[n.output_feature_dimension as usize]);
        let feature_group = o / (outputs / c.feature_group_count);
        let batch_group = o / (outputs / c.batch_group_count);
        let input_batch = batch_group * (batch / c.batch_group_count) + b;
        let mut li = vec![0i64; spatial + 2];
        let mut ri = vec![0i64; spatial + 2];
        li[n.input_batch_dimension as usize] = input_batch;
        ri[n.kernel_output_feature_dimension as usize] = o;
        let (mut pairs, mut padding_times_non_finite) = (Vec::new(), false);
        for i in 0..kernel_features {
            li[n.input_feature_dimension as usize] = feature_group * (features / c.feature_group_count) + i;
            ri[n.kernel_input_feature_dimension as usize] = i;
            for w in indices(&window) {
                let mut inside = true;
                for k in 0..spatial {
                    let dilation = or(&c.lhs_dilation, k, 1);
                    let s = out[n.output_spatial_dimensions[k] as usize];
                    let p = s * or(&c.strides, k, 1) + w[k] * or(&c.rhs_dilation, k, 1) - pads[k].0;
                    let base = lhs_dim(n.input_spatial_dimensions[k]);
                    let reads = p >= 0 && p % dilation == 0 && p / dilation < base;
                    if reads {
                        li[n.input_spatial_dimensions[k] as usize] = p / dilation;
                    }
                    inside &= reads;
                    ri[n.kernel_spatial_dimensions[k] as usize] = w[k];
                }
                let weight = r.at(&ri);
                let non_finite =
                    weight.is_unknown() || matches!(weight.value, Value::Float(v) if !v.is_finite());
                match inside {
                    true => pairs.push((l.at(&li), weight)),
                    false => padding_times_non_finite |= non_finite,
                }
            }
        }
        match padding_times_non_finite {
            true => Elem::unknown_of(computing),
            false => sum_of_products(computing, &pairs),
        }
    });
    finished(product, result)
}
