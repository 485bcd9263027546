//! Kernel launches for native code: the pass that turns every (outlined) launch into a
//! call of the runtime's `durin_cuda_launch`, after writing its kernel as CUDA C.
//!
//! It runs after kernel outlining and before closure elimination. The kernels are copied
//! into a device world of their own (closure elimination runs there too), which the CUDA
//! back end translates into one module; the module's text becomes a constant string of the
//! host program. At each launch the host stores every captured value in a stack slot and
//! passes an array of their addresses, as `cuLaunchKernel` takes them.

use durin_backend_cuda::Kernel;
use durin_frontend::source::{SourceMap, Span};
use durin_ir::{AddrSpace, Def, Launch, Loc, Node, TypeKind, World};
use durin_passes::{Config, Pass, PassError};
use std::cell::RefCell;
use std::rc::Rc;

/// The CUDA module of a program.
#[derive(Clone, Debug)]
pub struct DeviceModule {
    /// CUDA C text.
    pub source: String,
}

/// The runtime function a launch calls.
pub const LAUNCH_FN: &str = "durin_cuda_launch";

/// The pass `kernels`; the module it makes lands in `module`.
pub struct LowerLaunches {
    /// Where the pass leaves the CUDA module (`None` when the program launches nothing).
    pub module: Rc<RefCell<Option<DeviceModule>>>,
    /// The sources, to name each launch's place in run-time errors.
    pub sources: SourceMap,
    /// Why the target is the CPU, if it is: a launch left is then an error.
    pub cpu_target: Option<&'static str>,
}

impl Pass for LowerLaunches {
    fn name(&self) -> &'static str {
        "kernels"
    }

    fn run(&self, w: &mut World, _: &Config) -> Result<(), PassError> {
        *self.module.borrow_mut() = lower(w, &self.sources, self.cpu_target)?;
        Ok(())
    }
}

/// `file:line:column` of `loc`.
fn place(sources: &SourceMap, loc: Option<Loc>) -> String {
    match loc {
        Some(l) => {
            let span = Span::from_loc(l);
            let (line, col) = sources.line_column(span);
            format!("{}:{line}:{col}", sources.name(span.file))
        }
        None => "<unknown place>".to_string(),
    }
}

/// The place to name for launch `l`: the first of the launching continuation, the kernel
/// and the kernel's blocks that lies in the program rather than the prelude (after inlining,
/// the jump to the launch may come from a library function). Only continuations carry
/// places after the passes, so no other def is looked at.
fn launch_loc(w: &World, l: &Launch, sources: &SourceMap) -> Option<Loc> {
    let scope = durin_passes::rewrite::scope_of(w, l.kernel);
    let candidates: Vec<Loc> = [l.at, l.kernel]
        .into_iter()
        .chain(scope.iter().copied())
        .filter_map(|d| w.loc(d))
        .collect();
    let in_program = |l: &&Loc| {
        !sources
            .name(Span::from_loc(**l).file)
            .starts_with("<prelude>")
    };
    candidates
        .iter()
        .find(in_program)
        .or(candidates.first())
        .copied()
}

