//! Padding is the caller's memory: `execute_into` writes an output's elements and leaves every
//! padding element holding its layout's padding value, whatever computes the result (a loop, a
//! reduction's init and partial sums, a relayout, or any kernel: dot, gather, scatter, sort,
//! windows, convolution, control flow), fused or unfused, with parameters that are padded
//! themselves. Each case runs with random padded layouts of the output and of the arguments,
//! and must give `execute`'s values (into an unpadded default-layout output) and untouched
//! padding.

use lazy_xla::*;
use proptest::prelude::*;

/// One writer of an output: the parameters it takes and the graph over them.
struct Case {
    name: &'static str,
    parameters: Vec<Shape>,
    build: for<'b> fn(&'b XlaBuilder, &[XlaOp<'b>]) -> XlaOp<'b>,
}

fn f32_shape(dims: &[i64]) -> Shape {
    Shape::new(ElementType::F32, dims)
}

/// `(T, T) -> T` computations over scalars of `ty`.
fn scalar_computation(ty: ElementType, f: for<'b> fn(XlaOp<'b>, XlaOp<'b>) -> XlaOp<'b>) -> XlaComputation {
    let r = XlaBuilder::new("scalar");
    let s = Shape::scalar(ty);
    let (a, b) = (r.parameter(0, &s, "a"), r.parameter(1, &s, "b"));
    r.build(f(a, b)).expect("a scalar computation")
}

fn sum(ty: ElementType) -> XlaComputation {
    scalar_computation(ty, |a, b| a + b)
}

/// Every writer, each with small shapes (and one large enough for partial sums).
fn cases() -> Vec<Case> {
    let f = ElementType::F32;
    vec![
        Case {
            name: "element-wise loop",
            parameters: vec![f32_shape(&[3, 5])],
            build: |b, p| p[0] * b.constant_r0(2.0f32) + p[0],
        },
        Case {
            name: "unary of a padded parameter",
            parameters: vec![f32_shape(&[4, 3])],
            build: |_, p| neg(p[0]),
        },
        Case {
            name: "reduce (the init fills the output)",
            parameters: vec![f32_shape(&[4, 3, 5])],
            build: |b, p| reduce(p[0], b.constant_r0(1.5f32), &sum(ElementType::F32), &[1]),
        },
        Case {
            name: "column sums in partial sums",
            parameters: vec![f32_shape(&[1 << 13, 16])],
            build: |b, p| reduce(p[0], b.constant_r0(0.0f32), &sum(ElementType::F32), &[0]),
        },
        Case {
            name: "max reduce of s32",
            parameters: vec![Shape::new(ElementType::S32, &[6, 7])],
            build: |b, p| {
                reduce(
                    p[0],
                    b.constant_r0(i32::MIN),
                    &scalar_computation(ElementType::S32, |a, c| max(a, c, &[])),
                    &[0],
                )
            },
        },
        Case {
            name: "softmax's row reductions",
            parameters: vec![f32_shape(&[4, 256])],
            build: |b, p| {
                let m = reduce(
                    p[0],
                    b.constant_r0(f32::NEG_INFINITY),
                    &scalar_computation(ElementType::F32, |a, c| max(a, c, &[])),
                    &[1],
                );
                let e = exp(sub(p[0], m, &[0]));
                let s = reduce(e, b.constant_r0(0.0f32), &sum(ElementType::F32), &[1]);
                div(e, s, &[0])
            },
        },
        Case {
            name: "transpose",
            parameters: vec![f32_shape(&[3, 4, 2])],
            build: |_, p| transpose(p[0], &[2, 0, 1]),
        },
        Case {
            name: "dot",
            parameters: vec![f32_shape(&[3, 4]), f32_shape(&[4, 5])],
            build: |_, p| dot(p[0], p[1]),
        },
        Case {
            name: "concatenate",
            parameters: vec![f32_shape(&[2, 3]), f32_shape(&[4, 3])],
            build: |b, p| concat_in_dim(b, &[p[0], p[1]], 0),
        },
        Case {
            name: "pad",
            parameters: vec![f32_shape(&[2, 3])],
            build: |b, p| {
                let d = |l, h, i| PaddingConfigDimension {
                    edge_padding_low: l,
                    edge_padding_high: h,
                    interior_padding: i,
                };
                pad(p[0], b.constant_r0(9.0f32), &PaddingConfig { dimensions: vec![d(1, 0, 1), d(-1, 2, 0)] })
            },
        },
        Case {
            name: "reshape that reorders",
            parameters: vec![Shape::with_layout(f, &[4, 6], &[0, 1]).expect("a layout")],
            build: |_, p| reshape(p[0], &[3, 8]),
        },
        Case {
            name: "gather",
            parameters: vec![f32_shape(&[5, 4]), Shape::new(ElementType::S32, &[3])],
            build: |_, p| {
                let numbers = GatherDimensionNumbers {
                    offset_dims: vec![1],
                    collapsed_slice_dims: vec![0],
                    start_index_map: vec![0],
                    index_vector_dim: 1,
                    ..Default::default()
                };
                gather(p[0], p[1], &numbers, &[1, 4], false)
            },
        },
        Case {
            name: "scatter",
            parameters: vec![f32_shape(&[5, 4]), Shape::new(ElementType::S32, &[2]), f32_shape(&[2, 4])],
            build: |_, p| {
                let numbers = ScatterDimensionNumbers {
                    update_window_dims: vec![1],
                    inserted_window_dims: vec![0],
                    scatter_dims_to_operand_dims: vec![0],
                    index_vector_dim: 1,
                    ..Default::default()
                };
                scatter(p[0], p[1], p[2], &sum(ElementType::F32), &numbers, false, false)
            },
        },
        Case {
            name: "dynamic slice",
            parameters: vec![f32_shape(&[5, 4]), Shape::scalar(ElementType::S32)],
            build: |b, p| dynamic_slice(p[0], &[p[1], b.constant_r0(1i32)], &[3, 2]),
        },
        Case {
            name: "dynamic update slice",
            parameters: vec![f32_shape(&[5, 4]), f32_shape(&[2, 3]), Shape::scalar(ElementType::S32)],
            build: |_, p| dynamic_update_slice(p[0], p[1], &[p[2], p[2]]),
        },
        Case {
            name: "reduce window",
            parameters: vec![f32_shape(&[5, 6])],
            build: |b, p| {
                reduce_window(
                    p[0],
                    b.constant_r0(0.0f32),
                    &sum(ElementType::F32),
                    &[2, 3],
                    &[1, 2],
                    Padding::Same,
                )
            },
        },
        Case {
            name: "select and scatter",
            parameters: vec![f32_shape(&[4, 6]), f32_shape(&[2, 3])],
            build: |b, p| {
                let select = scalar_computation(ElementType::F32, |a, c| ge(a, c, &[]));
                select_and_scatter(
                    p[0],
                    &select,
                    &[2, 2],
                    &[2, 2],
                    Padding::Valid,
                    p[1],
                    b.constant_r0(0.0f32),
                    &sum(ElementType::F32),
                )
            },
        },
        Case {
            name: "convolution",
            parameters: vec![f32_shape(&[1, 2, 5, 5]), f32_shape(&[3, 2, 3, 3])],
            build: |_, p| conv(p[0], p[1], &[1, 1], Padding::Same),
        },
        Case {
            name: "sort of two operands (a tuple root)",
            parameters: vec![f32_shape(&[3, 5]), Shape::new(ElementType::S32, &[3, 5])],
            build: |_, p| {
                let r = XlaBuilder::new("less");
                let s = Shape::scalar(ElementType::F32);
                let i = Shape::scalar(ElementType::S32);
                let (a, c) = (r.parameter(0, &s, "a"), r.parameter(1, &s, "c"));
                let _ = (r.parameter(2, &i, "ia"), r.parameter(3, &i, "ic"));
                let less = r.build(lt(a, c, &[])).expect("a comparator");
                sort(&[p[0], p[1]], &less, 1, true)
            },
        },
        Case { name: "top k", parameters: vec![f32_shape(&[3, 6])], build: |_, p| top_k(p[0], 2, true) },
        Case {
            name: "while loop",
            parameters: vec![f32_shape(&[2, 3])],
            build: |b, p| {
                let state = Shape::tuple(&[Shape::scalar(ElementType::S32), f32_shape(&[2, 3])]);
                let c = XlaBuilder::new("condition");
                let s = c.parameter(0, &state, "s");
                let condition =
                    c.build(lt(get_tuple_element(s, 0), c.constant_r0(3i32), &[])).expect("a condition");
                let d = XlaBuilder::new("body");
                let s = d.parameter(0, &state, "s");
                let (n, x) = (get_tuple_element(s, 0), get_tuple_element(s, 1));
                let body = d
                    .build(tuple(&d, &[n + d.constant_r0(1i32), x * d.constant_r0(2.0f32)]))
                    .expect("a body");
                get_tuple_element(while_loop(&condition, &body, tuple(b, &[b.constant_r0(0i32), p[0]])), 1)
            },
        },
        Case {
            name: "conditional",
            parameters: vec![Shape::scalar(ElementType::Pred), f32_shape(&[3, 2])],
            build: |_, p| {
                let branch = |name: &str, twice: bool| {
                    let r = XlaBuilder::new(name);
                    let x = r.parameter(0, &f32_shape(&[3, 2]), "x");
                    r.build(if twice { x + x } else { neg(x) }).expect("a branch")
                };
                conditional(p[0], p[1], &branch("t", true), p[1], &branch("f", false))
            },
        },
    ]
}

/// The layouts a case's shape may take: a permutation of its dimensions, padded by up to 3 in
/// each dimension with one of the four padding values.
fn padded(shape: &Shape, permutation: &[usize], extra: &[i64], value: PaddingValue) -> Shape {
    let rank = shape.rank();
    let minor_to_major: Vec<i64> = (0..rank).map(|k| permutation[k] as i64).collect();
    let padded: Vec<i64> = shape.dimensions().iter().zip(extra).map(|(&d, &e)| d + e).collect();
    let layout =
        Layout::new(&minor_to_major).with_padding(&padded, value).expect("padding at least the dimensions");
    shape.relayout(&layout).expect("a layout of the rank")
}

/// A random padded layout for every array of `shape` (every element of a tuple).
fn padded_like(shape: &Shape, seed: &mut impl FnMut(usize) -> usize) -> Shape {
    if shape.is_tuple() {
        return Shape::tuple(&shape.tuple_shapes().iter().map(|s| padded_like(s, seed)).collect::<Vec<_>>());
    }
    let rank = shape.rank();
    if rank == 0 {
        return shape.clone();
    }
    let mut permutation: Vec<usize> = (0..rank).collect();
    for k in (1..rank).rev() {
        permutation.swap(k, seed(k + 1));
    }
    let extra: Vec<i64> = (0..rank).map(|_| seed(4) as i64).collect();
    let value = [PaddingValue::Zero, PaddingValue::One, PaddingValue::Lowest, PaddingValue::Highest][seed(4)];
    padded(shape, &permutation, &extra, value)
}

/// Small deterministic values of `shape` (indices stay in range: 0..3).
fn argument(shape: &Shape) -> Literal {
    let n = shape.element_count() as usize;
    match shape.element_type() {
        ElementType::Pred => Literal::from_vec(shape, (0..n).map(|i| i % 2 == 0).collect()),
        ElementType::S32 => Literal::from_vec(shape, (0..n).map(|i| ((i * 7) % 3) as i32).collect()),
        _ => Literal::from_vec(shape, (0..n).map(|i| ((i * 5) % 11) as f32 - 4.5).collect()),
    }
    .expect("an argument")
}

/// The buffer offsets of `shape`'s padding and the bits each must hold (of a fresh literal).
fn padding_of(literal: &Literal) -> Vec<(usize, u64)> {
    let shape = literal.shape();
    let fresh = Literal::zeros(shape).expect("a literal");
    let bits = |l: &Literal| -> Vec<u64> {
        match l.element_type() {
            ElementType::Pred => l.memory::<bool>().expect("pred").iter().map(|&b| b as u64).collect(),
            ElementType::S32 => l.memory::<i32>().expect("s32").iter().map(|&v| v as u32 as u64).collect(),
            _ => l.memory::<f32>().expect("f32").iter().map(|&v| v.to_bits() as u64).collect(),
        }
    };
    let (expected, got) = (bits(&fresh), bits(literal));
    let mut element = vec![false; got.len()];
    let dims = shape.dimensions().to_vec();
    for linear in 0..shape.element_count() {
        let mut index = vec![0; dims.len()];
        let mut rest = linear;
        for d in (0..dims.len()).rev() {
            index[d] = rest % dims[d];
            rest /= dims[d];
        }
        element[shape.linear_index(&index).expect("an index") as usize] = true;
    }
    (0..got.len()).filter(|&o| !element[o] && got[o] != expected[o]).map(|o| (o, got[o])).collect()
}

/// The literal's arrays (itself, or a tuple's elements).
fn arrays(literal: &Literal) -> Vec<&Literal> {
    match literal.is_tuple() {
        true => (0..literal.shape().tuple_shapes().len())
            .map(|i| literal.tuple_element(i).expect("an element"))
            .collect(),
        false => vec![literal],
    }
}

/// Runs `case` with its arguments and its output in the layouts `seed` picks; an `Err` says what
/// went wrong.
fn check(case: &Case, seed: &mut impl FnMut(usize) -> usize) -> Result<(), String> {
    let b = XlaBuilder::new(case.name);
    let shapes: Vec<Shape> =
        case.parameters.iter().map(|s| if seed(2) == 0 { padded_like(s, seed) } else { s.clone() }).collect();
    let parameters: Vec<XlaOp<'_>> =
        shapes.iter().enumerate().map(|(i, s)| b.parameter(i as i64, s, "p")).collect();
    let computation = b.build((case.build)(&b, &parameters)).map_err(|e| format!("build: {e}"))?;
    let arguments: Vec<Literal> = shapes
        .iter()
        .map(|s| {
            let values = argument(&s.with_default_layout());
            let layout =
                if seed(2) == 0 { padded_like(s, seed).layout().clone() } else { s.layout().clone() };
            values.relayout(&layout).expect("an argument layout")
        })
        .collect();
    let arguments: Vec<&Literal> = arguments.iter().collect();
    let result_shape = computation.program_shape().result;
    let output_shape = padded_like(&result_shape, seed);
    for fusion in [true, false] {
        let exe = computation
            .compile(&CompileOptions { fusion, ..Default::default() })
            .map_err(|e| format!("compile: {e}"))?;
        let expected = exe.execute(&arguments).map_err(|e| format!("execute: {e}"))?;
        let mut out = Literal::zeros(&output_shape).map_err(|e| e.to_string())?;
        exe.execute_into(&arguments, &mut out).map_err(|e| format!("execute_into: {e}"))?;
        for (k, (got, want)) in arrays(&out).into_iter().zip(arrays(&expected)).enumerate() {
            let bad = padding_of(got);
            if !bad.is_empty() {
                return Err(format!(
                    "fusion {fusion}, output {k} {}: padding overwritten at (offset, bits) {bad:?}",
                    got.shape()
                ));
            }
            if got.relayout(want.shape().layout()).map_err(|e| e.to_string())? != *want {
                return Err(format!(
                    "fusion {fusion}, output {k} {}: values differ from execute's",
                    got.shape()
                ));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn execute_into_writes_elements_and_keeps_padding(numbers in prop::collection::vec(any::<u32>(), 64)) {
        for case in cases() {
            let mut k = 0;
            let mut seed = |n: usize| {
                k += 1;
                numbers[k % numbers.len()] as usize % n
            };
            if let Err(message) = check(&case, &mut seed) {
                prop_assert!(false, "{}: {}", case.name, message);
            }
        }
    }
}
