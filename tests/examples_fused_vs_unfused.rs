//! `examples/fused_vs_unfused.rs` shows the HLO before and after fusion and checks both modes
//! agree: pin what it prints, at a small size.

#[allow(dead_code)]
#[path = "../examples/fused_vs_unfused.rs"]
mod fused_vs_unfused;

/// The report at 8×16 with one timed run, or the error that stopped it.
fn report() -> String {
    match fused_vs_unfused::report(8, 16, 1) {
        Ok(text) => text,
        Err(error) => panic!("the report failed: {error}"),
    }
}

/// The part of `text` after the heading `start` and before the heading `end`.
fn section<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(start).unwrap_or_else(|| panic!("missing heading {start:?} in\n{text}"));
    let to = text[from..].find(end).unwrap_or_else(|| panic!("missing heading {end:?} in\n{text}"));
    &text[from..from + to]
}

/// The lines of the `ENTRY` computation in an HLO module's text, up to its closing brace.
fn entry_lines(hlo: &str) -> Vec<&str> {
    hlo.lines().skip_while(|line| !line.starts_with("ENTRY")).take_while(|line| *line != "}").collect()
}

#[test]
fn unoptimized_hlo_has_explicit_broadcasts_and_no_fusion() {
    let text = report();
    let before = section(&text, "HLO as built", "HLO after optimization");
    assert!(before.contains("broadcast("), "{before}");
    assert!(before.contains("broadcast(b.2), dimensions={1}"), "{before}");
    assert!(before.contains("dimensions={0}"), "{before}");
    assert!(!before.contains("fusion("), "{before}");
    assert!(before.contains("ENTRY w1"), "{before}");
}

#[test]
fn optimized_hlo_is_one_loop_fusion() {
    let text = report();
    let after = section(&text, "HLO after optimization", "Same values");
    assert!(after.contains("kind=kLoop"), "{after}");
    assert!(after.contains("calls=fused_computation."), "{after}");
    let entry = entry_lines(after);
    assert!(!entry.is_empty(), "no ENTRY in\n{after}");
    let fusions: usize = entry.iter().map(|line| line.matches("fusion(").count()).sum();
    assert_eq!(fusions, 1, "ENTRY should hold exactly one fusion:\n{}", entry.join("\n"));
    let root = entry.iter().find(|line| line.trim_start().starts_with("ROOT")).expect("a ROOT line");
    assert!(root.contains("fusion(") && root.contains("f32[8,16]"), "{root}");
}

#[test]
fn both_modes_agree_and_are_timed() {
    let text = report();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.iter().any(|line| line.starts_with("fused and unfused agree on all 128 values")), "{text}");
    assert!(!text.contains("DISAGREE"), "{text}");
    assert!(
        lines.iter().any(|line| line.starts_with("fused ") && line.contains(" ms over 1 run(s)")),
        "{text}"
    );
    assert!(
        lines.iter().any(|line| line.starts_with("unfused ") && line.contains(" ms over 1 run(s)")),
        "{text}"
    );
    assert!(lines.iter().any(|line| line.starts_with("unfused / fused = ")), "{text}");
}

#[test]
fn the_pictures_are_written_with_the_fusion_as_a_cluster() {
    let folder = std::env::temp_dir().join(format!("lazy-xla-pictures-{}", std::process::id()));
    let text =
        fused_vs_unfused::pictures(&folder).unwrap_or_else(|error| panic!("the pictures failed: {error}"));
    let before = std::fs::read_to_string(folder.join("w1.before.dot")).unwrap();
    let after = std::fs::read_to_string(folder.join("w1.after.dot")).unwrap();
    assert!(before.starts_with("digraph") && !before.contains("cluster"), "{before}");
    assert!(after.contains("subgraph cluster_") && after.contains("kLoop"), "{after}");
    assert!(text.contains("w1.after.dot"), "{text}");
    std::fs::remove_dir_all(&folder).unwrap();
}
