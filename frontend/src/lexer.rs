//! The lexer: source text to tokens, with every problem reported as a diagnostic.
//!
//! Lexical rules follow Artic: `//` and `/* */` comments (not nested); identifiers of ASCII
//! letters, digits and `_`; integers in bases 10, 16 (`0x`), 8 (`0o`) and 2 (`0b`); decimal
//! numbers with a fraction or an exponent are floats; a number right after `.` is an integer
//! (so `t.0.1` indexes twice); characters are one byte; strings are bytes, and adjacent
//! strings (separated by white space) are joined; escapes `\t \n \a \b \r \v \f \\ \' \"`,
//! `\xHH` and octal `\ooo`. A stray character is reported and skipped, so one typo does not
//! hide the rest of the file.

use crate::diag::Diagnostic;
use crate::source::{FileId, Span};
use crate::token::{Literal, Token, TokenKind, PUNCTUATION, PUNCTUATION_FROM};

/// Splits `src` (the text of `file`) into tokens ending with [`TokenKind::Eof`]; problems
/// go to `diags`.
pub fn lex(file: FileId, src: &str, diags: &mut Vec<Diagnostic>) -> Vec<Token> {
    let mut lx = Lexer {
        file,
        src,
        b: src.as_bytes(),
        pos: 0,
        diags,
        // About one token in four bytes (4.5 in the prelude and AnyDSL's libraries, with
        // their comments), so the vector seldom grows: growing a large one copies it into
        // fresh memory.
        toks: Vec::with_capacity(src.len() / 4 + 16),
    };
    if src.starts_with('\u{feff}') {
        lx.pos = 3;
    }
    lx.run();
    lx.toks
}

struct Lexer<'a, 'd> {
    file: FileId,
    src: &'a str,
    b: &'a [u8],
    pos: usize,
    diags: &'d mut Vec<Diagnostic>,
    toks: Vec<Token>,
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

impl Lexer<'_, '_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn peek_at(&self, k: usize) -> Option<u8> {
        self.b.get(self.pos + k).copied()
    }

    fn span(&self, start: usize) -> Span {
        Span::new(self.file, start, self.pos)
    }

    fn error(&mut self, start: usize, end: usize, message: impl Into<String>) {
        self.diags
            .push(Diagnostic::error(Span::new(self.file, start, end), message));
    }

    fn push(&mut self, kind: TokenKind, start: usize) {
        let span = self.span(start);
        self.toks.push(Token { kind, span });
    }

    /// The next character (not byte), for messages and for skipping.
    fn current_char(&self) -> char {
        self.src[self.pos..].chars().next().unwrap_or('\0')
    }

    fn run(&mut self) {
        while self.skip_trivia() {
            let start = self.pos;
            let Some(c) = self.peek() else { break };
            if is_ident_start(c) {
                while self.peek().is_some_and(is_ident_char) {
                    self.pos += 1;
                }
                let word = &self.src[start..self.pos];
                let kind = match word {
                    "true" => TokenKind::Lit(Literal::Bool(true)),
                    "false" => TokenKind::Lit(Literal::Bool(false)),
                    _ => TokenKind::keyword(word).unwrap_or_else(|| TokenKind::Ident(word.into())),
                };
                self.push(kind, start);
            } else if c.is_ascii_digit() {
                let after_dot = matches!(self.toks.last(), Some(t) if t.kind == TokenKind::Dot);
                let lit = self.number(after_dot);
                self.push(TokenKind::Lit(lit), start);
            } else if c == b'\'' {
                if let Some(ch) = self.char_literal() {
                    self.push(TokenKind::Lit(Literal::Char(ch)), start);
                }
            } else if c == b'"' {
                if let Some(s) = self.string_literal() {
                    self.push(TokenKind::Lit(Literal::Str(s)), start);
                }
            } else if self.b[self.pos..].starts_with(b"..")
                && !self.b[self.pos..].starts_with(b"...")
            {
                // `..` is no token (`...` and `.` are).
                self.pos += 2;
                self.error(start, self.pos, "unknown token `..`");
            } else if let Some((p, make)) = PUNCTUATION
                [PUNCTUATION_FROM[c as usize] as usize..PUNCTUATION_FROM[c as usize + 1] as usize]
                .iter()
                .find(|(p, _)| self.b[self.pos..].starts_with(p.as_bytes()))
            {
                self.pos += p.len();
                self.push(make(), start);
            } else {
                let ch = self.current_char();
                self.pos += ch.len_utf8();
                self.error(
                    start,
                    self.pos,
                    format!("unknown character `{}`", ch.escape_default()),
                );
            }
        }
        let end = self.b.len();
        self.toks.push(Token {
            kind: TokenKind::Eof,
            span: Span::new(self.file, end, end),
        });
    }

