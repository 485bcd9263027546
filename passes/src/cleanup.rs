//! Cleanup after partial evaluation, in place:
//!
//! - the partial-evaluation markers go: `run(x)` and `hlt(x)` become `x`, and `known(x)`
//!   that did not fold to `true` becomes `false` (nothing more will be known);
//! - eta reduction: a continuation whose body only forwards its parameters, in order, to
//!   another (`k(m, x) = g(m, x)`) is replaced by that one everywhere;
//! - parameter elimination: a continuation that is only ever jumped to (never passed as a
//!   value) loses the parameters its scope does not use and those every jump passes the
//!   same constant for.
//!
//! Unreachable code is left for [`crate::compact`] (the `dce` pass).

use crate::live::Live;
use crate::rewrite::{cont_param_types, scope_of, specialize, Rewriter};
use durin_ir::{Def, Node, World};
use rustc_hash::FxHashMap;

/// Runs the cleanups until none changes anything (at most 32 times); whether any did.
pub fn run(w: &mut World) -> bool {
    let mut any = lower_markers(w);
    any |= fold_constant_loads(w);
    for _ in 0..32 {
        let changed = eta(w) | drop_params(w);
        any |= changed;
        if !changed {
            break;
        }
    }
    any
}

/// Applies `rw` to the filters and bodies of all continuations in `conts`.
fn apply(w: &mut World, rw: &mut Rewriter, conts: &[Def]) {
    for &k in conts {
        rw.rewrite_cont_into(w, k, k);
    }
}

/// Removes `run`, `hlt` and unfolded `known` markers; whether there were any.
pub fn lower_markers(w: &mut World) -> bool {
    let mut any = false;
    // A marker replaced by its operand may have markers inside: again until none is left
    // (each time removes the outermost ones; markers in the initializer of a global, which
    // continuations do not rewrite, would stay: hence the bound).
    for _ in 0..64 {
        let live = Live::new(w);
        let mut rw = Rewriter::new();
        let mut found = false;
        for d in live.defs() {
            let to = match w.node(d) {
                Node::Run | Node::Hlt => w.ops(d)[0],
                Node::Known => w.lit_bool(false),
                _ => continue,
            };
            rw.map(d, to);
            found = true;
        }
        if !found {
            break;
        }
        apply(w, &mut rw, live.conts());
        any = true;
    }
    any
}

/// Loads from an immutable global at a constant position (`weights(2)` of a `static`
/// array) become the value, so that constant tables disappear after specialization.
pub fn fold_constant_loads(w: &mut World) -> bool {
    let live = Live::new(w);
    let mut rw = Rewriter::new();
    let mut any = false;
    let loads: Vec<Def> = live.defs().filter(|&d| w.node(d) == Node::Load).collect();
    for l in loads {
        let (mem, ptr) = (w.ops(l)[0], w.ops(l)[1]);
        // The path from the global to the loaded value: constant indices only.
        let mut path = Vec::new();
        let mut p = ptr;
        while w.node(p) == Node::Lea {
            match w.lit_bits(w.ops(p)[1]) {
                Some(i) => path.push(i),
                None => break,
            }
            p = w.ops(p)[0];
        }
        if w.node(p) != (Node::Global { mutable: false }) {
            continue;
        }
        let mut value = w.ops(p)[0];
        let mut ok = true;
        for &i in path.iter().rev() {
            let built = matches!(w.node(value), Node::Tuple | Node::Struct | Node::Array);
            match w.ops(value).get(i as usize) {
                Some(&v) if built => value = v,
                _ => {
                    ok = false;
                    break;
                }
            }
        }
        if ok && !w.has_params(value) {
            let t = w.tuple(&[mem, value]);
            rw.map(l, t);
            any = true;
        }
    }
    if any {
        apply(w, &mut rw, live.conts());
    }
    any
}

