//! Maximum errors: every `f32` function against an `f64` reference over a dense sample of all
//! inputs (all of them in the ignored `*_full` tests), every `f64` function against libm on
//! random samples. The references apply XLA's denormal rules (flushed results, arguments
//! read as zero where XLA reads them so) so that those points are checked too.

use rayon::prelude::*;

use super::super::{exp_log, hyperbolic, pow, roots, special, trig, Fused, Separate};
use super::{dense_sample, libm_erf, ulps_f32, ulps_f64, Rng};

/// One `f32` function (with separate and with fused multiply-adds), its reference, and the
/// largest error it may have, in ulps.
struct Case {
    name: &'static str,
    ours: [fn(f32) -> f32; 2],
    reference: fn(f32) -> f64,
    bound: f64,
}

/// A [`Case`] of the function at `$path` (generic over the type and the `MulAdd`).
macro_rules! case {
    ($name:literal, $($path:ident)::+, $reference:expr, $bound:expr) => {
        Case {
            name: $name,
            ours: [$($path)::+::<f32, Separate>, $($path)::+::<f32, Fused>],
            reference: $reference,
            bound: $bound,
        }
    };
}

/// An exact result below the normal range as XLA's runtime leaves it: ±0.
fn flush(y: f64) -> f64 {
    if y.abs() < f64::from(f32::MIN_POSITIVE) {
        y * 0.0
    } else {
        y
    }
}

/// A denormal argument read as ±0, as XLA's runtime reads it.
fn daz(x: f32) -> f64 {
    if x.abs() < f32::MIN_POSITIVE {
        f64::from(x) * 0.0
    } else {
        f64::from(x)
    }
}

const CASES: &[Case] = &[
    case!("exp", exp_log::exp, |x| flush(f64::from(x).exp()), 1.0),
    case!("expm1", exp_log::expm1, |x| f64::from(x).exp_m1(), 2.0),
    case!("log", exp_log::log, |x| daz(x).ln(), 1.0),
    case!("log1p", exp_log::log1p, |x| daz(x).ln_1p(), 2.0),
    case!("tanh", hyperbolic::tanh, |x| f64::from(x).tanh(), 5.5),
    case!("logistic", hyperbolic::logistic, |x| flush(1.0 / (1.0 + (-f64::from(x)).exp())), 2.5),
    case!("sin", trig::sin, |x| f64::from(x).sin(), 1.0),
    case!("cos", trig::cos, |x| f64::from(x).cos(), 1.0),
    case!("tan", trig::tan, |x| daz(x).tan(), 1.5),
    case!("erf", special::erf, |x| libm_erf(daz(x)), 2.0),
    Case { name: "sqrt", ours: [roots::sqrt, roots::sqrt], reference: |x| daz(x).sqrt(), bound: 0.5 },
    Case {
        name: "rsqrt",
        ours: [roots::rsqrt, roots::rsqrt],
        reference: |x| 1.0 / daz(x).sqrt(),
        bound: 1.5,
    },
    case!("cbrt", roots::cbrt, |x| f64::from(x).cbrt(), 1.0),
];

/// The largest error of the `variants` of `case` over `inputs`, and an input where it occurs.
fn worst(case: &Case, variants: &[fn(f32) -> f32], inputs: impl Iterator<Item = u32>) -> (f64, f32) {
    let mut worst = (0.0, 0.0);
    for x in inputs.map(f32::from_bits) {
        let want = (case.reference)(x);
        for ours in variants {
            let error = ulps_f32(ours(x), want);
            if error > worst.0 {
                worst = (error, x);
            }
        }
    }
    worst
}

#[test]
fn f32_functions_meet_their_bounds_on_a_dense_sample() {
    for case in CASES {
        let (error, x) = worst(case, &case.ours, dense_sample());
        println!("{:>8}: max {error:.3} ulps at {x:e}", case.name);
        assert!(error <= case.bound, "{}({x:e}) is {error} ulps off (bound {})", case.name, case.bound);
    }
}

