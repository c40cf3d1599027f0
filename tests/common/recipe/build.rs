//! Building a recipe with lazy-xla's public API.

use crate::common::expr::{binary_fn, compare_fn, unary_fn};
use crate::common::recipe::{ConvPadding, Convolution, Id, Recipe, Step, Window, WindowPadding};
use crate::common::values::{literal, with_native, Native};
use lazy_xla::*;

/// A recipe built with lazy-xla: the computation and the shape `get_shape` gave each step.
pub struct Built {
    pub computation: XlaComputation,
    pub shapes: Vec<Shape>,
}

/// A padding config from `[low, high, interior]` triples.
fn padding_config(config: &[[i64; 3]]) -> PaddingConfig {
    PaddingConfig {
        dimensions: config
            .iter()
            .map(|&[edge_padding_low, edge_padding_high, interior_padding]| PaddingConfigDimension {
                edge_padding_low,
                edge_padding_high,
                interior_padding,
            })
            .collect(),
    }
}

/// The op of `step` in builder `b`: `v` the ops of the steps before it, `computations` the
/// built computations it hands to its op, `parameter` its number if it is a parameter.
fn op<'b>(
    b: &'b XlaBuilder,
    step: &Step,
    v: &[XlaOp<'b>],
    computations: &[XlaComputation],
    parameter: i64,
) -> XlaOp<'b> {
    let all = |ids: &[Id]| ids.iter().map(|&id| v[id]).collect::<Vec<_>>();
    let window_reduce = |x: Id, init: Id, window: &Window| match &window.padding {
        WindowPadding::Enum(padding) => {
            reduce_window(v[x], v[init], &computations[0], &window.dimensions, &window.strides, *padding)
        }
        WindowPadding::General { padding, base_dilations, window_dilations } => {
            reduce_window_with_general_padding(
                v[x],
                v[init],
                &computations[0],
                &window.dimensions,
                &window.strides,
                base_dilations,
                window_dilations,
                padding,
            )
        }
    };
    match step {
        Step::Parameter { shape, .. } => b.parameter(parameter, shape, &format!("p{parameter}")),
        Step::ConstantLiteral { shape, values } => b.constant_literal(&literal(shape, values)),
        Step::ConstantR0 { ty, value } => with_native!(*ty, T => b.constant_r0(T::from_value(*value))),
        Step::Iota { shape, dimension } => iota(b, shape, *dimension),
        Step::Unary { op, x } => unary_fn(*op)(v[*x]),
        Step::Binary { op, lhs, rhs, broadcast_dimensions } => {
            binary_fn(*op)(v[*lhs], v[*rhs], broadcast_dimensions)
        }
        Step::Compare { op, lhs, rhs, broadcast_dimensions } => {
            compare_fn(*op)(v[*lhs], v[*rhs], broadcast_dimensions)
        }
        Step::Select { pred, on_true, on_false } => select(v[*pred], v[*on_true], v[*on_false]),
        Step::Clamp { min, operand, max } => clamp(v[*min], v[*operand], v[*max]),
        Step::Convert { x, to } => convert_element_type(v[*x], *to),
        Step::BitcastConvert { x, to } => bitcast_convert_type(v[*x], *to),
        Step::ReducePrecision { x, exponent_bits, mantissa_bits } => {
            reduce_precision(v[*x], *exponent_bits, *mantissa_bits)
        }
        Step::Broadcast { x, sizes } => broadcast(v[*x], sizes),
        Step::BroadcastInDim { x, dims, broadcast_dimensions } => {
            broadcast_in_dim(v[*x], dims, broadcast_dimensions)
        }
        Step::Reshape { x, dims } => reshape(v[*x], dims),
        Step::Transpose { x, permutation } => transpose(v[*x], permutation),
        Step::Slice { x, start, limit, strides } => slice(v[*x], start, limit, strides),
        Step::Concat { xs, dimension } => concat_in_dim(b, &all(xs), *dimension),
        Step::Pad { x, value, config } => pad(v[*x], v[*value], &padding_config(config)),
        Step::Rev { x, dimensions } => rev(v[*x], dimensions),
        Step::DynamicSlice { x, starts, sizes } => dynamic_slice(v[*x], &all(starts), sizes),
        Step::DynamicUpdateSlice { x, update, starts } => {
            dynamic_update_slice(v[*x], v[*update], &all(starts))
        }
        Step::Gather { operand, indices, numbers, slice_sizes, sorted } => {
            gather(v[*operand], v[*indices], numbers, slice_sizes, *sorted)
        }
        Step::Scatter { operand, indices, updates, numbers, sorted, unique, .. } => {
            scatter(v[*operand], v[*indices], v[*updates], &computations[0], numbers, *sorted, *unique)
        }
        Step::Reduce { x, init, dimensions, .. } => reduce(v[*x], v[*init], &computations[0], dimensions),
        Step::ReduceVariadic { xs, inits, dimensions, .. } => {
            reduce_variadic(b, &all(xs), &all(inits), &computations[0], dimensions)
        }
        Step::ReduceWindow { x, init, window, .. } => window_reduce(*x, *init, window),
        Step::SelectAndScatter { x, window, source, init, .. } => {
            let (select, scatter) = (&computations[0], &computations[1]);
            match &window.padding {
                WindowPadding::Enum(padding) => select_and_scatter(
                    v[*x],
                    select,
                    &window.dimensions,
                    &window.strides,
                    *padding,
                    v[*source],
                    v[*init],
                    scatter,
                ),
                WindowPadding::General { padding, .. } => select_and_scatter_with_general_padding(
                    v[*x],
                    select,
                    &window.dimensions,
                    &window.strides,
                    padding,
                    v[*source],
                    v[*init],
                    scatter,
                ),
            }
        }
        Step::Dot { lhs, rhs, options: None } => dot(v[*lhs], v[*rhs]),
        Step::Dot { lhs, rhs, options: Some(o) } => {
            dot_with(v[*lhs], v[*rhs], o.precision.as_ref(), o.preferred)
        }
        Step::DotGeneral { lhs, rhs, numbers, options: None } => dot_general(v[*lhs], v[*rhs], numbers),
        Step::DotGeneral { lhs, rhs, numbers, options: Some(o) } => {
            dot_general_with(v[*lhs], v[*rhs], numbers, o.precision.as_ref(), o.preferred)
        }
        Step::Conv {
            lhs,
            rhs,
            conv: Convolution { strides, padding: ConvPadding::Enum(padding), .. },
            ..
        } => conv(v[*lhs], v[*rhs], strides, *padding),
        Step::Conv { lhs, rhs, conv: c, options } => match options {
            None => conv_general_dilated(
                v[*lhs],
                v[*rhs],
                &c.strides,
                c.explicit_padding(),
                &c.lhs_dilation,
                &c.rhs_dilation,
                &c.numbers,
                c.feature_group_count,
                c.batch_group_count,
            ),
            Some(o) => conv_general_dilated_with(
                v[*lhs],
                v[*rhs],
                &c.strides,
                c.explicit_padding(),
                &c.lhs_dilation,
                &c.rhs_dilation,
                &c.numbers,
                c.feature_group_count,
                c.batch_group_count,
                o.precision.as_ref(),
                o.preferred,
            ),
        },
        Step::Sort { xs, dimension, stable, .. } => sort(&all(xs), &computations[0], *dimension, *stable),
        Step::TopK { x, k, largest, .. } => top_k(v[*x], *k, *largest),
        Step::RngBitGenerator { algorithm, state, shape, .. } => {
            rng_bit_generator(*algorithm, v[*state], shape)
        }
        Step::While { init, .. } => while_loop(&computations[0], &computations[1], tuple(b, &all(init))),
        Step::Conditional { indexed: false, selector, operands, .. } => {
            conditional(v[*selector], v[operands[0]], &computations[0], v[operands[1]], &computations[1])
        }
        Step::Conditional { selector, operands, .. } => {
            conditional_indexed(v[*selector], &computations.iter().collect::<Vec<_>>(), &all(operands))
        }
        Step::Call { xs, .. } => call(b, &computations[0], &all(xs)),
        Step::Map { xs, .. } => {
            let rank = xs.iter().map(|&x| b.get_shape(v[x]).map_or(0, |s| s.rank())).max().unwrap_or(0);
            map(b, &all(xs), &computations[0], &(0..rank as i64).collect::<Vec<_>>())
        }
    }
}

