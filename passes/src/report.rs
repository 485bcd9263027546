//! The closure report: what each live continuation is for a back end.
//!
//! - a *function*: it uses no free parameter (a top-level function);
//! - a *block*: it has free parameters but is only jumped to (directly or as a branch
//!   target) or passed as the return point of a call (its type is not a function type:
//!   see [`is_function_type`]);
//!   a back end makes it a basic block of the function whose parameters it uses;
//! - a *closure*: anything else: a continuation with free parameters that is passed as a
//!   function value, stored in a value, or a local function that takes a return point.
//!
//! The pipeline removes most closures by specialization and inlining; [`closure_report`]
//! lists those that survive, for `--report closures`.

use crate::analysis::live::{Live, Users};
use crate::rewrite::{closed_conts, is_function_type, DefSet};
use durin_ir::{Def, Node, Span, World};

/// A continuation that is neither a top-level function nor a block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Closure {
    /// The continuation.
    pub cont: Def,
    /// Its source name, if it has one.
    pub name: Option<String>,
    /// Where it comes from.
    pub loc: Option<Span>,
    /// Why it is a closure.
    pub why: &'static str,
}

/// How many continuations of each kind the live program has, and its closures.
#[derive(Clone, Debug, Default)]
pub struct ClosureReport {
    /// Top-level functions (with a body).
    pub functions: usize,
    /// Blocks.
    pub blocks: usize,
    /// Closures, in definition order.
    pub closures: Vec<Closure>,
}

impl ClosureReport {
    /// Whether the program is first-order (no closure left).
    pub fn is_first_order(&self) -> bool {
        self.closures.is_empty()
    }
}

/// Classifies the live continuations of `w`.
pub fn closure_report(w: &World) -> ClosureReport {
    let live = Live::new(w);
    let conts: DefSet = live.conts().iter().copied().collect();
    let closed = closed_conts(w, &conts);
    let users = live.users(w);
    let mut report = ClosureReport::default();
    let mut sorted: Vec<Def> = conts.iter().copied().collect();
    sorted.sort();
    for k in sorted {
        if w.body(k).is_none() {
            continue;
        }
        if closed.get(&k).copied().unwrap_or(true) {
            report.functions += 1;
            continue;
        }
        let uses = users.of(k);
        match why_closure(w, k, uses, &users) {
            None => report.blocks += 1,
            Some(why) => report.closures.push(Closure {
                cont: k,
                name: w.name(k).map(str::to_string),
                loc: w.loc(k),
                why,
            }),
        }
    }
    report
}

/// Why continuation `k` (with free parameters), used by `uses`, is not a block.
fn why_closure(w: &World, k: Def, uses: &[Def], users: &Users) -> Option<&'static str> {
    let function = is_function_type(w, w.type_of(k));
    let mut called = false;
    for &u in uses {
        match w.node(u) {
            Node::Cont => {
                let Some((callee, args)) = w.body(u) else {
                    return Some("referenced by a filter");
                };
                if w.filters(u).contains(&k) {
                    return Some("referenced by a filter");
                }
                if callee == k {
                    called = true;
                }
                if args.contains(&k) && function {
                    return Some("passed as a function value");
                }
            }
            // A branch target, if the branch is jumped to.
            Node::Select if w.ops(u)[0] != k => {
                let jumped = users.of(u).iter().all(|&j| {
                    w.node(j) == Node::Cont
                        && w.body(j).is_some_and(|(c, a)| c == u && !a.contains(&u))
                });
                if !jumped {
                    return Some("selected as a value");
                }
                called = true;
            }
            _ => return Some("stored in a value"),
        }
    }
    (function && called).then_some("a local function that takes a return point")
}