/// Functions whose values lie in a range never leave it, with either variant: `tanh`, `erf`,
/// `sin` and `cos` stay in `[-1, 1]`, `logistic` in `[0, 1]`, `exp` and `sqrt` at least 0 (`-0`
/// included), `expm1` at least -1 (not `rsqrt`: it is `-∞` at `-0` and at negative denormals).
/// Over the dense sample (NaN results aside: the ulp sweeps check where they belong), and for
/// `tanh` over every `f32` from 8 to 9.05 (the end of its rational's fit), both signs: its
/// rational rises to `1 + 2⁻²³` for 31,876 arguments between 8.13 and 9.01, within `tanh`'s ulp
/// bound, and only this catches it.
#[test]
fn bounded_functions_never_leave_their_range() {
    let near_saturation: Vec<u32> =
        (8.0f32.to_bits()..=9.05f32.to_bits()).flat_map(|bits| [bits, bits | 0x8000_0000]).collect();
    let sample: Vec<u32> = dense_sample().collect();
    let ranges = [
        ("tanh", -1.0, 1.0),
        ("logistic", 0.0, 1.0),
        ("erf", -1.0, 1.0),
        ("sin", -1.0, 1.0),
        ("cos", -1.0, 1.0),
        ("exp", 0.0, f32::INFINITY),
        ("expm1", -1.0, f32::INFINITY),
        ("sqrt", 0.0, f32::INFINITY),
    ];
    for (name, low, high) in ranges {
        let case = CASES.iter().find(|case| case.name == name).expect("a case of every bounded function");
        let sets: &[&Vec<u32>] = if name == "tanh" { &[&sample, &near_saturation] } else { &[&sample] };
        for inputs in sets {
            let outside = inputs.par_iter().map(|&bits| f32::from_bits(bits)).find_any(|&x| {
                case.ours.iter().map(|ours| ours(x)).any(|y| !(low..=high).contains(&y) && !y.is_nan())
            });
            assert_eq!(outside, None, "{name} leaves [{low}, {high}] at this argument");
        }
    }
    // From `TANH_ONE_FROM` on, exactly ±1.
    let one_from = hyperbolic::TANH_ONE_FROM;
    for x in [one_from, 9.0, 9.05, f32::INFINITY] {
        assert_eq!(hyperbolic::tanh::<f32, Fused>(x), 1.0);
        assert_eq!(hyperbolic::tanh::<f32, Fused>(-x), -1.0);
    }
    let below = f32::from_bits(one_from.to_bits() - 1);
    assert!(hyperbolic::tanh::<f32, Fused>(below) < 1.0);
}

/// All 2³² inputs of each function, with fused multiply-adds (what chunk loops run on every
/// CPU with AVX2 or AVX-512; the separate variant is checked on the dense sample above), on
/// every thread (two to five minutes per function on two cores, in a release build):
/// `cargo test --release --lib math -- --ignored --nocapture` prints the maxima;
/// `MATH_SWEEP=tanh,exp` limits it to those functions.
#[test]
#[ignore]
fn f32_functions_meet_their_bounds_on_every_input() {
    let only = std::env::var("MATH_SWEEP").ok();
    let chosen = |name: &str| only.as_deref().is_none_or(|list| list.split(',').any(|n| n == name));
    for case in CASES.iter().filter(|case| chosen(case.name)) {
        let (error, x) = (0..1u32 << 16)
            .into_par_iter()
            .map(|high| worst(case, &case.ours[1..], (high << 16)..=(high << 16 | 0xffff)))
            .reduce(|| (0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a });
        println!("{:>8}: max {error:.3} ulps at {x:e} ({:#010x})", case.name, x.to_bits());
        assert!(error <= case.bound, "{}({x:e}) is {error} ulps off (bound {})", case.name, case.bound);
    }
}

/// Pairs for the binary functions: random bit patterns, and random magnitudes near each other.
fn pairs(seed: u64, count: usize) -> Vec<(f32, f32)> {
    let mut rng = Rng::new(seed);
    (0..count)
        .map(|i| {
            let a = f32::from_bits(rng.next() as u32);
            let b = if i % 2 == 0 {
                f32::from_bits(rng.next() as u32)
            } else {
                a * (rng.next() as u32 as f32 / u32::MAX as f32 * 4.0 - 2.0)
            };
            (a, b)
        })
        .collect()
}

