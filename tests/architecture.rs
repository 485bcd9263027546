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
