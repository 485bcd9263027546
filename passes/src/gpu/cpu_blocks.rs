//! CUDA kernels on the CPU (`--target cuda-cpu`): the `kernels` pass lowers each (outlined,
//! possibly staged) launch to a call of the runtime's `durin_cpu_launch_cuda`, which runs
//! the grid's blocks in parallel on the CPU's cores and the threads of a block as fibers
//! that `__syncthreads` really separates, with shared memory per block
//! (`runtime/src/blocks.rs`). The program needs no GPU, and the kernels it runs are the
//! ones the CUDA target compiles, staging included.
//!
//! The kernel's body becomes the body of a closure `|x, y, z|` (the thread's index in the
//! grid): a copy of the kernel's scope with its parameters replaced by the values the
//! launch passes. In that copy, CUDA's indices are arithmetic on `x`, `y`, `z` and the
//! launch's sizes (`threadIdx.x` is `x % blockDim.x`); in functions the kernel calls, which
//! do not see them, they are calls of the runtime (`durin_cpu_index`). `__syncthreads`
//! becomes the CPU's barrier, `__ldg` a load, `ldg_f32x4` a load and a store, `stg_f32x4` a store, `min` and `max` selects, and the atomics,
//! `__threadfence` and `rsqrtf` calls of the runtime's versions for the value's type. Any
//! other CUDA function (a name with a `.` or starting with `__`, or an atomic of a type the
//! runtime lacks) is an error at its place.

use super::launch::string_global;
use crate::rewrite::{clone_conts, cont_param_types, DefSet, Rewriter, ScopeIndex};
use durin_diag::{Diagnostic, SourceMap, Span};
use durin_ir::{AddrSpace, ArithOp, CmpOp, Def, Launch, Node, TypeKind, World};
use rustc_hash::FxHashMap;

/// The runtime function a launch calls.
pub const LAUNCH_FN: &str = durin_ir::launch::CPU_BLOCKS_LAUNCH_FN;

/// Lowers every launch of `launches` (`places` and `locs`: each one's place, in words for
/// run-time errors and as a span for compile-time ones).
pub(crate) fn lower(
    w: &mut World,
    launches: &[Launch],
    places: &[String],
    locs: &[Option<Span>],
    sources: Option<&SourceMap>,
) -> Result<(), Diagnostic> {
    let mut imports = Imports::default();
    let mut done_functions = DefSet::default();
    let mut index = ScopeIndex::default();
    for ((l, place), &launch_at) in launches.iter().zip(places).zip(locs) {
        // An error's place: the call's where it is in the program, else the launch's.
        let lowered = lower_one(w, l, place, &mut imports, &mut done_functions, &mut index);
        lowered.map_err(|(c, message)| {
            let own = w
                .loc(c)
                .filter(|s| sources.is_some_and(|m| !m.is_library(s.file)));
            Diagnostic::error_at(own.or(launch_at), message)
        })?;
    }
    Ok(())
}

/// An error of the lowering: the continuation whose call it is about, and the message.
type Failure = (Def, String);

/// The runtime's functions that take device numbers, and where (after `mem`).
const DEVICE_ARGS: &[(&str, &[usize])] = &[
    ("anydsl_alloc", &[1]),
    ("anydsl_alloc_host", &[1]),
    ("anydsl_alloc_unified", &[1]),
    ("anydsl_release", &[1]),
    ("anydsl_release_host", &[1]),
    ("anydsl_copy", &[1, 4]),
    ("anydsl_synchronize", &[1]),
    ("durin_timer_start", &[1]),
    ("durin_timer_stop", &[1]),
];

/// The runtime's allocation for CUDA kernels run on the CPU: host memory, recorded as the
/// device's (so that `--checks bounds` stops host code that indexes into it).
const ALLOC_FN: &str = "durin_alloc_cpu_blocks";

