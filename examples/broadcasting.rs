//! XLA's broadcasting semantics, step by step: every example of `seeds/xla-broadcasting.md`, in
//! order, recorded with lazy-xla's builder, printed as the HLO the builder made of it, and run.
//!
//! Arrays print in the document's notation: a vector as `|7 8 9|`, a matrix as one `|…|` line
//! per row, and a higher-rank array as a sequence of matrices, each labelled by its leading
//! indices.
//!
//! Run with `cargo run --example broadcasting`.

use lazy_xla::{
    add, broadcast_in_dim, CompileOptions, ElementType, Error, Literal, Result, Shape, XlaBuilder,
    XlaComputation,
};

#[macro_use]
#[path = "common/text.rs"]
mod text;
use text::heading;

/// A subheading, for the several cases of one section.
fn subheading(out: &mut String, title: &str) {
    say!(out);
    say!(out, "-- {title}");
}

/// Every line of `text`, indented by four spaces (blank lines stay empty, trailing ones go).
fn indented(text: &str) -> String {
    let lines = text.trim_end().lines();
    lines.map(|line| if line.is_empty() { "\n".to_string() } else { format!("    {line}\n") }).collect()
}

// ---- Arrays in the document's notation ------------------------------------------------------

/// An `f32` array of dimensions `dims` whose element at each index is `value(index)`.
fn array(dims: &[i64], value: impl Fn(&[i64]) -> f32) -> Result<Literal> {
    let shape = Shape::try_new(ElementType::F32, dims)?;
    let values = (0..shape.element_count())
        .map(|linear| shape.multi_index(linear).map(|index| value(&index)))
        .collect::<Result<Vec<f32>>>()?;
    Literal::from_vec(&shape, values)
}

/// An `f32` array of dimensions `dims` holding 1, 2, 3, … in row-major order.
fn counting(dims: &[i64]) -> Result<Literal> {
    let shape = Shape::try_new(ElementType::F32, dims)?;
    Literal::from_vec(&shape, (1..=shape.element_count()).map(|v| v as f32).collect())
}

/// A matrix from its rows.
fn matrix<const N: usize>(rows: &[[f32; N]]) -> Result<Literal> {
    let shape = Shape::try_new(ElementType::F32, &[rows.len() as i64, N as i64])?;
    Literal::from_vec(&shape, rows.concat())
}

/// `literal` in the document's notation (see the module comment).
fn picture(literal: &Literal) -> Result<String> {
    let values: Vec<String> = literal.to_vec::<f32>()?.iter().map(f32::to_string).collect();
    let dims = literal.shape().dimensions();
    let Some(&columns) = dims.last() else {
        return Ok(values.concat()); // a scalar is just its value
    };
    let widths = column_widths(&values, columns as usize);
    let rows: Vec<String> = values.chunks(widths.len().max(1)).map(|row| row_text(row, &widths)).collect();
    if dims.len() <= 2 {
        return Ok(rows.iter().map(|row| format!("{row}\n")).collect());
    }
    // Rank 3 and up: one matrix per leading index, the label in front of its first row.
    let rows_per_matrix = dims[dims.len() - 2] as usize;
    let mut text = String::new();
    for (k, matrix) in rows.chunks(rows_per_matrix.max(1)).enumerate() {
        let label = format!("{:?} ", leading_index(&dims[..dims.len() - 2], k));
        for (r, row) in matrix.iter().enumerate() {
            let margin = if r == 0 { label.clone() } else { " ".repeat(label.len()) };
            text += &format!("{margin}{row}\n");
        }
    }
    Ok(text)
}

/// The width of each of `columns` columns: that of its widest number.
fn column_widths(values: &[String], columns: usize) -> Vec<usize> {
    let mut widths = vec![0; columns];
    for (i, value) in values.iter().enumerate() {
        widths[i % columns] = widths[i % columns].max(value.len());
    }
    widths
}

