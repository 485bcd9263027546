//! The pass `kernels`: every (outlined) kernel launch becomes a call of the runtime's
//! `durin_cuda_launch`, after the kernels are compiled to device code.
//!
//! It runs after kernel outlining and before closure elimination. The kernels are copied
//! into a device world of their own, which runs the device pipeline
//! ([`Pipeline::for_device`]) and goes to the [`DeviceCodegen`] of the context's
//! [`Target`]; the module's text becomes a constant string of the host program. At each
//! launch the host stores every captured value in a stack slot and passes an array of their
//! addresses, as `cuLaunchKernel` takes them. Under a CPU target a launch left here is an
//! error at its place in the program; under [`Target::CpuBlocks`] it runs on the CPU
//! ([`crate::cpu_blocks`]).

use crate::buffers::{self, holds_pointer};
use crate::live::Live;
use crate::pipeline::{PassContext, Pipeline, RunOptions};
use crate::rewrite::ScopeIndex;
use durin_diag::{Diagnostic, SourceMap, Span};
use durin_ir::{AddrSpace, Def, Kernel, Launch, Node, TypeKind, World};

/// The runtime function a launch calls.
pub const LAUNCH_FN: &str = durin_ir::launch::CUDA_LAUNCH_FN;

/// Where kernel launches go.
pub enum Target<'a> {
    /// The CPU: a kernel launch left after outlining is an error, which says why the
    /// target is the CPU.
    Cpu {
        /// Why (for the message).
        why: String,
    },
    /// CUDA: the kernels go to this code generator.
    Cuda(&'a mut dyn DeviceCodegen),
    /// CUDA's kernels run on the CPU's cores, with a GPU's blocks (see [`crate::cpu_blocks`]).
    CpuBlocks,
}

impl Default for Target<'_> {
    fn default() -> Self {
        Target::Cpu {
            why: "no device code generator was given to the passes".into(),
        }
    }
}

/// A device code generator: the driver gives one (the CUDA back end) so that this crate
/// depends on none.
pub trait DeviceCodegen {
    /// The module of the kernels `kernels` of `device`, a first-order world whose externals
    /// are those kernels.
    fn compile(&mut self, device: &World, kernels: &[Kernel]) -> Result<DeviceModule, Diagnostic>;
}

/// What a device code generator makes of a world's kernels.
#[derive(Clone, Debug)]
pub struct DeviceModule {
    /// The module's source text (compiled at run time).
    pub source: String,
    /// The name of each kernel in the module, in the order they were given.
    pub kernel_names: Vec<String>,
}

/// The place to name for launch `l`: the first of the launching continuation, the kernel
/// and the kernel's blocks that lies in the program rather than a library the compiler
/// brings (after inlining, the jump to the launch may come from a library function, and the
/// kernel from the library's closure around the program's loop body); failing those, the
/// first index or arithmetic the kernel's blocks compute in the program (the only other
/// defs with places after the passes).
pub(crate) fn launch_loc(
    w: &World,
    l: &Launch,
    sources: Option<&SourceMap>,
    index: &mut ScopeIndex,
) -> Option<Span> {
    let scope = index.reached_scope(w, l.kernel);
    let in_program = |s: &Span| sources.is_some_and(|m| !m.is_library(s.file));
    let candidates: Vec<Span> = [l.at, l.kernel]
        .into_iter()
        .chain(scope.iter().copied())
        .filter_map(|d| w.loc(d))
        .collect();
    if let Some(&s) = candidates.iter().find(|s| in_program(s)) {
        return Some(s);
    }
    // The operands of the blocks' bodies, breadth first, up to a bound.
    let mut seen = rustc_hash::FxHashSet::default();
    let mut queue: std::collections::VecDeque<Def> = (scope.iter())
        .filter_map(|&c| w.body(c))
        .flat_map(|(_, args)| args.iter().copied())
        .collect();
    while let Some(d) = queue.pop_front() {
        if seen.len() > 10_000 || !seen.insert(d) || w.node(d).is_nominal() {
            continue;
        }
        if let Some(s) = w.loc(d).filter(|s| in_program(s)) {
            return Some(s);
        }
        queue.extend(w.ops(d).iter().copied());
    }
    candidates.first().copied()
}

