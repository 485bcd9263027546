//! durin's frontend: the Artic-compatible language.
//!
//! Implemented so far: source files and spans ([`source`]), diagnostics rendered like
//! rustc's ([`diag`]), the lexer ([`lexer`], [`token`]) and the parser ([`parser`],
//! [`ast`]). To come (see the project's issues): name resolution, the bidirectional type
//! checker, and lowering to the continuation-passing IR of `durin-ir`.
//!
//! The crate does no IO and does not fail: each stage returns its result together with the
//! diagnostics it found, and never panics on any input.

pub mod ast;
pub mod check;
pub mod hir;
pub mod types;
pub mod diag;
pub mod driver;
pub mod lexer;
pub mod lower;
pub mod parser;
pub mod source;
pub mod token;