/// Lowers every launch of `w`; the CUDA module of their kernels, if there is any launch.
pub fn lower(
    w: &mut World,
    sources: &SourceMap,
    cpu_target: Option<&str>,
) -> Result<Option<DeviceModule>, PassError> {
    let live = durin_passes::live::Live::new(w);
    let launches: Vec<Launch> = live
        .conts()
        .iter()
        .filter_map(|&k| Launch::of(w, k))
        .collect();
    if launches.is_empty() {
        return Ok(None);
    }
    if let Some(why) = cpu_target {
        let l = &launches[0];
        return Err(PassError::new(
            format!("this program launches a CUDA kernel, but {why}"),
            launch_loc(w, l, sources),
        )
        .with_note(
            "write it against `accelerator(dev)`, which runs on the CPU when the target is the CPU, or run it on a machine with an NVIDIA GPU and its driver (`--target cuda`)",
            None,
        ));
    }
    let places: Vec<String> = launches
        .iter()
        .map(|l| place(sources, launch_loc(w, l, sources)))
        .collect();
    let allocated = allocation_results(w, live.conts());
    let mut kernels = Vec::new();
    let mut names = Vec::new();
    // Outlining (which every native pipeline runs before this pass) has checked that each
    // kernel is a known, closed continuation.
    for (i, l) in launches.iter().enumerate() {
        let base = w.name(l.kernel).unwrap_or("kernel").to_string();
        let name = format!("{}_{i}", durin_backend_cuda::types::ident(&base));
        w.set_name(l.kernel, &name);
        names.push(name);
        kernels.push(Kernel {
            def: l.kernel,
            restrict: restrict_flags(w, l, &allocated),
            block: constant_block(w, l.block),
        });
    }
    // The device world: the kernels are its only entries.
    let mut device = w.clone();
    device.clear_externals();
    for k in &kernels {
        device.make_external(k.def);
    }
    let (device, _) = durin_passes::closure::run(&device)?;
    let roots: Vec<Def> = device.externals().collect();
    for (k, &d) in kernels.iter_mut().zip(&roots) {
        k.def = d;
    }
    let source = durin_backend_cuda::emit(&device, &kernels)
        .map_err(|e| PassError::new(e.message, e.loc))?;
    let src = string_global(w, &source, "cuda_module");
    let launch_fn = launch_function(w);
    for ((l, name), at) in launches.iter().zip(&names).zip(&places) {
        rewrite(w, l, launch_fn, src, name, at);
    }
    Ok(Some(DeviceModule { source }))
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
/// its kin): pointers that alias nothing allocated elsewhere.
fn allocation_results(w: &World, conts: &[Def]) -> std::collections::HashSet<Def> {
    let mut out = std::collections::HashSet::new();
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
        if let (true, Some(&ret)) = (allocates, args.last()) {
            if let Some(p) = w.param_if_built(ret, 1) {
                out.insert(p);
            }
        }
    }
    out
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

/// Whether values of type `t` hold a pointer inside a struct, tuple or array.
fn holds_pointer(w: &World, t: durin_ir::Type) -> bool {
    match w.kind(t) {
        TypeKind::Ptr { .. } => true,
        TypeKind::Array { elem, .. } => holds_pointer(w, *elem),
        _ => w
            .types()
            .components(t)
            .is_some_and(|cs| cs.iter().any(|&c| holds_pointer(w, c))),
    }
}

/// For each captured value: whether it is a pointer shown unaliased by every other pointer
/// the kernel gets. That holds only when every captured pointer points into an allocation
/// of the program's own, each into a different one: a pointer of unknown origin (a
/// parameter, a loaded value) or one inside a captured aggregate could point anywhere, and
/// then no pointer is unaliased.
fn restrict_flags(w: &World, l: &Launch, allocated: &std::collections::HashSet<Def>) -> Vec<bool> {
    let is_ptr = |d: Def| matches!(w.kind(w.type_of(d)), TypeKind::Ptr { .. });
    let none = vec![false; l.captured.len()];
    let mut bases = std::collections::HashSet::new();
    for &c in &l.captured {
        if is_ptr(c) {
            let b = pointer_base(w, c);
            if !allocated.contains(&b) || !bases.insert(b) {
                return none;
            }
        } else if holds_pointer(w, w.type_of(c)) {
            return none;
        }
    }
    l.captured.iter().map(|&c| is_ptr(c)).collect()
}

/// A constant NUL-terminated string, as a `ptr([u8])`.
fn string_global(w: &mut World, text: &str, name: &str) -> Def {
    let u8t = w.ty_int(8, false);
    let mut elems: Vec<Def> = text.bytes().map(|b| w.lit(u8t, b as u64)).collect();
    elems.push(w.lit(u8t, 0));
    let arr = w.array(u8t, &elems);
    let g = w.global(arr, false, name);
    let bytes = w.ty_array(u8t, None);
    let p = w.ty_ptr(bytes, AddrSpace::Generic);
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