#[test]
fn f32_atan2_within_two_ulps() {
    let worst = pairs(11, 1 << 20)
        .into_iter()
        .filter(|(y, x)| {
            y.abs() >= f32::MIN_POSITIVE && x.abs() >= f32::MIN_POSITIVE || *y == 0.0 || *x == 0.0
        })
        .flat_map(|(y, x)| {
            let want = f64::from(y).atan2(f64::from(x));
            [trig::atan2::<f32, Separate>(y, x), trig::atan2::<f32, Fused>(y, x)]
                .map(|got| (ulps_f32(got, want), y, x))
        })
        .fold((0.0, 0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a });
    assert!(worst.0 <= 2.0, "atan2({:e}, {:e}) is {} ulps off", worst.1, worst.2, worst.0);
}

#[test]
fn f32_pow_within_one_ulp() {
    let mut inputs = pairs(13, 1 << 20);
    // Bases near 1 with large exponents, where ln x·y needs its extra precision.
    let mut rng = Rng::new(17);
    inputs.extend((0..1 << 16).map(|_| {
        let x = 1.0 + (rng.next() as u32 as f32 / u32::MAX as f32 - 0.5) * 1e-3;
        (x, (rng.next() as u32 as f32 / u32::MAX as f32 - 0.5) * 1e5)
    }));
    let worst = inputs
        .into_iter()
        .flat_map(|(x, y)| {
            let want = flush(f64::from(x).powf(f64::from(y)));
            [pow::pow::<f32, Separate>(x, y), pow::pow::<f32, Fused>(x, y)]
                .map(|got| (ulps_f32(got, want), x, y))
        })
        .fold((0.0, 0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a });
    assert!(worst.0 <= 1.0, "pow({:e}, {:e}) is {} ulps off", worst.1, worst.2, worst.0);
}

/// One `f64` function against libm, on random numbers of magnitude up to `2^max_exponent`.
struct Case64 {
    name: &'static str,
    ours: [fn(f64) -> f64; 2],
    reference: fn(f64) -> f64,
    max_exponent: i32,
    bound: f64,
}

/// An exact result below the normal range as XLA's runtime leaves it: ±0.
fn flush64(y: f64) -> f64 {
    if y.abs() < f64::MIN_POSITIVE {
        y * 0.0
    } else {
        y
    }
}

fn daz64(x: f64) -> f64 {
    if x.abs() < f64::MIN_POSITIVE {
        x * 0.0
    } else {
        x
    }
}

/// A [`Case64`] of the function at `$path`, in both `MulAdd` variants.
macro_rules! case64 {
    ($name:literal, $($path:ident)::+, $reference:expr, $max_exponent:expr, $bound:expr) => {
        Case64 {
            name: $name,
            ours: [$($path)::+::<f64, Separate>, $($path)::+::<f64, Fused>],
            reference: $reference,
            max_exponent: $max_exponent,
            bound: $bound,
        }
    };
}

const CASES_64: &[Case64] = &[
    case64!("exp", exp_log::exp, |x| flush64(x.exp()), 10, 1.5),
    case64!("expm1", exp_log::expm1, f64::exp_m1, 10, 1.5),
    case64!("log", exp_log::log, |x| daz64(x).ln(), 1024, 1.5),
    case64!("log1p", exp_log::log1p, |x| daz64(x).ln_1p(), 1024, 2.0),
    case64!("tanh", hyperbolic::tanh, |x| daz64(x).tanh(), 6, 3.0),
    case64!("logistic", hyperbolic::logistic, |x| flush64(1.0 / (1.0 + (-x).exp())), 10, 3.0),
    case64!("sin", trig::sin, f64::sin, 30, 2.0),
    case64!("cos", trig::cos, f64::cos, 30, 2.0),
    case64!("tan", trig::tan, |x| daz64(x).tan(), 30, 2.5),
    case64!("erf", special::erf, |x| libm_erf(daz64(x)), 3, 2.0),
    Case64 {
        name: "rsqrt",
        ours: [roots::rsqrt, roots::rsqrt],
        reference: |x| 1.0 / daz64(x).sqrt(),
        max_exponent: 1024,
        bound: 1.5,
    },
    case64!("cbrt", roots::cbrt, f64::cbrt, 1024, 1.5),
];

