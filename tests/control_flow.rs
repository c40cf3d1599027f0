//! Control flow and computations applied by ops: `while_loop`, `conditional`,
//! `conditional_indexed`, `call`, `map` and `reduce_variadic`: shapes, XLA's sentences, HLO text
//! as jaxlib 0.6.0 prints it, and values fused and unfused (goldens from XLA's CPU backend).

#[path = "common/computations.rs"]
mod computations;

use computations::scalar_computation;
use lazy_xla::*;

/// Runs `computation` fused and unfused on `arguments`; the results must be equal.
fn run(computation: &XlaComputation, arguments: &[&Literal]) -> Result<Literal> {
    let fused = computation.compile(&CompileOptions::default())?.execute(arguments)?;
    let unfused = computation.compile(&CompileOptions::unfused())?.execute(arguments)?;
    // Compared as text, so that NaNs (never `==`) compare too.
    assert_eq!(format!("{fused:?}"), format!("{unfused:?}"), "fused and unfused differ");
    Ok(fused)
}

/// `x < limit` over f32 scalars.
fn below(limit: f32) -> XlaComputation {
    let c = XlaBuilder::new("below_10");
    let x = c.parameter(0, &shape!(f32[]), "x");
    c.build(lt(x, c.constant_r0(limit), &[])).unwrap()
}

/// `x * 2` over f32 scalars.
fn twice() -> XlaComputation {
    let d = XlaBuilder::new("double");
    let x = d.parameter(0, &shape!(f32[]), "x");
    d.build(mul(x, d.constant_r0(2.0f32), &[])).unwrap()
}

#[test]
fn while_prints_as_jaxlib_prints_it() -> Result<()> {
    let b = XlaBuilder::new("loop");
    let init = b.parameter(0, &shape!(f32[]), "init");
    let text = b.build(while_loop(&below(10.0), &twice(), init))?.to_hlo_text();
    assert_eq!(
        text,
        "HloModule loop.11, entry_computation_layout={(f32[])->f32[]}\n\n\
         double.2 {\n  x.3 = f32[] parameter(0)\n  constant.4 = f32[] constant(2)\n  \
         ROOT multiply.5 = f32[] multiply(x.3, constant.4)\n}\n\n\
         below_10.6 {\n  x.7 = f32[] parameter(0)\n  constant.8 = f32[] constant(10)\n  \
         ROOT compare.9 = pred[] compare(x.7, constant.8), direction=LT\n}\n\n\
         ENTRY loop.11 {\n  init.1 = f32[] parameter(0)\n  \
         ROOT while.10 = f32[] while(init.1), condition=below_10.6, body=double.2\n}\n\n"
    );
    Ok(())
}

#[test]
fn while_runs_zero_one_and_many_trips() -> Result<()> {
    let b = XlaBuilder::new("loop");
    let init = b.parameter(0, &shape!(f32[]), "init");
    let computation = b.build(while_loop(&below(10.0), &twice(), init))?;
    for (start, end) in [(20.0f32, 20.0), (6.0, 12.0), (1.0, 16.0), (1e-30, 10.141205)] {
        let out = run(&computation, &[&Literal::scalar(start)])?.to_vec::<f32>()?[0];
        assert!((out - end).abs() <= end * 1e-6, "{start} → {out}, want {end}");
    }
    Ok(())
}

/// A counted loop over a tuple state `(i, v)`: `v = v * v + 0.1`, `i += 1`, while `i < n`.
fn counted_square(n: i32) -> Result<XlaComputation> {
    let state = Shape::tuple(&[shape!(s32[]), shape!(f32[3])]);
    let c = XlaBuilder::new("cond");
    let t = c.parameter(0, &state, "t");
    let condition = c.build(lt(get_tuple_element(t, 0), c.constant_r0(n), &[]))?;
    let d = XlaBuilder::new("body");
    let t = d.parameter(0, &state, "t");
    let (i, v) = (get_tuple_element(t, 0), get_tuple_element(t, 1));
    let next = tuple(&d, &[i + d.constant_r0(1i32), add(v * v, d.constant_r0(0.1f32), &[])]);
    let body = d.build(next)?;
    let b = XlaBuilder::new("counted");
    let init = b.parameter(0, &state, "init");
    b.build(while_loop(&condition, &body, init))
}

