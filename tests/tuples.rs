//! Tuples through every API: shapes and their text, literals and their text, the `tuple` and
//! `get_tuple_element` ops (shapes, HLO text, XLA's sentences), tuple parameters, and tuple
//! results from `execute` and `execute_into`, fused and unfused. Expected strings are
//! jaxlib 0.6.0's.

use lazy_xla::*;

fn pair() -> Shape {
    Shape::tuple(&[shape!(f32[2]), shape!(s32[])])
}

fn seven() -> Shape {
    Shape::tuple(&(0..7).map(|n| shape!(f32[n])).collect::<Vec<_>>())
}

#[test]
fn tuple_shapes_print_as_xla_prints_them() {
    assert_eq!(pair().to_string(), "(f32[2]{0}, s32[])");
    assert_eq!(pair().human_string(), "(f32[2], s32[])");
    assert_eq!(Shape::tuple(&[]).to_string(), "()");
    let nested = Shape::tuple(&[Shape::tuple(&[]), Shape::tuple(&[shape!(s32[])]), shape!(f32[2, 3]{0, 1})]);
    assert_eq!(nested.to_string(), "((), (s32[]), f32[2,3]{0,1})");
    assert_eq!(
        seven().to_string(),
        "(f32[0]{0}, f32[1]{0}, f32[2]{0}, f32[3]{0}, f32[4]{0}, /*index=5*/f32[5]{0}, f32[6]{0})"
    );
    let twelve = Shape::tuple(&(1..=12).map(|n| shape!(f32[n])).collect::<Vec<_>>());
    assert!(twelve.to_string().contains("f32[5]{0}, /*index=5*/f32[6]{0}"));
    assert!(twelve.to_string().contains("f32[10]{0}, /*index=10*/f32[11]{0}"));
}

#[test]
fn tuple_shapes_parse_back_with_or_without_comments_and_spaces() -> Result<()> {
    for shape in [pair(), seven(), Shape::tuple(&[]), Shape::tuple(&[pair(), Shape::tuple(&[])])] {
        assert_eq!(shape.to_string().parse::<Shape>()?, shape);
    }
    assert_eq!("(f32[2],s32[])".parse::<Shape>()?, pair());
    assert_eq!("( f32[2]{0} , /*index=1*/ s32[] )".parse::<Shape>()?, pair());
    assert!("(f32[2], s32[]".parse::<Shape>().is_err());
    assert!("(f32[2] s32[])".parse::<Shape>().is_err());
    let deep = format!("{}f32[]{}", "(".repeat(100), ")".repeat(100));
    assert!(deep.parse::<Shape>().is_err(), "deep nesting is refused, not a stack overflow");
    Ok(())
}

#[test]
fn array_accessors_describe_a_tuple_as_xla_does() {
    let t = pair();
    assert!(t.is_tuple() && !t.is_scalar());
    assert_eq!((t.rank(), t.dimensions(), t.element_count()), (0, &[][..], 0));
    assert!(t.linear_index(&[]).is_err());
    assert!(t.multi_index(0).is_err());
    assert!(t.relayout(&Layout::new(&[])).is_err());
    assert!(shape!(f32[2]).tuple_shapes().is_empty());
    assert!(t.same_dimensions_and_type(&Shape::tuple(&[shape!(f32[2]{0}), shape!(s32[])])));
    assert!(!t.same_dimensions_and_type(&Shape::tuple(&[shape!(f32[2])])));
    assert_eq!(t.with_default_layout(), t);
}

#[test]
#[should_panic(expected = "the element type of the tuple shape (f32[2]{0}, s32[])")]
fn the_element_type_of_a_tuple_panics_as_documented() {
    let _ = pair().element_type();
}

