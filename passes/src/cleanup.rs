//! Cleanup after partial evaluation, in place:
//!
//! - the partial-evaluation markers go: `run(x)` and `hlt(x)` become `x`, and `known(x)`
//!   that did not fold to `true` becomes `false` (nothing more will be known);
//! - eta reduction: a continuation whose body only forwards its parameters, in order, to
//!   another (`k(m, x) = g(m, x)`) is replaced by that one everywhere;
//! - parameter elimination: a continuation that is only ever jumped to (never passed as a
//!   value) loses the parameters its scope does not use and those every jump passes the
//!   same value for (a loop's back edge may pass the parameter itself): a constant, or the
//!   exit continuation of a loop, which makes the loop a block of its function.
//!
//! Unreachable code is left for [`crate::compact`] (the `dce` pass).

use crate::analysis::live::Live;
use crate::context::{Pass, PassContext};
use crate::rewrite::{cont_param_types, specialize_in, DefSet, Rewriter, ScopeIndex, UseCache};
use durin_diag::Diagnostic;
use durin_ir::{Def, Node, World};
use rustc_hash::FxHashMap;

/// Runs the cleanups until none changes anything (at most 32 sweeps of both); whether any
/// did.
pub fn run(w: &mut World) -> bool {
    // The live program, where the world has not changed since it was found: a cleanup that
    // changes nothing hands it to the next one instead of each walking the program again.
    let mut live = None;
    let mut any = lower_markers(w, &mut live);
    any |= fold_constant_loads(w, &mut live);
    // What structural defs reach never changes: one cache serves every sweep.
    let mut uses = UseCache::default();
    // Eta reduction and parameter elimination take turns, each on the world the other
    // left. One that changes nothing right after the other changed nothing ends it: the
    // world is the one the other just found nothing in (on `benches/gpu/bandwidth.art`
    // that last look was a quarter of the first `simplify`'s cleanup).
    let mut idle = 0;
    for turn in 0..64 {
        let changed = if turn % 2 == 0 {
            eta(w, &mut uses, &mut live)
        } else {
            drop_params(w, &mut uses, &mut live)
        };
        any |= changed;
        idle = if changed { 0 } else { idle + 1 };
        if idle == 2 {
            break;
        }
    }
    any
}

/// The live program of `w`: the one in `known` (taken), which a cleanup that changed
/// nothing left there, or found anew.
fn live_of(w: &World, known: &mut Option<Live>) -> Live {
    known.take().unwrap_or_else(|| Live::new(w))
}

/// Applies `rw` to the filters and bodies of all continuations in `conts`.
fn apply(w: &mut World, rw: &mut Rewriter, conts: &[Def]) {
    for &k in conts {
        rw.rewrite_cont_into(w, k, k);
    }
}

/// Removes `run`, `hlt` and unfolded `known` markers; whether there were any.
fn lower_markers(w: &mut World, known: &mut Option<Live>) -> bool {
    let mut any = false;
    // A marker replaced by its operand may have markers inside: again until none is left
    // (each time removes the outermost ones; markers in the initializer of a global, which
    // continuations do not rewrite, would stay: hence the bound).
    for _ in 0..64 {
        let live = live_of(w, known);
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
            *known = Some(live);
            break;
        }
        apply(w, &mut rw, live.conts());
        any = true;
    }
    any
}

/// Loads from an immutable global at a constant position (`weights(2)` of a `static`
/// array) become the value, so that constant tables disappear after specialization.
fn fold_constant_loads(w: &mut World, known: &mut Option<Live>) -> bool {
    let live = live_of(w, known);
    let mut folded: FxHashMap<Def, (Def, Def)> = FxHashMap::default();
    let loads: Vec<Def> = live.defs().filter(|&d| w.node(d) == Node::Load).collect();
    for &l in &loads {
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
            let byte = (w.bytes_of(value)).and_then(|b| b.get(usize::try_from(i).ok()?).copied());
            if let Some(b) = byte {
                let u8t = w.ty_int(8, false);
                value = w.lit(u8t, u64::from(b));
                continue;
            }
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
            folded.insert(l, (mem, value));
        }
    }
    if folded.is_empty() {
        *known = Some(live);
        return false;
    }
    // A load becomes its value and the token it was given, that token rewritten too (it
    // may come from another folded load further up the chain, directly or through other
    // effects). In creation order, so operands first: the loads a token depends on are
    // mapped before it is rewritten, and nothing rewritten earlier depends on a later one.
    let mut order: Vec<Def> = folded.keys().copied().collect();
    order.sort();
    let mut rw = Rewriter::new();
    for l in order {
        let (mem, value) = folded[&l];
        let mem = rw.rewrite(w, mem);
        let t = w.tuple(&[mem, value]);
        rw.map(l, t);
    }
    apply(w, &mut rw, live.conts());
    true
}

/// Replaces continuations that only forward their parameters by their target; whether any
/// was.
fn eta(w: &mut World, cache: &mut UseCache, known: &mut Option<Live>) -> bool {
    let live = live_of(w, known);
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
        *known = Some(live);
        return false;
    }
    // A candidate whose parameters are used outside its own body stays: code it reaches
    // (a return point that partial evaluation moved inside its scope) still reads them.
    // The same look finds the continuations that reference a candidate: only they change.
    let mut referencing = Vec::new();
    for &c in live.conts() {
        let mut refers = false;
        cache.each_direct_use(w, c, |d| match w.node(d) {
            Node::Param(_) if w.ops(d)[0] != c => {
                target.remove(&w.ops(d)[0]);
            }
            Node::Cont => refers |= target.contains_key(&d),
            _ => {}
        });
        if refers {
            referencing.push(c);
        }
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
        apply(w, &mut rw, &referencing);
    } else {
        *known = Some(live);
    }
    mapped
}

