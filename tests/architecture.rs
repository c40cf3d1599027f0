//! The layering of `src/`, checked: imports run one way (ARCHITECTURE.md), there is no import
//! cycle between modules or between files, and modules import a thing from the module that
//! defines it, never through the crate root's re-exports.
//!
//! The import graph is read from the source text: every `crate::a::b` path outside the
//! `#[cfg(test)]` module at the end of a file (tests may reach anything).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The top-level modules from the bottom layer up: a module may import only modules listed
/// before it. The three stages come last, in the order data flows: the builder makes a
/// computation, the passes rewrite it, the executor runs it.
const LAYERS: &[&str] = &[
    "element_type",
    "error",
    "shape",
    "storage",
    "literal",
    "attributes",
    "shape_inference",
    "hlo",
    "builder",
    "passes",
    "exec",
];

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// A file's code without its trailing `#[cfg(test)] mod tests { … }` and without comments.
fn production_code(text: &str) -> String {
    let code = match text.find("#[cfg(test)]\nmod tests") {
        Some(start) => &text[..start],
        None => text,
    };
    code.lines()
        .map(|line| line.split_once("//").map_or(line, |(before, _)| before))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `crate::…` paths a piece of code names (`$crate::` in macros included), each as its
/// segments after `crate`; a `use crate::a::{b, c}` gives `a::b` and `a::c`.
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut rest = code;
    while let Some(start) = rest.find("crate::") {
        let before = rest[..start].chars().last();
        rest = &rest[start + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `lazy_xla_crate::` or similar, not a crate path
        }
        let mut segments = Vec::new();
        let mut tail = rest;
        loop {
            let end = tail.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(tail.len());
            if end == 0 {
                break;
            }
            segments.push(tail[..end].to_string());
            tail = &tail[end..];
            match tail.strip_prefix("::") {
                Some(next) => tail = next,
                None => break,
            }
        }
        if let Some(group) = tail.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for item in inner.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let mut path = segments.clone();
                path.extend(item.split("::").map(|s| s.trim().to_string()));
                paths.push(path);
            }
        } else if !segments.is_empty() {
            paths.push(segments);
        }
    }
    paths
}

/// The file a path leads to: the deepest module file among its prefixes.
fn resolve(src: &Path, segments: &[String]) -> Option<PathBuf> {
    (1..=segments.len()).rev().find_map(|n| {
        let module = segments[..n].join("/");
        [src.join(format!("{module}.rs")), src.join(module).join("mod.rs")].into_iter().find(|p| p.exists())
    })
}

/// The top-level module a file of `src/` belongs to (`None` for `lib.rs`).
fn top_module(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).ok()?;
    let first = relative.components().next()?.as_os_str().to_str()?;
    // main.rs is the `lazy-xla` binary: its own crate, on the public API.
    (first != "lib.rs" && first != "main.rs").then(|| first.trim_end_matches(".rs").to_string())
}

struct Graph {
    src: PathBuf,
    /// File → the files it imports, with a path that shows each import.
    files: BTreeMap<PathBuf, BTreeMap<PathBuf, String>>,
}

fn graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    for file in rust_files(&src) {
        let code = production_code(&std::fs::read_to_string(&file).expect("a readable source file"));
        let mut imports = BTreeMap::new();
        for path in crate_paths(&code) {
            if let Some(target) = resolve(&src, &path) {
                if target != file {
                    imports.entry(target).or_insert_with(|| format!("crate::{}", path.join("::")));
                }
            }
        }
        files.insert(file, imports);
    }
    Graph { src, files }
}

#[test]
fn the_import_graph_is_read() {
    let graph = graph();
    let plan = graph.src.join("exec/plan.rs");
    let imports = &graph.files[&plan];
    assert!(imports.contains_key(&graph.src.join("hlo/ir.rs")), "{imports:?}");
    assert!(imports.contains_key(&graph.src.join("exec/loop_program/mod.rs")), "{imports:?}");
    assert!(LAYERS.len() + 1 >= std::fs::read_dir(&graph.src).unwrap().count() - 1);
}

#[test]
fn imports_run_down_the_layers() {
    let graph = graph();
    let rank = |module: &str| LAYERS.iter().position(|&m| m == module);
    let mut wrong = Vec::new();
    for (file, imports) in &graph.files {
        let Some(from) = top_module(&graph.src, file) else { continue };
        let from_rank = rank(&from).unwrap_or_else(|| panic!("module {from} is not in LAYERS"));
        for (target, path) in imports {
            let Some(to) = top_module(&graph.src, target) else {
                wrong.push(format!("{} imports the crate root: {path}", file.display()));
                continue;
            };
            if to != from && rank(&to).is_none_or(|r| r > from_rank) {
                wrong.push(format!("{from} imports {to}, a later layer: {path} in {}", file.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the layering:\n{}", wrong.join("\n"));
}

#[test]
fn no_file_imports_itself_through_others() {
    let graph = graph();
    // Depth-first search for a cycle, reporting the first one found.
    fn visit<'g>(
        graph: &'g Graph,
        file: &'g PathBuf,
        state: &mut BTreeMap<&'g PathBuf, u8>,
        stack: &mut Vec<&'g PathBuf>,
    ) -> Option<Vec<&'g PathBuf>> {
        match state.get(file) {
            Some(1) => {
                let start = stack.iter().position(|f| *f == file).unwrap_or(0);
                return Some(stack[start..].to_vec());
            }
            Some(_) => return None,
            None => {}
        }
        state.insert(file, 1);
        stack.push(file);
        for target in graph.files.get(file).into_iter().flat_map(|imports| imports.keys()) {
            if let Some(cycle) = visit(graph, target, state, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        state.insert(file, 2);
        None
    }
    let mut state = BTreeMap::new();
    for file in graph.files.keys() {
        if let Some(cycle) = visit(&graph, file, &mut state, &mut Vec::new()) {
            let names: Vec<String> =
                cycle.iter().map(|f| f.strip_prefix(&graph.src).unwrap().display().to_string()).collect();
            panic!("an import cycle: {}", names.join(" -> "));
        }
    }
}

#[test]
fn modules_import_from_the_defining_module_not_the_crate_root() {
    let graph = graph();
    let mut through_root = Vec::new();
    for file in graph.files.keys().filter(|f| !f.ends_with("lib.rs")) {
        let code = production_code(&std::fs::read_to_string(file).unwrap());
        for path in crate_paths(&code) {
            let first = &path[0];
            if first.starts_with(|c: char| c.is_uppercase())
                || !graph.src.join(first).exists() && !graph.src.join(format!("{first}.rs")).exists()
            {
                through_root.push(format!("{}: crate::{}", file.display(), path.join("::")));
            }
        }
    }
    assert!(through_root.is_empty(), "imports through the crate root:\n{}", through_root.join("\n"));
}
