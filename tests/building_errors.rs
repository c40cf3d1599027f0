//! The builder's error model: the first error wins and sticks, poisoned handles add nothing,
//! ops from another builder are errors (not panics), parameter numbering, lifetimes and
//! thread-safety of what a build returns, the caller's location in every error; and a
//! property test that random (mostly invalid) op sequences never panic.

use lazy_xla::{
    add, broadcast, broadcast_in_dim, clamp, concat_in_dim, convert_element_type, dot, dot_general, exp,
    iota, neg, pad, reduce, reshape, rev, select, shape, slice, transpose, DotDimensionNumbers, ElementType,
    Error, PaddingConfig, PaddingConfigDimension, Shape, XlaBuilder, XlaComputation, XlaOp,
};
use proptest::prelude::*;

#[path = "common/computations.rs"]
mod computations;

const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    const fn error<T: std::error::Error + Send + Sync + 'static>() {}
    send_sync::<XlaComputation>();
    error::<Error>();
};

fn sum_reducer() -> XlaComputation {
    computations::sum(ElementType::F32)
}

#[test]
fn the_first_error_wins_and_sticks() {
    let b = XlaBuilder::new("f");
    let x = b.parameter(0, &shape!(f32[2, 3]), "x");
    assert!(b.first_error().is_none());
    let bad = reshape(x, &[4]);
    let first = b.first_error().expect("an error");
    assert!(
        first
            .to_string()
            .starts_with("Reshape operation has mismatched element counts: from=6 (f32[2,3]) to=4 (f32[4])."),
        "{first}"
    );
    // A second, different mistake is not recorded ...
    let worse = transpose(x, &[0, 0]);
    // ... and a healthy op made now is not recorded either.
    let healthy = neg(x);
    for op in [x, bad, worse, healthy] {
        assert_eq!(b.get_shape(op).unwrap_err(), first);
    }
    assert_eq!(b.build(x).unwrap_err(), first);
    assert_eq!(b.build(healthy).unwrap_err(), first);
    assert_eq!(b.first_error(), Some(first));
    assert!(x.is_valid());
    assert!(!bad.is_valid());
    assert!(!worse.is_valid());
    assert!(!healthy.is_valid());
}

#[test]
fn a_poisoned_handle_adds_no_second_error() {
    let b = XlaBuilder::new("f");
    let x = b.parameter(0, &shape!(f32[2]), "x");
    let y = b.parameter(1, &shape!(s32[2]), "y");
    let bad = add(x, y, &[]);
    let first = b.first_error().unwrap();
    assert!(first.to_string().starts_with("Binary op add with different element types: f32[2] and s32[2]."));
    let later = [
        neg(bad),
        add(bad, x, &[]),
        add(x, bad, &[7]),
        reshape(bad, &[5, 5]),
        concat_in_dim(&b, &[bad, x, y], 3),
        select(bad, bad, bad),
        reduce(bad, bad, &sum_reducer(), &[9]),
        dot(bad, bad),
        -bad,
        bad * bad,
    ];
    for op in later {
        assert!(!op.is_valid());
        assert_eq!(b.get_shape(op).unwrap_err(), first);
    }
    assert_eq!(b.first_error(), Some(first.clone()));
    assert_eq!(b.build(bad).unwrap_err(), first);
}

