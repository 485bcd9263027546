//! Function splitting: the outermost loops of a large function become functions of their
//! own, which the back end does not inline.
//!
//! Partial evaluation inlines a whole program's stages into one function: stincilla's
//! vcycle becomes one host function with hundreds of loops, one after another. Two things
//! follow for LLVM. Its loop passes update the dominator tree of the whole function at
//! each change to a loop, and in straight-line code a loop's exit dominates everything
//! after it, so their time grows with the number of loops times the size of the function
//! (vcycle's CUDA host code with four times the stages: 4.6 s instead of 0.6). And its
//! optimizer works on one function on one thread, while a module of many functions can be
//! optimized in parts at once (the LLVM back end does). Split into its loops, a function
//! is optimized in time proportional to its size, on every thread.
//!
//! A loop is split off when the function has at least [`Config::split_min_blocks`](crate::Config::split_min_blocks) blocks, the
//! loop has at most half of them (a loop that is the whole function stays: splitting it
//! would move the function, not divide it), and the loop is a single-entry, single-exit
//! region: every jump into it goes to its header,
//! by a direct jump, and every continuation it leaves to is one and the same (a block of
//! the function or its return point; blocks that use nothing of the function, such as an
//! unreachable `match` arm, are copied along), and no code after the loop uses a value of
//! the loop other than through that exit's parameters. The new function takes the
//! header's parameters, the values the loop uses from the code before it, and the exit as
//! its return point (`f(header args.., captured.., exit)`), so the jump into the loop
//! becomes a call that returns to the exit. The loop is cloned into it; the original
//! becomes dead code. Loops that do not qualify stay where they are.
//!
//! The cost at run time is a call per execution of an outermost loop, and what LLVM no
//! longer sees across the call: constants are literals in durin's IR already, and the
//! buffers a loop reads and writes come from the runtime's allocator, whose results LLVM
//! cannot tell apart in either form.

use crate::analysis::free::captured;
use crate::context::{Pass, PassContext};
use crate::rewrite::{clone_conts, is_function_type, DefSet, Rewriter, UseCache};
use durin_diag::Diagnostic;
use durin_ir::analysis::cfg::{Cfg, DomTree};
use durin_ir::analysis::looptree::LoopTree;
use durin_ir::{Def, TypeKind, World};
use rustc_hash::{FxHashMap, FxHashSet};

/// What splitting did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Functions that had loops split off.
    pub functions: usize,
    /// Loops that became functions.
    pub loops: usize,
}

/// A first-order function: its entry and its blocks (the entry first).
struct Function {
    entry: Def,
    blocks: DefSet,
    /// For each block, the blocks that use its parameters (other than itself).
    users: FxHashMap<Def, Vec<Def>>,
}

/// Splits the outermost loops off every function with at least `min_blocks` blocks (the
/// pass uses [`Config::split_min_blocks`](crate::Config::split_min_blocks)). The world must be first-order (after
/// `closure-conv`); where a function's blocks use a parameter of another function, the pass
/// changes nothing.
pub fn run(w: &mut World, min_blocks: usize) -> Stats {
    // No function of a small program is large.
    if w.continuations()
        .nth(min_blocks.saturating_sub(1))
        .is_none()
    {
        return Stats::default();
    }
    let mut cache = UseCache::default();
    let Some(functions) = first_order_functions(w, &mut cache) else {
        return Stats::default();
    };
    let mut stats = Stats::default();
    for f in functions.iter().filter(|f| f.blocks.len() >= min_blocks) {
        let cfg = Cfg::over(w, f.entry, |k| f.blocks.contains(&k));
        let dom = DomTree::compute(&cfg);
        let loops = LoopTree::compute(&cfg, &dom);
        let mut regions = Vec::new();
        let mut closed = FxHashMap::default();
        for lp in loops.loops().iter().filter(|l| l.depth == 1) {
            let body: DefSet = lp.body.iter().copied().collect();
            if let Some(r) = region(w, f, body, &cfg, &mut closed, &mut cache) {
                regions.push(r);
            }
        }
        if regions.is_empty() {
            continue;
        }
        stats.functions += 1;
        let base = w.name(f.entry).unwrap_or("fn").to_string();
        for r in regions {
            split(w, &base, &r);
            stats.loops += 1;
        }
    }
    stats
}

/// The functions the externals reach, each with its blocks: the continuations its body
/// reaches that are not functions (a return point, a branch target). `None` when the world
/// is not first-order: a block uses a parameter of a continuation outside its function.
fn first_order_functions(w: &World, cache: &mut UseCache) -> Option<Vec<Function>> {
    let mut seen: DefSet = w.externals().filter(|&k| w.body(k).is_some()).collect();
    let mut out = Vec::new();
    let mut next = 0;
    while next < seen.len() {
        let entry = seen[next];
        next += 1;
        let mut blocks = DefSet::default();
        blocks.insert(entry);
        let mut users: FxHashMap<Def, Vec<Def>> = FxHashMap::default();
        let mut i = 0;
        while i < blocks.len() {
            let k = blocks[i];
            i += 1;
            let (conts, params) = cache.direct_uses(w, k);
            for c in conts {
                if w.body(c).is_none() {
                    continue;
                }
                if is_function_type(w, w.type_of(c)) && c != entry {
                    seen.insert(c);
                } else {
                    blocks.insert(c);
                }
            }
            for p in params {
                let owner = w.ops(p)[0];
                if owner != k {
                    users.entry(owner).or_default().push(k);
                }
            }
        }
        if users.keys().any(|o| !blocks.contains(o)) {
            return None;
        }
        out.push(Function {
            entry,
            blocks,
            users,
        });
    }
    Some(out)
}

