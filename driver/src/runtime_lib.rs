//! The runtime library that executables link with, and the link step.

use crate::error;
use durin_diag::Diagnostic;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The libraries the runtime (a Rust static library) needs from the system.
pub const SYSTEM_LIBS: &[&str] = &["-lpthread", "-ldl", "-lm", "-lgcc_s", "-lc"];

/// Where the runtime's static library is: `$DURIN_RUNTIME_LIB`, or beside the `durin`
/// executable (or one folder up, or in `../lib`).
pub fn runtime_library() -> Result<PathBuf, Diagnostic> {
    if let Some(p) = std::env::var_os("DURIN_RUNTIME_LIB") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(error(format!(
                "DURIN_RUNTIME_LIB names `{}`, which is not a file",
                p.display()
            )))
        };
    }
    let exe =
        std::env::current_exe().map_err(|e| error(format!("cannot find durin's own path: {e}")))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let candidates = [
        dir.join("libdurin_runtime.a"),
        dir.join("../libdurin_runtime.a"),
        dir.join("../lib/libdurin_runtime.a"),
    ];
    candidates.iter().find(|p| p.is_file()).cloned().ok_or_else(|| {
        error(format!(
            "cannot find the runtime library `libdurin_runtime.a` beside `{}`",
            exe.display()
        ))
        .with_note("build it with `cargo build --release --workspace` (or `-p durin-runtime`), or set DURIN_RUNTIME_LIB to its path")
    })
}

/// Links `object` with the runtime into the executable `out` with `cc` (`$CC` if set).
pub(crate) fn link(object: &Path, out: &Path) -> Result<(), Diagnostic> {
    let runtime = runtime_library()?;
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let output = Command::new(&cc)
        .arg(object)
        .arg(&runtime)
        .args(SYSTEM_LIBS)
        .arg("-o")
        .arg(out)
        .output()
        .map_err(|e| error(format!("cannot run the linker `{cc}`: {e}")))?;
    if !output.status.success() {
        return Err(error(format!(
            "linking with `{cc}` failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    Ok(())
}
