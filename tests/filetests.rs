//! Filetests, in process: every file under `tests/filetests/` (`.art` source or `.dir` IR)
//! states in its header what to do with it and, inline, what must come out. One test runs
//! them all through `durin_driver::Session`, as the command line would, without spawning
//! a process.
//!
//! Header lines (comments at the top: `//` in `.art`, `;` in `.dir`):
//!
//! - `passes: LIST`: the pipeline (`pe,cleanup`, `O2,closure-conv`); the IR after it is the
//!   output (`durin check --passes LIST --print-ir`, or `durin ir --passes LIST`);
//! - `emit: cuda`: the output is the program's CUDA C (`durin build --emit cuda`) after
//!   the native pipeline (or `passes`, made native);
//! - `target: cpu`: compile for the CPU (`--target cpu`; the default is CUDA);
//! - `report: shm`: the report of each kernel's buffers (`--report shm`) is output too;
//! - `shm: on`, `shm: off`: stage every read-only buffer that can be staged into shared
//!   memory, or none (`--shm on|off`; the default is `auto`, the cost model's choice);
//! - `split-min-blocks: N`: the `split` pass splits functions of at least `N` blocks
//!   (`Options::split_min_blocks`; 0: every function);
//! - `exit: 1`: the command must fail (its diagnostics are then part of the output);
//! - `check: TEXT`: `TEXT` appears in the output, after what the previous `check` matched;
//! - `check-not: TEXT`: `TEXT` appears nowhere in the output.
//!
//! A file may end with the whole expected output below a line `// ----- expected -----`
//! (`; ----- expected -----`), each line behind the comment marker and a space. After an
//! intended change, `DURIN_BLESS=1 cargo test --test filetests` rewrites those sections
//! (and only them; `check` lines are written by hand).

mod common;

use durin_driver::{IrAction, Options, Purpose, Report, Session, Shm, Target};
use std::path::{Path, PathBuf};

/// What a file says about itself.
#[derive(Default)]
struct Header {
    passes: Option<String>,
    emit_cuda: bool,
    cpu_target: bool,
    report_shm: bool,
    shm: Shm,
    exit: i32,
    split_min_blocks: Option<usize>,
    checks: Vec<String>,
    check_nots: Vec<String>,
}

fn marker(path: &Path) -> &'static str {
    if path.extension().is_some_and(|e| e == "dir") {
        ";"
    } else {
        "//"
    }
}

fn header(src: &str, m: &str) -> Result<Header, String> {
    let mut h = Header::default();
    for line in src.lines().take_while(|l| l.starts_with(m)) {
        let line = line[m.len()..].trim();
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim().to_string();
        match key {
            "passes" => h.passes = Some(value),
            "emit" if value == "cuda" => h.emit_cuda = true,
            "target" if value == "cpu" => h.cpu_target = true,
            "report" if value == "shm" => h.report_shm = true,
            "shm" if value == "on" => h.shm = Shm::On,
            "shm" if value == "off" => h.shm = Shm::Off,
            "shm" if value == "auto" => h.shm = Shm::Auto,
            "exit" => {
                h.exit = value
                    .parse()
                    .map_err(|_| format!("bad exit code `{value}`"))?
            }
            "split-min-blocks" => {
                h.split_min_blocks = Some(
                    value
                        .parse()
                        .map_err(|_| format!("bad split-min-blocks `{value}`"))?,
                )
            }
            "check" => h.checks.push(value),
            "check-not" => h.check_nots.push(value),
            "emit" => return Err(format!("unknown emit `{value}`")),
            _ => {}
        }
    }
    Ok(h)
}

