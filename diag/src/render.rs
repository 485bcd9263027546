//! The one renderer of diagnostics: text like rustc's, without colours.

use crate::source::SourceMap;
use crate::{Diagnostic, Severity};
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term;

/// Renders diagnostics as text against the program's sources, like rustc (without
/// colours). A diagnostic without a place renders as its headline and one `note:` line
/// for each note.
pub fn render(sources: &SourceMap, diagnostics: &[Diagnostic]) -> String {
    let mut files = SimpleFiles::new();
    for (name, text) in sources.files() {
        files.add(name, text);
    }
    let config = term::Config::default();
    let mut out = String::new();
    for d in diagnostics {
        if d.labels.is_empty() {
            out.push_str(&format!("{}: {d}\n", word(d)));
            continue;
        }
        let severity = match d.severity {
            Severity::Error => cs::Severity::Error,
            Severity::Warning => cs::Severity::Warning,
        };
        let mut labels: Vec<_> = d
            .labels
            .iter()
            .map(|l| {
                let style = if l.primary {
                    cs::LabelStyle::Primary
                } else {
                    cs::LabelStyle::Secondary
                };
                cs::Label::new(style, l.span.file.index(), l.span.range()).with_message(&l.message)
            })
            .collect();
        // A place in a library's code: the program's call that code was specialized for.
        if let Some(call) = sources.program_call(d.primary(), &d.expansion) {
            labels.push(
                cs::Label::secondary(call.file.index(), call.range())
                    .with_message("in the code specialized for this call"),
            );
        }
        let diagnostic = cs::Diagnostic::new(severity)
            .with_message(&d.message)
            .with_labels(labels)
            .with_notes(d.notes.clone());
        match term::emit_into_string(&config, &files, &diagnostic) {
            Ok(s) => out.push_str(&s),
            // A place outside its file is a bug of whoever made it; still say what was
            // wrong, with everything the diagnostic says.
            Err(_) => out.push_str(&format!("{}: {d}\n", word(d))),
        }
    }
    out
}

fn word(d: &Diagnostic) -> &'static str {
    if d.is_error() {
        "error"
    } else {
        "warning"
    }
}
