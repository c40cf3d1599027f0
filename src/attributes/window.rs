//! Windows: the `Padding` enum users pick for pooling and convolution, and the `Window` an
//! instruction carries (xla_data.proto's `Window`: per dimension a size, a stride, low and high
//! padding, and base and window dilations).

use std::fmt;

/// XLA's `Padding` for windowed ops: `Valid` pads nothing (windows lie inside the operand);
/// `Same` pads so that the output has `ceil(input / stride)` elements, `floor(p / 2)` low and
/// `ceil(p / 2)` high.
///
/// ```
/// use lazy_xla::*;
/// let max = { let m = XlaBuilder::new("max");
///     let (a, c) = (m.parameter(0, &shape!(f32[]), "a"), m.parameter(1, &shape!(f32[]), "b"));
///     m.build(lazy_xla::max(a, c, &[]))? };
/// let b = XlaBuilder::new("pool");
/// let x = b.parameter(0, &shape!(f32[5, 5]), "x");
/// let init = b.constant_r0(f32::NEG_INFINITY);
/// assert_eq!(b.get_shape(reduce_window(x, init, &max, &[3, 3], &[2, 2], Padding::Same))?, shape!(f32[3, 3]));
/// assert_eq!(b.get_shape(reduce_window(x, init, &max, &[3, 3], &[2, 2], Padding::Valid))?, shape!(f32[2, 2]));
/// assert_eq!(Padding::default(), Padding::Valid);
/// # Ok::<(), lazy_xla::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Padding {
    /// No padding: only windows that fit inside the operand.
    #[default]
    Valid,
    /// Padding that keeps `ceil(input / stride)` outputs.
    Same,
}

/// XLA's `MakePadding`: the `(low, high)` padding of each dimension for `padding`, given the
/// input, window and stride sizes (of one length, checked by the caller). A stride that is not
/// positive pads nothing (window inference rejects it next).
pub(crate) fn make_padding(
    inputs: &[i64],
    windows: &[i64],
    strides: &[i64],
    padding: Padding,
) -> Vec<(i64, i64)> {
    match padding {
        Padding::Valid => vec![(0, 0); windows.len()],
        Padding::Same => inputs
            .iter()
            .zip(windows)
            .zip(strides)
            .map(|((&input, &window), &stride)| {
                if stride <= 0 {
                    return (0, 0);
                }
                let output = input.div_euclid(stride) + i64::from(input.rem_euclid(stride) != 0);
                let total = ((output - 1).saturating_mul(stride).saturating_add(window) - input).max(0);
                (total.div_euclid(2), total - total.div_euclid(2))
            })
            .collect(),
    }
}

/// One dimension of a window (xla_data.proto's `WindowDimension`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct WindowDimension {
    pub(crate) size: i64,
    pub(crate) stride: i64,
    pub(crate) padding_low: i64,
    pub(crate) padding_high: i64,
    /// Holes between window elements, plus one.
    pub(crate) window_dilation: i64,
    /// Holes between base (operand) elements, plus one.
    pub(crate) base_dilation: i64,
}

/// A window over every dimension of an operand (xla_data.proto's `Window`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Window {
    pub(crate) dimensions: Vec<WindowDimension>,
}

impl WindowDimension {
    /// Whether the window neither moves along this dimension nor reaches past it: size 1,
    /// stride 1, no padding nor base dilation (each output element reads its own input one).
    pub(crate) fn is_trivial(&self) -> bool {
        self.size == 1
            && self.stride == 1
            && self.padding_low == 0
            && self.padding_high == 0
            && self.base_dilation == 1
    }
}

impl Window {
    /// Whether any dimension has a stride other than 1.
    fn has(&self, field: impl Fn(&WindowDimension) -> bool) -> bool {
        self.dimensions.iter().any(field)
    }

