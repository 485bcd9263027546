//! The pass `stage`: stages the read-only buffers of CUDA kernels into shared memory,
//! those the cost model ([`super::model`]) expects a gain from (`--shm auto`), all that
//! can be staged (`--shm on`), or none (`--shm off`); a kernel's code overrides the choice
//! for one of its buffers with the hints `shm_stage(p)` and `shm_keep(p)`.
//!
//! It runs after kernel outlining (each launched kernel is a closed continuation) and
//! before launch lowering, on the host world, so that the interpreter runs the staged
//! kernels as the GPU does. For each kernel with a constant block shape, read-only tracing
//! and footprints ([`super::buffers`]) find the buffers that can be staged:
//!
//! - a *tile*: reads that are a box of offsets around each thread's pixel with a boundary
//!   handler (so that every element of the tile, halo included, can be read through the
//!   handler). At the kernel's entry, the threads of the block fill a tile of
//!   `(bx + box width - 1)` x `(by + box height - 1)` elements in shared memory, element `i`
//!   by thread `i mod (bx * by)` (its column and row stepped along with `i`, without a
//!   division): each element is read as one of the kernel's own reads (the *template*)
//!   computes it through the boundary handler, with the thread index replaced by the
//!   element's position. Every other read through a handler must compute the template's
//!   read moved by its offset (compared as computations: the same handler), and a read
//!   without one is taken to read inside the image, where the handler reads the pixel
//!   itself (the image library's interior path). Every load of the buffer becomes a load of the tile at the
//!   thread's position plus the load's offset: `(tid.y + dy - dy0) * tile width + tid.x +
//!   dx - dx0`, adds and one multiplication by a constant, no division. Where the handler
//!   does not replace every axis of the pixel (or there is none, and every read is the
//!   template's moved), the kernel's own conditions keep its reads in the buffer, and the
//!   fill is guarded ([`Fill`]): it reads an element only where a thread of the block
//!   reaches a load that reads it ([`super::paths`]);
//! - a *mask*: reads at constant indices, the same for every thread, of a buffer the
//!   launch shows to hold at least the largest of them (a pointer to the start of an
//!   allocation of a constant size). The block copies the elements from the smallest
//!   index to the largest, and each load reads its element of the copy.
//!
//! Then `__syncthreads`, and the kernel's own code. Clamped reads stay bitwise identical: a
//! tile element holds what the kernel would have read there.

use super::affine::same_value;
use super::buffers::{self, Access, KernelBuffers};
use super::footprint::{load_type, Footprint, IndexVar, LoadOffset};
use super::launch::{allocation_results, launch_loc, launched_kernel};
use super::model::{self, StageMode, Staging, Use};
use super::paths::{block_of, Paths};
use crate::analysis::live::Live;
use crate::context::{Pass, PassContext};
use crate::rewrite::{Rewriter, ScopeIndex};
use crate::simplify;
use durin_diag::Diagnostic;
use durin_ir::layout::size_align;
use durin_ir::{AddrSpace, ArithOp, CmpOp, Def, Kernel, Node, TypeKind, World};

/// The most shared memory a kernel's tiles may take (CUDA's static limit per block).
const MAX_SHARED: i64 = 48 * 1024;

/// The pass `stage`.
pub(crate) struct Stage;

impl Pass for Stage {
    fn name(&self) -> &'static str {
        "stage"
    }

    fn description(&self) -> &'static str {
        "shared-memory staging (after `outline`): read-only buffers of a kernel whose reads are a box around each thread's pixel (through a boundary handler, or kept in the buffer by the kernel's conditions), or constant elements of a mask, are copied into shared memory at the kernel's entry, and their loads read the copy; which ones, `--shm` and the cost model decide"
    }

    fn lowers(&self) -> bool {
        true
    }

    fn run(&self, w: &mut World, cx: &mut PassContext<'_>) -> Result<(), Diagnostic> {
        // What only the replaced loads used (the handler's branches) goes.
        if run(w, cx)? {
            simplify::run(w, cx.config.fuel)?;
        }
        Ok(())
    }
}

