//! The partial evaluator, with Artic/Thorin semantics.
//!
//! A jump `f(args)` to a continuation `f` with a body is *specialized* when `f`'s filter
//! holds for `args` (every parameter's filter, with the parameters replaced by the
//! arguments, folds to `true`: `fn @f` always, `fn @(?n) f` when `n` is a constant), or
//! when the callee is marked `run` (`@f(x)` in the source). Specializing clones `f`'s scope
//! with every argument but the `mem` token (and arguments marked `hlt`, `$e` in the
//! source) substituted; the clones are memoized by callee and arguments, so a recursion
//! that comes back to the same arguments becomes a loop. Substitution rebuilds defs, and
//! the world's normalization folds what became constant, branches included; the scope is
//! copied lazily, so what only a folded branch reached is never copied.
//!
//! The same rounds also inline continuations used exactly once, as the callee of one jump
//! (beta reduction), which is how closures passed to a specialized function disappear, and,
//! with [`Options::cff`], specialize jumps to inner continuations on the continuations they
//! are passed (the return point of a local loop), and calls of any function on closures
//! that jump out of the code around them (a `for` body with `break`), so that what remains
//! is first-order.
//!
//! Each specialization costs one unit of fuel, and one more per [`FUEL_DEFS`] definitions
//! it makes (inlining removes a continuation and costs none); past [`MAX_DEFS`]
//! definitions in all, specialization stops too. Running out is an error that names the
//! call site and the chain of specializations that led to it.

use crate::analysis::live::Live;
use crate::context::{Pass, PassContext};
use crate::rewrite::{
    is_function, is_function_type, is_point_type, materialize_deferred, specialize_in,
    substitute_body, substitute_deferred, DefSet, Deferral, Rewriter, ScopeIndex,
};
use crate::share;
use durin_diag::Diagnostic;
use durin_ir::equiv::{open_code, OpenCode, OpenForm};
use durin_ir::{Def, Expansion, Launch, Node, Span, TypeKind, World};
use rustc_hash::FxHashMap;

/// What one run of the partial evaluator may do.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Specialize jumps whose callee's filter holds (or that are marked `run`).
    pub specialize: bool,
    /// Inline continuations used once, as the callee of one jump.
    pub inline_once: bool,
    /// Specialize jumps to non-external continuations on their continuation arguments.
    pub cff: bool,
    /// Specializations allowed before giving up.
    pub fuel: u64,
    /// Make kernels of launches, and closures passed to imports, that are the same code up
    /// to the host's values call one copy of that code (see [`crate::share`]), before
    /// specializing them.
    pub share: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            specialize: true,
            inline_once: true,
            cff: true,
            fuel: crate::context::DEFAULT_FUEL,
            share: true,
        }
    }
}

impl Options {
    /// Inlining of continuations used once, nothing else (the passes `inline` and
    /// `simplify`).
    pub fn inline_only(fuel: u64) -> Options {
        Options {
            specialize: false,
            cff: false,
            share: false,
            fuel,
            ..Options::default()
        }
    }
}

/// What a run did.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Jumps specialized on their callee's filter.
    pub specialized: u64,
    /// Jumps that reused an earlier specialization.
    pub reused: u64,
    /// Continuations inlined into their only caller.
    pub inlined: u64,
    /// Jumps specialized on continuation arguments.
    pub cff: u64,
    /// Rounds over the program.
    pub rounds: u64,
}

type Key = (Def, Vec<Option<Def>>);

/// What a specialization made, and the streaks of specializations of the same callee in a
/// row, each inside the one before, that it ends.
#[derive(Clone, Copy)]
struct Growth {
    /// The definitions it made.
    made: usize,
    /// How many in a row grew by half or more (see [`GROWTH_LIMIT`]).
    streak: u32,
    /// How many in a row substituted no constant value (see [`RUNAWAY_LIMIT`]).
    blind: u32,
    /// How many in a row (see [`CHAIN_LIMIT`]).
    chain: u32,
}

impl Growth {
    /// Whether specialization stops here.
    fn runaway(&self) -> bool {
        self.streak >= GROWTH_LIMIT || self.blind >= RUNAWAY_LIMIT || self.chain >= CHAIN_LIMIT
    }
}

struct Specializer<'w> {
    w: &'w mut World,
    opts: Options,
    fuel_left: u64,
    memo: FxHashMap<Key, Def>,
    /// The key of each memoized specialization.
    memo_key: FxHashMap<Def, Key>,
    /// For each continuation made by cloning: the call site whose specialization made it,
    /// the callee, and the specialization's number in `growth`.
    origin: FxHashMap<Def, (Def, Def, u32)>,
    /// For each specialization, how it grew the program.
    growth: Vec<Growth>,
    /// For a continuation whose jump is now that of a specialization it inlined: that
    /// specialization's callee and number in `growth` (its calls are inside it).
    took_over: FxHashMap<Def, (Def, u32)>,
    /// Control-flow specializations made per callee (bounded: see [`CFF_LIMIT`]).
    cff_count: FxHashMap<Def, u32>,
    /// Which continuations are closed (top-level functions).
    closed: FxHashMap<Def, bool>,
    /// Which closures jump out of the code around them (see [`Specializer::jumps_out`]), found this
    /// round.
    jumps_out: FxHashMap<Def, bool>,
    /// Continuations whose scope has been cloned: their own jumps are left alone.
    templates: DefSet,
    /// Scopes, kept up to date as continuations are made and rewritten.
    index: ScopeIndex,
    /// The live program and its use counts, kept up to date likewise.
    live: Live,
    /// Kernels and closures passed to imports looked at for sharing (see
    /// [`Specializer::share_kernels`]).
    examined: DefSet,
    /// The shared functions made so far (for kernels and closures), by the code they were
    /// made from.
    shared: FxHashMap<OpenForm, Def>,
    /// The specializations written into a jump whose blocks were cloned without bodies
    /// (see [`Deferral`]), while the walk is at that jump.
    families: Vec<Family>,
    /// Each clone without a body: its family and the block it is a clone of.
    deferred: FxHashMap<Def, (usize, Def)>,
    /// The clones without a body, in the order they were made.
    deferred_order: Vec<Def>,
    /// What the families' bodies not yet made may use (see
    /// [`Specializer::hides_members`]).
    hidden: Hidden,
    stats: Stats,
}

