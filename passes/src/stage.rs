//! The pass `stage`: stages the read-only buffers of CUDA kernels into shared memory.
//!
//! It runs after kernel outlining (each launched kernel is a closed continuation) and
//! before launch lowering, on the host world, so that the interpreter runs the staged
//! kernels as the GPU does. For each kernel with a constant block shape, read-only tracing
//! and footprints ([`crate::buffers`]) find the buffers whose reads are a box of offsets
//! around each thread's pixel with a boundary handler (so that every element of the tile,
//! halo included, can be read through the handler). For each such buffer:
//!
//! - at the kernel's entry, the threads of the block fill a tile of `(bx + box width - 1)`
//!   x `(by + box height - 1)` elements in shared memory, element `i` by thread
//!   `i mod (bx * by)`: each element is read as one of the kernel's own reads computes it
//!   (through the boundary handler), with the thread index replaced by the element's
//!   position; then `__syncthreads`;
//! - every load of the buffer becomes a load of the tile at the thread's position plus the
//!   load's offset: `(tid.y + dy - dy0) * tile width + tid.x + dx - dx0`, adds and one
//!   multiplication by a constant, no division.
//!
//! Clamped reads stay bitwise identical: a tile element holds what the kernel would have
//! read there.

use crate::buffers::{self, Access, KernelBuffers};
use crate::footprint::{Footprint, IndexVar, LoadOffset};
use crate::kernels::{allocation_results, launched_kernel};
use crate::live::Live;
use crate::rewrite::Rewriter;
use durin_diag::Diagnostic;
use durin_ir::layout::size_align;
use durin_ir::{AddrSpace, ArithOp, CmpOp, Def, Kernel, Node, World};

/// The most shared memory a kernel's tiles may take (CUDA's static limit per block).
const MAX_SHARED: i64 = 48 * 1024;

/// Stages what can be staged in every launched kernel of `w`.
pub fn run(w: &mut World) -> Result<(), Diagnostic> {
    let live = Live::new(w);
    let launches = live.launches(w);
    let allocated = allocation_results(w, live.conts());
    for l in &launches {
        let (k, bases) = launched_kernel(w, l, &allocated);
        let found = buffers::trace(w, &k, &bases, Some((w, &l.captured)));
        stage_kernel(w, &k, &found);
    }
    Ok(())
}

/// What staging one buffer needs.
struct Plan {
    offsets: Vec<LoadOffset>,
    dx: (i64, i64),
    dy: (i64, i64),
    /// A load through the boundary handler, whose index computation fills the tile.
    template: LoadOffset,
}

