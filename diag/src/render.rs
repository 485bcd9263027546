//! The one renderer of diagnostics: text like rustc's, without colours.

use crate::source::SourceMap;
use crate::{Diagnostic, Severity};
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::{self, Files};
use codespan_reporting::term;
use std::borrow::Cow;
use std::ops::Range;
use std::rc::Rc;

/// Lines longer than this many bytes are shown in part: the text around each place on them,
/// with `…` for the rest, so that a diagnostic on a generated program of one long line
/// stays readable (and short).
const LONG_LINE: usize = 200;

/// How many bytes of a long line are shown on each side of a place on it.
const CONTEXT: usize = 40;

const ELLIPSIS: &str = "…";

/// Renders diagnostics as text against the program's sources, like rustc (without
/// colours). A diagnostic without a place renders as its headline and one `note:` line
/// for each note.
pub fn render(sources: &SourceMap, diagnostics: &[Diagnostic]) -> String {
    let files = Shown {
        files: sources.files().map(|(n, t)| ShownFile::new(n, t)).collect(),
    };
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
        let shortened = files.shortened(&mut labels);
        let diagnostic = cs::Diagnostic::new(severity)
            .with_message(&d.message)
            .with_labels(labels)
            .with_notes(d.notes.clone());
        match term::emit_into_string(&config, shortened.as_ref().unwrap_or(&files), &diagnostic) {
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

/// The files as a diagnostic shows them.
#[derive(Clone)]
struct Shown<'s> {
    files: Vec<ShownFile<'s>>,
}

/// A file as shown: its text, or its text with long lines cut down.
#[derive(Clone)]
struct ShownFile<'s> {
    name: &'s str,
    original: &'s str,
    text: Cow<'s, str>,
    /// Where each line of `text` starts.
    starts: Rc<[usize]>,
    /// Where each line of `original` starts.
    original_starts: Rc<[usize]>,
    /// The pieces of `original` that `text` keeps, in order; empty when it keeps all.
    kept: Vec<Kept>,
}

/// `len` bytes of the original text from `orig` are in the shown text from `new`.
#[derive(Clone, Copy, Debug)]
struct Kept {
    orig: usize,
    new: usize,
    len: usize,
}

impl<'s> ShownFile<'s> {
    fn new(name: &'s str, text: &'s str) -> ShownFile<'s> {
        let starts: Rc<[usize]> = files::line_starts(text).collect();
        ShownFile {
            name,
            original: text,
            text: Cow::Borrowed(text),
            original_starts: starts.clone(),
            starts,
            kept: Vec::new(),
        }
    }

    /// The line of the original text that holds byte `at` (its range, without the
    /// line break).
    fn original_line(&self, at: usize) -> Range<usize> {
        let starts = &self.original_starts;
        let line = starts.partition_point(|&s| s <= at).saturating_sub(1);
        let end = (starts.get(line + 1)).map_or(self.original.len(), |&next| next - 1);
        starts[line]..end
    }

    /// The file with every line longer than [`LONG_LINE`] cut down to what surrounds the
    /// `points` (byte offsets) on it, or to its start when none is.
    fn shortened(&self, points: &[usize]) -> ShownFile<'s> {
        let text = self.original;
        let mut out = String::new();
        let mut kept: Vec<Kept> = Vec::new();
        let mut keep = |out: &mut String, r: Range<usize>| {
            let new = out.len();
            out.push_str(&text[r.clone()]);
            match kept.last_mut() {
                Some(k) if k.orig + k.len == r.start && k.new + k.len == new => k.len += r.len(),
                _ => kept.push(Kept {
                    orig: r.start,
                    new,
                    len: r.len(),
                }),
            }
        };
        let mut start = 0;
        while start <= text.len() {
            let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
            let next = (end + 1).min(text.len() + 1);
            if end - start <= LONG_LINE {
                keep(&mut out, start..next.min(text.len()));
            } else {
                let mut windows: Vec<Range<usize>> = points
                    .iter()
                    .filter(|&&p| start <= p && p <= end)
                    .map(|&p| p.saturating_sub(CONTEXT).max(start)..(p + CONTEXT).min(end))
                    .collect();
                if windows.is_empty() {
                    windows.push(start..start + 2 * CONTEXT);
                }
                let mut last = start;
                for w in merged(text, windows) {
                    if w.start > last {
                        out.push_str(ELLIPSIS);
                    }
                    keep(&mut out, w.clone());
                    last = w.end;
                }
                if last < end {
                    out.push_str(ELLIPSIS);
                }
                keep(&mut out, end..next.min(text.len()));
            }
            start = next;
        }
        ShownFile {
            name: self.name,
            original: self.original,
            starts: files::line_starts(&out).collect(),
            original_starts: self.original_starts.clone(),
            text: Cow::Owned(out),
            kept,
        }
    }

    /// Where byte `orig` of the original text is in the shown text.
    fn to_shown(&self, orig: usize) -> usize {
        self.translate(orig, |k| (k.orig, k.new))
    }

    /// Where byte `new` of the shown text is in the original text.
    fn to_original(&self, new: usize) -> usize {
        self.translate(new, |k| (k.new, k.orig))
    }

    /// Byte `at` of one text in the other, by the kept pieces' starts in the first and in
    /// the second (`ends`).
    fn translate(&self, at: usize, ends: impl Fn(&Kept) -> (usize, usize)) -> usize {
        if self.kept.is_empty() {
            return at;
        }
        let i = (self.kept)
            .partition_point(|k| ends(k).0 <= at)
            .saturating_sub(1);
        let k = &self.kept[i];
        let (from, to) = ends(k);
        to + at.saturating_sub(from).min(k.len)
    }
}

