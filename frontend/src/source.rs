//! Source files and spans.

use std::ops::Range;

/// A file of a [`SourceMap`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct FileId(u32);

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
    /// The IR's form of this span (file number and byte range).
    pub fn to_loc(self) -> durin_ir::Loc {
        durin_ir::Loc {
            file: self.file.0,
            start: self.start,
            end: self.end,
        }
    }

    /// The span an IR location stands for.
    pub fn from_loc(loc: durin_ir::Loc) -> Span {
        Span {
            file: FileId(loc.file),
            start: loc.start,
            end: loc.end,
        }
    }

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

/// The files of one program: names and text.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<(String, String)>,
}

impl SourceMap {
    /// An empty map.
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    /// Adds a file. Files larger than 4 GiB are cut at 4 GiB, since spans are 32-bit.
    pub fn add(&mut self, name: &str, text: &str) -> FileId {
        let mut text = text;
        if text.len() > u32::MAX as usize {
            let mut cut = u32::MAX as usize;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text = &text[..cut];
        }
        self.files.push((name.to_string(), text.to_string()));
        FileId(self.files.len() as u32 - 1)
    }

    /// The name of `file`.
    pub fn name(&self, file: FileId) -> &str {
        &self.files[file.0 as usize].0
    }

    /// The text of `file`.
    pub fn text(&self, file: FileId) -> &str {
        &self.files[file.0 as usize].1
    }

    /// The text `span` covers.
    pub fn slice(&self, span: Span) -> &str {
        self.text(span.file).get(span.range()).unwrap_or("")
    }

    /// The 1-based line and column (in characters) where `span` starts.
    pub fn line_column(&self, span: Span) -> (usize, usize) {
        let text = self.text(span.file);
        let at = (span.start as usize).min(text.len());
        let before = &text[..floor_boundary(text, at)];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        (line, col)
    }

    pub(crate) fn index(file: FileId) -> usize {
        file.0 as usize
    }

    pub(crate) fn files(&self) -> &[(String, String)] {
        &self.files
    }
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}
