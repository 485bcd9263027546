//! Language tests, run through the `durin` binary.
//!
//! - `tests/lang/ok/NAME.art`: `durin run` must exit with 0 (or the code in a
//!   `// exit: N` line), print nothing on standard error, and print exactly
//!   `tests/lang/ok/NAME.out` on standard output: in the interpreter after each pipeline,
//!   through LLVM's JIT at each level, and as an executable from `durin build --emit exe`. Those files are written by hand from
//!   what the program computes, never copied from durin's output. A `// args: A B` line
//!   passes arguments after `--`.
//! - `tests/lang/trap/NAME.art`: `durin run --backend interp` must exit with 101 and name the
//!   run-time error of the file's `// error:` line.
//! - `tests/lang/quiet/`: programs run through LLVM's JIT that must print nothing on
//!   standard error (LLVM's own messages).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn files(sub: &str) -> Vec<PathBuf> {
    common::files_in(&format!("tests/lang/{sub}"), &["art"])
}

fn header<'s>(src: &'s str, key: &str) -> Option<&'s str> {
    src.lines()
        .take_while(|l| l.starts_with("//"))
        .find_map(|l| l.strip_prefix(key))
        .map(str::trim)
}

fn durin(args: &[&str], path: &Path, extra: &[&str]) -> std::process::Output {
    let rel = path
        .strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .expect("test file in the repository");
    Command::new(env!("CARGO_BIN_EXE_durin"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .arg(rel)
        .args(extra)
        .output()
        .expect("durin runs")
}

#[test]
fn accepted_programs_print_what_they_compute() {
    let files = files("ok");
    assert!(
        files.len() >= 60,
        "expected at least 60 accepted programs, found {}",
        files.len()
    );
    let mut failures = Vec::new();
    for f in &files {
        let src = std::fs::read_to_string(f).expect("readable");
        let want_exit: i32 = header(&src, "// exit:").map_or(0, |e| e.parse().expect("exit code"));
        let args: Vec<&str> =
            header(&src, "// args:").map_or(Vec::new(), |a| a.split_whitespace().collect());
        let mut extra = Vec::new();
        if !args.is_empty() {
            extra.push("--");
            extra.extend(args);
        }
        let expected = std::fs::read_to_string(f.with_extension("out"))
            .unwrap_or_else(|_| panic!("{} has no .out file", f.display()));
        // The same output as lowered and after every optimization pipeline (the IR verified
        // after each pass), and in first-order form after closure elimination (which must
        // leave no closure), after the least a native back end runs (partial evaluation,
        // which `break` out of a `for` body needs) and after -O3; then as native code from
        // each back end.
        let closure_conv = [
            "run",
            "--backend=interp",
            "--verify-each",
            "--report",
            "closures",
            "--passes",
        ];
        for level in [
            &["run", "--backend=interp", "-O0"][..],
            &["run", "--backend=interp", "-O1", "--verify-each"],
            &["run", "--backend=interp", "-O3", "--verify-each"],
            // Native code: LLVM at every level, Cranelift (the default at -O0) without and
            // with its optimizer.
            &["run", "--backend=llvm", "-O0"],
            &["run", "-O1"],
            &["run", "-O2"],
            &["run", "-O3"],
            &["run", "-O0"],
            &["run", "--backend=cranelift", "-O2"],
            // With bounds checks, which must not stop a correct program.
            &["run", "--checks=bounds", "-O2"],
            &["run", "--checks=bounds", "-O0"],
            &[&closure_conv[..], &["pe,cleanup,dce,closure-conv"]].concat(),
            &[&closure_conv[..], &["O3,closure-conv"]].concat(),
        ] {
            let out = durin(level, f, &extra);
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let code = out.status.code().unwrap_or(-1);
            let stderr_ok = if level.contains(&"--report") {
                stderr.starts_with("closures: 0 left") && stderr.lines().count() == 1
            } else {
                stderr.is_empty()
            };
            if stdout != expected || code != want_exit || !stderr_ok {
                failures.push(format!(
                    "{} ({}): exit {code} (want {want_exit})\n--- stdout\n{stdout}--- expected\n{expected}--- stderr\n{stderr}",
                    f.display(),
                    level[1..].join(" ")
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} programs failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

/// Every accepted program built ahead of time (`durin build --emit exe`, linked by `cc`
/// with the runtime library) prints the same as it should.
#[test]
fn executables_built_ahead_of_time_print_what_they_compute() {
    let dir = tempdir("aot");
    let mut failures = Vec::new();
    for f in &files("ok") {
        let src = std::fs::read_to_string(f).expect("readable");
        let want_exit: i32 = header(&src, "// exit:").map_or(0, |e| e.parse().expect("exit code"));
        let args: Vec<&str> =
            header(&src, "// args:").map_or(Vec::new(), |a| a.split_whitespace().collect());
        let exe = dir.join(f.file_stem().expect("a name"));
        let exe_s = exe.to_string_lossy().to_string();
        let built = durin(&["build", "--emit", "exe", "-o", &exe_s], f, &[]);
        if !built.status.success() {
            failures.push(format!(
                "{}: build failed\n{}",
                f.display(),
                String::from_utf8_lossy(&built.stderr)
            ));
            continue;
        }
        let out = Command::new(&exe)
            .args(&args)
            .output()
            .expect("the executable runs");
        let expected = std::fs::read_to_string(f.with_extension("out")).expect(".out file");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let code = out.status.code().unwrap_or(-1);
        if stdout != expected || code != want_exit || !out.stderr.is_empty() {
            failures.push(format!(
                "{}: exit {code} (want {want_exit})\n--- stdout\n{stdout}--- expected\n{expected}--- stderr\n{}",
                f.display(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A fresh folder under the target directory for this test's files.
fn tempdir(name: &str) -> PathBuf {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary folder");
    dir
}

/// Every value of a header line `key` (a file may repeat one).
fn headers<'s>(src: &'s str, key: &str) -> Vec<&'s str> {
    src.lines()
        .take_while(|l| l.starts_with("//"))
        .filter_map(|l| l.strip_prefix(key))
        .map(str::trim)
        .collect()
}

/// `durin ARGS PATH` stops with exit status 101 and each of `want` in its error output.
fn assert_run_time_error(path: &Path, args: &[&str], want: &[&str]) {
    let out = durin(args, path, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    let what = format!("{} ({})", path.display(), args[1..].join(" "));
    assert_eq!(out.status.code(), Some(101), "{what}: {err}");
    for want in want {
        assert!(err.contains(want), "{what}: want `{want}` in\n{err}");
    }
}

/// `tests/lang/trap/*.art` fail at run time in the interpreter, with exit code 101 and the
/// texts of their `// error:` lines (the message, the places it names): the memory errors
/// native code would not catch. With `// checked-error:` lines they also stop natively under
/// `--checks bounds` (both back ends, `-O0` and `-O2`); with `// native-error:` lines,
/// natively without checks. A `// target: cuda` line runs the interpreter for a GPU (its
/// memory apart from the host's), and `// cuda-cpu-checked-error:` lines are what the
/// program stops with natively with its kernels on the CPU (`--target cuda-cpu`) under
/// `--checks bounds`.
#[test]
fn run_time_errors_stop_the_program_with_exit_status_101() {
    let files = files("trap");
    assert!(
        files.len() >= 3,
        "expected at least 3 programs, found {}",
        files.len()
    );
    for path in files {
        let src = std::fs::read_to_string(&path).expect("readable test file");
        let want = headers(&src, "// error:");
        assert!(!want.is_empty(), "{}: an `// error:` line", path.display());
        let target = header(&src, "// target:").unwrap_or("cpu");
        for level in ["-O0", "-O2"] {
            let args = ["run", "--backend", "interp", "--target", target, level];
            assert_run_time_error(&path, &args, &want);
        }
        // Errors native code catches with bounds checks, at the index's place.
        for (key, target) in [
            ("// checked-error:", "cpu"),
            ("// cuda-cpu-checked-error:", "cuda-cpu"),
        ] {
            let want = headers(&src, key);
            if want.is_empty() {
                continue;
            }
            for backend in ["llvm", "cranelift"] {
                for level in ["-O0", "-O2"] {
                    let args = [
                        "run",
                        "--checks",
                        "bounds",
                        "--target",
                        target,
                        "--backend",
                        backend,
                        level,
                    ];
                    assert_run_time_error(&path, &args, &want);
                }
            }
        }
        // Errors native code catches too, with the same exit status.
        let want = headers(&src, "// native-error:");
        if !want.is_empty() {
            for backend in ["llvm", "cranelift"] {
                assert_run_time_error(&path, &["run", "--backend", backend], &want);
            }
        }
    }
}

/// A negated unsigned literal wraps around (in a `match` pattern too): the program returns
/// 0 only if every value is the wrapped one, in the interpreter and both JITs.
#[test]
fn negated_unsigned_literals_wrap_in_every_backend() {
    let f = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/filetests/warnings/unsigned_negation.art");
    for backend in ["interp", "llvm", "cranelift"] {
        assert_success(&durin(&["run", "--backend", backend], &f, &[]));
    }
}

#[test]
fn an_exported_main_of_any_type_checks_but_does_not_run() {
    let f = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lang/lib/exported_main.art");
    assert_success(&durin(&["check"], &f, &[]));
    let out = durin(&["run"], &f, &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`main` takes `()` and returns `[i32 * 2]`"),
        "{stderr}"
    );
}

#[test]
fn deny_warnings_turns_warnings_into_failure() {
    for f in files("../filetests/warnings") {
        let out = durin(&["check", "--deny-warnings"], &f, &[]);
        assert_eq!(out.status.code(), Some(1), "{}", f.display());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("denied by --deny-warnings"), "{stderr}");
    }
}

/// `--report closures` after `-O2`: the stencil library and the nested loops leave none
/// (every continuation is a top-level function or a block); closures stored in an array
/// stay, reported at their source with the reason; `-O0` leaves the library's closures.
#[test]
fn closure_report_lists_what_survives() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lang/ok");
    let report = |level: &str, name: &str| {
        let out = durin(
            &["check", level, "--report", "closures"],
            &root.join(name),
            &[],
        );
        assert_eq!(out.status.code(), Some(0), "{name}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    for name in [
        "stencils.art",
        "nested_unroll.art",
        "for_range.art",
        "mandelbrot.art",
    ] {
        let r = report("-O2", name);
        assert!(r.contains("closures: 0 left"), "{name}:\n{r}");
        assert!(!r.contains("closure: "), "{name}:\n{r}");
    }
    let r = report("-O0", "stencils.art");
    assert!(!r.contains("closures: 0 left"), "{r}");
    let r = report("-O2", "loop_closures.art");
    let lines: Vec<&str> = r.lines().filter(|l| l.starts_with("closure: ")).collect();
    assert_eq!(lines.len(), 1, "{r}");
    assert!(
        lines[0].starts_with("closure: tests/lang/ok/loop_closures.art:5:")
            && lines[0].ends_with("stored in a value"),
        "{r}"
    );
}

/// The bodies of parallel loops that are the same code up to the host's values (three of
/// the four `fill`s of `parallel_shared.art`) call one function of that code after partial
/// evaluation: each closure passed to the runtime's loop jumps to it, passing its own
/// arguments first; the fourth, of another constant, keeps its own code.
#[test]
fn parallel_loop_bodies_of_the_same_code_share_it() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lang/ok/parallel_shared.art");
    let out = durin(
        &["check", "--passes", "pe,dce", "--print-after", "dce"],
        &path,
        &[],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ir = String::from_utf8_lossy(&out.stdout).into_owned();
    // The closure each loop passes: the next-to-last argument of the runtime's call.
    let bodies: Vec<&str> = (common::jump_args(&ir, "jump @anydsl_parallel_for(").into_iter())
        .map(|a| a[a.len() - 2])
        .collect();
    assert_eq!(bodies.len(), 4, "{ir}");
    // Each body calls shared code with its own `mem` and index first and its return
    // point last.
    let shared = common::shared_callers(&ir, &bodies);
    assert_eq!(shared, [3], "{ir}");
}

/// Writes `src` as `name` in a temporary folder and runs it in the interpreter with
/// warnings denied.
fn run_generated(name: &str, src: String) -> std::process::Output {
    let dir = std::env::temp_dir().join(format!("durin-generated-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary folder");
    let path = dir.join(name);
    std::fs::write(&path, src).expect("write the program");
    let path = path.to_str().expect("a UTF-8 temporary path");
    common::durin(&["run", "--backend", "interp", "--deny-warnings", path])
}

fn assert_success(out: &std::process::Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Long flat chains (a 5,000-term sum, 10,000 casts, a sum of 1,000 calls) compile; a chain
/// past the parser's limit is an error with its place, never a stack overflow.
#[test]
fn long_flat_chains_compile_or_stop_with_a_place() {
    let terms = vec!["1"; 5000].join(" + ");
    assert_success(&run_generated(
        "sum.art",
        format!("fn main() -> i32 {{ let x = {terms}; x - 5000 }}\n"),
    ));
    let casts = " as i32 as i64".repeat(5000);
    assert_success(&run_generated(
        "casts.art",
        format!("fn main() -> i32 {{ let x = (7 as i64){casts}; x as i32 - 7 }}\n"),
    ));
    let calls = " + f(1)".repeat(1000);
    assert_success(&run_generated(
        "calls.art",
        format!("fn f(x: i32) -> i32 {{ x }}\nfn main() -> i32 {{ let n = 0{calls}; n - 1000 }}\n"),
    ));
    let long = vec!["1"; 10_002].join(" + ");
    let out = run_generated("long.art", format!("fn main() -> i32 {{ {long} }}\n"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("expression too long: more than 10000 operators")
            && err.contains("long.art:1:"),
        "{err}"
    );
}

/// A function of 4,000 parameters and a `match` of 10,000 arms check and run (both took
/// seconds to tens of seconds when names and uses were found in quadratic time).
#[test]
fn many_parameters_and_match_arms() {
    let params: Vec<String> = (0..4000).map(|i| format!("_p{i}: i32")).collect();
    let args: Vec<String> = (0..4000).map(|i| i.to_string()).collect();
    let arms: String = (0..10_000)
        .map(|i| format!("        {i} => {},\n", i * 3))
        .collect();
    let src = format!(
        "fn f({}) -> i32 {{ _p3999 }}\n\
         fn g(x: i32) -> i32 {{\n    match x {{\n{arms}        _ => 0\n    }}\n}}\n\
         fn main(argc: i32, _argv: &[&[u8]]) -> i32 {{ f({}) - 3999 + g(argc + 4) - 15 }}\n",
        params.join(", "),
        args.join(", ")
    );
    assert_success(&run_generated("wide.art", src));
}

/// An enum of 20,000 variants matched exhaustively and a struct of 5,000 fields check and
/// run (variant and field names were found by a linear search, and the exhaustiveness check
/// compared every arm with every variant: 20 s for the match alone).
#[test]
fn many_variants_and_fields() {
    let n = 20_000;
    let variants: Vec<String> = (0..n).map(|i| format!("V{i}")).collect();
    let arms: String = (0..n)
        .map(|i| format!("        E::V{i} => {},\n", i * 3))
        .collect();
    let fields: Vec<String> = (0..5000).map(|i| format!("f{i}: i32")).collect();
    let values: Vec<String> = (0..5000).map(|i| format!("f{i} = {i}")).collect();
    let src = format!(
        "enum E {{ {} }}\nstruct S {{ {} }}\n\
         fn pick(e: E) -> i32 {{\n    match e {{\n{arms}    }}\n}}\n\
         fn main(argc: i32, _argv: &[&[u8]]) -> i32 {{\n\
             let s = S {{ {} }};\n\
             pick(E::V{}) - {} + s.f4999 - 4999 + argc - 1\n}}\n",
        variants.join(", "),
        fields.join(", "),
        values.join(", "),
        n - 1,
        (n - 1) * 3
    );
    assert_success(&run_generated("many_names.art", src));
}

/// `pe_info(message, value)` prints, after partial evaluation, each call's place, message and
/// value where it is known (`not known at compile time` otherwise), in the program's order,
/// with every back end and target (in a kernel too); the program runs as without it.
#[test]
fn pe_info_prints_what_partial_evaluation_knows() {
    let f = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lang/info/pe_info.art");
    let want = "pe_info: tests/lang/info/pe_info.art:5:27: step size: 4\n\
                pe_info: tests/lang/info/pe_info.art:8:5: pair: (4, 1.5, true)\n\
                pe_info: tests/lang/info/pe_info.art:9:5: argc: not known at compile time\n\
                pe_info: tests/lang/info/pe_info.art:14:9: in a kernel: 5\n";
    for args in [
        &["run", "--target", "cpu"][..],
        &["run", "--target", "cpu", "--backend", "cranelift"],
        &["run", "--target", "cpu", "--backend", "interp"],
        &["run", "--target", "cuda-cpu"],
        &["run", "--target", "cuda", "--backend", "interp"],
    ] {
        let out = durin(args, &f, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {err}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "4\n", "{args:?}");
        assert_eq!(err, want, "{args:?}");
    }
}

/// An IR file given to `run` (or `check`, `build`) and a source program given to `ir` say
/// which command takes them, instead of a syntax error at their first line.
#[test]
fn files_of_the_other_kind_name_the_command_that_takes_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for cmd in ["run", "check"] {
        let out = durin(&[cmd], &root.join("tests/filetests/ir/factorial.dir"), &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains("is IR text, not a source program: run it with `durin ir --run tests/filetests/ir/factorial.dir`"),
            "{err}"
        );
    }
    let out = durin(
        &["ir"],
        &root.join("tests/lang/ok/image_view_copy.art"),
        &[],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("is a source program, not IR text: check it with `durin check tests/lang/ok/image_view_copy.art`"),
        "{err}"
    );
}

/// LLVM's messages about loops it leaves scalar do not reach the user: a correct program
/// whose library loops LLVM cannot vectorize prints its result and nothing else, through
/// LLVM's JIT at every level.
#[test]
fn llvm_says_nothing_about_loops_it_leaves_scalar() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lang/quiet/image_local_offsets.art");
    for level in ["-O0", "-O1", "-O2", "-O3"] {
        let out = durin(&["run", "--backend", "llvm", level], &f, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{level}: {err}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "8192\n", "{level}");
        assert!(err.is_empty(), "{level}: {err}");
    }
}
