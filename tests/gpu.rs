//! GPU programs: kernel outlining and its diagnostics, CUDA C and its compilation by NVRTC
//! (no GPU needed), and runs on the GPU compared with the CPU (skipped with a message where
//! there is no CUDA driver).

mod common;
use common::{durin, interp_cuda};

/// The IR of `program` after `O2`, kernel outlining and dead-code elimination.
fn outlined(program: &str) -> String {
    let out = durin(&[
        "check",
        "--passes",
        "O2,outline,dce",
        "--print-after",
        "dce",
        program,
    ]);
    let all = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The world after the last pass (`O2` has a `dce` of its own).
    all[all.rfind("// ----- after").expect("printed")..].to_string()
}

#[test]
fn outlining_closes_the_kernel_over_the_device_pointers_it_uses() {
    let text = &outlined("tests/gpu/vector_add.art");
    // The kernel takes the two device pointers (and nothing of the host's control).
    let kernel = text
        .lines()
        .find(|l| l.starts_with("cont @kernel("))
        .unwrap_or_else(|| panic!("no kernel in:\n{text}"));
    let params: Vec<&str> = kernel["cont @kernel(".len()..]
        .trim_end_matches(") {")
        .split(", %")
        .map(|p| p.split(": ").nth(1).unwrap_or(""))
        .collect();
    assert_eq!(
        params,
        ["mem", "ptr([f32], global)", "ptr([f32], global)", "cn(mem)"],
        "{kernel}"
    );
    // The launch passes them.
    let launch = text
        .lines()
        .find(|l| l.contains("jump launch:"))
        .expect("a launch");
    assert!(launch.contains("@kernel, %"), "{launch}");
    // Nothing of the lambda the kernel came from is left.
    assert!(!text.contains("@lambda"), "{text}");
}

