//! What each definition uses through structural definitions: the continuations and
//! parameters it reaches without entering a continuation or a global ([`UseSets`]), for
//! the free parameters of a whole program ([`crate::analysis::free::FreeParams`]) and the
//! passes' scopes alike.

use crate::def::{Def, Node};
use crate::world::World;

/// What each def reaches through structural defs: the continuations and parameters
/// (sorted). Structural defs never change, so the answer for one is computed once; sets are
/// shared between a def and an operand with the same set, so a long chain of effects
/// that all use the same few parameters costs one set, not one per def.
#[derive(Default)]
pub struct UseSets {
    /// The set of each def, by def number.
    sets: Vec<Set>,
    /// The sets of two defs or more, each a run of this vector.
    runs: Vec<Def>,
    /// The work list of [`UseSets::compute`], kept between calls.
    stack: Vec<(Def, bool)>,
    /// The uses [`UseSets::push_direct_uses`] collects, kept between calls.
    scratch: Vec<Def>,
}

/// The direct uses (see [`UseSets::direct_uses`]) of a list of continuations, in flat
/// lists cut per continuation: no allocation per continuation.
#[derive(Default)]
pub struct DirectUses {
    conts: Vec<Def>,
    conts_end: Vec<u32>,
    params: Vec<Def>,
    params_end: Vec<u32>,
}

impl DirectUses {
    /// The continuations that continuation number `i` of the list uses directly, sorted.
    pub fn conts(&self, i: usize) -> &[Def] {
        let start = if i == 0 { 0 } else { self.conts_end[i - 1] };
        &self.conts[start as usize..self.conts_end[i] as usize]
    }

    /// The parameters that continuation number `i` of the list uses directly, sorted.
    pub fn params(&self, i: usize) -> &[Def] {
        let start = if i == 0 { 0 } else { self.params_end[i - 1] };
        &self.params[start as usize..self.params_end[i] as usize]
    }
}

/// A set of [`UseSets`], in twelve bytes (the table has an entry per def of the world):
/// `len` defs, the one in `one` or the run of [`UseSets::runs`] at `start`; a continuation
/// or parameter is its own set (they are most of the defs partial evaluation makes).
#[derive(Clone, Copy)]
struct Set {
    one: Def,
    start: u32,
    len: u32,
}

impl Set {
    /// Not computed yet.
    fn unknown() -> Set {
        Set {
            one: Def::default(),
            start: 0,
            len: u32::MAX,
        }
    }

    fn empty() -> Set {
        Set {
            len: 0,
            ..Set::unknown()
        }
    }

    fn one(d: Def) -> Set {
        Set {
            one: d,
            len: 1,
            ..Set::unknown()
        }
    }

    fn known(&self) -> bool {
        self.len != u32::MAX
    }

    /// Whether `self` and `other` are the same set by their representation (the same
    /// single def, or the same run): equal sets in different runs are not.
    fn same(&self, other: &Set) -> bool {
        self.len == other.len
            && match self.len {
                0 => true,
                1 => self.one == other.one,
                _ => self.start == other.start,
            }
    }
}

impl UseSets {
    /// The continuations and parameters that the body (and filters) of continuation `k`
    /// reach directly: through structural defs, not through other continuations.
    pub fn direct_uses(&mut self, w: &World, k: Def) -> (Vec<Def>, Vec<Def>) {
        let mut one = DirectUses::default();
        self.push_direct_uses(w, k, &mut one);
        (one.conts, one.params)
    }

    /// [`UseSets::direct_uses`] of `k`, appended to `out` as its next continuation.
    pub fn push_direct_uses(&mut self, w: &World, k: Def, out: &mut DirectUses) {
        let mut all = std::mem::take(&mut self.scratch);
        all.clear();
        self.each_direct_use(w, k, |d| all.push(d));
        all.sort_unstable();
        all.dedup();
        for &d in &all {
            if w.node(d) == Node::Cont {
                out.conts.push(d);
            } else {
                out.params.push(d);
            }
        }
        out.conts_end.push(out.conts.len() as u32);
        out.params_end.push(out.params.len() as u32);
        self.scratch = all;
    }

    /// Calls `f` with each continuation and parameter that the body (and filters) of `k`
    /// reach directly, as [`UseSets::direct_uses`] finds them but with repeats and
    /// without collecting them. An operand whose set is an earlier operand's (operands
    /// often share their sets) is skipped.
    pub fn each_direct_use(&mut self, w: &World, k: Def, mut f: impl FnMut(Def)) {
        let ops = w.ops(k);
        for (i, &o) in ops.iter().enumerate() {
            self.compute(w, o);
            let s = self.sets[o.index()];
            if ops[..i].iter().any(|p| self.sets[p.index()].same(&s)) {
                continue;
            }
            self.slice(&s).iter().for_each(|&d| f(d));
        }
    }

    /// The continuations and parameters `d` reaches through structural defs (`d` itself
    /// if it is one), sorted.
    pub fn of(&mut self, w: &World, d: Def) -> &[Def] {
        self.compute(w, d);
        self.slice(&self.sets[d.index()])
    }

    fn slice<'a>(&'a self, s: &'a Set) -> &'a [Def] {
        match s.len {
            0 => &[],
            1 => std::slice::from_ref(&s.one),
            n => &self.runs[s.start as usize..(s.start + n) as usize],
        }
    }

    /// Computes the set of `d` (and of the operands it needs) unless known.
    fn compute(&mut self, w: &World, d: Def) {
        if self.sets.len() < w.num_defs() {
            self.sets.resize(w.num_defs(), Set::unknown());
        }
        if self.sets[d.index()].known() {
            return;
        }
        let mut stack = std::mem::take(&mut self.stack);
        stack.push((d, false));
        while let Some((x, expanded)) = stack.pop() {
            if self.sets[x.index()].known() {
                continue;
            }
            let set = match w.node(x) {
                Node::Cont | Node::Param(_) => Set::one(x),
                Node::Global { .. } => Set::empty(),
                _ if !expanded => {
                    stack.push((x, true));
                    for &o in w.ops(x) {
                        if !self.sets[o.index()].known() {
                            stack.push((o, false));
                        }
                    }
                    continue;
                }
                _ => self.union(w.ops(x)),
            };
            self.sets[x.index()] = set;
        }
        self.stack = stack;
    }

    /// The union of the (computed) sets of `ops`, sharing the largest one when it holds
    /// all the others.
    fn union(&mut self, ops: &[Def]) -> Set {
        let set = |o: &Def| self.sets[o.index()];
        let Some(largest) = ops.iter().map(set).max_by_key(|s| s.len) else {
            return Set::empty();
        };
        let within = self.slice(&largest);
        // A set shared with the largest (most operands of a def share their sets) is held
        // without a search.
        let holds_all = (ops.iter().map(set)).all(|s| {
            s.same(&largest)
                || self
                    .slice(&s)
                    .iter()
                    .all(|x| within.binary_search(x).is_ok())
        });
        if holds_all {
            return largest;
        }
        let mut all: Vec<Def> = Vec::new();
        for o in ops {
            all.extend_from_slice(self.slice(&self.sets[o.index()]));
        }
        all.sort_unstable();
        all.dedup();
        // Two or more: the union of sets that do not hold each other.
        let start = u32::try_from(self.runs.len()).expect("fewer than 2^32 shared defs");
        self.runs.extend_from_slice(&all);
        Set {
            one: Def::default(),
            start,
            len: all.len() as u32,
        }
    }
}
