//! XLA shapes and layout, step by step: the facts of `seeds/xla-shapes-and-layout` in order,
//! each shown with lazy-xla.
//!
//! Run with `cargo run --example layouts`.

use lazy_xla::{shape, ElementType, Layout, Literal, PaddingValue, Shape};

#[macro_use]
#[path = "common/text.rs"]
mod text;
use text::heading;

/// Bytes as letters, separated by spaces; a zero byte (padding) prints as `0`.
fn letters(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| if b == 0 { "0".to_string() } else { char::from(b).to_string() })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The seed's [2 x 3] array `a b c / d e f` (as bytes), in the layout `minor_to_major`.
fn seed_array(minor_to_major: &[i64]) -> lazy_xla::Result<Literal> {
    let shape = Shape::with_layout(ElementType::U8, &[2, 3], minor_to_major)?;
    Literal::from_vec(&shape, b"abcdef".to_vec())
}

/// The whole tutorial, as the text `main` prints.
pub fn tutorial() -> lazy_xla::Result<String> {
    let mut out = String::new();
    say!(out, "XLA shapes and layout, with lazy-xla");

    heading(&mut out, "1. Shape");
    say!(out, "A shape is an element type, the size of every dimension, and a layout.");
    let s = shape!(f32[2, 3]);
    say!(out, "shape!(f32[2, 3])      = {s}");
    say!(out, "element type           = {}", s.element_type());
    say!(out, "dimensions             = {:?}", s.dimensions());
    say!(out, "element count          = {}", s.element_count());

    heading(&mut out, "2. Rank and true rank");
    say!(out, "The rank is the number of dimensions; the true rank counts those whose size is not 1.");
    for shape in [shape!(f32[]), shape!(f32[2, 3]), shape!(f32[1, 3, 1, 4]), shape!(f32[2, 0, 1])] {
        say!(out, "{:<22} rank {}, true rank {}", shape.to_string(), shape.rank(), shape.true_rank());
    }
    say!(out, "(A size-0 dimension counts toward the true rank, as in XLA's TrueRank.)");

    heading(&mut out, "3. Dimension numbering");
    let (a, b, c) = (5, 6, 7);
    let abc = shape!(f32[a, b, c]);
    say!(out, "[A x B x C] = {abc}: dimension 0 has size A, 1 has B, 2 has C.");
    for d in 0..3 {
        say!(out, "dimension({d})  = {}", abc.dimension(d));
    }
    say!(out, "Letters often name them: 2-D y, x; 3-D z, y, x; 4-D p, z, y, x.");
    say!(out, "Negative indices count from the end, as in Python:");
    for d in [-1, -2, -3] {
        say!(out, "dimension({d}) = {}", abc.dimension(d));
    }

    heading(&mut out, "4. Layout: minor_to_major");
    say!(out, "minor_to_major lists the dimensions from the fastest-varying in memory to the slowest.");
    say!(out, "The [2 x 3] array");
    say!(out, "    a b c");
    say!(out, "    d e f");
    for (minor_to_major, name) in
        [([0, 1], "column-major: dim 0 is minor"), ([1, 0], "row-major: dim 1 is minor")]
    {
        let literal = seed_array(&minor_to_major)?;
        say!(
            out,
            "minor_to_major {:?} ({name}): {} -> memory {}",
            minor_to_major,
            literal.shape(),
            letters(literal.memory::<u8>()?)
        );
    }

    heading(&mut out, "5. The default layout");
    say!(out, "A new shape's layout is major-to-minor in dimension order: {{rank-1, ..., 1, 0}}.");
    for shape in
        [shape!(f32[7]), shape!(f32[2, 3]), shape!(f32[2, 3, 4]), Shape::new(ElementType::S32, &[1, 2, 3, 4])]
    {
        say!(out, "{:<24} minor_to_major {:?}", shape.to_string(), shape.layout().minor_to_major());
    }

    heading(&mut out, "6. Padding");
    say!(
        out,
        "padded_dimensions gives every dimension a (larger) size in memory; padding_value fills the gap."
    );
    let layout = Layout::new(&[0, 1]).with_padding(&[3, 5], PaddingValue::Zero)?;
    let padded = seed_array(&[1, 0])?.relayout(&layout)?;
    say!(out, "The [2 x 3] array padded to [3, 5] with zeros, column-major: {}", padded.shape());
    say!(out, "memory: {}", letters(padded.memory::<u8>()?));
    say!(out, "which is the padded array below, stored with the same minor-to-major order:");
    let memory = padded.memory::<u8>()?;
    let strides = padded.shape().strides();
    let sizes = padded.shape().padded_sizes();
    for row in 0..sizes[0] {
        let cells: Vec<u8> =
            (0..sizes[1]).map(|col| memory[(row * strides[0] + col * strides[1]) as usize]).collect();
        say!(out, "    {}", letters(&cells));
    }
    say!(
        out,
        "Values still go in and come out in logical order: {:?}",
        padded.to_vec::<u8>()?.iter().map(|&b| char::from(b)).collect::<String>()
    );

    heading(&mut out, "7. IndexUtil: linear <-> multidimensional indices");
    say!(out, "linear = I[L0] + D[L0] * (I[L1] + D[L1] * (I[L2] + ...)), L = minor_to_major, D = sizes.");
    say!(out, "(The first two are golden cases of XLA's index_util_test.cc.)");
    for shape in
        [shape!(f32[10, 20, 30]{2, 1, 0}), shape!(f32[10, 20, 30]{1, 2, 0}), shape!(f32[10, 20, 30]{0, 1, 2})]
    {
        let index = [3, 5, 7];
        let linear = shape.linear_index(&index)?;
        say!(out, "{:<24} strides {:?}", shape.to_string(), shape.strides());
        say!(
            out,
            "    linear_index({index:?}) = {linear}; multi_index({linear}) = {:?}",
            shape.multi_index(linear)?
        );
    }
    say!(out, "With padding, positions in the padding are not elements:");
    let padded_shape = padded.shape();
    for linear in [3, 2] {
        match padded_shape.multi_index(linear) {
            Ok(index) => say!(out, "    {padded_shape}: multi_index({linear}) = {index:?}"),
            Err(error) => say!(out, "    {padded_shape}: multi_index({linear}) fails: {error}"),
        }
    }
    Ok(out)
}

fn main() -> lazy_xla::Result<()> {
    print!("{}", tutorial()?);
    Ok(())
}
