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
    // The JSON has one object per package with `"name"` and a `"dependencies"` list whose
    // entries have `"name"` and `"kind"` (null for normal dependencies). A small scan is
    // enough for that shape.
    let mut graph = BTreeMap::new();
    for pkg in text.split("{\"name\":\"").skip(1) {
        let name = pkg.split('"').next().unwrap_or_default().to_string();
        if !name.starts_with("durin") {
            continue;
        }
        let deps_start = match pkg.find("\"dependencies\":[") {
            Some(i) => i,
            None => continue,
        };
        let deps_text = &pkg[deps_start..];
        let deps_text = &deps_text[..deps_text.find("],\"targets\"").unwrap_or(deps_text.len())];
        let mut deps = BTreeSet::new();
        for d in deps_text.split("{\"name\":\"").skip(1) {
            let dep = d.split('"').next().unwrap_or_default();
            let normal = d.contains("\"kind\":null");
            if dep.starts_with("durin") && normal {
                deps.insert(dep.to_string());
            }
        }
        graph.entry(name).or_insert(deps);
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
