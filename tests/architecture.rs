//! The architecture's invariants that a test can check (docs/src/architecture.md): the
//! crate graph from `cargo metadata`, and the size of the command line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Each workspace crate and the workspace crates it depends on (normal dependencies).
fn crate_graph() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(root())
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    // The JSON has one object per package, `{"name":"P","version":..`, whose
    // `"dependencies"` list holds objects `{"name":"D","source":..,"kind":K,..}` (K is
    // null for a normal dependency) and ends where `"targets"` begins. A scan of that
    // shape is enough (and the test below fails if it reads no edge).
    let mut graph = BTreeMap::new();
    for pkg in text.split("{\"name\":\"").skip(1) {
        let Some((name, rest)) = pkg.split_once('"') else {
            continue;
        };
        if !rest.starts_with(",\"version\":") || !name.starts_with("durin") {
            continue;
        }
        graph.insert(name.to_string(), BTreeSet::new());
    }
    let mut current: Option<String> = None;
    for chunk in text.split("{\"name\":\"").skip(1) {
        let Some((name, rest)) = chunk.split_once('"') else {
            continue;
        };
        if rest.starts_with(",\"version\":") {
            current = graph.contains_key(name).then(|| name.to_string());
        } else if let (Some(p), true) = (&current, rest.starts_with(",\"source\":")) {
            let kind_null = rest
                .split("\"rename\"")
                .next()
                .is_some_and(|h| h.contains("\"kind\":null"));
            if name.starts_with("durin") && kind_null {
                graph
                    .get_mut(p)
                    .expect("a package")
                    .insert(name.to_string());
            }
        }
    }
    graph
}

#[test]
fn crates_depend_only_on_what_the_architecture_allows() {
    let allowed: BTreeMap<&str, &[&str]> = BTreeMap::from([
        ("durin-diag", &[][..]),
        ("durin-ir", &["durin-diag"][..]),
        ("durin-frontend", &["durin-diag", "durin-ir"][..]),
        ("durin-passes", &["durin-diag", "durin-ir"][..]),
        ("durin-backend-llvm", &["durin-diag", "durin-ir"][..]),
        ("durin-backend-cranelift", &["durin-diag", "durin-ir"][..]),
        ("durin-backend-cuda", &["durin-diag", "durin-ir"][..]),
        ("durin-runtime", &[][..]),
        (
            "durin-driver",
            &[
                "durin-diag",
                "durin-ir",
                "durin-frontend",
                "durin-passes",
                "durin-backend-llvm",
                "durin-backend-cranelift",
                "durin-backend-cuda",
                "durin-runtime",
            ][..],
        ),
        ("durin", &["durin-driver", "durin-passes"][..]),
        ("durin-fuzz", &[][..]),
    ]);
    let graph = crate_graph();
    assert_eq!(
        graph.keys().map(String::as_str).collect::<BTreeSet<_>>(),
        allowed.keys().copied().collect::<BTreeSet<_>>(),
        "the workspace's crates are those of the architecture document"
    );
    for (krate, deps) in &graph {
        for d in deps {
            assert!(
                allowed[krate.as_str()].contains(&d.as_str()),
                "`{krate}` depends on `{d}`, which docs/src/architecture.md does not allow"
            );
        }
        // And the document names no edge that is not there (so the scan above read them).
        let want: BTreeSet<String> = allowed[krate.as_str()]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            deps, &want,
            "`{krate}`'s dependencies differ from the document's"
        );
    }
}

#[test]
fn the_command_line_only_parses_arguments() {
    let main = std::fs::read_to_string(root().join("src/main.rs")).expect("src/main.rs");
    let lines = main.lines().count();
    assert!(lines < 300, "src/main.rs has {lines} lines");
    let files: Vec<_> = std::fs::read_dir(root().join("src"))
        .expect("src/")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, ["main.rs"], "src/ holds only the argument parser");
    for uses in ["durin_ir::", "durin_frontend", "durin_backend", "World"] {
        assert!(!main.contains(uses), "src/main.rs uses `{uses}`");
    }
}

