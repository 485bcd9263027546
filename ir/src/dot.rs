//! Graphviz output: the def graph of a world, one cluster per continuation.
//!
//! Each continuation is a cluster holding its parameters and the statements the text form
//! places in it; edges run from an operand to its user, dashed into a continuation's jump.
//! Literals are drawn as small plain nodes next to their users.

use crate::def::{Def, Node};
use crate::text::{print_def, Layout};
use crate::world::World;
use std::fmt::Write;

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The Graphviz `digraph` of `w`.
pub fn to_dot(w: &World) -> String {
    let layout = Layout::compute(w);
    let mut out = String::from("digraph durin {\n    node [shape=box, fontname=\"monospace\"];\n");
    let id = |d: Def| format!("d{}", d.index());
    let mut edges = String::new();
    let mut lits = String::new();
    let mut edge = |out: &mut String, from: Def, to: &str, style: &str| {
        if w.node(from).is_constant_leaf() {
            let lit_id = format!("{}_{}", id(from), to);
            let _ = writeln!(
                lits,
                "    {lit_id} [label=\"{}\", shape=plaintext];",
                escape(&print_def(w, &layout, from))
            );
            let _ = writeln!(out, "    {lit_id} -> {to}{style};");
        } else {
            let _ = writeln!(out, "    {} -> {to}{style};", id(from));
        }
    };
    for (i, (&n, stmts)) in layout.blocks.iter().enumerate() {
        let name = layout.name(n).unwrap_or("?");
        let _ = writeln!(
            out,
            "    subgraph cluster_{i} {{\n        label=\"{}\";",
            escape(name)
        );
        let is_cont = w.node(n) == Node::Cont;
        if is_cont {
            let pnames = layout.params.get(n).cloned().unwrap_or_default();
            for (j, pn) in pnames.iter().enumerate() {
                if let Some(p) = w.param_if_built(n, j) {
                    let _ = writeln!(
                        out,
                        "        {} [label=\"{}\", shape=ellipse];",
                        id(p),
                        escape(pn)
                    );
                }
            }
        }
        for &s in stmts {
            let label = format!("{} = {}", layout.name(s).unwrap_or("?"), w.node(s).name());
            let _ = writeln!(out, "        {} [label=\"{}\"];", id(s), escape(&label));
            for &o in w.ops(s) {
                edge(&mut edges, o, &id(s), "");
            }
        }
        let label = if is_cont {
            format!("{name}: jump")
        } else {
            name.to_string()
        };
        let _ = writeln!(
            out,
            "        {} [label=\"{}\", style=bold];\n    }}",
            id(n),
            escape(&label)
        );
        let start = if is_cont { w.num_params(n) } else { 0 };
        for &o in &w.ops(n)[start..] {
            edge(&mut edges, o, &id(n), " [style=dashed]");
        }
    }
    out.push_str(&lits);
    out.push_str(&edges);
    out.push_str("}\n");
    out
}
