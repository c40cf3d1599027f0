//! `rng_bit_generator`, from the published algorithms as XLA's `RngBitGeneratorExpander` and
//! `prng.cc` use them: Threefry-2x32 (20 rounds) and Philox-4x32 (10 rounds, XLA's CPU
//! default). Checked bit for bit against XLA's own outputs in `tests/data` by
//! `the_reference_rng_matches_xla_bit_for_bit` (fuzz_differential.rs).
//!
//! The state is `[key, counter…]`. Threefry takes `u64[2]`: element `i` of a 64-bit request is
//! Threefry of the counter plus `i` (row-major), split into two 32-bit words; a 32-bit (or
//! narrower, truncated) request computes half as many counters over the shape halved along its
//! first even dimension (else its largest), the two words filling each pair of that dimension.
//! Philox reads a 128-bit counter (`u64[2]`: low = the counter, high = the key; `u64[3]`: the
//! two counter words) and makes four words per counter, laid out round-robin; a 64-bit request
//! joins the words in pairs. The new state is the key and the counter advanced by the counters
//! used (Philox on `u64[2]` keeping the low word).

use crate::common::reference::{count, indices, linear};
use crate::common::values::{storage_bits, Array, Elem};
use lazy_xla::{ElementType, RandomAlgorithm, Shape};

/// One Threefry-2x32 block of `input` under `key`.
fn threefry(key: [u32; 2], input: [u32; 2]) -> [u32; 2] {
    const ROTATIONS: [u32; 8] = [13, 15, 26, 6, 17, 29, 16, 24];
    let ks = [key[0], key[1], 0x1BD1_1BDA ^ key[0] ^ key[1]];
    let mut x = [input[0].wrapping_add(ks[0]), input[1].wrapping_add(ks[1])];
    for injection in 1..=5u32 {
        let rotations = if injection % 2 == 1 { &ROTATIONS[..4] } else { &ROTATIONS[4..] };
        for &r in rotations {
            x[0] = x[0].wrapping_add(x[1]);
            x[1] = x[1].rotate_left(r) ^ x[0];
        }
        x[0] = x[0].wrapping_add(ks[injection as usize % 3]);
        x[1] = x[1].wrapping_add(ks[(injection as usize + 1) % 3]).wrapping_add(injection);
    }
    x
}

/// One Philox-4x32 block of `counter` under `key`.
fn philox(key: [u32; 2], counter: [u32; 4]) -> [u32; 4] {
    let (mut key, mut x) = (key, counter);
    let multiply = |a: u32, m: u64| {
        let product = u64::from(a) * m;
        ((product >> 32) as u32, product as u32)
    };
    for _ in 0..10 {
        let (high0, low0) = multiply(x[0], 0xD251_1F53);
        let (high1, low1) = multiply(x[2], 0xCD9E_8D57);
        x = [high1 ^ x[1] ^ key[0], low1, high0 ^ x[3] ^ key[1], low0];
        key = [key[0].wrapping_add(0x9E37_79B9), key[1].wrapping_add(0xBB67_AE85)];
    }
    x
}

/// A 64-bit word as its low and high 32-bit words.
fn words(v: u64) -> [u32; 2] {
    [v as u32, (v >> 32) as u32]
}

/// Threefry bits for a shape of `dims`, of `bits` bits each, from `[key, counter]`: the new
/// state and the elements.
fn threefry_bits(state: &[u64], dims: &[i64], bits: u32) -> (Vec<u64>, Vec<u64>) {
    let (key, counter) = (words(state[0]), state[1]);
    let block = |i: u64| threefry(key, words(counter.wrapping_add(i)));
    if bits == 64 {
        let n = count(dims) as u64;
        let values = (0..n).map(&block).map(|[low, high]| u64::from(low) | u64::from(high) << 32).collect();
        return (vec![state[0], counter.wrapping_add(n)], values);
    }
    if dims.is_empty() {
        return (vec![state[0], counter.wrapping_add(1)], vec![u64::from(block(0)[0])]);
    }
    let split = (0..dims.len())
        .find(|&d| dims[d] % 2 == 0)
        .unwrap_or_else(|| (0..dims.len()).rev().max_by_key(|&d| dims[d]).expect("a dimension"));
    let mut half = dims.to_vec();
    half[split] = (dims[split] + 1) / 2;
    let values = indices(dims)
        .iter()
        .map(|index| {
            let mut at = index.clone();
            at[split] /= 2;
            u64::from(block(linear(&half, &at) as u64)[(index[split] % 2) as usize])
        })
        .collect();
    (vec![state[0], counter.wrapping_add(count(&half) as u64)], values)
}