#[test]
fn a_tuple_state_carries_through_the_loop() -> Result<()> {
    // XLA: (0, [1, 1.1, 2]) squared-plus-0.1 three times.
    let init = Literal::tuple(vec![Literal::scalar(0i32), Literal::vec1(&[1.0f32, 1.1, 2.0])]);
    let out = run(&counted_square(3)?, &[&init])?;
    assert_eq!(out.tuple_element(0)?.to_vec::<i32>()?, vec![3]);
    let mut expected = vec![1.0f32, 1.1, 2.0];
    for _ in 0..3 {
        expected.iter_mut().for_each(|v| *v = *v * *v + 0.1);
    }
    assert_eq!(out.tuple_element(1)?.to_vec::<f32>()?, expected);
    // A condition false at once returns the init value unchanged.
    let late = Literal::tuple(vec![Literal::scalar(5i32), Literal::vec1(&[1.0f32, 2.0, 3.0])]);
    assert_eq!(run(&counted_square(3)?, &[&late])?, late);
    Ok(())
}

#[test]
fn while_rejects_bad_signatures_with_xlas_sentences() {
    let two = scalar_computation("two", ElementType::F32, |_, a, _| a);
    let f64_body = {
        let d = XlaBuilder::new("wide");
        let x = d.parameter(0, &shape!(f32[]), "x");
        d.build(convert_element_type(x, ElementType::F64)).unwrap()
    };
    let identity = {
        let c = XlaBuilder::new("id");
        let x = c.parameter(0, &shape!(f32[]), "x");
        c.build(x).unwrap()
    };
    let cases: [(&XlaComputation, &XlaComputation, &str); 4] = [
        (&two, &twice(), "Condition must take 1 arguments; got 2."),
        (&below(1.0), &two, "Body must take 1 arguments; got 2."),
        (
            &identity,
            &twice(),
            "Condition must return a boolean; got Condition: (x: f32[]) -> f32[]; body: (x: f32[]) -> f32[]; init: f32[]..",
        ),
        (
            &below(1.0),
            &f64_body,
            "The parameter of condition and body, the result of the body, and init must all have the same \
             shape; got Condition: (x: f32[]) -> pred[]; body: (x: f32[]) -> f64[]; init: f32[]..",
        ),
    ];
    for (condition, body, sentence) in cases {
        let b = XlaBuilder::new("loop");
        let bad = while_loop(condition, body, b.constant_r0(1.0f32));
        let error = b.build(bad).unwrap_err().to_string();
        assert!(error.starts_with(sentence), "{sentence}\n{error}");
    }
}

/// A branch computation on f32[3] named `name`.
fn branch(name: &str) -> XlaComputation {
    let u = XlaBuilder::new(name);
    let v = u.parameter(0, &shape!(f32[3]), "v");
    u.build(match name {
        "negate" => neg(v),
        "twice" => v + v,
        _ => v * v,
    })
    .unwrap()
}

/// The API.md example: both forms of conditional in one tuple.
fn branches() -> Result<XlaComputation> {
    let (c0, c1, c2) = (branch("negate"), branch("twice"), branch("square"));
    let b = XlaBuilder::new("branches");
    let pred = b.parameter(0, &shape!(pred[]), "pred");
    let i = b.parameter(1, &shape!(s32[]), "i");
    let v3 = shape!(f32[3]);
    let (o0, o1, o2) = (b.parameter(2, &v3, "o0"), b.parameter(3, &v3, "o1"), b.parameter(4, &v3, "o2"));
    let picked = conditional(pred, o0, &c0, o1, &c1);
    let indexed = conditional_indexed(i, &[&c0, &c1, &c2], &[o0, o1, o2]);
    b.build(tuple(&b, &[picked, indexed]))
}

#[test]
fn conditionals_print_as_jaxlib_prints_them() -> Result<()> {
    let text = branches()?.to_hlo_text();
    for line in [
        "HloModule branches.24, entry_computation_layout={(pred[], s32[], f32[3]{0}, f32[3]{0}, f32[3]{0})->(f32[3]{0}, f32[3]{0})}",
        "conditional.12 = f32[3]{0} conditional(pred.1, o0.3, o1.4), true_computation=negate.6, false_computation=twice.9",
        "conditional.22 = f32[3]{0} conditional(i.2, o0.3, o1.4, o2.5), branch_computations={negate.13, twice.16, square.19}",
        "square.19 {\n  v.20 = f32[3]{0} parameter(0)\n  ROOT multiply.21 = f32[3]{0} multiply(v.20, v.20)\n}",
    ] {
        assert!(text.contains(line), "missing {line}\n{text}");
    }
    Ok(())
}

