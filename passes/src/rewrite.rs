//! Rewriting a world in place: substitution through structural defs, scopes found locally,
//! and cloning a continuation's scope with some parameters replaced (specialization,
//! inlining).
//!
//! Structural defs are hash-consed and normalized, so rebuilding one with new operands
//! folds what became constant. Nominal continuations are never rewritten through; they are
//! replaced only where the substitution says so (a clone for a continuation of a scope).

use durin_ir::{Def, Node, World};
use indexmap::IndexSet;
use rustc_hash::{FxBuildHasher, FxHashMap};

/// An insertion-ordered set of defs.
pub type DefSet = IndexSet<Def, FxBuildHasher>;

/// A substitution of defs, applied through structural defs.
#[derive(Default)]
pub struct Rewriter {
    map: FxHashMap<Def, Def>,
}

impl Rewriter {
    /// An empty substitution.
    pub fn new() -> Rewriter {
        Rewriter::default()
    }

    /// Replaces `from` by `to` in everything rewritten from now on.
    pub fn map(&mut self, from: Def, to: Def) {
        self.map.insert(from, to);
    }

    /// `d` with the substitution applied: structural defs are rebuilt (and normalized) when an
    /// operand changes; nominals and parameters change only when mapped. Iterative, so deep
    /// graphs do not overflow the stack.
    pub fn rewrite(&mut self, w: &mut World, d: Def) -> Def {
        if let Some(&r) = self.map.get(&d) {
            return r;
        }
        let mut stack = vec![(d, false)];
        while let Some(&(x, expanded)) = stack.last() {
            if self.map.contains_key(&x) {
                stack.pop();
                continue;
            }
            let node = w.node(x);
            if node.is_nominal() || matches!(node, Node::Param(_)) || w.ops(x).is_empty() {
                self.map.insert(x, x);
                stack.pop();
                continue;
            }
            if !expanded {
                stack.last_mut().expect("just read").1 = true;
                for &o in w.ops(x) {
                    if !self.map.contains_key(&o) {
                        stack.push((o, false));
                    }
                }
                continue;
            }
            stack.pop();
            let ops: Vec<Def> = w.ops(x).iter().map(|o| self.map[o]).collect();
            let r = if ops.as_slice() == w.ops(x) {
                x
            } else {
                let ty = w.type_of(x);
                w.build(node, ty, &ops)
            };
            self.map.insert(x, r);
        }
        self.map[&d]
    }

    /// Rewrites the filters and body of continuation `from` into continuation `to` (which
    /// has the same parameter types; `from == to` rewrites in place).
    pub fn rewrite_cont_into(&mut self, w: &mut World, from: Def, to: Def) {
        let n = w.num_params(from);
        for i in 0..n {
            let f = w.filters(from)[i];
            let f = self.rewrite(w, f);
            if w.filters(to)[i] != f {
                w.set_filter(to, i, f);
            }
        }
        self.rewrite_body_into(w, from, to);
    }

    fn rewrite_body_into(&mut self, w: &mut World, from: Def, to: Def) {
        match w.body(from).map(|(c, a)| (c, a.to_vec())) {
            Some((callee, args)) => {
                let c = self.rewrite(w, callee);
                let a: Vec<Def> = args.iter().map(|&x| self.rewrite(w, x)).collect();
                let same = w
                    .body(to)
                    .is_some_and(|(c0, a0)| c0 == c && a0 == a.as_slice());
                if !same {
                    w.set_body(to, c, &a);
                }
            }
            None => {
                if w.body(to).is_some() {
                    w.clear_body(to);
                }
            }
        }
        if from != to {
            if let Some(l) = w.loc(from) {
                w.set_loc(to, l);
            }
        }
    }
}