fn stage_kernel(w: &mut World, k: &Kernel, found: &KernelBuffers) {
    let Some([bx, by, 1]) = k.block else {
        return;
    };
    // Only the kernel's own index parameters may appear in a template's index.
    let index_params = &found.index_params;
    let mut plans = Vec::new();
    let mut bytes = 0i64;
    // The kernel's own continuations, before the staging code changes it.
    let original: Vec<Def> = (found.conts.iter().copied())
        .filter(|&c| w.body(c).is_some())
        .collect();
    let mut cloner = Cloner::new(w, &original);
    for b in &found.buffers {
        let (
            Access::ReadOnly,
            Some(Footprint::Box {
                dx, dy, edge: true, ..
            }),
        ) = (&b.access, &b.footprint)
        else {
            continue;
        };
        let Some(template) = b.offsets.iter().find(|o| o.edge).copied() else {
            continue;
        };
        // The template's pointer must be computable at the entry (tried with zeros).
        let i32t = w.ty_int(32, true);
        let zero = w.lit(i32t, 0);
        let dummy: rustc_hash::FxHashMap<Def, Def> =
            index_params.iter().map(|&(p, _)| (p, zero)).collect();
        let ptr = w.ops(template.load)[1];
        if cloner.clone_with(w, ptr, dummy).is_none() {
            continue;
        }
        let elem = load_type(w, template.load);
        let size =
            (bx as i64 + dx.1 - dx.0) * (by as i64 + dy.1 - dy.0) * size_align(w, elem).0 as i64;
        if bytes + size > MAX_SHARED {
            continue;
        }
        bytes += size;
        plans.push(Plan {
            offsets: b.offsets.clone(),
            dx: *dx,
            dy: *dy,
            template,
        });
    }
    if plans.is_empty() {
        return;
    }
    let kernel = k.def;
    let i32t = w.ty_int(32, true);
    let mem_t = w.ty_mem();
    // The original body goes to `rest`, which the staging code jumps to.
    let rest = w.cont(&[mem_t], "staged");
    let kmem = w.param(kernel, 0);
    let rmem = w.param(rest, 0);
    let Some((ocallee, oargs)) = w.body(kernel).map(|(c, a)| (c, a.to_vec())) else {
        return;
    };
    // The indices: threadIdx.x/y, blockIdx.x/y, through imports of their own.
    let names = ["threadIdx.x", "threadIdx.y", "blockIdx.x", "blockIdx.y"];
    let mut vals = Vec::new();
    let mut at = kernel;
    let mut mem = kmem;
    for name in names {
        let ret_t = w.ty_cont(&[mem_t, i32t]);
        let import = w.cont(&[mem_t, ret_t], name);
        w.make_external(import);
        let next = w.cont(&[mem_t, i32t], "index");
        w.set_body(at, import, &[mem, next]);
        mem = w.param(next, 0);
        vals.push(w.param(next, 1));
        at = next;
    }
    let (tx, ty, bidx, bidy) = (vals[0], vals[1], vals[2], vals[3]);
    let lit = |w: &mut World, v: i64| w.lit(i32t, v as u32 as u64);
    let threads = lit(w, bx as i64 * by as i64);
    let bxl = lit(w, bx as i64);
    let row = w.arith(ArithOp::Mul, ty, bxl);
    let linear = w.arith(ArithOp::Add, row, tx);
    let mut loads_to_tiles: Vec<(LoadOffset, Def, i64, i64, i64)> = Vec::new();
    for plan in &plans {
        let tw = bx as i64 + plan.dx.1 - plan.dx.0;
        let th = by as i64 + plan.dy.1 - plan.dy.0;
        let elem = load_type(w, plan.template.load);
        let count = w.lit_i64(tw * th);
        let a = w.alloc_in(mem, elem, count, AddrSpace::Shared);
        mem = w.extract_at(a, 0);
        let tile = w.extract_at(a, 1);
        // The fill loop: element i by thread i mod (bx * by).
        let header = w.cont(&[mem_t, i32t], "fill");
        let body = w.cont(&[mem_t], "fill_body");
        let done = w.cont(&[mem_t], "filled");
        w.set_body(at, header, &[mem, linear]);
        let (hm, i) = (w.param(header, 0), w.param(header, 1));
        let total = lit(w, tw * th);
        let more = w.cmp(CmpOp::Lt, i, total);
        let branch = w.select(more, body, done);
        w.set_body(header, branch, &[hm]);
        // Element i is at (i mod tw, i / tw) of the tile: the template's read with the
        // thread index there.
        let twl = lit(w, tw);
        let col = w.arith(ArithOp::Rem, i, twl);
        let rowi = w.arith(ArithOp::Div, i, twl);
        let shift_x = lit(w, plan.dx.0 - plan.template.dx);
        let shift_y = lit(w, plan.dy.0 - plan.template.dy);
        let at_x = w.arith(ArithOp::Add, col, shift_x);
        let at_y = w.arith(ArithOp::Add, rowi, shift_y);
        let mut subst = rustc_hash::FxHashMap::default();
        for &(p, var) in index_params {
            let to = match var {
                IndexVar::Tid(0) => at_x,
                IndexVar::Tid(1) => at_y,
                IndexVar::Bid(0) => bidx,
                IndexVar::Bid(1) => bidy,
                IndexVar::Dim(0) => bxl,
                IndexVar::Dim(1) => lit(w, by as i64),
                IndexVar::Dim(_) => lit(w, 1),
                IndexVar::Tid(_) | IndexVar::Bid(_) => lit(w, 0),
            };
            subst.insert(p, to);
        }
        let ptr = w.ops(plan.template.load)[1];
        let Some(ptr) = cloner.clone_with(w, ptr, subst) else {
            unreachable!("the template was cloned with zeros");
        };
        let bm = w.param(body, 0);
        let ld = w.load(bm, ptr);
        let (m1, v) = (w.extract_at(ld, 0), w.extract_at(ld, 1));
        let slot = w.lea(tile, i);
        let m2 = w.store(m1, slot, v);
        let next = w.arith(ArithOp::Add, i, threads);
        w.set_body(body, header, &[m2, next]);
        mem = w.param(done, 0);
        at = done;
        for o in &plan.offsets {
            loads_to_tiles.push((*o, tile, tw, plan.dx.0, plan.dy.0));
        }
    }
    // The barrier, then the kernel's own code.
    let sync_t = w.ty_cont(&[mem_t]);
    let sync = w.cont(&[mem_t, sync_t], "__syncthreads");
    w.make_external(sync);
    w.set_body(at, sync, &[mem, rest]);
    // The kernel's `mem` went to the staging code: the original code (which may name it
    // in any of its blocks) takes the one the barrier passes on, and every load of a
    // staged buffer reads the tile (loads in the order they were made, so that a load's
    // `mem` is rewritten after the loads it comes from).
    let mut to_tile = Rewriter::new();
    to_tile.map(kmem, rmem);
    loads_to_tiles.sort_by_key(|t| t.0.load);
    for (o, tile, tw, dx0, dy0) in loads_to_tiles {
        let r = lit(w, o.dy - dy0);
        let c = lit(w, o.dx - dx0);
        let twl = lit(w, tw);
        let ry = w.arith(ArithOp::Add, ty, r);
        let rows = w.arith(ArithOp::Mul, ry, twl);
        let cx = w.arith(ArithOp::Add, tx, c);
        let idx = w.arith(ArithOp::Add, rows, cx);
        let slot = w.lea(tile, idx);
        let m = w.ops(o.load)[0];
        let m = to_tile.rewrite(w, m);
        let new = w.load(m, slot);
        to_tile.map(o.load, new);
    }
    let callee = to_tile.rewrite(w, ocallee);
    let args: Vec<Def> = oargs.iter().map(|&a| to_tile.rewrite(w, a)).collect();
    w.set_body(rest, callee, &args);
    for &c in &original[1..] {
        to_tile.rewrite_cont_into(w, c, c);
    }
}

