//! The `durin` command line. It holds no compiler logic: each subcommand reads its input,
//! calls the library crates and reports their results and diagnostics.

mod gpu;
mod native;

use clap::{Parser, Subcommand};
use durin_ir::interp::{self, Limits};
use durin_ir::{text, verify, Def, World};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

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
    /// What the program's accelerator is: `cuda` (kernels run on an NVIDIA GPU), `cpu`
    /// (`accelerator(dev)` maps to the CPU; a program that launches CUDA kernels directly is
    /// an error) or `auto`: `cuda` when this machine has a CUDA driver (for `run`; `build`
    /// and `check` always take `cuda`), the CPU otherwise and for the interpreter.
    #[arg(long, value_enum, default_value_t = Target::Auto)]
    target: Target,
    #[command(flatten)]
    opt: OptArgs,
}

/// `--target`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Target {
    /// CUDA when this machine has a CUDA driver (for `run`), else the CPU.
    Auto,
    /// An NVIDIA GPU through CUDA.
    Cuda,
    /// The CPU.
    Cpu,
}

/// What `--target` means for one command: `None` for the GPU, or why the target is the CPU.
fn cpu_target(target: Target, running: bool, interp: bool) -> Option<&'static str> {
    match target {
        Target::Cuda => None,
        Target::Cpu => Some("the target is the CPU (`--target cpu`)"),
        Target::Auto if interp => Some("the interpreter runs no kernels (`--backend interp` maps `accelerator(dev)` to the CPU)"),
        Target::Auto if running && !durin_runtime::cuda::driver_present() => Some(durin_runtime::cuda::NO_DRIVER),
        Target::Auto => None,
    }
}

/// How to optimize the program (shared by `check`, `run` and `build`).
#[derive(clap::Args, Clone, Debug)]
struct OptArgs {
    /// Optimization level: 0 keeps the program as lowered (only removing the partial-
    /// evaluation markers and dead code), 1 inlines continuations used once, 2 and 3 run
    /// partial evaluation and cleanup twice. For native code (`run`, `build`) every level
    /// runs partial evaluation and ends with closure elimination, and it is also LLVM's
    /// level.
    #[arg(short = 'O', value_name = "LEVEL", value_parser = clap::value_parser!(u8).range(0..=3))]
    opt_level: Option<u8>,
    /// Run these passes instead of the level's pipeline (comma-separated, in order; see
    /// `--list-passes`).
    #[arg(long, value_name = "PASS,...")]
    passes: Option<String>,
    /// Print the IR after each run of this pass (or after every pass with `all`) to
    /// standard output.
    #[arg(long, value_name = "PASS|all")]
    print_after: Option<String>,
    /// Verify the IR before the first pass and after every pass.
    #[arg(long)]
    verify_each: bool,
    /// Print the time of each pass and the size of the IR after it to standard error.
    #[arg(long)]
    time_passes: bool,
    /// Partial-evaluation fuel: specializations allowed per run of `pe`.
    #[arg(long, value_name = "N", default_value_t = durin_passes::Config::default().fuel)]
    pe_fuel: u64,
    /// List the passes with what they do, and exit.
    #[arg(long)]
    list_passes: bool,
    /// After the passes, list to standard error what is left of a kind: `closures`
    /// (continuations that are neither top-level functions nor basic blocks, with where
    /// they come from and why).
    #[arg(long, value_name = "WHAT", value_parser = ["closures"])]
    report: Option<String>,
}

/// How `durin run` runs a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Backend {
    /// Native code through LLVM's JIT.
    Llvm,
    /// Native code through Cranelift's JIT (fast to compile).
    Cranelift,
    /// The IR interpreter.
    Interp,
}

