//! Random programs of the shapes stencil libraries are made of: loop generators that wrap
//! other generators in closures (`@|lo, hi| { for i in g(lo, hi) { body(i) } }`), loops
//! whose bodies go through a runtime call taking a closure (`parallel`), bodies that are
//! local `fn @point(y)` functions with an unrolled loop inside, and `@`-marked body calls.
//!
//! Each program is run by the interpreter without any pass and after the `-O3` pipeline
//! (which partially evaluates it), and both outputs are compared with the sums computed
//! here in Rust. Partial evaluation must finish within its default fuel on every one.

use durin_driver::{Backend, Options, Session, Target};
use durin_ir::strategy::test_config;
use proptest::prelude::*;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A loop generator: every one visits each `i` of `[lo, hi)` exactly once.
#[derive(Clone, Debug)]
enum Gen {
    /// The prelude's `range`.
    Range,
    /// The prelude's `unroll` (a plain loop where the bounds are not known).
    Unroll,
    /// The prelude's `range_step` or `unroll_step` with step 1.
    Step { unrolled: bool },
    /// The prelude's `parallel` on this many threads (a runtime call taking the body).
    Parallel(u8),
    /// The prelude's `vectorize` with this width.
    Vectorize(u8),
    /// A closure wrapping another generator; `run` marks the body call `@body(i)`.
    Wrap { inner: Box<Gen>, run: bool },
    /// Another generator over `[lo + k, hi + k)`, handing `i - k` to the body.
    Shift { inner: Box<Gen>, k: i8 },
}

fn gen() -> impl Strategy<Value = Gen> {
    let leaf = prop_oneof![
        Just(Gen::Range),
        Just(Gen::Unroll),
        any::<bool>().prop_map(|unrolled| Gen::Step { unrolled }),
        (1u8..3).prop_map(Gen::Parallel),
        prop_oneof![Just(1u8), Just(4)].prop_map(Gen::Vectorize),
    ];
    leaf.prop_recursive(3, 8, 1, |inner| {
        prop_oneof![
            (inner.clone(), any::<bool>()).prop_map(|(g, run)| Gen::Wrap {
                inner: Box::new(g),
                run
            }),
            (inner, -3i8..4).prop_map(|(g, k)| Gen::Shift {
                inner: Box::new(g),
                k
            }),
        ]
    })
}

/// How a loop's body is written.
#[derive(Clone, Copy, Debug)]
enum Body {
    /// `fn @point(y: i32) -> () { .. }` called from the loop body.
    LocalAt,
    /// `fn point(y: i32) -> () { .. }` (no filter) called from the loop body.
    Local,
    /// The statements right in the loop body.
    Inline,
}

fn body() -> impl Strategy<Value = Body> {
    prop_oneof![Just(Body::LocalAt), Just(Body::Local), Just(Body::Inline)]
}

/// One program: `b(y) = sum over i < taps of a(y + i) * (i + 1)` for every `y < n`.
#[derive(Clone, Debug)]
struct Shape {
    outer: Gen,
    inner: Gen,
    body: Body,
    taps: u8,
    /// `n` is `argc * n` (one argument: the program's name), so the outer bounds are not
    /// known when the program is compiled.
    n: u8,
}

fn shape() -> impl Strategy<Value = Shape> {
    (gen(), gen(), body(), 1u8..5, 1u8..40).prop_map(|(outer, inner, body, taps, n)| Shape {
        outer,
        inner,
        body,
        taps,
        n,
    })
}

/// Writes generator definitions for `g` into `defs`; returns the expression that makes
/// the loop `for i in EXPR(lo, hi)` in the program.
fn define(g: &Gen, defs: &mut String, next: &mut usize) -> String {
    // Each generator is `@|lo, hi| { for i in LOOP { CALL } }`: its loop and body call.
    let (head, call) = match g {
        Gen::Range => return "range".into(),
        Gen::Unroll => return "unroll".into(),
        Gen::Step { unrolled: true } => ("unroll_step(lo, hi, 1)".into(), "body(i)".into()),
        Gen::Step { unrolled: false } => ("range_step(lo, hi, 1)".into(), "body(i)".into()),
        Gen::Parallel(threads) => (format!("parallel({threads}, lo, hi)"), "body(i)".into()),
        Gen::Vectorize(width) => (
            format!("vectorize_range({width}, lo, hi)"),
            "body(i)".into(),
        ),
        Gen::Wrap { inner, run } => {
            let at = if *run { "@" } else { "" };
            (
                format!("{}(lo, hi)", define(inner, defs, next)),
                format!("{at}body(i)"),
            )
        }
        Gen::Shift { inner, k } => (
            format!("{}(lo + {k}, hi + {k})", define(inner, defs, next)),
            format!("body(i - {k})"),
        ),
    };
    let name = format!("g{}", *next);
    *next += 1;
    let _ = writeln!(
        defs,
        "fn @{name}(body: fn(i32) -> ()) -> fn(i32, i32) -> () {{\n    \
         @|lo: i32, hi: i32| {{ for i in {head} {{ {call} }} }}\n}}"
    );
    name
}