/// Lowers every launch of `w` (see the module's documentation).
pub fn run(w: &mut World, cx: &mut PassContext<'_>) -> Result<(), Diagnostic> {
    let live = Live::new(w);
    let launches = live.launches(w);
    let sources = cx.sources();
    let config = cx.config;
    // Each launch's place, once: for run-time errors and the report.
    let mut index = ScopeIndex::default();
    let locs: Vec<Option<Span>> = (launches.iter())
        .map(|l| launch_loc(w, l, sources, &mut index))
        .collect();
    let places: Vec<String> = (locs.iter())
        .map(|&at| sources.map_or("<unknown place>".to_string(), |m| m.place(at)))
        .collect();
    let codegen = match cx.target() {
        Target::CpuBlocks => {
            crate::cpu_blocks::devices_to_host(w, live.conts());
            return crate::cpu_blocks::lower(w, &launches, &places, &locs, sources);
        }
        _ if launches.is_empty() => return Ok(()),
        Target::Cpu { why } => {
            return Err(Diagnostic::error_at(
                locs[0],
                format!("this program launches a CUDA kernel, but {why}"),
            )
            .with_note(
                "write it against `accelerator(dev)`, which runs on the CPU when the target is the CPU, or run it on a machine with an NVIDIA GPU and its driver (`--target cuda`)",
            ));
        }
        Target::Cuda(codegen) => codegen,
    };
    let allocated = allocation_results(w, live.conts());
    // Outlining (which every native pipeline runs before this pass) has checked that each
    // kernel is a known, closed continuation.
    let (mut kernels, bases): (Vec<Kernel>, Vec<Captured>) = launches
        .iter()
        .map(|l| launched_kernel(w, l, &allocated))
        .unzip();
    // The device world: the kernels are its only entries.
    let mut device = w.clone();
    device.clear_externals();
    for k in &kernels {
        device.make_external(k.def);
    }
    let mut dcx = PassContext::new(config);
    Pipeline::for_device().run_in(&mut device, &RunOptions::default(), &mut dcx, |_, _| {})?;
    for k in &mut kernels {
        k.def = dcx.follow(k.def).ok_or_else(|| {
            Diagnostic::error_at(
                w.loc(k.def),
                "internal compiler error: a kernel was lost in the device pipeline",
            )
        })?;
    }
    // A pointer made from an integer may alias any other: no parameter is unaliased then.
    for k in &mut kernels {
        if makes_pointers(&device, k.def) {
            k.restrict.iter_mut().for_each(|r| *r = false);
        }
    }
    let module = codegen.compile(&device, &kernels)?;
    if module.kernel_names.len() != launches.len() {
        return Err(Diagnostic::error_at(
            None,
            "internal compiler error: the device code generator did not name every kernel",
        ));
    }
    // The buffers of each kernel, where the caller asked for them (`--report shm`).
    if let Some(out) = cx.kernel_buffers.as_mut() {
        for ((((k, l), name), bases), &loc) in kernels
            .iter()
            .zip(&launches)
            .zip(&module.kernel_names)
            .zip(&bases)
            .zip(&locs)
        {
            // What the `stage` pass found before it changed the kernel, where it ran.
            let staged = (cx.staged.as_mut()).and_then(|s| {
                s.iter()
                    .position(|f| f.kernel == l.kernel)
                    .map(|i| s.remove(i))
            });
            let mut found = staged.unwrap_or_else(|| {
                buffers::trace(
                    &device,
                    k,
                    &bases.ids,
                    &bases.extents,
                    Some((w, &l.captured)),
                )
            });
            found.name = name.clone();
            found.loc = loc;
            out.push(found);
        }
    }
    let src = string_global(w, &module.source, "cuda_module");
    let launch_fn = launch_function(w);
    for ((l, name), at) in launches.iter().zip(&module.kernel_names).zip(&places) {
        rewrite(w, l, launch_fn, src, name, at);
    }
    Ok(())
}

/// Whether the code `entry` reaches (its body, the continuations it jumps to or passes, and
/// theirs) converts an integer to a pointer.
fn makes_pointers(w: &World, entry: Def) -> bool {
    let mut seen = rustc_hash::FxHashSet::default();
    let mut stack = vec![entry];
    while let Some(d) = stack.pop() {
        if !seen.insert(d) {
            continue;
        }
        let ptr = |t| matches!(w.kind(t), TypeKind::Ptr { .. });
        if w.node(d) == Node::Conv && ptr(w.type_of(d)) {
            return true;
        }
        // A continuation's operands are its parameters and its body.
        stack.extend_from_slice(w.ops(d));
    }
    false
}

