//! The layout of the text form: which statements each nominal prints, and every def's name.

use crate::def::{Def, DefMap, Node};
use crate::world::World;
use indexmap::IndexMap;
use rustc_hash::{FxBuildHasher, FxHashSet};

/// Names of defs and placement of statements, as the printer writes them. The verifier and
/// the Graphviz writer use it so that they name defs exactly as the text form does.
pub struct Layout {
    names: DefMap<String>,
    /// For each continuation, the names of its parameters.
    pub params: DefMap<Vec<String>>,
    /// For each nominal in creation order, the statements printed with it (operands first).
    pub blocks: IndexMap<Def, Vec<Def>, FxBuildHasher>,
}

/// The nominals in the order the text form lists them: the globals, then the
/// continuations, each in creation order. Reading the text makes every continuation before
/// any global (an initializer may name a continuation), so listing them in creation order
/// alone would not read back the same where a global was made between continuations.
fn print_order(w: &World) -> Vec<Def> {
    let (globals, conts): (Vec<Def>, Vec<Def>) =
        (w.nominals()).partition(|&n| matches!(w.node(n), Node::Global { .. }));
    globals.into_iter().chain(conts).collect()
}

/// Whether `d` is written inline (literals and bottom) rather than by name.
pub(crate) fn is_inline(w: &World, d: Def) -> bool {
    w.node(d).is_constant_leaf()
}

/// Whether `d` is a leaf of statement placement (has no statement of its own).
fn is_leaf(w: &World, d: Def) -> bool {
    is_inline(w, d) || matches!(w.node(d), Node::Param(_)) || w.node(d).is_nominal()
}

fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

struct Namer {
    used: FxHashSet<String>,
    counter: usize,
    /// For each base name, the suffix to try first: the smallest free one only grows, so
    /// ten thousand continuations named alike take linear time.
    next: rustc_hash::FxHashMap<String, usize>,
}

impl Namer {
    fn fresh(&mut self, debug: Option<&str>) -> String {
        let base = debug.map(sanitize).filter(|s| !s.is_empty());
        let name = match base {
            // A name made only of digits could collide with a numbered one.
            Some(b) if !b.bytes().all(|c| c.is_ascii_digit()) => {
                let mut n = b.clone();
                let mut k = self.next.get(&b).copied().unwrap_or(1);
                if self.used.contains(&n) {
                    n = format!("{b}.{k}");
                    while self.used.contains(&n) {
                        k += 1;
                        n = format!("{b}.{k}");
                    }
                    self.next.insert(b, k + 1);
                }
                n
            }
            _ => loop {
                let n = self.counter.to_string();
                self.counter += 1;
                if !self.used.contains(&n) {
                    break n;
                }
            },
        };
        self.used.insert(name.clone());
        name
    }
}

impl Layout {
    /// Computes the layout of `w`.
    pub fn compute(w: &World) -> Layout {
        let mut names = DefMap::new();
        let mut globals = Namer {
            used: FxHashSet::default(),
            counter: 0,
            next: Default::default(),
        };
        let order = print_order(w);
        for &n in &order {
            names.insert(n, format!("@{}", globals.fresh(w.name(n))));
        }
        let mut locals = Namer {
            used: FxHashSet::default(),
            counter: 0,
            next: Default::default(),
        };
        let mut blocks = IndexMap::default();
        let mut placed: DefMap<()> = DefMap::new();
        let mut params = DefMap::new();
        for &n in &order {
            if w.node(n) == Node::Cont {
                let mut ps = Vec::new();
                for i in 0..w.num_params(n) {
                    // One parameter per continuation and position: look it up without building.
                    let p = w.param_if_built(n, i);
                    let name = format!("%{}", locals.fresh(p.and_then(|p| w.name(p))));
                    if let Some(p) = p {
                        names.insert(p, name.clone());
                    }
                    ps.push(name);
                }
                params.insert(n, ps);
            }
            let mut stmts = Vec::new();
            let mut stack: Vec<(Def, bool)> = w.ops(n).iter().rev().map(|&o| (o, false)).collect();
            while let Some((d, expanded)) = stack.pop() {
                if is_leaf(w, d) || placed.contains_key(d) {
                    continue;
                }
                if expanded {
                    placed.insert(d, ());
                    names.insert(d, format!("%{}", locals.fresh(w.name(d))));
                    stmts.push(d);
                } else {
                    stack.push((d, true));
                    stack.extend(w.ops(d).iter().rev().map(|&o| (o, false)));
                }
            }
            blocks.insert(n, stmts);
        }
        Layout {
            names,
            params,
            blocks,
        }
    }

    /// The name of `d` (`%x` or `@f`), if it is named in the text form.
    pub fn name(&self, d: Def) -> Option<&str> {
        self.names.get(d).map(|s| s.as_str())
    }
}
