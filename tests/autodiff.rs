//! Derivatives (API.md, section `autodiff`): for each op family a check_grads-style test in f64
//! (the jvp's directional derivative against central differences, and the dot-product identity
//! ⟨t, vjp(c)⟩ = ⟨jvp(t), c⟩), fused and unfused; ties split as jax splits them; a
//! Hessian-vector product; the refusals; HLO text round trips; whiles (fixed trip counts in
//! reverse mode, any in forward mode) and conditionals; and jax's own values for an MLP loss, a
//! layer norm, attention, a CNN, a scan, a fori_loop, a GRU scan and conditionals
//! (`tests/data/autodiff/`, with the script that made them).

use lazy_xla::*;

/// A small deterministic generator (xorshift), uniform in `[lo, hi)`.
struct Rng(u64);

impl Rng {
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        lo + (hi - lo) * ((self.0 >> 11) as f64 / (1u64 << 53) as f64)
    }
    fn array(&mut self, shape: &Shape, lo: f64, hi: f64) -> Literal {
        let values = (0..shape.element_count()).map(|_| self.uniform(lo, hi)).collect();
        Literal::from_vec(shape, values).unwrap()
    }
    /// Values for `shape`: an array, or a tuple of arrays.
    fn value(&mut self, shape: &Shape, lo: f64, hi: f64) -> Literal {
        if shape.is_tuple() {
            Literal::tuple(shape.tuple_shapes().iter().map(|s| self.value(s, lo, hi)).collect())
        } else {
            self.array(shape, lo, hi)
        }
    }
}

fn f64s(literal: &Literal) -> Vec<f64> {
    match literal.element_type() {
        ElementType::F64 => literal.to_vec::<f64>().unwrap(),
        ElementType::F32 => literal.to_vec::<f32>().unwrap().into_iter().map(f64::from).collect(),
        other => panic!("not a float result: {other}"),
    }
}

/// The arrays of a result, tuples flattened.
fn leaves(literal: Literal) -> Vec<Literal> {
    if literal.is_tuple() {
        literal.decompose_tuple().unwrap().into_iter().flat_map(leaves).collect()
    } else {
        vec![literal]
    }
}

fn run(computation: &XlaComputation, args: &[&Literal], fusion: bool) -> Vec<Literal> {
    let options = CompileOptions { fusion, ..Default::default() };
    let out = computation.compile(&options).unwrap().execute(args).unwrap();
    leaves(out)
}

fn inner(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn assert_close(got: &[f64], want: &[f64], tolerance: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tolerance * (1.0 + w.abs()), "{what}[{i}]: got {g}, want {w}");
    }
}

/// `args` with `eps · tangent` added to the parameters `wrt`.
fn moved(args: &[Literal], wrt: &[i64], tangents: &[Literal], eps: f64) -> Vec<Literal> {
    let mut moved = args.to_vec();
    for (&number, tangent) in wrt.iter().zip(tangents) {
        let arg = &args[number as usize];
        let values = f64s(arg).iter().zip(f64s(tangent)).map(|(x, t)| x + eps * t).collect();
        moved[number as usize] = Literal::from_vec(arg.shape(), values).unwrap();
    }
    moved
}

/// jax's `check_grads` in f64, orders 1, both modes, fused and unfused: the jvp's primal
/// equals the function, its tangent the central difference, and ⟨t, vjp(c)⟩ = ⟨jvp(t), c⟩.
fn check_grads(f: &XlaComputation, args: &[Literal], wrt: &[i64], seed: u64) {
    let mut rng = Rng(seed);
    let parameters = f.program_shape().parameters;
    let tangents: Vec<Literal> =
        wrt.iter().map(|&n| rng.array(&parameters[n as usize].1, -1.0, 1.0)).collect();
    let cotangent = rng.value(&f.program_shape().result, -1.0, 1.0);
    let forward = jvp(f, wrt).unwrap();
    let reverse = vjp(f, wrt).unwrap();
    let eps = 1e-5;
    for fusion in [true, false] {
        let refs: Vec<&Literal> = args.iter().collect();
        let value = run(f, &refs, fusion);
        let with_tangents: Vec<&Literal> = args.iter().chain(&tangents).collect();
        let out = run(&forward, &with_tangents, fusion);
        let (primal, tangent) = out.split_at(value.len());
        for (i, (p, v)) in primal.iter().zip(&value).enumerate() {
            assert_close(&f64s(p), &f64s(v), 1e-12, &format!("jvp primal {i}"));
        }
        let plus = moved(args, wrt, &tangents, eps);
        let minus = moved(args, wrt, &tangents, -eps);
        let plus = run(f, &plus.iter().collect::<Vec<_>>(), fusion);
        let minus = run(f, &minus.iter().collect::<Vec<_>>(), fusion);
        for (i, t) in tangent.iter().enumerate() {
            let numeric: Vec<f64> =
                f64s(&plus[i]).iter().zip(f64s(&minus[i])).map(|(p, m)| (p - m) / (2.0 * eps)).collect();
            assert_close(&f64s(t), &numeric, 1e-5, &format!("jvp tangent {i} (fusion {fusion})"));
        }
        let with_cotangent: Vec<&Literal> = args.iter().chain([&cotangent]).collect();
        let cts = run(&reverse, &with_cotangent, fusion);
        let lhs: f64 = tangents.iter().zip(&cts).map(|(t, c)| inner(&f64s(t), &f64s(c))).sum();
        let cotangent_leaves = leaves(cotangent.clone());
        let rhs: f64 = tangent.iter().zip(&cotangent_leaves).map(|(t, c)| inner(&f64s(t), &f64s(c))).sum();
        assert!((lhs - rhs).abs() <= 1e-9 * (1.0 + rhs.abs()), "<t, vjp(c)> = {lhs} but <jvp(t), c> = {rhs}");
        for (ct, &n) in cts.iter().zip(wrt) {
            assert_eq!(ct.shape().dimensions(), parameters[n as usize].1.dimensions());
        }
    }
}

fn adder(element_type: ElementType) -> XlaComputation {
    let s = XlaBuilder::new("sum");
    let scalar = Shape::scalar(element_type);
    let (p, q) = (s.parameter(0, &scalar, "p"), s.parameter(1, &scalar, "q"));
    s.build(p + q).unwrap()
}

fn binary_reducer(name: &str) -> XlaComputation {
    let s = XlaBuilder::new(name);
    let scalar = shape!(f64[]);
    let (p, q) = (s.parameter(0, &scalar, "p"), s.parameter(1, &scalar, "q"));
    let root = match name {
        "add" => p + q,
        "mul" => p * q,
        "max" => max(p, q, &[]),
        _ => min(p, q, &[]),
    };
    s.build(root).unwrap()
}

fn sum_all<'b>(x: XlaOp<'b>, rank: usize) -> XlaOp<'b> {
    let dims: Vec<i64> = (0..rank as i64).collect();
    reduce(x, x.builder().constant_r0(0.0f64), &adder(ElementType::F64), &dims)
}

