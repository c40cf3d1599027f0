//! A recipe printed as a Rust program over lazy-xla's public API, for a failure report to be
//! pasted into a test.

use std::collections::BTreeSet;

use crate::common::recipe::{
    ConvPadding, Convolution, Describe, DotOptions, Id, Recipe, Step, WindowPadding,
};
use crate::common::values::{rust_value, rust_vec};
use lazy_xla::{Layout, PrecisionConfig, Shape};

/// A layout as Rust source.
pub fn rust_layout(layout: &Layout) -> String {
    let plain = format!("Layout::new(&{:?})", layout.minor_to_major());
    match (layout.padded_dimensions(), layout.padding_value()) {
        (Some(padded), Some(value)) => format!("{plain}.with_padding(&{padded:?}, PaddingValue::{value:?})?"),
        _ => plain,
    }
}

/// A shape as Rust source: its text form, parsed.
fn rust_shape(shape: &Shape) -> String {
    format!("\"{shape}\".parse::<Shape>()?")
}

/// A debug-printed value as a `vec![…]` (or `vec![]`), for the `Vec` fields of attributes.
fn vec_of<T: std::fmt::Debug>(items: &[T]) -> String {
    format!("vec!{items:?}")
}

/// A precision config as Rust source.
fn rust_precision(config: &PrecisionConfig) -> String {
    let precisions: Vec<String> =
        config.operand_precision.iter().map(|p| format!("Precision::{p:?}")).collect();
    format!("PrecisionConfig {{ operand_precision: vec![{}] }}", precisions.join(", "))
}

/// The two optional arguments of a `_with` function.
fn rust_options(options: &DotOptions) -> String {
    let precision =
        options.precision.as_ref().map_or("None".to_string(), |p| format!("Some(&{})", rust_precision(p)));
    let preferred = options.preferred.map_or("None".to_string(), |t| format!("Some(ElementType::{t:?})"));
    format!("{precision}, {preferred}")
}

