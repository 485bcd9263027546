//! Kernel outlining: the body of every kernel launch becomes a closed first-order kernel.
//!
//! After partial evaluation, the kernel of a launch ([`durin_ir::Launch`]) is a local
//! continuation that uses values of the host code around it: device pointers, sizes,
//! structs. Outlining clones the kernel's scope into a new top-level continuation that takes
//! those values as parameters (`cn(mem, captured.., cn(mem))`) and passes them at the launch.
//! The captured values are the largest host computations the kernel uses (a loaded value is
//! passed as a value, not loaded again on the device), except address arithmetic: a `lea` of
//! a host pointer is computed again in the kernel, which takes the pointer. A kernel that is
//! not known at compile time, or that would capture a closure, a continuation or the
//! address of a host stack slot, is an error at the launch's source location. A kernel that
//! only calls a function partial evaluation shared between launches of the same code gets
//! that function's code with its own values first (see [`crate::share`]).

use crate::analysis::free::captured;
use crate::analysis::live::Live;
use crate::context::{Pass, PassContext};
use crate::rewrite::{clone_conts, is_function_type, DefSet, Rewriter, ScopeIndex, UseCache};
use crate::share;
use durin_diag::{Diagnostic, SourceMap};
use durin_ir::{launch, Def, Launch, Node, TypeKind, World};

/// What outlining did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Kernels outlined.
    pub kernels: usize,
}

/// Outlines the kernel of every launch that still captures nothing and whose kernel is not
/// closed.
/// With `sources`, an error in a kernel is placed at its launch where that lies in the
/// program's own files, else at the kernel.
pub fn run(w: &mut World, sources: Option<&SourceMap>) -> Result<Stats, Diagnostic> {
    let live = Live::new(w);
    let launches = live.launches(w);
    let mut stats = Stats::default();
    let mut index = ScopeIndex::default();
    for l in launches {
        // An error in a library's kernel also names the program's call it was made for.
        let outlined = outline(w, &l, sources, &mut index)
            .map_err(|d| d.with_expansion(w.expanded_from(l.kernel)))?;
        if outlined {
            stats.kernels += 1;
        }
    }
    Ok(stats)
}

