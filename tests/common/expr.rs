//! Computations as data: [`Expr`], the scalar or element-wise expression of a computation's
//! result over its parameters, and [`Computation`], a named expression with its parameters'
//! shapes. A recipe describes every computation it hands to an op (reducers, comparators,
//! update and select functions, map functions, branches, loop conditions and bodies) this way,
//! so that one description builds it with lazy-xla's public API ([`Computation::build`]),
//! prints it as Rust ([`Computation::source`]) and evaluates it one element at a time with the
//! reference's semantics ([`Expr::evaluate`]).

use crate::common::bits;
use crate::common::semantics::{self, BinaryKind, CompareKind, UnaryKind};
use crate::common::values::{rust_value, with_native, Elem, Native, Value};
use lazy_xla::*;

/// An expression over a computation's parameters. A scalar meeting an array in an element-wise
/// op is broadcast, as XlaBuilder broadcasts it.
#[derive(Clone, Debug)]
pub enum Expr {
    /// Parameter `n` of the computation.
    Parameter(usize),
    /// Element `index` of a tuple (`get_tuple_element`).
    Element(Box<Expr>, usize),
    /// A scalar constant (`constant_r0`).
    Constant(ElementType, Value),
    Unary(UnaryKind, Box<Expr>),
    /// A binary op of two operands of one element type.
    Binary(BinaryKind, Box<Expr>, Box<Expr>),
    Compare(CompareKind, Box<Expr>, Box<Expr>),
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
    Convert(Box<Expr>, ElementType),
    /// `bitcast_convert_type` to a type of the same width.
    Bitcast(Box<Expr>, ElementType),
    Tuple(Vec<Expr>),
}

/// What an expression computes: an array (its element type, and whether it is a scalar, which
/// for a computation's arrays of one set of dimensions is all that tells shapes apart) or a
/// tuple.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    Array { ty: ElementType, scalar: bool },
    Tuple(Vec<Kind>),
}

impl Kind {
    /// The kind of a value of `shape`.
    pub fn of(shape: &Shape) -> Kind {
        match shape.is_tuple() {
            true => Kind::Tuple(shape.tuple_shapes().iter().map(Kind::of).collect()),
            false => Kind::Array { ty: shape.element_type(), scalar: shape.dimensions().is_empty() },
        }
    }

    /// The element type of an array kind.
    pub fn ty(&self) -> ElementType {
        match self {
            Kind::Array { ty, .. } => *ty,
            Kind::Tuple(_) => panic!("the element type of a tuple"),
        }
    }

    /// Whether an array kind is a scalar.
    pub fn is_scalar(&self) -> bool {
        matches!(self, Kind::Array { scalar: true, .. })
    }
}

/// A value an expression evaluates to: one typed element, or a tuple of values.
#[derive(Clone, Debug)]
pub enum Val {
    Leaf(ElementType, Elem),
    Tuple(Vec<Val>),
}

impl Val {
    /// The element of a leaf, with its type.
    pub fn leaf(&self) -> (ElementType, Elem) {
        match self {
            Val::Leaf(ty, e) => (*ty, *e),
            Val::Tuple(_) => panic!("a tuple where an element was expected"),
        }
    }
}

/// lazy-xla's function of an element-wise unary op.
pub fn unary_fn(op: UnaryKind) -> for<'a> fn(XlaOp<'a>) -> XlaOp<'a> {
    use UnaryKind::*;
    match op {
        Neg => neg,
        Abs => abs,
        Exp => exp,
        Log => log,
        Log1p => log1p,
        Expm1 => expm1,
        Tanh => tanh,
        Logistic => logistic,
        Sqrt => sqrt,
        Rsqrt => rsqrt,
        Sign => sign,
        Floor => floor,
        Ceil => ceil,
        Round => round,
        RoundNearestEven => round_nearest_even,
        Sin => sin,
        Cos => cos,
        Not => not,
        IsFinite => is_finite,
        Clz => clz,
        PopulationCount => population_count,
        Erf => erf,
        Tan => tan,
        Cbrt => cbrt,
    }
}

