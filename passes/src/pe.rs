//! The partial evaluator, with Artic/Thorin semantics.
//!
//! A jump `f(args)` to a continuation `f` with a body is *specialized* when `f`'s filter
//! holds for `args` (every parameter's filter, with the parameters replaced by the
//! arguments, folds to `true`: `fn @f` always, `fn @(?n) f` when `n` is a constant), or
//! when the callee is marked `run` (`@f(x)` in the source). Specializing clones `f`'s scope
//! with every argument but the `mem` token (and arguments marked `hlt`, `$e` in the
//! source) substituted; the clones are memoized by callee and arguments, so a recursion
//! that comes back to the same arguments becomes a loop. Substitution rebuilds defs, and
//! the world's normalization folds what became constant, branches included.
//!
//! The same rounds also inline continuations used exactly once, as the callee of one jump
//! (beta reduction), which is how closures passed to a specialized function disappear, and,
//! with [`Options::cff`], specialize jumps to inner continuations on the continuations they
//! are passed (the return point of a local loop), so that what remains is first-order.
//!
//! Each specialization or inlining costs one unit of fuel. Running out is an error that
//! names the call site and the chain of specializations that led to it.

use crate::rewrite::{closed_conts, specialize_in, DefSet, ScopeIndex};
use crate::PassError;
use durin_ir::{Def, Loc, Node, TypeKind, World};
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
    /// Specializations and inlinings allowed before giving up.
    pub fuel: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            specialize: true,
            inline_once: true,
            cff: true,
            fuel: 100_000,
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

impl Stats {
    /// Whether anything changed.
    pub fn changed(&self) -> bool {
        self.specialized + self.reused + self.inlined + self.cff > 0
    }
}

type Key = (Def, Vec<Option<Def>>);

struct Pe<'w> {
    w: &'w mut World,
    opts: Options,
    fuel_left: u64,
    memo: FxHashMap<Key, Def>,
    /// For each continuation made by cloning: the call site whose specialization made it.
    origin: FxHashMap<Def, (Def, Def)>,
    /// Control-flow specializations made per callee (bounded: see [`CFF_LIMIT`]).
    cff_count: FxHashMap<Def, u32>,
    /// Which continuations are closed (top-level functions).
    closed: FxHashMap<Def, bool>,
    /// Continuations whose scope has been cloned: their own jumps are left alone.
    templates: DefSet,
    /// Scopes, kept up to date as continuations are made and rewritten.
    index: ScopeIndex,
    stats: Stats,
}

/// At most this many control-flow specializations of one continuation: a non-tail
/// recursion passes a new return point each time, and stays higher-order instead of
/// unrolling until the fuel runs out.
const CFF_LIMIT: u32 = 16;

/// Control-flow specialization copies the callee's scope: only scopes of at most this many
/// continuations.
const CFF_MAX_SCOPE: usize = 32;

/// Runs the partial evaluator to a fixed point.
pub fn run(w: &mut World, opts: Options) -> Result<Stats, PassError> {
    let mut pe = Pe {
        w,
        opts,
        fuel_left: opts.fuel,
        memo: FxHashMap::default(),
        origin: FxHashMap::default(),
        cff_count: FxHashMap::default(),
        closed: FxHashMap::default(),
        templates: DefSet::default(),
        index: ScopeIndex::default(),
        stats: Stats::default(),
    };
    loop {
        pe.stats.rounds += 1;
        if !pe.round()? {
            return Ok(pe.stats);
        }
    }
}

/// The continuations reachable from the externals, and how many operand slots of reachable
/// defs refer to each def.
pub(crate) fn reachable(w: &World) -> (DefSet, FxHashMap<Def, u32>) {
    let mut conts = DefSet::default();
    let mut uses: FxHashMap<Def, u32> = FxHashMap::default();
    let mut seen = DefSet::default();
    let mut stack: Vec<Def> = w.externals().collect();
    for &e in &stack {
        seen.insert(e);
    }
    while let Some(d) = stack.pop() {
        match w.node(d) {
            Node::Cont => {
                conts.insert(d);
            }
            // A parameter's operand is its continuation: not a use of it.
            Node::Param(_) => continue,
            _ => {}
        }
        for &o in w.ops(d) {
            *uses.entry(o).or_default() += 1;
            if seen.insert(o) {
                stack.push(o);
            }
        }
    }
    (conts, uses)
}

