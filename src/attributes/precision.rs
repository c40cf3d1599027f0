//! `Precision` and `PrecisionConfig`: how precisely a backend should compute each operand of a
//! dot or a convolution (xla_data.proto's `PrecisionConfig`).

/// How precisely an operand of a dot or convolution is computed (xla_data.proto's
/// `PrecisionConfig.Precision`). lazy-xla computes every product at the full precision of
/// its type whatever this says; it matters where an exported module runs: XLA's GPU backend
/// runs a `Default` f32 dot in TF32.
///
/// ```
/// use lazy_xla::Precision;
/// assert_eq!(Precision::default(), Precision::Default);
/// assert_eq!(Precision::Highest.hlo_name(), "highest");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Precision {
    /// The backend's fastest (on GPUs, TF32 for f32).
    #[default]
    Default,
    /// More precise than `Default` where the backend has such a mode (bf16×3 on TPUs).
    High,
    /// The type's full precision.
    Highest,
}

impl Precision {
    /// The name HLO text gives it.
    pub fn hlo_name(self) -> &'static str {
        match self {
            Precision::Default => "default",
            Precision::High => "high",
            Precision::Highest => "highest",
        }
    }
}

/// The precision of each operand of a dot or convolution (xla_data.proto's
/// `PrecisionConfig`); empty means every operand `Default`.
///
/// ```
/// use lazy_xla::*;
/// let highest = PrecisionConfig { operand_precision: vec![Precision::Highest, Precision::Highest] };
/// let b = XlaBuilder::new("precise");
/// let x = b.parameter(0, &shape!(f32[2, 3]), "x");
/// let w = b.parameter(1, &shape!(f32[3, 4]), "w");
/// let text = b.build(dot_with(x, w, Some(&highest), None))?.to_hlo_text();
/// assert!(text.contains("operand_precision={highest,highest}"));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PrecisionConfig {
    /// One precision per operand, in operand order.
    pub operand_precision: Vec<Precision>,
}

impl PrecisionConfig {
    /// The `operand_precision={..}` attribute as XLA prints it: the first two entries (a
    /// single one padded with `default`), and nothing when both are `Default` (whatever
    /// entries follow them).
    pub(crate) fn hlo_attribute(&self) -> Option<String> {
        let entry = |i: usize| self.operand_precision.get(i).copied().unwrap_or_default();
        if [entry(0), entry(1)] == [Precision::Default; 2] {
            return None;
        }
        Some(format!("operand_precision={{{},{}}}", entry(0).hlo_name(), entry(1).hlo_name()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_attribute_prints_as_xla_prints_it() {
        let config = |list: &[Precision]| PrecisionConfig { operand_precision: list.to_vec() };
        use Precision::*;
        assert_eq!(config(&[]).hlo_attribute(), None);
        assert_eq!(config(&[Default, Default]).hlo_attribute(), None);
        assert_eq!(
            config(&[Highest]).hlo_attribute().as_deref(),
            Some("operand_precision={highest,default}")
        );
        assert_eq!(
            config(&[Default, High]).hlo_attribute().as_deref(),
            Some("operand_precision={default,high}")
        );
        assert_eq!(
            config(&[High, Highest, Highest]).hlo_attribute().as_deref(),
            Some("operand_precision={high,highest}")
        );
        // Asked jaxlib 0.6.0: entries after the second are not printed, even when they are
        // all that is not `Default`.
        assert_eq!(config(&[Default, Default, Highest]).hlo_attribute(), None);
        assert_eq!(config(&[Default, Default, Highest, Highest]).hlo_attribute(), None);
    }
}