    /// The proto's `DebugString` (fields at their default value left out), as XLA's messages
    /// quote a window.
    pub(crate) fn debug_string(&self) -> String {
        self.dimensions
            .iter()
            .map(|d| format!("dimensions {{\n{}}}\n", dimension_fields(d, "  ", "\n")))
            .collect()
    }

    /// The proto's `ShortDebugString`, one line.
    pub(crate) fn short_debug_string(&self) -> String {
        let parts: Vec<String> = self
            .dimensions
            .iter()
            .map(|d| format!("dimensions {{ {}}}", dimension_fields(d, "", " ")))
            .collect();
        parts.join(" ")
    }
}

/// The non-default fields of a window dimension, each `{indent}name: value{end}`.
fn dimension_fields(d: &WindowDimension, indent: &str, end: &str) -> String {
    [
        ("size", d.size),
        ("stride", d.stride),
        ("padding_low", d.padding_low),
        ("padding_high", d.padding_high),
        ("window_dilation", d.window_dilation),
        ("base_dilation", d.base_dilation),
    ]
    .iter()
    .filter(|(_, value)| *value != 0)
    .map(|(name, value)| format!("{indent}{name}: {value}{end}"))
    .collect()
}

impl fmt::Display for Window {
    /// XLA's `window_util::ToString`: `size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=2x2
    /// rhs_dilate=2x2`, each field after `size` only where it is not the default.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let field = |name: &str, value: &dyn Fn(&WindowDimension) -> String| {
            let values: Vec<String> = self.dimensions.iter().map(value).collect();
            format!("{name}={}", values.join("x"))
        };
        let mut parts = vec![field("size", &|d| d.size.to_string())];
        if self.has(|d| d.stride != 1) {
            parts.push(field("stride", &|d| d.stride.to_string()));
        }
        if self.has(|d| d.padding_low != 0 || d.padding_high != 0) {
            parts.push(field("pad", &|d| format!("{}_{}", d.padding_low, d.padding_high)));
        }
        if self.has(|d| d.base_dilation != 1) {
            parts.push(field("lhs_dilate", &|d| d.base_dilation.to_string()));
        }
        if self.has(|d| d.window_dilation != 1) {
            parts.push(field("rhs_dilate", &|d| d.window_dilation.to_string()));
        }
        f.write_str(&parts.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_padding_is_xlas() {
        // Output ceil(in / stride); the padding split floor low, ceil high.
        assert_eq!(make_padding(&[3], &[2], &[1], Padding::Same), vec![(0, 1)]);
        assert_eq!(make_padding(&[5], &[3], &[2], Padding::Same), vec![(1, 1)]);
        assert_eq!(make_padding(&[4], &[1], &[3], Padding::Same), vec![(0, 0)]);
        assert_eq!(make_padding(&[6], &[4], &[2], Padding::Same), vec![(1, 1)]);
        assert_eq!(make_padding(&[3], &[2], &[1], Padding::Valid), vec![(0, 0)]);
    }

    #[test]
    fn window_text_is_window_util_to_string() {
        let d = WindowDimension {
            size: 3,
            stride: 2,
            padding_low: 1,
            padding_high: 1,
            window_dilation: 1,
            base_dilation: 1,
        };
        let window = Window { dimensions: vec![d, d] };
        assert_eq!(window.to_string(), "size=3x3 stride=2x2 pad=1_1x1_1");
        let plain = WindowDimension { stride: 1, padding_low: 0, padding_high: 0, ..d };
        assert_eq!(Window { dimensions: vec![plain] }.to_string(), "size=3");
        let dilated = WindowDimension { base_dilation: 2, window_dilation: 3, ..plain };
        assert_eq!(Window { dimensions: vec![dilated] }.to_string(), "size=3 lhs_dilate=2 rhs_dilate=3");
        assert_eq!(
            Window { dimensions: vec![plain] }.short_debug_string(),
            "dimensions { size: 3 stride: 1 window_dilation: 1 base_dilation: 1 }"
        );
    }
}