/// Outlines the kernel of `l`; false when it is closed already.
fn outline(
    w: &mut World,
    l: &Launch,
    sources: Option<&SourceMap>,
    index: &mut ScopeIndex,
) -> Result<bool, Diagnostic> {
    let loc = w.loc(l.at).or_else(|| w.loc(l.kernel));
    if !matches!(w.node(l.kernel), Node::Cont) || w.body(l.kernel).is_none() {
        return Err(Diagnostic::error_at(
            loc,
            "the body of this kernel launch is not known at compile time (the kernel must be a function the compiler can see, such as a lambda)",
        ));
    }
    // A kernel that calls code partial evaluation shared between launches gets that code
    // with its own values in place, and is outlined as any other (the copies it gets are
    // its own: outlining rewrites them where they are instead of copying them again).
    let own = share::inline_shared(w, l.kernel, index).unwrap_or_default();
    let mut scope = index.reached_scope(w, l.kernel);
    let cache = index.cache();
    add_closed_blocks(w, &mut scope, cache);
    // What the kernel's code does wrong is placed at the launch when the program wrote it,
    // else at the kernel: a library's launch may have been inlined into a continuation of
    // a helper of its own (the place would be `alloc`'s body).
    let in_program = w
        .loc(l.at)
        .filter(|s| sources.is_some_and(|m| !m.is_library(s.file)));
    let kernel_loc = in_program.or(w.loc(l.kernel)).or(loc);
    check_host_control(w, &scope, cache, kernel_loc)?;
    let captured = captured(w, &scope, cache);
    if captured.is_empty() && l.captured.is_empty() {
        return Ok(false);
    }
    let mut tys = Vec::new();
    for &c in &captured {
        check_capturable(w, c, kernel_loc)?;
        tys.push(w.type_of(c));
    }
    // The kernel takes the launch's own captured values first, then the new ones.
    let mut all_tys: Vec<_> = l.captured.iter().map(|&c| w.type_of(c)).collect();
    all_tys.extend(&tys);
    let kty = launch::kernel_type(w, &all_tys);
    let ps = w.types().cont_params(kty).unwrap_or_default().to_vec();
    let kernel = w.cont(&ps, "kernel");
    // The kernel's place is its body's (the jump to the launch may lie in a library).
    w.copy_places(l.kernel, kernel);
    if let (None, Some(at)) = (w.loc(kernel), loc) {
        w.set_loc(kernel, at);
    }
    // Old parameters keep their places (mem, the launch's captured values), the new ones
    // come before the return point, which stays last.
    let mut rw = Rewriter::new();
    let old_n = w.num_params(l.kernel);
    for i in 0..old_n - 1 {
        let (from, to) = (w.param(l.kernel, i), w.param(kernel, i));
        rw.map(from, to);
    }
    let (old_ret, ret) = (w.param(l.kernel, old_n - 1), w.param(kernel, ps.len() - 1));
    rw.map(old_ret, ret);
    for (j, &c) in captured.iter().enumerate() {
        let to = w.param(kernel, old_n - 1 + j);
        rw.map(c, to);
    }
    let copy = (scope.iter().skip(1).copied()).filter(|c| !own.contains(c));
    let pairs = clone_conts(w, &mut rw, copy);
    rw.rewrite_body_into(w, l.kernel, kernel);
    for (from, to) in pairs {
        rw.rewrite_cont_into(w, from, to);
    }
    for &m in scope.iter().skip(1).filter(|c| own.contains(*c)) {
        rw.rewrite_cont_into(w, m, m);
    }
    let mut all: Vec<Def> = l.captured.clone();
    all.extend(&captured);
    let lty = launch::launch_type(w, &all_tys);
    let callee = w.launch(lty);
    let new = Launch {
        callee,
        kernel,
        captured: all,
        ..l.clone()
    };
    w.set_body(l.at, callee, &new.args());
    Ok(true)
}

/// Adds to `scope` the blocks outside it that it jumps to and that use no value of any
/// scope (transitively): such as the unreachable arm of a `match`, which partial evaluation
/// leaves shared between the host code and the kernels specialized from it. The kernel gets
/// its own copy.
fn add_closed_blocks(w: &World, scope: &mut DefSet, cache: &mut UseCache) {
    // Candidates: blocks outside the scope that use no other continuation's parameters,
    // reached from the scope through such blocks.
    let mut candidates = DefSet::default();
    let mut work: Vec<Def> = scope.iter().copied().collect();
    while let Some(k) = work.pop() {
        let (used, _) = cache.direct_uses(w, k);
        for c in used {
            if scope.contains(&c) || candidates.contains(&c) || is_function_type(w, w.type_of(c)) {
                continue;
            }
            let (_, params) = cache.direct_uses(w, c);
            if params.iter().all(|&p| w.ops(p)[0] == c) {
                candidates.insert(c);
                work.push(c);
            }
        }
    }
    if candidates.is_empty() {
        return;
    }
    let closed = closed_with_reached(w, cache, &candidates);
    scope.extend(candidates.into_iter().filter(|c| closed[c]));
}

/// Which of the continuations `conts` reaches (`conts` included) are closed: use no
/// parameter of a continuation they do not reach.
fn closed_with_reached(
    w: &World,
    cache: &mut UseCache,
    conts: &DefSet,
) -> rustc_hash::FxHashMap<Def, bool> {
    let mut reached = conts.clone();
    let mut i = 0;
    while i < reached.len() {
        let (used, _) = cache.direct_uses(w, reached[i]);
        reached.extend(used);
        i += 1;
    }
    cache.closed(w, &reached)
}

