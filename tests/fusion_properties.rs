//! Fused == unfused on random graphs: chains of 2–12 element-wise, comparison, conversion and
//! movement ops (broadcasts with random dimensions, transposes, reverses, slices, reshapes) over
//! parameters of random small shapes (rank 0–4, sizes 0–4), random layouts and padding, in
//! f32, f64, s32 and u8, each run with fusion (the default) and without (`fusion: false`);
//! integers must agree exactly, floats within 1e-5 relative (NaN matching NaN). One family,
//! `(x + v{k}) * c`, is also checked against plain loops written here.
//!
//! Graphs come from a small generator that reads its choices from a list of random numbers
//! (`genes`; proptest shrinks them towards 0, the first choice of every menu, so a failing
//! graph shrinks towards a simpler one) and only emits ops the builder accepts.

use approx::relative_eq;
use lazy_xla::{
    abs, add, and, broadcast, broadcast_in_dim, convert_element_type, eq, exp, floor, ge, gt, le, lt, max,
    min, mul, ne, neg, not, or, reshape, rev, select, sign, slice, sub, tanh, transpose, xor, CompileOptions,
    ElementType, Literal, NativeType, Shape, XlaBuilder, XlaComputation, XlaOp,
};
use proptest::prelude::*;

/// The element types graphs are made of.
const TYPES: [ElementType; 4] = [ElementType::F32, ElementType::F64, ElementType::S32, ElementType::U8];

fn config() -> ProptestConfig {
    ProptestConfig { cases: 48, max_shrink_iters: 256, ..ProptestConfig::default() }
}

/// A source of choices: the next gene modulo the number of options (0 once they run out).
struct Genes {
    genes: Vec<u32>,
    next: usize,
}

impl Genes {
    fn new(genes: Vec<u32>) -> Genes {
        Genes { genes, next: 0 }
    }

    /// A choice among `n` options (`n ≥ 1`).
    fn pick(&mut self, n: usize) -> usize {
        let gene = self.genes.get(self.next).copied().unwrap_or(0);
        self.next += 1;
        gene as usize % n.max(1)
    }

    /// A size from 0 to 4, rarely 0 (an empty array makes the rest of the graph empty).
    fn size(&mut self) -> i64 {
        [1, 2, 3, 4, 2, 3, 4, 1, 3, 2, 4, 1, 3, 4, 2, 0][self.pick(16)]
    }

    /// One of `options`.
    fn one_of<T: Copy>(&mut self, options: &[T]) -> T {
        options[self.pick(options.len())]
    }

    /// A random permutation of `0..n` (the identity for the first choice).
    fn permutation(&mut self, n: usize) -> Vec<i64> {
        let mut items: Vec<i64> = (0..n as i64).collect();
        for i in 0..n {
            let j = i + self.pick(n - i);
            items.swap(i, j);
        }
        items
    }

    /// A sorted random subset of `0..n` with `k` elements.
    fn subset(&mut self, n: usize, k: usize) -> Vec<usize> {
        let mut chosen: Vec<usize> = self.permutation(n).into_iter().take(k).map(|d| d as usize).collect();
        chosen.sort_unstable();
        chosen
    }
}

/// An element-wise op of one operand.
type Unary = for<'a> fn(XlaOp<'a>) -> XlaOp<'a>;

/// An element-wise op of two operands, with XLA's broadcast dimensions.
type Binary = for<'a, 'c> fn(XlaOp<'a>, XlaOp<'a>, &'c [i64]) -> XlaOp<'a>;

/// Builds a random graph into a builder, creating parameters (and their argument values) as it
/// needs them.
struct Generator<'b> {
    b: &'b XlaBuilder,
    genes: Genes,
    arguments: Vec<Literal>,
    /// Every value made so far (for ops that read an earlier value again).
    pool: Vec<XlaOp<'b>>,
}

impl<'b> Generator<'b> {
    fn shape(&self, op: XlaOp<'b>) -> Option<Shape> {
        self.b.get_shape(op).ok()
    }

