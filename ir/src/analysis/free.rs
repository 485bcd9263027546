//! Free parameters of continuations.
//!
//! A continuation is *closed* if everything it computes depends only on its own parameters;
//! otherwise it uses parameters of enclosing continuations (it is nested in their scope, and
//! as a value it is a closure over them). [`FreeParams`] gives, for every continuation, the
//! *other* continuations whose parameters it or any continuation it references uses: a
//! parameter is free exactly where its continuation is, so the sets are as small as the
//! nesting is deep (sets of the parameters themselves grow with the code, and made this
//! analysis quadratic on long unrolled kernels).

use crate::analysis::uses::UseSets;
use crate::def::{Def, DefMap, Node};
use crate::world::World;
use indexmap::IndexSet;
use rustc_hash::FxBuildHasher;

type Set = IndexSet<Def, FxBuildHasher>;

/// The free parameters of every continuation of a world, by the continuations they belong to.
pub struct FreeParams {
    owners: DefMap<Vec<Def>>,
    users: DefMap<Vec<Def>>,
}

/// Params and nominals reached from `roots` without entering nominals.
pub(crate) fn reach(w: &World, roots: &[Def], params: &mut Set, nominals: &mut Set) {
    let mut seen: rustc_hash::FxHashSet<Def> = Default::default();
    reach_unseen(w, roots, params, nominals, |d| seen.insert(d));
}

/// A number per def, to mark the defs seen by one of many walks without a set per walk:
/// walk `i` marks with `i` and skips what already holds `i`.
struct Marks(Vec<u32>);

impl Marks {
    fn new(w: &World) -> Marks {
        Marks(vec![0; w.num_defs()])
    }

    /// Marks `d` with `stamp`; whether it was not marked so already.
    fn mark(&mut self, d: Def, stamp: u32) -> bool {
        let m = &mut self.0[d.index()];
        let fresh = *m != stamp;
        *m = stamp;
        fresh
    }
}

/// [`reach`], with `unseen(d)` saying whether `d` is seen for the first time.
fn reach_unseen(
    w: &World,
    roots: &[Def],
    params: &mut Set,
    nominals: &mut Set,
    mut unseen: impl FnMut(Def) -> bool,
) {
    let mut stack: Vec<Def> = roots.to_vec();
    while let Some(d) = stack.pop() {
        if !unseen(d) {
            continue;
        }
        match w.node(d) {
            Node::Param(_) => {
                params.insert(d);
            }
            n if n.is_nominal() => {
                nominals.insert(d);
            }
            _ => stack.extend_from_slice(w.ops(d)),
        }
    }
}

impl FreeParams {
    /// Computes the free parameters of every continuation of `w` (a fixpoint over the
    /// references between continuations, so loops and recursion are handled).
    pub fn compute(w: &World) -> FreeParams {
        Self::compute_over(w, w.continuations().collect())
    }

    /// As [`FreeParams::compute`], for `conts` only: they must include every continuation
    /// they reference (the live continuations of a program do).
    pub fn compute_over(w: &World, conts: Vec<Def>) -> FreeParams {
        let mut owners: DefMap<Vec<Def>> = DefMap::new();
        let mut refs: DefMap<Vec<Def>> = DefMap::new();
        // What each continuation reaches through structural defs, from sets memoized per
        // def: continuations that share an expression do not each walk it again.
        let mut uses = UseSets::default();
        let mut reached: Vec<Def> = Vec::new();
        let mut marked = Marks::new(w);
        for (i, &k) in conts.iter().enumerate() {
            reached.clear();
            uses.each_direct_use(w, k, |d| reached.push(d));
            reached.sort_unstable();
            reached.dedup();
            let stamp = i as u32 + 1;
            let mut os = Vec::new();
            for &d in &reached {
                if w.node(d) != Node::Cont {
                    let o = w.ops(d)[0];
                    if o != k && marked.mark(o, stamp) {
                        os.push(o);
                    }
                }
            }
            owners.insert(k, os);
            refs.insert(
                k,
                (reached.iter().copied())
                    .filter(|&d| d != k && w.node(d) == Node::Cont)
                    .collect(),
            );
        }
        // Propagate along references with a worklist: a continuation is looked at again
        // only when one it references has gained an owner.
        let mut users: DefMap<Vec<Def>> = DefMap::new();
        for &k in &conts {
            for &j in &refs[k] {
                match users.get_mut(j) {
                    Some(us) => us.push(k),
                    None => {
                        users.insert(j, vec![k]);
                    }
                }
            }
        }
        let mut queued: rustc_hash::FxHashSet<Def> = conts.iter().copied().collect();
        let mut work: std::collections::VecDeque<Def> = conts.iter().copied().collect();
        // For each continuation, how much of the set of each one it references it has
        // looked at: sets only grow at their end, so a second look starts there.
        let mut looked: DefMap<Vec<usize>> = DefMap::new();
        for &k in &conts {
            looked.insert(k, vec![0; refs[k].len()]);
        }
        // The members of the set being grown, marked by def number (long sequences of calls
        // nest hundreds of return points, and so make sets of hundreds).
        let mut member = vec![false; w.num_defs()];
        let mut add: Vec<Def> = Vec::new();
        while let Some(k) = work.pop_front() {
            queued.remove(&k);
            member[k.index()] = true;
            for &o in &owners[k] {
                member[o.index()] = true;
            }
            for (r, &j) in refs[k].iter().enumerate() {
                let seen = std::mem::replace(&mut looked[k][r], owners[j].len());
                for &o in owners[j].as_slice()[seen..].iter() {
                    if !member[o.index()] {
                        member[o.index()] = true;
                        add.push(o);
                    }
                }
            }
            member[k.index()] = false;
            for &o in owners[k].iter().chain(&add) {
                member[o.index()] = false;
            }
            if add.is_empty() {
                continue;
            }
            owners[k].append(&mut add);
            for &u in users.get(k).map_or(&[][..], |v| v.as_slice()) {
                if queued.insert(u) {
                    work.push_back(u);
                }
            }
        }
        let mut users: DefMap<Vec<Def>> = DefMap::new();
        for (k, os) in owners.iter() {
            for &o in os {
                match users.get_mut(o) {
                    Some(us) => us.push(k),
                    None => {
                        users.insert(o, vec![k]);
                    }
                }
            }
        }
        FreeParams { owners, users }
    }

    /// The continuations whose parameters `cont` uses, in discovery order.
    pub fn owners(&self, cont: Def) -> &[Def] {
        self.owners.get(cont).map_or(&[], |s| s.as_slice())
    }

    /// The continuations that use a parameter of `owner` (directly or through the
    /// continuations they reference): those whose [`FreeParams::owners`] hold it.
    pub fn users(&self, owner: Def) -> &[Def] {
        self.users.get(owner).map_or(&[], |s| s.as_slice())
    }

    /// Whether `cont` uses no parameter but its own.
    pub fn is_closed(&self, cont: Def) -> bool {
        self.owners(cont).is_empty()
    }
}
