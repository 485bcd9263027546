//! durin's IR passes, as transformations of a `durin-ir` world, and the pass manager that
//! runs them.
//!
//! A pipeline is data: a list of named passes ([`Pipeline::parse`] reads
//! `"pe,cleanup,dce"`), and the optimization levels `-O0`..`-O3`, the native tail (kernel
//! outlining, launch lowering, closure elimination, function splitting) and the device
//! pipeline are [`Pipeline`] constructors. [`Pipeline::run_in`] can verify the world after
//! every pass, print it after a pass, and time each pass. Passes keep the source places
//! that the front end attached to continuations, so that errors found late (such as running
//! out of partial-evaluation fuel) point at source; every error is a [`Diagnostic`].
//!
//! The pass modules are private: a user of the crate runs passes through [`Pipeline`],
//! writes new ones against [`Pass`] and [`Rewriter`], and reads what is left with
//! [`closure_report`]. Device code comes from a [`DeviceCodegen`] the caller gives in the
//! [`PassContext`]: the crate emits no target code.

#![deny(missing_docs)]

mod analysis;
mod cleanup;
mod closure_conv;
mod context;
mod dce;
mod gpu;
mod inline;
mod mem2reg;
mod outline;
mod pe;
mod pe_info;
mod pipeline;
mod report;
mod rewrite;
mod share;
mod simplify;
mod split;

pub use closure_conv::Stats as ClosureStats;
pub use context::{Config, Pass, PassContext, Remap};
pub use durin_diag::Diagnostic;
pub use gpu::buffers::{describe as describe_root, Access, Buffer, KernelBuffers, Root};
pub use gpu::footprint::Footprint;
pub use gpu::model::{
    Estimate, Gpu, StageMode, Staging, Use as StagingUse, SM90, THRESHOLD as STAGING_THRESHOLD,
};
pub use gpu::target::{DeviceCodegen, DeviceModule, Target, LAUNCH_FN};
pub use pipeline::{passes, PassTime, Pipeline, PrintAfter, RunOptions};
pub use report::{closure_report, Closure, ClosureReport};
pub use rewrite::Rewriter;

/// Closure elimination on its own, with what it did: `w` in first-order form in a new
/// world, where the defs of `w` went, and counts of lifted, converted and wrapped
/// functions (the pass `closure-conv` is this).
pub fn eliminate_closures(
    w: &durin_ir::World,
) -> Result<(durin_ir::World, Remap, ClosureStats), Diagnostic> {
    closure_conv::run(w)
}
