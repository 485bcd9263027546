//! Kernels shared before partial evaluation specializes them.
//!
//! Partial evaluation specializes a library operator at each call, so the kernel of each
//! call is a copy of the same code that differs only in the values of the host it uses
//! (the images of a pyramid's levels). Specializing each copy (unrolling its tiles, rows
//! and taps) is most of the compile time of such a program. Where kernels are the same
//! code up to those values ([`durin_ir::equiv::open_code`]), the partial evaluator makes one
//! function taking the values as parameters ([`lift`]) and each kernel only calls it with
//! its own values ([`call_shared`]): the code is specialized once.
//!
//! The bodies of `parallel` loops (closures passed to an import, which the runtime calls)
//! are shared the same way, and stay shared: each closure calls the one function, whose
//! code the rest of the pipeline and LLVM see once.
//!
//! Outlining undoes the sharing per launch ([`inline_shared`]): each kernel's call becomes
//! the shared function's code with the kernel's values in place of its parameters, as it
//! would have been without sharing, and is outlined as any other. The facts that `stage`
//! and `kernels` draw from a launch's values (which pointers are unaliased, which
//! allocation each points into, how large it is) are then the launch's own, and launches of
//! the same code with the same facts share one compiled kernel again (`kernels`). Each
//! kernel keeps its own place, and the call of the program it was specialized for, for
//! diagnostics and reports.

use crate::rewrite::{clone_conts, cont_param_types, DefSet, Rewriter, ScopeIndex};
use durin_ir::equiv::OpenCode;
use durin_ir::{Def, Node, World};

/// A function whose code is `code`'s (a function `cn(T.., R)`, `R` its return point) with
/// its holes as parameters: `cn(T.., holes.., R)`.
pub(crate) fn lift(w: &mut World, code: &OpenCode) -> Def {
    let entry = code.conts[0];
    let own = cont_param_types(w, entry);
    let n = own.len();
    let mut ps = own[..n - 1].to_vec();
    ps.extend(code.holes.iter().map(|&h| w.type_of(h)));
    ps.push(own[n - 1]);
    let name = w.name(entry).unwrap_or("kernel").to_string();
    let shared = w.cont(&ps, &name);
    // Holes may be any def, not only parameters: no cache, which sees through to parameters
    // and continuations only.
    let mut rw = Rewriter::new();
    for i in 0..n - 1 {
        let (from, to) = (w.param(entry, i), w.param(shared, i));
        rw.map(from, to);
    }
    let (ret, to_ret) = (w.param(entry, n - 1), w.param(shared, ps.len() - 1));
    rw.map(ret, to_ret);
    for (i, &h) in code.holes.iter().enumerate() {
        let p = w.param(shared, n - 1 + i);
        rw.map(h, p);
    }
    let pairs = clone_conts(w, &mut rw, code.conts[1..].iter().copied());
    rw.rewrite_body_into(w, entry, shared);
    for (from, to) in pairs {
        rw.rewrite_cont_into(w, from, to);
    }
    shared
}

/// Makes function `k` call `shared` (made by [`lift`] from code like `k`'s) with its own
/// parameters and `holes`.
pub(crate) fn call_shared(w: &mut World, k: Def, shared: Def, holes: &[Def]) {
    let mut args = w.params(k);
    let ret = args.pop().expect("a function has a return point");
    args.extend_from_slice(holes);
    args.push(ret);
    w.set_body(k, shared, &args);
}

/// The function `k` only calls, as [`call_shared`] makes it: a continuation with a body,
/// passed `k`'s parameters but the return point first and `k`'s return point last.
pub(crate) fn shared_callee(w: &World, k: Def) -> Option<Def> {
    let (callee, args) = w.body(k)?;
    let n = w.num_params(k);
    let own = |i: usize, a: Option<&Def>| {
        a.is_some_and(|&a| w.node(a) == Node::Param(i as u32) && w.ops(a)[0] == k)
    };
    let calls = w.node(callee) == Node::Cont
        && w.body(callee).is_some()
        && !w.is_external(callee)
        && n > 0
        && args.len() >= n
        && (0..n - 1).all(|i| own(i, args.get(i)))
        && own(n - 1, args.last());
    calls.then_some(callee)
}

/// Where `kernel` only calls a shared function ([`shared_callee`]): makes the kernel's body
/// that function's code, with the call's arguments in place of its parameters (its
/// continuations copied); the copies, which only `kernel` uses (`None` where it did
/// nothing).
pub(crate) fn inline_shared(w: &mut World, kernel: Def, index: &mut ScopeIndex) -> Option<DefSet> {
    let shared = shared_callee(w, kernel)?;
    let args = w.body(kernel).map(|(_, a)| a.to_vec()).unwrap_or_default();
    let scope = index.reached_scope(w, shared);
    let mut rw = Rewriter::with_cache(index.cache());
    for (i, &a) in args.iter().enumerate() {
        let p = w.param(shared, i);
        rw.map(p, a);
    }
    let pairs = clone_conts(w, &mut rw, scope.iter().skip(1).copied());
    // The kernel keeps its own places (`rewrite_body_into` would copy the shared
    // function's).
    if let Some((callee, args)) = w.body(shared).map(|(c, a)| (c, a.to_vec())) {
        let c = rw.rewrite(w, callee);
        let a: Vec<Def> = args.iter().map(|&x| rw.rewrite(w, x)).collect();
        w.set_body(kernel, c, &a);
    }
    for &(from, to) in &pairs {
        rw.rewrite_cont_into(w, from, to);
    }
    Some(pairs.into_iter().map(|(_, to)| to).collect())
}
