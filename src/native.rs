//! The native paths of the command line: running `main` through the LLVM JIT and building
//! object files, assembly, LLVM IR, C headers and executables.

use durin_backend_llvm::{self as llvm, Emit};
use durin_ir::{Def, TypeKind, World};
use std::ffi::{c_char, CString};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

/// What `durin build` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BuildEmit {
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
    /// The PTX of the program's kernels (CUDA C compiled by NVRTC for `--gpu-arch`).
    Ptx,
}

/// Which code generator makes native code in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JitBackend {
    /// LLVM: slower to compile, faster code.
    Llvm,
    /// Cranelift: fast to compile.
    Cranelift,
}

/// Settings of the native back ends from the command line.
pub struct NativeOptions {
    pub opt_level: u8,
    pub cpu: Option<String>,
    pub time: bool,
}

impl NativeOptions {
    fn llvm(&self) -> llvm::Options {
        llvm::Options {
            opt_level: self.opt_level,
            cpu: self.cpu.clone(),
        }
    }
}

fn report_times(t: &llvm::Timings, codegen: &str) {
    eprintln!(
        "    llvm: {:.3} ms (lower to LLVM IR)",
        t.lower.as_secs_f64() * 1e3
    );
    eprintln!("llvm-opt: {:.3} ms", t.optimize.as_secs_f64() * 1e3);
    eprintln!("{codegen:>8}: {:.3} ms", t.codegen.as_secs_f64() * 1e3);
}

/// Renders a back-end error against the program's sources.
pub fn render(e: llvm::Error, sources: &durin_frontend::source::SourceMap) -> String {
    render_at(e.message, e.loc, sources)
}

fn render_at(
    message: String,
    loc: Option<durin_ir::Loc>,
    sources: &durin_frontend::source::SourceMap,
) -> String {
    use durin_frontend::diag::Diagnostic;
    use durin_frontend::source::Span;
    match loc {
        Some(l) => {
            let d = Diagnostic::error(Span::from_loc(l), message);
            eprint!("{}", durin_frontend::diag::render(sources, &[d]));
            "error: could not compile the program (1 error)".into()
        }
        None => format!("error: {message}"),
    }
}

/// Compiles `w` with a JIT and calls `main` with `argv`; the exit code is `main`'s result
/// (its low 8 bits, as for a C program).
pub fn jit_main(
    w: &World,
    main: Def,
    argv: &[String],
    backend: JitBackend,
    opts: &NativeOptions,
    sources: &durin_frontend::source::SourceMap,
) -> Result<ExitCode, String> {
    let sig = llvm::form::Signature::of(w, w.type_of(main))
        .ok_or_else(|| "error: `main` takes a continuation".to_string())?;
    let results = sig.results(w);
    let returns_int = match results.as_slice() {
        [] => false,
        [t] if matches!(w.kind(*t), TypeKind::Int { .. } | TypeKind::Bool) => true,
        _ => {
            return Err(
                "error: `main` must return an integer (its exit code) or nothing".to_string(),
            )
        }
    };
    let name = w.name(main).unwrap_or("main").to_string();
    let symbols = durin_runtime::symbols();
    let code = match backend {
        JitBackend::Llvm => {
            let ctx = inkwell::context::Context::create();
            let compiled = llvm::compile(&ctx, w, &opts.llvm()).map_err(|e| render(e, sources))?;
            let jit = compiled
                .jit(&name, &symbols, opts.opt_level)
                .map_err(|e| render(e, sources))?;
            if opts.time {
                report_times(&jit.timings, "jit");
            }
            call_main(jit.address, sig.params.len(), returns_int, argv, opts.time)?
        }
        JitBackend::Cranelift => {
            let copts = durin_backend_cranelift::Options {
                opt_level: opts.opt_level,
                verify: true,
            };
            let jit = durin_backend_cranelift::jit(w, &name, &symbols, &copts)
                .map_err(|e| render_at(e.message, e.loc, sources))?;
            if opts.time {
                let t = &jit.timings;
                eprintln!(
                    "cranelift: {:.3} ms (lower to Cranelift IR)",
                    t.lower.as_secs_f64() * 1e3
                );
                eprintln!("     jit: {:.3} ms", t.codegen.as_secs_f64() * 1e3);
            }
            call_main(jit.address, sig.params.len(), returns_int, argv, opts.time)?
        }
    };
    Ok(ExitCode::from(code))
}

