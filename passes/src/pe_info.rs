//! `pe_info(message, value)` (AnyDSL's compile-time print, `cc = "thorin"`): after partial
//! evaluation, each call left in the program is recorded with its place, its message and
//! its value where that is known (a literal, or a tuple, struct or array of them), and
//! becomes a jump to its return point, so that no back end and no kernel sees it. The
//! driver prints the records. `pe_error(message)` (durin's): a call left after partial
//! evaluation is a compile-time error with that message at the call, which a library
//! guards with what partial evaluation knows (`if ?r && r < 0 { pe_error(..) }`). The pipelines run this pass (`pe-info`) before the first pass
//! that prepares code for a back end (`outline` ...), or at their end
//! ([`crate::Pipeline::with_pe_info`]).

use crate::analysis::live::Live;
use crate::context::{Pass, PassContext, PeRecords as Records};
use durin_diag::{Diagnostic, SourceMap, Span};
use durin_ir::{Def, Node, TypeKind, World};

/// The import's name.
pub const NAME: &str = "pe_info";

/// The name of the compile-time error intrinsic.
pub const ERROR: &str = "pe_error";

/// The name of the intrinsic of a library's reports (`--report fusion`).
pub const REPORT: &str = "pe_report";

/// Records and removes every call of `pe_info` and `pe_report` in `w` (see the module's
/// documentation; a report is placed at the program's call its code was specialized for);
/// `sources` turns each call's place (passed as a literal) back into a span. A call of
/// `pe_error` left in the program is an error at its place (the first in the program's
/// order), with the calls its code was specialized for.
pub(crate) fn run(
    w: &mut World,
    out: &mut Records,
    sources: Option<&SourceMap>,
) -> Result<(), Diagnostic> {
    if let Some(sources) = sources {
        place_runtime_errors(w, sources);
    }
    // The imports themselves (one per type of value); without any, nothing to walk.
    let imports: Vec<Def> = (w.externals())
        .filter(|&k| w.body(k).is_none() && matches!(w.name(k), Some(NAME | REPORT | ERROR)))
        .collect();
    if imports.is_empty() {
        return Ok(());
    }
    // The call's place: file number and byte, which the front end passed.
    let place_of = |w: &World, place: Def, c: Def| {
        let at = match w.node(place) {
            Node::Lit(v) => sources
                .and_then(|m| m.file_id((v >> 32) as usize))
                .map(|f| Span::new(f, (v & 0xffff_ffff) as usize, (v & 0xffff_ffff) as usize)),
            _ => None,
        };
        at.or(w.loc(c))
    };
    let live = Live::new(w);
    let mut errors: Vec<Diagnostic> = Vec::new();
    for &c in live.conts() {
        let Some((callee, args)) = w.body(c).map(|(f, a)| (f, a.to_vec())) else {
            continue;
        };
        if !imports.contains(&callee) {
            continue;
        }
        match (w.name(callee), args.as_slice()) {
            (Some(name @ (NAME | REPORT)), [mem, msg, val, place, ret]) => {
                let message = string(w, *msg)
                    .unwrap_or_else(|| "(a message not known at compile time)".into());
                let value = shown(w, *val, 0).unwrap_or_else(|| "not known at compile time".into());
                let at = place_of(w, *place, c);
                // (A report without a value, `()`, is its message.)
                let text = if name == REPORT && value == "()" {
                    message
                } else {
                    format!("{message}: {value}")
                };
                if name == NAME {
                    out.infos.push((at, text));
                } else {
                    // The program's call that the library's code was specialized for.
                    let calls = w.expansion_calls(w.jump_place(c).1);
                    let call = sources.and_then(|m| m.program_call(at, &calls));
                    out.reports.push((call.or(at), text));
                }
                w.set_body(c, *ret, &[*mem]);
            }
            (Some(ERROR), [_, msg, place, _]) => {
                let message = string(w, *msg).unwrap_or_else(|| {
                    "an error (`pe_error`) left after partial evaluation".into()
                });
                // The calls the jump's code was specialized for (a block that took over a
                // jump by inlining keeps its own expansion; the jump, that of its code).
                let d = Diagnostic::error_at(place_of(w, *place, c), message)
                    .with_expansion(w.expansion_calls(w.jump_place(c).1));
                errors.push(d);
            }
            _ => {}
        }
    }
    if !errors.is_empty() {
        errors.sort_by_key(|d| d.primary().map(|s| (s.file, s.start)));
        return Err(errors.swap_remove(0));
    }
    // The imports go too (one per type: no back end could declare them all). Each becomes
    // what a call of it now is, a jump to its return point, so that the world still
    // verifies (an internal continuation needs a body) until `dce` drops it. An import of
    // another shape (whose calls were left alone) stays an import.
    for k in imports {
        let n = w.num_params(k);
        if !matches!((w.name(k), n), (Some(NAME | REPORT), 5) | (Some(ERROR), 4)) {
            continue;
        }
        w.remove_external(k);
        let (mem, ret) = (w.param(k, 0), w.param(k, n - 1));
        w.set_body(k, ret, &[mem]);
    }
    Ok(())
}

