//! durin as a library: what the `durin` command does, callable in process.
//!
//! One [`Options`] value holds every choice (target, back end, level, passes, fuel,
//! flags); a [`Session`] reads sources, runs the frontend, the pipeline the options ask
//! for and a back end, and writes what it has to say (diagnostics, timings, printed IR)
//! to the sinks it was given. Every error is a [`Diagnostic`], rendered once by
//! [`durin_diag::render`]; a failed step returns [`Failed`] after writing its diagnostics.
//!
//! The crate holds no IR rewriting (that is `durin-passes`) and no code generation (the
//! back ends): it chooses, calls and reports.

#![deny(missing_docs)]

mod cuda;
mod ir_file;
mod native;
mod report;
mod runtime_lib;
mod session;

use durin_diag::Diagnostic;
pub use durin_ir::interp::Limits;
use durin_passes::PrintAfter;
pub use ir_file::IrAction;
pub use native::Emit;
pub use runtime_lib::{runtime_library, SYSTEM_LIBS};
pub use session::{Compiled, Failed, Purpose, Session};

/// The exit status of a program stopped by a run-time error (a division by zero, a failed
/// allocation, a memory error the interpreter catches): the same for native code (the
/// runtime's `durin_runtime_error`) and the interpreter.
pub const EXIT_RUNTIME_ERROR: u8 = 101;

/// The exit status of `durin` when it fails by a bug of its own (an internal compiler
/// error), distinct from a rejected program (1) and a program's run-time error.
pub const EXIT_INTERNAL_ERROR: u8 = 70;

/// The most memory the process has held at once (its peak resident set), where the
/// system says (Linux's `/proc/self/status`); `None` elsewhere.
pub fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Makes a panic what it is, a bug in durin: the message, a request to report it, and the
/// exit status [`EXIT_INTERNAL_ERROR`] (the command line installs this first).
pub fn report_panics_as_internal_errors() {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("error: internal compiler error: {info}");
        eprintln!("  note: this is a bug in durin; please report it with the program and the command line");
        std::process::exit(EXIT_INTERNAL_ERROR.into());
    }));
}

/// The built-in passes, a line each: name and what it does (`durin check --list-passes`).
pub fn pass_list() -> String {
    durin_passes::passes()
        .map(|(name, what)| format!("{name:12} {what}\n"))
        .collect()
}

/// The end of the `durin` command, with exit status `code`. After a command that ran a
/// program of the user's (`runs_program`), the status to return from `main`, so that the
/// process's exit handlers run (the program's own among them). Otherwise the process ends
/// here, once everything written to standard output and error (Rust's streams and C's) is
/// out, without running exit handlers: those are LLVM's static destructors (its option and
/// pass registries) and the allocator's return of free memory to the system, work whose
/// result the end of the process makes moot (docs/src/decisions.md).
pub fn exit(code: u8, runs_program: bool) -> std::process::ExitCode {
    if runs_program {
        return std::process::ExitCode::from(code);
    }
    use std::io::Write;
    extern "C" {
        fn fflush(stream: *mut std::ffi::c_void) -> i32;
        fn _exit(code: i32) -> !;
    }
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: `fflush(NULL)` flushes every C stream; `_exit` ends the process, and no Rust
    // code runs after it.
    unsafe {
        fflush(std::ptr::null_mut());
        _exit(i32::from(code))
    }
}

/// What the program's accelerator is (`--target`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Target {
    /// CUDA when this machine has a CUDA driver and the program runs natively (for `run`);
    /// `build` and `check` take CUDA, the interpreter the CPU.
    Auto,
    /// An NVIDIA GPU through CUDA.
    Cuda,
    /// The CPU: `accelerator(dev)` maps to the CPU; a CUDA launch is an error.
    Cpu,
    /// CUDA's kernels (outlined and staged as for `cuda`) run on the CPU's cores with a
    /// GPU's blocks, barriers and shared memory: no GPU needed. The interpreter runs them
    /// as for `cuda`.
    CudaCpu,
}

/// Run-time checks compiled into native code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Checks {
    /// None (the interpreter checks everything all the same).
    #[default]
    None,
    /// Every load and store through an array index: against a fixed-size array's length,
    /// and behind a pointer against the runtime allocation it points into.
    Bounds,
}

/// What runs or compiles the program after the passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Backend {
    /// Native code through LLVM (JIT for `run`, object code for `build`).
    Llvm,
    /// Native code through Cranelift's JIT (fast to compile).
    Cranelift,
    /// The IR interpreter (checks every memory access and every effect's order).
    Interp,
}

impl Backend {
    /// The back end `run` takes at level `opt_level` when none is named: Cranelift at 0,
    /// LLVM otherwise.
    pub fn default_for(opt_level: u8) -> Backend {
        if opt_level == 0 {
            Backend::Cranelift
        } else {
            Backend::Llvm
        }
    }
}

