//! The compile session: sources in, diagnostics and artifacts out.

use crate::{cuda, error, native, report, Backend, Emit, Options, Report, Target};
use durin_diag::{render, Diagnostic, SourceMap, Span};
use durin_frontend::check::Program;
use durin_ir::interp;
use durin_ir::{Def, World};
use durin_passes::{PassContext, Pipeline, RunOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A step failed; its diagnostics have been written to the session's error sink.
#[derive(Debug)]
pub struct Failed;

/// What a session may write while it works.
type Sink<'io> = &'io mut dyn Write;

/// A program after the frontend and the passes.
pub struct Compiled {
    /// The IR after the pipeline.
    pub world: World,
    /// `main`, if the program has one (followed through the passes).
    pub main: Option<Def>,
    /// The CUDA C of the program's kernels, when it launches any (native pipelines).
    pub device: Option<String>,
}

/// What a compilation is for: it picks the pipeline and what the target means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// Checking: the level's pipeline, no native tail.
    Check,
    /// Running `main` with the options' back end.
    Run,
    /// Writing a file ahead of time.
    Build,
}

/// One compilation: its options, its sources once read, and where its messages go.
pub struct Session<'io> {
    options: Options,
    sources: SourceMap,
    out: Sink<'io>,
    err: Sink<'io>,
    /// When the session began (`--time` ends `check` and `build` with the time since).
    started: Instant,
}