/// A specialization written into a jump ([`Specializer::specialize_into`]) with blocks
/// cloned without their bodies. Their bodies are made where the jump reaches them, once
/// each (partial evaluation passes a return point on to the call it specializes next,
/// which jumps to it once), or in the clones before anything else could look at them:
/// before the walk leaves the jump, and before any rewrite other than a specialization
/// of a callee whose scope none of them could be in (a body not yet made is no use the
/// counts, the scopes or the closed continuations know of).
struct Family {
    deferral: Deferral,
    /// The call site, the callee and the specialization's number in `growth`.
    site: Def,
    target: Def,
    id: u32,
    /// The expansion the specialization's continuations are in.
    expansion: Option<Expansion>,
    /// What the family's bodies may use from outside its code: the arguments substituted.
    values: Vec<Def>,
    /// The continuations of the callee's code whose bodies were written into the jump.
    consumed: DefSet,
    /// How many of its clones have no body yet.
    pending: usize,
    /// Whether what its bodies use is no longer counted as hidden and held (they are all
    /// made).
    released: bool,
}

/// What the bodies not yet made of the families may use, each counted once per family
/// (a family's count is dropped when its bodies are all made).
#[derive(Default)]
struct Hidden {
    /// The continuations whose parameters their values reach.
    params_of: FxHashMap<Def, u32>,
    /// The continuations their values reach.
    conts: FxHashMap<Def, u32>,
    /// Their callees.
    callees: FxHashMap<Def, u32>,
}

/// At most this many control-flow specializations of one continuation: a non-tail
/// recursion passes a new return point each time, and stays higher-order instead of
/// unrolling until the fuel runs out.
const CFF_LIMIT: u32 = 16;

/// Control-flow specialization copies the callee's scope: only scopes of at most this many
/// continuations.
const CFF_MAX_SCOPE: usize = 32;

/// Specialization stops with the fuel diagnostic once the world holds this many defs,
/// whatever fuel is left: a few specializations of code that doubles each time would
/// otherwise exhaust memory first. (Five nested `unroll(0, 8)` loops make about a million.)
pub const MAX_DEFS: usize = 8_000_000;

/// Specialization stops with the fuel diagnostic after this many specializations of one
/// callee in a row, each made inside the one before and copying half as much again: a
/// recursion that passes the clone's own return point copies every clone before it
/// (doubling), and would otherwise run until [`MAX_DEFS`], seconds later.
pub const GROWTH_LIMIT: u32 = 16;

/// Specialization stops with the fuel diagnostic after this many specializations of one
/// callee in a row, each made inside the one before, whose substituted values (the
/// arguments that are not continuations) all depend on parameters: nothing constant can
/// end such a recursion (`fn @f(n: i32) = ... f(n - 1)` with `n` unknown), which would
/// otherwise run until [`MAX_DEFS`], over ten seconds and a gigabyte and a half later.
/// Recursions that partial evaluation is meant to unroll pass a constant (`unroll`'s
/// counter) or a function each time.
pub const RUNAWAY_LIMIT: u32 = 10_000;

/// Specialization stops with the fuel diagnostic after this many specializations of one
/// callee in a row, each made inside the one before, whatever they substitute: a recursion
/// on a constant that never reaches its end (`fn @g(k) = ... g(k + 1)` with no bound
/// that holds) would otherwise run for seconds, until [`MAX_DEFS`] and over a gigabyte.
/// No loop partial evaluation unrolls runs this long (its code would not fit either).
pub const CHAIN_LIMIT: u32 = 50_000;

/// A specialization costs one unit of fuel, and one more per this many definitions it
/// makes.
pub const FUEL_DEFS: usize = 4096;

/// Runs the partial evaluator to a fixed point.
pub fn run(w: &mut World, opts: Options) -> Result<Stats, Diagnostic> {
    let mut pe = Specializer::new(w, opts);
    loop {
        pe.stats.rounds += 1;
        if !pe.round()? {
            return Ok(pe.stats);
        }
    }
}

impl<'w> Specializer<'w> {
    fn new(w: &'w mut World, opts: Options) -> Specializer<'w> {
        Specializer {
            w,
            opts,
            fuel_left: opts.fuel,
            memo: FxHashMap::default(),
            memo_key: FxHashMap::default(),
            origin: FxHashMap::default(),
            growth: Vec::new(),
            took_over: FxHashMap::default(),
            cff_count: FxHashMap::default(),
            closed: FxHashMap::default(),
            jumps_out: FxHashMap::default(),
            templates: DefSet::default(),
            index: ScopeIndex::default(),
            live: Live::default(),
            examined: DefSet::default(),
            shared: FxHashMap::default(),
            families: Vec::new(),
            deferred: FxHashMap::default(),
            deferred_order: Vec::new(),
            hidden: Default::default(),
            stats: Stats::default(),
        }
    }
}

impl Specializer<'_> {
    /// One round over the live program, continuations made on the way included; whether
    /// it changed anything.
    ///
    /// The walk goes depth first from the externals along control flow (callees, branch
    /// targets, return points passed as arguments), callers before callees, and visits only
    /// what the program reaches *now*: a continuation whose scope was cloned is a template
    /// by the time the walk would get inside it, and dead code (the original of an
    /// unrolled loop) is never visited. Functions passed as values (closures) are left for
    /// a second walk, once control flow has settled: most of them are specialized into the
    /// code that calls them first. That order matters beyond speed: the body of
    /// `|lower, upper| { fn @loop(i) ...; loop(lower) }` on its own unrolls forever, as
    /// `loop(lower + 1)` still satisfies its filter; only the closures that stay
    /// first-class get their bodies evaluated as they are. The second walk starts from
    /// those functions and follows control flow too, never from a block on its own: a
    /// block is reached from where control enters it, so the arm of a branch whose
    /// condition is about to fold is not specialized first (`fn @(?lvl) tile` recursing in
    /// the arm that a constant `lvl` rules out would otherwise specialize forever).
    fn round(&mut self) -> Result<bool, Diagnostic> {
        self.refresh();
        let mut done = DefSet::default();
        let roots: Vec<Def> = self.w.externals().collect();
        if self.walk(roots, &mut done)? {
            return Ok(true);
        }
        // Control flow has settled: the launches and the calls of imports it makes are all
        // there, their kernels and closures not yet specialized (they are functions passed
        // as values).
        if self.opts.specialize && self.opts.share && self.share_kernels() {
            return Ok(true);
        }
        // Nothing changed: the tables of `refresh` still hold. Only functions passed as
        // values: one that is only called is reached from its call sites, where its
        // arguments are known (the generic body of `fn @run(k)`, called as `run(0)` in a
        // closure, would otherwise be evaluated with `k` unknown, and a `@` function it
        // calls on `k` would unroll forever).
        let values = self.values();
        let rest: Vec<Def> = (self.live.conts().iter())
            .copied()
            .filter(|&k| !done.contains(&k) && values.contains(&k) && is_function(self.w, k))
            .collect();
        self.walk(rest, &mut done)
    }

