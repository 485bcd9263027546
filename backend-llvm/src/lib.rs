//! durin's LLVM back end: first-order IR to LLVM IR through inkwell, optimization with
//! LLVM's new pass manager, object, assembly and LLVM IR files, and the JIT.
//!
//! It takes a program in control-flow form (after closure elimination: every continuation
//! is a top-level function or a basic block of one) and holds no pass that belongs on the
//! IR. [`lower`] explains the translation.

pub mod header;
pub mod hints;
mod jit;
pub mod lower;
mod objects;
mod parallel;
mod parallel_loops;
mod targets;
pub mod types;

pub use durin_diag::Diagnostic;
use durin_ir::World;
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine,
};
use inkwell::OptimizationLevel;
use std::path::Path;
use std::time::{Duration, Instant};

/// A construct the back end does not translate (an error without a place; callers add
/// the place with [`Diagnostic::at`]).
pub(crate) fn unsupported(what: impl Into<String>) -> Diagnostic {
    Diagnostic::unsupported("by the LLVM back end", what)
}

/// A broken invariant of the back end's input or of the back end itself.
pub(crate) fn internal(what: impl Into<String>) -> Diagnostic {
    Diagnostic::internal("the LLVM back end", what)
}

/// The back end's `Result`.
pub type Result<T> = std::result::Result<T, Diagnostic>;

/// How to compile.
#[derive(Clone, Debug)]
pub struct Options {
    /// LLVM optimization level, 0..=3.
    pub opt_level: u8,
    /// Target CPU (`None`: the host's CPU, with its features).
    pub cpu: Option<String>,
    /// Bounds checks (`--checks bounds`): every load and store through an index into an
    /// array is checked, against the length of a fixed-size array or, behind a pointer,
    /// against the runtime's allocation it points into; a failed check is a run-time error
    /// naming the access's source place in these sources. `None`: no checks.
    pub bounds_checks: Option<std::sync::Arc<durin_diag::SourceMap>>,
    /// The program's sources, for the places of run-time errors (an integer division by
    /// zero names its division). `None`: errors without places.
    pub places: Option<std::sync::Arc<durin_diag::SourceMap>>,
    /// A module whose functions have this many instructions or more is optimized in two
    /// parts on two threads ([`PARALLEL_MIN_INSTRUCTIONS`] by default, for object code and
    /// the JIT, whose code is made in the same parts;
    /// [`PARALLEL_MIN_INSTRUCTIONS_LINKED`] suits LLVM IR and assembly, made from the parts
    /// linked again) above `-O0`; 0 optimizes every such module of two functions or more
    /// in parts, however unequal (for tests).
    pub parallel_min_instructions: usize,
}

pub use parallel::MIN_INSTRUCTIONS as PARALLEL_MIN_INSTRUCTIONS;
pub use parallel::MIN_INSTRUCTIONS_LINKED as PARALLEL_MIN_INSTRUCTIONS_LINKED;

impl Default for Options {
    fn default() -> Self {
        Options {
            opt_level: 2,
            cpu: None,
            bounds_checks: None,
            places: None,
            parallel_min_instructions: PARALLEL_MIN_INSTRUCTIONS,
        }
    }
}

/// What `emit` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    /// A relocatable object file (position-independent).
    Object,
    /// Assembly text.
    Assembly,
    /// LLVM IR text.
    LlvmIr,
}

/// Time spent in each step.
#[derive(Clone, Debug, Default)]
pub struct Timings {
    /// IR to LLVM IR.
    pub lower: Duration,
    /// LLVM's optimization passes.
    pub optimize: Duration,
    /// Whether the module was optimized in parts on two threads.
    pub in_parts: bool,
    /// Code generation (object or JIT).
    pub codegen: Duration,
    /// Whether the object code was made in parts on two threads.
    pub codegen_in_parts: bool,
}

fn level(opt: u8) -> OptimizationLevel {
    match opt {
        0 => OptimizationLevel::None,
        1 => OptimizationLevel::Less,
        2 => OptimizationLevel::Default,
        _ => OptimizationLevel::Aggressive,
    }
}

