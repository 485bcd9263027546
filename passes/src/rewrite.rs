//! Rewriting a world in place: substitution through structural defs, scopes found locally,
//! and cloning a continuation's scope with some parameters replaced (specialization,
//! inlining).
//!
//! Structural defs are hash-consed and normalized, so rebuilding one with new operands
//! folds what became constant. Nominal continuations are never rewritten through; they are
//! replaced only where the substitution says so (a clone for a continuation of a scope).

use durin_ir::analysis::free::owners_by_position;
pub use durin_ir::analysis::uses::{DirectUses, UseSets};
use durin_ir::{Def, Node, World};
use indexmap::IndexSet;
use rustc_hash::{FxBuildHasher, FxHashMap};

/// An insertion-ordered set of defs.
pub type DefSet = IndexSet<Def, FxBuildHasher>;

/// A substitution of defs, applied through structural defs.
#[derive(Default)]
pub struct Rewriter<'c> {
    map: FxHashMap<Def, Def>,
    /// What each def reaches, to skip (without walking) the defs that reach nothing
    /// substituted.
    cache: Option<&'c mut UseCache>,
    /// The work list of [`Rewriter::rewrite`], kept between calls.
    stack: Vec<(Def, bool)>,
    /// Continuations cloned when first reached (see [`specialize_in`]), with the clones
    /// made so far, in the order they were reached.
    lazy: Option<Lazy<'c>>,
}

/// The scope a specialization clones on demand: its members but the entry get a clone
/// when rewriting first reaches them or one of their parameters.
struct Lazy<'s> {
    scope: &'s DefSet,
    entry: Def,
    made: Vec<(Def, Def)>,
    /// Whether blocks get a clone without a body (see [`Deferral`]).
    defer: bool,
    /// The blocks cloned without a body, with their clones.
    deferred: Vec<(Def, Def)>,
}

impl<'s> Lazy<'s> {
    fn new(scope: &'s DefSet, entry: Def, defer: bool) -> Lazy<'s> {
        Lazy {
            scope,
            entry,
            made: Vec::new(),
            defer,
            deferred: Vec::new(),
        }
    }

    /// The member that `x` is or is a parameter of, if any (the entry aside).
    fn member(&self, w: &World, x: Def) -> Option<Def> {
        let c = match w.node(x) {
            Node::Cont => x,
            Node::Param(_) => w.ops(x)[0],
            _ => return None,
        };
        (c != self.entry && self.scope.contains(&c)).then_some(c)
    }
}

/// A substitution made with a cache gives its table back to it for the next one, up to a
/// capacity of this many entries: clearing costs the table's capacity, and most
/// substitutions are small, so a large table passed on makes every later one pay for it
/// (at 4,096, partial evaluation of vcycle for CUDA cleared 87,696 tables of 4 KB of
/// control bytes each).
const SPARE_MAP: usize = 1 << 9;

impl Drop for Rewriter<'_> {
    fn drop(&mut self) {
        if let Some(cache) = self.cache.as_deref_mut() {
            if self.map.capacity() <= SPARE_MAP {
                self.map.clear();
                cache.spare = std::mem::take(&mut self.map);
            }
        }
    }
}

impl Rewriter<'static> {
    /// An empty substitution.
    pub fn new() -> Rewriter<'static> {
        Rewriter::default()
    }
}

