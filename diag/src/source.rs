//! Source files and spans.

use std::borrow::Cow;
use std::ops::Range;

/// A file of a [`SourceMap`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct FileId(u32);

impl FileId {
    /// The file's number in its map (the order of [`SourceMap::add`]).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A byte range in one file.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Span {
    /// The file.
    pub file: FileId,
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// An empty span at the start of the first file, for what the compiler makes up.
    pub const NONE: Span = Span {
        file: FileId(0),
        start: 0,
        end: 0,
    };

    /// The span from `start` to `end` in `file`.
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        Span {
            file,
            start: start as u32,
            end: end as u32,
        }
    }

    /// The byte range.
    pub fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }

    /// The smallest span covering `self` and `other` (same file).
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// One file: its name, its text, and whether it belongs to a library the compiler brings
/// (the prelude) rather than to the program.
#[derive(Clone, Debug)]
struct File {
    name: String,
    text: Cow<'static, str>,
    library: bool,
}

/// The files of one program: names and text.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<File>,
}

impl SourceMap {
    /// An empty map.
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    /// Adds a file of the program. Files larger than 4 GiB are cut at 4 GiB, since spans
    /// are 32-bit.
    pub fn add(&mut self, name: &str, text: &str) -> FileId {
        self.push(name, Cow::Owned(text.to_string()), false)
    }

    /// Adds a file of a library the compiler brings (the prelude): places in it are named
    /// only when no place in the program is at hand. A library's text is the compiler's
    /// own, kept without a copy.
    pub fn add_library(&mut self, name: &str, text: &'static str) -> FileId {
        self.push(name, Cow::Borrowed(text), true)
    }

    fn push(&mut self, name: &str, mut text: Cow<'static, str>, library: bool) -> FileId {
        if text.len() > u32::MAX as usize {
            let mut cut = u32::MAX as usize;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text = Cow::Owned(text[..cut].to_string());
        }
        self.files.push(File {
            name: name.to_string(),
            text,
            library,
        });
        FileId(self.files.len() as u32 - 1)
    }

    fn file(&self, file: FileId) -> Option<&File> {
        self.files.get(file.index())
    }

    /// The file of number `index` ([`FileId::index`]), if the map has it.
    pub fn file_id(&self, index: usize) -> Option<FileId> {
        (index < self.files.len()).then_some(FileId(index as u32))
    }

    /// The name of `file` (empty for a file not in this map).
    pub fn name(&self, file: FileId) -> &str {
        self.file(file).map_or("", |f| &f.name)
    }

    /// The text of `file` (empty for a file not in this map).
    pub fn text(&self, file: FileId) -> &str {
        self.file(file).map_or("", |f| &f.text)
    }

    /// Whether `file` belongs to a library the compiler brings (see [`Self::add_library`]).
    pub fn is_library(&self, file: FileId) -> bool {
        self.file(file).is_some_and(|f| f.library)
    }

    /// For a place in a library's code that was specialized for the calls `expanded_from`
    /// (innermost first): the innermost of them in the program's own files. `None` for a
    /// place in the program's files.
    pub fn program_call(&self, place: Option<Span>, expanded_from: &[Span]) -> Option<Span> {
        if !place.is_some_and(|p| self.is_library(p.file)) {
            return None;
        }
        expanded_from
            .iter()
            .copied()
            .find(|s| !self.is_library(s.file))
    }

    /// The place `span` in words, as [`Self::place`]; in library code specialized for a
    /// call of the program (`expanded_from`, innermost first), the program's call first,
    /// then the library's place: `prog.art:9:5 (in <prelude>/image.art:53:46, the
    /// library's code for this call)`.
    pub fn place_in_program(&self, span: Option<Span>, expanded_from: &[Span]) -> String {
        let place = self.place(span);
        match self.program_call(span, expanded_from) {
            Some(call) => format!(
                "{} (in {place}, the library's code for this call)",
                self.place(Some(call))
            ),
            None => place,
        }
    }

    /// The text `span` covers.
    pub fn slice(&self, span: Span) -> &str {
        self.text(span.file).get(span.range()).unwrap_or("")
    }

    /// The 1-based line and column (in characters) where `span` starts.
    pub fn line_column(&self, span: Span) -> (usize, usize) {
        let text = self.text(span.file);
        let mut at = (span.start as usize).min(text.len());
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let before = &text[..at];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        (line, col)
    }

    /// `file:line:column` of `span`, or `<unknown place>` without one: the short form of a
    /// place, for one-line reports and run-time messages.
    pub fn place(&self, span: Option<Span>) -> String {
        match span {
            Some(s) => {
                let (line, col) = self.line_column(s);
                format!("{}:{line}:{col}", self.name(s.file))
            }
            None => "<unknown place>".to_string(),
        }
    }

    /// The files in order: name and text.
    pub fn files(&self) -> impl Iterator<Item = (&str, &str)> {
        self.files.iter().map(|f| (f.name.as_str(), &*f.text))
    }
}
