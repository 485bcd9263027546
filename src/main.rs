//! The `durin` command line: it parses the arguments into `durin_driver::Options` and
//! calls a `durin_driver::Session`, which writes diagnostics and output; nothing else.

use clap::{Parser, Subcommand};
use durin_driver::{
    Backend, Checks, Emit, InterpArgs, IrAction, Options, Report, Session, Shm, Target,
};
use durin_passes::PrintAfter;
use std::path::PathBuf;
use std::process::ExitCode;
/// mimalloc, also for LLVM: compiling allocates many small objects (docs/src/decisions.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "durin",
    version,
    about = "A compiler for domain-specific libraries written as higher-order functional code",
    long_about = "durin compiles higher-order functional code into fast host and GPU code. \
                  `durin check` checks programs in its Artic-compatible language, `durin run` \
                  runs them (compiled to native code by LLVM's JIT, or in the IR interpreter), \
                  `durin build` writes object files, assembly, LLVM IR, C headers and \
                  executables, and `durin ir` reads, verifies, draws and runs the textual IR."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// What every command that compiles a program takes (`check`, `run`, `build`).
#[derive(clap::Args, Clone, Debug)]
struct CompileArgs {
    /// Treat warnings as errors (stop with exit code 1 when there is any).
    #[arg(long)]
    deny_warnings: bool,
    /// Print the time taken by each stage to standard error.
    #[arg(long)]
    time: bool,
    /// What the program's accelerator is: an NVIDIA GPU, the CPU, or the GPU's kernels run
    /// natively on the CPU's cores (`cuda-cpu`); `auto` picks `cuda` or `cpu` (below).
    #[arg(long, value_enum, default_value_t = Target::Auto)]
    target: Target,
    /// Optimization level: 0 keeps the program as lowered (only removing the partial-
    /// evaluation markers and dead code), 1 inlines continuations used once, 2 and 3 run
    /// partial evaluation and cleanup twice. For native code (`run`, `build`) every level
    /// runs partial evaluation and ends with kernel lowering and closure elimination, and
    /// it is also LLVM's level. Default: 0 for `check`, 2 otherwise.
    #[arg(short = 'O', value_name = "LEVEL", value_parser = clap::value_parser!(u8).range(0..=3))]
    opt_level: Option<u8>,
    /// Run these passes instead of the level's pipeline (comma-separated, in order; see
    /// `--list-passes`).
    #[arg(long, value_name = "PASS,...")]
    passes: Option<String>,
    /// Print the IR after each run of this pass (or after every pass with `all`) to
    /// standard output.
    #[arg(long, value_name = "PASS|all", value_parser = PrintAfter::parse)]
    print_after: Option<PrintAfter>,
    /// Verify the IR before the first pass and after every pass.
    #[arg(long)]
    verify_each: bool,
    /// Print the time of each pass and the size of the IR after it to standard error.
    #[arg(long)]
    time_passes: bool,
    /// Partial-evaluation fuel: specializations allowed per run of `pe`.
    #[arg(long, value_name = "N", default_value_t = Options::default().pe_fuel)]
    pe_fuel: u64,
    /// Run-time checks in native code: `bounds` checks every index into an array (against a
    /// fixed-size array's length; behind a pointer, against the allocation it points into)
    /// and stops with the source place; `none` checks nothing. The interpreter checks all.
    #[arg(long, value_enum, default_value_t = Checks::None)]
    checks: Checks,
    /// After the passes, list to standard error what is left of a kind, or what was
    /// decided: `closures` (continuations that are neither top-level functions nor basic
    /// blocks, with where they come from and why), `shm` (for each CUDA kernel, which
    /// buffers it only reads, with what a block reads of them, and which it writes or
    /// cannot be shown to only read, and why; for each read-only buffer, whether it was
    /// staged in shared memory and why, with the cost model's estimate), `launch` (each
    /// CUDA kernel's block shape and resources) or `fusion` (where the image library keeps
    /// each intermediate result of a graph of operators, and why).
    #[arg(long, value_name = "WHAT", value_enum)]
    report: Option<Report>,
    /// Shared-memory staging of CUDA kernels' read-only buffers (copied into shared memory
    /// at the kernel's entry: a tile per block for reads that are a box around each
    /// thread's pixel, kept in the buffer by a boundary handler or by the kernel's own
    /// conditions, the whole for a mask read at constant indices): `auto` stages those the cost model expects a gain from, `on` every one
    /// that can be staged, `off` none. The hints `shm_stage(p)` and `shm_keep(p)` in a
    /// kernel's code override this for one buffer; `--report shm` shows the decisions.
    #[arg(long, value_name = "WHEN", value_enum, default_value = "auto")]
    shm: Shm,
}

