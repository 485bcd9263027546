//! The device's `vprintf` in the interpreter: C's `printf` conversions over an argument
//! buffer laid out as CUDA lays it out (each value at a multiple of its size; integers of 4
//! bytes, or 8 with `l`/`ll`; floating point as 8-byte doubles; strings as pointers).

use super::format_general;
use super::memory::{Memory, Pointer, Shape};
use super::Value;

/// One conversion: its flags, width, precision and letter.
struct Spec {
    left: bool,
    zero: bool,
    plus: bool,
    space: bool,
    alt: bool,
    width: usize,
    precision: Option<usize>,
    conv: u8,
}

/// Formats `fmt` with the values at `args`; the text and the number of values read.
pub(super) fn vprintf(
    memory: &Memory,
    fmt: &[u8],
    args: &Pointer,
) -> Result<(Vec<u8>, i32), String> {
    let mut out = Vec::new();
    let mut offset = 0i64;
    let mut count = 0;
    // The next value: a number of 4 or 8 bytes, or (`0`) a pointer.
    let mut next = |size: u8| -> Result<Value, String> {
        let (shape, size) = match size {
            0 => (Shape::Ref, 8),
            n => (Shape::Bits(n), n as i64),
        };
        offset = (offset + size - 1) / size * size;
        let p = Pointer {
            offset: args.offset + offset,
            ..args.clone()
        };
        offset += size;
        count += 1;
        memory.load(&shape, &p)
    };
    let bits = |v: Value| match v {
        Value::Bits(b) => Ok(b),
        other => Err(format!(
            "`vprintf` read {other:?} where it expected a number"
        )),
    };
    let mut i = 0;
    while i < fmt.len() {
        if fmt[i] != b'%' {
            out.push(fmt[i]);
            i += 1;
            continue;
        }
        i += 1;
        let mut s = Spec {
            left: false,
            zero: false,
            plus: false,
            space: false,
            alt: false,
            width: 0,
            precision: None,
            conv: 0,
        };
        while let Some(&c) = fmt.get(i) {
            match c {
                b'-' => s.left = true,
                b'0' => s.zero = true,
                b'+' => s.plus = true,
                b' ' => s.space = true,
                b'#' => s.alt = true,
                _ => break,
            }
            i += 1;
        }
        let mut number = |i: &mut usize| -> Result<Option<usize>, String> {
            if fmt.get(*i) == Some(&b'*') {
                *i += 1;
                return Ok(Some(bits(next(4)?)? as u32 as i32 as usize));
            }
            let start = *i;
            while fmt.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            Ok(std::str::from_utf8(&fmt[start..*i])
                .ok()
                .and_then(|t| t.parse().ok()))
        };
        s.width = number(&mut i)?.unwrap_or(0);
        if fmt.get(i) == Some(&b'.') {
            i += 1;
            s.precision = Some(number(&mut i)?.unwrap_or(0));
        }
        let mut long = false;
        while let Some(&c) = fmt.get(i).filter(|c| b"hlLqjzt".contains(c)) {
            long |= c != b'h';
            i += 1;
        }
        let Some(&conv) = fmt.get(i) else {
            return Err("a `vprintf` format that ends inside a conversion".into());
        };
        i += 1;
        s.conv = conv;
        let body = match conv {
            b'%' => {
                out.push(b'%');
                continue;
            }
            b'd' | b'i' => {
                let v = bits(next(if long { 8 } else { 4 })?)?;
                let v = if long {
                    v as i64
                } else {
                    v as u32 as i32 as i64
                };
                (
                    sign(v < 0, &s),
                    digits(v.unsigned_abs().to_string(), s.precision),
                )
            }
            b'u' | b'x' | b'X' | b'o' => {
                let v = bits(next(if long { 8 } else { 4 })?)?;
                let v = if long { v } else { v as u32 as u64 };
                let text = match conv {
                    b'u' => v.to_string(),
                    b'x' => format!("{v:x}"),
                    b'X' => format!("{v:X}"),
                    _ => format!("{v:o}"),
                };
                let prefix = match (s.alt && v != 0, conv) {
                    (true, b'x') => "0x",
                    (true, b'X') => "0X",
                    (true, b'o') => "0",
                    _ => "",
                };
                (prefix.to_string(), digits(text, s.precision))
            }
            b'c' => (String::new(), char::from(bits(next(4)?)? as u8).to_string()),
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' => {
                let x = f64::from_bits(bits(next(8)?)?);
                let p = s.precision.unwrap_or(6);
                let a = x.abs();
                let text = if !a.is_finite() {
                    if a.is_nan() { "nan" } else { "inf" }.to_string()
                } else {
                    match conv.to_ascii_lowercase() {
                        b'f' => format!("{a:.p$}"),
                        b'e' => scientific(a, p),
                        _ => format_general(a, if p == 0 { 1 } else { p }),
                    }
                };
                let text = if conv.is_ascii_uppercase() {
                    text.to_uppercase()
                } else {
                    text
                };
                (sign(x.is_sign_negative() && !x.is_nan(), &s), text)
            }
            b's' => {
                let text = match next(0)? {
                    Value::Ptr(p) => memory.c_string(&p)?,
                    Value::Bits(0) => b"(null)".to_vec(),
                    other => return Err(format!("`vprintf`'s %s read {other:?}, not a string")),
                };
                let text = String::from_utf8_lossy(&text).into_owned();
                let text = match s.precision {
                    Some(p) => text.chars().take(p).collect(),
                    None => text,
                };
                (String::new(), text)
            }
            other => {
                return Err(format!(
                    "`vprintf` has no conversion `%{}`",
                    char::from(other).escape_default()
                ))
            }
        };
        pad(&mut out, &s, body);
    }
    Ok((out, count))
}

/// The sign a number prints with: `-`, or what the `+` and space flags ask for.
fn sign(negative: bool, s: &Spec) -> String {
    let t = if negative {
        "-"
    } else if s.plus {
        "+"
    } else if s.space {
        " "
    } else {
        ""
    };
    t.to_string()
}

/// At least `precision` digits (zeros in front).
fn digits(text: String, precision: Option<usize>) -> String {
    match precision {
        Some(p) if text.len() < p => format!("{}{text}", "0".repeat(p - text.len())),
        Some(0) if text == "0" => String::new(),
        _ => text,
    }
}

/// `x` (not negative) as C's `%.{p}e`: a two-digit exponent at least.
fn scientific(x: f64, p: usize) -> String {
    let t = format!("{x:.p$e}");
    let (m, e) = t.split_once('e').unwrap_or((&t, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

/// Writes `(sign or prefix, digits)` padded to the conversion's width.
fn pad(out: &mut Vec<u8>, s: &Spec, (sign, body): (String, String)) {
    let len = sign.len() + body.len();
    let fill = s.width.saturating_sub(len);
    let numeric = !matches!(s.conv, b's' | b'c');
    // C ignores `0` with `-`, and with a precision for integers.
    let zeros =
        s.zero && !s.left && numeric && !(s.precision.is_some() && b"diuxXo".contains(&s.conv));
    if s.left {
        out.extend_from_slice(sign.as_bytes());
        out.extend_from_slice(body.as_bytes());
        out.extend(std::iter::repeat_n(b' ', fill));
    } else if zeros {
        out.extend_from_slice(sign.as_bytes());
        out.extend(std::iter::repeat_n(b'0', fill));
        out.extend_from_slice(body.as_bytes());
    } else {
        out.extend(std::iter::repeat_n(b' ', fill));
        out.extend_from_slice(sign.as_bytes());
        out.extend_from_slice(body.as_bytes());
    }
}
