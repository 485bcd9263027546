//! The pass manager: passes as values, pipelines as data, and what one run of a pipeline
//! carries besides the world ([`PassContext`]).

use crate::buffers::KernelBuffers;
use crate::kernels::Target;
use crate::stage::StageMode;
use crate::{cleanup, closure, compact, kernels, mem2reg, outline, pe, split, stage};
use durin_diag::{Diagnostic, SourceMap};
use durin_ir::{Def, World};
use rustc_hash::FxHashMap;
use std::time::{Duration, Instant};

/// Settings passes read.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Partial-evaluation fuel: specializations allowed per run of `pe`.
    pub fuel: u64,
    /// Which buffers the `stage` pass stages.
    pub shm: StageMode,
    /// The `split` pass splits loops off functions with at least this many blocks (1,000
    /// by default; tests lower it to split small programs).
    pub split_min_blocks: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            fuel: pe::Options::default().fuel,
            shm: StageMode::default(),
            split_min_blocks: split::MIN_FUNCTION_BLOCKS,
        }
    }
}

/// Where the defs of a world went when a pass built a new world from it (`dce`,
/// `closure-conv`): the new def of each old one that survived. Callers follow their
/// handles (`main`, the exports) through it instead of finding them again.
#[derive(Clone, Debug, Default)]
pub struct Remap {
    map: FxHashMap<Def, Def>,
}

impl Remap {
    pub(crate) fn new(map: FxHashMap<Def, Def>) -> Remap {
        Remap { map }
    }

    /// The new def of `old`, if it survived.
    pub fn get(&self, old: Def) -> Option<Def> {
        self.map.get(&old).copied()
    }

    /// Where `self`'s old defs went after `next` ran too.
    fn then(&self, next: &Remap) -> Remap {
        let map = self
            .map
            .iter()
            .filter_map(|(&old, &mid)| next.get(mid).map(|new| (old, new)))
            .collect();
        Remap { map }
    }
}

/// What one run of passes carries besides the world: settings, the target for kernel
/// launches, the sources (to name places in messages), and where the defs of the input
/// went.
pub struct PassContext<'a> {
    /// Settings for the passes.
    pub config: Config,
    target: Target<'a>,
    pub(crate) sources: Option<&'a SourceMap>,
    moved: Option<Remap>,
    /// What read-only tracing found in each kernel the `kernels` pass compiled, when the
    /// caller asked ([`PassContext::with_kernel_report`]).
    pub(crate) kernel_buffers: Option<Vec<KernelBuffers>>,
    /// What the `stage` pass found and decided in each kernel it saw, for the report
    /// (the kernels pass takes them over).
    pub(crate) staged: Option<Vec<KernelBuffers>>,
    /// The `pe_info` calls found (place and text), for the driver to print.
    pub(crate) pe_info: Vec<(Option<durin_diag::Span>, String)>,
}

