//! Ahead-of-time builds: a C program calls exported durin functions through the header
//! `durin build --emit header` writes, linked with the object file and the runtime; the
//! other output kinds are written and name the exported functions.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{durin, root};

fn ok(out: &std::process::Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn tempdir(name: &str) -> PathBuf {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary folder");
    dir
}

fn s(p: &Path) -> String {
    p.to_string_lossy().to_string()
}

/// The runtime library beside the `durin` binary (built with the workspace).
fn runtime() -> PathBuf {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_durin"));
    let lib = exe.with_file_name("libdurin_runtime.a");
    assert!(
        lib.is_file(),
        "{} is missing: build the workspace first (`cargo build --workspace`)",
        lib.display()
    );
    lib
}

/// Compiles `main` (a path in the repository) with `compiler`, `flags` and the headers in
/// `include`, links it with `obj` and the runtime into `exe`, and runs it successfully.
fn link_and_run(
    compiler: &str,
    flags: &[&str],
    include: &Path,
    main: &str,
    obj: &Path,
    exe: &Path,
) -> std::process::Output {
    let cc = Command::new(compiler)
        .args(flags)
        .arg("-I")
        .arg(include)
        .arg(root().join(main))
        .arg(obj)
        .arg(runtime())
        .args(["-lpthread", "-ldl", "-lm", "-lgcc_s", "-lc", "-o"])
        .arg(exe)
        .output()
        .unwrap_or_else(|e| panic!("{compiler} does not run: {e}"));
    ok(&cc, compiler);
    let run = Command::new(exe).output().expect("the program runs");
    ok(&run, main);
    run
}

/// `-o -` writes the artifact to standard output, the same bytes as to a file of the
/// source's name (a header's guard comes from it), and leaves no file named `-`; an
/// executable is refused there.
#[test]
fn build_writes_to_standard_output_with_dash() {
    let dir = tempdir("build-to-stdout");
    for (emit, ext) in [("header", "h"), ("llvm-ir", "ll"), ("asm", "s")] {
        let file = dir.join(format!("mathlib.{ext}"));
        let args = ["build", "tests/native/mathlib.art", "--emit", emit, "-o"];
        ok(&durin(&[&args[..], &[&s(&file)]].concat()), emit);
        let out = durin(&[&args[..], &["-"]].concat());
        ok(&out, emit);
        let printed = String::from_utf8_lossy(&out.stdout);
        let written = std::fs::read_to_string(&file).expect("the file written");
        assert!(printed.len() > 100, "{emit}: {printed}");
        assert_eq!(printed, written, "{emit}");
    }
    assert!(!root().join("-").exists());
    let exe = durin(&[
        "build",
        "tests/native/mathlib.art",
        "--emit",
        "exe",
        "-o",
        "-",
    ]);
    assert_eq!(exe.status.code(), Some(1));
    let err = String::from_utf8_lossy(&exe.stderr);
    assert!(
        err.contains("an executable is not written to standard output"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_c_program_calls_exported_functions_through_the_generated_header() {
    let dir = tempdir("c-calls-durin");
    let (obj, header, exe) = (
        dir.join("mathlib.o"),
        dir.join("mathlib.h"),
        dir.join("use_mathlib"),
    );
    ok(
        &durin(&["build", "tests/native/mathlib.art", "-o", &s(&obj)]),
        "durin build",
    );
    ok(
        &durin(&[
            "build",
            "tests/native/mathlib.art",
            "--emit",
            "header",
            "-o",
            &s(&header),
        ]),
        "durin build --emit header",
    );
    let h = std::fs::read_to_string(&header).expect("header written");
    for decl in [
        "float dot(float* p0, float* p1, int32_t p2);",
        "void scale(double* p0, int32_t p1, double p2);",
        "int64_t lcm(int64_t p0, int64_t p1);",
        "bool is_even(uint32_t p0);",
        "void greet(void);",
    ] {
        assert!(h.contains(decl), "`{decl}` is not in the header:\n{h}");
    }
    let run = link_and_run("cc", &[], &dir, "tests/native/use_mathlib.c", &obj, &exe);
    let want = std::fs::read_to_string(root().join("tests/native/use_mathlib.out")).expect(".out");
    assert_eq!(String::from_utf8_lossy(&run.stdout), want);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The C++ compiler (`$CXX`, else `c++`; `scripts/setup.sh` installs g++).
fn cxx() -> String {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let found = Command::new(&cxx)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "no C++ compiler `{cxx}`: install g++ (scripts/setup.sh does) or set CXX"
    );
    cxx
}

#[test]
fn a_cpp_main_written_for_anydsls_runtime_links_unchanged() {
    let cxx = cxx();
    let dir = tempdir("anydsl-cpp");
    let (obj, exe) = (dir.join("box3.o"), dir.join("box3"));
    ok(
        &durin(&["build", "tests/native/box3.art", "-o", &s(&obj)]),
        "durin build",
    );
    let include = root().join("runtime/include");
    let main = "tests/native/anydsl_main.cpp";
    let run = link_and_run(&cxx, &["-std=c++11", "-Wall"], &include, main, &obj, &exe);
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "box3: 0 of 851 pixels wrong\npart: equal\nhost: CPU, ITS: 0\n\
         nan 1 0, inf 1 1, finite 1 0\naligned: 1\n-42\n"
    );
    // The C header alone compiles as C.
    let c = dir.join("header.c");
    std::fs::write(
        &c,
        "#include <anydsl_runtime.h>\nint main(void) { return anydsl_isnan(0.0); }\n",
    )
    .expect("write");
    let cc = Command::new("cc")
        .args(["-std=c99", "-Wall", "-c", "-I"])
        .arg(root().join("runtime/include"))
        .arg(&c)
        .arg("-o")
        .arg(dir.join("header.o"))
        .output()
        .expect("cc runs");
    ok(&cc, "cc on the C header");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn assembly_and_llvm_ir_name_the_exported_functions() {
    let dir = tempdir("emit-text");
    for (emit, file, needle) in [
        ("asm", "mathlib.s", "dot:"),
        ("llvm-ir", "mathlib.ll", "define float @dot(ptr"),
    ] {
        let out = dir.join(file);
        ok(
            &durin(&[
                "build",
                "tests/native/mathlib.art",
                "--emit",
                emit,
                "-o",
                &s(&out),
            ]),
            emit,
        );
        let text = std::fs::read_to_string(&out).expect("written");
        assert!(text.contains(needle), "{emit}: no `{needle}` in\n{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_build_requests_are_errors_with_messages() {
    let dir = tempdir("bad-build");
    let (exe, obj) = (s(&dir.join("x")), s(&dir.join("y.o")));
    let lib = "tests/native/mathlib.art";
    for (args, message) in [
        (
            vec!["--emit", "exe", "-o", &exe],
            "an executable needs a `main` function",
        ),
        (
            vec!["--cpu", "pentium9000", "-o", &obj],
            "unknown CPU `pentium9000`",
        ),
        (vec!["-o", "/nonexistent/dir/m.o"], "cannot write"),
        (
            vec!["--cpu", "pentium", "-o", &obj],
            "the CPU `pentium` has no 64-bit mode",
        ),
        (
            vec!["--cpu", "i386", "-o", &obj],
            "the CPU `i386` has no 64-bit mode",
        ),
        (
            vec!["-o", "/dev/full"],
            "cannot write /dev/full: No space left",
        ),
        (
            vec!["--emit", "asm", "-o", "/dev/full"],
            "cannot write /dev/full: No space left",
        ),
        (
            vec!["--emit", "llvm-ir", "-o", "/dev/full"],
            "cannot write /dev/full: No space left",
        ),
    ] {
        let out = durin(&[&["build", lib][..], &args].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains(message),
            "{args:?}: no `{message}` in\n{stderr}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program reads a real photograph, prints the mean of its samples and writes its 3x3 box
/// blur: both back ends write the image that an independent float64 computation here gives
/// (within one level of 8-bit rounding), and a missing file is a message, not a crash.
#[test]
fn image_files_load_and_save_through_the_runtime() {
    let input = root().join("tests/data/camera.png");
    let src = image::open(&input)
        .expect("the test image loads")
        .to_luma8();
    let (w, h) = (src.width() as i64, src.height() as i64);
    let px = |x: i64, y: i64| {
        src.get_pixel(x.clamp(0, w - 1) as u32, y.clamp(0, h - 1) as u32)[0] as f64 / 255.0
    };
    let mean: f64 = src.pixels().map(|p| p[0] as f64 / 255.0).sum::<f64>() / (w * h) as f64;
    let dir = tempdir("images");
    for backend in ["llvm", "cranelift"] {
        let out = dir.join(format!("blur-{backend}.png"));
        let run = durin(&[
            "run",
            "--backend",
            backend,
            "tests/native/blur_image.art",
            "--",
            &s(&input),
            &s(&out),
        ]);
        ok(&run, backend);
        let printed = String::from_utf8_lossy(&run.stdout).to_string();
        let fields: Vec<&str> = printed.split_whitespace().collect();
        assert_eq!(&fields[..2], &["512", "512"], "{backend}: {printed}");
        let m: f64 = fields[2].parse().expect("a mean");
        assert!((m - mean).abs() < 1e-5, "{backend}: mean {m}, want {mean}");
        let got = image::open(&out).expect("the output loads").to_luma8();
        assert_eq!((got.width() as i64, got.height() as i64), (w, h));
        let mut off = 0;
        for y in 0..h {
            for x in 0..w {
                let mut acc = 0.0;
                for dy in -1..=1 {
                    for dx in -1..=1 {
                        acc += px(x + dx, y + dy);
                    }
                }
                let want = (acc / 9.0 * 255.0).round() as i32;
                let g = got.get_pixel(x as u32, y as u32)[0] as i32;
                assert!(
                    (g - want).abs() <= 1,
                    "{backend}: ({x}, {y}) is {g}, want {want}"
                );
                off += (g != want) as usize;
            }
        }
        // Rounding may differ only where the float32 sum lies at a half level.
        assert!(
            off < (w * h / 100) as usize,
            "{backend}: {off} samples off by one"
        );
    }
    let missing = durin(&[
        "run",
        "tests/native/blur_image.art",
        "--",
        "no-such-image.png",
        &s(&dir.join("x.png")),
    ]);
    assert_eq!(missing.status.code(), Some(101));
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(
        err.contains("cannot load the image `no-such-image.png`"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The LLVM IR of `src` at `level` for an AVX2 machine (written into `dir`).
fn llvm_ir(dir: &Path, src: &Path, level: &str) -> String {
    let out = dir.join("out.ll");
    ok(
        &durin(&[
            "build",
            level,
            "--cpu",
            "x86-64-v3",
            "--emit",
            "llvm-ir",
            "-o",
            &s(&out),
            &s(src),
        ]),
        "durin build --emit llvm-ir",
    );
    std::fs::read_to_string(&out).expect("the IR file")
}

/// `vectorize_range(4, lo, hi)` puts LLVM's loop-vectorization hints on the loop's back edge, and
/// LLVM then vectorizes it with 4 lanes, which it does not choose by itself for the same
/// loop written with `range` (AVX2 target: it picks 8); every back end computes the same.
#[test]
fn vectorize_hints_reach_llvms_loop_vectorizer() {
    let dir = tempdir("vectorize");
    let hinted = root().join("tests/native/saxpy_vectorize.art");
    let plain = dir.join("saxpy_range.art");
    let text = std::fs::read_to_string(&hinted).expect("readable");
    std::fs::write(
        &plain,
        text.replace("vectorize_range(4, 0, n)", "range(0, n)"),
    )
    .expect("writable");
    let ir = |src: &Path, level: &str| llvm_ir(&dir, src, level);
    let o0 = ir(&hinted, "-O0");
    assert!(o0.contains("!llvm.loop !"), "{o0}");
    assert!(
        o0.contains("!{!\"llvm.loop.vectorize.width\", i32 4}"),
        "{o0}"
    );
    assert!(
        o0.contains("!{!\"llvm.loop.vectorize.enable\", i1 true}"),
        "{o0}"
    );
    assert!(ir(&hinted, "-O2").contains("fmul <4 x float>"));
    assert!(!ir(&plain, "-O2").contains("<4 x float>"));
    for backend in ["interp", "cranelift", "llvm"] {
        let run = durin(&["run", "--backend", backend, &s(&hinted)]);
        ok(&run, backend);
        // The sum of 2i + 1 for i < 1000.
        assert_eq!(String::from_utf8_lossy(&run.stdout), "1e+06\n", "{backend}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The optimized LLVM IR of the program at `src` for an AVX-512 machine, built in `dir`.
fn avx512_ir(dir: &Path, src: &Path) -> String {
    let out = dir.join("out.ll");
    let args = [
        "build",
        "-O2",
        "--cpu",
        "x86-64-v4",
        "--emit",
        "llvm-ir",
        "-o",
        &s(&out),
        &s(src),
    ];
    ok(&durin(&args), "durin build --emit llvm-ir");
    std::fs::read_to_string(&out).expect("the IR file")
}

/// The runtime's allocation functions return memory no other pointer points into (LLVM's
/// `noalias` on their result, as `malloc`'s): a table lookup over three fresh allocations,
/// whose loads no run-time check could show to miss the stores, is vectorized for an
/// AVX-512 machine, the table's elements loaded one by one into vectors of eight, not
/// gathered (`+prefer-no-gather`; without the attribute the loop stays scalar); every back
/// end computes the same.
#[test]
fn loops_over_fresh_allocations_vectorize_their_lookups() {
    let dir = tempdir("gather");
    let src = root().join("tests/native/gather_alloc.art");
    let ir = avx512_ir(&dir, &src);
    assert!(ir.contains("declare noalias ptr @anydsl_alloc("), "{ir}");
    assert!(ir.contains("insertelement <8 x float>"), "{ir}");
    assert!(!ir.contains("@llvm.masked.gather"), "{ir}");
    // The sum of table(idx(i)) = 3 ((7919 i) mod 256) for i < 4096.
    let want: u64 = (0..4096u64).map(|i| (i * 7919 % 256) * 3).sum();
    for backend in ["interp", "cranelift", "llvm"] {
        let run = durin(&["run", "--backend", backend, &s(&src)]);
        ok(&run, backend);
        let got: f64 = String::from_utf8_lossy(&run.stdout)
            .trim()
            .parse()
            .expect("a number");
        assert_eq!(got, want as f64, "{backend}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `vectorize_range` loop that reads through an index in a function whose pointers may
/// point anywhere vectorizes: its iterations are independent, as the loop promises, so
/// LLVM needs no run-time check of its pointers (which it could not build for an address
/// computed at run time). The elements are loaded one by one into the vector, not gathered
/// (`+prefer-no-gather`, docs/src/decisions.md). So does one that reads four entries at once
/// (a `[f32 * 4]`, loaded element by element with the loop's access group: LLVM's own split
/// of the load dropped it, and the loop stayed scalar). A loop whose body keeps a table on
/// the stack (one slot for every iteration) is left to LLVM's own analysis and computes
/// what it says. Every back end computes the same.
#[test]
fn vectorized_loops_gather_through_an_index_without_pointer_checks() {
    let dir = tempdir("gather-parallel");
    let src = root().join("tests/native/gather_parallel.art");
    let ir = avx512_ir(&dir, &src);
    let body = |name: &str| {
        let start = ir.find(&format!("@{name}(")).expect("the function");
        let end = ir[start..].find("\n}\n").expect("its end") + start;
        ir[start..end].to_string()
    };
    let gather = body("gather");
    assert!(gather.contains("vector.body:"), "{gather}");
    assert!(!gather.contains("vector.memcheck"), "{gather}");
    assert!(gather.contains("insertelement <8 x float>"), "{gather}");
    assert!(!gather.contains("@llvm.masked.gather"), "{gather}");
    let gather4 = body("gather4");
    assert!(gather4.contains("vector.body:"), "{gather4}");
    assert!(!gather4.contains("vector.memcheck"), "{gather4}");
    let private = body("private_table");
    assert!(private.contains("alloca"), "{private}");
    // The table's accesses carry no access group: the loop is not parallel for LLVM.
    let unmarked = private
        .lines()
        .filter(|l| {
            (l.contains(" = load ") || l.contains(" store ")) && !l.contains("llvm.access.group")
        })
        .count();
    assert!(unmarked > 0, "{private}");
    let want = {
        let a: u64 = (0..4096u64).map(|i| (i * 7919 % 256) * 3).sum();
        let b: u64 = (0..4096u64).sum();
        // Entries k to k + 3 of table(j) = 3 j: 12 k + 18 (the sum printed divided by 8).
        let c: u64 = (0..4096u64).map(|i| (i * 7919 % 256) * 12 + 18).sum();
        format!("{}\n{}\n{}\n", a as f64, b as f64, c as f64 / 8.0)
    };
    for backend in ["interp", "cranelift", "llvm"] {
        let run = durin(&["run", "--backend", backend, &s(&src)]);
        let text = String::from_utf8_lossy(&run.stdout).to_string();
        ok(&run, backend);
        let got: Vec<f64> = text
            .lines()
            .map(|l| l.trim().parse().expect("a number"))
            .collect();
        let want: Vec<f64> = want.lines().map(|l| l.parse().expect("a number")).collect();
        assert_eq!(got, want, "{backend}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A loop that branches on a loop-invariant value stays one loop at `-O3`: LLVM's
/// non-trivial unswitching, which would copy it per outcome, is off (docs/src/decisions.md);
/// the vectorizer then computes both arms and selects. Every back end computes the same.
#[test]
fn loops_are_not_copied_per_outcome_of_an_invariant_branch() {
    let dir = tempdir("unswitch");
    let src = root().join("tests/native/invariant_branch.art");
    let ir = llvm_ir(&dir, &src, "-O3");
    let blend = ir
        .split("\ndefine ")
        .find(|f| f.contains("@blend("))
        .expect("the exported function");
    let loops = blend
        .lines()
        .filter(|l| l.starts_with("vector.body"))
        .count();
    assert_eq!(loops, 1, "{blend}");
    assert!(blend.contains("select i1"), "{blend}");
    for backend in ["interp", "cranelift", "llvm"] {
        let run = durin(&["run", "-O3", "--backend", backend, &s(&src)]);
        ok(&run, backend);
        // The sum of (i + 2) * 2 for i < 1000.
        assert_eq!(
            String::from_utf8_lossy(&run.stdout),
            "1.003e+06\n",
            "{backend}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `store_stream` in a vectorized loop from an `assume_aligned` start becomes aligned
/// non-temporal vector stores (`vmovntps`), and every back end computes what plain stores
/// would.
#[test]
fn streaming_stores_are_aligned_nontemporal_vector_stores() {
    let dir = tempdir("stream");
    let src = root().join("tests/native/stream_copy.art");
    let ir = llvm_ir(&dir, &src, "-O2");
    assert!(
        ir.lines()
            .any(|l| l.contains("store <8 x float>") && l.contains("align 32, !nontemporal")),
        "{ir}"
    );
    // The marker that carried the stores through optimization is gone from them.
    assert!(
        !ir.lines()
            .any(|l| l.contains("store") && l.contains("!alias.scope")),
        "{ir}"
    );
    for backend in ["interp", "cranelift", "llvm"] {
        let run = durin(&["run", "--backend", backend, &s(&src)]);
        ok(&run, backend);
        // The sum of 2i + 1 for i < 1000.
        assert_eq!(String::from_utf8_lossy(&run.stdout), "1e+06\n", "{backend}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Calls in tail position are guaranteed tail calls and closed loops are branches, on
/// every back end and level: ten million of each would overflow the stack otherwise.
#[test]
fn deep_tail_calls_run_in_constant_stack_space() {
    // `count`: the sum 1..=n; `even`/`odd`: two steps turn a into (a + 2) ^ 1.
    let n: i64 = 10_000_000;
    let sum = n * (n + 1) / 2;
    let mut a: i32 = 0;
    for _ in 0..n / 2 {
        a = (a + 2) ^ 1;
    }
    let expected = format!("{sum} {a} {}\n", 3 * n);
    for flags in [
        &["-O0", "--backend", "cranelift"][..],
        &["-O2", "--backend", "cranelift"],
        &["-O0", "--backend", "llvm"],
        &["-O1", "--backend", "llvm"],
        &["-O3", "--backend", "llvm"],
    ] {
        let mut args = vec!["run"];
        args.extend_from_slice(flags);
        args.push("tests/native/deep_tail_calls.art");
        let out = durin(&args);
        ok(&out, &format!("{flags:?}"));
        assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "{flags:?}");
    }
}

/// A program of a few thousand instructions has its object code made in two parts on two
/// threads, merged into one object file, and the executable linked from it computes what
/// the program should (calls across the parts resolve).
#[test]
fn an_object_made_in_parts_links_and_runs() {
    let dir = tempdir("parts");
    let src = root().join("tests/lang/ok/image_pipeline_runtime_stages.art");
    let exe = dir.join("stages");
    let built = durin(&["build", "--time", "--emit", "exe", "-o", &s(&exe), &s(&src)]);
    ok(&built, "build");
    let err = String::from_utf8_lossy(&built.stderr);
    assert!(
        err.lines()
            .any(|l| l.trim_start().starts_with("codegen:") && l.contains("(in two parts")),
        "{err}"
    );
    let run = Command::new(&exe)
        .arg("3")
        .output()
        .expect("the program runs");
    ok(&run, "the program");
    let want = std::fs::read_to_string(src.with_extension("out")).expect(".out file");
    assert_eq!(String::from_utf8_lossy(&run.stdout), want);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program that imports a function nothing defines is an error naming the function on
/// each native back end (the JIT would otherwise crash, or panic), as it is for the
/// interpreter and for `build --emit exe`.
#[test]
fn an_import_nothing_defines_is_an_error_naming_it() {
    let src = s(&root().join("tests/native/unknown_import.art"));
    for backend in ["llvm", "cranelift", "interp"] {
        let out = durin(&["run", "--backend", backend, &src]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            matches!(out.status.code(), Some(1 | 101)),
            "{backend}: {:?}\n{err}",
            out.status
        );
        assert!(err.contains("durin_no_such_function"), "{backend}: {err}");
        assert!(!err.contains("panicked"), "{backend}: {err}");
    }
}

/// A module optimized in two parts has the streaming stores of both parts made
/// `!nontemporal`: each part marks them with a scope list of its own (listed in the named
/// metadata `!durin.stream`), and no store may keep one of those markers. (Linking the
/// parts first left the second part's streaming stores as plain stores.)
#[test]
fn streaming_stores_of_every_part_are_nontemporal() {
    let dir = tempdir("stream-parts");
    let ir = llvm_ir(&dir, &root().join("tests/image/ops.art"), "-O2");
    let line = (ir.lines())
        .find(|l| l.starts_with("!durin.stream = !{"))
        .unwrap_or_else(|| panic!("no !durin.stream in\n{ir}"));
    let markers: Vec<String> = line["!durin.stream = !{".len()..]
        .trim_end_matches('}')
        .split(", ")
        .map(|m| format!("!alias.scope {m}"))
        .collect();
    assert_eq!(markers.len(), 2, "two parts, a marker each: {line}");
    let marked = |l: &&str| {
        markers.iter().any(|m| {
            l.split(m)
                .nth(1)
                .is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_digit()))
        })
    };
    let left: Vec<&str> = (ir.lines())
        .filter(|l| l.contains("store"))
        .filter(marked)
        .collect();
    assert!(
        left.is_empty(),
        "streaming stores left plain:\n{}",
        left.join("\n")
    );
    assert!(ir
        .lines()
        .any(|l| l.contains("store") && l.contains("!nontemporal")));
    let _ = std::fs::remove_dir_all(&dir);
}
