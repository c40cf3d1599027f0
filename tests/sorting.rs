//! `sort` and `top_k`: values against XLA's (jaxlib 0.6.0 goldens in `tests/data`) and against
//! a reference sort, stability, dimensions and layouts, fused and unfused, and XLA's sentences.

#[path = "common/golden.rs"]
mod golden;

use lazy_xla::*;

/// A scalar comparator `(a, b, …) -> pred` of `n` operands of `types`, comparing operand 0.
fn comparator(types: &[ElementType], direction: ComparisonDirection) -> XlaComputation {
    let c = XlaBuilder::new("less");
    let parameters: Vec<XlaOp<'_>> = (0..2 * types.len())
        .map(|i| c.parameter(i as i64, &Shape::scalar(types[i / 2]), &format!("p{i}")))
        .collect();
    let (a, b) = (parameters[0], parameters[1]);
    let root = match direction {
        ComparisonDirection::Lt => lt(a, b, &[]),
        ComparisonDirection::Gt => gt(a, b, &[]),
        _ => unimplemented!("two directions are enough here"),
    };
    c.build(root).unwrap()
}

/// Runs fused and unfused (equal, bit for bit) and returns the result's leaves as bits.
fn run(computation: &XlaComputation, arguments: &[&Literal]) -> Result<Vec<Vec<u64>>> {
    let mut results = Vec::new();
    for options in [CompileOptions::default(), CompileOptions::unfused()] {
        let out = computation.compile(&options)?.execute(arguments)?;
        results.push(golden::leaves(&out).into_iter().map(golden::bits).collect::<Vec<_>>());
    }
    assert_eq!(results[0], results[1], "fused and unfused differ");
    Ok(results.remove(0))
}

#[test]
fn top_k_matches_xla_on_its_goldens() -> Result<()> {
    let goldens = golden::load(include_str!("data/xla_control_goldens.json"));
    for case in goldens["top_k"].as_array().unwrap() {
        let line = case["hlo"].as_str().unwrap().lines().find(|l| l.contains("topk(")).unwrap().to_string();
        let k: i64 = line.split("k=").nth(1).unwrap().split(',').next().unwrap().parse().unwrap();
        let largest = line.contains("largest=true");
        let x = golden::literal(&case["inputs"][0]).unwrap();
        let b = XlaBuilder::new("topk");
        let p = b.parameter(0, x.shape(), "x");
        let computation = b.build(top_k(p, k, largest))?;
        let got = run(&computation, &[&x])?;
        let expected: Vec<Vec<u64>> = case["outputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| golden::bits(&golden::literal(o).unwrap()))
            .collect();
        assert_eq!(got, expected, "{}", case["name"]);
    }
    Ok(())
}

#[test]
fn sort_orders_keys_and_carries_values_stably() -> Result<()> {
    let b = XlaBuilder::new("sorting");
    let keys = b.parameter(0, &shape!(s32[8]), "keys");
    let values = b.parameter(1, &shape!(f32[8]), "values");
    let less = comparator(&[ElementType::S32, ElementType::F32], ComparisonDirection::Lt);
    let sorted = sort(&[keys, values], &less, 0, true);
    assert_eq!(b.get_shape(sorted)?.to_string(), "(s32[8]{0}, f32[8]{0})");
    let computation = b.build(sorted)?;
    let k = Literal::vec1(&[3, 1, 2, 1, 3, 0, 2, 1]);
    let v = Literal::vec1(&[0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
    let out = computation.compile(&CompileOptions::default())?.execute(&[&k, &v])?;
    assert_eq!(out.tuple_element(0)?.to_vec::<i32>()?, vec![0, 1, 1, 1, 2, 2, 3, 3]);
    assert_eq!(out.tuple_element(1)?.to_vec::<f32>()?, vec![5.0, 1.0, 3.0, 7.0, 2.0, 6.0, 0.0, 4.0]);
    Ok(())
}

/// A deterministic pseudo-random sequence.
fn noise(seed: u64, n: usize) -> Vec<f32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 33) % 17) as f32 - 8.0
        })
        .collect()
}