/// Stages what the mode and the hints choose in every launched kernel of `w`; records the
/// decisions for `--report shm` where `cx` asks for them. Whether it staged anything.
fn run(w: &mut World, cx: &mut PassContext) -> Result<bool, Diagnostic> {
    let mode = cx.config.shm;
    let live = Live::new(w);
    let hinted = live.conts().iter().any(|&c| {
        w.body(c).is_none()
            && w.name(c)
                .is_some_and(|n| buffers::staging_hint(n).is_some())
    });
    if mode == StageMode::Off && !hinted && !cx.findings.wants_kernels() {
        return Ok(false);
    }
    let mut staged = false;
    let launches = live.launches(w);
    let allocated = allocation_results(w, live.conts());
    let mut index = ScopeIndex::default();
    for l in &launches {
        let (k, captured) = launched_kernel(w, l, &allocated);
        let mut found = buffers::trace(
            w,
            &k,
            &captured.ids,
            &captured.extents,
            Some((w, &l.captured)),
        );
        staged |= stage_kernel(w, &k, &mut found, mode);
        // The report's place, only where there is a report.
        if cx.findings.wants_kernels() {
            found.loc = launch_loc(w, l, cx.sources(), &mut index);
            cx.findings.staged(found);
        }
    }
    Ok(staged)
}

/// What staging one buffer needs.
struct Plan {
    offsets: Vec<LoadOffset>,
    shape: Shape,
}

/// The copy a plan makes.
#[derive(Clone, Copy)]
enum Shape {
    /// A tile around the block's pixels: columns and rows of offsets, and a load through
    /// the boundary handler, whose index computation fills the tile.
    Tile {
        dx: (i64, i64),
        dy: (i64, i64),
        template: LoadOffset,
        /// Whether the fill reads only the elements the block's threads read (where the
        /// reads are not kept in the buffer by a boundary handler along every axis).
        guard: bool,
    },
    /// Elements `lo..=hi` of a mask, counted from `base`.
    Mask { lo: i64, hi: i64, base: Def },
}

impl Shape {
    /// The elements of the copy, for blocks of `bx` x `by` threads.
    fn elements(self, bx: i64, by: i64) -> (i64, i64) {
        match self {
            Shape::Tile { dx, dy, .. } => (bx + dx.1 - dx.0, by + dy.1 - dy.0),
            Shape::Mask { lo, hi, .. } => (hi - lo + 1, 1),
        }
    }
}

/// How buffer `b` can be staged, or why not.
fn shape_of(
    w: &mut World,
    b: &buffers::Buffer,
    cloner: &mut Cloner,
    paths: &Paths,
    index_params: &[(Def, IndexVar)],
) -> Result<Shape, String> {
    let Some(fp) = &b.footprint else {
        return Err("no footprint".into());
    };
    match fp {
        Footprint::Box {
            dx,
            dy,
            edge,
            bounded,
            ..
        } => {
            // The template: a read through the boundary handler, or any read where there
            // is none.
            let template = b.offsets.iter().find(|o| o.edge || !edge).copied();
            let Some(template) = template else {
                return Err("no read through the boundary handler".into());
            };
            // Every read through a handler (every read, where there is none) must be the
            // template's moved by its offset (the tile holds what the template reads
            // there): the same handler, not another one at some reads. A read without one
            // beside reads through it (an interior path: `img_window` inside the image)
            // reads the pixel itself, which the handler reads there too. The template's
            // own copy (moved by nothing) shows that it can be computed at the kernel's
            // entry.
            let ptr = w.ops(template.load)[1];
            for o in b.offsets.iter().filter(|o| o.edge || !edge) {
                let by = (o.dx - template.dx, o.dy - template.dy);
                let subst = moved_by(w, index_params, by);
                let Some(moved) = cloner.clone_with(w, ptr, subst) else {
                    return Err(
                        "the boundary handler's reads cannot be computed at the kernel's entry"
                            .into(),
                    );
                };
                if o.load == template.load {
                    continue;
                }
                let subst = moved_by(w, index_params, (0, 0));
                let own = cloner.clone_with(w, w.ops(o.load)[1], subst);
                if !own.is_some_and(|own| same_value(w, moved, own, 0)) {
                    return Err(if *edge {
                        "its reads do not all go through one boundary handler (a tile holds one handler's reads)"
                    } else {
                        "its reads are not all one read moved by their offsets"
                    }
                    .into());
                }
            }
            // Where a handler does not keep every read in the buffer, the kernel's own
            // conditions around its reads do (an `if y < h`): the fill reads an element only
            // where the block's threads read it, which takes those conditions as values.
            let guard = !bounded;
            if guard {
                let unknown = "the conditions under which its reads run cannot be computed at the kernel's entry (a loop, or a value loaded from memory)";
                let Some(fill) = Fill::new(w, &b.offsets, (dx.0, dy.0), (1, 1)) else {
                    return Err(unknown.into());
                };
                let i32t = w.ty_int(32, true);
                let zero = w.lit(i32t, 0);
                let at = |w: &mut World, _x: Def, _y: Def| moved_by(w, index_params, (0, 0));
                if fill.guard(w, cloner, paths, (zero, zero), &at).is_none() {
                    return Err(unknown.into());
                }
            }
            Ok(Shape::Tile {
                dx: *dx,
                dy: *dy,
                template,
                guard,
            })
        }
        Footprint::ThreadIndependent { elements: None } => {
            Err("a mask read at indices not known at compile time".into())
        }
        Footprint::ThreadIndependent {
            elements: Some((lo, hi)),
        } => {
            let Some(first) = b.offsets.first() else {
                return Err("no reads".into());
            };
            let elem = load_type(w, first.load);
            let size = size_align(w, elem).0 as i64;
            let is_array = matches!(w.kind(w.type_of(first.base)), TypeKind::Ptr { pointee, .. }
                if matches!(w.kind(*pointee), TypeKind::Array { .. }));
            match b.extent {
                _ if !is_array => Err("a mask not read through an array".into()),
                None => Err("a mask whose size the launch does not show (a pointer to the start of an allocation of a constant size)".into()),
                Some(e) if *lo < 0 || (*hi + 1) * size > e => Err(format!(
                    "a mask read at elements {lo} to {hi}, beyond its allocation of {e} bytes"
                )),
                Some(_) => match cloner.clone_with(w, first.base, Default::default()) {
                    Some(_) => Ok(Shape::Mask {
                        lo: *lo,
                        hi: *hi,
                        base: first.base,
                    }),
                    None => Err("the mask's address cannot be computed at the kernel's entry".into()),
                },
            }
        }
        Footprint::NotAffine(why) => Err(format!("not affine: {why}")),
    }
}