    /// Kernels of launches (and closures passed to imports) that are the same code up to
    /// the values of the host they use call one function of that code taking those values
    /// (see [`crate::share`]), which is specialized once; whether any changed. Each kernel
    /// is looked at once, before its first specialization: one that no other shares stays
    /// as it is. A kernel gets its own copy back at outlining; a closure keeps calling the
    /// shared function, whose code is compiled once.
    fn share_kernels(&mut self) -> bool {
        let mut groups: Vec<Vec<(Def, OpenCode)>> = Vec::new();
        let mut group_of: FxHashMap<OpenForm, usize> = FxHashMap::default();
        let mut changed = false;
        for k in self.code_apart() {
            if !self.examined.insert(k) {
                continue;
            }
            let Some(code) = self.open_kernel(k) else {
                continue;
            };
            if let Some(&shared) = self.shared.get(&code.form) {
                share::call_shared(self.w, k, shared, &code.holes);
                changed = true;
                continue;
            }
            match group_of.get(&code.form) {
                Some(&g) => groups[g].push((k, code)),
                None => {
                    group_of.insert(code.form.clone(), groups.len());
                    groups.push(vec![(k, code)]);
                }
            }
        }
        for members in groups.into_iter().filter(|g| g.len() > 1) {
            let shared = share::lift(self.w, &members[0].1);
            self.shared.insert(members[0].1.form.clone(), shared);
            for (k, code) in members {
                share::call_shared(self.w, k, shared, &code.holes);
            }
            changed = true;
        }
        changed
    }

    /// The code that runs apart from the host's control flow, in the order of the program:
    /// the kernels of the live launches that pass no values yet, and the functions passed
    /// to imports (the bodies of `parallel` loops, which the runtime calls).
    fn code_apart(&self) -> Vec<Def> {
        let w = &*self.w;
        let mut out = Vec::new();
        for &k in self.live.conts() {
            if let Some(l) = Launch::of(w, k) {
                if l.captured.is_empty() {
                    out.push(l.kernel);
                }
                continue;
            }
            let Some((callee, args)) = w.body(k) else {
                continue;
            };
            let import =
                w.node(callee) == Node::Cont && w.body(callee).is_none() && w.is_external(callee);
            if import {
                out.extend(
                    (args.iter().copied())
                        .filter(|&a| w.node(a) == Node::Cont && is_function_type(w, w.type_of(a))),
                );
            }
        }
        out
    }

    /// The code of kernel `k` up to the host's values, where a function taking those
    /// values can stand for it: code that no function of its own lies around (whose
    /// parameters would then be no holes, and a copy of it not closed), and whose every
    /// block lies in the scope of one of its functions (a block of the host, which a kernel
    /// cannot continue in, is left to outlining's error).
    fn open_kernel(&mut self, k: Def) -> Option<OpenCode> {
        if self.w.node(k) != Node::Cont
            || self.w.body(k).is_none()
            || share::shared_callee(self.w, k).is_some()
        {
            return None;
        }
        let code = open_code(self.w, k)?;
        let w = &*self.w;
        let mut inside = self.index.scope(k);
        for &c in &code.conts[1..] {
            if is_function_type(w, w.type_of(c)) {
                let scope = self.index.scope(c);
                if scope.contains(&k) {
                    return None;
                }
                inside.extend(scope);
            }
        }
        code.conts
            .iter()
            .all(|c| inside.contains(c))
            .then_some(code)
    }

    /// The live continuations used as values: passed as an argument or held by a value
    /// (a tuple, a store, a branch or `run` marker that is itself a value), not only
    /// jumped to.
    fn values(&self) -> DefSet {
        let w = &*self.w;
        let mut out = DefSet::default();
        let mut stack = Vec::new();
        for d in self.live.defs() {
            match w.node(d) {
                Node::Param(_) | Node::Select | Node::Run | Node::Hlt => {}
                Node::Cont => stack.extend(w.body(d).into_iter().flat_map(|(_, a)| a)),
                _ => stack.extend_from_slice(w.ops(d)),
            }
        }
        while let Some(v) = stack.pop() {
            match w.node(v) {
                Node::Cont => {
                    out.insert(v);
                }
                Node::Select => stack.extend_from_slice(&w.ops(v)[1..]),
                Node::Run | Node::Hlt => stack.push(w.ops(v)[0]),
                _ => {}
            }
        }
        out
    }

    /// Recomputes what the program reaches, its scopes and its top-level functions.
    fn refresh(&mut self) {
        self.jumps_out.clear();
        self.live = Live::new(self.w);
        let conts: DefSet = self.live.conts().iter().copied().collect();
        self.closed = if self.opts.cff {
            self.index.rebuild_closed(self.w, &conts)
        } else {
            self.index.rebuild(self.w, &conts);
            FxHashMap::default()
        };
    }

    /// Visits `roots` and what they reach along control flow, skipping what is `done`;
    /// whether anything changed.
    fn walk(&mut self, roots: Vec<Def>, done: &mut DefSet) -> Result<bool, Diagnostic> {
        let mut changed = false;
        let mut stack = roots;
        stack.reverse();
        let (mut next, mut targets) = (Vec::new(), Vec::new());
        while let Some(k) = stack.pop() {
            // What the round's rewrites left dead since it was pushed is skipped: its
            // jump is no use the counts see (see `step`).
            if self.templates.contains(&k) || !self.live.contains(k) || !done.insert(k) {
                continue;
            }
            changed |= self.jump(k)?;
            self.control_successors(k, &mut next, &mut targets);
            stack.extend(next.drain(..).rev());
        }
        Ok(changed)
    }

    /// Where control goes from `k`, into `out` (empty): its callee or the targets of its
    /// branch, and the continuations it passes that are not functions (return points, loop
    /// exits). (`targets`: an empty work list.)
    fn control_successors(&self, k: Def, out: &mut Vec<Def>, targets: &mut Vec<Def>) {
        let Some((callee, args)) = self.w.body(k) else {
            return;
        };
        targets.push(callee);
        while let Some(t) = targets.pop() {
            match self.w.node(t) {
                Node::Cont => out.push(t),
                Node::Select => targets.extend_from_slice(&self.w.ops(t)[1..]),
                Node::Run | Node::Hlt => targets.push(self.w.ops(t)[0]),
                _ => {}
            }
        }
        for &a in args {
            if self.w.node(a) == Node::Cont && !is_function(self.w, a) {
                out.push(a);
            }
        }
    }

