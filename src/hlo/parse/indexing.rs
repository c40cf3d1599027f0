//! The attributes of the indexing, window and convolution ops, and of precision: `window={size=3x3
//! stride=2x2 pad=1_1x1_1 lhs_dilate=2x2 rhs_dilate=2x2}`, `dim_labels=b01f_01io->b01f`, the
//! gather and scatter dimension numbers, and `operand_precision={highest,default}`.

use crate::attributes::{
    ConvolutionDimensionNumbers, GatherDimensionNumbers, Precision, PrecisionConfig, ScatterDimensionNumbers,
    Window, WindowDimension,
};
use crate::error::Result;
use crate::hlo::parse::attributes::Attributes;
use crate::hlo::parse::cursor::{error_at, Cursor};
use crate::hlo::parse::lexer::{Kind, Token};

impl<'a> Attributes<'a, '_> {
    /// `window={…}`, `XLA's window_util::ToString`; an empty window when absent (rank 0).
    pub(super) fn window(&mut self) -> Result<Window> {
        let window = self.optional("window", |c| {
            c.require(Kind::LBrace, "`{`")?;
            let mut fields: Vec<(Token<'a>, Token<'a>)> = Vec::new();
            while !c.eat(Kind::RBrace) {
                let name = c.word("a window field (size, stride, pad, lhs_dilate, rhs_dilate)")?;
                c.require(Kind::Equals, "`=`")?;
                fields.push((name, c.word("the field's value, such as 3x3")?));
            }
            window_from_fields(&fields)
        })?;
        Ok(window.unwrap_or_default())
    }

    /// `dim_labels=b01f_01io->b01f`.
    pub(super) fn dim_labels(&mut self) -> Result<ConvolutionDimensionNumbers> {
        self.required("dim_labels", |c| {
            let first = c.peek();
            let mut text = String::new();
            while c.peek().kind != Kind::End {
                text.push_str(c.next().text);
            }
            labels(&text).ok_or_else(|| {
                error_at(&first, format!("expected dim_labels such as b01f_01io->b01f, not {text}"))
            })
        })
    }

    /// `operand_precision={highest,default}`; empty when absent.
    pub(super) fn precision(&mut self) -> Result<PrecisionConfig> {
        let config = self.optional("operand_precision", |c| {
            c.require(Kind::LBrace, "`{`")?;
            let mut operand_precision = Vec::new();
            while !c.eat(Kind::RBrace) {
                if !operand_precision.is_empty() {
                    c.require(Kind::Comma, "`,` or `}`")?;
                }
                let token = c.word("a precision (default, high, highest)")?;
                let precision = [Precision::Default, Precision::High, Precision::Highest]
                    .into_iter()
                    .find(|p| p.hlo_name() == token.text)
                    .ok_or_else(|| error_at(&token, "expected default, high or highest"))?;
                operand_precision.push(precision);
            }
            Ok(PrecisionConfig { operand_precision })
        })?;
        Ok(config.unwrap_or_default())
    }

    /// A gather's dimension numbers (`offset_dims={..}, collapsed_slice_dims={..}, …`).
    pub(super) fn gather_numbers(&mut self) -> Result<GatherDimensionNumbers> {
        Ok(GatherDimensionNumbers {
            offset_dims: self.ints_or_empty("offset_dims")?,
            collapsed_slice_dims: self.ints_or_empty("collapsed_slice_dims")?,
            start_index_map: self.ints_or_empty("start_index_map")?,
            index_vector_dim: self.int("index_vector_dim")?,
            operand_batching_dims: self.ints_or_empty("operand_batching_dims")?,
            start_indices_batching_dims: self.ints_or_empty("start_indices_batching_dims")?,
        })
    }

    /// A scatter's dimension numbers (`update_window_dims={..}, inserted_window_dims={..}, …`).
    pub(super) fn scatter_numbers(&mut self) -> Result<ScatterDimensionNumbers> {
        Ok(ScatterDimensionNumbers {
            update_window_dims: self.ints_or_empty("update_window_dims")?,
            inserted_window_dims: self.ints_or_empty("inserted_window_dims")?,
            scatter_dims_to_operand_dims: self.ints_or_empty("scatter_dims_to_operand_dims")?,
            index_vector_dim: self.int("index_vector_dim")?,
            input_batching_dims: self.ints_or_empty("input_batching_dims")?,
            scatter_indices_batching_dims: self.ints_or_empty("scatter_indices_batching_dims")?,
        })
    }

    /// `name=3`, `default` when absent.
    pub(super) fn int_or(&mut self, name: &str, default: i64) -> Result<i64> {
        Ok(self.optional(name, |c: &mut Cursor<'_, 'a>| c.int("an integer"))?.unwrap_or(default))
    }
}