impl<'c> Rewriter<'c> {
    /// An empty substitution that consults `cache` to leave alone, in constant time, the
    /// defs that reach no substituted parameter or continuation (rewriting a small region
    /// that refers to a long chain of older defs then costs the region, not the chain).
    pub fn with_cache(cache: &'c mut UseCache) -> Rewriter<'c> {
        Rewriter {
            map: std::mem::take(&mut cache.spare),
            cache: Some(cache),
            stack: Vec::new(),
            lazy: None,
        }
    }

    /// A substitution that goes on from `map` (a [`Deferral`]'s), consulting `cache` as
    /// [`Rewriter::with_cache`] does.
    fn with_map(cache: &'c mut UseCache, map: FxHashMap<Def, Def>) -> Rewriter<'c> {
        Rewriter {
            map,
            cache: Some(cache),
            stack: Vec::new(),
            lazy: None,
        }
    }

    /// The substitution as it stands, taken out (the rewriter is empty after).
    fn take_map(&mut self) -> FxHashMap<Def, Def> {
        std::mem::take(&mut self.map)
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
        let mut stack = std::mem::take(&mut self.stack);
        stack.push((d, false));
        while let Some(&(x, expanded)) = stack.last() {
            if self.map.contains_key(&x) {
                stack.pop();
                continue;
            }
            let node = w.node(x);
            if node.is_nominal() || matches!(node, Node::Param(_)) || w.ops(x).is_empty() {
                if self.clone_if_member(w, x) {
                    continue;
                }
                self.map.insert(x, x);
                stack.pop();
                continue;
            }
            if !expanded && self.untouched(w, x) {
                self.map.insert(x, x);
                stack.pop();
                continue;
            }
            if !expanded && node == Node::Select && self.lazy.is_some() {
                // A branch whose condition becomes constant takes one target: rewrite the
                // condition first, and then only that target (the other's code is not
                // copied).
                let cond = w.ops(x)[0];
                let Some(&c) = self.map.get(&cond) else {
                    stack.push((cond, false));
                    continue;
                };
                let targets = [w.ops(x)[1], w.ops(x)[2]];
                if let Some(chosen) = durin_ir::normalize::taken_target(w, c, targets) {
                    match self.map.get(&chosen) {
                        Some(&r) => {
                            self.map.insert(x, r);
                            stack.pop();
                        }
                        None => stack.push((chosen, false)),
                    }
                    continue;
                }
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
                let r = w.build(node, ty, &ops);
                // The place of an index or a division, which run-time errors name (the
                // only operations the front end places: others need no lookup here).
                if matches!(node, Node::Lea | Node::Arith(_)) {
                    if let Some(l) = w.loc(x) {
                        w.set_loc(r, l);
                    }
                }
                r
            };
            self.map.insert(x, r);
        }
        self.stack = stack;
        self.map[&d]
    }

    /// The scope member whose clone `x` (a continuation or parameter) needs, if it has none
    /// yet.
    fn pending_member(&self, w: &World, x: Def) -> Option<Def> {
        let c = self.lazy.as_ref()?.member(w, x)?;
        (!self.map.contains_key(&c)).then_some(c)
    }

    /// Clones the scope member that `x` belongs to, if it needs one; whether it did.
    fn clone_if_member(&mut self, w: &mut World, x: Def) -> bool {
        let Some(c) = self.pending_member(w, x) else {
            return false;
        };
        let pairs = clone_conts(w, self, std::iter::once(c));
        let lazy = self.lazy.as_mut().expect("checked");
        if lazy.defer && deferrable(w, c) {
            lazy.deferred.extend(pairs);
        } else {
            lazy.made.extend(pairs);
        }
        true
    }

    /// Whether the cache shows that `x` reaches nothing this substitution changes.
    fn untouched(&mut self, w: &World, x: Def) -> bool {
        let Some(cache) = self.cache.as_deref_mut() else {
            return false;
        };
        let map = &self.map;
        let lazy = self.lazy.as_ref();
        // A member of a lazily cloned scope is substituted even before its clone exists.
        cache.of(w, x).iter().all(|&y| {
            map.get(&y).is_none_or(|&to| to == y) && lazy.is_none_or(|l| l.member(w, y).is_none())
        })
    }

    /// The block of the lazily cloned scope that the jump of `from` (to `callee` with
    /// `args`) goes to once rewritten, where that jump is all that refers to it: a member
    /// not cloned yet, no function, with a body and no filter that could hold (inlining,
    /// not specialization, would take it), that no other continuation refers to (by the
    /// index's edges, which are only ever too many) and that the jump does not also pass.
    fn block_only_after(
        &mut self,
        w: &mut World,
        from: Def,
        callee: Def,
        args: &[Def],
        referenced_by: &Edges,
    ) -> Option<Def> {
        let target = match w.node(callee) {
            Node::Cont => callee,
            Node::Select => {
                let cond = self.rewrite(w, w.ops(callee)[0]);
                let targets = [w.ops(callee)[1], w.ops(callee)[2]];
                durin_ir::normalize::taken_target(w, cond, targets)?
            }
            _ => return None,
        };
        let lazy = self.lazy.as_ref()?;
        let fits = lazy.member(w, target) == Some(target)
            && !self.map.contains_key(&target)
            && !is_function_type(w, w.type_of(target))
            && w.body(target).is_some()
            && w.filters(target).iter().all(|&f| w.lit_bits(f) == Some(0))
            && referenced_by.from(target).all(|r| r == from);
        if !fits {
            return None;
        }
        let cache = self.cache.as_deref_mut()?;
        args.iter()
            .all(|&a| cache.of(w, a).binary_search(&target).is_err())
            .then_some(target)
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

    /// Rewrites the bodies of the scope members cloned so far (lazily, see
    /// [`specialize_in`]) into their clones, and of those that cloning reaches in turn;
    /// gives the clones.
    fn rewrite_made(&mut self, w: &mut World) -> Vec<Def> {
        // Only blocks that the substituted body reaches itself are cloned without bodies: a
        // block that a clone's body reaches may be in the scope of that clone (a function
        // of the scope), which only a body can show.
        if let Some(l) = self.lazy.as_mut() {
            l.defer = false;
        }
        let mut clones = Vec::new();
        while let Some(&(from, to)) = self.lazy.as_ref().and_then(|l| l.made.get(clones.len())) {
            self.rewrite_cont_into(w, from, to);
            clones.push(to);
        }
        clones
    }

    /// Sets the body of `to` to that of `from`, rewritten.
    pub fn rewrite_body_into(&mut self, w: &mut World, from: Def, to: Def) {
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
            w.copy_places(from, to);
        }
    }
}

/// The use sets of structural defs ([`UseSets`]), with the table of the last [`Rewriter`]
/// made with them, empty, for the next one.
#[derive(Default)]
pub struct UseCache {
    sets: UseSets,
    spare: FxHashMap<Def, Def>,
}

impl std::ops::Deref for UseCache {
    type Target = UseSets;
    fn deref(&self) -> &UseSets {
        &self.sets
    }
}

impl std::ops::DerefMut for UseCache {
    fn deref_mut(&mut self) -> &mut UseSets {
        &mut self.sets
    }
}

impl UseCache {
    /// Which of `conts` (a set closed under references, such as everything reachable from
    /// the externals) are *closed*: they use no parameter of another continuation,
    /// directly or through the continuations they reference. Closed continuations are
    /// top-level functions.
    pub fn closed(&mut self, w: &World, conts: &DefSet) -> FxHashMap<Def, bool> {
        let mut direct = DirectUses::default();
        for &c in conts {
            self.sets.push_direct_uses(w, c, &mut direct);
        }
        closed_from(w, conts, &direct)
    }
}

/// Edges between defs, as linked lists in two flat vectors (no allocation per def, and
/// clearing costs the edges, not the world).
#[derive(Default)]
struct Edges {
    /// For each def (by number): its last edge plus one, or zero.
    head: Vec<u32>,
    /// Target and the previous edge plus one (or zero) of each edge.
    edges: Vec<(Def, u32)>,
    /// The defs with edges.
    from: Vec<Def>,
}

impl Edges {
    fn clear(&mut self) {
        for d in self.from.drain(..) {
            self.head[d.index()] = 0;
        }
        self.edges.clear();
    }

    fn add(&mut self, from: Def, to: Def) {
        let i = from.index();
        if self.head.len() <= i {
            self.head.resize(i + 1, 0);
        }
        if self.head[i] == 0 {
            self.from.push(from);
        } else if self.edges[self.head[i] as usize - 1].0 == to {
            // The same edge as the last one from `from`: a use that the continuation
            // reaches along several paths (most repeats are, and they made the edges a
            // large part of partial evaluation's memory).
            return;
        }
        self.edges.push((to, self.head[i]));
        self.head[i] = u32::try_from(self.edges.len()).expect("fewer than 2^32 edges");
    }

    /// The edge from the continuation of parameter `p` to `k`, unless `owner` (the
    /// continuation of the parameter added before, updated) is it: the parameters of one
    /// continuation are neighbours in a sorted set, and one edge stands for a run of them.
    fn add_param_user(&mut self, w: &World, owner: &mut Option<Def>, p: Def, k: Def) {
        let c = w.ops(p)[0];
        if *owner != Some(c) {
            *owner = Some(c);
            self.add(c, k);
        }
    }

    fn from(&self, d: Def) -> impl Iterator<Item = Def> + '_ {
        let mut at = self.head.get(d.index()).copied().unwrap_or(0);
        std::iter::from_fn(move || {
            let (to, prev) = *self.edges.get(at.checked_sub(1)? as usize)?;
            at = prev;
            Some(to)
        })
    }
}

/// Who uses the parameters of each continuation and who references it, for finding scopes
/// by walking backwards from their entry (in time proportional to the scope). Edges are
/// only ever added: a stale edge makes a scope larger than needed (a clone of a
/// continuation that did not need one), never smaller.
#[derive(Default)]
pub struct ScopeIndex {
    param_users: Edges,
    referenced_by: Edges,
    cache: UseCache,
}

impl ScopeIndex {
    /// An index with no edges that knows what `cache` knows about structural defs.
    pub fn with_cache(cache: UseCache) -> ScopeIndex {
        ScopeIndex {
            cache,
            ..ScopeIndex::default()
        }
    }

