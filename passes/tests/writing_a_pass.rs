//! The pass of the book's chapter "Writing a pass", with its tests: strength reduction of
//! integer multiplications by powers of two into shifts.

use durin_ir::strategy::{recipe, Recipe};
use durin_ir::{text, verify, ArithOp, Node, TypeKind, World};
use durin_passes::{Config, Diagnostic, Pass, PassContext, Pipeline, Rewriter, RunOptions};
use proptest::prelude::*;

/// `x * 2^k` (and `2^k * x`) on integers becomes `x << k`.
struct StrengthReduction;

impl Pass for StrengthReduction {
    fn name(&self) -> &'static str {
        "strength-reduction"
    }

    fn run(&self, w: &mut World, _: &mut PassContext<'_>) -> Result<(), Diagnostic> {
        // 1. Find the multiplications the program reaches and decide their replacements.
        let mut rw = Rewriter::new();
        let conts: Vec<_> = w.continuations().collect();
        let defs: Vec<_> = w.defs().collect();
        for d in defs {
            if w.node(d) != Node::Arith(ArithOp::Mul) {
                continue;
            }
            if !matches!(w.kind(w.type_of(d)), TypeKind::Int { .. }) {
                continue;
            }
            let (a, b) = (w.ops(d)[0], w.ops(d)[1]);
            let (x, k) = match (w.lit_bits(a), w.lit_bits(b)) {
                (_, Some(v)) if v.is_power_of_two() => (a, v.trailing_zeros()),
                (Some(v), _) if v.is_power_of_two() => (b, v.trailing_zeros()),
                _ => continue,
            };
            let t = w.type_of(d);
            let shift = w.lit(t, u64::from(k));
            let r = w.arith(ArithOp::Shl, x, shift);
            rw.map(d, r);
        }
        // 2. Rewrite every continuation's filters and body with the substitution.
        for k in conts {
            rw.rewrite_cont_into(w, k, k);
        }
        Ok(())
    }
}

#[test]
fn multiplications_by_powers_of_two_become_shifts() {
    let src = "\
extern cont @f(%m: mem, %x: i32, %ret: cn(mem, i32)) {
    %a: i32 = mul(%x, 8:i32)
    %b: i32 = mul(%a, 3:i32)
    jump %ret(%m, %b)
}
";
    let mut w = text::parse(src).expect("parses");
    let mut p = Pipeline::new();
    p.push(Box::new(StrengthReduction));
    p.append(Pipeline::parse("dce").expect("a built-in pass"));
    let opts = RunOptions {
        verify_each: true,
        ..RunOptions::default()
    };
    p.run(&mut w, &opts, |_, _| {}).expect("runs");
    let out = text::print(&w);
    assert!(out.contains("shl(%1, 3:i32)"), "{out}");
    assert!(out.contains("mul(%3, 3:i32)"), "{out}");
    assert!(!out.contains("8:i32"), "{out}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn strength_reduction_preserves_results(
        r in recipe(), a in any::<i32>(), b in any::<i32>(), x in -1e4f64..1e4,
    ) {
        let (w, main) = r.build();
        let before = Recipe::run(&w, main, a, b, x);
        let mut after = w.clone();
        let mut cx = PassContext::new(Config::default());
        StrengthReduction.run(&mut after, &mut cx).expect("runs");
        prop_assert!(verify::verify(&after).is_ok());
        prop_assert_eq!(before, Recipe::run(&after, main, a, b, x));
    }
}