/// A loop that can become a function.
struct Region {
    body: DefSet,
    header: Def,
    exit: Def,
    /// The continuations that jump into the header from outside.
    entries: Vec<Def>,
    captured: Vec<Def>,
}

/// The loop `body` of function `f` as a region, if it is single-entry and single-exit and
/// captures only values.
fn region(
    w: &World,
    f: &Function,
    mut body: DefSet,
    cfg: &Cfg,
    closed: &mut FxHashMap<Def, bool>,
    cache: &mut UseCache,
) -> Option<Region> {
    let conts = &f.blocks;
    let header = *body.first()?;
    // A loop that is most of its function would only move the function's code into
    // another one.
    if header == f.entry || 2 * body.len() > f.blocks.len() {
        return None;
    }
    // Blocks that use nothing of the function (the unreachable arm of a `match`, shared by
    // the whole function) are copied with the loop.
    let mut i = 0;
    while i < body.len() {
        for c in cache.direct_uses(w, body[i]).0 {
            if conts.contains(&c) && !body.contains(&c) && is_closed(w, c, conts, closed, cache) {
                body.insert(c);
            }
        }
        i += 1;
    }
    // Where the loop leaves to: blocks of the function outside it, and continuation
    // parameters of the code around it (the function's return point).
    let mut exits: FxHashSet<Def> = FxHashSet::default();
    for &k in &body {
        let (used_conts, used_params) = cache.direct_uses(w, k);
        for c in used_conts {
            if !body.contains(&c) && conts.contains(&c) {
                exits.insert(c);
            }
        }
        for p in used_params {
            let owner = w.ops(p)[0];
            if !body.contains(&owner) && matches!(w.kind(w.type_of(p)), TypeKind::Cont(_)) {
                exits.insert(p);
            }
        }
        // No code outside the loop may use the loop's values but through the exit.
        if (f.users.get(&k)).is_some_and(|us| us.iter().any(|u| !body.contains(u))) {
            return None;
        }
    }
    if exits.len() != 1 {
        return None;
    }
    let exit = exits.into_iter().next()?;
    if is_function_type(w, w.type_of(exit)) {
        return None;
    }
    let entries: Vec<Def> = cfg.preds(header).filter(|p| !body.contains(p)).collect();
    if entries.is_empty()
        || entries
            .iter()
            .any(|&p| w.body(p).map(|(c, _)| c) != Some(header))
    {
        return None;
    }
    let captured: Vec<Def> = captured(w, &body, cache)
        .into_iter()
        .filter(|&c| c != exit)
        .collect();
    // Values only: a `mem` token or a continuation cannot be a parameter of a function
    // called from the code around the loop.
    let value = |&c: &Def| !matches!(w.kind(w.type_of(c)), TypeKind::Mem | TypeKind::Cont(_));
    if !captured.iter().all(value) {
        return None;
    }
    Some(Region {
        body,
        header,
        exit,
        entries,
        captured,
    })
}

/// Whether block `k` uses no parameter but its own and jumps only to functions and to
/// blocks of which the same holds.
fn is_closed(
    w: &World,
    k: Def,
    conts: &DefSet,
    memo: &mut FxHashMap<Def, bool>,
    cache: &mut UseCache,
) -> bool {
    if let Some(&c) = memo.get(&k) {
        return c;
    }
    // Taken as not closed while it is being looked at: a block on a cycle stays where it is
    // (the safe answer; the blocks copied are the short tails of unreachable code).
    memo.insert(k, false);
    let (used, params) = cache.direct_uses(w, k);
    let closed = params.iter().all(|&p| w.ops(p)[0] == k)
        && used
            .iter()
            .all(|&c| !conts.contains(&c) || is_closed(w, c, conts, memo, cache));
    memo.insert(k, closed);
    closed
}

/// Makes region `r` a function named after `base` and calls it from the region's entries.
fn split(w: &mut World, base: &str, r: &Region) {
    let mut tys = crate::rewrite::cont_param_types(w, r.header);
    let n = tys.len();
    tys.extend(r.captured.iter().map(|&c| w.type_of(c)));
    tys.push(w.type_of(r.exit));
    let g = w.cont(&tys, &format!("{base}.loop"));
    w.copy_places(r.header, g);
    w.set_no_inline(g);
    let mut rw = Rewriter::new();
    for (j, &c) in r.captured.iter().enumerate() {
        let p = w.param(g, n + j);
        rw.map(c, p);
    }
    let ret = w.param(g, tys.len() - 1);
    rw.map(r.exit, ret);
    let pairs = clone_conts(w, &mut rw, r.body.iter().copied());
    for &(from, to) in &pairs {
        rw.rewrite_cont_into(w, from, to);
    }
    let header = rw.rewrite(w, r.header);
    let params: Vec<Def> = (0..n).map(|i| w.param(g, i)).collect();
    w.set_body(g, header, &params);
    for &e in &r.entries {
        let Some((_, args)) = w.body(e) else { continue };
        let mut args = args.to_vec();
        args.extend(&r.captured);
        args.push(r.exit);
        w.set_body(e, g, &args);
    }
}

/// The pass `split`.
pub(crate) struct Split;

impl Pass for Split {
    fn name(&self) -> &'static str {
        "split"
    }

    fn description(&self) -> &'static str {
        "function splitting (after `closure-conv`): each outermost single-entry, single-exit loop of a large function becomes a function of its own that the back end does not inline, so that LLVM's time grows with the program's size, not with its square"
    }

    fn lowers(&self) -> bool {
        true
    }

    fn run(&self, w: &mut World, cx: &mut PassContext<'_>) -> Result<(), Diagnostic> {
        run(w, cx.config.split_min_blocks);
        Ok(())
    }
}
