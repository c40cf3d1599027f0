//! Which reshapes a loop reads as an affine index map, moving no data: those whose every
//! operand dimension is a run of consecutive result dimensions (size-1 dimensions inserted or
//! removed, dimensions split in row-major order).

use crate::shape::shape::Shape;

/// For a reshape from `from` to `to` whose every dimension of `from` is made of consecutive
/// dimensions of `to` (sizes multiplying to its own, size-1 dimensions of either anywhere):
/// for each dimension of `from`, the dimensions of `to` its index is made of and the weight
/// of each (`index = Σ weight · to_index`; empty for a size-1 dimension, always index 0).
/// `None` for a reshape that merges dimensions, which no affine map reads.
///
/// ```text
/// f32[4,512] -> f32[4,8,64]:   [[(0, 1)], [(1, 64), (2, 1)]]
/// f32[1,6] -> f32[6,1]:        [[], [(0, 1)]]
/// ```
pub(crate) fn splitting_reshape(from: &Shape, to: &Shape) -> Option<Vec<Vec<(usize, i64)>>> {
    let mut targets = (0..to.rank()).filter(|&d| to.dimensions()[d] != 1).peekable();
    let mut rows = Vec::with_capacity(from.rank());
    for &size in from.dimensions() {
        let mut group = Vec::new();
        if size == 0 {
            let d = targets.next().filter(|&d| to.dimensions()[d] == 0)?;
            group.push(d);
        }
        let mut product = 1;
        while product < size {
            let d = targets.next()?;
            product *= to.dimensions()[d];
            group.push(d);
        }
        if size != 0 && product != size {
            return None;
        }
        let mut weight = 1;
        let mut row: Vec<(usize, i64)> = group
            .iter()
            .rev()
            .map(|&d| {
                let here = (d, weight);
                weight *= to.dimensions()[d];
                here
            })
            .collect();
        row.reverse();
        rows.push(row);
    }
    targets.next().is_none().then_some(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element_type::ElementType;

    fn f32s(dimensions: &[i64]) -> Shape {
        Shape::new(ElementType::F32, dimensions)
    }

    #[test]
    fn splits_and_unit_dimensions_are_affine_and_merges_are_not() {
        let split = splitting_reshape(&f32s(&[4, 512]), &f32s(&[4, 8, 64]));
        assert_eq!(split, Some(vec![vec![(0, 1)], vec![(1, 64), (2, 1)]]));
        let units = splitting_reshape(&f32s(&[1, 6]), &f32s(&[6, 1]));
        assert_eq!(units, Some(vec![vec![], vec![(0, 1)]]));
        let with_units = splitting_reshape(&f32s(&[6, 4]), &f32s(&[2, 1, 3, 4, 1]));
        assert_eq!(with_units, Some(vec![vec![(0, 3), (2, 1)], vec![(3, 1)]]));
        assert_eq!(splitting_reshape(&f32s(&[4, 8, 64]), &f32s(&[4, 512])), None);
        assert_eq!(splitting_reshape(&f32s(&[6]), &f32s(&[4, 3])), None);
        assert_eq!(splitting_reshape(&f32s(&[0, 3]), &f32s(&[0, 3])), Some(vec![vec![(0, 1)], vec![(1, 1)]]));
        assert_eq!(splitting_reshape(&f32s(&[0, 3]), &f32s(&[3, 0])), None);
        assert_eq!(splitting_reshape(&f32s(&[]), &f32s(&[1, 1])), Some(vec![]));
    }
}