impl<'a> PassContext<'a> {
    /// A context with `config`, no sources, and a CPU target (a kernel launch left for the
    /// `kernels` pass is an error).
    pub fn new(config: Config) -> PassContext<'a> {
        PassContext {
            config,
            target: Target::default(),
            sources: None,
            moved: None,
            kernel_buffers: None,
            staged: None,
            pe_info: Vec::new(),
        }
    }

    /// The `pe_info(message, value)` calls the pipeline found, with their places, in the
    /// order of the program's continuations ([`crate::pe_info`]).
    pub fn take_pe_info(&mut self) -> Vec<(Option<durin_diag::Span>, String)> {
        std::mem::take(&mut self.pe_info)
    }

    /// The same context asking the `kernels` pass for each kernel's buffers (read-only
    /// tracing and footprints, for `--report shm`), which it otherwise does not compute.
    pub fn with_kernel_report(mut self) -> PassContext<'a> {
        self.kernel_buffers = Some(Vec::new());
        self.staged = Some(Vec::new());
        self
    }

    /// The buffers of each kernel compiled so far (with [`PassContext::with_kernel_report`]).
    /// Kernels that no `kernels` pass compiled (the interpreter runs them) come as the
    /// `stage` pass saw them.
    pub fn take_kernel_buffers(&mut self) -> Vec<KernelBuffers> {
        let mut out: Vec<KernelBuffers> = (self.kernel_buffers.as_mut())
            .map(std::mem::take)
            .unwrap_or_default();
        out.extend(self.staged.as_mut().map(std::mem::take).unwrap_or_default());
        out
    }

    /// The same context with kernel launches going to `target`.
    pub fn with_target(mut self, target: Target<'a>) -> PassContext<'a> {
        self.target = target;
        self
    }

    /// The same context with the program's sources, which messages that name a place
    /// (such as a kernel's launch place for run-time errors) are made from.
    pub fn with_sources(mut self, sources: &'a SourceMap) -> PassContext<'a> {
        self.sources = Some(sources);
        self
    }

    /// What `d`, a def of the world the passes started from, is now; `None` when a pass
    /// removed it.
    pub fn follow(&self, d: Def) -> Option<Def> {
        match &self.moved {
            None => Some(d),
            Some(m) => m.get(d),
        }
    }

    /// Records that a pass replaced the world by a new one, whose defs `remap` gives.
    pub fn rebuilt(&mut self, remap: Remap) {
        self.moved = Some(match &self.moved {
            None => remap,
            Some(m) => m.then(&remap),
        });
    }

    pub(crate) fn target(&mut self) -> &mut Target<'a> {
        &mut self.target
    }

    pub(crate) fn sources(&self) -> Option<&'a SourceMap> {
        self.sources
    }
}

/// A transformation of a world.
pub trait Pass {
    /// The name pipelines use.
    fn name(&self) -> &'static str;
    /// Transforms `w`. A pass that replaces the world by a new one tells `cx`
    /// ([`PassContext::rebuilt`]).
    fn run(&self, w: &mut World, cx: &mut PassContext<'_>) -> Result<(), Diagnostic>;
}

/// The built-in passes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Builtin {
    Pe,
    Inline,
    Simplify,
    Cleanup,
    Mem2reg,
    Dce,
    Outline,
    Stage,
    Kernels,
    ClosureConv,
    Split,
}

impl Builtin {
    const ALL: [Builtin; 11] = [
        Builtin::Pe,
        Builtin::Inline,
        Builtin::Simplify,
        Builtin::Cleanup,
        Builtin::Mem2reg,
        Builtin::Dce,
        Builtin::Outline,
        Builtin::Stage,
        Builtin::Kernels,
        Builtin::ClosureConv,
        Builtin::Split,
    ];

    /// The passes of optimization level `level` (0 to 3).
    fn level(level: u8) -> &'static [Builtin] {
        use Builtin::*;
        match level {
            0 => &[Cleanup, Dce],
            1 => &[Simplify, Mem2reg, Simplify, Dce],
            _ => &[Pe, Dce, Simplify, Mem2reg, Pe, Simplify, Dce],
        }
    }

    fn name(self) -> &'static str {
        match self {
            Builtin::Pe => "pe",
            Builtin::Inline => "inline",
            Builtin::Simplify => "simplify",
            Builtin::Cleanup => "cleanup",
            Builtin::Mem2reg => "mem2reg",
            Builtin::Dce => "dce",
            Builtin::Outline => "outline",
            Builtin::Stage => "stage",
            Builtin::Kernels => "kernels",
            Builtin::ClosureConv => "closure-conv",
            Builtin::Split => "split",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Builtin::Pe => "partial evaluation: specialize calls whose filter holds, inline continuations used once, and specialize local continuations on the continuations they are passed",
            Builtin::Inline => "inline continuations used once (no specialization)",
            Builtin::Simplify => "inline continuations used once and clean up, again until nothing changes",
            Builtin::Cleanup => "remove `run`/`hlt`/`known` markers, fold loads of constant tables, eta-reduce forwarding continuations, drop unused parameters and parameters always given the same constant",
            Builtin::Mem2reg => "promote stack slots whose address does not escape to values passed between continuations (SSA)",
            Builtin::Dce => "keep only what the external continuations reach",
            Builtin::Outline => "kernel outlining: the body of each GPU kernel launch becomes a closed top-level kernel taking the values it captures",
            Builtin::Stage => "shared-memory staging (after `outline`): read-only buffers of a kernel whose reads are a box around each thread's pixel through a boundary handler, or constant elements of a mask, are copied into shared memory at the kernel's entry, and their loads read the copy; which ones, `--shm` and the cost model decide",
            Builtin::Kernels => "kernel launches become calls of the runtime: the outlined kernels go to the device code generator (CUDA), the host passes their module text and the captured values",
            Builtin::ClosureConv => "first-order form for native code: lift local functions that are only called to top level, and turn functions used as values into (code, environment) pairs",
            Builtin::Split => "function splitting (after `closure-conv`): each outermost single-entry, single-exit loop of a large function becomes a function of its own that the back end does not inline, so that LLVM's time grows with the program's size, not with its square",
        }
    }
}

