//! Indexing, windows and convolution against naive references written from XLA's operation
//! semantics, over random dimension numbers, window configurations and operand layouts; fused
//! and unfused runs agree. Values are small integers, so every sum is exact in f32.

use lazy_xla::*;
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig { cases: 48, ..ProptestConfig::default() }
}

/// A dense row-major array of f32 values, the references' view of a literal.
#[derive(Clone, Debug)]
struct Dense {
    dims: Vec<i64>,
    values: Vec<f32>,
}

impl Dense {
    fn new(dims: &[i64], seed: u64) -> Dense {
        let n: i64 = dims.iter().product();
        let values = (0..n as u64)
            .map(|i| ((i.wrapping_mul(2654435761).wrapping_add(seed * 97)) % 7) as f32 - 3.0)
            .collect();
        Dense { dims: dims.to_vec(), values }
    }

    fn zeros(dims: &[i64]) -> Dense {
        Dense { dims: dims.to_vec(), values: vec![0.0; dims.iter().product::<i64>() as usize] }
    }

    fn position(&self, index: &[i64]) -> usize {
        index.iter().zip(&self.dims).fold(0, |p, (&i, &d)| p * d + i) as usize
    }

    fn at(&self, index: &[i64]) -> f32 {
        self.values[self.position(index)]
    }

    /// The literal of these values in the layout `minor_to_major`.
    fn literal(&self, minor_to_major: &[i64]) -> Literal {
        let shape = Shape::with_layout(ElementType::F32, &self.dims, minor_to_major).unwrap();
        Literal::from_vec(&shape, self.values.clone()).unwrap()
    }
}

/// Every index of a box of `dims`, row-major.
fn indices(dims: &[i64]) -> Vec<Vec<i64>> {
    let mut all = vec![vec![]];
    for &d in dims {
        all = all
            .into_iter()
            .flat_map(|prefix| (0..d).map(move |i| [prefix.clone(), vec![i]].concat()))
            .collect();
    }
    all
}

/// A random permutation of `0..n` (a layout or a role assignment).
fn permutation(n: usize) -> impl Strategy<Value = Vec<i64>> {
    Just((0..n as i64).collect::<Vec<_>>()).prop_shuffle()
}

/// Runs `root` fused and unfused (which must agree) and returns the values.
fn run(b: &XlaBuilder, root: XlaOp<'_>, args: &[&Literal]) -> Vec<f32> {
    let computation = b.build(root).unwrap();
    let fused = computation.compile(&CompileOptions::default()).unwrap().execute(args).unwrap();
    let unfused = computation.compile(&CompileOptions::unfused()).unwrap().execute(args).unwrap();
    assert_eq!(fused, unfused);
    fused.to_vec::<f32>().unwrap()
}

fn scalar_fn(name: &str, f: for<'b> fn(XlaOp<'b>, XlaOp<'b>) -> XlaOp<'b>) -> XlaComputation {
    let b = XlaBuilder::new(name);
    let (x, y) = (b.parameter(0, &shape!(f32[]), "x"), b.parameter(1, &shape!(f32[]), "y"));
    b.build(f(x, y)).unwrap()
}

/// One spatial dimension of a window: size, stride, padding, base and window dilation.
#[derive(Clone, Debug)]
struct Dim {
    size: i64,
    stride: i64,
    padding: (i64, i64),
    base_dilation: i64,
    window_dilation: i64,
}

fn window_dim(max_size: i64) -> impl Strategy<Value = Dim> {
    (1..=max_size, 1..=3i64, (-1..=2i64, -1..=2i64), 1..=2i64, 1..=2i64).prop_map(
        |(size, stride, padding, base_dilation, window_dilation)| Dim {
            size,
            stride,
            padding,
            base_dilation,
            window_dilation,
        },
    )
}

