//! `mem2reg`: stack slots whose address does not escape become values passed between
//! continuations (SSA form).
//!
//! A slot qualifies when its address is used only to load from and store to it. Its value
//! at a load is then found by walking the `mem` chain back from the load: a store to the
//! slot gives the value, the slot's creation gives an undefined one, and a continuation's
//! `mem` parameter means the value at the continuation's entry, which becomes a new
//! parameter of that continuation (a phi). Every jump to such a continuation passes the
//! value at its own `mem` argument, found the same way.
//!
//! A continuation passed as a value (the return point of a call) gets a small wrapper
//! instead, which adds the value at the call, provided that nothing run by the call can
//! touch the slot: the callee is a top-level function (it uses no free parameter, so no
//! code that names the slot's address is in reach), the other arguments reach only
//! top-level functions, and no continuation with free parameters is stored in memory
//! (where a top-level function could fetch it); or the callee is a local function and
//! none of the code it reaches names the slot's address. A call of an unknown function,
//! or of a local one that may touch the slot, keeps the slot, and so do
//! functions passed as values (closures) that need the value at their entry: when they
//! run is not known.
//!
//! All qualifying slots are promoted at once; the continuations that need values get
//! one new parameter per slot. Loads become the values, stores and slots disappear; the
//! old continuations are left dead for `dce`.

use crate::analysis::live::{Live, Users};
use crate::context::{Pass, PassContext};
use crate::rewrite::{closed_conts, cont_param_types, is_function, DefSet, Rewriter, UseCache};
use durin_diag::Diagnostic;
use durin_ir::{Def, Node, Type, TypeKind, World};
use rustc_hash::{FxHashMap, FxHashSet};

/// Whether a value of type `t` can be or hold a pointer (continuations count: they may
/// carry one they captured).
fn may_hold_pointer(w: &World, t: Type) -> bool {
    match w.kind(t) {
        TypeKind::Bool | TypeKind::Int { .. } | TypeKind::Float { .. } | TypeKind::Mem => false,
        TypeKind::Tuple(ts) => ts.iter().any(|&t| may_hold_pointer(w, t)),
        TypeKind::Array { elem, .. } => may_hold_pointer(w, *elem),
        _ => true,
    }
}

/// What a pass run did.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Slots promoted.
    pub promoted: usize,
    /// Slots that qualified by their uses but had to stay (a closure needs their value).
    pub kept: usize,
}

/// Where the value of a slot at some `mem` comes from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Source {
    /// This value was stored.
    Value(Def),
    /// Nothing stored yet.
    Uninit,
    /// The value at the entry of this continuation.
    Entry(Def),
}

/// A slot being promoted.
struct Slot {
    /// The `slot(mem)` def.
    def: Def,
    /// Its address.
    ptr: Def,
    /// The type of its value.
    ty: Type,
    loads: Vec<Def>,
    stores: Vec<Def>,
}

/// Why a slot cannot be promoted (not an error: the slot stays).
struct Keep;

struct Analysis<'w> {
    w: &'w World,
    users: Users,
    sources: FxHashMap<(Def, Def), Source>,
    /// Which live continuations are top-level functions.
    closed: FxHashMap<Def, bool>,
    /// What defs reach, to check the arguments of calls.
    reach: UseCache,
    /// Whether a continuation with free parameters is stored in memory or a global.
    closures_in_memory: bool,
}

/// Promotes every qualifying slot of the live program. Promoting can make a kept slot
/// promotable (a closure that captured a loaded value may capture a constant now, and no
/// longer has free parameters), so this repeats while it promotes some and keeps some.
pub fn run(w: &mut World) -> Stats {
    let mut total = Stats::default();
    for _ in 0..8 {
        let once = run_once(w);
        total.promoted += once.promoted;
        total.kept = once.kept;
        if once.promoted == 0 || once.kept == 0 {
            break;
        }
    }
    total
}