#[test]
fn an_op_from_another_builder_is_an_error_not_a_panic() {
    let a = XlaBuilder::new("a");
    let b = XlaBuilder::new("b");
    let x = a.parameter(0, &shape!(f32[2]), "x");
    let y = b.parameter(0, &shape!(f32[2]), "y");

    // Asking a builder about another's op.
    let message = b.get_shape(x).unwrap_err().to_string();
    assert!(message.starts_with("XlaOp with handle "), "{message}");
    assert!(message.contains("is built by builder 'a', but is trying to use it in builder 'b'"), "{message}");
    assert!(b
        .build(x)
        .unwrap_err()
        .to_string()
        .contains("is built by builder 'a', but is trying to use it in builder 'b'"));
    assert!(b.first_error().is_none(), "a question records nothing");

    // Using it in an op of b: b fails, a does not.
    let sum = add(y, x, &[]);
    let message = b.get_shape(sum).unwrap_err().to_string();
    assert!(message.starts_with("XlaOp with handle "), "{message}");
    assert!(message.contains("is built by builder 'a', but is trying to use it in builder 'b'"), "{message}");
    assert!(a.first_error().is_none());
    assert_eq!(a.get_shape(x).unwrap(), shape!(f32[2]));

    // The other way round: the lhs's builder records the op.
    let a2 = XlaBuilder::new("a");
    let b2 = XlaBuilder::new("b");
    let x2 = a2.parameter(0, &shape!(f32[2]), "x");
    let y2 = b2.parameter(0, &shape!(f32[2]), "y");
    let sum = x2 + y2;
    let message = a2.get_shape(sum).unwrap_err().to_string();
    assert!(message.contains("is built by builder 'b', but is trying to use it in builder 'a'"), "{message}");
    let joined = concat_in_dim(&a2, &[x2, y2], 0);
    assert!(!joined.is_valid());
}

#[test]
fn duplicate_parameter_number() {
    let b = XlaBuilder::new("f");
    let _x = b.parameter(0, &shape!(f32[2]), "x");
    let line = line!() + 1;
    let y = b.parameter(0, &shape!(f32[3]), "y");
    let message = b.get_shape(y).unwrap_err().to_string();
    assert!(message.starts_with("parameter 0 already registered"), "{message}");
    assert!(message.ends_with(&format!(" at tests/building_errors.rs:{line}:15")), "{message}");
}

#[test]
fn a_gap_in_parameter_numbers_fails_build() {
    let b = XlaBuilder::new("f");
    let x = b.parameter(0, &shape!(f32[2]), "x");
    let z = b.parameter(2, &shape!(f32[2]), "z");
    // Each op is fine on its own ...
    let sum = add(x, z, &[]);
    assert_eq!(b.get_shape(sum).unwrap(), shape!(f32[2]));
    // ... but the computation has no parameter 1.
    let line = line!() + 1;
    let message = b.build(sum).unwrap_err().to_string();
    assert!(message.starts_with("invalid parameter number: 2"), "{message}");
    assert!(message.contains(&format!("tests/building_errors.rs:{line}:")), "{message}");
    // build does not poison the builder: adding parameter 1 fixes it.
    let y = b.parameter(1, &shape!(f32[2]), "y");
    assert!(b.build(add(sum, y, &[])).is_ok());

    let b = XlaBuilder::new("negative");
    let x = b.parameter(-1, &shape!(f32[2]), "x");
    let message = b.build(x).unwrap_err().to_string();
    assert!(message.starts_with("invalid parameter number: -1"), "{message}");
}

#[test]
fn the_computation_outlives_the_builder() {
    let computation = {
        let b = XlaBuilder::new("outlives");
        let x = b.parameter(0, &shape!(f32[2, 3]), "x");
        let y = exp(x);
        b.build(y).unwrap()
    };
    let text = computation.to_hlo_text();
    assert!(text.contains("ROOT exponential.2 = f32[2,3]{1,0} exponential(x.1)"), "{text}");
    assert_eq!(computation.program_shape().result, shape!(f32[2, 3]));
    // And it can move to another thread.
    let handle = std::thread::spawn(move || computation.program_shape().parameters);
    assert_eq!(handle.join().unwrap(), vec![("x".to_string(), shape!(f32[2, 3]))]);
}

#[test]
fn the_builder_stays_usable_after_build() {
    let b = XlaBuilder::new("again");
    let x = b.parameter(0, &shape!(f32[2]), "x");
    let first = b.build(neg(x)).unwrap();
    let second = b.build(exp(x)).unwrap();
    assert!(first.to_hlo_text().contains("ROOT negate.2"));
    assert!(second.to_hlo_text().contains("ROOT exponential.3"));
}

#[test]
fn errors_name_the_callers_location_for_free_functions() {
    let b = XlaBuilder::new("f");
    let x = b.parameter(0, &shape!(f32[2, 3]), "x");
    let line = line!() + 1;
    let bad = broadcast_in_dim(x, &[2, 3], &[1, 0]);
    let message = b.get_shape(bad).unwrap_err().to_string();
    assert_eq!(
        message,
        format!(
            "Input dimension should be either 1 or equal to the output dimension it is broadcasting into; the 0th \
             operand dimension is 2, the 1th output dimension is 3. (op broadcast_in_dim; operands f32[2,3]{{1,0}}) \
             at tests/building_errors.rs:{line}:15"
        )
    );
}