/// The modules of the crate whose sources are in `dir` (`gpu::stage` for
/// `gpu/stage.rs`, `gpu` for `gpu/mod.rs`, `` for `lib.rs`) with their text, comments
/// left out.
fn modules(dir: &std::path::Path) -> BTreeMap<String, String> {
    fn walk(dir: &std::path::Path, prefix: &str, out: &mut BTreeMap<String, String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("a source folder")
            .flatten()
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().into_owned();
            let path = e.path();
            if path.is_dir() {
                walk(&path, &format!("{prefix}{name}::"), out);
                continue;
            }
            let Some(stem) = name.strip_suffix(".rs") else {
                continue;
            };
            let module = match stem {
                "lib" | "mod" => prefix.trim_end_matches("::").to_string(),
                _ => format!("{prefix}{stem}"),
            };
            let text = std::fs::read_to_string(&path).expect("a source file");
            let code: Vec<&str> = text
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect();
            out.insert(module, code.join("\n"));
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, "", &mut out);
    out
}

/// The paths a `use` tree names: `a::{b, c::{d, e}}` is `a::b`, `a::c::d`, `a::c::e`.
fn expand_use(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        return vec![tree.split(" as ").next().unwrap_or(tree).trim().to_string()];
    };
    let (prefix, rest) = tree.split_at(open);
    let inner = &rest[1..rest.rfind('}').expect("a closing brace")];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(expand_use)
        .map(|p| match p.as_str() {
            "self" => prefix.trim_end_matches("::").to_string(),
            _ => format!("{prefix}{p}"),
        })
        .collect()
}

/// Each module of the crate in `dir` and the modules of the same crate it imports: every
/// path through `crate::` or `super::`, in a `use` or in code, taken to the longest module
/// it starts with (a path to the crate's root alone, such as `crate::Config`, counts for
/// no module: the root only re-exports).
fn module_graph(dir: &std::path::Path) -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules(dir);
    let mut graph = BTreeMap::new();
    for (m, text) in &mods {
        let parent = m.rsplit_once("::").map_or("", |(p, _)| p);
        let mut paths = Vec::new();
        for (i, _) in text.match_indices("use ") {
            let stmt = &text[i + 4..];
            let stmt = &stmt[..stmt.find(';').unwrap_or(stmt.len())];
            paths.extend(expand_use(stmt));
        }
        for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')) {
            if word.starts_with("crate::") || word.starts_with("super::") {
                paths.push(word.to_string());
            }
        }
        let mut deps = BTreeSet::new();
        for p in paths {
            let absolute = if let Some(rest) = p.strip_prefix("crate::") {
                rest.to_string()
            } else if let Some(rest) = p.strip_prefix("super::") {
                let base = if mods.contains_key(&format!("{m}::x")) {
                    m.as_str()
                } else {
                    parent
                };
                if base.is_empty() {
                    rest.to_string()
                } else {
                    format!("{base}::{rest}")
                }
            } else {
                continue;
            };
            let mut segments: Vec<&str> = absolute.split("::").collect();
            while !segments.is_empty() {
                let candidate = segments.join("::");
                if mods.contains_key(&candidate) && !candidate.is_empty() {
                    if candidate != *m {
                        deps.insert(candidate);
                    }
                    break;
                }
                segments.pop();
            }
        }
        graph.insert(m.clone(), deps);
    }
    graph
}