#[test]
fn a_branch_index_out_of_range_runs_the_last_branch() -> Result<()> {
    let computation = branches()?;
    let (o0, o1, o2) = (
        Literal::vec1(&[1.0f32, 2.0, 3.0]),
        Literal::vec1(&[10.0f32, 20.0, 30.0]),
        Literal::vec1(&[100.0f32, 200.0, 300.0]),
    );
    for (index, want) in [
        (0, vec![-1.0f32, -2.0, -3.0]),
        (1, vec![20.0, 40.0, 60.0]),
        (2, vec![10000.0, 40000.0, 90000.0]),
        (3, vec![10000.0, 40000.0, 90000.0]),
        (-1, vec![10000.0, 40000.0, 90000.0]),
        (i32::MIN, vec![10000.0, 40000.0, 90000.0]),
        (i32::MAX, vec![10000.0, 40000.0, 90000.0]),
    ] {
        for pred in [true, false] {
            let out = run(&computation, &[&Literal::scalar(pred), &Literal::scalar(index), &o0, &o1, &o2])?;
            let picked = if pred { vec![-1.0f32, -2.0, -3.0] } else { vec![20.0, 40.0, 60.0] };
            assert_eq!(out.tuple_element(0)?.to_vec::<f32>()?, picked);
            assert_eq!(out.tuple_element(1)?.to_vec::<f32>()?, want, "index {index}");
        }
    }
    Ok(())
}

#[test]
fn conditionals_reject_bad_arguments_with_xlas_sentences() {
    let (c0, c1) = (branch("negate"), branch("twice"));
    let scalar_branch = {
        let u = XlaBuilder::new("scalar");
        let v = u.parameter(0, &shape!(f32[3]), "v");
        u.build(reduce(v, u.constant_r0(0.0f32), &computations::sum(ElementType::F32), &[0])).unwrap()
    };
    let b = XlaBuilder::new("c");
    let x = b.parameter(0, &shape!(f32[3]), "x");
    let bad = conditional(b.constant_r0(1i32), x, &c0, x, &c1);
    assert!(b
        .build(bad)
        .unwrap_err()
        .to_string()
        .starts_with("Argument to predicated-Conditional is not a scalar of PRED type (s32[])."));
    let b = XlaBuilder::new("c");
    let x = b.parameter(0, &shape!(f32[3]), "x");
    let bad = conditional_indexed(b.constant_r0(1i64), &[&c0, &c1], &[x, x]);
    assert!(b
        .build(bad)
        .unwrap_err()
        .to_string()
        .starts_with("Argument to indexed-Conditional is not a scalar of S32 type (s64[])."));
    let b = XlaBuilder::new("c");
    let x = b.parameter(0, &shape!(f32[3]), "x");
    let y = b.parameter(1, &shape!(f32[4]), "y");
    let bad = conditional(b.constant_r0(true), x, &c0, y, &c1);
    assert!(b.build(bad).unwrap_err().to_string().starts_with(
        "branch operand 1 must match the shape of the only parameter of branch computation 1: got operand: \
         f32[4]; computation: (v: f32[3]) -> f32[3]."
    ));
    let b = XlaBuilder::new("c");
    let x = b.parameter(0, &shape!(f32[3]), "x");
    let bad = conditional_indexed(b.constant_r0(0i32), &[&c0, &c1, &scalar_branch], &[x, x, x]);
    assert!(b.build(bad).unwrap_err().to_string().starts_with(
        "the result of branch 0 computation and branch 2 computation must have the same shape: got branch 0 \
         computation result: f32[3]; branch 2 computation result: f32[]."
    ));
    let b = XlaBuilder::new("c");
    let x = b.parameter(0, &shape!(f32[3]), "x");
    let bad = conditional_indexed(b.constant_r0(0i32), &[&c0, &c1], &[x]);
    assert!(b
        .build(bad)
        .unwrap_err()
        .to_string()
        .contains("branch_computations.size() == branch_operands.size()"));
}