    /// What the index knows about structural defs, to give to another index of the same
    /// world.
    pub fn into_cache(self) -> UseCache {
        self.cache
    }

    /// What the index knows about structural defs.
    pub fn cache(&mut self) -> &mut UseCache {
        &mut self.cache
    }

    /// The reached scope of `entry`: `entry` and the continuations reachable from it that
    /// use, directly or through another such continuation, a parameter of a continuation of
    /// the scope. Found from `entry` outwards (over what `entry` reaches), in time linear in
    /// that. The index's edges become those of what the walk reached; what it knows about
    /// structural defs is kept, so one index serves every scope a pass asks for (a fresh
    /// one costs tables the size of the world).
    ///
    /// This differs from the IR's [`durin_ir::analysis::scope::Scope`], which looks at every
    /// continuation of the world: a continuation that uses `entry`'s parameters but that
    /// `entry` no longer reaches (left behind by a rewrite) is in that scope and not in this
    /// one. Passes rewrite in place and leave such continuations until `dce`, so they need
    /// this one.
    pub fn reached_scope(&mut self, w: &World, entry: Def) -> DefSet {
        self.param_users.clear();
        self.referenced_by.clear();
        let mut reached = DefSet::default();
        reached.insert(entry);
        let mut i = 0;
        while i < reached.len() {
            let c = reached[i];
            i += 1;
            reached.extend(self.add_referenced(w, c));
        }
        self.scope(entry)
    }