/// Whether kernels stage their read-only buffers into shared memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Shm {
    /// None (a kernel's `shm_stage` hint still stages its buffer).
    Off,
    /// Every buffer that can be staged (see the `stage` pass), unless a kernel's
    /// `shm_keep` hint says not.
    On,
    /// The buffers the cost model expects a gain from (and the hinted ones).
    #[default]
    Auto,
}

impl Shm {
    /// The `stage` pass's mode.
    pub fn mode(self) -> durin_passes::StageMode {
        match self {
            Shm::Off => durin_passes::StageMode::Off,
            Shm::On => durin_passes::StageMode::On,
            Shm::Auto => durin_passes::StageMode::Auto,
        }
    }
}

/// What `--report` lists after the passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Report {
    /// The closures left: continuations that are neither top-level functions nor blocks.
    Closures,
    /// For each CUDA kernel, its buffers: read-only, written, or disqualified from
    /// shared-memory staging, and why.
    Shm,
    /// For each CUDA kernel, its launch: block shape, registers, shared and local memory
    /// (from NVRTC's cubin for `--gpu-arch`), and how many blocks an SM runs at once.
    Launch,
    /// What the image library's schedules chose for each call that realizes a graph of
    /// operators: its path (thread tiles, bands of rows), and for each numbered
    /// intermediate result whether it is stored or computed where it is read, and why.
    Fusion,
}

/// Every choice a compilation makes, passed straight through.
#[derive(Clone, Debug)]
pub struct Options {
    /// The accelerator.
    pub target: Target,
    /// The back end (for `check`, the one whose pipeline to run is decided by
    /// [`Session::check`]).
    pub backend: Backend,
    /// Optimization level, 0 to 3 (also LLVM's and Cranelift's level).
    pub opt_level: u8,
    /// Passes to run instead of the level's pipeline (comma-separated, `O0`..`O3` allowed).
    pub passes: Option<String>,
    /// Print the IR after these passes (to the output sink).
    pub print_after: PrintAfter,
    /// Verify the IR before the first pass and after every pass.
    pub verify_each: bool,
    /// Print each pass's time and the IR's size after it.
    pub time_passes: bool,
    /// Partial-evaluation fuel: specializations allowed per run of `pe`.
    pub pe_fuel: u64,
    /// What to list after the passes.
    pub report: Option<Report>,
    /// Shared-memory staging of kernels' read-only buffers.
    pub shm: Shm,
    /// Treat warnings as errors.
    pub deny_warnings: bool,
    /// Print the time of each stage.
    pub time: bool,
    /// Target CPU for LLVM (`None`: the host's CPU and its features).
    pub cpu: Option<String>,
    /// GPU architecture for PTX (`sm_XY`).
    pub gpu_arch: String,
    /// The interpreter's limits (jumps, memory, frames).
    pub interp: durin_ir::interp::Limits,
    /// Run-time checks in native code.
    pub checks: Checks,
    /// The `split` pass splits the loops off functions of at least this many blocks (0:
    /// every function).
    pub split_min_blocks: usize,
}

impl Options {
    /// The settings the passes read.
    pub fn pass_config(&self) -> durin_passes::Config {
        durin_passes::Config {
            fuel: self.pe_fuel,
            shm: self.shm.mode(),
            split_min_blocks: self.split_min_blocks,
        }
    }
}

impl Default for Options {
    fn default() -> Options {
        Options {
            target: Target::Auto,
            backend: Backend::Llvm,
            opt_level: 2,
            passes: None,
            print_after: PrintAfter::None,
            verify_each: false,
            time_passes: false,
            pe_fuel: durin_passes::Config::default().fuel,
            report: None,
            shm: Shm::Auto,
            deny_warnings: false,
            time: false,
            cpu: None,
            gpu_arch: "sm_90".into(),
            interp: durin_ir::interp::Limits::default(),
            checks: Checks::None,
            split_min_blocks: durin_passes::Config::default().split_min_blocks,
        }
    }
}

/// An error without a place (files, command-line choices, the machine).
fn error(message: impl Into<String>) -> Diagnostic {
    Diagnostic::error_at(None, message)
}

/// The interpreter's limits as command-line flags.
#[cfg(feature = "cli")]
#[derive(clap::Args)]
pub struct InterpArgs {
    /// Maximum number of jumps the interpreter may make.
    #[arg(long, value_name = "N", default_value_t = Limits::default().fuel)]
    pub fuel: u64,
    /// Maximum number of bytes the interpreted program may have allocated at once.
    #[arg(long, value_name = "BYTES", default_value_t = Limits::default().max_memory)]
    pub interp_memory: u64,
    /// Maximum number of continuation frames the interpreter keeps alive at once: the
    /// depth of non-tail recursion (each takes a few hundred bytes).
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_frames)]
    pub interp_frames: u64,
}

#[cfg(feature = "cli")]
impl InterpArgs {
    /// The limits these flags give.
    pub fn limits(&self) -> Limits {
        Limits {
            fuel: self.fuel,
            max_memory: self.interp_memory,
            max_frames: self.interp_frames,
            ..Limits::default()
        }
    }
}