#[test]
fn unary_functions() {
    let b = XlaBuilder::new("unary");
    let x = b.parameter(0, &shape!(f64[2, 3]), "x");
    let c = |v: f64| b.constant_r0(v);
    let results = [
        exp(x),
        log(x),
        log1p(x),
        expm1(x),
        tanh(x),
        logistic(x),
        sqrt(x),
        rsqrt(x),
        sin(x),
        cos(x),
        tan(x),
        erf(x),
        cbrt(x),
        -x,
        abs(-x),
        abs(x - c(2.0)),
        floor(x) + round(x) + sign(x) + ceil(x) + x,
        reduce_precision(x, 11, 52),
    ];
    let f = b.build(tuple(&b, &results)).unwrap();
    let args = [Rng(7).array(&shape!(f64[2, 3]), 0.6, 1.4)];
    check_grads(&f, &args, &[0], 1);
}

#[test]
fn binary_functions() {
    let b = XlaBuilder::new("binary");
    let x = b.parameter(0, &shape!(f64[5]), "x");
    let y = b.parameter(1, &shape!(f64[5]), "y");
    let results = [
        x + y,
        x - y,
        x * y,
        div(x, y, &[]),
        pow(x, y, &[]),
        atan2(x, y, &[]),
        rem(x, y, &[]),
        max(x, y, &[]),
        min(x, y, &[]),
    ];
    let f = b.build(tuple(&b, &results)).unwrap();
    let mut rng = Rng(3);
    let args = [rng.array(&shape!(f64[5]), 0.5, 3.0), rng.array(&shape!(f64[5]), 0.5, 1.5)];
    // Away from kinks: max/min ties and rem's jumps.
    let (xs, ys) = (f64s(&args[0]), f64s(&args[1]));
    assert!(xs
        .iter()
        .zip(&ys)
        .all(|(x, y)| (x - y).abs() > 1e-2 && ((x / y) - (x / y).round()).abs() > 1e-2));
    check_grads(&f, &args, &[0, 1], 2);
    check_grads(&f, &args, &[1], 4);
}

#[test]
fn select_clamp_convert_and_zero_derivatives() {
    let b = XlaBuilder::new("choices");
    let x = b.parameter(0, &shape!(f64[6]), "x");
    let lo = b.parameter(1, &shape!(f64[6]), "lo");
    let c = |v: f64| b.constant_r0(v);
    let results = [
        select(gt(x, c(0.0), &[]), x * x, sin(x)),
        clamp(lo, x, c(0.5) + lo * lo),
        convert_element_type(convert_element_type(x, ElementType::F32), ElementType::F64) * c(0.0) + x,
        convert_element_type(convert_element_type(x * c(3.0), ElementType::S32), ElementType::F64) + x * lo,
        round_nearest_even(x) * lo,
    ];
    let f = b.build(tuple(&b, &results)).unwrap();
    let args = [
        Literal::vec1(&[-0.8, -0.3, 0.15, 0.45, 0.7, 1.3f64]),
        Literal::vec1(&[-0.5, 0.1, 0.0, -0.1, 0.25, 0.33f64]),
    ];
    check_grads(&f, &args, &[0, 1], 5);

    // A convert to f32 and back: the tangent passes through f32.
    let b = XlaBuilder::new("through_f32");
    let x = b.parameter(0, &shape!(f64[3]), "x");
    let f = b
        .build(sum_all(
            convert_element_type(exp(convert_element_type(x, ElementType::F32)), ElementType::F64),
            1,
        ))
        .unwrap();
    let g = grad(&f, &[0]).unwrap();
    let xs = [0.1, 0.2, -0.4f64];
    let out = run(&g, &[&Literal::vec1(&xs)], true);
    assert_close(&f64s(&out[0]), &xs.map(f64::exp), 1e-6, "d/dx sum(exp(f32(x)))");
}

#[test]
fn ties_split_as_jax_splits_them() {
    // max/min: half each where the operands tie; clamp: nothing to anyone at a tie; reduce max:
    // the gradient shared among the elements equal to the maximum.
    let b = XlaBuilder::new("ties");
    let x = b.parameter(0, &shape!(f64[3]), "x");
    let y = b.parameter(1, &shape!(f64[3]), "y");
    let lo = b.constant_r1(&[1.0f64, 0.0, 0.0]);
    let hi = b.constant_r1(&[5.0f64, 5.0, 2.0]);
    let max_of = binary_reducer("max");
    let total = sum_all(max(x, y, &[]), 1)
        + sum_all(min(x, y, &[]) * b.constant_r0(10.0), 1)
        + sum_all(clamp(lo, x, hi) * b.constant_r0(100.0), 1)
        + reduce(x, b.constant_r0(f64::NEG_INFINITY), &max_of, &[0]) * b.constant_r0(1000.0);
    let f = b.build(total).unwrap();
    let g = grad(&f, &[0, 1]).unwrap();
    let (xs, ys) = (Literal::vec1(&[1.0f64, 2.0, 2.0]), Literal::vec1(&[1.0f64, 3.0, 0.0]));
    for fusion in [true, false] {
        let out = run(&g, &[&xs, &ys], fusion);
        // x: [tie with y (0.5 + 5), x < y (10), x > y (1)] + clamp [x = lo: 0, inside: 100,
        // x = hi: 0] + reduce max [not max, tie: 500, tie: 500].
        assert_eq!(f64s(&out[0]), [5.5, 10.0 + 100.0 + 500.0, 1.0 + 500.0]);
        assert_eq!(f64s(&out[1]), [5.5, 1.0, 10.0]);
    }
}

#[test]
fn movement_ops() {
    let b = XlaBuilder::new("movement");
    let x = b.parameter(0, &shape!(f64[2, 3]), "x");
    let v = b.parameter(1, &shape!(f64[3]), "v");
    let i = b.parameter(2, &shape!(s32[]), "i");
    let zero = b.constant_r0(0.0f64);
    let results = [
        broadcast_in_dim(v, &[4, 3], &[1]) * broadcast_in_dim(v, &[4, 3], &[1]),
        broadcast(x, &[2]),
        reshape(x, &[3, 2]) * reshape(x, &[3, 2]),
        transpose(x, &[1, 0]),
        slice(x, &[0, 0], &[2, 3], &[1, 2]),
        pad(x, reshape(slice(v * v, &[0], &[1], &[1]), &[]), &PaddingConfig::new(&[(1, -1, 1), (-1, 2, 0)])),
        pad(x, zero, &PaddingConfig::new(&[(0, 0, 2), (1, 1, 1)])),
        concat_in_dim(&b, &[x, reshape(v, &[1, 3]), x * x], 0),
        rev(x, &[0, 1]),
        dynamic_slice(x, &[i, b.constant_r0(1i32)], &[1, 2]),
        dynamic_update_slice(x, reshape(v, &[1, 3]) * b.constant_r0(2.0), &[i, b.constant_r0(0i32)]),
    ];
    let f = b.build(tuple(&b, &results)).unwrap();
    let mut rng = Rng(11);
    let args = [
        rng.array(&shape!(f64[2, 3]), -1.0, 1.0),
        rng.array(&shape!(f64[3]), -1.0, 1.0),
        Literal::scalar(1i32),
    ];
    check_grads(&f, &args, &[0, 1], 12);
    check_grads(&f, &args, &[1], 13);
}