/// `windows` sorted, their ends on character boundaries of `text`, and those that overlap
/// or nearly touch made one.
fn merged(text: &str, mut windows: Vec<Range<usize>>) -> Vec<Range<usize>> {
    for w in &mut windows {
        w.end = w.end.min(text.len());
        while !text.is_char_boundary(w.start) {
            w.start -= 1;
        }
        while !text.is_char_boundary(w.end) {
            w.end += 1;
        }
    }
    windows.sort_by_key(|w| w.start);
    let mut out: Vec<Range<usize>> = Vec::new();
    for w in windows {
        match out.last_mut() {
            Some(l) if w.start <= l.end + ELLIPSIS.len() => l.end = l.end.max(w.end),
            _ => out.push(w),
        }
    }
    out
}

impl<'s> Shown<'s> {
    /// A copy whose files with a long line under a label are cut down, with `labels`
    /// moved to the same text there; `None` when no label is on a long line.
    fn shortened(&self, labels: &mut [cs::Label<usize>]) -> Option<Shown<'s>> {
        let long = |f: &ShownFile, at: usize| f.original_line(at).len() > LONG_LINE;
        let mut points: Vec<Vec<usize>> = vec![Vec::new(); self.files.len()];
        let mut any = false;
        for l in labels.iter() {
            let f = self.files.get(l.file_id)?;
            for at in [l.range.start, l.range.end] {
                any |= long(f, at);
                points[l.file_id].push(at);
            }
        }
        if !any {
            return None;
        }
        let mut shown = self.clone();
        for (i, ps) in points.iter().enumerate() {
            if ps.iter().any(|&at| long(&self.files[i], at)) {
                shown.files[i] = self.files[i].shortened(ps);
            }
        }
        for l in labels.iter_mut() {
            let f = &shown.files[l.file_id];
            l.range = f.to_shown(l.range.start)..f.to_shown(l.range.end);
        }
        Some(shown)
    }

    fn file(&self, id: usize) -> Result<&ShownFile<'s>, files::Error> {
        self.files.get(id).ok_or(files::Error::FileMissing)
    }
}

impl<'a, 's: 'a> Files<'a> for Shown<'s> {
    type FileId = usize;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: usize) -> Result<&'a str, files::Error> {
        Ok(self.file(id)?.name)
    }

    fn source(&'a self, id: usize) -> Result<&'a str, files::Error> {
        Ok(&self.file(id)?.text)
    }

    fn line_index(&'a self, id: usize, byte_index: usize) -> Result<usize, files::Error> {
        let f = self.file(id)?;
        Ok(f.starts
            .partition_point(|&s| s <= byte_index)
            .saturating_sub(1))
    }

    fn line_range(&'a self, id: usize, line_index: usize) -> Result<Range<usize>, files::Error> {
        let f = self.file(id)?;
        let max = f.starts.len() - 1;
        let start = *f.starts.get(line_index).ok_or(files::Error::LineTooLarge {
            given: line_index,
            max,
        })?;
        let end = f
            .starts
            .get(line_index + 1)
            .copied()
            .unwrap_or(f.text.len());
        Ok(start..end)
    }

    /// The column in the original text, in characters from 1, also on a line shown in part.
    fn column_number(
        &'a self,
        id: usize,
        _line_index: usize,
        byte_index: usize,
    ) -> Result<usize, files::Error> {
        let f = self.file(id)?;
        let at = f.to_original(byte_index).min(f.original.len());
        let line = f.original_line(at);
        Ok(files::column_index(f.original, line.start..at, at) + 1)
    }
}