    /// Skips white space and comments; false at the end of the input.
    fn skip_trivia(&mut self) -> bool {
        loop {
            match self.peek() {
                None => return false,
                Some(c) if c.is_ascii_whitespace() => self.pos += 1,
                Some(b'/') if self.peek_at(1) == Some(b'/') => {
                    while self.peek().is_some_and(|c| c != b'\n') {
                        self.pos += 1;
                    }
                }
                Some(b'/') if self.peek_at(1) == Some(b'*') => {
                    let start = self.pos;
                    match self.src[self.pos + 2..].find("*/") {
                        Some(i) => self.pos += 2 + i + 2,
                        None => {
                            self.pos = self.b.len();
                            self.error(start, start + 2, "unterminated comment");
                            return false;
                        }
                    }
                }
                Some(_) => return true,
            }
        }
    }

    fn digits(&mut self, base: u32) -> usize {
        let start = self.pos;
        while self.peek().is_some_and(|c| {
            (c as char).is_digit(base.max(10)) || (base == 16 && c.is_ascii_hexdigit())
        }) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self, int_only: bool) -> Literal {
        let start = self.pos;
        let base = match (self.peek(), self.peek_at(1)) {
            (Some(b'0'), Some(b'x')) => 16,
            (Some(b'0'), Some(b'o')) => 8,
            (Some(b'0'), Some(b'b')) => 2,
            _ => 10,
        };
        if base != 10 {
            self.pos += 2;
            let digits_start = self.pos;
            if self.digits(base) == 0 {
                self.error(start, self.pos, "expected digits after the base prefix");
                return Literal::Int(0);
            }
            let text = &self.src[digits_start..self.pos];
            return match u64::from_str_radix(text, base) {
                Ok(v) => Literal::Int(v),
                Err(_) if text.chars().any(|c| !c.is_digit(base)) => {
                    self.error(
                        start,
                        self.pos,
                        format!(
                            "invalid digit in base-{base} literal `{}`",
                            &self.src[start..self.pos]
                        ),
                    );
                    Literal::Int(0)
                }
                Err(_) => {
                    self.error(start, self.pos, "integer literal does not fit in 64 bits");
                    Literal::Int(0)
                }
            };
        }
        self.digits(10);
        let mut float = false;
        if !int_only {
            if self.peek() == Some(b'.') && self.peek_at(1) != Some(b'.') {
                float = true;
                self.pos += 1;
                self.digits(10);
            }
            if self.peek() == Some(b'e') || self.peek() == Some(b'E') {
                let save = self.pos;
                self.pos += 1;
                if matches!(self.peek(), Some(b'+' | b'-')) {
                    self.pos += 1;
                }
                if self.digits(10) == 0 {
                    self.error(save, self.pos, "expected digits in the exponent");
                }
                float = true;
            }
        }
        let text = &self.src[start..self.pos];
        if float {
            Literal::Float(text.parse().unwrap_or(0.0))
        } else {
            match text.parse() {
                Ok(v) => Literal::Int(v),
                Err(_) => {
                    self.error(start, self.pos, "integer literal does not fit in 64 bits");
                    Literal::Int(0)
                }
            }
        }
    }