/// The operand position a window element reads along one dimension, or `None` for padding
/// and dilation holes (XLA's semantics: the base dilated, padded, then windowed).
fn tap(dim: &Dim, output: i64, element: i64, bound: i64) -> Option<i64> {
    let dilated = output * dim.stride + element * dim.window_dilation - dim.padding.0;
    (dilated >= 0 && dilated % dim.base_dilation == 0 && dilated / dim.base_dilation < bound)
        .then(|| dilated / dim.base_dilation)
}

fn window_count(dim: &Dim, bound: i64) -> i64 {
    let base = if bound == 0 { 0 } else { (bound - 1) * dim.base_dilation + 1 };
    let padded = base + dim.padding.0 + dim.padding.1;
    let window = (dim.size - 1) * dim.window_dilation + 1;
    if padded < 0 || window > padded {
        0
    } else {
        (padded - window) / dim.stride + 1
    }
}

/// A convolution case: spatial rank 1 or 2, roles of dimensions permuted, groups.
#[derive(Clone, Debug)]
struct ConvCase {
    batch: i64,
    in_features: i64,
    out_features: i64,
    spatial: Vec<i64>,
    dims: Vec<Dim>,
    feature_groups: i64,
    batch_groups: i64,
    input_roles: Vec<i64>,
    kernel_roles: Vec<i64>,
    output_roles: Vec<i64>,
    lhs_layout: Vec<i64>,
    rhs_layout: Vec<i64>,
}

/// Small convolutions of spatial rank 0 to 2.
fn conv_case() -> impl Strategy<Value = ConvCase> {
    conv_case_of(0..=2, 1..=5, 1..=2)
}

/// Convolutions of `ranks` spatial dimensions of `spatial` sizes and `features` per group.
fn conv_case_of(
    ranks: std::ops::RangeInclusive<usize>,
    spatial: std::ops::RangeInclusive<i64>,
    features: std::ops::RangeInclusive<i64>,
) -> impl Strategy<Value = ConvCase> {
    ranks.prop_flat_map(move |rank| {
        let n = rank + 2;
        (
            (
                1..=2i64,
                features.clone(),
                features.clone(),
                prop::collection::vec(spatial.clone(), rank),
                prop::collection::vec(window_dim(3), rank),
            ),
            (0..3usize),
            (permutation(n), permutation(n), permutation(n), permutation(n), permutation(n)),
        )
            .prop_map(
                move |((batch, features, outs, spatial, dims), groups, (ir, kr, or, ll, rl))| {
                    let (feature_groups, batch_groups) = [(1, 1), (2, 1), (1, 2)][groups];
                    ConvCase {
                        batch: batch * batch_groups,
                        in_features: features * feature_groups,
                        out_features: outs * feature_groups * batch_groups,
                        spatial,
                        dims,
                        feature_groups,
                        batch_groups,
                        input_roles: ir,
                        kernel_roles: kr,
                        output_roles: or,
                        lhs_layout: ll,
                        rhs_layout: rl,
                    }
                },
            )
    })
}

/// Dimension numbers from role permutations: role 0 batch / input feature, role 1 feature /
/// output feature, roles 2.. spatial.
fn conv_numbers(case: &ConvCase) -> ConvolutionDimensionNumbers {
    let (i, k, o) = (&case.input_roles, &case.kernel_roles, &case.output_roles);
    ConvolutionDimensionNumbers {
        input_batch_dimension: i[0],
        input_feature_dimension: i[1],
        input_spatial_dimensions: i[2..].to_vec(),
        kernel_input_feature_dimension: k[0],
        kernel_output_feature_dimension: k[1],
        kernel_spatial_dimensions: k[2..].to_vec(),
        output_batch_dimension: o[0],
        output_feature_dimension: o[1],
        output_spatial_dimensions: o[2..].to_vec(),
    }
}

/// Dimension sizes placed by roles.
fn placed(roles: &[i64], sizes: &[i64]) -> Vec<i64> {
    let mut dims = vec![0; roles.len()];
    for (&d, &s) in roles.iter().zip(sizes) {
        dims[d as usize] = s;
    }
    dims
}

