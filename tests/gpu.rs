//! GPU programs: kernel outlining and its diagnostics (no GPU needed).

mod common;
use common::durin;

#[test]
fn outlining_closes_the_kernel_over_the_device_pointers_it_uses() {
    let out = durin(&[
        "check",
        "--passes",
        "O2,outline,dce",
        "--print-after",
        "dce",
        "tests/gpu/vector_add.art",
    ]);
    let all = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The world after the last pass (`O2` has a `dce` of its own).
    let text = &all[all.rfind("// ----- after").expect("printed")..];
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
}

#[test]
fn native_code_with_a_kernel_launch_stops_with_an_error_at_the_launch() {
    // Kernel code generation is not part of this build: compiling a launch natively is a
    // clear error at its place (never a panic or a back-end failure).
    for backend in ["llvm", "cranelift"] {
        let out = durin(&["run", "--backend", backend, "tests/gpu/vector_add.art"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{backend}: {err}");
        assert!(err.contains("launches a GPU kernel"), "{backend}: {err}");
        assert!(err.contains("vector_add.art:14:22"), "{backend}: {err}");
    }
    // The interpreter says it runs no kernels.
    let out = durin(&["run", "--backend", "interp", "tests/gpu/vector_add.art"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("the interpreter runs no kernels"), "{err}");
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
    assert!(err.contains("returns_from_kernel.art:5:19"), "{err}");
}

#[test]
fn reserve_shared_is_an_allocation_in_the_shared_space_inside_the_kernel() {
    let out = durin(&[
        "check",
        "--passes",
        "O2,outline,dce",
        "--print-after",
        "dce",
        "tests/gpu/reverse_block.art",
    ]);
    let all = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = &all[all.rfind("// ----- after").expect("printed")..];
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
