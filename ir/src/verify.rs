//! The verifier: checks the invariants every pass and back end may rely on.
//!
//! It checks, for every def reachable from a continuation or global:
//!
//! 1. every operand is a def of this world;
//! 2. every structural def is well-typed by the rules of [`crate::typing`], and its
//!    recorded type is the one those rules give;
//! 3. a literal's bits fit its type's width;
//! 4. every continuation has one `bool` filter per parameter, and its body, if any, is a
//!    well-typed jump: the callee is a continuation value and the arguments match its
//!    parameter types;
//! 5. a continuation without a body is external (an import);
//! 6. an external continuation uses no parameter of another continuation;
//! 7. a global's type is a pointer to its initializer's type, and the initializer depends
//!    on no parameter;
//! 8. no struct contains itself by value (only behind a pointer).
//!
//! It reports every violation, each naming the def as the text form does (with the def's
//! statement for context where it has one), instead of stopping at the first.

use crate::analysis::free::FreeParams;
use crate::def::{Def, DefMap, Node};
use crate::text::Layout;
use crate::types::{Type, TypeKind};
use crate::typing;
use crate::world::World;
use std::fmt;

/// One violated invariant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    /// The def, named as in the text form.
    pub at: String,
    /// What is wrong.
    pub message: String,
    /// The def's statement in the text form, for computed defs.
    pub context: Option<String>,
    /// What is wrong, as an object (to find its place in a source).
    pub subject: Subject,
}

/// The def or type a [`VerifyError`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    /// A def.
    Def(Def),
    /// A struct type.
    Struct(Type),
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.message)?;
        if let Some(c) = &self.context {
            write!(f, "\n    {c}")?;
        }
        Ok(())
    }
}