    /// A new parameter of `element_type` and `dims`: default, permuted or padded layout, with
    /// small values (floats with fractions, now and then a NaN or an infinity). The argument
    /// usually comes in the parameter's layout, one time in four in another random one.
    fn parameter(&mut self, element_type: ElementType, dims: &[i64]) -> Option<XlaOp<'b>> {
        let shape = self.random_layout(element_type, dims);
        let argument_shape = match self.genes.pick(4) {
            0 => self.random_layout(element_type, dims),
            _ => shape.clone(),
        };
        let count = shape.element_count() as usize;
        let genes = &mut self.genes;
        let literal = match element_type {
            ElementType::F32 => from_fn(&argument_shape, count, || float(genes) as f32),
            ElementType::F64 => from_fn(&argument_shape, count, || float(genes)),
            ElementType::S32 => from_fn(&argument_shape, count, || genes.pick(41) as i32 - 20),
            ElementType::U8 => from_fn(&argument_shape, count, || genes.pick(256) as u8),
            other => unreachable!("no parameters of {other}"),
        };
        let number = self.arguments.len() as i64;
        self.arguments.push(literal);
        let op = self.b.parameter(number, &shape, &format!("p{number}"));
        self.shape(op).map(|_| op)
    }

    /// A shape of `element_type` and `dims` with the default layout, a random permutation, or
    /// a random permutation padded, with a random padding value (written in XLA's notation and
    /// parsed).
    fn random_layout(&mut self, element_type: ElementType, dims: &[i64]) -> Shape {
        let rank = dims.len();
        let join = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        let text = match self.genes.pick(4) {
            0 => format!("{element_type}[{}]", join(dims)),
            1 | 2 => format!("{element_type}[{}]{{{}}}", join(dims), join(&self.genes.permutation(rank))),
            _ => {
                let minor_to_major = self.genes.permutation(rank);
                let padded: Vec<i64> = dims.iter().map(|&d| d + self.genes.pick(3) as i64).collect();
                let value = self.genes.one_of(&["zero", "one", "lowest", "highest"]);
                format!(
                    "{element_type}[{}]{{{}:pad({})={value}}}",
                    join(dims),
                    join(&minor_to_major),
                    join(&padded)
                )
            }
        };
        text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    /// A scalar constant of `element_type`.
    fn constant(&mut self, element_type: ElementType) -> XlaOp<'b> {
        let value = self.genes.pick(9) as i32 - 4;
        match element_type {
            ElementType::F32 => self.b.constant_r0(value as f32 * 0.75),
            ElementType::F64 => self.b.constant_r0(f64::from(value) * 0.75),
            ElementType::S32 => self.b.constant_r0(value),
            ElementType::U8 => self.b.constant_r0(value.unsigned_abs() as u8),
            other => unreachable!("no constants of {other}"),
        }
    }

    /// A second operand for a binary op with `x` (of `shape`), and the broadcast dimensions
    /// to pass: a parameter of the same dimensions, a scalar constant, a parameter of a subset
    /// of the dimensions (broadcast in), one with some dimensions set to 1 (degenerate
    /// broadcasting), or an earlier value of the same type and dimensions.
    fn partner(&mut self, x: XlaOp<'b>, shape: &Shape) -> Option<(XlaOp<'b>, Vec<i64>)> {
        let element_type = shape.element_type();
        let dims = shape.dimensions();
        match self.genes.pick(5) {
            0 => Some((self.parameter(element_type, dims)?, vec![])),
            1 => Some((self.constant(element_type), vec![])),
            2 => {
                let k = self.genes.pick(dims.len() + 1);
                let kept = self.genes.subset(dims.len(), k);
                let small: Vec<i64> = kept.iter().map(|&d| dims[d]).collect();
                let dimensions = kept.iter().map(|&d| d as i64).collect();
                Some((self.parameter(element_type, &small)?, dimensions))
            }
            3 => {
                let degenerate: Vec<i64> =
                    dims.iter().map(|&d| if self.genes.pick(2) == 0 { 1 } else { d }).collect();
                Some((self.parameter(element_type, &degenerate)?, vec![]))
            }
            _ => {
                let same: Vec<XlaOp<'b>> = self
                    .pool
                    .iter()
                    .copied()
                    .filter(|&p| self.shape(p).is_some_and(|s| s.same_dimensions_and_type(shape)))
                    .collect();
                let other = same.get(self.genes.pick(same.len())).copied().unwrap_or(x);
                Some((other, vec![]))
            }
        }
    }

    /// One step of the chain from `x`; `None` if the builder rejected an op.
    fn step(&mut self, x: XlaOp<'b>) -> Option<XlaOp<'b>> {
        let shape = self.shape(x)?;
        let t = shape.element_type();
        let dims = shape.dimensions().to_vec();
        let rank = dims.len();
        let y = match self.genes.pick(10) {
            0 => {
                let unary: &[Unary] = match t {
                    ElementType::F32 | ElementType::F64 => &[neg, abs, exp, tanh, floor, sign],
                    ElementType::S32 => &[neg, abs, not, sign],
                    _ => &[not, neg],
                };
                self.genes.one_of(unary)(x)
            }
            1 | 2 => {
                let (other, dimensions) = self.partner(x, &shape)?;
                let binary: &[Binary] = if t.is_float() {
                    &[add, sub, mul, max, min]
                } else {
                    &[add, sub, mul, max, min, and, or, xor]
                };
                let op = self.genes.one_of(binary);
                if self.genes.pick(2) == 0 {
                    op(x, other, &dimensions)
                } else {
                    op(other, x, &dimensions)
                }
            }
            3 => {
                let (other, dimensions) = self.partner(x, &shape)?;
                let compare: &[Binary] = &[lt, gt, le, ge, eq, ne];
                let predicate = self.genes.one_of(compare)(x, other, &dimensions);
                let alternative = match self.genes.pick(2) {
                    0 => self.constant(t),
                    _ => self.parameter(t, &dims)?,
                };
                select(predicate, x, alternative)
            }
            4 => convert_element_type(x, self.genes.one_of(&TYPES)),
            5 => {
                // broadcast_in_dim into a rank of up to 4; a size-1 operand dimension may grow.
                let out_rank = rank + self.genes.pick(5 - rank);
                let positions = self.genes.subset(out_rank, rank);
                let mut out_dims: Vec<i64> = (0..out_rank).map(|_| self.genes.size()).collect();
                for (&p, &d) in positions.iter().zip(&dims) {
                    if d != 1 || self.genes.pick(2) == 0 {
                        out_dims[p] = d;
                    }
                }
                if self.genes.pick(4) == 0 {
                    broadcast(x, &out_dims[..out_rank - rank])
                } else {
                    let positions: Vec<i64> = positions.iter().map(|&p| p as i64).collect();
                    broadcast_in_dim(x, &out_dims, &positions)
                }
            }
            6 => transpose(x, &self.genes.permutation(rank)),
            7 => {
                let k = self.genes.pick(rank + 1);
                let dimensions: Vec<i64> = self.genes.subset(rank, k).iter().map(|&d| d as i64).collect();
                rev(x, &dimensions)
            }
            8 => {
                let mut starts = Vec::new();
                let mut limits = Vec::new();
                let mut strides = Vec::new();
                // Rarely empty: start < limit unless the dimension is empty or by choice.
                let empty = self.genes.pick(16) == 0;
                for &d in &dims {
                    let start = self.genes.pick(d.max(1) as usize) as i64;
                    let limit =
                        if empty { start } else { d - self.genes.pick((d - start).max(1) as usize) as i64 };
                    starts.push(start.min(d));
                    limits.push(limit.clamp(start.min(d), d));
                    strides.push(1 + self.genes.pick(3) as i64);
                }
                slice(x, &starts, &limits, &strides)
            }
            _ => {
                // Reshapes: drop the size-1 dimensions, add one, or (not fusible) flatten.
                let count = shape.element_count();
                match self.genes.pick(3) {
                    0 => reshape(x, &dims.iter().copied().filter(|&d| d != 1).collect::<Vec<_>>()),
                    1 if rank < 4 => {
                        let mut grown = dims.clone();
                        grown.insert(self.genes.pick(rank + 1), 1);
                        reshape(x, &grown)
                    }
                    _ => reshape(x, &[count]),
                }
            }
        };
        self.shape(y)?;
        self.pool.push(y);
        Some(y)
    }
}

