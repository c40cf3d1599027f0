//! Which reshapes move no data: those that only insert or remove size-1 dimensions.

use crate::shape::shape::Shape;

/// For a reshape that only inserts or removes size-1 dimensions (a bitcast whatever the
/// layouts, and free inside a loop): for each dimension of `from`, the dimension of `to` it
/// becomes (`None` for a size-1 one). `None` for any other reshape.
pub(crate) fn unit_dimension_reshape(from: &Shape, to: &Shape) -> Option<Vec<Option<usize>>> {
    let mut targets = (0..to.rank()).filter(|&d| to.dimensions()[d] != 1);
    let mut rows = Vec::with_capacity(from.rank());
    for &size in from.dimensions() {
        if size == 1 {
            rows.push(None);
            continue;
        }
        let d = targets.next()?;
        if to.dimensions()[d] != size {
            return None;
        }
        rows.push(Some(d));
    }
    targets.next().is_none().then_some(rows)
}
