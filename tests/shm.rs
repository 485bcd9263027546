//! Property test of read-only tracing, footprints and staging: random 2D stencil kernels,
//! 1 to 3 input buffers each read at random offsets through a clamp (some also through
//! another handler, which must keep them unstaged), some inputs also written, some views into the output's allocation, some masks (8 elements, read at
//! constant indices). The report (`--report shm`) must call every written buffer written,
//! never call a buffer that may alias a written one read-only, and give each read-only
//! buffer the box of its offsets (a mask, the range of its indices); `--shm on` must stage
//! every read-only input; and the kernel must compute the same bits with staging off, on
//! and as the cost model chooses (`auto`), in the interpreter.

mod common;

use durin_driver::{Emit, Options, Report, Session, Shm, Target};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// How the kernel uses an input.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// An allocation of its own, only read.
    Own,
    /// A view into the output's allocation, only read.
    AliasOut,
    /// An allocation of its own, read and then written at the thread's pixel.
    Written,
    /// An allocation of its own of 8 elements, read at the constant indices `dx + 3`.
    Mask,
    /// An allocation of its own, only read: at its first offset through a clamp to the
    /// pixels one away from the edges, at the others through the clamp (never staged: a
    /// tile holds one handler's reads).
    TwoHandlers,
}

/// The program: the inputs' kinds and read offsets (a view into the output's allocation,
/// which is twice the image and 4 elements more, starts at `w h + i` for input i). Its width is a value known at run
/// time, a multiple of the block's (`32 + 8 argc`); it fills the inputs, runs the kernel
/// and prints a hash of the bits of what it wrote.
fn program(inputs: &[(Kind, Vec<(i32, i32)>)]) -> String {
    let mut s = String::from(
        "fn main(argc: i32, _argv: &[&[u8]]) -> i32 {\n    let (w, h) = (32 + 8 * argc, 24);\n    let acc = cuda_accelerator(0);\n    let host = alloc_cpu((2 * w * h + 4) as i64 * 4);\n    let hd = host.data as &mut [f32];\n    for i in range(0, 2 * w * h + 4) { hd(i) = ((i * 37) % 101) as f32 * 0.25 as f32 }\n    let dout = acc.alloc((2 * w * h + 4) as i64 * 4);\n    copy(host, dout);\n    let out = dout.data as &mut addrspace(1) [f32];\n",
    );
    for (i, (kind, _)) in inputs.iter().enumerate() {
        match kind {
            Kind::AliasOut => s.push_str(&format!(
                "    let in{i} = &mut out(w * h + {i}) as &mut addrspace(1) [f32];\n"
            )),
            Kind::Mask => s.push_str(&format!(
                "    let d{i} = acc.alloc(8 * 4);\n    copy_offset(host, ({i} * 4) as i64, d{i}, 0 as i64, 8 * 4);\n    let in{i} = d{i}.data as &mut addrspace(1) [f32];\n"
            )),
            _ => s.push_str(&format!(
                "    let d{i} = acc.alloc((w * h) as i64 * 4);\n    copy_offset(host, ({i} * 4) as i64, d{i}, 0 as i64, (w * h) as i64 * 4);\n    let in{i} = d{i}.data as &mut addrspace(1) [f32];\n"
            )),
        }
    }
    s.push_str("    for work_item in acc.exec((w, h, 1), (8, 8, 1)) {\n        let (x, y) = (work_item.gidx(), work_item.gidy());\n        let cx = @|v: i32| imin(imax(v, 0), w - 1);\n        let cy = @|v: i32| imin(imax(v, 0), h - 1);\n        let rx = @|v: i32| imin(imax(v, 1), w - 2);\n        let ry = @|v: i32| imin(imax(v, 1), h - 2);\n        let mut s = 0.0 as f32;\n");
    for (i, (kind, offsets)) in inputs.iter().enumerate() {
        for (j, (dx, dy)) in offsets.iter().enumerate() {
            s.push_str(&match kind {
                Kind::Mask => format!("        s += in{i}({}) * s;\n", dx + 3),
                Kind::TwoHandlers if j == 0 => {
                    format!("        s += in{i}(ry(y + ({dy})) * w + rx(x + ({dx})));\n")
                }
                _ => format!("        s += in{i}(cy(y + ({dy})) * w + cx(x + ({dx})));\n"),
            });
        }
    }
    for (i, (kind, _)) in inputs.iter().enumerate() {
        if *kind == Kind::Written {
            s.push_str(&format!("        in{i}(y * w + x) = s;\n"));
        }
    }
    s.push_str("        out(y * w + x) = s;\n    }\n    acc.sync();\n    copy(dout, host);\n");
    s.push_str(
        "    let mut hsh: u64 = 1469598103934665603;\n    let prime: u64 = 1099511628211;\n",
    );
    s.push_str(
        "    for i in range(0, 2 * w * h) { hsh = (hsh ^ (*(&hd(i) as &u32) as u64)) * prime }\n",
    );
    for (i, (kind, _)) in inputs.iter().enumerate() {
        if *kind == Kind::Written {
            s.push_str(&format!(
                "    let hb{i} = alloc_cpu((w * h) as i64 * 4);\n    copy_offset(d{i}, 0 as i64, hb{i}, 0 as i64, (w * h) as i64 * 4);\n    for i in range(0, w * h) {{ hsh = (hsh ^ (*(&(hb{i}.data as &[f32])(i) as &u32) as u64)) * prime }}\n"
            ));
        }
    }
    s.push_str("    print_u64(hsh); print_char('\\n');\n    0\n}\n");
    s
}

