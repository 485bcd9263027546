//! durin's frontend (not implemented yet).
//!
//! It will own the Artic-compatible language: lexer, parser and AST with spans, name
//! resolution, the bidirectional polymorphic type checker, diagnostics, and lowering to the
//! continuation-passing IR of `durin-ir`. It will run no passes and generate no code.
