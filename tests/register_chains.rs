//! Register chains (a fused loop's runs of add, subtract, multiply, divide, maximum, minimum,
//! negate, abs, exp, log, tanh and logistic on `f32`, computed 64 lanes at a time in AVX2
//! registers, 128 in AVX-512's) give what the same ops give one by one: random chains over
//! rows long enough for the chain kernel (63 to 1100 elements, so full blocks of either, a
//! last block that overlaps the one before, and chunks below one block that fall back to
//! node-by-node evaluation; in tiles of up to 5 rows, where rows of whole blocks read row and
//! column broadcasts in place), with operands that are the running value on either side, a
//! second array, a constant, a row vector, a column vector, a broadcast scalar or a short run
//! of such links from `x` or `y` (which the chain computes beside its running value), in both
//! layouts, on values with NaN, ±0, ±∞ and denormals. Fused and unfused must agree to the bit
//! (any NaN matching any NaN), and the unfused result of a chain without functions (whose
//! polynomials `tests/math*` check) must match a plain loop.

use lazy_xla::{
    abs, add, broadcast_in_dim, div, exp, log, logistic, max, min, mul, neg, sub, tanh, CompileOptions,
    ElementType, Literal, Shape, XlaBuilder, XlaOp,
};
use proptest::prelude::*;

/// One link of a generated chain.
#[derive(Clone, Copy, Debug)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
    Neg,
    Abs,
    Exp,
    Log,
    Tanh,
    Logistic,
}

impl Op {
    /// Whether the op is an elementary function (computed by a polynomial).
    fn is_function(self) -> bool {
        matches!(self, Op::Exp | Op::Log | Op::Tanh | Op::Logistic)
    }
}

/// What a binary link's other operand is.
#[derive(Clone, Copy, Debug)]
enum Other {
    /// The second array, `y`.
    Array,
    Constant(f32),
    /// `v`, one value per column, broadcast along the rows.
    Row,
    /// `w`, one value per row, broadcast along the columns.
    Column,
    /// `s`, one value for all.
    Scalar,
    /// One of the case's side runs (by its number, modulo how many there are; `y` if none),
    /// built anew for each link that reads it.
    Side(usize),
}

/// A short run of links (whose other operands are not runs) from `x` or `y`.
#[derive(Clone, Debug)]
struct SideRun {
    from_x: bool,
    links: Vec<Link>,
}

/// A link: the op, its other operand and whether the running value is on the left.
#[derive(Clone, Copy, Debug)]
struct Link {
    op: Op,
    other: Other,
    running_left: bool,
}

/// IEEE maximum and minimum as XLA computes them: NaN if either is, −0 below +0.
fn maximum(a: f32, b: f32) -> f32 {
    match (a.is_nan() || b.is_nan(), a == b) {
        (true, _) => f32::NAN,
        (false, true) => f32::from_bits(a.to_bits() & b.to_bits()),
        (false, false) => a.max(b),
    }
}

fn minimum(a: f32, b: f32) -> f32 {
    match (a.is_nan() || b.is_nan(), a == b) {
        (true, _) => f32::NAN,
        (false, true) => f32::from_bits(a.to_bits() | b.to_bits()),
        (false, false) => a.min(b),
    }
}

/// One link on one element, as a plain loop computes it.
fn apply(link: Link, running: f32, other: f32) -> f32 {
    let (a, b) = if link.running_left { (running, other) } else { (other, running) };
    match link.op {
        Op::Add => a + b,
        Op::Sub => a - b,
        Op::Mul => a * b,
        Op::Div => a / b,
        Op::Max => maximum(a, b),
        Op::Min => minimum(a, b),
        Op::Neg => -running,
        Op::Abs => running.abs(),
        Op::Exp | Op::Log | Op::Tanh | Op::Logistic => {
            unreachable!("functions are not checked by a plain loop")
        }
    }
}

/// Values with every kind of float in them.
fn value() -> impl Strategy<Value = f32> {
    prop_oneof![
        6 => -4.0f32..4.0,
        1 => Just(0.0f32),
        1 => Just(-0.0f32),
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
        1 => Just(f32::NEG_INFINITY),
        1 => Just(1e-40f32),
        1 => Just(-3e38f32),
    ]
}

