//! The error function.
//!
//! `erf x = x·p(x²)` below 1; from 1 to saturation `erf |x| = 1 - e^{q(|x|)}` with `q` a
//! polynomial fit of `ln erfc` (weighted by `erfc`, the error that reaches `erf`); ±1 beyond.
//! Both halves are computed for every lane and one is selected.

use super::exp_log::{exp, ExpLog};
use super::real::{clamp, daz, poly, select, MulAdd};

/// The constants of `erf` for one float type.
pub(crate) trait Erf: ExpLog {
    /// `erf x` rounds to ±1 beyond this magnitude.
    const SATURATION: Self;
    /// `erf(x) / x - 1` in `x²` on `[0, 1]`.
    const SMALL: &'static [Self];

    /// `ln erfc a` for `a` in `[1, SATURATION]`.
    fn log_erfc<M: MulAdd>(a: Self) -> Self;
}

impl Erf for f32 {
    const SATURATION: f32 = 3.92;
    const SMALL: &'static [f32] = &[
        0.128_379_17,
        -0.376_126_26,
        0.112_835_854,
        -0.026_853_813,
        0.005_188_327_7,
        -0.000_801_019_37,
        7.853_861_5e-5,
    ];

    #[inline(always)]
    fn log_erfc<M: MulAdd>(a: f32) -> f32 {
        const Q: &[f32] = &[
            0.000_188_468_39,
            -1.129_580_3,
            -0.633_216_4,
            -0.108_422_1,
            0.025_210_341,
            -0.004_205_285,
            0.000_441_472_74,
            -2.169_762_2e-5,
        ];
        poly::<M, _>(a, Q)
    }
}

impl Erf for f64 {
    const SATURATION: f64 = 6.0;
    const SMALL: &'static [f64] = &[
        0.128_379_167_095_512_6,
        -0.376_126_389_031_837_5,
        0.112_837_916_709_548_57,
        -0.026_866_170_645_072_893,
        0.005_223_977_624_780_861,
        -0.000_854_832_697_874_186_9,
        0.000_120_553_310_368_869_98,
        -1.492_559_350_657_886_6e-5,
        1.646_097_281_192_878e-6,
        -1.635_002_516_795_649_6e-7,
        1.465_787_947_260_992_8e-8,
        -1.136_566_453_614_102_5e-9,
        5.945_259_355_765_948e-11,
    ];

    /// Two pieces, each a polynomial in the distance from its interval's middle.
    #[inline(always)]
    fn log_erfc<M: MulAdd>(a: f64) -> f64 {
        const NEAR: &[f64] = &[
            -4.317_863_525_433_222,
            -3.959_610_900_813_415_5,
            -0.909_940_166_496_745_1,
            -0.020_538_840_381_666_378,
            0.004_624_930_499_165_8,
            -0.000_964_098_648_036_355_8,
            0.000_174_523_061_357_639_18,
            -2.374_147_527_242_398e-5,
            8.275_331_208_414_78e-7,
            8.909_300_419_400_761e-7,
            -4.019_433_128_951_607_3e-7,
            1.129_066_282_354_061_1e-7,
            -2.313_081_959_284_261e-8,
            3.142_437_138_003_065e-9,
            3.938_756_481_355_255_4e-10,
            -4.961_016_769_583_216e-10,
        ];
        const FAR: &[f64] = &[
            -20.107_769_901_469_723,
            -8.723_775_715_518_242,
            -0.976_084_576_395_246_8,
            -0.003_263_744_318_063_768,
            0.000_480_528_741_903_181_1,
            -7.237_971_907_728_867e-5,
            1.087_929_121_150_152_5e-5,
            -1.606_881_130_871_935_7e-6,
            2.301_511_993_385_086_6e-7,
            -3.144_958_388_030_577_4e-8,
            4.076_203_669_049_049e-9,
            -5.001_782_083_242_452e-10,
            3.855_600_298_290_97e-11,
            2.226_127_962_905_611_7e-12,
        ];
        select(a < 2.5, poly::<M, _>(a - 1.75, NEAR), poly::<M, _>(a - 4.25, FAR))
    }
}

/// The error function; denormals read as ±0, as in XLA.
#[inline(always)]
pub(crate) fn erf<T: Erf, M: MulAdd>(x: T) -> T {
    let x = daz(x);
    let a = x.abs();
    // x + x·(erf(x)/x - 1): the rounding errors stay in the small term.
    let small = x + x * poly::<M, _>(x * x, T::SMALL);
    let large = (T::ONE - exp::<T, M>(T::log_erfc::<M>(clamp(a, T::ONE, T::SATURATION)))).copysign(x);
    select(a < T::ONE, small, large)
}
