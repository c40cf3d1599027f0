//! `rng_bit_generator`: XLA's counter-based generators, bit for bit what its CPU backend
//! returns for the same state and shape (ThreeFry-2x32 and Philox-4x32; `Default` is Philox).

use crate::attributes::RandomAlgorithm;
use crate::element_type::ElementType;
use crate::error::{invalid_argument, Result};
use crate::exec::element::{Element, Wide};
use crate::literal::Literal;
use crate::storage::with_native_type;

/// Threefry-2x32 with 20 rounds (XLA's `prng.cc`).
fn threefry2x32([mut x0, mut x1]: [u32; 2], [k0, k1]: [u32; 2]) -> [u32; 2] {
    const ROTATIONS: [u32; 8] = [13, 15, 26, 6, 17, 29, 16, 24];
    let keys = [k0, k1, 0x1BD1_1BDA ^ k0 ^ k1];
    x0 = x0.wrapping_add(k0);
    x1 = x1.wrapping_add(k1);
    for block in 0..5 {
        let rotations = if block % 2 == 0 { &ROTATIONS[..4] } else { &ROTATIONS[4..] };
        for &r in rotations {
            x0 = x0.wrapping_add(x1);
            x1 = x1.rotate_left(r) ^ x0;
        }
        let s = block + 1;
        x0 = x0.wrapping_add(keys[s % 3]);
        x1 = x1.wrapping_add(keys[(s + 1) % 3]).wrapping_add(s as u32);
    }
    [x0, x1]
}

/// Philox-4x32 with 10 rounds.
fn philox4x32([mut x0, mut x1, mut x2, mut x3]: [u32; 4], [mut k0, mut k1]: [u32; 2]) -> [u32; 4] {
    for _ in 0..10 {
        let p0 = u64::from(x0) * 0xD251_1F53;
        let p1 = u64::from(x2) * 0xCD9E_8D57;
        (x0, x1, x2, x3) = ((p1 >> 32) as u32 ^ x1 ^ k0, p1 as u32, (p0 >> 32) as u32 ^ x3 ^ k1, p0 as u32);
        k0 = k0.wrapping_add(0x9E37_79B9);
        k1 = k1.wrapping_add(0xBB67_AE85);
    }
    [x0, x1, x2, x3]
}

/// A 64-bit value as (low, high) 32-bit words.
fn words(value: u64) -> [u32; 2] {
    [value as u32, (value >> 32) as u32]
}

/// Fills `state_out` and `bits` (logical row-major values, stored in `bits`'s layout) from
/// `state` as XLA's `RngBitGenerator` does.
pub(crate) fn rng_bit_generator(
    algorithm: RandomAlgorithm,
    state: &Literal,
    state_out: &mut Literal,
    bits: &mut Literal,
) -> Result<()> {
    let state_values = state.to_vec::<u64>()?;
    let dimensions = bits.shape().dimensions().to_vec();
    let n = bits.shape().element_count() as usize;
    let wide = bits.element_type() == ElementType::U64;
    let (values, new_state): (Vec<u64>, Vec<u64>) = match (algorithm, &state_values[..]) {
        (RandomAlgorithm::ThreeFry, &[key, counter]) => {
            let (values, counter) = match wide {
                true => threefry_u64(key, counter, n),
                false => threefry_u32(key, counter, &dimensions),
            };
            (values, vec![key, counter])
        }
        (RandomAlgorithm::Philox | RandomAlgorithm::Default, &[key, low, ..]) => {
            // A u64[2] state counts in (key, low): the key is the counter's high word, and a
            // carry into it is used but not kept.
            let high = state_values.get(2).copied().unwrap_or(key);
            let (values, low, high) = philox(key, low, high, n, wide);
            let mut new_state = vec![key, low];
            if state_values.len() == 3 {
                new_state.push(high);
            }
            (values, new_state)
        }
        _ => invalid_argument!("the state {} does not suit {}", state.shape(), algorithm.hlo_name()),
    };
    state_out.fill_from_vec(new_state)?;
    with_native_type!(bits.element_type(), T => {
        // The output type is unsigned: its low bits (XLA keeps the low bits of 32-bit words).
        bits.fill_from_vec(values.into_iter().map(|v| T::narrow(Wide::Int(i128::from(v)))).collect::<Vec<T>>())
    })
}

/// ThreeFry's 32-bit words for `dimensions` (narrower outputs keep their low bits): elements
/// are paired along the first even dimension (else the largest), each pair one block.
fn threefry_u32(key: u64, counter: u64, dimensions: &[i64]) -> (Vec<u64>, u64) {
    let key = words(key);
    if dimensions.is_empty() {
        let [y0, _] = threefry2x32(words(counter), key);
        return (vec![u64::from(y0)], counter.wrapping_add(1));
    }
    let split = dimensions.iter().position(|d| d % 2 == 0).unwrap_or_else(|| {
        (0..dimensions.len()).fold(0, |best, i| if dimensions[i] > dimensions[best] { i } else { best })
    });
    let mut half = dimensions.to_vec();
    half[split] = (dimensions[split] + 1) / 2;
    let n: i64 = dimensions.iter().product();
    let mut values = Vec::with_capacity(n as usize);
    let mut index = vec![0i64; dimensions.len()];
    for _ in 0..n {
        let j = index[split];
        // The row-major position of the index with dimension `split` halved, in `half`.
        let block = index
            .iter()
            .zip(&half)
            .enumerate()
            .fold(0i64, |acc, (d, (&i, &size))| acc * size + if d == split { i / 2 } else { i });
        let y = threefry2x32(words(counter.wrapping_add(block as u64)), key);
        values.push(u64::from(y[(j % 2) as usize]));
        for d in (0..dimensions.len()).rev() {
            index[d] += 1;
            if index[d] < dimensions[d] {
                break;
            }
            index[d] = 0;
        }
    }
    (values, counter.wrapping_add(half.iter().product::<i64>() as u64))
}

/// ThreeFry's 64-bit outputs: element `i` is the block of counter `counter + i`.
fn threefry_u64(key: u64, counter: u64, n: usize) -> (Vec<u64>, u64) {
    let key = words(key);
    let values = (0..n as u64)
        .map(|i| {
            let [y0, y1] = threefry2x32(words(counter.wrapping_add(i)), key);
            u64::from(y0) | u64::from(y1) << 32
        })
        .collect();
    (values, counter.wrapping_add(n as u64))
}

/// Philox's outputs from the 128-bit counter (`high`, `low`): blocks of four 32-bit words (or
/// two 64-bit values), flattened in order; returns the advanced counter too.
fn philox(key: u64, low: u64, high: u64, n: usize, wide: bool) -> (Vec<u64>, u64, u64) {
    let key = words(key);
    let per_block = if wide { 2 } else { 4 };
    let blocks = n.div_ceil(per_block) as u64;
    let mut values = Vec::with_capacity(n);
    for i in 0..blocks {
        let block_low = low.wrapping_add(i);
        let block_high = if block_low < low { high.wrapping_add(1) } else { high };
        let [l0, l1] = words(block_low);
        let [h0, h1] = words(block_high);
        let y = philox4x32([l0, l1, h0, h1], key);
        match wide {
            true => {
                values.push(u64::from(y[0]) | u64::from(y[1]) << 32);
                values.push(u64::from(y[2]) | u64::from(y[3]) << 32);
            }
            false => values.extend(y.iter().map(|&w| u64::from(w))),
        }
    }
    values.truncate(n);
    let new_low = low.wrapping_add(blocks);
    let new_high = if new_low < low { high.wrapping_add(1) } else { high };
    (values, new_low, new_high)
}