#[test]
fn tuple_literals_print_as_xla_prints_them() -> Result<()> {
    let t = Literal::tuple(vec![
        Literal::scalar(false),
        Literal::from_vec(&shape!(f32[2, 2]), vec![0.0f32; 4])?,
        Literal::scalar(0i8),
    ]);
    assert_eq!(t.to_string(), "(\npred[] false,\nf32[2,2] {\n  { 0, 0 },\n  { 0, 0 }\n},\ns8[] 0\n)");
    let nested = Literal::tuple(vec![Literal::tuple(vec![]), Literal::scalar(0.0f32)]);
    assert_eq!(nested.to_string(), "(\n(\n\n),\nf32[] 0\n)");
    let inner = Literal::tuple(vec![Literal::vec1(&[0i32, 0]), Literal::scalar(0u8)]);
    let outer = Literal::tuple(vec![inner, Literal::tuple(vec![])]);
    assert_eq!(outer.to_string(), "(\n(\ns32[2] {0, 0},\nu8[] 0\n),\n(\n\n)\n)");
    Ok(())
}

#[test]
fn tuple_literals_hold_their_elements() -> Result<()> {
    let t = Literal::tuple(vec![Literal::vec1(&[1.0f32, 2.0]), Literal::scalar(7i32)]);
    assert_eq!(t.shape(), &pair());
    assert_eq!(t.tuple_element(0)?.to_vec::<f32>()?, vec![1.0, 2.0]);
    assert!(t.tuple_element(2).is_err());
    assert!(t.memory::<f32>().is_err() && t.to_vec::<f32>().is_err() && t.to_ndarray::<f32>().is_err());
    assert!(Literal::from_vec(&pair(), vec![1.0f32]).is_err());
    let zeros = Literal::zeros(&pair())?;
    assert_eq!(zeros, Literal::tuple(vec![Literal::vec1(&[0.0f32, 0.0]), Literal::scalar(0i32)]));
    assert_ne!(zeros, t);
    assert_eq!(t.clone().decompose_tuple()?, vec![Literal::vec1(&[1.0f32, 2.0]), Literal::scalar(7i32)]);
    approx::assert_relative_eq!(t, t.clone());
    Ok(())
}

/// The API.md example: a tuple parameter taken apart and a new tuple made.
fn swap() -> Result<XlaComputation> {
    let b = XlaBuilder::new("swap");
    let x = b.parameter(0, &shape!(f32[2]), "x");
    let state = b.parameter(1, &pair(), "state");
    b.build(tuple(&b, &[get_tuple_element(state, 1), x]))
}

#[test]
fn tuple_ops_print_as_jaxlib_prints_them() -> Result<()> {
    assert_eq!(
        swap()?.to_hlo_text(),
        "HloModule swap.5, entry_computation_layout={(f32[2]{0}, (f32[2]{0}, s32[]))->(s32[], f32[2]{0})}\n\n\
         ENTRY swap.5 {\n  \
         state.2 = (f32[2]{0}, s32[]) parameter(1)\n  \
         get-tuple-element.3 = s32[] get-tuple-element(state.2), index=1\n  \
         x.1 = f32[2]{0} parameter(0)\n  \
         ROOT tuple.4 = (s32[], f32[2]{0}) tuple(get-tuple-element.3, x.1)\n}\n\n"
    );
    let b = XlaBuilder::new("tuples");
    let p = b.parameter(0, &Shape::tuple(&[shape!(f32[2, 3]{0, 1}), shape!(s32[4])]), "p");
    let first = get_tuple_element(p, 0);
    let empty = tuple(&b, &[]);
    let wrapped = tuple(&b, &[get_tuple_element(p, 1)]);
    let text = b.build(tuple(&b, &[first, empty, wrapped]))?.to_hlo_text();
    assert!(text.starts_with(
        "HloModule tuples.7, entry_computation_layout={((f32[2,3]{0,1}, s32[4]{0}))->(f32[2,3]{0,1}, (), (s32[4]{0}))}"
    ));
    assert!(text.contains("get-tuple-element.2 = f32[2,3]{0,1} get-tuple-element(p.1), index=0"));
    assert!(text.contains("tuple.3 = () tuple()"));
    let b = XlaBuilder::new("seven");
    let ps: Vec<XlaOp<'_>> = (0..7).map(|n| b.parameter(n, &shape!(f32[n]), &format!("p{n}"))).collect();
    let text = b.build(tuple(&b, &ps))?.to_hlo_text();
    let layout = "(f32[0]{0}, f32[1]{0}, f32[2]{0}, f32[3]{0}, f32[4]{0}, /*index=5*/f32[5]{0}, f32[6]{0})";
    assert!(
        text.starts_with(&format!("HloModule seven.9, entry_computation_layout={{{layout}->{layout}}}")),
        "{text}"
    );
    assert!(text.contains("tuple(p0.1, p1.2, p2.3, p3.4, p4.5, p5.6, p6.7)"), "{text}");
    Ok(())
}

