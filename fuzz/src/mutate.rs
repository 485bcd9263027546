//! Mutations of program and IR text: on tokens, on lines and on bytes.

use crate::rng::Rng;

/// Splits text into tokens whose concatenation is the text: identifiers and numbers, string
/// and character literals, runs of white space, and single other bytes.
pub fn tokens(text: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
        let end = if word(c) {
            i + text[i..].iter().take_while(|&&b| word(b)).count()
        } else if c.is_ascii_whitespace() {
            i + text[i..]
                .iter()
                .take_while(|b| b.is_ascii_whitespace())
                .count()
        } else if c == b'"' || c == b'\'' {
            // A literal up to its closing quote (or the end of the line).
            let mut j = i + 1;
            while j < text.len() && text[j] != c && text[j] != b'\n' {
                j += if text[j] == b'\\' { 2 } else { 1 };
            }
            (j + 1).min(text.len())
        } else {
            i + 1
        };
        out.push(&text[i..end]);
        i = end;
    }
    out
}

/// Tokens worth inserting anywhere: edge-case numbers, keywords, brackets and operators of
/// both the language and the IR text form.
pub const INTERESTING: &[&str] = &[
    "0",
    "1",
    "-1",
    "2147483647",
    "2147483648",
    "-2147483649",
    "9223372036854775807",
    "18446744073709551616",
    "255",
    "256",
    "1e308",
    "1e-320",
    "0.0",
    "-0.0",
    "nan",
    "0x",
    "0b2",
    "1_000",
    "fn",
    "fn @",
    "@",
    "?",
    "let",
    "mut",
    "if",
    "else",
    "while",
    "for",
    "in",
    "match",
    "=>",
    "return",
    "break",
    "continue",
    "struct",
    "enum",
    "static",
    "mod",
    "use",
    "as",
    "&",
    "&mut",
    "*",
    "[",
    "]",
    "(",
    ")",
    "{",
    "}",
    "<",
    ">",
    "|",
    "||",
    "::",
    ":",
    ";",
    ",",
    ".",
    "..",
    "=",
    "==",
    "+",
    "-",
    "/",
    "%",
    "<<",
    ">>",
    "!",
    "true",
    "false",
    "i8",
    "u8",
    "i32",
    "i64",
    "u64",
    "f16",
    "f32",
    "f64",
    "bool",
    "[i32]",
    "[i32 * 4]",
    "&[i32]",
    "()",
    "_",
    "#[export]",
    "#[import(cc = \"C\")]",
    "'a'",
    "\"s\"",
    "\"\\u{110000}\"",
    "simd[",
    "cn(mem)",
    "cont",
    "extern",
    "jump",
    "%mem",
    "mem",
    "ptr",
    "lea",
    "load",
    "store",
    "alloc",
    "slot",
    "extract",
    "insert",
    "tuple",
    "select",
    "conv",
    "bitcast",
    "add",
    "div",
    ":i64",
    ":i32",
    "fn(i32) -> i32",
    "[0; 100000000]",
    "-9223372036854775808",
];

/// How an input was mutated, for the report.
pub type Steps = Vec<&'static str>;

/// Applies one to four random mutations to `text`, splicing from `donor` (another file of the
/// corpus) where a mutation needs foreign material. Returns the names of the mutations.
pub fn mutate(rng: &mut Rng, text: &mut Vec<u8>, donor: &[u8]) -> Steps {
    let n = 1 + rng.below(4);
    let mut steps = Steps::new();
    for _ in 0..n {
        steps.push(match rng.below(10) {
            0..=4 => token_mutation(rng, text, donor),
            5..=7 => line_mutation(rng, text, donor),
            _ => byte_mutation(rng, text),
        });
    }
    steps
}