    /// Forgets every edge and records those of the continuations in `conts` (what is known
    /// about structural defs is kept).
    pub fn rebuild(&mut self, w: &World, conts: &DefSet) {
        self.param_users.clear();
        self.referenced_by.clear();
        for &k in conts {
            self.add(w, k);
        }
    }

    /// [`ScopeIndex::rebuild`], and which of `conts` are closed (see
    /// [`UseCache::closed`]), from one look at each continuation's uses.
    pub fn rebuild_closed(&mut self, w: &World, conts: &DefSet) -> FxHashMap<Def, bool> {
        self.param_users.clear();
        self.referenced_by.clear();
        let mut direct = DirectUses::default();
        for (i, &k) in conts.iter().enumerate() {
            self.cache.push_direct_uses(w, k, &mut direct);
            self.record(w, k, direct.conts(i), direct.params(i));
        }
        closed_from(w, conts, &direct)
    }

    /// Records what `k` uses now (`k`'s direct uses). A use reached along several paths
    /// is recorded as often: [`ScopeIndex::scope`] does not mind, and not sorting them out
    /// is most of what recording costs.
    pub fn add(&mut self, w: &World, k: Def) {
        let ScopeIndex {
            param_users,
            referenced_by,
            cache,
        } = self;
        let mut owner = None;
        cache.each_direct_use(w, k, |d| match w.node(d) {
            Node::Cont => referenced_by.add(d, k),
            _ => param_users.add_param_user(w, &mut owner, d, k),
        });
    }

    /// The continuations recorded as referring to `d` (with repeats, and stale ones: only
    /// ever too many).
    pub fn referrers(&self, d: Def) -> impl Iterator<Item = Def> + '_ {
        self.referenced_by.from(d)
    }

    /// [`ScopeIndex::add`], returning the continuations `k` references (each once).
    fn add_referenced(&mut self, w: &World, k: Def) -> Vec<Def> {
        let (conts, params) = self.cache.direct_uses(w, k);
        self.record(w, k, &conts, &params);
        conts
    }

    fn record(&mut self, w: &World, k: Def, conts: &[Def], params: &[Def]) {
        let mut owner = None;
        for &p in params {
            self.param_users.add_param_user(w, &mut owner, p, k);
        }
        for &c in conts {
            self.referenced_by.add(c, k);
        }
    }

    /// The scope of `entry` (see [`ScopeIndex::reached_scope`]), the entry first: users of a
    /// member's parameters are members, and so are continuations that reference a member
    /// other than the entry (they have its free parameters); referencing the entry itself
    /// (calling it) brings in none of the scope's parameters.
    pub fn scope(&self, entry: Def) -> DefSet {
        self.scope_within(entry, usize::MAX)
            .expect("no scope has more members than defs")
    }

    /// Whether the scope of `entry` has at most `limit` members (`limit` at least 1),
    /// found without collecting more than `limit` of them.
    pub fn scope_at_most(&self, entry: Def, limit: usize) -> bool {
        self.scope_within(entry, limit).is_some()
    }

    /// The scope of `entry` if it has at most `limit` members; `None` as soon as it has
    /// more.
    fn scope_within(&self, entry: Def, limit: usize) -> Option<DefSet> {
        let mut members = DefSet::default();
        members.insert(entry);
        let mut at = 0;
        while at < members.len() {
            let m = members[at];
            at += 1;
            let refs = (m != entry).then(|| self.referenced_by.from(m));
            for c in self.param_users.from(m).chain(refs.into_iter().flatten()) {
                if members.insert(c) && members.len() > limit {
                    return None;
                }
            }
        }
        Some(members)
    }
}

/// [`UseCache::closed`] without a cache at hand.
pub fn closed_conts(w: &World, conts: &DefSet) -> FxHashMap<Def, bool> {
    UseCache::default().closed(w, conts)
}

