//! Helpers shared by the integration tests that run the `durin` binary.

// Each test binary uses some of these.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// The repository root (tests run `durin` from there, with relative paths); the variable
/// `DURIN_TEST_ROOT` overrides it, for a built test run on another machine.
pub fn root() -> PathBuf {
    std::env::var_os("DURIN_TEST_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

/// The files of folder `dir` (relative to the repository root) whose extension is one of
/// `exts`, sorted.
pub fn files_in(dir: &str, exts: &[&str]) -> Vec<PathBuf> {
    let path = root().join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .map(|e| e.expect("a readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| exts.iter().any(|e| x == *e)))
        .collect();
    files.sort();
    files
}

/// Runs `durin args..` from the repository root (`DURIN_BIN` overrides the executable).
pub fn durin(args: &[&str]) -> std::process::Output {
    let exe = std::env::var_os("DURIN_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_durin")));
    Command::new(exe)
        .current_dir(root())
        .args(args)
        .output()
        .expect("durin runs")
}

/// Whether this run rewrites expected outputs: `DURIN_BLESS=1`, and no other value.
pub fn bless() -> bool {
    std::env::var("DURIN_BLESS").is_ok_and(|v| v == "1")
}

/// Runs `durin run` in the interpreter with the CUDA target (kernels in the interpreter),
/// staging as `shm` says, fuel for big grids, then `args` (the program and its arguments).
pub fn interp_cuda(shm: &str, args: &[&str]) -> std::process::Output {
    let mut all = vec![
        "run",
        "--backend",
        "interp",
        "--target",
        "cuda",
        "--shm",
        shm,
        "--fuel",
        "4000000000",
    ];
    all.extend_from_slice(args);
    durin(&all)
}

/// The arguments of each jump of printed IR `ir` whose line starts (after its indentation)
/// with `prefix`: the list after the callee (after its type, for an intrinsic printed with
/// one).
pub fn jump_args<'a>(ir: &'a str, prefix: &str) -> Vec<Vec<&'a str>> {
    (ir.lines())
        .filter(|l| l.trim_start().starts_with(prefix))
        .map(|l| {
            let l = l.trim_end().trim_end_matches(')');
            let args = match l.rfind(")(") {
                Some(i) => &l[i + 2..],
                None => l.split_once('(').map_or("", |(_, a)| a),
            };
            args.split(", ").collect()
        })
        .collect()
}

/// For the continuations `conts` of printed IR `ir`: how many of them jump to each function
/// that more than one of them jumps to passing their own parameters in order (all but the
/// last first, the last, a return point, last: a call of code they share, its other
/// arguments the values that differ), sorted.
pub fn shared_callers(ir: &str, conts: &[&str]) -> Vec<usize> {
    let lines: Vec<&str> = ir.lines().collect();
    let mut callers: std::collections::BTreeMap<&str, usize> = Default::default();
    for c in conts {
        let at = (lines.iter())
            .position(|l| l.starts_with(&format!("cont {c}(")))
            .unwrap_or_else(|| panic!("no {c} in {ir}"));
        let params: Vec<&str> = (lines[at].split('(').nth(1).unwrap().split(", "))
            .map(|p| p.split(':').next().unwrap())
            .collect();
        let jump = (lines[at + 1..].iter())
            .find(|l| l.trim_start().starts_with("jump "))
            .unwrap();
        let (callee, args) = jump.trim_start()["jump ".len()..].split_once('(').unwrap();
        let args: Vec<&str> = args.trim_end_matches(')').split(", ").collect();
        let n = params.len();
        if args.len() >= n && args[..n - 1] == params[..n - 1] && args.last() == params.last() {
            *callers.entry(callee).or_default() += 1;
        }
    }
    let mut shared: Vec<usize> = callers.values().copied().filter(|&n| n > 1).collect();
    shared.sort();
    shared
}