#[test]
fn errors_name_the_callers_location_for_operators() {
    let b = XlaBuilder::new("f");
    let x = b.parameter(0, &shape!(f32[2]), "x");
    let y = b.parameter(1, &shape!(f32[3]), "y");
    let line = line!() + 1;
    let sum = x + y;
    let message = b.get_shape(sum).unwrap_err().to_string();
    assert_eq!(
        message,
        format!(
            "Binary op with incompatible shapes: f32[2] and f32[3]. (op add; operands f32[2]{{0}}, f32[3]{{0}}) \
             at tests/building_errors.rs:{line}:15"
        )
    );

    let b = XlaBuilder::new("f");
    let flag = b.parameter(0, &shape!(pred[2]), "flag");
    let line = line!() + 1;
    let negated = -flag;
    let message = b.get_shape(negated).unwrap_err().to_string();
    assert_eq!(
        message,
        format!(
            "Expected element type in shape to be integral, floating or complex for negate operation; got PRED. \
             (op negate; operands pred[2]{{0}}) at tests/building_errors.rs:{line}:19"
        )
    );

    let b = XlaBuilder::new("f");
    let (x, y) = mismatched(&b);
    let line = line!() + 1;
    let difference = x - y;
    assert_location(&b, difference, line);

    let b = XlaBuilder::new("f");
    let (x, y) = mismatched(&b);
    let line = line!() + 1;
    let product = x * y;
    assert_location(&b, product, line);

    let b = XlaBuilder::new("f");
    let (x, y) = mismatched(&b);
    let line = line!() + 1;
    let quotient = x / y;
    assert_location(&b, quotient, line);
}

/// Parameters `f32[2]` and `f32[3]`.
fn mismatched(b: &XlaBuilder) -> (XlaOp<'_>, XlaOp<'_>) {
    (b.parameter(0, &shape!(f32[2]), "x"), b.parameter(1, &shape!(f32[3]), "y"))
}

#[track_caller]
fn assert_location(b: &XlaBuilder, op: XlaOp<'_>, line: u32) {
    let message = b.get_shape(op).unwrap_err().to_string();
    assert!(message.starts_with("Binary op with incompatible shapes: f32[2] and f32[3]. (op "), "{message}");
    assert!(message.contains(&format!(" at tests/building_errors.rs:{line}:")), "{message}");
}

#[test]
fn errors_are_values_that_compare_and_clone() {
    let b = XlaBuilder::new("f");
    let x = b.parameter(0, &shape!(f32[2]), "x");
    let _ = reshape(x, &[3]);
    let error = b.first_error().unwrap();
    let copy = error.clone();
    assert_eq!(error, copy);
    let boxed: Box<dyn std::error::Error + Send + Sync + 'static> = Box::new(copy);
    assert_eq!(boxed.to_string(), error.to_string());
    // The source is XLA's sentence alone.
    let source = std::error::Error::source(&error).map(|s| s.to_string());
    assert_eq!(
        source.as_deref(),
        Some("Reshape operation has mismatched element counts: from=2 (f32[2]) to=3 (f32[3]).")
    );
}

// ---- Random op sequences never panic ---------------------------------------------------------------

/// Sizes and dimension numbers: mostly small, sometimes negative or huge.
fn number() -> impl Strategy<Value = i64> {
    prop_oneof![
        6 => 0i64..4,
        2 => -3i64..0,
        1 => 4i64..9,
        1 => Just(i64::MAX / 2),
        1 => Just(i64::MAX),
        1 => Just(i64::MIN),
        1 => Just(1i64 << 32),
    ]
}

fn numbers(max_len: usize) -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(number(), 0..=max_len)
}

fn element_type() -> impl Strategy<Value = ElementType> {
    prop::sample::select(vec![
        ElementType::Pred,
        ElementType::S32,
        ElementType::U8,
        ElementType::F32,
        ElementType::Bf16,
        ElementType::F64,
    ])
}

