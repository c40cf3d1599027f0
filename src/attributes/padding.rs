//! `PaddingConfig`: how `pad` grows (or cuts) each dimension.

use std::fmt;

/// Padding of one dimension (xla_data.proto's `PaddingConfigDimension`).
///
/// ```
/// let p = lazy_xla::PaddingConfigDimension { edge_padding_low: 1, edge_padding_high: -1, interior_padding: 2 };
/// assert_eq!(p.interior_padding, 2);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PaddingConfigDimension {
    /// Elements added before the first (negative: removed).
    pub edge_padding_low: i64,
    /// Elements added after the last (negative: removed).
    pub edge_padding_high: i64,
    /// Elements added between each pair of neighbours (never negative).
    pub interior_padding: i64,
}

/// Padding of every dimension (xla_data.proto's `PaddingConfig`).
///
/// ```
/// use lazy_xla::{PaddingConfig, PaddingConfigDimension};
/// let config = PaddingConfig { dimensions: vec![PaddingConfigDimension::default(); 2] };
/// assert_eq!(config.dimensions.len(), 2);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PaddingConfig {
    /// One entry per dimension of the operand.
    pub dimensions: Vec<PaddingConfigDimension>,
}

impl PaddingConfig {
    /// A configuration from one `(edge_padding_low, edge_padding_high, interior_padding)`
    /// triple per dimension.
    ///
    /// ```
    /// use lazy_xla::*;
    /// let config = PaddingConfig::new(&[(1, 2, 0), (0, -1, 1)]);
    /// assert_eq!(config.dimensions[1].interior_padding, 1);
    /// let b = XlaBuilder::new("f");
    /// let x = b.parameter(0, &shape!(f32[2, 3]), "x");
    /// assert_eq!(b.get_shape(pad(x, b.constant_r0(0.0f32), &config))?, shape!(f32[5, 4]));
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn new(triples: &[(i64, i64, i64)]) -> PaddingConfig {
        let dimensions = triples
            .iter()
            .map(|&(edge_padding_low, edge_padding_high, interior_padding)| PaddingConfigDimension {
                edge_padding_low,
                edge_padding_high,
                interior_padding,
            })
            .collect();
        PaddingConfig { dimensions }
    }
}

impl fmt::Display for PaddingConfig {
    /// XLA's `PaddingConfigToString`: `lo_hi` per dimension, or `lo_hi_interior` for every
    /// dimension when any has interior padding, joined by `x`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let interior = self.dimensions.iter().any(|d| d.interior_padding != 0);
        let parts: Vec<String> = self
            .dimensions
            .iter()
            .map(|d| {
                if interior {
                    format!("{}_{}_{}", d.edge_padding_low, d.edge_padding_high, d.interior_padding)
                } else {
                    format!("{}_{}", d.edge_padding_low, d.edge_padding_high)
                }
            })
            .collect();
        f.write_str(&parts.join("x"))
    }
}
