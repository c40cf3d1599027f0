//! The layering of `src/`, checked: imports run one way (ARCHITECTURE.md), there is no import
//! cycle between modules or between files, and modules import a thing from the module that
//! defines it, never through the crate root's re-exports.
//!
//! The import graph is read from the source text: every path outside the `#[cfg(test)]` module
//! at the end of a file (tests may reach anything) that starts at the crate (`crate::a::b`), at
//! the file's own module or its parents (`self::a`, `super::a`), or at a module it declares in
//! a file of its own (`mod a;`, then `a::b`).

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
    "autodiff",
    "passes",
    "exec",
    "pjrt",
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

/// Whether `c` may be part of an identifier.
fn is_identifier(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The paths of the path or use tree at the start of `text`, each as its segments, and the
/// text after it: `a::b` gives `[a, b]`; `a::{b, c::{self, d}}` gives `[a, b]`, `[a, c]` and
/// `[a, c, d]`; `a::*` gives `[a]`.
fn use_tree(text: &str) -> (Vec<Vec<String>>, &str) {
    let mut segments = Vec::new();
    let mut rest = text;
    loop {
        let end = rest.find(|c: char| !is_identifier(c)).unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        segments.push(rest[..end].to_string());
        rest = &rest[end..];
        match rest.strip_prefix("::") {
            Some(next) => rest = next,
            None => return (vec![segments], rest),
        }
    }
    let Some(mut group) = rest.strip_prefix('{') else {
        return (vec![segments], rest);
    };
    let mut paths = Vec::new();
    loop {
        group = group.trim_start();
        if let Some(after) = group.strip_prefix('}') {
            return (paths, after);
        }
        let (items, after) = use_tree(group);
        for item in items {
            let mut path = segments.clone();
            path.extend(item.into_iter().filter(|segment| segment != "self"));
            paths.push(path);
        }
        // Past an `as` rename, to the next item.
        let end = after.find([',', '}']).unwrap_or(after.len());
        group = after[end..].strip_prefix(',').unwrap_or(&after[end..]);
        if group.is_empty() {
            return (paths, group);
        }
    }
}

/// Every path a piece of code names (`a::b`, `$crate::a`, each of `use a::{b, c}`), as its
/// segments; a path's later segments are not read as paths of their own.
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut at = 0;
    while let Some(offset) = code[at..].find(is_identifier) {
        let start = at + offset;
        let (found, after) = use_tree(&code[start..]);
        let end = code.len() - after.len();
        at = match code[start..end].contains("::") && !code[..start].ends_with(':') {
            true => {
                paths.extend(found.into_iter().filter(|path| !path.is_empty()));
                end
            }
            false => start + code[start..].find(|c: char| !is_identifier(c)).unwrap_or(code.len() - start),
        };
    }
    paths
}

/// The `crate::…` paths a piece of code names, each as its segments after `crate`.
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    paths(code).into_iter().filter(|path| path[0] == "crate").map(|path| path[1..].to_vec()).collect()
}

/// The modules a file declares in files of their own (`mod name;`, not `mod name { … }`).
fn declared_modules(code: &str) -> Vec<String> {
    let mut modules = Vec::new();
    let mut rest = code;
    while let Some(start) = rest.find("mod ") {
        let keyword = !rest[..start].ends_with(is_identifier);
        rest = rest[start + "mod ".len()..].trim_start();
        let end = rest.find(|c: char| !is_identifier(c)).unwrap_or(rest.len());
        if keyword && end > 0 && rest[end..].trim_start().starts_with(';') {
            modules.push(rest[..end].to_string());
        }
    }
    modules
}

/// The module a file of `src/` is, as its path from the crate root: `a/b/c.rs` is `a::b::c`,
/// `a/b/mod.rs` is `a::b`, `lib.rs` (and `main.rs`) the root.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).expect("a file of src/").with_extension("");
    let mut module: Vec<String> =
        relative.components().map(|c| c.as_os_str().to_str().expect("a UTF-8 path").to_string()).collect();
    if module.last().is_some_and(|name| ["mod", "lib", "main"].contains(&name.as_str())) {
        module.pop();
    }
    module
}