#[derive(Clone, Debug)]
enum Step {
    Unary(u8, usize),
    Binary(u8, usize, usize, Vec<i64>),
    Ternary(bool, usize, usize, usize),
    Convert(usize, ElementType),
    ConstantR0(ElementType),
    Broadcast(usize, Vec<i64>),
    BroadcastInDim(usize, Vec<i64>, Vec<i64>),
    Reshape(usize, Vec<i64>),
    Transpose(usize, Vec<i64>),
    Slice(usize, Vec<i64>, Vec<i64>, Vec<i64>),
    Concat(Vec<usize>, i64),
    Pad(usize, usize, Vec<(i64, i64, i64)>),
    Rev(usize, Vec<i64>),
    Reduce(usize, usize, bool, Vec<i64>),
    Dot(usize, usize),
    DotGeneral(usize, usize, [Vec<i64>; 4]),
    Iota(ElementType, Vec<i64>, i64),
    Foreign(usize),
}

fn step() -> impl Strategy<Value = Step> {
    let i = || 0usize..64;
    prop_oneof![
        (any::<u8>(), i()).prop_map(|(k, a)| Step::Unary(k, a)),
        (any::<u8>(), i(), i(), numbers(3)).prop_map(|(k, a, b, d)| Step::Binary(k, a, b, d)),
        (any::<bool>(), i(), i(), i()).prop_map(|(s, a, b, c)| Step::Ternary(s, a, b, c)),
        (i(), element_type()).prop_map(|(a, t)| Step::Convert(a, t)),
        element_type().prop_map(Step::ConstantR0),
        (i(), numbers(3)).prop_map(|(a, s)| Step::Broadcast(a, s)),
        (i(), numbers(4), numbers(3)).prop_map(|(a, s, d)| Step::BroadcastInDim(a, s, d)),
        (i(), numbers(4)).prop_map(|(a, s)| Step::Reshape(a, s)),
        (i(), numbers(4)).prop_map(|(a, p)| Step::Transpose(a, p)),
        (i(), numbers(3), numbers(3), numbers(3)).prop_map(|(a, s, l, t)| Step::Slice(a, s, l, t)),
        (prop::collection::vec(i(), 0..4), number()).prop_map(|(o, d)| Step::Concat(o, d)),
        (i(), i(), prop::collection::vec((number(), number(), number()), 0..4))
            .prop_map(|(a, v, c)| Step::Pad(a, v, c)),
        (i(), numbers(3)).prop_map(|(a, d)| Step::Rev(a, d)),
        (i(), i(), any::<bool>(), numbers(3)).prop_map(|(a, v, s, d)| Step::Reduce(a, v, s, d)),
        (i(), i()).prop_map(|(a, b)| Step::Dot(a, b)),
        (i(), i(), [numbers(2), numbers(2), numbers(2), numbers(2)])
            .prop_map(|(a, b, n)| Step::DotGeneral(a, b, n)),
        (element_type(), numbers(3), number()).prop_map(|(t, s, d)| Step::Iota(t, s, d)),
        i().prop_map(Step::Foreign),
    ]
}

/// A parameter shape: small dimensions, default or reversed layout.
fn parameter_shape() -> impl Strategy<Value = Shape> {
    (element_type(), prop::collection::vec(0i64..4, 0..4), any::<bool>()).prop_map(|(t, dims, reversed)| {
        let mut minor_to_major: Vec<i64> = (0..dims.len() as i64).rev().collect();
        if reversed {
            minor_to_major.reverse();
        }
        Shape::with_layout(t, &dims, &minor_to_major).unwrap()
    })
}

fn reducer(element_type: ElementType, scalar: bool) -> XlaComputation {
    let r = XlaBuilder::new("reducer");
    let s = Shape::scalar(element_type);
    let a = r.parameter(0, &s, "a");
    let b = r.parameter(1, &s, "b");
    let root = if scalar { add(a, b, &[]) } else { broadcast(add(a, b, &[]), &[2]) };
    r.build(root).unwrap()
}

