//! The contract between a pass and the manager that runs it: the [`Pass`] trait, the
//! settings passes read ([`Config`]), and what one run of passes carries besides the world
//! ([`PassContext`]): the target of kernel launches, the sources (to name places in
//! messages), where the defs of the input went ([`Remap`]), and the findings that the
//! driver reports ([`Findings`]).
//!
//! A pass never hands a private result to another pass through the context: the findings
//! are what the report prints, written by the passes that find them.

use crate::gpu::buffers::KernelBuffers;
use crate::gpu::model::StageMode;
use crate::gpu::target::Target;
use durin_diag::{Diagnostic, SourceMap, Span};
use durin_ir::def::DefMap;
use durin_ir::{Def, World};

/// Partial-evaluation fuel by default: specializations allowed per run of `pe`.
pub(crate) const DEFAULT_FUEL: u64 = 1_000_000;

/// A function with fewer blocks than this keeps its loops in the `split` pass by default:
/// LLVM's time on it is small.
pub(crate) const SPLIT_MIN_BLOCKS: usize = 1000;

/// A transformation of a world.
pub trait Pass {
    /// The name pipelines use.
    fn name(&self) -> &'static str;
    /// What it does, in a sentence (for `--list-passes`).
    fn description(&self) -> &'static str {
        ""
    }
    /// Whether it prepares code for a back end (kernel outlining and what follows it):
    /// the pipelines run `pe-info` before the first such pass.
    fn lowers(&self) -> bool {
        false
    }
    /// Transforms `w`. A pass that replaces the world by a new one tells `cx`
    /// ([`PassContext::rebuilt`]).
    fn run(&self, w: &mut World, cx: &mut PassContext<'_>) -> Result<(), Diagnostic>;
}

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
            fuel: DEFAULT_FUEL,
            shm: StageMode::default(),
            split_min_blocks: SPLIT_MIN_BLOCKS,
        }
    }
}

/// Where the defs of a world went when a pass built a new world from it (`dce`,
/// `closure-conv`): the new def of each old one that survived. Callers follow their
/// handles (`main`, the exports) through it instead of finding them again.
#[derive(Clone, Debug, Default)]
pub struct Remap {
    map: DefMap<Def>,
}

impl Remap {
    pub(crate) fn new(map: DefMap<Def>) -> Remap {
        Remap { map }
    }

    /// The new def of `old`, if it survived.
    pub fn get(&self, old: Def) -> Option<Def> {
        self.map.get(old).copied()
    }

    /// Where `self`'s old defs went after `next` ran too.
    fn then(&self, next: &Remap) -> Remap {
        let mut map = DefMap::new();
        for (old, &mid) in self.map.iter() {
            if let Some(new) = next.get(mid) {
                map.insert(old, new);
            }
        }
        Remap { map }
    }
}

/// What the pass `pe-info` found: `pe_info` calls with their places, and `pe_report`
/// calls with the places of the program's calls their code was specialized for.
#[derive(Default)]
pub(crate) struct PeRecords {
    pub(crate) infos: Vec<(Option<Span>, String)>,
    pub(crate) reports: Vec<(Option<Span>, String)>,
}

/// What the passes found that the driver reports: each kernel's buffers (`--report shm`,
/// only when asked: tracing costs time) and the `pe_info` and `pe_report` calls.
#[derive(Default)]
pub(crate) struct Findings {
    /// The buffers of each kernel the `kernels` pass compiled, in launch order.
    compiled: Option<Vec<KernelBuffers>>,
    /// The buffers of each kernel the `stage` pass saw, as it found them before staging
    /// changed the kernel; the `kernels` pass moves each to `compiled`.
    staged: Vec<KernelBuffers>,
    /// The `pe_info` and `pe_report` calls (place and text).
    pub(crate) pe_info: PeRecords,
    /// Whether a run of `pe` has shared the kernels of launches (and the closures passed to
    /// imports) of the same code (see [`crate::share`]): a later run finds them specialized,
    /// nothing left to share, and looking would walk each kernel's code again.
    pub(crate) kernels_shared: bool,
}

impl Findings {
    /// Whether the driver asked for each kernel's buffers.
    pub(crate) fn wants_kernels(&self) -> bool {
        self.compiled.is_some()
    }

    /// Records what the `stage` pass found in a kernel (where asked).
    pub(crate) fn staged(&mut self, found: KernelBuffers) {
        if self.wants_kernels() {
            self.staged.push(found);
        }
    }

    /// What the `stage` pass found in the kernel `kernel` of the host world, taken.
    pub(crate) fn take_staged(&mut self, kernel: Def) -> Option<KernelBuffers> {
        let i = self.staged.iter().position(|f| f.kernel == kernel)?;
        Some(self.staged.remove(i))
    }

    /// Records the buffers of a kernel the `kernels` pass compiled (where asked).
    pub(crate) fn compiled(&mut self, found: KernelBuffers) {
        if let Some(out) = self.compiled.as_mut() {
            out.push(found);
        }
    }
}

/// What one run of passes carries besides the world: settings, the target for kernel
/// launches, the sources (to name places in messages), where the defs of the input went,
/// and the findings to report.
pub struct PassContext<'a> {
    /// Settings for the passes.
    pub config: Config,
    target: Target<'a>,
    sources: Option<&'a SourceMap>,
    moved: Option<Remap>,
    pub(crate) findings: Findings,
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
            findings: Findings::default(),
        }
    }

    /// The `pe_info(message, value)` calls the pipeline found, with their places, in the
    /// order of the program's continuations (the pass `pe-info`).
    pub fn take_pe_info(&mut self) -> Vec<(Option<Span>, String)> {
        std::mem::take(&mut self.findings.pe_info.infos)
    }

    /// The `pe_report(message, value)` calls the pipeline found, each with the place of the
    /// program's call its library code was specialized for (`--report fusion`).
    pub fn take_pe_reports(&mut self) -> Vec<(Option<Span>, String)> {
        std::mem::take(&mut self.findings.pe_info.reports)
    }

    /// The same context asking the `kernels` pass for each kernel's buffers (read-only
    /// tracing and footprints, for `--report shm`), which it otherwise does not compute.
    pub fn with_kernel_report(mut self) -> PassContext<'a> {
        self.findings.compiled = Some(Vec::new());
        self
    }

    /// The buffers of each kernel compiled so far (with [`PassContext::with_kernel_report`]).
    /// Kernels that no `kernels` pass compiled (the interpreter runs them) come as the
    /// `stage` pass saw them.
    pub fn take_kernel_buffers(&mut self) -> Vec<KernelBuffers> {
        let f = &mut self.findings;
        let mut out: Vec<KernelBuffers> =
            f.compiled.as_mut().map(std::mem::take).unwrap_or_default();
        out.append(&mut f.staged);
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