/// The block size of a launch when it is a constant `(x, y, z)`.
fn constant_block(w: &World, block: Def) -> Option<[u32; 3]> {
    if w.node(block) != Node::Tuple {
        return None;
    }
    let ops = w.ops(block);
    let mut out = [0u32; 3];
    for (o, &d) in out.iter_mut().zip(ops) {
        *o = u32::try_from(w.lit_bits(d)? as u32 as i32).ok()?;
    }
    (out.iter().all(|&x| x > 0) && out.iter().product::<u32>() <= 1024).then_some(out)
}

/// The parameters of return points that receive a fresh allocation (`anydsl_alloc` and
/// its kin): pointers that alias nothing allocated elsewhere, each with the size asked
/// for (bytes).
pub(crate) type Allocations = std::collections::HashMap<Def, Def>;

/// The [`Allocations`] of the code of `conts`.
pub(crate) fn allocation_results(w: &World, conts: &[Def]) -> Allocations {
    let mut out = Allocations::new();
    for &k in conts {
        let Some((callee, args)) = w.body(k) else {
            continue;
        };
        let allocates = w.node(callee) == Node::Cont
            && w.body(callee).is_none()
            && matches!(
                w.name(callee),
                Some("anydsl_alloc" | "anydsl_alloc_unified" | "anydsl_alloc_host")
            );
        // `(mem, device, size, return)`.
        if let (true, Some(&ret), Some(&size)) = (allocates, args.last(), args.get(2)) {
            if let Some(p) = w.param_if_built(ret, 1) {
                out.insert(p, size);
            }
        }
    }
    out
}

/// The value `d` is a cast of (through any number of casts), or `d`.
pub(crate) fn without_casts(w: &World, mut d: Def) -> Def {
    while w.node(d) == Node::Bitcast {
        d = w.ops(d)[0];
    }
    d
}

/// Where a pointer comes from, through casts and address arithmetic.
fn pointer_base(w: &World, mut d: Def) -> Def {
    while matches!(w.node(d), Node::Bitcast | Node::Lea)
        && matches!(w.kind(w.type_of(w.ops(d)[0])), TypeKind::Ptr { .. })
    {
        d = w.ops(d)[0];
    }
    d
}

/// What the launch shows of the values a kernel gets: for each, the allocation it points
/// into ([`allocation_ids`]) and the bytes from it to the allocation's end, where known.
pub(crate) struct Captured {
    pub(crate) ids: Vec<Option<usize>>,
    pub(crate) extents: Vec<Option<i64>>,
}

/// The kernel of launch `l` as a device code generator gets it, and what the launch shows
/// of its values.
pub(crate) fn launched_kernel(
    w: &World,
    l: &Launch,
    allocated: &Allocations,
) -> (Kernel, Captured) {
    let ids = allocation_ids(w, l, allocated);
    let kernel = Kernel {
        def: l.kernel,
        restrict: restrict_flags(w, l, &ids),
        block: constant_block(w, l.block),
    };
    // A pointer to the start of an allocation (through casts only) of a constant size.
    let extents = (l.captured.iter())
        .map(|&c| {
            let size = allocated.get(&without_casts(w, c))?;
            w.lit_bits(*size).map(|n| n as i64).filter(|&n| n > 0)
        })
        .collect();
    (kernel, Captured { ids, extents })
}

/// For each captured value: whether it is a pointer shown unaliased by every other pointer
/// the kernel gets. That holds only when every captured pointer points into an allocation
/// of the program's own (`ids`), each into a different one: a pointer of unknown origin (a
/// parameter, a loaded value) or one inside a captured aggregate could point anywhere, and
/// then no pointer is unaliased.
fn restrict_flags(w: &World, l: &Launch, ids: &[Option<usize>]) -> Vec<bool> {
    let is_ptr = |d: Def| matches!(w.kind(w.type_of(d)), TypeKind::Ptr { .. });
    let mut seen = std::collections::HashSet::new();
    let all_apart = l.captured.iter().zip(ids).all(|(&c, id)| match id {
        Some(id) => seen.insert(*id),
        None => !holds_pointer(w, w.type_of(c)),
    });
    l.captured.iter().map(|&c| all_apart && is_ptr(c)).collect()
}

