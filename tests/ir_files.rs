//! IR file tests: every `tests/ir/NAME.dir` is run through `durin ir` and the exit status,
//! standard output and standard error are compared with `tests/ir/NAME.out`.
//!
//! A file's first lines may say how to run it:
//!
//! ```text
//! ; args: --run 10
//! ```
//!
//! After an intended change, `DURIN_BLESS=1 cargo test --test ir_files` rewrites the `.out`
//! files; read the diff before committing it.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn args_of(src: &str) -> Vec<String> {
    src.lines()
        .take_while(|l| l.starts_with(';'))
        .find_map(|l| l.strip_prefix("; args:"))
        .map(|a| a.split_whitespace().map(String::from).collect())
        .unwrap_or_default()
}

fn run(path: &Path) -> String {
    let src = std::fs::read_to_string(path).expect("test file is readable");
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .expect("utf-8 file name");
    let out = Command::new(env!("CARGO_BIN_EXE_durin"))
        .current_dir(path.parent().expect("file in a folder"))
        .arg("ir")
        .arg(name)
        .args(args_of(&src))
        .output()
        .expect("durin runs");
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        out.status
            .code()
            .map_or("signal".to_string(), |c| c.to_string()),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn ir_files() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/ir");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/ir exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "dir"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no IR test files found");
    let bless = common::bless();
    let mut failures = Vec::new();
    for f in &files {
        let actual = run(f);
        let expected_path = f.with_extension("out");
        if bless {
            std::fs::write(&expected_path, &actual).expect("write expected output");
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if expected != actual {
            failures.push(format!(
                "{}:\n--- expected\n{expected}\n--- actual\n{actual}",
                f.display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} IR files differ:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}
