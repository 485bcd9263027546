//! Properties of the IR over random programs and expressions.
//!
//! Each property runs `PROPTEST_CASES` cases (1,000 by default). For a long local run:
//! `PROPTEST_CASES=100000 cargo test --release -p durin-ir --features proptest --test properties`.

use durin_ir::equiv::alpha_equivalent;
use durin_ir::strategy::{expr, recipe, Expr, ExprProgram, Recipe, EXPR_ARGS, EXPR_TYPES};

mod typed_reference;
use durin_ir::{text, verify, Def, World};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    durin_ir::strategy::test_config()
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
    fn expressions_agree_with_a_typed_reference_before_and_after_normalization(
        e in expr(), ty in 0u8..EXPR_TYPES.len() as u8,
        args in prop::collection::vec(any::<u64>(), EXPR_ARGS),
    ) {
        let want = typed_reference::eval(&e, ty, &args);
        let mut raw = ExprProgram::new(ty, false);
        raw.build(&e, ty);
        let got = raw.run(&args);
        let same = match (&got, want) {
            (Ok(g), Ok(w)) => *g == w,
            (Err(g), Err(typed_reference::Trap)) => g.message == "integer division by zero",
            _ => false,
        };
        prop_assert!(
            same, "{:?} at {}: interpreter {:x?}, reference {:x?}\n{}",
            e, EXPR_TYPES[ty as usize], got, want, text::print(&raw.world)
        );
        let mut norm = ExprProgram::new(ty, true);
        norm.build(&e, ty);
        // Normalization may remove a trap, never change a value.
        if let Ok(v) = want {
            prop_assert_eq!(Ok(v), norm.run(&args), "{:?}\n{}", e, text::print(&norm.world));
        }
    }

    #[test]
    fn hash_consing_is_structural(e1 in expr(), e2 in expr(), ty in 0u8..EXPR_TYPES.len() as u8) {
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
    assert_eq!(raw.run(&[7; EXPR_ARGS]), Ok(0));
}

/// An independent reference: evaluates a recipe directly on Rust values, mirroring what
/// each statement means, without building or interpreting IR.
mod reference {
    use durin_ir::strategy::{Recipe, Stmt};
    use durin_ir::ArithOp;

    #[derive(Clone)]
    struct Pools {
        ints: Vec<i32>,
        floats: Vec<f64>,
        bools: Vec<bool>,
        /// Mutable slots, shared by the regions that see them.
        slots: Vec<std::rc::Rc<std::cell::Cell<i32>>>,
    }

    fn pick<T: Copy>(v: &[T], i: u8) -> T {
        v[i as usize % v.len()]
    }

    fn int(op: ArithOp, x: i32, y: i32) -> i32 {
        match op {
            ArithOp::Add => x.wrapping_add(y),
            ArithOp::Sub => x.wrapping_sub(y),
            ArithOp::Mul => x.wrapping_mul(y),
            ArithOp::Div => x.wrapping_div(y | 1),
            ArithOp::Rem => x.wrapping_rem(y | 1),
            ArithOp::And => x & y,
            ArithOp::Or => x | y,
            ArithOp::Xor => x ^ y,
            ArithOp::Shl => x.wrapping_shl(y as u32 & 31),
            ArithOp::Shr => x.wrapping_shr(y as u32 & 31),
        }
    }

    fn float(op: ArithOp, x: f64, y: f64) -> f64 {
        match op {
            ArithOp::Add => x + y,
            ArithOp::Sub => x - y,
            ArithOp::Mul => x * y,
            _ => x / y,
        }
    }

    use crate::typed_reference::compare as cmp;

    fn last(p: &Pools) -> (i32, f64) {
        (
            *p.ints.last().expect("ints"),
            *p.floats.last().expect("floats"),
        )
    }

    fn function(stmts: &[Stmt], x: i32) -> (i32, f64) {
        let mut p = Pools {
            ints: vec![x],
            floats: vec![x as f64],
            bools: vec![true],
            slots: Vec::new(),
        };
        block(&mut p, stmts);
        last(&p)
    }

