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
    pub fn render(&self) -> String {
        crate::diag::render(&self.sources, &self.diagnostics)
    }
}

/// Parses, checks and (with `lower`) lowers the program made of `files` (name, text), for
/// the GPU (see [`compile_for`]).
pub fn compile(files: &[(String, String)], lower: bool) -> Output {
    compile_for(files, lower, true)
}

/// The prelude file that tells a program its target: `durin_target_gpu()` is `gpu`.
pub fn target_file(gpu: bool) -> String {
    format!(
        "// The target this program is compiled for (`durin --target`).\nfn @durin_target_gpu() -> bool {{ {gpu} }}\n"
    )
}

/// Like [`compile`], with the target: `gpu` is what the prelude's `durin_target_gpu()`
/// returns, which chooses the mapping of `accelerator(dev)` (CUDA or the CPU).
pub fn compile_for(files: &[(String, String)], lower: bool, gpu: bool) -> Output {
    let mut sources = SourceMap::new();
    let mut diags = Vec::new();
    let t0 = std::time::Instant::now();
    let mut parse = |name: &str, text: &str, library: bool, diags: &mut Vec<Diagnostic>| {
        let id = if library {
            sources.add_library(name, text)
        } else {
            sources.add(name, text)
        };
        let toks = lexer::lex(id, text, diags);
        parser::parse(&toks, diags)
    };
    let mut prelude_diags = Vec::new();
    let target = target_file(gpu);
    let prelude: Vec<_> = PRELUDE
        .iter()
        .copied()
        .chain([("<prelude>/target.art", target.as_str())])
        .map(|(n, t)| parse(n, t, true, &mut prelude_diags))
        .collect();
    let modules: Vec<_> = files
        .iter()
        .map(|(n, t)| parse(n, t, false, &mut diags))
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