/// Every built-in pass, by name, with what it does (for `--list-passes`).
pub fn passes() -> impl Iterator<Item = (&'static str, &'static str)> {
    Builtin::ALL
        .into_iter()
        .map(|b| (b.name(), b.description()))
}

impl Pass for Builtin {
    fn name(&self) -> &'static str {
        Builtin::name(*self)
    }

    fn run(&self, w: &mut World, cx: &mut PassContext<'_>) -> Result<(), Diagnostic> {
        let fuel = cx.config.fuel;
        let inline_only = pe::Options {
            specialize: false,
            cff: false,
            fuel,
            ..pe::Options::default()
        };
        match self {
            Builtin::Pe => {
                pe::run(
                    w,
                    pe::Options {
                        fuel,
                        ..pe::Options::default()
                    },
                )?;
            }
            Builtin::Inline => {
                pe::run(w, inline_only)?;
            }
            Builtin::Simplify => simplify(w, inline_only)?,
            Builtin::Cleanup => {
                cleanup::run(w);
            }
            Builtin::Mem2reg => {
                mem2reg::run(w);
            }
            Builtin::Dce => {
                let (new, remap) = compact::compact(w);
                *w = new;
                cx.rebuilt(remap);
            }
            Builtin::Outline => {
                outline::run(w, cx.sources)?;
            }
            Builtin::Stage => {
                // What only the replaced loads used (the handler's branches) goes.
                if stage::run(w, cx)? {
                    simplify(w, inline_only)?;
                }
            }
            Builtin::Kernels => kernels::run(w, cx)?,
            Builtin::ClosureConv => {
                let (new, remap, _) = closure::run(w)?;
                *w = new;
                cx.rebuilt(remap);
            }
            Builtin::Split => {
                split::run(w, cx.config.split_min_blocks);
            }
        }
        Ok(())
    }
}

/// Inlines continuations used once and cleans up, again until nothing changes.
fn simplify(w: &mut World, inline_only: pe::Options) -> Result<(), Diagnostic> {
    for _ in 0..32 {
        let inlined = pe::run(w, inline_only)?.changed();
        let cleaned = cleanup::run(w);
        if !inlined && !cleaned {
            break;
        }
    }
    Ok(())
}

/// A list of passes, run in order.
#[derive(Default)]
pub struct Pipeline {
    passes: Vec<Box<dyn Pass>>,
}

/// Which passes to print the world after.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrintAfter {
    /// After none.
    None,
    /// After every pass.
    All,
    /// After the passes of this name.
    Pass(String),
}

impl PrintAfter {
    /// `all` or the name of a built-in pass.
    pub fn parse(text: &str) -> Result<PrintAfter, String> {
        if text == "all" {
            return Ok(PrintAfter::All);
        }
        match Builtin::ALL.into_iter().find(|b| b.name() == text) {
            Some(b) => Ok(PrintAfter::Pass(b.name().to_string())),
            None => Err(format!("unknown pass `{text}` (see --list-passes)")),
        }
    }
}

/// How to run a pipeline.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Verify the world after every pass (and before the first); a failure is an error
    /// naming the pass.
    pub verify_each: bool,
    /// Print the world (text form) after these passes, to the `print` sink.
    pub print_after: PrintAfter,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            verify_each: false,
            print_after: PrintAfter::None,
        }
    }
}