/// Decides for each read-only buffer of kernel `k` and stages the chosen ones; whether it
/// staged any.
fn stage_kernel(w: &mut World, k: &Kernel, found: &mut KernelBuffers, mode: StageMode) -> bool {
    let not = |why: &str| Staging {
        staged: false,
        why: why.to_string(),
        estimate: None,
        bytes: 0,
    };
    let Some([bx, by, 1]) = k.block else {
        for b in &mut found.buffers {
            if b.access == Access::ReadOnly {
                b.staging = Some(not("the launch's block shape is not a constant x * y"));
            }
        }
        return false;
    };
    let (bx, by) = (bx as i64, by as i64);
    // Only the kernel's own index parameters may appear in a template's index.
    let index_params = found.index_params.clone();
    let mut plans = Vec::new();
    let mut bytes = 0i64;
    // The kernel's own continuations, before the staging code changes it.
    let original: Vec<Def> = (found.conts.iter().copied())
        .filter(|&c| w.body(c).is_some())
        .collect();
    let mut cloner = Cloner::new(w, &original);
    let paths = Paths::new(w, &original);
    for b in &mut found.buffers {
        if b.access != Access::ReadOnly {
            continue;
        }
        let shape = match shape_of(w, b, &mut cloner, &paths, &index_params) {
            Ok(s) => s,
            Err(why) => {
                b.staging = Some(not(&format!("cannot be staged: {why}")));
                continue;
            }
        };
        let elem = size_align(w, load_type(w, b.offsets[0].load)).0 as i64;
        let (tw, th) = shape.elements(bx, by);
        let size = tw * th * elem;
        let mut reads: Vec<(i64, i64)> = b.offsets.iter().map(|o| (o.dx, o.dy)).collect();
        reads.sort_unstable();
        reads.dedup();
        let estimate = model::estimate(
            &model::SM90,
            &Use {
                threads: bx * by,
                reads: reads.len() as i64,
                tile: tw * th,
                elem,
                uniform: matches!(shape, Shape::Mask { .. }),
                shared: bytes + size,
            },
        );
        let gain = estimate.gain();
        let (stage, why) = match (b.hint, mode) {
            (Some(true), _) => (true, "staged: `shm_stage` in the kernel's code".to_string()),
            (Some(false), _) => (
                false,
                "not staged: `shm_keep` in the kernel's code".to_string(),
            ),
            (None, StageMode::On) => (true, "staged: --shm on".to_string()),
            (None, StageMode::Off) => (false, "not staged: --shm off".to_string()),
            (None, StageMode::Auto) if gain >= model::THRESHOLD => {
                (true, "staged: the model expects a gain".to_string())
            }
            (None, StageMode::Auto) => (
                false,
                format!(
                    "not staged: the model expects no gain of {:.0}% or more",
                    model::THRESHOLD * 100.0
                ),
            ),
        };
        let fits = bytes + size <= MAX_SHARED;
        let guarded = matches!(shape, Shape::Tile { guard: true, .. });
        b.staging = Some(Staging {
            staged: stage && fits,
            why: match (stage, fits) {
                (true, false) => format!(
                    "not staged: the kernel's tiles would take more than {} KiB of shared memory",
                    MAX_SHARED / 1024
                ),
                (true, true) if guarded => format!(
                    "{why} (the fill reads only the elements the block's threads read, under the kernel's conditions around its reads)"
                ),
                _ => why,
            },
            estimate: Some(estimate),
            bytes: size,
        });
        if stage && fits {
            bytes += size;
            plans.push(Plan {
                offsets: b.offsets.clone(),
                shape,
            });
        }
    }
    if plans.is_empty() {
        return false;
    }
    transform(
        w,
        k.def,
        &plans,
        [bx, by],
        &index_params,
        &original,
        &mut cloner,
        &paths,
    );
    true
}

