//! The live program and its use counts, kept up to date while a pass changes bodies.
//!
//! A def is *live* once something live refers to it (the externals are live from the
//! start); its use count is the number of operand slots of live defs that refer to it
//! (a parameter's operand, its continuation, is not a use). Changing a live
//! continuation's body through [`Live::set_body`] takes the old operands' uses away and
//! counts the new ones. A def whose count drops to zero is dead and gives up its own
//! uses; a cycle of dead continuations keeps its counts, which only makes counts larger: a
//! pass that relies on "used once" is more careful then, never wrong. Tables are indexed
//! by def number: no hashing.

use durin_ir::{Def, Launch, Node, World};

/// Live defs, their use counts, and the live continuations in the order they were found.
#[derive(Default)]
pub struct Live {
    seen: Vec<bool>,
    uses: Vec<u32>,
    conts: Vec<Def>,
    order: Vec<Def>,
}

impl Live {
    /// What the externals of `w` reach.
    pub fn new(w: &World) -> Live {
        Live::from_roots(w, w.externals())
    }

    /// What `roots` reach in `w` (as if they were its externals).
    pub fn from_roots(w: &World, roots: impl IntoIterator<Item = Def>) -> Live {
        let mut live = Live::default();
        for e in roots {
            live.reach(w, e);
        }
        live
    }

    /// Whether `d` is live.
    pub fn contains(&self, d: Def) -> bool {
        self.seen.get(d.index()).copied().unwrap_or(false)
    }

    /// How many operand slots of live defs refer to `d`.
    pub fn uses(&self, d: Def) -> u32 {
        self.uses.get(d.index()).copied().unwrap_or(0)
    }

