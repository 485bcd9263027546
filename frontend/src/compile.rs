//! The frontend as one call: source files in, checked program and IR out, with every
//! diagnostic.

use crate::check::{self, Program};
use crate::diag::Diagnostic;
use crate::lower::{self, Lowered};
use crate::source::SourceMap;
use crate::token::TokenKind;
use crate::{ast, lexer, parser};

/// The prelude's files: name and text. The image library ([`IMAGE_FILE`]) is read only for
/// a program that needs it (see [`IMAGE_ITEMS`]).
pub const PRELUDE: &[(&str, &str)] = &[
    ("<prelude>/core.art", include_str!("../../stdlib/core.art")),
    ("<prelude>/math.art", include_str!("../../stdlib/math.art")),
    ("<prelude>/gpu.art", include_str!("../../stdlib/gpu.art")),
    (
        "<prelude>/image.art",
        include_str!("../../stdlib/image.art"),
    ),
];

/// Where the image library is in [`PRELUDE`].
pub const IMAGE_FILE: usize = 3;

// The names the image library declares at its top level, sorted: `IMAGE_ITEMS`, written
// by `build.rs` from the library itself. A program whose files name none of them, or only
// names they declare themselves at their top level (which shadow the prelude's), cannot
// refer to the library: it has no implicit declarations, and the rest of the prelude does
// not use it. Such a program is compiled without reading, checking and lowering it (the
// prelude took 2.4-2.7 ms to read and 1.7 ms to check with it, 1.0 and 0.4 ms without, on
// the development machine). A test checks the list against the parsed library.
include!(concat!(env!("OUT_DIR"), "/image_items.rs"));

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
        (parser::parse(&toks, diags), toks)
    };
    let mut prelude_diags = Vec::new();
    let prelude_files = PRELUDE
        .iter()
        .copied()
        .chain([("<prelude>/target.art", target_file(gpu))]);
    let mut prelude: Vec<Option<ast::Module>> = prelude_files
        .enumerate()
        .map(|(i, (n, t))| {
            (i != IMAGE_FILE).then(|| parse(sources.add_library(n, t), t, &mut prelude_diags).0)
        })
        .collect();
    // Which of the image library's names the program's files mention.
    let mut named = [false; IMAGE_ITEMS.len()];
    let modules: Vec<_> = files
        .iter()
        .map(|(n, t)| {
            let (module, toks) = parse(sources.add(n, t), t, &mut diags);
            for tok in &toks {
                if let TokenKind::Ident(s) = &tok.kind {
                    if let Ok(i) = IMAGE_ITEMS.binary_search(&&**s) {
                        named[i] = true;
                    }
                }
            }
            module
        })
        .collect();
    let declared: rustc_hash::FxHashSet<&str> = modules
        .iter()
        .flat_map(|m| m.items.iter().filter_map(|item| item_name(&item.kind)))
        .collect();
    let needs_image =
        (IMAGE_ITEMS.iter().zip(named)).any(|(n, named)| named && !declared.contains(n));
    if needs_image {
        let (n, t) = PRELUDE[IMAGE_FILE];
        prelude[IMAGE_FILE] = Some(parse(sources.add_library(n, t), t, &mut prelude_diags).0);
    }
    let prelude: Vec<ast::Module> = prelude.into_iter().flatten().collect();
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

/// The name an item declares at the top level of its file (none for `use` and `implicit`
/// declarations, which are left out of the image library's test as if they named nothing:
/// see [`IMAGE_ITEMS`]).
fn item_name(kind: &ast::ItemKind) -> Option<&str> {
    use ast::ItemKind as K;
    match kind {
        K::Fn(f) => Some(&f.name.name),
        K::Struct { name, .. }
        | K::Enum { name, .. }
        | K::TypeAlias { name, .. }
        | K::Static { name, .. }
        | K::Mod { name, .. } => Some(&name.name),
        K::Use { .. } | K::Implicit(_) | K::Error => None,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_items_are_the_image_librarys_top_level_names() {
        let (name, text) = PRELUDE[IMAGE_FILE];
        assert!(name.ends_with("/image.art"), "{name}");
        let mut sources = SourceMap::new();
        let mut diags = Vec::new();
        let id = sources.add_library(name, text);
        let module = parser::parse(&lexer::lex(id, text, &mut diags), &mut diags);
        assert!(diags.is_empty(), "{diags:?}");
        let mut names: Vec<&str> = module
            .items
            .iter()
            .map(|item| {
                // An implicit declaration is found by its type, not by its name: the library
                // could not be left out by the names a program mentions.
                item_name(&item.kind).expect("the image library declares only named items")
            })
            .collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(
            names, IMAGE_ITEMS,
            "IMAGE_ITEMS must list the image library's items"
        );
    }

    #[test]
    fn the_image_library_is_read_for_programs_that_name_it() {
        let reads_it = |src: &str| {
            let out = compile(&[("p.art".to_string(), src.to_string())], true);
            let errors: Vec<_> = out.diagnostics.iter().filter(|d| d.is_error()).collect();
            assert!(errors.is_empty(), "{src}: {errors:?}");
            (0..)
                .map_while(|i| out.sources.file_id(i))
                .any(|f| out.sources.name(f) == PRELUDE[IMAGE_FILE].0)
        };
        assert!(!reads_it("fn main() -> i32 { 0 }"));
        assert!(reads_it(
            "fn main() -> i32 { let i = img_new(2, 2); img_set(i, 1, 1, 2.0); let v = img_get(i, 1, 1); img_release(i); v as i32 }"
        ));
        // A name the program declares itself is its own.
        assert!(!reads_it(
            "struct Img { w: i32 } fn clamp(x: i32) -> i32 { x } fn main() -> i32 { let i = Img { w = 1 }; clamp(i.w) }"
        ));
        assert!(reads_it(
            "struct Img { w: i32 } fn main() -> i32 { let m = mask1_3([1.0, 2.0, 1.0]); m.r }"
        ));
    }
}
