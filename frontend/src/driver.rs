//! The frontend as one call: source files in, checked program and IR out, with every
//! diagnostic.

use crate::check::{self, Program};
use crate::diag::Diagnostic;
use crate::lower::{self, Lowered};
use crate::source::SourceMap;
use crate::{lexer, parser};

/// The prelude's files: name and text.
pub const PRELUDE: &[(&str, &str)] = &[
    ("<prelude>/core.art", include_str!("../../stdlib/core.art")),
    ("<prelude>/math.art", include_str!("../../stdlib/math.art")),
    ("<prelude>/gpu.art", include_str!("../../stdlib/gpu.art")),
    (
        "<prelude>/image.art",
        include_str!("../../stdlib/image.art"),
    ),
];

/// Time spent in each stage, in seconds.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timings {
    /// Lexing and parsing.
    pub parse: f64,
    /// Name resolution and type checking.
    pub check: f64,
    /// Lowering to the IR.
    pub lower: f64,
}

/// What the frontend produced.
pub struct Output {
    /// The sources, for rendering diagnostics.
    pub sources: SourceMap,
    /// Errors and warnings, in the order found.
    pub diagnostics: Vec<Diagnostic>,
    /// The checked program (absent if parsing failed).
    pub program: Option<Program>,
    /// The IR, when lowering was asked for and there were no errors.
    pub lowered: Option<Lowered>,
    /// Time per stage.
    pub timings: Timings,
}

impl Output {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.is_error())
    }

    /// All diagnostics rendered as text.
    ///
    /// At most [`MAX_SHOWN`] errors and as many warnings are rendered, then a line counts
    /// the rest: a generated file with thousands of the same mistake stays readable.
    pub fn render(&self) -> String {
        let (mut errors, mut warnings) = (0usize, 0usize);
        let mut hidden = (0usize, 0usize);
        let mut shown = Vec::new();
        for d in &self.diagnostics {
            let (count, rest) = if d.is_error() {
                (&mut errors, &mut hidden.0)
            } else {
                (&mut warnings, &mut hidden.1)
            };
            *count += 1;
            if *count <= MAX_SHOWN {
                shown.push(d.clone());
            } else {
                *rest += 1;
            }
        }
        let mut out = crate::diag::render(&self.sources, &shown);
        for (n, what) in [(hidden.0, "error"), (hidden.1, "warning")] {
            if n > 0 {
                let s = if n == 1 { "" } else { "s" };
                out.push_str(&format!("note: {n} more {what}{s} not shown\n"));
            }
        }
        out
    }
}

/// Parses, checks and (with `lower`) lowers the program made of `files` (name, text), for
/// the GPU (see [`compile_for`]).
pub fn compile(files: &[(String, String)], lower: bool) -> Output {
    compile_for(files, lower, true)
}

/// The prelude file that tells a program its target: `durin_target_gpu()` is `gpu`.
pub fn target_file(gpu: bool) -> &'static str {
    if gpu {
        "// The target this program is compiled for (`durin --target`).\nfn @durin_target_gpu() -> bool { true }\n"
    } else {
        "// The target this program is compiled for (`durin --target`).\nfn @durin_target_gpu() -> bool { false }\n"
    }
}

/// How many errors, and how many warnings, [`Output::render`] shows.
pub const MAX_SHOWN: usize = 100;

/// The stack of the thread the frontend runs on: checking and lowering recurse over the
/// syntax tree, whose depth the parser bounds ([`parser::MAX_CHAIN`] operators in a chain,
/// [`parser::MAX_DEPTH`] levels of nesting); this is room for the deepest trees it accepts,
/// reserved, not used.
pub const FRONTEND_STACK: usize = 1 << 29;

/// Like [`compile`], with the target: `gpu` is what the prelude's `durin_target_gpu()`
/// returns, which chooses the mapping of `accelerator(dev)` (CUDA or the CPU). Runs on a
/// thread with a [`FRONTEND_STACK`] stack (on this one if no such thread can be made).
pub fn compile_for(files: &[(String, String)], lower: bool, gpu: bool) -> Output {
    std::thread::scope(|s| {
        let spawned = std::thread::Builder::new()
            .name("frontend".into())
            .stack_size(FRONTEND_STACK)
            .spawn_scoped(s, || compile_here(files, lower, gpu));
        match spawned {
            Ok(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            Err(_) => compile_here(files, lower, gpu),
        }
    })
}

fn compile_here(files: &[(String, String)], lower: bool, gpu: bool) -> Output {
    let mut sources = SourceMap::new();
    let mut diags = Vec::new();
    let t0 = std::time::Instant::now();
    let parse = |id, text: &str, diags: &mut Vec<Diagnostic>| {
        let toks = lexer::lex(id, text, diags);
        parser::parse(&toks, diags)
    };
    let mut prelude_diags = Vec::new();
    let prelude: Vec<_> = PRELUDE
        .iter()
        .copied()
        .chain([("<prelude>/target.art", target_file(gpu))])
        .map(|(n, t)| parse(sources.add_library(n, t), t, &mut prelude_diags))
        .collect();
    let modules: Vec<_> = files
        .iter()
        .map(|(n, t)| parse(sources.add(n, t), t, &mut diags))
        .collect();
    let mut timings = Timings {
        parse: t0.elapsed().as_secs_f64(),
        ..Timings::default()
    };
    diags.extend(prelude_diags);
    if diags.iter().any(|d| d.is_error()) {
        return Output {
            sources,
            diagnostics: diags,
            program: None,
            lowered: None,
            timings,
        };
    }
    let t1 = std::time::Instant::now();
    let mut program = check::check(&prelude, &modules, &mut diags);
    timings.check = t1.elapsed().as_secs_f64();
    drop_in_background((prelude, modules));
    let ok = !diags.iter().any(|d| d.is_error());
    tidy(&mut diags);
    let lowered = if lower && ok {
        let t2 = std::time::Instant::now();
        // Lowering a checked program cannot fail; should it panic all the same, the
        // user gets an internal-error diagnostic instead of a crash.
        let l = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut ds = Vec::new();
            let l = lower::lower(&mut program, &mut ds);
            (l, ds)
        }));
        let l = match l {
            Ok((l, ds)) => {
                diags.extend(ds);
                Some(l)
            }
            Err(_) => {
                diags.push(
                    Diagnostic::error_at(
                        None,
                        "internal compiler error: lowering to the IR failed",
                    )
                    .with_note("this is a bug in durin; please report it with this program"),
                );
                None
            }
        };
        timings.lower = t2.elapsed().as_secs_f64();
        l
    } else {
        None
    };
    Output {
        sources,
        diagnostics: diags,
        program: Some(program),
        lowered,
        timings,
    }
}

/// Drops `x` on a thread of its own, so that freeing a large tree (the syntax tree, the
/// checked program) does not hold up the compile; at once if no thread can be made. A
/// process that exits first leaves the rest to the system.
pub fn drop_in_background<T: Send + 'static>(x: T) {
    // When no thread can be made, `spawn` drops the closure, and `x` with it.
    let _ = std::thread::Builder::new()
        .name("drop".into())
        .spawn(move || drop(x));
}

/// Removes repeated diagnostics (a written type is resolved once per use of its item), and
/// warnings when there are errors: they are noise until the program compiles.
fn tidy(diags: &mut Vec<Diagnostic>) {
    let errors = diags.iter().any(|d| d.is_error());
    let mut seen = rustc_hash::FxHashSet::default();
    diags.retain(|d| {
        (!errors || d.is_error())
            && seen.insert((d.message.clone(), d.labels.first().map(|l| l.span)))
    });
}
