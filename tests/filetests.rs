//! Filetests, in process: every file under `tests/filetests/` (`.art` source or `.dir` IR)
//! states in its header what to do with it and, inline, what must come out. One test runs
//! them all through `durin_driver::Session`, as the command line would, without spawning
//! a process.
//!
//! Header lines (comments at the top: `//` in `.art`, `;` in `.dir`), each `key: value`:
//!
//! - `passes: LIST`: the pipeline (`pe,cleanup`, `O2,closure-conv`); the IR after it is the
//!   output (`durin check --passes LIST --print-ir`, or `durin ir --passes LIST`);
//! - `opt: N`: the optimization level when no `passes` is given (`-ON`; 0 by default);
//! - `pe-fuel: N`: partial evaluation's fuel (`--pe-fuel N`);
//! - `emit: cuda`: the output is the program's CUDA C (`durin build --emit cuda`) after
//!   the native pipeline (or `passes`, made native);
//! - `target: cpu`: compile for the CPU (`--target cpu`; the default is CUDA);
//! - `report: shm`: the report of each kernel's buffers (`--report shm`) is output too;
//! - `print: none`: the output is the diagnostics alone, without the IR (`durin check`);
//! - `shm: on`, `shm: off`: stage every read-only buffer that can be staged into shared
//!   memory, or none (`--shm on|off`; the default is `auto`, the cost model's choice);
//! - `split-min-blocks: N`: the `split` pass splits functions of at least `N` blocks
//!   (`Options::split_min_blocks`; 0: every function);
//! - IR files only: `run: ARGS` runs the entry in the interpreter with these arguments and
//!   outputs its results instead of the IR (`durin ir --run ARGS`), `entry: NAME` names
//!   the entry, `fuel: N` and `frames: N` bound the interpreter (`--fuel`,
//!   `--interp-frames`); `draw: dot` outputs the Graphviz graph (`durin ir --dot`);
//! - `exit: 1`: the command must fail (its diagnostics are then part of the output);
//! - `check: TEXT`: `TEXT` appears in the output, after what the previous check matched;
//! - `nextln: TEXT`: `TEXT` appears on the line after the previous check's match;
//! - `check-not: TEXT`: `TEXT` appears nowhere in the output.
//!
//! Every pipeline runs with the IR verified after each pass (`--verify-each`).
//!
//! A file may end with the whole expected output below a line `// ----- expected -----`
//! (`; ----- expected -----`), each line behind the comment marker and a space: the mode
//! for a pass's filetests, where `check` lines pin one line and let the rest drift. After
//! an intended change, `DURIN_BLESS=1 cargo test --test filetests` rewrites those sections
//! (and only them; `check` lines are written by hand); read the diff before committing it.

mod common;

use durin_driver::{IrAction, Limits, Options, Purpose, Report, Session, Shm, Target};
use std::path::{Path, PathBuf};

/// A line that checks the output.
enum Check {
    /// `check: TEXT`.
    Next(String),
    /// `nextln: TEXT`.
    NextLine(String),
    /// `check-not: TEXT`.
    Not(String),
}

/// What a file says about itself.
#[derive(Default)]
struct Header {
    passes: Option<String>,
    opt: u8,
    pe_fuel: Option<u64>,
    emit_cuda: bool,
    cpu_target: bool,
    report_shm: bool,
    shm: Shm,
    exit: i32,
    split_min_blocks: Option<usize>,
    run: Option<Vec<String>>,
    entry: Option<String>,
    fuel: Option<u64>,
    frames: Option<u64>,
    dot: bool,
    no_print: bool,
    checks: Vec<Check>,
}

fn marker(path: &Path) -> &'static str {
    if path.extension().is_some_and(|e| e == "dir") {
        ";"
    } else {
        "//"
    }
}

