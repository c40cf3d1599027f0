//! A transposed input's chunk read through vector registers: `W` of the chunk's columns (each
//! contiguous in the source) loaded as `W` registers of `W` rows, turned into `W` registers of
//! rows by shuffles, and stored: 16×16 tiles of `f32`-sized elements with AVX-512, 8×8 with
//! AVX2. One element at a time, the same tile costs a load and a store per element.

use std::arch::x86_64::{
    __m256, __m512, _mm256_loadu_ps, _mm256_permute2f128_ps, _mm256_setzero_ps, _mm256_shuffle_ps,
    _mm256_storeu_ps, _mm256_unpackhi_ps, _mm256_unpacklo_ps, _mm512_castpd_ps, _mm512_castps_pd,
    _mm512_loadu_ps, _mm512_setzero_ps, _mm512_shuffle_f32x4, _mm512_storeu_ps, _mm512_unpackhi_pd,
    _mm512_unpackhi_ps, _mm512_unpacklo_pd, _mm512_unpacklo_ps,
};

use crate::element_type::ElementType;
use crate::exec::element::Element;
use crate::exec::loop_program::chunk::Chunk;
use crate::exec::loop_program::isa::{level, Level};

/// Reads `chunk` of a transposed input into `out` (row after row), element (r, i) from
/// `source[start + r + i·step]`, through registers; returns `false`, having written nothing,
/// where it cannot: elements other than `f32`, `s32` and `u32`, or a CPU without AVX2.
pub(super) fn through_registers<T: Element>(
    source: &[T],
    start: isize,
    step: isize,
    chunk: Chunk,
    out: &mut [T],
) -> bool {
    if !matches!(T::ELEMENT_TYPE, ElementType::F32 | ElementType::S32 | ElementType::U32) {
        return false;
    }
    // SAFETY: `T` is `f32`, `i32` or `u32` (its element type says so): four bytes aligned to
    // four, each bit pattern a value of all three, and the tiles only move bits (an unaligned
    // load and store and shuffles, never arithmetic), so every element arrives unchanged.
    let (source, out) = unsafe {
        (
            std::slice::from_raw_parts(source.as_ptr().cast::<f32>(), source.len()),
            std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<f32>(), out.len()),
        )
    };
    match level() {
        // SAFETY: `level()` found the CPU supports AVX-512.
        Level::Avx512 => {
            tiles::<16>(source, start, step, chunk, out, |c, r, o, l| unsafe { tile_16(c, r, o, l) })
        }
        // SAFETY: `level()` found the CPU supports AVX2.
        Level::Avx2 => {
            tiles::<8>(source, start, step, chunk, out, |c, r, o, l| unsafe { tile_8(c, r, o, l) })
        }
        Level::Baseline => return false,
    }
    true
}

/// Element (r, i) of `chunk` from `source[start + r + i·step]` into `out[r·len + i]`: each `W`
/// columns read as `W`×`W` tiles by `tile(columns, first_row, out, len)` (which writes rows
/// `first_row..first_row + W` of the columns, `out` starting at the tile's first element),
/// the rows and columns past the last whole tile one element at a time.
#[inline(always)]
fn tiles<const W: usize>(
    source: &[f32],
    start: isize,
    step: isize,
    chunk: Chunk,
    out: &mut [f32],
    tile: impl Fn(&[&[f32]; W], usize, &mut [f32], usize),
) {
    let Chunk { rows, len } = chunk;
    let column = |i: usize| {
        let from = (start + i as isize * step) as usize;
        &source[from..from + rows]
    };
    let whole_rows = rows - rows % W;
    let whole_columns = len - len % W;
    for first in (0..whole_columns).step_by(W) {
        let columns: [&[f32]; W] = std::array::from_fn(|k| column(first + k));
        for first_row in (0..whole_rows).step_by(W) {
            tile(&columns, first_row, &mut out[first_row * len + first..], len);
        }
        for r in whole_rows..rows {
            for (value, column) in out[r * len + first..][..W].iter_mut().zip(&columns) {
                *value = column[r];
            }
        }
    }
    for i in whole_columns..len {
        for (r, &value) in column(i).iter().enumerate() {
            out[r * len + i] = value;
        }
    }
}