impl Pe<'_> {
    /// One pass over the reachable program; whether it changed anything.
    fn round(&mut self) -> Result<bool, PassError> {
        let (conts, uses) = reachable(self.w);
        self.index = ScopeIndex::new(self.w, &conts);
        self.closed = if self.opts.cff {
            closed_conts(self.w, &conts)
        } else {
            FxHashMap::default()
        };
        let mut changed = false;
        let mut inlined = DefSet::default();
        for &k in &conts {
            // A continuation inlined this round is dead: its body belongs to the caller now.
            if inlined.contains(&k) || self.templates.contains(&k) {
                continue;
            }
            // Follow the chain of rewrites of this one jump.
            for _ in 0..64 {
                let Some((callee, args)) = self.w.body(k).map(|(c, a)| (c, a.to_vec())) else {
                    break;
                };
                let (target, forced) = match self.w.node(callee) {
                    Node::Run => (self.w.ops(callee)[0], true),
                    _ => (callee, false),
                };
                if self.w.node(target) != Node::Cont || self.w.body(target).is_none() {
                    break;
                }
                if self.opts.specialize && (forced || self.filter_holds(target, &args)) {
                    let key_args = self.substituted(&args, |_, _| true);
                    // Specializing on nothing (only `mem` or `hlt` arguments) gains nothing.
                    if key_args.iter().any(Option::is_some) {
                        if self.jump_to_clone(k, target, &args, key_args)? {
                            self.stats.specialized += 1;
                        }
                        changed = true;
                        continue;
                    }
                }
                let once = uses.get(&target).copied() == Some(1)
                    && self.w.ops(k).contains(&target)
                    && !self.w.is_external(target)
                    && target != k
                    && conts.contains(&target)
                    && !inlined.contains(&target);
                if self.opts.inline_once && once {
                    self.inline(k, target, &args)?;
                    inlined.insert(target);
                    changed = true;
                    continue;
                }
                if self.opts.cff
                    && !self.w.is_external(target)
                    && self.cff_count.get(&target).copied().unwrap_or(0) < CFF_LIMIT
                    && !self.closed.get(&target).copied().unwrap_or(true)
                {
                    let key_args = self.substituted(&args, |w, a| w.node(a) == Node::Cont);
                    // Only small local continuations (loops, join points): specializing a
                    // large region copies it, and the copies nest.
                    if key_args.iter().any(Option::is_some)
                        && self.index.scope(target).len() <= CFF_MAX_SCOPE
                    {
                        if self.jump_to_clone(k, target, &args, key_args)? {
                            *self.cff_count.entry(target).or_default() += 1;
                            self.stats.cff += 1;
                        }
                        changed = true;
                        continue;
                    }
                }
                break;
            }
        }
        Ok(changed)
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
    fn inline(&mut self, k: Def, target: Def, args: &[Def]) -> Result<(), PassError> {
        self.spend_fuel(k, target)?;
        self.stats.inlined += 1;
        let all: Vec<Option<Def>> = args.iter().map(|&a| Some(a)).collect();
        let clone = self.clone_of(k, target, &all);
        match self.w.body(clone).map(|(c, a)| (c, a.to_vec())) {
            Some((callee, rest)) => self.w.set_body(k, callee, &rest),
            None => self.w.clear_body(k),
        }
        self.index.add(self.w, k);
        Ok(())
    }

    /// Specializes `target` for `args`, remembering where the new continuations came from.
    fn clone_of(&mut self, site: Def, target: Def, args: &[Option<Def>]) -> Def {
        let name = self.w.name(target).unwrap_or("k").to_string();
        let before = self.w.num_defs();
        let scope = self.index.scope(target);
        let c = specialize_in(self.w, target, args, &name, &scope);
        // The originals are templates now: their jumps are specialized in the clones, not
        // in them (specializing inside a template would be copied into every clone).
        self.templates.extend(scope);
        for d in self.w.defs_from(before).collect::<Vec<_>>() {
            if self.w.node(d) == Node::Cont {
                self.origin.insert(d, (site, target));
                self.index.add(self.w, d);
            }
        }
        c
    }

    /// One unit of fuel for specializing `target` at `site`, or the fuel diagnostic.
    fn spend_fuel(&mut self, site: Def, target: Def) -> Result<(), PassError> {
        if self.fuel_left == 0 {
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
    ) -> Result<bool, PassError> {
        let key = (target, key_args);
        let (clone, new) = match self.memo.get(&key) {
            Some(&c) => {
                self.stats.reused += 1;
                (c, false)
            }
            None => {
                self.spend_fuel(k, target)?;
                let c = self.clone_of(k, target, &key.1);
                self.memo.insert(key.clone(), c);
                (c, true)
            }
        };
        let rest: Vec<Def> = args
            .iter()
            .zip(&key.1)
            .filter(|(_, s)| s.is_none())
            .map(|(&a, _)| a)
            .collect();
        self.w.set_body(k, clone, &rest);
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
        let mut rw = crate::rewrite::Rewriter::new();
        for (i, &a) in args.iter().enumerate() {
            let p = self.w.param(target, i);
            rw.map(p, a);
        }
        filters
            .iter()
            .all(|&f| rw.rewrite(self.w, f) == self.w.lit_bool(true))
    }

    fn out_of_fuel(&self, site: Def, target: Def) -> PassError {
        let name = |d: Def| self.w.name(d).unwrap_or("a continuation").to_string();
        let mut err = PassError::new(
            format!(
                "partial evaluation ran out of fuel ({} specializations) specializing `{}`",
                self.opts.fuel,
                name(target)
            ),
            self.w.loc(site),
        )
        .with_note(
            "a function marked `@` (or with a filter that keeps holding) calls itself on \
             arguments that never become constant; mark the argument with `$` or weaken the \
             filter",
            None,
        );
        // The chain of specializations back to the original code, with repeats folded.
        let mut chain: Vec<(String, Option<Loc>, usize)> = Vec::new();
        let mut at = site;
        let mut seen = DefSet::default();
        while let Some(&(from, callee)) = self.origin.get(&at) {
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
        let shown: Vec<&(String, Option<Loc>, usize)> = if chain.len() > 6 {
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
            err = err.with_note(note, *loc);
        }
        err
    }
}