/// Runs the file's command in process (`src` is its text): its exit code, and its
/// standard output and standard error together.
fn run(path: &Path, src: &str, h: &Header) -> (i32, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let options = Options {
        passes: h.passes.clone(),
        opt_level: 0,
        target: if h.cpu_target {
            Target::Cpu
        } else {
            Target::Cuda
        },
        report: h.report_shm.then_some(Report::Shm),
        shm: h.shm,
        split_min_blocks: (h.split_min_blocks).unwrap_or(Options::default().split_min_blocks),
        ..Options::default()
    };
    let mut session = Session::new(options, &mut out, &mut err);
    let ok = if marker(path) == ";" {
        session
            .ir(path, h.passes.as_deref(), &IrAction::Print)
            .is_ok()
    } else {
        let purpose = if h.emit_cuda {
            Purpose::Build
        } else {
            Purpose::Check
        };
        let sources = vec![(path.display().to_string(), src.to_string())];
        let compiled = session.compile_sources(sources, purpose);
        drop(session);
        match compiled {
            Ok(c) if h.emit_cuda => {
                out.extend(c.device.unwrap_or_default().into_bytes());
                true
            }
            Ok(c) => {
                out.extend(durin_ir::text::print(&c.world).into_bytes());
                true
            }
            Err(_) => false,
        }
    };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out),
        String::from_utf8_lossy(&err)
    );
    (if ok { 0 } else { 1 }, text)
}

/// Checks one file; an error says what is wrong.
fn check_file(path: &Path, bless: bool) -> Result<(), String> {
    let src = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let m = marker(path);
    let h = header(&src, m)?;
    let (code, output) = run(path, &src, &h);
    if code != h.exit {
        return Err(format!("exit {code}, want {}\n{output}", h.exit));
    }
    let mut at = 0;
    for c in &h.checks {
        match output[at..].find(c.as_str()) {
            Some(i) => at += i + c.len(),
            None => return Err(format!("`check: {c}` not found (in order)\n{output}")),
        }
    }
    for c in &h.check_nots {
        if output.contains(c.as_str()) {
            return Err(format!("`check-not: {c}` found\n{output}"));
        }
    }
    let sep = format!("{m} ----- expected -----\n");
    if let Some(i) = src.find(&sep) {
        let body = &src[i + sep.len()..];
        let expected: String = body
            .lines()
            .map(|l| {
                l.strip_prefix(m)
                    .map_or(l, |r| r.strip_prefix(' ').unwrap_or(r))
            })
            .map(|l| format!("{l}\n"))
            .collect();
        if bless {
            let quoted: String = output
                .lines()
                .map(|l| {
                    if l.is_empty() {
                        format!("{m}\n")
                    } else {
                        format!("{m} {l}\n")
                    }
                })
                .collect();
            std::fs::write(path, format!("{}{sep}{quoted}", &src[..i]))
                .map_err(|e| e.to_string())?;
        } else if expected != output {
            return Err(format!("--- expected\n{expected}--- got\n{output}"));
        }
    } else if h.checks.is_empty() && h.check_nots.is_empty() {
        return Err("states nothing to check".into());
    }
    Ok(())
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|e| e == "art" || e == "dir") {
            out.push(p);
        }
    }
}

#[test]
fn filetests() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    files(&root.join("tests/filetests"), &mut all);
    all.sort();
    assert!(
        all.len() >= 27,
        "expected the filetests, found {}",
        all.len()
    );
    let bless = common::bless();
    let failures: Vec<String> = all
        .iter()
        .filter_map(|f| {
            let rel = f.strip_prefix(&root).unwrap_or(f);
            check_file(rel, bless)
                .err()
                .map(|e| format!("{}: {e}", rel.display()))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} filetests failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n\n")
    );
}

/// Every built-in pass is pinned by at least three filetests.
#[test]
fn every_pass_has_filetests() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for (pass, _) in durin_passes::passes() {
        let mut fs = Vec::new();
        files(&root.join("tests/filetests").join(pass), &mut fs);
        assert!(
            fs.len() >= 3,
            "pass `{pass}` has {} filetests, want 3",
            fs.len()
        );
    }
}
