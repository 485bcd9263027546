//! Compile time of the image library's programs: every example, every application
//! benchmark and the GPU bandwidth benchmark, built with the release binary at `-O2` for
//! CUDA (`--emit cuda`: durin's own time, NVRTC apart) and for the CPU (`--emit obj`:
//! LLVM included), and a scaling row: one program holding 1, 2, 4 and 8 copies of Harris
//! (each a different constant, so that no copy reuses another's code).
//!
//! For each, the best of RUNS runs (by wall time) of `durin build --time --time-passes`:
//! its wall time, the time of partial evaluation (both runs of `pe`), of all passes, the
//! definitions after the first `pe`, and the peak memory; then, for the same runs, the
//! time of each pass and of LLVM. Run:
//!
//!   cargo bench --bench compile [-- FILTER]
//!
//! (FILTER: only programs whose path contains it; `COMPILE_RUNS` sets RUNS, 3 by default.)

use std::path::{Path, PathBuf};
use std::process::Command;

/// What one build printed with `--time --time-passes`.
#[derive(Clone, Copy, Default)]
struct Build {
    wall_ms: f64,
    pe_ms: f64,
    passes_ms: f64,
    defs_after_pe: u64,
    peak_mb: u64,
    no_kernel: bool,
    /// The time of each pass in [`PASSES`] (every run of it), then of the other passes.
    per_pass: [f64; PASSES.len() + 1],
    /// LLVM: lowering to LLVM IR and its optimizer; its code generation.
    llvm_ms: f64,
    codegen_ms: f64,
}

/// The passes the second table has a column for (the others are summed in one).
const PASSES: [&str; 7] = [
    "pe",
    "simplify",
    "mem2reg",
    "dce",
    "outline",
    "kernels",
    "closure-conv",
];

fn durin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_durin"))
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Builds `program` once for `target`; `None` (with the error printed) if it failed, a
/// build marked `no_kernel` for a CPU program built for CUDA (no CUDA code to write).
fn build(program: &Path, target: &str) -> Option<Build> {
    let (emit, ext) = if target == "cuda" {
        ("cuda", "cu")
    } else {
        ("obj", "o")
    };
    let out =
        std::env::temp_dir().join(format!("durin-compile-bench-{}.{ext}", std::process::id()));
    let o = Command::new(durin())
        .current_dir(root())
        .args([
            "build",
            "-O2",
            "--target",
            target,
            "--emit",
            emit,
            "--time",
            "--time-passes",
            "-o",
        ])
        .arg(&out)
        .arg(program)
        .output()
        .expect("durin runs");
    let _ = std::fs::remove_file(&out);
    let err = String::from_utf8_lossy(&o.stderr);
    if !o.status.success() {
        if err.contains("launches no GPU kernel") {
            return Some(Build {
                no_kernel: true,
                ..Build::default()
            });
        }
        eprintln!("{} ({target}) failed:\n{err}", program.display());
        return None;
    }
    let mut b = Build::default();
    let mut first_pe = true;
    for line in err.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["pe", ms, defs] => {
                b.pe_ms += ms.parse::<f64>().unwrap_or(0.0);
                if first_pe {
                    b.defs_after_pe = defs.parse().unwrap_or(0);
                    first_pe = false;
                }
            }
            ["total", ms] => b.passes_ms = ms.parse().unwrap_or(0.0),
            ["total:", ms, "ms,", "peak", "memory", mb, "MB"] => {
                b.wall_ms = ms.parse().unwrap_or(0.0);
                b.peak_mb = mb.parse().unwrap_or(0);
            }
            ["total:", ms, "ms"] => b.wall_ms = ms.parse().unwrap_or(0.0),
            ["llvm:" | "llvm-opt:", ms, "ms", ..] => b.llvm_ms += ms.parse().unwrap_or(0.0),
            ["codegen:", ms, "ms", ..] => b.codegen_ms = ms.parse().unwrap_or(0.0),
            _ => {}
        }
        // A line of `--time-passes`: a pass, its time and the definitions after it.
        if let [name, ms, defs] = words.as_slice() {
            if let (Ok(ms), Ok(_)) = (ms.parse::<f64>(), defs.parse::<u64>()) {
                let at = PASSES
                    .iter()
                    .position(|p| p == name)
                    .unwrap_or(PASSES.len());
                b.per_pass[at] += ms;
            }
        }
    }
    Some(b)
}

