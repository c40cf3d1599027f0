//! `RandomAlgorithm`: which counter-based generator `rng_bit_generator` runs.

/// The bit generator of `rng_bit_generator` (xla_data.proto's `RandomAlgorithm`); `Default`
/// is what XLA's CPU backend picks for it, Philox.
///
/// ```
/// use lazy_xla::RandomAlgorithm;
/// assert_eq!(RandomAlgorithm::default(), RandomAlgorithm::Default);
/// assert_eq!(RandomAlgorithm::ThreeFry.hlo_name(), "rng_three_fry");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RandomAlgorithm {
    /// The backend's choice: Philox on XLA's CPU backend.
    #[default]
    Default,
    /// Threefry-2x32 (20 rounds); the state is `u64[2]`: key, counter.
    ThreeFry,
    /// Philox-4x32 (10 rounds); the state is `u64[2]` (key, counter) or `u64[3]` (key,
    /// counter low, counter high).
    Philox,
}

impl RandomAlgorithm {
    /// The algorithm's name in HLO text.
    pub fn hlo_name(self) -> &'static str {
        match self {
            RandomAlgorithm::Default => "rng_default",
            RandomAlgorithm::ThreeFry => "rng_three_fry",
            RandomAlgorithm::Philox => "rng_philox",
        }
    }
}