/// For each captured value: the allocation it points into, numbered in the order met, when
/// it is a pointer into an allocation of the program's own (two pointers with different
/// numbers cannot alias).
fn allocation_ids(w: &World, l: &Launch, allocated: &Allocations) -> Vec<Option<usize>> {
    let mut bases: Vec<Def> = Vec::new();
    l.captured
        .iter()
        .map(|&c| {
            if !matches!(w.kind(w.type_of(c)), TypeKind::Ptr { .. }) {
                return None;
            }
            let b = pointer_base(w, c);
            if !allocated.contains_key(&b) {
                return None;
            }
            Some(bases.iter().position(|&x| x == b).unwrap_or_else(|| {
                bases.push(b);
                bases.len() - 1
            }))
        })
        .collect()
}

/// A constant NUL-terminated string, as a `ptr([u8])`.
pub(crate) fn string_global(w: &mut World, text: &str, name: &str) -> Def {
    let u8t = w.ty_int(8, false);
    let mut bytes = Vec::with_capacity(text.len() + 1);
    bytes.extend_from_slice(text.as_bytes());
    bytes.push(0);
    let arr = w.bytes(&bytes);
    let g = w.global(arr, false, name);
    let unsized_bytes = w.ty_array(u8t, None);
    let p = w.ty_ptr(unsized_bytes, AddrSpace::Generic);
    w.bitcast(p, g)
}

/// The import `durin_cuda_launch(mem, device, grid x y z, block x y z, module, kernel,
/// arguments, argument count, place, return)`.
fn launch_function(w: &mut World) -> Def {
    let mem = w.ty_mem();
    let i32t = w.ty_int(32, true);
    let u8t = w.ty_int(8, false);
    let bytes = w.ty_array(u8t, None);
    let str_t = w.ty_ptr(bytes, AddrSpace::Generic);
    let byte_ptr = w.ty_ptr(u8t, AddrSpace::Generic);
    let ptrs = w.ty_array(byte_ptr, None);
    let args_t = w.ty_ptr(ptrs, AddrSpace::Generic);
    let ret = w.ty_cont(&[mem]);
    let ps = [
        mem, i32t, i32t, i32t, i32t, i32t, i32t, i32t, str_t, str_t, args_t, i32t, str_t, ret,
    ];
    let f = w.cont(&ps, LAUNCH_FN);
    w.make_external(f);
    f
}

/// Replaces launch `l` by a call of the runtime.
fn rewrite(w: &mut World, l: &Launch, launch_fn: Def, module: Def, name: &str, at: &str) {
    let u8t = w.ty_int(8, false);
    let byte_ptr = w.ty_ptr(u8t, AddrSpace::Generic);
    let mut mem = l.mem;
    let mut addrs = Vec::new();
    for &c in &l.captured {
        let t = w.type_of(c);
        let s = w.slot(mem, t);
        mem = w.extract_at(s, 0);
        let p = w.extract_at(s, 1);
        mem = w.store(mem, p, c);
        addrs.push(w.bitcast(byte_ptr, p));
    }
    let array_t = w.ty_array(byte_ptr, Some(addrs.len().max(1) as u64));
    let s = w.slot(mem, array_t);
    mem = w.extract_at(s, 0);
    let array = w.extract_at(s, 1);
    for (i, &a) in addrs.iter().enumerate() {
        let index = w.lit_i64(i as i64);
        let e = w.lea(array, index);
        mem = w.store(mem, e, a);
    }
    let ptrs = w.ty_array(byte_ptr, None);
    let args_t = w.ty_ptr(ptrs, AddrSpace::Generic);
    let args = w.bitcast(args_t, array);
    let n = w.lit_i32(addrs.len() as i32);
    let kernel = string_global(w, name, "kernel_name");
    let place = string_global(w, at, "launch_place");
    let mut call = vec![mem, l.device];
    for dim in [l.grid, l.block] {
        for i in 0..3 {
            call.push(w.extract_at(dim, i));
        }
    }
    call.extend([module, kernel, args, n, place, l.ret]);
    w.set_body(l.at, launch_fn, &call);
}
