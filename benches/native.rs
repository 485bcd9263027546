//! durin `-O2` against the same algorithms in C built with `gcc -O2`, in one run, one table.
//!
//! Programs in `benches/native/`: each `NAME.art` beside `NAME.c` (a sieve, mandelbrot,
//! n-body, a 3x3 blur with clamped borders). Both are built as executables (`durin build
//! --emit exe -O2`; `gcc -O2 -march=native -ffp-contract=off`: the host's CPU features, as
//! durin targets by default, and no contraction into fused multiply-adds, which durin does
//! not do, so both compute the same floats); their outputs must be equal. Each executable
//! runs 7 times, alternating; the table gives the median wall times and the ratio (the
//! target is at most 1.2), and the cost of bounds checks: the same program built with
//! `--checks bounds`, against durin without them. Then the compile time of each program (`durin build --time`:
//! frontend, IR passes, LLVM), and the time each JIT back end takes from the same
//! first-order IR (after the `-O2` pipeline) to machine code in memory: LLVM at `-O2`,
//! Cranelift without and with its optimizer (medians of 9 in this process; the target is
//! Cranelift `-O0` at least 5x faster than LLVM `-O2` on the largest program).
//!
//! Run: `cargo bench --bench native` (needs `gcc`; builds the runtime library in release
//! mode); `cargo bench --bench native -- jit` gives only the last table.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const PROGRAMS: &[&str] = &["sieve", "mandelbrot", "nbody", "stencil"];
const RUNS: usize = 7;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn durin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_durin"))
}

fn check(out: std::process::Output, what: &str) -> std::process::Output {
    if !out.status.success() {
        eprintln!(
            "{what} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        std::process::exit(1);
    }
    out
}

/// Builds the runtime library the executables link with (quick when it is up to date; an
/// old one would lack what the code of a newer durin calls).
fn ensure_runtime() {
    let lib = durin().with_file_name("libdurin_runtime.a");
    eprintln!("building the runtime library ({})", lib.display());
    let cargo = option_env!("CARGO").unwrap_or("cargo");
    check(
        Command::new(cargo)
            .current_dir(root())
            .args(["build", "--release", "-p", "durin-runtime"])
            .output()
            .expect("cargo runs"),
        "cargo build -p durin-runtime",
    );
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

fn time_run(exe: &Path) -> (f64, String) {
    let t = Instant::now();
    let out = check(
        Command::new(exe).output().expect("runs"),
        &exe.display().to_string(),
    );
    (
        t.elapsed().as_secs_f64() * 1e3,
        String::from_utf8_lossy(&out.stdout).to_string(),
    )
}

/// The stage times `durin build --time` prints (name, ms).
fn stage_times(stderr: &str) -> Vec<(String, f64)> {
    stderr
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            let ms = rest.split_whitespace().next()?.parse().ok()?;
            Some((name.trim().to_string(), ms))
        })
        .collect()
}