fn run_once(w: &mut World) -> Stats {
    let live = Live::new(w);
    let users = live.users(w);
    let conts: DefSet = live.conts().iter().copied().collect();
    let mut an = Analysis {
        w,
        users,
        sources: FxHashMap::default(),
        closed: closed_conts(w, &conts),
        reach: UseCache::default(),
        closures_in_memory: false,
    };
    for d in live.defs() {
        let stored = match w.node(d) {
            Node::Store => Some(w.ops(d)[2]),
            Node::Global { .. } => Some(w.ops(d)[0]),
            _ => None,
        };
        if let Some(v) = stored {
            if !an.only_closed(v) {
                an.closures_in_memory = true;
            }
        }
    }
    let mut stats = Stats::default();
    let candidates: Vec<Slot> = live
        .defs()
        .filter(|&d| w.node(d) == Node::Slot)
        .filter_map(|d| an.candidate(d))
        .collect();
    // The continuations that need each slot's value at entry, in a fixed order.
    let mut slots = Vec::new();
    let mut needs: FxHashMap<Def, Vec<usize>> = FxHashMap::default();
    for slot in candidates {
        let i = slots.len();
        match an.needers(&slot) {
            Ok(ks) => {
                for k in ks {
                    needs.entry(k).or_default().push(i);
                }
                slots.push(slot);
            }
            Err(Keep) => stats.kept += 1,
        }
    }
    stats.promoted = slots.len();
    if slots.is_empty() {
        return stats;
    }
    let sources = std::mem::take(&mut an.sources);
    Rewrite {
        w,
        slots: &slots,
        sources,
        needs,
        new_conts: FxHashMap::default(),
        rw: Rewriter::new(),
    }
    .apply(&live);
    stats
}

