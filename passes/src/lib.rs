//! durin's IR passes (not implemented yet).
//!
//! It will own the pass manager, the partial evaluator, cleanup, mem2reg, closure
//! elimination, kernel outlining, read-only tracing, footprint analysis, shared-memory
//! staging and boundary specialization, all as transformations of a `durin-ir` world. It
//! will emit no target code.
