//! Native code: running `main` through a JIT, and writing object files, assembly, LLVM IR,
//! C headers and executables.

use crate::runtime_lib::link;
use crate::{error, Backend, Checks, Options};
use durin_backend_llvm::{self as llvm};
use durin_diag::{Diagnostic, SourceMap};
use durin_ir::analysis::program::Signature;
use durin_ir::{Def, TypeKind, World};
use std::ffi::{c_char, CString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// What `durin build` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Emit {
    /// A relocatable object file, to link with `cc` and the runtime library.
    Obj,
    /// Assembly text.
    Asm,
    /// LLVM IR text.
    LlvmIr,
    /// A C header declaring the exported functions.
    Header,
    /// An executable (object file linked with the runtime by `cc`).
    Exe,
    /// The CUDA C of the program's kernels.
    Cuda,
    /// The PTX of the program's kernels (CUDA C compiled by NVRTC for the GPU
    /// architecture of the options).
    Ptx,
}

/// The sources for the back ends' bounds checks, when the options ask for them.
fn bounds_checks(o: &Options, sources: &SourceMap) -> Option<Arc<SourceMap>> {
    (o.checks == Checks::Bounds).then(|| Arc::new(sources.clone()))
}

fn llvm_options(o: &Options, sources: &SourceMap) -> llvm::Options {
    llvm::Options {
        opt_level: o.opt_level,
        cpu: o.cpu.clone(),
        bounds_checks: bounds_checks(o, sources),
        places: Some(Arc::new(sources.clone())),
        ..llvm::Options::default()
    }
}

fn report_times(err: &mut dyn Write, t: &llvm::Timings, codegen: &str) {
    let _ = writeln!(
        err,
        "    llvm: {:.3} ms (lower to LLVM IR)",
        t.lower.as_secs_f64() * 1e3
    );
    let parts = |yes: bool| {
        if yes {
            " (in two parts, on two threads)"
        } else {
            ""
        }
    };
    let _ = writeln!(
        err,
        "llvm-opt: {:.3} ms{}",
        t.optimize.as_secs_f64() * 1e3,
        parts(t.in_parts)
    );
    let _ = writeln!(
        err,
        "{codegen:>8}: {:.3} ms{}",
        t.codegen.as_secs_f64() * 1e3,
        parts(t.codegen_in_parts)
    );
}

/// The parameters `main` takes.
#[derive(Clone, Copy)]
enum Params {
    /// None.
    None,
    /// `argc: i32, argv: &[&[u8]]`.
    ArgcArgv,
}

/// Compiles `w` with the JIT of `backend` and calls `main` with `argv`; returns the low 8
/// bits of its result (its exit code, as for a C program). `main`'s shape was checked
/// against the source; a shape no JIT can call is still an error here, not a crash.
pub fn jit_main(
    w: &World,
    main: Def,
    argv: &[String],
    backend: Backend,
    o: &Options,
    sources: &SourceMap,
    err: &mut dyn Write,
) -> Result<u8, Diagnostic> {
    let bad_shape = || {
        error("`main` must take no parameters or `(argc: i32, argv: &[&[u8]])` and return an integer (its exit code) or nothing")
            .at(w.loc(main))
    };
    let sig = Signature::of(w, w.type_of(main)).ok_or_else(bad_shape)?;
    let returns_int = match sig.results(w).as_slice() {
        [] => false,
        [t] if matches!(w.kind(*t), TypeKind::Int { .. } | TypeKind::Bool) => true,
        _ => return Err(bad_shape()),
    };
    let params = match sig.params.len() {
        0 => Params::None,
        2 => Params::ArgcArgv,
        _ => return Err(bad_shape()),
    };
    let name = w.name(main).unwrap_or("main").to_string();
    let symbols = durin_runtime::symbols();
    match backend {
        Backend::Llvm => {
            let ctx = inkwell::context::Context::create();
            let compiled = llvm::compile(&ctx, w, &llvm_options(o, sources))?;
            let jit = compiled.jit(&name, &symbols)?;
            if o.time {
                report_times(err, &jit.timings, "jit");
            }
            let code = call_main(jit.address, params, returns_int, argv, o.time, err);
            report_modules(o, err);
            code
        }
        Backend::Cranelift => {
            let copts = durin_backend_cranelift::Options {
                opt_level: o.opt_level,
                verify: true,
                bounds_checks: bounds_checks(o, sources),
                places: Some(Arc::new(sources.clone())),
            };
            let jit = durin_backend_cranelift::jit(w, &name, &symbols, &copts)?;
            if o.time {
                let t = &jit.timings;
                let _ = writeln!(
                    err,
                    "cranelift: {:.3} ms (lower to Cranelift IR)",
                    t.lower.as_secs_f64() * 1e3
                );
                let _ = writeln!(err, "     jit: {:.3} ms", t.codegen.as_secs_f64() * 1e3);
            }
            let code = call_main(jit.address, params, returns_int, argv, o.time, err);
            report_modules(o, err);
            code
        }
        Backend::Interp => Err(error(
            "internal compiler error: the interpreter is not a JIT",
        )),
    }
}

