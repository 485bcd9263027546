//! Read-only tracing of a kernel's buffers, on the device world after the device pipeline:
//! which pointer parameters the kernel only reads, which it writes, and which cannot be
//! shown either way (and why), the first step of staging read-only buffers into shared
//! memory.
//!
//! Every def of the code the kernel reaches gets the set of *roots* it may point into: a
//! root is a value parameter of the kernel, or a field of one (a path of `extract`
//! indices), found through `extract`, `bitcast`, `lea`, `select`, aggregates, and the
//! parameters of the continuations the kernel jumps to or calls (the values every jump
//! passes them, to a fixed point). Then:
//!
//! - a `load` through a pointer reads its roots;
//! - a `store` through it, or an import that writes (an atomic, a streaming store), writes
//!   its roots;
//! - a pointer stored to memory, converted to an integer, passed to another import or
//!   returned escapes: its roots are disqualified (what happens to them is not known);
//! - a store through a pointer of unknown origin (loaded from memory, returned by a call,
//!   made from an integer) may write anything: every read-only root is disqualified;
//! - a read-only root that may alias a written one is disqualified, unless the launch shows
//!   the two in different allocations.
//!
//! The analysis is flow-insensitive and context-insensitive: it never calls a written
//! buffer read-only, and may call a read-only buffer disqualified.

use super::footprint::{analyze, Footprint, HostSide, IndexVar, Indices, LoadOffset};
use super::launch::{holds_pointer, without_casts};
use super::model::Staging;
use durin_diag::Span;
use durin_ir::{Def, Kernel, Node, TypeKind, World};
use rustc_hash::{FxHashMap, FxHashSet};

/// Where a pointer may point: into value parameter `param` of the kernel (numbered from 0
/// after `mem`), at the field `path` of it (empty: the parameter itself).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Root {
    /// The value parameter.
    pub param: usize,
    /// The `extract` indices from the parameter to the pointer.
    pub path: Vec<u32>,
}

/// What the kernel does with a buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Access {
    /// Only loads through it (a candidate for staging).
    ReadOnly,
    /// Stores through it (or an atomic, or a streaming store).
    Written,
    /// Neither can be shown: the reason.
    Disqualified(String),
    /// The kernel does not access memory through it.
    Unused,
}

/// A buffer of a kernel: a pointer parameter, or a pointer field of a parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Buffer {
    /// Which pointer.
    pub root: Root,
    /// What the kernel does with it.
    pub access: Access,
    /// The place that decided it (the first store, the escape), when known.
    pub at: Option<Span>,
    /// How many loads through it the kernel's code has.
    pub loads: usize,
    /// What a block reads of it (read-only buffers).
    pub footprint: Option<Footprint>,
    /// Where each load reads (read-only buffers whose footprint is a box or a constant
    /// range of a mask).
    pub(crate) offsets: Vec<LoadOffset>,
    /// The bytes from the pointer to the end of its allocation, where the launch shows
    /// them (a pointer to the start of an allocation of a constant size).
    pub extent: Option<i64>,
    /// What the kernel's code asks of staging it (`shm_stage`: `Some(true)`, `shm_keep`:
    /// `Some(false)`), overriding `--shm` and the cost model.
    pub hint: Option<bool>,
    /// What the `stage` pass decided (read-only buffers, where it ran).
    pub staging: Option<Staging>,
}

impl Buffer {
    /// A buffer nothing has been found to access yet.
    fn unused(root: Root) -> Buffer {
        Buffer {
            root,
            access: Access::Unused,
            at: None,
            loads: 0,
            footprint: None,
            offsets: Vec::new(),
            extent: None,
            hint: None,
            staging: None,
        }
    }
}

/// What a kernel's code says it computes (`launch_note(lanes, rows, tile_w, tile_h)`):
/// `lanes` x `rows` pixels per thread, `tile_w` x `tile_h` per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tile {
    pub thread: [u32; 2],
    pub block: [u32; 2],
}

