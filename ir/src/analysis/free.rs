//! Free parameters of continuations.
//!
//! A continuation is *closed* if everything it computes depends only on its own parameters;
//! otherwise it uses parameters of enclosing continuations (it is nested in their scope, and
//! as a value it is a closure over them). [`FreeParams`] gives, for every continuation, the
//! *other* continuations whose parameters it or any continuation it references uses: a
//! parameter is free exactly where its continuation is, so the sets are as small as the
//! nesting is deep (sets of the parameters themselves grow with the code, and made this
//! analysis quadratic on long unrolled kernels).

use crate::analysis::uses::{DirectUses, UseSets};
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

/// For each of `conts` (by position), the other continuations whose parameters it uses,
/// directly (entry `i` of `direct` is `conts[i]`'s uses) or through the members it
/// references (`position` finds a member's; references outside `conts` are not
/// followed): a parameter is free exactly where its continuation is, so each set is as
/// small as the nesting is deep. Tables by position, none by def number: the passes ask
/// this of every live continuation of worlds of millions of defs.
pub fn owners_by_position(
    w: &World,
    conts: &[Def],
    direct: &DirectUses,
    position: impl Fn(Def) -> Option<usize>,
) -> Vec<Vec<Def>> {
    let n = conts.len();
    // The references between members, by position, and who references each member: each
    // one flat list cut per member.
    let mut refs: Vec<u32> = Vec::new();
    let mut refs_start = vec![0u32; n + 1];
    for i in 0..n {
        let to = direct.conts(i).iter().filter_map(|&c| position(c));
        refs.extend(to.filter(|&j| j != i).map(|j| j as u32));
        refs_start[i + 1] = refs.len() as u32;
    }
    let refs_of = |i: usize| &refs[refs_start[i] as usize..refs_start[i + 1] as usize];
    let mut start = vec![0u32; n + 1];
    for &j in &refs {
        start[j as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut referrers = vec![0u32; start[n] as usize];
    for i in 0..n {
        for &j in refs_of(i) {
            referrers[fill[j as usize] as usize] = i as u32;
            fill[j as usize] += 1;
        }
    }
    // The continuations whose parameters each member uses without binding them (its own
    // are bound), grown to a fixed point along the references.
    let mut owners: Vec<Vec<Def>> = (conts.iter().enumerate())
        .map(|(i, &c)| {
            let mut os: Vec<Def> = (direct.params(i).iter())
                .map(|&p| w.ops(p)[0])
                .filter(|&o| o != c)
                .collect();
            os.sort_unstable();
            os.dedup();
            os
        })
        .collect();
    let mut queued = vec![true; n];
    let mut work: Vec<u32> = (0..n as u32).collect();
    // The members of the set being grown, marked by def number: long sequences of calls
    // nest hundreds of return points, and so make sets of hundreds.
    let mut marked = vec![false; w.num_defs()];
    let mut add: Vec<Def> = Vec::new();
    while let Some(i) = work.pop() {
        let i = i as usize;
        queued[i] = false;
        let c = conts[i];
        marked[c.index()] = true;
        for &o in &owners[i] {
            marked[o.index()] = true;
        }
        for &j in refs_of(i) {
            for &o in &owners[j as usize] {
                if !marked[o.index()] {
                    marked[o.index()] = true;
                    add.push(o);
                }
            }
        }
        marked[c.index()] = false;
        for &o in owners[i].iter().chain(&add) {
            marked[o.index()] = false;
        }
        if add.is_empty() {
            continue;
        }
        owners[i].append(&mut add);
        for &r in &referrers[start[i] as usize..start[i + 1] as usize] {
            if !queued[r as usize] {
                queued[r as usize] = true;
                work.push(r);
            }
        }
    }
    owners
}

/// Params and nominals reached from `roots` without entering nominals.
pub(crate) fn reach(w: &World, roots: &[Def], params: &mut Set, nominals: &mut Set) {
    let mut seen: rustc_hash::FxHashSet<Def> = Default::default();
    reach_unseen(w, roots, params, nominals, |d| seen.insert(d));
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
        // What each continuation reaches through structural defs, from sets memoized per
        // def: continuations that share an expression do not each walk it again.
        let mut uses = UseSets::default();
        let mut direct = DirectUses::default();
        for &k in &conts {
            uses.push_direct_uses(w, k, &mut direct);
        }
        Self::from_direct(w, &conts, &direct)
    }

    /// As [`FreeParams::compute_over`], from the direct uses of `conts` (entry `i` of
    /// `direct` is `conts[i]`'s, as [`UseSets::push_direct_uses`] lists them); references
    /// to continuations outside `conts` are not followed.
    pub fn from_direct(w: &World, conts: &[Def], direct: &DirectUses) -> FreeParams {
        let position: rustc_hash::FxHashMap<Def, usize> =
            conts.iter().enumerate().map(|(i, &c)| (c, i)).collect();
        let owners = owners_by_position(w, conts, direct, |c| position.get(&c).copied());
        let mut by_cont: DefMap<Vec<Def>> = DefMap::new();
        let mut users: DefMap<Vec<Def>> = DefMap::new();
        for (&k, os) in conts.iter().zip(owners) {
            for &o in &os {
                match users.get_mut(o) {
                    Some(us) => us.push(k),
                    None => {
                        users.insert(o, vec![k]);
                    }
                }
            }
            by_cont.insert(k, os);
        }
        FreeParams {
            owners: by_cont,
            users,
        }
    }

    /// The continuations whose parameters `cont` uses: those of its own body first (by
    /// def number), then those found through the continuations it references.
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