/// A literal of `shape` whose logical elements come from `next`.
fn from_fn<T: NativeType>(shape: &Shape, count: usize, mut next: impl FnMut() -> T) -> Literal {
    Literal::from_vec(shape, (0..count).map(|_| next()).collect()).expect("literal")
}

/// A small float: halves from -4 to 4, now and then a NaN or an infinity.
fn float(genes: &mut Genes) -> f64 {
    match genes.pick(40) {
        0 => f64::NAN,
        1 => f64::INFINITY,
        k => (k as f64 - 21.0) * 0.25,
    }
}

/// A random graph of `steps` steps from a parameter of `element_type` and `dims`, and its
/// arguments; `None` when the builder rejects an op.
fn random_graph(
    element_type: ElementType,
    dims: &[i64],
    steps: usize,
    genes: Vec<u32>,
) -> Option<(XlaComputation, Vec<Literal>)> {
    let b = XlaBuilder::new("random");
    let mut generator =
        Generator { b: &b, genes: Genes::new(genes), arguments: Vec::new(), pool: Vec::new() };
    let mut x = generator.parameter(element_type, dims)?;
    generator.pool.push(x);
    for _ in 0..steps {
        x = generator.step(x)?;
    }
    let computation = b.build(x).ok()?;
    Some((computation, generator.arguments))
}

