//! Properties of the executor against naive references written here (plain loops over logical
//! indices): broadcasting binary ops, transpose, slice, reduce, dot_general, pad, and fused ==
//! unfused, over random small shapes (rank 0–4, sizes 0–4) and random layouts.

use lazy_xla::{
    abs, add, broadcast_in_dim, div, dot_general, max, min, mul, neg, pad, reduce, rem, slice, sub,
    transpose, CompileOptions, DotDimensionNumbers, ElementType, Layout, Literal, NativeType, PaddingConfig,
    PaddingConfigDimension, Shape, XlaBuilder, XlaComputation, XlaOp,
};
use proptest::prelude::*;
use proptest::sample::subsequence;

fn config() -> ProptestConfig {
    ProptestConfig { cases: 64, ..ProptestConfig::default() }
}

/// All multi-indices of `dims`, row-major.
fn indices(dims: &[i64]) -> Vec<Vec<i64>> {
    let mut all = vec![vec![]];
    for &d in dims {
        all = all.into_iter().flat_map(|p| (0..d).map(move |i| [p.clone(), vec![i]].concat())).collect();
    }
    all
}

/// Row-major linear index of `idx` in `dims`.
fn lin(dims: &[i64], idx: &[i64]) -> usize {
    idx.iter().zip(dims).fold(0i64, |acc, (&i, &d)| acc * d + i) as usize
}

fn count(dims: &[i64]) -> usize {
    dims.iter().product::<i64>() as usize
}

/// A literal of `dims` with minor-to-major `layout`, values from `value(i)` (i row-major).
fn literal<T: NativeType>(
    ty: ElementType,
    dims: &[i64],
    layout: &[i64],
    value: impl Fn(usize) -> T,
) -> Literal {
    let shape = Shape::with_layout(ty, dims, layout).expect("shape");
    Literal::from_vec(&shape, (0..count(dims)).map(value).collect()).expect("literal")
}

/// Small deterministic values, with negatives and zeros.
fn small(seed: usize) -> impl Fn(usize) -> i32 {
    move |i| ((i * 7 + seed * 3) % 11) as i32 - 5
}