/// `count` random `f64` of both signs: half uniform in magnitude below `2^max_exponent`,
/// half with random bits (every exponent up to it, denormals included).
fn sample64(seed: u64, max_exponent: i32, count: usize) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    let limit = 2f64.powi(max_exponent.min(1023));
    (0..count)
        .map(|i| {
            let bits = rng.next();
            let x = if i % 2 == 0 {
                (bits >> 11) as f64 / (1u64 << 53) as f64 * limit
            } else {
                let exponent = (bits >> 52) % (1023 + max_exponent as u64).min(2047);
                f64::from_bits((exponent << 52) | (bits & ((1 << 52) - 1)))
            };
            if bits & 1 == 1 {
                -x
            } else {
                x
            }
        })
        .collect()
}

#[test]
fn f64_functions_within_their_bounds_of_libm() {
    for (k, case) in CASES_64.iter().enumerate() {
        let (error, x) = sample64(k as u64 + 100, case.max_exponent, 1 << 17)
            .into_iter()
            .flat_map(|x| case.ours.map(|ours| (ulps_f64(ours(x), (case.reference)(x)), x)))
            .fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a });
        println!("f64 {:>8}: max {error:.3} ulps at {x:e}", case.name);
        assert!(
            error <= case.bound,
            "f64 {}({x:e}) is {error} ulps off libm (bound {})",
            case.name,
            case.bound
        );
    }
}

/// `f64` pow of a denormal base is its power, as libm gives it, within pow's bound (XLA reads
/// the base as 2⁻¹⁰⁷⁵: `pow(5.56e-309, 0.25)` is 1.25e-81 there; the fuzzer found it
/// 1.09e-77 here, where 8.64e-78 is right, before denormals were scaled).
#[test]
fn f64_pow_of_a_denormal_base_within_its_bound_of_libm() {
    let mut rng = Rng::new(4);
    for _ in 0..1 << 14 {
        // Every denormal binade, and powers that land anywhere from underflow to overflow.
        let x = f64::from_bits(rng.next() >> (12 + rng.next() % 52));
        let y = ((rng.next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 2.5;
        let want = flush64(x.powf(y));
        for got in [pow::pow::<f64, Separate>(x, y), pow::pow::<f64, Fused>(x, y)] {
            assert!(ulps_f64(got, want) <= 6.0, "f64 pow({x:e}, {y:e}) is {got:e}, libm {want:e}");
        }
    }
    assert_eq!(pow::pow::<f64, Fused>(5.562_684_646_268_003_5e-309, 0.25), 8.636_168_555_094_445e-78);
}

#[test]
fn f64_atan2_and_pow_within_their_bounds_of_libm() {
    let xs = sample64(1, 1023, 1 << 17);
    let ys = sample64(2, 1023, 1 << 17);
    let mut worst_atan2 = (0.0, 0.0, 0.0);
    for (&y, &x) in ys.iter().zip(&xs) {
        let error = ulps_f64(trig::atan2::<f64, Separate>(y, x), y.atan2(x))
            .max(ulps_f64(trig::atan2::<f64, Fused>(y, x), y.atan2(x)));
        if error > worst_atan2.0 {
            worst_atan2 = (error, y, x);
        }
    }
    assert!(
        worst_atan2.0 <= 2.0,
        "f64 atan2({:e}, {:e}) is {} ulps off libm",
        worst_atan2.1,
        worst_atan2.2,
        worst_atan2.0
    );
    let mut rng = Rng::new(3);
    let mut worst_pow = (0.0, 0.0, 0.0);
    for _ in 0..1 << 17 {
        let x = (rng.next() >> 11) as f64 / (1u64 << 53) as f64 * 8.0;
        let y = ((rng.next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 600.0;
        let want = flush64(x.powf(y));
        let error =
            ulps_f64(pow::pow::<f64, Separate>(x, y), want).max(ulps_f64(pow::pow::<f64, Fused>(x, y), want));
        if error > worst_pow.0 {
            worst_pow = (error, x, y);
        }
    }
    println!("f64 atan2: max {} ulps, pow: max {} ulps", worst_atan2.0, worst_pow.0);
    assert!(
        worst_pow.0 <= 6.0,
        "f64 pow({:e}, {:e}) is {} ulps off libm",
        worst_pow.1,
        worst_pow.2,
        worst_pow.0
    );
}