/// A unary free function.
type Unary = for<'x> fn(XlaOp<'x>) -> XlaOp<'x>;
/// A binary free function with broadcast dimensions.
type Binary = for<'x, 'd> fn(XlaOp<'x>, XlaOp<'x>, &'d [i64]) -> XlaOp<'x>;

/// Applies one step to the pool of ops (indices wrap around the pool).
fn apply<'b>(b: &'b XlaBuilder, foreign: XlaOp<'b>, pool: &[XlaOp<'b>], step: &Step) -> XlaOp<'b> {
    let at = |i: usize| pool[i % pool.len()];
    let unary: [Unary; 6] = [neg, exp, lazy_xla::abs, lazy_xla::not, lazy_xla::is_finite, lazy_xla::floor];
    let binary: [Binary; 8] = [
        add,
        lazy_xla::sub,
        lazy_xla::atan2,
        lazy_xla::and,
        lazy_xla::shift_left,
        lazy_xla::max,
        lazy_xla::eq,
        lazy_xla::lt,
    ];
    match step {
        Step::Unary(k, a) => unary[*k as usize % unary.len()](at(*a)),
        Step::Binary(k, a, c, d) => binary[*k as usize % binary.len()](at(*a), at(*c), d),
        Step::Ternary(true, a, c, d) => select(at(*a), at(*c), at(*d)),
        Step::Ternary(false, a, c, d) => clamp(at(*a), at(*c), at(*d)),
        Step::Convert(a, t) => convert_element_type(at(*a), *t),
        Step::ConstantR0(t) => match t {
            ElementType::Pred => b.constant_r0(true),
            ElementType::S32 => b.constant_r0(-3i32),
            ElementType::U8 => b.constant_r0(7u8),
            ElementType::F64 => b.constant_r0(0.5f64),
            _ => b.constant_r0(1.5f32),
        },
        Step::Broadcast(a, s) => broadcast(at(*a), s),
        Step::BroadcastInDim(a, s, d) => broadcast_in_dim(at(*a), s, d),
        Step::Reshape(a, s) => reshape(at(*a), s),
        Step::Transpose(a, p) => transpose(at(*a), p),
        Step::Slice(a, s, l, t) => slice(at(*a), s, l, t),
        Step::Concat(ops, d) => {
            let ops: Vec<XlaOp<'b>> = ops.iter().map(|&i| at(i)).collect();
            concat_in_dim(b, &ops, *d)
        }
        Step::Pad(a, v, c) => {
            let config = PaddingConfig {
                dimensions: c
                    .iter()
                    .map(|&(lo, hi, interior)| PaddingConfigDimension {
                        edge_padding_low: lo,
                        edge_padding_high: hi,
                        interior_padding: interior,
                    })
                    .collect(),
            };
            pad(at(*a), at(*v), &config)
        }
        Step::Rev(a, d) => rev(at(*a), d),
        Step::Reduce(a, v, scalar, d) => {
            let t = b.get_shape(at(*a)).map_or(ElementType::F32, |s| s.element_type());
            reduce(at(*a), at(*v), &reducer(t, *scalar), d)
        }
        Step::Dot(a, c) => dot(at(*a), at(*c)),
        Step::DotGeneral(a, c, [lc, rc, lb, rb]) => {
            let numbers = DotDimensionNumbers {
                lhs_contracting_dimensions: lc.clone(),
                rhs_contracting_dimensions: rc.clone(),
                lhs_batch_dimensions: lb.clone(),
                rhs_batch_dimensions: rb.clone(),
            };
            dot_general(at(*a), at(*c), &numbers)
        }
        Step::Iota(t, dims, d) => match Shape::try_new(*t, dims) {
            Ok(shape) => iota(b, &shape, *d),
            Err(_) => reshape(at(0), dims),
        },
        Step::Foreign(a) => add(at(*a), foreign, &[]),
    }
}