/// Replaces continuations that only forward their parameters by their target; whether any
/// was.
pub fn eta(w: &mut World) -> bool {
    let live = Live::new(w);
    let mut target: FxHashMap<Def, Def> = FxHashMap::default();
    for &k in live.conts() {
        if w.is_external(k) {
            continue;
        }
        let Some((callee, args)) = w.body(k) else {
            continue;
        };
        let n = w.num_params(k);
        // Only a jump to a continuation or a parameter: a computed callee (a branch) would
        // be evaluated where `k` is referenced, before the branch that leads to `k`, and
        // computing it may fail there (an index out of bounds on a loop's exit path).
        let simple = matches!(w.node(callee), Node::Cont | Node::Param(_));
        if callee == k || args.len() != n || !simple {
            continue;
        }
        let forwards = args
            .iter()
            .enumerate()
            .all(|(i, &a)| w.node(a) == Node::Param(i as u32) && w.ops(a)[0] == k);
        let own_param = matches!(w.node(callee), Node::Param(_)) && w.ops(callee)[0] == k;
        if forwards && !own_param {
            target.insert(k, callee);
        }
    }
    if target.is_empty() {
        return false;
    }
    let mut rw = Rewriter::new();
    let mut mapped = false;
    for (&k, &t) in &target {
        // Follow chains k -> k2 -> g, stopping at cycles.
        let mut t = t;
        let mut steps = 0;
        while let Some(&next) = target.get(&t) {
            if next == k || steps > target.len() {
                break;
            }
            t = next;
            steps += 1;
        }
        if t != k {
            rw.map(k, t);
            mapped = true;
        }
    }
    if mapped {
        apply(w, &mut rw, live.conts());
    }
    mapped
}

/// Drops parameters of continuations that are only jumped to: unused ones, and those that
/// every jump passes the same constant for. Whether any were.
pub fn drop_params(w: &mut World) -> bool {
    let live = Live::new(w);
    let conts = live.conts();
    // Where each continuation is the callee of a jump, and how many such jumps there are.
    let mut sites: FxHashMap<Def, Vec<Def>> = FxHashMap::default();
    for &k in conts {
        if let Some((callee, _)) = w.body(k) {
            if w.node(callee) == Node::Cont {
                sites.entry(callee).or_default().push(k);
            }
        }
    }
    let mut replaced: Vec<(Def, Def, Vec<bool>)> = Vec::new();
    for &k in conts {
        if w.is_external(k) || w.body(k).is_none() {
            continue;
        }
        let Some(callers) = sites.get(&k) else {
            continue;
        };
        // Every use of `k` must be as the callee of one of these jumps (a use anywhere else,
        // an argument included, makes more uses than jumps).
        if live.uses(k) as usize != callers.len() {
            continue;
        }
        let n = w.num_params(k);
        let mut subst: Vec<Option<Def>> = vec![None; n];
        for (i, slot) in subst.iter_mut().enumerate().skip(1) {
            let p = w.param_if_built(k, i);
            let unused = p.is_none_or(|p| !live.contains(p));
            if unused {
                *slot = Some(w.bottom(cont_param_types(w, k)[i]));
                continue;
            }
            let first = w.body(callers[0]).map(|(_, a)| a[i]);
            let same = first.filter(|&v| {
                let closed = !w.has_params(v) && w.node(v) != Node::Cont;
                closed
                    && callers
                        .iter()
                        .all(|&s| w.body(s).is_some_and(|(_, a)| a[i] == v))
            });
            if same.is_some() {
                *slot = same;
            }
        }
        if subst.iter().all(Option::is_none) {
            continue;
        }
        // The scope must not contain the callers (a loop jumping to itself from inside
        // its scope keeps its parameters: its own jumps pass them on).
        let scope = scope_of(w, k);
        if callers.iter().any(|s| scope.contains(s)) {
            continue;
        }
        let name = w.name(k).unwrap_or("k").to_string();
        let clone = specialize(w, k, &subst, &name);
        let keep: Vec<bool> = subst.iter().map(Option::is_none).collect();
        replaced.push((k, clone, keep));
    }
    let changed = !replaced.is_empty();
    for (k, clone, keep) in replaced {
        for &s in &sites[&k] {
            if let Some((_, args)) = w.body(s).map(|(c, a)| (c, a.to_vec())) {
                let rest: Vec<Def> = args
                    .iter()
                    .zip(&keep)
                    .filter(|(_, &kp)| kp)
                    .map(|(&a, _)| a)
                    .collect();
                w.set_body(s, clone, &rest);
            }
        }
    }
    changed
}
