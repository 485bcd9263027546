//! durin's LLVM back end (not implemented yet).
//!
//! It will own the translation of first-order IR to LLVM IR through inkwell, optimization,
//! object, assembly and IR emission, and the JIT. It will hold no passes that belong on the
//! IR.