/// `max(a, b)` over f32 scalars, named `max`.
fn maximum() -> XlaComputation {
    scalar_computation("max", ElementType::F32, |_, a, b| max(a, b, &[]))
}

#[test]
fn call_and_map_print_and_run() -> Result<()> {
    let m = maximum();
    let b = XlaBuilder::new("call_map");
    let v3 = shape!(f32[3]);
    let (x, y, s) = (b.parameter(0, &v3, "x"), b.parameter(1, &v3, "y"), b.parameter(2, &shape!(f32[]), "s"));
    let called = call(&b, &m, &[b.constant_r0(2.0f32), b.constant_r0(-1.0f32)]);
    let mapped = map(&b, &[x, y], &m, &[0]);
    let with_scalar = map(&b, &[x, s], &m, &[0]);
    let computation = b.build(tuple(&b, &[called, mapped, with_scalar]))?;
    let text = computation.to_hlo_text();
    for line in [
        "call.10 = f32[] call(constant.4, constant.5), to_apply=max.6",
        "map.15 = f32[3]{0} map(x.1, y.2), dimensions={0}, to_apply=max.11",
        "broadcast.20 = f32[3]{0} broadcast(s.3), dimensions={}",
        "map.21 = f32[3]{0} map(x.1, broadcast.20), dimensions={0}, to_apply=max.16",
    ] {
        assert!(text.contains(line), "missing {line}\n{text}");
    }
    let out = run(
        &computation,
        &[&Literal::vec1(&[1.0f32, 2.0, 3.0]), &Literal::vec1(&[3.0f32, 0.0, 3.0]), &Literal::scalar(2.5f32)],
    )?;
    assert_eq!(out.tuple_element(0)?.to_vec::<f32>()?, vec![2.0]);
    assert_eq!(out.tuple_element(1)?.to_vec::<f32>()?, vec![3.0, 2.0, 3.0]);
    assert_eq!(out.tuple_element(2)?.to_vec::<f32>()?, vec![2.5, 2.5, 3.0]);
    Ok(())
}

#[test]
fn map_applies_any_computation_over_any_layout() -> Result<()> {
    // A computation with a reduce inside cannot be a scalar program: it runs as a plan.
    let r = XlaBuilder::new("odd");
    let (a, c) = (r.parameter(0, &shape!(s32[]), "a"), r.parameter(1, &shape!(f32[]), "c"));
    let two = broadcast(convert_element_type(a, ElementType::F32), &[2]);
    let summed = reduce(two, c, &computations::sum(ElementType::F32), &[0]);
    let odd = r.build(summed)?;
    let b = XlaBuilder::new("m");
    let x = b.parameter(0, &shape!(s32[2, 2]{0, 1}), "x");
    let y = b.parameter(1, &shape!(f32[2, 2]), "y");
    let computation = b.build(map(&b, &[x, y], &odd, &[0, 1]))?;
    let xs = Literal::from_vec(&shape!(s32[2, 2]{0, 1}), vec![1, 2, 3, 4])?;
    let ys = Literal::from_vec(&shape!(f32[2, 2]), vec![0.5f32, 0.25, 0.0, -1.0])?;
    assert_eq!(run(&computation, &[&xs, &ys])?.to_vec::<f32>()?, vec![2.5, 4.25, 6.0, 7.0]);
    Ok(())
}

