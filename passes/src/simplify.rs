//! The pass `simplify`: inlining of continuations used once ([`crate::pe`] without
//! specialization) and [`crate::cleanup`], again until neither changes anything.

use crate::context::{Pass, PassContext};
use crate::{cleanup, pe};
use durin_diag::Diagnostic;
use durin_ir::World;

/// The pass `simplify`.
pub(crate) struct Simplify;

impl Pass for Simplify {
    fn name(&self) -> &'static str {
        "simplify"
    }

    fn description(&self) -> &'static str {
        "inline continuations used once and clean up, again until nothing changes"
    }

    fn run(&self, w: &mut World, cx: &mut PassContext<'_>) -> Result<(), Diagnostic> {
        run(w, cx.config.fuel)
    }
}

/// Inlines continuations used once and cleans up, again until nothing changes (at most
/// 32 rounds); `fuel` bounds the inliner. The inliner runs to its own fixed point, so a
/// round whose cleanup changed nothing ends it: another would inline nothing either
/// (that last round took 70-80 ms of each `simplify` on `benches/gpu/bandwidth.art`).
pub(crate) fn run(w: &mut World, fuel: u64) -> Result<(), Diagnostic> {
    for _ in 0..32 {
        pe::run(w, pe::Options::inline_only(fuel))?;
        if !cleanup::run(w) {
            break;
        }
    }
    Ok(())
}