/// Makes one op in a builder.
type MakeOp = fn(&XlaBuilder) -> XlaOp<'_>;

/// The builder's first error, as text.
fn first_error(b: &XlaBuilder) -> String {
    b.first_error().map(|e| e.to_string()).unwrap_or_default()
}

#[test]
fn tuple_misuse_gets_xlas_sentences() {
    let cases: [(&str, MakeOp); 12] = [
        ("Operand to GetTupleElement() is not a tuple; got f32[2]", |b| {
            get_tuple_element(b.parameter(0, &shape!(f32[2]), "x"), 0)
        }),
        ("GetTupleElement() index (2) out of range for tuple shape (f32[2], s32[])", |b| {
            get_tuple_element(b.parameter(0, &pair(), "t"), 2)
        }),
        ("GetTupleElement() index (-1) out of range for tuple shape (f32[2], s32[])", |b| {
            get_tuple_element(b.parameter(0, &pair(), "t"), -1)
        }),
        ("GetTupleElement() index (0) out of range for tuple shape ()", |b| {
            get_tuple_element(tuple(b, &[]), 0)
        }),
        ("Expected array argument for lhs of binary operation add, but got (f32[2]).", |b| {
            let x = b.parameter(0, &shape!(f32[2]), "x");
            add(tuple(b, &[x]), x, &[])
        }),
        ("Expected array argument for rhs of binary operation compare, but got (f32[2]).", |b| {
            let x = b.parameter(0, &shape!(f32[2]), "x");
            eq(x, tuple(b, &[x]), &[])
        }),
        ("Expected array argument for operand of unary operation, but got (f32[2]).", |b| {
            neg(tuple(b, &[b.parameter(0, &shape!(f32[2]), "x")]))
        }),
        ("Expected array argument for clamp max, but got (f32[2]).", |b| {
            let x = b.parameter(0, &shape!(f32[2]), "x");
            clamp(x, x, tuple(b, &[x]))
        }),
        ("Expected array argument for operand of broadcast, but got (f32[2]).", |b| {
            broadcast(tuple(b, &[b.parameter(0, &shape!(f32[2]), "x")]), &[2])
        }),
        ("Convert does not allow non-arrays, so cannot convert from (f32[2]) to S32.", |b| {
            convert_element_type(tuple(b, &[b.parameter(0, &shape!(f32[2]), "x")]), ElementType::S32)
        }),
        ("Pad operation does not support tuple-shape operands.", |b| {
            let x = b.parameter(0, &shape!(f32[2]), "x");
            pad(tuple(b, &[x]), b.constant_r0(0.0f32), &PaddingConfig::new(&[(0, 0, 0)]))
        }),
        ("Expected array argument for operand of concatenation, but got (f32[2]).", |b| {
            let x = b.parameter(0, &shape!(f32[2]), "x");
            concat_in_dim(b, &[x, tuple(b, &[x])], 0)
        }),
    ];
    for (sentence, make) in cases {
        let b = XlaBuilder::new("bad");
        let op = make(&b);
        assert!(!op.is_valid());
        assert!(first_error(&b).starts_with(sentence), "{sentence}\n{}", first_error(&b));
    }
}

/// Runs `computation` fused and unfused; both results must be equal; returns the first.
fn run(computation: &XlaComputation, arguments: &[&Literal]) -> Result<Literal> {
    let fused = computation.compile(&CompileOptions::default())?.execute(arguments)?;
    let unfused = computation.compile(&CompileOptions::unfused())?.execute(arguments)?;
    assert_eq!(fused, unfused);
    Ok(fused)
}

