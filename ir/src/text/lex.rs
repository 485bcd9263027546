//! The lexer of the text form.

/// What a token is.
#[derive(Clone, PartialEq, Debug)]
pub(crate) enum Tok {
    /// `%name`.
    Local(String),
    /// `@name`.
    Global(String),
    /// A keyword, type name or operation name.
    Ident(String),
    /// A number as written (sign, digits, fraction, exponent, or `0x` hex digits).
    Number(String),
    /// One of `( ) { } [ ] , : = *`.
    Punct(char),
    /// The end of the input.
    Eof,
}

impl Tok {
    pub(crate) fn describe(&self) -> String {
        match self {
            Tok::Local(n) => format!("`%{n}`"),
            Tok::Global(n) => format!("`@{n}`"),
            Tok::Ident(n) => format!("`{n}`"),
            Tok::Number(n) => format!("number `{n}`"),
            Tok::Punct(c) => format!("`{c}`"),
            Tok::Eof => "end of input".to_string(),
        }
    }
}

fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'.'
}

/// Splits `src` into tokens with their byte offsets; an error is `(offset, message)`.
pub(crate) fn lex(src: &str) -> Result<Vec<(Tok, usize)>, (usize, String)> {
    let b = src.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    let take_name = |mut j: usize| {
        while j < b.len() && is_name_char(b[j]) {
            j += 1;
        }
        j
    };
    while i < b.len() {
        let c = b[i];
        let start = i;
        match c {
            b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            b';' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'%' | b'@' => {
                let end = take_name(i + 1);
                if end == i + 1 {
                    return Err((i, format!("expected a name after `{}`", c as char)));
                }
                let name = src[i + 1..end].to_string();
                toks.push((
                    if c == b'%' {
                        Tok::Local(name)
                    } else {
                        Tok::Global(name)
                    },
                    start,
                ));
                i = end;
            }
            b'(' | b')' | b'{' | b'}' | b'[' | b']' | b',' | b':' | b'=' | b'*' => {
                toks.push((Tok::Punct(c as char), start));
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let mut j = i + 1;
                if c == b'-' && (j >= b.len() || !b[j].is_ascii_digit()) {
                    return Err((i, "expected a digit after `-`".into()));
                }
                while j < b.len() {
                    let d = b[j];
                    let exp_sign = (d == b'-' || d == b'+')
                        && matches!(b[j - 1], b'e' | b'E')
                        && !src[start..j].contains(['x', 'X']);
                    if d.is_ascii_alphanumeric() || d == b'.' || exp_sign {
                        j += 1;
                    } else {
                        break;
                    }
                }
                toks.push((Tok::Number(src[i..j].to_string()), start));
                i = j;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let end = take_name(i);
                toks.push((Tok::Ident(src[i..end].to_string()), start));
                i = end;
            }
            _ => {
                let ch = src[i..].chars().next().unwrap_or('?');
                return Err((i, format!("unexpected character `{}`", ch.escape_debug())));
            }
        }
    }
    toks.push((Tok::Eof, b.len()));
    Ok(toks)
}