/// The buffers of one kernel.
#[derive(Clone, Debug)]
pub struct KernelBuffers {
    /// The kernel.
    pub kernel: Def,
    /// Its name in the device world.
    pub name: String,
    /// Its place.
    pub loc: Option<Span>,
    /// The calls it was specialized from, innermost first, where its place is in a function
    /// that partial evaluation specialized (a library's): [`durin_ir::World::expansion`].
    pub expanded_from: Vec<Span>,
    /// The block shape of its launch, when constant.
    pub block: Option<[u32; 3]>,
    /// The pixels its threads and blocks compute, where its code says so
    /// (`launch_note`, with constants).
    pub tile: Option<Tile>,
    /// Its buffers, by root.
    pub buffers: Vec<Buffer>,
    /// The parameters that hold CUDA indices.
    pub(crate) index_params: Vec<(Def, IndexVar)>,
    /// The continuations the kernel reaches, the kernel first.
    pub(crate) conts: Vec<Def>,
}

/// The imports that write through their first argument.
fn writes_through(name: &str) -> bool {
    name.contains("atomic") || name == "durin_store_stream_f32"
}

/// The imports that take a pointer and neither read nor write through it.
fn only_looks_at(name: &str) -> bool {
    matches!(name, "durin_aligned" | "durin_assume_aligned") || staging_hint(name).is_some()
}

/// The staging hint an import is: `shm_stage` (stage the buffer), `shm_keep` (do not).
pub(crate) fn staging_hint(name: &str) -> Option<bool> {
    match name {
        "durin_shm_stage" => Some(true),
        "durin_shm_keep" => Some(false),
        _ => None,
    }
}

struct Tracer<'w> {
    w: &'w World,
    kernel: Def,
    /// The roots each def may point into (absent: none).
    roots: FxHashMap<Def, Vec<Root>>,
    /// For each parameter of a reached continuation: the arguments passed to it.
    incoming: FxHashMap<Def, Vec<Def>>,
    /// The defs of the code, each with the place of the continuation it was found in.
    defs: Vec<(Def, Option<Span>)>,
    /// Defs that hold a pointer of unknown origin.
    unknown: FxHashSet<Def>,
    /// The continuations the kernel reaches, the kernel first.
    conts: Vec<Def>,
}

