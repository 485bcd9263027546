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
/// 32 rounds); `fuel` bounds the inliner.
pub(crate) fn run(w: &mut World, fuel: u64) -> Result<(), Diagnostic> {
    for _ in 0..32 {
        let inlined = pe::run(w, pe::Options::inline_only(fuel))?.changed();
        let cleaned = cleanup::run(w);
        if !inlined && !cleaned {
            break;
        }
    }
    Ok(())
}
