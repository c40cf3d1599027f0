//! Windowed ops: XLA's `InferWindowFromDimensions`, `InferWindowOutputShape`,
//! `InferReduceWindowShape` and `InferSelectAndScatterShape`, and the builder's
//! `ValidatePaddingValues` (the check before a `Padding` enum becomes padding).

use crate::attributes::{make_padding, Padding, Window, WindowDimension};
use crate::element_type::ElementType;
use crate::error::{invalid_argument, Result};
use crate::shape::program_shape::ProgramShape;
use crate::shape::Shape;
use crate::shape_inference::reduce::verify_reducer;
use crate::shape_inference::{compatible_ignoring_fp_precision, make_shape};

/// XLA's `ValidatePaddingValues` then `MakePadding`: the padding a `Padding` enum stands for,
/// once input, window and stride counts agree (where XLA's `MakePadding` would abort the
/// process, this is the same error as the builder's).
pub(crate) fn padding_for(
    inputs: &[i64],
    windows: &[i64],
    strides: &[i64],
    padding: Padding,
) -> Result<Vec<(i64, i64)>> {
    if inputs.len() != windows.len() || inputs.len() != strides.len() {
        invalid_argument!(
            "Want input dimensions size {} = window dimensions size {} = window strides size {}",
            inputs.len(),
            windows.len(),
            strides.len()
        );
    }
    Ok(make_padding(inputs, windows, strides, padding))
}

/// XLA's `InferWindowFromDimensions`: a window from its sizes and the optional lists (an empty
/// list means strides and dilations of 1, no padding), each of the window's length.
pub(crate) fn window_from_dimensions(
    sizes: &[i64],
    strides: &[i64],
    padding: &[(i64, i64)],
    base_dilations: &[i64],
    window_dilations: &[i64],
) -> Result<Window> {
    let verify = |count: usize, name: &str| -> Result<()> {
        if count == 0 || count == sizes.len() {
            return Ok(());
        }
        invalid_argument!(
            "Window has different number of window dimensions than of {name}\nNumber of window dimensions: {}\n\
             Number of {name}: {count}\n",
            sizes.len()
        )
    };
    verify(strides.len(), "window strides")?;
    verify(padding.len(), "padding entries")?;
    verify(base_dilations.len(), "lhs dilation factors")?;
    verify(window_dilations.len(), "rhs dilation factors")?;
    let or_one = |list: &[i64], i: usize| list.get(i).copied().unwrap_or(1);
    let dimensions = sizes
        .iter()
        .enumerate()
        .map(|(i, &size)| WindowDimension {
            size,
            stride: or_one(strides, i),
            padding_low: padding.get(i).map_or(0, |p| p.0),
            padding_high: padding.get(i).map_or(0, |p| p.1),
            window_dilation: or_one(window_dilations, i),
            base_dilation: or_one(base_dilations, i),
        })
        .collect();
    Ok(Window { dimensions })
}

/// `window_util::DilatedBound`: the extent of `bound` elements with `dilation - 1` holes
/// between neighbours.
pub(crate) fn dilated_bound(bound: i64, dilation: i64) -> i64 {
    if bound == 0 {
        0
    } else {
        (bound - 1).saturating_mul(dilation).saturating_add(1)
    }
}

/// `window_util::StridedBound`: how many windows of `window` elements fit in `bound` at
/// `stride`.
fn strided_bound(bound: i64, window: i64, stride: i64) -> i64 {
    if window > bound {
        0
    } else {
        (bound - window) / stride + 1
    }
}

/// XLA's `InferWindowOutputShape`: the number of window positions along each dimension of
/// `base`, in `element_type`, default layout. A padded base below zero (XLA's builder aborts
/// there) is XLA's error for a negative dimension.
pub(crate) fn window_output_shape(base: &Shape, window: &Window, element_type: ElementType) -> Result<Shape> {
    if window.dimensions.len() != base.rank() {
        invalid_argument!(
            "Window has dimension {} but base shape has dimension {}.",
            window.dimensions.len(),
            base.rank()
        );
    }
    let mut dimensions = Vec::with_capacity(base.rank());
    let text = window.debug_string();
    for (d, &bound) in window.dimensions.iter().zip(base.dimensions()) {
        if d.size <= 0 {
            invalid_argument!("Window {text} has a non-positive dimension.");
        }
        if d.stride <= 0 {
            invalid_argument!("Window {text} has a non-positive stride.");
        }
        if d.base_dilation < 1 {
            invalid_argument!("Window {text} has a non-positive base area dilation factor.");
        }
        if d.window_dilation < 1 {
            invalid_argument!("Window {text} has a non-positive window dilation factor.");
        }
        let padded = d
            .padding_low
            .saturating_add(dilated_bound(bound, d.base_dilation))
            .saturating_add(d.padding_high);
        if padded < 0 {
            invalid_argument!(
                "Window {text} pads the base dimension of size {bound} to a negative size {padded}."
            );
        }
        dimensions.push(strided_bound(padded, dilated_bound(d.size, d.window_dilation), d.stride));
    }
    make_shape(element_type, &dimensions)
}

/// XLA's `InferReduceWindowShape` for one operand: the reducer checked as a reduce's, then the
/// window output shape in the init value's element type.
pub(crate) fn reduce_window_shape(
    operand: &Shape,
    init: &Shape,
    window: &Window,
    reducer: &ProgramShape,
) -> Result<Shape> {
    verify_reducer(reducer, &[init], &[operand])?;
    window_output_shape(operand, window, init.element_type())
}

/// XLA's `InferSelectAndScatterShape`: `select` is `(T, T) -> pred[]` on the operand's
/// element type, `scatter` a reducer of the source's, and `source` has the window output's
/// shape. The result is the operand's shape (layout included).
pub(crate) fn select_and_scatter_shape(
    operand: &Shape,
    select: &ProgramShape,
    window: &Window,
    source: &Shape,
    init: &Shape,
    scatter: &ProgramShape,
) -> Result<Shape> {
    if select.parameters.len() != 2 {
        invalid_argument!(
            "Select function must take 2 parameters, but takes {} parameter(s).",
            select.parameters.len()
        );
    }
    if select.result.is_tuple()
        || !select.result.is_scalar()
        || select.result.element_type() != ElementType::Pred
    {
        invalid_argument!("Select function must have rank-0 PRED result.");
    }
    let element = Shape::scalar(operand.element_type());
    for (position, (_, parameter)) in ["first", "second"].iter().zip(&select.parameters) {
        if !compatible_ignoring_fp_precision(&element, parameter) {
            invalid_argument!(
                "Select function's {position} parameter shape currently must match the operand element shape, \
                 but got {} vs {}.",
                parameter.human_string(),
                element.human_string()
            );
        }
    }
    verify_reducer(scatter, &[init], &[source])?;
    let window_result = window_output_shape(operand, window, operand.element_type())?;
    if !compatible_ignoring_fp_precision(source, &window_result) {
        invalid_argument!(
            "Source shape does not match the shape of window-reduced operand: source({}), window-reduced \
             operand({}).",
            source.human_string(),
            window_result.human_string()
        );
    }
    Ok(operand.clone())
}