impl Analysis<'_> {
    /// The slot `s` with its loads and stores, if its address is used for nothing else.
    fn candidate(&self, s: Def) -> Option<Slot> {
        let w = self.w;
        let mut ptr = None;
        for &u in self.users(s) {
            let is_extract = w.node(u) == Node::Extract && w.ops(u)[0] == s;
            match is_extract.then(|| w.lit_bits(w.ops(u)[1])).flatten() {
                Some(0) => {}
                Some(1) => ptr = Some(u),
                _ => return None,
            }
        }
        let ptr = ptr?;
        let TypeKind::Ptr { pointee, .. } = *w.kind(w.type_of(ptr)) else {
            return None;
        };
        let (mut loads, mut stores) = (Vec::new(), Vec::new());
        for &u in self.users(ptr) {
            let ops = w.ops(u);
            match w.node(u) {
                Node::Load if ops[0] != ptr => loads.push(u),
                Node::Store if ops[0] != ptr && ops[2] != ptr => stores.push(u),
                _ => return None,
            }
        }
        Some(Slot {
            def: s,
            ptr,
            ty: pointee,
            loads,
            stores,
        })
    }

    fn users(&self, d: Def) -> &[Def] {
        self.users.of(d)
    }

    /// The continuations that need the value of `slot` at their entry, or why the slot
    /// must stay.
    fn needers(&mut self, slot: &Slot) -> Result<Vec<Def>, Keep> {
        let mut needed: Vec<Def> = Vec::new();
        let mut seen: FxHashSet<Def> = FxHashSet::default();
        let mut work: Vec<Def> = Vec::new();
        for &l in &slot.loads {
            let m = self.w.ops(l)[0];
            if let Source::Entry(k) = self.source(slot, m)? {
                work.push(k);
            }
        }
        while let Some(k) = work.pop() {
            if !seen.insert(k) {
                continue;
            }
            needed.push(k);
            let w = self.w;
            let mem_index = mem_param(w, k).ok_or(Keep)?;
            if w.is_external(k) {
                return Err(Keep);
            }
            for &u in self.users(k).to_vec().iter() {
                match w.node(u) {
                    Node::Cont => {
                        let (callee, args) = w.body(u).ok_or(Keep)?;
                        let args = args.to_vec();
                        if callee == k && !args.contains(&k) && !w.filters(u).contains(&k) {
                            let m = args[mem_index];
                            if let Source::Entry(e) = self.source(slot, m)? {
                                work.push(e);
                            }
                        } else if callee != k
                            && args.iter().filter(|&&a| a == k).count() == 1
                            && !w.filters(u).contains(&k)
                        {
                            // Passed as a value: a return point (never a function) of a
                            // call that cannot reach the slot.
                            if is_function(w, k) || !self.call_is_opaque(slot, callee, &args, k) {
                                return Err(Keep);
                            }
                            let m = jump_mem(w, &args).ok_or(Keep)?;
                            if let Source::Entry(e) = self.source(slot, m)? {
                                work.push(e);
                            }
                        } else {
                            return Err(Keep);
                        }
                    }
                    // A branch: every target gets the parameter, and every jump through it
                    // passes the value.
                    Node::Select if w.ops(u)[0] != k => {
                        for &t in &w.ops(u)[1..] {
                            if w.node(t) != Node::Cont {
                                return Err(Keep);
                            }
                            work.push(t);
                        }
                        for &j in self.users(u).to_vec().iter() {
                            let body = (w.node(j) == Node::Cont).then(|| w.body(j)).flatten();
                            let Some((callee, args)) = body else {
                                return Err(Keep);
                            };
                            if callee != u || args.contains(&u) {
                                return Err(Keep);
                            }
                            let m = args.get(mem_index).copied().ok_or(Keep)?;
                            if let Source::Entry(e) = self.source(slot, m)? {
                                work.push(e);
                            }
                        }
                    }
                    _ => return Err(Keep),
                }
            }
        }
        Ok(needed)
    }

    /// Whether everything `d` reaches through structural defs is a top-level function (or
    /// no continuation at all).
    fn only_closed(&mut self, d: Def) -> bool {
        let w = self.w;
        let reached = self.reach.of(w, d);
        reached
            .iter()
            .all(|&c| w.node(c) != Node::Cont || self.closed.get(&c).copied().unwrap_or(false))
    }

    /// Whether a call of `callee` with `args` (passing return point `ret`) runs only code
    /// that cannot touch `slot`, whose address does not escape: a top-level function given
    /// only top-level functions, or a local function none of whose code names the slot's
    /// address.
    fn call_is_opaque(&mut self, slot: &Slot, callee: Def, args: &[Def], ret: Def) -> bool {
        if self.closures_in_memory || self.w.node(callee) != Node::Cont {
            return false;
        }
        let others: Vec<Def> = args.iter().copied().filter(|&a| a != ret).collect();
        if !self.closed.get(&callee).copied().unwrap_or(false) {
            let mut roots = others;
            roots.push(callee);
            return !self.may_name(slot.ptr, &roots);
        }
        others.iter().all(|&a| self.only_closed(a))
    }

    /// Whether the code `roots` reach (through structural defs and the bodies of the
    /// continuations they reference) may name `ptr`; past a budget of defs, it may. A value
    /// computed before the call (it uses no parameter of the code the call runs) names the
    /// address only if it can hold a pointer: a number loaded from the slot does not.
    fn may_name(&mut self, ptr: Def, roots: &[Def]) -> bool {
        const BUDGET: usize = 20_000;
        let w = self.w;
        let mut conts = FxHashSet::default();
        let mut seen = FxHashSet::default();
        let mut stack = roots.to_vec();
        while let Some(d) = stack.pop() {
            if seen.len() > BUDGET {
                return true;
            }
            if !seen.insert(d) || matches!(w.node(d), Node::Param(_)) {
                continue;
            }
            if w.node(d) == Node::Cont {
                conts.insert(d);
            }
            stack.extend_from_slice(w.ops(d));
        }
        seen.clear();
        stack = roots.to_vec();
        while let Some(d) = stack.pop() {
            if d == ptr {
                return true;
            }
            if !seen.insert(d) || matches!(w.node(d), Node::Param(_)) {
                continue;
            }
            let inside = w.node(d) == Node::Cont
                || self.reach.of(w, d).iter().any(|&y| match w.node(y) {
                    Node::Param(_) => conts.contains(&w.ops(y)[0]),
                    _ => conts.contains(&y),
                });
            if inside || may_hold_pointer(w, w.type_of(d)) {
                stack.extend_from_slice(w.ops(d));
            }
        }
        false
    }

    /// Where the value of `slot` at `mem` comes from (remembered: long chains are walked
    /// once).
    fn source(&mut self, slot: &Slot, mem: Def) -> Result<Source, Keep> {
        let w = self.w;
        let mut path = Vec::new();
        let mut m = mem;
        let found = loop {
            if let Some(&s) = self.sources.get(&(slot.def, m)) {
                break s;
            }
            path.push(m);
            let ops = w.ops(m);
            match w.node(m) {
                Node::Param(_) => {
                    let k = ops[0];
                    if mem_param(w, k).is_none() {
                        return Err(Keep);
                    }
                    break Source::Entry(k);
                }
                Node::Store if ops[1] == slot.ptr => break Source::Value(ops[2]),
                Node::Store => m = ops[0],
                Node::Extract if w.lit_bits(ops[1]) == Some(0) => {
                    let x = ops[0];
                    if x == slot.def {
                        break Source::Uninit;
                    }
                    if !matches!(w.node(x), Node::Load | Node::Slot | Node::Alloc) {
                        return Err(Keep);
                    }
                    m = w.ops(x)[0];
                }
                _ => return Err(Keep),
            }
        };
        for m in path {
            self.sources.insert((slot.def, m), found);
        }
        Ok(found)
    }
}