/// Makes the host's calls of the runtime (among `conts`) that name a CUDA device name the
/// host instead: its memory is the kernels' memory. An allocation on the device calls
/// [`ALLOC_FN`], which allocates host memory and records it as the device's.
pub(crate) fn devices_to_host(w: &mut World, conts: &[Def]) {
    let i32t = w.ty_int(32, true);
    let mut alloc_fn = None;
    for &c in conts {
        let Some((callee, args)) = w.body(c).map(|(f, a)| (f, a.to_vec())) else {
            continue;
        };
        if w.node(callee) != Node::Cont || w.body(callee).is_some() {
            continue;
        }
        if w.name(callee) == Some("anydsl_alloc") {
            let f = *alloc_fn.get_or_insert_with(|| {
                let params = cont_param_types(w, callee);
                Imports::default().get(w, ALLOC_FN, &params)
            });
            w.set_body(c, f, &args);
            continue;
        }
        let Some(&(_, at)) =
            (w.name(callee)).and_then(|n| DEVICE_ARGS.iter().find(|(name, _)| *name == n))
        else {
            continue;
        };
        let mut new = args.clone();
        for &i in at {
            let Some(&dev) = args.get(i) else { continue };
            // `dev & 15 == 1` (the CUDA platform) becomes 0 (the host).
            let (fifteen, one, zero) = (w.lit(i32t, 15), w.lit(i32t, 1), w.lit(i32t, 0));
            let platform = w.arith(ArithOp::And, dev, fifteen);
            let cuda = w.cmp(CmpOp::Eq, platform, one);
            new[i] = w.select(cuda, zero, dev);
        }
        w.set_body(c, callee, &new);
    }
}

/// The imports made so far, by name.
#[derive(Default)]
struct Imports(FxHashMap<String, Def>);

impl Imports {
    /// The external continuation `name` with parameters `params`.
    fn get(&mut self, w: &mut World, name: &str, params: &[durin_ir::Type]) -> Def {
        if let Some(&d) = self.0.get(name) {
            return d;
        }
        let d = w.cont(params, name);
        w.make_external(d);
        self.0.insert(name.to_string(), d);
        d
    }
}

fn lower_one(
    w: &mut World,
    l: &Launch,
    place: &str,
    imports: &mut Imports,
    done_functions: &mut DefSet,
    index: &mut ScopeIndex,
) -> Result<(), Failure> {
    let mem_t = w.ty_mem();
    let i32t = w.ty_int(32, true);
    let ret_t = w.ty_cont(&[mem_t]);
    let body = w.cont(&[mem_t, i32t, i32t, i32t, ret_t], "cpu_kernel");
    w.copy_places(l.kernel, body);
    let grid: Vec<Def> = (0..3).map(|i| w.extract_at(l.grid, i)).collect();
    let block: Vec<Def> = (0..3).map(|i| w.extract_at(l.block, i)).collect();
    // The kernel's scope, copied with its parameters replaced: `mem` and the return point
    // by the closure's, the others by what the launch passes.
    let k = l.kernel;
    let n = w.num_params(k);
    let mut rw = Rewriter::new();
    rw.map(w.param(k, 0), w.param(body, 0));
    for (i, &c) in l.captured.iter().enumerate() {
        rw.map(w.param(k, i + 1), c);
    }
    rw.map(w.param(k, n - 1), w.param(body, 4));
    let scope = index.reached_scope(w, k);
    let inner: Vec<Def> = (scope.iter().skip(1).copied())
        .filter(|&c| w.body(c).is_some())
        .collect();
    let pairs = clone_conts(w, &mut rw, inner.into_iter());
    rw.rewrite_body_into(w, k, body);
    for &(from, to) in &pairs {
        rw.rewrite_cont_into(w, from, to);
    }
    let thread = [w.param(body, 1), w.param(body, 2), w.param(body, 3)];
    let local = Indices::Local {
        thread,
        block: [block[0], block[1], block[2]],
        grid: [grid[0], grid[1], grid[2]],
    };
    let mut copies = vec![body];
    copies.extend(pairs.iter().map(|&(_, to)| to));
    for &c in &copies {
        map_device_call(w, c, &local, imports)?;
    }
    // Functions the kernel calls (closed, outside its scope) read the indices through the
    // runtime; each is changed in place once (only kernels call CUDA's functions).
    for f in called_functions(w, &copies) {
        if done_functions.insert(f) {
            for c in index.reached_scope(w, f) {
                if w.body(c).is_some() {
                    map_device_call(w, c, &Indices::Runtime, imports)?;
                }
            }
        }
    }
    // The launch: `durin_cpu_launch_cuda(grid, block, closure, place)`.
    let u8t = w.ty_int(8, false);
    let bytes = w.ty_array(u8t, None);
    let str_t = w.ty_ptr(bytes, AddrSpace::Generic);
    let body_t = w.type_of(body);
    let launch_fn = imports.get(
        w,
        LAUNCH_FN,
        &[
            mem_t, i32t, i32t, i32t, i32t, i32t, i32t, body_t, str_t, ret_t,
        ],
    );
    let at = string_global(w, place, "launch_place");
    let mut args = vec![l.mem];
    args.extend(&grid);
    args.extend(&block);
    args.extend([body, at, l.ret]);
    w.set_body(l.at, launch_fn, &args);
    Ok(())
}