/// A circle of imports in `graph`, if there is one.
fn find_circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        g: &BTreeMap<String, BTreeSet<String>>,
        m: &str,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(m) {
            Some(2) => return None,
            Some(1) => {
                let at = path.iter().position(|p| p == m).expect("on the path");
                return Some(path[at..].to_vec());
            }
            _ => {}
        }
        state.insert(m.to_string(), 1);
        path.push(m.to_string());
        for d in g.get(m).into_iter().flatten() {
            if let Some(c) = visit(g, d, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(m.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    graph
        .keys()
        .find_map(|m| visit(graph, m, &mut state, &mut Vec::new()))
}

fn passes_dir() -> PathBuf {
    root().join("passes/src")
}

/// The modules of `passes` that hold a built-in pass (a type implementing `Pass`).
fn pass_modules() -> BTreeSet<String> {
    modules(&passes_dir())
        .into_iter()
        .filter(|(_, text)| text.contains("impl Pass for"))
        .map(|(m, _)| m)
        .collect()
}

#[test]
fn the_module_graph_reads_imports() {
    // The scan itself, on what it must find: the GPU passes import the GPU analyses.
    let g = module_graph(&passes_dir());
    for (from, to) in [
        ("gpu::stage", "gpu::buffers"),
        ("gpu::stage", "gpu::affine"),
        ("gpu::kernels", "gpu::launch"),
        ("gpu::buffers", "gpu::footprint"),
        ("pipeline", "gpu::stage"),
        ("simplify", "pe"),
    ] {
        assert!(g[from].contains(to), "{from} imports {to}: {:?}", g[from]);
    }
    assert!(pass_modules().contains("gpu::kernels"));
    let circle: BTreeMap<String, BTreeSet<String>> = [("a", "b"), ("b", "c"), ("c", "a")]
        .into_iter()
        .map(|(x, y)| (x.to_string(), BTreeSet::from([y.to_string()])))
        .collect();
    assert!(find_circle(&circle).is_some_and(|c| c.len() == 3));
}

#[test]
fn the_passes_import_in_one_direction() {
    let g = module_graph(&passes_dir());
    assert_eq!(find_circle(&g), None, "an import circle in `passes`");
}

#[test]
fn analyses_import_no_pass_and_passes_compose_only_as_documented() {
    let g = module_graph(&passes_dir());
    let passes = pass_modules();
    // The manager (the list of passes and the pipelines) imports every pass.
    let manager = ["", "pipeline"];
    // A pass built from another pass's entry point: docs/src/architecture.md says why.
    let composed: BTreeSet<(&str, &str)> = BTreeSet::from([
        ("inline", "pe"),
        ("simplify", "pe"),
        ("simplify", "cleanup"),
        ("gpu::stage", "simplify"),
        ("gpu::kernels", "closure_conv"),
    ]);
    for (m, deps) in &g {
        if manager.contains(&m.as_str()) {
            continue;
        }
        for d in deps.intersection(&passes) {
            assert!(
                passes.contains(m),
                "`{m}` is no pass (an analysis or a helper) and imports the pass `{d}`"
            );
            assert!(
                composed.contains(&(m.as_str(), d.as_str())),
                "the pass `{m}` imports the pass `{d}`: move what they share into an analysis"
            );
        }
    }
}

#[test]
fn pass_modules_are_private() {
    let lib = std::fs::read_to_string(passes_dir().join("lib.rs")).expect("lib.rs");
    for line in lib.lines() {
        assert!(
            !line.trim_start().starts_with("pub mod"),
            "passes/src/lib.rs makes a module public: {line}"
        );
    }
}

#[test]
fn the_ir_does_no_io() {
    let ir = modules(&root().join("ir/src"));
    assert!(ir.len() > 10, "the IR crate's modules were read");
    for (m, text) in ir {
        for io in [
            "std::fs",
            "std::io::std",
            "std::net",
            "std::process",
            "println!",
            "eprintln!",
            "print!(",
            "eprint!(",
        ] {
            assert!(!text.contains(io), "durin-ir's `{m}` does IO (`{io}`)");
        }
    }
}

#[test]
fn only_the_passes_rewrite_the_ir() {
    // The IR crate builds worlds, the front end lowers into one, the passes change them;
    // no other crate's code takes a world to change.
    let others = [
        "driver/src",
        "backend-llvm/src",
        "backend-cranelift/src",
        "backend-cuda/src",
        "runtime/src",
        "src",
        "fuzz/src",
    ];
    let mut read = 0;
    for dir in others {
        for (m, text) in modules(&root().join(dir)) {
            read += 1;
            let squeezed: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
            for pattern in ["&mut World", "&mut durin_ir::World", "&'_ mut World"] {
                assert!(
                    !squeezed.contains(pattern),
                    "{dir}: `{m}` takes a world to change (`{pattern}`): such code belongs in `passes`"
                );
            }
        }
    }
    assert!(read > 20, "the other crates' modules were read ({read})");
}