fn main() {
    // `cargo bench --bench native -- jit`: only the JIT compile times.
    if std::env::args().any(|a| a == "jit") {
        backend_compile_times();
        return;
    }
    ensure_runtime();
    let dir = std::env::temp_dir().join(format!("durin-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary folder");
    println!(
        "{:<12} {:>12} {:>12} {:>8} {:>12} {:>8}   output",
        "program", "durin ms", "gcc ms", "ratio", "checked ms", "cost"
    );
    let mut compile = Vec::new();
    for name in PROGRAMS {
        let src = root().join("benches/native").join(format!("{name}.art"));
        let csrc = root().join("benches/native").join(format!("{name}.c"));
        let (dexe, cexe, kexe) = (
            dir.join(format!("{name}-durin")),
            dir.join(format!("{name}-gcc")),
            dir.join(format!("{name}-checked")),
        );
        check(
            Command::new(durin())
                .args(["build", "-O2", "--checks", "bounds", "--emit", "exe", "-o"])
                .arg(&kexe)
                .arg(&src)
                .output()
                .expect("durin runs"),
            "durin build --checks bounds",
        );
        let t = Instant::now();
        let built = check(
            Command::new(durin())
                .args(["build", "-O2", "--time", "--emit", "exe", "-o"])
                .arg(&dexe)
                .arg(&src)
                .output()
                .expect("durin runs"),
            "durin build",
        );
        let build_ms = t.elapsed().as_secs_f64() * 1e3;
        compile.push((
            name,
            build_ms,
            stage_times(&String::from_utf8_lossy(&built.stderr)),
        ));
        check(
            Command::new("gcc")
                .args(["-O2", "-march=native", "-ffp-contract=off", "-o"])
                .arg(&cexe)
                .arg(&csrc)
                .arg("-lm")
                .output()
                .expect("gcc runs"),
            "gcc",
        );
        // Warm up (page cache, frequency), then alternate.
        let (_, dout) = time_run(&dexe);
        let (_, cout) = time_run(&cexe);
        let (_, kout) = time_run(&kexe);
        if dout != cout || dout != kout {
            eprintln!(
                "{name}: outputs differ:\n--- durin\n{dout}--- gcc\n{cout}--- checked\n{kout}"
            );
            std::process::exit(1);
        }
        let (mut d, mut c, mut k) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..RUNS {
            d.push(time_run(&dexe).0);
            c.push(time_run(&cexe).0);
            k.push(time_run(&kexe).0);
        }
        let (dm, cm, km) = (median(d), median(c), median(k));
        println!(
            "{:<12} {:>12.1} {:>12.1} {:>8.2} {:>12.1} {:>8.2}   {}",
            name,
            dm,
            cm,
            dm / cm,
            km,
            km / dm,
            dout.trim().replace('\n', " ")
        );
    }
    println!();
    println!("compile time of `durin build -O2 --emit exe` (ms; stages from --time):");
    for (name, total, stages) in &compile {
        let parts: Vec<String> = stages
            .iter()
            .map(|(s, ms)| format!("{s} {ms:.1}"))
            .collect();
        println!("{name:<12} {total:>8.1}   {}", parts.join(", "));
    }
    let _ = std::fs::remove_dir_all(&dir);
    backend_compile_times();
}

/// Milliseconds each JIT back end takes from first-order IR to machine code in memory.
fn backend_compile_times() {
    use durin_backend_cranelift as cranelift;
    use durin_backend_llvm as llvm;
    const REPEAT: usize = 9;
    let mut programs: Vec<PathBuf> = PROGRAMS
        .iter()
        .map(|n| root().join("benches/native").join(format!("{n}.art")))
        .collect();
    // The largest program of the test corpus too.
    programs.push(root().join("tests/lang/ok/stencils.art"));
    println!();
    println!(
        "JIT compile time from the same first-order IR (ms, median of {REPEAT}; IR after the -O2 pipeline):"
    );
    println!(
        "{:<12} {:>7} {:>11} {:>12} {:>13} {:>10}",
        "program", "IR defs", "llvm -O2", "cranelift -O0", "cranelift -O2", "llvm/cl-O0"
    );
    let symbols = durin_runtime::symbols();
    let mut largest = (0, String::new(), 0.0);
    for path in &programs {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(path).expect("readable program");
        let out = durin_frontend::compile::compile(&[(path.display().to_string(), text)], true);
        let mut w = out.lowered.expect("the program compiles").world;
        durin_passes::Pipeline::for_native(2)
            .run(&mut w, &durin_passes::RunOptions::default(), |_, _| {})
            .expect("the pipeline runs");
        let defs = live_defs(&w);
        let time = |f: &mut dyn FnMut()| {
            let mut ts: Vec<f64> = (0..REPEAT)
                .map(|_| {
                    let t = Instant::now();
                    f();
                    t.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            ts.sort_by(|a, b| a.total_cmp(b));
            ts[REPEAT / 2]
        };
        let l = time(&mut || {
            let ctx = inkwell::context::Context::create();
            let c = llvm::compile(&ctx, &w, &llvm::Options::default()).expect("LLVM compiles");
            c.jit("main", &symbols).expect("LLVM's JIT");
        });
        let cl = |level: u8| {
            time(&mut || {
                // As `durin run` compiles: with Cranelift's verifier.
                let opts = cranelift::Options {
                    opt_level: level,
                    verify: true,
                    bounds_checks: None,
                    places: None,
                };
                cranelift::jit(&w, "main", &symbols, &opts).expect("Cranelift compiles");
            })
        };
        let (c0, c2) = (cl(0), cl(2));
        println!(
            "{name:<12} {defs:>7} {l:>11.2} {c0:>12.2} {c2:>13.2} {:>10.1}",
            l / c0
        );
        if defs > largest.0 {
            largest = (defs, name, l / c0);
        }
    }
    println!(
        "largest program: {} ({} defs): Cranelift -O0 compiles {:.1}x faster than LLVM -O2 (target: at least 5x)",
        largest.1, largest.0, largest.2
    );
}

/// The number of defs the back ends translate: those the live functions' scopes hold.
fn live_defs(w: &durin_ir::World) -> usize {
    let program = durin_ir::analysis::program::collect(w);
    program
        .functions
        .iter()
        .map(|&f| {
            durin_ir::analysis::scope::Scope::compute_with(w, f, &program.free)
                .defs()
                .len()
        })
        .sum()
}