impl<'io> Session<'io> {
    /// A session with `options` that prints IR and interpreted output to `out` and
    /// diagnostics, timings and reports to `err`.
    pub fn new(options: Options, out: Sink<'io>, err: Sink<'io>) -> Session<'io> {
        Session {
            options,
            sources: SourceMap::new(),
            out,
            err,
            started: Instant::now(),
        }
    }

    /// With `--time`, the time since the session began and the process's peak memory, as
    /// the last line of a compile (for `run`, the program's own memory would count too).
    fn say_total(&mut self) {
        if self.options.time {
            let peak = crate::peak_memory_bytes()
                .map_or_else(String::new, |b| format!(", peak memory {} MB", b >> 20));
            let ms = self.started.elapsed().as_secs_f64() * 1e3;
            self.say(format_args!("   total: {ms:.3} ms{peak}"));
        }
    }

    /// The sources read so far (for rendering places).
    pub fn sources(&self) -> &SourceMap {
        &self.sources
    }

    /// The options.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Writes `bytes` to the output sink.
    pub(crate) fn write_out(&mut self, bytes: &[u8]) {
        let _ = self.out.write_all(bytes);
        let _ = self.out.flush();
    }

    /// Writes `line` and a newline to the error sink.
    pub(crate) fn write_err(&mut self, line: &str) {
        let _ = writeln!(self.err, "{line}");
    }

    /// Writes `d` and fails: a diagnostic with a place is rendered against the sources and
    /// followed by a summary line, one without a place is its message and notes.
    fn fail(&mut self, d: Diagnostic) -> Failed {
        let placed = d.primary().is_some();
        let _ = self.err.write_all(render(&self.sources, &[d]).as_bytes());
        if placed {
            let _ = writeln!(self.err, "error: could not compile the program (1 error)");
        }
        Failed
    }

    fn say(&mut self, line: std::fmt::Arguments<'_>) {
        let _ = self.err.write_fmt(line);
        let _ = self.err.write_all(b"\n");
    }

    /// Why the accelerator is the CPU for `purpose`, or `None` for CUDA.
    fn cpu_reason(&self, purpose: Purpose) -> Option<&'static str> {
        let interp = purpose == Purpose::Run && self.options.backend == Backend::Interp;
        match self.options.target {
            Target::Cuda | Target::CudaCpu => None,
            Target::Cpu => Some("the target is the CPU (`--target cpu`)"),
            Target::Auto if interp => Some("`--backend interp` maps `accelerator(dev)` to the CPU unless the target is CUDA (`--target cuda` runs the kernels in the interpreter)"),
            Target::Auto if purpose == Purpose::Run && !durin_runtime::cuda::driver_present() => {
                Some(durin_runtime::cuda::NO_DRIVER)
            }
            Target::Auto => None,
        }
    }

    /// Checks the program made of `files`: the frontend, then the pipeline the options ask
    /// for (none at level 0 unless `passes` names one). With `print_ir`, writes the IR.
    pub fn check(&mut self, files: &[PathBuf], print_ir: bool) -> Result<(), Failed> {
        let c = self.compile(files, Purpose::Check);
        if let (Ok(c), true) = (&c, print_ir) {
            let _ = self
                .out
                .write_all(durin_ir::text::print(&c.world).as_bytes());
        }
        self.say_total();
        c.map(|_| ())
    }

    /// Runs `main` of the program made of `files` with `args` after the program's name;
    /// returns the low 8 bits of its result (its exit code).
    pub fn run(&mut self, files: &[PathBuf], args: &[String]) -> Result<u8, Failed> {
        if self.options.cpu.is_some() && self.options.backend != Backend::Llvm {
            return Err(self.fail(error(
                "`--cpu` applies to the LLVM back end (`--backend llvm`)",
            )));
        }
        let c = self.compile(files, Purpose::Run)?;
        let Some(main) = c.main else {
            return Err(self.fail(
                error("the program has no `main` function")
                    .with_note("declare `fn main() -> i32 { ... }`"),
            ));
        };
        let mut argv = vec![files[0].display().to_string()];
        argv.extend(args.iter().cloned());
        let _ = self.out.flush();
        let _ = self.err.flush();
        match self.options.backend {
            Backend::Interp => self.interpret(&c.world, main, &argv),
            jit => {
                let r = native::jit_main(
                    &c.world,
                    main,
                    &argv,
                    jit,
                    &self.options,
                    &self.sources,
                    self.err,
                );
                r.map_err(|d| self.fail(d))
            }
        }
    }

    fn interpret(&mut self, w: &World, main: Def, argv: &[String]) -> Result<u8, Failed> {
        let argv: Vec<Vec<u8>> = argv.iter().map(|a| a.as_bytes().to_vec()).collect();
        let mut limits = self.options.interp;
        limits.library_files = (0..64)
            .filter_map(|i| self.sources.file_id(i))
            .filter(|&f| self.sources.is_library(f))
            .fold(0, |bits, f| bits | 1 << f.index());
        let t = Instant::now();
        let mut printed = Vec::new();
        let (result, jumps) = interp::run_with_argv_counted(w, main, &argv, limits, &mut printed);
        let _ = self.out.write_all(&printed);
        let _ = self.out.flush();
        if self.options.time {
            let secs = t.elapsed().as_secs_f64();
            self.say(format_args!(
                "     run: {:.3} ms ({jumps} jumps, {:.1} million per second)",
                secs * 1e3,
                jumps as f64 / secs.max(1e-9) / 1e6
            ));
        }
        let results = match result {
            Ok(results) => results,
            Err(e) => {
                // As native code says it: the place, when the IR has one.
                let mut text = match e.loc {
                    Some(_) => format!(
                        "run-time error: {}: {}",
                        self.sources.place_in_program(e.loc, &e.expanded_from),
                        e.message
                    ),
                    None => format!("run-time error: {}", e.message),
                };
                text.push_str(&self.ran_last(e.loc, &e.expanded_from, e.program_place));
                if let Some(r) = &e.related {
                    let place = self.sources.place_in_program(Some(r.at), &r.expanded_from);
                    text.push_str(&format!("\n  {}: {place}", r.what));
                    text.push_str(&self.ran_last(Some(r.at), &r.expanded_from, r.program_place));
                }
                self.fail(error(text));
                return Ok(crate::EXIT_RUNTIME_ERROR);
            }
        };
        Ok(match results.first() {
            Some(interp::Value::Bits(b)) => *b as u8,
            _ => 0,
        })
    }

    /// For a place in library code that no call of the program was specialized into, a
    /// line naming the program's code that had run last (`ran_last`); else nothing.
    fn ran_last(
        &self,
        loc: Option<Span>,
        expanded_from: &[Span],
        ran_last: Option<Span>,
    ) -> String {
        let in_library = loc.is_none_or(|l| self.sources.is_library(l.file));
        match ran_last {
            Some(at) if in_library && self.sources.program_call(loc, expanded_from).is_none() => {
                format!(
                    "\n  the program's code that ran last: {}",
                    self.sources.place(Some(at))
                )
            }
            _ => String::new(),
        }
    }

    /// Compiles the program made of `files` and writes `emit` to `output`.
    pub fn build(&mut self, files: &[PathBuf], emit: Emit, output: &Path) -> Result<(), Failed> {
        let built = self.build_file(files, emit, output);
        self.say_total();
        built
    }

    /// `build` without the total time.
    fn build_file(&mut self, files: &[PathBuf], emit: Emit, output: &Path) -> Result<(), Failed> {
        if output == Path::new("-") {
            return self.build_to_stdout(files, emit);
        }
        if let Some(f) = files.iter().find(|f| same_file(f, output)) {
            return Err(self.fail(error(format!(
                "the output `{}` is the source file `{}`: writing it would destroy the source",
                output.display(),
                f.display()
            ))));
        }
        let c = self.compile(files, Purpose::Build)?;
        let bytes = match emit {
            Emit::Cuda | Emit::Ptx => {
                let Some(source) = c.device else {
                    return Err(self.fail(error(
                        "the program launches no GPU kernel: there is no CUDA code to write",
                    )));
                };
                if emit == Emit::Cuda {
                    source.into_bytes()
                } else {
                    let t = Instant::now();
                    let ptx =
                        cuda::ptx(&source, &self.options.gpu_arch).map_err(|d| self.fail(d))?;
                    if self.options.time {
                        self.say(format_args!(
                            "   nvrtc: {:.3} ms",
                            t.elapsed().as_secs_f64() * 1e3
                        ));
                    }
                    ptx
                }
            }
            Emit::Exe if c.main.is_none() => {
                return Err(self.fail(
                    error("an executable needs a `main` function").with_note(
                        "declare `fn main() -> i32 { ... }`, or build an object file with `--emit obj`",
                    ),
                ));
            }
            _ => {
                let r = native::build(
                    &c.world,
                    emit,
                    output,
                    &self.options,
                    &self.sources,
                    self.err,
                );
                return r.map_err(|d| self.fail(d));
            }
        };
        std::fs::write(output, bytes)
            .map_err(|e| self.fail(error(format!("cannot write `{}`: {e}", output.display()))))
    }

    /// `build` with `-o -`: the artifact on standard output. LLVM writes files, so a host
    /// artifact goes through a file of the first source's name (a header's guard comes
    /// from it) in a temporary folder of its own, then to standard output. An executable is
    /// not written there.
    fn build_to_stdout(&mut self, files: &[PathBuf], emit: Emit) -> Result<(), Failed> {
        if emit == Emit::Exe {
            return Err(self.fail(error(
                "an executable is not written to standard output: name its file with `-o FILE`",
            )));
        }
        let stem = (files.first())
            .and_then(|f| f.file_stem())
            .map_or_else(|| "out".into(), |s| s.to_string_lossy().into_owned());
        let ext = match emit {
            Emit::Header => "h",
            Emit::Asm => "s",
            Emit::LlvmIr => "ll",
            Emit::Cuda => "cu",
            Emit::Ptx => "ptx",
            _ => "o",
        };
        let dir = std::env::temp_dir().join(format!("durin-stdout-{}", std::process::id()));
        let fail = |e: std::io::Error, what: &str| error(format!("cannot {what}: {e}"));
        std::fs::create_dir_all(&dir)
            .map_err(|e| self.fail(fail(e, &format!("create `{}`", dir.display()))))?;
        let file = dir.join(format!("{stem}.{ext}"));
        let built = self.build_file(files, emit, &file);
        let bytes = built.and_then(|()| {
            std::fs::read(&file)
                .map_err(|e| self.fail(fail(e, &format!("read `{}`", file.display()))))
        });
        let _ = std::fs::remove_dir_all(&dir);
        let mut out = std::io::stdout().lock();
        out.write_all(&bytes?)
            .and_then(|()| out.flush())
            .map_err(|e| self.fail(fail(e, "write to standard output")))
    }

    /// The frontend, `main`'s shape, and the pipeline for `purpose`, on the program made
    /// of `files`.
    fn compile(&mut self, files: &[PathBuf], purpose: Purpose) -> Result<Compiled, Failed> {
        if let Some(f) = files
            .iter()
            .find(|f| f.extension().is_some_and(|e| e == "dir"))
        {
            let name = f.display();
            return Err(self.fail(error(format!(
                "`{name}` is IR text, not a source program: run it with `durin ir --run {name}`, print or transform it with `durin ir {name}`"
            ))));
        }
        let mut texts = Vec::new();
        for f in files {
            let text = read_source(f).map_err(|d| self.fail(d))?;
            texts.push((f.display().to_string(), text));
        }
        self.compile_sources(texts, purpose)
    }

    /// Compiles a program given in memory, each source a name (for messages) and a text,
    /// for `purpose`: the frontend, `main`'s shape, and the pipeline the options and the
    /// purpose pick, as `check`, `run` and `build` do before their last step. Diagnostics,
    /// times and reports go to the session's sinks; the result holds the IR, `main` and
    /// the kernels' CUDA C (native purposes).
    pub fn compile_sources(
        &mut self,
        texts: Vec<(String, String)>,
        purpose: Purpose,
    ) -> Result<Compiled, Failed> {
        let cpu_reason = self.cpu_reason(purpose);
        let (program, world, main) = self.frontend(texts, cpu_reason.is_none())?;
        // An exported `main` may have any type when checked (Artic's libraries export one);
        // running it or linking it into a program needs the shape a caller can use.
        if let (Some(p), Some(_)) = (&program, main) {
            let exported = p.main.is_some_and(|f| {
                matches!(
                    p.fns[f as usize].linkage,
                    durin_frontend::check::Linkage::Export(_)
                )
            });
            if purpose != Purpose::Check || !exported {
                self.check_main(p)?;
            }
        }
        durin_frontend::compile::drop_in_background(program);
        self.optimize(world, main, purpose, cpu_reason)
    }

    /// Reads and checks the program, lowers it, and writes its diagnostics and times.
    fn frontend(
        &mut self,
        texts: Vec<(String, String)>,
        gpu: bool,
    ) -> Result<(Option<Program>, World, Option<Def>), Failed> {
        let mut out = durin_frontend::compile::compile_for(&texts, true, gpu);
        let _ = self.err.write_all(out.render().as_bytes());
        self.sources = std::mem::take(&mut out.sources);
        if self.options.time {
            let t = out.timings;
            self.say(format_args!("   parse: {:.3} ms", t.parse * 1e3));
            self.say(format_args!("   check: {:.3} ms", t.check * 1e3));
            self.say(format_args!("   lower: {:.3} ms", t.lower * 1e3));
        }
        let errors = out.diagnostics.iter().filter(|d| d.is_error()).count();
        let warnings = out.diagnostics.len() - errors;
        if errors > 0 || out.lowered.is_none() {
            let n = errors.max(1);
            let s = if n == 1 { "" } else { "s" };
            self.say(format_args!(
                "error: could not compile the program ({n} error{s})"
            ));
            return Err(Failed);
        }
        if self.options.deny_warnings && warnings > 0 {
            let s = if warnings == 1 { "" } else { "s" };
            self.say(format_args!(
                "error: could not compile the program ({warnings} warning{s} denied by --deny-warnings)"
            ));
            return Err(Failed);
        }
        let lowered = out.lowered.expect("checked above");
        if let Err(errors) = durin_ir::verify::verify(&lowered.world) {
            let mut d = error("internal compiler error: the lowered program does not verify");
            for e in &errors {
                d = d.with_note(e.to_string());
            }
            return Err(self.fail(d));
        }
        Ok((out.program, lowered.world, lowered.main))
    }

    /// `main` is `fn() -> R` or `fn(i32, &[&[u8]]) -> R` where `R` is an integer, `bool`
    /// or `()`: what every way of running a program can call. An error at `main` otherwise.
    fn check_main(&mut self, p: &Program) -> Result<(), Failed> {
        use durin_frontend::types::{TyKind, TyTable};
        let Some(info) = p.main.map(|f| &p.fns[f as usize]) else {
            return Ok(());
        };
        let dom_ok = match p.tys.kind(info.dom) {
            TyKind::Tuple(ts) => {
                ts.is_empty()
                    || (ts.len() == 2
                        && ts[0] == TyTable::I32
                        && matches!(p.tys.kind(ts[1]), TyKind::Ptr { .. }))
            }
            _ => false,
        };
        let c = info.codom;
        let codom_ok = c == TyTable::UNIT || c == TyTable::BOOL || p.tys.is_int(c);
        if dom_ok && codom_ok {
            return Ok(());
        }
        let d = Diagnostic::error(
            info.span,
            format!(
                "`main` takes `{}` and returns `{}`",
                p.ty_name(info.dom),
                p.ty_name(info.codom)
            ),
        )
        .with_note("expected `fn() -> i32` or `fn(i32, &[&[u8]]) -> i32` (any integer, `bool` or `()` as the result, which is the exit code)");
        Err(self.fail(d))
    }

    /// Runs the pipeline for `purpose` on `w`.
    fn optimize(
        &mut self,
        mut w: World,
        main: Option<Def>,
        purpose: Purpose,
        cpu_reason: Option<&'static str>,
    ) -> Result<Compiled, Failed> {
        let o = self.options.clone();
        let native =
            purpose == Purpose::Build || (purpose == Purpose::Run && o.backend != Backend::Interp);
        let pipeline = pipeline_for(&o, purpose, native, cpu_reason.is_some())
            .map_err(|e| self.fail(error(format!("--passes: {e}"))))?;
        let run_opts = RunOptions {
            verify_each: o.verify_each,
            print_after: o.print_after.clone(),
        };
        let mut codegen = cuda::Codegen::default();
        let target = match cpu_reason {
            Some(why) => durin_passes::Target::Cpu { why: why.into() },
            None if native && o.target == Target::CudaCpu => durin_passes::Target::CpuBlocks,
            None => durin_passes::Target::Cuda(&mut codegen),
        };
        // The passes borrow the sources while the session's sinks are in use.
        let sources = std::mem::take(&mut self.sources);
        let mut cx = PassContext::new(o.pass_config())
            .with_target(target)
            .with_sources(&sources);
        if matches!(o.report, Some(Report::Shm | Report::Launch)) {
            cx = cx.with_kernel_report();
        }
        let out = &mut *self.out;
        let result = pipeline.run_in(&mut w, &run_opts, &mut cx, |pass, text| {
            let _ = writeln!(out, "// ----- after {pass} -----");
            let _ = out.write_all(text.as_bytes());
        });
        let main = main.and_then(|m| cx.follow(m));
        let kernel_buffers = cx.take_kernel_buffers();
        let mut infos = cx.take_pe_info();
        let fusion = cx.take_pe_reports();
        drop(cx);
        self.sources = sources;
        // `pe_info(message, value)`: what partial evaluation knew, in the program's order.
        infos.sort_by_key(|(at, _)| at.map(|s| (s.file, s.start)));
        for (at, text) in infos {
            let place = self.sources.place(at);
            self.say(format_args!("pe_info: {place}: {text}"));
        }
        let times = result.map_err(|d| self.fail(d))?;
        if self.options.time {
            let total: f64 = times.iter().map(|t| t.time.as_secs_f64()).sum();
            self.say(format_args!(
                "  passes: {:.3} ms ({} passes; `--time-passes` lists them)",
                total * 1e3,
                times.len()
            ));
        }
        let lines = match self.options.report {
            Some(Report::Closures) => report::closures(&w, &self.sources),
            Some(Report::Fusion) => report::fusion(fusion, &self.sources),
            Some(Report::Shm) => report::shm(&kernel_buffers, &self.sources),
            Some(Report::Launch) => report::launch(
                &kernel_buffers,
                codegen.module.as_deref(),
                &self.options.gpu_arch,
                &self.sources,
            ),
            _ => Vec::new(),
        };
        let times = if self.options.time_passes {
            report::pass_times(&times)
        } else {
            Vec::new()
        };
        for line in lines.iter().chain(&times) {
            self.say(format_args!("{line}"));
        }
        Ok(Compiled {
            world: w,
            main,
            device: codegen.module,
        })
    }
}