    /// One character of a character or string literal, escapes resolved; `None` (after a
    /// diagnostic) for an invalid escape. The caller checks for the end of the input.
    fn escaped(&mut self, out: &mut Vec<u8>) {
        let start = self.pos;
        if self.peek() != Some(b'\\') {
            let ch = self.current_char();
            self.pos += ch.len_utf8();
            let mut buf = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            return;
        }
        self.pos += 1;
        let Some(c) = self.peek() else {
            self.error(start, self.pos, "unfinished escape sequence");
            return;
        };
        let simple = match c {
            b't' => Some(b'\t'),
            b'n' => Some(b'\n'),
            b'a' => Some(0x07),
            b'b' => Some(0x08),
            b'r' => Some(b'\r'),
            b'v' => Some(0x0b),
            b'f' => Some(0x0c),
            b'\\' => Some(b'\\'),
            b'\'' => Some(b'\''),
            b'"' => Some(b'"'),
            _ => None,
        };
        if let Some(v) = simple {
            self.pos += 1;
            out.push(v);
            return;
        }
        let (base, max) = match c {
            b'x' => {
                self.pos += 1;
                (16, 2)
            }
            b'0'..=b'7' => (8, 3),
            _ => {
                let ch = self.current_char();
                self.pos += ch.len_utf8();
                self.error(
                    start,
                    self.pos,
                    format!("unknown escape sequence `\\{}`", ch.escape_default()),
                );
                return;
            }
        };
        let digits_start = self.pos;
        while self.pos - digits_start < max
            && self.peek().is_some_and(|c| (c as char).is_digit(base))
        {
            self.pos += 1;
        }
        let text = &self.src[digits_start..self.pos];
        match u32::from_str_radix(text, base) {
            Ok(v) if v < 256 => out.push(v as u8),
            Ok(_) => self.error(
                start,
                self.pos,
                format!(
                    "escape sequence `{}` is out of range (at most 255)",
                    &self.src[start..self.pos]
                ),
            ),
            Err(_) => self.error(
                start,
                self.pos.max(start + 2),
                "expected hexadecimal digits after `\\x`",
            ),
        }
    }

    fn char_literal(&mut self) -> Option<u8> {
        let start = self.pos;
        self.pos += 1;
        if self.peek().is_none() || self.peek() == Some(b'\n') || self.peek() == Some(b'\'') {
            let message = if self.peek() == Some(b'\'') {
                "empty character literal"
            } else {
                "unterminated character literal"
            };
            if self.peek() == Some(b'\'') {
                self.pos += 1;
            }
            self.error(start, self.pos, message);
            return None;
        }
        let mut bytes = Vec::new();
        self.escaped(&mut bytes);
        if self.peek() != Some(b'\'') {
            // `'ab'`: one error for the whole literal, not a cascade.
            let rest = &self.src[self.pos..];
            let line = &rest[..rest.find('\n').unwrap_or(rest.len())];
            if let Some(i) = line.find('\'').filter(|&i| i <= 16) {
                self.pos += i + 1;
                self.diags.push(
                    Diagnostic::error(
                        self.span(start),
                        "character literal holds more than one character",
                    )
                    .with_note("use a string (delimited by `\"`) instead"),
                );
            } else {
                self.error(start, self.pos, "unterminated character literal");
            }
            return None;
        }
        self.pos += 1;
        if bytes.len() > 1 {
            self.diags.push(
                Diagnostic::error(self.span(start), "character does not fit in one byte")
                    .with_note("use a string (delimited by `\"`) instead"),
            );
            return None;
        }
        Some(bytes.first().copied().unwrap_or(0))
    }

