//! The loop tree of a CFG: natural loops, nested.
//!
//! A back edge is an edge `u -> h` where `h` dominates `u`; the natural loop of header `h`
//! is `h` with every node that reaches one of its back edges' sources without passing
//! through `h`. Loops with the same header are merged; a loop's parent is the smallest loop
//! that contains its header. (Irreducible cycles have no header that dominates them and form
//! no loop here.)

use super::cfg::{Cfg, DomTree};
use crate::def::Def;
use indexmap::IndexSet;
use rustc_hash::FxBuildHasher;

/// One natural loop.
#[derive(Clone, Debug)]
pub struct Loop {
    /// The loop header, which dominates the whole loop.
    pub header: Def,
    /// Every node of the loop (the header first), inner loops included.
    pub body: IndexSet<Def, FxBuildHasher>,
    /// The index of the enclosing loop, if any.
    pub parent: Option<usize>,
    /// Nesting depth: 1 for an outermost loop.
    pub depth: usize,
}

/// The loops of a CFG.
pub struct LoopTree {
    loops: Vec<Loop>,
}

impl LoopTree {
    /// Finds the loops of `cfg`.
    pub fn compute(cfg: &Cfg, dom: &DomTree) -> LoopTree {
        let mut loops: Vec<Loop> = Vec::new();
        for &h in cfg.reverse_post_order() {
            let latches: Vec<Def> = cfg.preds(h).filter(|&u| dom.dominates(cfg, h, u)).collect();
            if latches.is_empty() {
                continue;
            }
            let mut body: IndexSet<Def, FxBuildHasher> = IndexSet::default();
            body.insert(h);
            let mut stack = latches;
            while let Some(u) = stack.pop() {
                if body.insert(u) {
                    stack.extend(cfg.preds(u));
                }
            }
            loops.push(Loop {
                header: h,
                body,
                parent: None,
                depth: 1,
            });
        }
        // Parents: the smallest other loop containing the header. Headers in RPO make
        // enclosing loops come first, so depths can be filled in order.
        for i in 0..loops.len() {
            let h = loops[i].header;
            loops[i].parent = (0..loops.len())
                .filter(|&j| j != i && loops[j].body.contains(&h))
                .min_by_key(|&j| loops[j].body.len());
        }
        for i in 0..loops.len() {
            loops[i].depth = loops[i].parent.map_or(1, |p| loops[p].depth + 1);
        }
        LoopTree { loops }
    }

    /// All loops, outer before inner.
    pub fn loops(&self) -> &[Loop] {
        &self.loops
    }

    /// The innermost loop containing `k`.
    pub fn innermost(&self, k: Def) -> Option<usize> {
        (0..self.loops.len())
            .filter(|&i| self.loops[i].body.contains(&k))
            .max_by_key(|&i| self.loops[i].depth)
    }

    /// The loop depth of `k`: 0 outside every loop.
    pub fn depth(&self, k: Def) -> usize {
        self.innermost(k).map_or(0, |i| self.loops[i].depth)
    }
}
