//! `examples/layouts.rs` prints the seed's facts: pin the lines that carry them.

#[allow(dead_code)]
#[path = "../examples/layouts.rs"]
mod layouts;

/// The tutorial's text, or the error that stopped it.
fn tutorial() -> String {
    match layouts::tutorial() {
        Ok(text) => text,
        Err(error) => panic!("the tutorial failed: {error}"),
    }
}

#[test]
fn memory_orders_are_the_seeds() {
    let text = tutorial();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.contains(
        &"minor_to_major [0, 1] (column-major: dim 0 is minor): u8[2,3]{0,1} -> memory a d b e c f"
    ));
    assert!(lines
        .contains(&"minor_to_major [1, 0] (row-major: dim 1 is minor): u8[2,3]{1,0} -> memory a b c d e f"));
    assert!(lines.contains(&"memory: a d 0 b e 0 c f 0 0 0 0 0 0 0"));
}

#[test]
fn padded_array_picture() {
    let text = tutorial();
    let picture = "    a b c 0 0\n    d e f 0 0\n    0 0 0 0 0\n";
    assert!(text.contains(picture), "{text}");
}

#[test]
fn shape_rank_dimensions_and_default_layout() {
    let text = tutorial();
    let lines: Vec<&str> = text.lines().collect();
    for expected in [
        "shape!(f32[2, 3])      = f32[2,3]{1,0}",
        "f32[1,3,1,4]{3,2,1,0}  rank 4, true rank 2",
        "f32[2,0,1]{2,1,0}      rank 3, true rank 2",
        "dimension(-1) = 7",
        "dimension(-2) = 6",
        "dimension(-3) = 5",
        "f32[2,3,4]{2,1,0}        minor_to_major [2, 1, 0]",
    ] {
        assert!(lines.contains(&expected), "missing {expected:?} in\n{text}");
    }
}

#[test]
fn index_conversions() {
    let text = tutorial();
    for expected in [
        "    linear_index([3, 5, 7]) = 1957; multi_index(1957) = [3, 5, 7]",
        "    linear_index([3, 5, 7]) = 1945; multi_index(1945) = [3, 5, 7]",
        "    linear_index([3, 5, 7]) = 1453; multi_index(1453) = [3, 5, 7]",
        "    u8[2,3]{0,1:pad(3,5)=zero}: multi_index(3) = [0, 1]",
    ] {
        assert!(text.lines().any(|line| line == expected), "missing {expected:?} in\n{text}");
    }
}

#[test]
fn sections_come_in_the_seeds_order() {
    let text = tutorial();
    let headings = [
        "1. Shape",
        "2. Rank and true rank",
        "3. Dimension numbering",
        "4. Layout: minor_to_major",
        "5. The default layout",
        "6. Padding",
        "7. IndexUtil: linear <-> multidimensional indices",
    ];
    let positions: Vec<usize> = headings
        .iter()
        .map(|h| text.find(&format!("\n{h}\n")).unwrap_or_else(|| panic!("missing heading {h:?}")))
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
}