/// The Rust expression of step `i` (parameter number `parameter` if it is one), `names` the
/// variables of the computations it hands to its op.
fn expression(step: &Step, parameter: i64, names: &[String], describe: Describe<'_>) -> String {
    let v = |id: &Id| format!("v{id}");
    let list = |ids: &[Id]| ids.iter().map(v).collect::<Vec<_>>().join(", ");
    let c = |k: usize| &names[k];
    match step {
        Step::Parameter { shape, .. } => format!("b.parameter({parameter}, &{}, \"p{parameter}\")", rust_shape(shape)),
        Step::ConstantLiteral { shape, values } => format!(
            "b.constant_literal(&Literal::from_vec(&{}, {})?)",
            rust_shape(shape),
            rust_vec(shape.element_type(), values)
        ),
        Step::ConstantR0 { ty, value } => format!("b.constant_r0({})", rust_value(*ty, *value)),
        Step::Iota { shape, dimension } => format!("iota(&b, &{}, {dimension})", rust_shape(shape)),
        Step::Unary { op, x } => format!("{}({})", op.name(), v(x)),
        Step::Binary { op, lhs, rhs, broadcast_dimensions } => {
            format!("{}({}, {}, &{broadcast_dimensions:?})", op.name(), v(lhs), v(rhs))
        }
        Step::Compare { op, lhs, rhs, broadcast_dimensions } => {
            format!("{}({}, {}, &{broadcast_dimensions:?})", op.name(), v(lhs), v(rhs))
        }
        Step::Select { pred, on_true, on_false } => format!("select({}, {}, {})", v(pred), v(on_true), v(on_false)),
        Step::Clamp { min, operand, max } => format!("clamp({}, {}, {})", v(min), v(operand), v(max)),
        Step::Convert { x, to } => format!("convert_element_type({}, ElementType::{to:?})", v(x)),
        Step::BitcastConvert { x, to } => format!("bitcast_convert_type({}, ElementType::{to:?})", v(x)),
        Step::ReducePrecision { x, exponent_bits, mantissa_bits } => {
            format!("reduce_precision({}, {exponent_bits}, {mantissa_bits})", v(x))
        }
        Step::Broadcast { x, sizes } => format!("broadcast({}, &{sizes:?})", v(x)),
        Step::BroadcastInDim { x, dims, broadcast_dimensions } => {
            format!("broadcast_in_dim({}, &{dims:?}, &{broadcast_dimensions:?})", v(x))
        }
        Step::Reshape { x, dims } => format!("reshape({}, &{dims:?})", v(x)),
        Step::Transpose { x, permutation } => format!("transpose({}, &{permutation:?})", v(x)),
        Step::Slice { x, start, limit, strides } => {
            format!("slice({}, &{start:?}, &{limit:?}, &{strides:?})", v(x))
        }
        Step::Concat { xs, dimension } => format!("concat_in_dim(&b, &[{}], {dimension})", list(xs)),
        Step::Pad { x, value, config } => {
            let dims: Vec<String> = config
                .iter()
                .map(|[l, h, n]| {
                    format!(
                        "PaddingConfigDimension {{ edge_padding_low: {l}, edge_padding_high: {h}, interior_padding: {n} }}"
                    )
                })
                .collect();
            format!("pad({}, {}, &PaddingConfig {{ dimensions: vec![{}] }})", v(x), v(value), dims.join(", "))
        }
        Step::Rev { x, dimensions } => format!("rev({}, &{dimensions:?})", v(x)),
        Step::DynamicSlice { x, starts, sizes } => format!("dynamic_slice({}, &[{}], &{sizes:?})", v(x), list(starts)),
        Step::DynamicUpdateSlice { x, update, starts } => {
            format!("dynamic_update_slice({}, {}, &[{}])", v(x), v(update), list(starts))
        }
        Step::Gather { operand, indices, numbers: n, slice_sizes, sorted } => format!(
            "gather({}, {}, &GatherDimensionNumbers {{ offset_dims: {}, collapsed_slice_dims: {}, start_index_map: {}, \
             index_vector_dim: {}, operand_batching_dims: {}, start_indices_batching_dims: {} }}, &{slice_sizes:?}, {sorted})",
            v(operand),
            v(indices),
            vec_of(&n.offset_dims),
            vec_of(&n.collapsed_slice_dims),
            vec_of(&n.start_index_map),
            n.index_vector_dim,
            vec_of(&n.operand_batching_dims),
            vec_of(&n.start_indices_batching_dims)
        ),
        Step::Scatter { operand, indices, updates, numbers: n, sorted, unique, .. } => format!(
            "scatter({}, {}, {}, &{}, &ScatterDimensionNumbers {{ update_window_dims: {}, inserted_window_dims: {}, \
             scatter_dims_to_operand_dims: {}, index_vector_dim: {}, input_batching_dims: {}, \
             scatter_indices_batching_dims: {} }}, {sorted}, {unique})",
            v(operand),
            v(indices),
            v(updates),
            c(0),
            vec_of(&n.update_window_dims),
            vec_of(&n.inserted_window_dims),
            vec_of(&n.scatter_dims_to_operand_dims),
            n.index_vector_dim,
            vec_of(&n.input_batching_dims),
            vec_of(&n.scatter_indices_batching_dims)
        ),
        Step::Reduce { x, init, dimensions, .. } => format!("reduce({}, {}, &{}, &{dimensions:?})", v(x), v(init), c(0)),
        Step::ReduceVariadic { xs, inits, dimensions, .. } => {
            format!("reduce_variadic(&b, &[{}], &[{}], &{}, &{dimensions:?})", list(xs), list(inits), c(0))
        }
        Step::ReduceWindow { x, init, window: w, .. } => match &w.padding {
            WindowPadding::Enum(padding) => format!(
                "reduce_window({}, {}, &{}, &{:?}, &{:?}, Padding::{padding:?})",
                v(x),
                v(init),
                c(0),
                w.dimensions,
                w.strides
            ),
            WindowPadding::General { padding, base_dilations, window_dilations } => format!(
                "reduce_window_with_general_padding({}, {}, &{}, &{:?}, &{:?}, &{base_dilations:?}, &{window_dilations:?}, \
                 &{padding:?})",
                v(x),
                v(init),
                c(0),
                w.dimensions,
                w.strides
            ),
        },
        Step::SelectAndScatter { x, window: w, source, init, .. } => {
            let (name, padding) = match &w.padding {
                WindowPadding::Enum(padding) => ("select_and_scatter", format!("Padding::{padding:?}")),
                WindowPadding::General { padding, .. } => {
                    ("select_and_scatter_with_general_padding", format!("&{padding:?}"))
                }
            };
            format!(
                "{name}({}, &{}, &{:?}, &{:?}, {padding}, {}, {}, &{})",
                v(x),
                c(0),
                w.dimensions,
                w.strides,
                v(source),
                v(init),
                c(1)
            )
        }
        Step::Dot { lhs, rhs, options: None } => format!("dot({}, {})", v(lhs), v(rhs)),
        Step::Dot { lhs, rhs, options: Some(o) } => format!("dot_with({}, {}, {})", v(lhs), v(rhs), rust_options(o)),
        Step::DotGeneral { lhs, rhs, numbers: n, options } => {
            let numbers = format!(
                "&DotDimensionNumbers {{ lhs_contracting_dimensions: {}, rhs_contracting_dimensions: {}, \
                 lhs_batch_dimensions: {}, rhs_batch_dimensions: {} }}",
                vec_of(&n.lhs_contracting_dimensions),
                vec_of(&n.rhs_contracting_dimensions),
                vec_of(&n.lhs_batch_dimensions),
                vec_of(&n.rhs_batch_dimensions)
            );
            match options {
                None => format!("dot_general({}, {}, {numbers})", v(lhs), v(rhs)),
                Some(o) => format!("dot_general_with({}, {}, {numbers}, {})", v(lhs), v(rhs), rust_options(o)),
            }
        }
        Step::Conv { lhs, rhs, conv: Convolution { strides, padding: ConvPadding::Enum(padding), .. }, .. } => {
            format!("conv({}, {}, &{strides:?}, Padding::{padding:?})", v(lhs), v(rhs))
        }
        Step::Conv { lhs, rhs, conv: k, options } => {
            let n = &k.numbers;
            let numbers = format!(
                "&ConvolutionDimensionNumbers {{ input_batch_dimension: {}, input_feature_dimension: {}, \
                 input_spatial_dimensions: {}, kernel_input_feature_dimension: {}, kernel_output_feature_dimension: {}, \
                 kernel_spatial_dimensions: {}, output_batch_dimension: {}, output_feature_dimension: {}, \
                 output_spatial_dimensions: {} }}",
                n.input_batch_dimension,
                n.input_feature_dimension,
                vec_of(&n.input_spatial_dimensions),
                n.kernel_input_feature_dimension,
                n.kernel_output_feature_dimension,
                vec_of(&n.kernel_spatial_dimensions),
                n.output_batch_dimension,
                n.output_feature_dimension,
                vec_of(&n.output_spatial_dimensions)
            );
            let arguments = format!(
                "{}, {}, &{:?}, &{:?}, &{:?}, &{:?}, {numbers}, {}, {}",
                v(lhs),
                v(rhs),
                k.strides,
                k.explicit_padding(),
                k.lhs_dilation,
                k.rhs_dilation,
                k.feature_group_count,
                k.batch_group_count
            );
            match options {
                None => format!("conv_general_dilated({arguments})"),
                Some(o) => format!("conv_general_dilated_with({arguments}, {})", rust_options(o)),
            }
        }
        Step::Sort { xs, dimension, stable, .. } => format!("sort(&[{}], &{}, {dimension}, {stable})", list(xs), c(0)),
        Step::TopK { x, k, largest, .. } => format!("top_k({}, {k}, {largest})", v(x)),
        Step::RngBitGenerator { algorithm, state, shape, .. } => {
            format!("rng_bit_generator(RandomAlgorithm::{algorithm:?}, {}, &{})", v(state), rust_shape(shape))
        }
        Step::While { init, .. } => format!("while_loop(&{}, &{}, tuple(&b, &[{}]))", c(0), c(1), list(init)),
        Step::Conditional { indexed: false, selector, operands, .. } => format!(
            "conditional({}, {}, &{}, {}, &{})",
            v(selector),
            v(&operands[0]),
            c(0),
            v(&operands[1]),
            c(1)
        ),
        Step::Conditional { selector, operands, .. } => {
            let branches: Vec<String> = names.iter().map(|n| format!("&{n}")).collect();
            format!("conditional_indexed({}, &[{}], &[{}])", v(selector), branches.join(", "), list(operands))
        }
        Step::Call { xs, .. } => format!("call(&b, &{}, &[{}])", c(0), list(xs)),
        Step::Map { xs, .. } => {
            let rank = xs.iter().map(|&x| describe(x).1.len()).max().unwrap_or(0);
            format!("map(&b, &[{}], &{}, &{:?})", list(xs), c(0), (0..rank as i64).collect::<Vec<_>>())
        }
    }
}