    /// Rewrites the jump of `k` until nothing applies; whether anything did. Every step
    /// but the reuse of a memoized specialization costs fuel, and a reuse leaves a jump
    /// with nothing left to specialize on, so this ends; the bound on steps without fuel is
    /// a safety net only. (A bound on all steps would stop half-way through a long
    /// unrolled loop, and the walk would then visit what the jump still passes.)
    fn jump(&mut self, k: Def) -> Result<bool, Diagnostic> {
        let mut changed = false;
        let mut free_steps = 0;
        while free_steps <= 64 {
            let fuel = self.fuel_left;
            if !self.step(k)? {
                break;
            }
            self.check_counts();
            changed = true;
            free_steps = if self.fuel_left == fuel {
                free_steps + 1
            } else {
                0
            };
        }
        self.settle();
        Ok(changed)
    }

    /// In debug builds and on small programs, that the use counts kept while rewriting
    /// are those of the program (they decide what is inlined).
    fn check_counts(&self) {
        // (While bodies are not made yet, what they will use is held: counted apart.)
        if cfg!(debug_assertions) && self.w.num_defs() <= 4000 && self.families.is_empty() {
            if let Err((d, kept, found)) = self.live.check(self.w) {
                panic!("use count of {d:?} is {kept}, the live program has {found}");
            }
        }
    }

    /// One rewrite of the jump of `k`, if one applies.
    fn step(&mut self, k: Def) -> Result<bool, Diagnostic> {
        let Some((callee, args)) = self.w.body(k).map(|(c, a)| (c, a.to_vec())) else {
            return Ok(false);
        };
        let (target, forced) = match self.w.node(callee) {
            Node::Run => (self.w.ops(callee)[0], true),
            _ => (callee, false),
        };
        if let Some(&(family, block)) = self.deferred.get(&target) {
            if !forced && self.takes_deferred(k, target, family, block) {
                self.inline_deferred(k, target, &args, family, block);
                return Ok(true);
            }
            self.settle();
        }
        if self.w.node(target) != Node::Cont || self.w.body(target).is_none() {
            return Ok(false);
        }
        if self.opts.specialize && (forced || self.filter_holds(target, &args)) {
            let key_args = self.substituted(&args, |_, _| true);
            // Specializing on nothing (only `mem` or `hlt` arguments) gains nothing.
            if key_args.iter().any(Option::is_some) {
                if self.jump_to_clone(k, target, &args, key_args)? {
                    self.stats.specialized += 1;
                }
                return Ok(true);
            }
        }
        // The counts below must see every body.
        self.settle();
        // Inlining rewrites `target`'s scope in place: only sound where `k`'s jump is its
        // one use, so `k` must be live (a dead jump is not counted, and live code may
        // still use `target` and its scope as they are).
        let once = self.live.uses(target) == 1
            && self.live.contains(k)
            && self.w.ops(k).contains(&target)
            && !self.w.is_external(target)
            && target != k;
        if self.opts.inline_once && once {
            self.inline(k, target, &args);
            return Ok(true);
        }
        if !self.opts.cff || self.w.is_external(target) {
            return Ok(false);
        }
        let key_args = self.substituted(&args, |w, a| w.node(a) == Node::Cont);
        if !key_args.iter().any(Option::is_some) {
            return Ok(false);
        }
        if !self.is_closed(target) {
            // Only small local continuations (loops, join points): specializing a
            // large region copies it, and the copies nest.
            if self.cff_count.get(&target).copied().unwrap_or(0) < CFF_LIMIT
                && self.index.scope_at_most(target, CFF_MAX_SCOPE)
            {
                if self.jump_to_clone(k, target, &args, key_args)? {
                    *self.cff_count.entry(target).or_default() += 1;
                    self.stats.cff += 1;
                }
                return Ok(true);
            }
        } else if args.iter().any(|&a| self.jumps_out(a)) && self.nesting(k, target) < CFF_LIMIT {
            // A function passed a closure that jumps out of the code around it: specialized
            // on it at every call site (as Thorin's control-flow lowering does for every
            // closure), so that those jumps stay inside one function. Only a recursion that
            // passes a new closure each time is bounded.
            if self.jump_to_clone(k, target, &args, key_args)? {
                self.stats.cff += 1;
            }
            return Ok(true);
        }
        Ok(false)
    }

    /// How many of the specializations that made `k`, and the sites that made those, back
    /// to the original code, were specializations of `target`.
    fn nesting(&self, k: Def, target: Def) -> u32 {
        let mut n = 0;
        let mut at = k;
        while let Some(&(site, callee, _)) = self.origin.get(&at) {
            n += u32::from(callee == target);
            at = site;
        }
        n
    }

    /// Whether continuation `k` uses no parameter of another continuation.
    fn is_closed(&self, k: Def) -> bool {
        self.closed.get(&k).copied().unwrap_or(true)
    }

    /// Whether `a` is a closure that jumps to a block or return point of the code around
    /// it (`break`, `continue`, `return` inside the closure): native code cannot convert
    /// it, so a function it is passed to is specialized on it (memoized per round).
    fn jumps_out(&mut self, a: Def) -> bool {
        if self.w.node(a) != Node::Cont
            || self.is_closed(a)
            || !is_function_type(self.w, self.w.type_of(a))
        {
            return false;
        }
        if let Some(&j) = self.jumps_out.get(&a) {
            return j;
        }
        let scope = self.index.scope(a);
        let mut out = false;
        let w = &*self.w;
        // A block of the code around, or a return point it was given.
        let is_point = |d: Def| is_point_type(w, w.type_of(d));
        for &m in &scope {
            let (conts, params) = self.index.cache().direct_uses(w, m);
            out = conts
                .iter()
                .any(|&c| !scope.contains(&c) && !self.is_closed(c) && is_point(c))
                || params
                    .iter()
                    .any(|&p| !scope.contains(&w.ops(p)[0]) && is_point(p));
            if out {
                break;
            }
        }
        self.jumps_out.insert(a, out);
        out
    }

    /// The arguments to substitute: those `pick` accepts, never the `mem` token or an
    /// argument marked `hlt`.
    fn substituted(&self, args: &[Def], pick: impl Fn(&World, Def) -> bool) -> Vec<Option<Def>> {
        args.iter()
            .map(|&a| {
                let t = self.w.type_of(a);
                let skip = matches!(self.w.kind(t), TypeKind::Mem) || self.w.node(a) == Node::Hlt;
                (!skip && pick(self.w, a)).then_some(a)
            })
            .collect()
    }

