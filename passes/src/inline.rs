//! The pass `inline`: continuations used once are inlined into their only caller, and
//! nothing is specialized (partial evaluation's inliner alone, [`crate::pe`]).

use crate::context::{Pass, PassContext};
use crate::pe;
use durin_diag::Diagnostic;
use durin_ir::World;

/// The pass `inline`.
pub(crate) struct Inline;

impl Pass for Inline {
    fn name(&self) -> &'static str {
        "inline"
    }

    fn description(&self) -> &'static str {
        "inline continuations used once (no specialization)"
    }

    fn run(&self, w: &mut World, cx: &mut PassContext<'_>) -> Result<(), Diagnostic> {
        pe::run(w, pe::Options::inline_only(cx.config.fuel)).map(|_| ())
    }
}