/// A link whose other operand may be a side run (`sides`: whether it may).
fn link(sides: bool) -> impl Strategy<Value = Link> {
    let op = prop_oneof![
        Just(Op::Add),
        Just(Op::Sub),
        Just(Op::Mul),
        Just(Op::Div),
        Just(Op::Max),
        Just(Op::Min),
        Just(Op::Neg),
        Just(Op::Abs),
        Just(Op::Exp),
        Just(Op::Log),
        Just(Op::Tanh),
        Just(Op::Logistic)
    ];
    let other = prop_oneof![
        Just(Other::Array),
        value().prop_map(Other::Constant),
        Just(Other::Row),
        Just(Other::Column),
        Just(Other::Scalar),
        (0..4usize).prop_map(move |k| if sides { Other::Side(k) } else { Other::Array })
    ];
    (op, other, any::<bool>()).prop_map(|(op, other, running_left)| Link { op, other, running_left })
}

/// A generated case: the array's shape and layout, where the chain starts, its links, and the
/// arguments' values.
#[derive(Debug)]
struct Case {
    rows: i64,
    cols: i64,
    column_major: bool,
    start_scalar: bool,
    links: Vec<Link>,
    sides: Vec<SideRun>,
    x: Vec<f32>,
    y: Vec<f32>,
    v: Vec<f32>,
    w: Vec<f32>,
    s: f32,
}

impl Case {
    /// The side run `other` names, if it names one and the case has any.
    fn side(&self, other: Other) -> Option<&SideRun> {
        match other {
            Other::Side(k) if !self.sides.is_empty() => Some(&self.sides[k % self.sides.len()]),
            _ => None,
        }
    }

    /// Whether an elementary function is among the links, the side runs' included.
    fn has_function(&self) -> bool {
        let side_links =
            self.links.iter().filter_map(|link| self.side(link.other)).flat_map(|side| &side.links);
        self.links.iter().chain(side_links).any(|link| link.op.is_function())
    }
}

fn case() -> impl Strategy<Value = Case> {
    // Rows of whole blocks (64, 128, 192, 256 under AVX2; 128 and 256 under AVX-512) in tiles
    // of several rows read row and column broadcasts in place; the others copy them into the
    // chunk.
    let lengths = [63i64, 64, 65, 100, 127, 128, 129, 130, 192, 256, 1100];
    let dims = (1i64..6, prop::sample::select(lengths.to_vec()));
    let side = (any::<bool>(), prop::collection::vec(link(false), 1..4))
        .prop_map(|(from_x, links)| SideRun { from_x, links });
    let links = (prop::collection::vec(link(true), 2..12), prop::collection::vec(side, 0..3));
    (dims, any::<bool>(), prop::bool::weighted(0.1), links).prop_flat_map(
        |((rows, cols), column_major, start_scalar, (links, sides))| {
            let n = (rows * cols) as usize;
            let values = |len: usize| prop::collection::vec(value(), len);
            (values(n), values(n), values(cols as usize), values(rows as usize), value()).prop_map(
                move |(x, y, v, w, s)| Case {
                    rows,
                    cols,
                    column_major,
                    start_scalar,
                    links: links.clone(),
                    sides: sides.clone(),
                    x,
                    y,
                    v,
                    w,
                    s,
                },
            )
        },
    )
}

/// The chain as a graph of `x`, `y`, `v`, `w` and `s`.
fn chain_graph(case: &Case, array: &Shape) -> lazy_xla::XlaComputation {
    let b = XlaBuilder::new("chain");
    let dims = [case.rows, case.cols];
    let x = b.parameter(0, array, "x");
    let y = b.parameter(1, array, "y");
    let v = b.parameter(2, &Shape::new(ElementType::F32, &[case.cols]), "v");
    let w = b.parameter(3, &Shape::new(ElementType::F32, &[case.rows]), "w");
    let s = b.parameter(4, &Shape::new(ElementType::F32, &[]), "s");
    let leaf = |other: Other| -> XlaOp<'_> {
        match other {
            Other::Array | Other::Side(_) => y,
            Other::Constant(c) => broadcast_in_dim(b.constant_r0(c), &dims, &[]),
            Other::Row => broadcast_in_dim(v, &dims, &[1]),
            Other::Column => broadcast_in_dim(w, &dims, &[0]),
            Other::Scalar => broadcast_in_dim(s, &dims, &[]),
        }
    };
    let start = if case.start_scalar { broadcast_in_dim(s, &dims, &[]) } else { x };
    let result = case.links.iter().fold(start, |running, link| {
        let other = match (link.other, case.side(link.other)) {
            (_, Some(side)) => side.links.iter().fold(if side.from_x { x } else { y }, |running, link| {
                link_graph(*link, running, leaf(link.other))
            }),
            (other, None) => leaf(other),
        };
        link_graph(*link, running, other)
    });
    b.build(result).expect("the chain builds")
}