/// The recipe as a Rust program over `use lazy_xla::*;` (in a function returning
/// `lazy_xla::Result`), ending with the arguments and the computation, ready to compile and
/// run; `describe` gives each step's element type and dimensions.
pub fn program(recipe: &Recipe, describe: Describe<'_>) -> String {
    let mut out = String::new();
    let mut defined = BTreeSet::new();
    let mut names = Vec::new();
    for (i, step) in recipe.steps.iter().enumerate() {
        let computations = step.computations(i, describe);
        for computation in &computations {
            if defined.insert(computation.name.clone()) {
                out += &format!("let {} = {};\n", computation.name, computation.source());
            }
        }
        names.push(computations.into_iter().map(|c| c.name).collect::<Vec<_>>());
    }
    out += "let b = XlaBuilder::new(\"fuzz\");\n";
    let mut parameter = 0;
    let mut arguments = Vec::new();
    for (i, step) in recipe.steps.iter().enumerate() {
        let made = expression(step, parameter, &names[i], describe);
        let made = match step.tuple_output() {
            Some(k) => format!("get_tuple_element({made}, {k})"),
            None => made,
        };
        out += &format!("let v{i} = {made};\n");
        if let Step::Parameter { shape, argument_layout, values } = step {
            let argument_shape = shape.relayout(argument_layout).expect("argument layout");
            arguments.push(format!(
                "let a{parameter} = Literal::from_vec(&{}, {})?;\n",
                rust_shape(&argument_shape),
                rust_vec(shape.element_type(), values)
            ));
            parameter += 1;
        }
    }
    let results: Vec<String> = recipe.results.iter().map(|r| format!("v{r}")).collect();
    out += &match recipe.tuple {
        true => format!("let computation = b.build(tuple(&b, &[{}]))?;\n", results.join(", ")),
        false => format!("let computation = b.build({})?;\n", results[0]),
    };
    for argument in arguments {
        out += &argument;
    }
    let names: Vec<String> = (0..parameter).map(|p| format!("&a{p}")).collect();
    out += &format!("let arguments: [&Literal; {parameter}] = [{}];\n", names.join(", "));
    out
}
