//! Data movement: iota, broadcasts, transpose, slices, concatenation, padding, reversal and the
//! dynamic slices, each an index map from the result to an operand element. A dynamic start is
//! clamped as XLA clamps it, into `[0, dim − size]` (an unsigned start read as unsigned); an
//! unknown start makes every element it could move unknown.

use crate::common::reference::count;
use crate::common::values::{round_float, wrap, Array, Elem, Value};
use lazy_xla::{ElementType, Shape};

/// `iota(shape, dimension)`: the index converted to the type, as XLA does: wrapped into an
/// integer type (s8's 128 is -128), rounded to a float type (f16's 2049 is 2048).
pub fn iota(shape: &Shape, dimension: i64) -> Array {
    let ty = shape.element_type();
    Array::from_fn(ty, shape.dimensions(), |i| {
        let index = i[dimension as usize] as i128;
        Elem::exact(match ty.is_float() {
            true => Value::Float(round_float(ty, index as f64)),
            false => Value::Int(wrap(ty, index)),
        })
    })
}

/// `broadcast(x, sizes)`: new major dimensions.
pub fn broadcast(x: &Array, sizes: &[i64]) -> Array {
    let dims = [sizes, &x.dims].concat();
    Array::from_fn(x.ty, &dims, |i| x.at(&i[sizes.len()..]))
}

/// `broadcast_in_dim(x, dims, broadcast_dimensions)` (a size-1 operand dimension is read at 0).
pub fn broadcast_in_dim(x: &Array, dims: &[i64], broadcast_dimensions: &[i64]) -> Array {
    Array::from_fn(x.ty, dims, |i| {
        let source: Vec<i64> = (broadcast_dimensions.iter().enumerate())
            .map(|(j, &d)| if x.dims[j] == 1 { 0 } else { i[d as usize] })
            .collect();
        x.at(&source)
    })
}

/// `transpose(x, permutation)`: result dimension `k` is operand dimension `permutation[k]`.
pub fn transpose(x: &Array, permutation: &[i64]) -> Array {
    let dims: Vec<i64> = permutation.iter().map(|&p| x.dims[p as usize]).collect();
    Array::from_fn(x.ty, &dims, |i| {
        let mut source = vec![0; dims.len()];
        for (k, &p) in permutation.iter().enumerate() {
            source[p as usize] = i[k];
        }
        x.at(&source)
    })
}

/// `slice(x, start, limit, strides)`.
pub fn slice(x: &Array, start: &[i64], limit: &[i64], strides: &[i64]) -> Array {
    let dims: Vec<i64> =
        (0..x.dims.len()).map(|d| (limit[d] - start[d] + strides[d] - 1) / strides[d]).collect();
    Array::from_fn(x.ty, &dims, |i| {
        let source: Vec<i64> = (0..i.len()).map(|d| start[d] + i[d] * strides[d]).collect();
        x.at(&source)
    })
}

/// `concat_in_dim(parts, dimension)`.
pub fn concat(parts: &[&Array], dimension: i64) -> Array {
    let k = dimension as usize;
    let mut dims = parts[0].dims.clone();
    dims[k] = parts.iter().map(|p| p.dims[k]).sum();
    Array::from_fn(parts[0].ty, &dims, |i| {
        let mut source = i.to_vec();
        for part in parts {
            if source[k] < part.dims[k] {
                return part.at(&source);
            }
            source[k] -= part.dims[k];
        }
        unreachable!("index {i:?} beyond the concatenation")
    })
}

/// `pad(x, value, config)`, each dimension `[low, high, interior]` (negative edges cut).
pub fn pad(x: &Array, value: Elem, config: &[[i64; 3]]) -> Array {
    let dims: Vec<i64> = (x.dims.iter().zip(config))
        .map(|(&n, &[lo, hi, interior])| lo + hi + n + (n - 1).max(0) * interior)
        .collect();
    Array::from_fn(x.ty, &dims, |i| {
        let mut source = Vec::with_capacity(i.len());
        for (d, &[lo, _, interior]) in config.iter().enumerate() {
            let q = i[d] - lo;
            if q < 0 || q % (interior + 1) != 0 || q / (interior + 1) >= x.dims[d] {
                return value;
            }
            source.push(q / (interior + 1));
        }
        x.at(&source)
    })
}

/// `rev(x, dimensions)`.
pub fn rev(x: &Array, dimensions: &[i64]) -> Array {
    Array::from_fn(x.ty, &x.dims, |i| {
        let mut source = i.to_vec();
        for &d in dimensions {
            source[d as usize] = x.dims[d as usize] - 1 - i[d as usize];
        }
        x.at(&source)
    })
}

/// The starts of a dynamic slice or update of `sizes` in `dims`, clamped; `None` if any is
/// unknown.
fn clamped_starts(dims: &[i64], sizes: &[i64], starts: &[&Array]) -> Option<Vec<i64>> {
    let mut clamped = Vec::with_capacity(dims.len());
    for ((&dim, &size), start) in dims.iter().zip(sizes).zip(starts) {
        let e = start.elems[0];
        if e.is_unknown() {
            return None;
        }
        clamped.push(e.value.int().clamp(0, i128::from(dim - size)) as i64);
    }
    Some(clamped)
}

/// An array of `dims` whose every element is unknown.
pub fn unknown_array(ty: ElementType, dims: &[i64]) -> Array {
    Array { ty, dims: dims.to_vec(), elems: vec![Elem::unknown_of(ty); count(dims)] }
}

/// `dynamic_slice(x, starts, sizes)`.
pub fn dynamic_slice(x: &Array, starts: &[&Array], sizes: &[i64]) -> Array {
    match clamped_starts(&x.dims, sizes, starts) {
        Some(at) => Array::from_fn(x.ty, sizes, |i| {
            x.at(&i.iter().zip(&at).map(|(&i, &s)| i + s).collect::<Vec<_>>())
        }),
        None => unknown_array(x.ty, sizes),
    }
}

/// `dynamic_update_slice(x, update, starts)`.
pub fn dynamic_update_slice(x: &Array, update: &Array, starts: &[&Array]) -> Array {
    let Some(at) = clamped_starts(&x.dims, &update.dims, starts) else {
        return unknown_array(x.ty, &x.dims);
    };
    Array::from_fn(x.ty, &x.dims, |i| {
        let inside: Option<Vec<i64>> = (i.iter().zip(&at).zip(&update.dims))
            .map(|((&i, &s), &n)| (s..s + n).contains(&i).then_some(i - s))
            .collect();
        inside.map_or(x.at(i), |u| update.at(&u))
    })
}