/// Whether two results are the same: shape (layout included), then values exactly for
/// integers and `pred`, within 1e-5 relative for floats (NaN matching NaN).
fn same_results(fused: &Literal, unfused: &Literal) -> bool {
    if fused.shape() != unfused.shape() {
        return false;
    }
    match fused.element_type() {
        ElementType::F32 | ElementType::F64 => {
            relative_eq!(fused, unfused, epsilon = 0.0, max_relative = 1e-5)
        }
        ElementType::S32 => fused.to_vec::<i32>().ok() == unfused.to_vec::<i32>().ok(),
        ElementType::U8 => fused.to_vec::<u8>().ok() == unfused.to_vec::<u8>().ok(),
        ElementType::Pred => fused.to_vec::<bool>().ok() == unfused.to_vec::<bool>().ok(),
        other => unreachable!("no results of {other}"),
    }
}

/// Builds the random graph, runs it fused and unfused, and compares.
fn check_random_graph(
    element_type: ElementType,
    dims: &[i64],
    steps: usize,
    genes: Vec<u32>,
) -> Result<(), TestCaseError> {
    let Some((computation, arguments)) = random_graph(element_type, dims, steps, genes) else {
        return Err(TestCaseError::reject("the builder rejected an op"));
    };
    let arguments: Vec<&Literal> = arguments.iter().collect();
    let fused_exe = computation.compile(&CompileOptions::default()).expect("compile fused");
    let fused = fused_exe.execute(&arguments).expect("execute fused");
    let unfused = computation
        .compile(&CompileOptions::unfused())
        .expect("compile unfused")
        .execute(&arguments)
        .expect("execute");
    prop_assert!(
        same_results(&fused, &unfused),
        "fused {fused:?}\nunfused {unfused:?}\ngraph:\n{}\noptimized:\n{}\narguments: {arguments:?}",
        computation.to_hlo_text(),
        fused_exe.to_hlo_text()
    );
    Ok(())
}

/// Dimensions of rank 0–4, sizes 0–4 (0 rarely).
fn dims_strategy() -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(size_strategy(), 0..=4)
}

/// A size from 0 to 4, 0 one time in ten.
fn size_strategy() -> impl Strategy<Value = i64> {
    prop_oneof![1 => Just(0i64), 9 => 1i64..=4]
}