/// The continuations and parameters that one continuation's body reaches directly: through
/// structural defs, not through other nominals.
pub fn direct_uses(w: &World, k: Def) -> (Vec<Def>, Vec<Def>) {
    let mut conts = Vec::new();
    let mut params = Vec::new();
    let mut seen = DefSet::default();
    let mut stack: Vec<Def> = w.ops(k).to_vec();
    while let Some(d) = stack.pop() {
        if !seen.insert(d) {
            continue;
        }
        match w.node(d) {
            Node::Cont => conts.push(d),
            Node::Param(_) => params.push(d),
            Node::Global { .. } => {}
            _ => stack.extend_from_slice(w.ops(d)),
        }
    }
    (conts, params)
}

/// The scope of `entry`: `entry` and the continuations reachable from it that use,
/// directly or through another such continuation, a parameter of a continuation of the
/// scope. Found from `entry` outwards (over what `entry` reaches), in time linear in that.
pub fn scope_of(w: &World, entry: Def) -> DefSet {
    let mut reached = DefSet::default();
    reached.insert(entry);
    let mut index = ScopeIndex::default();
    let mut i = 0;
    while i < reached.len() {
        let c = reached[i];
        i += 1;
        index.add(w, c);
        reached.extend(direct_uses(w, c).0);
    }
    index.scope(entry)
}

/// Who uses the parameters of each continuation and who references it, for finding scopes
/// by walking backwards from their entry (in time proportional to the scope). Edges are
/// only ever added: a stale edge makes a scope larger than needed (a clone of a
/// continuation that did not need one), never smaller.
#[derive(Default)]
pub struct ScopeIndex {
    param_users: FxHashMap<Def, Vec<Def>>,
    referenced_by: FxHashMap<Def, Vec<Def>>,
}

impl ScopeIndex {
    /// The index of the continuations in `conts`.
    pub fn new(w: &World, conts: &DefSet) -> ScopeIndex {
        let mut ix = ScopeIndex::default();
        for &k in conts {
            ix.add(w, k);
        }
        ix
    }

    /// Records what `k` uses now (`k`'s direct uses).
    pub fn add(&mut self, w: &World, k: Def) {
        let (conts, params) = direct_uses(w, k);
        for p in params {
            self.param_users.entry(w.ops(p)[0]).or_default().push(k);
        }
        for c in conts {
            self.referenced_by.entry(c).or_default().push(k);
        }
    }

    /// The scope of `entry` (see [`scope_of`]), the entry first: users of a member's
    /// parameters are members, and so are continuations that reference a member other than
    /// the entry (they have its free parameters); referencing the entry itself (calling it)
    /// brings in none of the scope's parameters.
    pub fn scope(&self, entry: Def) -> DefSet {
        let mut members = DefSet::default();
        members.insert(entry);
        let mut at = 0;
        while at < members.len() {
            let m = members[at];
            at += 1;
            let users = self.param_users.get(&m).into_iter().flatten();
            let refs = self
                .referenced_by
                .get(&m)
                .filter(|_| m != entry)
                .into_iter()
                .flatten();
            for &c in users.chain(refs) {
                members.insert(c);
            }
        }
        members
    }
}

/// Which of `conts` (a set closed under references, such as everything reachable from the
/// externals) are *closed*: they use no parameter of another continuation, directly or
/// through the continuations they reference. Closed continuations are top-level functions.
pub fn closed_conts(w: &World, conts: &DefSet) -> FxHashMap<Def, bool> {
    let direct: Vec<(Vec<Def>, Vec<Def>)> = conts.iter().map(|&c| direct_uses(w, c)).collect();
    let index = |c: &Def| conts.get_index_of(c);
    let mut referenced_by: Vec<Vec<usize>> = vec![Vec::new(); conts.len()];
    for (i, (cs, _)) in direct.iter().enumerate() {
        for c in cs {
            if let Some(j) = index(c) {
                referenced_by[j].push(i);
            }
        }
    }
    // Free parameters of each continuation, grown to a fixed point.
    let mut free: Vec<DefSet> = conts
        .iter()
        .zip(&direct)
        .map(|(&c, (_, ps))| ps.iter().copied().filter(|&p| w.ops(p)[0] != c).collect())
        .collect();
    let mut work: Vec<usize> = (0..conts.len()).collect();
    while let Some(i) = work.pop() {
        let c = conts[i];
        let mut grown = false;
        for d in &direct[i].0 {
            let Some(j) = index(d) else { continue };
            if j == i {
                continue;
            }
            let add: Vec<Def> = free[j]
                .iter()
                .copied()
                .filter(|&p| w.ops(p)[0] != c && !free[i].contains(&p))
                .collect();
            if !add.is_empty() {
                free[i].extend(add);
                grown = true;
            }
        }
        if grown {
            work.extend_from_slice(&referenced_by[i]);
        }
    }
    conts
        .iter()
        .zip(&free)
        .map(|(&c, f)| (c, f.is_empty()))
        .collect()
}