/// The runtime's error function, and the one that also takes the place.
const RUNTIME_ERROR: &str = "durin_runtime_error";
const RUNTIME_ERROR_AT: &str = "durin_runtime_error_at";

/// Makes each call of `durin_runtime_error(message)` (`runtime_error` in the prelude) a
/// call of `durin_runtime_error_at(message, place)`, the place the program's: in library
/// code, the call of the program its code was specialized for (a size check in `map2`
/// names the program's `map2(...)`), with the library's place after it.
fn place_runtime_errors(w: &mut World, sources: &SourceMap) {
    let Some(import) = (w.externals())
        .find(|&k| w.body(k).is_none() && w.name(k) == Some(RUNTIME_ERROR) && w.num_params(k) == 3)
    else {
        return;
    };
    let live = Live::new(w);
    let mut at_fn = None;
    for &c in live.conts() {
        let Some((callee, args)) = w.body(c).map(|(f, a)| (f, a.to_vec())) else {
            continue;
        };
        let [mem, msg, ret] = args[..] else { continue };
        if callee != import {
            continue;
        }
        let (at, expansion) = w.jump_place(c);
        let text = sources.place_in_program(at, &w.expansion_calls(expansion));
        let place = crate::gpu::launch::string_global(w, &text, "place");
        let f = *at_fn.get_or_insert_with(|| {
            let t = crate::rewrite::cont_param_types(w, import);
            let params = [t[0], t[1], t[1], t[2]];
            let f = w.cont(&params, RUNTIME_ERROR_AT);
            w.make_external(f);
            f
        });
        w.set_body(c, f, &[mem, msg, place, ret]);
    }
}

/// The text of a string literal (a pointer to a global array of bytes).
fn string(w: &World, mut d: Def) -> Option<String> {
    while w.node(d) == Node::Bitcast {
        d = w.ops(d)[0];
    }
    if !matches!(w.node(d), Node::Global { .. }) {
        return None;
    }
    let init = *w.ops(d).first()?;
    if let Some(b) = w.bytes_of(init) {
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        return Some(String::from_utf8_lossy(&b[..end]).into_owned());
    }
    let mut bytes = Vec::new();
    for &b in w.ops(init) {
        match w.node(b) {
            Node::Lit(0) => break,
            Node::Lit(v) => bytes.push(v as u8),
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// `d` written out where it is known: a literal, or an aggregate of them.
fn shown(w: &World, d: Def, depth: u32) -> Option<String> {
    if depth > 16 {
        return None;
    }
    match w.node(d) {
        Node::Lit(v) => Some(match *w.kind(w.type_of(d)) {
            TypeKind::Bool => (v != 0).to_string(),
            TypeKind::Int { signed: true, bits } => {
                let s = 64 - bits as u32;
                (((v << s) as i64) >> s).to_string()
            }
            TypeKind::Int { .. } => v.to_string(),
            TypeKind::Float { bits: 32 } => f32::from_bits(v as u32).to_string(),
            TypeKind::Float { bits: 64 } => f64::from_bits(v).to_string(),
            _ => return None,
        }),
        Node::Bytes(_) => {
            let parts: Vec<String> = (w.bytes_of(d)?.iter()).map(u8::to_string).collect();
            Some(format!("({})", parts.join(", ")))
        }
        Node::Tuple | Node::Struct | Node::Array => {
            let parts: Option<Vec<String>> =
                w.ops(d).iter().map(|&o| shown(w, o, depth + 1)).collect();
            Some(format!("({})", parts?.join(", ")))
        }
        _ => None,
    }
}

/// The pass `pe-info`.
pub(crate) struct PeInfo;

impl Pass for PeInfo {
    fn name(&self) -> &'static str {
        "pe-info"
    }

    fn description(&self) -> &'static str {
        "record each `pe_info(message, value)` call left after partial evaluation, for the driver to print, and remove it; a `pe_error(message)` call left is a compile-time error (the pipelines run it before the first pass that prepares code for a back end)"
    }

    fn run(&self, w: &mut World, cx: &mut PassContext<'_>) -> Result<(), Diagnostic> {
        let sources = cx.sources();
        run(w, &mut cx.findings.pe_info, sources)
    }
}
