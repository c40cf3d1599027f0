//! Tuples: `GetTupleElement` (a `Tuple` of any operands is always valid).

use crate::error::{invalid_argument, Result};
use crate::shape::Shape;

/// XLA's `GetTupleElement` checks (the builder's, which come before shape inference's): the
/// operand is a tuple and `index` one of its elements. The result is that element's shape,
/// layout included.
pub(crate) fn get_tuple_element_shape(tuple: &Shape, index: i64) -> Result<Shape> {
    if !tuple.is_tuple() {
        invalid_argument!("Operand to GetTupleElement() is not a tuple; got {}", tuple.human_string());
    }
    match usize::try_from(index).ok().and_then(|i| tuple.tuple_shapes().get(i)) {
        Some(element) => Ok(element.clone()),
        None => invalid_argument!(
            "GetTupleElement() index ({index}) out of range for tuple shape {}",
            tuple.human_string()
        ),
    }
}
