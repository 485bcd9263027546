//! Source places and diagnostics, shared by every stage of durin.
//!
//! A [`SourceMap`] holds the files of one program; a [`Span`] is a byte range in one of
//! them. The front end attaches spans to what it lowers, the IR keeps them on its defs,
//! and every error of every stage (the checker, a pass, a back end) is a [`Diagnostic`]:
//! a message, a severity, labelled places (the primary one first) and notes. [`render`] is
//! the one renderer, in rustc's style; [`SourceMap::place`] is the short `file:line:column`
//! form for one-line reports.
//!
//! The crate does no IO.

#![deny(missing_docs)]

mod render;
mod source;

pub use render::render;
pub use source::{FileId, SourceMap, Span};

use std::fmt;

/// How bad a diagnostic is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Severity {
    /// The program is invalid (or the compiler failed on it).
    Error,
    /// The program is valid but probably not what was meant.
    Warning,
}

/// A place with a message.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Label {
    /// Where.
    pub span: Span,
    /// What to say there (may be empty).
    pub message: String,
    /// Whether this is the main place of the diagnostic.
    pub primary: bool,
}

/// One error or warning.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The headline.
    pub message: String,
    /// The places it is about, the primary one first; empty when the place is unknown.
    pub labels: Vec<Label>,
    /// Further explanation and suggestions.
    pub notes: Vec<String>,
    /// Where the primary place is in code that partial evaluation specialized: the calls it
    /// was specialized for, innermost first. Where that place is in a library's file, the
    /// rendering also labels the innermost call in the program's own files.
    pub expansion: Vec<Span>,
}

/// A `Result` whose error is a [`Diagnostic`].
pub type Result<T> = std::result::Result<T, Diagnostic>;

impl Diagnostic {
    /// An error at `span`.
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::error_at(Some(span), message)
    }

    /// An error at `span` when it is known, else an error without a place.
    pub fn error_at(span: Option<Span>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            labels: Vec::new(),
            notes: Vec::new(),
            expansion: Vec::new(),
        }
        .at(span)
    }

    /// A broken invariant inside `component` ("the LLVM back end"), without a place;
    /// callers add one with [`Diagnostic::at`].
    pub fn internal(component: &str, what: impl Into<String>) -> Diagnostic {
        Diagnostic::error_at(
            None,
            format!("internal error in {component}: {}", what.into()),
        )
    }

    /// A construct that a part of the compiler does not handle, `context` saying which
    /// ("by the LLVM back end", "in a GPU kernel"), without a place; callers add one with
    /// [`Diagnostic::at`].
    pub fn unsupported(context: &str, what: impl Into<String>) -> Diagnostic {
        Diagnostic::error_at(None, format!("not supported {context}: {}", what.into()))
    }

    /// A warning at `span`.
    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(span, message)
        }
    }

    /// The same diagnostic with `span` as its primary place, unless it has one already.
    pub fn at(mut self, span: Option<Span>) -> Diagnostic {
        if let (None, Some(span)) = (self.primary(), span) {
            self.labels.insert(
                0,
                Label {
                    span,
                    message: String::new(),
                    primary: true,
                },
            );
        }
        self
    }

    /// The primary place, if there is one.
    pub fn primary(&self) -> Option<Span> {
        self.labels.iter().find(|l| l.primary).map(|l| l.span)
    }

    /// The same diagnostic with a message on its primary label.
    pub fn with_label_message(mut self, message: impl Into<String>) -> Diagnostic {
        if let Some(l) = self.labels.iter_mut().find(|l| l.primary) {
            l.message = message.into();
        }
        self
    }

    /// The same diagnostic with a secondary label.
    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: false,
        });
        self
    }

    /// The same diagnostic with the calls its code was specialized for (innermost first),
    /// unless it names them already.
    pub fn with_expansion(mut self, calls: Vec<Span>) -> Diagnostic {
        if self.expansion.is_empty() {
            self.expansion = calls;
        }
        self
    }

    /// The same diagnostic with a note.
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// The same diagnostic with a note at `span` when that is known (a secondary label
    /// there), else a plain note.
    pub fn with_note_at(self, span: Option<Span>, note: impl Into<String>) -> Diagnostic {
        match span {
            Some(s) => self.with_secondary(s, note),
            None => self.with_note(note),
        }
    }

    /// Whether this is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// The message, then the notes and what the secondary labels say, one `note:` line each:
/// the form for places where no source text is at hand.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        let labels = self.labels.iter().filter(|l| !l.primary);
        for n in self.notes.iter().chain(labels.map(|l| &l.message)) {
            write!(f, "\n  note: {n}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}

#[cfg(test)]
mod tests;