/// Where CUDA's indices come from in a continuation.
enum Indices {
    /// The kernel's own code: the closure's thread index and the launch's sizes.
    Local {
        thread: [Def; 3],
        block: [Def; 3],
        grid: [Def; 3],
    },
    /// A function it calls: the runtime.
    Runtime,
}

/// The closed functions (with bodies) that `conts` call or pass, other than themselves.
fn called_functions(w: &World, conts: &[Def]) -> Vec<Def> {
    let own: DefSet = conts.iter().copied().collect();
    let mut seen = DefSet::default();
    let mut out = Vec::new();
    let mut stack: Vec<Def> = Vec::new();
    for &c in conts {
        if let Some((callee, args)) = w.body(c) {
            stack.push(callee);
            stack.extend_from_slice(args);
        }
    }
    while let Some(d) = stack.pop() {
        if !seen.insert(d) {
            continue;
        }
        match w.node(d) {
            Node::Cont if own.contains(&d) => {}
            Node::Cont => {
                if let Some((callee, args)) = w.body(d) {
                    out.push(d);
                    stack.push(callee);
                    stack.extend_from_slice(args);
                }
            }
            Node::Param(_) => {}
            _ => stack.extend_from_slice(w.ops(d)),
        }
    }
    out
}

/// The axis of `.x`, `.y`, `.z`.
fn axis(name: &str) -> Option<(&str, usize)> {
    let (var, c) = name.split_once('.')?;
    let a = ["x", "y", "z"].iter().position(|&x| x == c)?;
    Some((var, a))
}

