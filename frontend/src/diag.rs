//! Diagnostics: errors and warnings with labelled spans and notes, rendered like rustc's
//! (the types and the renderer every stage of durin shares).

pub use durin_diag::{render, Diagnostic, Label, Severity};