/// `path`, named in `module` (which declares `children` in files of their own), as a path from
/// the crate root: `crate::a`, `self::a`, `super::a` (`super::super::a`) or `child::a`. `None`
/// for a path that starts anywhere else (another crate, a type, an enum's variant).
fn from_the_root(module: &[String], children: &[String], path: &[String]) -> Option<Vec<String>> {
    let (base, rest) = match path[0].as_str() {
        "crate" => (&module[..0], &path[1..]),
        "self" => (module, &path[1..]),
        "super" => {
            let up = path.iter().take_while(|segment| *segment == "super").count();
            (&module[..module.len().checked_sub(up)?], &path[up..])
        }
        first if children.iter().any(|child| child == first) => (module, path),
        _ => return None,
    };
    Some(base.iter().chain(rest).cloned().collect())
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
        let (module, children) = (module_of(&src, &file), declared_modules(&code));
        let mut imports = BTreeMap::new();
        for path in paths(&code) {
            let Some(target) = from_the_root(&module, &children, &path).and_then(|p| resolve(&src, &p))
            else {
                continue;
            };
            if target != file {
                imports.entry(target).or_insert_with(|| path.join("::"));
            }
        }
        files.insert(file, imports);
    }
    Graph { src, files }
}

#[test]
fn the_import_graph_is_read() {
    let graph = graph();
    let imports = |file: &str| &graph.files[&graph.src.join(file)];
    let edge = |from: &str, to: &str| {
        let found = imports(from).contains_key(&graph.src.join(to));
        assert!(found, "{from} imports {to}: {:?}", imports(from));
    };
    edge("exec/plan.rs", "hlo/ir.rs");
    edge("exec/plan.rs", "exec/loop_program/mod.rs");
    // `use super::recycled` names a sibling; `pub use buffer::Buffer` after `mod buffer;` a
    // child.
    edge("storage/buffer.rs", "storage/recycled.rs");
    edge("storage/mod.rs", "storage/buffer.rs");
    assert!(LAYERS.len() + 1 >= std::fs::read_dir(&graph.src).unwrap().count() - 1);
}

#[test]
fn relative_paths_are_read_from_the_files_module() {
    let src = Path::new("src");
    let path = |text: &str| text.split("::").map(str::to_string).collect::<Vec<_>>();
    let (file, module_file) =
        (module_of(src, Path::new("src/a/b/c.rs")), module_of(src, Path::new("src/a/b/mod.rs")));
    assert_eq!((file.clone(), module_file.clone()), (path("a::b::c"), path("a::b")));
    let children = [String::from("run")];
    for (module, named, root) in [
        (&file, "super::x", "a::b::x"),
        (&module_file, "super::x", "a::x"),
        (&file, "super::super::x", "a::x"),
        (&file, "self::x", "a::b::c::x"),
        (&module_file, "run::RegisterFile", "a::b::run::RegisterFile"),
        (&module_file, "crate::hlo::ir", "hlo::ir"),
    ] {
        assert_eq!(from_the_root(module, &children, &path(named)), Some(path(root)), "{named}");
    }
    assert_eq!(from_the_root(&module_file, &children, &path("std::sync::Arc")), None);
    assert_eq!(from_the_root(&module_file, &children, &path("super::super::super::x")), None);
    let code =
        "mod run;\npub(crate) mod slots;\nmod inline {}\nuse super::{prefetch::Prefetch, run::{self, Tile}};";
    assert_eq!(declared_modules(code), ["run", "slots"]);
    assert_eq!(
        paths(code),
        [path("super::prefetch::Prefetch"), path("super::run"), path("super::run::Tile")]
    );
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
    /// Depth-first search from `file`, adding to `cycles` the files of each cycle it closes,
    /// in import order.
    fn visit<'g>(
        graph: &'g Graph,
        file: &'g PathBuf,
        state: &mut BTreeMap<&'g PathBuf, bool>,
        stack: &mut Vec<&'g PathBuf>,
        cycles: &mut Vec<Vec<&'g PathBuf>>,
    ) {
        match state.get(file) {
            Some(true) => {
                let start =
                    stack.iter().position(|f| *f == file).expect("a file being visited is on the stack");
                cycles.push(stack[start..].to_vec());
                return;
            }
            Some(false) => return,
            None => {}
        }
        state.insert(file, true);
        stack.push(file);
        for target in graph.files.get(file).into_iter().flat_map(|imports| imports.keys()) {
            visit(graph, target, state, stack, cycles);
        }
        stack.pop();
        state.insert(file, false);
    }
    let (mut state, mut cycles) = (BTreeMap::new(), Vec::new());
    for file in graph.files.keys() {
        visit(&graph, file, &mut state, &mut Vec::new(), &mut cycles);
    }
    let names: Vec<String> = (cycles.iter())
        .map(|cycle| {
            let files = cycle.iter().chain(&cycle[..1]);
            let names: Vec<String> =
                files.map(|f| f.strip_prefix(&graph.src).unwrap().display().to_string()).collect();
            names.join(" -> ")
        })
        .collect();
    assert!(names.is_empty(), "import cycles (each file imports the next):\n{}", names.join("\n"));
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
