//! Properties of the IR over random programs and expressions.
//!
//! Each property runs `PROPTEST_CASES` cases (1,000 by default). For a long local run:
//! `PROPTEST_CASES=100000 cargo test --release -p durin-ir --features proptest --test properties`.

use durin_ir::equiv::alpha_equivalent;
use durin_ir::strategy::{expr, recipe, Expr, ExprProgram, Recipe};
use durin_ir::{text, verify, Def, World};
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

/// A key-independent description of a def's structure.
fn structure(w: &World, d: Def) -> String {
    if w.node(d).is_nominal() || matches!(w.node(d), durin_ir::Node::Param(_)) {
        return format!("{:?}:{:?}", w.node(d), w.name(d));
    }
    let ops: Vec<String> = w.ops(d).iter().map(|&o| structure(w, o)).collect();
    format!(
        "{:?}:{}({})",
        w.node(d),
        w.types().display(w.type_of(d)),
        ops.join(",")
    )
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn print_parse_round_trip(r in recipe()) {
        let (w, _) = r.build();
        let printed = text::print(&w);
        let parsed = text::parse(&printed).map_err(|e| TestCaseError::fail(format!("{e}\n{printed}")))?;
        prop_assert_eq!(text::print(&parsed), printed.clone());
        if let Err(e) = alpha_equivalent(&w, &parsed) {
            return Err(TestCaseError::fail(format!("not alpha-equivalent: {e}\n{printed}")));
        }
    }

    #[test]
    fn verifier_accepts_generated_programs(r in recipe()) {
        let (w, _) = r.build();
        if let Err(errors) = verify::verify(&w) {
            let msgs: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
            return Err(TestCaseError::fail(format!("{}\n{}", msgs.join("\n"), text::print(&w))));
        }
    }

    #[test]
    fn interpreter_is_deterministic_and_agrees_after_round_trip(
        r in recipe(), a in any::<i32>(), b in any::<i32>(), x in -1e4f64..1e4,
    ) {
        let (w, main) = r.build();
        let first = Recipe::run(&w, main, a, b, x);
        prop_assert!(first.is_ok(), "generated programs run to completion: {:?}", first);
        prop_assert_eq!(&first, &Recipe::run(&w, main, a, b, x));
        let parsed = text::parse(&text::print(&w)).expect("printed text parses");
        let entry = parsed.externals().next().expect("an entry");
        prop_assert_eq!(&first, &Recipe::run(&parsed, entry, a, b, x));
    }

    #[test]
    fn normalization_preserves_values(
        e in expr(), ty in 0u8..9, args in prop::collection::vec(any::<u64>(), 18),
    ) {
        let mut raw = ExprProgram::new(ty, false);
        raw.build(&e, ty);
        let mut norm = ExprProgram::new(ty, true);
        norm.build(&e, ty);
        // Normalization may remove a trap, never change a value.
        if let Ok(v) = raw.run(&args) {
            prop_assert_eq!(Ok(v), norm.run(&args), "{:?}\n{}", e, text::print(&norm.world));
        }
    }

    #[test]
    fn hash_consing_is_structural(e1 in expr(), e2 in expr(), ty in 0u8..9) {
        let mut p = ExprProgram::new(ty, false);
        let (d1, d2) = (p.build(&e1, ty), p.build(&e2, ty));
        prop_assert_eq!(d1, p.build(&e1, ty));
        let same = structure(&p.world, d1) == structure(&p.world, d2);
        prop_assert_eq!(d1 == d2, same);
    }

    #[test]
    fn parser_never_panics_on_mutated_text(
        r in recipe(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<char>()), 1..6),
    ) {
        let (w, _) = r.build();
        let mut chars: Vec<char> = text::print(&w).chars().collect();
        for (at, kind, c) in edits {
            if chars.is_empty() { break; }
            let i = at.index(chars.len());
            match kind {
                0 => { chars.remove(i); }
                1 => chars.insert(i, c),
                2 => chars[i] = c,
                _ => { let j = at.index(chars.len()); chars.swap(i, j); }
            }
        }
        let src: String = chars.into_iter().collect();
        check_parse_result(&src)?;
    }

    #[test]
    fn parser_never_panics_on_random_text(src in "[a-z%@0-9(){}\\[\\],:=*; \n.-]{0,200}") {
        check_parse_result(&src)?;
    }
}

fn check_parse_result(src: &str) -> Result<(), TestCaseError> {
    match text::parse(src) {
        Ok(w) => {
            // Whatever parses prints and verifies without panicking.
            let _ = verify::verify(&w);
            let _ = text::print(&w);
        }
        Err(e) => {
            let lines = src.lines().count().max(1);
            prop_assert!(
                e.line >= 1 && e.line <= lines + 1,
                "line {} of {}",
                e.line,
                lines
            );
            prop_assert!(e.column >= 1);
            prop_assert!(!e.message.is_empty());
        }
    }
    Ok(())
}

#[test]
fn expr_program_smoke() {
    // `x - x` normalizes to 0 and evaluates to 0 without normalization.
    let e = Expr::Arith(
        durin_ir::ArithOp::Sub,
        Box::new(Expr::Var(false)),
        Box::new(Expr::Var(false)),
    );
    let mut raw = ExprProgram::new(4, false);
    raw.build(&e, 4);
    let mut norm = ExprProgram::new(4, true);
    let d = norm.build(&e, 4);
    assert_eq!(norm.world.lit_bits(d), Some(0));
    assert_eq!(raw.run(&[7; 18]), Ok(0));
}