/// With `--time` or `--time-passes`, after a run that launched CUDA kernels: the time the
/// run spent getting its CUDA modules (compiled by NVRTC, or read from the kernel cache)
/// and having the driver load them, all part of the run's time.
fn report_modules(o: &Options, err: &mut dyn Write) {
    let m = durin_runtime::cuda::module_loads();
    let n = m.compiled + m.cached;
    if !(o.time || o.time_passes) || n == 0 {
        return;
    }
    let s = |n: u32| if n == 1 { "" } else { "s" };
    let (c, k) = (m.compiled, m.cached);
    let _ = writeln!(
        err,
        "   nvrtc: {:.3} ms ({c} module{} compiled)\n   cache: {:.3} ms ({k} module{} read from the kernel cache)\n    load: {:.3} ms ({n} module{} loaded onto the GPU)",
        m.compile_us / 1e3,
        s(c),
        m.cached_us / 1e3,
        s(k),
        m.load_us / 1e3,
        s(n)
    );
}

/// Calls the compiled `main` at `address` (taking `params`) and returns the low
/// 8 bits of its result.
fn call_main(
    address: usize,
    params: Params,
    returns_int: bool,
    argv: &[String],
    time: bool,
    err: &mut dyn Write,
) -> Result<u8, Diagnostic> {
    let args: Vec<CString> = argv
        .iter()
        .map(|a| {
            CString::new(a.as_bytes())
                .map_err(|_| error(format!("the argument `{a}` contains a zero byte")))
        })
        .collect::<Result<_, _>>()?;
    let mut ptrs: Vec<*const c_char> = args.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    let t = Instant::now();
    // SAFETY: the address is `main` as the back end compiled it, with the signature its
    // type gives (checked above: no parameters or argc/argv; an integer or no result). The
    // low 8 bits of an integer result are the same whatever its width.
    let code = unsafe {
        match (params, returns_int) {
            (Params::None, true) => {
                let f: extern "C" fn() -> u64 = std::mem::transmute(address);
                f() as u8
            }
            (Params::None, false) => {
                let f: extern "C" fn() = std::mem::transmute(address);
                f();
                0
            }
            (Params::ArgcArgv, true) => {
                let f: extern "C" fn(i32, *const *const c_char) -> u64 =
                    std::mem::transmute(address);
                f(args.len() as i32, ptrs.as_ptr()) as u8
            }
            (Params::ArgcArgv, false) => {
                let f: extern "C" fn(i32, *const *const c_char) = std::mem::transmute(address);
                f(args.len() as i32, ptrs.as_ptr());
                0
            }
        }
    };
    durin_runtime::print::flush_all();
    if time {
        let _ = writeln!(err, "     run: {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(code)
}

/// Writes `what` (a host artifact: not `Cuda` or `Ptx`) for program `w` to `out`.
pub fn build(
    w: &World,
    what: Emit,
    out: &Path,
    o: &Options,
    sources: &SourceMap,
    err: &mut dyn Write,
) -> Result<(), Diagnostic> {
    let write_error = |e: std::io::Error| error(format!("cannot write `{}`: {e}", out.display()));
    let emit = match what {
        Emit::Header => {
            let text = llvm::header::header(w, &header_guard(out))?;
            return std::fs::write(out, text).map_err(write_error);
        }
        Emit::Obj | Emit::Exe => llvm::Emit::Object,
        Emit::Asm => llvm::Emit::Assembly,
        Emit::LlvmIr => llvm::Emit::LlvmIr,
        Emit::Cuda | Emit::Ptx => {
            return Err(error(
                "internal compiler error: device code is not a host artifact",
            ))
        }
    };
    let file = if what == Emit::Exe {
        temp_object(out)
    } else {
        out.to_path_buf()
    };
    let ctx = inkwell::context::Context::create();
    let mut opts = llvm_options(o, sources);
    if emit != llvm::Emit::Object {
        // Made from the parts linked again, which costs a link.
        opts.parallel_min_instructions = llvm::PARALLEL_MIN_INSTRUCTIONS_LINKED;
    }
    let mut compiled = llvm::compile(&ctx, w, &opts)?;
    compiled.emit(emit, &file)?;
    if o.time {
        report_times(err, &compiled.timings, "codegen");
    }
    if what == Emit::Exe {
        let t = Instant::now();
        let linked = link(&file, out);
        let _ = std::fs::remove_file(&file);
        linked?;
        if o.time {
            let _ = writeln!(err, "    link: {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
        }
    }
    Ok(())
}

fn header_guard(out: &Path) -> String {
    let stem = out
        .file_name()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "durin".into());
    let mut g: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if g.starts_with(|c: char| c.is_ascii_digit()) {
        g.insert(0, '_');
    }
    g
}

fn temp_object(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "a.out".into());
    std::env::temp_dir().join(format!("durin-{}-{name}.o", std::process::id()))
}
