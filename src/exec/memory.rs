//! What a compiled computation needs in memory ([`MemoryStats`], planned by
//! `buffer_assignment.rs`), and the check that a run can have it before it allocates: against
//! [`CompileOptions::memory_limit`](crate::CompileOptions::memory_limit) and against the memory
//! the system says is available, so an oversubscribed run is an [`Error`], never an OOM kill.

use crate::error::{Error, Result};

/// The memory a compiled computation uses, planned at compile time (XLA's
/// `CompiledMemoryStats`, jax's `compiled.memory_analysis()`), in bytes.
///
/// `peak_bytes` is the most memory live at once under the plan: the arguments, the
/// temporaries live at the step where the most are (buffers whose live ranges do not overlap
/// share memory), the kernels' scratch and the plans of loop bodies and branches, or at the
/// end the outputs. Constants belong to the executable and are not counted.
///
/// ```
/// use lazy_xla::*;
/// let b = XlaBuilder::new("chain");
/// let x = b.parameter(0, &shape!(f32[1024]), "x");
/// let exe = b.build(exp(exp(exp(x))))?.compile(&CompileOptions::unfused())?;
/// let stats: MemoryStats = exe.memory_stats();
/// assert_eq!((stats.argument_bytes, stats.output_bytes), (4096, 4096));
/// // The first exp's buffer is free again by the time the third one is computed.
/// assert!(stats.peak_bytes <= 3 * 4096, "{stats:?}");
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryStats {
    /// The bytes of the arguments (every parameter's buffer).
    pub argument_bytes: u64,
    /// The bytes of the result (every array of it).
    pub output_bytes: u64,
    /// The bytes of the heap the temporaries share: one allocation per run, reused.
    pub temp_bytes: u64,
    /// The most bytes live at once: arguments, temporaries, scratch and outputs.
    pub peak_bytes: u64,
    /// The bytes of the arguments and of every array a run computes, scratch included, were
    /// none freed or shared: what the plan saves against.
    pub unplanned_bytes: u64,
}

impl MemoryStats {
    /// An error unless a run of this plan, whose arguments are already in memory, fits: its
    /// peak within `limit` (if one is set), and what it still has to allocate (the peak less
    /// the arguments, plus `extra` bytes of argument copies) within the memory the system has
    /// available. Checked before anything large is allocated.
    pub(crate) fn check_fits(&self, limit: Option<u64>, extra: u64) -> Result<()> {
        let needed = self.peak_bytes.saturating_add(extra);
        if let Some(limit) = limit.filter(|&limit| needed > limit) {
            return Err(Error::ResourceExhausted { needed, available: limit, by: "the memory_limit".into() });
        }
        let allocated = needed.saturating_sub(self.argument_bytes);
        match available_memory() {
            Some(available) if allocated > available => Err(Error::ResourceExhausted {
                needed: allocated,
                available,
                by: "the memory the system has available".into(),
            }),
            _ => Ok(()),
        }
    }
}

/// The bytes of memory the system says are available to this process now: Linux's
/// `MemAvailable`, or less where a cgroup limits the process (`memory.max` less
/// `memory.current`). `None` where it cannot tell.
pub(crate) fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|line| line.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    let system = kib.saturating_mul(1024);
    let read = |file: &str| -> Option<u64> {
        std::fs::read_to_string(format!("/sys/fs/cgroup/{file}")).ok()?.trim().parse().ok()
    };
    let cgroup = match (read("memory.max"), read("memory.current")) {
        (Some(max), Some(current)) => Some(max.saturating_sub(current)),
        _ => None,
    };
    Some(cgroup.map_or(system, |cgroup| cgroup.min(system)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_over_the_limit_or_the_system_is_an_error_naming_both_numbers() {
        let stats = MemoryStats {
            argument_bytes: 100,
            output_bytes: 100,
            temp_bytes: 300,
            peak_bytes: 500,
            unplanned_bytes: 900,
        };
        assert!(stats.check_fits(Some(500), 0).is_ok());
        let message = stats.check_fits(Some(499), 0).unwrap_err().to_string();
        assert!(message.contains("needs 500 bytes") && message.contains("499 available"), "{message}");
        assert!(stats.check_fits(Some(520), 30).is_err(), "argument copies count");
        if let Some(available) = available_memory() {
            let huge = MemoryStats { peak_bytes: available.saturating_mul(2).max(u64::MAX / 2), ..stats };
            let message = huge.check_fits(None, 0).unwrap_err().to_string();
            assert!(message.contains("the memory the system has available"), "{message}");
        }
    }
}