/// A shape inference may return: valid dimensions and a layout that round-trips.
fn assert_valid(shape: &Shape) {
    assert!(shape.dimensions().iter().all(|&d| d >= 0), "{shape}");
    let count = shape.dimensions().iter().try_fold(1i64, |acc, &d| acc.checked_mul(d));
    assert_eq!(count, Some(shape.element_count()), "{shape}");
    assert_eq!(shape.layout().minor_to_major().len(), shape.rank(), "{shape}");
    assert_eq!(shape.to_string().parse::<Shape>().as_ref(), Ok(shape));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn random_op_sequences_never_panic(
        parameters in prop::collection::vec(parameter_shape(), 1..4),
        steps in prop::collection::vec(step(), 1..24),
    ) {
        let other = XlaBuilder::new("other");
        let foreign = other.parameter(0, &shape!(f32[2]), "foreign");
        let b = XlaBuilder::new("random");
        let mut pool: Vec<XlaOp<'_>> =
            parameters.iter().enumerate().map(|(n, s)| b.parameter(n as i64, s, "p")).collect();
        let mut first: Option<Error> = None;
        for step in &steps {
            let op = apply(&b, foreign, &pool, step);
            match (&first, b.get_shape(op)) {
                (None, Ok(shape)) => {
                    assert_valid(&shape);
                    prop_assert!(op.is_valid());
                    prop_assert!(b.first_error().is_none());
                }
                (None, Err(error)) => {
                    prop_assert!(!op.is_valid());
                    prop_assert_eq!(b.first_error(), Some(error.clone()));
                    first = Some(error);
                }
                (Some(known), result) => {
                    prop_assert_eq!(result.as_ref(), Err(known));
                    prop_assert!(!op.is_valid());
                }
            }
            // Every op, old or new, reports the same.
            let oldest = b.get_shape(pool[0]);
            match &first {
                None => prop_assert!(oldest.is_ok()),
                Some(known) => prop_assert_eq!(oldest.as_ref(), Err(known)),
            }
            pool.push(op);
        }
        match (b.build(*pool.last().unwrap()), &first) {
            (Ok(computation), None) => {
                let text = computation.to_hlo_text();
                prop_assert!(text.starts_with("HloModule random."), "{}", text);
                prop_assert!(text.ends_with("}\n\n"), "{}", text);
            }
            (Err(error), Some(known)) => prop_assert_eq!(&error, known),
            (result, known) => prop_assert!(false, "build gave {:?} with first error {:?}", result.map(|_| ()), known),
        }
        prop_assert!(other.first_error().is_none());
    }
}

#[test]
fn huge_sizes_are_errors_or_valid_shapes_never_panics() {
    const HUGE: i64 = i64::MAX / 2;
    for attempt in 0..6 {
        let b = XlaBuilder::new("huge");
        let s = b.parameter(0, &shape!(f32[]), "s");
        let long = broadcast(s, &[HUGE]);
        let op = match attempt {
            0 => broadcast(long, &[HUGE]),
            1 => concat_in_dim(&b, &[long, long, long], 0),
            2 => pad(
                long,
                s,
                &PaddingConfig {
                    dimensions: vec![PaddingConfigDimension {
                        edge_padding_low: HUGE,
                        edge_padding_high: HUGE,
                        interior_padding: 0,
                    }],
                },
            ),
            3 => pad(
                long,
                s,
                &PaddingConfig {
                    dimensions: vec![PaddingConfigDimension {
                        edge_padding_low: 0,
                        edge_padding_high: 0,
                        interior_padding: 2,
                    }],
                },
            ),
            4 => reshape(long, &[HUGE, HUGE]),
            _ => broadcast_in_dim(s, &[HUGE, 4], &[]),
        };
        let message = b.get_shape(op).unwrap_err().to_string();
        assert!(!message.is_empty());
    }
}

#[test]
fn slice_with_a_huge_stride_does_not_overflow() {
    const HUGE: i64 = i64::MAX / 2;
    let b = XlaBuilder::new("huge");
    let s = b.parameter(0, &shape!(f32[]), "s");
    let long = broadcast(s, &[HUGE]);
    assert_eq!(b.get_shape(long).unwrap().dimensions(), &[HUGE]);
    // ceil((HUGE - 0) / i64::MAX) = 1, ceil((HUGE - 1) / HUGE) = 1.
    let strided = slice(long, &[0], &[HUGE], &[i64::MAX]);
    assert_eq!(b.get_shape(strided).unwrap().dimensions(), &[1]);
    let strided = slice(long, &[1], &[HUGE], &[HUGE]);
    assert_eq!(b.get_shape(strided).unwrap().dimensions(), &[1]);
}