    /// The live defs, in the order they became live.
    pub fn defs(&self) -> impl Iterator<Item = Def> + '_ {
        self.order.iter().copied().filter(|&d| self.contains(d))
    }

    /// For each live def, the live defs that have it as an operand (once per operand
    /// slot; a parameter is not a user of its continuation).
    pub fn users(&self, w: &World) -> Users {
        // Counted first, then filled: one flat list cut per def, no list per def.
        // (A parameter's operand is its continuation: no use.)
        let used = |d: Def| match w.node(d) {
            Node::Param(_) => &[][..],
            _ => w.ops(d),
        };
        let mut start = vec![0u32; w.num_defs() + 1];
        for d in self.defs() {
            for &o in used(d) {
                start[o.index() + 1] += 1;
            }
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut fill = start.clone();
        let mut list = vec![Def::default(); start[start.len() - 1] as usize];
        for d in self.defs() {
            for &o in used(d) {
                list[fill[o.index()] as usize] = d;
                fill[o.index()] += 1;
            }
        }
        Users { start, list }
    }

    /// The live continuations, in the order they became live (a pass may walk this list by
    /// index while it grows).
    pub fn conts(&self) -> &[Def] {
        &self.conts
    }

    /// The kernel launches among the live continuations' bodies, in that order.
    pub fn launches(&self, w: &World) -> Vec<Launch> {
        self.conts
            .iter()
            .filter_map(|&k| Launch::of(w, k))
            .collect()
    }

    /// Replaces the body of `k` (live or not), keeping the counts.
    pub fn set_body(&mut self, w: &mut World, k: Def, callee: Def, args: &[Def]) {
        let old = w.ops(k).to_vec();
        w.set_body(k, callee, args);
        self.recount(w, k, &old);
    }

    /// Counts a use of each of `defs` that no live def has (code not made yet will use
    /// them): they stay live until [`Live::release_held`].
    pub fn hold(&mut self, w: &World, defs: &[Def]) {
        for &d in defs {
            self.add_use(w, d);
        }
    }

    /// Drops the uses that [`Live::hold`] counted for `defs`.
    pub fn release_held(&mut self, w: &World, defs: &[Def]) {
        let mut dead = Vec::new();
        for &d in defs {
            self.drop_use(w, d, &mut dead);
        }
        self.release(w, dead);
    }

    /// Removes the body of `k`, keeping the counts.
    pub fn clear_body(&mut self, w: &mut World, k: Def) {
        let old = w.ops(k).to_vec();
        w.clear_body(k);
        self.recount(w, k, &old);
    }

    /// Takes account of a change to the operands of `k` (filters or body) made outside;
    /// `old` are its operands before.
    pub fn recount(&mut self, w: &World, k: Def, old: &[Def]) {
        self.recount_all(w, &[(k, old.to_vec())]);
    }

    /// Takes account of changes to several continuations made outside, each with its
    /// operands before. They are taken together: one change can make another changed
    /// continuation live (its new operands are counted then) or dead (its new operands
    /// are dropped then), so only those live before any of them are recounted. The new
    /// operands are counted before the old ones are dropped: what both share (a long
    /// chain of effects, say) never looks dead on the way.
    pub fn recount_all(&mut self, w: &World, changes: &[(Def, Vec<Def>)]) {
        let live: Vec<&(Def, Vec<Def>)> =
            changes.iter().filter(|(k, _)| self.contains(*k)).collect();
        for (k, _) in &live {
            for &o in w.ops(*k) {
                self.add_use(w, o);
            }
        }
        let mut dead = Vec::new();
        for (_, old) in &live {
            for &o in old {
                self.drop_use(w, o, &mut dead);
            }
        }
        self.release(w, dead);
    }

    /// Checks the counts against the live defs' operands (for tests and debug builds):
    /// the first def whose count is off, with the count kept and the count found.
    pub fn check(&self, w: &World) -> Result<(), (Def, u32, u32)> {
        let mut found = vec![0u32; w.num_defs()];
        for d in w.defs() {
            if self.contains(d) && !matches!(w.node(d), Node::Param(_)) {
                for &o in w.ops(d) {
                    found[o.index()] += 1;
                }
            }
        }
        for (d, &n) in w.defs().zip(&found) {
            if self.uses(d) != n {
                return Err((d, self.uses(d), n));
            }
        }
        Ok(())
    }

    fn drop_use(&mut self, w: &World, d: Def, dead: &mut Vec<Def>) {
        let n = &mut self.uses[d.index()];
        *n -= 1;
        if *n == 0 && !w.is_external(d) {
            dead.push(d);
        }
    }

    /// Defs whose last use went: they are dead, and their operands lose a use each
    /// (cycles of dead continuations stay counted).
    fn release(&mut self, w: &World, mut dead: Vec<Def>) {
        while let Some(d) = dead.pop() {
            if !self.seen[d.index()] || self.uses[d.index()] != 0 {
                continue;
            }
            self.seen[d.index()] = false;
            if matches!(w.node(d), Node::Param(_)) {
                continue;
            }
            for &o in w.ops(d) {
                self.drop_use(w, o, &mut dead);
            }
        }
    }

    fn grow(&mut self, w: &World) {
        let n = w.num_defs();
        if self.seen.len() < n {
            self.seen.resize(n, false);
            self.uses.resize(n, 0);
        }
    }

    fn add_use(&mut self, w: &World, d: Def) {
        self.grow(w);
        self.uses[d.index()] += 1;
        self.reach(w, d);
    }

    /// Makes `d` live, and what it refers to.
    fn reach(&mut self, w: &World, d: Def) {
        self.grow(w);
        if self.seen[d.index()] {
            return;
        }
        self.seen[d.index()] = true;
        self.order.push(d);
        let mut stack = vec![d];
        while let Some(x) = stack.pop() {
            match w.node(x) {
                // A continuation that died and came back is listed again.
                Node::Cont => self.conts.push(x),
                Node::Param(_) => continue,
                _ => {}
            }
            for &o in w.ops(x) {
                self.uses[o.index()] += 1;
                if !self.seen[o.index()] {
                    self.seen[o.index()] = true;
                    self.order.push(o);
                    stack.push(o);
                }
            }
        }
    }
}

/// For each live def, the live defs that have it as an operand (see [`Live::users`]).
pub struct Users {
    /// Where the users of each def (by number) start in `list`; one more at the end.
    start: Vec<u32>,
    list: Vec<Def>,
}

impl Users {
    /// The users of `d`, in the order they became live (none for a def made after).
    pub fn of(&self, d: Def) -> &[Def] {
        match (self.start.get(d.index()), self.start.get(d.index() + 1)) {
            (Some(&a), Some(&b)) => &self.list[a as usize..b as usize],
            _ => &[],
        }
    }
}