/// The report's lines for the program, and its CUDA text, staged as `shm` says.
fn build(src: &str, shm: Shm) -> (String, String) {
    let path = std::env::temp_dir().join(format!("durin-shm-{}.art", std::process::id()));
    std::fs::write(&path, src).expect("a temporary file");
    let cu = path.with_extension("cu");
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let options = Options {
        target: Target::Cuda,
        report: Some(Report::Shm),
        shm,
        ..Options::default()
    };
    let built = Session::new(options, &mut out, &mut err)
        .build(&[path.clone()], Emit::Cuda, &cu)
        .is_ok();
    let cuda = std::fs::read_to_string(&cu).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&cu);
    let text = String::from_utf8_lossy(&err).into_owned();
    assert!(built, "{src}\n{text}");
    (text, cuda)
}

/// What the program prints, run in the interpreter with its kernels (`--shm` as given).
fn interp(src: &str, shm: &str) -> String {
    let path = std::env::temp_dir().join(format!("durin-shm-run-{}.art", std::process::id()));
    std::fs::write(&path, src).expect("a temporary file");
    let out = common::interp_cuda(shm, &[path.to_str().expect("a path")]);
    let _ = std::fs::remove_file(&path);
    assert!(
        out.status.success(),
        "{src}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn written_and_aliased_buffers_are_never_read_only_and_footprints_are_the_offsets() {
    let offsets = prop::collection::vec((-3i32..=3, -3i32..=3), 1..5);
    let kind = prop_oneof![
        Just(Kind::Own),
        Just(Kind::AliasOut),
        Just(Kind::Written),
        Just(Kind::Mask),
        Just(Kind::TwoHandlers)
    ];
    let case = prop::collection::vec((kind, offsets), 1..4);
    let mut runner = TestRunner::new(Config {
        cases: 24,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&case, |inputs| {
            let src = program(&inputs);
            let (text, _) = build(&src, Shm::Off);
            let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("shm:   ")).collect();
            let count = |what: &str| lines.iter().filter(|l| l.contains(what)).count();
            let n = |k: Kind| inputs.iter().filter(|(kind, _)| *kind == k).count();
            // The output and every written input are written.
            prop_assert_eq!(count(": written at "), 1 + n(Kind::Written), "{}\n{}", src, text);
            // Views into the output's allocation are the output's parameter to the kernel
            // (which addresses them itself): never read-only.
            prop_assert_eq!(count(": read-only ("), n(Kind::Own) + n(Kind::Mask) + n(Kind::TwoHandlers), "{}\n{}", src, text);
            // The others are read-only, each with the box of its offsets.
            let mut want: Vec<String> = inputs
                .iter()
                .filter(|(k, _)| matches!(k, Kind::Own | Kind::Mask | Kind::TwoHandlers))
                .map(|(k, o)| {
                    let (x0, x1) = (o.iter().map(|p| p.0).min().unwrap(), o.iter().map(|p| p.0).max().unwrap());
                    let (y0, y1) = (o.iter().map(|p| p.1).min().unwrap(), o.iter().map(|p| p.1).max().unwrap());
                    match k {
                        Kind::Mask => format!("footprint: elements {} to {} for every thread (a mask)", x0 + 3, x1 + 3),
                        _ => format!("footprint: columns {x0:+} to {x1:+}, rows {y0:+} to {y1:+} (rows a run-time pitch apart)"),
                    }
                })
                .collect();
            let mut got: Vec<String> = lines
                .iter()
                .filter(|l| l.contains(": read-only ("))
                .map(|l| {
                    let f = &l[l.find("footprint: ").unwrap_or(0)..];
                    f[..f.find(" of each thread's pixel").unwrap_or(f.len())].to_string()
                })
                .collect();
            want.sort();
            got.sort();
            prop_assert_eq!(got, want, "{}\n{}", src, text);
            // Each read-only input (read through the clamp, or a mask of a known size) gets
            // a copy in shared memory; one read through two handlers (more than one read)
            // does not.
            let (report, staged) = build(&src, Shm::On);
            let mixed = inputs.iter().filter(|(k, o)| *k == Kind::TwoHandlers && o.len() > 1).count();
            prop_assert_eq!(staged.matches("__shared__").count(), n(Kind::Own) + n(Kind::Mask) + n(Kind::TwoHandlers) - mixed, "{}\n{}", src, staged);
            prop_assert_eq!(report.matches("do not all go through one boundary handler").count(), mixed, "{}\n{}", src, report);
            // Staged or not, the kernel computes the same bits (in the interpreter's launch
            // semantics: blocks, barriers, shared memory per block).
            let runs: Vec<String> = ["off", "on", "auto"].iter().map(|shm| interp(&src, shm)).collect();
            prop_assert_eq!(&runs[0], &runs[1], "{}", src);
            prop_assert_eq!(&runs[0], &runs[2], "{}", src);
            Ok(())
        })
        .unwrap();
}
