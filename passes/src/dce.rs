//! Dead code elimination by copying: the external continuations and everything they reach go
//! into a new world; the rest (the old versions of specialized or inlined code) stays
//! behind. Names, locations and the order of nominals are kept, so the text form is stable.

use crate::context::{Pass, PassContext, Remap};
use crate::rewrite::cont_param_types;
use durin_diag::Diagnostic;
use durin_ir::def::DefMap;
use durin_ir::{Def, Node, World};

/// The program of `w` reachable from its externals, in a fresh world with the same types,
/// and where each def of `w` that is kept went.
pub fn compact(w: &World) -> (World, Remap) {
    let mut c = Copier {
        old: w,
        new: World::with_types_of(w),
        map: DefMap::new(),
        pending: Vec::new(),
    };
    // Keep the original order of externals: make them first.
    for e in w.externals().collect::<Vec<_>>() {
        c.import(e);
    }
    while let Some(k) = c.pending.pop() {
        c.fill(k);
    }
    (c.new, Remap::new(c.map))
}

struct Copier<'a> {
    old: &'a World,
    new: World,
    /// Where each old def went (a table by def number: every live def is looked up).
    map: DefMap<Def>,
    /// Continuations made in the new world whose filters and body are still to copy.
    pending: Vec<Def>,
}

impl Copier<'_> {
    /// The new def for old `d`, making nominals on first sight (their contents later).
    fn import(&mut self, d: Def) -> Def {
        if let Some(&n) = self.map.get(d) {
            return n;
        }
        let mut stack = vec![(d, false)];
        while let Some(&(x, expanded)) = stack.last() {
            if self.map.contains_key(x) {
                stack.pop();
                continue;
            }
            let old = self.old;
            match old.node(x) {
                Node::Cont => {
                    stack.pop();
                    let tys = cont_param_types(old, x);
                    let k = self.new.cont(&tys, old.name(x).unwrap_or("k"));
                    if old.is_external(x) {
                        self.new.make_external(k);
                    }
                    if old.is_no_inline(x) {
                        self.new.set_no_inline(k);
                    }
                    self.new.set_places(k, old.places(x));
                    self.map.insert(x, k);
                    self.pending.push(x);
                    continue;
                }
                Node::Param(i) => {
                    let owner = old.ops(x)[0];
                    match self.map.get(owner) {
                        Some(&k) => {
                            stack.pop();
                            let p = self.new.param(k, i as usize);
                            self.map.insert(x, p);
                        }
                        None => stack.push((owner, false)),
                    }
                    continue;
                }
                _ => {}
            }
            if !expanded {
                stack.last_mut().expect("just read").1 = true;
                for &o in old.ops(x) {
                    if !self.map.contains_key(o) {
                        stack.push((o, false));
                    }
                }
                continue;
            }
            stack.pop();
            let ops: Vec<Def> = old.ops(x).iter().map(|&o| self.map[o]).collect();
            let n = match old.node(x) {
                Node::Global { mutable } => {
                    self.new
                        .global(ops[0], mutable, old.name(x).unwrap_or("global"))
                }
                node => self.new.build(node, old.type_of(x), &ops),
            };
            if let Some(l) = old.loc(x) {
                self.new.set_loc(n, l);
            }
            self.map.insert(x, n);
        }
        self.map[d]
    }

    fn fill(&mut self, k: Def) {
        let old = self.old;
        let nk = self.map[k];
        for i in 0..old.num_params(k) {
            let f = self.import(old.filters(k)[i]);
            self.new.set_filter(nk, i, f);
        }
        if let Some((callee, args)) = old.body(k) {
            let c = self.import(callee);
            let a: Vec<Def> = args.iter().map(|&x| self.import(x)).collect();
            self.new.set_body(nk, c, &a);
        }
    }
}

/// The pass `dce`.
pub(crate) struct Dce;

impl Pass for Dce {
    fn name(&self) -> &'static str {
        "dce"
    }

    fn description(&self) -> &'static str {
        "keep only what the external continuations reach"
    }

    fn run(&self, w: &mut World, cx: &mut PassContext<'_>) -> Result<(), Diagnostic> {
        let (new, remap) = compact(w);
        *w = new;
        cx.rebuilt(remap);
        Ok(())
    }
}
