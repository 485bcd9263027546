//! The pass manager: every built-in pass in one list ([`BUILTINS`]), pipelines as data built
//! from it, and the loop that runs a pipeline over a world.
//!
//! Adding a built-in pass takes its file (a type implementing [`Pass`]) and one entry in
//! [`BUILTINS`]; a pipeline constructor names it where a level should run it.

use crate::cleanup::Cleanup;
use crate::closure_conv::ClosureConv;
use crate::context::{Config, Pass, PassContext};
use crate::dce::Dce;
use crate::gpu::kernels::Kernels;
use crate::gpu::stage::Stage;
use crate::inline::Inline;
use crate::mem2reg::Mem2reg;
use crate::outline::Outline;
use crate::pe::Pe;
use crate::pe_info::PeInfo;
use crate::simplify::Simplify;
use crate::split::Split;
use durin_diag::Diagnostic;
use durin_ir::World;
use std::time::{Duration, Instant};

/// Every built-in pass, in the order `--list-passes` shows them.
const BUILTINS: &[&dyn Pass] = &[
    &Pe,
    &Inline,
    &Simplify,
    &Cleanup,
    &Mem2reg,
    &Dce,
    &Outline,
    &Stage,
    &Kernels,
    &ClosureConv,
    &Split,
    &PeInfo,
];

/// The built-in pass named `name`.
fn builtin(name: &str) -> Option<&'static dyn Pass> {
    BUILTINS.iter().copied().find(|p| p.name() == name)
}

/// The passes of optimization level `level` (0 to 3).
fn level(level: u8) -> &'static [&'static dyn Pass] {
    match level {
        0 => &[&Cleanup, &Dce],
        1 => &[&Simplify, &Mem2reg, &Simplify, &Dce],
        _ => &[&Pe, &Dce, &Simplify, &Mem2reg, &Pe, &Simplify, &Dce],
    }
}

/// Every built-in pass, by name, with what it does (for `--list-passes`).
pub fn passes() -> impl Iterator<Item = (&'static str, &'static str)> {
    BUILTINS.iter().map(|p| (p.name(), p.description()))
}

impl<P: Pass + ?Sized> Pass for &P {
    fn name(&self) -> &'static str {
        (**self).name()
    }

    fn description(&self) -> &'static str {
        (**self).description()
    }

    fn lowers(&self) -> bool {
        (**self).lowers()
    }

    fn run(&self, w: &mut World, cx: &mut PassContext<'_>) -> Result<(), Diagnostic> {
        (**self).run(w, cx)
    }
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
        match builtin(text) {
            Some(p) => Ok(PrintAfter::Pass(p.name().to_string())),
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
        Pipeline::of(self::level(level))
    }

    /// The pipeline that prepares a program for a native back end at level `level`: the
    /// level's passes (at least partial evaluation, which a `break` out of a `for` body
    /// needs to become a jump, as in Artic), then the native tail ([`Self::native`]).
    pub fn for_native(level: u8) -> Pipeline {
        let passes: &[&dyn Pass] = match level {
            0 => &[&Pe, &Cleanup, &Dce],
            1 => &[&Pe, &Simplify, &Mem2reg, &Simplify, &Dce],
            l => self::level(l),
        };
        let mut p = Pipeline::of(passes).native();
        if level == 0 {
            // LLVM's `-O0` runs no loop pass whose time grows with a function's size.
            p.passes.retain(|p| p.name() != Split.name());
        }
        p
    }

    /// Whether the pipeline runs `pass`.
    fn has(&self, pass: &dyn Pass) -> bool {
        self.passes.iter().any(|p| p.name() == pass.name())
    }

    /// This pipeline made fit for native code: it ends with kernel outlining (unless it
    /// outlines already), the lowering of kernel launches, closure elimination and function
    /// splitting, each once and in that order.
    pub fn native(mut self) -> Pipeline {
        let tail: [&dyn Pass; 3] = [&ClosureConv, &Kernels, &Split];
        while (self.passes.last()).is_some_and(|p| tail.iter().any(|t| t.name() == p.name())) {
            self.passes.pop();
        }
        self.passes.retain(|p| p.name() != Kernels.name());
        if !self.has(&Outline) {
            self.passes.push(Box::new(Outline));
        }
        self.passes.push(Box::new(Kernels));
        self.passes.push(Box::new(ClosureConv));
        self.passes.push(Box::new(Split));
        self.with_pe_info()
    }

    /// This pipeline ending with the lowering of kernel launches (where it has none): for
    /// the interpreter under a CPU target, which then stops at a CUDA launch at compile
    /// time, as native code does, instead of running it.
    pub fn with_launch_check(mut self) -> Pipeline {
        if !self.has(&Kernels) {
            self.passes.push(Box::new(Kernels));
        }
        self.with_pe_info()
    }

    /// This pipeline with shared-memory staging: kernel outlining (unless it outlines
    /// already) and `stage` (which simplifies what it staged), before the lowering of
    /// kernel launches where it has one.
    pub fn with_staging(mut self) -> Pipeline {
        if self.has(&Stage) {
            return self;
        }
        let at = (self.passes.iter())
            .position(|p| p.name() == Kernels.name())
            .unwrap_or(self.passes.len());
        let mut add: Vec<Box<dyn Pass>> = Vec::new();
        if !self.has(&Outline) {
            add.push(Box::new(Outline));
        }
        add.push(Box::new(Stage));
        self.passes.splice(at..at, add);
        self.with_pe_info()
    }

    /// This pipeline with the pass `pe-info` once, where it belongs: before the first pass
    /// that prepares code for a back end ([`Pass::lowers`]), or at the end. Every pipeline
    /// this type builds has it; a pipeline built pass by pass gets it from this.
    pub fn with_pe_info(mut self) -> Pipeline {
        self.passes.retain(|p| p.name() != PeInfo.name());
        let at = (self.passes.iter())
            .position(|p| p.lowers())
            .unwrap_or(self.passes.len());
        self.passes.insert(at, Box::new(PeInfo));
        self
    }

    /// A pipeline from comma-separated pass names, such as `"pe,cleanup,dce"`; `O0`..`O3`
    /// stand for the passes of that level (`"O2,closure-conv"`). An empty list is an
    /// error.
    pub fn parse(text: &str) -> Result<Pipeline, String> {
        let mut passes: Vec<&dyn Pass> = Vec::new();
        for n in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if let Some(l) = ["O0", "O1", "O2", "O3"].iter().position(|&l| l == n) {
                passes.extend(level(l as u8));
                continue;
            }
            match builtin(n) {
                Some(p) => passes.push(p),
                None => {
                    let all: Vec<&str> = BUILTINS.iter().map(|p| p.name()).collect();
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

    fn of(passes: &[&'static dyn Pass]) -> Pipeline {
        let passes = (passes.iter())
            .map(|&p| Box::new(p) as Box<dyn Pass>)
            .collect();
        Pipeline { passes }.with_pe_info()
    }

    /// An empty pipeline, to fill with [`Self::push`] and [`Self::append`].
    pub fn new() -> Pipeline {
        Pipeline { passes: Vec::new() }
    }

    /// Adds a pass at the end.
    pub fn push(&mut self, pass: Box<dyn Pass>) {
        self.passes.push(pass);
    }

    /// Adds the passes of `other` at the end (its `pe-info` moves to where it belongs in
    /// the whole, [`Self::with_pe_info`]).
    pub fn append(&mut self, other: Pipeline) {
        let has_info = other.has(&PeInfo);
        self.passes.extend(other.passes);
        if has_info {
            *self = std::mem::take(self).with_pe_info();
        }
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
        for p in &self.passes {
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
