//! The frontend never panics: on random token streams, and on valid programs with random
//! edits. Every diagnostic it reports points inside the file, and every program it accepts
//! lowers to IR that verifies.

use durin_frontend::source::SourceMap;
use durin_frontend::{compile, diag, lexer, parser};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    durin_ir::strategy::test_config()
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
    whole_frontend(src)
}

/// Checks and lowers `src`; an accepted program must give verifiable IR.
fn whole_frontend(src: &str) -> Result<(), TestCaseError> {
    let out = compile::compile(&[("t.art".to_string(), src.to_string())], true);
    let _ = out.render();
    if let (Some(l), false) = (&out.lowered, out.has_errors()) {
        if let Err(errors) = durin_ir::verify::verify(&l.world) {
            let first = errors.first().map(|e| e.to_string()).unwrap_or_default();
            return Err(TestCaseError::fail(format!(
                "lowered IR does not verify: {first}\n{src}"
            )));
        }
    }
    Ok(())
}

/// Valid programs of the language test suite, mutated by the properties below.
const CORPUS: &[&str] = &[
    include_str!("../../tests/lang/ok/closures.art"),
    include_str!("../../tests/lang/ok/enums.art"),
    include_str!("../../tests/lang/ok/generics.art"),
    include_str!("../../tests/lang/ok/pointers.art"),
    include_str!("../../tests/lang/ok/stencil.art"),
    include_str!("../../tests/lang/ok/church.art"),
    include_str!("../../tests/lang/ok/modules.art"),
    include_str!("../../tests/lang/ok/structs.art"),
];

fn mutate(src: &str, edits: Vec<(prop::sample::Index, u8, prop::sample::Index)>) -> String {
    let mut chars: Vec<char> = src.chars().collect();
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
    chars.into_iter().collect()
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
        check(&mutate(SAMPLE, edits))?;
    }

    #[test]
    fn mutated_corpus_programs(
        which in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, any::<prop::sample::Index>()), 1..4),
    ) {
        check(&mutate(CORPUS[which.index(CORPUS.len())], edits))?;
    }

    #[test]
    fn corpus_programs_with_swapped_tokens(
        which in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        pick in any::<prop::sample::Index>(),
    ) {
        // Replace one word of a valid program by another spelling: mostly type and name
        // errors deep in the checker, sometimes a valid program that must lower.
        let src = CORPUS[which.index(CORPUS.len())];
        let words: Vec<&str> = src.split(' ').collect();
        let i = at.index(words.len());
        let mut out: Vec<&str> = words.clone();
        out[i] = SPELLINGS[pick.index(SPELLINGS.len())];
        check(&out.join(" "))?;
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