#[test]
fn call_and_map_reject_bad_arguments_with_xlas_sentences() {
    let m = maximum();
    let b = XlaBuilder::new("f");
    let bad = call(&b, &m, &[b.constant_r0(1.0f32)]);
    assert!(b.build(bad).unwrap_err().to_string().starts_with(
        "Call applied function arity must match number of arguments; got: arity: 2, arguments: 1; computation \
         signature: (a: f32[], b: f32[]) -> f32[]; argument shapes: [f32[]]."
    ));
    let b = XlaBuilder::new("f");
    let bad = call(&b, &m, &[b.constant_r0(1.0f32), b.constant_r0(1.0f64)]);
    assert!(b.build(bad).unwrap_err().to_string().starts_with(
        "Call parameter must match argument; got parameter 1 shape: f32[], argument shape: f64[]."
    ));
    let b = XlaBuilder::new("f");
    let (x, y) = (b.parameter(0, &shape!(f32[3]), "x"), b.parameter(1, &shape!(f32[4]), "y"));
    let bad = map(&b, &[x, y], &m, &[0]);
    assert!(b
        .build(bad)
        .unwrap_err()
        .to_string()
        .starts_with("Map operation requires all operands to have the same shape; got: f32[3], f32[4]."));
    let b = XlaBuilder::new("f");
    let x = b.parameter(0, &shape!(f32[3]), "x");
    let bad = map(&b, &[x, x], &m, &[]);
    assert!(b.build(bad).unwrap_err().to_string().starts_with(
        "Map applied to a subset of dimensions currently not supported: arg_dimension_size: 1, \
         requested_map_dimensions_size: 0."
    ));
    let b = XlaBuilder::new("f");
    let x = b.parameter(0, &shape!(s32[3]), "x");
    let bad = map(&b, &[x, x], &m, &[0]);
    assert!(b.build(bad).unwrap_err().to_string().starts_with(
        "Mapped computation's parameter type has to match argument element type; got parameter 0 shape: f32[], \
         argument shape: s32[3]."
    ));
}

/// jax's argmax reducer: a value wins if it is greater or NaN; the index of equal values is
/// the lower one.
fn jax_argmax() -> Result<XlaComputation> {
    let r = XlaBuilder::new("argmax");
    let (f, s) = (shape!(f32[]), shape!(s32[]));
    let (av, ai) = (r.parameter(0, &f, "av"), r.parameter(1, &s, "ai"));
    let (bv, bi) = (r.parameter(2, &f, "bv"), r.parameter(3, &s, "bi"));
    let pick_a = or(gt(av, bv, &[]), ne(av, av, &[]), &[]);
    let tie = and(eq(av, bv, &[]), lt(ai, bi, &[]), &[]);
    let v = select(pick_a, av, bv);
    let i = select(or(pick_a, tie, &[]), ai, bi);
    r.build(tuple(&r, &[v, i]))
}

#[test]
fn argmax_is_a_variadic_reduce_with_xlas_answers() -> Result<()> {
    let b = XlaBuilder::new("rows");
    let x = b.parameter(0, &shape!(f32[5, 4]), "x");
    let indices = iota(&b, &shape!(s32[5, 4]), 1);
    let inits = [b.constant_r0(f32::NEG_INFINITY), b.constant_r0(0i32)];
    let computation = b.build(reduce_variadic(&b, &[x, indices], &inits, &jax_argmax()?, &[1]))?;
    let nan = f32::NAN;
    let values = vec![
        1.0f32,
        5.0,
        5.0,
        2.0,
        nan,
        3.0,
        nan,
        9.0,
        7.0,
        0.0,
        7.0,
        nan,
        f32::NEG_INFINITY,
        f32::NEG_INFINITY,
        f32::NEG_INFINITY,
        f32::NEG_INFINITY,
        -0.0,
        0.0,
        -0.0,
        0.0,
    ];
    let out = run(&computation, &[&Literal::from_vec(&shape!(f32[5, 4]), values)?])?;
    let best = out.tuple_element(0)?.to_vec::<f32>()?;
    let bits: Vec<u32> = best.iter().map(|v| v.to_bits()).collect();
    // The last row, [-0, 0, -0, 0]: the value follows the last of the tied zeros (+0) while the
    // index stays at the first (XLA's sequential fold of jax's reducer).
    assert_eq!(bits, [0x40a00000, 0x7fc00000, 0x7fc00000, 0xff800000, 0x00000000]);
    assert_eq!(out.tuple_element(1)?.to_vec::<i32>()?, vec![1, 0, 3, 0, 0]);
    Ok(())
}

