//! Runs an IR file's entry in the interpreter and prints the jumps per second (for
//! profiling the interpreter alone): `cargo run --release -p durin-ir --example
//! interp_speed -- FILE.dir`.

use durin_ir::interp::{self, Limits};
use std::time::Instant;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: interp_speed FILE.dir");
        std::process::exit(2);
    };
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(1)
    });
    let w = durin_ir::text::parse(&src).unwrap_or_else(|e| {
        eprintln!("{path}:{e}");
        std::process::exit(1)
    });
    let Some(entry) = w
        .continuations()
        .find(|&k| w.is_external(k) && w.body(k).is_some())
    else {
        eprintln!("{path}: no entry");
        std::process::exit(1)
    };
    let mut out = Vec::new();
    let t = Instant::now();
    let (r, jumps) = interp::run_with_argv_counted(&w, entry, &[], Limits::default(), &mut out);
    let secs = t.elapsed().as_secs_f64();
    if let Err(e) = r {
        eprintln!("{e}");
    }
    println!(
        "{jumps} jumps in {:.1} ms: {:.1} million per second",
        secs * 1e3,
        jumps as f64 / secs / 1e6
    );
}