/// A binary op of lazy-xla's: lhs, rhs and the broadcast dimensions.
pub type BinaryFn = for<'a, 'c> fn(XlaOp<'a>, XlaOp<'a>, &'c [i64]) -> XlaOp<'a>;

/// lazy-xla's function of an element-wise binary op.
pub fn binary_fn(op: BinaryKind) -> BinaryFn {
    use BinaryKind::*;
    match op {
        Add => add,
        Sub => sub,
        Mul => mul,
        Div => div,
        Rem => rem,
        Max => max,
        Min => min,
        Pow => pow,
        Atan2 => atan2,
        And => and,
        Or => or,
        Xor => xor,
        ShiftLeft => shift_left,
        ShiftRightArithmetic => shift_right_arithmetic,
        ShiftRightLogical => shift_right_logical,
    }
}

/// lazy-xla's function of a comparison.
pub fn compare_fn(op: CompareKind) -> BinaryFn {
    match op {
        CompareKind::Eq => eq,
        CompareKind::Ne => ne,
        CompareKind::Ge => ge,
        CompareKind::Gt => gt,
        CompareKind::Le => le,
        CompareKind::Lt => lt,
    }
}

impl Expr {
    /// Parameter `n`.
    pub fn p(n: usize) -> Expr {
        Expr::Parameter(n)
    }

    /// `op(self)`.
    pub fn unary(self, op: UnaryKind) -> Expr {
        Expr::Unary(op, Box::new(self))
    }

    /// `op(self, other)`.
    pub fn binary(self, op: BinaryKind, other: Expr) -> Expr {
        Expr::Binary(op, Box::new(self), Box::new(other))
    }

    /// `op(self, other)`, a comparison.
    pub fn compare(self, op: CompareKind, other: Expr) -> Expr {
        Expr::Compare(op, Box::new(self), Box::new(other))
    }

    /// `select(self, on_true, on_false)`.
    pub fn select(self, on_true: Expr, on_false: Expr) -> Expr {
        Expr::Select(Box::new(self), Box::new(on_true), Box::new(on_false))
    }

    /// `convert_element_type(self, to)`.
    pub fn convert(self, to: ElementType) -> Expr {
        Expr::Convert(Box::new(self), to)
    }

    /// `bitcast_convert_type(self, to)`.
    pub fn bitcast(self, to: ElementType) -> Expr {
        Expr::Bitcast(Box::new(self), to)
    }

    /// Element `index` of the tuple `self`.
    pub fn element(self, index: usize) -> Expr {
        Expr::Element(Box::new(self), index)
    }

    /// What the expression computes over parameters of `parameters`' kinds.
    pub fn kind(&self, parameters: &[Kind]) -> Kind {
        let array = |ty: ElementType, scalar: bool| Kind::Array { ty, scalar };
        let both = |a: &Expr, b: &Expr| a.kind(parameters).is_scalar() && b.kind(parameters).is_scalar();
        match self {
            Expr::Parameter(n) => parameters[*n].clone(),
            Expr::Element(t, i) => match t.kind(parameters) {
                Kind::Tuple(kinds) => kinds[*i].clone(),
                other => panic!("element {i} of {other:?}"),
            },
            Expr::Constant(ty, _) => array(*ty, true),
            Expr::Unary(op, x) => {
                let k = x.kind(parameters);
                array(op.result_type(k.ty()), k.is_scalar())
            }
            Expr::Binary(_, a, b) => array(a.kind(parameters).ty(), both(a, b)),
            Expr::Compare(_, a, b) => array(ElementType::Pred, both(a, b)),
            Expr::Select(p, a, b) => {
                array(a.kind(parameters).ty(), p.kind(parameters).is_scalar() && both(a, b))
            }
            Expr::Convert(x, to) | Expr::Bitcast(x, to) => array(*to, x.kind(parameters).is_scalar()),
            Expr::Tuple(xs) => Kind::Tuple(xs.iter().map(|x| x.kind(parameters)).collect()),
        }
    }

    /// Whether `f` holds for the expression or any expression in it.
    pub fn any(&self, f: &dyn Fn(&Expr) -> bool) -> bool {
        f(self)
            || match self {
                Expr::Parameter(_) | Expr::Constant(..) => false,
                Expr::Element(x, _) | Expr::Unary(_, x) | Expr::Convert(x, _) | Expr::Bitcast(x, _) => {
                    x.any(f)
                }
                Expr::Binary(_, a, b) | Expr::Compare(_, a, b) => a.any(f) || b.any(f),
                Expr::Select(p, a, b) => p.any(f) || a.any(f) || b.any(f),
                Expr::Tuple(xs) => xs.iter().any(|x| x.any(f)),
            }
    }

    /// Whether the expression reads parameter `n`.
    fn reads(&self, n: usize) -> bool {
        match self {
            Expr::Parameter(m) => *m == n,
            Expr::Constant(..) => false,
            Expr::Element(x, _) | Expr::Unary(_, x) | Expr::Convert(x, _) | Expr::Bitcast(x, _) => x.reads(n),
            Expr::Binary(_, a, b) | Expr::Compare(_, a, b) => a.reads(n) || b.reads(n),
            Expr::Select(p, a, b) => p.reads(n) || a.reads(n) || b.reads(n),
            Expr::Tuple(xs) => xs.iter().any(|x| x.reads(n)),
        }
    }

    /// The op the expression makes in builder `c` over its parameters.
    fn build<'c>(&self, c: &'c XlaBuilder, parameters: &[XlaOp<'c>]) -> XlaOp<'c> {
        let of = |x: &Expr| x.build(c, parameters);
        match self {
            Expr::Parameter(n) => parameters[*n],
            Expr::Element(t, i) => get_tuple_element(of(t), *i as i64),
            Expr::Constant(ty, v) => with_native!(*ty, T => c.constant_r0(T::from_value(*v))),
            Expr::Unary(op, x) => unary_fn(*op)(of(x)),
            Expr::Binary(op, a, b) => binary_fn(*op)(of(a), of(b), &[]),
            Expr::Compare(op, a, b) => compare_fn(*op)(of(a), of(b), &[]),
            Expr::Select(p, a, b) => select(of(p), of(a), of(b)),
            Expr::Convert(x, to) => convert_element_type(of(x), *to),
            Expr::Bitcast(x, to) => bitcast_convert_type(of(x), *to),
            Expr::Tuple(xs) => tuple(c, &xs.iter().map(of).collect::<Vec<_>>()),
        }
    }

    /// The expression as Rust source over parameters `p0`, `p1`, … of builder `c`.
    fn source(&self) -> String {
        match self {
            Expr::Parameter(n) => format!("p{n}"),
            Expr::Element(t, i) => format!("get_tuple_element({}, {i})", t.source()),
            Expr::Constant(ty, v) => format!("c.constant_r0({})", rust_value(*ty, *v)),
            Expr::Unary(op, x) => format!("{}({})", op.name(), x.source()),
            Expr::Binary(op, a, b) => format!("{}({}, {}, &[])", op.name(), a.source(), b.source()),
            Expr::Compare(op, a, b) => format!("{}({}, {}, &[])", op.name(), a.source(), b.source()),
            Expr::Select(p, a, b) => format!("select({}, {}, {})", p.source(), a.source(), b.source()),
            Expr::Convert(x, to) => format!("convert_element_type({}, ElementType::{to:?})", x.source()),
            Expr::Bitcast(x, to) => format!("bitcast_convert_type({}, ElementType::{to:?})", x.source()),
            Expr::Tuple(xs) => {
                let xs: Vec<String> = xs.iter().map(Expr::source).collect();
                format!("tuple(&c, &[{}])", xs.join(", "))
            }
        }
    }

    /// The value over one element of each parameter, by the reference's semantics.
    pub fn evaluate(&self, parameters: &[Val]) -> Val {
        let leaf = |x: &Expr| x.evaluate(parameters).leaf();
        match self {
            Expr::Parameter(n) => parameters[*n].clone(),
            Expr::Element(t, i) => match t.evaluate(parameters) {
                Val::Tuple(values) => values[*i].clone(),
                other => panic!("element {i} of {other:?}"),
            },
            Expr::Constant(ty, v) => Val::Leaf(*ty, Elem::exact(*v)),
            Expr::Unary(op, x) => {
                let (ty, e) = leaf(x);
                Val::Leaf(op.result_type(ty), semantics::unary(*op, ty, e))
            }
            Expr::Binary(op, a, b) => {
                let ((ty, x), (_, y)) = (leaf(a), leaf(b));
                Val::Leaf(ty, semantics::binary(*op, ty, x, y))
            }
            Expr::Compare(op, a, b) => {
                let ((ty, x), (_, y)) = (leaf(a), leaf(b));
                Val::Leaf(ElementType::Pred, semantics::compare(*op, ty, x, y))
            }
            Expr::Select(p, a, b) => {
                let ((_, pe), (ty, x), (_, y)) = (leaf(p), leaf(a), leaf(b));
                Val::Leaf(ty, semantics::select(ty, pe, x, y))
            }
            Expr::Convert(x, to) => {
                let (ty, e) = leaf(x);
                Val::Leaf(*to, semantics::convert(ty, *to, e))
            }
            Expr::Bitcast(x, to) => {
                let (ty, e) = leaf(x);
                Val::Leaf(*to, bits::bitcast_element(ty, *to, e))
            }
            Expr::Tuple(xs) => Val::Tuple(xs.iter().map(|x| x.evaluate(parameters)).collect()),
        }
    }
}

/// A computation: its name, its parameters' shapes and its result.
#[derive(Clone, Debug)]
pub struct Computation {
    /// The name of its builder (and of its variable in a printed program).
    pub name: String,
    pub parameters: Vec<Shape>,
    pub root: Expr,
}

impl Computation {
    /// The computation built with lazy-xla.
    pub fn build(&self) -> Result<XlaComputation> {
        let c = XlaBuilder::new(&self.name);
        let parameters: Vec<XlaOp<'_>> = (self.parameters.iter().enumerate())
            .map(|(n, shape)| c.parameter(n as i64, shape, &format!("p{n}")))
            .collect();
        c.build(self.root.build(&c, &parameters))
    }

    /// The computation as a Rust block (in a function returning `lazy_xla::Result`) whose
    /// value is the `XlaComputation`.
    pub fn source(&self) -> String {
        let mut out = format!("{{\n    let c = XlaBuilder::new(\"{}\");\n", self.name);
        for (n, shape) in self.parameters.iter().enumerate() {
            let name = if self.root.reads(n) { format!("p{n}") } else { format!("_p{n}") };
            out += &format!("    let {name} = c.parameter({n}, &\"{shape}\".parse::<Shape>()?, \"p{n}\");\n");
        }
        out + &format!("    c.build({})?\n}}", self.root.source())
    }
}
