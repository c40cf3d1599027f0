//! `ConvolutionDimensionNumbers`: which dimension of a convolution's input, kernel and output
//! is the batch, the feature and each spatial dimension.

/// The roles of a convolution's dimensions (xla_data.proto's `ConvolutionDimensionNumbers`).
///
/// ```
/// use lazy_xla::*;
/// // NHWC images, HWIO kernels (TensorFlow's layout).
/// let nhwc = ConvolutionDimensionNumbers {
///     input_batch_dimension: 0,
///     input_feature_dimension: 3,
///     input_spatial_dimensions: vec![1, 2],
///     kernel_input_feature_dimension: 2,
///     kernel_output_feature_dimension: 3,
///     kernel_spatial_dimensions: vec![0, 1],
///     output_batch_dimension: 0,
///     output_feature_dimension: 3,
///     output_spatial_dimensions: vec![1, 2],
/// };
/// let b = XlaBuilder::new("conv");
/// let x = b.parameter(0, &shape!(f32[2, 8, 8, 3]), "x");
/// let k = b.parameter(1, &shape!(f32[3, 3, 3, 16]), "k");
/// let y = conv_general_dilated(x, k, &[1, 1], &[(1, 1), (1, 1)], &[], &[], &nhwc, 1, 1);
/// assert_eq!(b.get_shape(y)?, shape!(f32[2, 8, 8, 16]));
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ConvolutionDimensionNumbers {
    /// The input's batch dimension.
    pub input_batch_dimension: i64,
    /// The input's feature (channel) dimension.
    pub input_feature_dimension: i64,
    /// The input's spatial dimensions, in window order.
    pub input_spatial_dimensions: Vec<i64>,
    /// The kernel's input feature dimension.
    pub kernel_input_feature_dimension: i64,
    /// The kernel's output feature dimension.
    pub kernel_output_feature_dimension: i64,
    /// The kernel's spatial dimensions, in window order.
    pub kernel_spatial_dimensions: Vec<i64>,
    /// The output's batch dimension.
    pub output_batch_dimension: i64,
    /// The output's feature dimension.
    pub output_feature_dimension: i64,
    /// The output's spatial dimensions, in window order.
    pub output_spatial_dimensions: Vec<i64>,
}

impl ConvolutionDimensionNumbers {
    /// XLA's `CreateDefaultConvDimensionNumbers`: batch then feature then the spatial
    /// dimensions for input and output (NCHW), output then input feature then spatial for the
    /// kernel (OIHW).
    pub(crate) fn default_for(spatial: usize) -> ConvolutionDimensionNumbers {
        let spatial: Vec<i64> = (2..2 + spatial as i64).collect();
        ConvolutionDimensionNumbers {
            input_batch_dimension: 0,
            input_feature_dimension: 1,
            input_spatial_dimensions: spatial.clone(),
            kernel_input_feature_dimension: 1,
            kernel_output_feature_dimension: 0,
            kernel_spatial_dimensions: spatial.clone(),
            output_batch_dimension: 0,
            output_feature_dimension: 1,
            output_spatial_dimensions: spatial,
        }
    }

    /// XLA's `ConvolutionDimensionNumbersToString`: `b01f_01io->b01f` (a letter or the spatial
    /// position for each dimension, in dimension order). The ranks come from the numbers.
    pub(crate) fn dim_labels(&self) -> String {
        let labels = |named: &[(i64, char)], spatial: &[i64]| -> String {
            let rank = 2 + spatial.len();
            let mut text = vec!['?'; rank];
            let mut put = |d: i64, c: char| {
                if let Some(slot) = usize::try_from(d).ok().and_then(|d| text.get_mut(d)) {
                    *slot = c;
                }
            };
            for &(d, c) in named {
                put(d, c);
            }
            for (i, &d) in spatial.iter().enumerate() {
                put(d, char::from_digit(i as u32 % 36, 36).unwrap_or('?'));
            }
            text.into_iter().collect()
        };
        format!(
            "{}_{}->{}",
            labels(
                &[(self.input_batch_dimension, 'b'), (self.input_feature_dimension, 'f')],
                &self.input_spatial_dimensions
            ),
            labels(
                &[(self.kernel_input_feature_dimension, 'i'), (self.kernel_output_feature_dimension, 'o')],
                &self.kernel_spatial_dimensions
            ),
            labels(
                &[(self.output_batch_dimension, 'b'), (self.output_feature_dimension, 'f')],
                &self.output_spatial_dimensions
            ),
        )
    }

    /// The proto's fields in field-number order, those at their default left out, each
    /// `name: value` followed by `end` (`DebugString` with `"\n"`, `ShortDebugString` with `" "`).
    fn fields(&self, end: &str) -> String {
        // Scalars are left out at 0 (proto3); repeated fields print one line per value.
        let scalar = |value: i64| if value == 0 { vec![] } else { vec![value] };
        let fields: [(&str, Vec<i64>); 9] = [
            ("kernel_input_feature_dimension", scalar(self.kernel_input_feature_dimension)),
            ("kernel_output_feature_dimension", scalar(self.kernel_output_feature_dimension)),
            ("kernel_spatial_dimensions", self.kernel_spatial_dimensions.clone()),
            ("input_batch_dimension", scalar(self.input_batch_dimension)),
            ("input_feature_dimension", scalar(self.input_feature_dimension)),
            ("output_batch_dimension", scalar(self.output_batch_dimension)),
            ("output_feature_dimension", scalar(self.output_feature_dimension)),
            ("input_spatial_dimensions", self.input_spatial_dimensions.clone()),
            ("output_spatial_dimensions", self.output_spatial_dimensions.clone()),
        ];
        fields
            .iter()
            .flat_map(|(name, values)| values.iter().map(move |value| format!("{name}: {value}{end}")))
            .collect()
    }

    /// The proto's `DebugString`, as XLA's messages quote the numbers.
    pub(crate) fn debug_string(&self) -> String {
        self.fields("\n")
    }

    /// The proto's `ShortDebugString`.
    pub(crate) fn short_debug_string(&self) -> String {
        self.fields(" ").trim_end().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dim_labels_are_xlas() {
        assert_eq!(ConvolutionDimensionNumbers::default_for(2).dim_labels(), "bf01_oi01->bf01");
        let nhwc = ConvolutionDimensionNumbers {
            input_batch_dimension: 0,
            input_feature_dimension: 3,
            input_spatial_dimensions: vec![1, 2],
            kernel_input_feature_dimension: 2,
            kernel_output_feature_dimension: 3,
            kernel_spatial_dimensions: vec![0, 1],
            output_batch_dimension: 0,
            output_feature_dimension: 3,
            output_spatial_dimensions: vec![1, 2],
        };
        assert_eq!(nhwc.dim_labels(), "b01f_01io->b01f");
        assert_eq!(
            ConvolutionDimensionNumbers::default_for(1).short_debug_string(),
            "kernel_input_feature_dimension: 1 kernel_spatial_dimensions: 2 input_feature_dimension: 1 \
             output_feature_dimension: 1 input_spatial_dimensions: 2 output_spatial_dimensions: 2"
        );
    }
}