/// A target machine for the host (triple), with the CPU of `opts`.
/// Sets LLVM's process-wide options, once: loops are not unrolled by a run-time count (it
/// cost compile time and gained no run time on the stencil programs), nor copied per outcome
/// of an invariant branch (a seventh of the largest program's compile time for 3-4% of its
/// run time; both in docs/src/decisions.md), and the SLP vectorizer stays off at every level.
/// It turned the fully unrolled update loops of small arrays into wide loads of memory that
/// scalar stores had just written, which defeats store-to-load forwarding (n-body ran 1.2x
/// slower) and gained nothing measurable elsewhere; durin's vectorization is the loop
/// vectorizer, with `vectorize` to ask for it (docs/src/decisions.md). LLVM's pipeline options
/// have a switch for it that LLVM 19's `default<On>` pipelines do not obey.
fn configure_llvm() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let args = [
            c"durin".as_ptr(),
            c"-vectorize-slp=false".as_ptr(),
            c"-unroll-runtime=false".as_ptr(),
            // `-O3`'s non-trivial loop unswitching: a loop duplicated, one copy per outcome
            // of a loop-invariant branch inside it. No copy costs less than a threshold of
            // zero, so only trivial unswitching remains (hoisting a branch that leaves the
            // loop, without copying), as at `-O2`.
            c"-unswitch-threshold=0".as_ptr(),
        ];
        // SAFETY: NUL-terminated strings that outlive the call; LLVM copies what it keeps.
        unsafe {
            inkwell::llvm_sys::support::LLVMParseCommandLineOptions(
                args.len() as i32,
                args.as_ptr(),
                c"".as_ptr(),
            )
        };
    });
}

/// Target features added for every CPU: the vectorizer loads elements at computed indices
/// one by one instead of with gather instructions (and stores them one by one instead of
/// with scatters). On CPUs whose microcode mitigates Gather Data Sampling a gather is far
/// slower than the loads it replaces; on the development machine the local Laplacian
/// filter's table lookups ran 1.9 times as fast without (docs/src/decisions.md).
const NO_GATHER: &str = "+prefer-no-gather,+prefer-no-scatter";

fn machine(opts: &Options) -> Result<(TargetMachine, String, String)> {
    configure_llvm();
    // The x86 target alone, by its own initializers: LLVM's "native target" helpers are
    // compiled in one object with the initializers of every target LLVM was built with, and
    // calling them links all of those targets (and runs their static constructors at every
    // start), though durin generates x86-64 code only (docs/src/decisions.md).
    Target::initialize_x86(&InitializationConfig::default());
    let triple = TargetMachine::get_default_triple();
    let target = Target::from_triple(&triple)
        .map_err(|e| Diagnostic::error_at(None, format!("no LLVM target for the host: {e}")))?;
    let (cpu, features) = match opts.cpu.as_deref() {
        None | Some("native") => (
            TargetMachine::get_host_cpu_name().to_string(),
            format!(
                "{},{NO_GATHER}",
                TargetMachine::get_host_cpu_features().to_string()
            ),
        ),
        Some(c) => (c.to_string(), NO_GATHER.to_string()),
    };
    if opts.cpu.as_deref().is_some_and(|c| c != "native") && !cpu_is_known(&cpu) {
        return Err(Diagnostic::error_at(None, format!(
            "unknown CPU `{cpu}` (LLVM 19 knows x86 CPUs such as `x86-64`, `x86-64-v3`, `skylake`, `znver4`; `native` is this machine's)"
        )));
    }
    if is_32_bit_only(&cpu) {
        return Err(Diagnostic::error_at(None, format!(
            "the CPU `{cpu}` has no 64-bit mode, and durin generates x86-64 code (use `x86-64` for the oldest 64-bit x86 CPUs)"
        )));
    }
    let tm = target_machine(&target, &triple, &cpu, &features, opts.opt_level)
        .ok_or_else(|| Diagnostic::error_at(None, format!("LLVM does not know the CPU `{cpu}`")))?;
    Ok((tm, cpu, features))
}

/// The target machine every module of durin is optimized and compiled with.
fn target_machine(
    target: &Target,
    triple: &inkwell::targets::TargetTriple,
    cpu: &str,
    features: &str,
    opt_level: u8,
) -> Option<TargetMachine> {
    target.create_target_machine(
        triple,
        cpu,
        features,
        level(opt_level),
        RelocMode::PIC,
        CodeModel::Default,
    )
}

/// The x86 CPUs LLVM 19 knows that have no 64-bit mode.
const CPUS_32_BIT: &[&str] = &[
    "athlon",
    "athlon-4",
    "athlon-mp",
    "athlon-tbird",
    "athlon-xp",
    "c3",
    "c3-2",
    "geode",
    "i386",
    "i486",
    "i586",
    "i686",
    "k6",
    "k6-2",
    "k6-3",
    "lakemont",
    "pentium",
    "pentium-m",
    "pentium-mmx",
    "pentium2",
    "pentium3",
    "pentium3m",
    "pentium4",
    "pentium4m",
    "pentium_4",
    "pentium_ii",
    "pentium_iii",
    "pentium_iii_no_xmm_regs",
    "pentium_m",
    "pentium_mmx",
    "pentium_pro",
    "pentiumpro",
    "prescott",
    "winchip-c6",
    "winchip2",
    "yonah",
];

