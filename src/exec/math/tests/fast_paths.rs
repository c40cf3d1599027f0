//! The fast parts chunk loops run on every lane (`exp_fast`, `sin_fast`, …) equal the complete
//! functions bit for bit wherever [`beyond_fast`] lets them stand.

use super::super::{beyond_fast, exp_log, trig, FastPath, Fused, MulAdd, Separate};
use super::Rng;

/// A fast part, the complete function, and the path that says where the first stands for the
/// second.
type Pair<T> = (&'static str, fn(T) -> T, fn(T) -> T, FastPath);

fn pairs<T: trig::Trig + exp_log::ExpLog, M: MulAdd>() -> [Pair<T>; 4] {
    [
        ("exp", exp_log::exp_fast::<T, M>, exp_log::exp::<T, M>, FastPath::Exp),
        ("sin", trig::sin_fast::<T, M>, trig::sin::<T, M>, FastPath::Trig),
        ("cos", trig::cos_fast::<T, M>, trig::cos::<T, M>, FastPath::Trig),
        ("tan", trig::tan_fast::<T, M>, trig::tan::<T, M>, FastPath::Trig),
    ]
}

/// Every 4099th bit pattern, every `f32` from ±87.2 to ±87.4 (where `exp`'s results turn
/// denormal), the first 2¹⁶ from 88.7 on (its overflow), and 2¹⁸ random bit patterns.
fn f32_inputs() -> impl Iterator<Item = f32> {
    let mut rng = Rng::new(19);
    let edge = 87.2f32.to_bits()..=87.4f32.to_bits();
    (0..=u32::MAX)
        .step_by(4099)
        .chain(edge.clone())
        .chain(edge.map(|bits| bits | 0x8000_0000))
        .chain((88.7f32.to_bits()..=88.8f32.to_bits()).take(1 << 16))
        .chain((0..1 << 18).map(move |_| rng.next() as u32))
        .map(f32::from_bits)
}

/// 2¹⁹ values: a third random bit patterns, a third each within 2 of `exp`'s fast bounds.
fn f64_inputs() -> impl Iterator<Item = f64> {
    let mut rng = Rng::new(23);
    (0..1 << 19).map(move |i| {
        let bits = rng.next();
        let near = |bound: f64| bound + (bits >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0;
        match i % 3 {
            0 => f64::from_bits(bits),
            1 => near(-708.3),
            _ => near(709.78),
        }
    })
}

fn check<T: trig::Trig + exp_log::ExpLog + std::fmt::Debug>(
    inputs: impl Iterator<Item = T>,
    same: fn(T, T) -> bool,
    pairs: &[Pair<T>],
) -> usize {
    let mut checked = 0;
    for x in inputs {
        for &(name, fast, complete, path) in pairs {
            if !beyond_fast(x, path) {
                checked += 1;
                assert!(
                    same(fast(x), complete(x)),
                    "{name}_fast({x:?}) is {:?}, {name} {:?}",
                    fast(x),
                    complete(x)
                );
            }
        }
    }
    checked
}

#[test]
fn fast_parts_equal_the_complete_functions_where_they_stand() {
    let same32 = |a: f32, b: f32| a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan();
    let same64 = |a: f64, b: f64| a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan();
    let mut checked = check(f32_inputs(), same32, &pairs::<f32, Separate>());
    checked += check(f32_inputs(), same32, &pairs::<f32, Fused>());
    checked += check(f64_inputs(), same64, &pairs::<f64, Separate>());
    checked += check(f64_inputs(), same64, &pairs::<f64, Fused>());
    // Most inputs lie inside each fast part: the comparison ran.
    assert!(checked > 4_000_000, "only {checked} inputs inside the fast parts");
}

#[test]
fn exp_beyond_fast_takes_nan_overflow_and_results_below_normal() {
    for x in [f32::NAN, 88.8, f32::INFINITY, -87.34, -88.0, f32::NEG_INFINITY] {
        assert!(beyond_fast(x, FastPath::Exp), "{x}");
    }
    for x in [-87.3, 0.0, -0.0, 1e-40, 88.72283] {
        assert!(!beyond_fast(x, FastPath::Exp), "{x}");
    }
}