    /// Beta reduction: `k`'s jump to `target` becomes `target`'s body with the arguments
    /// substituted.
    ///
    /// `target` is used only here, so its scope is rewritten in place instead of cloned:
    /// whatever refers to a member of the scope is a member itself, and a stale index
    /// edge only adds members that do not use `target`'s parameters (left as they are).
    /// Clones made earlier from members use `target`'s parameters too, so they are members
    /// and stay right for the memo; `target` itself, if it is a memoized specialization,
    /// is forgotten (another jump with the same key would find it rewritten for this
    /// one). Inlining costs no fuel: each one removes a continuation and makes none.
    fn inline(&mut self, k: Def, target: Def, args: &[Def]) {
        self.stats.inlined += 1;
        if let Some(key) = self.memo_key.remove(&target) {
            self.memo.remove(&key);
        }
        let scope = self.index.scope(target);
        let mut rw = Rewriter::with_cache(self.index.cache());
        for (i, &a) in args.iter().enumerate() {
            let p = self.w.param(target, i);
            rw.map(p, a);
        }
        let mut changed = Vec::new();
        for &m in scope.iter().skip(1) {
            let old = self.w.ops(m).to_vec();
            rw.rewrite_cont_into(self.w, m, m);
            if self.w.ops(m) != old.as_slice() {
                changed.push((m, old));
            }
        }
        let body = self.w.body(target).map(|(c, a)| (c, a.to_vec()));
        let body = body.map(|(c, a)| {
            let c = rw.rewrite(self.w, c);
            let a: Vec<Def> = a.iter().map(|&x| rw.rewrite(self.w, x)).collect();
            (c, a)
        });
        drop(rw);
        self.live.recount_all(self.w, &changed);
        for (m, _) in changed {
            self.index.add(self.w, m);
        }
        // Where `target` is a function, the continuations of its body expand the call at
        // `k`, as a clone's do (those that expand a call inside `target` already keep that
        // one). A block or return point is no call: the code after a call that returns into
        // an inlined function's body is not inside that function.
        let (at, parent) = self.w.jump_place(k);
        let call = self.w.expansion(target).is_none() && is_function(self.w, target);
        if let Some(at) = at.filter(|_| call) {
            let mut e = None;
            for &m in scope.iter().skip(1) {
                if self.w.expansion(m).is_none() {
                    let e = *e.get_or_insert_with(|| self.w.new_expansion(at, parent));
                    self.w.set_expansion(m, e);
                }
            }
        }
        // `k`'s jump is `target`'s now: calls in it are at `target`'s place, and inside
        // the specialization that made `target` (a recursion whose clones are each inlined
        // into the same caller is still a chain of clones, each inside the one before).
        match self.origin.get(&target) {
            Some(&(_, callee, id)) => self.took_over.insert(k, (callee, id)),
            None => self.took_over.remove(&k),
        };
        self.w.take_jump_place(target, k);
        match body {
            Some((callee, rest)) => self.live.set_body(self.w, k, callee, &rest),
            None => self.live.clear_body(self.w, k),
        }
        self.index.add(self.w, k);
    }

    /// Specializes `target` for `args`, remembering where the new continuations came from.
    fn clone_of(&mut self, site: Def, target: Def, args: &[Option<Def>], scope: &DefSet) -> Def {
        let name = self.w.name(target).unwrap_or("k").to_string();
        let before = self.w.num_defs();
        let c = specialize_in(self.w, target, args, &name, scope, self.index.cache());
        self.made(site, target, args, before, scope);
        c
    }

    /// Specializes `target` for `args` (all of the jump's, `key` those substituted)
    /// straight into the jump of `k`, where its clone would be used only there and so
    /// inlined into it at once (the next step): the same code, without making the clone
    /// and rewriting it again. Not where the clone could be a loop
    /// ([`Specializer::may_close_loop`]) or `k` is in `target`'s scope; whether it did.
    fn specialize_into(
        &mut self,
        k: Def,
        target: Def,
        args: &[Def],
        key: &[Option<Def>],
        scope: &mut DefSet,
    ) -> Result<bool, Diagnostic> {
        // (What the look for a loop makes counts as made here.)
        let before = self.w.num_defs();
        if scope.contains(&k) || self.may_close_loop(target, args, key, scope) {
            return Ok(false);
        }
        self.spend_fuel(k, target)?;
        let out = substitute_body(self.w, target, args, scope, &mut self.index, true);
        let (body, from) = (out.body, out.from);
        let expansion = self.made(k, target, key, before, scope);
        let id = u32::try_from(self.growth.len() - 1).expect("fewer specializations than fuel");
        if !out.deferred.is_empty() {
            let family = self.families.len();
            for &(block, clone) in &out.deferred {
                self.deferred.insert(clone, (family, block));
                self.deferred_order.push(clone);
            }
            self.live.hold(self.w, args);
            self.hide(args, &[target], true);
            self.families.push(Family {
                deferral: Deferral {
                    map: out.map,
                    // (Taken: the caller is done with it once this specializes.)
                    scope: std::mem::take(scope),
                    entry: target,
                },
                site: k,
                target,
                id,
                expansion,
                values: args.to_vec(),
                consumed: out.taken.into_iter().collect(),
                pending: out.deferred.len(),
                released: false,
            });
        }
        if self.growth.last().is_some_and(Growth::runaway) {
            return Err(self.out_of_fuel(k, target));
        }
        self.take_jump(k, body, from, expansion, target, id);
        Ok(true)
    }

    /// Gives `k` the body that specialization number `id` of `target` (in `expansion`) made
    /// from the jump of `from` (`target`, or a block of its code), as inlining its clone
    /// would: the places that jump would have had in the clone, and the counts.
    fn take_jump(
        &mut self,
        k: Def,
        body: Option<(Def, Vec<Def>)>,
        from: Def,
        expansion: Option<Expansion>,
        target: Def,
        id: u32,
    ) {
        let place = match self.w.taken_jump_place(from) {
            Some(j) => Some(j),
            None => (self.w.loc(from)).map(|at| (at, expansion.or(self.w.expansion(from)))),
        };
        self.w.set_jump_place(k, place);
        self.took_over.insert(k, (target, id));
        match body {
            Some((callee, rest)) => self.live.set_body(self.w, k, callee, &rest),
            None => self.live.clear_body(self.w, k),
        }
        self.index.add(self.w, k);
        self.stats.inlined += 1;
    }

