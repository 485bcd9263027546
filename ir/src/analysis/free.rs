//! Free parameters of continuations.
//!
//! A continuation is *closed* if everything it computes depends only on its own parameters;
//! otherwise it uses parameters of enclosing continuations (it is nested in their scope, and
//! as a value it is a closure over them). [`FreeParams`] gives, for every continuation, the
//! parameters of *other* continuations that it or any continuation it references uses.

use crate::analysis::uses::UseSets;
use crate::def::{Def, DefMap, Node};
use crate::world::World;
use indexmap::IndexSet;
use rustc_hash::FxBuildHasher;

type Set = IndexSet<Def, FxBuildHasher>;

/// The free parameters of every continuation of a world.
pub struct FreeParams {
    free: DefMap<Vec<Def>>,
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
        let mut direct: DefMap<Set> = DefMap::new();
        let mut refs: DefMap<Vec<Def>> = DefMap::new();
        // What each continuation reaches through structural defs, from sets memoized per
        // def: continuations that share an expression do not each walk it again.
        let mut uses = UseSets::default();
        let mut reached: Vec<Def> = Vec::new();
        for &k in &conts {
            reached.clear();
            uses.each_direct_use(w, k, |d| reached.push(d));
            reached.sort_unstable();
            reached.dedup();
            let ps: Set = (reached.iter().copied())
                .filter(|&d| w.node(d) != Node::Cont && w.ops(d)[0] != k)
                .collect();
            direct.insert(k, ps);
            refs.insert(
                k,
                (reached.iter().copied())
                    .filter(|&d| d != k && w.node(d) == Node::Cont)
                    .collect(),
            );
        }
        // Propagate along references with a worklist: a continuation is looked at again
        // only when one it references has gained a parameter.
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
        let mut free = direct;
        let mut queued: rustc_hash::FxHashSet<Def> = conts.iter().copied().collect();
        let mut work: std::collections::VecDeque<Def> = conts.iter().copied().collect();
        // For each continuation, how much of the set of each one it references it has
        // looked at: sets only grow at their end, so a second look starts there.
        let mut looked: DefMap<Vec<usize>> = DefMap::new();
        for &k in &conts {
            looked.insert(k, vec![0; refs[k].len()]);
        }
        while let Some(k) = work.pop_front() {
            queued.remove(&k);
            let mut add = Set::default();
            for (r, &j) in refs[k].iter().enumerate() {
                let seen = std::mem::replace(&mut looked[k][r], free[j].len());
                for &p in free[j].as_slice()[seen..].iter() {
                    if w.ops(p)[0] != k && !free[k].contains(&p) {
                        add.insert(p);
                    }
                }
            }
            if add.is_empty() {
                continue;
            }
            free[k].extend(add);
            for &u in users.get(k).map_or(&[][..], |v| v.as_slice()) {
                if queued.insert(u) {
                    work.push_back(u);
                }
            }
        }
        let (mut out, mut owners) = (DefMap::new(), DefMap::new());
        let mut users: DefMap<Vec<Def>> = DefMap::new();
        let mut owned = Marks::new(w);
        for (i, (k, s)) in free.iter().enumerate() {
            let mut os: Vec<Def> = Vec::new();
            for &p in s {
                let o = w.ops(p)[0];
                if owned.mark(o, i as u32 + 1) {
                    os.push(o);
                }
            }
            for &o in &os {
                match users.get_mut(o) {
                    Some(us) => us.push(k),
                    None => {
                        users.insert(o, vec![k]);
                    }
                }
            }
            out.insert(k, s.iter().copied().collect());
            owners.insert(k, os);
        }
        FreeParams {
            free: out,
            owners,
            users,
        }
    }

    /// The parameters of other continuations that `cont` uses, in discovery order.
    pub fn of(&self, cont: Def) -> &[Def] {
        self.free.get(cont).map_or(&[], |s| s.as_slice())
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
        self.of(cont).is_empty()
    }
}
