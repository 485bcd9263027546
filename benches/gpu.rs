//! durin's kernels on the GPU against the CUDA driver, in one run, one table.
//!
//! - Copy bandwidth: `benches/gpu/copy.art` copies 1 GiB of f32 with a kernel written in
//!   the language (20 timed copies, CUDA events through `ANYDSL_PROFILE=full`), against
//!   `cuMemcpyDtoD` of the same size in this process (20 copies, CUDA events). Bandwidth
//!   counts the bytes read and written; the target is at least 90% of the driver's copy.
//! - Launch overhead: `benches/gpu/launch.art` launches an empty kernel 1,000 times and
//!   times the launch call and the launch with a synchronization on the host; the anchor is
//!   the same through `cuLaunchKernel` directly in this process (an empty kernel compiled by
//!   NVRTC). Medians.
//!
//! Run: `cargo bench --bench gpu` on a machine with an NVIDIA GPU (it says so and stops
//! without one). `DURIN_BIN` names the `durin` executable to measure (default: the one
//! cargo built), so that a built bench can run where there is no Rust toolchain.

use cudarc::driver::sys;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

const GIB: usize = 1 << 30;
const REPS: usize = 20;

fn durin() -> PathBuf {
    std::env::var_os("DURIN_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_durin")))
}

fn ok(rc: sys::CUresult, what: &str) {
    if rc != sys::CUresult::CUDA_SUCCESS {
        eprintln!("error: {what}: {rc:?}");
        std::process::exit(1);
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Runs `durin run -O2 file` and returns its standard output.
fn run_program(file: &str, profile: bool) -> String {
    let mut cmd = Command::new(durin());
    cmd.args(["run", "-O2", file]);
    if profile {
        cmd.env("ANYDSL_PROFILE", "full");
    }
    let out = cmd.output().unwrap_or_else(|e| {
        eprintln!("error: cannot run `{}`: {e}", durin().display());
        std::process::exit(1)
    });
    if !out.status.success() {
        eprintln!(
            "error: `durin run {file}` failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        std::process::exit(1);
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The numbers after `key` on the lines of `text`.
fn values(text: &str, key: &str) -> Vec<f64> {
    text.lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            while let Some(w) = words.next() {
                if w == key {
                    return words.next()?.parse().ok();
                }
            }
            None
        })
        .collect()
}

/// Milliseconds of each of `REPS` `cuMemcpyDtoD` copies of 1 GiB (CUDA events).
unsafe fn driver_copy_ms() -> Vec<f64> {
    let (mut a, mut b) = (0, 0);
    ok(sys::cuMemAlloc_v2(&mut a, GIB), "alloc");
    ok(sys::cuMemAlloc_v2(&mut b, GIB), "alloc");
    ok(sys::cuMemsetD32_v2(a, 0x3f80_0000, GIB / 4), "memset");
    let mut ev = [std::ptr::null_mut(); 2];
    for e in &mut ev {
        ok(sys::cuEventCreate(e, 0), "event");
    }
    let mut times = Vec::new();
    for rep in 0..=REPS {
        ok(sys::cuEventRecord(ev[0], std::ptr::null_mut()), "record");
        ok(sys::cuMemcpyDtoD_v2(b, a, GIB), "copy");
        ok(sys::cuEventRecord(ev[1], std::ptr::null_mut()), "record");
        ok(sys::cuEventSynchronize(ev[1]), "sync");
        let mut ms = 0f32;
        ok(sys::cuEventElapsedTime_v2(&mut ms, ev[0], ev[1]), "elapsed");
        if rep > 0 {
            times.push(ms as f64);
        }
    }
    ok(sys::cuMemFree_v2(a), "free");
    ok(sys::cuMemFree_v2(b), "free");
    times
}

/// Nanoseconds of 1,000 launches of an empty kernel through `cuLaunchKernel`: the call, and
/// the call with a synchronization.
unsafe fn driver_launch_ns(arch: &str) -> (Vec<f64>, Vec<f64>) {
    let src = "extern \"C\" __global__ void empty() {}\n";
    let cubin = durin_runtime::cuda::nvrtc::compile(src, arch, true).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(1)
    });
    let mut m = std::ptr::null_mut();
    ok(sys::cuModuleLoadData(&mut m, cubin.as_ptr().cast()), "load");
    let mut f = std::ptr::null_mut();
    ok(
        sys::cuModuleGetFunction(&mut f, m, c"empty".as_ptr()),
        "function",
    );
    let launch = || {
        ok(
            sys::cuLaunchKernel(
                f,
                1,
                1,
                1,
                1,
                1,
                1,
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            ),
            "launch",
        )
    };
    launch();
    ok(sys::cuCtxSynchronize(), "sync");
    let (mut call, mut trip) = (Vec::new(), Vec::new());
    for _ in 0..1000 {
        let t0 = Instant::now();
        launch();
        let t1 = t0.elapsed();
        ok(sys::cuCtxSynchronize(), "sync");
        let t2 = t0.elapsed();
        call.push(t1.as_nanos() as f64);
        trip.push(t2.as_nanos() as f64);
    }
    (call, trip)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    if !durin_runtime::cuda::driver_present() {
        println!("skipped: {}", durin_runtime::cuda::NO_DRIVER);
        return;
    }
    let arch = unsafe {
        ok(sys::cuInit(0), "init");
        let mut dev = 0;
        ok(sys::cuDeviceGet(&mut dev, 0), "device");
        let mut ctx = std::ptr::null_mut();
        ok(sys::cuDevicePrimaryCtxRetain(&mut ctx, dev), "context");
        ok(sys::cuCtxSetCurrent(ctx), "context");
        let mut name = [0 as std::ffi::c_char; 128];
        ok(sys::cuDeviceGetName(name.as_mut_ptr(), 128, dev), "name");
        let name = std::ffi::CStr::from_ptr(name.as_ptr())
            .to_string_lossy()
            .into_owned();
        let attr = |a| {
            let mut v = 0;
            ok(sys::cuDeviceGetAttribute(&mut v, a, dev), "attribute");
            v
        };
        use sys::CUdevice_attribute::*;
        let arch = format!(
            "sm_{}{}",
            attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
            attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
        );
        println!("device: {name} ({arch})");
        arch
    };
    let gb = |ms: f64| 2.0 * GIB as f64 / (ms * 1e-3) / 1e9;
    let driver_ms = median(unsafe { driver_copy_ms() });
    let copy_out = run_program("benches/gpu/copy.art", true);
    if values(&copy_out, "wrong") != [0.0] {
        eprintln!("error: the copy kernel copied wrongly:\n{copy_out}");
        std::process::exit(1);
    }
    let kernel_us = values(&copy_out, "copy_us");
    if kernel_us.len() != REPS {
        eprintln!("error: unexpected output of copy.art:\n{copy_out}");
        std::process::exit(1);
    }
    let kernel_ms = median(kernel_us) / 1e3;
    let (call, trip) = unsafe { driver_launch_ns(&arch) };
    let launch_out = run_program("benches/gpu/launch.art", false);
    let (dcall, dtrip) = (
        median(values(&launch_out, "launch_ns")),
        median(values(&launch_out, "round_trip_ns")),
    );
    let (acall, atrip) = (median(call), median(trip));
    println!();
    println!("| measure | durin | CUDA driver | durin / driver |");
    println!("|---|---|---|---|");
    println!(
        "| copy 1 GiB f32, median of {REPS} (ms) | {kernel_ms:.3} | {driver_ms:.3} (cuMemcpyDtoD) | {:.3} |",
        kernel_ms / driver_ms
    );
    println!(
        "| copy bandwidth, read + write (GB/s) | {:.0} | {:.0} | **{:.1}%** |",
        gb(kernel_ms),
        gb(driver_ms),
        100.0 * driver_ms / kernel_ms
    );
    println!(
        "| empty launch, call, median of 1000 (us) | {:.2} | {:.2} (cuLaunchKernel) | {:.2} |",
        dcall / 1e3,
        acall / 1e3,
        dcall / acall
    );
    println!(
        "| empty launch + synchronize, median of 1000 (us) | {:.2} | {:.2} | {:.2} |",
        dtrip / 1e3,
        atrip / 1e3,
        dtrip / atrip
    );
}