/// Rows `first_row..first_row + 16` of 16 `columns` into the first 16 elements of `out`'s rows
/// `len` apart.
///
/// # Safety
/// The CPU supports AVX-512 (`avx512f`).
#[target_feature(enable = "avx512f")]
unsafe fn tile_16(columns: &[&[f32]; 16], first_row: usize, out: &mut [f32], len: usize) {
    let mut v = [_mm512_setzero_ps(); 16];
    for (v, column) in v.iter_mut().zip(columns) {
        // SAFETY: the slice is 16 readable `f32`s, what an unaligned load reads.
        *v = unsafe { _mm512_loadu_ps(column[first_row..first_row + 16].as_ptr()) };
    }
    // Pairs of columns interleaved by element, then by pairs of elements: register 4q + m then
    // holds, in its 128-bit lane L, rows 4L + m of columns 4q..4q + 4.
    let mut t = [_mm512_setzero_ps(); 16];
    for p in 0..8 {
        t[2 * p] = _mm512_unpacklo_ps(v[2 * p], v[2 * p + 1]);
        t[2 * p + 1] = _mm512_unpackhi_ps(v[2 * p], v[2 * p + 1]);
    }
    /// `a` and `b` interleaved by pairs of elements, their low pairs or their high ones.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn pairs(a: __m512, b: __m512, high: bool) -> __m512 {
        let (a, b) = (_mm512_castps_pd(a), _mm512_castps_pd(b));
        _mm512_castpd_ps(if high { _mm512_unpackhi_pd(a, b) } else { _mm512_unpacklo_pd(a, b) })
    }
    for q in 0..4 {
        let b = 4 * q;
        v[b] = pairs(t[b], t[b + 2], false);
        v[b + 1] = pairs(t[b], t[b + 2], true);
        v[b + 2] = pairs(t[b + 1], t[b + 3], false);
        v[b + 3] = pairs(t[b + 1], t[b + 3], true);
    }
    // Then the 128-bit lanes: even and odd ones of groups of columns 8 apart, then 4 apart.
    for h in 0..2 {
        for m in 0..4 {
            let (a, b) = (v[8 * h + m], v[8 * h + 4 + m]);
            t[8 * h + m] = _mm512_shuffle_f32x4::<0x88>(a, b);
            t[8 * h + 4 + m] = _mm512_shuffle_f32x4::<0xDD>(a, b);
        }
    }
    for m in 0..8 {
        v[m] = _mm512_shuffle_f32x4::<0x88>(t[m], t[8 + m]);
        v[8 + m] = _mm512_shuffle_f32x4::<0xDD>(t[m], t[8 + m]);
    }
    for (r, v) in v.iter().enumerate() {
        let row = &mut out[r * len..r * len + 16];
        // SAFETY: `row` is 16 writable `f32`s, what an unaligned store writes.
        unsafe { _mm512_storeu_ps(row.as_mut_ptr(), *v) };
    }
}

