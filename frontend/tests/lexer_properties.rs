//! Properties of the lexer: it never panics, its spans tile the input, and spelled-out
//! token sequences lex back to the tokens they spell.

use durin_frontend::lexer::lex;
use durin_frontend::source::SourceMap;
use durin_frontend::token::{Literal, TokenKind};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    durin_ir::strategy::test_config()
}

/// Spellings with the token each one must lex to.
fn vocabulary() -> Vec<(&'static str, TokenKind)> {
    use TokenKind::*;
    vec![
        ("fn", Fn),
        ("let", Let),
        ("mut", Mut),
        ("while", While),
        ("match", Match),
        ("x", Ident("x".into())),
        ("_y2", Ident("_y2".into())),
        ("i32", Ident("i32".into())),
        ("(", LParen),
        (")", RParen),
        ("{", LBrace),
        ("}", RBrace),
        ("[", LBracket),
        ("]", RBracket),
        (".", Dot),
        ("...", Dots),
        (",", Comma),
        (";", Semi),
        ("::", DblColon),
        (":", Colon),
        ("=", Eq),
        ("->", Arrow),
        ("=>", FatArrow),
        ("++", Inc),
        ("--", Dec),
        ("+=", AddEq),
        ("<<=", ShlEq),
        (">>=", ShrEq),
        ("+", Add),
        ("-", Sub),
        ("*", Mul),
        ("/", Div),
        ("%", Rem),
        ("<<", Shl),
        (">>", Shr),
        ("&", And),
        ("&&", AndAnd),
        ("|", Or),
        ("||", OrOr),
        ("^", Xor),
        ("!", Not),
        ("<=", Le),
        (">=", Ge),
        ("<", Lt),
        (">", Gt),
        ("==", EqEq),
        ("!=", Ne),
        ("#", Hash),
        ("@", At),
        ("?", Question),
        ("$", Dollar),
        ("42", Lit(Literal::Int(42))),
        ("0x2A", Lit(Literal::Int(42))),
        ("0b101010", Lit(Literal::Int(42))),
        ("2.5", Lit(Literal::Float(2.5))),
        ("'q'", Lit(Literal::Char(b'q'))),
        ("'\\n'", Lit(Literal::Char(b'\n'))),
        ("\"s\\x41\"", Lit(Literal::Str(b"sA".to_vec()))),
        ("true", Lit(Literal::Bool(true))),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn never_panics_and_spans_tile_the_input(src in "\\PC{0,120}|[ -~\n]{0,200}") {
        let mut sources = SourceMap::new();
        let file = sources.add("t.art", &src);
        let mut diags = Vec::new();
        let toks = lex(file, &src, &mut diags);
        prop_assert_eq!(&toks.last().expect("at least Eof").kind, &TokenKind::Eof);
        let mut prev_end = 0;
        for t in &toks {
            prop_assert!(t.span.start as usize >= prev_end && t.span.end >= t.span.start);
            prop_assert!(src.is_char_boundary(t.span.start as usize));
            prop_assert!(src.is_char_boundary(t.span.end as usize));
            prev_end = t.span.end as usize;
        }
        for d in &diags {
            for l in &d.labels {
                prop_assert!((l.span.end as usize) <= src.len() && l.span.start <= l.span.end);
            }
        }
        // Rendering never fails or panics either.
        let _ = durin_frontend::diag::render(&sources, &diags);
    }

    #[test]
    fn spelled_tokens_lex_back(
        picks in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(vec![" ", "\n", "  ", "\t", " /* c */ ", " // c\n"])), 0..40),
    ) {
        let vocab = vocabulary();
        let mut src = String::new();
        let mut expected = Vec::new();
        for (i, gap) in picks {
            let (spelling, kind) = &vocab[i.index(vocab.len())];
            // Adjacent strings join, and a number after `.` is an index: skip those pairs.
            let prev = expected.last();
            let joins = matches!((prev, kind), (Some(TokenKind::Lit(Literal::Str(_))), TokenKind::Lit(Literal::Str(_))))
                || matches!((prev, kind), (Some(TokenKind::Dot), TokenKind::Lit(Literal::Float(_))));
            if joins {
                continue;
            }
            src.push_str(spelling);
            src.push_str(gap);
            expected.push(kind.clone());
        }
        let mut sources = SourceMap::new();
        let file = sources.add("t.art", &src);
        let mut diags = Vec::new();
        let toks = lex(file, &src, &mut diags);
        prop_assert!(diags.is_empty(), "{}", durin_frontend::diag::render(&sources, &diags));
        let kinds: Vec<TokenKind> = toks.into_iter().map(|t| t.kind).filter(|k| *k != TokenKind::Eof).collect();
        prop_assert_eq!(kinds, expected);
    }
}
