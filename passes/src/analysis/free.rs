//! Free values: what a set of continuations (a kernel's body, a loop split off a function,
//! a closure's scope) uses from the code around it. One walk serves every pass that asks;
//! what differs between them is what a continuation outside the scope is to the scope
//! ([`Outside`]) and which computations are taken apart rather than passed whole.

use crate::rewrite::{is_function_type, DefSet, UseCache};
use durin_ir::{Def, Node, World};
use rustc_hash::FxHashSet;

/// What a continuation outside the scope is to a scope that refers to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outside {
    /// Nothing it must be given (a closed function: a top-level one).
    Ignored,
    /// A value the scope needs (a closure of the code around).
    Value,
    /// A function the scope calls whose own free values it needs at the call (a lifted
    /// function).
    Called,
}

/// The free values of a scope, in order of first use.
#[derive(Default)]
pub(crate) struct Free {
    /// Parameters outside the scope, and the largest computations that use values outside
    /// the scope and none inside it (computed once outside, passed whole).
    pub(crate) values: DefSet,
    /// The continuations outside the scope that it calls ([`Outside::Called`]).
    pub(crate) called: DefSet,
}

/// The free values of the scope `members` (continuations): `outside` says what each
/// continuation outside the scope is to it; a computation for which `split` holds is taken
/// apart (its operands are free values instead) even when it uses outside values only.
pub(crate) fn free_values(
    w: &World,
    members: &DefSet,
    cache: &mut UseCache,
    outside: &dyn Fn(Def) -> Outside,
    split: &dyn Fn(Def) -> bool,
) -> Free {
    let mut free = Free::default();
    let mut seen = FxHashSet::default();
    for &k in members {
        let Some((callee, args)) = w.body(k) else {
            continue;
        };
        let mut stack: Vec<Def> = std::iter::once(callee)
            .chain(args.iter().copied())
            .rev()
            .collect();
        while let Some(x) = stack.pop() {
            if !seen.insert(x) {
                continue;
            }
            match w.node(x) {
                Node::Param(_) => {
                    if !in_scope(w, cache, members, x) {
                        free.values.insert(x);
                    }
                }
                Node::Cont => {
                    if !members.contains(&x) {
                        match outside(x) {
                            Outside::Ignored => {}
                            Outside::Value => {
                                free.values.insert(x);
                            }
                            Outside::Called => {
                                free.called.insert(x);
                            }
                        }
                    }
                }
                _ => {
                    let inside = in_scope(w, cache, members, x);
                    let uses_outside = cache.of(w, x).iter().any(|&y| match w.node(y) {
                        Node::Param(_) => !members.contains(&w.ops(y)[0]),
                        _ => !members.contains(&y) && outside(y) != Outside::Ignored,
                    });
                    if inside || (uses_outside && split(x)) {
                        stack.extend(w.ops(x).iter().rev().copied());
                    } else if uses_outside {
                        free.values.insert(x);
                    }
                }
            }
        }
    }
    free
}

/// Whether `x` belongs to the scope `members`: a member, a parameter of one, or a value
/// computed from one.
pub(crate) fn in_scope(w: &World, cache: &mut UseCache, members: &DefSet, x: Def) -> bool {
    let member = |y: Def| match w.node(y) {
        Node::Param(_) => members.contains(&w.ops(y)[0]),
        _ => members.contains(&y),
    };
    match w.node(x) {
        Node::Param(_) | Node::Cont => member(x),
        _ => cache.of(w, x).iter().any(|&y| member(y)),
    }
}

/// The values a kernel or a function split off takes from the code around it: free values
/// where every continuation outside is ignored (outlining and splitting check those
/// apart), and where address arithmetic and branches stay inside. Address arithmetic on an
/// outside pointer is done again inside: the scope takes the pointer once, however many
/// elements it addresses (a mask read at constant indices is one buffer to a kernel, not
/// a pointer per element). A branch (`select(c, then, else)` between blocks, on an outside
/// condition) stays inside and takes the condition; a choice between functions is a
/// closure the scope would capture.
pub(crate) fn captured(w: &World, scope: &DefSet, cache: &mut UseCache) -> Vec<Def> {
    let split = |d: Def| match w.node(d) {
        Node::Lea => true,
        Node::Select => !is_function_type(w, w.type_of(d)),
        _ => false,
    };
    let free = free_values(w, scope, cache, &|_| Outside::Ignored, &split);
    free.values.into_iter().collect()
}