/// Replaces the body of `c` where it calls one of CUDA's functions by its CPU version.
fn map_device_call(
    w: &mut World,
    c: Def,
    idx: &Indices,
    imports: &mut Imports,
) -> Result<(), Failure> {
    let Some((callee, args)) = w.body(c).map(|(f, a)| (f, a.to_vec())) else {
        return Ok(());
    };
    if w.node(callee) != Node::Cont || w.body(callee).is_some() || !w.is_external(callee) {
        return Ok(());
    }
    let Some(name) = w.name(callee).map(str::to_string) else {
        return Ok(());
    };
    let i32t = w.ty_int(32, true);
    let mem = args[0];
    let ret = *args.last().unwrap_or(&mem);
    let unsupported = |_: &World, what: String| {
        (
            c,
            format!("{what}, which has no CPU version (the target is `cuda-cpu`)"),
        )
    };
    if let Some((var, a)) = axis(&name) {
        let which = match var {
            "threadIdx" => 0,
            "blockIdx" => 1,
            "blockDim" => 2,
            "gridDim" => 3,
            _ => return Err(unsupported(w, format!("the CUDA variable `{name}`"))),
        };
        match idx {
            Indices::Local {
                thread,
                block,
                grid,
            } => {
                let v = match which {
                    0 => w.arith(ArithOp::Rem, thread[a], block[a]),
                    1 => w.arith(ArithOp::Div, thread[a], block[a]),
                    2 => block[a],
                    _ => w.arith(ArithOp::Div, grid[a], block[a]),
                };
                w.set_body(c, ret, &[mem, v]);
            }
            Indices::Runtime => {
                let f_t = cont_param_types(w, callee);
                let mut ps = vec![f_t[0], i32t];
                ps.extend(&f_t[1..]);
                let f = imports.get(w, "durin_cpu_index", &ps);
                let k = w.lit(i32t, (which * 3 + a) as u64);
                w.set_body(c, f, &[mem, k, ret]);
            }
        }
        return Ok(());
    }
    // The type of the value an atomic or a math function takes (after `mem` and a pointer).
    let value_type = |w: &World, i: usize| args.get(i).map(|&v| w.kind(w.type_of(v)).clone());
    let same_as = |w: &mut World, imports: &mut Imports, to: &str| {
        let ps = cont_param_types(w, callee);
        let f = imports.get(w, to, &ps);
        w.set_body(c, f, &args);
    };
    match name.as_str() {
        "__syncthreads" => same_as(w, imports, "durin_cpu_barrier"),
        "__threadfence" => same_as(w, imports, "durin_cpu_fence"),
        "rsqrtf" => same_as(w, imports, "durin_cpu_rsqrtf"),
        "vprintf" => same_as(w, imports, "durin_cpu_vprintf"),
        "stg_f32x4" if args.len() == 4 => {
            let m = w.store(mem, args[1], args[2]);
            w.set_body(c, ret, &[m]);
        }
        "ldg_f32x4" if args.len() == 4 => {
            let ld = w.load(mem, args[2]);
            let (m, v) = (w.extract_at(ld, 0), w.extract_at(ld, 1));
            let m = w.store(m, args[1], v);
            w.set_body(c, ret, &[m]);
        }
        "__ldg" if args.len() == 3 => {
            let ld = w.load(mem, args[1]);
            let (m, v) = (w.extract_at(ld, 0), w.extract_at(ld, 1));
            w.set_body(c, ret, &[m, v]);
        }
        "min" | "max" if args.len() == 4 => {
            let op = if name == "min" { CmpOp::Lt } else { CmpOp::Gt };
            let (x, y) = (args[1], args[2]);
            let pick = w.cmp(op, x, y);
            let v = w.select(pick, x, y);
            w.set_body(c, ret, &[mem, v]);
        }
        "atomicAdd" | "atomicMin" | "atomicMax" | "atomicExch" | "atomicCAS" if args.len() >= 4 => {
            let op = &name["atomic".len()..].to_lowercase();
            let v = value_type(w, 2);
            let suffix = match v {
                Some(TypeKind::Int {
                    bits: 32,
                    signed: true,
                }) => "i32",
                Some(TypeKind::Int {
                    bits: 32,
                    signed: false,
                }) if op == "add" => "u32",
                Some(TypeKind::Float { bits: 32 }) if op == "add" => "f32",
                Some(TypeKind::Float { bits: 64 }) if op == "add" => "f64",
                _ => {
                    return Err(unsupported(w, format!("`{name}` on a value of this type")));
                }
            };
            // One declaration per function: the pointer as a generic one (global or
            // shared memory are both the host's).
            let elem = w.type_of(args[2]);
            let ptr_t = w.ty_ptr(elem, AddrSpace::Generic);
            let mut new_args = args.clone();
            new_args[1] = w.bitcast(ptr_t, args[1]);
            let mut ps: Vec<durin_ir::Type> = new_args.iter().map(|&a| w.type_of(a)).collect();
            ps[0] = w.ty_mem();
            let f = imports.get(w, &format!("durin_cpu_atomic_{op}_{suffix}"), &ps);
            w.set_body(c, f, &new_args);
        }
        n if n.starts_with("__") || n.contains('.') => {
            return Err(unsupported(w, format!("the CUDA function `{n}`")));
        }
        // A C function (the math library's): the host has it too.
        _ => {}
    }
    Ok(())
}
