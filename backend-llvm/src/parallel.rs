//! Optimizing a module, and making its object code, on two threads.
//!
//! LLVM's optimizer runs on one thread, and most of its time goes to function passes, so a
//! module of many functions can be optimized in parts: the module is copied (through
//! bitcode) into a context of its own per part, each part keeps the bodies of its share of
//! the functions (and declares the others), and the parts are optimized at the same time.
//! For an object file and the JIT, each part's object code is then made on its thread
//! too, and the objects are merged into one ([`crate::objects`]); for LLVM IR and assembly
//! the parts are linked back into one module first. The partition depends only on
//! the module (functions by size, largest first, each to the part with fewer instructions),
//! so the code is the same on any machine.
//!
//! What each part sees of the rest: a small function of another part is copied in as
//! `available_externally`, so that it can still be inlined (the comparison a sort calls);
//! a constant global is copied the same way, so that loads of it fold; a mutable global is
//! a declaration, so that every part uses the one variable. During optimization every
//! internal function and global is external (hidden), so that the parts link by name;
//! they are internal again once linked (or local symbols in the merged object). What
//! crosses parts is a call, as across files. A function that another part inlined
//! everywhere is dropped when the parts are linked, but stays (unused) in a merged object.

use crate::{internal, objects, Result};
use inkwell::attributes::AttributeLoc;
use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::{Linkage, Module};
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{FileType, TargetMachine};
use inkwell::values::{AsValueRef, FunctionValue};
use inkwell::GlobalVisibility;
use rustc_hash::FxHashSet;

/// A module whose functions have fewer instructions than this is optimized and compiled
/// on one thread. With its object code made in parts too (an object file, the JIT), even
/// the examples' smallest modules, of 900-1,500 instructions, build faster in parts
/// (docs/src/decisions.md).
pub const MIN_INSTRUCTIONS: usize = 1_000;

/// The same for a module whose parts are linked again after optimization (LLVM IR or
/// assembly): copying and linking it cost more than the second thread gains.
pub const MIN_INSTRUCTIONS_LINKED: usize = 15_000;

/// Functions of at most this many instructions are copied into every part that calls
/// them, so that LLVM can inline them there.
const SMALL_FUNCTION: usize = 60;

/// The number of parts.
const PARTS: usize = 2;

/// The defined functions of `module` with their sizes in instructions.
fn sizes(module: &Module) -> Vec<(usize, String)> {
    module
        .get_functions()
        .filter(|f| f.count_basic_blocks() > 0)
        .map(|f| (instructions(f), name(f)))
        .collect()
}

/// The functions of `sizes` in parts of about equal size (names), or `None` when they
/// have fewer than `min` instructions or one function is most of them (unless `min` is 0).
fn partition(mut sizes: Vec<(usize, String)>, min: usize) -> Option<Vec<FxHashSet<String>>> {
    let total: usize = sizes.iter().map(|s| s.0).sum();
    if total < min || sizes.len() < PARTS {
        return None;
    }
    sizes.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut parts = vec![(0usize, FxHashSet::default()); PARTS];
    for (n, f) in sizes {
        let part = (parts.iter_mut())
            .min_by_key(|p| p.0)
            .expect("there are parts");
        part.0 += n;
        part.1.insert(f);
    }
    // With one function most of the work, the other thread has little to do.
    let largest = parts.iter().map(|p| p.0).max().unwrap_or(0);
    if min > 0 && largest * 4 > total * 3 {
        return None;
    }
    Some(parts.into_iter().map(|p| p.1).collect())
}

fn instructions(f: FunctionValue) -> usize {
    f.get_basic_block_iter()
        .map(|b| b.get_instructions().count())
        .sum()
}

fn name(f: FunctionValue) -> String {
    f.get_name().to_string_lossy().into_owned()
}

/// The parts of a module optimized in parts, but for the first, which the module holds:
/// their optimized bitcode, each with the bodies of its share of the functions, and the
/// linkages to restore once they are one module again.
pub(crate) struct Parts {
    others: Vec<Vec<u8>>,
    restore: Vec<(String, Linkage)>,
}

/// Runs `pipeline` on `module` with `machine`, in parts on two threads when it has `min`
/// instructions or more (see [`partition`]); `make` makes the target machine of the other
/// thread. Returns the other parts when it ran in parts: the module holds the first, and
/// [`link`] makes it whole again, or [`codegen`] makes the parts' objects.
pub(crate) fn optimize(
    module: &Module,
    pipeline: &str,
    min: usize,
    machine: &TargetMachine,
    make: &(dyn Fn() -> Result<TargetMachine> + Sync),
) -> Result<Option<Parts>> {
    let sizes = sizes(module);
    let small: FxHashSet<String> = (sizes.iter())
        .filter(|(n, _)| *n <= SMALL_FUNCTION)
        .map(|(_, f)| f.clone())
        .collect();
    let Some(parts) = partition(sizes, min) else {
        run(module, pipeline, machine)?;
        return Ok(None);
    };
    let restore = expose(module);
    let bitcode = module.write_bitcode_to_memory().as_slice().to_vec();
    let others = std::thread::scope(|s| {
        let others: Vec<_> = (parts[1..].iter())
            .map(|keep| {
                let (bitcode, small) = (&bitcode, &small);
                s.spawn(move || optimize_copy(bitcode, keep, small, pipeline, make))
            })
            .collect();
        keep_only(module, &parts[0], &small, true);
        let here = run(module, pipeline, machine);
        let others = (others.into_iter())
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(internal("a thread of LLVM's optimizer panicked")))
            })
            .collect::<Result<Vec<_>>>();
        here.and(others)
    })?;
    Ok(Some(Parts { others, restore }))
}