/// Which of `conts` are closed, from their direct uses (see [`owners_by_position`]).
fn closed_from(w: &World, conts: &DefSet, direct: &DirectUses) -> FxHashMap<Def, bool> {
    let list: Vec<Def> = conts.iter().copied().collect();
    let owners = owners_by_position(w, &list, direct, |c| conts.get_index_of(&c));
    list.iter()
        .zip(&owners)
        .map(|(&c, os)| (c, os.is_empty()))
        .collect()
}

/// The body of `entry` with `args` (one for each of its parameters) substituted, as the
/// jump of a continuation that is not `entry` (beta reduction of a specialization without
/// the clone): the other continuations of its `scope` are cloned as rewriting reaches them,
/// as [`specialize_in`] does. The caller sets the body; the scope must not hold that
/// continuation, and no jump of a member back to `entry` may pass the values substituted
/// (where [`specialize_in`] would close a loop on its clone).
///
/// Where the body jumps to a block of the scope that only this jump refers to (its callee,
/// or the target that a branch whose condition becomes constant takes), that block's body
/// takes its place, with the block's parameters substituted too, and so on from there:
/// the code that inlining the block's clone would give next, without making the clone
/// (most specializations of a closure on constants end in such a jump, an arm of a branch
/// or a return point). With `defer`, the blocks the body reaches otherwise (a return point
/// passed on) are cloned without bodies ([`Deferral`]). Gives a [`Substituted`].
pub fn substitute_body(
    w: &mut World,
    entry: Def,
    args: &[Def],
    scope: &DefSet,
    index: &mut ScopeIndex,
    defer: bool,
) -> Substituted {
    let ScopeIndex {
        referenced_by,
        cache,
        ..
    } = index;
    let mut rw = Rewriter::with_cache(cache);
    for (i, &a) in args.iter().enumerate() {
        let p = w.param(entry, i);
        rw.map(p, a);
    }
    rw.lazy = Some(Lazy::new(scope, entry, defer));
    let mut out = substitute_from(w, &mut rw, entry, referenced_by);
    if !out.deferred.is_empty() {
        out.map = rw.take_map();
    }
    out
}

/// What [`substitute_body`] and [`substitute_deferred`] give: the body, the continuation
/// whose jump it is (the last block taken), the blocks taken on the way there (the first
/// continuation substituted included), and the blocks cloned without a body with the
/// substitution that makes their bodies (empty where there are none).
pub struct Substituted {
    pub body: Option<(Def, Vec<Def>)>,
    pub from: Def,
    pub taken: Vec<Def>,
    pub deferred: Vec<(Def, Def)>,
    pub map: FxHashMap<Def, Def>,
}

/// The body of `at` rewritten by `rw` (whose substitution covers `at`'s parameters), taking
/// the blocks only the jump refers to (see [`substitute_body`]); the bodies of the clones
/// made are rewritten too.
fn substitute_from(
    w: &mut World,
    rw: &mut Rewriter,
    mut at: Def,
    referenced_by: &Edges,
) -> Substituted {
    let mut taken = vec![at];
    let body = loop {
        let Some((c, a)) = w.body(at).map(|(c, a)| (c, a.to_vec())) else {
            break None;
        };
        if let Some(block) = rw.block_only_after(w, at, c, &a, referenced_by) {
            for (i, &x) in a.iter().enumerate() {
                let x = rw.rewrite(w, x);
                let p = w.param(block, i);
                rw.map(p, x);
            }
            at = block;
            taken.push(at);
            continue;
        }
        let c = rw.rewrite(w, c);
        let a: Vec<Def> = a.iter().map(|&x| rw.rewrite(w, x)).collect();
        break Some((c, a));
    };
    rw.rewrite_made(w);
    let deferred = (rw.lazy.as_mut()).map_or_else(Vec::new, |l| std::mem::take(&mut l.deferred));
    Substituted {
        body,
        from: at,
        taken,
        deferred,
        map: FxHashMap::default(),
    }
}

/// Whether a member of a scope being cloned can get its clone without a body: a block
/// (no function), with a body and no filter that could hold.
fn deferrable(w: &World, c: Def) -> bool {
    !is_function_type(w, w.type_of(c))
        && w.body(c).is_some()
        && w.filters(c).iter().all(|&f| w.lit_bits(f) == Some(0))
}

/// Blocks of a specialization's scope cloned without their bodies: partial evaluation
/// passes most of them on (a return point, a join point) to a call that it specializes
/// next, which jumps to the clone once, and inlining the clone would copy its body a
/// second time. Here the body is made once, from the original block, where the jump to
/// the clone is (`substitute_deferred`), or in the clone
/// (`materialize_deferred`). `map` is the specialization's substitution, `scope` and
/// `entry` its scope and callee.
pub struct Deferral {
    pub map: FxHashMap<Def, Def>,
    pub scope: DefSet,
    pub entry: Def,
}