/// One row between bars. As the document draws them, a number starts its column (`|8  10 12|`
/// over `|11 13 15|`), except in the last column, where it ends at the bar (`|6  7|` over
/// `|9 10|`).
fn row_text(row: &[String], widths: &[usize]) -> String {
    let last = widths.len() - 1;
    let cells: Vec<String> = (0..row.len())
        .map(|i| {
            let (value, width) = (&row[i], widths[i]);
            if i == last {
                format!("{value:>width$}")
            } else {
                format!("{value:<width$}")
            }
        })
        .collect();
    format!("|{}|", cells.join(" "))
}

/// The `k`-th index (in row-major order) of an array of dimensions `dims`.
fn leading_index(dims: &[i64], mut k: usize) -> Vec<i64> {
    let mut index = vec![0; dims.len()];
    for (i, &size) in dims.iter().enumerate().rev() {
        index[i] = (k % size as usize) as i64;
        k /= size as usize;
    }
    index
}

/// Appends `name: shape` and then the array's picture, indented.
fn show_array(out: &mut String, name: &str, literal: &Literal) -> Result<()> {
    say!(out, "{name}: {}", literal.shape().human_string());
    out.push_str(&indented(&picture(literal)?));
    Ok(())
}

// ---- One binary op, recorded, printed and run -------------------------------------------------

/// Records `add(lhs, rhs, broadcast_dimensions)` on two parameters with the operands' shapes.
fn build_add(lhs: &Shape, rhs: &Shape, broadcast_dimensions: &[i64]) -> Result<XlaComputation> {
    let b = XlaBuilder::new("broadcasting");
    let x = b.parameter(0, lhs, "lhs");
    let y = b.parameter(1, rhs, "rhs");
    // Shape inference runs now: a bad broadcast is recorded here, and `build` returns it.
    b.build(add(x, y, broadcast_dimensions))
}

/// Compiles `computation` and runs it on `arguments`.
fn run(computation: &XlaComputation, arguments: &[&Literal]) -> Result<Literal> {
    computation.compile(&CompileOptions::default())?.execute(arguments)
}

/// What `operand` becomes when broadcast to `dims`: the lower-rank operand goes onto the
/// dimensions `broadcast_dimensions` names; a same-rank one keeps its dimension numbers and
/// stretches its size-1 ("degenerate") dimensions.
fn broadcast_to(operand: &Literal, dims: &[i64], broadcast_dimensions: &[i64]) -> Result<Literal> {
    let rank = operand.shape().rank();
    let identity: Vec<i64> = (0..rank as i64).collect();
    let mapping = if rank == dims.len() || rank == 0 { &identity[..] } else { broadcast_dimensions };
    let b = XlaBuilder::new("broadcast");
    let x = b.parameter(0, operand.shape(), "x");
    run(&b.build(broadcast_in_dim(x, dims, mapping))?, &[operand])
}

/// Shows `lhs + rhs` with `broadcast_dimensions`: the operands, the shapes, the HLO the builder
/// recorded, each operand as broadcast to the result's shape (for results of rank 2 or less, as
/// the document draws them), and the result of running it.
fn show_add(out: &mut String, lhs: &Literal, rhs: &Literal, broadcast_dimensions: &[i64]) -> Result<()> {
    show_array(out, "lhs", lhs)?;
    show_array(out, "rhs", rhs)?;
    let computation = build_add(lhs.shape(), rhs.shape(), broadcast_dimensions)?;
    let result_shape = computation.program_shape().result;
    say!(out, "add(lhs, rhs, &{broadcast_dimensions:?})");
    say!(
        out,
        "shapes: {} + {} -> {}",
        lhs.shape().human_string(),
        rhs.shape().human_string(),
        result_shape.human_string()
    );
    say!(out, "HLO recorded by the builder:");
    out.push_str(&indented(&computation.to_hlo_text()));
    let dims = result_shape.dimensions();
    if dims.len() <= 2 {
        for (name, operand) in [("lhs", lhs), ("rhs", rhs)] {
            if operand.shape().dimensions() != dims {
                let broadcast = broadcast_to(operand, dims, broadcast_dimensions)?;
                show_array(out, &format!("{name} broadcast"), &broadcast)?;
            }
        }
    }
    let result = run(&computation, &[lhs, rhs])?;
    show_array(out, "result", &result)
}