#[test]
fn reductions() {
    let b = XlaBuilder::new("reductions");
    let x = b.parameter(0, &shape!(f64[3, 4]), "x");
    let init = b.parameter(1, &shape!(f64[]), "init");
    let results = [
        reduce(x, init, &binary_reducer("add"), &[1]),
        reduce(x, b.constant_r0(0.0f64), &binary_reducer("add"), &[0, 1]),
        reduce(x, b.constant_r0(1.0f64), &binary_reducer("mul"), &[0]),
        reduce(x, b.constant_r0(f64::NEG_INFINITY), &binary_reducer("max"), &[1]),
        reduce(x, b.constant_r0(f64::INFINITY), &binary_reducer("min"), &[0]),
    ];
    let f = b.build(tuple(&b, &results)).unwrap();
    let mut rng = Rng(21);
    let args = [rng.array(&shape!(f64[3, 4]), 0.5, 2.0), Literal::scalar(0.25f64)];
    check_grads(&f, &args, &[0, 1], 22);

    // A product's gradient at zeros: each element gets the product of the others.
    let b = XlaBuilder::new("product");
    let x = b.parameter(0, &shape!(f64[3, 3]), "x");
    let f = b.build(reduce(x, b.constant_r0(2.0f64), &binary_reducer("mul"), &[1])).unwrap();
    let v = vjp(&f, &[0]).unwrap();
    let xs =
        Literal::from_vec(&shape!(f64[3, 3]), vec![2.0, 3.0, 5.0, 0.0, 3.0, 5.0, 0.0, 0.0, 7.0]).unwrap();
    let ones = Literal::vec1(&[1.0f64, 1.0, 1.0]);
    for fusion in [true, false] {
        let out = run(&v, &[&xs, &ones], fusion);
        assert_eq!(f64s(&out[0]), [30.0, 20.0, 12.0, 30.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    }
}

#[test]
fn dot_general_with_any_dimension_numbers() {
    let b = XlaBuilder::new("dots");
    let x = b.parameter(0, &shape!(f64[2, 3, 4]), "x");
    let y = b.parameter(1, &shape!(f64[4, 2, 5]), "y");
    let m = b.parameter(2, &shape!(f64[3, 5]), "m");
    let batched = dot_general(x, y, &DotDimensionNumbers::new(&[2], &[0], &[0], &[1]));
    let two_contracted = dot_general(x, y, &DotDimensionNumbers::new(&[2, 0], &[0, 1], &[], &[]));
    let results = [
        batched,
        two_contracted,
        dot(transpose(m, &[1, 0]), m),
        dot_general(m, x, &DotDimensionNumbers::new(&[0], &[1], &[], &[])),
    ];
    let f = b.build(tuple(&b, &results)).unwrap();
    let mut rng = Rng(31);
    let args = [
        rng.array(&shape!(f64[2, 3, 4]), -1.0, 1.0),
        rng.array(&shape!(f64[4, 2, 5]), -1.0, 1.0),
        rng.array(&shape!(f64[3, 5]), -1.0, 1.0),
    ];
    check_grads(&f, &args, &[0, 1, 2], 32);
    check_grads(&f, &args, &[1], 33);
}

#[test]
fn calls_and_tuples() {
    let inner = XlaBuilder::new("inner");
    let p = inner.parameter(0, &shape!(f64[3]), "p");
    let q = inner.parameter(1, &shape!(f64[3]), "q");
    let inner = inner.build(tuple(&inner, &[tanh(p) * q, exp(q)])).unwrap();
    let b = XlaBuilder::new("outer");
    let x = b.parameter(0, &shape!(f64[3]), "x");
    let y = b.parameter(1, &shape!(f64[3]), "y");
    let pair = call(&b, &inner, &[x, y]);
    let again = call(&b, &inner, &[get_tuple_element(pair, 1), x]);
    let f = b
        .build(tuple(&b, &[get_tuple_element(again, 0), tuple(&b, &[get_tuple_element(pair, 0), y])]))
        .unwrap();
    let mut rng = Rng(41);
    let args = [rng.array(&shape!(f64[3]), -1.0, 1.0), rng.array(&shape!(f64[3]), -1.0, 1.0)];
    check_grads(&f, &args, &[0, 1], 42);
}

/// f(x) = Σ sin(x)·x² + (Σ x)³.
fn scalar_function() -> XlaComputation {
    let b = XlaBuilder::new("f");
    let x = b.parameter(0, &shape!(f64[4]), "x");
    let s = sum_all(x, 1);
    b.build(sum_all(sin(x) * x * x, 1) + s * s * s).unwrap()
}

#[test]
fn gradients_and_tangents_come_back_in_their_parameters_and_results_layouts() {
    let column = Shape::with_layout(ElementType::F64, &[3, 4], &[0, 1]).unwrap();
    let padding = Layout::new(&[1, 0]).with_padding(&[4, 5], PaddingValue::Zero).unwrap();
    let padded = shape!(f64[3, 4]).relayout(&padding).unwrap();
    let b = XlaBuilder::new("f");
    let (x, y) = (b.parameter(0, &column, "x"), b.parameter(1, &padded, "y"));
    // `x · y + x` keeps x's column-major layout; its sum is a scalar.
    let product = b.build(x * y + x).unwrap();
    let loss = b.build(sum_all(x * y * y, 2)).unwrap();
    let mut rng = Rng(7);
    let (xs, ys) = (rng.array(&shape!(f64[3, 4]), -1.0, 1.0), rng.array(&shape!(f64[3, 4]), -1.0, 1.0));
    let arguments = [xs.relayout(column.layout()).unwrap(), ys.relayout(&padding).unwrap()];
    let (xv, yv) = (f64s(&xs), f64s(&ys));
    for fusion in [true, false] {
        let gradients = run(&grad(&loss, &[0, 1]).unwrap(), &[&arguments[0], &arguments[1]], fusion);
        assert_eq!(gradients[0].shape(), &column);
        assert_eq!(gradients[1].shape(), &padded);
        let dx: Vec<f64> = yv.iter().map(|y| y * y).collect();
        let dy: Vec<f64> = xv.iter().zip(&yv).map(|(x, y)| 2.0 * x * y).collect();
        assert_close(&f64s(&gradients[0]), &dx, 1e-12, "d/dx");
        assert_close(&f64s(&gradients[1]), &dy, 1e-12, "d/dy");
        let tangent = Literal::from_vec(&shape!(f64[3, 4]), vec![1.0; 12]).unwrap();
        let tangent = tangent.relayout(column.layout()).unwrap();
        let out = run(&jvp(&product, &[0]).unwrap(), &[&arguments[0], &arguments[1], &tangent], fusion);
        assert_eq!(out[1].shape(), &column, "the tangent in the result's layout");
        let want: Vec<f64> = yv.iter().map(|y| y + 1.0).collect();
        assert_close(&f64s(&out[1]), &want, 1e-12, "the tangent");
    }
}

#[test]
fn hessian_vector_products() {
    let f = scalar_function();
    let g = grad(&f, &[0]).unwrap();
    let xs = [0.3, -0.7, 1.1, 0.4f64];
    let v = [1.0, 0.5, -0.25, 2.0f64];
    // The Hessian: diag((2 - x²) sin x + 4x cos x) + 6 Σx.
    let total: f64 = xs.iter().sum();
    let hv: Vec<f64> = (0..4)
        .map(|i| {
            let x = xs[i];
            ((2.0 - x * x) * x.sin() + 4.0 * x * x.cos()) * v[i] + 6.0 * total * v.iter().sum::<f64>()
        })
        .collect();
    // vjp of grad (the Hessian is symmetric) and jvp of grad.
    let hvp = vjp(&g, &[0]).unwrap();
    let forward = jvp(&g, &[0]).unwrap();
    let (x, v) = (Literal::vec1(&xs), Literal::vec1(&v));
    for fusion in [true, false] {
        let out = run(&hvp, &[&x, &Literal::tuple(vec![v.clone()])], fusion);
        assert_close(&f64s(&out[0]), &hv, 1e-12, "vjp(grad)");
        let out = run(&forward, &[&x, &v], fusion);
        assert_close(&f64s(&out[1]), &hv, 1e-12, "jvp(grad)");
    }
}

#[test]
fn derivatives_round_trip_through_hlo_text() {
    let f = scalar_function();
    let x = Literal::vec1(&[0.3, -0.7, 1.1, 0.4f64]);
    for derived in
        [grad(&f, &[0]).unwrap(), vjp(&grad(&f, &[0]).unwrap(), &[0]).unwrap(), jvp(&f, &[0]).unwrap()]
    {
        let text = derived.to_hlo_text();
        let back = XlaComputation::from_hlo_text(&text).unwrap();
        assert_eq!(back.program_shape(), derived.program_shape());
        let args: Vec<Literal> =
            derived.program_shape().parameters.iter().map(|(_, s)| Rng(5).value(s, -1.0, 1.0)).collect();
        let mut args = args;
        args[0] = x.clone();
        let refs: Vec<&Literal> = args.iter().collect();
        let (a, b) = (run(&derived, &refs, true), run(&back, &refs, false));
        for (a, b) in a.iter().zip(&b) {
            assert_eq!(f64s(a), f64s(b));
        }
    }
}

#[test]
fn refusals_are_errors_naming_the_cause_and_the_caller() {
    let f = scalar_function();
    let here = format!("{}:", file!());
    let error = grad(&f, &[1]).unwrap_err().to_string();
    assert!(error.contains("parameter number 1 is out of range") && error.contains(&here), "{error}");
    let error = grad(&f, &[-1]).unwrap_err().to_string();
    assert!(error.contains("out of range"), "{error}");

    let b = XlaBuilder::new("g");
    let x = b.parameter(0, &shape!(f64[4]), "x");
    let n = b.parameter(1, &shape!(s32[]), "n");
    let non_scalar = b.build(x * convert_element_type(n, ElementType::F64)).unwrap();
    let error = vjp(&non_scalar, &[1]).unwrap_err().to_string();
    assert!(error.contains("parameter 1 of computation g is s32[], not a floating-point array"), "{error}");
    assert!(error.contains(&here), "{error}");
    let error = grad(&non_scalar, &[0]).unwrap_err().to_string();
    assert!(
        error.contains("grad requires a floating-point scalar result") && error.contains("f64[4]"),
        "{error}"
    );
    let error = jvp(&non_scalar, &[0, 0]).unwrap_err().to_string();
    assert!(error.contains("listed twice"), "{error}");
    // The integer parameter needs no derivative: vjp with respect to x alone works.
    assert!(vjp(&non_scalar, &[0]).is_ok());

    // An op without a rule: a map of floats.
    let b = XlaBuilder::new("mapped");
    let x = b.parameter(0, &shape!(f64[4]), "x");
    let square = {
        let c = XlaBuilder::new("square");
        let p = c.parameter(0, &shape!(f64[]), "p");
        c.build(p * p).unwrap()
    };
    let mapped = b.build(map(&b, &[x], &square, &[0])).unwrap();
    let error = vjp(&mapped, &[0]).unwrap_err();
    assert!(matches!(error, Error::Unimplemented(_)), "{error}");
    let error = error.to_string();
    assert!(
        error.contains("reverse-mode derivative of `map` is not implemented") && error.contains(&here),
        "{error}"
    );
    let error = jvp(&mapped, &[0]).unwrap_err().to_string();
    assert!(error.contains("forward-mode derivative of `map`"), "{error}");
}

#[test]
fn sort_and_top_k_carry_tangents_by_the_permutation() {
    let less = {
        let c = XlaBuilder::new("less");
        let (p, q) = (c.parameter(0, &shape!(f64[]), "p"), c.parameter(1, &shape!(f64[]), "q"));
        let _ = (c.parameter(2, &shape!(f64[]), "r"), c.parameter(3, &shape!(f64[]), "s"));
        c.build(lt(p, q, &[])).unwrap()
    };
    let less_one = {
        let c = XlaBuilder::new("less_one");
        let (p, q) = (c.parameter(0, &shape!(f64[]), "p"), c.parameter(1, &shape!(f64[]), "q"));
        c.build(gt(p, q, &[])).unwrap()
    };
    let b = XlaBuilder::new("sorting");
    let x = b.parameter(0, &shape!(f64[3, 4]), "x");
    let y = b.parameter(1, &shape!(f64[3, 4]), "y");
    let pair = sort(&[x, y], &less, 0, true);
    let results = [
        sort(&[x * y], &less_one, 1, false),
        get_tuple_element(pair, 0),
        get_tuple_element(pair, 1) * get_tuple_element(pair, 1),
        get_tuple_element(top_k(exp(y), 2, true), 0),
    ];
    let f = b.build(tuple(&b, &results)).unwrap();
    let mut rng = Rng(81);
    let args = [rng.array(&shape!(f64[3, 4]), -1.0, 1.0), rng.array(&shape!(f64[3, 4]), -1.0, 1.0)];
    check_grads(&f, &args, &[0, 1], 82);
    check_grads(&f, &args, &[0], 83);
}

/// jax's value and gradients of the programs of `tests/data/autodiff/make_goldens.py`.
#[test]
fn jax_golden_programs() {
    let text = std::fs::read_to_string("tests/data/autodiff/goldens.json").unwrap();
    let goldens: serde_json::Value = serde_json::from_str(&text).unwrap();
    for program in goldens["programs"].as_array().unwrap() {
        let name = program["name"].as_str().unwrap();
        let inputs: Vec<Literal> = program["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|input| {
                let dims: Vec<i64> =
                    input["shape"].as_array().unwrap().iter().map(|d| d.as_i64().unwrap()).collect();
                let values =
                    input["values"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
                Literal::from_vec(&Shape::new(ElementType::F64, &dims), values).unwrap()
            })
            .collect();
        // Programs with HLO text are jax's own lowering of the function (no derivative in it).
        let f = match (name, program["hlo"].as_str()) {
            (_, Some(text)) => XlaComputation::from_hlo_text(text).unwrap(),
            ("mlp_loss", None) => mlp_loss(),
            _ => layer_norm_loss(),
        };
        let everything: Vec<i64> = (0..inputs.len() as i64).collect();
        let vg = value_and_grad(&f, &everything).unwrap();
        let mut worst = 0.0f64;
        for fusion in [true, false] {
            let out = run(&vg, &inputs.iter().collect::<Vec<_>>(), fusion);
            let value = program["value"].as_f64().unwrap();
            assert_close(&f64s(&out[0]), &[value], 1e-12, name);
            worst = worst.max((f64s(&out[0])[0] - value).abs() / (1.0 + value.abs()));
            for (i, want) in program["grads"].as_array().unwrap().iter().enumerate() {
                let want: Vec<f64> = want.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
                let got = f64s(&out[1 + i]);
                assert_close(&got, &want, 1e-12, &format!("{name}: gradient {i}"));
                for (g, w) in got.iter().zip(&want) {
                    worst = worst.max((g - w).abs() / (1.0 + w.abs()));
                }
            }
        }
        eprintln!("{name}: largest difference from jax, relative to 1 + |jax|: {worst:.1e}");
    }
}

/// The script's `mlp_loss`: tanh hidden layer, log-softmax, mean cross-entropy.
fn mlp_loss() -> XlaComputation {
    let b = XlaBuilder::new("mlp_loss");
    let x = b.parameter(0, &shape!(f64[4, 3]), "x");
    let w1 = b.parameter(1, &shape!(f64[3, 5]), "w1");
    let b1 = b.parameter(2, &shape!(f64[5]), "b1");
    let w2 = b.parameter(3, &shape!(f64[5, 2]), "w2");
    let b2 = b.parameter(4, &shape!(f64[2]), "b2");
    let labels = b.parameter(5, &shape!(f64[4, 2]), "labels");
    let hidden = tanh(add(dot(x, w1), b1, &[1]));
    let logits = add(dot(hidden, w2), b2, &[1]);
    let row_max = reduce(logits, b.constant_r0(f64::NEG_INFINITY), &binary_reducer("max"), &[1]);
    let shifted = sub(logits, row_max, &[0]);
    let total = reduce(exp(shifted), b.constant_r0(0.0f64), &adder(ElementType::F64), &[1]);
    let log_softmax = sub(shifted, log(total), &[0]);
    let picked = sum_all(labels * log_softmax, 2);
    b.build(-picked / b.constant_r0(4.0f64)).unwrap()
}

/// The script's `layer_norm_loss`: Σ tanh(layer_norm(x) · γ + β) · weights.
fn layer_norm_loss() -> XlaComputation {
    let b = XlaBuilder::new("layer_norm_loss");
    let x = b.parameter(0, &shape!(f64[3, 8]), "x");
    let gamma = b.parameter(1, &shape!(f64[8]), "gamma");
    let beta = b.parameter(2, &shape!(f64[8]), "beta");
    let weights = b.parameter(3, &shape!(f64[3, 8]), "weights");
    let eighth = b.constant_r0(0.125f64);
    let mean = reduce(x, b.constant_r0(0.0f64), &adder(ElementType::F64), &[1]) * eighth;
    let centered = sub(x, mean, &[0]);
    let var = reduce(centered * centered, b.constant_r0(0.0f64), &adder(ElementType::F64), &[1]) * eighth;
    let normed = mul(centered, rsqrt(var + b.constant_r0(1e-5f64)), &[0]);
    let y = add(mul(normed, gamma, &[1]), beta, &[1]);
    b.build(sum_all(tanh(y) * weights, 2)).unwrap()
}

#[test]
fn gather_and_scatter() {
    let b = XlaBuilder::new("indexing");
    let table = b.parameter(0, &shape!(f64[5, 3]), "table");
    let updates = b.parameter(1, &shape!(f64[4, 3]), "updates");
    // Row 7 is out of range: gather clamps it to the last row.
    let ids = b.constant_r1(&[1i32, 4, 1, 7]);
    let rows = GatherDimensionNumbers {
        offset_dims: vec![1],
        collapsed_slice_dims: vec![0],
        start_index_map: vec![0],
        index_vector_dim: 1,
        ..Default::default()
    };
    let gathered = gather(table, ids, &rows, &[1, 3], false);
    let into_rows = ScatterDimensionNumbers {
        update_window_dims: vec![1],
        inserted_window_dims: vec![0],
        scatter_dims_to_operand_dims: vec![0],
        index_vector_dim: 1,
        ..Default::default()
    };
    let added = scatter(
        table,
        b.constant_r1(&[0i32, 2, 0, 3]),
        updates,
        &adder(ElementType::F64),
        &into_rows,
        false,
        false,
    );
    let overwrite = {
        let c = XlaBuilder::new("overwrite");
        let _ = c.parameter(0, &shape!(f64[]), "old");
        let new = c.parameter(1, &shape!(f64[]), "new");
        c.build(new).unwrap()
    };
    let written =
        scatter(table * table, b.constant_r1(&[4i32, 0, 2, 1]), updates, &overwrite, &into_rows, false, true);
    // Rows 5 and -1 are out of range: scatter drops those updates, so they get no cotangent.
    let dropped = scatter(
        table,
        b.constant_r1(&[5i32, 2, -1, 4]),
        updates,
        &adder(ElementType::F64),
        &into_rows,
        false,
        false,
    );
    // Index vectors of two components, windows of 2 × 2: (4, 0) does not fit.
    let windows = ScatterDimensionNumbers {
        update_window_dims: vec![1, 2],
        inserted_window_dims: vec![],
        scatter_dims_to_operand_dims: vec![0, 1],
        index_vector_dim: 1,
        ..Default::default()
    };
    let corners = Literal::from_vec(&shape!(s32[3, 2]), vec![0, 1, 4, 0, 3, 1]).unwrap();
    let patches = reshape(slice(updates, &[0, 0], &[3, 3], &[1, 1]), &[3, 3]);
    let patches = reshape(concat_in_dim(&b, &[patches, patches], 1), &[3, 2, 3]);
    let patches = slice(patches, &[0, 0, 0], &[3, 2, 2], &[1, 1, 1]);
    let placed = scatter(
        table,
        b.constant_literal(&corners),
        patches,
        &adder(ElementType::F64),
        &windows,
        false,
        false,
    );
    let f = b
        .build(tuple(&b, &[gathered * gathered, added * added, written, dropped * dropped, placed * placed]))
        .unwrap();
    let mut rng = Rng(51);
    let args = [rng.array(&shape!(f64[5, 3]), -1.0, 1.0), rng.array(&shape!(f64[4, 3]), -1.0, 1.0)];
    check_grads(&f, &args, &[0, 1], 52);
    check_grads(&f, &args, &[0], 53);
}

#[test]
fn reduce_window_sum_and_max() {
    let b = XlaBuilder::new("pools");
    let x = b.parameter(0, &shape!(f64[1, 5, 6]), "x");
    let pooled_sum = reduce_window(
        x * x,
        b.constant_r0(0.0f64),
        &adder(ElementType::F64),
        &[1, 2, 3],
        &[1, 2, 1],
        Padding::Same,
    );
    let pooled_max = reduce_window(
        x,
        b.constant_r0(f64::NEG_INFINITY),
        &binary_reducer("max"),
        &[1, 3, 2],
        &[1, 2, 2],
        Padding::Valid,
    );
    let dilated = reduce_window_with_general_padding(
        x,
        b.constant_r0(f64::NEG_INFINITY),
        &binary_reducer("max"),
        &[1, 2, 2],
        &[1, 1, 2],
        &[1, 2, 1],
        &[1, 1, 2],
        &[(0, 0), (1, 0), (0, 1)],
    );
    let f = b.build(tuple(&b, &[pooled_sum, pooled_max, dilated])).unwrap();
    let args = [Rng(61).array(&shape!(f64[1, 5, 6]), -1.0, 1.0)];
    check_grads(&f, &args, &[0], 62);
}

#[test]
fn convolutions_with_strides_padding_dilations_and_groups() {
    let nchw = ConvolutionDimensionNumbers {
        input_batch_dimension: 0,
        input_feature_dimension: 1,
        input_spatial_dimensions: vec![2, 3],
        kernel_output_feature_dimension: 0,
        kernel_input_feature_dimension: 1,
        kernel_spatial_dimensions: vec![2, 3],
        output_batch_dimension: 0,
        output_feature_dimension: 1,
        output_spatial_dimensions: vec![2, 3],
    };
    // NHWC images, HWIO kernels, and an output laid out as (H, N, C, W).
    let nhwc = ConvolutionDimensionNumbers {
        input_batch_dimension: 0,
        input_feature_dimension: 3,
        input_spatial_dimensions: vec![1, 2],
        kernel_input_feature_dimension: 2,
        kernel_output_feature_dimension: 3,
        kernel_spatial_dimensions: vec![0, 1],
        output_batch_dimension: 1,
        output_feature_dimension: 2,
        output_spatial_dimensions: vec![0, 3],
    };
    let b = XlaBuilder::new("convs");
    let x = b.parameter(0, &shape!(f64[2, 3, 5, 6]), "x");
    let k = b.parameter(1, &shape!(f64[4, 3, 2, 3]), "k");
    let grouped = b.parameter(2, &shape!(f64[6, 1, 3, 2]), "grouped");
    let xh = b.parameter(3, &shape!(f64[2, 5, 4, 2]), "xh");
    let kh = b.parameter(4, &shape!(f64[2, 2, 2, 3]), "kh");
    let results = [
        conv_general_dilated(x, k, &[2, 1], &[(1, 0), (1, 1)], &[1, 2], &[2, 1], &nchw, 1, 1),
        conv_general_dilated(x, grouped, &[1, 2], &[(0, 1), (2, 0)], &[], &[1, 2], &nchw, 3, 1),
        conv_general_dilated(xh, kh, &[1, 1], &[(1, 1), (0, 0)], &[2, 1], &[], &nhwc, 1, 1),
    ];
    let f = b.build(tuple(&b, &results)).unwrap();
    let mut rng = Rng(71);
    let parameters = f.program_shape().parameters;
    let args: Vec<Literal> = parameters.iter().map(|(_, s)| rng.array(s, -1.0, 1.0)).collect();
    check_grads(&f, &args, &[0, 1, 2, 3, 4], 72);
    check_grads(&f, &args, &[1, 2], 73);
}

/// jax's forward half of `check_grads`: the jvp's primal equals the function and its tangent
/// the central difference, fused and unfused (for functions reverse mode refuses).
fn check_jvp(f: &XlaComputation, args: &[Literal], wrt: &[i64], seed: u64) {
    let mut rng = Rng(seed);
    let parameters = f.program_shape().parameters;
    let tangents: Vec<Literal> =
        wrt.iter().map(|&n| rng.array(&parameters[n as usize].1, -1.0, 1.0)).collect();
    let forward = jvp(f, wrt).unwrap();
    let eps = 1e-5;
    for fusion in [true, false] {
        let value = run(f, &args.iter().collect::<Vec<_>>(), fusion);
        let with_tangents: Vec<&Literal> = args.iter().chain(&tangents).collect();
        let out = run(&forward, &with_tangents, fusion);
        let (primal, tangent) = out.split_at(value.len());
        for (i, (p, v)) in primal.iter().zip(&value).enumerate() {
            assert_close(&f64s(p), &f64s(v), 1e-12, &format!("jvp primal {i}"));
        }
        let plus = run(f, &moved(args, wrt, &tangents, eps).iter().collect::<Vec<_>>(), fusion);
        let minus = run(f, &moved(args, wrt, &tangents, -eps).iter().collect::<Vec<_>>(), fusion);
        for (i, t) in tangent.iter().enumerate() {
            let numeric: Vec<f64> =
                f64s(&plus[i]).iter().zip(f64s(&minus[i])).map(|(p, m)| (p - m) / (2.0 * eps)).collect();
            assert_close(&f64s(t), &numeric, 1e-5, &format!("jvp tangent {i} (fusion {fusion})"));
        }
    }
}

/// How a test loop's counter runs: from `start` by `step`, while `counter direction bound`
/// (the bound a constant of the condition or, `carried`, an element of the carry the body
/// passes through), with the counter on the condition's right when `flipped`.
struct Counter {
    start: i32,
    step: i32,
    bound: i32,
    direction: &'static str,
    flipped: bool,
    carried: bool,
    /// The counter's start (and a carried bound) come in as parameters of a called
    /// computation that holds the while, as jax's nested jits write it.
    called: bool,
}

/// A scan as jax writes it: the carry (i, h, xs, ys, w[, bound]), each trip reading xs at the
/// trip, h = sin(h · w) + xs[t] · h, writing ys[t] = h²; returns (h, ys). Four trips.
/// Where the counter is `called`, the while is in a computation of (start, h0, xs, w[,
/// bound]) that the returned one calls with constants.
fn scan_like(counter: &Counter) -> XlaComputation {
    let carry_shapes = {
        let mut shapes =
            vec![shape!(s32[]), shape!(f64[3]), shape!(f64[4, 3]), shape!(f64[4, 3]), shape!(f64[3])];
        if counter.carried {
            shapes.push(shape!(s32[]));
        }
        shapes
    };
    let carry = Shape::tuple(&carry_shapes);
    let c = XlaBuilder::new("cond");
    let p = c.parameter(0, &carry, "carry");
    let i = get_tuple_element(p, 0);
    let bound = if counter.carried { get_tuple_element(p, 5) } else { c.constant_r0(counter.bound) };
    let (a, b) = if counter.flipped { (bound, i) } else { (i, bound) };
    let compared = match counter.direction {
        "LT" => lt(a, b, &[]),
        "LE" => le(a, b, &[]),
        "GT" => gt(a, b, &[]),
        "GE" => ge(a, b, &[]),
        _ => ne(a, b, &[]),
    };
    let condition = c.build(compared).unwrap();

    let d = XlaBuilder::new("body");
    let p = d.parameter(0, &carry, "carry");
    let element = |k: i64| get_tuple_element(p, k);
    let (i, h, xs, ys, w) = (element(0), element(1), element(2), element(3), element(4));
    // The trip: (i - start) / step.
    let trip = div(i - d.constant_r0(counter.start), d.constant_r0(counter.step), &[]);
    let zero = d.constant_r0(0i32);
    let x = reshape(dynamic_slice(xs, &[trip, zero], &[1, 3]), &[3]);
    let h = sin(h * w) + x * h;
    let ys = dynamic_update_slice(ys, reshape(h * h, &[1, 3]), &[trip, zero]);
    let mut next = vec![i + d.constant_r0(counter.step), h, xs, ys, w];
    if counter.carried {
        next.push(element(5));
    }
    let body = d.build(tuple(&d, &next)).unwrap();

    let b = XlaBuilder::new("scan_like");
    let offset = i64::from(counter.called);
    let start =
        if counter.called { b.parameter(0, &shape!(s32[]), "start") } else { b.constant_r0(counter.start) };
    let h0 = b.parameter(offset, &shape!(f64[3]), "h0");
    let xs = b.parameter(offset + 1, &shape!(f64[4, 3]), "xs");
    let w = b.parameter(offset + 2, &shape!(f64[3]), "w");
    let zeros = broadcast(b.constant_r0(0.0f64), &[4, 3]);
    let mut init = vec![start, h0, xs, zeros, w];
    if counter.carried {
        init.push(match counter.called {
            true => b.parameter(offset + 3, &shape!(s32[]), "bound"),
            false => b.constant_r0(counter.bound),
        });
    }
    let state = while_loop(&condition, &body, tuple(&b, &init));
    let scan = b.build(tuple(&b, &[get_tuple_element(state, 1), get_tuple_element(state, 3)])).unwrap();
    if !counter.called {
        return scan;
    }
    let outer = XlaBuilder::new("calls_scan");
    let mut operands = vec![outer.constant_r0(counter.start)];
    for (number, (shape, name)) in
        [(shape!(f64[3]), "h0"), (shape!(f64[4, 3]), "xs"), (shape!(f64[3]), "w")].iter().enumerate()
    {
        operands.push(outer.parameter(number as i64, shape, name));
    }
    if counter.carried {
        operands.push(outer.constant_r0(counter.bound));
    }
    outer.build(call(&outer, &scan, &operands)).unwrap()
}

#[test]
fn whiles_of_fixed_trip_counts_differentiate_in_both_modes() {
    // (start, step, bound, direction, flipped, carried, called)
    let counters = [
        (0, 1, 4, "LT", false, false, false),
        (0, 1, 4, "LT", false, true, false),
        (3, -1, 0, "LE", true, false, false),
        (10, 2, 16, "LE", false, false, false),
        (7, -3, -5, "NE", false, false, false),
        // The start, and then the bound too, through a call's parameters.
        (0, 1, 4, "LT", false, false, true),
        (1, 1, 5, "LT", false, true, true),
        // No trip at all: the derivative is the identity on the carry.
        (4, 1, 4, "LT", false, false, false),
    ]
    .map(|(start, step, bound, direction, flipped, carried, called)| Counter {
        start,
        step,
        bound,
        direction,
        flipped,
        carried,
        called,
    });
    let mut rng = Rng(91);
    let args = [
        rng.array(&shape!(f64[3]), -1.0, 1.0),
        rng.array(&shape!(f64[4, 3]), -1.0, 1.0),
        rng.array(&shape!(f64[3]), -1.0, 1.0),
    ];
    for (n, counter) in counters.iter().enumerate() {
        let f = scan_like(counter);
        check_grads(&f, &args, &[0, 1, 2], 92 + n as u64);
        check_grads(&f, &args, &[2], 93);
    }
    // The gradient's own loops have fixed trip counts: second order in both modes.
    let f = scan_like(&counters[0]);
    let b = XlaBuilder::new("loss");
    let (h0, xs, w) = (
        b.parameter(0, &shape!(f64[3]), "h0"),
        b.parameter(1, &shape!(f64[4, 3]), "xs"),
        b.parameter(2, &shape!(f64[3]), "w"),
    );
    let out = call(&b, &f, &[h0, xs, w]);
    let loss = sum_all(get_tuple_element(out, 0), 1) + sum_all(get_tuple_element(out, 1), 2);
    let g = grad(&b.build(loss).unwrap(), &[0, 2]).unwrap();
    check_grads(&g, &args, &[0, 1, 2], 99);
    // The derivative is an ordinary computation: HLO text in and out.
    let text = vjp(&f, &[0, 1, 2]).unwrap().to_hlo_text();
    let back = XlaComputation::from_hlo_text(&text).unwrap();
    assert_eq!(back.program_shape(), vjp(&f, &[0, 1, 2]).unwrap().program_shape());
}

#[test]
fn a_while_whose_trip_count_is_not_fixed_differentiates_forward_only() {
    // while sum(x) < 10: x = x · 1.5 + p.
    let carry = Shape::tuple(&[shape!(f64[2]), shape!(f64[2])]);
    let c = XlaBuilder::new("below_ten");
    let p = c.parameter(0, &carry, "carry");
    let condition = c.build(lt(sum_all(get_tuple_element(p, 0), 1), c.constant_r0(10.0f64), &[])).unwrap();
    let d = XlaBuilder::new("grow");
    let p = d.parameter(0, &carry, "carry");
    let (x, q) = (get_tuple_element(p, 0), get_tuple_element(p, 1));
    let body = d.build(tuple(&d, &[x * d.constant_r0(1.5f64) + q, q])).unwrap();
    let b = XlaBuilder::new("grown");
    let x = b.parameter(0, &shape!(f64[2]), "x");
    let q = b.parameter(1, &shape!(f64[2]), "q");
    let state = while_loop(&condition, &body, tuple(&b, &[x, q]));
    let f = b.build(sin(get_tuple_element(state, 0)) * q).unwrap();
    let args = [Literal::vec1(&[0.3, 0.5f64]), Literal::vec1(&[0.2, 0.1f64])];
    check_jvp(&f, &args, &[0, 1], 101);
    check_jvp(&f, &args, &[1], 102);
    let here = format!("{}:", file!());
    let error = vjp(&f, &[0]).unwrap_err();
    assert!(matches!(error, Error::Unimplemented(_)), "{error}");
    let error = error.to_string();
    assert!(
        error.contains("reverse-mode derivative of `while` while.")
            && error.contains("trip count is not fixed"),
        "{error}"
    );
    assert!(error.contains(&here), "{error}");
    // Only x's tangent would cross the loop; a loss of q alone needs no derivative of it.
    assert!(grad(&b.build(sum_all(q * q, 1)).unwrap(), &[1]).is_ok());
}

#[test]
fn conditionals_differentiate_every_branch_in_both_modes() {
    let pair = Shape::tuple(&[shape!(f64[3]), shape!(f64[2])]);
    let first = {
        let c = XlaBuilder::new("first");
        let p = c.parameter(0, &pair, "pair");
        let (x, y) = (get_tuple_element(p, 0), get_tuple_element(p, 1));
        let s = sum_all(y * y, 1);
        c.build(tuple(&c, &[sin(x) * s, exp(y)])).unwrap()
    };
    let second = {
        let c = XlaBuilder::new("second");
        let x = c.parameter(0, &shape!(f64[3]), "x");
        c.build(tuple(&c, &[x * x * x, broadcast(c.constant_r0(2.0f64), &[2])])).unwrap()
    };
    let b = XlaBuilder::new("predicated");
    let p = b.parameter(0, &shape!(pred[]), "p");
    let x = b.parameter(1, &shape!(f64[3]), "x");
    let y = b.parameter(2, &shape!(f64[2]), "y");
    let chosen = conditional(p, tuple(&b, &[x, y]), &first, tanh(x), &second);
    let f = b.build(chosen).unwrap();
    let mut rng = Rng(111);
    let (xs, ys) = (rng.array(&shape!(f64[3]), -1.0, 1.0), rng.array(&shape!(f64[2]), -1.0, 1.0));
    for taken in [true, false] {
        let args = [Literal::scalar(taken), xs.clone(), ys.clone()];
        check_grads(&f, &args, &[1, 2], 112);
        check_grads(&f, &args, &[2], 113);
    }

    let branch = |name: &str, k: usize| {
        let c = XlaBuilder::new(name);
        let v = c.parameter(0, &shape!(f64[3]), "v");
        let out = match k {
            0 => exp(v),
            1 => tanh(v) * v,
            _ => -v,
        };
        c.build(out).unwrap()
    };
    let branches = [branch("exp", 0), branch("tanh_times", 1), branch("negate", 2)];
    let b = XlaBuilder::new("indexed");
    let i = b.parameter(0, &shape!(s32[]), "i");
    let x = b.parameter(1, &shape!(f64[3]), "x");
    let y = b.parameter(2, &shape!(f64[3]), "y");
    let chosen = conditional_indexed(i, &branches.iter().collect::<Vec<_>>(), &[x * y, sin(x), y]);
    let f = b.build(chosen * x).unwrap();
    for index in [0, 1, 2, 7, -1] {
        let args = [Literal::scalar(index), xs.clone(), rng.array(&shape!(f64[3]), -1.0, 1.0)];
        check_grads(&f, &args, &[1, 2], 114);
    }
}

/// examples/hlo/programs/gru_scan.hlo, jax's GRU scan (64 trips of f32[64,256]): its vjp and jvp
/// are ordinary computations that print, import back and compile. (The small GRU of the jax
/// goldens checks the values.)
#[test]
fn the_gru_modules_derivatives_build_and_compile() {
    let text = std::fs::read_to_string("examples/hlo/programs/gru_scan.hlo").unwrap();
    let f = XlaComputation::from_hlo_text(&text).unwrap();
    for derived in [vjp(&f, &[0, 1, 2, 3, 4]).unwrap(), jvp(&f, &[1, 2]).unwrap()] {
        let text = derived.to_hlo_text();
        // The saved states are the trips' hidden states, counters and nothing else: not the
        // buffer of outputs the loop writes (the body's VJP reads none of it).
        assert!(!text.contains("f32[64,64,64,256]"), "a stack of the outputs' buffer");
        if text.contains("backward_") {
            // Each reversed trip reads the trip's two gate products from their stacks: its dots
            // are the four of the cotangents (of x, h and both weights), not those six.
            assert_eq!(dots_in(&text, "backward_"), 4, "{text}");
            assert_eq!(dots_in(&text, "saving_"), 2, "{text}");
        }
        let back = XlaComputation::from_hlo_text(&text).unwrap();
        assert_eq!(back.program_shape(), derived.program_shape());
        back.compile(&CompileOptions::default()).unwrap();
    }
}

/// The dots of the computation of HLO `text` whose name starts with `prefix`.
fn dots_in(text: &str, prefix: &str) -> usize {
    let body = text.split("\n\n").find(|computation| computation.starts_with(prefix)).unwrap_or("");
    body.matches(" dot(").count()
}

#[test]
fn a_while_carrying_nested_tuples() {
    // Carry (i, (h, w)): three trips of h = sin(h · w) + h.
    let pair = Shape::tuple(&[shape!(f64[3]), shape!(f64[3])]);
    let carry = Shape::tuple(&[shape!(s32[]), pair]);
    let c = XlaBuilder::new("three");
    let p = c.parameter(0, &carry, "carry");
    let condition = c.build(lt(get_tuple_element(p, 0), c.constant_r0(3i32), &[])).unwrap();
    let d = XlaBuilder::new("step");
    let p = d.parameter(0, &carry, "carry");
    let inner = get_tuple_element(p, 1);
    let (h, w) = (get_tuple_element(inner, 0), get_tuple_element(inner, 1));
    let next = tuple(&d, &[get_tuple_element(p, 0) + d.constant_r0(1i32), tuple(&d, &[sin(h * w) + h, w])]);
    let body = d.build(next).unwrap();
    let b = XlaBuilder::new("nested");
    let h = b.parameter(0, &shape!(f64[3]), "h");
    let w = b.parameter(1, &shape!(f64[3]), "w");
    let state = while_loop(&condition, &body, tuple(&b, &[b.constant_r0(0i32), tuple(&b, &[h, w])]));
    let f = b.build(get_tuple_element(state, 1)).unwrap();
    let mut rng = Rng(121);
    let args = [rng.array(&shape!(f64[3]), -1.0, 1.0), rng.array(&shape!(f64[3]), -1.0, 1.0)];
    check_grads(&f, &args, &[0, 1], 122);
    check_grads(&f, &args, &[1], 123);
}