fn token_mutation(rng: &mut Rng, text: &mut Vec<u8>, donor: &[u8]) -> &'static str {
    let toks: Vec<Vec<u8>> = tokens(text).into_iter().map(<[u8]>::to_vec).collect();
    let donor_toks = tokens(donor);
    // Only tokens that are not white space are worth changing.
    let solid: Vec<usize> = (0..toks.len())
        .filter(|&i| !toks[i][0].is_ascii_whitespace())
        .collect();
    if solid.is_empty() {
        text.extend_from_slice(rng.pick(INTERESTING).as_bytes());
        return "token append";
    }
    let at = *rng.pick(&solid);
    let foreign = |rng: &mut Rng| -> Vec<u8> {
        if rng.one_in(2) || donor_toks.is_empty() {
            rng.pick(INTERESTING).as_bytes().to_vec()
        } else {
            rng.pick(&donor_toks).to_vec()
        }
    };
    let mut toks = toks;
    let what = match rng.below(6) {
        0 => {
            toks.remove(at);
            "token delete"
        }
        1 => {
            let t = toks[at].clone();
            toks.insert(at, t);
            "token duplicate"
        }
        2 => {
            let other = *rng.pick(&solid);
            toks.swap(at, other);
            "token swap"
        }
        3 => {
            let t = foreign(rng);
            toks.insert(at, t);
            "token insert"
        }
        4 => {
            // A run of tokens repeated: deepens nesting, lengthens chains.
            let len = 1 + rng.below(8).min(toks.len() - at - 1);
            let run: Vec<Vec<u8>> = toks[at..at + len].to_vec();
            let times = 1 + rng.below(64);
            for _ in 0..times {
                for (k, t) in run.iter().enumerate() {
                    toks.insert(at + k, t.clone());
                }
            }
            "token run repeat"
        }
        _ => {
            toks[at] = foreign(rng);
            "token replace"
        }
    };
    *text = toks.concat();
    what
}

fn lines(text: &[u8]) -> Vec<Vec<u8>> {
    text.split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

fn line_mutation(rng: &mut Rng, text: &mut Vec<u8>, donor: &[u8]) -> &'static str {
    let mut ls = lines(text);
    if ls.is_empty() {
        *text = donor.to_vec();
        return "line splice";
    }
    let at = rng.below(ls.len());
    let what = match rng.below(5) {
        0 => {
            ls.remove(at);
            "line delete"
        }
        1 => {
            let l = ls[at].clone();
            ls.insert(at, l);
            "line duplicate"
        }
        2 => {
            let other = rng.below(ls.len());
            ls.swap(at, other);
            "line swap"
        }
        3 => {
            let ds = lines(donor);
            if !ds.is_empty() {
                let start = rng.below(ds.len());
                let len = 1 + rng.below(6).min(ds.len() - start - 1);
                for (k, l) in ds[start..start + len].iter().enumerate() {
                    ls.insert(at + k, l.clone());
                }
            }
            "line splice"
        }
        _ => {
            // Cut the text at a line: unclosed brackets and half definitions.
            ls.truncate(at);
            "line truncate"
        }
    };
    *text = ls.concat();
    what
}

fn byte_mutation(rng: &mut Rng, text: &mut Vec<u8>) -> &'static str {
    let at = rng.below(text.len() + 1);
    match rng.below(4) {
        0 if at < text.len() => {
            text[at] ^= 1 << rng.below(8);
            "byte flip"
        }
        1 if at < text.len() => {
            text.remove(at);
            "byte delete"
        }
        2 => {
            // Often bytes that are not UTF-8, sometimes a NUL or a control character.
            let b = *rng.pick(&[0x00, 0x07, 0x0c, 0x7f, 0x80, 0xc3, 0xe2, 0xf0, 0xff, b'"']);
            text.insert(at, b);
            "byte insert"
        }
        _ => {
            let b = (rng.next() & 0xff) as u8;
            text.insert(at, b);
            "byte insert random"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_cover_the_text() {
        let src = b"fn main() -> i32 { let s = \"a \\\" b\"; 42 }\n";
        let toks = tokens(src);
        assert_eq!(toks.concat(), src.to_vec());
        assert!(toks.contains(&&b"\"a \\\" b\""[..]));
        assert!(toks.contains(&&b"main"[..]));
    }

    #[test]
    fn mutations_change_text_deterministically() {
        let src = b"fn main() -> i32 {\n    let x = 1 + 2;\n    x\n}\n".to_vec();
        let donor = b"fn f(a: i32) -> i32 { a * 2 }\n";
        let mut changed = 0;
        for i in 0..200 {
            let (mut a, mut b) = (src.clone(), src.clone());
            let sa = mutate(&mut Rng::for_input(5, i), &mut a, donor);
            let sb = mutate(&mut Rng::for_input(5, i), &mut b, donor);
            assert_eq!((a.clone(), sa), (b, sb));
            changed += (a != src) as usize;
        }
        assert!(
            changed > 150,
            "only {changed} of 200 mutations changed the text"
        );
    }
}