/// The time one pass took and the size of the world after it.
#[derive(Clone, Debug)]
pub struct PassTime {
    /// The pass.
    pub name: &'static str,
    /// Wall time.
    pub time: Duration,
    /// Defs in the world after the pass.
    pub defs: usize,
}

impl Pipeline {
    /// The pipeline of optimization level `level` (0 to 3): what checking and the
    /// interpreter run.
    pub fn for_level(level: u8) -> Pipeline {
        Pipeline::of(Builtin::level(level))
    }

    /// The pipeline that prepares a program for a native back end at level `level`: the
    /// level's passes (at least partial evaluation, which a `break` out of a `for` body
    /// needs to become a jump, as in Artic), then the native tail ([`Self::native`]).
    pub fn for_native(level: u8) -> Pipeline {
        use Builtin::*;
        let passes: &[Builtin] = match level {
            0 => &[Pe, Cleanup, Dce],
            1 => &[Pe, Simplify, Mem2reg, Simplify, Dce],
            l => Builtin::level(l),
        };
        let mut p = Pipeline::of(passes).native();
        if level == 0 {
            // LLVM's `-O0` runs no loop pass whose time grows with a function's size.
            p.passes.retain(|p| p.name() != Builtin::Split.name());
        }
        p
    }

    /// The pipeline a device world runs before its code generator: closure elimination
    /// (kernels are first-order, like host code).
    pub fn for_device() -> Pipeline {
        Pipeline::of(&[Builtin::ClosureConv])
    }

    /// This pipeline made fit for native code: it ends with kernel outlining (unless it
    /// outlines already), the lowering of kernel launches, closure elimination and function
    /// splitting, each once and in that order.
    pub fn native(mut self) -> Pipeline {
        let is = |p: &Box<dyn Pass>, b: Builtin| p.name() == b.name();
        while self.passes.last().is_some_and(|p| {
            [Builtin::ClosureConv, Builtin::Kernels, Builtin::Split]
                .iter()
                .any(|&b| is(p, b))
        }) {
            self.passes.pop();
        }
        self.passes.retain(|p| !is(p, Builtin::Kernels));
        if !self.passes.iter().any(|p| is(p, Builtin::Outline)) {
            self.passes.push(Box::new(Builtin::Outline));
        }
        self.passes.push(Box::new(Builtin::Kernels));
        self.passes.push(Box::new(Builtin::ClosureConv));
        self.passes.push(Box::new(Builtin::Split));
        self
    }

    /// This pipeline ending with the lowering of kernel launches (where it has none): for
    /// the interpreter under a CPU target, which then stops at a CUDA launch at compile
    /// time, as native code does, instead of running it.
    pub fn with_launch_check(mut self) -> Pipeline {
        if !self
            .passes
            .iter()
            .any(|p| p.name() == Builtin::Kernels.name())
        {
            self.passes.push(Box::new(Builtin::Kernels));
        }
        self
    }

    /// This pipeline with shared-memory staging: kernel outlining (unless it outlines
    /// already) and `stage` (which simplifies what it staged), before the lowering of
    /// kernel launches where it has one.
    pub fn with_staging(mut self) -> Pipeline {
        let is = |p: &Box<dyn Pass>, b: Builtin| p.name() == b.name();
        if self.passes.iter().any(|p| is(p, Builtin::Stage)) {
            return self;
        }
        let at = (self.passes.iter())
            .position(|p| is(p, Builtin::Kernels))
            .unwrap_or(self.passes.len());
        let mut add: Vec<Box<dyn Pass>> = Vec::new();
        if !self.passes.iter().any(|p| is(p, Builtin::Outline)) {
            add.push(Box::new(Builtin::Outline));
        }
        add.push(Box::new(Builtin::Stage));
        self.passes.splice(at..at, add);
        self
    }