/// Shows `lhs + rhs` with `broadcast_dimensions`, which the builder must reject, and the error
/// it gives: XLA's own sentence, then the op, the operand shapes and where the op was made.
fn show_rejected_add(out: &mut String, lhs: &Shape, rhs: &Shape, broadcast_dimensions: &[i64]) -> Result<()> {
    say!(out, "add(lhs: {}, rhs: {}, &{broadcast_dimensions:?})", lhs.human_string(), rhs.human_string());
    match build_add(lhs, rhs, broadcast_dimensions) {
        Err(error) => {
            say!(out, "error: {error}");
            Ok(())
        }
        Ok(computation) => Err(Error::InvalidArgument(format!(
            "expected the builder to reject this add, but it built\n{}",
            computation.to_hlo_text()
        ))),
    }
}

/// An `f32` shape of dimensions `dims`.
fn f32s(dims: &[i64]) -> Result<Shape> {
    Shape::try_new(ElementType::F32, dims)
}

// ---- The document, section by section ---------------------------------------------------------

/// The document's matrix `|1 2 3| / |4 5 6|`.
fn seed_matrix() -> Result<Literal> {
    matrix(&[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
}

/// "Scalars can always be broadcast over arrays without an explicit specification."
fn scalar_and_matrix(out: &mut String) -> Result<()> {
    heading(out, "1. A scalar and a matrix");
    say!(out, "A scalar needs no broadcast dimensions: it is added to every element.");
    show_add(out, &seed_matrix()?, &Literal::scalar(7.0f32), &[])
}

/// A (2,3) matrix and a (3) vector: invalid without broadcast dimensions, fine with (1).
fn matrix_and_vector(out: &mut String) -> Result<()> {
    heading(out, "2. A matrix and a vector, broadcast dimensions (1)");
    say!(out, "XLA is explicit: operands of different ranks need broadcast dimensions.");
    say!(out, "Without them the add is invalid:");
    show_rejected_add(out, &f32s(&[2, 3])?, &f32s(&[3])?, &[])?;
    say!(out, "With (1), the vector's dimension 0 is matched to the matrix's dimension 1:");
    say!(out, "the vector is replicated over the rows.");
    show_add(out, &seed_matrix()?, &Literal::vec1(&[7.0f32, 8.0, 9.0]), &[1])
}

/// A (3,3) matrix and a (3) vector: both (1) and (0) are valid, and differ.
fn square_matrix_and_vector(out: &mut String) -> Result<()> {
    heading(out, "3. A 3x3 matrix and a vector: (1) or (0)");
    let square = matrix(&[[10.0, 20.0, 30.0], [40.0, 50.0, 60.0], [70.0, 80.0, 90.0]])?;
    let vector = Literal::vec1(&[7.0f32, 8.0, 9.0]);
    subheading(out, "(1): each vector element becomes a column; the vector is duplicated for each row");
    show_add(out, &square, &vector, &[1])?;
    subheading(out, "(0): each vector element becomes a row; the vector is duplicated for each column");
    show_add(out, &square, &vector, &[0])
}

/// "When adding a 2x3 matrix to a 3-element vector, a broadcasting dimension of 0 is invalid."
fn invalid_dimension(out: &mut String) -> Result<()> {
    heading(out, "4. A 2x3 matrix and a 3-element vector with (0) is invalid");
    say!(out, "Dimension 0 of the matrix has size 2; the vector has 3 elements.");
    show_rejected_add(out, &f32s(&[2, 3])?, &f32s(&[3])?, &[0])
}

/// A 2x3x4 cuboid and a 3x4 matrix with (1,2).
fn cuboid_and_matrix(out: &mut String) -> Result<()> {
    heading(out, "5. A 2x3x4 cuboid and a 3x4 matrix, broadcast dimensions (1,2)");
    say!(out, "The matrix is matched to dimensions 1 and 2 of the cuboid, and repeated along 0.");
    let cuboid = array(&[2, 3, 4], |i| 100.0 * (i[0] + 1) as f32)?;
    let matrix = array(&[3, 4], |i| (10 * (i[0] + 1) + i[1] + 1) as f32)?;
    show_add(out, &cuboid, &matrix, &[1, 2])
}

/// Formal definition: a T vector and a TxV matrix matched onto MxNxPxQ, here 2x3x4x5.
fn formal_definition(out: &mut String) -> Result<()> {
    heading(out, "6. Formal definition: matching onto MxNxPxQ = 2x3x4x5");
    say!(out, "Each broadcast dimension names the dimension of the higher-rank array that the");
    say!(out, "lower-rank array's dimension of the same position is matched to; sizes must agree.");
    say!(out, "The operands are X[m,n,p,q] = 1000m + 100n + 10p + q and small[i] = i + 1 (row-major),");
    say!(out, "and every element of every result is checked to be X[m,n,p,q] + small[matched indices].");
    say!(out, "(M, N, P and Q all differ, so T and V are the sizes of the dimensions they match.)");
    let big = [2, 3, 4, 5];
    say!(out);
    say!(out, "              MxNxPxQ");
    let matchings: [(&str, &[i64]); 7] = [
        ("dim 3:          T  ", &[3]),
        ("dim 2:        T    ", &[2]),
        ("dim 1:      T      ", &[1]),
        ("dim 0:    T        ", &[0]),
        ("dim 2,3:      T V  ", &[2, 3]),
        ("dim 1,2:    T V    ", &[1, 2]),
        ("dim 0,3:  T     V  ", &[0, 3]),
    ];
    for (picture, dims) in matchings {
        // T (and V) take the sizes of the dimensions they are matched to.
        let small: Vec<i64> = dims.iter().map(|&d| big[d as usize]).collect();
        say!(out, "    {picture}{}", matching(&big, &small, dims)?);
    }
    say!(out);
    say!(out, "HLO recorded for dim 0,3 (the matrix becomes dimensions 0 and 3 of a broadcast):");
    out.push_str(&indented(&build_add(&f32s(&big)?, &f32s(&[2, 5])?, &[0, 3])?.to_hlo_text()));
    say!(out);
    say!(out, "The tuple must be strictly increasing, so it is illegal to match V to N and T to P");
    say!(out, "(a 4x3 matrix: T = P = 4, V = N = 3, with (2,1)):");
    show_rejected_add(out, &f32s(&big)?, &f32s(&[4, 3])?, &[2, 1])?;
    say!(out, "and to match V to both P and N (a TxV matrix with (0,1,2): T to M, V to N and P):");
    show_rejected_add(out, &f32s(&big)?, &f32s(&[2, 3])?, &[0, 1, 2])?;
    Ok(())
}

/// One line of the formal definition: `X + small` with `dims`, run and checked element by
/// element against the definition.
fn matching(big: &[i64], small: &[i64], dims: &[i64]) -> Result<String> {
    let x = array(big, |i| i.iter().fold(0, |acc, &k| 10 * acc + k) as f32)?;
    let y = counting(small)?;
    let small_shape = y.shape();
    let result = run(&build_add(x.shape(), y.shape(), dims)?, &[&x, &y])?;
    // The definition: the result at [m,n,p,q] is X there plus `small` at the matched indices.
    let (xs, ys, sums) = (x.to_vec::<f32>()?, y.to_vec::<f32>()?, result.to_vec::<f32>()?);
    let shape = result.shape();
    for (linear, &sum) in sums.iter().enumerate() {
        let index = shape.multi_index(linear as i64)?;
        let matched: Vec<i64> = dims.iter().map(|&d| index[d as usize]).collect();
        let expected = xs[linear] + ys[small_shape.linear_index(&matched)? as usize];
        assert_eq!(sum, expected, "add(X, {small_shape}, &{dims:?}) at {index:?}");
    }
    Ok(format!(
        "add(X, {}, &{dims:?}) -> {}: every element as defined",
        small_shape.human_string(),
        shape.human_string()
    ))
}

/// Same-rank arrays whose dimensions are equal or 1 ("degenerate").
fn degenerate_dimensions(out: &mut String) -> Result<()> {
    heading(out, "7. Similar-rank arrays with degenerate dimensions");
    say!(out, "Two dimensions are compatible when they are equal or one of them is 1; the result");
    say!(out, "has the larger size at every dimension. No broadcast dimensions are needed.");

    subheading(out, "1. (2,1) and (2,3) broadcast to (2,3)");
    let tens = array(&[2, 3], |i| (10 * (3 * i[0] + i[1] + 1)) as f32)?;
    show_add(out, &matrix(&[[1.0], [2.0]])?, &tens, &[])?;

    subheading(out, "2. (1,2,5) and (7,2,5) broadcast to (7,2,5)");
    let rows = array(&[1, 2, 5], |i| (10 * (i[1] + 1) + i[2] + 1) as f32)?;
    show_add(out, &rows, &array(&[7, 2, 5], |i| (100 * (i[0] + 1)) as f32)?, &[])?;

    subheading(out, "3. (7,2,5) and (7,1,5) broadcast to (7,2,5)");
    let layers = array(&[7, 2, 5], |i| (100 * (i[0] + 1) + 10 * (i[1] + 1)) as f32)?;
    show_add(out, &layers, &array(&[7, 1, 5], |i| (i[2] + 1) as f32)?, &[])?;

    subheading(out, "4. (7,2,5) and (7,2,6) are incompatible");
    show_rejected_add(out, &f32s(&[7, 2, 5])?, &f32s(&[7, 2, 6])?, &[])?;

    subheading(out, "An outer operation: (2,1) and (1,3) broadcast to (2,3)");
    show_add(out, &matrix(&[[10.0], [20.0]])?, &matrix(&[[1.0, 2.0, 3.0]])?, &[])
}

/// Both kinds of broadcasting in one op.
fn composition(out: &mut String) -> Result<()> {
    heading(out, "8. Broadcast composition");
    say!(out, "First the lower-rank operand goes up to the higher rank through the broadcast");
    say!(out, "dimensions, its new dimensions sized as the other operand's; then degenerate dimensions");
    say!(out, "(size 1) stretch to the other operand's sizes.");

    subheading(out, "|1 2 3 4| + [5 6] with (0): [5 6] is a 1x2 matrix, not a vector");
    say!(out, "The vector goes to dimension 0 of a 4xM matrix, M = 2 to match the 1x2 operand;");
    say!(out, "then the 1x2 operand's degenerate dimension 0 stretches to 4.");
    show_add(out, &Literal::vec1(&[1.0f32, 2.0, 3.0, 4.0]), &matrix(&[[5.0, 6.0]])?, &[0])?;

    subheading(out, "A 1x2 matrix and a 4x3x1 array with (1,2)");
    say!(out, "The matrix goes to dimensions 1 and 2 of an Mx1x2 array, M = 4 from the 4x3x1 operand;");
    say!(out, "then degenerate dimensions stretch both 4x1x2 and 4x3x1 to 4x3x2.");
    let column = array(&[4, 3, 1], |i| (100 * (i[0] + 1) + 10 * (i[1] + 1)) as f32)?;
    show_add(out, &matrix(&[[1.0, 2.0]])?, &column, &[1, 2])
}

/// The whole tutorial, as the text `main` prints.
pub fn tutorial() -> Result<String> {
    let mut out = String::new();
    say!(out, "XLA broadcasting semantics, with lazy-xla");
    scalar_and_matrix(&mut out)?;
    matrix_and_vector(&mut out)?;
    square_matrix_and_vector(&mut out)?;
    invalid_dimension(&mut out)?;
    cuboid_and_matrix(&mut out)?;
    formal_definition(&mut out)?;
    degenerate_dimensions(&mut out)?;
    composition(&mut out)?;
    Ok(out)
}

fn main() -> Result<()> {
    print!("{}", tutorial()?);
    Ok(())
}