fn genes_strategy() -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(any::<u32>(), 64..=400)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_f32_graphs_fused_equal_unfused(dims in dims_strategy(), steps in 2usize..=12, genes in genes_strategy()) {
        check_random_graph(ElementType::F32, &dims, steps, genes)?;
    }

    #[test]
    fn random_f64_graphs_fused_equal_unfused(dims in dims_strategy(), steps in 2usize..=12, genes in genes_strategy()) {
        check_random_graph(ElementType::F64, &dims, steps, genes)?;
    }

    #[test]
    fn random_s32_graphs_fused_equal_unfused(dims in dims_strategy(), steps in 2usize..=12, genes in genes_strategy()) {
        check_random_graph(ElementType::S32, &dims, steps, genes)?;
    }

    #[test]
    fn random_u8_graphs_fused_equal_unfused(dims in dims_strategy(), steps in 2usize..=12, genes in genes_strategy()) {
        check_random_graph(ElementType::U8, &dims, steps, genes)?;
    }
}

/// All multi-indices of `dims`, row-major.
fn indices(dims: &[i64]) -> Vec<Vec<i64>> {
    let mut all = vec![vec![]];
    for &d in dims {
        all = all.into_iter().flat_map(|p| (0..d).map(move |i| [p.clone(), vec![i]].concat())).collect();
    }
    all
}

/// `(x + v{k}) * c` fused and unfused, against plain loops: out[i] = (x[i] + v[i_k]) * c.
fn check_bias_scale<T>(
    dims: &[i64],
    k: usize,
    layout_genes: Vec<u32>,
    x_value: impl Fn(usize) -> T,
    c: T,
) -> Result<(), TestCaseError>
where
    T: NativeType + std::ops::Add<Output = T> + std::ops::Mul<Output = T> + PartialEq + std::fmt::Debug,
{
    let b = XlaBuilder::new("bias_scale");
    let mut generator =
        Generator { b: &b, genes: Genes::new(layout_genes), arguments: Vec::new(), pool: Vec::new() };
    let element_type = T::ELEMENT_TYPE;
    // The generator makes the parameters' shapes (layouts, padding); the values are ours.
    let x = generator.parameter(element_type, dims).expect("x");
    let v = generator.parameter(element_type, &[dims[k]]).expect("v");
    let x_shape = b.get_shape(x).expect("x shape");
    let v_shape = b.get_shape(v).expect("v shape");
    let count = x_shape.element_count() as usize;
    let x_values: Vec<T> = (0..count).map(&x_value).collect();
    let v_values: Vec<T> = (0..dims[k] as usize).map(|i| x_value(i * 5 + 3)).collect();
    let x_literal = Literal::from_vec(&x_shape, x_values.clone()).expect("x literal");
    let v_literal = Literal::from_vec(&v_shape, v_values.clone()).expect("v literal");
    let computation = b.build(mul(add(x, v, &[k as i64]), b.constant_r0(c), &[])).expect("build");
    let expected: Vec<T> = indices(dims)
        .iter()
        .zip(&x_values)
        .map(|(index, &xi)| (xi + v_values[index[k] as usize]) * c)
        .collect();
    for options in [CompileOptions::default(), CompileOptions::unfused()] {
        let out =
            computation.compile(&options).expect("compile").execute(&[&x_literal, &v_literal]).expect("run");
        prop_assert_eq!(out.shape().dimensions(), dims);
        prop_assert_eq!(out.to_vec::<T>().expect("values"), expected.clone(), "{:?}", options);
    }
    Ok(())
}