/// Whether the x86 CPU `cpu` (one LLVM 19 knows) lacks the 64-bit mode; LLVM aborts when
/// asked for x86-64 code for one.
fn is_32_bit_only(cpu: &str) -> bool {
    CPUS_32_BIT.contains(&cpu)
}

/// Whether LLVM 19's x86 target knows `cpu` (LLVM itself accepts any name, warns on
/// standard error and ignores it). `native` means the host.
fn cpu_is_known(cpu: &str) -> bool {
    const CPUS: &[&str] = &[
        "alderlake",
        "amdfam10",
        "arrowlake",
        "arrowlake-s",
        "arrowlake_s",
        "athlon-fx",
        "athlon64",
        "athlon64-sse3",
        "atom",
        "atom_sse4_2",
        "atom_sse4_2_movbe",
        "barcelona",
        "bdver1",
        "bdver2",
        "bdver3",
        "bdver4",
        "bonnell",
        "broadwell",
        "btver1",
        "btver2",
        "cannonlake",
        "cascadelake",
        "clearwaterforest",
        "cooperlake",
        "core-avx-i",
        "core-avx2",
        "core2",
        "core_2_duo_sse4_1",
        "core_2_duo_ssse3",
        "core_2nd_gen_avx",
        "core_3rd_gen_avx",
        "core_4th_gen_avx",
        "core_4th_gen_avx_tsx",
        "core_5th_gen_avx",
        "core_5th_gen_avx_tsx",
        "core_aes_pclmulqdq",
        "core_i7_sse4_2",
        "corei7",
        "corei7-avx",
        "emeraldrapids",
        "generic",
        "goldmont",
        "goldmont-plus",
        "goldmont_plus",
        "gracemont",
        "grandridge",
        "graniterapids",
        "graniterapids-d",
        "graniterapids_d",
        "haswell",
        "icelake-client",
        "icelake-server",
        "icelake_client",
        "icelake_server",
        "ivybridge",
        "k8",
        "k8-sse3",
        "knl",
        "knm",
        "lunarlake",
        "meteorlake",
        "mic_avx512",
        "nehalem",
        "nocona",
        "opteron",
        "opteron-sse3",
        "pantherlake",
        "penryn",
        "pentium_4_sse3",
        "raptorlake",
        "rocketlake",
        "sandybridge",
        "sapphirerapids",
        "sierraforest",
        "silvermont",
        "skx",
        "skylake",
        "skylake-avx512",
        "skylake_avx512",
        "slm",
        "tigerlake",
        "tremont",
        "westmere",
        "x86-64",
        "x86-64-v2",
        "x86-64-v3",
        "x86-64-v4",
        "znver1",
        "znver2",
        "znver3",
        "znver4",
        "znver5",
    ];
    CPUS.contains(&cpu) || CPUS_32_BIT.contains(&cpu)
}

/// A compiled module with what made it.
pub struct Compiled<'ctx> {
    ctx: &'ctx Context,
    /// The LLVM module (its first part while `parts` holds the others).
    module: Module<'ctx>,
    /// The other parts of a module optimized in parts, until they are linked into
    /// `module` or compiled beside it.
    parts: Option<parallel::Parts>,
    machine: TargetMachine,
    spec: MachineSpec,
    /// Time of each step so far.
    pub timings: Timings,
}

/// What a thread needs to make its own target machine like the module's.
struct MachineSpec {
    triple: String,
    cpu: String,
    features: String,
    opt_level: u8,
}

impl MachineSpec {
    /// A target machine from the registry that [`machine`] initialized.
    fn make(&self) -> Result<TargetMachine> {
        let triple = inkwell::targets::TargetTriple::create(&self.triple);
        Target::from_triple(&triple)
            .ok()
            .and_then(|t| target_machine(&t, &triple, &self.cpu, &self.features, self.opt_level))
            .ok_or_else(|| internal("no target machine for a thread of LLVM"))
    }
}

