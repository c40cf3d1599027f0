//! Which instruction set the loop engine's kernels run: detected once, at run time.

/// The instruction sets a chunk op is compiled for; the best one the CPU has is chosen at
/// run time, so users need no `target-cpu` flags (the fused loops are
/// compute-bound in cache, and wider vectors pay).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Level {
    Baseline,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

/// The widest instruction set this CPU supports, detected on the first call (every chunk op
/// asks, so the answer is kept in one `OnceLock` read rather than six feature tests).
pub(super) fn level() -> Level {
    static LEVEL: std::sync::OnceLock<Level> = std::sync::OnceLock::new();
    *LEVEL.get_or_init(detect_level)
}

/// The widest instruction set this CPU supports.
pub(super) fn detect_level() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512vl")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512dq")
            && is_x86_feature_detected!("fma")
        {
            return Level::Avx512;
        }
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
            return Level::Avx2;
        }
    }
    Level::Baseline
}