/// Checks `w`; returns every violation found.
pub fn verify(w: &World) -> Result<(), Vec<VerifyError>> {
    let layout = Layout::compute(w);
    let mut errors = Vec::new();
    let mut err = |d: Def, message: String| {
        let at = match layout.name(d) {
            Some(n) => n.to_string(),
            None if w.contains(d) => crate::text::print_def(w, &layout, d),
            None => "<def of another world>".to_string(),
        };
        let statement = w.contains(d)
            && !w.node(d).is_nominal()
            && !w.node(d).is_constant_leaf()
            && !matches!(w.node(d), Node::Param(_))
            && w.ops(d).iter().all(|&o| w.contains(o));
        let context = statement.then(|| crate::text::statement_text(w, &layout, d));
        errors.push(VerifyError {
            at,
            message,
            context,
            subject: Subject::Def(d),
        });
    };
    // Every live def: nominals, their operands, transitively (not through nominals twice).
    let mut seen: DefMap<()> = DefMap::new();
    let mut stack: Vec<Def> = w.nominals().collect();
    let mut live = Vec::new();
    while let Some(d) = stack.pop() {
        if seen.insert(d, ()).is_some() {
            continue;
        }
        live.push(d);
        for &o in w.ops(d) {
            if !w.contains(o) {
                err(d, "operand is not a def of this world".into());
            } else if !seen.contains_key(o) {
                stack.push(o);
            }
        }
    }
    let free = FreeParams::compute(w);
    for d in live {
        let node = w.node(d);
        let ty = w.type_of(d);
        if w.ops(d).iter().any(|&o| !w.contains(o)) {
            continue;
        }
        match node {
            Node::Cont => {
                let n = w.num_params(d);
                if w.ops(d).len() < n {
                    err(
                        d,
                        format!("has {} operands for {n} filters", w.ops(d).len()),
                    );
                    continue;
                }
                for (i, &f) in w.filters(d).iter().enumerate() {
                    if !w.types().is_bool(w.type_of(f)) {
                        err(d, format!("filter {i} is not a bool"));
                    }
                }
                match w.body(d) {
                    Some((callee, args)) => {
                        if let Err(e) = typing::check_jump(w, callee, args) {
                            err(d, format!("invalid jump: {e}"));
                        }
                    }
                    None if !w.is_external(d) => {
                        err(d, "has no body and is not external (an import)".into())
                    }
                    None => {}
                }
                if w.is_external(d) && !free.is_closed(d) {
                    let names: Vec<&str> = free_params(w, &free, d)
                        .iter()
                        .map(|&p| layout.name(p).unwrap_or("?"))
                        .collect();
                    err(
                        d,
                        format!(
                            "is external but uses parameters of other continuations: {}",
                            names.join(", ")
                        ),
                    );
                }
            }
            Node::Global { .. } => {
                let init = w.ops(d)[0];
                let ok = matches!(*w.kind(ty), TypeKind::Ptr { pointee, .. } if pointee == w.type_of(init));
                if !ok {
                    err(d, "type is not a pointer to the initializer's type".into());
                }
                if w.has_params(init) {
                    err(d, "initializer depends on a parameter".into());
                }
            }
            Node::Lit(v) => match w.types().prim_bits(ty) {
                Some(bits) if crate::semantics::mask(bits, v) == v => {}
                Some(bits) => err(d, format!("literal bits {v:#x} do not fit {bits} bits")),
                None => err(d, "literal of a non-primitive type".into()),
            },
            _ => {
                if let Err(e) = typing::infer(w, node, w.ops(d), Some(ty)) {
                    err(d, e);
                }
            }
        }
    }
    for s in w.types().structs() {
        if contains_by_value(w, s, s) {
            let name = w.types().display(s).to_string();
            errors.push(VerifyError {
                at: format!("struct {name}"),
                message: "contains itself by value".into(),
                context: None,
                subject: Subject::Struct(s),
            });
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Whether a value of type `t` holds a `target` inside it (not behind a pointer).
fn contains_by_value(w: &World, t: Type, target: Type) -> bool {
    let mut seen = rustc_hash::FxHashSet::default();
    let mut stack = vec![t];
    let mut first = true;
    while let Some(x) = stack.pop() {
        if x == target && !first {
            return true;
        }
        first = false;
        if !seen.insert(x) {
            continue;
        }
        match w.kind(x) {
            TypeKind::Tuple(ts) => stack.extend(ts.iter().copied()),
            TypeKind::Struct(_) => {
                if let Some(d) = w.types().struct_decl(x) {
                    stack.extend(d.fields.iter().map(|f| f.1));
                }
            }
            TypeKind::Array { elem, .. } => stack.push(*elem),
            _ => {}
        }
    }
    false
}

/// The parameters of other continuations that `k` uses, directly or through the
/// continuations it references, in the order a walk finds them (for an error message).
fn free_params(w: &World, free: &FreeParams, k: Def) -> Vec<Def> {
    let owners = free.owners(k);
    let mut seen: rustc_hash::FxHashSet<Def> = Default::default();
    let mut stack = vec![k];
    let mut out = Vec::new();
    while let Some(d) = stack.pop() {
        if !seen.insert(d) {
            continue;
        }
        match w.node(d) {
            Node::Param(_) => {
                if owners.contains(&w.ops(d)[0]) {
                    out.push(d);
                }
            }
            Node::Global { .. } => {}
            _ => stack.extend(w.ops(d).iter().rev()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::def::ArithOp;

    /// A world with `extern cont @f(%0: mem, %1: i32, %2: f32, %3: cn(mem, i32))`.
    fn world() -> (World, Def, Vec<Def>) {
        let mut w = World::new();
        let (mem, i32t, f32t) = (w.ty_mem(), w.ty_int(32, true), w.ty_float(32));
        let ret = w.ty_cont(&[mem, i32t]);
        let f = w.cont(&[mem, i32t, f32t, ret], "f");
        w.make_external(f);
        let ps = w.params(f);
        (w, f, ps)
    }

    fn messages(w: &World) -> Vec<String> {
        match verify(w) {
            Ok(()) => Vec::new(),
            Err(errors) => errors.iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn a_well_formed_world_verifies() {
        let (mut w, f, ps) = world();
        let one = w.lit_i32(1);
        let s = w.arith(ArithOp::Add, ps[1], one);
        w.set_body(f, ps[3], &[ps[0], s]);
        assert_eq!(messages(&w), Vec::<String>::new());
    }

    #[test]
    fn reports_every_violation_with_its_statement() {
        let (mut w, f, ps) = world();
        let i32t = w.ty_int(32, true);
        // Built without the typing check: i32 + f32.
        let bad = w.build(crate::Node::Arith(ArithOp::Add), i32t, &[ps[1], ps[2]]);
        w.set_body(f, ps[3], &[ps[0], bad]);
        let mem = w.ty_mem();
        w.cont(&[mem], "orphan");
        w.global(ps[1], false, "g");
        let mut got = messages(&w);
        got.sort();
        assert_eq!(
            got,
            [
                "%4: operands differ: i32 and f32\n    %4: i32 = add(%1, %2)",
                "@g: initializer depends on a parameter",
                "@orphan: has no body and is not external (an import)",
            ]
        );
    }
}
