//! The layers ARCHITECTURE.md promises, checked from the `use` lines: in `reference-server` and in the
//! harness, the top-level modules import each other without a cycle, and the absences the document
//! names hold ("media knows nothing of routes", …). A tidy test: it reads the sources, it runs nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level modules of the crate at `src` and, for each, the other top-level modules it names
/// as `crate::<module>` anywhere in its files (`use crate::{a, b::c}` included).
fn import_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<String> = std::fs::read_dir(src)
        .expect("the source folder")
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".rs").map(str::to_string))
        .filter(|m| m != "lib" && m != "main")
        .collect();
    modules
        .iter()
        .map(|module| {
            let mut text = std::fs::read_to_string(src.join(format!("{module}.rs"))).unwrap_or_default();
            for file in files_under(&src.join(module)) {
                text.push_str(&std::fs::read_to_string(file).unwrap_or_default());
            }
            let named = crate_paths(&text).into_iter().filter(|m| m != module && modules.contains(m)).collect();
            (module.clone(), named)
        })
        .collect()
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

/// The first segment after every `crate::` in `text`; for `crate::{…}`, the first segment of each
/// item of the group.
fn crate_paths(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            names.extend(group.split(',').map(|item| ident(item.trim())).filter(|n| !n.is_empty()));
        } else {
            names.insert(ident(rest));
        }
    }
    names
}

/// A cycle in `graph`, as the modules along it, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|n| n == node) {
            let mut cycle = path[start..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

fn crate_src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(name).join("src")
}

fn assert_layered(name: &str, absent: &[(&str, &str)]) {
    let graph = import_graph(&crate_src(name));
    assert!(graph.len() > 5, "{name}: the modules were found: {graph:?}");
    if let Some(cycle) = find_cycle(&graph) {
        panic!("{name}: the modules import each other in a cycle: {}", cycle.join(" → "));
    }
    for (from, to) in absent {
        let named = graph.get(*from).unwrap_or_else(|| panic!("{name} has no module {from}"));
        assert!(!named.contains(*to), "{name}: {from} must know nothing of {to}, and imports it");
    }
}

#[test]
fn the_reference_server_is_layered_without_cycles() {
    assert_layered(
        "reference-server",
        &[
            ("media", "routes"),
            ("media", "mcp"),
            ("lift", "mcp"),
            ("mcp", "chat"),
            ("config", "auth"),
            ("auth", "routes"),
            ("template", "chat"),
            ("vision", "chat"),
        ],
    );
}

#[test]
fn the_harness_is_layered_without_cycles() {
    assert_layered("harness", &[("http", "case"), ("check", "http"), ("context", "case"), ("load", "case")]);
}

#[test]
fn the_reader_sees_grouped_imports_and_finds_a_planted_cycle() {
    let text = "use crate::{a::X, b};\nuse crate::c::Y;\nfn f() { crate::d::g() }";
    assert_eq!(crate_paths(text), ["a", "b", "c", "d"].map(String::from).into());
    let graph: BTreeMap<String, BTreeSet<String>> =
        [("a", vec!["b"]), ("b", vec!["c"]), ("c", vec!["a"]), ("d", vec![])]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
            .collect();
    assert_eq!(find_cycle(&graph), Some(["a", "b", "c", "a"].map(String::from).to_vec()));
    let mut acyclic = graph.clone();
    acyclic.insert("c".into(), BTreeSet::new());
    assert_eq!(find_cycle(&acyclic), None);
}