/// Computes a template read's pointer anew at the kernel's entry: a copy of its
/// computation with the CUDA index parameters replaced (`subst`), where a parameter of a
/// join block (the `min`, `max` and mirrors of a boundary handler after inlining: a branch
/// on `c` to two blocks that each pass one value) becomes `select(c, a, b)`. `None` where
/// the computation loads from memory or passes values around a loop.
struct Cloner {
    kernel: Def,
    subst: rustc_hash::FxHashMap<Def, Def>,
    /// For each continuation of the kernel: the continuations that jump to it.
    preds: rustc_hash::FxHashMap<Def, Vec<Def>>,
    /// For each continuation: the branch that jumps to it, `(cond, then)`.
    branches: rustc_hash::FxHashMap<Def, (Def, bool)>,
    memo: rustc_hash::FxHashMap<Def, Option<Def>>,
}

impl Cloner {
    /// The joins and branches of the kernel whose continuations are `conts` (the kernel
    /// first).
    fn new(w: &World, conts: &[Def]) -> Cloner {
        let mut preds: rustc_hash::FxHashMap<Def, Vec<Def>> = Default::default();
        let mut branches = rustc_hash::FxHashMap::default();
        for &c in conts {
            let Some((callee, _)) = w.body(c) else {
                continue;
            };
            match w.node(callee) {
                Node::Cont => preds.entry(callee).or_default().push(c),
                Node::Select => {
                    let ops = w.ops(callee);
                    branches.insert(ops[1], (ops[0], true));
                    branches.insert(ops[2], (ops[0], false));
                }
                _ => {}
            }
        }
        Cloner {
            kernel: conts[0],
            subst: Default::default(),
            preds,
            branches,
            memo: Default::default(),
        }
    }

    /// `d` computed anew with `subst` for the index parameters.
    fn clone_with(
        &mut self,
        w: &mut World,
        d: Def,
        subst: rustc_hash::FxHashMap<Def, Def>,
    ) -> Option<Def> {
        self.subst = subst;
        self.memo.clear();
        self.clone(w, d, 0)
    }

    fn clone(&mut self, w: &mut World, d: Def, depth: u32) -> Option<Def> {
        if let Some(&to) = self.subst.get(&d) {
            return Some(to);
        }
        if let Some(&r) = self.memo.get(&d) {
            return r;
        }
        if depth > 64 {
            return None;
        }
        self.memo.insert(d, None);
        let r = self.compute(w, d, depth);
        self.memo.insert(d, r);
        r
    }

    fn compute(&mut self, w: &mut World, d: Def, depth: u32) -> Option<Def> {
        match w.node(d) {
            Node::Lit(_) => Some(d),
            Node::Param(i) if w.ops(d)[0] == self.kernel => Some(d).filter(|_| i > 0),
            Node::Param(i) => {
                // A join: two blocks, the targets of one branch, each jumping here.
                let join = w.ops(d)[0];
                let preds = self.preds.get(&join)?.clone();
                let [a, b] = preds.as_slice() else {
                    return None;
                };
                let (&(cond, a_then), &(cond_b, b_then)) =
                    (self.branches.get(a)?, self.branches.get(b)?);
                if cond != cond_b || a_then == b_then {
                    return None;
                }
                let (then_k, else_k) = if a_then { (*a, *b) } else { (*b, *a) };
                let tv = w.body(then_k)?.1.get(i as usize).copied()?;
                let ev = w.body(else_k)?.1.get(i as usize).copied()?;
                let c = self.clone(w, cond, depth + 1)?;
                let (t, e) = (self.clone(w, tv, depth + 1)?, self.clone(w, ev, depth + 1)?);
                Some(w.select(c, t, e))
            }
            Node::Load | Node::Cont | Node::Store | Node::Alloc | Node::Slot => None,
            node => {
                let ops = w.ops(d).to_vec();
                let mut new = Vec::with_capacity(ops.len());
                for o in ops {
                    new.push(self.clone(w, o, depth + 1)?);
                }
                let ty = w.type_of(d);
                Some(if new.as_slice() == w.ops(d) {
                    d
                } else {
                    w.build(node, ty, &new)
                })
            }
        }
    }
}

/// The type `load` reads (its result is `(mem, T)`).
fn load_type(w: &World, load: Def) -> durin_ir::Type {
    let ty = w.type_of(load);
    w.types()
        .components(ty)
        .and_then(|c| c.get(1).copied())
        .unwrap_or(ty)
}