/// Rank 1–4 dimensions (sizes 0–4) and a dimension of them.
fn dims_and_dimension() -> impl Strategy<Value = (Vec<i64>, usize)> {
    prop::collection::vec(size_strategy(), 1..=4).prop_flat_map(|dims| {
        let rank = dims.len();
        (Just(dims), 0..rank)
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn bias_and_scale_f32_match_plain_loops(
        (dims, k) in dims_and_dimension(),
        layout_genes in prop::collection::vec(any::<u32>(), 16),
        c in -4i32..=4,
    ) {
        check_bias_scale(&dims, k, layout_genes, |i| (i % 13) as f32 * 0.5 - 3.0, c as f32 * 0.25)?;
    }

    #[test]
    fn bias_and_scale_s32_match_plain_loops(
        (dims, k) in dims_and_dimension(),
        layout_genes in prop::collection::vec(any::<u32>(), 16),
        c in -4i32..=4,
    ) {
        check_bias_scale(&dims, k, layout_genes, |i| (i % 11) as i32 - 5, c)?;
    }
}

/// Big enough to be split across threads: W1 `max((X + b{1}) * s{0}, 0) + 1` on X of
/// [256, 520] with X column-major and padded, and W3 `(A + C) * 2` with A column-major over
/// [16, 16, 16, 16]; fused, unfused (one thread and the pool) and plain loops agree exactly.
#[test]
fn big_mixed_layout_graphs_fused_equal_unfused_and_plain_loops() {
    let options = [
        CompileOptions::default(),
        CompileOptions { num_threads: Some(2), ..Default::default() },
        CompileOptions { fusion: false, ..Default::default() },
        CompileOptions { fusion: false, num_threads: Some(1), ..Default::default() },
    ];
    let value = |i: usize| ((i * 7) % 23) as f32 * 0.5 - 5.0;

    let (rows, columns) = (256usize, 520usize);
    let x_shape: Shape =
        format!("f32[{rows},{columns}]{{0,1:pad({},{columns})=zero}}", rows + 3).parse().unwrap();
    let b = XlaBuilder::new("w1");
    let x = b.parameter(0, &x_shape, "x");
    let bias = b.parameter(1, &Shape::new(ElementType::F32, &[columns as i64]), "b");
    let scale = b.parameter(2, &Shape::new(ElementType::F32, &[rows as i64]), "s");
    let relu = max(mul(add(x, bias, &[1]), scale, &[0]), b.constant_r0(0.0f32), &[]);
    let computation = b.build(add(relu, b.constant_r0(1.0f32), &[])).unwrap();
    let x_value = Literal::from_vec(&x_shape, (0..rows * columns).map(value).collect()).unwrap();
    let bias_value = Literal::vec1(&(0..columns).map(|i| value(i + 1)).collect::<Vec<_>>());
    let scale_value = Literal::vec1(&(0..rows).map(|i| value(i + 2)).collect::<Vec<_>>());
    let expected: Vec<f32> = (0..rows * columns)
        .map(|i| ((value(i) + value(i % columns + 1)) * value(i / columns + 2)).max(0.0) + 1.0)
        .collect();
    for options in &options {
        let out =
            computation.compile(options).unwrap().execute(&[&x_value, &bias_value, &scale_value]).unwrap();
        assert_eq!(out.shape().dimensions(), [rows as i64, columns as i64]);
        assert!(out.to_vec::<f32>().unwrap() == expected, "{options:?}");
    }

    let a_shape: Shape = "f32[16,16,16,16]{0,1,2,3}".parse().unwrap();
    let c_shape: Shape = "f32[16,16,16,16]".parse().unwrap();
    let b = XlaBuilder::new("w3");
    let sum = add(b.parameter(0, &a_shape, "a"), b.parameter(1, &c_shape, "c"), &[]);
    let computation = b.build(mul(sum, b.constant_r0(2.0f32), &[])).unwrap();
    let a_value = Literal::from_vec(&a_shape, (0..65536).map(value).collect()).unwrap();
    let c_value = Literal::from_vec(&c_shape, (0..65536).map(|i| value(i + 5)).collect()).unwrap();
    let expected: Vec<f32> = (0..65536).map(|i| (value(i) + value(i + 5)) * 2.0).collect();
    for options in &options {
        let out = computation.compile(options).unwrap().execute(&[&a_value, &c_value]).unwrap();
        assert!(out.to_vec::<f32>().unwrap() == expected, "{options:?}");
    }
}