    /// Whether the jump of `k` may take the body of `clone` (a clone without a body of
    /// `block`, of `family`): `k`'s jump is its one use, no other code of the callee refers
    /// to `block` (the code whose bodies were written into the jump aside), and no body not
    /// yet made could refer to `clone`.
    fn takes_deferred(&self, k: Def, clone: Def, family: usize, block: Def) -> bool {
        // (`k` jumps to `clone`, which has no body: `k` is another continuation.)
        if self.live.uses(clone) != 1 || !self.live.contains(k) {
            return false;
        }
        let consumed = &self.families[family].consumed;
        if !self.index.referrers(block).all(|r| consumed.contains(&r)) {
            return false;
        }
        !self.hidden.conts.contains_key(&clone)
    }

    /// Whether a body not yet made could use a parameter of a continuation of `scope`, or
    /// refer to a continuation of it other than its entry (where that code would be a
    /// member of the scope, which the index does not know). A family of the entry itself
    /// has the entry's parameters substituted.
    fn hides_members(&self, scope: &DefSet) -> bool {
        let Hidden {
            params_of,
            conts,
            callees,
        } = &self.hidden;
        let entry = scope[0];
        scope.iter().any(|m| {
            params_of.contains_key(m)
                || (*m != entry && (conts.contains_key(m) || callees.contains_key(m)))
        })
    }

    /// The jump of `k` to `clone` (see [`Specializer::takes_deferred`]) becomes the body of
    /// `block` with `args` and the family's substitution: what inlining the clone would
    /// give, made once.
    fn inline_deferred(&mut self, k: Def, clone: Def, args: &[Def], family: usize, block: Def) {
        self.deferred.remove(&clone);
        let before = self.w.num_defs();
        let f = &mut self.families[family];
        f.pending -= 1;
        let out = substitute_deferred(self.w, &mut f.deferral, block, args, &mut self.index);
        f.pending += out.deferred.len();
        f.consumed.extend(out.taken.iter().copied());
        f.values.extend_from_slice(args);
        self.live.hold(self.w, args);
        self.hide(args, &[], true);
        for &(b, c) in &out.deferred {
            self.deferred.insert(c, (family, b));
            self.deferred_order.push(c);
        }
        self.adopt(family, before);
        let f = &self.families[family];
        let (expansion, target, id) = (f.expansion, f.target, f.id);
        self.take_jump(k, out.body, out.from, expansion, target, id);
        // The clone is dead now, and nothing could make it live again: its body is no
        // code (every continuation has a body or is an import).
        let (ty, params) = (self.w.type_of(clone), self.w.params(clone));
        let nothing = self.w.bottom(ty);
        self.w.set_body(clone, nothing, &params);
        // With every body of the family made, what they use is counted where it is used.
        if self.families[family].pending == 0 {
            self.release(family);
        }
    }

    /// Counts (or with `add` false, drops) what `values` reach and the callees `entries`
    /// as used by bodies not yet made.
    fn hide(&mut self, values: &[Def], entries: &[Def], add: bool) {
        let (w, cache) = (&*self.w, self.index.cache());
        let Hidden {
            params_of,
            conts,
            callees,
        } = &mut self.hidden;
        let count = |map: &mut FxHashMap<Def, u32>, d: Def| {
            if add {
                *map.entry(d).or_default() += 1;
            } else if let Some(n) = map.get_mut(&d) {
                *n -= 1;
                if *n == 0 {
                    map.remove(&d);
                }
            }
        };
        for &v in values {
            for &e in cache.of(w, v) {
                match w.node(e) {
                    Node::Param(_) => count(params_of, w.ops(e)[0]),
                    _ => count(conts, e),
                }
            }
        }
        for &e in entries {
            count(callees, e);
        }
    }

    /// Stops counting what `family`'s bodies not yet made use (they are all made).
    fn release(&mut self, family: usize) {
        let f = &mut self.families[family];
        if std::mem::replace(&mut f.released, true) {
            return;
        }
        let (values, entry) = (std::mem::take(&mut f.values), f.deferral.entry);
        self.hide(&values, &[entry], false);
        self.live.release_held(self.w, &values);
    }

    /// Makes the bodies of the clones that have none (see [`Family`]); whether there were
    /// any.
    fn settle(&mut self) -> bool {
        if self.families.is_empty() {
            return false;
        }
        let order = std::mem::take(&mut self.deferred_order);
        for clone in order {
            let Some((family, block)) = self.deferred.remove(&clone) else {
                continue;
            };
            let before = self.w.num_defs();
            let old = self.w.ops(clone).to_vec();
            let d = &mut self.families[family].deferral;
            materialize_deferred(self.w, d, block, clone, self.index.cache());
            // (Making the body gave the clone the block's places: the expansion is the
            // specialization's, as for every continuation it made.)
            if let Some(e) = self.families[family].expansion {
                self.w.set_expansion(clone, e);
            }
            self.adopt(family, before);
            self.index.add(self.w, clone);
            self.live.recount(self.w, clone, &old);
        }
        for family in 0..self.families.len() {
            self.release(family);
        }
        self.families.clear();
        true
    }

    /// Records the continuations made from `before` on for `family`'s specialization, as
    /// [`Specializer::made`] records those it made at first.
    fn adopt(&mut self, family: usize, before: usize) {
        let f = &self.families[family];
        let (site, target, id, expansion) = (f.site, f.target, f.id, f.expansion);
        self.growth[id as usize].made += self.w.num_defs() - before;
        self.record_made(before, site, target, id, expansion);
    }

    /// Gives the continuations made from `before` on their expansion and origin (the
    /// specialization of `target` at `site`, number `id`), and indexes them.
    fn record_made(
        &mut self,
        before: usize,
        site: Def,
        target: Def,
        id: u32,
        expansion: Option<Expansion>,
    ) {
        for d in self.w.defs_from(before).collect::<Vec<_>>() {
            if self.w.node(d) == Node::Cont {
                if let Some(e) = expansion {
                    self.w.set_expansion(d, e);
                }
                self.origin.insert(d, (site, target, id));
                self.index.add(self.w, d);
            }
        }
    }

    /// Whether a jump inside `target`'s scope back to `target` could pass the very values
    /// substituted for `args` (`key`), where [`specialize_in`] would make it a jump to the
    /// clone (a loop). Each such jump's substituted arguments are rewritten with only
    /// `target`'s parameters replaced: the clone's own rewriting differs only in giving the
    /// scope's other continuations new parameters, which no value of the call can be, so
    /// an argument that differs here differs there (`unroll`'s next counter does).
    fn may_close_loop(
        &mut self,
        target: Def,
        args: &[Def],
        key: &[Option<Def>],
        scope: &DefSet,
    ) -> bool {
        let back: Vec<Vec<Def>> = (scope.iter())
            .filter_map(|&m| {
                self.w
                    .body(m)
                    .filter(|(c, _)| *c == target)
                    .map(|(_, a)| a.to_vec())
            })
            .collect();
        if back.is_empty() {
            return false;
        }
        let mut rw = Rewriter::with_cache(self.index.cache());
        for (i, &a) in args.iter().enumerate() {
            let p = self.w.param(target, i);
            rw.map(p, a);
        }
        back.iter().any(|a| {
            a.len() == key.len()
                && key
                    .iter()
                    .zip(a)
                    .all(|(s, &x)| s.is_none_or(|v| rw.rewrite(self.w, x) == v))
        })
    }

