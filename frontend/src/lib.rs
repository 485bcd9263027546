//! durin's frontend: the Artic-compatible language.
//!
//! Stages: source files and spans ([`source`]), the lexer ([`lexer`], [`token`]), the
//! parser ([`parser`], [`ast`]), name resolution and type checking ([`check`], producing
//! the typed [`hir`] with [`types`]), and lowering to the continuation-passing IR of
//! `durin-ir` ([`lower`]). [`compile::compile`] runs them all, with the prelude from
//! `stdlib/`; diagnostics render like rustc's ([`diag`]).
//!
//! The crate does no IO and does not fail: each stage returns its result together with the
//! diagnostics it found, and never panics on any input.

pub mod ast;
pub mod check;
pub mod compile;
pub mod diag;
pub mod hir;
pub mod lexer;
pub mod lower;
pub mod parser;
pub mod source;
pub mod token;
pub mod types;