impl<'w> Tracer<'w> {
    fn new(w: &'w World, kernel: Def) -> Tracer<'w> {
        Tracer {
            w,
            kernel,
            roots: FxHashMap::default(),
            incoming: FxHashMap::default(),
            defs: Vec::new(),
            unknown: FxHashSet::default(),
            conts: Vec::new(),
        }
    }

    /// Collects the continuations the kernel reaches, their bodies' defs, and the values
    /// passed to each continuation's parameters.
    fn collect(&mut self) {
        let w = self.w;
        let mut conts = vec![self.kernel];
        let mut seen_conts: FxHashSet<Def> = [self.kernel].into_iter().collect();
        let mut seen: FxHashSet<Def> = FxHashSet::default();
        while let Some(k) = conts.pop() {
            self.conts.push(k);
            let Some((callee, args)) = w.body(k) else {
                continue;
            };
            let place = w.loc(k);
            // A jump, or a branch (a `select` of two continuations) passing the same values.
            let targets: Vec<Def> = match w.node(callee) {
                Node::Cont => vec![callee],
                Node::Select => w.ops(callee)[1..]
                    .iter()
                    .copied()
                    .filter(|&t| w.node(t) == Node::Cont)
                    .collect(),
                _ => Vec::new(),
            };
            for t in targets {
                for (i, &a) in args.iter().enumerate() {
                    if let Some(p) = w.param_if_built(t, i) {
                        self.incoming.entry(p).or_default().push(a);
                    }
                }
            }
            let mut stack: Vec<Def> = std::iter::once(callee)
                .chain(args.iter().copied())
                .collect();
            while let Some(d) = stack.pop() {
                if w.node(d) == Node::Cont {
                    if seen_conts.insert(d) {
                        conts.push(d);
                    }
                    continue;
                }
                if !seen.insert(d) {
                    continue;
                }
                self.defs.push((d, place));
                if matches!(w.node(d), Node::Param(_)) {
                    continue;
                }
                stack.extend(w.ops(d).iter().copied());
            }
        }
    }

    /// The roots of `d` from its operands (and, for a parameter, from what is passed).
    fn derive(&self, d: Def) -> (Vec<Root>, bool) {
        let w = self.w;
        let ops = w.ops(d);
        let get = |x: Def| self.roots.get(&x).cloned().unwrap_or_default();
        let unk = |x: Def| self.unknown.contains(&x);
        let is_ptr = matches!(w.kind(w.type_of(d)), TypeKind::Ptr { .. });
        match w.node(d) {
            Node::Param(i) if ops[0] == self.kernel => {
                // Value parameters are numbered after `mem`.
                let roots = if i >= 1 && holds_pointer(w, w.type_of(d)) {
                    vec![Root {
                        param: i as usize - 1,
                        path: Vec::new(),
                    }]
                } else {
                    Vec::new()
                };
                (roots, false)
            }
            Node::Param(_) => {
                let mut out = Vec::new();
                let mut u = false;
                for &a in self.incoming.get(&d).map(Vec::as_slice).unwrap_or(&[]) {
                    out.extend(get(a));
                    u |= unk(a);
                }
                // A parameter nothing is passed to here is a function's result, or a
                // parameter of a function called from elsewhere.
                u |= is_ptr && !self.incoming.contains_key(&d);
                (out, u)
            }
            Node::Extract => {
                let idx = w.lit_bits(ops[1]);
                let base = get(ops[0]);
                let mut out: Vec<Root> = base
                    .into_iter()
                    .map(|mut r| {
                        if let Some(i) = idx {
                            r.path.push(i as u32);
                        }
                        r
                    })
                    .collect();
                // A pointer loaded from memory: of unknown origin.
                let loaded = w.node(ops[0]) == Node::Load;
                if loaded {
                    out.clear();
                }
                (out, unk(ops[0]) || (loaded && is_ptr))
            }
            Node::Bitcast | Node::Lea => (get(ops[0]), unk(ops[0])),
            // A pointer made from an integer: of unknown origin.
            Node::Conv => (Vec::new(), is_ptr),
            Node::Select => {
                let mut out = get(ops[1]);
                out.extend(get(ops[2]));
                (out, unk(ops[1]) || unk(ops[2]))
            }
            Node::Tuple | Node::Struct | Node::Array | Node::Insert => {
                let mut out = Vec::new();
                let mut u = false;
                for &o in ops {
                    out.extend(get(o));
                    u |= unk(o);
                }
                (out, u)
            }
            _ => (Vec::new(), false),
        }
    }

    /// Propagates roots to a fixed point.
    fn propagate(&mut self) {
        loop {
            let mut changed = false;
            for i in 0..self.defs.len() {
                let d = self.defs[i].0;
                let (mut roots, u) = self.derive(d);
                roots.sort();
                roots.dedup();
                if !roots.is_empty() && self.roots.get(&d) != Some(&roots) {
                    self.roots.insert(d, roots);
                    changed = true;
                }
                if u && self.unknown.insert(d) {
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }
}

/// The buffers of kernel `k` of `w` (a closed, outlined kernel); `bases` numbers the
/// allocation each value parameter points into, where the launch shows it (parameters
/// with different numbers do not alias) and `extents` the bytes from each to the end of
/// its allocation, where known; `host` is the launch's side, whose arithmetic on the values
/// it passes the footprints see through.
pub(crate) fn trace(
    w: &World,
    k: &Kernel,
    bases: &[Option<usize>],
    extents: &[Option<i64>],
    host: HostSide,
) -> KernelBuffers {
    let mut t = Tracer::new(w, k.def);
    t.collect();
    t.propagate();
    // The pointer parameters, whether used or not, and the roots the accesses name.
    let mut buffers: FxHashMap<Root, Buffer> = FxHashMap::default();
    let mut unknown_store: Option<Option<Span>> = None;
    for i in 1..w.num_params(k.def).saturating_sub(1) {
        let is_ptr = w
            .param_if_built(k.def, i)
            .is_some_and(|p| matches!(w.kind(w.type_of(p)), TypeKind::Ptr { .. }));
        if is_ptr {
            let r = Root {
                param: i - 1,
                path: Vec::new(),
            };
            buffers.insert(r.clone(), Buffer::unused(r));
        }
    }
    let roots_of = |d: Def| t.roots.get(&d).cloned().unwrap_or_default();
    let mut load_defs: FxHashMap<Root, Vec<Def>> = FxHashMap::default();
    let mut hints: Vec<(Root, bool)> = Vec::new();
    let mut tile = None;
    let mark = |buffers: &mut FxHashMap<Root, Buffer>, r: &Root, a: Access, at: Option<Span>| {
        let b = (buffers.entry(r.clone())).or_insert_with(|| Buffer::unused(r.clone()));
        // Disqualified beats written beats read-only.
        let rank = |a: &Access| match a {
            Access::Unused => 0,
            Access::ReadOnly => 1,
            Access::Written => 2,
            Access::Disqualified(_) => 3,
        };
        if rank(&a) > rank(&b.access) {
            b.access = a;
            b.at = at;
        }
    };
    for &(d, place) in &t.defs {
        let ops = w.ops(d);
        match w.node(d) {
            Node::Load => {
                for r in roots_of(ops[1]) {
                    mark(&mut buffers, &r, Access::ReadOnly, place);
                    load_defs.entry(r).or_default().push(d);
                }
            }
            Node::Store => {
                let target = roots_of(ops[1]);
                if target.is_empty() && t.unknown.contains(&ops[1]) && unknown_store.is_none() {
                    unknown_store = Some(place);
                }
                for r in target {
                    mark(&mut buffers, &r, Access::Written, place);
                }
                for r in roots_of(ops[2]) {
                    let why = "its address is stored to memory".to_string();
                    mark(&mut buffers, &r, Access::Disqualified(why), place);
                }
            }
            Node::Conv => {
                for r in roots_of(ops[0]) {
                    let why = "its address is converted to an integer".to_string();
                    mark(&mut buffers, &r, Access::Disqualified(why), place);
                }
            }
            _ => {}
        }
    }
    // Calls: imports that write or let a pointer escape, and jumps to return points.
    for &c in &t.conts {
        let Some((callee, args)) = w.body(c) else {
            continue;
        };
        let place = w.loc(c);
        let import = w.node(callee) == Node::Cont && w.body(callee).is_none();
        let to_param = matches!(w.node(callee), Node::Param(_));
        if !import && !to_param {
            continue;
        }
        let name = w.name(callee).unwrap_or("?");
        if import && name == "durin_launch_note" {
            // mem, then four constants (after partial evaluation), then the return point.
            let lits: Option<Vec<u32>> = (args.iter().skip(1).take(4))
                .map(|&a| w.lit_bits(a).map(|v| v as u32))
                .collect();
            if let Some([lanes, rows, tw, th]) = lits.as_deref() {
                tile = Some(Tile {
                    thread: [*lanes, *rows],
                    block: [*tw, *th],
                });
            }
        }
        for (i, &a) in args.iter().enumerate() {
            let roots = roots_of(a);
            if roots.is_empty() {
                if import
                    && i == 1
                    && writes_through(name)
                    && t.unknown.contains(&a)
                    && unknown_store.is_none()
                {
                    unknown_store = Some(place);
                }
                continue;
            }
            for r in roots {
                if let (true, Some(h)) = (import, staging_hint(name)) {
                    hints.push((r.clone(), h));
                }
                let access = if to_param {
                    Access::Disqualified("returned from the kernel's code".into())
                } else if only_looks_at(name) {
                    continue;
                } else if writes_through(name) && i == 1 {
                    Access::Written
                } else {
                    Access::Disqualified(format!("passed to `{name}`"))
                };
                mark(&mut buffers, &r, access, place);
            }
        }
    }
    let mut buffers: Vec<Buffer> = buffers.into_values().collect();
    buffers.sort_by(|a, b| a.root.cmp(&b.root));
    // A hint names the buffers of its pointer: those the launch passes the same pointer
    // for, up to casts (the kernel may get `p` and `p as &[u8]` apart).
    let pointer = |r: &Root| -> Option<Def> {
        let (hw, captured) = host?;
        let d = *captured.get(r.param).filter(|_| r.path.is_empty())?;
        Some(without_casts(hw, d))
    };
    for (r, h) in &hints {
        let same = pointer(r);
        for b in &mut buffers {
            if b.root == *r || (same.is_some() && pointer(&b.root) == same) {
                b.hint = Some(*h);
            }
        }
    }
    // A store through a pointer of unknown origin may write any of them.
    if let Some(at) = unknown_store {
        for b in &mut buffers {
            if b.access == Access::ReadOnly {
                b.access = Access::Disqualified(
                    "a store through a pointer of unknown origin may write it".into(),
                );
                b.at = at;
            }
        }
    }
    // Aliasing: a read-only buffer and a written one may be the same memory unless the
    // launch shows them in different allocations.
    let written: Vec<Root> = buffers
        .iter()
        .filter(|b| b.access == Access::Written)
        .map(|b| b.root.clone())
        .collect();
    for b in &mut buffers {
        if b.access == Access::ReadOnly {
            let base = |r: &Root| match r.path.is_empty() {
                true => bases.get(r.param).copied().flatten(),
                false => None,
            };
            let distinct =
                |r: &Root| matches!((base(&b.root), base(r)), (Some(x), Some(y)) if x != y);
            if let Some(other) = written.iter().find(|r| !distinct(r)) {
                b.access = Access::Disqualified(format!(
                    "may alias the written {} (not shown to come from an allocation of its own)",
                    describe(other)
                ));
            }
        }
    }
    // What a block reads of each read-only buffer.
    let incoming = std::mem::take(&mut t.incoming);
    let mut ix = Indices::new(w, k.def, k.block, &t.conts, incoming, host);
    for b in &mut buffers {
        let loads = load_defs.get(&b.root).map(Vec::as_slice).unwrap_or(&[]);
        b.loads = loads.len();
        if b.root.path.is_empty() {
            b.extent = extents.get(b.root.param).copied().flatten();
        }
        if b.access == Access::ReadOnly {
            match analyze(&mut ix, loads) {
                Ok((f, offsets)) => {
                    b.footprint = Some(f);
                    b.offsets = offsets;
                }
                Err(f) => b.footprint = Some(f),
            }
        }
    }
    let index_params = ix.index_params();
    KernelBuffers {
        kernel: k.def,
        name: w.name(k.def).unwrap_or("kernel").to_string(),
        loc: w.loc(k.def),
        expanded_from: w.expanded_from(k.def),
        block: k.block,
        tile,
        buffers,
        index_params,
        conts: t.conts,
    }
}

/// `parameter 2` or `parameter 2, field 1.0`.
pub fn describe(r: &Root) -> String {
    if r.path.is_empty() {
        format!("parameter {}", r.param)
    } else {
        let path: Vec<String> = r.path.iter().map(u32::to_string).collect();
        format!("parameter {}, field {}", r.param, path.join("."))
    }
}