/// The body of `block` (a block of `d`'s scope, cloned without a body) with `d`'s
/// substitution and `args` for its parameters, as the jump of another continuation (as
/// [`substitute_body`] makes it); blocks it reaches are cloned without bodies into `d` too.
pub fn substitute_deferred(
    w: &mut World,
    d: &mut Deferral,
    block: Def,
    args: &[Def],
    index: &mut ScopeIndex,
) -> Substituted {
    let ScopeIndex {
        referenced_by,
        cache,
        ..
    } = index;
    let mut rw = Rewriter::with_map(cache, std::mem::take(&mut d.map));
    for (i, &a) in args.iter().enumerate() {
        let p = w.param(block, i);
        rw.map(p, a);
    }
    rw.lazy = Some(Lazy::new(&d.scope, d.entry, true));
    let out = substitute_from(w, &mut rw, block, referenced_by);
    d.map = rw.take_map();
    out
}

/// Makes the body of `clone`, the clone of `block` (a block of `d`'s scope) made without
/// one (and of the continuations cloned on the way).
pub fn materialize_deferred(
    w: &mut World,
    d: &mut Deferral,
    block: Def,
    clone: Def,
    cache: &mut UseCache,
) {
    let mut rw = Rewriter::with_map(cache, std::mem::take(&mut d.map));
    rw.lazy = Some(Lazy::new(&d.scope, d.entry, false));
    rw.rewrite_cont_into(w, block, clone);
    rw.rewrite_made(w);
    d.map = rw.take_map();
}