    fn block(p: &mut Pools, stmts: &[Stmt]) {
        for s in stmts {
            match s {
                Stmt::Int(op, a, b) => p.ints.push(int(*op, pick(&p.ints, *a), pick(&p.ints, *b))),
                Stmt::Float(op, a, b) => {
                    p.floats
                        .push(float(*op, pick(&p.floats, *a), pick(&p.floats, *b)))
                }
                Stmt::Cmp(op, a, b) => p.bools.push(cmp(*op, pick(&p.ints, *a), pick(&p.ints, *b))),
                Stmt::FCmp(op, a, b) => {
                    p.bools
                        .push(cmp(*op, pick(&p.floats, *a), pick(&p.floats, *b)))
                }
                Stmt::Select(c, a, b) => {
                    let v = if pick(&p.bools, *c) {
                        pick(&p.ints, *a)
                    } else {
                        pick(&p.ints, *b)
                    };
                    p.ints.push(v);
                }
                Stmt::IntLit(v) => p.ints.push(*v),
                Stmt::FloatLit(v) => p.floats.push(*v),
                Stmt::Conv(a, b) => {
                    let (f, i) = (pick(&p.ints, *a) as f64, pick(&p.floats, *b) as i32);
                    p.floats.push(f);
                    p.ints.push(i);
                }
                Stmt::Tuple(a, b, c) => {
                    let (x, f, y) = (pick(&p.ints, *a), pick(&p.floats, *b), pick(&p.ints, *c));
                    p.ints.extend([x, y]);
                    p.floats.push(f);
                }
                Stmt::Slot(a) => {
                    let v = pick(&p.ints, *a);
                    p.ints.push(v);
                    p.slots.push(std::rc::Rc::new(std::cell::Cell::new(v)));
                }
                Stmt::Assign(s, a) => {
                    if !p.slots.is_empty() {
                        let v = pick(&p.ints, *a);
                        p.slots[*s as usize % p.slots.len()].set(v);
                    }
                }
                Stmt::Read(s) => {
                    if !p.slots.is_empty() {
                        let v = p.slots[*s as usize % p.slots.len()].get();
                        p.ints.push(v);
                    }
                }
                Stmt::SlotClosure(s, a) => {
                    if !p.slots.is_empty() {
                        let v = p.slots[*s as usize % p.slots.len()].get();
                        let sum = pick(&p.ints, *a).wrapping_add(v);
                        p.ints.push(sum);
                        p.floats.push(sum as f64);
                    }
                }
                Stmt::Array(v, i, j) => {
                    let mut arr: Vec<i32> = (0..8).map(|k| k * 3).collect();
                    arr[(pick(&p.ints, *i) & 7) as usize] = pick(&p.ints, *v);
                    p.ints.push(arr[(pick(&p.ints, *j) & 7) as usize]);
                }
                Stmt::If(c, then, els) => {
                    let mut inner = p.clone();
                    block(&mut inner, if pick(&p.bools, *c) { then } else { els });
                    let (i, f) = last(&inner);
                    p.ints.push(i);
                    p.floats.push(f);
                }
                Stmt::Loop(trips, body) => {
                    let (mut acc_i, mut acc_f) = last(p);
                    for i in 0..*trips as i32 {
                        let mut inner = p.clone();
                        inner.ints.extend([i, acc_i]);
                        inner.floats.push(acc_f);
                        block(&mut inner, body);
                        (acc_i, acc_f) = last(&inner);
                    }
                    p.ints.push(acc_i);
                    p.floats.push(acc_f);
                }
                Stmt::Call(a, body) | Stmt::Apply(a, body) => {
                    let (i, f) = function(body, pick(&p.ints, *a));
                    p.ints.push(i);
                    p.floats.push(f);
                }
                Stmt::Closure(a, c, d) => {
                    let cd = pick(&p.ints, *c).wrapping_sub(pick(&p.ints, *d).wrapping_mul(3));
                    let sum = pick(&p.ints, *a).wrapping_add(cd);
                    p.ints.push(sum);
                    p.floats.push(sum as f64);
                }
                Stmt::LocalCall(a, c, d) => {
                    let (a, c, d) = (pick(&p.ints, *a), pick(&p.ints, *c), pick(&p.ints, *d));
                    let mut acc = c;
                    for _ in 0..(a & 3) + ((a >> 2) & 3) {
                        acc = acc.wrapping_add(c).wrapping_sub(d);
                    }
                    p.ints.push(acc);
                    p.floats.push(acc as f64);
                }
            }
        }
    }

    /// The results `@main` returns for `(a, b, x)`.
    pub fn eval(r: &Recipe, a: i32, b: i32, x: f64) -> (i32, f64) {
        let mut p = Pools {
            ints: vec![a, b],
            floats: vec![x],
            bools: vec![true, a < b],
            slots: Vec::new(),
        };
        block(&mut p, &r.stmts);
        let ri = p.ints.iter().skip(1).fold(p.ints[0], |acc, &i| acc ^ i);
        let rf = p.floats.iter().skip(1).fold(p.floats[0], |acc, &f| acc + f);
        (ri, rf)
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn interpreter_agrees_with_an_independent_reference(
        r in recipe(), a in any::<i32>(), b in any::<i32>(), x in -1e4f64..1e4,
    ) {
        let (w, main) = r.build();
        let (i, f) = Recipe::run(&w, main, a, b, x).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let (ri, rf) = reference::eval(&r, a, b, x);
        prop_assert_eq!(i, ri);
        let f = f64::from_bits(f);
        prop_assert!(f.to_bits() == rf.to_bits() || (f.is_nan() && rf.is_nan()), "{} against {}", f, rf);
    }
}
