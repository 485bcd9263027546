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
    /// A byte string `b"..."`, its escapes (`\\`, `\"`, `\n`, `\t`, `\xHH`) resolved.
    Bytes(Vec<u8>),
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
            Tok::Bytes(b) => format!("a byte string of {} bytes", b.len()),
            Tok::Punct(c) => format!("`{c}`"),
            Tok::Eof => "end of input".to_string(),
        }
    }
}

fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'.'
}

/// The byte string whose text starts at `i` (after `b"`): its bytes and the offset after
/// the closing quote. Bytes other than a quote, a backslash and control characters stand
/// for themselves.
fn byte_string(b: &[u8], mut i: usize) -> Result<(Vec<u8>, usize), (usize, String)> {
    let start = i - 2;
    let mut out = Vec::new();
    loop {
        match b.get(i) {
            None | Some(b'\n') => {
                return Err((start, "byte string without its closing `\"`".into()))
            }
            Some(b'"') => return Ok((out, i + 1)),
            Some(b'\\') => {
                let (byte, len) = match b.get(i + 1) {
                    Some(b'\\') => (b'\\', 2),
                    Some(b'"') => (b'"', 2),
                    Some(b'n') => (b'\n', 2),
                    Some(b't') => (b'\t', 2),
                    Some(b'x') => {
                        let hex = (b.get(i + 2..i + 4))
                            .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
                            .and_then(|h| std::str::from_utf8(h).ok());
                        match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                            Some(v) => (v, 4),
                            None => return Err((i, "expected two hex digits after `\\x`".into())),
                        }
                    }
                    _ => return Err((
                        i,
                        "unknown escape in a byte string (`\\\\`, `\\\"`, `\\n`, `\\t` or `\\xHH`)"
                            .into(),
                    )),
                };
                out.push(byte);
                i += len;
            }
            Some(&c) if c < 0x20 || c == 0x7f => {
                return Err((
                    i,
                    format!(
                        "control character {c:#04x} in a byte string: write it as `\\x{c:02x}`"
                    ),
                ))
            }
            Some(&c) => {
                out.push(c);
                i += 1;
            }
        }
    }
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
            b'b' if b.get(i + 1) == Some(&b'"') => {
                let (bytes, end) = byte_string(b, i + 2)?;
                toks.push((Tok::Bytes(bytes), start));
                i = end;
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