/// The pipeline the options pick for `purpose`: `--passes` or the level's, made `native`
/// for a native back end, with shared-memory staging for CUDA kernels (`cpu`: the
/// accelerator is the CPU) and, for the interpreter under a CPU target, the check that no
/// CUDA launch is left.
fn pipeline_for(
    o: &Options,
    purpose: Purpose,
    native: bool,
    cpu: bool,
) -> Result<Pipeline, String> {
    let pipeline = match (&o.passes, native) {
        (Some(list), false) => Pipeline::parse(list)?,
        (Some(list), true) => Pipeline::parse(list)?.native(),
        (None, false) => Pipeline::for_level(o.opt_level),
        (None, true) => Pipeline::for_native(o.opt_level),
    };
    // Staging is for CUDA kernels, in the host world (the interpreter runs them too);
    // under `--shm off` the pass still reads the kernels' hints. It needs outlined
    // kernels, which need partial evaluation to know each launch's kernel (`check` at
    // level 0 has none: a function that takes an accelerator stays generic there).
    let specializes = pipeline.names().contains(&"pe");
    let pipeline = match cpu {
        false if specializes => pipeline.with_staging(),
        _ => pipeline,
    };
    // The interpreter runs CUDA kernels for the CUDA target only; for the CPU, a CUDA
    // launch is the compile-time error it is for native code.
    Ok(match (native, purpose, cpu) {
        (false, Purpose::Run, true) => pipeline.with_launch_check(),
        _ => pipeline,
    })
}

/// The text of a source file (`-`: standard input). Reading stops with an error past
/// 1 GiB, and text that is not UTF-8 is an error naming the line and the byte.
pub(crate) fn read_source(file: &Path) -> Result<String, Diagnostic> {
    use std::io::Read;
    const LIMIT: u64 = 1 << 30;
    let name = if file == Path::new("-") {
        "standard input".to_string()
    } else {
        format!("`{}`", file.display())
    };
    let mut bytes = Vec::new();
    let read = if file == Path::new("-") {
        std::io::stdin().take(LIMIT + 1).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(file).and_then(|f| f.take(LIMIT + 1).read_to_end(&mut bytes))
    };
    read.map_err(|e| error(format!("cannot read {name}: {e}")))?;
    if bytes.len() as u64 > LIMIT {
        return Err(error(format!("cannot read {name}: larger than 1 GiB")));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        let col = at
            - bytes[..at]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1)
            + 1;
        error(format!(
            "cannot read {name}: not UTF-8 text (line {line}, byte {col} of the line)"
        ))
    })
}

/// Whether `a` and `b` name the same existing file.
fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}