#[test]
fn variadic_reduce_prints_and_checks_as_xla() -> Result<()> {
    let b = XlaBuilder::new("rows");
    let x = b.parameter(0, &shape!(f32[2, 3]), "x");
    let indices = iota(&b, &shape!(s32[2, 3]), 1);
    let inits = [b.constant_r0(f32::NEG_INFINITY), b.constant_r0(0i32)];
    let r = XlaBuilder::new("argmax");
    let (f, s) = (shape!(f32[]), shape!(s32[]));
    let (av, ai) = (r.parameter(0, &f, "av"), r.parameter(1, &s, "ai"));
    let (bv, bi) = (r.parameter(2, &f, "bv"), r.parameter(3, &s, "bi"));
    let a_wins = or(gt(av, bv, &[]), and(eq(av, bv, &[]), lt(ai, bi, &[]), &[]), &[]);
    let argmax = r.build(tuple(&r, &[select(a_wins, av, bv), select(a_wins, ai, bi)]))?;
    let text = b.build(reduce_variadic(&b, &[x, indices], &inits, &argmax, &[1]))?.to_hlo_text();
    assert!(text.contains(
        "ROOT reduce.18 = (f32[2]{0}, s32[2]{0}) reduce(x.1, iota.2, constant.3, constant.4), dimensions={1}, to_apply=argmax.5"
    ), "{text}");
    let sentences: [(&[i64], &str); 2] = [
        (&[2], "Reducing out-of-bounds dimension 2 in shape f32[2,3]."),
        (&[1, 1], "Duplicate reduction dimension: 1"),
    ];
    for (dimensions, sentence) in sentences {
        let b = XlaBuilder::new("rows");
        let x = b.parameter(0, &shape!(f32[2, 3]), "x");
        let indices = iota(&b, &shape!(s32[2, 3]), 1);
        let inits = [b.constant_r0(f32::NEG_INFINITY), b.constant_r0(0i32)];
        let bad = reduce_variadic(&b, &[x, indices], &inits, &argmax, dimensions);
        assert!(b.build(bad).unwrap_err().to_string().starts_with(sentence));
    }
    let b = XlaBuilder::new("rows");
    let x = b.parameter(0, &shape!(f32[2, 3]), "x");
    let bad = reduce_variadic(&b, &[x], &[b.constant_r0(0.0f32)], &argmax, &[1]);
    assert!(b
        .build(bad)
        .unwrap_err()
        .to_string()
        .starts_with("Reduction function must take 2 parameters, but takes 4 parameter(s)."));
    let b = XlaBuilder::new("rows");
    let x = b.parameter(0, &shape!(f32[2, 3]), "x");
    let y = b.parameter(1, &shape!(s32[3, 2]), "y");
    let inits = [b.constant_r0(0.0f32), b.constant_r0(0i32)];
    let bad = reduce_variadic(&b, &[x, y], &inits, &argmax, &[1]);
    assert!(b.build(bad).unwrap_err().to_string().starts_with(
        "All reduced tensors must have compatible dimension. Tensor at index 0 has shape f32[2,3], and tensor at \
         index 1 has shape s32[3,2]."
    ));
    Ok(())
}

/// An argmax/argmin reducer of `(value, index)` pairs: jax's (`nan_wins`) or the usual hand-made
/// one, and, with `disguised`, the same logic written so that it is not recognized (an
/// `and` with `true`), which the executor then applies element by element.
fn arg_reducer(max: bool, nan_wins: bool, disguised: bool) -> XlaComputation {
    let r = XlaBuilder::new("arg");
    let (f, s) = (shape!(f32[]), shape!(s32[]));
    let (av, ai) = (r.parameter(0, &f, "av"), r.parameter(1, &s, "ai"));
    let (bv, bi) = (r.parameter(2, &f, "bv"), r.parameter(3, &s, "bi"));
    let better = if max { gt(av, bv, &[]) } else { lt(av, bv, &[]) };
    let better = if disguised { and(better, r.constant_r0(true), &[]) } else { better };
    let tie = and(eq(av, bv, &[]), lt(ai, bi, &[]), &[]);
    let root = if nan_wins {
        let pick_a = or(better, ne(av, av, &[]), &[]);
        tuple(&r, &[select(pick_a, av, bv), select(or(pick_a, tie, &[]), ai, bi)])
    } else {
        let a_wins = or(better, tie, &[]);
        tuple(&r, &[select(a_wins, av, bv), select(a_wins, ai, bi)])
    };
    r.build(root).unwrap()
}