/// Philox bits for a shape of `dims`, of `bits` bits each, from `[key, counter…]`.
fn philox_bits(state: &[u64], dims: &[i64], bits: u32) -> (Vec<u64>, Vec<u64>) {
    let key = words(state[0]);
    let (low, high) = if state.len() >= 3 { (state[1], state[2]) } else { (state[1], state[0]) };
    let advanced = |j: u64| {
        let new_low = low.wrapping_add(j);
        (new_low, if new_low < low { high.wrapping_add(1) } else { high })
    };
    let block = |j: u64| {
        let (l, h) = advanced(j);
        let ([a, b], [c, d]) = (words(l), words(h));
        philox(key, [a, b, c, d])
    };
    let n = count(dims);
    let per_block = if bits == 64 { 2 } else { 4 };
    let blocks = n.div_ceil(per_block) as u64;
    let values = (0..n)
        .map(|i| {
            let (j, c) = ((i / per_block) as u64, i % per_block);
            let x = block(j);
            match bits {
                64 => u64::from(x[2 * c]) | u64::from(x[2 * c + 1]) << 32,
                _ => u64::from(x[c]),
            }
        })
        .collect();
    let (new_low, new_high) = advanced(blocks);
    let new_state =
        if state.len() >= 3 { vec![state[0], new_low, new_high] } else { vec![state[0], new_low] };
    (new_state, values)
}

/// The new state and the bits (as `u64`s, each of the low `bits` bits) of
/// `rng_bit_generator(algorithm, state, shape of dims)` for a requested type of `bits` bits.
pub fn random_bits(
    algorithm: RandomAlgorithm,
    state: &[u64],
    dims: &[i64],
    bits: u32,
) -> (Vec<u64>, Vec<u64>) {
    let wide = bits.max(32);
    let (new_state, values) = match algorithm {
        RandomAlgorithm::ThreeFry => threefry_bits(state, dims, wide),
        RandomAlgorithm::Philox | RandomAlgorithm::Default => philox_bits(state, dims, wide),
    };
    let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    (new_state, values.into_iter().map(|v| v & mask).collect())
}

/// `rng_bit_generator(algorithm, state, shape)`: the new state and the bits.
pub fn rng_bit_generator(algorithm: RandomAlgorithm, state: &Array, shape: &Shape) -> Vec<Array> {
    let bits = storage_bits(shape.element_type());
    let bits_type = match bits {
        8 => ElementType::U8,
        16 => ElementType::U16,
        32 => ElementType::U32,
        _ => ElementType::U64,
    };
    let dims = shape.dimensions();
    if !state.is_exact() {
        return vec![
            Array {
                ty: state.ty,
                dims: state.dims.clone(),
                elems: vec![Elem::unknown_of(state.ty); state.elems.len()],
            },
            Array {
                ty: bits_type,
                dims: dims.to_vec(),
                elems: vec![Elem::unknown_of(bits_type); count(dims)],
            },
        ];
    }
    let words: Vec<u64> = state.elems.iter().map(|e| e.value.int() as u64).collect();
    let (new_state, values) = random_bits(algorithm, &words, dims, bits);
    let exact = |v: Vec<u64>| v.into_iter().map(|w| Elem::int(i128::from(w))).collect();
    vec![
        Array { ty: state.ty, dims: state.dims.clone(), elems: exact(new_state) },
        Array { ty: bits_type, dims: dims.to_vec(), elems: exact(values) },
    ]
}
