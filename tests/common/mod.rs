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