#[test]
fn recognized_argmax_equals_the_reducer_applied_element_by_element() -> Result<()> {
    let mut state = 12345u64;
    let mut next = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as u32
    };
    let palette = [1.0f32, -1.0, 0.0, -0.0, 2.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 2.0, 1.0];
    for case in 0..40 {
        let (rows, columns) = (1 + next() as i64 % 5, next() as i64 % 9);
        let dimension = (next() % 2) as i64;
        let layout: &[i64] = if next() % 2 == 0 { &[1, 0] } else { &[0, 1] };
        let with_nan = case % 3 != 0;
        let values: Vec<f32> = (0..rows * columns)
            .map(|_| palette[(next() as usize) % if with_nan { palette.len() } else { 5 }])
            .collect();
        let shape = Shape::with_layout(ElementType::F32, &[rows, columns], layout)?;
        let x = Literal::from_vec(&shape, values)?;
        let init = [palette[(next() as usize) % 5], f32::NEG_INFINITY][(next() % 2) as usize];
        for (max, nan_wins) in [(true, true), (false, true), (true, false), (false, false)] {
            let mut results = Vec::new();
            for disguised in [false, true] {
                let b = XlaBuilder::new("arg");
                let p = b.parameter(0, &shape, "x");
                let indices = iota(&b, &shape!(s32[rows, columns]), dimension);
                let inits = [b.constant_r0(init), b.constant_r0(3i32)];
                let reduced = reduce_variadic(
                    &b,
                    &[p, indices],
                    &inits,
                    &arg_reducer(max, nan_wins, disguised),
                    &[dimension],
                );
                let out = run(&b.build(reduced)?, &[&x])?;
                let bits: Vec<u32> =
                    out.tuple_element(0)?.to_vec::<f32>()?.iter().map(|v| v.to_bits()).collect();
                results.push((bits, out.tuple_element(1)?.to_vec::<i32>()?));
            }
            assert_eq!(
                results[0], results[1],
                "case {case}: max {max}, nan_wins {nan_wins}, x {x:?}, init {init}"
            );
        }
    }
    Ok(())
}

/// A scan's body: `(i + 1, dynamic_update_slice(ys, [i, i, i] at row i), ys passed on)` while
/// `i < 4`, over `(s32[], f32[4,3], f32[4,3])`.
fn stacking_rows() -> Result<(XlaComputation, XlaComputation)> {
    let state = "(s32[], f32[4,3], f32[4,3])".parse::<Shape>()?;
    let c = XlaBuilder::new("condition");
    let p = c.parameter(0, &state, "p");
    let condition = c.build(lt(get_tuple_element(p, 0), c.constant_r0(4i32), &[]))?;
    let d = XlaBuilder::new("body");
    let p = d.parameter(0, &state, "p");
    let i = get_tuple_element(p, 0);
    let row = broadcast(convert_element_type(i, ElementType::F32), &[1, 3]);
    let stacked = dynamic_update_slice(get_tuple_element(p, 1), row, &[i, d.constant_r0(0i32)]);
    let next = tuple(&d, &[add(i, d.constant_r0(1i32), &[]), stacked, get_tuple_element(p, 2)]);
    Ok((condition, d.build(next)?))
}

/// A loop's state updated in place from trip to trip (the update takes memory only it holds)
/// keeps every other value: here the same computed array starts in two places of the state,
/// and the one passed on must stay as it was.
#[test]
fn a_state_updated_in_place_leaves_the_arrays_it_shares_memory_with() -> Result<()> {
    let (condition, body) = stacking_rows()?;
    let b = XlaBuilder::new("scan");
    let x = neg(b.parameter(0, &shape!(f32[4, 3]), "x"));
    let looped = while_loop(&condition, &body, tuple(&b, &[b.constant_r0(0i32), x, x]));
    let computation = b.build(looped)?;
    let x_values = Literal::from_vec(&shape!(f32[4, 3]), (1..=12).map(|v| v as f32).collect())?;
    for fusion in [true, false] {
        let options = CompileOptions { fusion, ..CompileOptions::default() };
        let parts = computation.compile(&options)?.execute(&[&x_values])?.decompose_tuple()?;
        let stacked: Vec<f32> = (0..4).flat_map(|i| [i as f32; 3]).collect();
        assert_eq!(parts[1].to_vec::<f32>()?, stacked, "fusion {fusion}");
        let negated: Vec<f32> = (1..=12).map(|v| -(v as f32)).collect();
        assert_eq!(parts[2].to_vec::<f32>()?, negated, "fusion {fusion}");
    }
    Ok(())
}
