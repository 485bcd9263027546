//! Every `durin` command the book shows with its output (a line `$ durin ARGS` in a
//! ```text block, followed by what it prints) runs as written and prints that, so the book
//! cannot drift from the compiler. A command runs in the chapter's own folder of programs
//! (`docs/src/first-pipeline/` for `first-pipeline.md`) when the file it names is there,
//! else in the repository's root.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A command of the book and the output it shows.
struct Shown {
    chapter: PathBuf,
    args: Vec<String>,
    output: String,
}

/// The commands of one chapter's ```text blocks.
fn commands(chapter: &Path, text: &str) -> Vec<Shown> {
    let mut out = Vec::new();
    for block in text.split("```text\n").skip(1) {
        let block = block.split("```").next().unwrap_or_default();
        let mut current: Option<Shown> = None;
        for line in block.lines() {
            if let Some(args) = line.strip_prefix("$ durin ") {
                out.extend(current.take());
                current = Some(Shown {
                    chapter: chapter.to_path_buf(),
                    args: args.split_whitespace().map(String::from).collect(),
                    output: String::new(),
                });
            } else if let Some(c) = current.as_mut() {
                c.output.push_str(line);
                c.output.push('\n');
            }
        }
        out.extend(current);
    }
    out
}

/// Where a command runs: the chapter's folder when it holds the file the command names.
fn folder(root: &Path, c: &Shown) -> PathBuf {
    let own = c.chapter.with_extension("");
    let names_own_file = c
        .args
        .iter()
        .filter(|a| a.ends_with(".art"))
        .any(|a| own.join(a).is_file());
    if names_own_file {
        own
    } else {
        root.to_path_buf()
    }
}

#[test]
fn the_books_commands_print_what_the_book_shows() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut shown = Vec::new();
    for entry in std::fs::read_dir(root.join("docs/src")).expect("docs/src exists") {
        let path = entry.expect("readable entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            let text = std::fs::read_to_string(&path).expect("readable chapter");
            shown.extend(commands(&path, &text));
        }
    }
    assert!(
        shown.len() >= 10,
        "expected the tutorial's commands, found {}",
        shown.len()
    );
    let mut wrong = Vec::new();
    for c in &shown {
        let dir = folder(&root, c);
        for a in c.args.iter().filter(|a| a.ends_with(".art")) {
            assert!(
                dir.join(a).is_file(),
                "{}: `durin {}` names {a}, which is not in the repository",
                c.chapter.display(),
                c.args.join(" ")
            );
        }
        let out = Command::new(env!("CARGO_BIN_EXE_durin"))
            .args(&c.args)
            .current_dir(&dir)
            .output()
            .expect("durin runs");
        let got = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if got.trim_end() != c.output.trim_end() {
            wrong.push(format!(
                "{}: `durin {}` prints\n{got}the book shows\n{}",
                c.chapter.display(),
                c.args.join(" "),
                c.output
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