/// Calls the compiled `main` at `address` (`nparams`: 0 or argc/argv) and returns the low
/// 8 bits of its result.
fn call_main(
    address: usize,
    nparams: usize,
    returns_int: bool,
    argv: &[String],
    time: bool,
) -> Result<u8, String> {
    let args: Vec<CString> = argv
        .iter()
        .map(|a| {
            CString::new(a.as_bytes())
                .map_err(|_| format!("error: the argument `{a}` contains a zero byte"))
        })
        .collect::<Result<_, _>>()?;
    let mut ptrs: Vec<*const c_char> = args.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    let t = Instant::now();
    // SAFETY: the address is `main` as the back end compiled it, with the signature its
    // type gives (checked above: no parameters or argc/argv; an integer or no result). The
    // low 8 bits of an integer result are the same whatever its width.
    let code = unsafe {
        match (nparams, returns_int) {
            (0, true) => {
                let f: extern "C" fn() -> u64 = std::mem::transmute(address);
                f() as u8
            }
            (0, false) => {
                let f: extern "C" fn() = std::mem::transmute(address);
                f();
                0
            }
            (2, true) => {
                let f: extern "C" fn(i32, *const *const c_char) -> u64 =
                    std::mem::transmute(address);
                f(args.len() as i32, ptrs.as_ptr()) as u8
            }
            (2, false) => {
                let f: extern "C" fn(i32, *const *const c_char) = std::mem::transmute(address);
                f(args.len() as i32, ptrs.as_ptr());
                0
            }
            _ => {
                return Err(
                    "error: `main` takes no parameters or `(argc: i32, argv: &[&[u8]])`".into(),
                )
            }
        }
    };
    durin_runtime::print::flush_all();
    if time {
        eprintln!("     run: {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(code)
}

/// Writes `what` for program `w` to `out`.
pub fn build(
    w: &World,
    what: BuildEmit,
    out: &Path,
    opts: &NativeOptions,
    sources: &durin_frontend::source::SourceMap,
) -> Result<(), String> {
    if what == BuildEmit::Header {
        let guard = header_guard(out);
        let text = llvm::header::header(w, &guard).map_err(|e| render(e, sources))?;
        return std::fs::write(out, text)
            .map_err(|e| format!("error: cannot write `{}`: {e}", out.display()));
    }
    let ctx = inkwell::context::Context::create();
    let mut compiled = llvm::compile(&ctx, w, &opts.llvm()).map_err(|e| render(e, sources))?;
    let (emit, file) = match what {
        BuildEmit::Obj => (Emit::Object, out.to_path_buf()),
        BuildEmit::Asm => (Emit::Assembly, out.to_path_buf()),
        BuildEmit::LlvmIr => (Emit::LlvmIr, out.to_path_buf()),
        BuildEmit::Exe => (Emit::Object, temp_object(out)),
        BuildEmit::Header | BuildEmit::Cuda | BuildEmit::Ptx => {
            unreachable!("written before native code generation")
        }
    };
    compiled
        .emit(emit, &file)
        .map_err(|e| format!("error: {e}"))?;
    if opts.time {
        report_times(&compiled.timings, "codegen");
    }
    if what == BuildEmit::Exe {
        let t = Instant::now();
        let linked = link(&file, out);
        let _ = std::fs::remove_file(&file);
        linked?;
        if opts.time {
            eprintln!("    link: {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
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

/// The libraries the runtime (a Rust static library) needs from the system.
pub const SYSTEM_LIBS: &[&str] = &["-lpthread", "-ldl", "-lm", "-lgcc_s", "-lc"];

/// Where the runtime's static library is: `$DURIN_RUNTIME_LIB`, or beside the `durin`
/// executable (or one folder up, or in `../lib`).
pub fn runtime_library() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("DURIN_RUNTIME_LIB") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!(
                "error: DURIN_RUNTIME_LIB names `{}`, which is not a file",
                p.display()
            ))
        };
    }
    let exe =
        std::env::current_exe().map_err(|e| format!("error: cannot find durin's own path: {e}"))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let candidates = [
        dir.join("libdurin_runtime.a"),
        dir.join("../libdurin_runtime.a"),
        dir.join("../lib/libdurin_runtime.a"),
    ];
    candidates.iter().find(|p| p.is_file()).cloned().ok_or_else(|| {
        format!(
            "error: cannot find the runtime library `libdurin_runtime.a` beside `{}`\n  = help: build it with `cargo build --release --workspace` (or `-p durin-runtime`), or set DURIN_RUNTIME_LIB to its path",
            exe.display()
        )
    })
}

/// Links `object` with the runtime into the executable `out` with `cc` (`$CC` if set).
fn link(object: &Path, out: &Path) -> Result<(), String> {
    let runtime = runtime_library()?;
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let output = Command::new(&cc)
        .arg(object)
        .arg(&runtime)
        .args(SYSTEM_LIBS)
        .arg("-o")
        .arg(out)
        .output()
        .map_err(|e| format!("error: cannot run the linker `{cc}`: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "error: linking with `{cc}` failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(())
}
