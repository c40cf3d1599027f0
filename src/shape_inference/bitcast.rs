//! `BitcastConvertType`: reinterpreting bits, with a dimension added or dropped when the widths
//! differ (XLA's `InferBitcastConvertShape`).

use crate::element_type::ElementType;
use crate::error::{invalid_argument, Result};
use crate::shape::Shape;

/// The result of reinterpreting `operand`'s bits as `new_element_type`: the same shape when
/// the widths match; to a narrower type, a new most-minor dimension of the width ratio; to a
/// wider type, the last dimension (which must be the ratio) dropped.
pub(crate) fn bitcast_convert_shape(operand: &Shape, new_element_type: ElementType) -> Result<Shape> {
    if operand.is_tuple() {
        invalid_argument!(
            "Cannot convert from or to tuple type; requested conversion: {} => {}.",
            operand.human_string(),
            new_element_type.primitive_type_name()
        );
    }
    let bits = |t: ElementType| if t == ElementType::Pred { 1 } else { 8 * t.byte_size() };
    let (from, to) = (bits(operand.element_type()), bits(new_element_type));
    if from == to {
        return Ok(operand.with_element_type(new_element_type));
    }
    if from == 1 || to == 1 {
        invalid_argument!(
            "Cannot bitcast-convert between pred and a wider type: {} => {} (XLA's builder accepts it, its CPU \
             compiler aborts)",
            operand.human_string(),
            new_element_type.primitive_type_name()
        );
    }
    let rank = operand.rank();
    let mut minor_to_major = operand.layout().minor_to_major().to_vec();
    if from > to {
        // A new last dimension of the ratio, the most minor in the layout.
        let mut dimensions = operand.dimensions().to_vec();
        dimensions.push((from / to) as i64);
        minor_to_major.insert(0, rank as i64);
        return Shape::with_layout(new_element_type, &dimensions, &minor_to_major);
    }
    let ratio = (to / from) as i64;
    let last = operand.dimensions().last().copied().unwrap_or(0);
    if last != ratio {
        invalid_argument!(
            "Last dimension of input shape={last} is not equal to ratio of bit-widths={ratio} for bitcast-convert from {} to {}",
            operand.human_string(),
            new_element_type.primitive_type_name()
        );
    }
    let dimensions = &operand.dimensions()[..rank - 1];
    minor_to_major.retain(|&d| d != rank as i64 - 1);
    Shape::with_layout(new_element_type, dimensions, &minor_to_major)
}
