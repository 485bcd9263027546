//! The parser never panics: on random token streams, and on valid programs with random
//! edits. Every diagnostic it reports points inside the file.

use durin_frontend::source::SourceMap;
use durin_frontend::{diag, lexer, parser};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

const SAMPLE: &str = include_str!("sample.art");

const SPELLINGS: &[&str] = &[
    "fn",
    "let",
    "mut",
    "if",
    "else",
    "while",
    "for",
    "in",
    "match",
    "struct",
    "enum",
    "type",
    "static",
    "mod",
    "use",
    "super",
    "as",
    "break",
    "continue",
    "return",
    "simd",
    "addrspace",
    "x",
    "T",
    "i32",
    "f",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ".",
    "...",
    ",",
    ";",
    "::",
    ":",
    "=",
    "->",
    "=>",
    "++",
    "--",
    "+=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "<<",
    ">>",
    "&",
    "&&",
    "|",
    "||",
    "^",
    "!",
    "<",
    ">",
    "==",
    "#",
    "@",
    "?",
    "$",
    "1",
    "2.5",
    "'c'",
    "\"s\"",
    "true",
];

fn check(src: &str) -> Result<(), TestCaseError> {
    let mut sources = SourceMap::new();
    let file = sources.add("t.art", src);
    let mut diags = Vec::new();
    let toks = lexer::lex(file, src, &mut diags);
    let _module = parser::parse(&toks, &mut diags);
    for d in &diags {
        for l in &d.labels {
            prop_assert!(l.span.start <= l.span.end && (l.span.end as usize) <= src.len());
        }
    }
    let _ = diag::render(&sources, &diags);
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_token_streams(picks in prop::collection::vec(any::<prop::sample::Index>(), 0..200)) {
        let src: Vec<&str> = picks.iter().map(|i| SPELLINGS[i.index(SPELLINGS.len())]).collect();
        check(&src.join(" "))?;
    }

    #[test]
    fn mutated_valid_programs(
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, any::<prop::sample::Index>()), 1..8),
    ) {
        let mut chars: Vec<char> = SAMPLE.chars().collect();
        let pool: Vec<char> = "(){}[];,.=|@?$&*-+<>!\"'#x1 \n".chars().collect();
        for (at, kind, c) in edits {
            if chars.is_empty() {
                break;
            }
            let i = at.index(chars.len());
            match kind {
                0 => {
                    chars.remove(i);
                }
                1 => chars.insert(i, pool[c.index(pool.len())]),
                _ => chars[i] = pool[c.index(pool.len())],
            }
        }
        check(&chars.into_iter().collect::<String>())?;
    }
}

#[test]
fn the_sample_program_parses_without_diagnostics() {
    let mut sources = SourceMap::new();
    let file = sources.add("sample.art", SAMPLE);
    let mut diags = Vec::new();
    let toks = lexer::lex(file, SAMPLE, &mut diags);
    let module = parser::parse(&toks, &mut diags);
    assert_eq!(diag::render(&sources, &diags), "");
    // pow, Point, Pair, Option, Img, counter, puts, m, main.
    assert_eq!(module.items.len(), 9);
}
