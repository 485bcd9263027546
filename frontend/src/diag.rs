//! Diagnostics: errors and warnings with labelled spans and notes, rendered like rustc's.

use crate::source::{SourceMap, Span};
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term;

/// How bad a diagnostic is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Severity {
    /// The program is invalid.
    Error,
    /// The program is valid but probably not what was meant.
    Warning,
}

/// A span with a message.
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
    /// The places it is about, the primary one first.
    pub labels: Vec<Label>,
    /// Further explanation and suggestions.
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// An error at `span`.
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            labels: vec![Label {
                span,
                message: String::new(),
                primary: true,
            }],
            notes: Vec::new(),
        }
    }

    /// A warning at `span`.
    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(span, message)
        }
    }

    /// The same diagnostic with a message on its primary label.
    pub fn with_label_message(mut self, message: impl Into<String>) -> Diagnostic {
        if let Some(l) = self.labels.first_mut() {
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

    /// The same diagnostic with a note.
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// Whether this is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Renders diagnostics as text, like rustc (without colours).
pub fn render(sources: &SourceMap, diagnostics: &[Diagnostic]) -> String {
    let mut files = SimpleFiles::new();
    for (name, text) in sources.files() {
        files.add(name.as_str(), text.as_str());
    }
    let config = term::Config::default();
    let mut out = String::new();
    for d in diagnostics {
        let severity = match d.severity {
            Severity::Error => cs::Severity::Error,
            Severity::Warning => cs::Severity::Warning,
        };
        let labels = d
            .labels
            .iter()
            .map(|l| {
                let style = if l.primary {
                    cs::LabelStyle::Primary
                } else {
                    cs::LabelStyle::Secondary
                };
                cs::Label::new(style, SourceMap::index(l.span.file), l.span.range())
                    .with_message(&l.message)
            })
            .collect();
        let diagnostic = cs::Diagnostic::new(severity)
            .with_message(&d.message)
            .with_labels(labels)
            .with_notes(d.notes.clone());
        match term::emit_into_string(&config, &files, &diagnostic) {
            Ok(s) => out.push_str(&s),
            // A span outside its file is a bug of the frontend; still say what was wrong.
            Err(_) => out.push_str(&format!("error: {}\n", d.message)),
        }
    }
    out
}