/// Rows `first_row..first_row + 8` of 8 `columns` into the first 8 elements of `out`'s rows
/// `len` apart.
///
/// # Safety
/// The CPU supports AVX2.
#[target_feature(enable = "avx2")]
unsafe fn tile_8(columns: &[&[f32]; 8], first_row: usize, out: &mut [f32], len: usize) {
    let mut v: [__m256; 8] = [_mm256_setzero_ps(); 8];
    for (v, column) in v.iter_mut().zip(columns) {
        // SAFETY: the slice is 8 readable `f32`s, what an unaligned load reads.
        *v = unsafe { _mm256_loadu_ps(column[first_row..first_row + 8].as_ptr()) };
    }
    // Interleaved by element: register 2p + h holds rows 2h, 2h + 1 (and 4 more in its high
    // half) of columns 2p, 2p + 1.
    let mut t = [_mm256_setzero_ps(); 8];
    for p in 0..4 {
        t[2 * p] = _mm256_unpacklo_ps(v[2 * p], v[2 * p + 1]);
        t[2 * p + 1] = _mm256_unpackhi_ps(v[2 * p], v[2 * p + 1]);
    }
    // Then by pairs: register 4g + m holds row m (and m + 4 in its high half) of columns
    // 4g..4g + 4.
    for g in 0..2 {
        let b = 4 * g;
        v[b] = _mm256_shuffle_ps::<0x44>(t[b], t[b + 2]);
        v[b + 1] = _mm256_shuffle_ps::<0xEE>(t[b], t[b + 2]);
        v[b + 2] = _mm256_shuffle_ps::<0x44>(t[b + 1], t[b + 3]);
        v[b + 3] = _mm256_shuffle_ps::<0xEE>(t[b + 1], t[b + 3]);
    }
    for m in 0..4 {
        t[m] = _mm256_permute2f128_ps::<0x20>(v[m], v[4 + m]);
        t[4 + m] = _mm256_permute2f128_ps::<0x31>(v[m], v[4 + m]);
    }
    for (r, t) in t.iter().enumerate() {
        let row = &mut out[r * len..r * len + 8];
        // SAFETY: `row` is 8 writable `f32`s, what an unaligned store writes.
        unsafe { _mm256_storeu_ps(row.as_mut_ptr(), *t) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every tile size this CPU runs, over chunks of whole tiles, of a remainder of rows, of
    /// columns or both, of fewer rows or columns than a tile, forwards and with columns in
    /// reverse, against the definition, bit for bit: values with NaN payloads, −0 and
    /// denormals among them (moved, never computed). `through_registers` the same for `i32`
    /// and `u32`, and declines `f64`.
    #[test]
    fn tiles_read_every_element_from_its_place() {
        let source: Vec<f32> = (0..40_000u32)
            .map(|k| match k % 5 {
                0 => f32::from_bits(0x7fc0_0000 | k),
                1 => -0.0,
                2 => f32::from_bits(k),
                _ => k as f32 * -1.5,
            })
            .collect();
        let sizes = [1, 7, 8, 9, 16, 17, 31, 32, 40];
        for (rows, len) in sizes.into_iter().flat_map(|rows| sizes.map(|len| (rows, len))) {
            for (start, step) in [(0, rows as isize), (3, rows as isize + 5), (39_000, -(rows as isize) - 2)]
            {
                let chunk = Chunk { rows, len };
                let expected: Vec<u32> = (0..rows * len)
                    .map(|k| {
                        source[(start + (k / len) as isize + (k % len) as isize * step) as usize].to_bits()
                    })
                    .collect();
                let bits = |out: &[f32]| out.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                let mut out = vec![1.0; chunk.count()];
                if is_x86_feature_detected!("avx512f") {
                    // SAFETY: the CPU supports AVX-512.
                    tiles::<16>(&source, start, step, chunk, &mut out, |c, r, o, l| unsafe {
                        tile_16(c, r, o, l)
                    });
                    assert_eq!(bits(&out), expected, "16×16 tiles: {rows}×{len}, from {start} by {step}");
                }
                if is_x86_feature_detected!("avx2") {
                    out.fill(1.0);
                    // SAFETY: the CPU supports AVX2.
                    tiles::<8>(&source, start, step, chunk, &mut out, |c, r, o, l| unsafe {
                        tile_8(c, r, o, l)
                    });
                    assert_eq!(bits(&out), expected, "8×8 tiles: {rows}×{len}, from {start} by {step}");
                }
                let integers: Vec<i32> = source.iter().map(|v| v.to_bits() as i32).collect();
                let mut out = vec![0i32; chunk.count()];
                if through_registers(&integers, start, step, chunk, &mut out) {
                    assert!(out.iter().zip(&expected).all(|(&o, &e)| o as u32 == e), "i32: {rows}×{len}");
                }
                let unsigned: Vec<u32> = source.iter().map(|v| v.to_bits()).collect();
                let mut out = vec![0u32; chunk.count()];
                if through_registers(&unsigned, start, step, chunk, &mut out) {
                    assert_eq!(out, expected, "u32: {rows}×{len}");
                }
            }
        }
        let wide = vec![0.5f64; 64];
        let mut out = vec![0.0f64; 64];
        assert!(!through_registers(&wide, 0, 8, Chunk { rows: 8, len: 8 }, &mut out));
        assert!(out.iter().all(|&v| v == 0.0), "declined, it wrote nothing");
    }
}
