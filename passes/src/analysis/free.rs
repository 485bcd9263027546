//! Free values: what a set of continuations (a kernel's body, a loop split off a function)
//! uses from the code around it.

use crate::rewrite::{is_function_type, DefSet, UseCache};
use durin_ir::{Def, Node, World};
use rustc_hash::FxHashSet;

/// The values the scope uses from outside: the largest computations that depend on a
/// parameter outside the scope and on none inside it, in order of first use.
pub(crate) fn free_values(w: &World, scope: &DefSet, cache: &mut UseCache) -> Vec<Def> {
    let inside = |p: &Def| scope.contains(&w.ops(*p)[0]);
    let mut out = Vec::new();
    let mut seen = FxHashSet::default();
    for &k in scope {
        let Some((callee, args)) = w.body(k) else {
            continue;
        };
        let mut stack: Vec<Def> = std::iter::once(callee)
            .chain(args.iter().copied())
            .rev()
            .collect();
        while let Some(d) = stack.pop() {
            if !seen.insert(d) || w.node(d).is_nominal() {
                continue;
            }
            let reach = cache.of(w, d);
            let mut params = reach
                .iter()
                .filter(|&&x| matches!(w.node(x), Node::Param(_)));
            // Address arithmetic on a host pointer is done again in the kernel: the kernel
            // takes the pointer once, however many elements it addresses (a mask read at
            // constant indices is one buffer to the kernel, not a pointer per element).
            let address = w.node(d) == Node::Lea;
            // A branch (`select(c, then, else)` between blocks, on a host condition) stays
            // in the kernel: it takes the condition. A choice between functions is a closure
            // the kernel would capture.
            let branch = w.node(d) == Node::Select && !is_function_type(w, w.type_of(d));
            let split = address || branch;
            if params.clone().any(inside) || (split && params.clone().next().is_some()) {
                if !matches!(w.node(d), Node::Param(_)) {
                    stack.extend(w.ops(d).iter().rev().copied());
                }
            } else if params.next().is_some() {
                out.push(d);
            }
        }
    }
    out
}
