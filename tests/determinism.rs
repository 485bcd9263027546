//! Compiling the same input twice gives the same bytes: every program of the test suite
//! and the examples is compiled in two processes, and every output compared (LLVM IR of
//! host code, CUDA C of kernels, the shared-memory report), so that no output depends on
//! hash-map order or on addresses.

mod common;

use std::path::{Path, PathBuf};

fn programs(dir: &str) -> Vec<PathBuf> {
    common::files_in(dir, &["art"])
}

/// What `durin ARGS FILE` prints and writes (to `-o`), with its exit status. `job` names
/// the output file: the jobs of one program (its CUDA C and its LLVM IR) may run at the
/// same time in two workers, and must not write the same file.
fn output(args: &[&str], file: &Path, emits: bool, job: usize, tag: &str) -> Vec<u8> {
    let rel = file.strip_prefix(common::root()).unwrap_or(file);
    let out_file = std::env::temp_dir().join(format!(
        "durin-determinism-{}-{job}-{tag}-{}",
        std::process::id(),
        rel.to_string_lossy().replace('/', "_")
    ));
    let mut all: Vec<&str> = args.to_vec();
    let out_str = out_file.to_string_lossy().into_owned();
    if emits {
        all.extend(["-o", &out_str]);
    }
    let rel_str = rel.to_string_lossy().into_owned();
    all.push(&rel_str);
    let run = common::durin(&all);
    let mut bytes = format!("exit {:?}\n", run.status.code()).into_bytes();
    bytes.extend(run.stdout);
    bytes.extend(run.stderr);
    if emits {
        bytes.extend(std::fs::read(&out_file).unwrap_or_default());
        let _ = std::fs::remove_file(&out_file);
    }
    bytes
}

#[test]
fn compiling_twice_gives_the_same_bytes() {
    let mut jobs: Vec<(Vec<&str>, PathBuf, bool)> = Vec::new();
    for f in programs("tests/lang/ok")
        .into_iter()
        .chain(programs("examples"))
    {
        jobs.push((vec!["build", "-O2", "--emit", "llvm-ir"], f, true));
    }
    for f in programs("tests/gpu")
        .into_iter()
        .chain(programs("benches/gpu"))
    {
        jobs.push((vec!["build", "-O2", "--emit", "cuda"], f.clone(), true));
        jobs.push((vec!["build", "-O2", "--emit", "llvm-ir"], f.clone(), true));
        jobs.push((vec!["check", "-O2", "--report", "shm"], f, false));
    }
    assert!(jobs.len() > 200, "the programs were found ({})", jobs.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let differ = std::sync::Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((args, file, emits)) = jobs.get(i) else {
                    break;
                };
                let a = output(args, file, *emits, i, "a");
                let b = output(args, file, *emits, i, "b");
                if a != b {
                    differ
                        .lock()
                        .unwrap()
                        .push(format!("{} {}", args.join(" "), file.display()));
                }
            });
        }
    });
    let differ = differ.into_inner().unwrap();
    assert!(
        differ.is_empty(),
        "{} of {} outputs differ between two runs:\n{}",
        differ.len(),
        jobs.len(),
        differ.join("\n")
    );
}