/// Builds the recipe with lazy-xla's public API. An `Err` names the step the builder rejected
/// (every step of a generated recipe is valid, so that is a bug on one side or the other).
pub fn build(recipe: &Recipe) -> Result<Built, String> {
    let b = XlaBuilder::new("fuzz");
    let mut ops: Vec<XlaOp<'_>> = Vec::new();
    let mut shapes: Vec<Shape> = Vec::new();
    let mut parameters = 0;
    for (i, step) in recipe.steps.iter().enumerate() {
        let describe = |id: Id| (shapes[id].element_type(), shapes[id].dimensions().to_vec());
        let computations = (step.computations(i, &describe).iter())
            .map(|c| c.build().map_err(|e| format!("the computation {}: {e}", c.name)))
            .collect::<Result<Vec<_>, _>>()?;
        let made = op(&b, step, &ops, &computations, parameters);
        parameters += i64::from(matches!(step, Step::Parameter { .. }));
        let made = match step.tuple_output() {
            Some(k) => get_tuple_element(made, k as i64),
            None => made,
        };
        let shape = b.get_shape(made).map_err(|e| format!("the builder rejected v{i}: {e}"))?;
        ops.push(made);
        shapes.push(shape);
    }
    let root = match recipe.tuple {
        true => tuple(&b, &recipe.results.iter().map(|&r| ops[r]).collect::<Vec<_>>()),
        false => ops[recipe.results[0]],
    };
    let computation = b.build(root).map_err(|e| format!("build: {e}"))?;
    Ok(Built { computation, shapes })
}