/// Drops parameters of continuations that are only jumped to: unused ones, and those that
/// every jump passes the same value for. Whether any were.
fn drop_params(w: &mut World, uses: &mut UseCache, known: &mut Option<Live>) -> bool {
    let live = live_of(w, known);
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
    // What the replacements of this sweep change or copy: the callers whose jumps are
    // redirected at the end, the scopes cloned, and what the clones jump to (they are new
    // callers, not in `sites`). A candidate that touches any of it waits for the next sweep,
    // which sees the world as it is then.
    let mut tainted: DefSet = DefSet::default();
    // One index for the whole pass: who uses each live continuation's parameters and who
    // references it, and which continuations are closed. A scope is then found walking
    // back from its entry, in time proportional to the scope (walking forward through
    // everything the entry reaches costs that much per candidate, and the candidates of
    // a large function are many). The clones a sweep makes are not in the index: a
    // candidate whose scope a clone would join holds a continuation the sweep touched,
    // and waits for the next sweep.
    let all: DefSet = conts.iter().copied().collect();
    let mut index = ScopeIndex::with_cache(std::mem::take(uses));
    let closed = index.rebuild_closed(w, &all);
    let is_closed = |d: Def| closed.get(&d).copied().unwrap_or(false);
    for &k in conts {
        if w.is_external(k) || w.body(k).is_none() || tainted.contains(&k) {
            continue;
        }
        let Some(callers) = sites.get(&k) else {
            continue;
        };
        // Every use of `k` must be as the callee of one of these jumps (a use anywhere else,
        // an argument included, makes more uses than jumps).
        if live.uses(k) as usize != callers.len() || callers.iter().any(|c| tainted.contains(c)) {
            continue;
        }
        let n = w.num_params(k);
        let mut subst: Vec<Option<Def>> = vec![None; n];
        let mut unused = vec![false; n];
        for i in 1..n {
            let p = w.param_if_built(k, i);
            if p.is_none_or(|p| !live.contains(p)) {
                unused[i] = true;
                subst[i] = Some(w.bottom(cont_param_types(w, k)[i]));
                continue;
            }
            let p = p.expect("used, so built");
            // Every jump passes one value `v` or the parameter itself (a loop's back edge:
            // such a jump uses `p`, so it is inside the scope). `v` may be a constant, a
            // continuation (the exit of a loop) or a parameter of an enclosing
            // continuation: the callers use it, so `k` runs only where it is bound.
            let args: Vec<Def> = callers
                .iter()
                .filter_map(|&s| w.body(s).map(|(_, a)| a[i]))
                .collect();
            let Some(&v) = args.iter().find(|&&a| a != p) else {
                continue;
            };
            // A top-level function stays one: it takes only values without free
            // parameters.
            let free = if w.node(v) == Node::Cont {
                !is_closed(v)
            } else {
                w.has_params(v)
            };
            if args.iter().all(|&a| a == v || a == p) && !(free && is_closed(k)) {
                subst[i] = Some(v);
            }
        }
        if subst.iter().all(Option::is_none) {
            continue;
        }
        let scope = index.scope(k);
        if scope.iter().any(|m| tainted.contains(m)) {
            continue;
        }
        // A loop's back edge may pass anything for an unused parameter, and would not be
        // redirected to the clone: unused parameters of loops stay.
        if callers.iter().any(|c| scope.contains(c)) {
            for i in 0..n {
                if unused[i] {
                    subst[i] = None;
                }
            }
            if subst.iter().all(Option::is_none) {
                continue;
            }
        }
        let name = w.name(k).unwrap_or("k").to_string();
        let before = w.num_defs();
        let cache = index.cache();
        let clone = specialize_in(w, k, &subst, &name, &scope, cache);
        tainted.insert(k);
        tainted.extend(callers.iter().copied());
        tainted.extend(scope.iter().copied());
        let made: Vec<Def> = w
            .defs_from(before)
            .filter(|&d| w.node(d) == Node::Cont)
            .collect();
        for c in made {
            tainted.insert(c);
            tainted.extend(cache.direct_uses(w, c).0);
        }
        let keep: Vec<bool> = subst.iter().map(Option::is_none).collect();
        replaced.push((k, clone, keep));
    }
    *uses = index.into_cache();
    let changed = !replaced.is_empty();
    if !changed {
        // (Only unused defs were made: bottoms for unused parameters.)
        *known = Some(live);
        return false;
    }
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

/// The pass `cleanup`.
pub(crate) struct Cleanup;

impl Pass for Cleanup {
    fn name(&self) -> &'static str {
        "cleanup"
    }

    fn description(&self) -> &'static str {
        "remove `run`/`hlt`/`known` markers, fold loads of constant tables, eta-reduce forwarding continuations, drop unused parameters and parameters always given the same constant"
    }

    fn run(&self, w: &mut World, _: &mut PassContext<'_>) -> Result<(), Diagnostic> {
        run(w);
        Ok(())
    }
}