#[test]
fn tuples_run_through_execute_and_execute_into() -> Result<()> {
    let state = Literal::tuple(vec![Literal::vec1(&[1.0f32, 2.0]), Literal::scalar(7i32)]);
    let x = Literal::vec1(&[3.0f32, 4.0]);
    let out = run(&swap()?, &[&x, &state])?;
    assert_eq!(out, Literal::tuple(vec![Literal::scalar(7i32), x.clone()]));
    let exe = swap()?.compile(&CompileOptions::default())?;
    let mut reused = Literal::zeros(&Shape::tuple(&[shape!(s32[]), shape!(f32[2])]))?;
    exe.execute_into(&[&x, &state], &mut reused)?;
    assert_eq!(reused, out);
    // An output of another structure is refused, not written.
    let mut wrong = Literal::zeros(&Shape::tuple(&[shape!(s32[]), shape!(f32[3])]))?;
    assert!(exe.execute_into(&[&x, &state], &mut wrong).is_err());
    assert!(exe.execute(&[&x, &x]).is_err(), "an array where a tuple is expected");
    Ok(())
}

#[test]
fn tuple_elements_keep_or_take_layouts() -> Result<()> {
    // A tuple parameter with a column-major element, given a row-major argument; a computed
    // element and a passed-through one in the result; an output in yet other layouts.
    let b = XlaBuilder::new("layouts");
    let p = b.parameter(0, &Shape::tuple(&[shape!(f32[2, 3]{0, 1}), shape!(s32[2])]), "p");
    let m = get_tuple_element(p, 0);
    let doubled = m + m;
    let computation = b.build(tuple(&b, &[doubled, get_tuple_element(p, 1), m]))?;
    assert_eq!(b.get_shape(doubled)?, shape!(f32[2, 3]{0, 1}));
    let values: Vec<f32> = (0..6).map(|v| v as f32).collect();
    let argument =
        Literal::tuple(vec![Literal::from_vec(&shape!(f32[2, 3]), values.clone())?, Literal::vec1(&[5, 6])]);
    let out = run(&computation, &[&argument])?;
    assert_eq!(out.shape(), &computation.program_shape().result);
    assert_eq!(out.tuple_element(0)?.shape(), &shape!(f32[2, 3]{0, 1}));
    assert_eq!(out.tuple_element(0)?.to_vec::<f32>()?, values.iter().map(|v| v * 2.0).collect::<Vec<_>>());
    assert_eq!(out.tuple_element(1)?.to_vec::<i32>()?, vec![5, 6]);
    assert_eq!(out.tuple_element(2)?.to_vec::<f32>()?, values);
    let mut into = Literal::zeros(&Shape::tuple(&[shape!(f32[2, 3]), shape!(s32[2]), shape!(f32[2, 3])]))?;
    computation.compile(&CompileOptions::default())?.execute_into(&[&argument], &mut into)?;
    assert_eq!(into.tuple_element(0)?.memory::<f32>()?, &[0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
    assert_eq!(into.tuple_element(2)?.memory::<f32>()?, &values[..]);
    Ok(())
}

#[test]
fn a_tuple_constant_and_a_nested_tuple_run() -> Result<()> {
    let inner = Literal::tuple(vec![Literal::scalar(1u8), Literal::vec1(&[2.5f64])]);
    let b = XlaBuilder::new("constant");
    let c = b.constant_literal(&inner);
    let x = b.parameter(0, &shape!(f64[1]), "x");
    let sum = add(get_tuple_element(c, 1), x, &[]);
    let computation = b.build(tuple(&b, &[c, sum]))?;
    assert!(computation.to_hlo_text().contains("(u8[], f64[1]{0}) constant({...})"));
    let out = run(&computation, &[&Literal::vec1(&[1.0f64])])?;
    assert_eq!(out, Literal::tuple(vec![inner, Literal::vec1(&[3.5f64])]));
    Ok(())
}