/// Clones the scope of `entry` as a new continuation taking the parameters of `entry` for
/// which `args[i]` is `None`; the others are replaced by `args[i]`. Returns the clone.
/// Jumps back to `entry` from inside its scope still go to `entry`: a recursive jump
/// passes its own arguments and is specialized (or not) on its own.
pub fn specialize(w: &mut World, entry: Def, args: &[Option<Def>], name: &str) -> Def {
    let scope = scope_of(w, entry);
    specialize_in(w, entry, args, name, &scope)
}

/// [`specialize`] with the scope of `entry` given.
pub fn specialize_in(
    w: &mut World,
    entry: Def,
    args: &[Option<Def>],
    name: &str,
    scope: &DefSet,
) -> Def {
    let mut rw = Rewriter::new();
    let ptys = cont_param_types(w, entry);
    let kept: Vec<usize> = (0..ptys.len()).filter(|&i| args[i].is_none()).collect();
    let kept_tys: Vec<_> = kept.iter().map(|&i| ptys[i]).collect();
    let clone = w.cont(&kept_tys, name);
    for (j, &i) in kept.iter().enumerate() {
        let (from, to) = (w.param(entry, i), w.param(clone, j));
        rw.map(from, to);
    }
    for (i, a) in args.iter().enumerate() {
        if let Some(a) = a {
            let p = w.param(entry, i);
            rw.map(p, *a);
        }
    }
    let mut pairs = Vec::new();
    for &m in scope.iter().skip(1) {
        let tys = cont_param_types(w, m);
        let base = w.name(m).unwrap_or("k").to_string();
        let c = w.cont(&tys, &base);
        for i in 0..tys.len() {
            let (from, to) = (w.param(m, i), w.param(c, i));
            rw.map(from, to);
        }
        rw.map(m, c);
        pairs.push((m, c));
    }
    // The clone's own filters: those of the kept parameters.
    for (j, &i) in kept.iter().enumerate() {
        let f = w.filters(entry)[i];
        let f = rw.rewrite(w, f);
        w.set_filter(clone, j, f);
    }
    rw.rewrite_body_into(w, entry, clone);
    let mut made = vec![clone];
    for (from, to) in pairs {
        rw.rewrite_cont_into(w, from, to);
        made.push(to);
    }
    // A jump back to `entry` that passes the very values substituted here is a jump to
    // the clone: close the loop now (a later round would, but until then the clone
    // looks used once and would be inlined, peeling the loop forever).
    for k in made {
        let Some((callee, a)) = w.body(k).map(|(c, a)| (c, a.to_vec())) else {
            continue;
        };
        let same = callee == entry
            && a.len() == args.len()
            && args.iter().zip(&a).all(|(s, &x)| s.is_none_or(|v| v == x));
        if same {
            let rest: Vec<Def> = kept.iter().map(|&i| a[i]).collect();
            w.set_body(k, clone, &rest);
        }
    }
    clone
}

/// The parameter types of continuation `k`.
pub fn cont_param_types(w: &World, k: Def) -> Vec<durin_ir::Type> {
    w.types()
        .cont_params(w.type_of(k))
        .map(|p| p.to_vec())
        .unwrap_or_default()
}