    /// Records what specializing `target` at `site` for `args` made (the definitions from
    /// `before` on): its growth, its continuations' origin and expansion (given back), and
    /// `scope` as templates.
    fn made(
        &mut self,
        site: Def,
        target: Def,
        args: &[Option<Def>],
        before: usize,
        scope: &DefSet,
    ) -> Option<durin_ir::Expansion> {
        // A large clone costs more fuel: specializing on values that are not constant can
        // nest each clone in the next, and copying them all again doubles the work.
        let made = self.w.num_defs() - before;
        let extra = (made / FUEL_DEFS) as u64;
        // Whether the substituted values are all unknown: at least one, none constant, and
        // no function among the arguments (return points aside).
        let mut values = 0;
        let mut unknown = true;
        for &a in args.iter().flatten() {
            let t = self.w.type_of(a);
            if is_point_type(self.w, t) {
                continue;
            }
            values += 1;
            unknown &= self.w.has_params(a) && !matches!(self.w.kind(t), TypeKind::Cont(_));
        }
        let unknown = unknown && values > 0;
        // Inside a clone of the same callee: a streak of clones that each copy half as much
        // again as the one they are in (the clone is inside what it copies), and one of
        // clones on unknown values.
        let made_in = (self.took_over.get(&site).copied())
            .or_else(|| self.origin.get(&site).map(|&(_, t, id)| (t, id)));
        let (streak, blind, chain) = match made_in {
            Some((t, id)) if t == target => {
                let g = self.growth[id as usize];
                (
                    // (Written into its call, a specialization may make nothing new: no
                    // growth.)
                    if made > 0 && 2 * made >= 3 * g.made {
                        g.streak + 1
                    } else {
                        0
                    },
                    if unknown { g.blind + 1 } else { 0 },
                    g.chain + 1,
                )
            }
            _ => (0, 0, 0),
        };
        let id = u32::try_from(self.growth.len()).expect("fewer specializations than fuel");
        self.growth.push(Growth {
            made,
            streak,
            blind,
            chain,
        });
        self.fuel_left = self.fuel_left.saturating_sub(extra);
        // The originals are templates now: their jumps are specialized in the clones, not
        // in them (specializing inside a template would be copied into every clone).
        self.templates.extend(scope.iter().copied());
        // The clones expand the call at `site`, inside the expansion the site is in.
        let (at, parent) = self.w.jump_place(site);
        let expansion = at.map(|at| self.w.new_expansion(at, parent)).or(parent);
        self.record_made(before, site, target, id, expansion);
        expansion
    }

    /// One unit of fuel for specializing `target` at `site`, or the fuel diagnostic (also
    /// when the program has grown past [`MAX_DEFS`]).
    fn spend_fuel(&mut self, site: Def, target: Def) -> Result<(), Diagnostic> {
        if self.fuel_left == 0 || self.w.num_defs() > MAX_DEFS {
            return Err(self.out_of_fuel(site, target));
        }
        self.fuel_left -= 1;
        Ok(())
    }

    /// Makes `k` jump to the (memoized) specialization of `target` for `key_args`, passing
    /// the arguments that are not substituted; whether the specialization is new.
    fn jump_to_clone(
        &mut self,
        k: Def,
        target: Def,
        args: &[Def],
        key_args: Vec<Option<Def>>,
    ) -> Result<bool, Diagnostic> {
        let key = (target, key_args);
        let (clone, new) = match self.memo.get(&key).copied() {
            Some(c) => {
                self.stats.reused += 1;
                (c, false)
            }
            None => {
                // The scope both ways of specializing copy (computed once).
                let mut scope = self.index.scope(target);
                if self.hides_members(&scope) && self.settle() {
                    scope = self.index.scope(target);
                }
                if self.opts.inline_once
                    && self.specialize_into(k, target, args, &key.1, &mut scope)?
                {
                    return Ok(true);
                }
                if self.settle() {
                    scope = self.index.scope(target);
                }
                self.spend_fuel(k, target)?;
                let c = self.clone_of(k, target, &key.1, &scope);
                if self.growth.last().is_some_and(Growth::runaway) {
                    return Err(self.out_of_fuel(k, target));
                }
                self.memo.insert(key.clone(), c);
                self.memo_key.insert(c, key.clone());
                (c, true)
            }
        };
        let rest: Vec<Def> = args
            .iter()
            .zip(&key.1)
            .filter(|(_, s)| s.is_none())
            .map(|(&a, _)| a)
            .collect();
        self.live.set_body(self.w, k, clone, &rest);
        self.index.add(self.w, k);
        Ok(new)
    }

    /// Whether every filter of `target` folds to `true` with its parameters replaced by
    /// `args`.
    fn filter_holds(&mut self, target: Def, args: &[Def]) -> bool {
        let filters = self.w.filters(target).to_vec();
        // Most continuations have no filter (all `false`): decide without rewriting.
        if filters.is_empty() || filters.iter().any(|&f| self.w.lit_bits(f) == Some(0)) {
            return false;
        }
        if filters.iter().all(|&f| self.w.lit_bits(f) == Some(1)) {
            return true;
        }
        let mut rw = Rewriter::with_cache(self.index.cache());
        for (i, &a) in args.iter().enumerate() {
            let p = self.w.param(target, i);
            rw.map(p, a);
        }
        filters
            .iter()
            .all(|&f| rw.rewrite(self.w, f) == self.w.lit_bool(true))
    }

