//! The control-flow graph of a scope, and its dominator tree.
//!
//! Nodes are the scope's continuations reachable from the entry. A continuation's
//! successors are the scope's continuations that its jump mentions, in the callee (a
//! branch is a `select` of continuations) or in the arguments (a return continuation
//! passed to a call), looking through computed defs but not into other continuations.

use super::free::reach;
use super::scope::Scope;
use crate::def::{Def, Node};
use crate::world::World;
use indexmap::IndexSet;
use rustc_hash::{FxBuildHasher, FxHashMap};

/// A control-flow graph over the continuations of a scope.
pub struct Cfg {
    /// Nodes in reverse post-order; index 0 is the entry.
    rpo: Vec<Def>,
    index: FxHashMap<Def, usize>,
    succs: Vec<Vec<usize>>,
    preds: Vec<Vec<usize>>,
}

impl Cfg {
    /// Builds the CFG of `scope`.
    pub fn compute(w: &World, scope: &Scope) -> Cfg {
        Self::over(w, scope.entry(), |k| scope.continuations().contains(&k))
    }

    /// Builds the CFG from `entry` over the continuations for which `member` holds (a
    /// scope's, or a first-order function's blocks found another way).
    pub fn over(w: &World, entry: Def, member: impl Fn(Def) -> bool) -> Cfg {
        let succ_of = |k: Def| -> Vec<Def> {
            let Some((callee, args)) = w.body(k) else {
                return Vec::new();
            };
            let mut roots = vec![callee];
            roots.extend_from_slice(args);
            let (mut ps, mut ns) = (
                IndexSet::<Def, FxBuildHasher>::default(),
                IndexSet::default(),
            );
            reach(w, &roots, &mut ps, &mut ns);
            ns.into_iter()
                .filter(|&n| w.node(n) == Node::Cont && member(n))
                .collect()
        };
        // Iterative depth-first search for the post-order.
        let mut post = Vec::new();
        let mut visited: IndexSet<Def, FxBuildHasher> = IndexSet::default();
        let mut succ_map: FxHashMap<Def, Vec<Def>> = FxHashMap::default();
        visited.insert(entry);
        let first = succ_of(entry);
        succ_map.insert(entry, first.clone());
        let mut stack = vec![(entry, first, 0usize)];
        while let Some((k, ss, i)) = stack.last_mut() {
            if *i < ss.len() {
                let s = ss[*i];
                *i += 1;
                if visited.insert(s) {
                    let next = succ_of(s);
                    succ_map.insert(s, next.clone());
                    stack.push((s, next, 0));
                }
            } else {
                post.push(*k);
                stack.pop();
            }
        }
        let rpo: Vec<Def> = post.into_iter().rev().collect();
        let index: FxHashMap<Def, usize> = rpo.iter().enumerate().map(|(i, &k)| (k, i)).collect();
        let mut succs = vec![Vec::new(); rpo.len()];
        let mut preds = vec![Vec::new(); rpo.len()];
        for (i, &k) in rpo.iter().enumerate() {
            for s in &succ_map[&k] {
                let j = index[s];
                if !succs[i].contains(&j) {
                    succs[i].push(j);
                    preds[j].push(i);
                }
            }
        }
        Cfg {
            rpo,
            index,
            succs,
            preds,
        }
    }

    /// The nodes in reverse post-order, the entry first.
    pub fn reverse_post_order(&self) -> &[Def] {
        &self.rpo
    }

    /// The RPO index of `k`, if it is a reachable node.
    pub fn index_of(&self, k: Def) -> Option<usize> {
        self.index.get(&k).copied()
    }

    /// Successors of node `k`.
    pub fn succs(&self, k: Def) -> impl Iterator<Item = Def> + '_ {
        self.index_of(k)
            .into_iter()
            .flat_map(move |i| self.succs[i].iter().map(|&j| self.rpo[j]))
    }

    /// Predecessors of node `k`.
    pub fn preds(&self, k: Def) -> impl Iterator<Item = Def> + '_ {
        self.index_of(k)
            .into_iter()
            .flat_map(move |i| self.preds[i].iter().map(|&j| self.rpo[j]))
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.rpo.len()
    }

    /// Whether the graph is empty (never: the entry is always a node).
    pub fn is_empty(&self) -> bool {
        self.rpo.is_empty()
    }
}

/// The dominator tree of a [`Cfg`] (Cooper, Harvey and Kennedy's iterative algorithm).
pub struct DomTree {
    /// Immediate dominator of each RPO index (the entry's is itself).
    idom: Vec<usize>,
    depth: Vec<usize>,
}

impl DomTree {
    /// Computes the dominator tree of `cfg`.
    pub fn compute(cfg: &Cfg) -> DomTree {
        let n = cfg.len();
        const UNDEF: usize = usize::MAX;
        let mut idom = vec![UNDEF; n];
        if n == 0 {
            return DomTree {
                idom,
                depth: Vec::new(),
            };
        }
        idom[0] = 0;
        let intersect = |idom: &[usize], mut a: usize, mut b: usize| {
            while a != b {
                while a > b {
                    a = idom[a];
                }
                while b > a {
                    b = idom[b];
                }
            }
            a
        };
        let mut changed = true;
        while changed {
            changed = false;
            for i in 1..n {
                let mut new = UNDEF;
                for &p in &cfg.preds[i] {
                    if idom[p] == UNDEF {
                        continue;
                    }
                    new = if new == UNDEF {
                        p
                    } else {
                        intersect(&idom, p, new)
                    };
                }
                if new != idom[i] {
                    idom[i] = new;
                    changed = true;
                }
            }
        }
        let mut depth = vec![0; n];
        for i in 1..n {
            depth[i] = depth[idom[i]] + 1;
        }
        DomTree { idom, depth }
    }

    /// The immediate dominator of `k` (`None` for the entry or a node not in `cfg`).
    pub fn idom(&self, cfg: &Cfg, k: Def) -> Option<Def> {
        let i = cfg.index_of(k)?;
        (i != 0).then(|| cfg.rpo[self.idom[i]])
    }

    /// Depth of `k` in the tree (the entry has depth 0).
    pub fn depth(&self, cfg: &Cfg, k: Def) -> Option<usize> {
        cfg.index_of(k).map(|i| self.depth[i])
    }

    /// Whether `a` dominates `b` (every node dominates itself).
    pub fn dominates(&self, cfg: &Cfg, a: Def, b: Def) -> bool {
        let (Some(a), Some(mut b)) = (cfg.index_of(a), cfg.index_of(b)) else {
            return false;
        };
        while self.depth[b] > self.depth[a] {
            b = self.idom[b];
        }
        a == b
    }

    /// The nearest common dominator of `a` and `b`.
    pub fn lca(&self, cfg: &Cfg, a: Def, b: Def) -> Option<Def> {
        let (mut a, mut b) = (cfg.index_of(a)?, cfg.index_of(b)?);
        while self.depth[a] > self.depth[b] {
            a = self.idom[a];
        }
        while self.depth[b] > self.depth[a] {
            b = self.idom[b];
        }
        while a != b {
            a = self.idom[a];
            b = self.idom[b];
        }
        Some(cfg.rpo[a])
    }
}
