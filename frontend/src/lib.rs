//! durin's frontend: the Artic-compatible language.
//!
//! Implemented so far: source files and spans ([`source`]), diagnostics rendered like
//! rustc's ([`diag`]), and the lexer ([`lexer`], [`token`]). To come (see the project's
//! issues): the parser and AST, name resolution, the bidirectional type checker, and
//! lowering to the continuation-passing IR of `durin-ir`.
//!
//! The crate does no IO and does not fail: each stage returns its result together with the
//! diagnostics it found, and never panics on any input.

pub mod diag;
pub mod lexer;
pub mod source;
pub mod token;