#[test]
fn sort_along_any_dimension_of_any_layout_matches_a_reference() -> Result<()> {
    let dims = [3i64, 37, 5];
    let values = noise(7, 3 * 37 * 5);
    for layout in [[2i64, 1, 0], [0, 1, 2], [1, 0, 2]] {
        let shape = Shape::with_layout(ElementType::F32, &dims, &layout)?;
        for dimension in 0..3usize {
            for (direction, descending) in [(ComparisonDirection::Lt, false), (ComparisonDirection::Gt, true)]
            {
                let b = XlaBuilder::new("sort");
                let x = b.parameter(0, &shape, "x");
                let indices = iota(&b, &Shape::new(ElementType::S32, &dims), dimension as i64);
                let less = comparator(&[ElementType::F32, ElementType::S32], direction);
                let computation = b.build(sort(&[x, indices], &less, dimension as i64, true))?;
                let argument = Literal::from_vec(&shape, values.clone())?;
                let got = run(&computation, &[&argument])?;
                // Reference: a stable sort of each slice's (key, position) pairs.
                let mut keys = vec![0u64; values.len()];
                let mut positions = vec![0u64; values.len()];
                let strides = [dims[1] * dims[2], dims[2], 1];
                for slice in 0..values.len() / dims[dimension] as usize {
                    let mut index = [0i64; 3];
                    let mut rest = slice as i64;
                    for d in (0..3).rev().filter(|&d| d != dimension) {
                        index[d] = rest % dims[d];
                        rest /= dims[d];
                    }
                    let at = |i: i64| {
                        let mut full = index;
                        full[dimension] = i;
                        (0..3).map(|d| full[d] * strides[d]).sum::<i64>() as usize
                    };
                    let mut row: Vec<(f32, i64)> = (0..dims[dimension]).map(|i| (values[at(i)], i)).collect();
                    row.sort_by(|a, b| if descending { b.0.total_cmp(&a.0) } else { a.0.total_cmp(&b.0) });
                    for (i, (value, position)) in row.into_iter().enumerate() {
                        keys[at(i as i64)] = u64::from(value.to_bits());
                        positions[at(i as i64)] = position as u64;
                    }
                }
                assert_eq!(
                    got,
                    vec![keys, positions],
                    "layout {layout:?}, dimension {dimension}, {direction:?}"
                );
            }
        }
    }
    Ok(())
}

#[test]
fn a_comparator_of_any_kind_sorts() -> Result<()> {
    // Descending by absolute value, then ascending by the second operand: not one comparison
    // of the keys, so applied as a scalar program.
    let c = XlaBuilder::new("abs_then_index");
    let (a, b) = (c.parameter(0, &shape!(f32[]), "a"), c.parameter(1, &shape!(f32[]), "b"));
    let (i, j) = (c.parameter(2, &shape!(s32[]), "i"), c.parameter(3, &shape!(s32[]), "j"));
    let bigger = gt(abs(a), abs(b), &[]);
    let tied = and(eq(abs(a), abs(b), &[]), lt(i, j, &[]), &[]);
    let comparator = c.build(or(bigger, tied, &[]))?;
    let s = XlaBuilder::new("s");
    let x = s.parameter(0, &shape!(f32[6]), "x");
    let computation = s.build(sort(&[x, iota(&s, &shape!(s32[6]), 0)], &comparator, -1, false))?;
    let got = run(&computation, &[&Literal::vec1(&[1.0f32, -3.0, 2.0, 3.0, -1.0, 0.5])])?;
    let keys: Vec<f32> = got[0].iter().map(|&b| f32::from_bits(b as u32)).collect();
    assert_eq!(keys, vec![-3.0, 3.0, 2.0, 1.0, -1.0, 0.5]);
    assert_eq!(got[1], vec![1, 3, 2, 0, 4, 5]);
    Ok(())
}