fn naive_conv(case: &ConvCase, lhs: &Dense, rhs: &Dense) -> Option<Dense> {
    let groups = case.feature_groups.max(case.batch_groups);
    let in_per_group = case.in_features / case.feature_groups;
    let out_per_group = case.out_features / groups;
    let out_batch = case.batch / case.batch_groups;
    let positions: Vec<i64> = case.dims.iter().zip(&case.spatial).map(|(d, &b)| window_count(d, b)).collect();
    let out_dims =
        placed(&case.output_roles, &[[out_batch, case.out_features].as_slice(), &positions].concat());
    let mut out = Dense::zeros(&out_dims);
    let window: Vec<i64> = case.dims.iter().map(|d| d.size).collect();
    for index in indices(&out_dims) {
        let role = |r: usize| index[case.output_roles[r] as usize];
        let (n, o) = (role(0), role(1));
        let g = o / out_per_group;
        let batch = if case.batch_groups > 1 { g * out_batch } else { 0 } + n;
        let mut sum = 0.0f32;
        for t in indices(&window) {
            let taps: Option<Vec<i64>> =
                (0..window.len()).map(|s| tap(&case.dims[s], role(2 + s), t[s], case.spatial[s])).collect();
            let Some(taps) = taps else { continue };
            for i in 0..in_per_group {
                let feature = if case.feature_groups > 1 { g * in_per_group } else { 0 } + i;
                let lhs_index = placed(&case.input_roles, &[[batch, feature].as_slice(), &taps].concat());
                let rhs_index = placed(&case.kernel_roles, &[[i, o].as_slice(), &t].concat());
                sum += lhs.at(&lhs_index) * rhs.at(&rhs_index);
            }
        }
        let p = out.position(&index);
        out.values[p] = sum;
    }
    Some(out)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn convolution_is_the_naive_sum(case in conv_case()) {
        check_convolution(&case)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    /// Spatial sizes of a few dozen (many rows per product) under any window.
    #[test]
    fn larger_convolutions_are_the_naive_sum(case in conv_case_of(2..=2, 24..=36, 1..=9)) {
        check_convolution(&case)?;
    }
}

/// jax's 3×3 SAME convolutions, NHWC by HWIO, in sizes where the kernel's products run over
/// several lines at once (the rows over a line's padding computed and dropped), and strided.
#[test]
fn same_convolutions_over_several_lines_are_the_naive_sum() {
    for (side, stride, layout) in [(20, 1, [3, 2, 1, 0]), (17, 1, [2, 3, 0, 1]), (19, 2, [3, 2, 1, 0])] {
        let dim = Dim { size: 3, stride, padding: (1, 1), base_dilation: 1, window_dilation: 1 };
        let case = ConvCase {
            batch: 2,
            in_features: 5,
            out_features: 7,
            spatial: vec![side, side - 2],
            dims: vec![dim.clone(), dim],
            feature_groups: 1,
            batch_groups: 1,
            input_roles: vec![0, 3, 1, 2],
            kernel_roles: vec![2, 3, 0, 1],
            output_roles: vec![0, 3, 1, 2],
            lhs_layout: layout.to_vec(),
            rhs_layout: vec![3, 2, 1, 0],
        };
        check_convolution(&case).unwrap();
    }
}

/// The convolution of `case` equals the naive sum, in the case's layouts.
fn check_convolution(case: &ConvCase) -> Result<(), TestCaseError> {
    let numbers = conv_numbers(case);
    let lhs_dims =
        placed(&case.input_roles, &[[case.batch, case.in_features].as_slice(), &case.spatial].concat());
    let window: Vec<i64> = case.dims.iter().map(|d| d.size).collect();
    let rhs_dims = placed(
        &case.kernel_roles,
        &[[case.in_features / case.feature_groups, case.out_features].as_slice(), &window].concat(),
    );
    let (lhs, rhs) = (Dense::new(&lhs_dims, 1), Dense::new(&rhs_dims, 2));
    let b = XlaBuilder::new("conv");
    let x = b.parameter(0, &Shape::with_layout(ElementType::F32, &lhs_dims, &case.lhs_layout).unwrap(), "x");
    let k = b.parameter(1, &Shape::with_layout(ElementType::F32, &rhs_dims, &case.rhs_layout).unwrap(), "k");
    let strides: Vec<i64> = case.dims.iter().map(|d| d.stride).collect();
    let padding: Vec<(i64, i64)> = case.dims.iter().map(|d| d.padding).collect();
    let lhs_dilation: Vec<i64> = case.dims.iter().map(|d| d.base_dilation).collect();
    let rhs_dilation: Vec<i64> = case.dims.iter().map(|d| d.window_dilation).collect();
    let y = conv_general_dilated(
        x,
        k,
        &strides,
        &padding,
        &lhs_dilation,
        &rhs_dilation,
        &numbers,
        case.feature_groups,
        case.batch_groups,
    );
    // Windows larger than the padded base make empty outputs; a negative padded base is an error.
    prop_assume!(b.get_shape(y).is_ok());
    let want = naive_conv(case, &lhs, &rhs).unwrap();
    prop_assert_eq!(b.get_shape(y).unwrap().dimensions().to_vec(), want.dims.clone());
    let got = run(&b, y, &[&lhs.literal(&case.lhs_layout), &rhs.literal(&case.rhs_layout)]);
    prop_assert_eq!(got, want.values);
    Ok(())
}

/// `reduce_window` of a max over an operand of `dims` in `layout`, from -inf, as one op
/// (vectorized) or, `interpreted`, as a select, against the naive fold.
fn check_reduce_window(
    dims: &[i64],
    windows: &[Dim],
    layout: &[i64],
    interpreted: bool,
) -> Result<(), TestCaseError> {
    let rank = dims.len();
    let operand = Dense::new(dims, 3);
    let reducer = match interpreted {
        false => scalar_fn("max", |x, y| max(x, y, &[])),
        true => scalar_fn("max_select", |x, y| select(gt(x, y, &[]), x, y)),
    };
    let b = XlaBuilder::new("reduce_window");
    let x = b.parameter(0, &Shape::with_layout(ElementType::F32, dims, layout).unwrap(), "x");
    let y = reduce_window_with_general_padding(
        x,
        b.constant_r0(f32::NEG_INFINITY),
        &reducer,
        &windows.iter().map(|d| d.size).collect::<Vec<_>>(),
        &windows.iter().map(|d| d.stride).collect::<Vec<_>>(),
        &windows.iter().map(|d| d.base_dilation).collect::<Vec<_>>(),
        &windows.iter().map(|d| d.window_dilation).collect::<Vec<_>>(),
        &windows.iter().map(|d| d.padding).collect::<Vec<_>>(),
    );
    prop_assume!(b.get_shape(y).is_ok());
    let positions: Vec<i64> = windows.iter().zip(dims).map(|(d, &b)| window_count(d, b)).collect();
    let sizes: Vec<i64> = windows.iter().map(|d| d.size).collect();
    let want: Vec<f32> = indices(&positions)
        .into_iter()
        .map(|o| {
            indices(&sizes)
                .into_iter()
                .filter_map(|t| {
                    (0..rank).map(|d| tap(&windows[d], o[d], t[d], dims[d])).collect::<Option<Vec<_>>>()
                })
                .fold(f32::NEG_INFINITY, |a, i| a.max(operand.at(&i)))
        })
        .collect();
    prop_assert_eq!(run(&b, y, &[&operand.literal(layout)]), want);
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn reduce_window_is_the_naive_fold(
        dims in prop::collection::vec(1..=5i64, 1..=3),
        windows in prop::collection::vec(window_dim(3), 3),
        layout_seed in permutation(3),
        interpreted in any::<bool>(),
    ) {
        let rank = dims.len();
        let layout: Vec<i64> = layout_seed.into_iter().filter(|&d| (d as usize) < rank).collect();
        check_reduce_window(&dims, &windows[..rank], &layout, interpreted)?;
    }

    /// Rows of up to 40 contiguous elements (whole vectors and a remainder) that the window
    /// does not move along, folded as vectors.
    #[test]
    fn reduce_window_over_long_rows_is_the_naive_fold(
        dims in (1..=4i64, 1..=4i64, 1..=40i64),
        windows in prop::collection::vec(window_dim(3), 2),
    ) {
        let trivial = Dim { size: 1, stride: 1, padding: (0, 0), base_dilation: 1, window_dilation: 1 };
        let windows = [windows[0].clone(), windows[1].clone(), trivial];
        check_reduce_window(&[dims.0, dims.1, dims.2], &windows, &[2, 1, 0], false)?;
    }

    #[test]
    fn select_and_scatter_is_the_naive_one(
        dims in prop::collection::vec(1..=5i64, 1..=2),
        windows in prop::collection::vec((1..=3i64, 1..=2i64, (0..=1i64, 0..=1i64)), 2),
        layout_seed in permutation(2),
        last in any::<bool>(),
    ) {
        let rank = dims.len();
        let windows: Vec<Dim> = windows[..rank]
            .iter()
            .map(|&(size, stride, padding)| Dim { size, stride, padding, base_dilation: 1, window_dilation: 1 })
            .collect();
        let layout: Vec<i64> = layout_seed.into_iter().filter(|&d| (d as usize) < rank).collect();
        let operand = Dense::new(&dims, 5);
        let positions: Vec<i64> = windows.iter().zip(&dims).map(|(d, &b)| window_count(d, b)).collect();
        let source = Dense::new(&positions, 6);
        let select = match last {
            false => scalar_fn("ge", |x, y| ge(x, y, &[])),
            true => scalar_fn("gt", |x, y| gt(x, y, &[])),
        };
        let b = XlaBuilder::new("select_and_scatter");
        let x = b.parameter(0, &Shape::with_layout(ElementType::F32, &dims, &layout).unwrap(), "x");
        let s = b.parameter(1, &Shape::new(ElementType::F32, &positions), "s");
        let y = select_and_scatter_with_general_padding(
            x,
            &select,
            &windows.iter().map(|d| d.size).collect::<Vec<_>>(),
            &windows.iter().map(|d| d.stride).collect::<Vec<_>>(),
            &windows.iter().map(|d| d.padding).collect::<Vec<_>>(),
            s,
            b.constant_r0(0.0f32),
            &scalar_fn("add", |x, y| add(x, y, &[])),
        );
        prop_assume!(b.get_shape(y).is_ok());
        let mut want = Dense::zeros(&dims);
        let sizes: Vec<i64> = windows.iter().map(|d| d.size).collect();
        for o in indices(&positions) {
            let mut kept: Option<Vec<i64>> = None;
            for t in indices(&sizes) {
                let Some(i) = (0..rank).map(|d| tap(&windows[d], o[d], t[d], dims[d])).collect::<Option<Vec<_>>>() else { continue };
                kept = match kept {
                    Some(k) if (if last { operand.at(&k) > operand.at(&i) } else { operand.at(&k) >= operand.at(&i) }) => Some(k),
                    _ => Some(i),
                };
            }
            if let Some(k) = kept {
                let p = want.position(&k);
                want.values[p] += source.at(&o);
            }
        }
        let got = run(&b, y, &[&operand.literal(&layout), &source.literal(&(0..rank as i64).rev().collect::<Vec<_>>())]);
        prop_assert_eq!(got, want.values);
    }

    #[test]
    fn gather_and_scatter_are_the_naive_ones(
        dims in prop::collection::vec(1..=4i64, 1..=3),
        mapped in prop::collection::vec(any::<bool>(), 3),
        collapse in prop::collection::vec(any::<bool>(), 3),
        sizes_seed in prop::collection::vec(0..=4i64, 3),
        batch in 1..=3i64,
        starts in prop::collection::vec(-2..=5i64, 9),
        layout_seed in permutation(3),
        output_position in 0..=3usize,
    ) {
        let rank = dims.len();
        let layout: Vec<i64> = layout_seed.into_iter().filter(|&d| (d as usize) < rank).collect();
        let start_index_map: Vec<i64> = (0..rank as i64).filter(|&d| mapped[d as usize]).collect();
        let slice_sizes: Vec<i64> = (0..rank)
            .map(|d| if mapped[d] && collapse[d] { 1.min(dims[d]) } else { sizes_seed[d].min(dims[d]) })
            .collect();
        let collapsed: Vec<i64> = start_index_map.iter().copied().filter(|&d| collapse[d as usize] && slice_sizes[d as usize] == 1).collect();
        let kept: Vec<i64> = (0..rank as i64).filter(|d| !collapsed.contains(d)).collect();
        // Indices [batch, k]; the batch dimension goes to output position `output_position`.
        let k = start_index_map.len() as i64;
        let batch_position = output_position.min(kept.len()) as i64;
        let offset_dims: Vec<i64> = (0..kept.len() as i64 + 1).filter(|&d| d != batch_position).collect();
        let numbers = GatherDimensionNumbers {
            offset_dims: offset_dims.clone(),
            collapsed_slice_dims: collapsed.clone(),
            start_index_map: start_index_map.clone(),
            index_vector_dim: 1,
            ..Default::default()
        };
        let index_values: Vec<i32> = (0..(batch * k) as usize).map(|i| starts[i % starts.len()] as i32).collect();
        let index_literal = Literal::from_vec(&Shape::new(ElementType::S32, &[batch, k]), index_values.clone()).unwrap();
        let operand = Dense::new(&dims, 7);
        let start_of = |b: i64, clamp: bool, extent: &[i64]| -> Vec<i64> {
            let mut start = vec![0i64; rank];
            for (j, &d) in start_index_map.iter().enumerate() {
                let v = index_values[(b * k) as usize + j] as i64;
                start[d as usize] = if clamp { v.clamp(0, dims[d as usize] - extent[d as usize]) } else { v };
            }
            start
        };
        // gather
        let b = XlaBuilder::new("gather");
        let x = b.parameter(0, &Shape::with_layout(ElementType::F32, &dims, &layout).unwrap(), "x");
        let i = b.parameter(1, &index_literal.shape().clone(), "i");
        let y = gather(x, i, &numbers, &slice_sizes, false);
        let kept_sizes: Vec<i64> = kept.iter().map(|&d| slice_sizes[d as usize]).collect();
        let mut out_dims = kept_sizes.clone();
        out_dims.insert(batch_position as usize, batch);
        prop_assert_eq!(b.get_shape(y).unwrap().dimensions().to_vec(), out_dims.clone());
        let want: Vec<f32> = indices(&out_dims)
            .into_iter()
            .map(|o| {
                let bi = o[batch_position as usize];
                let mut offset = o.clone();
                offset.remove(batch_position as usize);
                let mut index = start_of(bi, true, &slice_sizes);
                for (&d, &v) in kept.iter().zip(&offset) {
                    index[d as usize] += v;
                }
                operand.at(&index)
            })
            .collect();
        prop_assert_eq!(run(&b, y, &[&operand.literal(&layout), &index_literal]), want);

        // scatter of the same windows (updates shaped as the gather's output), adding
        let scatter_numbers = ScatterDimensionNumbers {
            update_window_dims: offset_dims,
            inserted_window_dims: collapsed,
            scatter_dims_to_operand_dims: start_index_map.clone(),
            index_vector_dim: 1,
            ..Default::default()
        };
        let updates = Dense::new(&out_dims, 8);
        let b = XlaBuilder::new("scatter");
        let x = b.parameter(0, &Shape::with_layout(ElementType::F32, &dims, &layout).unwrap(), "x");
        let i = b.parameter(1, &index_literal.shape().clone(), "i");
        let u = b.parameter(2, &Shape::new(ElementType::F32, &out_dims), "u");
        let y = scatter(x, i, u, &scalar_fn("add", |x, y| add(x, y, &[])), &scatter_numbers, false, false);
        let mut want = operand.clone();
        let mut extent = vec![1i64; rank];
        for (&d, &s) in kept.iter().zip(&kept_sizes) {
            extent[d as usize] = s;
        }
        for o in indices(&out_dims) {
            let bi = o[batch_position as usize];
            let start = start_of(bi, false, &extent);
            if (0..rank).any(|d| start[d] < 0 || start[d] + extent[d] > dims[d]) {
                continue;
            }
            let mut offset = o.clone();
            offset.remove(batch_position as usize);
            let mut index = start;
            for (&d, &v) in kept.iter().zip(&offset) {
                index[d as usize] += v;
            }
            let p = want.position(&index);
            want.values[p] += updates.at(&o);
        }
        let got = run(&b, y, &[&operand.literal(&layout), &index_literal, &updates.literal(&(0..out_dims.len() as i64).rev().collect::<Vec<_>>())]);
        prop_assert_eq!(got, want.values);
    }

    #[test]
    fn dynamic_slices_clamp_their_starts(
        dims in prop::collection::vec(1..=5i64, 1..=3),
        sizes_seed in prop::collection::vec(0..=5i64, 3),
        starts in prop::collection::vec(-3..=7i64, 3),
        layout_seed in permutation(3),
    ) {
        let rank = dims.len();
        let layout: Vec<i64> = layout_seed.into_iter().filter(|&d| (d as usize) < rank).collect();
        let sizes: Vec<i64> = (0..rank).map(|d| sizes_seed[d].min(dims[d])).collect();
        let clamped: Vec<i64> = (0..rank).map(|d| starts[d].clamp(0, dims[d] - sizes[d])).collect();
        let operand = Dense::new(&dims, 9);
        let start_literals: Vec<Literal> = starts[..rank].iter().map(|&s| Literal::scalar(s as i32)).collect();
        let b = XlaBuilder::new("dynamic_slice");
        let x = b.parameter(0, &Shape::with_layout(ElementType::F32, &dims, &layout).unwrap(), "x");
        let ops: Vec<XlaOp<'_>> = (0..rank).map(|d| b.parameter(1 + d as i64, &shape!(s32[]), "i")).collect();
        let y = dynamic_slice(x, &ops, &sizes);
        let mut args = vec![operand.literal(&layout)];
        args.extend(start_literals.iter().cloned());
        let arg_refs: Vec<&Literal> = args.iter().collect();
        let want: Vec<f32> = indices(&sizes)
            .into_iter()
            .map(|i| operand.at(&i.iter().zip(&clamped).map(|(a, b)| a + b).collect::<Vec<_>>()))
            .collect();
        prop_assert_eq!(run(&b, y, &arg_refs), want);

        let b = XlaBuilder::new("dynamic_update_slice");
        let x = b.parameter(0, &Shape::with_layout(ElementType::F32, &dims, &layout).unwrap(), "x");
        let ops: Vec<XlaOp<'_>> = (0..rank).map(|d| b.parameter(1 + d as i64, &shape!(s32[]), "i")).collect();
        let update = Dense::new(&sizes, 10);
        let u = b.constant_literal(&update.literal(&(0..rank as i64).collect::<Vec<_>>()));
        let y = dynamic_update_slice(x, u, &ops);
        prop_assert_eq!(b.get_shape(y).unwrap(), Shape::with_layout(ElementType::F32, &dims, &layout).unwrap());
        let mut want = operand.clone();
        for i in indices(&sizes) {
            let target: Vec<i64> = i.iter().zip(&clamped).map(|(a, b)| a + b).collect();
            let p = want.position(&target);
            want.values[p] = update.at(&i);
        }
        prop_assert_eq!(run(&b, y, &arg_refs), want.values);
    }
}