#[derive(Subcommand)]
enum Command {
    /// Check a program: parse, resolve names, type-check and lower it to the IR.
    ///
    /// Several files form one program. Prints every error and warning; exits with 0 when
    /// the program is valid and 1 otherwise.
    Check {
        /// The source files (`.art`).
        #[arg(required_unless_present = "list_passes")]
        files: Vec<PathBuf>,
        /// Print the IR of the program to standard output.
        #[arg(long)]
        print_ir: bool,
        /// List the passes with what they do, and exit.
        #[arg(long)]
        list_passes: bool,
        #[command(flatten)]
        compile: CompileArgs,
    },
    /// Run a program's `main`: compiled by LLVM's JIT (the default) or in the IR interpreter.
    ///
    /// `main` is `fn main() -> i32` or `fn main(argc: i32, argv: &[&[u8]]) -> i32`; the
    /// arguments after `--` are passed in `argv` (after the program name). The exit code is
    /// `main`'s result. For native code the pipeline ends with closure elimination, and
    /// `-O` is also LLVM's optimization level.
    Run {
        /// The source files (`.art`).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Arguments for the program.
        #[arg(last = true)]
        args: Vec<String>,
        /// How to run: `llvm` (native code through LLVM's JIT), `cranelift` (native code
        /// through Cranelift's JIT: compiles fast, runs slower) or `interp` (the IR
        /// interpreter, which checks every memory access and every effect's order).
        /// Default: `cranelift` at `-O0`, `llvm` otherwise.
        #[arg(long, value_enum)]
        backend: Option<Backend>,
        /// Target CPU for native code (default: the host's CPU and its features).
        #[arg(long, value_name = "NAME")]
        cpu: Option<String>,
        #[command(flatten)]
        interp: InterpArgs,
        #[command(flatten)]
        compile: CompileArgs,
    },
    /// Compile a program ahead of time: an object file, assembly, LLVM IR, a C header, an
    /// executable, or its kernels as CUDA C or PTX.
    ///
    /// An object file links with `cc` and the runtime library: `cc prog.o
    /// libdurin_runtime.a -lpthread -ldl -lm -lgcc_s -lc -o prog` (`--emit exe` does that).
    /// Functions marked `#[export]` keep their names and the C calling convention;
    /// `--emit header` declares them for C.
    Build {
        /// The source files (`.art`).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The file to write (`-`: standard output, for all but `--emit exe`).
        #[arg(short, long, value_name = "OUT")]
        output: PathBuf,
        /// What to write.
        #[arg(long, value_enum, default_value_t = Emit::Obj)]
        emit: Emit,
        /// Target CPU (default: the host's CPU and its features).
        #[arg(long, value_name = "NAME")]
        cpu: Option<String>,
        /// GPU architecture for `--emit ptx` (`sm_XY`, compute capability X.Y).
        #[arg(long, value_name = "sm_XY", default_value = "sm_90")]
        gpu_arch: String,
        #[command(flatten)]
        compile: CompileArgs,
    },
    /// Read a textual IR file, verify it, and print it (or draw or run it).
    ///
    /// Without options, prints the program in the canonical text form. Exits with 1 on a
    /// parse error, a verifier error or a run-time error, after printing it.
    Ir {
        /// The IR file (`.dir`), or `-` for standard input.
        file: PathBuf,
        /// Write the def graph as Graphviz `dot` to standard output instead.
        #[arg(long, conflicts_with = "run")]
        dot: bool,
        /// Run the entry in the interpreter with these arguments (one per non-`mem`
        /// parameter before the final return continuation) and print each result on a line.
        #[arg(long, num_args = 0.., allow_negative_numbers = true, value_name = "ARG")]
        run: Option<Vec<String>>,
        /// The continuation to run (default: the only external continuation with a body).
        #[arg(long, value_name = "NAME")]
        entry: Option<String>,
        #[command(flatten)]
        interp: InterpArgs,
        /// Print the time taken by each step to standard error.
        #[arg(long)]
        time: bool,
        /// Run these passes (comma-separated, see `durin check --list-passes`) before
        /// printing or running, verifying the IR after each.
        #[arg(long, value_name = "LIST")]
        passes: Option<String>,
    },
}

/// The options of a compiling command; `default_level` is the command's `-O`.
fn options(c: CompileArgs, default_level: u8) -> Options {
    let opt_level = c.opt_level.unwrap_or(default_level);
    Options {
        target: c.target,
        backend: Backend::default_for(opt_level),
        opt_level,
        passes: c.passes,
        print_after: c.print_after.unwrap_or(PrintAfter::None),
        verify_each: c.verify_each,
        time_passes: c.time_passes,
        pe_fuel: c.pe_fuel,
        checks: c.checks,
        report: c.report,
        shm: c.shm,
        deny_warnings: c.deny_warnings,
        time: c.time,
        ..Options::default()
    }
}

fn main() -> ExitCode {
    durin_driver::report_panics_as_internal_errors();
    let cli = Cli::parse();
    let (mut stdout, mut stderr) = (std::io::stdout(), std::io::stderr());
    macro_rules! session {
        ($o:expr) => {
            Session::new($o, &mut stdout, &mut stderr)
        };
    }
    // `run` keeps the process's exit handlers: the program it ran may have its own.
    let runs_program = matches!(cli.command, Command::Run { .. });
    let result = match cli.command {
        Command::Check {
            list_passes: true, ..
        } => {
            print!("{}", durin_driver::pass_list());
            Ok(0)
        }
        Command::Check {
            files,
            print_ir,
            compile,
            ..
        } => session!(options(compile, 0))
            .check(&files, print_ir)
            .map(|()| 0),
        Command::Run {
            files,
            args,
            backend,
            cpu,
            interp,
            compile,
        } => {
            let mut o = options(compile, 2);
            o.backend = backend.unwrap_or(o.backend);
            o.cpu = cpu;
            o.interp = interp.limits();
            session!(o).run(&files, &args)
        }
        Command::Build {
            files,
            output,
            emit,
            cpu,
            gpu_arch,
            compile,
        } => {
            let mut o = options(compile, 2);
            o.cpu = cpu;
            o.gpu_arch = gpu_arch;
            session!(o).build(&files, emit, &output).map(|()| 0)
        }
        Command::Ir {
            file,
            dot,
            run,
            entry,
            interp,
            time,
            passes,
        } => {
            let o = Options {
                interp: interp.limits(),
                time,
                ..Options::default()
            };
            let action = match (dot, run) {
                (true, _) => IrAction::Dot,
                (false, Some(args)) => IrAction::Run { args, entry },
                (false, None) => IrAction::Print,
            };
            session!(o)
                .ir(&file, passes.as_deref(), &action)
                .map(|()| 0)
        }
    };
    durin_driver::exit(result.unwrap_or(1), runs_program)
}