/// Translates and optimizes `w` for the host (or `opts.cpu`).
pub fn compile<'ctx>(ctx: &'ctx Context, w: &World, opts: &Options) -> Result<Compiled<'ctx>> {
    let (machine, cpu, features) = machine(opts)?;
    let t = Instant::now();
    let target = lower::Target {
        cpu: &cpu,
        features: &features,
        bounds_checks: opts.bounds_checks.as_deref(),
        places: opts.places.as_deref(),
    };
    let module = lower::lower(ctx, w, "durin", &target)?;
    module.set_triple(&machine.get_triple());
    module.set_data_layout(&machine.get_target_data().get_data_layout());
    let lower_time = t.elapsed();
    let t = Instant::now();
    let pipeline = format!("default<O{}>", opts.opt_level.min(3));
    let spec = MachineSpec {
        triple: machine.get_triple().as_str().to_string_lossy().into_owned(),
        cpu,
        features,
        opt_level: opts.opt_level,
    };
    // `-O0`'s pipeline costs less than copying the module would.
    let min = match opts.opt_level {
        0 => usize::MAX,
        _ => opts.parallel_min_instructions,
    };
    // Functions that came out identical are merged first, so that the optimizer works on
    // one of each: splitting makes a function of a loop at every place that specialized
    // the same library code (vcycle's CUDA host code has 103 copies of `benchmark`'s sort
    // loop, 223 functions of which 110 differ). Equal constants go first: copies that
    // differ only in which of several equal messages they pass (each `bottom` reached has
    // its own) are identical then (vcycle for the CPU: 36 functions, 22 of them distinct,
    // 12 once its messages are merged).
    if opts.opt_level > 0 {
        parallel::run(&module, "constmerge,mergefunc", &machine)?;
    }
    let parts = parallel::optimize(&module, &pipeline, min, &machine, &|| spec.make())?;
    hints::mark_streaming_stores(ctx, &module);
    Ok(Compiled {
        ctx,
        module,
        timings: Timings {
            lower: lower_time,
            optimize: t.elapsed(),
            in_parts: parts.is_some(),
            codegen: Duration::ZERO,
            codegen_in_parts: false,
        },
        parts,
        machine,
        spec,
    })
}

impl<'ctx> Compiled<'ctx> {
    /// The whole module (its parts linked into one first, if it was optimized in parts).
    pub fn module(&mut self) -> Result<&Module<'ctx>> {
        if let Some(parts) = self.parts.take() {
            parallel::link(self.ctx, &self.module, parts, &self.machine)?;
        }
        Ok(&self.module)
    }

    /// Writes the module as `what` to `path`. A module optimized in parts has its object
    /// code made in parts too, on as many threads.
    pub fn emit(&mut self, what: Emit, path: &Path) -> Result<()> {
        let t = Instant::now();
        // Written to memory first: LLVM aborts the process on a failed write to a file.
        let bytes = match what {
            Emit::Object => self.object()?,
            Emit::LlvmIr => self.module()?.print_to_string().to_bytes().to_vec(),
            Emit::Assembly => {
                self.module()?;
                (self.machine)
                    .write_to_memory_buffer(&self.module, FileType::Assembly)
                    .map(|b| b.as_slice().to_vec())
                    .map_err(|e| internal(format!("LLVM's code generator failed: {e}")))?
            }
        };
        self.timings.codegen = t.elapsed();
        std::fs::write(path, bytes).map_err(|e| {
            Diagnostic::error_at(None, format!("cannot write {}: {e}", path.display()))
        })
    }

    /// The module's object code: made in parts on two threads and merged when it was
    /// optimized in parts (and the merge takes the parts' objects), else made whole.
    fn object(&mut self) -> Result<Vec<u8>> {
        if let Some(parts) = &self.parts {
            let made = parallel::codegen(&self.module, parts, &self.machine, &|| self.spec.make())?;
            if let Some(bytes) = made {
                self.timings.codegen_in_parts = true;
                return Ok(bytes);
            }
        }
        self.module()?;
        parallel::object(&self.module, &self.machine)
    }

    /// Generates machine code for the module in memory (as for an object file, in parts
    /// when it was optimized in parts) and loads it, resolving the runtime's functions from
    /// `symbols` and everything else (the C library) from the process; returns the address
    /// of `name`.
    pub fn jit(mut self, name: &str, symbols: &[(&str, usize)]) -> Result<Jit<'ctx>> {
        let t = Instant::now();
        let object = self.object()?;
        let engine = jit::Engine::load(&object, symbols)?;
        let address = engine.lookup(name)?;
        self.timings.codegen = t.elapsed();
        Ok(Jit {
            engine,
            address,
            timings: self.timings,
            _context: std::marker::PhantomData,
        })
    }
}

/// Code made by the JIT, alive as long as this value.
pub struct Jit<'ctx> {
    engine: jit::Engine,
    /// The address of the function asked for.
    pub address: usize,
    /// Time of each step.
    pub timings: Timings,
    _context: std::marker::PhantomData<&'ctx Context>,
}

impl Jit<'_> {
    /// The address of another function of the module (an exported one: `#[export]`
    /// functions keep their names).
    pub fn function(&self, name: &str) -> Result<usize> {
        self.engine.lookup(name)
    }
}