#[test]
fn sort_and_top_k_print_and_reject_as_xla() {
    let less = comparator(&[ElementType::F32], ComparisonDirection::Lt);
    let b = XlaBuilder::new("s");
    let m = b.parameter(0, &shape!(f32[2, 3]), "m");
    let text = b.build(sort(&[m], &less, -1, false)).unwrap().to_hlo_text();
    assert!(text.contains("sort.6 = f32[2,3]{1,0} sort(m.1), dimensions={1}, to_apply=less.2"), "{text}");
    let b = XlaBuilder::new("t");
    let x = b.parameter(0, &shape!(f32[5]), "x");
    let text = b.build(top_k(x, 2, false)).unwrap().to_hlo_text();
    assert!(text.contains("(f32[2]{0}, s32[2]{0}) topk(x.1), k=2, largest=false"), "{text}");
    let b = XlaBuilder::new("s");
    let (keys, values) = (b.parameter(0, &shape!(f32[3]), "k"), b.parameter(1, &shape!(s32[4]), "v"));
    let bad = sort(
        &[keys, values],
        &comparator(&[ElementType::F32, ElementType::S32], ComparisonDirection::Lt),
        0,
        true,
    );
    assert!(b.build(bad).unwrap_err().to_string().starts_with(
        "Sort keys and values dimensions must match. Keys shape is: f32[3]\n, Values shape (operand index 1) is: s32[4]"
    ));
    let b = XlaBuilder::new("s");
    let x = b.parameter(0, &shape!(f32[3]), "x");
    let bad = sort(&[x], &less, 1, true);
    assert!(b.build(bad).unwrap_err().to_string().starts_with(
        "Expected the sort_dimension 1 of sort to be smaller than the rank 1 of the operand(s)."
    ));
    let b = XlaBuilder::new("t");
    let x = b.parameter(0, &shape!(f32[5]), "x");
    assert!(b
        .build(top_k(x, 6, true))
        .unwrap_err()
        .to_string()
        .starts_with("k=6 is larger than the last dimension of size=5"));
}

/// A module of `tests/data/jax_scalar_functions` (what jax 0.6.0 writes for `jnp.sort` and
/// friends).
fn jax_module(name: &str) -> XlaComputation {
    let path = format!("{}/tests/data/jax_scalar_functions/{name}.hlo", env!("CARGO_MANIFEST_DIR"));
    XlaComputation::from_hlo_text(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Values that make ties, NaNs of both signs and two payloads, both zeros and infinities.
const SPECIALS: [f64; 10] =
    [f64::NAN, -f64::NAN, 0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, 1.0, -1.0, 2.5, 1.0];

/// jax's order of floats: NaNs last and equal, -0 equal to +0, else by value.
fn jax_order(a: f64, b: f64) -> std::cmp::Ordering {
    let canonical = |v: f64| {
        if v.is_nan() {
            f64::NAN
        } else if v == 0.0 {
            0.0
        } else {
            v
        }
    };
    canonical(a).total_cmp(&canonical(b))
}

/// `count` draws from [`SPECIALS`] and small integers, the `k`th trial's.
fn draws(k: u64, count: usize) -> Vec<f64> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ k.wrapping_mul(0x2545_f491_4f6c_dd1d);
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            match state % 3 {
                0 => SPECIALS[(state >> 8) as usize % SPECIALS.len()],
                _ => ((state >> 8) % 7) as f64 - 3.0,
            }
        })
        .collect()
}

/// The stable order of each row (of `width`) of `keys` by `order`: the positions, per row.
fn stable_order(
    keys: &[f64],
    width: usize,
    order: impl Fn(usize, usize) -> std::cmp::Ordering,
) -> Vec<usize> {
    keys.chunks(width)
        .enumerate()
        .flat_map(|(r, row)| {
            let mut positions: Vec<usize> = (0..row.len()).collect();
            positions.sort_by(|&a, &b| order(r * width + a, r * width + b));
            positions
        })
        .collect()
}

