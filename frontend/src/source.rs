//! Source files and spans (the types every stage of durin shares).

pub use durin_diag::{FileId, SourceMap, Span};