/// Links the other `parts` into `module` (which holds the first), with the linkages
/// they had before the split.
pub(crate) fn link<'ctx>(
    ctx: &'ctx Context,
    module: &Module<'ctx>,
    parts: Parts,
    machine: &TargetMachine,
) -> Result<()> {
    for part in parts.others {
        let m = load(ctx, &part, "an optimized part")?;
        module
            .link_in_module(m)
            .map_err(|e| internal(format!("the optimized parts do not link: {e}")))?;
    }
    for (name, linkage) in parts.restore {
        if let Some(f) = module.get_function(&name) {
            if f.count_basic_blocks() > 0 {
                f.set_linkage(linkage);
                f.as_global_value()
                    .set_visibility(GlobalVisibility::Default);
            }
        } else if let Some(g) = module.get_global(&name) {
            if !g.is_declaration() {
                g.set_linkage(linkage);
                g.set_visibility(GlobalVisibility::Default);
            }
        }
    }
    // What a half kept only because it was external meanwhile (a function the other half
    // inlined everywhere).
    run(module, "globaldce", machine)
}

/// The object code of `module` (the first part) and of the other `parts`, each made on a
/// thread of its own, as one relocatable object ([`objects::merge`]); `None` where the
/// objects are of a kind the merge does not handle (the caller then links the parts and
/// compiles the whole module).
pub(crate) fn codegen(
    module: &Module,
    parts: &Parts,
    machine: &TargetMachine,
    make: &(dyn Fn() -> Result<TargetMachine> + Sync),
) -> Result<Option<Vec<u8>>> {
    let objects = std::thread::scope(|s| {
        let others: Vec<_> = (parts.others.iter())
            .map(|bitcode| s.spawn(move || codegen_copy(bitcode, make)))
            .collect();
        let here = object(module, machine);
        let mut all = vec![here];
        all.extend(others.into_iter().map(|h| {
            h.join()
                .unwrap_or_else(|_| Err(internal("a thread of LLVM's code generator panicked")))
        }));
        all.into_iter().collect::<Result<Vec<_>>>()
    })?;
    let local: FxHashSet<&[u8]> = (parts.restore.iter()).map(|(n, _)| n.as_bytes()).collect();
    Ok(objects::merge(&objects, &local).ok())
}

/// The object code of `module`.
pub(crate) fn object(module: &Module, machine: &TargetMachine) -> Result<Vec<u8>> {
    machine
        .write_to_memory_buffer(module, FileType::Object)
        .map(|b| b.as_slice().to_vec())
        .map_err(|e| internal(format!("LLVM's code generator failed: {e}")))
}

/// Loads an optimized part from `bitcode` into a context of this thread and returns its
/// object code.
fn codegen_copy(
    bitcode: &[u8],
    make: &(dyn Fn() -> Result<TargetMachine> + Sync),
) -> Result<Vec<u8>> {
    let ctx = Context::create();
    let module = load(&ctx, bitcode, "an optimized part")?;
    object(&module, &make()?)
}

/// The module of `bitcode` (`what`, for the error) in `ctx`.
fn load<'ctx>(ctx: &'ctx Context, bitcode: &[u8], what: &str) -> Result<Module<'ctx>> {
    let buffer = MemoryBuffer::create_from_memory_range_copy(bitcode, "part");
    Module::parse_bitcode_from_buffer(&buffer, ctx)
        .map_err(|e| internal(format!("{what} does not load: {e}")))
}

pub(crate) fn run(module: &Module, pipeline: &str, machine: &TargetMachine) -> Result<()> {
    report_diagnostics(module);
    module
        .run_passes(pipeline, machine, PassBuilderOptions::create())
        .map_err(|e| {
            durin_diag::Diagnostic::error_at(None, format!("LLVM's optimizer failed: {e}"))
        })
}

/// Names every defined function and global, and makes the internal and private ones
/// external (hidden); returns the names and linkages to restore.
fn expose(module: &Module) -> Vec<(String, Linkage)> {
    let mut restore = Vec::new();
    let mut fresh = 0;
    let mut expose = |g: inkwell::values::GlobalValue| {
        if g.get_name().to_bytes().is_empty() {
            g.set_name(&format!("durin.part.{fresh}"));
            fresh += 1;
        }
        let linkage = g.get_linkage();
        if matches!(linkage, Linkage::Internal | Linkage::Private) {
            restore.push((g.get_name().to_string_lossy().into_owned(), linkage));
            g.set_linkage(Linkage::External);
            g.set_visibility(GlobalVisibility::Hidden);
        }
    };
    for f in module
        .get_functions()
        .filter(|f| f.count_basic_blocks() > 0)
    {
        expose(f.as_global_value());
    }
    for g in module.get_globals().filter(|g| !g.is_declaration()) {
        expose(g);
    }
    restore
}