#[derive(Subcommand)]
enum Command {
    /// Check a program: parse, resolve names, type-check and lower it to the IR.
    ///
    /// Several files form one program. Prints every error and warning; exits with 0 when
    /// the program is valid and 1 otherwise.
    Check {
        /// The source files (`.art`).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print the IR of the program to standard output.
        #[arg(long)]
        print_ir: bool,
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
        /// Maximum number of jumps the interpreter may make.
        #[arg(long, default_value_t = Limits::default().fuel)]
        fuel: u64,
        #[command(flatten)]
        compile: CompileArgs,
    },
    /// Compile a program ahead of time: an object file, assembly, LLVM IR, a C header or an
    /// executable.
    ///
    /// An object file links with `cc` and the runtime library: `cc prog.o
    /// libdurin_runtime.a -lpthread -ldl -lm -lgcc_s -lc -o prog` (`--emit exe` does that).
    /// Functions marked `#[export]` keep their names and the C calling convention;
    /// `--emit header` declares them for C.
    Build {
        /// The source files (`.art`).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The file to write.
        #[arg(short, long, value_name = "OUT")]
        output: PathBuf,
        /// What to write.
        #[arg(long, value_enum, default_value_t = native::BuildEmit::Obj)]
        emit: native::BuildEmit,
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
        /// Maximum number of jumps the interpreter may make.
        #[arg(long, default_value_t = Limits::default().fuel)]
        fuel: u64,
        /// Print the time taken by each step to standard error.
        #[arg(long)]
        time: bool,
        /// Run these passes (comma-separated, see `durin check --list-passes`) before
        /// printing or running, verifying the IR after each.
        #[arg(long, value_name = "LIST")]
        passes: Option<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check { compile, .. }
        | Command::Run { compile, .. }
        | Command::Build { compile, .. }
            if compile.opt.list_passes =>
        {
            for (name, what) in durin_passes::passes() {
                println!("{name:8} {what}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Check {
            files,
            print_ir,
            compile,
        } => check_command(&files, print_ir, &compile).map(|_| ExitCode::SUCCESS),
        Command::Run {
            files,
            args,
            backend,
            cpu,
            fuel,
            compile,
        } => run_command(&files, &args, backend, cpu, fuel, &compile),
        Command::Build {
            files,
            output,
            emit,
            cpu,
            gpu_arch,
            compile,
        } => build_command(&files, &output, emit, cpu, &gpu_arch, &compile)
            .map(|_| ExitCode::SUCCESS),
        Command::Ir {
            file,
            dot,
            run,
            entry,
            fuel,
            time,
            passes,
        } => ir_command(
            &file,
            dot,
            run,
            entry.as_deref(),
            fuel,
            time,
            passes.as_deref(),
        )
        .map(|_| ExitCode::SUCCESS),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

fn read_input(file: &Path) -> Result<String, String> {
    if file == Path::new("-") {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .map_err(|e| format!("error: cannot read standard input: {e}"))?;
        Ok(s)
    } else {
        std::fs::read_to_string(file)
            .map_err(|e| format!("error: cannot read `{}`: {e}", file.display()))
    }
}

/// Reads, checks and lowers a program; prints its diagnostics. Fails (with an empty
/// message, the diagnostics being printed) if there is an error.
fn compile_files(
    files: &[PathBuf],
    compile: &CompileArgs,
    cpu: Option<&str>,
) -> Result<durin_frontend::driver::Output, String> {
    let (deny_warnings, time) = (compile.deny_warnings, compile.time);
    let mut sources = Vec::new();
    for f in files {
        sources.push((f.display().to_string(), read_input(f)?));
    }
    let out = durin_frontend::driver::compile_for(&sources, true, cpu.is_none());
    eprint!("{}", out.render());
    if time {
        let t = out.timings;
        eprintln!("   parse: {:.3} ms", t.parse * 1e3);
        eprintln!("   check: {:.3} ms", t.check * 1e3);
        eprintln!("   lower: {:.3} ms", t.lower * 1e3);
    }
    if out.has_errors() {
        let n = out.diagnostics.iter().filter(|d| d.is_error()).count();
        return Err(format!(
            "error: could not compile the program ({n} error{})",
            if n == 1 { "" } else { "s" }
        ));
    }
    let warnings = out.diagnostics.iter().filter(|d| !d.is_error()).count();
    if deny_warnings && warnings > 0 {
        return Err(format!(
            "error: could not compile the program ({warnings} warning{} denied by --deny-warnings)",
            if warnings == 1 { "" } else { "s" }
        ));
    }
    if let Some(l) = &out.lowered {
        if let Err(errors) = verify::verify(&l.world) {
            let mut msg =
                String::from("internal compiler error: the lowered program does not verify:\n");
            for e in &errors {
                msg.push_str(&format!("  {e}\n"));
            }
            return Err(msg);
        }
    }
    Ok(out)
}

fn check_command(files: &[PathBuf], print_ir: bool, compile: &CompileArgs) -> Result<(), String> {
    let cpu = cpu_target(compile.target, false, false);
    let mut out = compile_files(files, compile, cpu)?;
    let opt = &compile.opt;
    // Checking is about validity: it optimizes only when asked to.
    optimize(&mut out, opt, 0, None)?;
    if print_ir {
        if let Some(l) = &out.lowered {
            print!("{}", text::print(&l.world));
        }
    }
    Ok(())
}

/// Runs the pipeline that `opt` asks for (the level `default_level` when none is given) on
/// the lowered program; errors are rendered against the sources.
///
/// For a `native` back end the pipeline ends with closure elimination (added after
/// `--passes` when the list does not end with it), and kernel launches are lowered just
/// before it: the result is then the program's CUDA module, if it launches kernels.
///
/// `native` is `None` for the interpreter and checking, and otherwise says whether the
/// target is the CPU (and why; see [`cpu_target`]).
fn optimize(
    out: &mut durin_frontend::driver::Output,
    opt: &OptArgs,
    default_level: u8,
    native: Option<Option<&'static str>>,
) -> Result<Option<gpu::DeviceModule>, String> {
    let cpu_reason = native.flatten();
    let native = native.is_some();
    let level = opt.opt_level.unwrap_or(default_level);
    let mut pipeline = match &opt.passes {
        Some(p) => {
            let mut p = durin_passes::Pipeline::parse(p).map_err(|e| format!("error: {e}"))?;
            if native {
                // Native code needs kernels outlined and closures eliminated, last.
                let mut names = p.names();
                if p.ends_first_order() {
                    names.pop();
                }
                if !names.contains(&"outline") {
                    names.push("outline");
                }
                names.push("closure-conv");
                p = durin_passes::Pipeline::parse(&names.join(","))
                    .map_err(|e| format!("error: {e}"))?;
            }
            p
        }
        None if native => durin_passes::Pipeline::for_native(level),
        None => durin_passes::Pipeline::for_level(level),
    };
    let module = std::rc::Rc::new(std::cell::RefCell::new(None));
    if native {
        pipeline.insert_before_last(Box::new(gpu::LowerLaunches {
            module: module.clone(),
            sources: out.sources.clone(),
            cpu_target: cpu_reason,
        }));
    }
    let print_after = match opt.print_after.as_deref() {
        None => durin_passes::PrintAfter::None,
        Some("all") => durin_passes::PrintAfter::All,
        Some(p) => {
            if !durin_passes::passes().any(|(n, _)| n == p) && p != "kernels" {
                return Err(format!(
                    "error: --print-after: unknown pass `{p}` (see --list-passes)"
                ));
            }
            durin_passes::PrintAfter::Pass(p.to_string())
        }
    };
    let run_opts = durin_passes::RunOptions {
        verify_each: opt.verify_each,
        print_after,
        config: durin_passes::Config { fuel: opt.pe_fuel },
    };
    let Some(lowered) = out.lowered.as_mut() else {
        return Ok(None);
    };
    // Passes may build a new world: find `main` again by its place among the externals.
    let main_at = lowered
        .main
        .and_then(|m| lowered.world.externals().position(|e| e == m));
    let result = pipeline.run(&mut lowered.world, &run_opts, |pass, text| {
        println!("// ----- after {pass} -----");
        print!("{text}");
    });
    lowered.main = main_at.and_then(|i| lowered.world.externals().nth(i));
    if result.is_ok() && opt.report.as_deref() == Some("closures") {
        report_closures(&lowered.world, &out.sources);
    }
    match result {
        Ok(times) => {
            if opt.time_passes {
                eprintln!("{:<10} {:>10} {:>10}", "pass", "ms", "defs");
                let mut total = 0.0;
                for t in &times {
                    let ms = t.time.as_secs_f64() * 1e3;
                    total += ms;
                    eprintln!("{:<10} {:>10.3} {:>10}", t.name, ms, t.defs);
                }
                eprintln!("{:<10} {:>10.3}", "total", total);
            }
            Ok(module.take())
        }
        // An error with a place is shown against the source, like the checker's.
        Err(e) => {
            use durin_frontend::diag::Diagnostic;
            use durin_frontend::source::Span;
            let Some(l) = e.loc else {
                return Err(format!("error: {e}"));
            };
            let mut d = Diagnostic::error(Span::from_loc(l), e.message);
            for (n, loc) in e.notes {
                d = match loc {
                    Some(l) => d.with_secondary(Span::from_loc(l), n),
                    None => d.with_note(n),
                };
            }
            eprint!("{}", durin_frontend::diag::render(&out.sources, &[d]));
            Err("error: could not compile the program (1 error)".into())
        }
    }
}

/// `--report closures`: one line per closure left, with its place, then a summary.
fn report_closures(w: &durin_ir::World, sources: &durin_frontend::source::SourceMap) {
    let form = durin_passes::cff::form(w);
    for c in &form.closures {
        let place = match c.loc {
            Some(l) => {
                let span = durin_frontend::source::Span::from_loc(l);
                let (line, col) = sources.line_column(span);
                format!("{}:{line}:{col}", sources.name(span.file))
            }
            None => "<no location>".to_string(),
        };
        let name = c.name.as_deref().unwrap_or("(unnamed)");
        eprintln!("closure: {place}: `{name}`: {}", c.why);
    }
    eprintln!(
        "closures: {} left ({} top-level functions, {} blocks)",
        form.closures.len(),
        form.functions,
        form.blocks
    );
}

fn run_command(
    files: &[PathBuf],
    args: &[String],
    backend: Option<Backend>,
    cpu: Option<String>,
    fuel: u64,
    compile: &CompileArgs,
) -> Result<ExitCode, String> {
    let (opt, time) = (&compile.opt, compile.time);
    let backend = backend.unwrap_or(if opt.opt_level == Some(0) {
        Backend::Cranelift
    } else {
        Backend::Llvm
    });
    if cpu.is_some() && backend != Backend::Llvm {
        return Err("error: `--cpu` applies to the LLVM back end (`--backend llvm`)".into());
    }
    let interp = backend == Backend::Interp;
    let cpu_reason = cpu_target(compile.target, true, interp);
    let mut out = compile_files(files, compile, cpu_reason)?;
    optimize(&mut out, opt, 2, (!interp).then_some(cpu_reason))?;
    let (Some(program), Some(lowered)) = (&out.program, &out.lowered) else {
        return Err("error: nothing to run".into());
    };
    let Some(main) = lowered.main else {
        return Err("error: the program has no `main` function\n  = note: declare `fn main() -> i32 { ... }`".into());
    };
    let info = program.main.map(|f| &program.fns[f as usize]);
    if let Some(info) = info {
        use durin_frontend::types::{TyKind, TyTable};
        let dom_ok = match program.tys.kind(info.dom) {
            TyKind::Tuple(ts) => {
                ts.is_empty()
                    || (ts.len() == 2
                        && ts[0] == TyTable::I32
                        && matches!(program.tys.kind(ts[1]), TyKind::Ptr { .. }))
            }
            _ => false,
        };
        if !dom_ok
            || !matches!(
                program.tys.kind(info.codom),
                TyKind::Prim(_) | TyKind::Tuple(_)
            )
        {
            return Err(format!(
                "error: `main` takes `{}` and returns `{}`\n  = note: expected `fn() -> i32` or `fn(i32, &[&[u8]]) -> i32`",
                program.ty_name(info.dom),
                program.ty_name(info.codom)
            ));
        }
    }
    if backend != Backend::Interp {
        let mut argv = vec![files[0].display().to_string()];
        argv.extend(args.iter().cloned());
        let opts = native::NativeOptions {
            opt_level: opt.opt_level.unwrap_or(2),
            cpu,
            time,
        };
        let jit = if backend == Backend::Llvm {
            native::JitBackend::Llvm
        } else {
            native::JitBackend::Cranelift
        };
        return native::jit_main(&lowered.world, main, &argv, jit, &opts, &out.sources);
    }
    let mut argv: Vec<Vec<u8>> = vec![files[0].display().to_string().into_bytes()];
    argv.extend(args.iter().map(|a| a.as_bytes().to_vec()));
    let limits = Limits {
        fuel,
        ..Limits::default()
    };
    let t = Instant::now();
    let mut stdout_bytes = Vec::new();
    let result = interp::run_with_argv(&lowered.world, main, &argv, limits, &mut stdout_bytes);
    {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(&stdout_bytes);
        let _ = stdout.flush();
    }
    if time {
        eprintln!("     run: {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
    }
    let results = result.map_err(|e| format!("error: run-time error in `main`: {}", e.message))?;
    let code = match results.first() {
        Some(interp::Value::Bits(b)) => *b as u8,
        _ => 0,
    };
    Ok(ExitCode::from(code))
}

fn build_command(
    files: &[PathBuf],
    output: &Path,
    emit: native::BuildEmit,
    cpu: Option<String>,
    gpu_arch: &str,
    compile: &CompileArgs,
) -> Result<(), String> {
    let (opt, time) = (&compile.opt, compile.time);
    let cpu_reason = cpu_target(compile.target, false, false);
    let mut out = compile_files(files, compile, cpu_reason)?;
    let module = optimize(&mut out, opt, 2, Some(cpu_reason))?;
    if matches!(emit, native::BuildEmit::Cuda | native::BuildEmit::Ptx) {
        let Some(module) = module else {
            return Err(
                "error: the program launches no GPU kernel: there is no CUDA code to write".into(),
            );
        };
        let bytes = if emit == native::BuildEmit::Ptx {
            let t = Instant::now();
            let ptx = durin_runtime::cuda::nvrtc::compile(&module.source, gpu_arch, false)
                .map_err(|e| format!("error: {e}"))?;
            if time {
                eprintln!("   nvrtc: {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
            }
            ptx
        } else {
            module.source.into_bytes()
        };
        return std::fs::write(output, bytes)
            .map_err(|e| format!("error: cannot write `{}`: {e}", output.display()));
    }
    let Some(lowered) = &out.lowered else {
        return Err("error: nothing to build".into());
    };
    if emit == native::BuildEmit::Exe && lowered.main.is_none() {
        return Err("error: an executable needs a `main` function\n  = note: declare `fn main() -> i32 { ... }`, or build an object file with `--emit obj`".into());
    }
    let opts = native::NativeOptions {
        opt_level: opt.opt_level.unwrap_or(2),
        cpu,
        time,
    };
    native::build(&lowered.world, emit, output, &opts, &out.sources)
}

fn ir_command(
    file: &Path,
    dot: bool,
    run: Option<Vec<String>>,
    entry: Option<&str>,
    fuel: u64,
    time: bool,
    passes: Option<&str>,
) -> Result<(), String> {
    let src = read_input(file)?;
    let step = |what: &str, t: Instant| {
        if time {
            eprintln!("{what:>8}: {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
        }
    };
    let t = Instant::now();
    let mut world = text::parse(&src).map_err(|e| format!("{}:{e}", file.display()))?;
    step("parse", t);
    let t = Instant::now();
    if let Err(errors) = verify::verify(&world) {
        let mut msg = String::new();
        for e in &errors {
            msg.push_str(&format!("{}: error: {e}\n", file.display()));
        }
        msg.push_str(&format!("{} verifier error(s)", errors.len()));
        return Err(msg);
    }
    step("verify", t);
    if let Some(list) = passes {
        let pipeline = durin_passes::Pipeline::parse(list).map_err(|e| format!("error: {e}"))?;
        let opts = durin_passes::RunOptions {
            verify_each: true,
            print_after: durin_passes::PrintAfter::None,
            config: durin_passes::Config::default(),
        };
        let t = Instant::now();
        pipeline
            .run(&mut world, &opts, |_, _| {})
            .map_err(|e| format!("{}: error: {e}", file.display()))?;
        step("passes", t);
    }
    if dot {
        print!("{}", durin_ir::dot::to_dot(&world));
        return Ok(());
    }
    let Some(args) = run else {
        let t = Instant::now();
        print!("{}", text::print(&world));
        step("print", t);
        return Ok(());
    };
    let entry = find_entry(&world, entry)?;
    let ptys = world
        .types()
        .cont_params(world.type_of(entry))
        .unwrap_or(&[])
        .to_vec();
    let value_tys: Vec<_> = ptys
        .iter()
        .take(ptys.len().saturating_sub(1))
        .copied()
        .filter(|&t| !world.types().is_mem(t))
        .collect();
    if value_tys.len() != args.len() {
        return Err(format!(
            "error: the entry takes {} argument(s), {} given",
            value_tys.len(),
            args.len()
        ));
    }
    let mut values = Vec::new();
    for (i, (&t, a)) in value_tys.iter().zip(&args).enumerate() {
        let v = interp::parse_value(&world, t, a)
            .map_err(|e| format!("error: argument {}: {e}", i + 1))?;
        values.push(v);
    }
    let t = Instant::now();
    let limits = Limits {
        fuel,
        ..Limits::default()
    };
    let mut out = Vec::new();
    let result = interp::run_main(&world, entry, &values, limits, &mut out);
    // What the program printed comes first, even if it then failed.
    {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(&out);
        let _ = stdout.flush();
    }
    let results = result.map_err(|e| format!("{}: error: {e}", file.display()))?;
    step("run", t);
    for (t, v) in results {
        println!("{}", interp::format_value(&world, t, &v));
    }
    Ok(())
}

fn find_entry(w: &World, name: Option<&str>) -> Result<Def, String> {
    let with_body: Vec<Def> = w.externals().filter(|&d| w.body(d).is_some()).collect();
    match name {
        Some(n) => {
            let n = n.trim_start_matches('@');
            w.continuations()
                .find(|&d| w.name(d) == Some(n))
                .ok_or_else(|| format!("error: no continuation named `@{n}`"))
        }
        None => match with_body.as_slice() {
            [one] => Ok(*one),
            [] => {
                Err("error: no external continuation with a body to run; mark one `extern`".into())
            }
            _ => Err("error: several external continuations; choose one with --entry".into()),
        },
    }
}
