//! Kernels shared before partial evaluation specializes them.
//!
//! Partial evaluation specializes a library operator at each call, so the kernel of each
//! call is a copy of the same code that differs only in the values of the host it uses
//! (the images of a pyramid's levels). Specializing each copy (unrolling its tiles, rows
//! and taps) is most of the compile time of such a program. Where launches' kernels are the
//! same code up to those values ([`durin_ir::equiv::open_code`]), the partial evaluator
//! makes one function taking the values as parameters ([`lift`]) and each kernel only
//! calls it with its own values ([`call_shared`]): the code is specialized once.
//!
//! Outlining undoes the sharing per launch ([`inline_shared`]): each kernel's call becomes
//! the shared function's code with the kernel's values in place of its parameters, as it
//! would have been without sharing, and is outlined as any other. The facts that `stage`
//! and `kernels` draw from a launch's values (which pointers are unaliased, which
//! allocation each points into, how large it is) are then the launch's own, and launches of
//! the same code with the same facts share one compiled kernel again (`kernels`). Each
//! kernel keeps its own place, and the call of the program it was specialized for, for
//! diagnostics and reports.

use crate::rewrite::{clone_conts, Rewriter, ScopeIndex};
use durin_ir::equiv::OpenCode;
use durin_ir::{launch, Def, Node, World};

/// A function `cn(mem, holes.., cn(mem))` whose code is `code`'s (a kernel `cn(mem,
/// cn(mem))`) with its holes as parameters.
pub(crate) fn lift(w: &mut World, code: &OpenCode) -> Def {
    let entry = code.conts[0];
    let tys: Vec<_> = code.holes.iter().map(|&h| w.type_of(h)).collect();
    let kty = launch::kernel_type(w, &tys);
    let ps = w.types().cont_params(kty).unwrap_or_default().to_vec();
    let name = w.name(entry).unwrap_or("kernel").to_string();
    let shared = w.cont(&ps, &name);
    // Holes may be any def, not only parameters: no cache, which sees through to parameters
    // and continuations only.
    let mut rw = Rewriter::new();
    let (mem, ret) = (w.param(entry, 0), w.param(entry, 1));
    let (to_mem, to_ret) = (w.param(shared, 0), w.param(shared, ps.len() - 1));
    rw.map(mem, to_mem);
    rw.map(ret, to_ret);
    for (i, &h) in code.holes.iter().enumerate() {
        let p = w.param(shared, i + 1);
        rw.map(h, p);
    }
    let pairs = clone_conts(w, &mut rw, code.conts[1..].iter().copied());
    rw.rewrite_body_into(w, entry, shared);
    for (from, to) in pairs {
        rw.rewrite_cont_into(w, from, to);
    }
    shared
}

/// Makes `kernel` (`cn(mem, cn(mem))`) call `shared` (made by [`lift`]) with `holes`.
pub(crate) fn call_shared(w: &mut World, kernel: Def, shared: Def, holes: &[Def]) {
    let mut args = vec![w.param(kernel, 0)];
    args.extend_from_slice(holes);
    args.push(w.param(kernel, 1));
    w.set_body(kernel, shared, &args);
}

/// The function `kernel` (`cn(mem, cn(mem))`) only calls, as [`call_shared`] makes it: a
/// continuation with a body, passed the kernel's memory first and its return point last.
pub(crate) fn shared_callee(w: &World, kernel: Def) -> Option<Def> {
    let (callee, args) = w.body(kernel)?;
    let own = |i: usize, a: Option<&Def>| {
        a.is_some_and(|&a| w.node(a) == Node::Param(i as u32) && w.ops(a)[0] == kernel)
    };
    let calls = w.node(callee) == Node::Cont
        && w.body(callee).is_some()
        && !w.is_external(callee)
        && own(0, args.first())
        && own(1, args.last());
    calls.then_some(callee)
}

/// Where `kernel` only calls a shared function ([`shared_callee`]): makes the kernel's body
/// that function's code, with the call's arguments in place of its parameters (its
/// continuations copied); whether it did.
pub(crate) fn inline_shared(w: &mut World, kernel: Def, index: &mut ScopeIndex) -> bool {
    let Some(shared) = shared_callee(w, kernel) else {
        return false;
    };
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
    for (from, to) in pairs {
        rw.rewrite_cont_into(w, from, to);
    }
    true
}