#[test]
fn jax_float_sorts_order_nans_last_and_zeros_as_equal_keeping_each_value() -> Result<()> {
    for (name, ty, axis) in [
        ("sort_f32", ElementType::F32, 1),
        ("sort_f64", ElementType::F64, 0),
        ("sort_bf16", ElementType::Bf16, 1),
        ("sort_f16", ElementType::F16, 1),
        ("sort_s32", ElementType::S32, 1),
        ("sort_u8", ElementType::U8, 1),
    ] {
        let computation = jax_module(name);
        for trial in 0..40 {
            let values = draws(trial, 32);
            let values: Vec<f64> = match ty.is_float() {
                true => values,
                false => values.iter().map(|v| if v.is_finite() { v.abs() } else { 9.0 }).collect(),
            };
            let shape = Shape::new(ElementType::F64, &[4, 8]);
            let x = convert_literal(&Literal::from_vec(&shape, values.clone())?, ty)?;
            // The reference: each slice along `axis` sorted stably in jax's order.
            // Slices as rows: the matrix itself along axis 1, its transpose along axis 0.
            let width = if axis == 1 { 8 } else { 4 };
            let converted = x_values(&x)?;
            let keys = if axis == 1 { converted } else { transposed(&converted, 4, 8) };
            let order = stable_order(&keys, width, |a, b| jax_order(keys[a], keys[b]));
            let bits = golden::bits(&x);
            let along = if axis == 1 { bits } else { transposed(&bits, 4, 8) };
            let rows: Vec<u64> =
                order.iter().enumerate().map(|(i, &p)| along[(i / width) * width + p]).collect();
            let sorted_bits = if axis == 1 { rows } else { transposed(&rows, 8, 4) };
            assert_eq!(run(&computation, &[&x])?, vec![sorted_bits], "{name}, trial {trial}");
        }
    }
    Ok(())
}

#[test]
fn jax_argsorts_and_multi_key_sorts_are_stable_in_jax_order() -> Result<()> {
    let f32s =
        |values: &[f64]| Literal::from_vec(&shape!(f32[4, 8]), values.iter().map(|&v| v as f32).collect());
    for trial in 0..60 {
        let values = draws(trial, 32);
        let x = f32s(&values)?;
        let ascending = stable_order(&values, 8, |a, b| jax_order(values[a], values[b]));
        // argsort: the stable positions, as s32 (x64 off when it was written: s32 indices).
        let got = run(&jax_module("argsort"), &[&x])?;
        assert_eq!(got[0], ascending.iter().map(|&p| p as u64).collect::<Vec<_>>(), "argsort, trial {trial}");
        // jax's descending argsort reverses, sorts (ties by the reversed position) and reverses.
        let reversed: Vec<f64> = values.chunks(8).flat_map(|r| r.iter().rev().copied()).collect();
        let order = stable_order(&reversed, 8, |a, b| jax_order(reversed[a], reversed[b]));
        let descending: Vec<u64> = order
            .chunks(8)
            .flat_map(|r| r.iter().rev().map(|&p| (7 - p) as u64).collect::<Vec<_>>())
            .collect();
        assert_eq!(run(&jax_module("argsort_desc"), &[&x])?, vec![descending], "argsort_desc, trial {trial}");
        // Two keys: the floats in jax's order, ties by the integers; the values carried.
        let ints: Vec<i32> =
            draws(trial + 1000, 32).iter().map(|v| if v.is_finite() { *v as i32 } else { 5 }).collect();
        let y = Literal::from_vec(&shape!(s32[4, 8]), ints.clone())?;
        let order =
            stable_order(&values, 8, |a, b| jax_order(values[a], values[b]).then(ints[a].cmp(&ints[b])));
        let keys: Vec<u64> =
            order.iter().enumerate().map(|(i, &p)| (values[i / 8 * 8 + p] as f32).to_bits() as u64).collect();
        let carried: Vec<u64> =
            order.iter().enumerate().map(|(i, &p)| ints[i / 8 * 8 + p] as i64 as u64).collect();
        assert_eq!(
            run(&jax_module("sort_two_keys"), &[&x, &y])?,
            vec![keys, carried],
            "two keys, trial {trial}"
        );
    }
    Ok(())
}

/// `literal` (f64) converted to `ty` by a one-op computation.
fn convert_literal(literal: &Literal, ty: ElementType) -> Result<Literal> {
    let b = XlaBuilder::new("convert");
    let x = b.parameter(0, literal.shape(), "x");
    b.build(convert_element_type(x, ty))?.compile(&CompileOptions::default())?.execute(&[literal])
}

/// A literal's values, as f64.
fn x_values(literal: &Literal) -> Result<Vec<f64>> {
    convert_literal(literal, ElementType::F64)?.to_vec::<f64>()
}

/// A row-major `rows`×`columns` matrix transposed.
fn transposed<T: Copy>(values: &[T], rows: usize, columns: usize) -> Vec<T> {
    (0..columns).flat_map(|c| (0..rows).map(move |r| values[r * columns + c])).collect()
}