/// Builds from parameters of the arguments' shapes, runs with `options`.
fn run_with<F>(args: &[&Literal], options: &CompileOptions, f: F) -> Literal
where
    F: for<'b> FnOnce(&'b XlaBuilder, &[XlaOp<'b>]) -> XlaOp<'b>,
{
    let b = XlaBuilder::new("prop");
    let params: Vec<XlaOp<'_>> =
        args.iter().enumerate().map(|(i, a)| b.parameter(i as i64, a.shape(), "p")).collect();
    let root = f(&b, &params);
    let c: XlaComputation = b.build(root).unwrap_or_else(|e| panic!("build: {e}"));
    c.compile(options).unwrap().execute(args).unwrap()
}

fn run<F>(args: &[&Literal], f: F) -> Literal
where
    F: for<'b> FnOnce(&'b XlaBuilder, &[XlaOp<'b>]) -> XlaOp<'b>,
{
    run_with(args, &CompileOptions::default(), f)
}

/// Dimensions of rank 0–4, sizes 0–4.
fn dims_strategy() -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(0i64..=4, 0..=4)
}

/// Dimensions and a random layout (minor_to_major permutation) for them.
fn shaped() -> impl Strategy<Value = (Vec<i64>, Vec<i64>)> {
    dims_strategy().prop_flat_map(|d| {
        let r = d.len() as i64;
        (Just(d), Just((0..r).collect::<Vec<_>>()).prop_shuffle())
    })
}

fn permutation(rank: usize) -> impl Strategy<Value = Vec<i64>> {
    Just((0..rank as i64).collect::<Vec<_>>()).prop_shuffle()
}

/// XLA's s32 arithmetic for the reference.
fn s32_op(op: u8, a: i32, b: i32) -> i32 {
    match op {
        0 => a.wrapping_add(b),
        1 => a.wrapping_sub(b),
        2 => a.wrapping_mul(b),
        3 => {
            if b == 0 {
                -1
            } else {
                a.wrapping_div(b)
            }
        }
        4 => {
            if b == 0 {
                a
            } else {
                a.wrapping_rem(b)
            }
        }
        _ => a.max(b),
    }
}

fn f32_op(op: u8, a: f32, b: f32) -> f32 {
    match op {
        0 => a + b,
        1 => a - b,
        2 => a * b,
        3 => {
            if a.is_nan() || b.is_nan() {
                f32::NAN
            } else {
                a.max(b)
            }
        }
        _ => {
            if a.is_nan() || b.is_nan() {
                f32::NAN
            } else {
                a.min(b)
            }
        }
    }
}

fn apply<'b>(op: u8, int: bool, x: XlaOp<'b>, y: XlaOp<'b>, dims: &[i64]) -> XlaOp<'b> {
    match (int, op) {
        (_, 0) => add(x, y, dims),
        (_, 1) => sub(x, y, dims),
        (_, 2) => mul(x, y, dims),
        (true, 3) => div(x, y, dims),
        (true, 4) => rem(x, y, dims),
        (true, _) => max(x, y, dims),
        (false, 3) => max(x, y, dims),
        (false, _) => min(x, y, dims),
    }
}

/// A broadcasting case: output dims, the full-rank operand's dims (each the output's or 1),
/// the broadcast dimensions of the lower-rank operand and its dims (each the output's or 1),
/// layouts for both, and whether the lower-rank operand goes first.
#[derive(Debug, Clone)]
struct BroadcastCase {
    full: Vec<i64>,
    full_layout: Vec<i64>,
    bdims: Vec<i64>,
    low: Vec<i64>,
    low_layout: Vec<i64>,
    low_first: bool,
}

fn broadcast_case() -> impl Strategy<Value = BroadcastCase> {
    dims_strategy()
        .prop_flat_map(|out| {
            let r = out.len();
            (
                Just(out.clone()),
                prop::collection::vec(any::<bool>(), r),
                subsequence((0..r as i64).collect::<Vec<_>>(), 0..=r),
                prop::collection::vec(any::<bool>(), r),
                any::<bool>(),
            )
        })
        .prop_flat_map(|(out, ones_full, bdims, ones_low, low_first)| {
            let full: Vec<i64> =
                out.iter().zip(&ones_full).map(|(&d, &one)| if one { 1 } else { d }).collect();
            let low: Vec<i64> =
                bdims.iter().zip(&ones_low).map(|(&d, &one)| if one { 1 } else { out[d as usize] }).collect();
            (
                Just(full.clone()),
                permutation(full.len()),
                Just(bdims),
                Just(low.clone()),
                permutation(low.len()),
                Just(low_first),
            )
        })
        .prop_map(|(full, full_layout, bdims, low, low_layout, low_first)| BroadcastCase {
            full,
            full_layout,
            bdims,
            low,
            low_layout,
            low_first,
        })
}

/// Reference for a broadcasting binary op: (out dims, values).
fn broadcast_reference<T: Copy>(
    c: &BroadcastCase,
    full: &[T],
    low: &[T],
    f: impl Fn(T, T) -> T,
) -> (Vec<i64>, Vec<T>) {
    let mut out = c.full.clone();
    for (k, &d) in c.bdims.iter().enumerate() {
        let d = d as usize;
        if out[d] == 1 {
            out[d] = c.low[k];
        }
    }
    let values = indices(&out)
        .iter()
        .map(|idx| {
            let fi: Vec<i64> = idx.iter().zip(&c.full).map(|(&i, &s)| if s == 1 { 0 } else { i }).collect();
            let li: Vec<i64> =
                c.bdims.iter().zip(&c.low).map(|(&d, &s)| if s == 1 { 0 } else { idx[d as usize] }).collect();
            let (a, b) = (full[lin(&c.full, &fi)], low[lin(&c.low, &li)]);
            if c.low_first {
                f(b, a)
            } else {
                f(a, b)
            }
        })
        .collect();
    (out, values)
}

fn run_broadcast(
    c: &BroadcastCase,
    x: &Literal,
    y: &Literal,
    op: u8,
    int: bool,
    options: &CompileOptions,
) -> Literal {
    let bd: Vec<i64> = if c.low.len() == c.full.len() { vec![] } else { c.bdims.clone() };
    let args: [&Literal; 2] = if c.low_first { [y, x] } else { [x, y] };
    run_with(&args, options, |_, p| apply(op, int, p[0], p[1], &bd))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn binary_s32_with_broadcasting(c in broadcast_case(), op in 0u8..6, seed in 0usize..11) {
        let x = literal(ElementType::S32, &c.full, &c.full_layout, small(seed));
        let y = literal(ElementType::S32, &c.low, &c.low_layout, small(seed + 5));
        let (dims, expected) = broadcast_reference(&c, &x.to_vec::<i32>().unwrap(), &y.to_vec::<i32>().unwrap(), |a, b| s32_op(op, a, b));
        for options in [CompileOptions::default(), CompileOptions::unfused()] {
            let out = run_broadcast(&c, &x, &y, op, true, &options);
            prop_assert_eq!(out.shape().dimensions(), &dims[..]);
            prop_assert_eq!(out.to_vec::<i32>().unwrap(), expected.clone());
        }
    }

    #[test]
    fn binary_f32_with_broadcasting(c in broadcast_case(), op in 0u8..5, seed in 0usize..11) {
        let x = literal(ElementType::F32, &c.full, &c.full_layout, |i| small(seed)(i) as f32 * 0.5);
        let y = literal(ElementType::F32, &c.low, &c.low_layout, |i| small(seed + 3)(i) as f32 * 0.25);
        let (dims, expected) = broadcast_reference(&c, &x.to_vec::<f32>().unwrap(), &y.to_vec::<f32>().unwrap(), |a, b| f32_op(op, a, b));
        for options in [CompileOptions::default(), CompileOptions::unfused()] {
            let out = run_broadcast(&c, &x, &y, op, false, &options);
            prop_assert_eq!(out.shape().dimensions(), &dims[..]);
            let got = out.to_vec::<f32>().unwrap();
            for (g, e) in got.iter().zip(&expected) {
                approx::assert_relative_eq!(*g, *e, max_relative = 1e-6);
            }
            prop_assert_eq!(got.len(), expected.len());
        }
    }

    #[test]
    fn transpose_any_permutation_and_layout(
        (dims, layout, perm) in shaped().prop_flat_map(|(d, l)| { let r = d.len(); (Just(d), Just(l), permutation(r)) }),
        seed in 0usize..11,
    ) {
        let x = literal(ElementType::S32, &dims, &layout, small(seed));
        let xs = x.to_vec::<i32>().unwrap();
        let out = run(&[&x], |_, p| transpose(p[0], &perm));
        let out_dims: Vec<i64> = perm.iter().map(|&p| dims[p as usize]).collect();
        prop_assert_eq!(out.shape().dimensions(), &out_dims[..]);
        // Transpose permutes the layout: out dim i is operand dim perm[i].
        let expected_layout: Vec<i64> = layout.iter().map(|&l| perm.iter().position(|&p| p == l).unwrap() as i64).collect();
        prop_assert_eq!(out.shape().layout().minor_to_major(), &expected_layout[..]);
        let expected: Vec<i32> = indices(&out_dims).iter().map(|idx| {
            let mut src = vec![0i64; dims.len()];
            for (i, &p) in perm.iter().enumerate() { src[p as usize] = idx[i]; }
            xs[lin(&dims, &src)]
        }).collect();
        prop_assert_eq!(out.to_vec::<i32>().unwrap(), expected.clone());
        let plain = run_with(&[&x], &CompileOptions::unfused(), |_, p| transpose(p[0], &perm));
        prop_assert_eq!(plain.to_vec::<i32>().unwrap(), expected);
    }

    #[test]
    fn slice_random_bounds_and_strides(
        (dims, layout, bounds) in shaped().prop_flat_map(|(d, l)| {
            let b: Vec<_> = d.iter().map(|&n| (0..=n, 0..=n, 1i64..=3)).collect();
            (Just(d), Just(l), b)
        }),
        seed in 0usize..11,
    ) {
        let x = literal(ElementType::F32, &dims, &layout, |i| small(seed)(i) as f32);
        let xs = x.to_vec::<f32>().unwrap();
        let starts: Vec<i64> = bounds.iter().map(|&(a, b, _)| a.min(b)).collect();
        let limits: Vec<i64> = bounds.iter().map(|&(a, b, _)| a.max(b)).collect();
        let strides: Vec<i64> = bounds.iter().map(|&(_, _, s)| s).collect();
        let out_dims: Vec<i64> = (0..dims.len()).map(|d| (limits[d] - starts[d] + strides[d] - 1) / strides[d]).collect();
        let expected: Vec<f32> = indices(&out_dims).iter().map(|idx| {
            let src: Vec<i64> = (0..dims.len()).map(|d| starts[d] + idx[d] * strides[d]).collect();
            xs[lin(&dims, &src)]
        }).collect();
        for options in [CompileOptions::default(), CompileOptions::unfused()] {
            let out = run_with(&[&x], &options, |_, p| slice(p[0], &starts, &limits, &strides));
            prop_assert_eq!(out.shape().dimensions(), &out_dims[..]);
            prop_assert_eq!(out.to_vec::<f32>().unwrap(), expected.clone());
        }
    }

    #[test]
    fn reduce_add_random_dimensions(
        (dims, layout, reduced) in shaped().prop_flat_map(|(d, l)| {
            let r = d.len() as i64;
            (Just(d), Just(l), subsequence((0..r).collect::<Vec<_>>(), 0..=r as usize))
        }),
        seed in 0usize..11,
        init in -3i32..3,
    ) {
        let x = literal(ElementType::S32, &dims, &layout, small(seed));
        let xs = x.to_vec::<i32>().unwrap();
        let r = XlaBuilder::new("sum");
        let s = Shape::scalar(ElementType::S32);
        let sum = r.build(add(r.parameter(0, &s, "a"), r.parameter(1, &s, "b"), &[])).unwrap();
        let kept: Vec<usize> = (0..dims.len()).filter(|d| !reduced.contains(&(*d as i64))).collect();
        let out_dims: Vec<i64> = kept.iter().map(|&d| dims[d]).collect();
        let expected: Vec<i32> = if reduced.is_empty() {
            xs.clone()
        } else {
            let mut acc = vec![init; count(&out_dims)];
            for (i, idx) in indices(&dims).iter().enumerate() {
                let o: Vec<i64> = kept.iter().map(|&d| idx[d]).collect();
                acc[lin(&out_dims, &o)] += xs[i];
            }
            acc
        };
        for options in [CompileOptions::default(), CompileOptions::unfused()] {
            let out = run_with(&[&x], &options, |b, p| reduce(p[0], b.constant_r0(init), &sum, &reduced));
            prop_assert_eq!(out.shape().dimensions(), &out_dims[..]);
            prop_assert_eq!(out.to_vec::<i32>().unwrap(), expected.clone());
        }
    }

    #[test]
    fn pad_random_configuration(
        (dims, layout, cfg) in shaped().prop_flat_map(|(d, l)| {
            let c: Vec<_> = d.iter().map(|_| (-2i64..=2, -2i64..=2, 0i64..=2)).collect();
            (Just(d), Just(l), c)
        }),
        seed in 0usize..11,
    ) {
        let out_dims: Vec<i64> = dims.iter().zip(&cfg).map(|(&n, &(lo, hi, int))| lo + hi + n + (n - 1).max(0) * int).collect();
        prop_assume!(out_dims.iter().all(|&d| d >= 0));
        let x = literal(ElementType::F32, &dims, &layout, |i| small(seed)(i) as f32 + 10.0);
        let xs = x.to_vec::<f32>().unwrap();
        let config = PaddingConfig {
            dimensions: cfg.iter().map(|&(edge_padding_low, edge_padding_high, interior_padding)| PaddingConfigDimension {
                edge_padding_low, edge_padding_high, interior_padding,
            }).collect(),
        };
        let expected: Vec<f32> = indices(&out_dims).iter().map(|idx| {
            let mut src = Vec::new();
            for (d, &(lo, _, int)) in cfg.iter().enumerate() {
                let q = idx[d] - lo;
                if q < 0 || q % (int + 1) != 0 || q / (int + 1) >= dims[d] { return -1.0; }
                src.push(q / (int + 1));
            }
            xs[lin(&dims, &src)]
        }).collect();
        for options in [CompileOptions::default(), CompileOptions::unfused()] {
            let out = run_with(&[&x], &options, |b, p| pad(p[0], b.constant_r0(-1.0f32), &config));
            prop_assert_eq!(out.shape().dimensions(), &out_dims[..]);
            prop_assert_eq!(out.to_vec::<f32>().unwrap(), expected.clone());
        }
    }
}

/// A dot_general case: sizes of batch, contracting, lhs-free and rhs-free dimensions, and where
/// each lands in the lhs and rhs (permutations).
#[derive(Debug, Clone)]
struct DotCase {
    batch: Vec<i64>,
    contract: Vec<i64>,
    lfree: Vec<i64>,
    rfree: Vec<i64>,
    lperm: Vec<i64>,
    rperm: Vec<i64>,
    llayout: Vec<i64>,
    rlayout: Vec<i64>,
}

fn dot_case() -> impl Strategy<Value = DotCase> {
    (
        prop::collection::vec(0i64..=3, 0..=1),
        prop::collection::vec(0i64..=3, 0..=2),
        prop::collection::vec(0i64..=3, 0..=1),
        prop::collection::vec(0i64..=3, 0..=1),
    )
        .prop_flat_map(|(batch, contract, lfree, rfree)| {
            let lr = batch.len() + contract.len() + lfree.len();
            let rr = batch.len() + contract.len() + rfree.len();
            (
                Just((batch, contract, lfree, rfree)),
                permutation(lr),
                permutation(rr),
                permutation(lr),
                permutation(rr),
            )
        })
        .prop_map(|((batch, contract, lfree, rfree), lperm, rperm, llayout, rlayout)| DotCase {
            batch,
            contract,
            lfree,
            rfree,
            lperm,
            rperm,
            llayout,
            rlayout,
        })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn dot_general_random_batch_and_contracting(c in dot_case(), seed in 0usize..11, float in any::<bool>()) {
        let (nb, nc) = (c.batch.len(), c.contract.len());
        // Logical role order: [batch.., contracting.., free..]; position perm[k] holds role k.
        let place = |perm: &[i64], free: &[i64]| -> (Vec<i64>, Vec<i64>, Vec<i64>, Vec<i64>) {
            let roles: Vec<i64> = c.batch.iter().chain(&c.contract).chain(free).copied().collect();
            let mut dims = vec![0; roles.len()];
            for (k, &p) in perm.iter().enumerate() { dims[p as usize] = roles[k]; }
            let b = perm[..nb].to_vec();
            let k = perm[nb..nb + nc].to_vec();
            let mut f = perm[nb + nc..].to_vec();
            f.sort();
            (dims, b, k, f)
        };
        let (ldims, lb, lc, lf) = place(&c.lperm, &c.lfree);
        let (rdims, rb, rc, rf) = place(&c.rperm, &c.rfree);
        let ty = if float { ElementType::F32 } else { ElementType::S32 };
        let (x, y) = if float {
            (literal(ty, &ldims, &c.llayout, |i| small(seed)(i) as f32), literal(ty, &rdims, &c.rlayout, |i| small(seed + 4)(i) as f32))
        } else {
            (literal(ty, &ldims, &c.llayout, small(seed)), literal(ty, &rdims, &c.rlayout, small(seed + 4)))
        };
        let xs: Vec<i64> = literal(ElementType::S64, &ldims, &c.llayout, |i| small(seed)(i) as i64).to_vec::<i64>().unwrap();
        let ys: Vec<i64> = literal(ElementType::S64, &rdims, &c.rlayout, |i| small(seed + 4)(i) as i64).to_vec::<i64>().unwrap();
        let out_dims: Vec<i64> = lb.iter().map(|&d| ldims[d as usize])
            .chain(lf.iter().map(|&d| ldims[d as usize]))
            .chain(rf.iter().map(|&d| rdims[d as usize])).collect();
        let cdims: Vec<i64> = lc.iter().map(|&d| ldims[d as usize]).collect();
        let expected: Vec<i64> = indices(&out_dims).iter().map(|o| {
            let (bi, rest) = o.split_at(nb);
            let (li, ri) = rest.split_at(lf.len());
            indices(&cdims).iter().map(|k| {
                let mut l = vec![0i64; ldims.len()];
                let mut r = vec![0i64; rdims.len()];
                for (j, &i) in bi.iter().enumerate() { l[lb[j] as usize] = i; r[rb[j] as usize] = i; }
                for (j, &i) in k.iter().enumerate() { l[lc[j] as usize] = i; r[rc[j] as usize] = i; }
                for (j, &i) in li.iter().enumerate() { l[lf[j] as usize] = i; }
                for (j, &i) in ri.iter().enumerate() { r[rf[j] as usize] = i; }
                xs[lin(&ldims, &l)] * ys[lin(&rdims, &r)]
            }).sum()
        }).collect();
        let numbers = DotDimensionNumbers {
            lhs_contracting_dimensions: lc.clone(),
            rhs_contracting_dimensions: rc.clone(),
            lhs_batch_dimensions: lb.clone(),
            rhs_batch_dimensions: rb.clone(),
        };
        for options in [CompileOptions::default(), CompileOptions::unfused()] {
            let out = run_with(&[&x, &y], &options, |_, p| dot_general(p[0], p[1], &numbers));
            prop_assert_eq!(out.shape().dimensions(), &out_dims[..]);
            let got: Vec<i64> = if float {
                out.to_vec::<f32>().unwrap().iter().map(|&v| v as i64).collect()
            } else {
                out.to_vec::<i32>().unwrap().iter().map(|&v| v as i64).collect()
            };
            prop_assert_eq!(got, expected.clone());
        }
    }

    /// Random element-wise chains over a [2,3] and a [3] operand (broadcast in two ways):
    /// fused and unfused agree, and both match a reference.
    #[test]
    fn fused_equals_unfused_on_elementwise_chains(
        steps in prop::collection::vec((0u8..7, any::<prop::sample::Index>(), any::<prop::sample::Index>()), 1..8),
        layout in permutation(2),
        seed in 0usize..11,
    ) {
        let x = literal(ElementType::F32, &[2, 3], &layout, |i| small(seed)(i) as f32 * 0.5);
        let v = literal(ElementType::F32, &[3], &[0], |i| small(seed + 2)(i) as f32 * 0.25);
        let xs = x.to_vec::<f32>().unwrap();
        let vs = v.to_vec::<f32>().unwrap();
        // Reference values of each intermediate, logical row-major [2,3].
        let mut reference: Vec<Vec<f32>> = vec![xs.clone(), (0..6).map(|i| vs[i % 3]).collect()];
        for &(op, a, b) in &steps {
            let (a, b) = (&reference[a.index(reference.len())], &reference[b.index(reference.len())]);
            let next: Vec<f32> = a.iter().zip(b).map(|(&p, &q)| match op {
                0 => p + q, 1 => p - q, 2 => p * q, 3 => f32_op(3, p, q), 4 => f32_op(4, p, q), 5 => -p, _ => p.abs(),
            }).collect();
            reference.push(next);
        }
        let build = |options: &CompileOptions| run_with(&[&x, &v], options, |_, p| {
            let mut ops: Vec<XlaOp<'_>> = vec![p[0], broadcast_in_dim(p[1], &[2, 3], &[1])];
            for &(op, a, b) in &steps {
                let (a, b) = (ops[a.index(ops.len())], ops[b.index(ops.len())]);
                ops.push(match op {
                    0 => add(a, b, &[]), 1 => sub(a, b, &[]), 2 => mul(a, b, &[]), 3 => max(a, b, &[]),
                    4 => min(a, b, &[]), 5 => neg(a), _ => abs(a),
                });
            }
            *ops.last().unwrap()
        });
        let fused = build(&CompileOptions::default());
        let plain = build(&CompileOptions::unfused());
        prop_assert_eq!(fused.shape(), plain.shape());
        let (f, u) = (fused.to_vec::<f32>().unwrap(), plain.to_vec::<f32>().unwrap());
        let expected = reference.last().unwrap();
        for ((a, b), e) in f.iter().zip(&u).zip(expected) {
            approx::assert_relative_eq!(*a, *b, max_relative = 1e-5);
            approx::assert_relative_eq!(*a, *e, max_relative = 1e-5);
        }
    }
}

#[test]
fn layouts_do_not_change_values() {
    let x = literal(ElementType::S32, &[2, 3, 4], &[0, 1, 2], small(1));
    let y = x.relayout(&Layout::new(&[2, 1, 0])).unwrap();
    let a = run(&[&x, &y], |_, p| sub(p[0], p[1], &[]));
    assert_eq!(a.to_vec::<i32>().unwrap(), vec![0; 24]);
    assert_eq!(a.shape().layout().minor_to_major(), &[0, 1, 2]);
}