/// Loads a copy of the module from `bitcode` into a context of this thread, keeps the
/// functions `keep`, optimizes it and returns its bitcode.
fn optimize_copy(
    bitcode: &[u8],
    keep: &FxHashSet<String>,
    small: &FxHashSet<String>,
    pipeline: &str,
    machine: &(dyn Fn() -> Result<TargetMachine> + Sync),
) -> Result<Vec<u8>> {
    let ctx = Context::create();
    let module = load(&ctx, bitcode, "the module's copy")?;
    keep_only(&module, keep, small, false);
    run(&module, pipeline, &machine()?)?;
    crate::hints::mark_streaming_stores(&ctx, &module);
    Ok(module.write_bitcode_to_memory().as_slice().to_vec())
}

/// Leaves the bodies of the functions `keep` in `module`: a small other function becomes
/// `available_externally` (LLVM may inline it; the part that owns it defines it), any other
/// a declaration. Unless `owns_globals`, constant globals become `available_externally`
/// and mutable ones declarations.
fn keep_only(
    module: &Module,
    keep: &FxHashSet<String>,
    small: &FxHashSet<String>,
    owns_globals: bool,
) {
    let others: Vec<FunctionValue> = module
        .get_functions()
        .filter(|f| f.count_basic_blocks() > 0 && !keep.contains(&name(*f)))
        .collect();
    for f in others {
        let n = name(f);
        if small.contains(&n) {
            f.set_linkage(Linkage::AvailableExternally);
            f.as_global_value()
                .set_visibility(GlobalVisibility::Default);
            continue;
        }
        let decl = module.add_function("", f.get_type(), Some(Linkage::External));
        decl.set_call_conventions(f.get_call_conventions());
        let mut locs = vec![AttributeLoc::Function, AttributeLoc::Return];
        locs.extend((0..f.count_params()).map(AttributeLoc::Param));
        for loc in locs {
            for a in f.attributes(loc) {
                decl.add_attribute(loc, a);
            }
        }
        f.replace_all_uses_with(decl);
        // SAFETY: `f` has no uses left, and no handle to it is used after this.
        unsafe { f.delete() };
        decl.as_global_value().set_name(&n);
        decl.as_global_value()
            .set_visibility(GlobalVisibility::Hidden);
    }
    if !owns_globals {
        for g in module.get_globals().filter(|g| !g.is_declaration()) {
            if g.is_constant() {
                g.set_linkage(Linkage::AvailableExternally);
                g.set_visibility(GlobalVisibility::Default);
            } else {
                // SAFETY: a global variable of this module; no initializer makes it a
                // declaration.
                unsafe {
                    inkwell::llvm_sys::core::LLVMSetInitializer(
                        g.as_value_ref(),
                        std::ptr::null_mut(),
                    )
                };
            }
        }
    }
}

/// Takes LLVM's own messages about `module`'s context over, which LLVM would print as
/// `warning: <unknown>:0:0: ...` (durin's IR gives LLVM no places): a loop that asked for
/// vectorization (`vectorize`, or the image library's CPU loops) and that LLVM left scalar
/// is not reported, as the request is a hint and the loop runs correctly as it is; any other
/// message is printed as LLVM's, without the place it does not have.
fn report_diagnostics(module: &Module) {
    use inkwell::context::AsContextRef;
    use llvm_sys::core::{
        LLVMContextSetDiagnosticHandler, LLVMGetDiagInfoDescription, LLVMGetDiagInfoSeverity,
    };
    use llvm_sys::prelude::LLVMDiagnosticInfoRef;
    use llvm_sys::LLVMDiagnosticSeverity;
    extern "C" fn handler(info: LLVMDiagnosticInfoRef, _: *mut std::ffi::c_void) {
        // SAFETY: LLVM passes a valid diagnostic; the description is a string it allocated
        // for the caller, freed here.
        let (severity, text) = unsafe {
            let d = LLVMGetDiagInfoDescription(info);
            let text = std::ffi::CStr::from_ptr(d).to_string_lossy().into_owned();
            llvm_sys::core::LLVMDisposeMessage(d);
            (LLVMGetDiagInfoSeverity(info), text)
        };
        let kind = match severity {
            LLVMDiagnosticSeverity::LLVMDSError => "error",
            LLVMDiagnosticSeverity::LLVMDSWarning => "warning",
            // Remarks and notes are what LLVM says only when asked.
            _ => return,
        };
        if text.contains("loop not vectorized") {
            return;
        }
        let text = text.strip_prefix("<unknown>:0:0: ").unwrap_or(&text);
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{kind}: LLVM: {text}");
    }
    let ctx = module.get_context();
    // SAFETY: the handler lives as long as the program; it takes no context pointer.
    unsafe {
        LLVMContextSetDiagnosticHandler(ctx.as_ctx_ref(), Some(handler), std::ptr::null_mut())
    };
}
