//! Scheduling: placing the computed defs of a scope into its continuations.
//!
//! A graph has no instruction order; back ends need one. *Early* placement puts each def in
//! the deepest (in the dominator tree) of the blocks where its operands are available: a
//! parameter is available in its continuation, a def from outside the scope at the entry.
//! *Late* placement puts it in the nearest common dominator of the blocks that use it, so
//! it is computed only on paths that need it. A def no reachable block uses stays early.
//! Within a block, defs are listed operands first.

use super::cfg::{Cfg, DomTree};
use super::scope::Scope;
use crate::def::{Def, Node};
use crate::world::World;
use rustc_hash::FxHashMap;

/// Where to place defs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Placement {
    /// As early as the operands allow.
    Early,
    /// As late as the uses allow.
    Late,
}

/// The defs of a scope, placed into its reachable continuations.
pub struct Schedule {
    place: FxHashMap<Def, Def>,
    blocks: FxHashMap<Def, Vec<Def>>,
}

impl Schedule {
    /// Places the defs of `scope`.
    pub fn compute(w: &World, scope: &Scope, cfg: &Cfg, dom: &DomTree, how: Placement) -> Schedule {
        let entry = scope.entry();
        let deeper = |a: Def, b: Def| {
            if dom.depth(cfg, b).unwrap_or(0) > dom.depth(cfg, a).unwrap_or(0) {
                b
            } else {
                a
            }
        };
        // Early: operands first (scope defs are found operands-first by a post-order walk).
        let mut early: FxHashMap<Def, Def> = FxHashMap::default();
        let order = topological(w, scope);
        for &d in &order {
            let mut at = entry;
            for &o in w.ops(d) {
                let p = match w.node(o) {
                    Node::Param(_) if cfg.index_of(w.ops(o)[0]).is_some() => w.ops(o)[0],
                    _ => early.get(&o).copied().unwrap_or(entry),
                };
                at = deeper(at, p);
            }
            early.insert(d, at);
        }
        let place = match how {
            Placement::Early => early,
            Placement::Late => {
                let mut users: FxHashMap<Def, Vec<Def>> = FxHashMap::default();
                for &k in cfg.reverse_post_order() {
                    for &o in w.ops(k) {
                        users.entry(o).or_default().push(k);
                    }
                }
                for &d in &order {
                    for &o in w.ops(d) {
                        users.entry(o).or_default().push(d);
                    }
                }
                let mut late: FxHashMap<Def, Def> = FxHashMap::default();
                for &d in order.iter().rev() {
                    let mut at: Option<Def> = None;
                    for &u in users.get(&d).map(|v| v.as_slice()).unwrap_or(&[]) {
                        let ub = if w.node(u) == Node::Cont {
                            Some(u)
                        } else {
                            late.get(&u).copied()
                        };
                        let Some(ub) = ub else { continue };
                        at = Some(match at {
                            None => ub,
                            Some(a) => dom.lca(cfg, a, ub).unwrap_or(entry),
                        });
                    }
                    late.insert(d, at.unwrap_or(early[&d]));
                }
                late
            }
        };
        let mut blocks: FxHashMap<Def, Vec<Def>> = FxHashMap::default();
        for &d in &order {
            blocks.entry(place[&d]).or_default().push(d);
        }
        Schedule { place, blocks }
    }

    /// The continuation `d` is placed in.
    pub fn block_of(&self, d: Def) -> Option<Def> {
        self.place.get(&d).copied()
    }

    /// The defs placed in continuation `k`, operands first.
    pub fn block(&self, k: Def) -> &[Def] {
        self.blocks.get(&k).map_or(&[], |v| v.as_slice())
    }
}

/// The scope's computed defs, every def after its operands.
fn topological(w: &World, scope: &Scope) -> Vec<Def> {
    let mut done: rustc_hash::FxHashSet<Def> = Default::default();
    let mut out = Vec::new();
    for &d in scope.defs() {
        let mut stack = vec![(d, false)];
        while let Some((x, expanded)) = stack.pop() {
            if done.contains(&x) || !scope.defs().contains(&x) {
                continue;
            }
            if expanded {
                done.insert(x);
                out.push(x);
            } else {
                stack.push((x, true));
                stack.extend(w.ops(x).iter().map(|&o| (o, false)));
            }
        }
    }
    out
}
