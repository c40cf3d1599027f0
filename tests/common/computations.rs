//! Small computations that many tests pass to ops (reducers above all). A test file that needs
//! only these includes this file alone (`#[path = "common/computations.rs"] mod computations;`),
//! without the fuzzer's modules.
#![allow(dead_code)] // each test file uses a part of it

use lazy_xla::{add, ElementType, Shape, XlaBuilder, XlaComputation, XlaOp};

/// A scalar `(T, T) -> T` computation named `name`: `f(a, b)` of its parameters `a` and `b`.
pub fn scalar_computation<F>(name: &str, element_type: ElementType, f: F) -> XlaComputation
where
    F: for<'b> FnOnce(&'b XlaBuilder, XlaOp<'b>, XlaOp<'b>) -> XlaOp<'b>,
{
    let r = XlaBuilder::new(name);
    let s = Shape::scalar(element_type);
    let (a, b) = (r.parameter(0, &s, "a"), r.parameter(1, &s, "b"));
    r.build(f(&r, a, b)).unwrap_or_else(|e| panic!("the computation {name}: {e}"))
}

/// `a + b` over scalars of `element_type`, named `sum`: the reducer of a sum.
pub fn sum(element_type: ElementType) -> XlaComputation {
    scalar_computation("sum", element_type, |_, a, b| add(a, b, &[]))
}
