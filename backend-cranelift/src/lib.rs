//! durin's Cranelift back end (not implemented yet).
//!
//! It will own the translation of first-order IR to Cranelift IR: the fast JIT tier.