/// The index of the single `mem` parameter of continuation `k`.
fn mem_param(w: &World, k: Def) -> Option<usize> {
    let tys = cont_param_types(w, k);
    let mut mems = tys
        .iter()
        .enumerate()
        .filter(|(_, &t)| matches!(w.kind(t), TypeKind::Mem));
    let (i, _) = mems.next()?;
    mems.next().is_none().then_some(i)
}

/// The single `mem` argument of a jump.
fn jump_mem(w: &World, args: &[Def]) -> Option<Def> {
    let mut mems = args
        .iter()
        .filter(|&&a| matches!(w.kind(w.type_of(a)), TypeKind::Mem));
    let m = *mems.next()?;
    mems.next().is_none().then_some(m)
}

struct Rewrite<'a> {
    w: &'a mut World,
    slots: &'a [Slot],
    sources: FxHashMap<(Def, Def), Source>,
    /// For each continuation that needs slot values: which slots, in parameter order.
    needs: FxHashMap<Def, Vec<usize>>,
    /// The replacement of each continuation in `needs`, with the new parameters at the end.
    new_conts: FxHashMap<Def, Def>,
    rw: Rewriter<'static>,
}

impl Rewrite<'_> {
    fn apply(mut self, live: &Live) {
        // New continuations, and their parameters for the old ones'.
        let mut needing: Vec<Def> = self.needs.keys().copied().collect();
        needing.sort();
        for &k in &needing {
            let mut tys = cont_param_types(self.w, k);
            tys.extend(self.needs[&k].iter().map(|&i| self.slots[i].ty));
            let name = self.w.name(k).unwrap_or("k").to_string();
            let k2 = self.w.cont(&tys, &name);
            self.w.copy_places(k, k2);
            for i in 0..self.w.num_params(k) {
                let (from, to) = (self.w.param(k, i), self.w.param(k2, i));
                self.rw.map(from, to);
            }
            self.new_conts.insert(k, k2);
        }
        for &k in &needing {
            let k2 = self.new_conts[&k];
            for i in 0..self.w.num_params(k) {
                let f = self.w.filters(k)[i];
                let f = self.rw.rewrite(self.w, f);
                self.w.set_filter(k2, i, f);
            }
        }
        // Slots, loads and stores, in creation order: a stored value refers only to older
        // loads, which are mapped by then.
        let mut effects: Vec<(Def, usize)> = Vec::new();
        for (i, s) in self.slots.iter().enumerate() {
            effects.push((s.def, i));
            effects.extend(s.loads.iter().map(|&l| (l, i)));
            effects.extend(s.stores.iter().map(|&st| (st, i)));
        }
        effects.sort();
        for (d, i) in effects {
            let mem = self.w.ops(d)[0];
            let mem2 = self.rw.rewrite(self.w, mem);
            let to = match self.w.node(d) {
                Node::Slot => {
                    let pty = self.w.type_of(self.slots[i].ptr);
                    let b = self.w.bottom(pty);
                    self.w.tuple(&[mem2, b])
                }
                Node::Load => {
                    let v = self.value_at(i, mem);
                    self.w.tuple(&[mem2, v])
                }
                _ => mem2,
            };
            self.rw.map(d, to);
        }
        // Bodies: every live continuation (the needing ones into their replacements).
        for &k in live.conts() {
            let into = self.new_conts.get(&k).copied().unwrap_or(k);
            self.rewrite_cont(k, into);
        }
    }

    /// The value (in the rewritten program) of slot `i` at old `mem`.
    fn value_at(&mut self, i: usize, mem: Def) -> Def {
        match self.sources[&(self.slots[i].def, mem)] {
            Source::Value(v) => self.rw.rewrite(self.w, v),
            Source::Uninit => self.w.bottom(self.slots[i].ty),
            Source::Entry(k) => {
                let k2 = self.new_conts[&k];
                let at = self.w.num_params(k)
                    + self.needs[&k].iter().position(|&j| j == i).expect("needed");
                self.w.param(k2, at)
            }
        }
    }

    /// The values of the slots `k` needs, at old `mem`.
    fn values_for(&mut self, k: Def, mem: Def) -> Vec<Def> {
        let slots = self.needs[&k].clone();
        slots
            .into_iter()
            .map(|i| match self.sources.get(&(self.slots[i].def, mem)) {
                Some(_) => self.value_at(i, mem),
                // A path on which the value is never read (another target of the branch).
                None => self.w.bottom(self.slots[i].ty),
            })
            .collect()
    }

    /// Rewrites continuation `k` into `into`: filters and body through the substitution,
    /// jumps to needing continuations passing the values, return points wrapped.
    fn rewrite_cont(&mut self, k: Def, into: Def) {
        let Some((callee, args)) = self.w.body(k).map(|(c, a)| (c, a.to_vec())) else {
            if k != into {
                self.w.clear_body(into);
            }
            return;
        };
        if k == into {
            for i in 0..self.w.num_params(k) {
                let f = self.w.filters(k)[i];
                let f2 = self.rw.rewrite(self.w, f);
                if f2 != f {
                    self.w.set_filter(k, i, f2);
                }
            }
        }
        let mut new_args: Vec<Def> = Vec::with_capacity(args.len());
        let mem = jump_mem(self.w, &args);
        for &a in &args {
            let na = if self.needs.contains_key(&a) && a != callee {
                self.wrapper(a, mem.expect("checked: one mem argument"))
            } else {
                self.rw.rewrite(self.w, a)
            };
            new_args.push(na);
        }
        let new_callee = match self.w.node(callee) {
            Node::Cont if self.needs.contains_key(&callee) => {
                let m = args[mem_param(self.w, callee).expect("checked")];
                let vals = self.values_for(callee, m);
                new_args.extend(vals);
                self.new_conts[&callee]
            }
            Node::Select
                if self.w.ops(callee)[1..]
                    .iter()
                    .any(|t| self.needs.contains_key(t)) =>
            {
                let ops = self.w.ops(callee).to_vec();
                let t = ops[1];
                let m = args[mem_param(self.w, t).expect("checked")];
                let vals = self.values_for(t, m);
                new_args.extend(vals);
                let cond = self.rw.rewrite(self.w, ops[0]);
                let (a, b) = (self.new_conts[&ops[1]], self.new_conts[&ops[2]]);
                self.w.select(cond, a, b)
            }
            _ => self.rw.rewrite(self.w, callee),
        };
        self.w.set_body(into, new_callee, &new_args);
    }

    /// A continuation that takes the parameters of needing `k` and jumps to its
    /// replacement with the slot values at `mem` added.
    fn wrapper(&mut self, k: Def, mem: Def) -> Def {
        let tys = cont_param_types(self.w, k);
        let name = self.w.name(k).unwrap_or("k").to_string();
        let wr = self.w.cont(&tys, &name);
        self.w.copy_places(k, wr);
        let mut args = self.w.params(wr);
        let vals = self.values_for(k, mem);
        args.extend(vals);
        let k2 = self.new_conts[&k];
        self.w.set_body(wr, k2, &args);
        wr
    }
}

/// The pass `mem2reg`.
pub(crate) struct Mem2reg;

impl Pass for Mem2reg {
    fn name(&self) -> &'static str {
        "mem2reg"
    }

    fn description(&self) -> &'static str {
        "promote stack slots whose address does not escape to values passed between continuations (SSA)"
    }

    fn run(&self, w: &mut World, _: &mut PassContext<'_>) -> Result<(), Diagnostic> {
        run(w);
        Ok(())
    }
}
