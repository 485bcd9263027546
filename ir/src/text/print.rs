//! The printer of the text form.

use super::names::{is_inline, Layout};
use crate::def::{Def, Node};
use crate::semantics::{float_value, sext};
use crate::types::TypeKind;
use crate::world::World;
use std::fmt::Write;

/// Prints `w` in the text form. The output depends only on the world's structure, the order
/// in which its nominals were made and their debug names.
pub fn print(w: &World) -> String {
    let layout = Layout::compute(w);
    let mut out = String::new();
    let tys = w.types();
    for s in tys.structs() {
        let decl = tys.struct_decl(s).expect("listed as a struct");
        let _ = write!(out, "struct {} {{", decl.name);
        for (i, (name, t)) in decl.fields.iter().enumerate() {
            let sep = if i == 0 { " " } else { ", " };
            let _ = write!(out, "{sep}{name}: {}", tys.display(*t));
        }
        out.push_str(if decl.fields.is_empty() {
            "}\n"
        } else {
            " }\n"
        });
    }
    for (&n, stmts) in &layout.blocks {
        if !out.is_empty() {
            out.push('\n');
        }
        match w.node(n) {
            Node::Global { mutable } => {
                for &s in stmts {
                    statement(w, &layout, &mut out, s, "");
                }
                let m = if mutable { "mut " } else { "" };
                let init = operand(w, &layout, w.ops(n)[0]);
                let _ = writeln!(out, "global {m}{} = {init}", name(&layout, n));
            }
            _ => continuation(w, &layout, &mut out, n, stmts),
        }
    }
    out
}

fn name(layout: &Layout, d: Def) -> &str {
    layout.name(d).unwrap_or("%?")
}

fn continuation(w: &World, layout: &Layout, out: &mut String, n: Def, stmts: &[Def]) {
    if w.is_external(n) {
        out.push_str("extern ");
    }
    if w.is_no_inline(n) {
        out.push_str("noinline ");
    }
    let _ = write!(out, "cont {}(", name(layout, n));
    let ptys = w.types().cont_params(w.type_of(n)).unwrap_or(&[]);
    let pnames = layout.params.get(n).map(|v| v.as_slice()).unwrap_or(&[]);
    for (i, (t, pn)) in ptys.iter().zip(pnames).enumerate() {
        let sep = if i == 0 { "" } else { ", " };
        let _ = write!(out, "{sep}{pn}: {}", w.types().display(*t));
    }
    out.push(')');
    let filters = w.filters(n);
    if filters.iter().any(|&f| w.lit_bits(f) != Some(0)) {
        let fs: Vec<String> = filters.iter().map(|&f| operand(w, layout, f)).collect();
        let _ = write!(out, " filter({})", fs.join(", "));
    }
    let Some((callee, args)) = w.body(n) else {
        out.push('\n');
        return;
    };
    out.push_str(" {\n");
    for &s in stmts {
        statement(w, layout, out, s, "    ");
    }
    let args: Vec<String> = args.iter().map(|&a| operand(w, layout, a)).collect();
    let _ = writeln!(
        out,
        "    jump {}({})",
        operand(w, layout, callee),
        args.join(", ")
    );
    out.push_str("}\n");
}

fn statement(w: &World, layout: &Layout, out: &mut String, d: Def, indent: &str) {
    let ops: Vec<String> = w.ops(d).iter().map(|&o| operand(w, layout, o)).collect();
    let _ = writeln!(
        out,
        "{indent}{}: {} = {}({})",
        name(layout, d),
        w.types().display(w.type_of(d)),
        w.node(d).name(),
        ops.join(", ")
    );
}

/// How `d` is written where it is used: a name, or an inline literal.
fn operand(w: &World, layout: &Layout, d: Def) -> String {
    if is_inline(w, d) {
        literal(w, d)
    } else {
        name(layout, d).to_string()
    }
}

/// `bytes` as a byte string of the text form: printable ASCII as itself (but `"` and `\`),
/// the rest escaped.
fn byte_string(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 3);
    out.push_str("b\"");
    for &b in bytes {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
    }
    out.push('"');
    out
}

fn literal(w: &World, d: Def) -> String {
    let t = w.type_of(d);
    let ty = w.types().display(t);
    let v = match w.node(d) {
        Node::Lit(v) => v,
        Node::Bytes(_) => return byte_string(w.bytes_of(d).unwrap_or_default()),
        Node::Launch => return format!("launch:{ty}"),
        _ => return format!("bot:{ty}"),
    };
    match *w.kind(t) {
        TypeKind::Bool => (if v & 1 == 1 { "true" } else { "false" }).to_string(),
        TypeKind::Int { bits, signed: true } => format!("{}:{ty}", sext(bits as u32, v)),
        TypeKind::Int { .. } => format!("{v}:{ty}"),
        TypeKind::Float { bits } => {
            let x = float_value(bits, v);
            if !x.is_finite() {
                format!("0x{v:x}:{ty}")
            } else if bits == 64 {
                format!("{x:?}:{ty}")
            } else {
                // Every f16 and f32 is exact in f32, whose shortest form round-trips.
                format!("{:?}:{ty}", x as f32)
            }
        }
        _ => format!("bot:{ty}"),
    }
}

/// The statement the text form writes for computed def `d` (without indentation).
pub(crate) fn statement_text(w: &World, layout: &Layout, d: Def) -> String {
    let mut out = String::new();
    statement(w, layout, &mut out, d, "");
    out.trim_end().to_string()
}

/// One def as the text form refers to it: its name, or its literal.
pub fn print_def(w: &World, layout: &Layout, d: Def) -> String {
    operand(w, layout, d)
}
