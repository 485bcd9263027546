//! Where control goes in a kernel: for each of its continuations, the jumps into it and the
//! branch conditions on them, so that the condition under which a thread reaches a
//! continuation can be written as a value (the staging pass's guard of a tile's fill).

use durin_ir::{ArithOp, Def, Node, World};
use rustc_hash::{FxHashMap, FxHashSet};

/// A jump into a continuation: from where, and on which branch of which condition (`None`:
/// always, a plain jump or a call's return).
#[derive(Clone, Copy)]
struct Edge {
    from: Def,
    on: Option<(Def, bool)>,
}

/// The jumps between the continuations of one kernel.
pub(crate) struct Paths {
    entry: Def,
    into: FxHashMap<Def, Vec<Edge>>,
    /// Continuations that something other than a jump, a branch or a call's return refers
    /// to: where control may come from is not known.
    unknown: FxHashSet<Def>,
}

impl Paths {
    /// The jumps of the kernel whose continuations are `conts` (the kernel first).
    pub(crate) fn new(w: &World, conts: &[Def]) -> Paths {
        let ours: FxHashSet<Def> = conts.iter().copied().collect();
        let mut into: FxHashMap<Def, Vec<Edge>> = FxHashMap::default();
        let mut unknown = FxHashSet::default();
        // Continuations of ours inside a value (a tuple of them, a select of two passed
        // as an argument): their jumps are not known. (A parameter names its
        // continuation, but is a value, not a jump to it.) Each value is walked once for
        // the whole kernel.
        let mut seen = FxHashSet::default();
        let mut hidden = |d: Def, unknown: &mut FxHashSet<Def>| {
            let mut stack = vec![d];
            while let Some(d) = stack.pop() {
                if !seen.insert(d) {
                    continue;
                }
                if ours.contains(&d) {
                    unknown.insert(d);
                } else if !w.node(d).is_nominal() && !matches!(w.node(d), Node::Param(_)) {
                    stack.extend_from_slice(w.ops(d));
                }
            }
        };
        for &c in conts {
            let Some((callee, args)) = w.body(c) else {
                continue;
            };
            let mut edge = |to: Def, on: Option<(Def, bool)>| {
                into.entry(to).or_default().push(Edge { from: c, on });
            };
            match w.node(callee) {
                Node::Cont if ours.contains(&callee) => edge(callee, None),
                Node::Cont => {}
                Node::Select => {
                    let ops = w.ops(callee);
                    let (cond, a, b) = (ops[0], ops[1], ops[2]);
                    for (to, then) in [(a, true), (b, false)] {
                        if ours.contains(&to) {
                            edge(to, Some((cond, then)));
                        } else if !w.node(to).is_nominal() {
                            hidden(to, &mut unknown);
                        }
                    }
                }
                _ => hidden(callee, &mut unknown),
            }
            for &a in args {
                if ours.contains(&a) {
                    edge(a, None);
                } else if !w.node(a).is_nominal() {
                    hidden(a, &mut unknown);
                }
            }
        }
        Paths {
            entry: conts[0],
            into,
            unknown,
        }
    }

    /// The condition under which a thread reaches continuation `c` from the kernel's
    /// entry: the `or` over the jumps into `c` of the condition of the jump's origin `and`
    /// its branch's condition, each branch condition `d` given as `cond(w, d)` (the
    /// caller's copy of it). `None` where a loop leads to `c`, a continuation on the way
    /// is reached otherwise than by jumps, or `cond` gives `None`.
    pub(crate) fn reach(
        &self,
        w: &mut World,
        c: Def,
        cond: &mut dyn FnMut(&mut World, Def) -> Option<Def>,
    ) -> Option<Def> {
        let mut memo = FxHashMap::default();
        self.reach_in(w, c, cond, &mut memo)
    }

    fn reach_in(
        &self,
        w: &mut World,
        c: Def,
        cond: &mut dyn FnMut(&mut World, Def) -> Option<Def>,
        memo: &mut FxHashMap<Def, Option<Def>>,
    ) -> Option<Def> {
        if c == self.entry {
            return Some(w.lit_bool(true));
        }
        match memo.get(&c) {
            // Under way: a loop.
            Some(None) => return None,
            Some(Some(r)) => return Some(*r),
            None => {}
        }
        if self.unknown.contains(&c) {
            return None;
        }
        let edges = self.into.get(&c)?.clone();
        memo.insert(c, None);
        let mut any: Option<Def> = None;
        for e in edges {
            let mut here = self.reach_in(w, e.from, cond, memo)?;
            if let Some((d, then)) = e.on {
                let mut v = cond(w, d)?;
                if !then {
                    let t = w.lit_bool(true);
                    v = w.arith(ArithOp::Xor, v, t);
                }
                here = w.arith(ArithOp::And, here, v);
            }
            any = Some(match any {
                None => here,
                Some(a) => either(w, a, here),
            });
        }
        let r = any?;
        memo.insert(c, Some(r));
        Some(r)
    }
}

/// `a or b`, where the two sides of a branch that meet again give back the condition
/// before it: `(r and c) or (r and not c)` is `r` (a boundary handler's `min` and `max`
/// after inlining are such branches, one after another).
fn either(w: &mut World, a: Def, b: Def) -> Def {
    let and = |w: &World, d: Def| match w.node(d) {
        Node::Arith(ArithOp::And) => Some((w.ops(d)[0], w.ops(d)[1])),
        _ => None,
    };
    if let (Some((r, x)), Some((r2, y))) = (and(w, a), and(w, b)) {
        if r == r2 {
            let t = w.lit_bool(true);
            if w.arith(ArithOp::Xor, x, t) == y || w.arith(ArithOp::Xor, y, t) == x {
                return r;
            }
        }
    }
    w.arith(ArithOp::Or, a, b)
}

/// The continuation in which `load` runs: where its chain of memory operations starts (a
/// continuation's memory parameter).
pub(crate) fn block_of(w: &World, load: Def) -> Option<Def> {
    let mut m = w.ops(load)[0];
    for _ in 0..100_000 {
        match w.node(m) {
            Node::Param(_) => return Some(w.ops(m)[0]),
            Node::Extract => m = w.ops(m)[0],
            Node::Load | Node::Store | Node::Alloc | Node::Slot => m = w.ops(m)[0],
            _ => return None,
        }
    }
    None
}