    fn string_literal(&mut self) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        loop {
            let start = self.pos;
            self.pos += 1;
            while self.peek().is_some_and(|c| c != b'"') {
                self.escaped(&mut out);
            }
            if self.peek().is_none() {
                self.error(start, start + 1, "unterminated string literal");
                return None;
            }
            self.pos += 1;
            // Adjacent strings, separated only by white space, are one literal.
            let save = self.pos;
            while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
                self.pos += 1;
            }
            if self.peek() != Some(b'"') {
                self.pos = save;
                return Some(out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::render;
    use crate::source::SourceMap;

    /// Lexes `src` and returns its tokens, one per line as `kind@start..end`, then the
    /// rendered diagnostics.
    fn lexed(src: &str) -> String {
        let mut sources = SourceMap::new();
        let file = sources.add("test.art", src);
        let mut diags = Vec::new();
        let toks = lex(file, src, &mut diags);
        let mut out: Vec<String> = toks
            .iter()
            .map(|t| {
                let kind = match &t.kind {
                    TokenKind::Lit(l) => format!("lit {l}"),
                    TokenKind::Ident(s) => format!("ident {s}"),
                    k => k.describe(),
                };
                format!("{kind}@{}..{}", t.span.start, t.span.end)
            })
            .collect();
        let rendered = render(&sources, &diags);
        if !rendered.is_empty() {
            out.push(rendered.trim_end().to_string());
        }
        out.join("\n")
    }

    fn check(src: &str, expected: &str) {
        assert_eq!(lexed(src), expected.trim(), "\n--- input\n{src}");
    }

    #[test]
    fn every_punctuation_token_lexes_whole_and_greedily() {
        for (p, make) in PUNCTUATION {
            // Alone, and between identifiers without spaces.
            let n = p.len();
            assert_eq!(lexed(p), format!("`{p}`@0..{n}\nend of file@{n}..{n}"));
            let src = format!("a{p}b");
            let toks = lexed(&src);
            let kinds: Vec<_> = toks
                .lines()
                .map(|l| l.rsplit_once('@').unwrap().0)
                .collect();
            assert_eq!(
                kinds,
                ["ident a", &make().describe(), "ident b", "end of file"],
                "{src}"
            );
        }
        assert_eq!(lexed("<<=<<<=<").lines().count(), 5);
    }

    #[test]
    fn keywords_identifiers_and_punctuation() {
        check(
            "fn @f(x: &mut i32) -> i32 { x += 1; *x }",
            r"
`fn`@0..2
`@`@3..4
ident f@4..5
`(`@5..6
ident x@6..7
`:`@7..8
`&`@9..10
`mut`@10..13
ident i32@14..17
`)`@17..18
`->`@19..21
ident i32@22..25
`{`@26..27
ident x@28..29
`+=`@30..32
lit 1@33..34
`;`@34..35
`*`@36..37
ident x@37..38
`}`@39..40
end of file@40..40",
        );
        check("a<<=b>>c...d::e", "ident a@0..1\n`<<=`@1..4\nident b@4..5\n`>>`@5..7\nident c@7..8\n`...`@8..11\nident d@11..12\n`::`@12..14\nident e@14..15\nend of file@15..15");
    }

    #[test]
    fn numbers_in_every_base() {
        check(
            "0x1F 0o17 0b101 42 1.5 2e3 7.25e-2",
            r"
lit 31@0..4
lit 15@5..9
lit 5@10..15
lit 42@16..18
lit 1.5@19..22
lit 2000.0@23..26
lit 0.0725@27..34
end of file@34..34",
        );
    }

    #[test]
    fn tuple_indices_after_a_dot_are_integers() {
        check(
            "t.0.1",
            "ident t@0..1\n`.`@1..2\nlit 0@2..3\n`.`@3..4\nlit 1@4..5\nend of file@5..5",
        );
    }

    #[test]
    fn characters_and_strings_with_escapes() {
        check(
            r"'a' '\n' '\x41' '\101' '\0'",
            r"
lit 'a'@0..3
lit '\n'@4..8
lit 'A'@9..15
lit 'A'@16..22
lit '\u{0}'@23..27
end of file@27..27",
        );
        // `\t` in the source is a tab in the literal; the two strings are joined.
        check(
            "\"ab\\t\" \"cd\"",
            "lit \"ab\\tcd\"@0..11\nend of file@11..11",
        );
    }

    #[test]
    fn adjacent_strings_are_joined() {
        check("\"ab\"  \"cd\"", "lit \"abcd\"@0..10\nend of file@10..10");
    }

    #[test]
    fn comments_are_skipped() {
        check(
            "a // b c\n/* d\n e */ f",
            "ident a@0..1\nident f@20..21\nend of file@21..21",
        );
    }

    #[test]
    fn errors_are_reported_and_lexing_goes_on() {
        check(
            "let x = 0b102 ~ 'ab' 99999999999999999999;",
            r#"
`let`@0..3
ident x@4..5
`=`@6..7
lit 0@8..13
lit 0@21..41
`;`@41..42
end of file@42..42
error: invalid digit in base-2 literal `0b102`
  ┌─ test.art:1:9
  │
1 │ let x = 0b102 ~ 'ab' 99999999999999999999;
  │         ^^^^^

error: unknown character `~`
  ┌─ test.art:1:15
  │
1 │ let x = 0b102 ~ 'ab' 99999999999999999999;
  │               ^

error: character literal holds more than one character
  ┌─ test.art:1:17
  │
1 │ let x = 0b102 ~ 'ab' 99999999999999999999;
  │                 ^^^^
  │
  = use a string (delimited by `"`) instead

error: integer literal does not fit in 64 bits
  ┌─ test.art:1:22
  │
1 │ let x = 0b102 ~ 'ab' 99999999999999999999;
  │                      ^^^^^^^^^^^^^^^^^^^^"#,
        );
    }

    #[test]
    fn unterminated_comment_and_string() {
        check("/* x", "end of file@4..4\nerror: unterminated comment\n  ┌─ test.art:1:1\n  │\n1 │ /* x\n  │ ^^");
        check("\"abc", "end of file@4..4\nerror: unterminated string literal\n  ┌─ test.art:1:1\n  │\n1 │ \"abc\n  │ ^");
    }
}