/// Adds the staging code of `plans` at the entry of `kernel` (blocks of `bx` x `by`) and
/// makes the staged loads read the copies.
fn transform(
    w: &mut World,
    kernel: Def,
    plans: &[Plan],
    [bx, by]: [i64; 2],
    index_params: &[(Def, IndexVar)],
    original: &[Def],
    cloner: &mut Cloner,
    paths: &Paths,
) {
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
    let threads = lit(w, bx * by);
    let bxl = lit(w, bx);
    let row = w.arith(ArithOp::Mul, ty, bxl);
    let linear = w.arith(ArithOp::Add, row, tx);
    // Each staged load, with the copy it reads and the index there.
    let mut loads_to_copies: Vec<(LoadOffset, Def, Shape, i64)> = Vec::new();
    for plan in plans {
        let (tw, th) = plan.shape.elements(bx, by);
        let first = plan.offsets[0].load;
        let elem = load_type(w, first);
        let count = w.lit_i64(tw * th);
        let a = w.alloc_in(mem, elem, count, AddrSpace::Shared);
        mem = w.extract_at(a, 0);
        let tile = w.extract_at(a, 1);
        // The index parameters of the thread at (x, y) of the block.
        let thread_at = |w: &mut World, x: Def, y: Def| {
            let mut subst = rustc_hash::FxHashMap::default();
            for &(p, var) in index_params {
                let to = match var {
                    IndexVar::Tid(0) => x,
                    IndexVar::Tid(1) => y,
                    IndexVar::Bid(0) => bidx,
                    IndexVar::Bid(1) => bidy,
                    IndexVar::Dim(0) => bxl,
                    IndexVar::Dim(1) => lit(w, by),
                    IndexVar::Dim(_) => lit(w, 1),
                    IndexVar::Tid(_) | IndexVar::Bid(_) => lit(w, 0),
                };
                subst.insert(p, to);
            }
            subst
        };
        let ptr_at = |w: &mut World, cloner: &mut Cloner, col: Def, row: Def| match plan.shape {
            Shape::Tile {
                dx, dy, template, ..
            } => {
                // The element at (col, row) of the tile: the template's read with the
                // thread index there.
                let shift_x = lit(w, dx.0 - template.dx);
                let shift_y = lit(w, dy.0 - template.dy);
                let at_x = w.arith(ArithOp::Add, col, shift_x);
                let at_y = w.arith(ArithOp::Add, row, shift_y);
                let subst = thread_at(w, at_x, at_y);
                let ptr = w.ops(template.load)[1];
                cloner.clone_with(w, ptr, subst)
            }
            Shape::Mask { lo, base, .. } => {
                let base = cloner.clone_with(w, base, Default::default());
                let lol = lit(w, lo);
                let at = w.arith(ArithOp::Add, col, lol);
                base.map(|b| w.lea(b, at))
            }
        };
        // The fill: thread `t` (its linear index in the block) the elements `t`, `t + B`,
        // `t + 2B` ... (B threads), each at (col, row) of the tile: found with one division
        // at the start, then stepped by B's whole rows and its rest, a wrap to the next
        // row where the column passes the width, so that the loop has no division.
        let total = tw * th;
        let twl = lit(w, tw);
        let col0 = w.arith(ArithOp::Rem, linear, twl);
        let row0 = w.arith(ArithOp::Div, linear, twl);
        let header = w.cont(&[mem_t, i32t, i32t, i32t], "fill");
        let body = w.cont(&[mem_t], "fill_body");
        let done = w.cont(&[mem_t], "filled");
        w.set_body(at, header, &[mem, linear, col0, row0]);
        let (hm, i) = (w.param(header, 0), w.param(header, 1));
        let (col, row) = (w.param(header, 2), w.param(header, 3));
        let totall = lit(w, total);
        let more = w.cmp(CmpOp::Lt, i, totall);
        let branch = w.select(more, body, done);
        w.set_body(header, branch, &[hm]);
        let Some(ptr) = ptr_at(w, cloner, col, row) else {
            unreachable!("the address was computed when the buffer was chosen");
        };
        let bm = w.param(body, 0);
        // Where the fill is guarded, the element is read in a block of its own, which
        // the body branches to or around.
        let guard = match plan.shape {
            Shape::Tile {
                dx,
                dy,
                guard: true,
                ..
            } => {
                let fill = Fill::new(w, &plan.offsets, (dx.0, dy.0), (bx, by));
                let g = fill.and_then(|f| f.guard(w, cloner, paths, (col, row), &thread_at));
                let Some(g) = g else {
                    unreachable!("the guard was computed when the buffer was chosen");
                };
                Some(g)
            }
            _ => None,
        };
        let (read_at, step) = match guard {
            Some(g) => {
                let read = w.cont(&[mem_t], "fill_read");
                let step = w.cont(&[mem_t], "fill_step");
                let branch = w.select(g, read, step);
                w.set_body(body, branch, &[bm]);
                (read, Some(step))
            }
            None => (body, None),
        };
        let rm = w.param(read_at, 0);
        let ld = w.load(rm, ptr);
        let (m1, v) = (w.extract_at(ld, 0), w.extract_at(ld, 1));
        let slot = w.lea(tile, i);
        let m2 = w.store(m1, slot, v);
        // The step to the next element (after the read, or instead of it).
        let (body, m2) = match step {
            Some(step) => {
                w.set_body(read_at, step, &[m2]);
                (step, w.param(step, 0))
            }
            None => (body, m2),
        };
        let next = w.arith(ArithOp::Add, i, threads);
        let (rows_step, cols_step) = (lit(w, (bx * by) / tw), lit(w, (bx * by) % tw));
        let col1 = w.arith(ArithOp::Add, col, cols_step);
        let row1 = w.arith(ArithOp::Add, row, rows_step);
        let wraps = w.cmp(CmpOp::Ge, col1, twl);
        let col_wrapped = w.arith(ArithOp::Sub, col1, twl);
        let one = lit(w, 1);
        let row_wrapped = w.arith(ArithOp::Add, row1, one);
        let col2 = w.select(wraps, col_wrapped, col1);
        let row2 = w.select(wraps, row_wrapped, row1);
        w.set_body(body, header, &[m2, next, col2, row2]);
        mem = w.param(done, 0);
        at = done;
        for o in &plan.offsets {
            loads_to_copies.push((*o, tile, plan.shape, tw));
        }
    }
    // The barrier, then the kernel's own code.
    let sync_t = w.ty_cont(&[mem_t]);
    let sync = w.cont(&[mem_t, sync_t], "__syncthreads");
    w.make_external(sync);
    w.set_body(at, sync, &[mem, rest]);
    // The kernel's `mem` went to the staging code: the original code (which may name it
    // in any of its blocks) takes the one the barrier passes on, and every load of a
    // staged buffer reads the copy (loads in the order they were made, so that a load's
    // `mem` is rewritten after the loads it comes from).
    let mut to_tile = Rewriter::new();
    to_tile.map(kmem, rmem);
    loads_to_copies.sort_by_key(|t| t.0.load);
    for (o, tile, shape, tw) in loads_to_copies {
        let idx = match shape {
            Shape::Tile { dx, dy, .. } => {
                let r = lit(w, o.dy - dy.0);
                let c = lit(w, o.dx - dx.0);
                let twl = lit(w, tw);
                let ry = w.arith(ArithOp::Add, ty, r);
                let rows = w.arith(ArithOp::Mul, ry, twl);
                let cx = w.arith(ArithOp::Add, tx, c);
                w.arith(ArithOp::Add, rows, cx)
            }
            Shape::Mask { lo, .. } => lit(w, o.dx - lo),
        };
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

/// The guard of a tile's fill: whether some thread of the block reads an element, through
/// one of the buffer's loads (each in its continuation, at its offset from the thread's
/// pixel) under the conditions that lead the thread there.
struct Fill {
    /// The continuation of each load, and its offset, without repeats.
    sites: Vec<(Def, i64, i64)>,
    /// The offset of the tile's first element from the block's first pixel.
    origin: (i64, i64),
    /// The block's shape.
    block: (i64, i64),
}

impl Fill {
    /// The guard of a tile of `loads` whose first element is at `origin`, for blocks of
    /// `block` threads; `None` where a load's continuation is not found.
    fn new(w: &World, loads: &[LoadOffset], origin: (i64, i64), block: (i64, i64)) -> Option<Fill> {
        let mut sites = Vec::new();
        for o in loads {
            let site = (block_of(w, o.load)?, o.dx, o.dy);
            if !sites.contains(&site) {
                sites.push(site);
            }
        }
        Some(Fill {
            sites,
            origin,
            block,
        })
    }

    /// Whether a thread of the block reads element `(col, row)` of the tile: the `or`
    /// over the loads of the thread that would (the element less the load's offset) lying
    /// in the block `and` reaching the load (`paths`, its conditions copied by `cloner`
    /// with `thread_at(x, y)`, the index parameters of the thread at (x, y)). `None`
    /// where a condition cannot be copied.
    fn guard(
        &self,
        w: &mut World,
        cloner: &mut Cloner,
        paths: &Paths,
        (col, row): (Def, Def),
        thread_at: &dyn Fn(&mut World, Def, Def) -> rustc_hash::FxHashMap<Def, Def>,
    ) -> Option<Def> {
        let i32t = w.ty_int(32, true);
        let mut any: Option<Def> = None;
        for &(site, ox, oy) in &self.sites {
            let mut inside = w.lit_bool(true);
            let mut at = [col, row];
            for (a, (shift, n)) in [
                (self.origin.0 - ox, self.block.0),
                (self.origin.1 - oy, self.block.1),
            ]
            .into_iter()
            .enumerate()
            {
                let s = w.lit(i32t, shift as u32 as u64);
                at[a] = w.arith(ArithOp::Add, at[a], s);
                let zero = w.lit(i32t, 0);
                let n = w.lit(i32t, n as u32 as u64);
                let lo = w.cmp(CmpOp::Ge, at[a], zero);
                let hi = w.cmp(CmpOp::Lt, at[a], n);
                inside = w.arith(ArithOp::And, inside, lo);
                inside = w.arith(ArithOp::And, inside, hi);
            }
            let subst = thread_at(w, at[0], at[1]);
            cloner.begin(subst);
            let reach = paths.reach(w, site, &mut |w, d| cloner.copy(w, d))?;
            let here = w.arith(ArithOp::And, inside, reach);
            any = Some(match any {
                None => here,
                Some(a) => w.arith(ArithOp::Or, a, here),
            });
        }
        any
    }
}

/// The substitution that moves the thread's pixel by `(dx, dy)`: `threadIdx.x + dx` for
/// `threadIdx.x` (and the same down), every other index parameter for itself.
fn moved_by(
    w: &mut World,
    index_params: &[(Def, IndexVar)],
    (dx, dy): (i64, i64),
) -> rustc_hash::FxHashMap<Def, Def> {
    let i32t = w.ty_int(32, true);
    let mut subst = rustc_hash::FxHashMap::default();
    for &(p, var) in index_params {
        let by = match var {
            IndexVar::Tid(0) => dx,
            IndexVar::Tid(1) => dy,
            _ => 0,
        };
        let to = if by == 0 {
            p
        } else {
            let l = w.lit(i32t, by as u32 as u64);
            w.arith(ArithOp::Add, p, l)
        };
        subst.insert(p, to);
    }
    subst
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
        self.begin(subst);
        self.copy(w, d)
    }

    /// Starts copies with `subst` for the index parameters.
    fn begin(&mut self, subst: rustc_hash::FxHashMap<Def, Def>) {
        self.subst = subst;
        self.memo.clear();
    }

    /// `d` computed anew with the substitution of the last `begin` (the copies since then
    /// shared).
    fn copy(&mut self, w: &mut World, d: Def) -> Option<Def> {
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
