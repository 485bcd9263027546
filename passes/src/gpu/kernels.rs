//! The pass `kernels`: every (outlined) kernel launch becomes a call of the runtime's
//! `durin_cuda_launch`, after the kernels are compiled to device code.
//!
//! It runs after kernel outlining and before closure elimination. The kernels are copied
//! into a device world of their own, which closure elimination makes first-order
//! ([`crate::closure_conv`]) and goes to the [`DeviceCodegen`] of the context's
//! [`Target`]; the module's text becomes a constant string of the host program. At each
//! launch the host stores every captured value in a stack slot and passes an array of their
//! addresses, as `cuLaunchKernel` takes them. Under a CPU target a launch left here is an
//! error at its place in the program; under [`Target::CpuBlocks`] it runs on the CPU
//! ([`super::cpu_blocks`]).

use super::buffers;
use super::cpu_blocks;
use super::launch::{allocation_results, launch_loc, launched_kernel, string_global, Captured};
use super::target::{Target, LAUNCH_FN};
use crate::analysis::live::Live;
use crate::closure_conv;
use crate::context::{Pass, PassContext};
use crate::rewrite::ScopeIndex;
use durin_diag::{Diagnostic, Span};
use durin_ir::equiv::same_code;
use durin_ir::{AddrSpace, Def, Kernel, Launch, Node, TypeKind, World};
use rustc_hash::FxHashMap;

/// The pass `kernels`.
pub(crate) struct Kernels;

impl Pass for Kernels {
    fn name(&self) -> &'static str {
        "kernels"
    }

    fn description(&self) -> &'static str {
        "kernel launches become calls of the runtime: the outlined kernels go to the device code generator (CUDA), the host passes their module text and the captured values"
    }

    fn lowers(&self) -> bool {
        true
    }

    fn run(&self, w: &mut World, cx: &mut PassContext<'_>) -> Result<(), Diagnostic> {
        run(w, cx)
    }
}

/// Lowers every launch of `w` (see the module's documentation).
fn run(w: &mut World, cx: &mut PassContext<'_>) -> Result<(), Diagnostic> {
    let live = Live::new(w);
    let launches = live.launches(w);
    let sources = cx.sources();
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
            cpu_blocks::devices_to_host(w, live.conts());
            return cpu_blocks::lower(w, &launches, &places, &locs, sources);
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
    let (kernels, bases): (Vec<Kernel>, Vec<Captured>) = launches
        .iter()
        .map(|l| launched_kernel(w, l, &allocated))
        .unzip();
    // Launches of the same code, with the same facts about its parameters, share one
    // kernel: partial evaluation makes a library operator's kernel apart for each image it
    // runs on (a pyramid's levels), and each copy would cost NVRTC its time again.
    let (first, unique) = shared_kernels(w, &kernels);
    // The device world: the distinct kernels are its only entries. Kernels are first-order,
    // like host code: closure elimination is the device pipeline, and it copies what the
    // kernels reach into the device world.
    let roots: Vec<Def> = unique.iter().map(|&i| kernels[i].def).collect();
    let (device, moved, _) = closure_conv::run_from(w, &roots)?;
    let mut compiled: Vec<Kernel> = Vec::with_capacity(unique.len());
    for &i in &unique {
        let mut k = kernels[i].clone();
        k.def = moved.get(k.def).ok_or_else(|| {
            Diagnostic::error_at(
                w.loc(k.def),
                "internal compiler error: a kernel was lost in the device pipeline",
            )
        })?;
        // A pointer made from an integer may alias any other: no parameter is unaliased then.
        if makes_pointers(&device, k.def) {
            k.restrict.iter_mut().for_each(|r| *r = false);
        }
        compiled.push(k);
    }
    let module = codegen.compile(&device, &compiled)?;
    if module.kernel_names.len() != compiled.len() {
        return Err(Diagnostic::error_at(
            None,
            "internal compiler error: the device code generator did not name every kernel",
        ));
    }
    // Each launch's kernel and its name in the module.
    let (kernels, names): (Vec<Kernel>, Vec<String>) = (first.iter())
        .map(|&u| (compiled[u].clone(), module.kernel_names[u].clone()))
        .unzip();
    // The buffers of each kernel, where the caller asked for them (`--report shm`).
    if cx.findings.wants_kernels() {
        for ((((k, l), name), bases), &loc) in kernels
            .iter()
            .zip(&launches)
            .zip(&names)
            .zip(&bases)
            .zip(&locs)
        {
            // What the `stage` pass found before it changed the kernel, where it ran.
            let mut found = cx.findings.take_staged(l.kernel).unwrap_or_else(|| {
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
            cx.findings.compiled(found);
        }
    }
    let src = string_global(w, &module.source, "cuda_module");
    let launch_fn = launch_function(w);
    for ((l, name), at) in launches.iter().zip(&names).zip(&places) {
        rewrite(w, l, launch_fn, src, name, at);
    }
    Ok(())
}

/// Which of `kernels` are compiled: for each launch, the position in the second list (of
/// the launches whose kernels are compiled) of the first launch of the same code with the
/// same unaliased parameters and block size.
fn shared_kernels(w: &World, kernels: &[Kernel]) -> (Vec<usize>, Vec<usize>) {
    let defs: Vec<Def> = kernels.iter().map(|k| k.def).collect();
    let code = same_code(w, &defs);
    let mut position: FxHashMap<(usize, &[bool], Option<[u32; 3]>), usize> = FxHashMap::default();
    let mut unique = Vec::new();
    let first = (kernels.iter().zip(&code).enumerate())
        .map(|(i, (k, &c))| {
            *position
                .entry((c, &k.restrict, k.block))
                .or_insert_with(|| {
                    unique.push(i);
                    unique.len() - 1
                })
        })
        .collect();
    (first, unique)
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
