//! What a running plan holds for each instruction: an array where it lies (an argument, a
//! constant), an array the run computed (shared by every reader, never copied), or a tuple of
//! such values (so taking a tuple apart, or putting one together, copies nothing).

use std::sync::Arc;

use crate::error::{invalid_argument, Result};
use crate::literal::Literal;

/// A value during a run.
#[derive(Clone, Debug)]
pub(crate) enum Value<'a> {
    /// An array read where it is.
    Borrowed(&'a Literal),
    /// An array this run computed.
    Computed(Arc<Literal>),
    /// A tuple of values.
    Tuple(Vec<Value<'a>>),
}

impl<'a> Value<'a> {
    /// A literal as a value: an array borrowed, a tuple taken apart into its borrowed elements.
    pub(crate) fn of(literal: &'a Literal) -> Value<'a> {
        match literal.is_tuple() {
            false => Value::Borrowed(literal),
            true => Value::Tuple(
                (0..literal.shape().tuple_shapes().len())
                    .filter_map(|i| literal.tuple_element(i).ok())
                    .map(Value::of)
                    .collect(),
            ),
        }
    }

    /// An array the run computed.
    pub(crate) fn computed(literal: Literal) -> Value<'a> {
        Value::Computed(Arc::new(literal))
    }

    /// The array this value is; an error for a tuple (a plan that does not match its
    /// computation, reported rather than panicking).
    pub(crate) fn array(&self) -> Result<&Literal> {
        match self {
            Value::Borrowed(literal) => Ok(literal),
            Value::Computed(literal) => Ok(literal),
            Value::Tuple(_) => invalid_argument!("a tuple value where an array was expected"),
        }
    }

    /// The elements of the tuple this value is; an error for an array.
    pub(crate) fn elements(&self) -> Result<&[Value<'a>]> {
        match self {
            Value::Tuple(elements) => Ok(elements),
            _ => invalid_argument!("an array value where a tuple was expected"),
        }
    }

    /// The value as a literal of its own: a computed array that nothing else holds is moved
    /// out, anything else is copied.
    pub(crate) fn into_literal(self) -> Literal {
        match self {
            Value::Borrowed(literal) => literal.clone(),
            Value::Computed(literal) => {
                Arc::try_unwrap(literal).map(Literal::into_owned).unwrap_or_else(|shared| (*shared).clone())
            }
            Value::Tuple(elements) => Literal::tuple(elements.into_iter().map(Value::into_literal).collect()),
        }
    }
}
