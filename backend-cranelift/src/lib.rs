//! durin's Cranelift tier: first-order IR to machine code in memory, for fast compiles.
//!
//! It takes the same input as the LLVM back end (a program in control-flow form, after
//! closure elimination) and produces code in the process through `cranelift-jit`. It
//! compiles several times faster than LLVM at the price of slower code, which suits
//! `durin run -O0` and tests. [`lower`] explains the translation; a construct it does not
//! translate is an [`Diagnostic`] that says "not supported by the Cranelift tier" with the source
//! place, never a crash.

pub mod lower;
pub mod types;

use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
pub use durin_diag::Diagnostic;
use durin_ir::World;
use std::time::{Duration, Instant};

/// A construct the back end does not translate (an error without a place; callers add
/// the place with [`Diagnostic::at`]).
pub(crate) fn unsupported(what: impl Into<String>) -> Diagnostic {
    Diagnostic::unsupported(
        "by the Cranelift tier",
        format!(
            "{} (the LLVM back end, `--backend llvm`, may support it)",
            what.into()
        ),
    )
}

/// A broken invariant of the back end's input or of the back end itself.
pub(crate) fn internal(what: impl Into<String>) -> Diagnostic {
    Diagnostic::internal("the Cranelift tier", what)
}

/// How to compile.
#[derive(Clone, Debug)]
pub struct Options {
    /// 0: Cranelift's `none` level; 1 and above: `speed`.
    pub opt_level: u8,
    /// Run Cranelift's IR verifier on every function (catches translation bugs as errors).
    pub verify: bool,
    /// Bounds checks, naming places in these sources: as the LLVM back end's option of the
    /// same name. `None`: no checks.
    pub bounds_checks: Option<std::sync::Arc<durin_diag::SourceMap>>,
    /// The program's sources, for the places of run-time errors: as the LLVM back end's
    /// option of the same name.
    pub places: Option<std::sync::Arc<durin_diag::SourceMap>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            opt_level: 0,
            verify: true,
            bounds_checks: None,
            places: None,
        }
    }
}

/// Time spent in each step.
#[derive(Clone, Debug, Default)]
pub struct Timings {
    /// IR to Cranelift IR.
    pub lower: Duration,
    /// Cranelift's optimization, register allocation and emission, and linking.
    pub codegen: Duration,
}

/// Code made by the JIT, alive as long as this value.
pub struct Jit {
    module: Option<JITModule>,
    /// The address of the function asked for.
    pub address: usize,
    /// Time of each step.
    pub timings: Timings,
}

impl Drop for Jit {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: the code is no longer reachable: `address` goes with this value.
            unsafe { m.free_memory() };
        }
    }
}

/// The address given to an import nothing defines; the code that would call it is never
/// run (`jit` fails).
extern "C" fn unresolved() {
    std::process::abort()
}

/// Compiles the program of `w` into memory, resolving `symbols` (the runtime's functions)
/// by address and other imports (the C library) from the process, and returns the address
/// of the external function `name`.
pub fn jit(
    w: &World,
    name: &str,
    symbols: &[(&str, usize)],
    opts: &Options,
) -> Result<Jit, Diagnostic> {
    let mut flags = settings::builder();
    let level = if opts.opt_level == 0 { "none" } else { "speed" };
    for (k, v) in [
        ("opt_level", level),
        (
            "enable_verifier",
            if opts.verify { "true" } else { "false" },
        ),
        ("enable_multi_ret_implicit_sret", "true"),
        ("use_colocated_libcalls", "false"),
        ("is_pic", "false"),
        // Cranelift's tail calls (`return_call`) need frame pointers.
        ("preserve_frame_pointers", "true"),
    ] {
        flags
            .set(k, v)
            .map_err(|e| internal(format!("Cranelift setting `{k}`: {e}")))?;
    }
    let isa = cranelift_native::builder()
        .map_err(|e| {
            Diagnostic::error_at(
                None,
                format!("Cranelift does not support this machine: {e}"),
            )
        })?
        .finish(settings::Flags::new(flags))
        .map_err(|e| internal(format!("Cranelift target: {e}")))?;
    let mut builder = JITBuilder::with_isa(isa, cranelift_module::default_libcall_names());
    builder.symbols(
        symbols
            .iter()
            .map(|&(n, a)| (n.to_string(), a as *const u8)),
    );
    // Tried before Cranelift's own search of the process (the last lookup added goes
    // first): an import neither the runtime nor the process defines is noted and given an
    // address that is never called (Cranelift's own search panics), so that linking
    // reports it.
    let missing: std::sync::Arc<std::sync::Mutex<Vec<String>>> = Default::default();
    let noted = missing.clone();
    builder.symbol_lookup_fn(Box::new(move |name| {
        let c = std::ffi::CString::new(name).ok()?;
        // SAFETY: a NUL-terminated name; `RTLD_DEFAULT` searches the loaded objects.
        let found = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c.as_ptr()) };
        if !found.is_null() {
            return Some(found as *const u8);
        }
        if let Ok(mut m) = noted.lock() {
            m.push(name.to_string());
        }
        Some(unresolved as *const u8)
    }));
    let mut module = JITModule::new(builder);
    let sources = (opts.bounds_checks.as_deref(), opts.places.as_deref());
    let (entry, timings) = lower::lower(&mut module, w, name, sources)?;
    let t = Instant::now();
    module.finalize_definitions().map_err(|e| {
        Diagnostic::error_at(None, format!("Cranelift cannot link the program: {e}"))
    })?;
    let missing = missing.lock().map(|m| m.clone()).unwrap_or_default();
    if !missing.is_empty() {
        let names: Vec<String> = missing.iter().map(|n| format!("`{n}`")).collect();
        return Err(Diagnostic::error_at(
            None,
            format!(
                "Cranelift cannot link the program: neither durin's runtime nor this process defines {}",
                names.join(", ")
            ),
        ));
    }
    let address = module.get_finalized_function(entry) as usize;
    Ok(Jit {
        module: Some(module),
        address,
        timings: Timings {
            lower: timings.lower,
            codegen: timings.codegen + t.elapsed(),
        },
    })
}