/// Rejects a kernel that jumps to, passes or selects a continuation of the host other than a
/// closed function (a block or return point of the code around the launch, or a local
/// function using its values).
fn check_host_control(
    w: &World,
    scope: &DefSet,
    cache: &mut UseCache,
    loc: Option<durin_ir::Span>,
) -> Result<(), Diagnostic> {
    let mut outside = DefSet::default();
    for &k in scope {
        let (conts, _) = cache.direct_uses(w, k);
        outside.extend(conts.into_iter().filter(|c| !scope.contains(c)));
    }
    // Whether a function is closed depends on everything it reaches.
    let closed = closed_with_reached(w, cache, &outside);
    let host = |c: &&Def| !is_function_type(w, w.type_of(**c)) || !closed[*c];
    let Some(&k) = outside.iter().find(host) else {
        return Ok(());
    };
    let name = w.name(k).unwrap_or("?");
    Err(Diagnostic::error_at(
        w.loc(k).or(loc),
        format!("a kernel cannot continue in the host code around its launch (it uses the continuation `{name}`); a kernel ends by returning"),
    ))
}

/// Rejects values that cannot reach a kernel: functions, continuations, `mem`, and
/// addresses of host stack slots.
fn check_capturable(w: &World, c: Def, loc: Option<durin_ir::Span>) -> Result<(), Diagnostic> {
    let t = w.type_of(c);
    let what = if contains_cont(w, t) {
        Some("a closure (a function value)")
    } else if w.types().is_mem(t) {
        Some("the host's memory state")
    } else if from_slot(w, c) {
        Some("the address of a host stack variable")
    } else {
        None
    };
    let Some(what) = what else {
        return Ok(());
    };
    let err = Diagnostic::error_at(
        w.loc(c).or(loc),
        format!(
            "a GPU kernel cannot capture {what}{}: kernels take pointers to device memory, scalars and structs of those (the value has the IR type {})",
            w.name(c).map(|n| format!(" (`{n}`)")).unwrap_or_default(),
            w.types().display(t)
        ),
    );
    // A closure that is a parameter of a function (or part of one) is there because that
    // function was not specialized for its arguments.
    let mut d = c;
    while w.node(d) == Node::Extract {
        d = w.ops(d)[0];
    }
    let f = w.ops(d).first().copied();
    let name = f.and_then(|f| w.name(f)).filter(|n| *n != "lambda");
    match (w.node(d), what.starts_with("a closure"), f, name) {
        (Node::Param(_), true, Some(f), Some(name)) => {
            Err(err.with_note_at(
                w.loc(f),
                format!(
                    "it is a parameter of `{name}`, which partial evaluation did not specialize for its arguments (a function not marked `@` is only inlined, where it is called once): mark it `fn @{name}` to specialize it at every call"
                ),
            ))
        }
        _ => Err(err),
    }
}

fn contains_cont(w: &World, t: durin_ir::Type) -> bool {
    match w.kind(t) {
        TypeKind::Cont(_) => true,
        TypeKind::Array { elem, len: Some(_) } => contains_cont(w, *elem),
        TypeKind::Tuple(_) | TypeKind::Struct(_) => w
            .types()
            .components(t)
            .unwrap_or_default()
            .into_iter()
            .any(|f| contains_cont(w, f)),
        _ => false,
    }
}

/// Whether `d` is (derived from) the address of a stack slot.
fn from_slot(w: &World, d: Def) -> bool {
    let mut d = d;
    loop {
        match w.node(d) {
            Node::Slot => return true,
            Node::Extract | Node::Lea | Node::Bitcast => d = w.ops(d)[0],
            _ => return false,
        }
    }
}

/// The pass `outline`.
pub(crate) struct Outline;

impl Pass for Outline {
    fn name(&self) -> &'static str {
        "outline"
    }

    fn description(&self) -> &'static str {
        "kernel outlining: the body of each GPU kernel launch becomes a closed top-level kernel taking the values it captures"
    }

    fn lowers(&self) -> bool {
        true
    }

    fn run(&self, w: &mut World, cx: &mut PassContext<'_>) -> Result<(), Diagnostic> {
        run(w, cx.sources()).map(|_| ())
    }
}