fn number<T: std::str::FromStr>(key: &str, value: &str) -> Result<T, String> {
    value.parse().map_err(|_| format!("bad {key} `{value}`"))
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
            "opt" => h.opt = number(key, &value)?,
            "pe-fuel" => h.pe_fuel = Some(number(key, &value)?),
            "emit" if value == "cuda" => h.emit_cuda = true,
            "emit" => return Err(format!("unknown emit `{value}`")),
            "target" if value == "cpu" => h.cpu_target = true,
            "report" if value == "shm" => h.report_shm = true,
            "shm" if value == "on" => h.shm = Shm::On,
            "shm" if value == "off" => h.shm = Shm::Off,
            "shm" if value == "auto" => h.shm = Shm::Auto,
            "exit" => h.exit = number(key, &value)?,
            "split-min-blocks" => h.split_min_blocks = Some(number(key, &value)?),
            "run" => h.run = Some(value.split_whitespace().map(String::from).collect()),
            "entry" => h.entry = Some(value),
            "fuel" => h.fuel = Some(number(key, &value)?),
            "frames" => h.frames = Some(number(key, &value)?),
            "draw" if value == "dot" => h.dot = true,
            "print" if value == "none" => h.no_print = true,
            "check" => h.checks.push(Check::Next(value)),
            "nextln" => h.checks.push(Check::NextLine(value)),
            "check-not" => h.checks.push(Check::Not(value)),
            _ => {}
        }
    }
    Ok(h)
}

/// Runs the file's command in process (`src` is its text): its exit code, and its
/// standard output and standard error together.
fn run(path: &Path, src: &str, h: &Header) -> (i32, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let limits = Limits::default();
    let options = Options {
        passes: h.passes.clone(),
        opt_level: h.opt,
        pe_fuel: h.pe_fuel.unwrap_or(Options::default().pe_fuel),
        target: if h.cpu_target {
            Target::Cpu
        } else {
            Target::Cuda
        },
        report: h.report_shm.then_some(Report::Shm),
        shm: h.shm,
        split_min_blocks: (h.split_min_blocks).unwrap_or(Options::default().split_min_blocks),
        verify_each: true,
        interp: Limits {
            fuel: h.fuel.unwrap_or(limits.fuel),
            max_frames: h.frames.unwrap_or(limits.max_frames),
            ..limits
        },
        ..Options::default()
    };
    let mut session = Session::new(options, &mut out, &mut err);
    let ok = if marker(path) == ";" {
        let action = match (&h.run, h.dot) {
            (_, true) => IrAction::Dot,
            (Some(args), false) => IrAction::Run {
                args: args.clone(),
                entry: h.entry.clone(),
            },
            (None, false) => IrAction::Print,
        };
        session.ir(path, h.passes.as_deref(), &action).is_ok()
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
            Ok(_) if h.no_print => true,
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

/// Checks `output` against the file's check lines.
fn check_lines(checks: &[Check], output: &str) -> Result<(), String> {
    // Where the previous match ended.
    let mut at = 0;
    for c in checks {
        match c {
            Check::Next(t) => match output[at..].find(t.as_str()) {
                Some(i) => at += i + t.len(),
                None => return Err(format!("`check: {t}` not found (in order)\n{output}")),
            },
            Check::NextLine(t) => {
                let start = output[at..].find('\n').map(|i| at + i + 1);
                let line = start.map(|s| (s, output[s..].split('\n').next().unwrap_or("")));
                match line.and_then(|(s, l)| l.find(t.as_str()).map(|i| s + i)) {
                    Some(i) => at = i + t.len(),
                    None => {
                        return Err(format!(
                            "`nextln: {t}` not on the line after the previous match\n{output}"
                        ))
                    }
                }
            }
            Check::Not(t) => {
                if output.contains(t.as_str()) {
                    return Err(format!("`check-not: {t}` found\n{output}"));
                }
            }
        }
    }
    Ok(())
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
    check_lines(&h.checks, &output)?;
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
    } else if h.checks.is_empty() {
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
        all.len() >= 200,
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

/// Every built-in pass is pinned by at least eight filetests.
#[test]
fn every_pass_has_filetests() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for (pass, _) in durin_passes::passes() {
        let mut fs = Vec::new();
        files(&root.join("tests/filetests").join(pass), &mut fs);
        assert!(
            fs.len() >= 8,
            "pass `{pass}` has {} filetests, want 8",
            fs.len()
        );
    }
}