/// The best of `runs` builds by wall time.
fn best(program: &Path, target: &str, runs: usize) -> Option<Build> {
    let mut all = Vec::new();
    for _ in 0..runs {
        all.push(build(program, target)?);
    }
    all.into_iter()
        .min_by(|a, b| a.wall_ms.total_cmp(&b.wall_ms))
}

fn row(name: &str, target: &str, b: Option<Build>) {
    match b {
        Some(b) if b.no_kernel => println!("| {name} | {target} | no GPU kernel | | | | |"),
        Some(b) => println!(
            "| {name} | {target} | {:.0} | {:.0} | {:.0} | {} | {} |",
            b.wall_ms, b.pe_ms, b.passes_ms, b.defs_after_pe, b.peak_mb
        ),
        None => println!("| {name} | {target} | failed | | | | |"),
    }
}

/// A program realizing Harris `copies` times, each with its own constant.
fn harris_copies(copies: usize) -> String {
    let mut s = String::from(
        "// Harris realized COPIES times (generated by benches/compile.rs).\n\
         fn main(argc: i32, _argv: &[&[u8]]) -> i32 {\n    \
         let sched = default_schedule();\n    \
         let (w, h) = (argc * 640, argc * 480);\n    \
         let (src, dst) = (img_for(sched, w, h), img_for(sched, w, h));\n",
    );
    for i in 0..copies {
        s.push_str(&format!(
            "    realize(src, dst, lazy_harris((0.04 + {i}.0 * 0.001) as f32), clamp, sched);\n"
        ));
    }
    s.push_str("    0\n}\n");
    s
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let filter = args.first().cloned().unwrap_or_default();
    let runs: usize = std::env::var("COMPILE_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
        .max(1);
    let mut programs: Vec<PathBuf> = Vec::new();
    for dir in ["examples", "benches/apps"] {
        let mut found: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .expect("the folder exists")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "art"))
            .map(|p| {
                p.strip_prefix(root())
                    .expect("under the root")
                    .to_path_buf()
            })
            .collect();
        found.sort();
        programs.extend(found);
    }
    programs.push(PathBuf::from("benches/gpu/bandwidth.art"));
    programs.retain(|p| p.to_string_lossy().contains(&filter));
    println!(
        "durin build -O2, best of {runs} runs by wall time (cuda: --emit cuda, without NVRTC; cpu: --emit obj, LLVM included)"
    );
    println!();
    println!("| program | target | wall ms | pe ms | passes ms | defs after pe | peak MB |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    let mut builds = Vec::new();
    for p in &programs {
        for target in ["cuda", "cpu"] {
            let b = best(p, target, runs);
            row(&p.display().to_string(), target, b);
            builds.push((p.display().to_string(), target, b));
        }
    }
    println!();
    println!("Time of each pass in the same runs, ms (every run of a pass summed), and LLVM's");
    println!();
    println!(
        "| program | target | {} | other passes | LLVM IR and optimizer | code generation |",
        PASSES.join(" | ")
    );
    println!("|---|---|{}---:|---:|---:|", "---:|".repeat(PASSES.len()));
    for (name, target, b) in builds {
        if let Some(b) = b.filter(|b| !b.no_kernel) {
            let cells: Vec<String> = b.per_pass.iter().map(|t| format!("{t:.0}")).collect();
            println!(
                "| {name} | {target} | {} | {:.0} | {:.0} |",
                cells.join(" | "),
                b.llvm_ms,
                b.codegen_ms
            );
        }
    }
    if !"harris copies".contains(&filter) && !filter.is_empty() {
        return;
    }
    println!();
    println!("Scaling: one program with 1, 2, 4, 8 copies of Harris (cuda), and each time's ratio to the one before");
    println!();
    println!("| copies | wall ms | ratio | pe ms | passes ms | defs after pe | peak MB |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    let dir = std::env::temp_dir().join(format!("durin-compile-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let mut before: Option<f64> = None;
    for copies in [1, 2, 4, 8] {
        let file = dir.join(format!("harris_{copies}.art"));
        std::fs::write(&file, harris_copies(copies)).expect("the program is written");
        match best(&file, "cuda", runs) {
            Some(b) => {
                let ratio = before.map_or_else(String::new, |t| format!("{:.2}", b.wall_ms / t));
                println!(
                    "| {copies} | {:.0} | {ratio} | {:.0} | {:.0} | {} | {} |",
                    b.wall_ms, b.pe_ms, b.passes_ms, b.defs_after_pe, b.peak_mb
                );
                before = Some(b.wall_ms);
            }
            None => println!("| {copies} | failed | | | | | |"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