/// Clones the scope of `entry` (given: see [`ScopeIndex::reached_scope`]) as a new
/// continuation taking the parameters of `entry` for which `args[i]` is `None`; the others
/// are replaced by `args[i]`. Returns the clone. Only the continuations of the scope that
/// the rewritten code reaches are copied (a branch whose condition folds reaches one
/// target). Jumps back to `entry` from inside its scope still go to `entry`: a recursive
/// jump passes its own arguments and is specialized (or not) on its own. `cache` may be
/// shared by every specialization of a pass: what a structural def reaches never changes.
pub fn specialize_in(
    w: &mut World,
    entry: Def,
    args: &[Option<Def>],
    name: &str,
    scope: &DefSet,
    cache: &mut UseCache,
) -> Def {
    let mut rw = Rewriter::with_cache(cache);
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
    // The scope's other continuations are cloned as rewriting reaches them: those that
    // only a branch that folds away reached are never copied.
    rw.lazy = Some(Lazy::new(scope, entry, false));
    // The clone's own filters: those of the kept parameters.
    for (j, &i) in kept.iter().enumerate() {
        let f = w.filters(entry)[i];
        let f = rw.rewrite(w, f);
        w.set_filter(clone, j, f);
    }
    rw.rewrite_body_into(w, entry, clone);
    let mut made = vec![clone];
    made.extend(rw.rewrite_made(w));
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

/// A fresh continuation for each of `conts`, with the same parameter types and name, mapped
/// by `rw` (with its parameters) to the old one's place; returns the (old, new) pairs, whose
/// bodies the caller rewrites.
pub fn clone_conts(
    w: &mut World,
    rw: &mut Rewriter,
    conts: impl Iterator<Item = Def>,
) -> Vec<(Def, Def)> {
    let mut pairs = Vec::new();
    for m in conts {
        let tys = cont_param_types(w, m);
        let c = w.cont_named_like(&tys, m, "k");
        for i in 0..tys.len() {
            let (from, to) = (w.param(m, i), w.param(c, i));
            rw.map(from, to);
        }
        rw.map(m, c);
        pairs.push((m, c));
    }
    pairs
}

/// Whether `t` is a function type: a continuation type whose last parameter is a return
/// point (a continuation type that is not a function type itself). Other continuation
/// types are return points and blocks, even when they receive a function:
/// `cn(mem, i32, cn(mem, i32))` is a function, `cn(mem, i32)` and
/// `cn(mem, cn(mem, i32, cn(mem, i32)))` (the return point of a function that returns one)
/// are not.
pub fn is_function_type(w: &World, t: durin_ir::Type) -> bool {
    match w.kind(t) {
        durin_ir::TypeKind::Cont(ps) => ps.last().is_some_and(|&r| is_point_type(w, r)),
        _ => false,
    }
}

/// Whether `t` is the type of a return point or a block: a continuation type that is not a
/// function type. A closure cannot jump to one of the code around it in native code.
pub fn is_point_type(w: &World, t: durin_ir::Type) -> bool {
    matches!(w.kind(t), durin_ir::TypeKind::Cont(_)) && !is_function_type(w, t)
}

/// Whether continuation `k` takes a continuation: a function, not a block. Broader than
/// [`is_function_type`] (a return point that receives a function counts too), which is
/// the safe side where the partial evaluator and `mem2reg` ask.
pub fn is_function(w: &World, k: Def) -> bool {
    cont_param_types(w, k)
        .iter()
        .any(|&t| matches!(w.kind(t), durin_ir::TypeKind::Cont(_)))
}

/// The parameter types of continuation `k`.
pub fn cont_param_types(w: &World, k: Def) -> Vec<durin_ir::Type> {
    w.types()
        .cont_params(w.type_of(k))
        .map(|p| p.to_vec())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use durin_ir::strategy::recipe;
    use proptest::prelude::*;

    /// `@g` branches on `%c` to `@one` or `@two`, used only by the branch; `@two` goes on
    /// to `@join`; `@one` ends with `one_ends`; `@k` supplies values to substitute.
    fn branches(one_ends: &str) -> String {
        format!(
            "
extern cont @k(%mk: mem, %rk: cn(mem, i32)) {{
    jump %rk(%mk, 0:i32)
}}

cont @g(%m: mem, %c: bool, %x: i32, %ret: cn(mem, i32)) {{
    %t: cn(mem) = select(%c, @one, @two)
    jump %t(%m)
}}

cont @one(%m1: mem) {{
    {one_ends}
}}

cont @two(%m2: mem) {{
    jump @join(%m2, %x)
}}

cont @join(%m3: mem, %v: i32) {{
    %w: i32 = mul(%v, %x)
    jump %ret(%m3, %w)
}}
"
        )
    }

    /// [`branches`] where `@one` returns: no other code refers to `@join`.
    fn returning() -> String {
        branches("%y: i32 = add(%x, 1:i32)\n    jump %ret(%m1, %y)")
    }

    /// [`branches`] where both arms go on to `@join`.
    fn joined() -> String {
        branches("jump @join(%m1, 1:i32)")
    }

    fn named(w: &World, name: &str) -> Def {
        w.defs().find(|&d| w.name(d) == Some(name)).unwrap()
    }

    /// Substitutes `@g`'s body for `%c` and `%x` into `@k`'s jump; gives the body, the
    /// continuation whose jump it is and how many continuations substituting made.
    fn substitute_g(text: &str, c: bool, x: i32) -> (World, (Def, Vec<Def>), Def, usize) {
        let mut w = durin_ir::text::parse(text).unwrap();
        let (k, g) = (named(&w, "k"), named(&w, "g"));
        let mut index = ScopeIndex::default();
        let scope = index.reached_scope(&w, g);
        let (c, x) = (w.lit_bool(c), w.lit_i32(x));
        let args = [w.param(k, 0), c, x, w.param(k, 1)];
        let conts = w.continuations().count();
        let out = substitute_body(&mut w, g, &args, &scope, &mut index, false);
        let made = w.continuations().count() - conts;
        (w, out.body.unwrap(), out.from, made)
    }

    /// A branch that folds to a block only it refers to takes that block's body, with the
    /// block's parameters substituted, instead of a jump to a clone of it; and so on from
    /// there.
    #[test]
    fn substituting_takes_the_body_of_a_block_only_the_jump_refers_to() {
        let (mut w, (callee, args), from, made) = substitute_g(&returning(), true, 5);
        let k = named(&w, "k");
        assert_eq!((from, made), (named(&w, "one"), 0));
        assert_eq!(callee, w.param(k, 1));
        assert_eq!(args, [w.param(k, 0), w.lit_i32(6)]);
        let (mut w, (callee, args), from, made) = substitute_g(&returning(), false, 5);
        let k = named(&w, "k");
        assert_eq!((from, made), (named(&w, "join"), 0));
        assert_eq!(callee, w.param(k, 1));
        assert_eq!(args, [w.param(k, 0), w.lit_i32(25)]);
    }

    /// A block that another continuation of the scope also jumps to is cloned: `@two` is
    /// taken, but `@join`, which `@one` refers to too, is not.
    #[test]
    fn a_block_other_code_refers_to_is_cloned() {
        let (mut w, (callee, args), from, made) = substitute_g(&joined(), false, 5);
        let (k, join) = (named(&w, "k"), named(&w, "join"));
        assert_eq!((from, made), (named(&w, "two"), 1));
        assert!(
            callee != join && w.name(callee) == Some("join"),
            "{callee:?}"
        );
        assert_eq!(args, [w.param(k, 0), w.lit_i32(5)]);
        let (jc, ja) = w.body(callee).map(|(c, a)| (c, a.to_vec())).unwrap();
        assert_eq!(jc, w.param(k, 1));
        // `mul(%v, %x)` with `%x` substituted and `%v` the clone's own parameter.
        let (v, five) = (w.param(callee, 1), w.lit_i32(5));
        let mut ops = w.ops(ja[1]).to_vec();
        ops.sort();
        let mut want = vec![v, five];
        want.sort();
        assert_eq!(ops, want);
    }

    /// `@f` calls `@h` with `@b`, a block of its own scope, as the return point.
    const CALLING: &str = "
extern cont @k(%mk: mem, %rk: cn(mem, i32)) {
    jump %rk(%mk, 0:i32)
}

cont @h(%mh: mem, %a: i32, %rh: cn(mem, i32)) {
    jump %rh(%mh, %a)
}

cont @f(%m: mem, %x: i32, %ret: cn(mem, i32)) {
    jump @h(%m, %x, @b)
}

cont @b(%mb: mem, %y: i32) {
    %z: i32 = mul(%y, %x)
    jump %ret(%mb, %z)
}
";

    /// Substitutes `@f`'s body for `%x` = 3 into `@k`'s jump, deferring blocks as asked.
    fn substitute_f(defer: bool) -> (World, ScopeIndex, DefSet, Substituted) {
        let mut w = durin_ir::text::parse(CALLING).unwrap();
        let (k, f) = (named(&w, "k"), named(&w, "f"));
        let mut index = ScopeIndex::default();
        let scope = index.reached_scope(&w, f);
        let three = w.lit_i32(3);
        let args = [w.param(k, 0), three, w.param(k, 1)];
        let out = substitute_body(&mut w, f, &args, &scope, &mut index, defer);
        (w, index, scope, out)
    }

    /// A block passed on as a return point is cloned without a body when asked, and its
    /// body made later, where the jump to it is or in the clone, is the one the clone
    /// would have had.
    #[test]
    fn a_deferred_block_gets_its_body_where_it_is_taken_or_in_its_clone() {
        let (mut w, _, _, out) = substitute_f(false);
        let (k, b) = (named(&w, "k"), named(&w, "b"));
        let (callee, args) = out.body.unwrap();
        assert!(out.deferred.is_empty());
        assert_eq!(
            (callee, &args[..2]),
            (named(&w, "h"), &[w.param(k, 0), w.lit_i32(3)][..])
        );
        let eager = args[2];
        assert!(eager != b && w.body(eager).is_some());

        let (mut w, mut index, scope, out) = substitute_f(true);
        let (k, b, f) = (named(&w, "k"), named(&w, "b"), named(&w, "f"));
        let (_, args) = out.body.unwrap();
        assert_eq!(out.deferred, [(b, args[2])]);
        let clone = args[2];
        assert!(w.body(clone).is_none());
        // Taken into a jump with 7 for `%y`: `%ret` and `%x` are the specialization's.
        let mut d = Deferral {
            map: out.map,
            scope,
            entry: f,
        };
        let taken_args = [w.param(k, 0), w.lit_i32(7)];
        let there = substitute_deferred(&mut w, &mut d, b, &taken_args, &mut index);
        assert_eq!(
            there.body.unwrap(),
            (w.param(k, 1), vec![w.param(k, 0), w.lit_i32(21)])
        );
        assert_eq!((there.from, there.taken), (b, vec![b]));

        // Made in the clone: the clone's own parameters.
        let (mut w, mut index, scope, out) = substitute_f(true);
        let (k, b, f) = (named(&w, "k"), named(&w, "b"), named(&w, "f"));
        let clone = out.deferred[0].1;
        let mut d = Deferral {
            map: out.map,
            scope,
            entry: f,
        };
        materialize_deferred(&mut w, &mut d, b, clone, index.cache());
        let (callee, args) = w.body(clone).map(|(c, a)| (c, a.to_vec())).unwrap();
        assert_eq!((callee, args[0]), (w.param(k, 1), w.param(clone, 0)));
        let mut ops = w.ops(args[1]).to_vec();
        ops.sort();
        let mut want = vec![w.param(clone, 1), w.lit_i32(3)];
        want.sort();
        assert_eq!(ops, want);
    }

    proptest! {
        #![proptest_config(durin_ir::strategy::test_config())]

        /// The bounded size query agrees with the scope it bounds, at every limit.
        #[test]
        fn bounded_scope_sizes_agree_with_scopes(r in recipe()) {
            let (w, _) = r.build();
            let conts: DefSet = w.continuations().collect();
            let mut index = ScopeIndex::default();
            index.rebuild(&w, &conts);
            for &k in &conts {
                let n = index.scope(k).len();
                for limit in 1..=n + 1 {
                    prop_assert_eq!(index.scope_at_most(k, limit), n <= limit, "{:?} at {}", k, limit);
                }
            }
        }
    }
}