/// `link` on `running`, its other operand `other`.
fn link_graph<'b>(link: Link, running: XlaOp<'b>, other: XlaOp<'b>) -> XlaOp<'b> {
    let (lhs, rhs) = if link.running_left { (running, other) } else { (other, running) };
    match link.op {
        Op::Add => add(lhs, rhs, &[]),
        Op::Sub => sub(lhs, rhs, &[]),
        Op::Mul => mul(lhs, rhs, &[]),
        Op::Div => div(lhs, rhs, &[]),
        Op::Max => max(lhs, rhs, &[]),
        Op::Min => min(lhs, rhs, &[]),
        Op::Neg => neg(running),
        Op::Abs => abs(running),
        Op::Exp => exp(running),
        Op::Log => log(running),
        Op::Tanh => tanh(running),
        Op::Logistic => logistic(running),
    }
}

/// The chain by a plain loop, row-major.
fn reference(case: &Case) -> Vec<f32> {
    let cols = case.cols as usize;
    (0..case.x.len())
        .map(|i| {
            let (r, c) = (i / cols, i % cols);
            let leaf = |other: Other| match other {
                Other::Array | Other::Side(_) => case.y[i],
                Other::Constant(value) => value,
                Other::Row => case.v[c],
                Other::Column => case.w[r],
                Other::Scalar => case.s,
            };
            let start = if case.start_scalar { case.s } else { case.x[i] };
            case.links.iter().fold(start, |running, &link| {
                let other = match case.side(link.other) {
                    Some(side) => {
                        let start = if side.from_x { case.x[i] } else { case.y[i] };
                        side.links.iter().fold(start, |running, &link| apply(link, running, leaf(link.other)))
                    }
                    None => leaf(link.other),
                };
                apply(link, running, other)
            })
        })
        .collect()
}

/// `values` (row-major) as a literal of `shape`.
fn literal(shape: &Shape, values: &[f32]) -> Literal {
    let row_major = Literal::from_vec(&Shape::new(ElementType::F32, shape.dimensions()), values.to_vec());
    row_major.and_then(|literal| literal.relayout(shape.layout())).expect("values of the shape")
}

/// The bits of a result, row-major.
fn bits(result: &Literal) -> Vec<u32> {
    result.to_vec::<f32>().expect("f32 values").iter().map(|v| v.to_bits()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn chains_in_registers_equal_their_ops_one_by_one(case in case()) {
        let layout: &[i64] = if case.column_major { &[0, 1] } else { &[1, 0] };
        let array = Shape::with_layout(ElementType::F32, &[case.rows, case.cols], layout).expect("a layout");
        let computation = chain_graph(&case, &array);
        let arguments = [
            literal(&array, &case.x),
            literal(&array, &case.y),
            Literal::from_vec(&Shape::new(ElementType::F32, &[case.cols]), case.v.clone()).expect("v"),
            Literal::from_vec(&Shape::new(ElementType::F32, &[case.rows]), case.w.clone()).expect("w"),
            Literal::scalar(case.s),
        ];
        let arguments: Vec<&Literal> = arguments.iter().collect();
        let run = |options: CompileOptions| {
            let result = computation.compile(&options).expect("compiles").execute(&arguments).expect("runs");
            bits(&result)
        };
        let fused = run(CompileOptions::default());
        let unfused = run(CompileOptions { fusion: false, ..Default::default() });
        // NaN payloads are not compared: LLVM may swap the operands of an add or a multiply,
        // and with two NaN operands x86 keeps the first one's payload.
        let same = |f: u32, u: u32| f == u || (f32::from_bits(f).is_nan() && f32::from_bits(u).is_nan());
        let differs = fused.iter().zip(&unfused).position(|(&f, &u)| !same(f, u));
        prop_assert!(differs.is_none(), "element {:?}: fused {:?} against unfused {:?}", differs,
            differs.map(|k| f32::from_bits(fused[k])), differs.map(|k| f32::from_bits(unfused[k])));
        if case.has_function() {
            return Ok(());
        }
        let expected = reference(&case);
        for (k, (&got, &want)) in unfused.iter().zip(&expected).enumerate() {
            let got = f32::from_bits(got);
            prop_assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "element {}: {} against a plain loop's {}", k, got, want);
        }
    }
}
