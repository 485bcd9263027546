//! Helpers shared by the integration tests that run the `durin` binary.

use std::path::PathBuf;
use std::process::Command;

/// The repository root (tests run `durin` from there, with relative paths).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `durin args..` from the repository root.
pub fn durin(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_durin"))
        .current_dir(root())
        .args(args)
        .output()
        .expect("durin runs")
}