/// A window from its `name=value` fields: `size` gives the rank; the others default to a
/// stride of 1, no padding and no dilation.
fn window_from_fields(fields: &[(Token<'_>, Token<'_>)]) -> Result<Window> {
    let numbers = |token: &Token<'_>, parts: usize| -> Result<Vec<Vec<i64>>> {
        token
            .text
            .split('x')
            .map(|dimension| {
                let values: Option<Vec<i64>> = dimension.split('_').map(|v| v.parse().ok()).collect();
                values.filter(|v| v.len() == parts).ok_or_else(|| {
                    error_at(token, format!("expected a window value such as 3x3, not {}", token.text))
                })
            })
            .collect()
    };
    let Some((_, size)) = fields.iter().find(|(name, _)| name.text == "size") else {
        let at = fields.first().map(|(name, _)| *name);
        return Err(match at {
            Some(token) => error_at(&token, "a window needs its size"),
            None => crate::error::Error::invalid("a window needs its size".to_string()),
        });
    };
    let sizes = numbers(size, 1)?;
    let mut dimensions: Vec<WindowDimension> = sizes
        .iter()
        .map(|s| WindowDimension {
            size: s[0],
            stride: 1,
            padding_low: 0,
            padding_high: 0,
            window_dilation: 1,
            base_dilation: 1,
        })
        .collect();
    for (name, value) in fields {
        let (parts, set): (usize, fn(&mut WindowDimension, &[i64])) = match name.text {
            "size" => continue,
            "stride" => (1, |d, v| d.stride = v[0]),
            "pad" => (2, |d, v| (d.padding_low, d.padding_high) = (v[0], v[1])),
            "lhs_dilate" => (1, |d, v| d.base_dilation = v[0]),
            "rhs_dilate" => (1, |d, v| d.window_dilation = v[0]),
            other => return Err(error_at(name, format!("unknown window field {other}"))),
        };
        let values = numbers(value, parts)?;
        if values.len() != dimensions.len() {
            return Err(error_at(
                value,
                format!("{} has {} dimensions, size {}", name.text, values.len(), dimensions.len()),
            ));
        }
        dimensions.iter_mut().zip(&values).for_each(|(d, v)| set(d, v));
    }
    Ok(Window { dimensions })
}

/// Convolution dimension numbers from their labels, `b01f_01io->b01f`: each position names
/// what that dimension is (`b` batch, `f` feature, `i`/`o` the kernel's input and output
/// features, digits the spatial dimensions in order).
fn labels(text: &str) -> Option<ConvolutionDimensionNumbers> {
    let (operands, output) = text.split_once("->")?;
    let (input, kernel) = operands.split_once('_')?;
    let find = |labels: &str, c: char| labels.chars().position(|l| l == c).map(|p| p as i64);
    let spatial = |labels: &str| -> Option<Vec<i64>> {
        let count = labels.len().checked_sub(2)?;
        (0..count).map(|i| find(labels, char::from_digit(i as u32, 36)?)).collect()
    };
    Some(ConvolutionDimensionNumbers {
        input_batch_dimension: find(input, 'b')?,
        input_feature_dimension: find(input, 'f')?,
        input_spatial_dimensions: spatial(input)?,
        kernel_input_feature_dimension: find(kernel, 'i')?,
        kernel_output_feature_dimension: find(kernel, 'o')?,
        kernel_spatial_dimensions: spatial(kernel)?,
        output_batch_dimension: find(output, 'b')?,
        output_feature_dimension: find(output, 'f')?,
        output_spatial_dimensions: spatial(output)?,
    })
}
