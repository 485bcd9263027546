//! Property test of read-only tracing and footprints (`--report shm`): random 2D stencil
//! kernels, 1 to 3 input buffers each read at random offsets through a clamp, some inputs
//! also written, some views into the output's allocation. The report must call every
//! written buffer written, never call a buffer that may alias a written one read-only, and
//! give each read-only buffer the box of its offsets.

mod common;

use durin_driver::{Emit, Options, Report, Session, Target};
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
}

/// The program: the inputs' kinds and read offsets.
fn program(inputs: &[(Kind, Vec<(i32, i32)>)]) -> String {
    let mut s = String::from(
        "fn main(argc: i32, _argv: &[&[u8]]) -> i32 {\n    let (w, h) = (40 + argc, 24);\n    let acc = cuda_accelerator(0);\n    let dout = acc.alloc(2 * (w * h) as i64 * 4);\n    let out = dout.data as &mut addrspace(1) [f32];\n",
    );
    for (i, (kind, _)) in inputs.iter().enumerate() {
        match kind {
            Kind::AliasOut => s.push_str(&format!(
                "    let in{i} = &mut out(w * h + {i}) as &mut addrspace(1) [f32];\n"
            )),
            _ => s.push_str(&format!(
                "    let d{i} = acc.alloc((w * h) as i64 * 4);\n    let in{i} = d{i}.data as &mut addrspace(1) [f32];\n"
            )),
        }
    }
    s.push_str("    for work_item in acc.exec((w, h, 1), (8, 8, 1)) {\n        let (x, y) = (work_item.gidx(), work_item.gidy());\n        let cx = @|v: i32| imin(imax(v, 0), w - 1);\n        let cy = @|v: i32| imin(imax(v, 0), h - 1);\n        let mut s = 0.0 as f32;\n");
    for (i, (_, offsets)) in inputs.iter().enumerate() {
        for (dx, dy) in offsets {
            s.push_str(&format!(
                "        s += in{i}(cy(y + ({dy})) * w + cx(x + ({dx})));\n"
            ));
        }
    }
    for (i, (kind, _)) in inputs.iter().enumerate() {
        if *kind == Kind::Written {
            s.push_str(&format!("        in{i}(y * w + x) = s;\n"));
        }
    }
    s.push_str("        out(y * w + x) = s;\n    }\n    acc.sync();\n    0\n}\n");
    s
}

/// The report's lines for the program.
fn report(src: &str) -> String {
    let path = std::env::temp_dir().join(format!("durin-shm-{}.art", std::process::id()));
    std::fs::write(&path, src).expect("a temporary file");
    let cu = path.with_extension("cu");
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let options = Options {
        target: Target::Cuda,
        report: Some(Report::Shm),
        ..Options::default()
    };
    let built = Session::new(options, &mut out, &mut err)
        .build(&[path.clone()], Emit::Cuda, &cu)
        .is_ok();
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&cu);
    let text = String::from_utf8_lossy(&err).into_owned();
    assert!(built, "{src}\n{text}");
    text
}

#[test]
fn written_and_aliased_buffers_are_never_read_only_and_footprints_are_the_offsets() {
    let offsets = prop::collection::vec((-3i32..=3, -3i32..=3), 1..5);
    let kind = prop_oneof![Just(Kind::Own), Just(Kind::AliasOut), Just(Kind::Written)];
    let case = prop::collection::vec((kind, offsets), 1..4);
    let mut runner = TestRunner::new(Config {
        cases: 64,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&case, |inputs| {
            let src = program(&inputs);
            let text = report(&src);
            let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("shm:   ")).collect();
            let count = |what: &str| lines.iter().filter(|l| l.contains(what)).count();
            let n = |k: Kind| inputs.iter().filter(|(kind, _)| *kind == k).count();
            // The output and every written input are written.
            prop_assert_eq!(count(": written at "), 1 + n(Kind::Written), "{}\n{}", src, text);
            // Views into the output's allocation may be the memory it writes.
            prop_assert_eq!(count("disqualified: may alias"), n(Kind::AliasOut), "{}\n{}", src, text);
            // The others are read-only, each with the box of its offsets.
            let mut want: Vec<String> = inputs
                .iter()
                .filter(|(k, _)| *k == Kind::Own)
                .map(|(_, o)| {
                    let (x0, x1) = (o.iter().map(|p| p.0).min().unwrap(), o.iter().map(|p| p.0).max().unwrap());
                    let (y0, y1) = (o.iter().map(|p| p.1).min().unwrap(), o.iter().map(|p| p.1).max().unwrap());
                    format!("footprint: columns {x0:+} to {x1:+}, rows {y0:+} to {y1:+} (rows a run-time pitch apart)")
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
            Ok(())
        })
        .unwrap();
}