#[test]
fn a_kernel_that_captures_a_closure_is_an_error_at_its_source() {
    let out = durin(&[
        "check",
        "-O2",
        "--passes",
        "O2,outline",
        "tests/gpu/captures_closure.art",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("a GPU kernel cannot capture a closure"),
        "{err}"
    );
    assert!(err.contains("captures_closure.art:"), "{err}");
    // The closure is `apply`'s parameter: the note says how to have it specialized.
    assert!(err.contains("it is a parameter of `apply`"), "{err}");
    assert!(err.contains("mark it `fn @apply`"), "{err}");
}

/// What `durin build --emit cuda` says of `program`, which it must reject (exit status 1).
fn cuda_build_error(program: &str) -> String {
    let out = durin(&["build", "--emit", "cuda", "-o", "/dev/null", program]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    err
}

#[test]
fn an_error_in_a_library_kernel_names_the_programs_call() {
    let err = cuda_build_error("tests/gpu/library_kernel_captures.art");
    // The primary place is the library's kernel (its launch in the GPU accelerator), not
    // the helper its launch was inlined into; the label names the program's `map1` call.
    for want in [
        "a GPU kernel cannot capture a closure",
        "<prelude>/gpu.art:",
        "library_kernel_captures.art:8:5",
        "in the code specialized for this call",
    ] {
        assert!(err.contains(want), "no `{want}` in:\n{err}");
    }
    assert!(!err.contains("fn @alloc"), "placed at `alloc`:\n{err}");
}

/// The GPU programs of the test suite and the benchmarks.
const PROGRAMS: &[&str] = &[
    "tests/gpu/vector_add.art",
    "tests/gpu/reduce_atomic.art",
    "tests/gpu/stencil5x5.art",
    "tests/gpu/math.art",
    "tests/gpu/reverse_block.art",
    "tests/gpu/simd.art",
    "tests/gpu/host_branch.art",
    "tests/gpu/match_kernels.art",
    "tests/gpu/portable_saxpy.art",
    "tests/gpu/conversions.art",
    "tests/gpu/aliased_pointers.art",
    "tests/gpu/pointer_int_casts.art",
    "tests/gpu/streaming_store.art",
    "tests/gpu/pipeline.art",
    "tests/gpu/shared_sizes.art",
    "tests/gpu/anydsl_names.art",
    "tests/gpu/printf_half.art",
    "tests/gpu/tiles.art",
    "tests/gpu/tiles_local.art",
    "tests/gpu/tiles_staged.art",
    "tests/gpu/tiles_window.art",
    "tests/gpu/two_devices.art",
    "tests/gpu/histogram.art",
    "tests/gpu/local_laplacian.art",
    "tests/gpu/alloc_reuse.art",
    "tests/gpu/graph.art",
    "benches/gpu/copy.art",
    "benches/gpu/launch.art",
    "benches/gpu/staging.art",
    "benches/gpu/stencil.art",
    "benches/gpu/two_devices.art",
];

fn ok(out: &std::process::Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The executable finds NVRTC by itself where the setup installs it (the project's
/// `.deps`), with no library path set: `--emit ptx` works as `./scripts/example` left it.
#[test]
fn nvrtc_is_found_without_the_library_path() {
    let exe = std::env::var_os("DURIN_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_BIN_EXE_durin")));
    let out_file = std::env::temp_dir().join(format!("durin-nvrtc-{}.ptx", std::process::id()));
    let out = std::process::Command::new(exe)
        .current_dir(common::root())
        .env_remove("LD_LIBRARY_PATH")
        .args([
            "build",
            "--emit",
            "ptx",
            "-o",
            out_file.to_str().unwrap(),
            "tests/gpu/vector_add.art",
        ])
        .output()
        .expect("durin runs");
    ok(&out, "`--emit ptx` without LD_LIBRARY_PATH");
    let ptx = std::fs::read_to_string(&out_file).unwrap_or_default();
    let _ = std::fs::remove_file(&out_file);
    assert!(ptx.contains(".entry kernel_0"), "{ptx}");
}

#[test]
fn every_kernel_compiles_with_nvrtc_for_sm_90() {
    assert!(
        durin_runtime::cuda::nvrtc::available(),
        "NVRTC is not on the library path (run the tests through ./scripts/test, which sets it up)"
    );
    let dir = std::env::temp_dir().join(format!("durin-ptx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ptx = |extra: &[&str], p: &str, out_file: &std::path::Path| {
        let mut args = vec!["build"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&[
            "--emit",
            "ptx",
            "--gpu-arch",
            "sm_90",
            "-o",
            out_file.to_str().unwrap(),
            p,
        ]);
        ok(
            &durin(&args),
            &format!("compiling the kernels of {p} {extra:?} to PTX"),
        );
    };
    for p in PROGRAMS {
        let out_file = dir.join("out.ptx");
        ptx(&[], p, &out_file);
        let ptx = std::fs::read_to_string(&out_file).unwrap();
        assert!(ptx.contains(".target sm_90"), "{p}: {ptx}");
        assert!(
            ptx.contains(".entry kernel_0") || ptx.contains(".entry lambda_0"),
            "{p}: {ptx}"
        );
    }
    // The staged kernels too.
    for p in ["tests/gpu/staging.art", "benches/gpu/staging.art"] {
        ptx(&["--shm", "on"], p, &dir.join("staged.ptx"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The examples of `examples/`.
const EXAMPLES: [&str; 10] = [
    "gaussian",
    "sobel",
    "box",
    "unsharp",
    "bilateral",
    "bilateral_grid",
    "local_laplacian",
    "harris",
    "histeq",
    "blend",
];

/// Each example, compiled for the GPU with its kernels run on the CPU's cores, times its
/// operator where the program runs and on the CPU beside it, and compares the results
/// (the same code on the same cores here: equal).
#[test]
fn the_examples_time_the_gpu_and_the_cpu_side_by_side() {
    let dir = std::env::temp_dir().join(format!("durin-side-by-side-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    for example in EXAMPLES {
        let p = format!("examples/{example}.art");
        let mut args = vec![
            "run",
            "--target",
            "cuda-cpu",
            &p,
            "--",
            "tests/data/camera.png",
        ];
        if example == "blend" {
            args.push("tests/data/astronaut.png");
        }
        let name = if example == "gaussian" {
            "g".to_string()
        } else {
            format!("{example}.png")
        };
        let out = dir.join(name).display().to_string();
        args.push(&out);
        let text = ok(&durin(&args), example);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with(&format!("{example}: 512x512 pixels on the GPU (CUDA)")),
            "{text}"
        );
        let timed = lines
            .iter()
            .filter(|l| {
                l.contains(" ms on the GPU (CUDA), ") && l.contains(" ms on the CPU; first run ")
            })
            .count();
        let equal = lines
            .iter()
            .filter(|l| l.ends_with(": the GPU's and the CPU's results are equal"))
            .count();
        let runs = if example == "gaussian" { 3 } else { 1 };
        assert_eq!((timed, equal), (runs, runs), "{example}:\n{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_accepts_every_gpu_program_at_every_level() {
    // At level 0 nothing is specialized: a function that takes an accelerator keeps its
    // generic launch, which only the levels that outline kernels must resolve.
    let examples = EXAMPLES.map(|e| format!("examples/{e}.art"));
    let programs = PROGRAMS.iter().map(|p| p.to_string()).chain(examples);
    for p in programs {
        for level in ["-O0", "-O1", "-O2", "-O3"] {
            for target in ["cuda", "cpu"] {
                ok(
                    &durin(&["check", level, "--target", target, &p]),
                    &format!("durin check {level} --target {target} {p}"),
                );
            }
        }
    }
}

/// Launches of the same code share one kernel. tests/gpu/harris_operators.art runs nine
/// operators: the three smoothings (the same Gaussian on three images) are one kernel, the
/// two squares (`a * a` of `ix` and of `iy`) one, the two Sobel filters (other masks), the
/// product and the response one each: six kernels, and nine launches of them.
#[test]
fn launches_of_the_same_code_share_one_kernel() {
    let p = "tests/gpu/harris_operators.art";
    let cuda = ok(
        &durin(&["build", "--emit", "cuda", "-o", "/dev/stdout", p]),
        p,
    );
    assert_eq!(cuda.matches("__global__").count(), 6, "{cuda}");
    let host = ok(
        &durin(&["build", "--emit", "llvm-ir", "-o", "/dev/stdout", p]),
        p,
    );
    let launches = (host.lines())
        .filter(|l| l.contains("call") && l.contains("@durin_cuda_launch("))
        .count();
    assert_eq!(launches, 9, "{host}");
    for i in 0..6 {
        assert!(host.contains(&format!("c\"kernel_{i}\\00\"")), "{host}");
    }
    assert!(!host.contains("c\"kernel_6\\00\""), "{host}");
}

/// Launches whose kernels are the same code up to the host's values they use are
/// specialized once: after partial evaluation, each such kernel only calls one function
/// with its own values. tests/gpu/shared_code.art launches `fill` three times with the
/// same code and once with another constant, and `scale` twice: of six kernels, three call
/// one function and two another. (Its results are checked with the other GPU programs'.)
#[test]
fn partial_evaluation_specializes_the_code_of_launches_once() {
    let p = "tests/gpu/shared_code.art";
    let ir = ok(
        &durin(&["check", "--passes", "pe,dce", "--print-after", "dce", p]),
        p,
    );
    let ir = ir.split("// ----- after pe-info").next().unwrap();
    // The kernel of each launch: its next-to-last argument.
    let kernels: Vec<&str> = (common::jump_args(ir, "jump launch:").into_iter())
        .map(|a| a[a.len() - 2])
        .collect();
    assert_eq!(kernels.len(), 6, "{ir}");
    // Each kernel calls shared code with its own memory first and return point last.
    let shared = common::shared_callers(ir, &kernels);
    assert_eq!(shared, [2, 3], "{ir}");
}

/// The application benchmarks (`benches/apps/`: every strategy of an application, on the
/// GPU and on the CPU's cores, in one program each) are the largest programs of the image
/// library: each compiles for CUDA (its kernels' CUDA C, and its host code through closure
/// elimination, whose error on one of them no smaller program had shown) and writes the
/// CUDA C of at least one kernel.
#[test]
fn application_benchmarks_compile_for_cuda() {
    let apps = common::files_in("benches/apps", &["art"]);
    assert!(apps.len() >= 5, "{apps:?}");
    let out_dir = std::env::temp_dir().join(format!("durin-apps-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).expect("a temporary folder");
    for app in &apps {
        let name = app.file_stem().unwrap().to_string_lossy().into_owned();
        let rel = format!("benches/apps/{name}.art");
        let cu = out_dir.join(format!("{name}.cu"));
        let out = durin(&[
            "build",
            "-O2",
            "--target",
            "cuda",
            "--emit",
            "cuda",
            "-o",
            cu.to_str().unwrap(),
            &rel,
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        if name == "cpu" {
            // The CPU's schedule alone: no kernel to write, said so.
            assert!(
                !out.status.success() && err.contains("launches no GPU kernel"),
                "{rel}: {err}"
            );
            continue;
        }
        assert!(out.status.success(), "{rel}: {err}");
        let text = std::fs::read_to_string(&cu).expect("the CUDA C");
        assert!(text.contains("__global__"), "{rel}: no kernel in\n{text}");
    }
    let _ = std::fs::remove_dir_all(&out_dir);
}

#[test]
fn the_cuda_text_shows_restrict_const_launch_bounds_and_shared_memory() {
    let cuda = |p: &str| {
        ok(
            &durin(&["build", "--emit", "cuda", "-o", "/dev/stdout", p]),
            p,
        )
    };
    let va = cuda("tests/gpu/vector_add.art");
    // `a` is only read and `b` only written; both come from their own allocations.
    assert!(
        va.contains(
            "extern \"C\" __global__ void __launch_bounds__(256) kernel_0(const float* __restrict__ "
        ),
        "{va}"
    );
    assert!(va.contains(", float* __restrict__ "), "{va}");
    assert!(
        va.contains("blockIdx.x") && va.contains("threadIdx.x"),
        "{va}"
    );
    let rb = cuda("tests/gpu/reverse_block.art");
    assert!(rb.contains("__shared__ __align__(16) float "), "{rb}");
    assert!(rb.contains("[64];"), "{rb}");
    assert!(rb.contains("__syncthreads();"), "{rb}");
    // The one buffer is read and written: not const.
    assert!(!rb.contains("const float*"), "{rb}");
    // Two pointers into one buffer, one of them loaded: neither is shown unaliased.
    let al = cuda("tests/gpu/aliased_pointers.art");
    assert!(al.contains("kernel_0(const float* v"), "{al}");
    assert!(!al.contains("__restrict__"), "{al}");
    // A pointer made from an integer in the kernel: no parameter is shown unaliased.
    let pi = cuda("tests/gpu/pointer_int_casts.art");
    assert!(pi.contains("(float*)(unsigned long long)"), "{pi}");
    assert!(!pi.contains("__restrict__"), "{pi}");
}

#[test]
fn a_program_without_kernels_has_no_cuda_code() {
    let err = cuda_build_error("tests/native/mathlib.art");
    assert!(err.contains("launches no GPU kernel"), "{err}");
}

/// The interpreter runs CUDA kernels as a GPU would in the semantics that matter (blocks,
/// the threads of a block interleaved at `__syncthreads`, shared memory per block,
/// atomics): the GPU programs print what they print on the H100 (the same expected
/// outputs as the GPU tests below, which run where there is a GPU).
#[test]
fn the_interpreter_runs_cuda_kernels() {
    // The programs that run in seconds there.
    for (p, want) in gpu_program_outputs().into_iter().take(11) {
        assert_eq!(ok(&interp_cuda("off", &[p]), p), want, "{p}");
    }
}

/// What `tests/gpu/histogram.art` prints for a `w` x `h` image: each case counts every
/// pixel, and no bin differs from the host's count or the CPU schedule's.
fn histogram_expected(w: usize, h: usize) -> String {
    let n = w * h;
    format!(
        "256 levels counted {n} differ 0 cpu differ 0\n7 levels, a view counted {n} differ 0 cpu differ 0\nno pixels counted 0 differ 0 cpu differ 0\n5 levels known at run time counted {n} differ 0 cpu differ 0\n"
    )
}

/// The GPU programs and what each prints on the GPU, computed here (the quick ones first).
fn gpu_program_outputs() -> Vec<(&'static str, String)> {
    let sum = (0..1i32 << 20)
        .map(|i| i.wrapping_mul(7919) % 1001 - 500)
        .fold(0i32, i32::wrapping_add);
    vec![
        // C's printf of these values; half arithmetic equal to the host's.
        (
            "tests/gpu/printf_half.art",
            "int -42,  2.500|7   |1234567890123 ff z str %\n1.000000e-04 1e+20 [   ab]\ndiffer 0\n"
                .to_string(),
        ),
        ("tests/gpu/vector_add.art", "1048576\n".to_string()),
        // Launches sharing code each write their own buffer (the third half of it).
        (
            "tests/gpu/shared_code.art",
            "1024 1024 512 1024 1024\n".to_string(),
        ),
        ("tests/gpu/streaming_store.art", "1048576\n".to_string()),
        ("tests/gpu/reverse_block.art", "1024\n".to_string()),
        // Every lane of both vector kernels' results (2 x 4096) is right.
        ("tests/gpu/simd.art", "8192\n".to_string()),
        // Every element takes the arm `n >= 1000` (n = 1024): tripled.
        ("tests/gpu/host_branch.art", "1024\n".to_string()),
        // Both kernels' results equal the host's, element by element.
        ("tests/gpu/match_kernels.art", "2048\n".to_string()),
        ("tests/gpu/aliased_pointers.art", "1024\n".to_string()),
        ("tests/gpu/pointer_int_casts.art", "1024\n".to_string()),
        (
            "tests/gpu/reduce_atomic.art",
            format!("gpu {sum} cpu {sum} equal\n"),
        ),
        // Every element of both kernels' results (1024 each) is right.
        ("tests/gpu/shared_sizes.art", "2048 of 2048\n".to_string()),
        (
            "tests/gpu/anydsl_names.art",
            format!(
                "{} 0\n",
                (0..1024).map(|i| (i as f32).sqrt() as i32).sum::<i32>()
            ),
        ),
        ("tests/gpu/pipeline.art", "1005565 of 1005565\n".to_string()),
        // A run-time number of stages, on the CPU and the GPU, and a constant one on the
        // GPU: the bits of the constant one on the CPU, every boundary mode.
        (
            "tests/gpu/pipeline_runtime_stages.art",
            "0 0 0\n".repeat(4),
        ),
        // Lazy images realized on the GPU's tiles: the CPU's bits.
        (
            "tests/gpu/graph.art",
            "harris clamp differ 0\nharris mirror, a view differ 0\nharris mirror, a view, the gradients in memory differ 0\n\
             every operator repeat differ 0\nthree inputs mirror101 differ 0\nharris clamp, shared differ 0\n\
             harris mirror, a view, the sums stored too, shared differ 0\nevery operator repeat, shared differ 0\n\
             three inputs mirror101, shared differ 0\nbox chain clamp differ 0\nbox chain mirror, a view differ 0\n\
             harris clamp, strips differ 0\nharris mirror, a view, the sums stored too, strips differ 0\n\
             every operator repeat, strips differ 0\nthree inputs mirror101, strips differ 0\n\
             box chain clamp, strips differ 0\nbox chain mirror, a view, strips differ 0\n\
             box chain clamp, the first stage in memory, strips differ 0\n\
             unsharp of three planes differ 0\nunsharp of three planes, shared differ 0\n\
             unsharp of three planes, strips differ 0\n"
                .to_string(),
        ),
        // Every pixel counted once, in the host's bins.
        ("tests/gpu/histogram.art", histogram_expected(301, 77)),
        // The same arithmetic in the same order on every level: the CPU's bits.
        ("tests/gpu/local_laplacian.art", LOCAL_LAPLACIAN_EXPECTED.to_string()),
        (
            "tests/gpu/stencil5x5.art",
            format!(
                "pixels 786432 differ 0 checksum {}\n",
                stencil5x5_checksum()
            ),
        ),
        ("tests/gpu/conversions.art", conversions_expected()),
        (
            "tests/gpu/tiles.art",
            "sep5 clamp differ 0\nsep3x7 mirror, rows not 16-byte aligned differ 0\n\
             sep7 constant, view differ 0\n"
                .to_string(),
        ),
        (
            "tests/gpu/tiles_local.art",
            "2d5x5 repeat differ 0\nsobel squared mirror, 8 rows per thread differ 0\n\
             sep5 clamp, one lane, no regions differ 0\n"
                .to_string(),
        ),
        (
            "tests/gpu/tiles_window.art",
            "local2 clamp differ 0\nlocal2 mirror, view differ 0\n\
             local2 repeat, 8 rows per thread differ 0\npyr_down clamp differ 0\n\
             pyr_down mirror, view differ 0\npyr_down constant, 2 rows per thread differ 0\n\
             pyr_up clamp differ 0\npyr_up repeat, view, odd size differ 0\n\
             pyr_up mirror, two lanes, no regions differ 0\nresize linear clamp, up differ 0\n\
             resize cubic mirror, down, view differ 0\n\
             resize nearest repeat, 2 rows per thread differ 0\ngenerate differ 0\n"
                .to_string(),
        ),
        (
            "tests/gpu/tiles_staged.art",
            "box21 clamp differ 0\nbox21x9 mirror, rows not 16-byte aligned differ 0\n\
             pipeline of two, constant, view differ 0\n\
             pipeline of two, clamp, no 16-byte accesses differ 0\n\
             pipeline of three, repeat, 16 rows differ 0\n"
                .to_string(),
        ),
        ("tests/gpu/portable_saxpy.art", portable_saxpy_expected()),
        // Memory freed and allocated again (from the device's memory pool) holds what each
        // round wrote.
        ("tests/gpu/alloc_reuse.art", "200 of 200\n".to_string()),
        // Each device's half of the result is right (each half adds its device's number).
        ("tests/gpu/two_devices.art", two_devices_expected()),
    ]
}

/// What `tests/gpu/two_devices.art` prints when both devices compute their halves.
fn two_devices_expected() -> String {
    "device 0: 524288 of 524288\ndevice 1: 524288 of 524288\n".to_string()
}

/// The number before `what` in `line` (`... 53 registers ...`).
fn number_before(line: &str, what: &str) -> u64 {
    let head = &line[..line
        .find(what)
        .unwrap_or_else(|| panic!("no `{what}` in {line}"))];
    head.trim_end().rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
fn the_launch_report_gives_each_kernels_resources_from_its_cubin() {
    let report = |p: &str, extra: &[&str]| {
        let file = std::env::temp_dir().join(format!("durin-launch-{}.o", std::process::id()));
        let mut args = vec!["build", "--report", "launch", "-o"];
        args.push(file.to_str().unwrap());
        args.extend_from_slice(extra);
        args.push(p);
        let out = durin(&args);
        let _ = std::fs::remove_file(&file);
        assert!(out.status.success(), "{p}: {out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    // 64 threads reversing through a shared array of 64 floats.
    let rb = report("tests/gpu/reverse_block.art", &[]);
    let line = rb
        .lines()
        .find(|l| l.starts_with("launch: kernel `kernel_0`"))
        .expect(&rb);
    // A kernel that says nothing of its tile.
    assert!(line.contains("blocks of 64x1x1: "), "{line}");
    assert!(
        line.contains(" 256 bytes of shared memory, 0 bytes of local memory per thread"),
        "{line}"
    );
    let regs = number_before(line, "registers");
    assert!((1..=255).contains(&regs), "{line}");
    // The staged box filter's tile: 32 rows and the 10 above and below, 128 columns of
    // floats; blocks of 128 threads. An H100's SM: 65536 registers given out 256 at a
    // time per warp, 64 warps, 32 blocks, 228 KB of shared memory with 1 KB reserved per
    // block.
    let st = report("tests/gpu/tiles_staged.art", &[]);
    let line = st
        .lines()
        .find(|l| l.starts_with("launch: kernel `kernel_0`"))
        .expect(&st);
    let tile = (32 + 2 * 10) * 128 * 4;
    // The block's tile and each thread's pixels, as the library's launch model chose them.
    assert!(
        line.contains("blocks of 32x4x1 of 128x32 pixels, 1x32 per thread: "),
        "{line}"
    );
    assert!(
        line.contains(&format!(" {tile} bytes of shared memory")),
        "{line}"
    );
    let regs = number_before(line, "registers");
    let per_warp = (regs * 32).div_ceil(256) * 256;
    let by_registers = 65536 / per_warp / 4;
    let by_shared = (228 * 1024) / (tile + 1024);
    let blocks = by_registers.min(by_shared).min(16).min(32);
    assert!(
        line.contains(&format!("; {blocks} blocks ({} warps, ", blocks * 4)),
        "{line}: {by_registers} by registers, {by_shared} by shared memory"
    );
    // The register tiles of a 5x5 separable filter: 4 pixels of 4 rows per thread, blocks
    // of 32 x 4 threads.
    let t = report("tests/gpu/tiles.art", &[]);
    assert!(
        t.contains("blocks of 32x4x1 of 128x16 pixels, 4x4 per thread: "),
        "{t}"
    );
    // No kernels, no resources; an architecture without a model says so.
    let cpu = report("tests/gpu/portable_saxpy.art", &["--target", "cpu"]);
    assert!(cpu.contains("launch: no CUDA kernels"), "{cpu}");
    let sm100 = report("tests/gpu/reverse_block.art", &["--gpu-arch", "sm_100"]);
    assert!(
        sm100.contains("per thread; no occupancy model for sm_100"),
        "{sm100}"
    );
}

/// Runs `p` in the interpreter with the CUDA target; it must stop with a run-time error
/// that says `what`.
fn interp_cuda_stops(p: &str, what: &str) {
    let out = interp_cuda("off", &[p]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(101), "{err}");
    assert!(err.contains(what), "{err}");
}

/// The GPU schedule's histogram in the interpreter, which checks every access and
/// reports a data race on shared memory: blocks count into shared bins with atomics.
#[test]
fn histograms_count_every_pixel_in_the_interpreter() {
    let p = "tests/gpu/histogram.art";
    let out = interp_cuda("off", &[p, "--", "40", "9"]);
    assert_eq!(ok(&out, p), histogram_expected(40, 9));
}

/// What `tests/gpu/local_laplacian.art` prints: no pixel differs from the CPU's.
const LOCAL_LAPLACIAN_EXPECTED: &str = "8 levels, 8 intensities differ 0\n\
    3 levels, 2 intensities, a view differ 0\n5 levels, one row differ 0\n\
    4 levels, 6 intensities known at run time differ 0\n";

/// Graphs of lazy images on the GPU's tiles (each thread's stored results in its
/// registers, or each block's in its shared memory, chosen by the cost model or by the
/// program) against the CPU's bands, in the interpreter, which checks every access and
/// stops at a data race on shared memory: 270 x 70 pixels, so that some blocks of either
/// path (a block's tile of 128 x 32 pixels in shared memory) lie inside the image.
#[test]
fn lazy_graphs_on_the_gpu_equal_the_cpu_in_the_interpreter() {
    let p = "tests/gpu/graph.art";
    let out = interp_cuda("off", &[p, "--", "270", "70"]);
    let want = gpu_program_outputs()
        .into_iter()
        .find(|(q, _)| *q == p)
        .map(|(_, w)| w);
    assert_eq!(Some(ok(&out, p)), want, "{p}");
}

/// Graphs in GPU strips (each block walking down a strip of rows, its stored results in
/// registers and in rings of rows in shared memory) in the interpreter, which checks every
/// access and stops at a data race on shared memory: 560 x 70 pixels, so that some strips
/// lie inside the image (read without the boundary mode) and some do not.
#[test]
fn graphs_in_gpu_strips_equal_the_cpu_in_the_interpreter() {
    let p = "tests/gpu/graph.art";
    let out = interp_cuda("off", &[p, "--", "560", "70", "strips"]);
    let want: String = gpu_program_outputs()
        .into_iter()
        .find(|(q, _)| *q == p)
        .map(|(_, w)| w)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("strips"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(want.lines().count(), 8, "{want}");
    assert_eq!(ok(&out, p), want, "{p}");
}

/// The GPU's graph strategies named on a CPU schedule (`graph_shared`, `graph_strips`, as
/// the cases that say "shared" and "strips" name them) fall back to the CPU's bands, not
/// to a pixel at a time with every result inlined: with `--target cpu` every case gives
/// the bits of the CPU schedule's default, and every graph the program realizes reports
/// the bands.
#[test]
fn gpu_graph_strategies_on_a_cpu_schedule_run_in_bands() {
    let p = "tests/gpu/graph.art";
    let out = durin(&["run", "-O1", "--target", "cpu", "--report", "fusion", p]);
    let want = gpu_program_outputs()
        .into_iter()
        .find(|(q, _)| *q == p)
        .map(|(_, w)| w);
    assert_eq!(Some(ok(&out, p)), want, "{p}");
    let err = String::from_utf8_lossy(&out.stderr);
    let paths: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("the graph is one"))
        .collect();
    // One line per place that realizes a graph on the device's schedule or the CPU's.
    assert!(paths.len() >= 2, "{err}");
    for l in paths {
        assert!(l.contains("CPU bands"), "not in bands: {l}");
    }
}

/// The local Laplacian filter's GPU schedule in the interpreter, which checks every
/// access of its kernels (one per level down and up, levels of one pixel among them, its
/// table in shared memory and, for a number of intensities known only at run time, in
/// memory) against the CPU schedule's bits.
#[test]
fn the_local_laplacian_filter_on_the_gpu_equals_the_cpu_in_the_interpreter() {
    let p = "tests/gpu/local_laplacian.art";
    let out = interp_cuda("off", &[p, "--", "37", "21"]);
    assert_eq!(ok(&out, p), LOCAL_LAPLACIAN_EXPECTED);
}

/// Two threads of a block that touch the same shared memory between two barriers, one of
/// them writing, are a data race: the interpreter stops at the second access.
#[test]
fn the_interpreter_reports_a_data_race_on_shared_memory() {
    interp_cuda_stops(
        "tests/gpu/shared_race.art",
        "a data race on shared memory: thread 1 of the block writes byte 4 of a shared array that thread 0 read since the last barrier",
    );
    // The same tile with a barrier between the writes and the reads has none.
    let fixed = std::env::temp_dir().join(format!("durin-race-{}.art", std::process::id()));
    let text = std::fs::read_to_string("tests/gpu/shared_race.art").expect("the program");
    let text = text.replace(
        "tile(t) = t as f32;",
        "tile(t) = t as f32;\n        acc.barrier();",
    );
    std::fs::write(&fixed, text).expect("a temporary file");
    let out = interp_cuda("off", &[fixed.to_str().expect("a path")]);
    let _ = std::fs::remove_file(&fixed);
    ok(&out, "the same kernel with a barrier");
}

/// Staging (`--shm on`) changes no bit of the image operators' results, in the
/// interpreter's launch semantics, at sizes that blocks of 32 x 4 do not divide, down to
/// images smaller than the mask; and it stages: every kernel gets a tile, those whose reads
/// are kept in the image by the kernel's conditions (the separable filter's vertical pass,
/// which reads a temporary with no boundary handler, and the plain separable filter's
/// passes, clamped along one axis) with a fill guarded by those conditions. Without the
/// guard the interpreter stops at the fill's read past the temporary.
#[test]
fn staging_changes_no_bit_in_the_interpreter() {
    for (w, h) in [(37, 21), (70, 9), (3, 2), (1, 1)] {
        let (ws, hs) = (w.to_string(), h.to_string());
        let run = |shm: &str| {
            let out = interp_cuda(shm, &["tests/gpu/staging.art", "--", &ws, &hs]);
            ok(&out, &format!("staging.art {w}x{h} --shm {shm}"))
        };
        assert_eq!(run("on"), run("off"), "{w}x{h}");
    }
    let cuda = durin(&[
        "build",
        "--target",
        "cuda",
        "--shm",
        "on",
        "--emit",
        "cuda",
        "-o",
        "/dev/stdout",
        "tests/gpu/staging.art",
    ]);
    let text = ok(&cuda, "staging.art --shm on");
    assert_eq!(
        text.matches("__shared__ __align__(16) float").count(),
        8,
        "{text}"
    );
    assert_eq!(text.matches("__syncthreads();").count(), 8, "{text}");
    assert_eq!(text.matches("goto fill_read").count(), 3, "{text}");
    let plain = durin(&[
        "build",
        "--target",
        "cuda",
        "--emit",
        "cuda",
        "-o",
        "/dev/stdout",
        "tests/gpu/staging.art",
    ]);
    assert!(!ok(&plain, "staging.art").contains("__shared__"));
}

/// A kernel's error in the interpreter names the block and the thread.
#[test]
fn a_kernel_error_in_the_interpreter_names_the_block_and_thread() {
    interp_cuda_stops(
        "tests/gpu/out_of_bounds.art",
        "in a CUDA kernel, block (3, 0, 0), thread (63, 0, 0)",
    );
}

/// The tests that run kernels are `#[ignore]`d, so that a machine without a GPU counts
/// them as skipped (never as passed); `cargo test --test gpu -- --ignored` runs them, and
/// `scripts/test` does so where a CUDA driver is present. Asked for without a driver, they
/// fail here.
fn require_gpu() {
    assert!(
        durin_runtime::cuda::driver_present(),
        "this test runs kernels, and there is no CUDA driver on this machine"
    );
}

#[test]
fn without_a_gpu_a_launch_is_a_clear_error_at_its_place() {
    // `--target cpu` everywhere; `--target auto` where there is no CUDA driver.
    let mut cases = vec![("cpu", "the target is the CPU (`--target cpu`)")];
    if !durin_runtime::cuda::driver_present() {
        cases.push(("auto", "no CUDA driver found"));
    }
    for (target, why) in cases {
        for backend in ["llvm", "cranelift"] {
            let out = durin(&[
                "run",
                "--target",
                target,
                "--backend",
                backend,
                "tests/gpu/vector_add.art",
            ]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{target} {backend}: {err}");
            assert!(
                err.contains("this program launches a CUDA kernel, but"),
                "{err}"
            );
            assert!(err.contains(why), "{target} {backend}: {err}");
            assert!(
                err.contains("vector_add.art:14:22"),
                "{target} {backend}: {err}"
            );
            assert!(
                err.contains("accelerator(dev)"),
                "{target} {backend}: {err}"
            );
        }
    }
}

/// `x` as C's `printf("%g")` prints it (six significant digits), as `print_f64` does.
fn printf_g(x: f64) -> String {
    let e = format!("{x:.5e}");
    let (mantissa, exp) = e.split_once('e').unwrap();
    let exp: i32 = exp.parse().unwrap();
    let trim = |s: &str| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if (-4..6).contains(&exp) {
        trim(&format!("{x:.*}", (5 - exp) as usize))
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exp.abs())
    }
}

#[test]
fn printf_g_formats_as_c_does() {
    assert_eq!(printf_g(393216.0), "393216");
    assert_eq!(printf_g(1.5), "1.5");
    assert_eq!(printf_g(6442450944.0), "6.44245e+09");
    assert_eq!(printf_g(0.0001234), "0.0001234");
    assert_eq!(printf_g(0.00001234), "1.234e-05");
    assert_eq!(printf_g(1234567.0), "1.23457e+06");
}

/// The output of `tests/gpu/portable_saxpy.art`: y = 3x + sqrt(1) for x = i / 2, summed
/// in f64 here (each y is exact in f32).
fn portable_saxpy_expected() -> String {
    let sum: f64 = (0..1 << 16).map(|i| 3.0 * (i as f64 * 0.5) + 1.0).sum();
    format!("sum {} differ 0\n", printf_g(sum))
}

/// The sum of the pixels `tests/gpu/stencil5x5.art` computes: its 5x5 stencil with clamped
/// borders, in `f32` in the program's order; each pixel squared and weighted by its place,
/// summed in `f64`.
fn stencil5x5_checksum() -> String {
    let (w, h) = (1024i32, 768i32);
    let input: Vec<f32> = (0..w * h)
        .map(|i| ((i * 37) % 256) as f32 / 255.0)
        .collect();
    let weight = |dx: i32, dy: i32| ((3 - dx.abs()) * (3 - dy.abs())) as f32 * (1.0f32 / 81.0);
    let mut checksum = 0.0f64;
    for y in 0..h {
        for x in 0..w {
            let mut sum = 0.0f32;
            for dy in -2..=2 {
                for dx in -2..=2 {
                    let xx = (x + dx).clamp(0, w - 1);
                    let yy = (y + dy).clamp(0, h - 1);
                    sum += weight(dx, dy) * input[(yy * w + xx) as usize];
                }
            }
            let v = sum as f64;
            checksum += v * v * ((x * 7 + y * 3) % 11 + 1) as f64;
        }
    }
    printf_g(checksum)
}

#[test]
fn a_program_written_against_accelerator_runs_on_the_cpu_target() {
    let expected = portable_saxpy_expected();
    for args in [
        &["run", "--target", "cpu", "tests/gpu/portable_saxpy.art"][..],
        &[
            "run",
            "--target",
            "cpu",
            "--backend",
            "cranelift",
            "tests/gpu/portable_saxpy.art",
        ],
        &["run", "--backend", "interp", "tests/gpu/portable_saxpy.art"],
    ] {
        assert_eq!(ok(&durin(args), &format!("{args:?}")), expected, "{args:?}");
    }
}

/// Runs a GPU program with both JIT back ends and returns the output (equal for both).
fn run_on_gpu(p: &str) -> String {
    let llvm = ok(&durin(&["run", p]), p);
    let cranelift = ok(&durin(&["run", "--backend", "cranelift", p]), p);
    assert_eq!(
        llvm, cranelift,
        "{p}: LLVM and Cranelift host code disagree"
    );
    llvm
}

#[test]
#[ignore = "runs kernels on an NVIDIA GPU"]
fn gpu_memory_given_back_is_taken_again_intact() {
    require_gpu();
    assert_eq!(run_on_gpu("tests/gpu/alloc_reuse.art"), "200 of 200\n");
}

/// `--time` shows what a run spent in NVRTC, in the kernel cache and loading modules; a
/// second run of the same program compiles nothing and reads every module from the cache.
#[test]
#[ignore = "runs kernels on an NVIDIA GPU"]
fn gpu_a_second_run_reads_every_kernel_from_the_cache() {
    require_gpu();
    let cache = std::env::temp_dir().join(format!("durin-kernel-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let exe = std::env::var_os("DURIN_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_BIN_EXE_durin")));
    let run = || {
        let out = std::process::Command::new(&exe)
            .current_dir(common::root())
            .env("DURIN_CACHE_DIR", &cache)
            .args(["run", "--time", "tests/gpu/vector_add.art"])
            .output()
            .expect("durin runs");
        let printed = ok(&out, "vector_add with --time");
        (printed, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (first, times) = run();
    assert!(times.contains("(1 module compiled)"), "{times}");
    assert!(
        times.contains("(0 modules read from the kernel cache)"),
        "{times}"
    );
    assert!(times.contains("(1 module loaded onto the GPU)"), "{times}");
    let (second, times) = run();
    assert!(times.contains("(0 modules compiled)"), "{times}");
    assert!(
        times.contains("(1 module read from the kernel cache)"),
        "{times}"
    );
    assert_eq!(first, second);
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
#[ignore = "runs kernels on an NVIDIA GPU"]
fn gpu_vector_add_equals_the_cpu() {
    require_gpu();
    // Every element of b = 2a + 1 is checked on the CPU: all 2^20 are right.
    assert_eq!(run_on_gpu("tests/gpu/vector_add.art"), "1048576\n");
}

#[test]
#[ignore = "runs kernels on an NVIDIA GPU"]
fn gpu_pipeline_equals_the_fused_cpu_pipeline() {
    require_gpu();
    // Three stages, one pass each on the GPU, fused per band on the CPU: every pixel of
    // 517 x 389 agrees in each of the five boundary modes.
    assert_eq!(run_on_gpu("tests/gpu/pipeline.art"), "1005565 of 1005565\n");
}

#[test]
#[ignore = "runs kernels on an NVIDIA GPU"]
fn gpu_staging_changes_no_bit() {
    require_gpu();
    let run = |shm: &str| ok(&durin(&["run", "--shm", shm, "tests/gpu/staging.art"]), shm);
    assert_eq!(run("on"), run("off"));
}

#[test]
#[ignore = "runs kernels on an NVIDIA GPU"]
fn gpu_streaming_stores_store() {
    require_gpu();
    // The memory hints in a kernel: every element of b = 2a + 1 is right.
    assert_eq!(run_on_gpu("tests/gpu/streaming_store.art"), "1048576\n");
}

#[test]
#[ignore = "runs kernels on an NVIDIA GPU"]
fn gpu_atomic_reduction_equals_the_cpu() {
    require_gpu();
    let out = run_on_gpu("tests/gpu/reduce_atomic.art");
    // The sum of ((i * 7919) % 1001 - 500) for i < 2^20, in wrapping i32 as the program
    // computes it.
    let expected = (0..1i32 << 20)
        .map(|i| i.wrapping_mul(7919) % 1001 - 500)
        .fold(0i32, i32::wrapping_add);
    assert_eq!(out, format!("gpu {expected} cpu {expected} equal\n"));
}

#[test]
#[ignore = "runs kernels on an NVIDIA GPU"]
fn gpu_stencil_with_a_shared_tile_equals_the_cpu() {
    require_gpu();
    let out = run_on_gpu("tests/gpu/stencil5x5.art");
    assert_eq!(
        out,
        format!(
            "pixels 786432 differ 0 checksum {}\n",
            stencil5x5_checksum()
        )
    );
}

#[test]
#[ignore = "runs kernels on an NVIDIA GPU"]
fn gpu_math_functions_are_within_a_few_ulp_of_the_cpu() {
    require_gpu();
    let out = run_on_gpu("tests/gpu/math.art");
    let words: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(words[..2], ["values", "65536"], "{out}");
    assert_eq!(words[4..], ["over_8", "0"], "{out}");
}

/// What `tests/gpu/conversions.art` prints: Rust's float-to-integer casts saturate and map
/// NaN to 0, as the IR's do.
fn conversions_expected() -> String {
    let sum: i64 = (0..4096)
        .map(|i| {
            let x = (i - 2048) as f32 * 37.25;
            (x as u8) as i64 + (x as i16) as i64 * 3 + (x as i8) as i64 * 7 + (x as u16) as i64
        })
        .sum();
    format!("sum {sum} differ 0\n")
}

#[test]
fn narrow_conversions_agree_on_the_cpu_and_in_the_interpreter() {
    let expected = conversions_expected();
    for mut args in [
        vec!["run", "--target", "cpu"],
        vec!["run", "--backend", "interp"],
    ] {
        args.push("tests/gpu/conversions.art");
        assert_eq!(
            ok(&durin(&args), &format!("{args:?}")),
            expected,
            "{args:?}"
        );
    }
}

#[test]
#[ignore = "runs kernels on an NVIDIA GPU"]
fn gpu_narrow_conversions_equal_rust() {
    require_gpu();
    let args = ["run", "--target", "cuda", "tests/gpu/conversions.art"];
    assert_eq!(ok(&durin(&args), "cuda"), conversions_expected());
}

#[test]
#[ignore = "runs kernels on an NVIDIA GPU"]
fn gpu_portable_program_equals_its_cpu_mapping() {
    require_gpu();
    let expected = portable_saxpy_expected();
    let out = ok(
        &durin(&["run", "--target", "cuda", "tests/gpu/portable_saxpy.art"]),
        "cuda",
    );
    assert_eq!(out, expected);
}

#[test]
#[ignore = "runs kernels on an NVIDIA GPU"]
fn gpu_aliased_pointers_are_not_restrict() {
    require_gpu();
    assert_eq!(run_on_gpu("tests/gpu/aliased_pointers.art"), "1024\n");
}

#[test]
#[ignore = "runs kernels on an NVIDIA GPU"]
fn gpu_pointers_made_from_integers_are_not_restrict() {
    require_gpu();
    assert_eq!(run_on_gpu("tests/gpu/pointer_int_casts.art"), "1024\n");
}

#[test]
#[ignore = "runs kernels on an NVIDIA GPU"]
fn gpu_kernels_reserve_shared_arrays_of_their_own_sizes() {
    require_gpu();
    assert_eq!(run_on_gpu("tests/gpu/shared_sizes.art"), "2048 of 2048\n");
}

#[test]
#[ignore = "runs kernels on an NVIDIA GPU"]
fn gpu_anydsl_atomics_and_math_builtins() {
    require_gpu();
    let sum: i32 = (0..1024).map(|i| (i as f32).sqrt() as i32).sum();
    assert_eq!(
        run_on_gpu("tests/gpu/anydsl_names.art"),
        format!("{sum} 0\n")
    );
}

#[test]
#[ignore = "runs kernels on an NVIDIA GPU"]
fn gpu_reverse_block_through_shared_memory() {
    require_gpu();
    assert_eq!(run_on_gpu("tests/gpu/reverse_block.art"), "1024\n");
}

/// Runs a GPU program's kernels on the CPU's cores (`--target cuda-cpu`) with both JIT back
/// ends and returns the output (equal for both).
fn run_on_cpu_blocks(args: &[&str]) -> String {
    let run = |backend: &str| {
        let mut all = vec!["run", "--target", "cuda-cpu", "--backend", backend];
        all.extend_from_slice(args);
        ok(&durin(&all), &format!("{all:?}"))
    };
    let (llvm, cranelift) = (run("llvm"), run("cranelift"));
    assert_eq!(
        llvm, cranelift,
        "{args:?}: LLVM and Cranelift host code disagree"
    );
    llvm
}

#[test]
fn the_gpu_programs_run_on_the_cpu_cores_with_a_gpus_blocks() {
    // The same programs and expectations as on the GPU, with no GPU: blocks in parallel,
    // a block's threads as fibers that `__syncthreads` separates, shared memory per block,
    // atomics, and the device's memory on the host.
    for (p, want) in gpu_program_outputs() {
        assert_eq!(run_on_cpu_blocks(&[p]), want, "{p}");
    }
}

/// Operators on images without pixels, with a GPU schedule, compute nothing in every
/// boundary mode (the two-pass separable filter divided by the height 0 under `repeat`):
/// with the kernels on the CPU (with bounds checks) and in the interpreter.
#[test]
fn operators_on_empty_images_compute_nothing_on_a_gpu() {
    let p = "tests/gpu/empty_images.art";
    let want = "0\n".repeat(5);
    assert_eq!(run_on_cpu_blocks(&["--checks", "bounds", p]), want);
    assert_eq!(ok(&interp_cuda("off", &[p]), p), want);
}

/// Needs two GPUs: `scripts/test` skips it (and counts it as skipped) on a machine with
/// fewer, where device 1 does not exist.
#[test]
#[ignore = "runs kernels on two NVIDIA GPUs"]
fn gpu_two_devices_each_compute_their_half() {
    require_gpu();
    let count = durin_runtime::cuda::device_count();
    assert!(
        count >= 2,
        "this test needs two CUDA devices; this machine has {count}"
    );
    assert_eq!(
        run_on_gpu("tests/gpu/two_devices.art"),
        two_devices_expected()
    );
}

#[test]
#[ignore = "runs kernels on an NVIDIA GPU"]
fn gpu_printf_and_half_precision_equal_the_cpu() {
    require_gpu();
    let (p, want) = gpu_program_outputs().remove(0);
    assert_eq!(run_on_gpu(p), want, "{p}");
}

#[test]
#[ignore = "runs kernels on an NVIDIA GPU"]
fn gpu_tiles_equal_the_cpu() {
    require_gpu();
    for (p, want) in gpu_program_outputs() {
        if p.starts_with("tests/gpu/tiles")
            || p == "tests/gpu/graph.art"
            || p == "tests/gpu/histogram.art"
            || p == "tests/gpu/local_laplacian.art"
        {
            assert_eq!(run_on_gpu(p), want, "{p}");
        }
    }
}

#[test]
fn the_gpu_tiles_equal_the_cpu_in_the_interpreter() {
    // The interpreter checks every access: 16-byte accesses at multiples of 16 bytes only,
    // no read outside the images, no store of a pixel twice in a different order. The
    // images are large enough for blocks inside the image (128 x 64 pixels each; the
    // staged tiles' 128 x 32 with the reads of a radius-10 box around them).
    for p in [
        "tests/gpu/tiles.art",
        "tests/gpu/tiles_local.art",
        "tests/gpu/tiles_staged.art",
        "tests/gpu/tiles_window.art",
    ] {
        let out = interp_cuda("off", &[p, "--", "300", "140"]);
        let text = ok(&out, p);
        let want = gpu_program_outputs()
            .into_iter()
            .find(|(q, _)| *q == p)
            .map(|(_, w)| w)
            .unwrap();
        assert_eq!(text, want, "{p}");
        // The comparison alone would pass if the operators ran one pixel per thread: the
        // kernels are the tiles' (16-byte accesses, in the version for inner blocks).
        let file = std::env::temp_dir().join(format!("durin-tiles-{}.cu", std::process::id()));
        ok(
            &durin(&["build", "--emit", "cuda", "-o", file.to_str().unwrap(), p]),
            p,
        );
        let cuda = std::fs::read_to_string(&file).unwrap();
        let _ = std::fs::remove_file(&file);
        assert!(
            cuda.contains("ldg_f32x4(") && cuda.contains("stg_f32x4("),
            "{p}: {cuda}"
        );
        // The staged tiles go through shared memory.
        if p.ends_with("staged.art") {
            assert!(
                cuda.contains("__shared__ __align__(16) float"),
                "{p}: {cuda}"
            );
        }
    }
}

#[test]
fn staged_kernels_run_on_the_cpu_cores_bit_for_bit() {
    // Staging changes no bit where the kernels run natively either: the tiles' fill, the
    // barrier and the reads of shared memory run as the GPU runs them.
    let args = |shm: &'static str| ["--shm", shm, "tests/gpu/staging.art", "--", "61", "37"];
    let off = run_on_cpu_blocks(&args("off"));
    assert_eq!(run_on_cpu_blocks(&args("on")), off);
    assert_eq!(run_on_cpu_blocks(&args("auto")), off);
    // And the interpreter's CUDA semantics agree.
    assert_eq!(ok(&interp_cuda("on", &args("on")[2..]), "interp"), off);
    // `--shm on` stages something there (the comparison alone would pass if not).
    let report = durin(&[
        "build",
        "--target",
        "cuda-cpu",
        "--shm",
        "on",
        "--report",
        "shm",
        "--emit",
        "llvm-ir",
        "-o",
        "/dev/null",
        "tests/gpu/staging.art",
    ]);
    let text = String::from_utf8_lossy(&report.stderr);
    assert!(text.contains("staged: --shm on"), "{text}");
}

/// The `shm: kernel` lines of `--report shm` for `program` built for CUDA.
fn shm_kernel_lines(program: &str) -> Vec<String> {
    let file = std::env::temp_dir().join(format!("durin-report-{}.cu", std::process::id()));
    let out = durin(&[
        "build",
        "--target",
        "cuda",
        "--report",
        "shm",
        "--emit",
        "cuda",
        "-o",
        file.to_str().unwrap(),
        program,
    ]);
    let _ = std::fs::remove_file(&file);
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{text}");
    text.lines()
        .filter(|l| l.starts_with("shm: kernel"))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_shm_report_names_the_programs_call_of_a_library_kernel() {
    // Each operator of harris_operators.art is one statement that starts a line; its
    // kernels are the image library's code, and the report names the statement each was
    // specialized for.
    let src = std::fs::read_to_string("tests/gpu/harris_operators.art").unwrap();
    let operators: Vec<usize> = (src.lines().enumerate())
        .filter(|(_, l)| {
            let l = l.trim_start();
            ["convolve(", "convolve_sep(", "map1(", "map2(", "map3("]
                .iter()
                .any(|op| l.starts_with(op))
        })
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(operators.len(), 9, "{operators:?}");
    let lines = shm_kernel_lines("tests/gpu/harris_operators.art");
    let mut named: Vec<usize> = lines
        .iter()
        .map(|l| {
            let at = l
                .split("specialized for the call at tests/gpu/harris_operators.art:")
                .nth(1)
                .unwrap_or_else(|| panic!("no call of the program in: {l}"));
            at.split(':').next().unwrap().parse().unwrap()
        })
        .collect();
    assert!(
        lines.iter().all(|l| l.contains("(<prelude>/image.art:")),
        "{lines:?}"
    );
    named.dedup();
    assert_eq!(named, operators, "{lines:?}");
    // A kernel written in the program is named by its own place alone.
    let own = shm_kernel_lines("tests/gpu/vector_add.art");
    assert_eq!(own.len(), 1);
    assert!(
        own[0].contains("(tests/gpu/vector_add.art:14:22)"),
        "{own:?}"
    );
}

#[test]
fn on_the_cpu_cores_a_launch_is_checked_as_cuda_checks_it() {
    let dir = std::env::temp_dir().join(format!("durin-cuda-cpu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A grid that is not a multiple of the block: an error naming the launch's place.
    let uneven = dir.join("uneven.art");
    std::fs::write(
        &uneven,
        "fn main() -> i32 {\n    let acc = cuda_accelerator(0);\n    let b = acc.alloc(400);\n    let p = b.data as &mut addrspace(1) [i32];\n    for it in acc.exec((100, 1, 1), (64, 1, 1)) { p(it.gidx()) = 1; }\n    acc.sync();\n    0\n}\n",
    )
    .unwrap();
    let out = durin(&["run", "--target", "cuda-cpu", uneven.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(101), "{err}");
    assert!(err.contains("uneven.art:5:"), "{err}");
    assert!(
        err.contains("the grid size in x (100 threads) is not a multiple of the block size (64)"),
        "{err}"
    );
    // A CUDA function without a CPU version: a compile-time error at its call.
    let shfl = dir.join("shfl.art");
    std::fs::write(
        &shfl,
        "#[import(cc = \"device\", name = \"__shfl_down_sync\")] fn shfl(u32, i32, u32) -> i32;\nfn main() -> i32 {\n    let acc = cuda_accelerator(0);\n    let b = acc.alloc(256);\n    let p = b.data as &mut addrspace(1) [i32];\n    for it in acc.exec((64, 1, 1), (64, 1, 1)) {\n        p(it.gidx()) = shfl(0xffffffff:u32, it.gidx(), 1:u32);\n    }\n    0\n}\n",
    )
    .unwrap();
    let out = durin(&["run", "--target", "cuda-cpu", shfl.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the CUDA function `__shfl_down_sync`, which has no CPU version"),
        "{err}"
    );
    assert!(err.contains("shfl.art:"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_kernel_that_returns_into_host_code_is_an_error_at_the_return() {
    // `return(1)` in the kernel would continue in the host function: the branch that does
    // it is selected inside the kernel (not a direct jump), and the error points at it.
    let out = durin(&[
        "check",
        "--passes",
        "O2,outline",
        "tests/gpu/returns_from_kernel.art",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("a kernel cannot continue in the host code"),
        "{err}"
    );
    assert!(err.contains("returns_from_kernel.art:5:21"), "{err}");
}

#[test]
fn reserve_shared_is_an_allocation_in_the_shared_space_inside_the_kernel() {
    let text = &outlined("tests/gpu/reverse_block.art");
    let kernel = &text[text.find("cont @kernel(").expect("a kernel")..];
    // The tile: 64 floats of shared memory, reserved in the kernel, then the barrier.
    assert!(
        kernel.contains("(mem, ptr([f32], shared)) = alloc(") && kernel.contains(", 64:i64)"),
        "{kernel}"
    );
    assert!(kernel.contains("@__syncthreads("), "{kernel}");
    // The host code reserves no shared memory.
    let host = &text[..text.find("cont @kernel(").unwrap()];
    assert!(!host.contains("shared)) = alloc("), "{host}");
}

#[test]
#[ignore = "runs kernels on an NVIDIA GPU"]
fn image_examples_on_the_gpu_match_the_cpu() {
    require_gpu();
    // Each example of the image library on the photograph, with the GPU schedule (target
    // cuda) and the CPU schedule; the 8-bit outputs may differ by one level where the
    // GPU's math functions round differently (bilateral's expf).
    let dir = std::env::temp_dir().join(format!("durin-gpu-examples-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    // All but gaussian, which writes three images under a prefix.
    for example in EXAMPLES.into_iter().filter(|&e| e != "gaussian") {
        let mut outs = Vec::new();
        for target in ["cuda", "cpu"] {
            let out = dir.join(format!("{example}-{target}.png"));
            let mut args = vec![
                "run".to_string(),
                "--target".into(),
                target.into(),
                format!("examples/{example}.art"),
                "--".into(),
                "tests/data/camera.png".into(),
            ];
            if example == "blend" {
                args.push("tests/data/astronaut.png".into());
            }
            args.push(out.display().to_string());
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            ok(&durin(&refs), example);
            outs.push(image::open(&out).expect("the output loads").to_luma8());
        }
        let worst = outs[0]
            .pixels()
            .zip(outs[1].pixels())
            .map(|(a, b)| (a.0[0] as i32 - b.0[0] as i32).abs())
            .max()
            .unwrap_or(0);
        assert!(
            worst <= 1,
            "{example}: the GPU and the CPU differ by {worst} levels"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