impl Shape {
    fn source(&self) -> String {
        let mut defs = String::new();
        let mut next = 0;
        let outer = define(&self.outer, &mut defs, &mut next);
        let inner = define(&self.inner, &mut defs, &mut next);
        let taps = self.taps;
        let point = format!(
            "let mut s: i32 = 0;\n        \
             for i in {inner}(0, {taps}) {{ s += a(y + i) * (i + 1); }}\n        \
             b(y) = s;"
        );
        let work = match self.body {
            Body::Inline => format!("    for y in {outer}(0, n) {{\n        {point}\n    }}\n"),
            Body::LocalAt | Body::Local => {
                let at = if matches!(self.body, Body::LocalAt) {
                    "@"
                } else {
                    ""
                };
                format!(
                    "    fn {at}point(y: i32) -> () {{\n        {point}\n    }}\n    \
                     for y in {outer}(0, n) {{ point(y) }}\n"
                )
            }
        };
        format!(
            "{defs}\
             fn @work(a: &[i32], b: &mut [i32], n: i32) -> () {{\n{work}}}\n\
             fn main(argc: i32, _argv: &[&[u8]]) -> i32 {{\n    \
             let n = argc * {n};\n    \
             let abuf = alloc_cpu(((n + {taps}) * 4) as i64);\n    \
             let bbuf = alloc_cpu((n * 4) as i64);\n    \
             let a = abuf.data as &mut [i32];\n    \
             let b = bbuf.data as &mut [i32];\n    \
             for i in range(0, n + {taps}) {{ a(i) = (i * 7 + 3) % 13 - 6; }}\n    \
             for i in range(0, n) {{ b(i) = 0; }}\n    \
             work(a, b, n);\n    \
             let mut sum = 0;\n    \
             for y in range(0, n) {{ sum += b(y) * (y % 5 + 1); }}\n    \
             print_i32(sum);\n    \
             release(abuf);\n    \
             release(bbuf);\n    \
             0\n}}\n",
            n = self.n
        )
    }

    /// The checksum, computed here.
    fn expected(&self) -> i32 {
        let n = self.n as i32;
        let taps = self.taps as i32;
        let a = |i: i32| (i * 7 + 3) % 13 - 6;
        (0..n)
            .map(|y| (0..taps).map(|i| a(y + i) * (i + 1)).sum::<i32>() * (y % 5 + 1))
            .sum()
    }
}

/// Runs `source` in the interpreter after the passes of level `level`; the output, or the
/// diagnostics of a failure.
fn interpret(source: &str, level: u8) -> Result<String, String> {
    let dir = std::env::temp_dir().join(format!("durin-shapes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let file = dir.join(format!(
        "shape-{}.art",
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&file, source).map_err(|e| e.to_string())?;
    let options = Options {
        target: Target::Cpu,
        backend: Backend::Interp,
        opt_level: level,
        ..Options::default()
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = Session::new(options, &mut out, &mut err).run(&[file], &[]);
    let err = String::from_utf8_lossy(&err).into_owned();
    match status {
        Ok(0) if err.is_empty() => Ok(String::from_utf8_lossy(&out).into_owned()),
        Ok(code) => Err(format!("exit status {code}\n{err}")),
        Err(_) => Err(err),
    }
}

proptest! {
    #![proptest_config(test_config())]

    #[test]
    fn generator_shapes_specialize_and_compute_their_sums(s in shape()) {
        let source = s.source();
        let want = s.expected().to_string();
        let plain = interpret(&source, 0);
        prop_assert_eq!(plain.as_deref(), Ok(want.as_str()), "without passes:\n{}", source);
        let specialized = interpret(&source, 3);
        prop_assert_eq!(specialized.as_deref(), Ok(want.as_str()), "at -O3:\n{}", source);
    }
}

/// The program of the report that found the shape: `unroll` in a local `@` function,
/// called from a closure-wrapped `parallel`.
#[test]
fn unroll_inside_a_closure_wrapped_parallel_specializes() {
    let s = Shape {
        outer: Gen::Wrap {
            inner: Box::new(Gen::Parallel(2)),
            run: false,
        },
        inner: Gen::Unroll,
        body: Body::LocalAt,
        taps: 3,
        n: 200,
    };
    let want = s.expected().to_string();
    assert_eq!(interpret(&s.source(), 3).as_deref(), Ok(want.as_str()));
}