    fn out_of_fuel(&self, site: Def, target: Def) -> Diagnostic {
        let name = |d: Def| self.w.name(d).unwrap_or("a continuation").to_string();
        let last = self.growth.last();
        let what = if last.is_some_and(|g| g.blind >= RUNAWAY_LIMIT) {
            format!(
                "room (`{}` was specialized {RUNAWAY_LIMIT} times in a row, each inside the \
                 one before, on arguments none of which is constant)",
                name(target)
            )
        } else if last.is_some_and(|g| g.chain >= CHAIN_LIMIT) {
            format!(
                "room (`{}` was specialized {CHAIN_LIMIT} times in a row, each inside the \
                 one before: a recursion on constants that does not end, or one too long to \
                 unroll)",
                name(target)
            )
        } else if last.is_some_and(|g| g.streak >= GROWTH_LIMIT) {
            format!(
                "room (each specialization of `{}` copies the one it is in, {GROWTH_LIMIT} \
                 times in a row: the program grows geometrically)",
                name(target)
            )
        } else if self.fuel_left == 0 {
            format!(
                "fuel ({}: one per specialization, more for large ones)",
                self.opts.fuel
            )
        } else {
            format!("room (the program grew past {MAX_DEFS} definitions)")
        };
        let mut err = Diagnostic::error_at(
            self.w.loc(site),
            format!(
                "partial evaluation ran out of {what} specializing `{}`",
                name(target)
            ),
        )
        .with_note_at(
            None,
            if last.is_some_and(|g| g.chain >= CHAIN_LIMIT && g.blind < RUNAWAY_LIMIT) {
                "a function marked `@` (or with a filter that keeps holding) calls itself on \
                 constants that do not reach the end of the recursion; bound it, or mark the \
                 argument with `$` to keep a loop"
            } else if last.is_some_and(|g| g.blind > 0 || g.streak >= GROWTH_LIMIT) {
                "a function marked `@` (or with a filter that keeps holding) calls itself on \
                 arguments that never become constant; mark the argument with `$` or weaken \
                 the filter"
            } else {
                // The last specialization substituted a constant: code that ends, too big.
                "each iteration of an unrolled loop (`unroll`, or a function marked `@` that \
                 calls itself on constants) is a copy of its body, and nested ones multiply: \
                 keep the outer loops as loops (`range`, or `$` on the counter)"
            },
        );
        // The chain of specializations back to the original code, with repeats folded.
        let mut chain: Vec<(String, Option<Span>, usize)> = Vec::new();
        let mut at = site;
        let mut seen = DefSet::default();
        while let Some(&(from, callee, _)) = self.origin.get(&at) {
            if !seen.insert(from) {
                break;
            }
            let (n, loc) = (name(callee), self.w.loc(from));
            match chain.last_mut() {
                Some(last) if last.0 == n && last.1 == loc => last.2 += 1,
                _ => chain.push((n, loc, 1)),
            }
            at = from;
        }
        let shown: Vec<&(String, Option<Span>, usize)> = if chain.len() > 6 {
            chain[..3].iter().chain(&chain[chain.len() - 3..]).collect()
        } else {
            chain.iter().collect()
        };
        for (n, loc, times) in shown {
            let note = if *times > 1 {
                format!("reached by specializing `{n}` here ({times} times in a row)")
            } else {
                format!("reached by specializing `{n}` here")
            };
            err = err.with_note_at(*loc, note);
        }
        err
    }
}

/// The pass `pe`.
pub(crate) struct Pe;

impl Pass for Pe {
    fn name(&self) -> &'static str {
        "pe"
    }

    fn description(&self) -> &'static str {
        "partial evaluation: specialize calls whose filter holds, inline continuations used once, and specialize local continuations on the continuations they are passed"
    }

    fn run(&self, w: &mut World, cx: &mut PassContext<'_>) -> Result<(), Diagnostic> {
        let fuel = cx.config.fuel;
        // Kernels are shared before their first specialization only.
        let share = !cx.findings.kernels_shared;
        cx.findings.kernels_shared = true;
        run(
            w,
            Options {
                fuel,
                share,
                ..Options::default()
            },
        )
        .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use durin_ir::interp::{self, Limits, Value};

    /// `@main(x)` returns `2 x` through `@r`, a return point that `@f`, inlined into `@c`,
    /// passes to `@double`; its other arm `@t` jumps to `@r` too and dies when `@f`'s
    /// branch folds. The walk starts at `@f` and reaches `@c` from `@r`, so `@t` is still
    /// on its stack when it dies.
    const STALE: &str = "
extern cont @main(%m: mem, %x: i32, %ret: cn(mem, i32)) {
    jump @c(%m, %x, %ret)
}
extern cont @double(%dm: mem, %dx: i32, %k: cn(mem, i32)) {
    %y: i32 = mul(%dx, 2:i32)
    jump %k(%dm, %y)
}
cont @c(%cm: mem, %cx: i32, %cr: cn(mem, i32)) {
    jump @f(%cm, false, %cx, %cr)
}
cont @f(%fm: mem, %b: bool, %fx: i32, %fr: cn(mem, i32)) {
    %s: cn(mem) = select(%b, @t, @e)
    jump %s(%fm)
}
cont @t(%tm: mem) {
    jump @r(%tm, %fx)
}
cont @e(%em: mem) {
    jump @double(%em, %fx, @r)
}
cont @r(%rm: mem, %v: i32) {
    %neg: bool = lt(%v, 0:i32)
    %s2: cn(mem) = select(%neg, @again, @give)
    jump %s2(%rm)
}
cont @again(%am: mem) {
    jump @c(%am, %fx, %fr)
}
cont @give(%gm: mem) {
    jump %fr(%gm, %v)
}
";

    fn named(w: &World, name: &str) -> Def {
        w.defs().find(|&d| w.name(d) == Some(name)).unwrap()
    }

    fn main_of(w: &World, x: i32) -> Vec<u64> {
        let out = interp::run_main(
            w,
            named(w, "main"),
            &[Value::Bits(x as u32 as u64)],
            Limits::default(),
            &mut Vec::new(),
        )
        .unwrap();
        out.into_iter()
            .map(|(_, v)| match v {
                Value::Bits(b) => b,
                _ => panic!("not a number"),
            })
            .collect()
    }

    /// A continuation that the round's rewrites left dead after the walk pushed it is not
    /// inlined into: its jump's callee `@r` is still used by live code, which the in-place
    /// rewrite of `@r`'s scope (`@give` returning `@t`'s argument) would change.
    #[test]
    fn no_inlining_into_code_left_dead_on_the_walk() {
        let mut w = durin_ir::text::parse(STALE).unwrap();
        assert_eq!(main_of(&w, 21), [42]);
        let f = named(&w, "f");
        let mut pe = Specializer::new(&mut w, Options::inline_only(1000));
        pe.refresh();
        let changed = pe.walk(vec![f], &mut DefSet::default()).unwrap();
        assert!(changed && pe.stats.inlined >= 2, "{:?}", pe.stats);
        drop(pe);
        assert_eq!(main_of(&w, 21), [42]);
        assert_eq!(main_of(&w, 5), [10]);
    }
}