    /// A pipeline from comma-separated pass names, such as `"pe,cleanup,dce"`; `O0`..`O3`
    /// stand for the passes of that level (`"O2,closure-conv"`). An empty list is an
    /// error.
    pub fn parse(text: &str) -> Result<Pipeline, String> {
        let mut passes = Vec::new();
        for n in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if let Some(level) = ["O0", "O1", "O2", "O3"].iter().position(|&l| l == n) {
                passes.extend(Builtin::level(level as u8));
                continue;
            }
            match Builtin::ALL.into_iter().find(|b| b.name() == n) {
                Some(b) => passes.push(b),
                None => {
                    let all: Vec<&str> = Builtin::ALL.iter().map(|b| b.name()).collect();
                    return Err(format!(
                        "unknown pass `{n}` (passes: {}; levels: O0, O1, O2, O3)",
                        all.join(", ")
                    ));
                }
            }
        }
        if passes.is_empty() {
            return Err(
                "an empty list of passes (name at least one, or a level such as O2)".into(),
            );
        }
        Ok(Pipeline::of(&passes))
    }

    fn of(passes: &[Builtin]) -> Pipeline {
        Pipeline {
            passes: passes
                .iter()
                .map(|&b| Box::new(b) as Box<dyn Pass>)
                .collect(),
        }
    }

    /// An empty pipeline, to fill with [`Self::push`] and [`Self::append`].
    pub fn new() -> Pipeline {
        Pipeline { passes: Vec::new() }
    }

    /// Adds a pass at the end.
    pub fn push(&mut self, pass: Box<dyn Pass>) {
        self.passes.push(pass);
    }

    /// Adds the passes of `other` at the end.
    pub fn append(&mut self, other: Pipeline) {
        self.passes.extend(other.passes);
    }

    /// The names of the passes, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.passes.iter().map(|p| p.name()).collect()
    }

    /// Runs the passes on `w` in order, with a context of default settings (see
    /// [`Self::run_in`]).
    pub fn run(
        &self,
        w: &mut World,
        opts: &RunOptions,
        print: impl FnMut(&str, &str),
    ) -> Result<Vec<PassTime>, Diagnostic> {
        self.run_in(w, opts, &mut PassContext::new(Config::default()), print)
    }

    /// Runs the passes on `w` in order, in context `cx`. `print` receives `(pass, text)`
    /// for each print that [`RunOptions::print_after`] asks for. Returns the time of each
    /// pass.
    pub fn run_in(
        &self,
        w: &mut World,
        opts: &RunOptions,
        cx: &mut PassContext<'_>,
        mut print: impl FnMut(&str, &str),
    ) -> Result<Vec<PassTime>, Diagnostic> {
        if opts.verify_each {
            verify(w, "the input")?;
        }
        let mut times = Vec::new();
        // `pe_info` calls are read and removed before code is prepared for a back end.
        let for_backends = ["outline", "stage", "kernels", "closure-conv", "split"];
        let mut info_done = false;
        for p in &self.passes {
            if !info_done && for_backends.contains(&p.name()) {
                crate::pe_info::run(w, &mut cx.pe_info, cx.sources);
                info_done = true;
            }
            let t = Instant::now();
            p.run(w, cx)?;
            times.push(PassTime {
                name: p.name(),
                time: t.elapsed(),
                defs: w.num_defs(),
            });
            if opts.verify_each {
                verify(w, &format!("pass `{}`", p.name()))?;
            }
            let wanted = match &opts.print_after {
                PrintAfter::None => false,
                PrintAfter::All => true,
                PrintAfter::Pass(n) => n == p.name(),
            };
            if wanted {
                print(p.name(), &durin_ir::text::print(w));
            }
        }
        if !info_done {
            crate::pe_info::run(w, &mut cx.pe_info, cx.sources);
        }
        Ok(times)
    }
}

fn verify(w: &World, after: &str) -> Result<(), Diagnostic> {
    durin_ir::verify::verify(w).map_err(|errors| {
        let mut e = Diagnostic::error_at(
            None,
            format!("internal compiler error: the IR does not verify after {after}"),
        );
        for x in errors.iter().take(10) {
            e = e.with_note(x.to_string());
        }
        e
    })
}
