//! Scopes: what a continuation's parameters reach.
//!
//! The scope of an entry continuation is the entry, every continuation that uses (directly,
//! or through continuations it references) a parameter of a continuation in the scope, and
//! every computed def that depends on a parameter of a continuation in the scope. Defs that
//! scope members use but that depend on parameters from outside are the scope's *free* defs.

use super::free::FreeParams;
use crate::def::{Def, DefMap, Node};
use crate::world::World;
use indexmap::IndexSet;
use rustc_hash::FxBuildHasher;

type Set = IndexSet<Def, FxBuildHasher>;

/// The scope of one continuation.
pub struct Scope {
    entry: Def,
    conts: Set,
    defs: Set,
    free: Set,
}

impl Scope {
    /// Computes the scope of `entry`.
    pub fn compute(w: &World, entry: Def) -> Scope {
        Self::compute_with(w, entry, &FreeParams::compute(w))
    }

    /// Computes the scope of `entry` from precomputed free parameters.
    pub fn compute_with(w: &World, entry: Def, free: &FreeParams) -> Scope {
        Self::compute_rooted(w, entry, &[], free)
    }

    /// Computes the scope of `entry` that also holds `blocks` (closed continuations that
    /// only the scope jumps to, which a back end makes blocks of the entry's function; see
    /// [`super::program::Program::blocks`]) and what their parameters reach.
    pub fn compute_rooted(w: &World, entry: Def, blocks: &[Def], free: &FreeParams) -> Scope {
        let mut conts = Set::default();
        conts.insert(entry);
        conts.extend(blocks.iter().copied());
        // Only users of the members' parameters can join, transitively: collect them, then
        // add them in the world's order, round after round, as a fixed point over every
        // continuation of the world would (in the same order), without visiting the rest.
        let mut candidates: Vec<Def> = Vec::new();
        let mut seen: Set = conts.clone();
        let mut stack: Vec<Def> = conts.iter().copied().collect();
        while let Some(m) = stack.pop() {
            for &u in free.users(m) {
                if seen.insert(u) {
                    candidates.push(u);
                    stack.push(u);
                }
            }
        }
        candidates.sort_by_key(|&k| w.nominal_position(k));
        let mut changed = true;
        while changed {
            changed = false;
            for &k in &candidates {
                if !conts.contains(&k) && free.owners(k).iter().any(|o| conts.contains(o)) {
                    conts.insert(k);
                    changed = true;
                }
            }
        }
        // Computed defs reached from the scope's continuations, not entering nominals.
        let mut inside: DefMap<bool> = DefMap::new();
        let (mut defs, mut free_defs) = (Set::default(), Set::default());
        for &k in &conts {
            for &root in w.ops(k) {
                let mut stack = vec![(root, false)];
                while let Some((d, expanded)) = stack.pop() {
                    if inside.contains_key(d) {
                        continue;
                    }
                    let node = w.node(d);
                    if node.is_nominal() || !w.has_params(d) {
                        inside.insert(d, false);
                        continue;
                    }
                    if let Node::Param(_) = node {
                        let ins = conts.contains(&w.ops(d)[0]);
                        inside.insert(d, ins);
                        if !ins {
                            free_defs.insert(d);
                        }
                        continue;
                    }
                    if !expanded {
                        stack.push((d, true));
                        stack.extend(w.ops(d).iter().map(|&o| (o, false)));
                        continue;
                    }
                    let ins = w
                        .ops(d)
                        .iter()
                        .any(|&o| inside.get(o).copied().unwrap_or(false));
                    inside.insert(d, ins);
                    if ins {
                        defs.insert(d);
                    } else {
                        free_defs.insert(d);
                    }
                }
            }
        }
        Scope {
            entry,
            conts,
            defs,
            free: free_defs,
        }
    }

    /// The continuation the scope belongs to.
    pub fn entry(&self) -> Def {
        self.entry
    }

    /// The continuations in the scope, the entry first.
    pub fn continuations(&self) -> &Set {
        &self.conts
    }

    /// The computed defs (not parameters) in the scope.
    pub fn defs(&self) -> &Set {
        &self.defs
    }

    /// Defs used in the scope that depend on parameters of continuations outside it.
    pub fn free_defs(&self) -> &Set {
        &self.free
    }

    /// Whether `d` is in the scope (a continuation, a parameter of one, or a computed def).
    pub fn contains(&self, w: &World, d: Def) -> bool {
        match w.node(d) {
            Node::Param(_) => self.conts.contains(&w.ops(d)[0]),
            Node::Cont => self.conts.contains(&d),
            _ => self.defs.contains(&d),
        }
    }
}
